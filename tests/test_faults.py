"""Faults injected for real (store, config, processes, operations).

Each test breaks something the way it breaks at an event and asserts: the
service keeps running (or refuses to start with one line), nothing is lost, one
clear line per fault, no traceback. The means:

- a full disk: a real tmpfs of a few MB mounted for the test and filled with a
  file (needs root and ``mount``; otherwise the test is skipped with the reason);
- a read-only store: the same tmpfs remounted read-only (root ignores file modes);
- a damaged store: random bytes written over pages of a real store;
- engines that hang while starting: the scripted UCI engine of tests/fake_uci.py
  (``FAKE_UCI_HANG_START``) behind the real :class:`UciEngine`/:class:`EnginePool`;
- signals: real SIGTERM/SIGINT to a real ``livemon serve`` process group with
  real Stockfish;
- two monitors, a port in use: real processes and sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import chess.pgn
import httpx
import pytest

from livemon.app.monitor import Monitor
from livemon.cli import main
from livemon.config import EngineConfig, StoreConfig, load_config
from livemon.faces.web import WebServer
from livemon.io.engine import EngineError, UciEngine
from livemon.io.pool import EnginePool
from livemon.io.store import Store, StoreError, open_monitor_store
from livemon.live.pgn import split_games
from tests.conftest import REPO, ended_with_parent, helpers_of, real, write_fake_engine

BYRNE = "byrne_fischer_1956_pgnmentor.pgn"


# -- helpers ----------------------------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` mounted at ``where`` for the block (skips the test if it cannot be mounted)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full or read-only filesystem needs root to mount a tmpfs (run the suite as root)")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(path: Path) -> None:
    """Write ``path`` until the filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    try:
        while True:
            os.write(fd, b"\0" * 512)
    except OSError:
        pass
    finally:
        os.close(fd)


