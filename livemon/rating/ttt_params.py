"""TrueSkill Through Time parameters: one set of defaults and checks for the fit, ``livemon fit`` and the config.

Light on purpose (no numpy, no numba): :mod:`livemon.config` embeds
:class:`TTTParams` in its ``[ttt]`` table, and every command reads the config.

>>> p = TTTParams(beta=2.0, p_draw=0.5)
>>> round(p.margin, 4)
1.9077
>>> TTTParams(p_draw=1.0)
Traceback (most recent call last):
...
ValueError: p_draw: must be in (0, 1), got 1.0
>>> TTTParams(tau=float("nan"))
Traceback (most recent call last):
...
ValueError: tau: must be a finite number, not negative, got nan
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["TIME_UNITS", "MODELS", "TTTParams", "draw_margin"]

TIME_UNITS = ("day", "week", "month", "year", "round")
MODELS = ("ttt", "ttt-d")


def draw_margin(p_draw: float, beta: float) -> float:
    """ε = √2·β·Φ⁻¹((1 + p_draw)/2): two equal players draw with probability p_draw.

    >>> round(draw_margin(0.5, 1.0), 4)
    0.9539
    """
    if not 0.0 <= p_draw < 1.0:
        raise ValueError(f"p_draw: must be in [0, 1), got {p_draw!r}")
    if p_draw == 0.0:
        return 0.0
    return math.sqrt(2.0) * beta * NormalDist().inv_cdf((1.0 + p_draw) / 2.0)


@dataclass(frozen=True)
class TTTParams:
    """Model and solver parameters (β = 1 sets the scale; τ is drift sd per time unit).

    The ``[ttt]`` table of ``config.toml`` holds these keys (``max_iterations``
    is read as ``max_sweeps``), beside livemon's own (time unit, Elo scale).
    """

    mu0: float = 0.0
    """Prior mean of a player's skill at their first time step."""
    sigma0: float = 6.0
    """Prior sd of a player's skill at their first time step."""
    beta: float = 1.0
    """Performance sd: the scale of the skills (one β ≈ 200 Elo)."""
    tau: float = 0.03
    """Drift sd per time unit (the reference package's ``gamma``)."""
    p_draw: float = 0.3
    """Draw probability between equal players; sets the draw margin ε."""
    model: str = "ttt"
    """ttt or ttt-d (a draw margin per player and time step)."""
    nu0: float | None = None
    """TTT-D prior mean of a draw margin; None: the TTT margin ε of p_draw."""
    zeta0: float = 0.3
    """TTT-D prior sd of a draw margin."""
    zeta: float = 0.01
    """TTT-D drift sd of a draw margin per time unit."""
    tolerance: float = 1e-6
    """Stop when no posterior mean or sd moved more than this in a sweep."""
    max_sweeps: int = 1000
    """Most forward-backward sweeps of a fit."""
    accelerate: bool = True
    """Newton step on the slow common shift of all skills after each sweep (same fixed point, far fewer sweeps)."""
    inner_passes: int = 1
    """Passes over a time step's games per sweep when players meet more than once in it
    (1 is fastest to the same fixed point on tournament-like data)."""

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model: expected ttt or ttt-d, got {self.model!r}")
        if not 0.0 < self.p_draw < 1.0:
            raise ValueError(f"p_draw: must be in (0, 1), got {self.p_draw!r}")
        for key in ("sigma0", "beta", "zeta0", "tolerance"):
            value = getattr(self, key)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{key}: must be a finite positive number, got {value!r}")
        for key in ("tau", "zeta"):
            value = getattr(self, key)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{key}: must be a finite number, not negative, got {value!r}")
        for key in ("mu0", "nu0"):
            value = getattr(self, key)
            if value is not None and not math.isfinite(value):
                raise ValueError(f"{key}: must be a finite number, got {value!r}")
        for key in ("max_sweeps", "inner_passes"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key}: must be at least 1, got {getattr(self, key)!r}")

    @property
    def margin(self) -> float:
        """TTT draw margin ε."""
        return draw_margin(self.p_draw, self.beta)

    @property
    def margin_prior_mean(self) -> float:
        return self.margin if self.nu0 is None else float(self.nu0)
