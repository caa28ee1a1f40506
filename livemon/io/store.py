"""The SQLite store: the position cache and everything a restart must not lose.

One file, WAL mode, so that readers (``livemon export``/``status``) never block
the writer. The position cache is keyed by (position without move counters,
engine profile name): a position analysed once under a profile is never
analysed again, by ``analyse`` or by the live monitor.

Faults (docs/operations.md):

- **a write that fails** (disk full, read-only or failing disk) is held in
  memory, in order, and retried about once a second (each later write first
  retries the held ones, so order is kept); :meth:`Store.health` says not-ok
  meanwhile (``/healthz`` answers 503), one log line when writes start failing
  and one when they succeed again. Nothing is dropped while the process lives;
- **a store that cannot be opened** (not a database, damaged, unreadable, no
  such file for a reader, held by another monitor) is a :class:`StoreError`
  whose message is the one line a command prints;
- a live monitor opens its store with :func:`open_monitor_store`: a lock
  (``<store>.lock`` holding the pid), ``PRAGMA quick_check``, and a backup on
  a schedule (``store.backup_minutes``) through SQLite's online backup API.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TypeVar

from livemon.errors import LivemonError
from livemon.live.values import PositionAnalysis
from livemon.live.fields import sane_eval
from livemon.live.messages import Alert, GameInfo, MoveEvent

if TYPE_CHECKING:
    from livemon.config import StoreConfig
    from livemon.live.values import PositionAnalysis
    from livemon.rating.calibration import ProfileCalibration

log = logging.getLogger(__name__)

SHIPPED_CALIBRATIONS = Path(__file__).parents[1] / "data" / "calibrations.json"

SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses (
    position   TEXT NOT NULL,          -- EPD: FEN without move counters
    profile    TEXT NOT NULL,          -- EngineProfile.name
    score      INTEGER NOT NULL,       -- White's view, centipawns, mates at ±3900
    candidates TEXT NOT NULL,          -- JSON of PositionAnalysis
    worker     TEXT,                   -- the bus worker that computed it; NULL: this machine's engines
    PRIMARY KEY (position, profile)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    seq     INTEGER NOT NULL,          -- order first seen: fixes each player's history order
    info    TEXT NOT NULL,             -- JSON of messages.GameInfo
    result  TEXT NOT NULL DEFAULT '*'
);
CREATE TABLE IF NOT EXISTS moves (     -- every move is stored before it is analysed
    game_id    TEXT NOT NULL,
    ply        INTEGER NOT NULL,
    event      TEXT NOT NULL,          -- JSON of messages.MoveEvent
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ttt_state (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    state  BLOB,                       -- pickled warm-start state of the last fit
    report TEXT                        -- JSON of the last posteriors
);
CREATE TABLE IF NOT EXISTS status (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    status TEXT NOT NULL               -- JSON of Monitor.status(), for `livemon status`
);
CREATE TABLE IF NOT EXISTS calibrations (
    profile         TEXT PRIMARY KEY,  -- EngineProfile.name
    engine_strength REAL,              -- r̄_e (Algorithm 3), Elo
    c_calibration   TEXT               -- JSON of rating.calibration.Calibration, if fitted
);
CREATE TABLE IF NOT EXISTS performance_calibrations (
    profile     TEXT PRIMARY KEY,      -- EngineProfile.name
    calibration TEXT NOT NULL          -- JSON of rating.calibration.Calibration on every non-forced move
);
CREATE TABLE IF NOT EXISTS alerts (    -- fair-play screening: each level raised once per player per event
    player TEXT NOT NULL,
    event  TEXT NOT NULL,
    level  TEXT NOT NULL,              -- notice or alert
    raised REAL NOT NULL,              -- unix time
    alert  TEXT NOT NULL,              -- JSON of messages.Alert (numbers raised on, top moves)
    PRIMARY KEY (player, event, level)
);
"""


WRITE_RETRY_SECONDS = 1.0
"""Least time between two retries of held writes."""


class StoreError(LivemonError, RuntimeError):
    """A store that cannot be used; the message is one line: what is wrong and what to do."""


