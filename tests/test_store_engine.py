"""The store's writer engine and its repositories, on real SQLite files with real second connections.

The engine (``livemon.io.store.engine``) knows no table: these tests give it a one-table schema of their
own, lock the file from another connection the way another process would, and read what was written
from outside. The repositories are tested through :class:`~livemon.io.store.Store` on a file.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from livemon.io.store import Store, StoreError
from livemon.io.store.database import RunnerStore
from livemon.io.store.engine import Engine
from livemon.live.messages import Alert, GameInfo, MoveEvent
from livemon.live.values import PositionAnalysis

SCHEMA = "CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY, text TEXT NOT NULL);"
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def insert(n: int) -> tuple[tuple[str, tuple[object, ...]], ...]:
    return (("INSERT INTO t (n, text) VALUES (?, ?)", (n, f"row {n}")),)


def rows(path: Path) -> list[int]:
    """What another connection reads: the committed rows only."""
    db = sqlite3.connect(path)
    try:
        return [n for (n,) in db.execute("SELECT n FROM t ORDER BY n")]
    finally:
        db.close()


def holder(path: Path) -> sqlite3.Connection:
    """A second connection holding the database's write lock (an open ``BEGIN IMMEDIATE``)."""
    db = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
    db.execute("BEGIN IMMEDIATE")
    return db


# -- the engine ---------------------------------------------------------------------------------------


def test_a_write_refused_by_another_connections_lock_is_held_in_order_and_stored_when_it_is_released(tmp_path):
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA, busy_timeout=0.05)
    assert engine.write(insert(1))
    other = holder(path)
    try:
        assert not engine.write(insert(2))  # waited busy_timeout, then held
        assert not engine.write(insert(3))  # behind it, in order
        health = engine.health()
        assert not health["ok"] and health["pending_writes"] == 2 == engine.pending
        assert "locked" in health["error"]
        assert [n for (n,) in engine.db.execute("SELECT n FROM t")] == [1]  # reads go on meanwhile
        assert not engine.flush(force=True)  # still locked: still held, nothing lost
        assert engine.pending == 2
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert engine.flush(force=True) and engine.health()["ok"] and engine.pending == 0
    assert rows(path) == [1, 2, 3] and engine.writes_held == 2
    engine.close()


def test_a_lock_released_within_the_busy_timeout_is_waited_out_not_held(tmp_path):
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA, busy_timeout=10)
    other = holder(path)
    release = threading.Timer(0.2, lambda: other.execute("COMMIT"))
    release.start()
    try:
        assert engine.write(insert(1))  # SQLite's busy handler retried until the other committed
    finally:
        release.join()
        other.close()
    assert engine.writes_held == 0 and engine.health()["ok"] and rows(path) == [1]
    engine.close()


def test_a_batch_begun_under_another_connections_lock_is_held_whole_and_committed_after(tmp_path):
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA, busy_timeout=0.05)
    other = holder(path)
    try:
        with engine.transaction():
            for n in (1, 2, 3):
                engine.write(insert(n))
        assert engine.pending == 3 and not engine.db.in_transaction and rows(path) == []
    finally:
        other.execute("ROLLBACK")
        other.close()
    engine.write(insert(4))  # a later write first stores the held ones (its retry is due: force it)
    assert engine.flush(force=True) and rows(path) == [1, 2, 3, 4]
    engine.close()


