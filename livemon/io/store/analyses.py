"""The position cache (table ``analyses``): a position analysed once under a profile is never searched again.

Keyed by (position without move counters, engine profile name), by ``analyse`` and by the live monitor
alike. Each row names the bus worker that computed it (None: this machine's engines), so a worker found
lying can be forgotten (``livemon worker --forget``).
"""

from __future__ import annotations

import sqlite3
from typing import Iterable, Iterator

from livemon.io.store.engine import Engine
from livemon.live.memo import Memo
from livemon.live.values import PositionAnalysis

KEPT = 4_096
"""Analyses :meth:`Analyses.get` keeps in memory, by (position, profile): a round's positions meet the same
openings on every board, and a position read again costs a dict's lookup instead of an SQLite row and its JSON
(~0.9 KB each with its key: ~3.7 MB when full, then cleared)."""

TABLES = """
CREATE TABLE IF NOT EXISTS analyses (
    position   TEXT NOT NULL,          -- EPD: FEN without move counters
    profile    TEXT NOT NULL,          -- EngineProfile.name
    score      INTEGER NOT NULL,       -- White's view, centipawns, mates at ±3900
    candidates TEXT NOT NULL,          -- JSON of PositionAnalysis
    worker     TEXT,                   -- the bus worker that computed it; NULL: this machine's engines
    PRIMARY KEY (position, profile)
) WITHOUT ROWID;
"""


def migrate(db: sqlite3.Connection) -> None:
    """A cache made before workers were named gains the (nullable) ``worker`` column."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(analyses)")}
    if "worker" not in columns:
        db.execute("ALTER TABLE analyses ADD COLUMN worker TEXT")


class Analyses:
    """The position cache of one store.

    >>> cache = Analyses(Engine(":memory:", schema=TABLES))
    >>> cache.put("8/8/8/8/8/8/8/K6k w - -", "p", PositionAnalysis(0, (("a1a2", 0),), 12, 100), worker="w1")
    >>> cache.get("8/8/8/8/8/8/8/K6k w - -", "p").depth, cache.count(), cache.by_worker()
    (12, 1, {'w1': 1})
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._kept = Memo[tuple[str, str], PositionAnalysis](KEPT)
        """The analyses read or written last (:data:`KEPT`): what this store holds for them, whoever writes
        through this object (:meth:`put` replaces, :meth:`forget_worker` clears); another process that deletes
        rows meanwhile is not seen (``livemon worker --forget`` is followed by a restart)."""

    def get(self, position: str, profile: str) -> PositionAnalysis | None:
        """The analysis of ``position`` under ``profile``, or None (a miss is not kept: a later search fills it).

        >>> cache = Analyses(Engine(":memory:", schema=TABLES))
        >>> cache.put("8/8/8/8/8/8/8/K6k w - -", "p", PositionAnalysis(0, (("a1a2", 0),), 12, 100))
        >>> cache._kept.clear(); a = cache.get("8/8/8/8/8/8/8/K6k w - -", "p")
        >>> a is cache.get("8/8/8/8/8/8/8/K6k w - -", "p"), cache.get("8/8/8/8/8/8/8/K6k b - -", "p")
        (True, None)
        """
        key = (position, profile)
        found = self._kept.get(key)
        if found is not None:
            return found
        row = self.engine.db.execute(
            "SELECT candidates FROM analyses WHERE position = ? AND profile = ?", key
        ).fetchone()
        return self._kept.put(key, PositionAnalysis.from_json(row[0])) if row else None

    def get_many(self, positions: Iterable[str], profile: str) -> dict[str, PositionAnalysis]:
        """Cached analyses of many positions at once (missing ones are absent)."""
        found: dict[str, PositionAnalysis] = {}
        keys = list(dict.fromkeys(positions))
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for position, text in self.engine.db.execute(
                f"SELECT position, candidates FROM analyses WHERE profile = ? AND position IN ({marks})",
                (profile, *chunk),
            ):
                found[position] = PositionAnalysis.from_json(text)
        return found

    def put(self, position: str, profile: str, analysis: PositionAnalysis, worker: str | None = None) -> None:
        """Cache an analysis; ``worker`` names the bus worker that computed it (None: a local engine)."""
        self._kept.put((position, profile), analysis)
        self.engine.write(((
            "INSERT OR REPLACE INTO analyses (position, profile, score, candidates, worker) VALUES (?, ?, ?, ?, ?)",
            (position, profile, analysis.score, analysis.to_json(), worker),
        ),))

    def forget_worker(self, worker: str) -> list[tuple[str, str]]:
        """Delete every cached analysis computed by ``worker`` (they are searched again), those still held in
        a batch or by a refusing disk included; their ``(position, profile)``.

        >>> cache = Analyses(Engine(":memory:", schema=TABLES))
        >>> cache.put("8/8/8/8/8/8/8/K6k w - -", "p", PositionAnalysis(0, (("a1a2", 0),), 12, 100), worker="w1")
        >>> cache.forget_worker("w1"), cache.count()
        ([('8/8/8/8/8/8/8/K6k w - -', 'p')], 0)
        """
        self.engine.commit_batch()
        self.engine.flush(force=True)
        self._kept.clear()
        db = self.engine.db
        rows = [(position, profile) for position, profile in db.execute(
            "SELECT position, profile FROM analyses WHERE worker = ?", (worker,))]
        db.execute("DELETE FROM analyses WHERE worker = ?", (worker,))
        return rows

    def by_worker(self) -> dict[str | None, int]:
        """Cached analyses per worker name (None: this machine's engines)."""
        return dict(self.engine.db.execute("SELECT worker, COUNT(*) FROM analyses GROUP BY worker ORDER BY worker"))

    def count(self, profile: str | None = None) -> int:
        db = self.engine.db
        if profile is None:
            return int(db.execute("SELECT COUNT(*) FROM analyses").fetchone()[0])
        return int(db.execute("SELECT COUNT(*) FROM analyses WHERE profile = ?", (profile,)).fetchone()[0])

    def profiles(self) -> Iterator[str]:
        """The profiles of the cached analyses, by name."""
        for (name,) in self.engine.db.execute("SELECT DISTINCT profile FROM analyses ORDER BY profile"):
            yield name
