"""The live monitor's archive: settled games' columns in a private temporary SQLite database.

SQLite makes a private on-disk database for an empty file name and deletes it when the
connection closes; its pages are cached up to a bound (``cache_kib``) and the rest lives on
disk, so the monitor's memory does not grow with the games a long event has finished.
Nothing in it outlives the process: a restart rebuilds every game from the store.

>>> blobs = ShelfDB()
>>> blobs["g1"] = b"abc"; blobs["g1"] = b"abcd"
>>> blobs["g1"], len(blobs), list(blobs)
(b'abcd', 1, ['g1'])
>>> del blobs["g1"]; "g1" in blobs
False
>>> blobs.close()
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, MutableMapping

log = logging.getLogger(__name__)


class ShelfDB(MutableMapping[str, bytes]):
    """``str -> bytes`` in a private temporary SQLite database (one connection, the loop's thread).

    A write the database refuses (the temporary directory full or not writable) is kept in
    memory instead, with one warning: nothing is lost, the monitor only grows as before.
    """

    def __init__(self, cache_kib: int = 2048) -> None:
        self._held: dict[str, bytes] = {}  # what the database refused
        self._warned = False
        # "": private, on disk, deleted on close; made where the monitor is, used on its loop's thread
        self._db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
        self._db.execute(f"PRAGMA cache_size = -{int(cache_kib)}")
        self._db.execute("PRAGMA journal_mode = MEMORY")  # a refused write rolls back (OFF could corrupt it)
        self._db.execute("PRAGMA synchronous = OFF")
        self._db.execute("CREATE TABLE shelf (key TEXT PRIMARY KEY, blob BLOB NOT NULL)")

    def __getitem__(self, key: str) -> bytes:
        held = self._held.get(key)
        if held is not None:
            return held
        row = self._db.execute("SELECT blob FROM shelf WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return bytes(row[0])

    def __setitem__(self, key: str, blob: bytes) -> None:
        try:
            self._db.execute("INSERT OR REPLACE INTO shelf (key, blob) VALUES (?, ?)", (key, blob))
        except sqlite3.Error as exc:
            if not self._warned:
                self._warned = True
                log.warning("shelf: the temporary database refused a write (%s): finished games stay in memory", exc)
            self._held[key] = blob
        else:
            self._held.pop(key, None)

    def __delitem__(self, key: str) -> None:
        held = self._held.pop(key, None)
        if self._db.execute("DELETE FROM shelf WHERE key = ?", (key,)).rowcount == 0 and held is None:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        keys = {row[0] for row in self._db.execute("SELECT key FROM shelf").fetchall()} | self._held.keys()
        return iter(sorted(keys))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def close(self) -> None:
        self._db.close()
