"""Results as FIDE counts them: performance rating (TPR) and rating change.

From the FIDE Rating Regulations (effective 1 July 2014 onwards, the tables unchanged since):

- **table 8.1(a)**, fractional score p → rating difference dp (:data:`DP_TABLE`); the performance
  rating of a result is ``Ra + dp(p)``, ``Ra`` the mean rating of the opponents (as the title
  regulations compute a norm's performance: p rounded to two decimals, the whole table used);
- **table 8.1(b)**, rating difference D → scoring probability PD (:data:`PD_TABLE`); the rating change
  of a game is ``K·(W − PD)``, a difference of more than 400 points counted as 400 (the 400-point rule);
- **K** (:func:`k_factor`): 40 for a player new to the list (until 30 games) and a player under 18
  rated below 2300, 20 while a player's rating stays under 2400, 10 once a published rating reached
  2400 (for good). Age and games played are not in a PGN's tags: a player rated 2400 or more is
  certainly on K = 10; below that the caller's K (default 20) is taken.

Games against an opponent without a rating are not rated (no PD, no Ra): they count in the score
and games played, not in the TPR or the rating change.

>>> dp(0.5), dp(0.75), dp(0.25), dp(1.0), dp(0.0)
(0, 193, -193, 800, -800)
>>> performance_rating([2700, 2600], 1.5)  # Ra 2650, p .75: dp 193
2843
>>> round(rating_change(2700, [(2600, 1.0), (2800, 0.5)], 10), 1)  # 10·(1 − .64) + 10·(.5 − .36)
5.0
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["DP_TABLE", "PD_TABLE", "RATING_CAP", "dp", "expected_score", "k_factor", "performance_rating",
           "rating_change"]

DP_TABLE: dict[int, int] = {
    100: 800, 99: 677, 98: 589, 97: 538, 96: 501, 95: 470, 94: 444, 93: 422, 92: 401, 91: 383,
    90: 366, 89: 351, 88: 336, 87: 322, 86: 309, 85: 296, 84: 284, 83: 273, 82: 262, 81: 251,
    80: 240, 79: 230, 78: 220, 77: 211, 76: 202, 75: 193, 74: 184, 73: 175, 72: 166, 71: 158,
    70: 149, 69: 141, 68: 133, 67: 125, 66: 117, 65: 110, 64: 102, 63: 95, 62: 87, 61: 80,
    60: 72, 59: 65, 58: 57, 57: 50, 56: 43, 55: 36, 54: 29, 53: 21, 52: 14, 51: 7, 50: 0,
}
"""FIDE table 8.1(a): p in hundredths (0.50..1.00) → dp; below 0.50, dp(p) = −dp(1 − p)."""

_PD_UPPER = (3, 10, 17, 25, 32, 39, 46, 53, 61, 68, 76, 83, 91, 98, 106, 113, 121, 129, 137, 145, 153, 162, 170,
             179, 188, 197, 206, 215, 225, 235, 245, 256, 267, 278, 290, 302, 315, 328, 344, 357, 374, 391, 411,
             432, 456, 484, 517, 559, 619, 735)
PD_TABLE: tuple[tuple[int, int, int], ...] = tuple(
    (0 if i == 0 else _PD_UPPER[i - 1] + 1, upper, 50 + i) for i, upper in enumerate(_PD_UPPER))
"""FIDE table 8.1(b): ``(D from, D to, PD of the higher-rated in hundredths)``; past 735, 1.00."""

RATING_CAP = 400
"""The 400-point rule: a larger rating difference counts as 400."""


def _hundredths(p: float) -> int:
    """p rounded to two decimals, half up (0.125 → 13)."""
    return int((Decimal(repr(p)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def dp(p: float) -> int:
    """FIDE table 8.1(a): the rating difference of a fractional score ``p`` (rounded to hundredths).

    >>> dp(0.666), dp(0.333), dp(0.9)
    (125, -125, 366)
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a fractional score is in 0..1, not {p!r}")
    h = _hundredths(p)
    return DP_TABLE[h] if h >= 50 else -DP_TABLE[100 - h]


def expected_score(rating: float, opponent: float) -> float:
    """FIDE table 8.1(b): the scoring probability PD against ``opponent``, the difference capped at 400.

    >>> expected_score(2700, 2700), expected_score(2700, 2600), expected_score(2600, 2700)
    (0.5, 0.64, 0.36)
    >>> expected_score(2900, 2000), expected_score(2000, 2900)  # 400-point rule: as a difference of 400
    (0.92, 0.08)
    """
    d = rating - opponent
    capped = min(abs(d), RATING_CAP)
    steps = int(capped)  # the table is in whole points
    i = bisect.bisect_left(_PD_UPPER, steps)
    high = 100 if i == len(_PD_UPPER) else 50 + i
    return (high if d >= 0 else 100 - high) / 100


def k_factor(rating: int | None, default: float = 20.0) -> float:
    """K for a player of published ``rating``: 10 at 2400 or more (FIDE: K is 10 once a published rating
    reached 2400), else ``default`` (20 for most adults; 40 for players new to the list and juniors below
    2300, which a PGN's tags do not say).

    >>> k_factor(2750), k_factor(2200), k_factor(2200, 40)
    (10.0, 20.0, 40.0)
    """
    if rating is not None and rating >= 2400:
        return 10.0
    return float(default)


def performance_rating(opponents: Sequence[float], score: float) -> int | None:
    """The performance rating ``Ra + dp(p)`` of ``score`` points against ``opponents`` (their ratings):
    Ra rounded to a whole point as FIDE does; None without games.

    >>> performance_rating([2500, 2600, 2700], 3.0), performance_rating([2500, 2600, 2700], 0.0)
    (3400, 1800)
    >>> performance_rating([], 0.0) is None
    True
    """
    if not opponents:
        return None
    n = len(opponents)
    total = sum(opponents)
    if float(total).is_integer() and float(2 * score).is_integer():  # whole ratings, half points: exact in integers
        ra = (2 * int(total) + n) // (2 * n)  # the mean, rounded half up
        h = (100 * int(2 * score) + n) // (2 * n)  # p in hundredths, rounded half up
        return ra + (DP_TABLE[h] if h >= 50 else -DP_TABLE[100 - h])
    ra = int(Decimal(repr(total / n)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return ra + dp(score / n)


def rating_change(rating: float, games: Iterable[tuple[float, float]], k: float) -> float:
    """The rating change ``Σ K·(W − PD)`` over ``games`` of ``(opponent rating, points)``.

    >>> round(rating_change(2000, [(2500, 1.0)], 20), 6)  # 400-point rule: PD 0.08
    18.4
    """
    return sum(k * (points - expected_score(rating, opponent)) for opponent, points in games)
