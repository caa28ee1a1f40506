"""The live monitor end to end: the scripted UCI engine (tests/fake_uci.py), a replayed real event, the real store."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import pytest

from livemon.app.monitor import Monitor
from livemon.cli import main
from livemon.config import Config
from livemon.live.pgn import split_games
from livemon.io.store import Store
from tests.conftest import REPO, ended_with_parent, helpers_of, real


def london_games(tmp_path: Path, n: int) -> Path:
    """The first ``n`` real games of the London Chess Classic 2011 (four a round) in one PGN file."""
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:n]
    path = tmp_path / f"london_{n}.pgn"
    path.write_text("\n".join(chunks))
    return path


@pytest.fixture
def round_one(tmp_path: Path) -> Path:
    """Round 1 and 2 of the London Chess Classic 2011 (8 real games)."""
    return london_games(tmp_path, 8)


@pytest.fixture
def round_1(tmp_path: Path) -> Path:
    """Round 1 of the London Chess Classic 2011 (4 real games, 349 plies)."""
    return london_games(tmp_path, 4)


def write_config(tmp_path: Path, pgn: Path, speed: float = 0, depth: int = 5, engine: str | None = None) -> Path:
    """A replay at full speed; no eval-bar previews (backlog_high huge): only the pinned profile is searched.
    ``engine``: the engine's path (default: the configured default)."""
    cfg = tmp_path / "config.toml"
    path = f'path = "{engine}"\n' if engine else ""
    cfg.write_text(
        f'[engine]\n{path}depth = {depth}\nbacklog_high = 1000000\n[store]\npath = "{tmp_path / "live.sqlite"}"\n'
        f'[monitor]\nstatus_seconds = 0.2\nttt_debounce_seconds = 0.1\n'
        f'[web]\nport = 0\n'  # any free port: a port in use ends serve, and other runs may hold 8765
        f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = {speed}\nmax_delay = 0.05\n'
    )
    return cfg


def run_cli(capsys, *args: str) -> dict:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


async def test_the_gc_freeze_collects_the_young_garbage_first(tmp_path):
    """A reference cycle that is garbage when the monitor freezes the heap is freed, not frozen for good."""
    cfg = Config()
    cfg.store.path = str(tmp_path / "live.sqlite")
    monitor = Monitor(cfg)

    class Node:
        pass

    gc.unfreeze()
    gc.disable()  # only the monitor's own collections run
    try:
        node = Node()
        node.self = node  # a cycle: reference counting alone never frees it
        ref = weakref.ref(node)
        del node
        task = asyncio.create_task(monitor._gc_loop())
        await asyncio.sleep(0.05)
        task.cancel()
        assert gc.get_freeze_count() > 0
        assert ref() is None  # collected before the freeze (frozen, it would live as long as the process)
    finally:
        gc.unfreeze()
        gc.enable()
        monitor.store.close()
        monitor._ttt.close()


def test_live_equals_batch(capsys, tmp_path, round_one, fake_engine):
    cfg = write_config(tmp_path, round_one, engine=fake_engine)
    gc.unfreeze()
    try:
        assert main(["serve", "--config", str(cfg), "--until-done"]) == 0
        assert gc.get_freeze_count() > 0  # the monitor moved its long-lived state out of the collector's walks
    finally:
        gc.unfreeze()  # the rest of the test session collects as usual
    log = capsys.readouterr().out
    assert log.count(" result ") == 8
    live = run_cli(capsys, "export", "--json", "--config", str(cfg))
    batch = run_cli(capsys, "analyse", "--json", str(round_one), "--depth", "5", "--config", str(cfg),
                    "--store", str(tmp_path / "batch.sqlite"))
    assert live["games"] == batch["games"]
    assert live["players"] == batch["players"]
    # the audience's figures (lichess accuracy, classes, FIDE results) agree too, and are there
    assert all(g["accuracy"]["white"] is not None and g["accuracy"]["black"] is not None for g in live["games"])
    assert sum(p["results"]["games"] for p in live["players"]) == 16
    assert live["event"] == batch["event"]
    assert live["engine"]["profile"] == batch["engine"]["profile"]
    plies = sum(g["plies"] for g in batch["games"])
    # one analysis per position at most: the batch run searched every position of a fresh store
    assert live["engine"]["analyses"] == batch["engine"]["analyses"] <= plies + 8
    # the background TTT ran on the 8 results and reached the store
    assert live["ttt"] is not None and len(live["ttt"]["players"]) == 9