def mainlines(pgn: Path) -> dict[tuple[str, str], list[str]]:
    """(White, Black) -> UCI moves of each game of a PGN file."""
    out = {}
    with pgn.open(encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            out[(game.headers["White"], game.headers["Black"])] = [m.uci() for m in game.mainline_moves()]
    return out


def stored_mainlines(db: Path) -> dict[tuple[str, str], list[str]]:
    with Store(db, create=False) as store:
        return {(info.white, info.black): [m.uci for m in moves] for info, _, moves in store.games.load()}


def livemon(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "livemon.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, **kw)


def in_process(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
               *args: str) -> subprocess.CompletedProcess[str]:
    """A livemon command run by ``main`` in this process, where the process boundary is not the subject: its
    exit code, stdout, and stderr with every log record of WARNING or above appended as a line (a subprocess
    would print them there), without the ~1.3 s of CPU a process's imports cost."""
    capsys.readouterr()
    caplog.clear()
    try:
        code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    logged = "".join(f"{r.levelname} {r.name}: {r.getMessage()}\n" for r in caplog.records if r.levelno >= logging.WARNING)
    return subprocess.CompletedProcess(list(args), code, out.out, out.err + logged)


def one_line(err: str) -> str:
    """The single stderr line of a refused command (and no traceback)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.exc_info is None, record.getMessage()
        assert "Traceback" not in record.getMessage()


def write_config(tmp_path: Path, engine: str, pgn: Path, store: Path, speed: float = 0, **extra: str) -> Path:
    cfg = tmp_path / "event.toml"
    sections = {
        "engine": f'path = "{engine}"\ndepth = 4\nbacklog_high = 1000000\nstart_timeout = 5.0',
        "store": f'path = "{store}"',
        "monitor": "status_seconds = 0.2\nttt_debounce_seconds = 0.1",
        "web": "port = 0",
    }
    for key, text in extra.items():
        sections[key] = sections.get(key, "") + "\n" + text
    body = "".join(f"[{k}]\n{v.strip()}\n" for k, v in sections.items())
    body += f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = {speed}\nmax_delay = 0.05\n'
    cfg.write_text(body, encoding="utf-8")
    return cfg


@pytest.fixture(scope="module")
def _made_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a real store made by ``livemon serve --until-done`` on a real game, once per module."""
    root = tmp_path_factory.mktemp("event-store")
    store = root / "made" / "event.sqlite"
    cfg = write_config(root, write_fake_engine(root), real(BYRNE), store)
    assert main(["serve", "--config", str(cfg), "--until-done"]) == 0
    with Store(store, create=False) as s:
        s.engine.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert s.analyses.count() > 50 and s.status.get() is not None
    return store.parent


@pytest.fixture
def event_store(tmp_path: Path, _made_store: Path) -> Path:
    """A real store made by ``livemon serve --until-done`` on a real game (moves, analyses, status, TTT): a copy
    of its folder for the test to damage (the serve runs once per module)."""
    made = shutil.copytree(_made_store, tmp_path / "made")
    return made / "event.sqlite"


# -- 1. engines that hang while starting; signals -------------------------------------------------------------


async def test_engine_hanging_on_restart_is_killed_retried_and_analysis_goes_on(tmp_path, fake_engine, monkeypatch, caplog):
    hang = tmp_path / "hang-start"
    monkeypatch.setenv("FAKE_UCI_HANG_START", str(hang))
    # a start timeout of 10 s: a hung start is waited for that long, and a sound one (a Python process) answers
    # well within it even on a machine loaded many times over (at 2 s, every start failed at a load of 24)
    cfg = EngineConfig(path=fake_engine, depth=3, timeout=5, start_timeout=10.0, start_attempts=4, retries=0)
    board = chess.Board()
    caplog.set_level(logging.INFO)
    async with EnginePool(cfg) as pool:
        first = (await pool.submit(board)).analysis
        hang.touch()  # from now on a new engine process hangs in the UCI handshake
        (pid,) = pool.engine_pids()
        os.kill(pid, signal.SIGKILL)  # the engine crashes; its restart hangs
        for _ in range(500):
            if not pool.engine_pids():
                break
            await asyncio.sleep(0.01)
        board.push_san("e4")

        async def unhang_after_a_failed_start() -> None:  # the first restart hangs (10 s); the next, 1 s later, starts
            while not any("did not start" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.02)
            hang.unlink()

        unhang = asyncio.create_task(unhang_after_a_failed_start())
        started = time.monotonic()
        second = (await asyncio.wait_for(pool.submit(board), 30)).analysis
        took = time.monotonic() - started
        await unhang
        assert pool.status().engines_alive == 1
    assert first.candidates and second.candidates
    tries = [r.getMessage() for r in caplog.records if "did not start" in r.getMessage()]
    assert tries and "no answer to the UCI handshake within 10s" in tries[0] and "retrying in 1s" in tries[0]
    assert cfg.start_timeout <= took < cfg.start_timeout + 1 + 20  # the hang waited out, then one retry's start
    no_tracebacks(caplog)


async def test_engine_that_never_starts_fails_in_bounded_time_with_one_line(tmp_path, fake_engine, monkeypatch):
    hang = tmp_path / "hang-start"
    hang.touch()
    monkeypatch.setenv("FAKE_UCI_HANG_START", str(hang))
    cfg = EngineConfig(path=fake_engine, start_timeout=0.3, start_attempts=2)
    started = time.monotonic()
    with pytest.raises(EngineError, match=r"\(2 attempts\): no answer to the UCI handshake within 0.3s"):
        await UciEngine.open(cfg)
    assert time.monotonic() - started < 5


def test_serve_with_an_engine_that_never_starts_ends_with_one_line(tmp_path, fake_engine):
    hang = tmp_path / "hang-start"
    hang.touch()
    cfg = write_config(tmp_path, fake_engine, real(BYRNE), tmp_path / "s.sqlite")
    cfg.write_text(cfg.read_text().replace("start_timeout = 5.0", "start_timeout = 0.3\nstart_attempts = 2"))
    done = livemon("serve", "--config", str(cfg), "--until-done", env={**os.environ, "FAKE_UCI_HANG_START": str(hang)})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()  # one warning per failed try, then the one line that ends it (a loaded
    # machine may add a line of its own, such as a slow start's: the engine's lines are what this checks)
    retries = [line for line in lines if "did not start (attempt" in line]
    assert len(retries) == 1, done.stderr
    assert "did not start (attempt 1/2): no answer to the UCI handshake within 0.3s; retrying in 1s" in retries[0]
    assert lines[-1] == f"livemon: cannot start UCI engine {fake_engine!r} (2 attempts): no answer to the UCI handshake within 0.3s", \
        done.stderr


@pytest.mark.parametrize("sig, group", [(signal.SIGTERM, True), (signal.SIGINT, False)])
def test_signal_stops_serve_until_done_while_it_drains(tmp_path, fake_engine, monkeypatch, sig, group):
    """SIGTERM to the whole process group (systemd, a terminal) or SIGINT to livemon: a clean, quick stop."""
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.2")  # a long drain: a minute of searches queued (inherited by serve)
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:4]
    pgn = tmp_path / "round.pgn"
    pgn.write_text("\n".join(chunks))
    plies = sum(sum(1 for _ in chess.pgn.read_game(io.StringIO(c)).mainline_moves()) for c in chunks)
    db = tmp_path / "s.sqlite"
    cfg = write_config(tmp_path, fake_engine, pgn, db)
    # no status written on the way (only the loop's first): the one that counts every move is the run's last
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("status_seconds = 0.2", "status_seconds = 600"))
    proc = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg), "--until-done"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if db.exists():
            with contextlib.suppress(StoreError, sqlite3.Error), Store(db, create=False) as s:
                # every move read (the feed has ended), the engine a few searches into the drain; the stored status
                # may still lag the moves: the run's end writes it, cancelled by the signal or not
                if sum(len(m) for _, _, m in s.games.load()) == plies and s.analyses.count() >= 5:
                    break
    os.killpg(proc.pid, sig) if group else os.kill(proc.pid, sig)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 10
    assert proc.returncode == 0, err
    assert "Traceback" not in err + out and "died unexpectedly" not in err + out and "engine 0 failed" not in err, err
    with Store(db, create=False) as s:
        moves = sum(len(m) for _, _, m in s.games.load())
        assert moves == plies and s.status.get()["moves"] == moves  # every move read stored, and counted
        assert 5 <= s.analyses.count() < moves  # stopped while it drained: searches still queued