def _reason(exc: BaseException) -> str:
    """A short reason for an SQLite or OS error (no traceback).

    >>> _reason(sqlite3.OperationalError("database or disk is full"))
    'database or disk is full'
    """
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def _held(exc: BaseException) -> bool:
    """Is this failed write worth holding and retrying (full, read-only, I/O error, busy, damaged)?

    Integrity and programming errors (a bad value) are bugs: retrying would block the queue for ever.
    """
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


CHECKPOINT_SECONDS = 1.0
"""How often a live monitor's store copies its WAL into the database file (in a thread: :meth:`Store.checkpoint_in_background`)."""


def lock_holder(path: str) -> int | None:
    """The pid of the monitor holding ``path``'s lock, or None if nobody holds it."""
    import fcntl

    lock = path + ".lock"
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        text = os.read(fd, 64).decode(errors="replace").strip()
        return int(text) if text.isdigit() else -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def open_monitor_store(cfg: StoreConfig) -> "Store":
    """The store of a live monitor: created if new, locked (one monitor per store), checked, backups scheduled.

    Raises :class:`StoreError` with the one line to print: in use by another monitor, damaged
    (``PRAGMA quick_check``), read-only, not a database.
    """
    store = Store(cfg.path)
    try:
        store.lock()
        problems = store.check()
        if problems:
            raise StoreError(f"store {cfg.path} is damaged ({problems[0]}{' …' if len(problems) > 1 else ''}): "
                             f"livemon doctor --store {cfg.path} says how to recover")
        if store.path != ":memory:" and not os.access(store.path, os.W_OK):
            raise StoreError(f"store {cfg.path}: the file is read-only: make it writable or give another store.path")
        try:  # a write that fails now (read-only filesystem) is a start-up error, not a held write
            store.db.execute("BEGIN IMMEDIATE")
            store.db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"store {cfg.path}: cannot write ({_reason(exc)}): give the monitor a writable store.path") from None
    except StoreError:
        store.db.close()
        store.unlock()
        raise
    store.schedule_backups(cfg.backup_minutes, cfg.backup_path or None)
    store.checkpoint_in_background()
    return store


def open_reader(path: str | Path) -> "Store":
    """An existing store for a reader (``status``, ``export``, ``doctor``): never created, read-only if it must be.

    Raises :class:`StoreError` (no such store, not a database, unreadable).
    """
    try:
        return Store(path, create=False)
    except StoreError as exc:
        if "readonly" not in str(exc) and "unable to open" not in str(exc):
            raise
    try:
        return Store(path, create=False, readonly=True)  # a read-only file or folder
    except StoreError:
        if read_only_reason(path) != "the filesystem is mounted read-only":
            raise
    # WAL on a read-only filesystem: SQLite cannot make the shared-memory file; nobody can write it
    # either, so reading it as immutable is safe
    return Store(path, create=False, readonly=True, immutable=True)


def read_only_reason(path: str | Path) -> str | None:
    """Why ``path`` (a store) cannot be written, if it cannot: a read-only filesystem or file or folder.

    >>> import tempfile
    >>> read_only_reason(Path(tempfile.gettempdir()) / "x.sqlite") is None
    True
    """
    target = Path(path)
    folder = target.resolve().parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "the filesystem is mounted read-only"
    except OSError:
        return None
    if target.exists() and not os.access(target, os.W_OK):
        return "the file is read-only"
    if not os.access(folder, os.W_OK):
        return "its folder is read-only"
    return None


def shipped_calibrations() -> dict[str, ProfileCalibration]:
    """Calibrations shipped with livemon (``livemon/data/calibrations.json``), by profile name."""
    from livemon.rating.calibration import ProfileCalibration

    try:
        table = json.loads(SHIPPED_CALIBRATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: ProfileCalibration.from_dict(d) for name, d in table.items()}


