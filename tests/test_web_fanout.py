"""The shared fan-out over real loopback sockets: one hub log, frames built once per group.

What the per-client queues guaranteed must still hold (tests/test_web.py, tests/test_web_batch.py);
these check what is new: clients that read alike get the very same bytes, built once; a client
whose cursor falls out of the log's window is resnapshotted, one that keeps up on a quiet channel
never is; an arbiter channel stays out of every public client's frames; a client whose buffer never
drains is dropped while the others of its group keep receiving; a stream is sent in rounds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from livemon.config import WebConfig
from livemon.faces.hub import LOG_SIZE, Hub
from livemon.faces.web import WebServer, serve_web
from livemon.faces.web import codec
from livemon.faces.web.server import ROUND_GAP
from livemon.live.messages import Alert, BoardState, ScreeningNumbers
from tests.test_messages import sample
from tests.test_web import TOKEN, board, client, player, recv, recv_until, subscribe
from tests.test_web_batch import NAMES, State, burst, hub_state


async def raw_until_seq(ws: ClientConnection, seq: int, timeout: float = 10.0) -> list[str]:
    """Every data frame (as received: text) until one reaches ``seq``."""
    frames = []
    deadline = time.monotonic() + timeout
    while True:
        raw = await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic()))
        assert isinstance(raw, str)
        f = json.loads(raw)
        if f["type"] in ("delta", "deltas"):
            frames.append(raw)
            if f["seq"] >= seq:
                return frames


async def test_clients_that_read_alike_get_the_same_bytes_built_once() -> None:
    hub = Hub()
    hub.publish(player("P00", 2400))
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        alike = [await client(srv) for _ in range(3)]
        for ws in alike:
            await subscribe(ws, "players", "games", batch=True)
        players_only = await client(srv)
        await subscribe(players_only, "players", batch=True)
        plain = await client(srv)
        await subscribe(plain, "players", "games")
        assert len(srv.fanout.groups()) == 3
        built0, shared0 = srv.fanout_stats["built"], srv.fanout_stats["shared"]

        burst(hub, rounds=5)
        hub.publish(board("g1", 1, 10))
        hub.publish(player("P01", 2999))
        got = [await raw_until_seq(ws, hub.seq) for ws in alike]
        assert got[0] == got[1] == got[2]  # the very same text, frame for frame
        mine = await raw_until_seq(players_only, hub.seq - 1)  # its last message is the one before the board
        plain_frames = await raw_until_seq(plain, hub.seq)

        items = [it for raw in got[0] for it in json.loads(raw)["items"]]
        assert ["games"] in [it["channels"] for it in items]
        assert all("games" not in raw for raw in mine)  # built for its channels, not cut from the others'
        assert len(plain_frames) == 5 * 10 + 1 + 2 + 1  # one delta per message, none conflated
        built = srv.fanout_stats["built"] - built0
        shared = srv.fanout_stats["shared"] - shared0
        assert built == len(got[0]) + len(mine) + len(plain_frames)  # each frame encoded once...
        assert shared == 2 * len(got[0])  # ...and sent again, not rebuilt, to the two other alike clients
        for ws in (*alike, players_only, plain):
            await ws.close()


async def test_a_client_out_of_the_log_window_gets_a_fresh_snapshot() -> None:
    """Its backlog on its own channels is small, but the log has moved on past its cursor in one burst."""
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=64)) as srv:
        assert hub.log_size == LOG_SIZE  # 4 x client_queue is less: the default log
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        hub.publish(player("A", 2500))
        for i in range(LOG_SIZE):  # one loop turn: nobody reads in between
            hub.publish(board(f"g{i % 50}", i, 0))
        hub.publish(player("B", 2600))
        frames = await read_all_until(ws, state, hub.seq)
        assert frames[0]["type"] == "snapshot" and frames[0]["reason"] == "overflow" and frames[0]["seq"] == hub.seq
        assert state.channels["players"] == hub_state(hub, "players") and srv.stats["resnapshots"] == 1
        seq = hub.publish(player("C", 2700))
        f = await recv_until(ws, lambda f: f["type"] == "deltas")
        assert (f["seq"], f["prev"]) == (seq, frames[0]["seq"])
        await ws.close()


async def test_a_client_on_a_quiet_channel_that_keeps_up_is_never_resnapshotted() -> None:
    """Three log windows of boards go by in small bursts; the players-only client's cursor moves along."""
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=64)) as srv:
        ws = await client(srv)
        (snap,) = await subscribe(ws, "players")
        for i in range(3 * LOG_SIZE):
            hub.publish(board(f"g{i % 50}", i, 0))
            if i % 200 == 199:
                await asyncio.sleep(ROUND_GAP)  # a round
        await asyncio.sleep(2 * ROUND_GAP)
        seq = hub.publish(player("A", 2500))
        f = await recv_until(ws, lambda f: f["type"] != "heartbeat")
        assert f["type"] == "delta" and (f["seq"], f["prev"]) == (seq, snap["seq"])
        assert srv.stats["resnapshots"] == 0
        await ws.close()