# -- 2. disk full ------------------------------------------------------------------------------------------------


async def test_disk_full_holds_writes_healthz_503_and_recovers_with_nothing_lost(tmp_path, fake_engine, caplog):
    # round 1 (4 games, 349 plies): the disk fills after 40 moves, stays full for 30 more, and ~280 remain to
    # be written after it recovers
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:4]
    pgn = tmp_path / "round.pgn"
    pgn.write_text("\n".join(chunks))
    caplog.set_level(logging.INFO)
    with tmpfs(tmp_path / "disk", "24m") as disk:
        cfg = load_config(write_config(tmp_path, fake_engine, pgn, disk / "live.sqlite", speed=12))
        cfg.store.backup_minutes = 0
        store = open_monitor_store(cfg.store)
        monitor = Monitor(cfg, store=store)
        web = WebServer(monitor.hub, cfg.web, health=store.engine.health)
        await web.start()
        url = f"http://127.0.0.1:{web.port}/healthz"
        run = asyncio.create_task(monitor.run(until_feeds_end=True))
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                assert (await client.get(url)).status_code == 200

                async def until(condition, what: str, seconds: float = 30) -> None:
                    deadline = time.monotonic() + seconds
                    while not condition():
                        assert not run.done(), f"monitor ended before {what}: {run}"
                        assert time.monotonic() < deadline, f"timed out waiting for {what}"
                        await asyncio.sleep(0.05)

                await until(lambda: monitor.counters.moves >= 40, "40 moves")
                await asyncio.to_thread(fill, disk / "filler")  # the disk is full from here
                await until(lambda: not store.engine.health()["ok"], "a failed write")
                sick = await client.get(url)
                assert sick.status_code == 503 and sick.json()["ok"] is False
                assert sick.json()["store"]["error"] == "database or disk is full"
                moves_when_full = monitor.counters.moves
                await until(lambda: monitor.counters.moves >= moves_when_full + 30, "moves during the outage")
                held = store.engine.pending
                assert held > 0
                status_task = [t for t in monitor._tasks if t.get_name() == "status"]
                assert status_task and not status_task[0].done()  # no zombie: the status loop lives on
                (disk / "filler").unlink()  # space returns
                await until(lambda: store.engine.health()["ok"], "recovery")
                recovered = time.time()
                assert (await client.get(url)).status_code == 200
            await asyncio.wait_for(run, 120)
        finally:
            if not run.done():
                monitor.stop()
                await asyncio.gather(run, return_exceptions=True)
            await web.close()
            store.close()
        stored = stored_mainlines(disk / "live.sqlite")
        with Store(disk / "live.sqlite", create=False) as s:
            assert s.status.get()["updated"] > recovered
    assert stored == mainlines(pgn)  # every ply of every game, once: 0 lost, 0 duplicated
    messages = [r.getMessage() for r in caplog.records]
    assert sum("writes failing (database or disk is full)" in m for m in messages) == 1
    assert sum("writes succeed again" in m for m in messages) == 1
    assert held > 0
    no_tracebacks(caplog)


