"""Patches (``"patch": true``, docs/websocket.md) over real loopback sockets.

A client that asks for patches gets, for a state message whose previous state it
holds, only the fields that changed; merged into what it holds, every channel ends
equal to the hub's snapshot, as a client of whole messages does, with fewer bytes.
The hub is driven directly, in bursts (conflated in ``deltas`` frames) and one at a time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from typing import Any

from websockets.asyncio.client import ClientConnection

from livemon.config import WebConfig
from livemon.faces.hub import Hub, channels_of
from livemon.faces.web import serve_web
from livemon.faces.web import codec
from livemon.live.messages import Alert, BoardRemoved, BoardState, PlayerRemoved
from tests.test_web import FEN, TOKEN, client, player, recv, subscribe
from tests.test_web_batch import State, hub_state


class PatchState(State):
    """A client of patches: a patch is merged into the state held of its key (which must be there)."""

    def __init__(self) -> None:
        super().__init__()
        self.patches = 0
        self.bytes = 0

    def apply(self, channels: list[str], m: dict[str, Any]) -> None:
        if not m.get("patch"):
            super().apply(channels, m)
            return
        self.patches += 1
        for ch in channels:
            held = self.channels.get(ch, {}).get(self.key(m))
            assert held is not None, f"a patch of {self.key(m)} on {ch}, which the client does not hold"
            merged = {**held, **m}
            del merged["patch"]
            self.channels[ch][self.key(m)] = merged


async def read_all(ws: ClientConnection, state: PatchState, seq: int) -> None:
    while state.last < seq:
        raw = await asyncio.wait_for(ws.recv(), 10)
        state.bytes += len(raw)
        state.frame(json.loads(raw))


def moved(b: BoardState, rng: random.Random) -> BoardState:
    cp = rng.randint(-300, 300)
    return dataclasses.replace(b, ply=b.ply + 1, last_move_san=rng.choice(["e4", "Nf3", "d4"]), eval_cp=cp,
                               evals=(*b.evals, cp), white_clock=rng.choice([None, 60.0 * rng.randint(1, 90)]))


def stream(hub: Hub, rng: random.Random, steps: int) -> None:
    """Boards moving (evals growing), players changing a few fields, withdrawals and returns."""
    boards = {g: BoardState(g, f"W{g}", f"B{g}", 2700, 2650, FEN, 0) for g in ("g1", "g2", "g3", "g4")}
    names = [f"P{i}" for i in range(6)]
    for _ in range(steps):
        r = rng.random()
        if r < 0.45:
            g = rng.choice(list(boards))
            boards[g] = moved(boards[g], rng)
            hub.publish(boards[g])
        elif r < 0.9:
            hub.publish(player(rng.choice(names), 2500 + rng.randint(0, 3), histogram=rng.randint(0, 4)))
        elif r < 0.95:
            hub.publish(BoardRemoved(rng.choice(list(boards)), "withdrawn"))  # it comes back whole with its next move
        else:
            hub.publish(PlayerRemoved(rng.choice(names), "withdrawn"))


async def test_patched_clients_end_with_the_hub_s_state_in_fewer_bytes() -> None:
    hub = Hub()
    rng = random.Random(7)
    stream(hub, rng, 40)
    async with serve_web(hub, WebConfig(port=0, client_queue=4096)) as srv:
        modes = {  # name: (channels, subscribe options)
            "batch": (["games", "players"], {"batch": True, "patch": True}),
            "single": (["games", "players"], {"patch": True}),
            "plain": (["games", "players"], {}),
            "overlay": (["game:g1", "player:P1", "player:P2"], {"batch": True, "patch": True}),
            "mixed": (["games", "game:g2", "players", "player:P3"], {"batch": True, "patch": True}),
        }
        clients, states = {}, {}
        for name, (channels, opts) in modes.items():
            ws = clients[name] = await client(srv)
            states[name] = PatchState()
            for snap in await subscribe(ws, *channels, **opts):
                states[name].frame(snap)
        for burst in range(30):  # bursts queued at once (conflated in a batch), then single messages
            stream(hub, rng, rng.choice([1, 2, 25]))
            await asyncio.sleep(0.03 if burst % 2 else 0)
        for name, ws in clients.items():  # until the last message on its channels
            wanted = set(modes[name][0])
            await read_all(ws, states[name], max(s for s, m in hub.log_since(0) or () if wanted & set(channels_of(m))))

        for name, (channels, _) in modes.items():
            st = states[name]
            assert st.gaps == [], name
            for ch in channels:
                held = st.channels.get(ch, {})
                if name == "mixed" and ch in ("games", "players"):  # its g2 / P3 came whole: with their details
                    details = (("gain_histogram",) if ch == "players"
                               else (*codec.DETAIL_FIELDS["board"], *codec.BOARD_DERIVED))
                    held = {k: {f: v for f, v in m.items() if f not in details} for k, m in held.items()}
                assert held == hub_state(hub, ch), (name, ch)
        assert states["plain"].patches == 0
        for name in ("batch", "single", "overlay", "mixed"):
            assert states[name].patches > (5 if name == "overlay" else 20), name
        assert states["single"].bytes < 0.75 * states["plain"].bytes, (states["single"].bytes, states["plain"].bytes)
        for ws in clients.values():
            await ws.close()


async def test_a_patch_carries_the_changes_of_states_conflated_before_it() -> None:
    hub = Hub()
    base = player("A", 2500)
    hub.publish(base)
    hub.publish(player("B", 2400))
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        (snap,) = await subscribe(ws, "players", batch=True, patch=True)
        assert [m.get("patch") for m in snap["messages"]] == [None, None]  # a snapshot: whole messages
        # three states of A at once (one frame, two conflated), each changing another field
        hub.publish(dataclasses.replace(base, moves=31))
        hub.publish(dataclasses.replace(base, moves=31, mean_gain=-9.0))
        last = hub.publish(dataclasses.replace(base, moves=31, mean_gain=-9.0, c_mean=0.61))
        frame = await recv(ws)
        assert frame["type"] == "deltas" and [it["seq"] for it in frame["items"]] == [last]
        patch = frame["items"][0]["message"]
        assert patch["patch"] is True and patch["name"] == "A"
        assert set(patch) == {"name", "moves", "mean_gain", "c_mean", "kind", "v", "ts", "patch"}
        assert (patch["moves"], patch["mean_gain"], patch["c_mean"]) == (31, -9.0, 0.61)

        # one at a time: each patch only its own change; a state after a removal comes whole
        hub.publish(dataclasses.replace(base, moves=32, mean_gain=-9.0, c_mean=0.61))
        frame = await recv(ws)
        assert set(frame["items"][0]["message"]) == {"name", "moves", "kind", "v", "ts", "patch"}
        hub.publish(PlayerRemoved("A", "withdrawn"))
        await recv(ws)
        hub.publish(base)
        whole = (await recv(ws))["items"][0]["message"]
        assert "patch" not in whole and whole == json.loads(codec.main_json(base)) | {"ts": whole["ts"]}
        await ws.close()


async def test_alerts_and_status_always_come_whole() -> None:
    """An alert is an event to show (each level), not a state to merge: never a patch, like ``status``."""
    hub = Hub()
    hub.publish(Alert("Cheater, C", "Open", 40, 3.9, 0.71, 3.0))
    async with serve_web(hub, WebConfig(port=0, arbiter_token=TOKEN)) as srv:
        ws = await client(srv)
        await subscribe(ws, "alerts", token=TOKEN, patch=True)
        hub.publish(Alert("Cheater, C", "Open", 60, 4.4, 0.74, 3.0))  # the same key: a later level
        m = (await recv(ws))["message"]
        assert "patch" not in m and (m["positions"], m["z"], m["player"], m["event"]) == (60, 4.4, "Cheater, C", "Open")
        await ws.close()
