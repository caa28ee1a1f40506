"""The bundled demo keeps up with its engines: the replay paced to a share of the positions/s measured at start
(:func:`livemon.app.plan.demo_pace`, :attr:`ReplayFeed.max_rate`), and ``livemon status``'s figures (the rate
and boards followable from searches at the pinned profile only; the engines' lag apart from the feeds').

The pacing is checked on an injected rate and a recording sleep (no real wait); the measurement at start on the
scripted UCI engine (tests/fake_uci.py) with a set search time.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import chess
import chess.pgn
import pytest

from livemon.app.monitor import Monitor, bundled_replay
from livemon.app.plan import DEMO_SHARE, demo_pace
from livemon.app.serve import pace_demo
from livemon.config import Config, EngineConfig
from livemon.io.feeds.replay import HOLD_STEP, ReplayFeed
from livemon.io.pool import EnginePool
from livemon.io.store import Store
from livemon.live.rules import needs_search
from livemon.live.messages import MoveEvent
from tests.conftest import REPO, real


class Sleeps:
    """A sleep that records each wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def fake_engine(tmp_path: Path) -> str:
    wrapper = tmp_path / "fake-engine"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {REPO / 'tests' / 'fake_uci.py'}\n")
    wrapper.chmod(0o755)
    return str(wrapper)


# -- the pacing rule -------------------------------------------------------------------------------


def test_demo_pace_is_a_share_of_the_engines_rate():
    assert demo_pace(0.8, 1) == pytest.approx(DEMO_SHARE / 0.8)
    assert demo_pace(0.8, 2) == pytest.approx(2 * demo_pace(0.8, 1))  # twice the engines, twice the moves
    assert 0 < DEMO_SHARE < 1  # never the whole measured rate: the engines stay ahead
    with pytest.raises(ValueError):
        demo_pace(0.0, 1)


async def test_the_bundled_replay_never_plays_faster_than_its_pace():
    """The schedule alone (speed 2, a second a ply) plays the four boards of a round in bursts of four plies at
    once; paced at 0.7 plies/s every wait is at least 1/0.7 s, so no stretch of plies runs faster than the pace."""
    rate = 0.7
    sleeps = Sleeps()
    path = bundled_replay().path
    feed = ReplayFeed("demo", path, speed=2.0, max_rate=rate, sleep=sleeps)
    moves = 0
    async for m in feed:
        if isinstance(m, MoveEvent):
            moves += 1
            if moves == 400:
                break
    assert sleeps.waits and min(sleeps.waits) == pytest.approx(1 / rate)
    assert len(sleeps.waits) >= moves - 1  # every ply waited for
    assert moves / sum(sleeps.waits) <= rate + 1e-9
    # the same replay unpaced: bursts (plies with no wait) and 8 plies a second over the round
    plain = Sleeps()
    unpaced = ReplayFeed("demo", path, speed=2.0, sleep=plain)
    n = 0
    async for m in unpaced:
        if isinstance(m, MoveEvent):
            n += 1
            if n == 400:
                break
    assert len(plain.waits) < n / 2 and n / sum(plain.waits) > 4 * rate


async def test_a_slow_schedule_is_kept_and_a_known_ply_is_not_waited_for(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Round "1"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n'
                   "1. e4 { [%emt 0:00:20] } e5 { [%emt 0:00:01] } 2. Nf3 1-0\n", encoding="utf-8")
    sleeps = Sleeps()
    feed = ReplayFeed("r", pgn, speed=1.0, max_delay=60, default_delay=3, max_rate=0.5, sleep=sleeps)
    [m async for m in feed]
    assert sleeps.waits == [20.0, 2.0, 3.0]  # the schedule when slower than the pace, else the pace
    again = Sleeps()
    resumed = ReplayFeed("r", pgn, speed=1.0, max_delay=60, default_delay=3, max_rate=0.5, sleep=again)
    resumed.resume({feed._load()[0][0][0].gid: 2})  # two plies stored before a restart
    [m async for m in resumed]
    assert again.waits == [3.0]