async def read_all_until(ws: ClientConnection, state: State, seq: int) -> list[dict[str, Any]]:
    frames = []
    while state.last < seq:
        f = await recv(ws, 10.0)
        state.frame(f)
        frames.append(f)
    return frames


async def test_an_arbiter_channel_never_reaches_a_public_client_s_frames() -> None:
    hub = Hub()
    alert, numbers = sample(Alert), sample(ScreeningNumbers)
    async with serve_web(hub, WebConfig(port=0, arbiter_token=TOKEN)) as srv:
        arbiter = await client(srv)
        frames = await subscribe(arbiter, "games", "alerts", "screening", token=TOKEN, batch=True)
        assert [f["type"] for f in frames] == ["snapshot"] * 3
        public = await client(srv)
        await subscribe(public, "games", batch=True)
        refused = await client(srv)  # asked for alerts with a wrong token: reads what the public client reads
        frames = await subscribe(refused, "games", "alerts", token="not-the-token", batch=True)
        assert sorted(f["type"] for f in frames) == ["error", "snapshot"]
        arbiter_games = await client(srv)  # an arbiter on games only shares the public frames: no alert in them
        await subscribe(arbiter_games, "games", token=TOKEN, batch=True)

        for i in range(30):
            hub.publish(board(f"g{i % 3}", i, i))
            if i % 5 == 0:
                hub.publish(Alert(f"Cheater {i}", "Open", 40 + i, 3.9, 0.7, 3.0))
                hub.publish(numbers)
            if i % 10 == 0:
                await asyncio.sleep(0.05)  # several rounds
        hub.publish(alert)
        last_board = hub.publish(board("g0", 99, 0))
        arbiter_raw = await raw_until_seq(arbiter, hub.seq)
        public_raw = await raw_until_seq(public, last_board)
        assert await raw_until_seq(refused, last_board) == public_raw
        assert await raw_until_seq(arbiter_games, last_board) == public_raw
        for raw in public_raw:
            items = json.loads(raw)["items"]
            assert {it["message"]["kind"] for it in items} == {"board"} and all(it["channels"] == ["games"] for it in items)
            assert "Cheater" not in raw and "alert" not in raw and "screening" not in raw
        kinds = [it["message"]["kind"] for raw in arbiter_raw for it in json.loads(raw)["items"]]
        assert kinds.count("alert") == 7 and "screening" in kinds and "board" in kinds
        for ws in (arbiter, public, refused, arbiter_games):
            await ws.close()


