"""A livemon store: the writer engine on livemon's schema and one repository per table (or per value).

The position cache is keyed by (position without move counters, engine profile name): a position
analysed once under a profile is never analysed again, by ``analyse`` or by the live monitor. The games
and moves are everything a restart replays: a restart loses nothing and repeats no search.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from livemon.io.store import alerts, analyses, calibrations, games, status, ttt
from livemon.io.store.engine import BUSY_TIMEOUT, Engine, StoreError, read_only_reason, reason
from livemon.live.messages import Alert, GameInfo, MoveEvent

if TYPE_CHECKING:
    from livemon.config import StoreConfig

SCHEMA = "".join(m.TABLES for m in (analyses, games, ttt, status, calibrations, alerts))
"""Every table of a store (each repository's module says what its tables hold)."""
MIGRATIONS = (analyses.migrate,)
"""What brings a store made by an older livemon up to :data:`SCHEMA` (columns added since are nullable)."""


class Store:
    """An open store: :attr:`engine` (the connection and its writes) and the repositories.

    ``create=False``: a missing file is a :class:`StoreError` (readers such as ``status`` must not
    leave an empty store behind). ``readonly=True`` opens it for reading only.

    >>> with Store(":memory:") as s:
    ...     s.games.put(GameInfo("g1"))
    ...     [info.game_id for info, _, _ in s.games.load()], s.analyses.count(), s.engine.health()["ok"]
    (['g1'], 0, True)
    """

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False, immutable: bool = False,
                 busy_timeout: float = BUSY_TIMEOUT):
        self.engine = Engine(path, schema=SCHEMA, migrations=MIGRATIONS, create=create, readonly=readonly,
                             immutable=immutable, busy_timeout=busy_timeout)
        self.analyses = analyses.Analyses(self.engine)
        self.calibrations = calibrations.Calibrations(self.engine)
        self.games = games.Games(self.engine)
        self.alerts = alerts.Alerts(self.engine)
        self.ttt = ttt.TttState(self.engine)
        self.status = status.StatusRow(self.engine)

    @property
    def path(self) -> str:
        return self.engine.path

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RunnerStore:
    """What the runner persists (its store port, :class:`livemon.live.runner.StorePort`): a store's games and alerts."""

    def __init__(self, store: Store) -> None:
        self.games = store.games
        self.alerts = store.alerts

    def put_game(self, info: GameInfo) -> None:
        self.games.put(info)

    def put_move(self, move: MoveEvent) -> None:
        self.games.put_move(move)

    def put_result(self, game_id: str, result: str) -> None:
        self.games.put_result(game_id, result)

    def delete_moves(self, game_id: str, from_ply: int) -> None:
        self.games.delete_moves(game_id, from_ply)

    def delete_game(self, game_id: str) -> None:
        self.games.delete(game_id)

    def put_alert(self, alert: Alert, level: str, raised_at: float) -> bool:
        return self.alerts.put(alert, level, raised_at)


def open_monitor_store(cfg: StoreConfig) -> Store:
    """The store of a live monitor: created if new, locked (one monitor per store), checked, backups scheduled.

    Raises :class:`StoreError` with the one line to print: in use by another monitor, damaged
    (``PRAGMA quick_check``), read-only, not a database.
    """
    store = Store(cfg.path)
    engine = store.engine
    try:
        engine.lock()
        problems = engine.check()
        if problems:
            raise StoreError(f"store {cfg.path} is damaged ({problems[0]}{' …' if len(problems) > 1 else ''}): "
                             f"livemon doctor --store {cfg.path} says how to recover")
        if engine.path != ":memory:" and not os.access(engine.path, os.W_OK):
            raise StoreError(f"store {cfg.path}: the file is read-only: make it writable or give another store.path")
        try:  # a write that fails now (read-only filesystem) is a start-up error, not a held write
            engine.db.execute("BEGIN IMMEDIATE")
            engine.db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"store {cfg.path}: cannot write ({reason(exc)}): give the monitor a writable store.path") from None
    except StoreError:
        engine.db.close()
        engine.unlock()
        raise
    engine.schedule_backups(cfg.backup_minutes, cfg.backup_path or None)
    engine.checkpoint_in_background()
    return store


def open_reader(path: str | Path) -> Store:
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