class Store:
    """A livemon SQLite database.

    ``create=False``: a missing file is a :class:`StoreError` (readers such as
    ``status`` must not leave an empty store behind). ``readonly=True`` opens
    it for reading only (works on a read-only filesystem).
    """

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False, immutable: bool = False):
        self.path = str(path)
        self.readonly = readonly
        self._pending: list[tuple[str | None, tuple[tuple[str, tuple[Any, ...]], ...]]] = []
        self._failing_since: float | None = None
        self._last_error: str | None = None
        self._last_retry = 0.0
        self._lock_fd: int | None = None
        self._db_lock_fd: int | None = None
        self._backup_thread: threading.Thread | None = None
        self._checkpointer: threading.Thread | None = None
        self._checkpoint_stop = threading.Event()
        self.backup_path: str | None = None
        self.backup_seconds = 0.0
        self._next_backup = 0.0
        self.last_backup: float | None = None
        self.writes_held = 0  # writes that ever had to be held (for status and tests)
        self._batch: list[tuple[str | None, tuple[tuple[str, tuple[Any, ...]], ...]]] | None = None
        self._in_tx = False  # the batch (begin_batch) has begun its transaction (at its first write)
        memory = self.path == ":memory:"
        if not memory and not create and not Path(self.path).is_file():
            raise StoreError(f"no store at {self.path} (a monitor creates it when it starts: livemon serve)")
        try:
            if not memory and create:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            mode = "immutable=1" if immutable else "mode=ro"
            target, uri = (f"file:{Path(self.path).resolve()}?{mode}", True) if readonly else (self.path, False)
            self.db = sqlite3.connect(target, timeout=30, isolation_level=None, check_same_thread=False, uri=uri)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(self._open_error(exc)) from None
        try:
            if readonly:
                self.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            else:
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.executescript(SCHEMA)
                self._migrate()
        except sqlite3.Error as exc:
            self.db.close()
            raise StoreError(self._open_error(exc)) from None

    def _open_error(self, exc: BaseException) -> str:
        reason = _reason(exc)
        if self.path != ":memory:" and not self.readonly and read_only_reason(self.path):
            reason = f"{reason} ({read_only_reason(self.path)})"
            hint = "give the monitor a writable store.path (or --store)"
        elif "readonly" in reason or "read-only" in reason.lower():
            hint = "the file or its folder is read-only: give the monitor a writable store.path (or --store)"
        elif "not a database" in reason or "malformed" in reason:
            hint = f"it is damaged: livemon doctor --store {self.path} says how to recover"
        else:
            hint = f"livemon doctor --store {self.path} says more"
        return f"store {self.path}: {reason}: {hint}"

    def _migrate(self) -> None:
        """Bring a store made by an older livemon up to SCHEMA (columns added since are nullable)."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(analyses)")}
        if "worker" not in columns:
            self.db.execute("ALTER TABLE analyses ADD COLUMN worker TEXT")

    def close(self) -> None:
        self.commit_batch()
        if self._pending:
            self.flush(force=True)
        if self._pending:
            log.error("store %s: %d writes could not be stored before closing (%s): they are lost",
                      self.path, self.pending, self._last_error)
        if self._backup_thread is not None:
            self._backup_thread.join(timeout=60)
        if self._checkpointer is not None:
            self._checkpoint_stop.set()
            self._checkpointer.join(timeout=60)
        self.db.close()  # the last connection: SQLite checkpoints the WAL into the file and removes it
        self.unlock()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes that survive a full or failing disk ---------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write inside in one transaction (:meth:`begin_batch` ... :meth:`commit_batch`).

        >>> s = Store(":memory:")
        >>> with s.transaction():
        ...     s.put_result("g", "1-0")
        ...     s.db.in_transaction
        True
        >>> s.db.in_transaction
        False
        """
        if not self.begin_batch():
            yield  # nested: the outer one commits
            return
        try:
            yield
        finally:
            self.commit_batch()

    def begin_batch(self) -> bool:
        """From now on writes share one transaction, begun at the first write, until :meth:`commit_batch`.

        The monitor batches each event-loop turn's writes: a burst's moves are one commit, not
        one each (a commit per move would cost several times a move's other work). Reads see the writes at once. A write the disk
        refuses rolls the transaction back and holds its writes with it, in order, as if each had
        failed alone (:meth:`flush` retries them); so does a refused commit. False when a batch was
        already open (or the store is read-only): nothing changes.
        """
        if self._batch is not None or self.readonly:
            return False
        self._batch = []
        return True

    def commit_batch(self) -> None:
        """Commit the writes since :meth:`begin_batch` and write alone again (held if the disk refuses)."""
        try:
            self._commit_open()
        finally:
            self._batch = None

    def _commit_open(self) -> None:
        if not self._in_tx:
            return
        self._in_tx = False
        batch, self._batch = self._batch or [], []
        try:
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            if not _held(exc):
                raise
            self._hold_batch(batch, exc)

    def _hold_batch(self, batch: list[tuple[str | None, tuple[tuple[str, tuple[Any, ...]], ...]]],
                    exc: sqlite3.Error) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")  # SQLite may have rolled back already (a full disk)
        self._in_tx = False
        self._failed(exc)
        self._pending.extend(batch)
        self.writes_held += len(batch)

    def _write(self, statements: tuple[tuple[str, tuple[Any, ...]], ...], coalesce: str | None = None) -> bool:
        """Run ``statements`` as one transaction, or hold them (in order) if the disk refuses; True if written.

        Inside :meth:`transaction` they join its transaction instead.
        """
        if self._pending:
            self.flush()
        if self._batch is not None and not self._pending:
            try:
                if not self._in_tx:
                    self.db.execute("BEGIN IMMEDIATE")
                    self._in_tx = True
                for sql, params in statements:
                    self.db.execute(sql, params)
            except sqlite3.Error as exc:
                if not _held(exc):
                    raise
                self._hold_batch([*self._batch, (coalesce, statements)], exc)
                self._batch = []
                return False
            self._batch.append((coalesce, statements))
            return True
        if not self._pending:
            try:
                self._run(statements)
                return True
            except sqlite3.Error as exc:
                if not _held(exc):
                    raise
                self._failed(exc)
        if coalesce is not None:  # e.g. the status row: only the newest matters
            self._pending = [p for p in self._pending if p[0] != coalesce]
        self._pending.append((coalesce, statements))
        self.writes_held += 1
        return False

    def _run(self, statements: tuple[tuple[str, tuple[Any, ...]], ...]) -> None:
        if len(statements) == 1:
            self.db.execute(*statements[0])
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for sql, params in statements:
                self.db.execute(sql, params)
            self.db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")
            raise

    def _failed(self, exc: BaseException) -> None:
        self._last_error = _reason(exc)
        self._last_retry = time.monotonic()
        if self._failing_since is None:
            self._failing_since = time.monotonic()
            log.error("store %s: writes failing (%s): held in memory and retried every %gs until they succeed",
                      self.path, self._last_error, WRITE_RETRY_SECONDS)

    def flush(self, force: bool = False) -> bool:
        """Retry the held writes, oldest first (at most once per ``WRITE_RETRY_SECONDS`` unless ``force``).

        True when nothing is held any more.
        """
        if not self._pending:
            return True
        if not force and time.monotonic() - self._last_retry < WRITE_RETRY_SECONDS:
            return False
        self._last_retry = time.monotonic()
        while self._pending:  # in transactions of up to 500 held writes: a long outage is stored quickly
            chunk = self._pending[:500]
            try:
                self._run(tuple(s for _, statements in chunk for s in statements))
            except sqlite3.Error as exc:
                if not _held(exc):
                    raise
                self._last_error = _reason(exc)
                return False
            del self._pending[: len(chunk)]
        self._pending.clear()
        since = self._failing_since or time.monotonic()
        log.warning("store %s: writes succeed again after %.0fs; every held write is stored", self.path,
                    time.monotonic() - since)
        self._failing_since = None
        self._last_error = None
        return True

    @property
    def pending(self) -> int:
        """Writes held in memory, waiting for the disk."""
        return len(self._pending)

    def health(self) -> dict[str, Any]:
        """``ok`` is False while writes fail (``/healthz`` and ``livemon status`` show it).

        >>> Store(":memory:").health()["ok"]
        True
        """
        return {
            "ok": not self._pending,
            "pending_writes": len(self._pending),
            "error": self._last_error if self._pending else None,
            "failing_seconds": round(time.monotonic() - self._failing_since, 1) if self._failing_since else 0.0,
            "last_backup": self.last_backup,
        }

    # -- lock, check, backup --------------------------------------------------

    @property
    def lock_path(self) -> str:
        return self.path + ".lock"

    def lock(self) -> None:
        """Take the store for this process (one monitor per store); StoreError naming the holder if taken.

        Two ``flock`` locks, both released by the kernel when the process dies (even by SIGKILL): one on
        the database file itself, which cannot be removed from under a running monitor without removing
        its store, and one on ``<store>.lock``, which holds the holder's pid for the message (deleting
        that file therefore frees nothing). ``flock`` and SQLite's own ``fcntl`` byte-range locks are
        independent on a local filesystem; the descriptor on the database file stays open until the
        connection is closed (closing it earlier would drop SQLite's locks of this process).
        """
        import fcntl

        if self.path == ":memory:" or self._lock_fd is not None:
            return
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"store {self.path}: cannot create its lock file {self.lock_path}: {_reason(exc)}") from None
        try:
            db_fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"store {self.path}: cannot open it to lock it: {_reason(exc)}") from None
        for held in (db_fd, fd):
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
                os.close(fd)
                os.close(db_fd)
                raise StoreError(f"store {self.path} is in use by another monitor (pid {holder}): stop it, "
                                 "or give this one its own store (--store)") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        self._db_lock_fd = db_fd

    def unlock(self) -> None:
        """Release the lock (the file stays: removing it could let two processes lock two different files)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self._db_lock_fd is not None:
            os.close(self._db_lock_fd)
            self._db_lock_fd = None

    def check(self, full: bool = False) -> list[str]:
        """Problems SQLite finds in the file (``PRAGMA quick_check``, or ``integrity_check`` if ``full``); [] if sound.

        >>> Store(":memory:").check()
        []
        """
        try:
            rows = [r[0] for r in self.db.execute("PRAGMA integrity_check" if full else "PRAGMA quick_check")]
        except sqlite3.DatabaseError as exc:
            return [_reason(exc)]
        if rows == ["ok"]:
            return []
        lines = [line.strip() for row in rows for line in str(row).splitlines()]
        return [line for line in lines if line and not line.startswith("***")]  # one problem a line

    def schedule_backups(self, minutes: float, path: str | None = None) -> None:
        """Back up every ``minutes`` (0: never) to ``path`` (default ``<store>.backup``), from :meth:`maintain`."""
        self.backup_seconds = max(minutes, 0.0) * 60
        self.backup_path = path or self.path + ".backup"
        self._next_backup = time.monotonic() + self.backup_seconds

    def backup(self, dest: str | Path | None = None) -> Path:
        """A consistent copy of the store at ``dest`` (default ``<store>.backup``), written atomically.

        SQLite's online backup API from a connection of its own, so it may run in a thread while the
        monitor writes (WAL: the copy is one snapshot). Raises StoreError (one line) on failure.
        """
        target = Path(dest or self.backup_path or self.path + ".backup")
        tmp = target.with_name(target.name + ".tmp")
        started = time.monotonic()
        try:
            src = sqlite3.connect(self.path, timeout=30)
            try:
                dst = sqlite3.connect(tmp)
                try:
                    src.backup(dst)
                finally:
                    dst.close()
            finally:
                src.close()
            os.replace(tmp, target)
        except (OSError, sqlite3.Error) as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StoreError(f"store {self.path}: backup to {target} failed: {_reason(exc)}") from None
        self.last_backup = time.time()
        log.info("store %s: backed up to %s in %.1fs", self.path, target, time.monotonic() - started)
        return target

    def _backup_quietly(self) -> None:
        try:
            self.backup()
        except StoreError as exc:
            log.error("%s (the next one is tried on schedule)", exc)

    def checkpoint_in_background(self, every: float = CHECKPOINT_SECONDS) -> None:
        """Copy the WAL into the database file from a thread of its own, not in the writer's commits.

        SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the
        monitor's event loop: a write and an fsync of megabytes (tens of ms on a busy disk; at 1,000
        boards every few seconds). A ``PASSIVE`` checkpoint from another connection never blocks the
        writer. Bench (60,000 moves and 30,000 analyses): per move 73 -> 51 µs, p99.9 10.6 -> 0.8 ms.
        """
        if self.path == ":memory:" or self._checkpointer is not None:
            return
        self.db.execute("PRAGMA wal_autocheckpoint=0")
        self._checkpointer = threading.Thread(target=self._checkpoint_loop, args=(every,), name="store-checkpoint",
                                              daemon=True)
        self._checkpointer.start()

    def _checkpoint_loop(self, every: float) -> None:
        failed = False
        try:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            log.error("store %s: no background checkpoints (%s): the WAL grows until the monitor stops",
                      self.path, _reason(exc))
            return
        try:
            while not self._checkpoint_stop.wait(every):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()  # fetched: no statement left open
                    failed = False
                except sqlite3.Error as exc:  # a full disk: retried; the writes are held by _write meanwhile
                    if not failed:
                        log.warning("store %s: checkpoint failed (%s); retrying", self.path, _reason(exc))
                    failed = True
        finally:
            db.close()

    def maintain(self) -> None:
        """Housekeeping the monitor calls every status tick: retry held writes, start a due backup (in a thread)."""
        self.flush()
        if not self.backup_seconds or self.path == ":memory:" or time.monotonic() < self._next_backup:
            return
        if self._backup_thread is not None and self._backup_thread.is_alive():
            return
        self._next_backup = time.monotonic() + self.backup_seconds
        self._backup_thread = threading.Thread(target=self._backup_quietly, name="store-backup", daemon=True)
        self._backup_thread.start()

    # -- position cache -------------------------------------------------------

    def get_analysis(self, position: str, profile: str) -> PositionAnalysis | None:
        row = self.db.execute(
            "SELECT candidates FROM analyses WHERE position = ? AND profile = ?", (position, profile)
        ).fetchone()
        from livemon.live.values import PositionAnalysis

        return PositionAnalysis.from_json(row[0]) if row else None

    def get_analyses(self, positions: Iterable[str], profile: str) -> dict[str, PositionAnalysis]:
        """Cached analyses of many positions at once (missing ones are absent)."""
        from livemon.live.values import PositionAnalysis

        found: dict[str, PositionAnalysis] = {}
        keys = list(dict.fromkeys(positions))
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for position, text in self.db.execute(
                f"SELECT position, candidates FROM analyses WHERE profile = ? AND position IN ({marks})",
                (profile, *chunk),
            ):
                found[position] = PositionAnalysis.from_json(text)
        return found

    def put_analysis(self, position: str, profile: str, analysis: PositionAnalysis, worker: str | None = None) -> None:
        """Cache an analysis; ``worker`` names the bus worker that computed it (None: a local engine)."""
        self._write(((
            "INSERT OR REPLACE INTO analyses (position, profile, score, candidates, worker) VALUES (?, ?, ?, ?, ?)",
            (position, profile, analysis.score, analysis.to_json(), worker),
        ),))

    def forget_worker(self, worker: str) -> int:
        """Delete every cached analysis computed by ``worker`` (they are searched again); how many."""
        return self.db.execute("DELETE FROM analyses WHERE worker = ?", (worker,)).rowcount

    def analyses_by_worker(self) -> dict[str | None, int]:
        """Cached analyses per worker name (None: this machine's engines)."""
        return dict(self.db.execute("SELECT worker, COUNT(*) FROM analyses GROUP BY worker ORDER BY worker"))

    def count_analyses(self, profile: str | None = None) -> int:
        if profile is None:
            return self.db.execute("SELECT COUNT(*) FROM analyses").fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM analyses WHERE profile = ?", (profile,)).fetchone()[0]

    def iter_profiles(self) -> Iterator[str]:
        for (name,) in self.db.execute("SELECT DISTINCT profile FROM analyses ORDER BY profile"):
            yield name

    # -- calibrations ---------------------------------------------------------

    def get_calibration(self, profile: str) -> ProfileCalibration | None:
        """The profile's calibration: stored by ``livemon calibrate``, else the one shipped with livemon."""
        from livemon.rating.calibration import Calibration, ProfileCalibration

        row = self.db.execute(
            "SELECT engine_strength, c_calibration FROM calibrations WHERE profile = ?", (profile,)
        ).fetchone()
        if row is None:
            return shipped_calibrations().get(profile)
        c_map = None if row[1] is None else Calibration.from_dict(json.loads(row[1]))
        perf = self.db.execute("SELECT calibration FROM performance_calibrations WHERE profile = ?", (profile,)).fetchone()
        return ProfileCalibration(profile, row[0], c_map, None if perf is None else Calibration.from_dict(json.loads(perf[0])))

    def put_calibration(self, calibration: ProfileCalibration) -> None:
        """Store (replace) a profile's calibration (its performance map too), in one transaction."""
        c_map = None if calibration.c_map is None else json.dumps(calibration.c_map.to_dict())
        if calibration.performance is None:
            performance: tuple[str, tuple[Any, ...]] = (
                "DELETE FROM performance_calibrations WHERE profile = ?", (calibration.profile,))
        else:
            performance = ("INSERT OR REPLACE INTO performance_calibrations (profile, calibration) VALUES (?, ?)",
                           (calibration.profile, json.dumps(calibration.performance.to_dict())))
        self._write((
            ("INSERT OR REPLACE INTO calibrations (profile, engine_strength, c_calibration) VALUES (?, ?, ?)",
             (calibration.profile, calibration.engine_strength, c_map)),
            performance,
        ))

    def get_engine_strength(self, profile: str) -> float | None:
        calibration = self.get_calibration(profile)
        return None if calibration is None else calibration.engine_strength

    def put_engine_strength(self, profile: str, strength: float) -> None:
        from livemon.rating.calibration import ProfileCalibration

        old = self.get_calibration(profile)
        self.put_calibration(ProfileCalibration(profile, strength, None if old is None else old.c_map,
                                                None if old is None else old.performance))

    # -- live games -----------------------------------------------------------

    def put_game(self, info: GameInfo) -> None:
        """Record a game (or refresh its tags), keeping the order it was first seen in."""
        self._write(((
            "INSERT INTO games (game_id, seq, info) VALUES (?, (SELECT COUNT(*) FROM games), ?) "
            "ON CONFLICT(game_id) DO UPDATE SET info = excluded.info",
            (info.game_id, row_of(info)),
        ),))

    def put_move(self, move: MoveEvent) -> None:
        self._write(((
            "INSERT OR REPLACE INTO moves (game_id, ply, event) VALUES (?, ?, ?)",
            (move.game_id, move.ply, row_of(move)),
        ),))

    def delete_moves(self, game_id: str, from_ply: int) -> None:
        self._write((
            ("DELETE FROM moves WHERE game_id = ? AND ply >= ?", (game_id, from_ply)),
            ("UPDATE games SET result = '*' WHERE game_id = ?", (game_id,)),
        ))

    def delete_game(self, game_id: str) -> None:
        """Forget a game and its moves (withdrawn by its feed)."""
        self._write((
            ("DELETE FROM moves WHERE game_id = ?", (game_id,)),
            ("DELETE FROM games WHERE game_id = ?", (game_id,)),
        ))

    def put_result(self, game_id: str, result: str) -> None:
        self._write((("UPDATE games SET result = ? WHERE game_id = ?", (result, game_id)),))

    def load_games(self) -> list[tuple[GameInfo, str, list[MoveEvent]]]:
        """Every stored game in the order first seen: (info, result, moves by ply)."""
        moves: dict[str, list[MoveEvent]] = {}
        for game_id, text in self.db.execute("SELECT game_id, event FROM moves ORDER BY game_id, ply"):
            moves.setdefault(game_id, []).append(_stored_move(value_of(MoveEvent, text)))
        return [
            (value_of(GameInfo, info), result, moves.get(game_id, []))
            for game_id, info, result in self.db.execute("SELECT game_id, info, result FROM games ORDER BY seq")
        ]

    # -- fair-play alerts (arbiters only) ---------------------------------------

    def put_alert(self, alert: Alert, level: str, raised: float) -> bool:
        """Record a raised alert; False (nothing written) when that level was already raised.

        While writes are held (disk full) the alert counts as new: the held INSERT OR IGNORE keeps the first.
        """
        statement = (
            "INSERT OR IGNORE INTO alerts (player, event, level, raised, alert) VALUES (?, ?, ?, ?, ?)",
            (alert.player, alert.event, level, raised, row_of(alert)),
        )
        self._commit_open()  # its own statement: a refused alert must not take a transaction's writes with it
        if self._pending:
            self._write((statement,))
            return True
        try:
            cur = self.db.execute(*statement)
        except sqlite3.Error as exc:
            if not _held(exc):
                raise
            self._failed(exc)
            self._pending.append((None, (statement,)))
            self.writes_held += 1
            return True
        return cur.rowcount == 1

    def load_alerts(self) -> list[tuple[str, Alert]]:
        """Every raised alert, oldest first: (level, alert)."""
        return [
            (level, value_of(Alert, text))
            for level, text in self.db.execute("SELECT level, alert FROM alerts ORDER BY raised, rowid")
        ]

    # -- TTT ------------------------------------------------------------------

    def put_ttt(self, state: bytes | None, report: str) -> None:
        self._write(((
            "INSERT INTO ttt_state (id, state, report) VALUES (1, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET state = excluded.state, report = excluded.report",
            (state, report),
        ),), coalesce="ttt")

    def get_ttt(self) -> tuple[bytes | None, str | None]:
        row = self.db.execute("SELECT state, report FROM ttt_state WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else (None, None)

    # -- status ---------------------------------------------------------------

    def put_status(self, status: dict[str, Any]) -> None:
        self._write(((
            "INSERT INTO status (id, status) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET status = excluded.status",
            (json.dumps(status),),
        ),), coalesce="status")

    def get_status(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT status FROM status WHERE id = 1").fetchone()
        return json.loads(row[0]) if row else None


Row = TypeVar("Row", GameInfo, MoveEvent, Alert)

_ROW_FIELDS: dict[type, tuple[str, ...]] = {}


def _row_fields(cls: type) -> tuple[str, ...]:
    names = _ROW_FIELDS.get(cls)
    if names is None:
        names = _ROW_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def row_of(value: GameInfo | MoveEvent | Alert) -> str:
    """The JSON text a game's tags, a move or an alert is kept as (``games.info``, ``moves.event``,
    ``alerts.alert``): its fields and its ``kind``.

    >>> m = MoveEvent("g1", 1, "e2e4", "e4", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", clock=61.0)
    >>> value_of(MoveEvent, row_of(m)) == m, json.loads(row_of(m))["kind"]
    (True, 'move')
    """
    d = {name: getattr(value, name) for name in _row_fields(type(value))}
    d["kind"] = value.kind
    return json.dumps(d, separators=(",", ":"))


def value_of(cls: type[Row], text: str | bytes) -> Row:
    """The value of a row written by :func:`row_of` (keys it does not know, from another version, ignored)."""
    names = set(_row_fields(cls))
    return cls(**{k: v for k, v in json.loads(text).items() if k in names})


def _stored_move(move: MoveEvent) -> MoveEvent:
    """A stored move as the models may use it: an ``eval_cp`` written before the feeds clamped it
    (10000 for a mate, 2**63, NaN) is clamped to ±3900 or dropped, so the reader never breaks."""
    clean, start = sane_eval(move.eval_cp), sane_eval(move.start_eval_cp)
    if clean == move.eval_cp and type(clean) is type(move.eval_cp) and start == move.start_eval_cp \
            and type(start) is type(move.start_eval_cp):
        return move
    return replace(move, eval_cp=clean, start_eval_cp=start)