def test_held_writes_keep_their_order_and_status_is_coalesced(tmp_path):
    with tmpfs(tmp_path / "disk", "1m") as disk:
        store = Store(disk / "s.sqlite")
        fill(disk / "filler")
        from livemon.live.messages import GameInfo, MoveEvent

        board, events = chess.Board(), []
        for ply, san in enumerate(["e4", "e5", "Nf3", "Nc6", "Bb5"], 1):
            move = board.parse_san(san)
            events.append(MoveEvent("g", ply, move.uci(), san, board.fen()))
            board.push(move)
        store.games.put(GameInfo("g"))
        for ev in events[:4]:
            store.games.put_move(ev)
        store.games.delete_moves("g", 3)  # a correction while the disk is full
        for ev in events[2:]:
            store.games.put_move(ev)
        for i in range(50):
            store.status.put({"i": i})
        assert not store.engine.health()["ok"] and store.engine.pending == 1 + 4 + 1 + 3 + 1  # 50 statuses held as one
        with pytest.raises(StoreError, match=r"backup to .*s.sqlite.backup failed: database or disk is full"):
            store.engine.backup()  # a scheduled backup on a full disk: one line, no partial file left
        assert sorted(os.listdir(disk)) == ["filler", "s.sqlite", "s.sqlite-shm", "s.sqlite-wal"]
        (disk / "filler").unlink()
        assert store.engine.flush(force=True) and store.engine.health()["ok"]
        (info, result, moves), = store.games.load()
        assert [m.san for m in moves] == ["e4", "e5", "Nf3", "Nc6", "Bb5"] and store.status.get() == {"i": 49}
        store.close()


def test_a_batch_the_full_disk_refuses_is_held_whole_in_order_and_stored_after(tmp_path):
    """A loop turn's writes share one transaction; when the disk refuses it, every write of it is
    held (none half-stored), in order, and stored once space returns."""
    from livemon.live.messages import GameInfo, MoveEvent

    with tmpfs(tmp_path / "disk", "1m") as disk:
        store = Store(disk / "s.sqlite")
        board, events = chess.Board(), []
        for ply, san in enumerate(["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"], 1):
            move = board.parse_san(san)
            events.append(MoveEvent("g", ply, move.uci(), san, board.fen()))
            board.push(move)
        store.games.put(GameInfo("g"))
        assert store.engine.begin_batch() and not store.engine.begin_batch()  # nested: the outer one commits
        for ev in events[:3]:
            store.games.put_move(ev)
        assert store.engine.db.in_transaction and [m.san for m in store.games.load()[0][2]] == ["e4", "e5", "Nf3"]
        fill(disk / "filler")
        for ev in events[3:]:
            store.games.put_move(ev)
        store.engine.commit_batch()
        assert not store.engine.db.in_transaction and not store.engine.health()["ok"] and store.engine.pending == 6
        assert store.games.load()[0][2] == []  # nothing of the refused transaction half-stored
        (disk / "filler").unlink()
        assert store.engine.flush(force=True) and store.engine.health()["ok"]
        store.close()
        with Store(disk / "s.sqlite") as again:
            assert [m.san for m in again.games.load()[0][2]] == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]


# -- 3. damaged or read-only store -------------------------------------------------------------------------------


