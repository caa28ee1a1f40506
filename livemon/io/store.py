"""The SQLite store: the position cache and everything a restart must not lose.

One file, WAL mode, so that readers (``livemon export``/``status``) never block
the writer. The position cache is keyed by (position without move counters,
engine profile name): a position analysed once under a profile is never
analysed again, by ``analyse`` or by the live monitor.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterable, Iterator

from livemon.io.engine import PositionAnalysis
from livemon.live.messages import Alert, GameInfo, MoveEvent
from livemon.rating.calibration import Calibration, ProfileCalibration

SHIPPED_CALIBRATIONS = Path(__file__).parents[1] / "data" / "calibrations.json"

SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses (
    position   TEXT NOT NULL,          -- EPD: FEN without move counters
    profile    TEXT NOT NULL,          -- EngineProfile.name
    score      INTEGER NOT NULL,       -- White's view, centipawns, mates at ±3900
    candidates TEXT NOT NULL,          -- JSON of PositionAnalysis
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


def shipped_calibrations() -> dict[str, ProfileCalibration]:
    """Calibrations shipped with livemon (``livemon/data/calibrations.json``), by profile name."""
    try:
        table = json.loads(SHIPPED_CALIBRATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: ProfileCalibration.from_dict(d) for name, d in table.items()}


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

    def get_any_analysis(self, position: str, preferred_profile: str) -> PositionAnalysis | None:
        """The analysis under ``preferred_profile``, else under any profile (e.g. a lowered limit)."""
        row = self.db.execute(
            "SELECT candidates FROM analyses WHERE position = ? ORDER BY (profile = ?) DESC, profile LIMIT 1",
            (position, preferred_profile),
        ).fetchone()
        return PositionAnalysis.from_json(row[0]) if row else None

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

    def get_calibration(self, profile: str) -> ProfileCalibration | None:
        """The profile's calibration: stored by ``livemon calibrate``, else the one shipped with livemon."""
        row = self.db.execute(
            "SELECT engine_strength, c_calibration FROM calibrations WHERE profile = ?", (profile,)
        ).fetchone()
        if row is None:
            return shipped_calibrations().get(profile)
        c_map = None if row[1] is None else Calibration.from_dict(json.loads(row[1]))
        perf = self.db.execute("SELECT calibration FROM performance_calibrations WHERE profile = ?", (profile,)).fetchone()
        return ProfileCalibration(profile, row[0], c_map, None if perf is None else Calibration.from_dict(json.loads(perf[0])))

    def put_calibration(self, calibration: ProfileCalibration) -> None:
        """Store (replace) a profile's calibration."""
        c_map = None if calibration.c_map is None else json.dumps(calibration.c_map.to_dict())
        self.db.execute(
            "INSERT OR REPLACE INTO calibrations (profile, engine_strength, c_calibration) VALUES (?, ?, ?)",
            (calibration.profile, calibration.engine_strength, c_map),
        )
        if calibration.performance is None:
            self.db.execute("DELETE FROM performance_calibrations WHERE profile = ?", (calibration.profile,))
        else:
            self.db.execute("INSERT OR REPLACE INTO performance_calibrations (profile, calibration) VALUES (?, ?)",
                            (calibration.profile, json.dumps(calibration.performance.to_dict())))

    def get_engine_strength(self, profile: str) -> float | None:
        calibration = self.get_calibration(profile)
        return None if calibration is None else calibration.engine_strength

    def put_engine_strength(self, profile: str, strength: float) -> None:
        old = self.get_calibration(profile)
        self.put_calibration(ProfileCalibration(profile, strength, None if old is None else old.c_map,
                                                None if old is None else old.performance))

    # -- live games -----------------------------------------------------------

    def put_game(self, info: GameInfo) -> None:
        """Record a game (or refresh its tags), keeping the order it was first seen in."""
        self.db.execute(
            "INSERT INTO games (game_id, seq, info) VALUES (?, (SELECT COUNT(*) FROM games), ?) "
            "ON CONFLICT(game_id) DO UPDATE SET info = excluded.info",
            (info.game_id, info.to_json()),
        )

    def put_move(self, move: MoveEvent) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO moves (game_id, ply, event) VALUES (?, ?, ?)",
            (move.game_id, move.ply, move.to_json()),
        )

    def delete_moves(self, game_id: str, from_ply: int) -> None:
        self.db.execute("DELETE FROM moves WHERE game_id = ? AND ply >= ?", (game_id, from_ply))
        self.db.execute("UPDATE games SET result = '*' WHERE game_id = ?", (game_id,))

    def put_result(self, game_id: str, result: str) -> None:
        self.db.execute("UPDATE games SET result = ? WHERE game_id = ?", (result, game_id))

    def load_games(self) -> list[tuple[GameInfo, str, list[MoveEvent]]]:
        """Every stored game in the order first seen: (info, result, moves by ply)."""
        moves: dict[str, list[MoveEvent]] = {}
        for game_id, text in self.db.execute("SELECT game_id, event FROM moves ORDER BY game_id, ply"):
            moves.setdefault(game_id, []).append(MoveEvent.from_json(text))
        return [
            (GameInfo.from_json(info), result, moves.get(game_id, []))
            for game_id, info, result in self.db.execute("SELECT game_id, info, result FROM games ORDER BY seq")
        ]

    # -- fair-play alerts (arbiters only) ---------------------------------------

    def put_alert(self, alert: Alert, level: str, raised: float) -> bool:
        """Record a raised alert; False (nothing written) when that level was already raised."""
        cur = self.db.execute(
            "INSERT OR IGNORE INTO alerts (player, event, level, raised, alert) VALUES (?, ?, ?, ?, ?)",
            (alert.player, alert.event, level, raised, alert.to_json()),
        )
        return cur.rowcount == 1

    def load_alerts(self) -> list[tuple[str, Alert]]:
        """Every raised alert, oldest first: (level, alert)."""
        return [
            (level, Alert.from_json(text))
            for level, text in self.db.execute("SELECT level, alert FROM alerts ORDER BY raised, rowid")
        ]

    # -- TTT ------------------------------------------------------------------

    def put_ttt(self, state: bytes | None, report: str) -> None:
        self.db.execute(
            "INSERT INTO ttt_state (id, state, report) VALUES (1, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET state = excluded.state, report = excluded.report",
            (state, report),
        )

    def get_ttt(self) -> tuple[bytes | None, str | None]:
        row = self.db.execute("SELECT state, report FROM ttt_state WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else (None, None)

    # -- status ---------------------------------------------------------------

    def put_status(self, status: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO status (id, status) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET status = excluded.status",
            (json.dumps(status),),
        )

    def get_status(self) -> dict[str, Any] | None:
        row = self.db.execute("SELECT status FROM status WHERE id = 1").fetchone()
        return json.loads(row[0]) if row else None
