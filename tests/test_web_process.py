"""The web face in a process of its own (``[web] process = true``; the fan-out was half of the
monitor's CPU at 1,000 boards and 500 clients): the replica hub equals the monitor's, a real ``livemon
serve`` serves real WebSocket clients from its child, restarts a child that died, and stops both."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.faces.web.process import apply_line, bootstrap_lines
from livemon.live.messages import (
    Alert,
    BoardRemoved,
    BoardState,
    PlayerEstimate,
    PlayerRemoved,
    ScreeningNumbers,
    TTTRating,
)
from tests.conftest import REPO, free_port, real
from tests.test_messages import sample

FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def random_message(rng: random.Random) -> Any:
    game, name = f"g{rng.randrange(6)}", f"P{rng.randrange(8)}"
    kind = rng.randrange(8)
    if kind < 3:
        ply = rng.randrange(1, 60)
        return BoardState(game, "W", "B", 2500, None, FEN, ply, "e4", "e2e4", rng.randrange(-90, 90),
                          tuple(rng.randrange(-90, 90) for _ in range(ply + 1)))
    if kind < 5:
        return PlayerEstimate(name, 2400, rng.randrange(40), rng.uniform(-60, 0), rng.random(), rng.uniform(-900, 0),
                              rng.uniform(1500, 2900), gain_histogram={"0": rng.randrange(9)})
    if kind == 5:
        return TTTRating(name, rng.gauss(0, 1), 0.5, rng.uniform(2000, 2800), 80.0, rng.randrange(1, 9))
    if kind == 6:
        return rng.choice([BoardRemoved(game, "gone"), PlayerRemoved(name, "gone")])
    return rng.choice([Alert(name, "Ev", 60, 3.1, 65.5, 3.0, {}),
                       dataclasses.replace(sample(ScreeningNumbers), player=name, positions=rng.randrange(99))])


def state(hub: Hub) -> dict[str, list[str]]:
    """Every channel's latest messages as their JSON (ts included), in order."""
    return {ch: [codec.to_json(m) for m in hub.snapshot(ch)[1]] for ch in sorted(hub.channels())}


def test_the_replica_is_the_hub_after_a_bootstrap_at_any_point_and_the_relay_after_it():
    for seed in range(20):
        rng = random.Random(seed)
        hub = Hub()
        msgs = [random_message(rng) for _ in range(300)]
        cut = rng.randrange(len(msgs))
        for m in msgs[:cut]:
            hub.publish(m)
        replica = Hub()
        for line in bootstrap_lines(hub):  # a child (re)started here
            apply_line(replica, line)
        assert state(replica) == state(hub)
        cursor = hub.seq
        for m in msgs[cut:]:
            hub.publish(m)
            if rng.random() < 0.3:  # the relay runs once per loop turn: a few messages at a time
                for _, msg in hub.log_since(cursor) or []:
                    apply_line(replica, codec.to_json(msg))
                cursor = hub.seq
        for _, msg in hub.log_since(cursor) or []:
            apply_line(replica, codec.to_json(msg))
        assert state(replica) == state(hub), seed
        assert any("game:" in ch for ch in state(hub)) and state(hub)["alerts"]


def web_children() -> list[int]:
    out = subprocess.run(["pgrep", "-f", "livemon.faces.web.process"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


async def a_snapshot(port: int, *channels: str) -> dict[str, list[dict[str, Any]]]:
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "hello"
        await ws.send(json.dumps({"op": "subscribe", "channels": list(channels)}))
        got: dict[str, list[dict[str, Any]]] = {}
        while len(got) < len(channels):
            frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if frame["type"] == "snapshot":
                got[frame["channel"]] = frame["messages"]
        return got


async def test_serve_runs_its_web_face_in_a_child_restarts_it_and_stops_both(tmp_path: Path, fake_engine: str) -> None:
    pgn = tmp_path / "london.pgn"
    pgn.write_text(real("london_chess_classic_2011_twic.pgn").read_text())
    port = free_port()
    cfg = tmp_path / "monitor.toml"
    cfg.write_text(f'[engine]\npath = "{fake_engine}"\ndepth = 1\n[store]\npath = "{tmp_path / "m.sqlite"}"\n'
                   f'backup_minutes = 0\n[monitor]\nstatus_seconds = 0.2\n'
                   f'[web]\nport = {port}\nprocess = true\n'
                   f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.05\n')
    before = set(web_children())
    log_path = tmp_path / "monitor.log"
    with open(log_path, "wb") as out:
        monitor = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)], cwd=REPO,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert monitor.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, "no web face"
            with contextlib.suppress(OSError, httpx.HTTPError):
                async with httpx.AsyncClient() as http:
                    health = (await http.get(f"http://127.0.0.1:{port}/healthz")).json()
                break
            await asyncio.sleep(0.2)
        assert health["ok"] is True
        children = [p for p in web_children() if p not in before]
        assert len(children) == 1 and children[0] != monitor.pid  # served by a child process
        deadline = time.monotonic() + 60
        while True:  # boards arrive through the relay, evals on game:<id> only
            snap = await a_snapshot(port, "games", "players")
            if len(snap["games"]) >= 3 and any(b["ply"] >= 10 for b in snap["games"]) and snap["players"]:
                break
            assert time.monotonic() < deadline, snap
            await asyncio.sleep(0.3)
        assert all("evals" not in b for b in snap["games"])
        gid = max(snap["games"], key=lambda b: b["ply"])["game_id"]
        detail = (await a_snapshot(port, f"game:{gid}"))[f"game:{gid}"]
        assert len(detail[0]["evals"]) == detail[0]["ply"] + 1

        os.kill(children[0], signal.SIGKILL)  # the child dies: the monitor restarts it on the same port
        deadline = time.monotonic() + 30
        while True:
            assert time.monotonic() < deadline, log_path.read_text()
            with contextlib.suppress(OSError, websockets.WebSocketException, TimeoutError):
                again = await a_snapshot(port, "games")
                break
            await asyncio.sleep(0.2)
        assert {b["game_id"] for b in snap["games"]} <= {b["game_id"] for b in again["games"]}
        assert "web process exited" in log_path.read_text()
        new_children = [p for p in web_children() if p not in before]
        assert len(new_children) == 1 and new_children != children

        os.killpg(monitor.pid, signal.SIGTERM)
        monitor.wait(30)
        deadline = time.monotonic() + 10
        while [p for p in web_children() if p not in before]:
            assert time.monotonic() < deadline, "the web process outlived the monitor"
            await asyncio.sleep(0.1)
        text = log_path.read_text()
        assert monitor.returncode == 0 and "Traceback" not in text, text[-3000:]
    finally:
        if monitor.poll() is None:
            os.killpg(monitor.pid, signal.SIGKILL)
            monitor.wait()
        for p in web_children():
            if p not in before:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p, signal.SIGKILL)
