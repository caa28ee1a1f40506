"""Stopping under load (at 1,000 boards ``livemon serve`` did not stop on SIGTERM).

The cause: the engine bus's sender waited for work with ``asyncio.wait_for``, which on Python 3.11
returns the awaited result instead of raising when it is cancelled in the loop turn that result
arrives, losing the cancellation. Work (a request, an answer) arrives all the time under load, so
``RemoteEnginePool.close`` waited for ever on a sender that kept looping. A real broker, real
positions, a real ``livemon serve`` process with a real worker (its engine the scripted one of
tests/fake_uci.py) and WebSocket clients.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import chess
import chess.pgn
import pytest
import websockets

from livemon.config import BrokerConfig, BusConfig
from livemon.io.bus import RemoteEnginePool
from livemon.io.engine import EngineError
from livemon.io.store import Store, StoreError
from livemon.live.rules import needs_search
from livemon.live.pgn import split_games
from tests.conftest import REPO, free_port, real, stop_groups

PROFILE = "Stockfish 15.1 depth=5 multipv=4"
LONDON = "london_chess_classic_2011_twic.pgn"


def real_positions(n: int) -> list[chess.Board]:
    """``n`` distinct searched positions of the London Chess Classic 2011."""
    out: list[chess.Board] = []
    seen: set[str] = set()
    for chunk, _ in split_games(real(LONDON).read_text()):
        game = chess.pgn.read_game(io.StringIO(chunk))
        assert game is not None
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            if needs_search(board) and board.fen() not in seen:
                seen.add(board.fen())
                out.append(board.copy())
                if len(out) == n:
                    return out
    return out


async def test_a_remote_pool_closes_at_once_when_work_arrives_as_it_stops(broker):
    """Thousands of positions wanted, one more asked for in the very turn the pool is closed."""
    positions = real_positions(1200)
    assert len(positions) == 1200
    bus = BusConfig(broker=BrokerConfig(host="127.0.0.1", port=broker.port), profile=PROFILE, max_backoff=1.0)
    for attempt in range(5):  # each attempt hits the race (the old sender hung on the first)
        pool = RemoteEnginePool(bus, cache=None, monitor_id=f"m{attempt}")
        await pool.start()
        deadline = time.monotonic() + 10
        while not pool.connected.is_set():
            assert time.monotonic() < deadline, "the pool did not connect"
            await asyncio.sleep(0.02)
        wanted = [asyncio.create_task(pool.submit(b)) for b in positions[:-1]]
        await asyncio.sleep(0.1)  # all queued, the sender waiting for work
        wanted.append(asyncio.create_task(pool.submit(positions[-1])))
        await asyncio.sleep(0)  # the request wakes the sender...
        closing = asyncio.create_task(pool.close())  # ...in the turn its cancellation arrives
        done, _ = await asyncio.wait({closing}, timeout=5)
        assert done, f"RemoteEnginePool.close() still waiting 5 s later (attempt {attempt + 1})"
        results = await asyncio.gather(*wanted, return_exceptions=True)
        assert all(isinstance(r, EngineError) for r in results)  # failed, not left waiting: nobody hangs on them


def write_configs(tmp_path: Path, port: int, pgn: Path, db: Path, engine: str) -> tuple[Path, Path]:
    monitor = tmp_path / "monitor.toml"
    monitor.write_text(  # its [engine]: the workers', started once to read its name (the bus's profile)
        f'[engine]\npath = "{engine}"\ndepth = 1\n[store]\npath = "{db}"\nbackup_minutes = 0\n'
        f'[monitor]\nstatus_seconds = 0.2\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {port}\n[bus]\nmode = "mqtt"\nmax_backoff = 1.0\n'
        f'[web]\nport = {free_port()}\n'
        f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.01\n')
    worker = tmp_path / "worker.toml"
    worker.write_text(f'[engine]\npath = "{engine}"\ndepth = 1\nthreads = 1\nhash_mb = 16\nprocesses = 2\n'
                      f'[store]\npath = "{tmp_path / "worker.sqlite"}"\nbackup_minutes = 0\n'
                      f'[broker]\nhost = "127.0.0.1"\nport = {port}\n[bus]\nmode = "mqtt"\n')
    return monitor, worker


def stored(db: Path) -> tuple[int, int] | None:
    """(moves in the store, moves in its last stored status), or None while unreadable."""
    with contextlib.suppress(StoreError, sqlite3.Error), Store(db, create=False) as s:
        status = s.status.get()
        return sum(len(m) for _, _, m in s.games.load()), (status or {}).get("moves", 0)
    return None


async def clients(port: int, n: int, stop: asyncio.Event) -> int:
    """``n`` WebSocket clients on games+players until ``stop`` or the server goes; frames received."""
    frames = 0

    async def one() -> None:
        nonlocal frames
        with contextlib.suppress(OSError, websockets.ConnectionClosed):
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws:
                await ws.send(json.dumps({"type": "subscribe", "channels": ["games", "players"], "batch": True}))
                while not stop.is_set():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(0.5):
                            await ws.recv()
                            frames += 1

    await asyncio.gather(*(one() for _ in range(n)))
    return frames


async def test_serve_in_bus_mode_stops_within_seconds_of_sigterm_under_load(tmp_path, broker, fake_engine, monkeypatch):
    """A whole event replayed at full speed into ``livemon serve`` (bus mode, one real worker, 40 WebSocket
    clients): thousands of positions queued and answers arriving when SIGTERM comes. It exits 0 within
    a few seconds, with every move it read in the store (stored before it was analysed)."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.02")  # 100 answers a second from the worker's two engines
    pgn = tmp_path / "london.pgn"
    pgn.write_text(real(LONDON).read_text())
    db = tmp_path / "monitor.sqlite"
    monitor_cfg, worker_cfg = write_configs(tmp_path, broker.port, pgn, db, fake_engine)
    web_port = int(monitor_cfg.read_text().split("[web]\nport = ")[1].split("\n")[0])
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for argv, log in (([ "worker", "--config", str(worker_cfg)], "worker.log"),
                          (["serve", "--config", str(monitor_cfg)], "monitor.log")):
            with open(tmp_path / log, "wb") as out:
                procs.append(subprocess.Popen([sys.executable, "-m", "livemon.cli", *argv], cwd=REPO, stdout=out,
                                              stderr=subprocess.STDOUT, start_new_session=True))
        worker, monitor = procs
        stop = asyncio.Event()
        deadline = time.monotonic() + 60
        while True:
            assert monitor.poll() is None, (tmp_path / "monitor.log").read_text()
            assert time.monotonic() < deadline, "the monitor never served its web face"
            with contextlib.suppress(OSError):
                _, w = await asyncio.open_connection("127.0.0.1", web_port)
                w.close()
                break
            await asyncio.sleep(0.2)
        watching = asyncio.create_task(clients(web_port, 40, stop))
        deadline = time.monotonic() + 90
        while (got := stored(db)) is None or got[1] < 1500:  # well into the event, the backlog thousands
            assert monitor.poll() is None and time.monotonic() < deadline, (tmp_path / "monitor.log").read_text()
            await asyncio.sleep(0.2)
        os.killpg(monitor.pid, signal.SIGTERM)
        sent = time.monotonic()
        while monitor.poll() is None and time.monotonic() - sent < 30:
            await asyncio.sleep(0.05)
        took = time.monotonic() - sent
        stop.set()
        frames = await watching
        log = (tmp_path / "monitor.log").read_text()
        assert monitor.poll() is not None, f"still running 30 s after SIGTERM:\n{log[-3000:]}"
        assert took < 8, f"stopped {took:.1f} s after SIGTERM:\n{log[-3000:]}"
        assert monitor.returncode == 0 and "Traceback" not in log, log[-3000:]
        assert frames > 0
        moves, status_moves = stored(db) or (0, -1)
        assert moves == status_moves >= 1500  # the status stored on the way out counts every move read: all stored
        with Store(db, create=False) as s:
            assert s.analyses.count() < moves  # the stop came with analyses still wanted
    finally:
        stop_groups(procs)


@pytest.fixture(autouse=True)
def _quiet_websockets_logs(caplog):
    caplog.set_level("WARNING", "websockets")


async def test_a_slow_stop_says_what_it_waits_on(caplog):
    """``livemon serve`` logs, a few seconds after the signal, where each pending task waits (grouped)."""
    from livemon.app.serve import report_pending

    stuck = asyncio.Event()

    async def inner() -> None:
        await stuck.wait()

    async def outer() -> None:
        await inner()

    tasks = [asyncio.create_task(outer(), name=f"analyse g:{i}") for i in range(3)]
    await asyncio.sleep(0)
    with caplog.at_level("WARNING", "livemon.app.serve"):
        report_pending()
    stuck.set()
    await asyncio.gather(*tasks)
    text = caplog.text
    assert "tasks pending" in text
    line = next(ln for ln in text.splitlines() if "outer" in ln)
    assert line.strip().startswith("3 x ") and "outer" in line and "inner" in line and "Event.wait" in line
    assert "(e.g. analyse g:" in line
