"""The store lock is one the kernel holds: deleting ``<store>.lock`` lets no second monitor write the same store.

Two real processes: a real ``livemon serve`` (the scripted UCI engine, a real PGN) holds the store; the lock
file is deleted under it; a second ``livemon serve`` on the same store, and a second process opening it as a
monitor store, are both refused with one line. After the first dies (SIGKILL) the store is free again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from livemon.config import StoreConfig
from livemon.io.store import StoreError, open_monitor_store
from tests.conftest import REPO, helpers_of, real
from tests.test_faults import livemon, one_line, write_config


OPEN_AS_MONITOR = """
import sys
from livemon.config import StoreConfig
from livemon.io.store import StoreError, open_monitor_store
try:
    store = open_monitor_store(StoreConfig(path=sys.argv[1]))
except StoreError as exc:
    print("refused:", exc)
    sys.exit(2)
store.status.put({"moves": -1})
store.close()
print("wrote")
"""


def test_deleting_the_lock_file_lets_no_second_monitor_in(tmp_path, fake_engine):  # noqa: F811
    db = tmp_path / "s.sqlite"
    cfg = write_config(tmp_path, fake_engine, real("london_chess_classic_2011_twic.pgn"), db, speed=1)
    first = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None and "start" in first.stdout.readline()
        assert "overlay:" in first.stdout.readline()  # running, lock taken
        lock = Path(str(db) + ".lock")
        assert lock.read_text().strip() == str(first.pid)
        lock.unlink()  # what an operator (or a cleanup script) might do
        second = livemon("serve", "--config", str(cfg))
        assert second.returncode == 2
        line = one_line(second.stderr)
        assert line.startswith(f"livemon: store {db} is in use by another monitor"), line
        other = subprocess.run([sys.executable, "-c", OPEN_AS_MONITOR, str(db)], cwd=REPO, capture_output=True,
                               text=True, timeout=60)
        assert other.returncode == 2 and "in use by another monitor" in other.stdout, other.stdout + other.stderr
        assert first.poll() is None  # the first monitor runs on, untouched
        orphans = helpers_of(first.pid, timeout=0)  # those started by now: killed below with the monitor
        first.kill()
        first.wait()
        for pid in orphans:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    after = subprocess.run([sys.executable, "-c", OPEN_AS_MONITOR, str(db)], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
    assert after.returncode == 0 and "wrote" in after.stdout, after.stdout + after.stderr


def test_the_lock_holds_within_one_process_too(tmp_path):
    db = tmp_path / "s.sqlite"
    first = open_monitor_store(StoreConfig(path=str(db)))
    try:
        Path(str(db) + ".lock").unlink()
        with pytest.raises(StoreError, match="in use by another monitor"):
            open_monitor_store(StoreConfig(path=str(db)))
        first.status.put({"moves": 3})  # the holder still writes (its SQLite locks were not disturbed)
        first.engine.flush(force=True)
        assert first.status.get()["moves"] == 3
    finally:
        first.close()
    again = open_monitor_store(StoreConfig(path=str(db)))
    again.close()
