"""A hostile or broken engine: bad answers refused and searched again, deaths noticed by the process, stderr capped.

Every test drives real engine processes of tests/fake_uci.py (the real UCI protocol over pipes) behind the real
:class:`~livemon.io.pool.EnginePool`; the bad behaviours are the fake engine's ``FAKE_UCI_*`` switches. The
timeouts are long (30 s) on purpose: each fault must be noticed by what the engine sent or by its process, not
by the search timeout.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path

import chess
import pytest

from livemon.config import EngineConfig
from livemon.errors import FAULTS
from livemon.io.engine import STDERR_LINE_CHARS, STDERR_LINES, EngineError, UciEngine, analysis_board, position_key, score_cp
from livemon.io.pool import EnginePool
from livemon.io.store import Store
from tests.conftest import REPO, real
from tests.test_faults import write_config
from tests.test_pool import game_boards


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    wrapper = tmp_path / "fake-engine"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {REPO / 'tests' / 'fake_uci.py'}\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("FAKE_UCI_LOG", str(tmp_path / "searches.log"))
    return str(wrapper)


def searches(tmp_path: Path) -> list[tuple[int, str]]:
    """(pid, EPD) of every search the fake engines started."""
    log = tmp_path / "searches.log"
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        pid, _, _, _, fen = line.split(" ", 4)
        out.append((int(pid), chess.Board(fen).epd()))
    return out


def cfg(path: str, **kw: object) -> EngineConfig:
    base: dict[str, object] = {"path": path, "depth": 6, "processes": 1, "timeout": 30.0, "retries": 2}
    base.update(kw)
    c = EngineConfig(**base)  # type: ignore[arg-type]
    c.validate()
    return c


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert "Traceback" not in record.getMessage() and "exception" not in record.getMessage().lower()


async def honest(path: str, boards: list[chess.Board]) -> list:
    """What the fake engine answers when it behaves (its scores depend on the position alone)."""
    async with EnginePool(cfg(path), Store(":memory:").analyses) as pool:
        return [(await pool.submit(b)).analysis for b in boards]


BAD_ANSWERS = {
    "illegal bestmove": {"FAKE_UCI_BESTMOVE": "a1a8"},
    "illegal pv move": {"FAKE_UCI_PV": "e2e5"},
    "cp 999999999999": {"FAKE_UCI_SCORE": "cp 999999999999"},
    "cp -2^70": {"FAKE_UCI_SCORE": f"cp {-2**70}"},
    "mate 0": {"FAKE_UCI_SCORE": "mate 0"},
    "cp nan": {"FAKE_UCI_SCORE": "cp nan"},
    "cp 1e400": {"FAKE_UCI_SCORE": "cp 1e400"},
    "cp of 5,000 digits": {"FAKE_UCI_SCORE": "cp " + "9" * 5000},  # past Python's int-from-text limit
}


@pytest.mark.parametrize("kind", list(BAD_ANSWERS))
async def test_a_bad_answer_is_refused_with_one_line_and_the_position_searched_again(engine, tmp_path, monkeypatch,
                                                                                     caplog, kind):
    boards = game_boards()[:3]
    expected = await honest(engine, boards)
    (tmp_path / "searches.log").unlink()
    for key, value in BAD_ANSWERS[kind].items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("FAKE_UCI_BAD_ONCE", str(tmp_path / "bad-once"))  # the first search lies, later ones do not
    caplog.set_level(logging.INFO)
    before = FAULTS.snapshot().get("engine.refused", 0)
    started = time.monotonic()
    async with EnginePool(cfg(engine), Store(":memory:").analyses) as pool:
        results = [(await pool.submit(b)).analysis for b in boards]
        status = pool.status()
    elapsed = time.monotonic() - started
    assert results == expected  # nothing of the lie was used: the honest analysis of every position
    assert [epd for _, epd in searches(tmp_path)] == [position_key(boards[0])] * 2 + [position_key(b) for b in boards[1:]]
    assert status.retries == 1 and status.failures == 0
    assert elapsed < 5  # refused on sight, not after the 30 s timeout
    refusals = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].levelno == logging.WARNING, [r.getMessage() for r in caplog.records]
    assert FAULTS.snapshot().get("engine.refused", 0) == before + 1
    no_tracebacks(caplog)


async def test_a_search_is_read_from_its_last_lines_alone(engine, monkeypatch, caplog):
    """An engine deepens: a depth-12 MultiPV-4 search sends ~48 lines, ~0.8 ms each to check and read on the event
    loop. Only the last line of each MultiPV line and the lines without a pv reach python-chess, checked, and
    python-chess reads no pv (each line's first move is taken from the line checked); the answer is the one the
    last lines give, and a lie in a line that a later one replaced is never used."""
    boards = game_boards()[:4]
    expected = await honest(engine, boards)
    read: list[str] = []
    original = chess.engine._parse_uci_info

    def counting(arg: str, root_board: chess.Board, selector: chess.engine.Info = chess.engine.INFO_ALL) -> dict:
        read.append(arg)
        assert not selector & chess.engine.INFO_PV  # the first moves are taken from the lines checked: no pv read
        return original(arg, root_board, selector)

    monkeypatch.setattr(chess.engine, "_parse_uci_info", counting)
    monkeypatch.setenv("FAKE_UCI_ITERATIONS", "5")
    assert await honest(engine, boards) == expected
    lines = sum(min(cfg(engine).multipv, b.legal_moves.count()) for b in boards)
    with_pv = [a for a in read if " pv " in a]
    assert len(with_pv) == lines and all(a.startswith("depth 6 ") for a in with_pv), with_pv[:8]  # not 6 x lines
    assert sum(" currmove " in f" {a}" for a in read) == 5 * len(boards)  # lines without a pv: as they come
    read.clear()
    for lie in ({"FAKE_UCI_PV": "e2e5"}, {"FAKE_UCI_SCORE": "cp 999999999999"}):
        with monkeypatch.context() as m:
            for key, value in {**lie, "FAKE_UCI_LIE_EARLY": "1"}.items():
                m.setenv(key, value)
            before = FAULTS.snapshot().get("engine.refused", 0)
            assert await honest(engine, boards) == expected, lie  # the lies were all replaced: nothing refused
            assert FAULTS.snapshot().get("engine.refused", 0) == before
    assert not any("e2e5" in a or "999999999999" in a for a in read)
    no_tracebacks(caplog)


async def test_stockfish_read_from_its_last_lines_answers_as_python_chess_reading_every_line(stockfish):
    """The real Stockfish, depth 10, MultiPV 4, one thread, a new game before each search of a position without
    its history (so each search is deterministic): the analysis read from each line's last report equals
    python-chess's own, which read all."""
    config = EngineConfig(path=stockfish, depth=10, multipv=4, threads=1, hash_mb=16)
    boards = game_boards()[8:40:4]
    ours = await UciEngine.open(config)
    try:
        got = [await ours.analyse(b) for b in boards]
    finally:
        await ours.close()
    _, plain = await chess.engine.popen_uci(stockfish)
    try:
        await plain.configure({"Threads": 1, "Hash": 16})
        for board, analysis in zip(boards, got):
            infos = await plain.analyse(analysis_board(board), chess.engine.Limit(depth=10), multipv=4, game=object())
            want = [(i["pv"][0].uci(), score_cp(i["score"].white())) for i in infos if i.get("pv")]
            assert list(analysis.candidates) == want, board.fen()
            assert (analysis.depth, analysis.nodes) == (infos[0]["depth"], infos[0]["nodes"]), board.fen()
    finally:
        await plain.quit()


async def test_an_engine_that_always_lies_fails_the_request_quickly_and_never_with_a_traceback(engine, monkeypatch,
                                                                                             caplog):
    monkeypatch.setenv("FAKE_UCI_BESTMOVE", "e1e8")
    caplog.set_level(logging.INFO)
    board = game_boards()[0]
    started = time.monotonic()
    async with EnginePool(cfg(engine, retries=2), Store(":memory:").analyses) as pool:
        with pytest.raises(EngineError, match="illegal bestmove e1e8"):
            await pool.submit(board)
        status = pool.status()
    assert time.monotonic() - started < 8
    assert status.failures == 1 and status.retries == 2 and status.searches == 0
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "refused" in r.getMessage()]
    assert len(warnings) == 3  # one line per refused answer, then the one that gives up
    assert [r.getMessage()[:32] for r in caplog.records if r.levelno >= logging.ERROR] == ["engine pool: gave up on " + board.epd()[:8]]
    no_tracebacks(caplog)


