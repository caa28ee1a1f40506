"""Results as FIDE counts them: performance rating (TPR) and rating change, by the rules in force on the game's date.

The FIDE Rating Regulations (standard chess) by the chapter in force on a game's date; the articles
cited are those of the chapter effective from 1 March 2024 (its numbering matches the chapter of
1 January 2022) unless a date says otherwise:

- **table 8.1.1**, fractional score p → rating difference dp (:data:`DP_TABLE`); the performance
  rating of a result is ``Ra + dp(p)``, ``Ra`` the mean rating of the opponents (as the Title
  Regulations §1.4.6–§1.4.9 compute a norm's performance: Ra and p rounded half up, the whole
  table used). The table is the same in every chapter since 1 July 2014, and the 400-point rule is
  a rule of the rating *change* (§8.3.1), not of the performance: the TPR has no date-dependent rule.
- **table 8.1.2**, rating difference D → scoring probability PD (:data:`PD_TABLE`); the rating change
  is ``Σ K·(W − PD)`` (§8.3.2), with the difference D of each game (§8.3.1) taken by the rules of
  its date (:data:`RULES`, :func:`rules_on`):

  ===========================  ===============================================================
  games played                 the rating difference D (§8.3.1)
  ===========================  ===============================================================
  before 1 July 2009           more than 350 counted as 350
  1 July 2009 – 31 Dec 2021    more than 400 counted as 400, in every game
  1 Jan 2022 – 29 Feb 2024     more than 400 counted as 400 **once per event**: "In any
                               tournament, a player may benefit from only one upgrade under
                               this rule, for the game in which the rating difference is
                               greatest" (chapter of 1 January 2022, §8.3.1); the event's
                               other games use the real difference
  1 Mar 2024 – 30 Sep 2025     more than 400 counted as 400, in every game (chapter of
                               1 March 2024: FIDE's Qualification Commission announced that the
                               once-per-event limitation was abolished)
  from 1 October 2025          more than 400 counted as 400 for players rated below 2650; for
                               players rated 2650 and above the real difference, in all cases
                               (§8.3.1 as amended effective 1 October 2025)
  ===========================  ===============================================================

- **K** (:func:`k_factor`, §8.3.3; §8.56 of the chapter of 1 July 2014): from 1 July 2014, 40 for
  a player new to the list until 30 games and for a player under 18 rated below 2300, 20 while a
  rating stays under 2400, 10 once a published rating reached 2400 (for good), and K·n ≤ 700 over a
  rating period (K the largest whole number within it); before, 30 (25 before 1 July 2011) for a
  new player, 15 under 2400, 10 from 2400 (K 25 → 30 in 2011, the 350-point rule until 30 June 2009 and
  K·n ≤ 700 from 1 July 2014 are taken from secondary sources, not from the chapters' texts). Age and
  games played are not in a PGN's tags: a player
  rated 2400 or more is certainly on K = 10; below that the caller says (``junior``,
  ``rated_games``) or its K (default: the era's adult K) is taken.
- **the floor** (chapter of 1 March 2024, §7.1.2, §7.2.1): ratings under 1400 are not published;
  before 1 March 2024 the floor was 1000 (:func:`livemon.rating.scale.floor_on`).

Ratings here are published ratings as of the game's date: FIDE's own figures (a rating change is
what FIDE computes on the list of its day). Models read ratings on today's scale
(:mod:`livemon.rating.scale`).

Games against an opponent without a rating are not rated (no PD, no Ra): they count in the score
and games played, not in the TPR or the rating change.

>>> dp(0.5), dp(0.75), dp(0.25), dp(1.0), dp(0.0)
(0, 193, -193, 800, -800)
>>> performance_rating([2700, 2600], 1.5)  # Ra 2650, p .75: dp 193
2843
>>> round(rating_change(2700, [(2600, 1.0), (2800, 0.5)], 10), 1)  # 10·(1 − .64) + 10·(.5 − .36)
5.0

A 2700 beating a 2200, before and after 1 October 2025 (K 10):

>>> round(rating_change(2700, [(2200, 1.0)], 10, datetime.date(2025, 9, 1)), 2)  # D counted as 400: PD .92
0.8
>>> round(rating_change(2700, [(2200, 1.0)], 10, datetime.date(2025, 11, 15)), 2)  # D 500: PD .96
0.4
"""

from __future__ import annotations

import bisect
import datetime
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["DP_TABLE", "PD_TABLE", "RATING_CAP", "RULES", "Rules", "dp", "expected_score", "k_factor",
           "performance_rating", "rating_change", "rules_on"]

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