async def test_the_replay_holds_while_the_engines_are_behind(tmp_path):
    """A machine busier than when measured: while the oldest waiting position has waited ``hold_after`` seconds,
    the next ply waits (the engines catch up first)."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Round "1"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 e5 2. Nf3 1-0\n', encoding="utf-8")
    lags = iter([0.0, 25.0, 12.0, 10.0, 3.0, 0.0])  # the engines' lag as the replay asks before each ply
    sleeps = Sleeps()
    feed = ReplayFeed("r", pgn, speed=1.0, default_delay=1.0, max_rate=0.5, sleep=sleeps,
                      behind=lambda: next(lags), hold_after=10.0)
    [m async for m in feed]
    assert sleeps.waits == [2.0, HOLD_STEP, HOLD_STEP, HOLD_STEP, 2.0, 2.0]
    assert feed.held == 3 * HOLD_STEP


async def test_serve_paces_the_bundled_demo_from_a_measurement(tmp_path, fake_engine, monkeypatch):
    """``pace_demo`` measures the engine as ``livemon plan`` does (here a scripted engine that takes 0.05 s a
    search) and the monitor plays the bundled replay at that pace; with a feed configured nothing is paced."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.05")
    cfg = Config()
    cfg.engine.path = fake_engine
    cfg.store.path = str(tmp_path / "s.sqlite")
    cfg.web.enabled = False
    monitor = Monitor(cfg, store=Store(cfg.store.path))
    rate = await pace_demo(monitor, positions=4)
    assert rate is not None and monitor.demo_pace == rate
    assert DEMO_SHARE / 0.2 < rate < DEMO_SHARE / 0.05  # 0.05 s a search, and the engine's own overhead
    run = asyncio.create_task(monitor.run())
    for _ in range(200):
        if monitor.feeds:
            break
        await asyncio.sleep(0.05)
    monitor.stop()
    await run
    assert [getattr(f, "max_rate", None) for f in monitor.feeds] == [rate]
    assert monitor.feeds[0].behind() == monitor.pool.status().queue_lag_seconds  # type: ignore[attr-defined]

    configured = Config()
    configured.feeds = [bundled_replay()]
    assert await pace_demo(SimpleNamespace(cfg=configured)) is None  # type: ignore[arg-type]


@pytest.mark.slow
def test_serve_says_where_to_look_and_paces_the_demo(tmp_path, fake_engine):
    """``livemon serve`` with no feed: the start names the commentator's page, the overlay and the WebSocket (each
    answers), then the demo's pace from the measurement; Ctrl-C stops it cleanly."""
    import signal
    import subprocess
    import urllib.request

    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[engine]\npath = "{fake_engine}"\n[web]\nport = 0\n[store]\npath = "{tmp_path / "s.sqlite"}"\n'
                   "backup_minutes = 0\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FAKE_UCI_DELAY": "0.05"})
    try:
        assert proc.stdout is not None
        start = proc.stdout.readline()
        assert "start" in start and "the bundled replay" in start
        web = proc.stdout.readline()
        urls = re.findall(r"(commentator|overlay|websocket): ((?:http|ws)://\S+)", web)
        assert [k for k, _ in urls] == ["commentator", "overlay", "websocket"], web
        for kind, url in urls[:2]:
            with urllib.request.urlopen(url, timeout=10) as page:
                assert page.status == 200 and b"<html" in page.read().lower(), kind
        assert urls[2][1].endswith("/ws")
        demo = proc.stdout.readline()
        assert " demo " in demo and "moves/s" in demo, demo
        rate = float(re.search(r"at most ([\d.]+) moves/s", demo).group(1))  # type: ignore[union-attr]
        assert DEMO_SHARE / 0.2 < rate < DEMO_SHARE / 0.05
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err


# -- status: the pinned profile's rate, the engines' lag -----------------------------------------------------