def test_a_batchs_rows_go_in_together_and_a_refused_run_holds_them_in_order(tmp_path):
    """Rows written in a batch (a burst's moves) are run together, before any other write and before the commit;
    a run the disk refuses holds the batch's writes and each row, in order, as a refused write is held."""
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA)
    sql = "INSERT OR REPLACE INTO t (n, text) VALUES (?, ?)"
    with engine.transaction():
        engine.write(insert(1))
        for n in (2, 3, 4):
            engine.write_row(sql, (n, f"row {n}"))
        assert engine.db.in_transaction and [n for (n,) in engine.db.execute("SELECT n FROM t")] == [1]
        engine.write((("DELETE FROM t WHERE n = ?", (3,)),))  # the rows before it go in first
        engine.write_row(sql, (5, "row 5"))
    assert rows(path) == [1, 2, 4, 5] and engine.writes_held == 0

    class Full:
        """The connection, whose disk fills up under a run of rows."""

        def __init__(self, db: sqlite3.Connection) -> None:
            self._db = db

        def __getattr__(self, name: str) -> object:
            return getattr(self._db, name)

        def executemany(self, *args: object) -> None:
            raise sqlite3.OperationalError("database or disk is full")

    real = engine.db
    engine.db = Full(real)  # type: ignore[assignment]
    with engine.transaction():
        engine.write(insert(6))
        for n in (7, 8):
            engine.write_row(sql, (n, f"row {n}"))
    engine.db = real
    assert engine.pending == 3 and not engine.health()["ok"] and rows(path) == [1, 2, 4, 5]
    assert engine.flush(force=True) and rows(path) == [1, 2, 4, 5, 6, 7, 8]
    engine.close()


def test_a_counted_write_under_a_lock_counts_as_done_and_is_stored_once(tmp_path):
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA, busy_timeout=0.05)
    once = ("INSERT OR IGNORE INTO t (n, text) VALUES (?, ?)", (7, "first"))
    other = holder(path)
    try:
        assert engine.write_counted(once) is None  # held: its count is not known
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert engine.flush(force=True)
    assert engine.write_counted(("INSERT OR IGNORE INTO t (n, text) VALUES (?, ?)", (7, "again"))) == 0
    assert [tuple(r) for r in engine.db.execute("SELECT n, text FROM t")] == [(7, "first")]
    engine.close()


def test_a_bad_value_is_a_bug_not_a_held_write(tmp_path):
    engine = Engine(tmp_path / "e.sqlite", schema=SCHEMA)
    assert engine.write(insert(1))
    with pytest.raises(sqlite3.IntegrityError):
        engine.write(insert(1))  # retrying it would block every later write for ever
    assert engine.pending == 0
    engine.close()


def test_a_backup_is_one_committed_snapshot_while_another_connection_writes(tmp_path):
    path = tmp_path / "e.sqlite"
    engine = Engine(path, schema=SCHEMA)
    for n in range(1, 101):
        engine.write(insert(n))
    other = holder(path)  # a transaction open in another connection: not in the copy
    other.execute("INSERT INTO t (n, text) VALUES (1000, 'uncommitted')")
    try:
        target = engine.backup(tmp_path / "copy.sqlite")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert target == tmp_path / "copy.sqlite" and not (tmp_path / "copy.sqlite.tmp").exists()
    assert rows(target) == list(range(1, 101)) and engine.last_backup is not None
    copy = Engine(target, create=False, readonly=True)
    assert copy.check(full=True) == []
    copy.close()
    engine.close()


def test_a_backup_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
    engine = Engine(tmp_path / "e.sqlite", schema=SCHEMA)
    engine.write(insert(1))
    with pytest.raises(StoreError, match=r"^store .*e\.sqlite: backup to .*copy\.sqlite failed: [^\n]+$"):
        engine.backup(tmp_path / "no such folder" / "copy.sqlite")
    assert not (tmp_path / "no such folder").exists() and not list(tmp_path.rglob("*.tmp"))
    assert engine.health()["ok"]  # a failed backup holds no write
    engine.close()


def test_a_second_engine_cannot_lock_a_store_locked_by_another(tmp_path):
    path = tmp_path / "e.sqlite"
    first = Engine(path, schema=SCHEMA)
    first.lock()
    second = Engine(path, schema=SCHEMA)
    with pytest.raises(StoreError, match="in use by another monitor"):
        second.lock()
    second.close()
    first.close()  # releases it
    third = Engine(path, schema=SCHEMA)
    third.lock()
    third.close()


# -- the repositories ---------------------------------------------------------------------------------


