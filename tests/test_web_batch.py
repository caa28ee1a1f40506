"""Batched delivery (``deltas`` frames, docs/websocket.md) over real loopback sockets.

A client that subscribes with ``"batch": true`` gets, per wake-up of its sender,
every delta already queued in one frame, superseded states conflated; control
frames keep their place; a client that did not opt in still gets one ``delta``
per message. The hub is driven directly: a burst published without an ``await``
in between is queued whole before any sender runs.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import WebServer, serve_web
from livemon.faces.web import codec
from livemon.live.messages import BoardRemoved, MonitorStatus, PlayerRemoved
from tests.test_web import board, client, player, recv, recv_until, subscribe

NAMES = [f"P{i:02d}" for i in range(10)]


class State:
    """What a client knows: the latest message per key of each channel, and its ``last`` seq (docs/websocket.md)."""

    def __init__(self) -> None:
        self.channels: dict[str, dict[str, dict[str, Any]]] = {}
        self.last = 0
        self.gaps: list[tuple[int, int]] = []

    @staticmethod
    def key(m: dict[str, Any]) -> str:
        return str(m.get("game_id", m.get("name", "")))

    def apply(self, channels: list[str], m: dict[str, Any]) -> None:
        for ch in channels:
            if m["kind"].endswith("_removed") and not ch.startswith("game:"):
                self.channels.setdefault(ch, {}).pop(self.key(m), None)
            else:
                self.channels.setdefault(ch, {})[self.key(m)] = m

    def frame(self, f: dict[str, Any]) -> None:
        if f["type"] == "snapshot":
            self.channels[f["channel"]] = {self.key(m): m for m in f["messages"]}
            self.last = f["seq"]
        elif f["type"] in ("delta", "deltas"):
            if f["prev"] != self.last:
                self.gaps.append((f["prev"], self.last))
            items = f["items"] if f["type"] == "deltas" else [f]
            seqs = [it["seq"] for it in items]
            assert seqs == sorted(set(seqs)) and seqs[-1] == f["seq"] and seqs[0] > self.last
            for it in items:
                self.apply(it["channels"], it["message"])
            self.last = f["seq"]


def hub_state(hub: Hub, channel: str) -> dict[str, dict[str, Any]]:
    """What a client should hold of ``channel``: on a main channel (``games``) a board comes without its evals."""
    return {State.key(codec.to_dict(m)): json.loads(codec.to_json(m) if ":" in channel else codec.main_json(m))
            for m in hub.snapshot(channel)[1]}


async def read_until_seq(ws: ClientConnection, state: State, seq: int, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every frame until the client's last seq reaches ``seq``, applied to ``state``."""
    frames = []
    deadline = time.monotonic() + timeout
    while state.last < seq:
        f = await recv(ws, max(0.01, deadline - time.monotonic()))
        state.frame(f)
        frames.append(f)
    return frames


def burst(hub: Hub, rounds: int = 20) -> int:
    """rounds × 10 player updates, a player removed mid-burst and re-added, another removed at the end."""
    n = 0
    for r in range(rounds):
        for i, name in enumerate(NAMES):
            hub.publish(player(name, 2500 + 10 * r + i))
            n += 1
        if r == rounds // 2:
            hub.publish(PlayerRemoved("P03", "withdrawn"))
            n += 1
    hub.publish(PlayerRemoved("P07", "withdrawn"))
    return n + 1


async def test_a_burst_arrives_in_few_frames_with_the_hub_s_final_state() -> None:
    hub = Hub()
    hub.publish(player("P09", 2400))
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        batched, plain = await client(srv), await client(srv)
        (snap,) = await subscribe(batched, "players", batch=True)
        (snap2,) = await subscribe(plain, "players")
        sb, sp = State(), State()
        sb.frame(snap)
        sp.frame(snap2)
        n = burst(hub)
        frames = await read_until_seq(batched, sb, hub.seq)
        plain_frames = await read_until_seq(plain, sp, hub.seq)

        assert all(f["type"] == "deltas" for f in frames)
        assert len(frames) < n / 10, (len(frames), n)  # a burst queued at once: one or a few frames
        items = sum(len(f["items"]) for f in frames)
        assert items <= len(NAMES) + 2 < n  # conflated: about one item per name
        assert sb.gaps == [] and [f["prev"] for f in frames] == [snap["seq"]] + [f["seq"] for f in frames[:-1]]
        assert sb.channels["players"] == hub_state(hub, "players")  # conflation lost no final state
        assert "P07" not in sb.channels["players"] and "P03" in sb.channels["players"]  # removals honoured
        assert srv.batch_stats["messages"] == n and srv.batch_stats["conflated"] == n - items

        # The client that did not opt in: exactly today's frames, one delta per message.
        assert [f["type"] for f in plain_frames] == ["delta"] * n
        assert sp.gaps == [] and sp.channels["players"] == sb.channels["players"]
        await batched.close()
        await plain.close()


