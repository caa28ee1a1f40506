"""Calibration of an engine profile: r̄_e and the map between Elo and c (spec §1, §2).

c is engine-profile specific (a deeper search makes every player look less
engine-like), so a profile needs its own map from a rating to the c expected
of a player of that rating, fitted on games of rated players. The map is used
both ways: Elo → c_r for fair-play screening (§3), c̄ → Elo to show the
apparent skill on the Elo scale. :class:`ProfileCalibration` bundles it with
the engine strength r̄_e of Algorithm 3, the two numbers a profile carries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Calibration:
    """Linear map between Elo and mean c for one engine profile: c̄ = a + b·Elo.

    A simple least-squares line over rated players' (Elo, c̄) pairs. It is
    unreliable with few players (< ~20), a small Elo spread (< ~200), or few
    moves per player (noisy c̄ flattens b — regression dilution), and it
    should not be used far outside the fitted Elo range (``elo_min``..
    ``elo_max``). ``r2`` and ``residual_sd`` say how well the line fits.

    >>> cal = Calibration.fit([(1500, 0.5), (2000, 1.0), (2500, 1.5)], profile="sf-d14")
    >>> round(cal.c_for_rating(2200), 6), round(cal.rating_for_c(0.75), 6)
    (1.2, 1750.0)
    >>> Calibration.from_dict(cal.to_dict()) == cal
    True
    """

    a: float
    b: float
    n: int
    elo_min: float
    elo_max: float
    r2: float
    residual_sd: float
    profile: str = ""

    @classmethod
    def fit(cls, pairs: Iterable[tuple[float, float]], profile: str = "") -> Calibration:
        """Least-squares fit of c̄ on Elo; ValueError with < 2 players or no Elo spread."""
        arr = np.asarray(list(pairs), dtype=float).reshape(-1, 2)
        if arr.shape[0] < 2:
            raise ValueError(f"Calibration.fit: need at least 2 rated players, got {arr.shape[0]}")
        elo, c = arr[:, 0], arr[:, 1]
        if not np.all(np.isfinite(arr)):
            raise ValueError("Calibration.fit: Elo and c must be finite")
        de = elo - elo.mean()
        sxx = float(de @ de)
        if sxx <= 0.0:
            raise ValueError("Calibration.fit: all players have the same Elo")
        b = float(de @ (c - c.mean())) / sxx
        a = float(c.mean()) - b * float(elo.mean())
        resid = c - (a + b * elo)
        sst = float(((c - c.mean()) ** 2).sum())
        r2 = 1.0 - float(resid @ resid) / sst if sst > 0 else 1.0
        dof = max(arr.shape[0] - 2, 1)
        return cls(a, b, int(arr.shape[0]), float(elo.min()), float(elo.max()), r2,
                   math.sqrt(float(resid @ resid) / dof), profile)

    def c_for_rating(self, elo: float) -> float:
        """c_r expected of a player rated ``elo`` (not clipped to the prior range)."""
        return self.a + self.b * float(elo)

    def rating_for_c(self, c: float) -> float:
        """Elo whose expected c is ``c``; ValueError when the slope is 0."""
        if self.b == 0.0:
            raise ValueError("Calibration.rating_for_c: slope is 0, c does not determine Elo")
        return (float(c) - self.a) / self.b

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        """Inverse of :meth:`to_dict`."""
        return cls(float(d["a"]), float(d["b"]), int(d["n"]), float(d["elo_min"]), float(d["elo_max"]),
                   float(d["r2"]), float(d["residual_sd"]), str(d.get("profile", "")))


@dataclass(frozen=True)
class ProfileCalibration:
    """What is known of one engine profile: r̄_e (Elo) and the Elo ↔ c map; either may be missing.

    >>> pc = ProfileCalibration("sf d12", engine_strength=2950.0)
    >>> ProfileCalibration.from_dict(pc.to_dict()) == pc
    True
    """

    profile: str
    engine_strength: float | None = None
    c_map: Calibration | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {"profile": self.profile, "engine_strength": self.engine_strength,
                "c_map": None if self.c_map is None else self.c_map.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProfileCalibration:
        """Inverse of :meth:`to_dict`."""
        c_map = d.get("c_map")
        strength = d.get("engine_strength")
        return cls(str(d["profile"]), None if strength is None else float(strength),
                   None if c_map is None else Calibration.from_dict(c_map))