def move(game_id: str, ply: int, san: str, uci: str, **kw: object) -> MoveEvent:
    return MoveEvent(game_id, ply, uci, san, START, **kw)  # type: ignore[arg-type]


def test_games_keep_first_seen_order_take_backs_reopen_the_result_and_a_restart_reads_them_back(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.games.put(GameInfo("b", "B1", "B2"))
        store.games.put(GameInfo("a", "A1", "A2"))
        store.games.put(GameInfo("b", "B1", "B2", event="renamed"))  # refreshed tags: its place is kept
        for ply, (san, uci) in enumerate((("e4", "e2e4"), ("e5", "e7e5"), ("Nf3", "g1f3")), 1):
            store.games.put_move(move("b", ply, san, uci))
        store.games.put_result("b", "1-0")
        store.games.delete_moves("b", 3)  # a take-back of ply 3: the game is on again
        store.games.put_move(move("a", 1, "d4", "d2d4", eval_cp=10**6))  # an eval no feed clamped
        store.games.put(GameInfo("gone"))
        store.games.put_move(move("gone", 1, "c4", "c2c4"))
        store.games.delete("gone")
    with Store(path, create=False) as again:  # a restart
        loaded = again.games.load()
        assert [(info.game_id, info.event, result, [m.san for m in moves]) for info, result, moves in loaded] == [
            ("b", "renamed", "*", ["e4", "e5"]), ("a", "?", "*", ["d4"])]
        assert loaded[1][2][0].eval_cp == 3900  # clamped when read back
        assert again.engine.db.execute("SELECT COUNT(*) FROM moves WHERE game_id = 'gone'").fetchone()[0] == 0


def test_the_position_cache_by_profile_and_worker_many_at_once(tmp_path):
    a = PositionAnalysis(25, (("e2e4", 25), ("d2d4", 20)), 12, 1000)
    with Store(tmp_path / "s.sqlite") as store:
        cache = store.analyses
        keys = [f"pos{i}" for i in range(1200)]  # more than one query's worth of parameters
        with store.engine.transaction():
            for i, key in enumerate(keys):
                cache.put(key, "p12", a, worker="liar" if i % 3 == 0 else None)
        cache.put("pos0", "p20", a)
        assert len(cache.get_many([*keys, "missing", "pos0"], "p12")) == 1200
        assert cache.get_many(["pos1", "missing"], "p20") == {}
        assert cache.by_worker() == {None: 801, "liar": 400} and list(cache.profiles()) == ["p12", "p20"]
        assert store.engine.begin_batch()
        cache.put("held", "p20", a, worker="liar")  # still in the open batch: forgotten all the same
        forgotten = cache.forget_worker("liar")
        assert sorted(forgotten) == sorted([(k, "p12") for i, k in enumerate(keys) if i % 3 == 0] + [("held", "p20")])
        assert cache.count("p12") == 800 and cache.count() == 801
        assert cache.get("pos0", "p12") is None and cache.get("pos1", "p12") == a


def test_the_runner_port_persists_games_and_raises_each_alert_once(tmp_path):
    from livemon.live.runner import StorePort

    with Store(tmp_path / "s.sqlite") as store:
        port: StorePort = RunnerStore(store)
        port.put_game(GameInfo("g"))
        port.put_move(move("g", 1, "e4", "e2e4"))
        port.put_move(move("g", 2, "e5", "e7e5"))
        port.delete_moves("g", 2)
        port.put_result("g", "0-1")
        alert = Alert("Cheater, C", "Open", 40, 3.9, 0.71, 3.0)
        assert port.put_alert(alert, "alert", 10.0) and not port.put_alert(alert, "alert", 11.0)
        assert port.put_alert(alert, "notice", 12.0)
        assert [(r, [m.san for m in ms]) for _, r, ms in store.games.load()] == [("0-1", ["e4"])]
        assert store.alerts.load() == [("alert", alert), ("notice", alert)]
        port.delete_game("g")
        assert store.games.load() == []
