"""The web face's fan-out without sockets, tasks or clocks: messages and times in, bytes per client out.

Each test drives :class:`livemon.faces.web.fanout.Fanout` as the server does (connect, receive,
``next_client``/``step``, blocked/drained, housekeeping) with times it chooses, and reads the
WebSocket frames it returns: nothing sleeps, so every outcome is the same on a loaded machine.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.faces.web.auth import ARBITER_SLOW, ARBITER_TRIES, ARBITER_TRIES_PER_ADDRESS, SNAPSHOT_BURST
from livemon.faces.web.fanout import BUILD_ENTRIES, MAX_GAP, ROUND_GAP, Build, Client, Fanout
from livemon.live.messages import Alert, ScreeningNumbers
from tests.test_messages import sample
from tests.test_web import TOKEN, board, player


def frames(data: bytes) -> list[dict[str, Any]]:
    """The JSON of every unmasked WebSocket text frame in ``data`` (a server's frames, as they go on the wire)."""
    out, i = [], 0
    while i < len(data):
        assert data[i] == 0x81 and not data[i + 1] & 0x80, "one final, unmasked text frame each"
        n, i = data[i + 1] & 0x7F, i + 2
        if n >= 126:
            size = 2 if n == 126 else 8
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        out.append(json.loads(data[i:i + n]))
        i += n
    return out


def pump(f: Fanout, now: float) -> dict[Client, list[dict[str, Any]]]:
    """What one call of the server's pump writes at ``now``, per client (big snapshots encoded inline)."""
    out: dict[Client, bytearray] = {}
    while (c := f.next_client(now)) is not None:
        while (data := f.step(c, now)) is not None:
            if isinstance(data, Build):
                f.built(data, data.run())
                continue
            out.setdefault(c, bytearray()).extend(data)
    return {c: frames(bytes(b)) for c, b in out.items()}


def connect(f: Fanout, now: float = 0.0, address: str = "10.0.0.1") -> Client:
    c = f.connect(f"{address}:1#{len(f.clients)}", address, now)
    f.opened(c)
    return c


def ask(f: Fanout, c: Client, now: float, **req: Any) -> None:
    f.receive(c, json.dumps(req), now)


def data(got: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(seq, prev) of the data frames."""
    return [(x["seq"], x["prev"]) for x in got if x["type"] in ("delta", "deltas")]


def test_a_group_s_clients_get_the_very_same_bytes_built_once() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig(client_queue=64))
    a, b = connect(f), connect(f)
    for c in (a, b):
        ask(f, c, 0.0, op="subscribe", channels=["players", "games"], batch=True)
    plain = connect(f)
    ask(f, plain, 0.0, op="subscribe", channels=["players"])
    first = pump(f, 0.0)
    assert [x["type"] for x in first[a]] == ["snapshot", "snapshot"] == [x["type"] for x in first[b]]
    for i in range(5):
        hub.publish(player(f"P{i}", 2500 + i))
    hub.publish(board("g1", 1, 10))
    got: dict[Client, bytes] = {}
    while (c := f.next_client(1.0)) is not None:
        out = f.step(c, 1.0)
        assert isinstance(out, bytes)
        got[c] = out
        assert f.step(c, 1.0) is None
    assert got[a] is got[b]  # one object: built once, written twice
    (batch,) = frames(got[a])
    assert batch["type"] == "deltas" and [it["seq"] for it in batch["items"]] == list(range(1, 7))
    assert [x["type"] for x in frames(got[plain])] == ["delta"] * 5  # its own build: the board is not on its channels
    assert f.fanout_stats["built"] == 1 + 5 and f.fanout_stats["shared"] == 1


def test_a_stream_goes_out_in_rounds_at_least_the_gap_apart() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig())
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"], batch=True)
    pump(f, 0.0)
    s1 = hub.publish(player("A", 2500))
    assert data(pump(f, 10.0)[c]) == [(s1, 0)]  # after a quiet spell: at once
    now = 10.0
    for k in range(9):  # a message every 2 ms: nothing leaves before the gap has passed
        now += 0.002
        hub.publish(player(f"B{k}", 2600 + k))
        assert pump(f, now) == {}
        assert f.wake_at() == pytest.approx(10.0 + ROUND_GAP)
    (batch,) = pump(f, 10.0 + ROUND_GAP)[c]
    assert (batch["type"], batch["prev"], len(batch["items"])) == ("deltas", s1, 9)  # nine messages, one write
    assert f.wake_at() is None and f.fanout_stats["rounds"] == 2


def test_the_gap_grows_with_the_cpu_time_spent_on_clients_up_to_its_cap() -> None:
    hub = Hub()
    meter = [0.0]
    f = Fanout(hub, WebConfig(), cpu=lambda: meter[0])
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"])
    pump(f, 0.0)
    hub.publish(player("A", 2500))
    pump(f, 1.0)
    f.spent(0.01)  # 10 ms serving clients: the next gap is 10 ms / FANOUT_SHARE = 40 ms
    hub.publish(player("B", 2500))
    pump(f, 1.0 + ROUND_GAP)
    assert f.gap == pytest.approx(0.01 / f.fanout_share)
    f.spent(1.0)
    hub.publish(player("C", 2500))
    assert pump(f, 1.0 + ROUND_GAP + f.gap - 1e-9) == {}
    assert data(pump(f, 1.0 + ROUND_GAP + f.gap)[c]) and f.gap == MAX_GAP  # capped


def test_a_blocked_client_skips_to_the_latest_state_and_never_delays_the_others() -> None:
    """The slow client's write buffer is full: the others get every delta in every round, in order; it gets
    nothing until it drains, then a fresh snapshot (it fell over ``client_queue`` behind), and it is dropped
    once blocked longer than ``send_timeout``."""
    hub = Hub()
    f = Fanout(hub, WebConfig(client_queue=8, send_timeout=1.0))
    fast = [connect(f) for _ in range(3)]
    slow = connect(f)
    for c in (*fast, slow):
        ask(f, c, 0.0, op="subscribe", channels=["players"])
    pump(f, 0.0)
    f.blocked(slow, 0.0)
    seen: dict[Client, list[tuple[int, int]]] = {c: [] for c in fast}
    now = 0.0
    for r in range(6):  # six rounds of five messages: 30 behind for the slow one
        now += ROUND_GAP
        for i in range(5):
            hub.publish(player(f"P{i}", 2000 + 5 * r + i))
        out = pump(f, now)
        assert slow not in out and set(out) == set(fast)  # served in the same round, whatever the slow one does
        for c in fast:
            seen[c] += data(out[c])
    for c in fast:
        assert [s for s, _ in seen[c]] == list(range(1, 31)) and all(p == s - 1 for s, p in seen[c][1:])
    f.drained(slow, now)
    (snap,) = pump(f, now)[slow]
    assert (snap["type"], snap["reason"], snap["seq"]) == ("snapshot", "overflow", hub.seq)
    assert {m["name"]: m["perceived_elo"] for m in snap["messages"]} == {f"P{i}": 2025 + i for i in range(5)}
    assert f.stats["resnapshots"] == 1
    s = hub.publish(player("P0", 3000))
    assert data(pump(f, now + ROUND_GAP)[slow]) == [(s, snap["seq"])]  # its chain goes on from the snapshot
    f.blocked(slow, now + ROUND_GAP)
    assert f.housekeeping(now + ROUND_GAP + 0.9, 0.0) == []
    assert f.housekeeping(now + ROUND_GAP + 1.1, 0.0) == [slow] and f.stats["dropped"] == 1
    assert slow not in f.clients and [n for *_, n in f.groups()] == [3]


def test_a_client_briefly_blocked_resumes_from_its_cursor_without_a_snapshot() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig(client_queue=64))
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"])
    (snap,) = pump(f, 0.0)[c]
    f.blocked(c, 0.0)
    for i in range(10):
        hub.publish(player(f"P{i}", 2500))
        assert c not in pump(f, (i + 1) * ROUND_GAP)
    assert c.cursor == snap["seq"] == 0
    f.drained(c, 1.0)
    assert data(pump(f, 1.0)[c]) == [(s, s - 1) for s in range(1, 11)]  # every delta, chained from its cursor
    assert f.stats["resnapshots"] == 0


def test_a_client_far_behind_gets_its_frames_in_bounded_builds() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig(client_queue=4096))
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"], batch=True)
    pump(f, 0.0)
    for i in range(1000):
        hub.publish(player(f"R{i:04d}", 2500))
    assert f.next_client(1.0) is c
    runs = []
    while (out := f.step(c, 1.0)) is not None:
        assert isinstance(out, bytes)
        runs.append((frames(out), c.partial))
    assert [p for _, p in runs] == [True] * (len(runs) - 1) + [False]  # the server may yield between them
    assert all(x["items"][-1]["seq"] - x["items"][0]["seq"] < BUILD_ENTRIES for got, _ in runs for x in got)
    assert sum(len(x["items"]) for got, _ in runs for x in got) == 1000 and c.cursor == hub.seq


def test_arbiter_content_reaches_only_the_clients_granted_it() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig(arbiter_token=TOKEN))
    arbiter, public, both = connect(f), connect(f), connect(f, address="10.0.0.2")
    ask(f, arbiter, 0.0, op="subscribe", channels=["alerts", "screening", "players"], token=TOKEN)
    ask(f, public, 0.0, op="subscribe", channels=["players", "alerts", "screening"])
    ask(f, both, 0.0, op="subscribe", channels=["players"], batch=True)
    ask(f, both, 0.0, op="subscribe", channels=["alerts"], token="not-the-token")
    first = pump(f, 0.0)
    errors = [x for x in first[public] if x["type"] == "error"]
    assert [(e["code"], e["channel"]) for e in errors] == [("forbidden", "alerts"), ("forbidden", "screening")]
    assert [x["code"] for x in first[both] if x["type"] == "error"] == ["forbidden"]
    hub.publish(Alert("Cheater, C", "Open", 40, 3.9, 0.71, 3.0))
    hub.publish(sample(ScreeningNumbers))
    hub.publish(player("A", 2500))
    out = pump(f, 1.0)
    assert [x["channels"] for x in out[arbiter]] == [["alerts"], ["screening"], ["players"]]
    for c in (public, both):
        text = json.dumps(out[c])
        assert "Cheater" not in text and "alerts" not in text and "screening" not in text
        assert len(data(out[c])) == 1
    assert f.gate.over_budget("10.0.0.2", 1.0) is False


def test_wrong_tokens_are_limited_per_connection_and_address_but_the_right_one_always_passes() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig(arbiter_token=TOKEN))
    now, wrong = 0.0, 0
    while wrong < ARBITER_TRIES_PER_ADDRESS:
        c = connect(f, now)
        for _ in range(ARBITER_TRIES):
            now += 0.01
            ask(f, c, now, op="subscribe", channels=["alerts"], token=f"guess-{wrong}")
            wrong += 1
            if c.close_reason is not None:
                break
        assert c.close_reason is not None and c.close_reason.startswith("too many wrong arbiter tokens")
    assert f.gate.over_budget("10.0.0.1", now)  # the server now waits ARBITER_SLOW before each try from it
    late = connect(f, now)
    ask(f, late, now + ARBITER_SLOW, op="subscribe", channels=["alerts"], token="one-more")
    assert late.close_reason == "too many wrong arbiter tokens from this address"
    arbiter = connect(f, now)  # behind the same address (a NAT)
    ask(f, arbiter, now + ARBITER_SLOW, op="subscribe", channels=["alerts"], token=TOKEN)
    assert arbiter.arbiter and arbiter.close_reason is None
    assert not f.gate.over_budget("10.0.0.1", now + 61)  # the window passed


def test_snapshots_are_rate_limited_by_the_time_passed_in() -> None:
    hub = Hub()
    hub.publish(player("A", 2500))
    f = Fanout(hub, WebConfig())
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"])
    for _ in range(SNAPSHOT_BURST):
        ask(f, c, 0.0, op="snapshot")
    ask(f, c, 0.5, op="snapshot")  # one token back after half a second
    got = pump(f, 0.5)[c]
    assert [x.get("code", x["type"]) for x in got] == ["snapshot"] * SNAPSHOT_BURST + ["rate_limited", "snapshot"]


def test_control_frames_keep_their_place_between_deltas() -> None:
    hub = Hub()
    f = Fanout(hub, WebConfig())
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"])
    pump(f, 0.0)
    s1 = hub.publish(player("A", 2500))
    ask(f, c, 0.0, op="ping", id=7)
    s2 = hub.publish(player("B", 2500))
    ask(f, c, 0.0, op="subscribe", channels=["games"])
    s3 = hub.publish(board("g1", 1, 10))
    got = pump(f, 1.0)[c]
    assert [(x["type"], x.get("seq")) for x in got] == [("delta", s1), ("pong", s1), ("delta", s2),
                                                       ("snapshot", s2), ("delta", s3)]


def test_heartbeats_carry_the_seq_and_the_time_passed_in() -> None:
    hub = Hub()
    hub.publish(player("A", 2500))
    f = Fanout(hub, WebConfig(heartbeat_seconds=15.0))
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"])
    pump(f, 0.0)
    f.housekeeping(14.9, 1.7e9)
    assert pump(f, 14.9) == {}
    f.housekeeping(15.0, 1.7e9 + 15)
    (beat,) = pump(f, 15.0)[c]
    assert beat == {"type": "heartbeat", "seq": 1, "last": 1, "time": 1.7e9 + 15}


def test_messages_published_between_rounds_are_encoded_before_the_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server encodes ahead in the loop turns between two rounds, so a round only splices JSON."""
    hub = Hub()
    f = Fanout(hub, WebConfig())
    c = connect(f)
    ask(f, c, 0.0, op="subscribe", channels=["players"], batch=True)
    pump(f, 0.0)
    hub.publish(player("A", 2500))
    pump(f, 1.0)
    for i in range(20):
        hub.publish(player(f"P{i}", 2500))
    assert pump(f, 1.0 + ROUND_GAP / 2) == {}
    assert f.encode_ahead(15) and not f.encode_ahead(15)  # 20 in two steps of at most 15
    encoded: list[str] = []
    main_json = codec.main_json
    monkeypatch.setattr(codec, "main_json", lambda msg: encoded.append(msg.name) or main_json(msg))
    (batch,) = pump(f, 1.0 + ROUND_GAP)[c]
    assert len(batch["items"]) == 20 and encoded == []


def test_overlays_without_news_are_passed_over() -> None:
    """30 overlays, each on its own board: rounds with moves of g0 serve g0's overlay alone; a quiet overlay then
    gets its board's move as the next delta of its chain, without a snapshot."""
    hub = Hub()
    f = Fanout(hub, WebConfig(client_queue=1024))
    overlays = [connect(f) for _ in range(30)]
    for i, c in enumerate(overlays):
        ask(f, c, 0.0, op="subscribe", channels=[f"game:g{i}"], batch=True, patch=True)
    snaps = pump(f, 0.0)
    now = 0.0
    for r in range(20):
        for k in range(10):
            hub.publish(board("g0", 10 * r + k + 1, k))
        now += ROUND_GAP
        served = []
        while (c := f.next_client(now)) is not None:
            served.append(c)
            while f.step(c, now) is not None:
                pass
        assert served == [overlays[0]]
    s = hub.publish(board("g7", 1, 35))
    (delta,) = pump(f, now + ROUND_GAP)[overlays[7]]
    assert (delta["type"], delta["seq"], delta["prev"]) == ("deltas", s, snaps[overlays[7]][0]["seq"])
    assert f.stats["resnapshots"] == 0
