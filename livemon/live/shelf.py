"""The archive of settled games' columns, kept out of memory: the column log's backend.

A long event's settled games are read again only when something rare happens (a
correction, a c-posterior re-grid, a screening recount at a new rating), yet sealed into
columns they would still cost a few KB each in memory, and a long event's memory is to stay
flat. A :class:`Shelf` holds them as bytes in a mapping it is given: a plain dict by default
(tests), a private temporary SQLite database in the live monitor
(:class:`livemon.io.shelfdb.ShelfDB`). The core never opens anything itself: the driver
hands it the shelf (``LiveCore.configure(archive=...)``) and the column logs
(:mod:`livemon.live.plies`) put and read their columns there.

>>> shelf = Shelf()
>>> shelf.put("g", [1, 2, 3])
>>> shelf.get("g"), len(shelf)
([1, 2, 3], 1)
>>> shelf.discard("g"); len(shelf)
0
"""

from __future__ import annotations

import pickle
from collections.abc import MutableMapping
from typing import Any


class Shelf:
    """Objects by key, pickled into a ``MutableMapping[str, bytes]``; the last one read is kept unpickled.

    Only the process's own records go in (pickle reads back what it wrote; nothing from outside).
    """

    def __init__(self, blobs: MutableMapping[str, bytes] | None = None) -> None:
        self._blobs: MutableMapping[str, bytes] = {} if blobs is None else blobs
        self._last: tuple[str, Any] | None = None  # a game read ply by ply is unpickled once
        self.reads = 0
        """Records unpickled (a figure for benchmarks and tests)."""

    def put(self, key: str, obj: Any) -> None:
        self._blobs[key] = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        self._last = None

    def get(self, key: str) -> Any:
        """The object put under ``key`` (KeyError if none)."""
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        obj = pickle.loads(self._blobs[key])  # noqa: S301 - only this process's own records
        self.reads += 1
        self._last = (key, obj)
        return obj

    def discard(self, key: str) -> None:
        try:
            del self._blobs[key]  # not pop(): a mapping's pop reads the record before deleting it
        except KeyError:
            pass
        if self._last is not None and self._last[0] == key:
            self._last = None

    def __len__(self) -> int:
        return len(self._blobs)