def _boards(n: int) -> list[chess.Board]:
    with real("byrne_fischer_1956_pgnmentor.pgn").open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    board, out = game.board(), []
    for move in game.mainline_moves():
        board.push(move)
        if needs_search(board):
            out.append(board.copy(stack=False))
    return out[:n]


async def test_pool_counts_searches_at_the_pinned_profile_only(fake_engine, monkeypatch):
    """A quick eval-bar preview is a search, but not one of the figures': ``searches`` and ``mean_search_s``
    (the rate ``status`` and ``plan`` read) leave it out; ``preview_searches`` counts it."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.02")
    boards = _boards(12)
    cfg = EngineConfig(path=fake_engine, depth=10, min_depth=4, backlog_high=3, backlog_low=1, timeout=5.0)
    cfg.validate()
    async with EnginePool(cfg, Store(":memory:").analyses) as pool:
        submits = [asyncio.create_task(pool.submit(b)) for b in boards[:10]]
        await asyncio.sleep(0)
        preview = await pool.preview(boards[11])
        await asyncio.gather(*submits)
        status = pool.status()
    assert preview is not None and preview.profile == pool.quick_profile
    assert status.searches == 10 and status.preview_searches == 1 and status.previews == 1
    assert status.mean_search_s == pytest.approx(pool.counters.search_seconds / 10)


def _status(engine: dict, **top: object) -> dict:
    out = {"version": 2, "feeds": [], "engine": engine, "moves": 900, "games": 4, "unscored_plies": 300,
           "lag_seconds": 0.3, "duplicates": 0, "rollbacks": 0, "ttt_refreshes": 0, "updated": time.time()}
    out.update(top)
    return out


def test_status_shows_the_engines_lag_apart_from_the_feeds(capsys, tmp_path):
    from livemon.cli import main

    path = tmp_path / "s.sqlite"
    engine = {"profile": "SF depth=12", "engines": 1, "engines_alive": 1, "backlog": 282, "queue_lag_seconds": 386.0,
              "searches": 500, "cache_hits": 3, "restarts": 0, "failures": 0, "mean_search_s": 0.8,
              "previews": 120, "preview_searches": 95, "quick_profile": "SF depth=6"}
    with Store(path) as store:
        store.status.put(_status(engine, engine_lag_seconds=386.0, feed_lag_seconds=0.3))
    assert main(["status", "--store", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    engine_line = next(x for x in out if x.startswith("engine"))
    assert "lag 386.0s (the oldest of 282 positions waiting)" in engine_line and "searches 500" in engine_line
    assert next(x for x in out if x.startswith("feeds")) == "feeds   last message 0.3s ago"
    assert "95 quick searches at SF depth=6" in next(x for x in out if x.startswith("preview"))
    # the rate: 1 engine / 0.8 s of a pinned search = 1.25/s, 56 boards at a move each 45 s (not the previews')
    budget = next(x for x in out if x.startswith("budget"))
    assert "1.2 positions/s measured at SF depth=12 (800 ms a search, 1 engines): 56 boards followable" in budget


def test_status_of_an_older_monitor_reads_its_queue_lag(capsys, tmp_path):
    from livemon.cli import main

    path = tmp_path / "s.sqlite"
    engine = {"profile": "SF depth=12", "engines": 1, "engines_alive": 1, "backlog": 5, "queue_lag_seconds": 12.5,
              "searches": 10, "cache_hits": 0, "restarts": 0, "failures": 0, "mean_search_s": None}
    with Store(path) as store:
        store.status.put(_status(engine))
    assert main(["status", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "lag 12.5s (the oldest of 5 positions waiting)" in out and "feeds   " not in out and "Traceback" not in out


def test_the_screens_status_line_shows_the_engines_lag():
    from livemon.faces.tui.widgets import status_text
    from livemon.live.messages import MonitorStatus

    line = status_text(MonitorStatus(backlog=282, engine_profile="SF d12", engines=1, lag_seconds=0.3,
                                     engine_lag_seconds=386.4))
    assert "backlog 282, lag 386 s" in line and "0.3" not in line  # the engines', not the feed's
