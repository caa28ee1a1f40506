"""The standard normal distribution's cdf Φ and quantile Φ⁻¹ for scalars, from the standard library.

The models need them one number at a time (an Elo difference from an expected score, a z's tail); the
standard library computes both to double precision (``math.erfc``, accurate in both tails, and
``statistics.NormalDist.inv_cdf``, Wichura's algorithm AS 241), so no process pays scipy's import (about
0.4 s of CPU) for them.

>>> cdf(0.0), round(cdf(1.959963984540054), 6), cdf(-10.0) > 0.0
(0.5, 0.975, True)
>>> quantile(0.5), round(quantile(0.975), 6), quantile(0.0), quantile(1.0)
(0.0, 1.959964, -inf, inf)
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["cdf", "quantile"]

_SQRT2 = math.sqrt(2.0)
_STANDARD = NormalDist()


def cdf(x: float) -> float:
    """Φ(x) = P(Z ≤ x); ``erfc`` keeps the lower tail's relative precision (1 + erf would cancel to 0)."""
    return 0.5 * math.erfc(-x / _SQRT2)


def quantile(p: float) -> float:
    """Φ⁻¹(p), ±inf at 1 and 0; NaN outside [0, 1] or for NaN (as scipy's ``ndtri``)."""
    if 0.0 < p < 1.0:
        return _STANDARD.inv_cdf(p)
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return math.nan