async def test_a_client_whose_buffer_never_drains_is_dropped_while_its_group_keeps_receiving() -> None:
    """The slow client reads what the fast ones read (the same shared frames); it stops reading. Nothing
    more is written to it once its transport is over the high-water mark, and after send_timeout it is
    dropped; the fast ones get every message, in order, on time."""
    hub = Hub()
    cfg = WebConfig(port=0, client_queue=4096, send_timeout=1.0)
    async with serve_web(hub, cfg) as srv:
        fast = [await client(srv) for _ in range(3)]
        states = [State() for _ in fast]
        for ws, st in zip(fast, states):
            st.frame((await subscribe(ws, "players", batch=True))[0])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", srv.port))
        slow_ws = await connect(f"ws://127.0.0.1:{srv.port}/ws", sock=sock, max_queue=1)
        await slow_ws.send(json.dumps({"op": "subscribe", "channels": ["players"], "batch": True}))
        await asyncio.sleep(0.2)
        (slow,) = [c for c in srv.fanout.clients if c.io.remote_address[1] == sock.getsockname()[1]]
        assert [n for *_, n in srv.fanout.groups()] == [4]  # the four read alike

        async def reader(ws: ClientConnection, st: State, out: dict[int, float]) -> None:
            async for raw in ws:
                f = json.loads(raw)
                st.frame(f)
                if f["type"] == "deltas":
                    for it in f["items"]:
                        out[it["seq"]] = time.monotonic()

        received: list[dict[int, float]] = [{} for _ in fast]
        readers = [asyncio.create_task(reader(ws, st, out)) for ws, st, out in zip(fast, states, received)]
        published: dict[int, float] = {}
        biggest = 0  # the slow client's transport buffer, at most
        deadline = time.monotonic() + 120
        i = 0
        # twenty messages (~1 KB each) a loop turn: the slow client's socket buffers (the kernel grows the server's
        # side to 4 MB) fill within a few hundred turns however long a loaded machine makes a turn (five a turn
        # did not fill them within 20 s at a load of 25)
        while srv.stats["dropped"] == 0 and time.monotonic() < deadline:
            for _ in range(20):
                published[hub.publish(player(f"P{i:04d}", 2000 + i, histogram=100))] = time.monotonic()  # distinct keys
                i += 1
            if slow.live:
                biggest = max(biggest, slow.io.transport.get_write_buffer_size())
            await asyncio.sleep(0.005)
        assert srv.stats["dropped"] == 1 and slow not in srv.fanout.clients and not slow.live
        assert len(published) > 200
        high = slow.io.write_limit[0] if isinstance(slow.io.write_limit, tuple) else slow.io.write_limit
        assert biggest < high + 256 * 1024, biggest  # stopped writing over the high-water mark (plus one round)
        for k in range(10):  # and afterwards, still fine (distinct keys: nothing conflated)
            published[hub.publish(player(f"after {k}", 1500.0))] = time.monotonic()
            await asyncio.sleep(0.01)
        last, deadline = max(published), time.monotonic() + 60
        while not all(last in out for out in received) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        lat = []
        for st, out in zip(states, received):
            assert set(published) <= set(out), "a fast client missed messages"
            assert st.gaps == [] and st.channels["players"] == hub_state(hub, "players")
            lat += [out[s] - published[s] for s in published]
        lat.sort()
        print(f"fast clients' latency p95 {lat[int(0.95 * (len(lat) - 1))] * 1000:.0f} ms"  # the bound: test_web_sansio
              f" (max {lat[-1] * 1000:.0f} ms)")
        assert [n for *_, n in srv.fanout.groups()] == [3]
        for task in readers:
            task.cancel()
        for ws in fast:
            await ws.close()
        slow_ws.transport.abort()


async def test_a_stream_is_sent_in_rounds_and_an_isolated_message_at_once() -> None:
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        ws = await client(srv)
        state = State()
        state.frame((await subscribe(ws, "players", batch=True))[0])
        await asyncio.sleep(2 * ROUND_GAP)
        rounds = srv.fanout_stats["rounds"]
        seq = hub.publish(player("A", 2500))  # after a quiet spell: no waiting for a round...
        await asyncio.sleep(0)  # ...but sent in the next loop turn (the hub wakes its readers there), not by a timer
        assert srv.fanout_stats["rounds"] == rounds + 1
        f = await recv_until(ws, lambda f: f["type"] == "deltas")
        assert f["seq"] == seq

        n, t0 = 200, time.monotonic()
        for k in range(n):  # a message every ~2 ms, each in its own loop turn
            hub.publish(player(NAMES[k % 10], 2600 + k))
            await asyncio.sleep(0.002)
        took = time.monotonic() - t0
        state.frame(f)
        frames = await read_all_until(ws, state, hub.seq)
        # one frame a round at most, the rounds ROUND_GAP apart: not one frame per message (whatever the
        # machine's load made of the 2 ms turns: the bound is the time they took)
        assert len(frames) <= took / ROUND_GAP + 5 and len(frames) < n / 2, (n, took, len(frames))
        assert state.gaps == [] and state.channels["players"] == hub_state(hub, "players")
        await ws.close()