def corrupt(db: Path, how: str) -> None:
    if how == "header":
        with db.open("r+b") as f:
            f.write(random.Random(1).randbytes(100))
        return
    with sqlite3.connect(db) as c:
        root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'moves'").fetchone()[0]
        page = c.execute("PRAGMA page_size").fetchone()[0]
    with db.open("r+b") as f:  # a page of random bytes: the root of the moves table
        f.seek((root - 1) * page)
        f.write(random.Random(2).randbytes(page))


@pytest.mark.parametrize("how", ["header", "page"])
def test_damaged_store_one_line_each_and_doctor_says_how_to_recover(event_store, how, capsys, caplog):
    def livemon(*args: str) -> subprocess.CompletedProcess[str]:
        return in_process(capsys, caplog, *args)

    backup = Store(event_store, create=False).engine.backup()  # the scheduled backup, taken before the damage
    corrupt(event_store, how)
    for command, code in (("serve", 2), ("export", 1), ("status", None)):
        done = livemon(command, "--store", str(event_store), *(["--until-done"] if command == "serve" else []))
        assert "Traceback" not in done.stderr + done.stdout, (command, done.stderr)
        if code is None and done.returncode == 0:  # status reads only its own row, which may be intact
            continue
        assert done.returncode == (code or 1), (command, done.stderr)
        line = one_line(done.stderr)
        assert line.startswith(f"livemon: store {event_store}") and "livemon doctor" in line, line
    doctor = livemon("doctor", "--store", str(event_store))
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
    assert "PROBLEM" in doctor.stdout and f"restore the backup: cp {backup} {event_store}" in doctor.stdout
    check = livemon("status", "--check", "--store", str(event_store))
    # the same report, up to what moves between two commands: the backup's age in minutes (rounded: they may
    # straddle a half minute) and the disk's free space (other processes write)
    def steady(report: str) -> str:
        return re.sub(r"[\d.]+ [KMGT]?B free", "N free", re.sub(r"\d+ min old", "N min old", report))

    assert check.returncode == 1 and steady(check.stdout) == steady(doctor.stdout)
    # following the advice recovers: the backup is sound and a monitor starts on it
    os.replace(event_store, str(event_store) + ".damaged")
    shutil.copy(backup, event_store)
    assert livemon("doctor", "--store", str(event_store)).returncode == 0
    assert livemon("export", "--json", "--store", str(event_store)).returncode == 0


def test_read_only_store_one_line_for_serve_readers_still_read(tmp_path, event_store):
    with tmpfs(tmp_path / "ro", "8m") as ro:
        db = ro / "event.sqlite"
        shutil.copy(event_store, db)
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        serve = livemon("serve", "--store", str(db), "--until-done")
        assert serve.returncode == 2 and "read-only" in one_line(serve.stderr), serve.stderr
        status = livemon("status", "--store", str(db))
        assert status.returncode == 0 and "moves" in status.stdout and "Traceback" not in status.stderr
        export = livemon("export", "--json", "--store", str(db))
        assert export.returncode == 0 and "Traceback" not in export.stderr
        doctor = livemon("doctor", "--store", str(db))
        assert doctor.returncode == 1 and "mounted read-only" in doctor.stdout
        assert sorted(os.listdir(ro)) == ["event.sqlite"]  # nothing written
        subprocess.run(["mount", "-o", "remount,rw", str(ro)], check=True)


def test_backup_is_a_sound_copy_taken_on_schedule(event_store):
    store = Store(event_store, create=False)
    store.engine.schedule_backups(minutes=1e-4, path=str(event_store) + ".bak")  # due at once
    time.sleep(0.01)
    store.engine.maintain()
    store.engine._backup_thread.join(30)
    store.close()
    copy = Store(str(event_store) + ".bak", create=False)
    assert copy.engine.check() == [] and stored_mainlines(Path(copy.path)) == stored_mainlines(event_store)
    assert copy.analyses.count() == Store(event_store, create=False).analyses.count()
    copy.close()


# -- 4. two monitors, a port in use ------------------------------------------------------------------------------