async def test_an_idle_server_sends_each_message_at_once() -> None:
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", "games", batch=True))[-1])
        state.last = hub.seq
        for i in range(5):
            t0 = time.monotonic()
            seq = hub.publish(player("A", 2500 + i))
            f = await recv_until(ws, lambda f: f["type"] != "heartbeat")
            assert time.monotonic() - t0 < 1.0
            assert f["type"] == "deltas" and [it["seq"] for it in f["items"]] == [seq] and f["prev"] == state.last
            state.frame(f)
        # batch: false goes back to one delta per message
        await subscribe(ws, "games", batch=False)
        seq = hub.publish(player("A", 2600))
        f = await recv_until(ws, lambda f: f["type"] != "heartbeat")
        assert f["type"] == "delta" and f["seq"] == seq
        await ws.send(json.dumps({"op": "subscribe", "channels": ["games"], "batch": "yes", "id": 9}))
        err = await recv_until(ws, lambda f: f["type"] == "error")
        assert (err["code"], err["id"]) == ("bad_request", 9)
        await ws.close()


async def test_control_frames_keep_their_place() -> None:
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        (c,) = srv.fanout.clients
        # Requests placed between two publishes without yielding to the loop (through the server's own
        # request handler, as if the frames had arrived then): a ping, then a subscribe (a snapshot).
        for i in range(5):
            hub.publish(player(NAMES[i], 2500))
        first = hub.seq
        srv.fanout.receive(c, json.dumps({"op": "ping", "id": 1}), time.monotonic())
        for i in range(5):
            hub.publish(player(NAMES[i], 2600))
        srv.fanout.receive(c, json.dumps({"op": "subscribe", "channels": ["games"]}), time.monotonic())
        hub.publish(board("g1", 1, 20))
        hub.publish(player("P00", 2700))
        frames = await read_until_seq(ws, state, hub.seq)
        types = [f["type"] for f in frames]
        assert types == ["deltas", "pong", "deltas", "snapshot", "deltas"], types
        assert frames[0]["seq"] == first and frames[1] == {"type": "pong", "seq": first, "id": 1}
        assert [it["message"]["perceived_elo"] for it in frames[2]["items"]] == [2600] * 5
        assert frames[3]["channel"] == "games" and frames[3]["seq"] == first + 5
        assert [it["channels"] for it in frames[4]["items"]] == [["games"], ["players"]]
        assert state.gaps == [] and state.channels["players"] == hub_state(hub, "players")
        assert state.channels["games"] == hub_state(hub, "games")
        await ws.close()


async def test_status_and_removals_across_channels() -> None:
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        state = State()
        for snap in await subscribe(ws, "games", "game:g1", "status", batch=True):
            state.frame(snap)
        hub.publish(board("g1", 1, 10))
        hub.publish(board("g2", 1, 10))
        for i in range(3):
            hub.publish(MonitorStatus(moves=i))  # no key: never conflated
        hub.publish(board("g1", 2, 30))
        hub.publish(BoardRemoved("g1", "no longer listed"))
        frames = await read_until_seq(ws, state, hub.seq)
        items = [it for f in frames for it in f["items"]]
        assert [it["message"]["moves"] for it in items if it["message"]["kind"] == "status"] == [0, 1, 2]
        kinds = [(it["message"]["kind"], it["message"].get("game_id")) for it in items if it["message"]["kind"] != "status"]
        assert ("board", "g2") in kinds and kinds[-1] == ("board_removed", "g1")
        if len(frames) == 1:  # the usual case: both g1 boards superseded by the removal
            assert ("board", "g1") not in kinds
        assert items[-1]["channels"] == ["games", "game:g1"]
        assert state.channels["games"] == hub_state(hub, "games") and "g1" not in state.channels["games"]
        assert state.channels["game:g1"]["g1"]["kind"] == "board_removed"  # the detail channel's last word
        await ws.close()