async def test_the_hub_log_and_its_readers() -> None:
    hub = Hub(log_size=8)
    woken: list[int] = []
    hub.add_reader(lambda: woken.append(hub.seq))
    for i in range(5):
        hub.publish(player(f"P{i}", 2500))
    assert woken == []  # not in the publisher's turn...
    await asyncio.sleep(0)
    assert woken == [5]  # ...but once in the next, for all five
    assert [s for s, _ in hub.log_since(2) or []] == [3, 4, 5]
    for i in range(6):
        hub.publish(board("g1", i, 0))
    assert hub.log_first == 4 and hub.log_since(2) is None and hub.log_entry(3) is None
    assert [s for s, _ in hub.log_since(3) or []] == list(range(4, 12))
    hub.add_reader(lambda: None, log_size=32)  # a bigger log keeps what it had
    assert hub.log_size == 32 and [s for s, _ in hub.log_since(3) or []] == list(range(4, 12))
    await asyncio.sleep(0)
    assert woken == [5, 11]

    # Queue subscribers are indexed by channel: a board on games and game:g1 reaches each once.
    both, other = hub.subscribe({"games", "game:g1"}), hub.subscribe({"players"})
    seq = hub.publish(board("g1", 9, 0))
    assert both.queue.qsize() == 1 and both.queue.get_nowait()[0] == seq and other.queue.empty()
    hub.unsubscribe(both)
    hub.publish(board("g1", 10, 0))
    assert both.queue.empty() and hub.subscribers == 1


def test_the_detail_index_forgets_channels_with_nothing_left_in_the_log() -> None:
    """A finished game's ``game:<id>`` gets no more messages to trim its index entry: it goes once its messages
    have left the log (one entry per game of a long event was kept for ever)."""
    hub = Hub(log_size=8)
    for g in range(20):
        hub.publish(board(f"g{g}", 1, 0))
    indexed = hub.detail_channels
    assert "game:g0" not in indexed and "game:g19" in indexed and len(indexed) <= 2 * hub.log_size
    assert hub.detail_since(["game:g19", "game:g0"], hub.log_first - 1, hub.seq) == [hub.seq]


async def test_a_server_without_clients_and_one_whose_clients_left(caplog: pytest.LogCaptureFixture) -> None:
    """Rounds of no client end quietly (the first version raised IndexError in the hub's wake-up)."""
    hub = Hub()
    srv = WebServer(hub, WebConfig(port=0, client_queue=2048))
    await srv.start()
    try:
        assert hub.log_size == 4 * 2048  # the log holds at least four client queues
        for i in range(3):
            hub.publish(board("g1", i, 0))
            await asyncio.sleep(2 * ROUND_GAP)
        ws = await client(srv)
        await subscribe(ws, "games")
        seq = hub.publish(board("g1", 9, 0))
        assert (await recv_until(ws, lambda f: f["type"] == "delta"))["seq"] == seq
        await ws.close()
        for _ in range(50):
            if srv.clients == 0:
                break
            await asyncio.sleep(0.01)
        for i in range(3):
            hub.publish(board("g1", 10 + i, 0))
            await asyncio.sleep(2 * ROUND_GAP)
        assert srv.clients == 0 and srv.fanout_stats["rounds"] >= 6
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    finally:
        await srv.close()
    assert hub.log_size == 4 * 2048 and hub.readers == 0  # the server's reader is gone with it