def test_second_monitor_on_one_store_is_refused_with_one_line(tmp_path, fake_engine):
    pgn = real("london_chess_classic_2011_twic.pgn")
    db = tmp_path / "s.sqlite"
    cfg = write_config(tmp_path, fake_engine, pgn, db, speed=1)
    first = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None and "start" in first.stdout.readline()
        assert "overlay:" in first.stdout.readline()  # running, lock taken
        second = livemon("serve", "--config", str(cfg))
        assert second.returncode == 2
        assert one_line(second.stderr) == (f"livemon: store {db} is in use by another monitor (pid {first.pid}): "
                                           "stop it, or give this one its own store (--store)")
        with pytest.raises(StoreError, match="in use by another monitor"):
            open_monitor_store(StoreConfig(path=str(db)))
        helpers = helpers_of(first.pid)
        first.kill()  # even a SIGKILL releases the lock (the kernel drops the flock)
        first.wait()
        assert helpers and ended_with_parent(helpers) == []  # its TTT worker and multiprocessing's helpers go with it
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    store = open_monitor_store(StoreConfig(path=str(db)))
    store.close()


def test_port_in_use_ends_serve_with_one_line_unless_the_web_face_is_off(tmp_path, fake_engine):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = write_config(tmp_path, fake_engine, real(BYRNE), tmp_path / "s.sqlite")
        cfg.write_text(cfg.read_text().replace("port = 0", f"port = {port}"))
        done = livemon("serve", "--config", str(cfg), "--until-done")
        assert done.returncode == 2
        assert one_line(done.stderr) == (f"livemon: web server cannot listen on 127.0.0.1:{port}: Address already in use "
                                         "(another livemon? set [web] port, or enabled = false)")
        cfg.write_text(cfg.read_text().replace(f"port = {port}", f"port = {port}\nenabled = false"))
        done = livemon("serve", "--config", str(cfg), "--until-done")
        assert done.returncode == 0 and "Traceback" not in done.stderr and "overlay:" not in done.stdout
    assert stored_mainlines(tmp_path / "s.sqlite") == mainlines(real(BYRNE))


# -- 6. CLI friction ---------------------------------------------------------------------------------------------


def test_status_and_export_on_a_folder_without_store_create_nothing(tmp_path, capsys):
    db = tmp_path / "nothing" / "livemon.sqlite"
    for command in ("status", "export"):
        assert main([command, "--store", str(db)]) == 1
        assert one_line(capsys.readouterr().err) == (f"livemon: no store at {db} (a monitor creates it when it "
                                                     "starts: livemon serve)")
    assert not db.parent.exists()


def test_export_of_an_empty_store_exits_non_zero(tmp_path, capsys):
    Store(tmp_path / "empty.sqlite").close()
    assert main(["export", "--store", str(tmp_path / "empty.sqlite")]) == 1
    assert one_line(capsys.readouterr().err) == f"livemon: store {tmp_path / 'empty.sqlite'} has no moves yet: nothing to export"


def test_run_logs_beside_the_store_and_says_where(tmp_path, capsys, caplog):
    from livemon.commands.run import log_path

    assert log_path(str(tmp_path / "ev" / "livemon.sqlite"), None) == tmp_path / "ev" / "livemon.log"
    help_text = in_process(capsys, caplog, "run", "--help").stdout
    assert "livemon.log in the store's folder" in " ".join(help_text.split())


# -- 7. the replay resumes where it was --------------------------------------------------------------------------


async def test_replay_resumes_where_it_was_after_a_restart(tmp_path, fake_engine):
    pgn = real(BYRNE)
    (moves,) = mainlines(pgn).values()
    plies = len(moves)
    cfg = load_config(write_config(tmp_path, fake_engine, pgn, tmp_path / "s.sqlite", speed=25))
    cfg.feeds[0].max_delay = 10.0  # 1 s per ply (no clocks in this game) / 25: ~3.3 s for the game
    cfg.store.backup_minutes = 0

    async def run_until(moves: int | None) -> Monitor:
        """The monitor until it has stored ``moves`` moves (None: to the feed's end)."""
        store = open_monitor_store(cfg.store)
        monitor = Monitor(cfg, store=store)
        task = asyncio.create_task(monitor.run(until_feeds_end=moves is None))
        try:
            if moves is None:
                await asyncio.wait_for(task, 60)
            else:  # a count of moves, not a time: a loaded machine once stored 4 plies in 1.5 s
                deadline = time.monotonic() + 60
                while monitor.counters.moves < moves and not task.done() and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                monitor.stop()
                await task
        finally:
            store.close()
        return monitor

    first = await run_until(20)  # ~0.8 s of the ~3.3 s game
    stored = first.counters.moves
    assert 10 < stored < plies
    second = await run_until(None)
    remaining = (plies - stored) / 25
    # went on from where it was: the stored plies came back from the store, the feed re-sent them at once
    assert second.counters.moves == plies and second.counters.duplicates == stored
    # and waited only for the plies not yet played (starting over would sleep through the whole game again,
    # ~3.3 s); the feed's own sleep, not wall time, so a loaded machine cannot fail it
    assert second.feeds[0].slept <= remaining + 0.2
    assert stored_mainlines(tmp_path / "s.sqlite") == mainlines(pgn)