@dataclass(frozen=True)
class Rules:
    """FIDE's rating rules of standard chess from ``since`` on (see the module's table)."""

    since: datetime.date
    """The first day of games played under these rules."""
    regulation: str
    """The chapter and article, for a reader who checks."""
    cap: int
    """A rating difference of more than ``cap`` counts as ``cap`` (§8.3.1)."""
    cap_once_per_event: bool = False
    """The cap benefits a player once per event, in the game of the greatest difference."""
    uncapped_from: int | None = None
    """A player rated this or more plays with the real difference (from 1 October 2025: 2650)."""
    k_new: float = 40.0
    """K of a player new to the list (under 30 rated games)."""
    k_adult: float = 20.0
    """K while a rating stays under 2400."""
    k_junior: float | None = 40.0
    """K of a player under 18 rated below 2300 (None: no such rule)."""
    period_kn: int | None = 700
    """K·n over a rating period at most this (None: no such rule)."""


RULES: tuple[Rules, ...] = (
    Rules(datetime.date(1971, 1, 1), "FIDE Rating Regulations before 1 July 2009: the 350-point rule", 350,
          k_new=25.0, k_adult=15.0, k_junior=None, period_kn=None),
    Rules(datetime.date(2009, 7, 1), "FIDE Rating Regulations from 1 July 2009: the 400-point rule", 400,
          k_new=25.0, k_adult=15.0, k_junior=None, period_kn=None),
    Rules(datetime.date(2011, 7, 1), "FIDE Rating Regulations from 1 July 2011: K 30 for new players", 400,
          k_new=30.0, k_adult=15.0, k_junior=None, period_kn=None),
    Rules(datetime.date(2014, 7, 1), "FIDE Rating Regulations effective 1 July 2014 (§8.56: K 40/20/10) and "
          "1 July 2017", 400),
    Rules(datetime.date(2022, 1, 1), "FIDE Rating Regulations effective 1 January 2022, §8.3.1: the 400-point "
          "rule once per tournament", 400, cap_once_per_event=True),
    Rules(datetime.date(2024, 3, 1), "FIDE Rating Regulations effective 1 March 2024, §8.3.1: the 400-point rule "
          "in every game", 400),
    Rules(datetime.date(2025, 10, 1), "FIDE Rating Regulations effective 1 March 2024, §8.3.1 as amended from "
          "1 October 2025: no cap for players rated 2650 and above", 400, uncapped_from=2650),
)
"""FIDE's rules by date, oldest first; :func:`rules_on` picks a date's."""


def rules_on(played: datetime.date | None) -> Rules:
    """The rules in force on ``played``; today's when the date is unknown (None) — the caller says so.
    A date before FIDE's first list (1971) gets the oldest rules here.

    >>> rules_on(datetime.date(2023, 6, 1)).cap_once_per_event, rules_on(datetime.date(2025, 10, 1)).uncapped_from
    (True, 2650)
    >>> rules_on(None) is RULES[-1], rules_on(datetime.date(1950, 1, 1)) is RULES[0]
    (True, True)
    """
    if played is None:
        return RULES[-1]
    i = bisect.bisect_right([r.since for r in RULES], played) - 1
    return RULES[max(i, 0)]


