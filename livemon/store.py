"""The SQLite store: the position cache and everything a restart must not lose.

One file, WAL mode, so that readers (``livemon export``/``status``) never block
the writer. The position cache is keyed by (position without move counters,
engine profile name): a position analysed once under a profile is never
analysed again, by ``analyse`` or by the live monitor.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

from livemon.engine import PositionAnalysis

SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses (
    position   TEXT NOT NULL,          -- EPD: FEN without move counters
    profile    TEXT NOT NULL,          -- EngineProfile.name
    score      INTEGER NOT NULL,       -- White's view, centipawns, mates at ±3900
    candidates TEXT NOT NULL,          -- JSON of PositionAnalysis
    PRIMARY KEY (position, profile)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS calibrations (
    profile         TEXT PRIMARY KEY,  -- EngineProfile.name
    engine_strength REAL,              -- r̄_e (Algorithm 3), Elo
    c_calibration   TEXT               -- JSON of rating.screening.Calibration, if fitted
);
"""


class Store:
    """A livemon SQLite database (created on first use)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- position cache -------------------------------------------------------

    def get_analysis(self, position: str, profile: str) -> PositionAnalysis | None:
        row = self.db.execute(
            "SELECT candidates FROM analyses WHERE position = ? AND profile = ?", (position, profile)
        ).fetchone()
        return PositionAnalysis.from_json(row[0]) if row else None

    def get_analyses(self, positions: Iterable[str], profile: str) -> dict[str, PositionAnalysis]:
        """Cached analyses of many positions at once (missing ones are absent)."""
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

    def put_analysis(self, position: str, profile: str, analysis: PositionAnalysis) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO analyses (position, profile, score, candidates) VALUES (?, ?, ?, ?)",
            (position, profile, analysis.score, analysis.to_json()),
        )

    def count_analyses(self, profile: str | None = None) -> int:
        if profile is None:
            return self.db.execute("SELECT COUNT(*) FROM analyses").fetchone()[0]
        return self.db.execute("SELECT COUNT(*) FROM analyses WHERE profile = ?", (profile,)).fetchone()[0]

    def iter_profiles(self) -> Iterator[str]:
        for (name,) in self.db.execute("SELECT DISTINCT profile FROM analyses ORDER BY profile"):
            yield name

    # -- calibrations ---------------------------------------------------------

    def get_engine_strength(self, profile: str) -> float | None:
        row = self.db.execute("SELECT engine_strength FROM calibrations WHERE profile = ?", (profile,)).fetchone()
        return row[0] if row else None

    def put_engine_strength(self, profile: str, strength: float) -> None:
        self.db.execute(
            "INSERT INTO calibrations (profile, engine_strength) VALUES (?, ?) "
            "ON CONFLICT(profile) DO UPDATE SET engine_strength = excluded.engine_strength",
            (profile, strength),
        )