async def test_with_many_clients_the_rounds_space_out_to_keep_the_fan_out_s_share() -> None:
    """The gap between rounds grows to the round's time serving clients over ``fanout_share`` (here so small
    that 40 clients would space the rounds seconds apart), but no further than MAX_GAP; every client still
    ends with the hub's state, and a message after a quiet spell still leaves at once."""
    from livemon.faces.web.server import MAX_GAP

    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=4096)) as srv:
        srv.fanout.fanout_share = 1e-4
        wss = [await client(srv) for _ in range(40)]
        states = [State() for _ in wss]
        for ws, st in zip(wss, states):
            st.frame((await subscribe(ws, "players", batch=True))[0])
        rounds0, t0, n = srv.fanout_stats["rounds"], time.monotonic(), 0
        while time.monotonic() - t0 < 1.0:  # a message every ~2 ms: 50 rounds a second at the fixed gap
            hub.publish(player(NAMES[n % 10], 2600 + n))
            n += 1
            await asyncio.sleep(0.002)
        rounds = srv.fanout_stats["rounds"] - rounds0
        assert srv.fanout.gap == MAX_GAP  # capped
        assert 4 <= rounds <= 0.6 / ROUND_GAP, (rounds, srv.fanout.gap)  # not 50 (the fixed gap), not 1 (no cap)
        for ws, st in zip(wss, states):
            await read_all_until(ws, st, hub.seq)
            assert st.gaps == [] and st.channels["players"] == hub_state(hub, "players")
        await asyncio.sleep(MAX_GAP + 0.05)
        t1 = time.monotonic()
        seq = hub.publish(player("A", 2500))
        f = await recv_until(wss[0], lambda f: f["type"] == "deltas")
        assert f["seq"] == seq and time.monotonic() - t1 < 0.5 * MAX_GAP + 0.2
        for ws in wss:
            await ws.close()


async def test_a_snapshot_asked_again_encodes_only_the_boards_that_moved(monkeypatch) -> None:
    """A big channel's snapshot (here 300 boards: built in a thread the first time) keeps each board's JSON
    while it is the latest, so the next client's snapshot, a few moves later, re-encodes only those moves;
    both are exactly the channel's latest messages."""
    hub = Hub()
    for k in range(300):
        hub.publish(board(f"g{k:03d}", 1, k))
    async with serve_web(hub, WebConfig(port=0)) as srv:
        first = await client(srv)
        (snap1,) = await subscribe(first, "games")
        assert [m["game_id"] for m in snap1["messages"]] == [f"g{k:03d}" for k in range(300)]
        encoded: list[str] = []
        main_json = codec.main_json

        def counting(msg: BoardState) -> str:
            encoded.append(msg.game_id)
            return main_json(msg)

        monkeypatch.setattr(codec, "main_json", counting)
        for k in (5, 17, 299):
            hub.publish(board(f"g{k:03d}", 2, -k))
        second = await client(srv, max_size=None)
        (snap2,) = await subscribe(second, "games")
        assert snap2["seq"] == hub.seq
        assert sorted(encoded) == ["g005", "g017", "g299"]  # each move once (its delta and the snapshot share it)
        _, latest = hub.snapshot("games")
        assert snap2["messages"] == [json.loads(codec.main_json(m)) for m in latest]  # games: boards without evals
        assert {m["game_id"]: m["eval_cp"] for m in snap2["messages"]}["g017"] == -17
        await first.close()
        await second.close()