def _hundredths(p: float) -> int:
    """p rounded to two decimals, half up (0.125 → 13)."""
    return int((Decimal(repr(p)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def dp(p: float) -> int:
    """FIDE table 8.1.1: the rating difference of a fractional score ``p`` (rounded to hundredths).

    >>> dp(0.666), dp(0.333), dp(0.9)
    (125, -125, 366)
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a fractional score is in 0..1, not {p!r}")
    h = _hundredths(p)
    return DP_TABLE[h] if h >= 50 else -DP_TABLE[100 - h]


def _pd(d: float) -> float:
    """Table 8.1.2: PD of a player ``d`` points above the opponent (negative: below), no cap."""
    steps = int(abs(d))  # the table is in whole points
    i = bisect.bisect_left(_PD_UPPER, steps)
    high = 100 if i == len(_PD_UPPER) else 50 + i
    return (high if d >= 0 else 100 - high) / 100


def _capped(rating: float, d: float, rules: Rules) -> bool:
    """Whether the cap of ``rules`` applies to a player rated ``rating`` at a difference ``d``."""
    return abs(d) > rules.cap and (rules.uncapped_from is None or rating < rules.uncapped_from)


def expected_score(rating: float, opponent: float, played: datetime.date | None = None, *,
                   cap: bool = True) -> float:
    """FIDE table 8.1.2: the scoring probability PD against ``opponent``, the difference D taken by the rules
    in force on ``played`` (today's when None). ``cap=False``: the real difference (an event's further games
    when the cap benefits a player once per event).

    >>> expected_score(2700, 2700), expected_score(2700, 2600), expected_score(2600, 2700)
    (0.5, 0.64, 0.36)
    >>> expected_score(2600, 1700), expected_score(1700, 2600)  # 400-point rule: as a difference of 400
    (0.92, 0.08)
    >>> expected_score(2700, 2200, datetime.date(2025, 9, 30)), expected_score(2700, 2200, datetime.date(2025, 10, 1))
    (0.92, 0.96)
    >>> expected_score(2000, 2380, datetime.date(2005, 1, 1))  # the 350-point rule
    0.11
    """
    d = rating - opponent
    rules = rules_on(played)
    if cap and _capped(rating, d, rules):
        d = math.copysign(rules.cap, d)
    return _pd(d)


def k_factor(rating: int | None, default: float | None = None, *, played: datetime.date | None = None,
             junior: bool | None = None, rated_games: int | None = None, reached_2400: bool | None = None,
             period_games: int | None = None) -> float:
    """K (§8.3.3) for a player of published ``rating`` on ``played`` (today's rules when None): 10 at 2400 or
    more or once a published rating reached 2400 (``reached_2400``); the new player's K under 30 rated games
    (``rated_games``); 40 for a player under 18 (``junior``) rated below 2300, from 1 July 2014; else
    ``default`` (a caller's K for the players below 2400 whose age and games a PGN does not say), else the
    era's adult K (20; 15 before 1 July 2014). ``period_games``: the player's rated games in the rating
    period, K lowered so that K·n ≤ 700 (from 1 July 2014).

    >>> k_factor(2750), k_factor(2200), k_factor(2200, 40)
    (10.0, 20.0, 40.0)
    >>> k_factor(2200, junior=True), k_factor(2350, junior=True), k_factor(1900, rated_games=12)
    (40.0, 20.0, 40.0)
    >>> k_factor(2200, played=datetime.date(2013, 5, 1)), k_factor(2200, junior=True, played=datetime.date(2013, 5, 1))
    (15.0, 15.0)
    >>> k_factor(1900, rated_games=12, played=datetime.date(2010, 1, 1)), k_factor(2100, junior=True, period_games=20)
    (25.0, 35.0)
    """
    rules = rules_on(played)
    if reached_2400 or (rating is not None and rating >= 2400):
        k = 10.0
    elif rated_games is not None and rated_games < 30:
        k = rules.k_new
    elif junior and rules.k_junior is not None and rating is not None and rating < 2300:
        k = rules.k_junior
    elif default is not None:
        k = float(default)
    else:
        k = rules.k_adult
    if period_games and rules.period_kn is not None and k * period_games > rules.period_kn:
        k = float(rules.period_kn // period_games)
    return float(k)


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


RatedGame = tuple[float, float] | tuple[float, float, datetime.date | None]
"""``(opponent's rating, points)``, or with the game's date (which then wins over the event's)."""


def rating_change(rating: float, games: Iterable[RatedGame], k: float, played: datetime.date | None = None) -> float:
    """The rating change ``Σ K·(W − PD)`` (§8.3.2) of one event's ``games``, each game's D by the rules of its
    date (the game's own, else ``played``, else today's). Under the rules of 1 January 2022 – 29 February
    2024 the 400-point rule benefits the player once in the event: in the game of the greatest difference;
    the other games use the real difference.

    >>> round(rating_change(2000, [(2500, 1.0)], 20), 6)  # 400-point rule: PD 0.08
    18.4
    >>> games = [(1500, 1.0), (1450, 1.0)]  # in 2023: D 550 counted as 400 (PD .92), D 500 real (PD .96)
    >>> round(rating_change(2000, games, 20, datetime.date(2023, 5, 1)), 2), round(rating_change(2000, games, 20), 2)
    (2.4, 3.2)
    """
    rows = [(float(g[0]), float(g[1]), g[2] if len(g) > 2 else played) for g in games]
    once: int | None = None  # the one game of the event whose difference the cap may lower
    for i, (opponent, _, when) in enumerate(rows):
        rules = rules_on(when)
        d = rating - opponent
        if rules.cap_once_per_event and _capped(rating, d, rules):
            if once is None or abs(rating - rows[once][0]) < abs(d):
                once = i
    total = 0.0
    for i, (opponent, points, when) in enumerate(rows):
        cap = not rules_on(when).cap_once_per_event or once == i
        total += k * (points - expected_score(rating, opponent, when, cap=cap))
    return total
