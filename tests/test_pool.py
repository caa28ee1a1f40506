"""The live engine pool: dedup, cache, crash/hang recovery, priority, one pinned profile with quick previews, shutdown.

Most tests drive real engine processes of tests/fake_uci.py (the real UCI
protocol over pipes, scripted behaviours); the last one uses the real Stockfish.
Searches are counted from the fake engine's own log, not from the pool's counters.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
import pytest

from livemon.live.rules import needs_search
from livemon.config import EngineConfig
from livemon.io.engine import EngineError, UciEngine, position_key
from livemon.io.pool import EnginePool
from livemon.io.store import Store
from tests.conftest import REPO, real


@dataclass
class Fake:
    """The fake engine as a pool sees it: a path, and its search log."""

    path: str
    log: Path
    tmp: Path

    def searches(self) -> list[tuple[int, str, int, str]]:
        """(pid, "depth"|"nodes", value, EPD) per search started, in order."""
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            pid, _, kind, value, fen = line.split(" ", 4)
            out.append((int(pid), kind, int(value), chess.Board(fen).epd()))
        return out

    def cfg(self, **kw: object) -> EngineConfig:
        base: dict[str, object] = {"path": self.path, "depth": 10, "processes": 1, "timeout": 5.0}
        base.update(kw)
        cfg = EngineConfig(**base)  # type: ignore[arg-type]
        cfg.validate()
        return cfg


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    wrapper = tmp_path / "fake-engine"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {REPO / 'tests' / 'fake_uci.py'}\n")
    wrapper.chmod(0o755)
    log = tmp_path / "searches.log"
    monkeypatch.setenv("FAKE_UCI_LOG", str(log))
    return Fake(str(wrapper), log, tmp_path)


def game_boards(name: str = "byrne_fischer_1956_pgnmentor.pgn") -> list[chess.Board]:
    """Every searchable position of a real game, in game order."""
    with real(name).open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    board, boards = game.board(), []
    for move in game.mainline_moves():
        board.push(move)
        if needs_search(board):
            boards.append(board.copy(stack=False))
    return boards


async def wait_for_searches(fake: Fake, n: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while len(fake.searches()) < n:
        assert time.monotonic() < deadline, f"fewer than {n} searches started"
        await asyncio.sleep(0.005)


def is_gone(pid: int) -> bool:
    """True when the process has exited and been reaped (no zombie left)."""
    return not Path(f"/proc/{pid}").exists()  # a zombie keeps its /proc entry until reaped


async def test_concurrent_duplicate_requests_share_one_search(fake, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.05")
    boards = game_boards()[:10]
    requests = boards * 4
    random.Random(1).shuffle(requests)
    async with EnginePool(fake.cfg(processes=2), Store(":memory:").analyses) as pool:
        results = await asyncio.gather(*(pool.submit(b) for b in requests))
        status = pool.status()
    searched = [epd for _, _, _, epd in fake.searches()]
    assert sorted(searched) == sorted(position_key(b) for b in boards)  # each exactly once
    assert status.searches == 10 and status.joined == 30 and status.cache_hits == 0
    by_key: dict[str, set] = {}
    for board, result in zip(requests, results):
        assert result.key == position_key(board)
        by_key.setdefault(result.key, set()).add(result.analysis)
    assert all(len(answers) == 1 for answers in by_key.values())  # everyone got the same answer


async def test_cache_hits_cost_no_search(fake):
    boards = game_boards()[:8]
    store = Store(fake.tmp / "cache.sqlite")
    async with EnginePool(fake.cfg(), store.analyses) as pool:
        first = [await pool.submit(b) for b in boards]
        again = await pool.submit(boards[0])  # same pool, later: a cache hit
        assert again.cached and again.analysis == first[0].analysis
    assert len(fake.searches()) == 8
    async with EnginePool(fake.cfg(processes=2), store.analyses) as pool:  # new engines, same store
        second = await asyncio.gather(*(pool.submit(b) for b in boards))
        status = pool.status()
    assert len(fake.searches()) == 8  # not one more search
    assert status.cache_hits == 8 and status.searches == 0
    assert all(s.cached for s in second) and not any(f.cached for f in first)
    assert [s.analysis for s in second] == [f.analysis for f in first]
    assert {s.profile for s in second} == {first[0].profile}


async def test_answer_now_takes_a_cached_position_at_once_and_never_a_search_in_flight(fake, monkeypatch):
    """A cached position needs no task; one being searched is joined through submit, not searched twice."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.2")
    boards = game_boards()[:2]
    async with EnginePool(fake.cfg(), Store(":memory:").analyses) as pool:
        assert pool.answer_now(boards[0]) is None  # not in the cache: the caller submits it
        first = await pool.submit(boards[0])
        hit = pool.answer_now(boards[0])
        assert hit is not None and hit.cached and (hit.analysis, hit.profile) == (first.analysis, first.profile)
        flying = asyncio.ensure_future(pool.submit(boards[1]))
        await wait_for_searches(fake, 2)
        assert pool.answer_now(boards[1]) is None  # being searched: not answered, not searched again
        assert pool.lookup(boards[1]) is None  # the live core's cache: a miss, so its request joins the search
        await flying
        assert pool.answer_now(boards[1]) is not None
        assert pool.lookup(boards[0]) == (first.analysis, first.profile.name)
        status = pool.status()
    assert len(fake.searches()) == 2 and status.searches == 2 and status.cache_hits == 3