@pytest.mark.parametrize("fork", [False, True], ids=["plain", "child-holds-pipes"])
async def test_a_killed_engine_is_noticed_by_its_process_within_two_seconds(engine, tmp_path, monkeypatch, caplog, fork):
    """SIGKILL mid-search, 30 s timeout: the position is searched again on a new engine within 2 s.

    With ``child-holds-pipes`` the engine left a child holding its stdout and stderr: the pipes never close,
    only the process's exit tells."""
    monkeypatch.setenv("FAKE_UCI_HANG_ONCE", str(tmp_path / "hang-once"))
    if fork:
        monkeypatch.setenv("FAKE_UCI_FORK", "1")
    caplog.set_level(logging.INFO)
    board = game_boards()[0]
    async with EnginePool(cfg(engine), Store(":memory:").analyses) as pool:
        (pid,) = pool.engine_pids()
        answer = asyncio.create_task(pool.submit(board))
        while not searches(tmp_path):
            await asyncio.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        result = await asyncio.wait_for(answer, 10)
        noticed = time.monotonic() - killed
        status = pool.status()
    assert noticed < 2.0, noticed
    assert result.key == position_key(board) and status.retries == 1 and status.failures == 0
    assert [p for p, _ in searches(tmp_path)][0] == pid and len(searches(tmp_path)) == 2
    no_tracebacks(caplog)


