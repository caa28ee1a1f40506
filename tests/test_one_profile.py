"""One profile per number: the monitor under a backlog, and across a restart.

The engines are tests/fake_uci.py processes (the real UCI protocol over pipes)
whose scores depend on the search limit (``FAKE_UCI_DEPTH_SCORES``), so a
quick preview that leaked into an estimate would change the gains; the games
are real (London Chess Classic 2011), replayed through the real feed, store and
engine pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import Counter
from pathlib import Path

import chess
import pytest

from livemon.app.export import rebuild_core
from livemon.faces.web import codec
from livemon.app.monitor import Monitor
from livemon.config import Config, EngineConfig, ReplayFeedConfig
from livemon.io.store import Store
from livemon.live.core import LiveCore
from livemon.live.pgn import split_games
from tests.conftest import real, write_fake_engine


@pytest.fixture
def event(tmp_path: Path) -> Path:
    """Four real games of round 1 and 2 of the London Chess Classic 2011."""
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:4]
    path = tmp_path / "london4.pgn"
    path.write_text("\n".join(chunks))
    return path


def config(tmp_path: Path, pgn: Path) -> Config:
    cfg = Config()
    cfg.engine = EngineConfig(path=write_fake_engine(tmp_path), depth=10, min_depth=4, backlog_high=3, backlog_low=1,
                              processes=1, timeout=10.0)
    cfg.store.path = str(tmp_path / "live.sqlite")
    cfg.feeds = [ReplayFeedConfig(name="replay", path=str(pgn), speed=0.0)]
    cfg.monitor.status_seconds = 0.2
    cfg.monitor.ttt_debounce_seconds = 0.1
    return cfg


def searches(log: Path) -> list[tuple[str, str]]:
    """(limit, EPD) of every search the fake engines started, in order."""
    out = []
    for line in log.read_text().splitlines() if log.exists() else []:
        _, _, kind, value, fen = line.split(" ", 4)
        out.append((f"{kind}={value}", chess.Board(fen).epd()))
    return out


def cached(store_path: str) -> set[tuple[str, str]]:
    """(limit, EPD) of every analysis in the store."""
    with Store(store_path) as s:
        rows = s.engine.db.execute("SELECT profile, position FROM analyses").fetchall()
    return {(profile.split(" ")[-2], position) for profile, position in rows}


def scores(store_path: str, limit: str) -> dict[str, int]:
    """EPD -> score of the stored analyses at ``limit``."""
    with Store(store_path) as s:
        rows = s.engine.db.execute("SELECT profile, position, score FROM analyses").fetchall()
    return {position: score for profile, position, score in rows if profile.split(" ")[-2] == limit}


@pytest.fixture
def engine_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "searches.log"
    monkeypatch.setenv("FAKE_UCI_LOG", str(log))
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.01")
    monkeypatch.setenv("FAKE_UCI_DEPTH_SCORES", "1")
    return log


async def test_under_backlog_previews_feed_only_the_eval_bar(tmp_path, event, engine_env):
    cfg = config(tmp_path, event)
    monitor = Monitor(cfg)
    boards = monitor.hub.subscribe(["games"], maxsize=1_000_000)
    await monitor.run(until_feeds_end=True)
    status = monitor.pool.status()
    done = searches(engine_env)
    limits = Counter(limit for limit, _ in done)
    # the backlog was real: the quick profile searched, as previews, ahead of the queue
    assert status.previews > 0 and limits["depth=4"] > 0 and limits["depth=10"] > 0
    assert status.profile == "FakeUCI 1.0 depth=10 multipv=4" and status.quick_profile == "FakeUCI 1.0 depth=4 multipv=4"
    # and the eval bar showed a quick value at least once before the pinned one replaced it
    quick_score, full_score = scores(cfg.store.path, "depth=4"), scores(cfg.store.path, "depth=10")
    previewed = 0
    while not boards.queue.empty():
        _, b = boards.queue.get_nowait()
        epd = chess.Board(b.fen).epd()
        if b.evals and b.evals[-1] is not None and b.evals[-1] == quick_score.get(epd) != full_score.get(epd):
            previewed += 1
    assert previewed > 0
    # no analysis of the quick profile reached the estimator: the live estimates equal those
    # rebuilt from the store under the pinned profile alone (depth-dependent scores: a mix would differ)
    assert monitor.counters.foreign_profile == 0 and monitor.counters.failed_positions == 0
    plies = sum(g.plies for g in monitor.games.values())
    assert sum(len(g.plies) for g in monitor.estimator.games.values()) == plies > 200
    with Store(cfg.store.path) as store:
        pinned = rebuild_core(store, cfg, status.profile or "")
    assert pinned.estimator.report() == monitor.estimator.report()
    timer = ("perceived_elo", "perceived_elo_range", "event_perceived_elo", "ttt_mu", "ttt_sigma")  # the monitor's timer

    def figures(core: LiveCore) -> list[dict]:
        return [{k: v for k, v in codec.report_entry(p).items() if k not in timer} for p in core.player_estimates()]
    assert figures(pinned) == figures(monitor.core)
    assert quick_score  # quick analyses were stored, under their own profile (a restart reuses them)


async def test_a_restart_repeats_no_search_for_any_profile(tmp_path, event, engine_env):
    cfg = config(tmp_path, event)
    first = Monitor(cfg)
    run = asyncio.create_task(first.run())
    while len(searches(engine_env)) < 60:
        await asyncio.sleep(0.02)
    first.stop()
    await run
    first.store.close()
    before = cached(cfg.store.path)
    n_before = len(searches(engine_env))
    assert before and any(limit == "depth=4" for limit, _ in before)  # both profiles in the cache
    second = Monitor(cfg)
    await second.run(until_feeds_end=True)
    second.store.close()
    again = searches(engine_env)[n_before:]
    # the restarted monitor searched only what the first had not analysed, under either profile
    assert again and not set(again) & before
    assert second.pool.status().cache_hits >= len([k for k in before if k[0] == "depth=10"]) - 2
    assert second.counters.foreign_profile == 0
    plies = sum(g.plies for g in second.games.values())
    assert sum(len(g.plies) for g in second.estimator.games.values()) == plies


async def test_a_backlog_that_outlasts_the_warning_lag_is_said_once(tmp_path, event, engine_env, monkeypatch, caplog):
    import livemon.app.monitor as monitor_module

    monkeypatch.setenv("FAKE_UCI_DELAY", "0.2")
    monkeypatch.setattr(monitor_module, "LAG_WARNING", 0.3)
    cfg = config(tmp_path, event)
    monitor = Monitor(cfg)
    await monitor.pool.start()
    try:
        boards = [chess.Board()]
        for uci in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"):
            boards.append(boards[-1].copy())
            boards[-1].push_uci(uci)
        tasks = [asyncio.create_task(monitor.pool.submit(b)) for b in boards]
        assert monitor._warn_if_behind(False) is False  # nothing has waited yet
        await asyncio.sleep(0.5)
        with caplog.at_level("WARNING"):
            assert monitor._warn_if_behind(False) is True
            assert monitor._warn_if_behind(True) is True  # still behind: no second line
        lines = [r.getMessage() for r in caplog.records if "engine backlog" in r.getMessage()]
        assert len(lines) == 1 and "do not keep up" in lines[0] and "depth=10" in lines[0]
        await asyncio.gather(*tasks)
        assert monitor._warn_if_behind(True) is False  # caught up: re-armed
    finally:
        await monitor.close()
        monitor.store.close()


async def test_cached_positions_are_scored_within_handle_and_a_turns_writes_are_one_commit(tmp_path, event, engine_env):
    """A position the cache holds is answered in the same ``handle`` (no task, no loop turn), and the
    moves of a loop turn are stored in one transaction, committed first thing in the next turn."""
    import dataclasses

    from livemon.io.feeds import open_feed
    from livemon.live.messages import GameInfo, GameResult, MoveEvent

    cfg = config(tmp_path, event)
    cfg.engine.backlog_high = 10**6  # no previews: only the pinned profile
    first = Monitor(cfg)
    await first.run(until_feeds_end=True)  # fills the cache
    first.store.close()
    searched = len(searches(engine_env))
    msgs = [m async for m in open_feed(cfg.feeds[0])]
    again = [dataclasses.replace(m, game_id=f"{m.game_id}#2") if isinstance(m, (GameInfo, MoveEvent, GameResult))
             else m for m in msgs]
    monitor = Monitor(cfg)  # same store, not run: no resume, the copies are new games
    await monitor.pool.start()
    try:
        monitor._pin_profile()
        moves = 0
        for m in again:
            monitor.handle(m)
            if isinstance(m, MoveEvent):
                moves += 1
                assert m.ply in monitor.estimator.games[m.game_id].plies  # scored before handle returned
        # not one task per position: at most the one task that steps the runner
        assert moves > 200 and [t.get_name() for t in monitor._tasks] in ([], ["runner"]) and not monitor.engine.tasks
        assert monitor.store.engine.db.in_transaction  # every move of this turn in one open transaction...
        assert stored_copies(cfg.store.path) == 0
        await asyncio.sleep(0)
        assert not monitor.store.engine.db.in_transaction  # ...committed at the next turn
        assert stored_copies(cfg.store.path) == moves
        assert monitor.pool.status().cache_hits >= moves and len(searches(engine_env)) == searched
    finally:
        await monitor.close()
        monitor.store.close()


def stored_copies(path: str) -> int:
    """Moves of the ``#2`` games another connection sees (a plain reader: opening a Store writes its schema)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute("SELECT COUNT(*) FROM moves WHERE game_id LIKE '%#2'").fetchone()[0])


