"""A profile's calibration (tables ``calibrations`` and ``performance_calibrations``): stored by
``livemon calibrate``, else the one shipped with livemon (``livemon/data/calibrations.json``).

The two tables are one value (:class:`~livemon.rating.calibration.ProfileCalibration`), replaced in one
transaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from livemon.io.store.engine import Engine, Statement

if TYPE_CHECKING:  # imported when used: scipy is slow to import, and readers such as `status` never need it
    from livemon.rating.calibration import ProfileCalibration

SHIPPED_CALIBRATIONS = Path(__file__).parents[2] / "data" / "calibrations.json"

TABLES = """
CREATE TABLE IF NOT EXISTS calibrations (
    profile         TEXT PRIMARY KEY,  -- EngineProfile.name
    engine_strength REAL,              -- r̄_e (Algorithm 3), Elo
    c_calibration   TEXT               -- JSON of rating.calibration.Calibration, if fitted
);
CREATE TABLE IF NOT EXISTS performance_calibrations (
    profile     TEXT PRIMARY KEY,      -- EngineProfile.name
    calibration TEXT NOT NULL          -- JSON of rating.calibration.Calibration on every non-forced move
);
"""


def shipped_calibrations() -> dict[str, ProfileCalibration]:
    """Calibrations shipped with livemon (``livemon/data/calibrations.json``), by profile name."""
    from livemon.rating.calibration import ProfileCalibration

    try:
        table = json.loads(SHIPPED_CALIBRATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {name: ProfileCalibration.from_dict(d) for name, d in table.items()}


class Calibrations:
    """The calibrations of one store, by profile name.

    >>> cals = Calibrations(Engine(":memory:", schema=TABLES))
    >>> cals.get("no such profile") is None
    True
    >>> cals.put_engine_strength("no such profile", 2900.0)
    >>> cals.engine_strength("no such profile")
    2900.0
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def get(self, profile: str) -> ProfileCalibration | None:
        """The profile's calibration: stored by ``livemon calibrate``, else the one shipped with livemon."""
        from livemon.rating.calibration import Calibration, ProfileCalibration

        db = self.engine.db
        row = db.execute("SELECT engine_strength, c_calibration FROM calibrations WHERE profile = ?",
                         (profile,)).fetchone()
        if row is None:
            return shipped_calibrations().get(profile)
        c_map = None if row[1] is None else Calibration.from_dict(json.loads(row[1]))
        perf = db.execute("SELECT calibration FROM performance_calibrations WHERE profile = ?", (profile,)).fetchone()
        return ProfileCalibration(profile, row[0], c_map,
                                  None if perf is None else Calibration.from_dict(json.loads(perf[0])))

    def put(self, calibration: ProfileCalibration) -> None:
        """Store (replace) a profile's calibration (its performance map too), in one transaction."""
        c_map = None if calibration.c_map is None else json.dumps(calibration.c_map.to_dict())
        performance: Statement
        if calibration.performance is None:
            performance = ("DELETE FROM performance_calibrations WHERE profile = ?", (calibration.profile,))
        else:
            performance = ("INSERT OR REPLACE INTO performance_calibrations (profile, calibration) VALUES (?, ?)",
                           (calibration.profile, json.dumps(calibration.performance.to_dict())))
        self.engine.write((
            ("INSERT OR REPLACE INTO calibrations (profile, engine_strength, c_calibration) VALUES (?, ?, ?)",
             (calibration.profile, calibration.engine_strength, c_map)),
            performance,
        ))

    def engine_strength(self, profile: str) -> float | None:
        calibration = self.get(profile)
        return None if calibration is None else calibration.engine_strength

    def put_engine_strength(self, profile: str, strength: float) -> None:
        """Set a profile's engine strength, keeping its maps."""
        from livemon.rating.calibration import ProfileCalibration

        old = self.get(profile)
        self.put(ProfileCalibration(profile, strength, None if old is None else old.c_map,
                                    None if old is None else old.performance))