async def test_an_engine_killed_while_waiting_for_readyok_is_noticed_at_once(engine, monkeypatch, caplog):
    """python-chess never fails a search whose engine died before ``go``: the process's exit does."""
    monkeypatch.setenv("FAKE_UCI_HANG_NEWGAME", "1")
    caplog.set_level(logging.INFO)
    async with EnginePool(cfg(engine, retries=0), Store(":memory:").analyses) as pool:
        (pid,) = pool.engine_pids()
        answer = asyncio.create_task(pool.submit(game_boards()[0]))
        await asyncio.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        with pytest.raises(EngineError, match="died"):
            await asyncio.wait_for(answer, 10)
        assert time.monotonic() - killed < 2.0
    no_tracebacks(caplog)


@pytest.mark.parametrize("newlines", [True, False])
async def test_engine_stderr_is_read_and_capped(engine, monkeypatch, caplog, newlines):
    """10,000 lines (1 MB) of stderr per search: read and dropped, the last few lines kept, no log line each."""
    monkeypatch.setenv("FAKE_UCI_STDERR", "10000")
    if not newlines:
        monkeypatch.setenv("FAKE_UCI_STDERR_NONL", "1")
    caplog.set_level(logging.DEBUG, logger="livemon")
    caplog.set_level(logging.WARNING, logger="chess")
    boards = game_boards()[:5]
    engine_ = await UciEngine.open(cfg(engine))
    try:
        for board in boards:
            await engine_.analyse(board)
        await asyncio.sleep(0.2)
        protocol = engine_._protocol
        assert engine_.stderr_bytes >= 5 * 10000 * 100 * 0.99  # all of it read (the engine was never blocked)
        assert len(protocol.stderr_tail) <= STDERR_LINES
        assert all(len(line) <= STDERR_LINE_CHARS for line in protocol.stderr_tail)
        assert len(protocol.buffer[2]) <= STDERR_LINE_CHARS
        assert bool(protocol.stderr_tail) == newlines
    finally:
        await engine_.close()
    assert sum(len(r.getMessage()) for r in caplog.records) < 5000


async def test_a_crash_message_carries_the_last_stderr_lines(engine, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_STDERR", "3")
    monkeypatch.setenv("FAKE_UCI_CRASH_EVERY", "2")
    e = await UciEngine.open(cfg(engine))
    try:
        await e.analyse(game_boards()[0])
        with pytest.raises(EngineError, match=r"died .*its stderr ended: x{99}"):
            await e.analyse(game_boards()[1])
    finally:
        await e.kill()


def test_serve_until_done_ends_with_an_engine_that_answers_illegal_moves(tmp_path, engine):
    """The whole monitor: every search refused, each request fails after its retries, the run still ends."""
    import subprocess

    import chess.pgn
    with real("byrne_fischer_1956_pgnmentor.pgn").open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    node = game
    for _ in range(12):  # the first 12 plies: each costs its engine restarts
        node = node.variations[0]
    node.variations.clear()
    pgn = tmp_path / "one.pgn"
    pgn.write_text(str(game) + "\n")
    config = write_config(tmp_path, engine, pgn, tmp_path / "s.sqlite")
    config.write_text(config.read_text().replace("depth = 4", "depth = 4\nretries = 1\ntimeout = 30"))
    env = {**os.environ, "FAKE_UCI_BESTMOVE": "a1a8"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "livemon.cli", "serve", "--config", str(config), "--until-done"],
                          cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
    assert time.monotonic() - started < 60
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "refused (illegal bestmove a1a8)" in done.stderr
    status = subprocess.run([sys.executable, "-m", "livemon.cli", "status", "--config", str(config)], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    (line,) = [x for x in status.stdout.splitlines() if x.startswith("faults")]
    refused = int(line.split("engine.refused ")[1].split(",")[0].rstrip(")"))
    failed = int(line.split("engine.failed_positions ")[1].split(",")[0].rstrip(")"))
    assert refused == 2 * failed and failed >= 10, line  # every ply: a try and a retry, both refused