async def test_killed_engines_are_restarted_and_no_position_is_lost(fake, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.15")
    boards = game_boards()[:30]
    killed_pids: list[int] = []
    killed_fens: set[str] = set()

    async def killer() -> None:
        """Kill the engine of every third new search (each position at most once: retries are bounded)."""
        seen, eligible = 0, 0
        while len(killed_pids) < 8:
            searches = fake.searches()
            for pid, _, _, epd in searches[seen:]:
                if epd in killed_fens or pid in killed_pids:
                    continue
                eligible += 1
                if eligible % 3 == 1 and len(killed_pids) < 8:
                    os.kill(pid, signal.SIGKILL)  # mid-search: the search lasts 0.15 s
                    killed_pids.append(pid)
                    killed_fens.add(epd)
            seen = len(searches)
            await asyncio.sleep(0.005)

    async with EnginePool(fake.cfg(processes=2, retries=2), Store(":memory:").analyses) as pool:
        kill_task = asyncio.create_task(killer())
        results = await asyncio.gather(*(pool.submit(b) for b in boards))
        await asyncio.wait_for(kill_task, 1)
        status = pool.status()
        alive = pool.engine_pids()
    assert len(killed_pids) == 8 == len(set(killed_pids))
    assert [r.key for r in results] == [position_key(b) for b in boards]  # 0 lost
    assert status.failures == 0 and status.retries == 8 and status.restarts == 8
    assert status.searches == 30
    searched = [epd for _, _, _, epd in fake.searches()]
    assert all(searched.count(epd) == 2 for epd in killed_fens)  # each killed search was retried
    assert len(searched) == 38
    assert not set(alive) & set(killed_pids)
    assert all(is_gone(pid) for pid in killed_pids)


async def test_engine_crashing_every_third_search_loses_nothing(fake, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_CRASH_EVERY", "3")
    boards = game_boards()[:20]
    async with EnginePool(fake.cfg(processes=2), Store(":memory:").analyses) as pool:
        results = await asyncio.gather(*(pool.submit(b) for b in boards))
        status = pool.status()
    assert [r.key for r in results] == [position_key(b) for b in boards]
    # every engine process answers 2 searches then dies on its 3rd: 20 answers need 10+ processes
    assert status.failures == 0 and status.searches == 20 and status.restarts >= 8


async def test_hung_engine_times_out_and_is_replaced(fake, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_HANG_ONCE", str(fake.tmp / "hung-once"))
    boards = game_boards()[:3]
    async with EnginePool(fake.cfg(timeout=0.5), Store(":memory:").analyses) as pool:
        hung_pid = pool.engine_pids()[0]
        started = time.monotonic()
        results = [await pool.submit(b) for b in boards]
        elapsed = time.monotonic() - started
        status = pool.status()
        assert pool.engine_pids() != [hung_pid]
    assert [r.key for r in results] == [position_key(b) for b in boards]
    assert status.restarts == 1 and status.retries == 1 and status.failures == 0
    searched = fake.searches()
    assert searched[0][0] == hung_pid and searched[0][3] == searched[1][3] == position_key(boards[0])
    assert searched[1][0] != hung_pid
    assert 0.5 <= elapsed < 3.0
    assert is_gone(hung_pid)


async def test_position_that_always_fails_gives_engine_error_and_the_pool_goes_on(fake, monkeypatch, caplog):
    bad, good = game_boards()[:2]
    monkeypatch.setenv("FAKE_UCI_HANG_FEN", bad.fen().rsplit(" ", 2)[0])
    caplog.set_level(logging.WARNING, logger="livemon.io.pool")
    async with EnginePool(fake.cfg(timeout=0.3, retries=1), Store(":memory:").analyses) as pool:
        with pytest.raises(EngineError, match="timed out"):
            await pool.submit(bad)
        result = await pool.submit(good)
        status = pool.status()
    assert result.key == position_key(good) and not result.cached
    assert [epd for _, _, _, epd in fake.searches()].count(position_key(bad)) == 2  # 1 try + 1 retry
    assert status.failures == 1 and status.searches == 1
    assert any(r.levelname == "ERROR" and "gave up" in r.getMessage() for r in caplog.records)


async def test_newest_positions_first_and_caller_priorities(fake, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.1")
    a, b, c, d, x, y, z = game_boards()[:7]
    async with EnginePool(fake.cfg(), Store(":memory:").analyses) as pool:
        first = asyncio.create_task(pool.submit(a))
        await wait_for_searches(fake, 1)  # the engine is busy with a
        tasks = [asyncio.create_task(pool.submit(p)) for p in (b, c, d)]
        await asyncio.gather(first, *tasks)
        order = [epd for _, _, _, epd in fake.searches()]
        assert order == [position_key(p) for p in (a, d, c, b)]  # newest first

        assert (await pool.submit(b.copy())).cached  # done now: from the cache, no search
        first = asyncio.create_task(pool.submit(game_boards()[10]))
        await wait_for_searches(fake, 5)
        tasks = [asyncio.create_task(pool.submit(p, priority=pr)) for p, pr in ((x, 5), (y, 1), (z, 3))]
        await asyncio.sleep(0.01)
        tasks.append(asyncio.create_task(pool.submit(x, priority=0)))  # a more urgent duplicate moves x up
        await asyncio.gather(first, *tasks)
        status = pool.status()
    order = [epd for _, _, _, epd in fake.searches()][5:]
    assert order == [position_key(p) for p in (x, y, z)]
    assert status.joined == 1 and status.searches == 8


@pytest.mark.parametrize(
    "limit, quick",
    [({"depth": 10, "min_depth": 4}, 4), ({"depth": None, "nodes": 80000, "min_nodes": 20000}, 20000)],
)
async def test_backlog_queues_at_the_pinned_limit_and_previews_only_at_the_quick_one(fake, monkeypatch, limit, quick):
    """A backlog never lowers an estimate's limit; a quick preview is its own profile, never an answer to submit."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.02")
    boards = game_boards()[:12]
    kind = "depth" if limit.get("depth") else "nodes"
    store = Store(":memory:")
    cfg = fake.cfg(backlog_high=3, backlog_low=1, **limit)
    async with EnginePool(cfg, store.analyses) as pool:
        base, quick_profile = pool.base_profile, pool.quick_profile
        assert quick_profile is not None and getattr(quick_profile, kind) == quick
        assert await pool.preview(boards[0]) is None  # calm pool: no preview search
        submits = [asyncio.create_task(pool.submit(b)) for b in boards[:10]]
        await asyncio.sleep(0)
        assert pool.status().backlog > cfg.backlog_high
        preview = await pool.preview(boards[11])  # backlogged: the newest position, searched first, quick
        backlog_then = pool.status()
        results = await asyncio.gather(*submits)
        assert preview is not None and preview.profile == quick_profile and not preview.cached
        assert backlog_then.previews == 1 and backlog_then.queue_lag_seconds > 0
        assert {r.profile for r in results} == {base}  # every estimate request at the pinned limit
        logged = [(k, value, epd) for _, k, value, epd in fake.searches()]
        for r in results:
            assert (kind, getattr(base, kind), r.key) in logged
            assert store.analyses.get(r.key, base.name) == r.analysis
        # the preview was searched at the quick limit and cached under the quick profile's own name only
        assert (kind, quick, position_key(boards[11])) in logged
        assert store.analyses.get(position_key(boards[11]), quick_profile.name) == preview.analysis
        assert store.analyses.get(position_key(boards[11]), base.name) is None
        # a position previewed is still searched at the pinned limit when an estimate needs it
        again = await pool.submit(boards[11])
        assert again.profile == base and not again.cached
        assert await pool.preview(boards[11]) is None  # the backlog cleared: no more previews
        assert pool.status().backlog == 0 and pool.status().queue_lag_seconds == 0


async def test_close_leaves_no_child_processes(fake, monkeypatch):
    boards = game_boards()[:4]
    monkeypatch.setenv("FAKE_UCI_HANG_FEN", boards[3].fen().rsplit(" ", 2)[0])
    pool = EnginePool(fake.cfg(processes=2, timeout=30), Store(":memory:").analyses)
    await pool.start()
    pids = set(pool.engine_pids())
    await asyncio.gather(*(pool.submit(b) for b in boards[:3]))
    hung = asyncio.create_task(pool.submit(boards[3]))  # an engine hangs on it: close must not wait for it
    await wait_for_searches(fake, 4)
    started = time.monotonic()
    await pool.close()
    assert time.monotonic() - started < 3.0
    with pytest.raises(EngineError, match="closed"):
        await hung
    assert len(pids) == 2 and all(is_gone(pid) for pid in pids)
    children = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        children |= {int(p) for p in (task / "children").read_text().split()}
    assert not children & pids
    assert pool.status().engines_alive == 0
    with pytest.raises(EngineError):
        await pool.submit(boards[0])


async def test_an_engine_killed_before_its_search_began_leaves_no_task_and_no_unseen_error(fake, monkeypatch):
    """Killed between ``ucinewgame``'s ``isready`` and ``go`` (python-chess 1.11 then fails the analysis but
    never its command, so the search task waited forever and asyncio logged "Future exception was never
    retrieved" at exit): the search task ends, and no outcome is left unseen."""
    monkeypatch.setenv("FAKE_UCI_HANG_NEWGAME", "1")
    loop = asyncio.get_running_loop()
    unseen: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: unseen.append(context))
    engine = await UciEngine.open(fake.cfg(timeout=0.3))
    pid = engine.pid
    with pytest.raises(EngineError, match="timed out"):
        await engine.analyse(game_boards()[0])
    await asyncio.sleep(0.05)
    searches = [t for t in asyncio.all_tasks() if t.get_coro().__qualname__.endswith("Protocol.analyse")]
    assert searches == []
    gc.collect()
    await asyncio.sleep(0)
    assert unseen == [] and is_gone(pid)


async def test_real_stockfish_one_search_per_distinct_position(stockfish, tmp_path, monkeypatch):
    boards = game_boards("wcc2023_nepo_ding_g1_pythonchess.pgn")
    requests = boards + boards[::-1]  # every position asked twice, concurrently
    searched: list[str] = []
    real_analyse = UciEngine.analyse

    async def counting(self, board, profile=None):
        searched.append(position_key(board))
        return await real_analyse(self, board, profile)

    monkeypatch.setattr(UciEngine, "analyse", counting)
    store = Store(tmp_path / "cache.sqlite")
    cfg = EngineConfig(path=stockfish, depth=6, processes=2)
    async with EnginePool(cfg, store.analyses) as pool:
        results = await asyncio.gather(*(pool.submit(b) for b in requests))
        status = pool.status()
    distinct = {position_key(b) for b in boards}
    assert len(searched) == len(set(searched)) == len(distinct)  # <= 1 search per distinct position
    assert status.searches == len(distinct) and status.engines_alive == 2
    assert {r.profile.name for r in results} == {"Stockfish 15.1 depth=6 multipv=4"}
    assert all(r.analysis.depth >= 6 and 1 <= len(r.analysis.candidates) <= 4 for r in results)
    first = {r.key: r.analysis for r in results[: len(boards)]}
    assert all(first[r.key] == r.analysis for r in results[len(boards) :])
    assert store.analyses.count("Stockfish 15.1 depth=6 multipv=4") == len(distinct)
    async with EnginePool(cfg, store.analyses) as pool:  # again: all from the cache
        again = await asyncio.gather(*(pool.submit(b) for b in boards))
    assert len(searched) == len(distinct) and all(r.cached for r in again)


async def test_real_stockfish_analyses_a_chess960_position_in_chess960_mode(stockfish, tmp_path):
    """The engine is told UCI_Chess960; its castling candidates are legal king-takes-rook moves."""
    from livemon.live.values import board_from_fen

    board = board_from_fen("1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w KQkq - 0 1")
    assert board.chess960
    cfg = EngineConfig(path=stockfish, depth=6, multipv=20, processes=1)
    async with EnginePool(cfg, Store(tmp_path / "s.sqlite").analyses) as pool:
        answer = await pool.submit(board)
    moves = [chess.Move.from_uci(m) for m, _ in answer.analysis.candidates]
    assert all(board.is_legal(m) for m in moves)
    assert chess.Move.from_uci("g1h1") in moves  # O-O, searched as Chess960 castling
