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

_NONE = object()


KEPT = 8
"""Records a :class:`Shelf` keeps unpickled, the last ones read: a settled game is read by each of its consumers in
turn (both players' estimates, their posteriors, the screening's recount), and a game read ply by ply once."""


class Shelf:
    """Objects by key, pickled into a ``MutableMapping[str, bytes]``; the last :data:`KEPT` read are kept unpickled.

    Only the process's own records go in (pickle reads back what it wrote; nothing from outside).

    >>> shelf = Shelf()
    >>> for key in "abc":
    ...     shelf.put(key, [key])
    >>> [shelf.get(k) for k in "abcab"], shelf.reads
    ([['a'], ['b'], ['c'], ['a'], ['b']], 3)
    """

    def __init__(self, blobs: MutableMapping[str, bytes] | None = None) -> None:
        self._blobs: MutableMapping[str, bytes] = {} if blobs is None else blobs
        self._kept: dict[str, Any] = {}  # the last KEPT read, the least recently read first
        self.reads = 0
        """Records unpickled (a figure for benchmarks and tests)."""

    def put(self, key: str, obj: Any) -> None:
        self._blobs[key] = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        self._kept.pop(key, None)

    def get(self, key: str) -> Any:
        """The object put under ``key`` (KeyError if none)."""
        kept = self._kept
        obj = kept.pop(key, _NONE)
        if obj is _NONE:
            obj = pickle.loads(self._blobs[key])  # noqa: S301 - only this process's own records
            self.reads += 1
            if len(kept) >= KEPT:
                del kept[next(iter(kept))]
        kept[key] = obj  # the most recently read last
        return obj

    def discard(self, key: str) -> None:
        try:
            del self._blobs[key]  # not pop(): a mapping's pop reads the record before deleting it
        except KeyError:
            pass
        self._kept.pop(key, None)

    def __len__(self) -> int:
        return len(self._blobs)