@pytest.mark.parametrize("batch", [False, True])
async def test_a_boards_evals_go_to_its_game_channel_only(batch: bool) -> None:
    """Every board on ``games`` carried its whole eval series to every client (O(plies) a message);
    now ``games`` (deltas, snapshots, /api/snapshot) has eval_cp only and ``game:<id>`` the series too."""
    import dataclasses

    import httpx

    hub = Hub()
    hub.publish(dataclasses.replace(board("g1", 2, 15), evals=(20, 25, 15)))
    async with serve_web(hub, WebConfig(port=0)) as srv:
        round_ws, game_ws, both_ws = [await client(srv) for _ in range(3)]
        (snap_round,) = await subscribe(round_ws, "games", batch=batch)
        (snap_game,) = await subscribe(game_ws, "game:g1", batch=batch)
        await subscribe(both_ws, "games", "game:g1", batch=batch)
        assert "evals" not in snap_round["messages"][0] and snap_round["messages"][0]["eval_cp"] == 15
        assert snap_game["messages"][0]["evals"] == [20, 25, 15]
        hub.publish(dataclasses.replace(board("g1", 3, -30), evals=(20, 25, 15, -30)))

        def message(frame: dict[str, Any]) -> dict[str, Any]:
            return frame["items"][-1]["message"] if frame["type"] == "deltas" else frame["message"]

        def is_delta(f: dict[str, Any]) -> bool:
            return f["type"] in ("delta", "deltas")

        got_round = message(await recv_until(round_ws, is_delta))
        got_game = message(await recv_until(game_ws, is_delta))
        got_both = await recv_until(both_ws, is_delta)
        assert got_round["eval_cp"] == -30 and "evals" not in got_round and got_round["ply"] == 3
        assert got_game["evals"] == [20, 25, 15, -30]
        assert message(got_both)["evals"] == [20, 25, 15, -30]  # on both: once, with the series
        async with httpx.AsyncClient() as http:
            body = (await http.get(f"{srv.url}/api/snapshot")).json()
        assert body["channels"]["games"][0]["eval_cp"] == -30 and "evals" not in body["channels"]["games"][0]
        for ws in (round_ws, game_ws, both_ws):
            await ws.close()


@pytest.mark.parametrize("batch", [False, True])
async def test_a_players_histogram_goes_to_its_player_channel_only(batch: bool, monkeypatch) -> None:
    """Every player message on ``players`` carried the player's whole gain histogram (O(moves):
    two thirds of a message's bytes after 300 moves, sent to every client at every move); now ``players``
    has the figures and ``player:<name>`` the histogram too, which is encoded only for a client reading it."""
    from livemon.live.messages import PlayerEstimate

    whole = []
    to_json = codec.to_json

    def counted(msg: PlayerEstimate) -> str:
        whole.append(msg.name)
        return to_json(msg)

    monkeypatch.setattr(codec, "to_json", counted)
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0)) as srv:
        list_ws, one_ws = [await client(srv) for _ in range(2)]
        (snap_list,) = await subscribe(list_ws, "players", batch=batch)
        hub.publish(player("Carlsen, M", 2830, histogram=40))
        hub.publish(player("Caruana, F", 2800, histogram=40))

        def message(frame: dict[str, Any]) -> dict[str, Any]:
            return frame["items"][-1]["message"] if frame["type"] == "deltas" else frame["message"]

        def is_delta(f: dict[str, Any]) -> bool:
            return f["type"] in ("delta", "deltas")

        got = message(await recv_until(list_ws, lambda f: is_delta(f) and message(f)["name"] == "Caruana, F"))
        assert "gain_histogram" not in got and got["perceived_elo"] == 2800 and whole == []  # no whole JSON made
        (snap_one,) = await subscribe(one_ws, "player:Carlsen, M", batch=batch)
        assert len(snap_one["messages"][0]["gain_histogram"]) == 40
        moved = player("Carlsen, M", 2831, histogram=41)
        hub.publish(moved)
        got_one = message(await recv_until(one_ws, is_delta))
        got_list = message(await recv_until(list_ws, is_delta))
        assert got_one["gain_histogram"] == dict(moved.gain_histogram)
        assert "gain_histogram" not in got_list and got_list["perceived_elo"] == 2831
        assert whole == ["Carlsen, M", "Carlsen, M"]  # the snapshot's and the delta's, for the one client of it
        for ws in (list_ws, one_ws):
            await ws.close()