def test_sigterm_ends_the_commentary_screen_cleanly(tmp_path, fake_engine):
    """``livemon run`` in a real pseudo-terminal: SIGTERM restores the terminal, exits 0, logs no traceback."""
    import pty

    store = tmp_path / "ev" / "livemon.sqlite"
    cfg = write_config(tmp_path, fake_engine, real("london_chess_classic_2011_twic.pgn"), store, speed=5)
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    proc = subprocess.Popen([sys.executable, "-m", "livemon.cli", "run", "--config", str(cfg)], cwd=REPO, env=env,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    out = b""
    try:
        deadline = time.monotonic() + 60
        while b"feeds:" not in out and time.monotonic() < deadline:  # the screen's status bar is up
            out += os.read(master, 65536)
        assert b"feeds:" in out, out[-500:]
        time.sleep(1)
        os.kill(proc.pid, signal.SIGTERM)
        sent = time.monotonic()
        with contextlib.suppress(OSError):  # EIO once the child has closed the terminal
            while chunk := os.read(master, 65536):
                out += chunk
        assert proc.wait(20) == 0
        assert time.monotonic() - sent < 10
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    log = (tmp_path / "ev" / "livemon.log").read_text()
    text = out.decode(errors="replace")
    assert f"livemon: log file {tmp_path / 'ev' / 'livemon.log'}" in text
    assert f"livemon: the log is in {tmp_path / 'ev' / 'livemon.log'}" in text
    assert "Traceback" not in text + log and " ERROR " not in log
    with Store(store, create=False) as s:
        assert s.status.get()["moves"] > 0  # the status was stored on the way out


def test_a_full_shelf_keeps_finished_games_in_memory_with_one_line(caplog):
    """The monitor's shelf (a private temporary SQLite database) refusing writes (its directory full) loses
    no record and says so once: the records it refused are kept in memory, read back and deleted as the rest."""
    from livemon.io.shelfdb import ShelfDB
    from livemon.live.plies import PlyLog, ScoredPly
    from livemon.live.shelf import Shelf
    from livemon.rating.agent import Decision

    blobs = ShelfDB()
    blobs._db.execute("PRAGMA max_page_count = 3")  # a tiny disk: the first records fit, the rest do not
    shelf = Shelf(blobs)
    games = {f"g{i}": {ply: ScoredPly(f"g{i}", ply, 10 * ply, 10 * ply + 5, Decision((0.0, -0.3), ply % 2), "e2e4",
                                      "e4") for ply in range(1, 61)} for i in range(20)}
    shelved = {g: PlyLog() for g in games}
    for g, plies in games.items():
        for sp in plies.values():
            shelved[g].add(sp)
        shelved[g].seal()
    with caplog.at_level(logging.WARNING, logger="livemon.io.shelfdb"):
        assert all(shelved[g].archive(shelf, f"plies {g}") for g in games)
    assert 0 < len(blobs._held) < 20 and len(blobs) == 20  # some on disk, the refused ones in memory
    assert [r.getMessage() for r in caplog.records].count(
        "shelf: the temporary database refused a write (database or disk is full): finished games stay in memory") == 1
    assert all(dict(shelved[g]) == plies for g, plies in games.items())  # every record reads back whole
    for g in list(games)[::2]:
        shelf.discard(f"plies {g}")
    assert len(blobs) == 10 and blobs["plies g1"] and "plies g0" not in blobs