async def test_overflow_of_a_batching_client_resnapshots() -> None:
    hub = Hub()
    srv = WebServer(hub, WebConfig(port=0, client_queue=16))
    await srv.start()
    try:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        n = burst(hub, rounds=10)
        assert n > 16
        frames = await read_until_seq(ws, state, hub.seq)
        assert frames[0]["type"] == "snapshot" and frames[0]["reason"] == "overflow"
        assert srv.stats["resnapshots"] == 1 and state.channels["players"] == hub_state(hub, "players")
        seq = hub.publish(player("P01", 2000))
        f = await recv_until(ws, lambda f: f["type"] == "deltas")
        assert (f["seq"], f["prev"]) == (seq, frames[-1]["seq"])
        await ws.close()
    finally:
        await srv.close()


async def test_many_batching_clients_under_a_steady_stream() -> None:
    """20 clients, 300 messages published 30 at a time with a loop turn in between: every client ends
    with the hub's state, an unbroken chain, and fewer frames than messages."""
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        wss = [await client(srv) for _ in range(20)]
        states = [State() for _ in wss]
        for ws, st in zip(wss, states):
            st.frame((await subscribe(ws, "players", batch=True))[0])
        for k in range(10):
            for i in range(30):
                hub.publish(player(NAMES[i % 10], 2500 + 30 * k + i))
            await asyncio.sleep(0)
        counts = []
        for ws, st in zip(wss, states):
            counts.append(len(await read_until_seq(ws, st, hub.seq)))
            assert st.gaps == [] and st.channels["players"] == hub_state(hub, "players")
        assert max(counts) < 300
        for ws in wss:
            await ws.close()


async def test_a_long_backlog_is_split_into_bounded_frames() -> None:
    from livemon.faces.web.server import BATCH_BYTES

    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        # distinct keys: nothing conflated; long names make big messages (a histogram is not on players)
        big = [player(f"Q{i:03d} " + "x" * 3000, 2500) for i in range(400)]
        size = sum(len(codec.main_json(m)) for m in big)
        assert size > 3 * BATCH_BYTES
        for m in big:
            hub.publish(m)
        frames = await read_until_seq(ws, state, hub.seq)
        raw = [len(json.dumps(f, separators=(",", ":"))) for f in frames]
        assert size // BATCH_BYTES <= len(frames) <= size // BATCH_BYTES + 2
        assert max(raw) < BATCH_BYTES + 20_000  # at most one message over the budget
        assert sum(len(f["items"]) for f in frames) == 400 and state.gaps == []
        assert state.channels["players"] == hub_state(hub, "players")
        await ws.close()


async def test_a_client_far_behind_is_served_in_bounded_builds_across_loop_turns(monkeypatch) -> None:
    """A client 1,000 messages behind is not built for in one step (50-78 ms at 1,000 boards):
    at most BUILD_ENTRIES log entries a build, the pump yields between builds once its slice is spent,
    and the client still gets every message with an unbroken chain."""
    from livemon.faces.web import server as web_server

    monkeypatch.setattr(web_server, "PUMP_SLICE", 0.0)  # every build spends the slice
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=2048)) as srv:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        before = hub.seq
        for i in range(1000):
            hub.publish(player(f"R{i:04d}", 2500))
        await asyncio.sleep(0)  # the hub's wake, then this task: one build went out
        (c,) = srv.fanout.clients
        assert c.cursor == before + web_server.BUILD_ENTRIES
        frames = await read_until_seq(ws, state, hub.seq)
        assert len(frames) >= 1000 // web_server.BUILD_ENTRIES
        assert all(f["items"][-1]["seq"] - f["items"][0]["seq"] < web_server.BUILD_ENTRIES for f in frames)
        assert state.gaps == [] and sum(len(f["items"]) for f in frames) == 1000
        assert state.channels["players"] == hub_state(hub, "players")
        await ws.close()