async def test_engine_answers_are_applied_in_slices_with_the_loop_running_between(tmp_path, monkeypatch):
    """A burst of answers (a bus delivers them in batches) is applied TURN_BUDGET seconds a loop turn
    (a budget all the monitor's tasks share), in arrival order, with the event loop (faces, timers, feeds)
    running between the slices."""
    from livemon.live.effects import Analyse
    from livemon.live.runner import Answered

    cfg = Config()
    cfg.store.path = str(tmp_path / "s.sqlite")
    monitor = Monitor(cfg)
    applied: list[int] = []

    def slow(request, analysis, profile=None, error=None):  # 2 ms of scoring per answer
        t = time.perf_counter()
        while time.perf_counter() - t < 0.002:
            pass
        applied.append(request.index)
        return []

    monkeypatch.setattr(monitor.core, "analysed", slow)
    seen: set[int] = set()

    async def ticker() -> None:
        while True:
            seen.add(len(applied))
            await asyncio.sleep(0)

    tick = asyncio.create_task(ticker())
    try:
        for i in range(50):  # 100 ms of answers at once
            monitor.runner.put(Answered(Analyse("g", i, chess.Board(), 0.0), None, error="no engine"))
        await monitor.drain()
    finally:
        tick.cancel()
        monitor.store.close()
    assert applied == list(range(50))  # every answer, in arrival order
    assert len(seen & set(range(1, 50))) >= 3  # and the loop ran in the middle of them, not only before and after