def test_sigkill_mid_event_then_restart_repeats_no_search(capsys, tmp_path, round_1, fake_engine):
    round_one = round_1  # one round is enough to be killed mid-event and restarted (two cost twice the CPU)
    cfg = write_config(tmp_path, round_one, speed=0, depth=8, engine=fake_engine)
    cmd = [sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg), "--until-done"]
    # the first run's searches take 50 ms each, so the kill lands mid-event; the restart's take none
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "FAKE_UCI_DELAY": "0.05"})
    db = tmp_path / "live.sqlite"
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the event is well under way
        time.sleep(0.2)
        if db.exists():
            with Store(db) as s:
                if s.analyses.count() > 100:  # of ~350
                    break
    helpers = helpers_of(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert helpers and ended_with_parent(helpers) == []  # its TTT worker and multiprocessing's helpers go with it
    with Store(db) as s:
        searched_before = s.analyses.count()
        stored_moves = sum(len(m) for _, _, m in s.games.load())
    assert 0 < searched_before and stored_moves > 0
    assert subprocess.run(cmd, cwd=REPO, capture_output=True, timeout=300).returncode == 0
    with Store(db) as s:
        status = s.status.get()
        total = s.analyses.count()
    # the restarted monitor searched only positions the killed one had not analysed (at the pinned profile, and
    # the quick eval-bar previews while behind, each stored under its own profile)
    assert status["engine"]["searches"] + status["engine"]["preview_searches"] == total - searched_before
    assert status["engine"]["cache_hits"] >= searched_before - 8
    # and ends with the same estimates as an uninterrupted batch run on the same cache
    # (read in this process: the kill and the restart are the processes under test, not the readers)
    capsys.readouterr()
    live = run_cli(capsys, "export", "--json", "--config", str(cfg))
    batch = run_cli(capsys, "analyse", "--json", str(round_one), "--config", str(cfg), "--depth", "8", "--store", str(db))
    assert batch["engine"]["analyses"] == 0
    assert live["players"] == batch["players"] and live["games"] == batch["games"]


def test_bad_game_in_feed_is_reported_and_the_rest_go_on(capsys, tmp_path, fake_engine):
    chunks = [c for c, _ in split_games(real("london_2011_round8_malformed.pgn").read_text())]
    pgn = tmp_path / "r8.pgn"
    pgn.write_text("\n".join(chunks[29:31]))  # round 8: Nakamura-Short (illegal 54.Qg2) and another game
    cfg = write_config(tmp_path, pgn, depth=4, engine=fake_engine)
    assert main(["serve", "--config", str(cfg), "--until-done"]) == 0
    with Store(tmp_path / "live.sqlite") as s:
        status = s.status.get()
    (feed,) = status["feeds"]
    assert feed["errors"] >= 1 and "Qg2" in (feed["last_error"] or "")
    assert status["games"] >= 1 and status["moves"] > 0


def test_a_monitor_store_checkpoints_its_wal_in_a_thread_not_in_the_commits(tmp_path):
    """Issue 14: SQLite's automatic checkpoint ran in the commit that crossed 1,000 WAL pages, on the event
    loop. A monitor's store turns it off and checkpoints from a thread: the WAL stays small, nothing is lost."""
    from livemon.config import StoreConfig
    from livemon.io.store import open_monitor_store
    from livemon.live.messages import MoveEvent

    path = tmp_path / "m.sqlite"
    store = open_monitor_store(StoreConfig(path=str(path), backup_minutes=0))
    try:
        assert store.engine.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        wal, db = [], []
        for batch in range(5):  # 2,000 commits (~13 MB of WAL) a batch, then the checkpointer's turn
            for i in range(batch * 2000, (batch + 1) * 2000):
                store.games.put_move(MoveEvent(f"game-{i % 500}-{'x' * 200}", i // 500 + 1, "e2e4", "e4", fen))
            time.sleep(1.3)
            wal.append(os.path.getsize(f"{path}-wal"))
            db.append(path.stat().st_size)
        assert all(b > a for a, b in zip(db, db[1:]))  # each batch copied into the database file as it went
        assert wal[-1] <= 1.5 * wal[0], wal  # and the WAL reused from its start, not grown with every batch
    finally:
        store.close()
    assert not os.path.exists(f"{path}-wal")  # the last close folds the rest in
    with Store(path) as again:
        assert again.engine.db.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 10_000


def _evals_on_some_moves(tmp_path: Path) -> Path:
    """Three real broadcast games (lichess's [%eval] on every move): one as it is, with the start position's
    evaluation before its first move (Ferreira's Fig. 1 notation); one with every other evaluation removed;
    one with none left."""
    import re

    chunks = [c for c, _ in split_games(real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn").read_text())][:3]
    head, sep, moves = chunks[0].partition("\n\n")
    whole = head + sep + "{ [%eval 0.18] } " + moves
    seen = iter(range(10_000))
    every_other = re.sub(r"\[%eval [^\]]*\]", lambda m: m.group(0) if next(seen) % 2 else "", chunks[1])
    none = re.sub(r"\[%eval [^\]]*\]", "", chunks[2])
    path = tmp_path / "some_evals.pgn"
    path.write_text("\n\n".join(c.strip() for c in (whole, every_other, none)) + "\n")
    return path


def test_live_equals_batch_whatever_moves_carry_an_eval(capsys, tmp_path, fake_engine):
    """One rule for [%eval] comments, decided in the core: under an engine profile every position is searched
    whatever comments a game carries; the monitor's replay and ``analyse`` of the same file give the same figures."""
    pgn = _evals_on_some_moves(tmp_path)
    cfg = write_config(tmp_path, pgn, depth=4, engine=fake_engine)
    gc.unfreeze()
    try:
        assert main(["serve", "--config", str(cfg), "--until-done"]) == 0
    finally:
        gc.unfreeze()
    capsys.readouterr()
    live = run_cli(capsys, "export", "--json", "--config", str(cfg))
    batch = run_cli(capsys, "analyse", "--json", str(pgn), "--depth", "4", "--config", str(cfg),
                    "--store", str(tmp_path / "batch.sqlite"))
    assert live["games"] == batch["games"]
    assert live["players"] == batch["players"]
    assert len(batch["games"]) == 3 and all(not g.get("unscored_plies") for g in batch["games"])
    # the commented game was searched too (the ratings need the engine's MultiPV): every game's positions
    plies = [g["plies"] for g in batch["games"]]
    assert live["engine"]["analyses"] == batch["engine"]["analyses"] > plies[1] + plies[2] + 2
    assert all(p["c_mean"] is not None for p in batch["players"])


def test_the_start_position_evaluation_before_the_first_move_is_read(capsys, tmp_path):
    """Ferreira's Fig. 1 puts the start position's evaluation before the first move: with it, a game whose
    every move has an [%eval] is scored from its first move without an engine."""
    pgn = _evals_on_some_moves(tmp_path)
    first = [c for c, _ in split_games(pgn.read_text())][0]
    one = tmp_path / "fig1.pgn"
    one.write_text(first)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[engine]\npath = "/nonexistent/stockfish"\n')
    assert main(["analyse", "--json", str(one), "--config", str(cfg), "--store", str(tmp_path / "s.sqlite")]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "first move not scored" not in captured.err
    assert not out["games"][0].get("unscored_plies")
    white = next(p for p in out["players"] if p["name"] == "Malka, Samuel")
    assert white["moves"] == (out["games"][0]["plies"] + 1) // 2
    # without the comment before it, the first move waits for the engine, which is not there
    one.write_text(first.replace("{ [%eval 0.18] } ", ""))
    assert main(["analyse", "--json", str(one), "--config", str(cfg), "--store", str(tmp_path / "s.sqlite")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["games"][0]["unscored_plies"] == [1] and "first move not scored" in captured.err