async def test_the_server_samples_publish_to_write_latency_for_one_client_in_latency_sample() -> None:
    """The clients' own CPU made the client-side latency of a whole round unreadable; /healthz
    has the server's part (hub ts -> socket write) for the sampled clients, every message they were sent."""
    import httpx

    from livemon.faces.web.server import LATENCY_SAMPLE

    hub = Hub()
    async with serve_web(hub, WebConfig(port=0)) as srv:
        wss = [await client(srv) for _ in range(LATENCY_SAMPLE + 1)]  # clients 1 and LATENCY_SAMPLE + 1 are sampled
        for ws in wss:
            await subscribe(ws, "players", batch=False)  # one frame a message: nothing conflated
        for i in range(20):
            hub.publish(player(f"P{i:02d}", 2500 + i))
        seq = hub.seq
        for ws in wss:
            await recv_until(ws, lambda f: f.get("seq") == seq)
        async with httpx.AsyncClient() as http:
            lat = (await http.get(f"{srv.url}/healthz")).json()["latency"]
        assert lat["samples"] == 2 * 20  # two sampled clients, every message written to them once
        assert lat["p50_ms"] is not None and 0 < lat["p99_ms"] < 5000
        assert sum(lat["hist"].values()) == lat["samples"]
        for ws in wss:
            await ws.close()


async def test_a_client_of_detail_channels_alone_is_served_from_the_hubs_index_not_a_log_scan(monkeypatch) -> None:
    """As in ``bench/round.py --overlay``: 500 overlays (a board and its two players each: 500 groups of their
    own) made every round scan the log once per client; at 1,000 boards the pump fell behind and the clients were
    resnapshotted ~500 times a second. A client of detail channels only reads the hub's per-channel index."""
    hub = Hub()
    scanned: list[tuple[int, int | None]] = []
    log_since = hub.log_since

    def counting(after: int, upto: int | None = None):  # noqa: ANN202
        scanned.append((after, upto))
        return log_since(after, upto)

    monkeypatch.setattr(hub, "log_since", counting)
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        await subscribe(ws, "game:g7", "player:Carlsen, M", batch=False)  # a frame each: nothing conflated
        for i in range(3000):  # the round's other boards and players, one of ours in the middle
            hub.publish(board(f"g{i % 1000}", 2 + i // 1000, i))
            if i == 1507:
                hub.publish(player("Carlsen, M", 2830))
        got = []
        while len(got) < 4:  # g7's three boards and the player, in seq order, nothing else
            got.append((await recv_until(ws, lambda f: f["type"] == "delta"))["message"])
        assert [m.get("game_id", m.get("name")) for m in got] == ["g7", "g7", "Carlsen, M", "g7"]
        assert len(scanned) <= srv.fanout_stats["rounds"]  # a round looks at its messages once, never per client
        await ws.close()


async def test_overlays_without_news_are_passed_over_and_never_resnapshotted() -> None:
    """30 overlays, each on its own board (30 groups), over sockets: while one board plays three log windows of
    moves, a quiet overlay then gets its board's move as the next delta of its chain, without a snapshot.
    (That the quiet ones are not even served in those rounds: tests/test_web_sansio.py.)"""
    hub = Hub()
    async with serve_web(hub, WebConfig(port=0, client_queue=1024)) as srv:
        overlays = [await client(srv) for _ in range(30)]
        snaps = [(await subscribe(ws, f"game:g{i}", batch=True, patch=True))[0] for i, ws in enumerate(overlays)]
        reader = asyncio.create_task(raw_until_seq(overlays[0], 3 * LOG_SIZE))  # g0's overlay reads its moves
        for i in range(3 * LOG_SIZE):
            hub.publish(board("g0", i, 0))
            if i % 200 == 199:
                await asyncio.sleep(ROUND_GAP)  # a round (far fewer than client_queue: g0's overlay keeps up)
        await asyncio.sleep(2 * ROUND_GAP)
        assert srv.fanout_stats["rounds"] > 20
        seq = hub.publish(board("g7", 1, 35))
        f = await recv_until(overlays[7], lambda f: f["type"] != "heartbeat")
        assert f["type"] == "deltas" and (f["seq"], f["prev"]) == (seq, snaps[7]["seq"])
        assert f["items"][0]["message"]["eval_cp"] == 35
        assert srv.stats["resnapshots"] == 0
        assert len(await reader) >= 1  # g0's overlay got its moves
        for ws in overlays:
            await ws.close()
