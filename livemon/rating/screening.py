"""Fair-play screening against the reference agent E(c_r) (docs/models.md §3).

Regan's approach: take c_r, the c expected of a player rated r (from a
:class:`~livemon.rating.calibration.Calibration` of the engine profile). Under E(c_r) every analysed
position t predicts

* p0_t = P(best move | c_r) — a "match" is playing a move whose value equals
  v_max (ties at the top count, Regan's "equal-value" match), and
* the loss v_max − v_played, with mean μ_t = Σ_i P(m_i|c_r)(v_max − v_i) and
  variance σ²_t.

Over n positions: expected matches MM_e = Σ p0_t (variance Σ p0_t(1 − p0_t)),
expected average loss Σ μ_t / n (variance Σ σ²_t / n²). Both z-scores are
signed so that **positive = more engine-like** than the rating predicts:
z_match = (MM_o − MM_e)/sd, z_loss = (loss_e − loss_o)/sd. FIDE reads
ROI = 50 + 5z; z ≥ 2.5 supports other evidence, z ≥ 5 stands alone.

Scope is the caller's: keep one :class:`Screening` per event to raise alerts
"per player per event". Alerts are for arbiters, never a public channel.

>>> from livemon.rating.agent import Decision
>>> scr = Screening()
>>> for _ in range(40):
...     scr.add("Cheater", Decision((0.0, -0.4, -1.0), played=0), c_r=1.0)
>>> st = scr.stats("Cheater")
>>> st.positions, st.matches_observed, round(st.matches_expected, 1), round(st.z_match, 1)
(40, 40, 31.0, 3.4)
>>> round(alert_check(st, z_threshold=3.0, min_positions=30).roi, 1)
67.1
>>> alert_check(st, z_threshold=3.0, min_positions=50) is None
True
"""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.lib.stride_tricks import as_strided

from livemon.rating import normal
from livemon.rating.agent import K, Decision
from livemon.rating.scale import COMPRESSION_DATE


@dataclass(frozen=True, slots=True)
class PositionExpectation:
    """What E(c_r) predicts for one position, and what the player did."""

    p0: float  # P(a top-valued move | c_r)
    loss_mean: float  # expected loss, pawns
    loss_var: float  # variance of the loss
    matched: bool  # the played move has value v_max
    loss: float  # observed loss v_max − v_played, pawns
    dp0: float = 0.0  # ∂p0/∂c: how much more often a player of a higher c finds a top move here
    dloss: float = 0.0  # ∂(expected loss)/∂c (negative: a higher c loses less)


def position_expectation(decision: Decision, c_r: float) -> PositionExpectation:
    """Predictions of E(c_r) for one decision.

    >>> e = position_expectation(Decision((0.0, -1.0), played=1), 0.0)
    >>> e.p0, e.loss_mean, e.loss_var, e.matched, e.loss
    (0.5, 0.5, 0.25, False, 1.0)
    >>> round(e.dp0, 4), round(e.dloss, 4)  # p_i ∝ exp(−c·a_i): ∂p0/∂c = p0·ā, ∂μ/∂c = ā·μ − Σ p_i·a_i·loss_i
    (0.5995, -0.5995)
    """
    # :func:`move_probabilities` for one c, in plain floats: a handful of candidates per position, once per
    # screened move, where numpy's per-call cost would be most of the time
    # every sum is taken left to right from 0, as sum() takes it: the same floats whatever the form
    values = decision.values
    best = max(values)
    loss = [best - v for v in values]
    c = float(c_r)
    a = [math.log((x + K) / K) for x in loss]  # the distance each move's loss puts it from the top
    e = [-ai * c for ai in a]
    top_e = max(e)
    w = [math.exp(x - top_e) for x in e]
    total = sum(w)
    p0: float = 0
    mu: float = 0
    s2: float = 0
    a_mean: float = 0
    pax: float = 0
    for wi, x, ai in zip(w, loss, a):
        pi = wi / total
        if x == 0.0:
            p0 += pi
        mu += pi * x
        s2 += pi * x * x
        a_mean += pi * ai
        pax += pi * ai * x
    var = max(s2 - mu * mu, 0.0)
    played_loss = loss[decision.played]
    dloss = a_mean * mu - pax
    return PositionExpectation(p0, mu, var, played_loss == 0.0, played_loss, p0 * a_mean, dloss)


EXACT_SCALE = 2**1074
"""Every finite float is an integer multiple of 2⁻¹⁰⁷⁴: sums of them kept as integers (:func:`exact`) are exact
in any order."""


def exact(x: float) -> int:
    """``x`` in units of 2⁻¹⁰⁷⁴ (exact); ValueError/OverflowError for a NaN or an infinity.

    >>> exact(0.75) == 3 * 2**1072, exact(-0.0)
    (True, 0)
    """
    num, den = x.as_integer_ratio()
    return num << (1075 - den.bit_length())  # num * (EXACT_SCALE // den): den is a power of two


def exact_sum(x: np.ndarray) -> int:
    """Σ :func:`exact` of a float array's elements, made from their mantissas summed exponent by exponent.

    >>> x = np.array([0.1, -2.5, 1e-300, 5e-324, -0.0, 3.0e7])
    >>> exact_sum(x) == sum(map(exact, x.tolist()))
    True
    """
    if not np.isfinite(x).all():
        return sum(map(exact, x.tolist()))  # the error exact() raises
    mant, expo = np.frexp(x)  # x = mant · 2^expo, 0.5 <= |mant| < 1: mant · 2^53 is an integer
    ints = (mant * 2.0**53).astype(np.int64)
    order = np.argsort(expo, kind="stable")
    expo, ints = expo[order], ints[order]
    cuts = np.flatnonzero(np.diff(expo)) + 1
    total = 0
    for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), expo.size]):
        shift = int(expo[lo]) - 53 + 1074  # x = ints · 2^(expo - 53), in units of 2^-1074
        part = sum(ints[lo:hi].tolist())
        total += part << shift if shift >= 0 else part >> -shift  # below 0: a subnormal's low bits are 0
    return total


@dataclass(frozen=True)
class ExpectationColumns:
    """:func:`position_expectation` of many decisions at one c_r, a column per field (in their order)."""

    p0: np.ndarray
    loss_mean: np.ndarray
    loss_var: np.ndarray
    matched: np.ndarray  # bool
    loss: np.ndarray
    dp0: np.ndarray
    dloss: np.ndarray


def expectation_columns(decisions: Sequence[Decision], c_r: float) -> ExpectationColumns:
    """:func:`position_expectation` of each decision at ``c_r``: the same floats, bit for bit, made a column at a
    time for the decisions with the same number of candidates (each sum over the candidates in their order, from
    0, the logarithms and exponentials by :mod:`math` as there).

    >>> ds = [Decision((0.0, -1.0), played=1), Decision((0.3, 0.3, -0.2), played=0), Decision((0.1, -0.4), played=0)]
    >>> cols = expectation_columns(ds, 0.8)
    >>> all(position_expectation(d, 0.8) == PositionExpectation(*(getattr(cols, f)[i].item() for f in
    ...     ("p0", "loss_mean", "loss_var", "matched", "loss", "dp0", "dloss"))) for i, d in enumerate(ds))
    True
    """
    n = len(decisions)
    out = {f: np.empty(n) for f in ("p0", "loss_mean", "loss_var", "loss", "dp0", "dloss")}
    matched = np.empty(n, dtype=bool)
    groups: dict[int, list[int]] = {}
    for i, d in enumerate(decisions):
        groups.setdefault(len(d.values), []).append(i)
    c = float(c_r)
    log, exp = math.log, math.exp
    for k, idx in groups.items():
        values = np.array([decisions[i].values for i in idx], dtype=float)
        m = len(idx)
        rows = np.arange(m)
        best = values[rows, values.argmax(axis=1)]  # the first largest, as max() takes it
        loss = best[:, None] - values
        a = np.fromiter(map(log, ((loss + K) / K).ravel().tolist()), dtype=float, count=m * k).reshape(m, k)
        e = -a * c
        top = e[rows, e.argmax(axis=1)]
        w = np.fromiter(map(exp, (e - top[:, None]).ravel().tolist()), dtype=float, count=m * k).reshape(m, k)
        total = w[:, 0].copy()
        for j in range(1, k):
            total += w[:, j]
        p0, mu, s2, a_mean, pax = (np.zeros(m) for _ in range(5))
        for j in range(k):
            pi = w[:, j] / total
            x, aj = loss[:, j], a[:, j]
            p0 += np.where(x == 0.0, pi, 0.0)  # adding 0.0 to a sum >= 0 leaves it as it is
            px = pi * x
            mu += px
            s2 += px * x
            pa = pi * aj
            a_mean += pa
            pax += pa * x
        var = s2 - mu * mu
        var = np.where(0.0 > var, 0.0, var)  # max(var, 0.0): var itself unless 0.0 is larger
        played = loss[rows, np.array([decisions[i].played for i in idx], dtype=np.intp)]
        at = np.array(idx, dtype=np.intp)
        out["p0"][at], out["loss_mean"][at], out["loss_var"][at] = p0, mu, var
        out["loss"][at], out["dp0"][at], out["dloss"][at] = played, p0 * a_mean, a_mean * mu - pax
        matched[at] = played == 0.0
    return ExpectationColumns(matched=matched, **out)


def _z(diff: float, sd: float) -> float:
    """diff / sd; with sd = 0: 0 when nothing differs, ±inf otherwise."""
    if sd > 0.0:
        return diff / sd
    if diff == 0.0:
        return 0.0
    return math.copysign(math.inf, diff)


Exclusion = Literal["book", "decided"]


def screening_exclusion(decision: Decision, ply: int, book_moves: int = 0, eval_bound: float = 3.0) -> Exclusion | None:
    """Why a position is left out of screening, or None when it counts.

    "book": the move is among the first ``book_moves`` of its side (opening
    theory says nothing of the player); "decided": the best value is beyond
    ±``eval_bound`` pawns, where any move wins or loses and matching the engine
    means little. Forced moves never become a :class:`Decision` (one legal
    move: no choice); positions in an opening book are the caller's (a file).

    >>> d = Decision((0.2, -0.3), played=0)
    >>> screening_exclusion(d, ply=3, book_moves=2), screening_exclusion(d, ply=5, book_moves=2)
    ('book', None)
    >>> screening_exclusion(Decision((4.1, 3.0), played=1), ply=40)
    'decided'
    """
    if (ply + 1) // 2 <= book_moves:
        return "book"
    if abs(max(decision.values)) > eval_bound:
        return "decided"
    return None


@dataclass(frozen=True)
class ScreeningStats:
    """A player's screening numbers over their analysed positions (losses in pawns)."""

    player: str
    positions: int
    matches_observed: int
    matches_expected: float
    matches_sd: float
    z_match: float
    loss_observed: float  # average loss per position
    loss_expected: float  # expected average loss
    loss_sd: float  # sd of the average loss under E(c_r)
    z_loss: float

    @property
    def roi_match(self) -> float:
        """FIDE's screening score 50 + 5·z for the match statistic."""
        return 50.0 + 5.0 * self.z_match

    @property
    def roi_loss(self) -> float:
        """50 + 5·z for the average-loss statistic."""
        return 50.0 + 5.0 * self.z_loss

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (z may be ±inf when a variance is 0)."""
        return asdict(self)


@dataclass
class _Sums:
    n: int = 0
    matches: int = 0
    p0: float = 0.0
    p0_var: float = 0.0
    loss: float = 0.0
    loss_mean: float = 0.0
    loss_var: float = 0.0

    def update(self, e: PositionExpectation, sign: int) -> None:
        self.n += sign
        self.matches += sign * int(e.matched)
        self.p0 += sign * e.p0
        self.p0_var += sign * e.p0 * (1.0 - e.p0)
        self.loss += sign * e.loss
        self.loss_mean += sign * e.loss_mean
        self.loss_var += sign * e.loss_var


class Screening:
    """Running screening sums per player; add/remove are O(candidates).

    ``c_r`` is given per call (a rating may arrive late); :meth:`remove` must
    be called with the same ``c_r`` as the matching :meth:`add` (roll-back of a
    corrected game), and raises KeyError otherwise.
    """

    def __init__(self) -> None:
        self._sums: dict[str, _Sums] = {}
        self._added: dict[str, dict[tuple[Decision, float], int]] = {}

    def add(self, player: str, decision: Decision, c_r: float) -> None:
        """Count one analysed position of ``player`` against E(c_r)."""
        e = position_expectation(decision, c_r)
        self._sums.setdefault(player, _Sums()).update(e, +1)
        added = self._added.setdefault(player, {})
        key = (decision, float(c_r))
        added[key] = added.get(key, 0) + 1

    def remove(self, player: str, decision: Decision, c_r: float) -> None:
        """Take back a position added before with the same ``c_r``."""
        added = self._added.get(player, {})
        key = (decision, float(c_r))
        if added.get(key, 0) == 0:
            raise KeyError(f"Screening.remove: {player!r} has no such position at c_r={c_r}")
        added[key] -= 1
        if added[key] == 0:
            del added[key]
        if not added:  # reset exactly rather than leave rounding residue
            del self._added[player]
            del self._sums[player]
            return
        self._sums[player].update(position_expectation(decision, c_r), -1)

    def players(self) -> list[str]:
        """Players with at least one position."""
        return list(self._sums)

    def stats(self, player: str) -> ScreeningStats:
        """Observed vs expected matches and average loss, with z-scores (zeros when empty)."""
        s = self._sums.get(player, _Sums())
        return stats_from_sums(player, s.n, s.matches, s.p0, s.p0_var, s.loss, s.loss_mean, s.loss_var)


def stats_from_sums(
    player: str, n: int, matches: int, p0: float, p0_var: float, loss: float, loss_mean: float, loss_var: float
) -> ScreeningStats:
    """Screening numbers from the running sums (Σ over positions of each per-position term)."""
    if n <= 0:
        return ScreeningStats(player, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    m_sd = math.sqrt(max(p0_var, 0.0))
    l_sd = math.sqrt(max(loss_var, 0.0)) / n
    loss_o, loss_e = loss / n, loss_mean / n
    return ScreeningStats(
        player=player,
        positions=n,
        matches_observed=matches,
        matches_expected=p0,
        matches_sd=m_sd,
        z_match=_z(matches - p0, m_sd),
        loss_observed=loss_o,
        loss_expected=loss_e,
        loss_sd=l_sd,
        z_loss=_z(loss_e - loss_o, l_sd),
    )


def screening_stats(player: str, decisions: Iterable[Decision], c_r: float) -> ScreeningStats:
    """Batch form of :class:`Screening` for one player."""
    s = _Sums()
    for d in decisions:
        s.update(position_expectation(d, c_r), +1)
    return stats_from_sums(player, s.n, s.matches, s.p0, s.p0_var, s.loss, s.loss_mean, s.loss_var)


Statistic = Literal["match", "loss", "max"]


@dataclass(frozen=True)
class Alert:
    """A screening alert with every number it was raised on (for arbiters only)."""

    player: str
    positions: int
    statistic: str  # which z crossed: "match" or "loss"
    z: float
    roi: float
    z_threshold: float
    min_positions: int
    matches_observed: int
    matches_expected: float
    z_match: float
    loss_observed: float
    loss_expected: float
    z_loss: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


def alert_check(
    stats: ScreeningStats, z_threshold: float, min_positions: int, statistic: Statistic = "match"
) -> Alert | None:
    """An :class:`Alert` when the chosen z reaches ``z_threshold`` with ≥ ``min_positions``.

    ``statistic``: "match" (default; Regan's move-matching test), "loss"
    (average loss), or "max" (the larger of the two — note that testing two
    statistics raises the false-alarm rate a little).
    """
    if stats.positions < min_positions:
        return None
    if statistic == "match":
        name, z = "match", stats.z_match
    elif statistic == "loss":
        name, z = "loss", stats.z_loss
    elif statistic == "max":
        name, z = ("match", stats.z_match) if stats.z_match >= stats.z_loss else ("loss", stats.z_loss)
    else:
        raise ValueError(f"alert_check: statistic must be match, loss or max, got {statistic!r}")
    if not z >= z_threshold:
        return None
    return Alert(
        player=stats.player,
        positions=stats.positions,
        statistic=name,
        z=z,
        roi=50.0 + 5.0 * z,
        z_threshold=float(z_threshold),
        min_positions=int(min_positions),
        matches_observed=stats.matches_observed,
        matches_expected=stats.matches_expected,
        z_match=stats.z_match,
        loss_observed=stats.loss_observed,
        loss_expected=stats.loss_expected,
        z_loss=stats.z_loss,
    )


class PoissonBinomial:
    """The exact distribution of the number of matches Σ Bernoulli(p0_t), built one position at a time.

    Why: at n ≈ 60 positions the normal approximation of the matches sum is
    poor in the upper tail (z = 4 is a 3e-5 tail; a skewed sum of Bernoullis
    puts more or less there). The probability mass function is kept as an
    array and updated by the usual O(n) recursion per position, so the upper
    tails (:meth:`upper_tail`, :meth:`mid_tail`) are exact (to rounding). Removing a position is not
    supported (deconvolution is unstable): rebuild instead.

    >>> pb = PoissonBinomial()
    >>> for p in (0.5, 0.5):
    ...     pb.add(p)
    >>> pb.pmf.tolist(), pb.upper_tail(1)
    ([0.25, 0.5, 0.25], 0.75)
    """

    def __init__(self, p0s: Iterable[float] = ()) -> None:
        ps = np.array([min(max(float(p), 0.0), 1.0) for p in p0s], dtype=float)
        # the recursion of :meth:`add`, the same floats, between two buffers made once (a track's few hundred
        # positions are folded in when its numbers are read after a change), each with a 0 before the pmf
        # and 0s after it: the ends' terms then come out of the same two products and sum (x + 0.0 = x here),
        # and so do the 0s beyond the pmf so far (0 · q + 0 · p = 0): each step is two whole-buffer calls, the
        # products of the pmf by 1 - p and of the pmf shifted by one by p made in one (a strided pair view)
        n = ps.size
        weights = np.empty((n, 2, 1))
        np.subtract(1.0, ps, out=weights[:, 0, 0])
        weights[:, 1, 0] = ps
        bufs = np.zeros((2, n + 2))
        bufs[0, 1] = 1.0
        step = bufs.itemsize
        pairs = [as_strided(buf[1:], shape=(2, n + 1), strides=(-step, step)) for buf in bufs]
        pmfs = [buf[1:] for buf in bufs]
        terms = np.empty((2, n + 1))
        kept, moved = terms
        for t in range(n):  # position t reads buffer t % 2 and writes the other
            np.multiply(pairs[t & 1], weights[t], out=terms)
            np.add(kept, moved, out=pmfs[~t & 1])
        self.pmf = pmfs[n & 1]

    @property
    def n(self) -> int:
        return self.pmf.size - 1

    def add(self, p: float) -> None:
        """Fold in one more position whose match probability is ``p``."""
        p = min(max(float(p), 0.0), 1.0)
        old = self.pmf
        new = np.empty(old.size + 1)
        new[0] = old[0] * (1.0 - p)
        new[1:-1] = old[1:] * (1.0 - p) + old[:-1] * p
        new[-1] = old[-1] * p
        self.pmf = new

    def upper_tail(self, m: int) -> float:
        """P(M ≥ m)."""
        if m <= 0:
            return 1.0
        if m > self.n:
            return 0.0
        return min(float(self.pmf[m:].sum()), 1.0)

    def mid_tail(self, m: int) -> float:
        """The mid-p tail P(M > m) + ½·P(M = m): what screening reads as the matches' tail.

        Why not P(M ≥ m): a count's whole point mass at the observed value makes that tail
        conservative, so its z runs low for honest players (mean −0.24 at 20 positions, −0.13
        at 60, −0.08 at 200 by simulation), the more so the fewer positions. Half the mass
        keeps the exact distribution's shape in the tail (its skew) and gives honest players
        a z of mean 0 and sd 1 at every sample size, notices and alerts at their nominal rate.

        >>> pb = PoissonBinomial([0.5, 0.5])
        >>> pb.mid_tail(0), pb.mid_tail(1), pb.mid_tail(2)
        (0.875, 0.5, 0.125)
        """
        if m < 0:
            return 1.0
        if m > self.n:
            return 0.0
        return min(float(self.pmf[m + 1:].sum()) + 0.5 * float(self.pmf[m]), 1.0)


def tail_z(p: float) -> float:
    """The z of a one-sided tail probability: Φ⁻¹(1 − p) (+inf at p = 0, −inf at p = 1).

    >>> round(tail_z(0.5), 12), round(tail_z(3.167124183311998e-05), 6)
    (0.0, 4.0)
    """
    return -normal.quantile(p) + 0.0  # + 0.0: the z of p = 0.5 is 0.0, not -0.0


# -- what a player's rating says of today's strength -----------------------------------------------

ELO_SLOPE = math.log(10.0) / 1600.0
"""∂(expected score)/∂(rating difference) at an even game on the Elo curve (per point)."""
SCORE_VAR = 0.2
"""Variance of one game's score between near-equal players (0.25 without draws; draws make it less)."""
K_GROWTH = (60.0, 150.0)
"""(mean, sd) of how far an improving player's strength is above a K = 40 rating, in points: the rating
trails a player who gains a few hundred points a year in a few dozen rated games (an assumption, stated
so; the fit events hold too few such players to measure it)."""
LIKELY_K40 = (1800.0, 150.0)
"""Where the rating says nothing of age or rated games: the chance of a K = 40 player is a logistic in the
rating (today's scale) with this midpoint and width (none from 2300 up, FIDE's bound for K = 40); it
widens the prior by a K = 40 rating's own noise only: the fit events' players under 1800 (Olympiad
teams, Swiss opens) show no lag (widened by the lag's spread too, their z's sd fell to 0.83)."""
TTT_SD = 200.0
"""sd of a TrueSkill Through Time mean as today's strength when the screener has no sd for it."""

_JUNIOR = re.compile(r"(?<![a-z])(u ?(8|10|12|14|16|18|20|21)|under ?(8|10|12|14|16|18|20|21)|juniors?|youth|jeunes|"
                     r"cadets?|girls|boys|schools?|scholastic)(?![a-z])", re.IGNORECASE)


def junior_event(event: str) -> bool:
    """Whether an event's name says its players are juniors (U18, Junior, Youth, Jeunes, Cadet, ...).

    >>> junior_event("ch-CZE U18 U20 2022"), junior_event("National Junior Ch"), junior_event("Tata Steel Masters")
    (True, True, False)
    """
    return _JUNIOR.search(event) is not None


def rating_noise_sd(k: float) -> float:
    """sd of an Elo rating around a steady strength it tracks with update factor ``k``.

    A rating moves by K·(score − expected) a game; near its strength it is an AR(1) process
    x' = (1 − K·ELO_SLOPE)·x + K·ε, var ε = SCORE_VAR, whose stationary variance is
    K·SCORE_VAR / (2·ELO_SLOPE) to first order.

    >>> [round(rating_noise_sd(k)) for k in (10, 20, 40)]
    [26, 37, 53]
    """
    return math.sqrt(k * SCORE_VAR / (2.0 * ELO_SLOPE))


@dataclass(frozen=True)
class StrengthPrior:
    """Today's strength as a rating tag says it: N(mean, sd²), and why."""

    mean: float
    sd: float
    k40: float  # the chance the tag is a K = 40 rating (young or few rated games)


def k40_chance(tag: float, k: float | None = None, junior: bool = False) -> float:
    """The chance that a tag (today's scale) is a K = 40 rating: 1 for a known junior or ``k`` 40, 0 for another
    known ``k`` or from 2300 up, else the logistic :data:`LIKELY_K40` in the rating.

    >>> k40_chance(1500.0, junior=True), k40_chance(2400.0), round(k40_chance(1800.0), 2), k40_chance(1500.0, k=20)
    (1.0, 0.0, 0.5, 0.0)
    """
    if junior or k == 40:
        return 1.0
    if k is not None or tag >= 2300.0:
        return 0.0
    mid, width = LIKELY_K40
    return 1.0 / (1.0 + math.exp(-(mid - tag) / width))


FIELD_LAG_SD = 375.0
"""sd of the prior on the **field lag**: how far an event's likely K = 40 players, as a group, stand above their
tags (a country's improving juniors, a pool of ratings that trailed before the 2024 compression). Fitted on the
fit events' finished games alone (``bench/screening_honest.py``: the sd that makes their field games likeliest,
each event's lag integrated out, is 426; 375 is within 0.1 of it in log-likelihood, which is flat from about 250
to 500; no move enters it). Most fields sit near 0 (the 2022 Olympiad's players under 1800: about −30 points),
a few far above (ch-VIE 2022: about +570 by its games alone)."""
_ELO_K = math.log(10.0) / 400.0  # ∂ logit(expected score) / ∂ rating difference

FieldGame = tuple[float, float, float]
"""One finished game as evidence of its event's field lag: (how much more likely a K = 40 rating the side is
than its opponent, the opponent's rating less the side's, the side's points)."""


def field_game(tag: float, opponent: float, points: float, junior: bool = False) -> FieldGame | None:
    """A finished game between two rated players as evidence of the field lag (None when it says nothing: both
    sides equally likely K = 40). The lag moves each side's strength by its chance of K = 40 times it.

    >>> g = field_game(1500.0, 2200.0, 1.0); round(g[0], 2), g[1:]
    (0.82, (700.0, 1.0))
    >>> field_game(1500.0, 1500.0, 1.0) is None
    True
    """
    d = k40_chance(tag, junior=junior) - k40_chance(opponent, junior=junior)
    return None if d == 0.0 else (d, opponent - tag, points)


def _field_terms(games: Iterable[FieldGame], lag: float) -> tuple[float, float]:
    score = info = 0.0
    for d, diff, points in games:
        e = 1.0 / (1.0 + 10.0 ** ((diff - d * lag) / 400.0))
        score += d * _ELO_K * (points - e)
        info += d * d * _ELO_K * _ELO_K * e * (1.0 - e)
    return score, info


def field_lag(games: Sequence[FieldGame], start: float = 0.0, sd: float = FIELD_LAG_SD) -> tuple[float, float]:
    """How far the event's likely K = 40 players stand above their tags, as its finished games say (the Elo
    curve, the prior N(0, ``sd``²)): the posterior mode and its information (1/variance), by damped Newton steps
    from ``start`` (the last value, when a game was added).

    >>> lag, info = field_lag([(0.82, 700.0, 0.5)] * 16)  # 1500s score half against 2200s: they trail their tags
    >>> round(lag), round(info ** -0.5)
    (790, 103)
    >>> field_lag([])
    (0.0, 7.111111111111111e-06)
    """
    lag, prior = float(start), 1.0 / (sd * sd)
    for _ in range(50):
        score, info = _field_terms(games, lag)
        step = max(-100.0, min(100.0, (score - lag * prior) / (info + prior)))
        lag += step
        if abs(step) < 0.01:
            break
    return lag, _field_terms(games, lag)[1] + prior


def field_lag_without(lag: float, info: float, own: Iterable[FieldGame], sd: float = FIELD_LAG_SD
                      ) -> tuple[float, float]:
    """The field lag with a player's own games left out, and its sd (one Newton step back from the event's
    ``lag`` and ``info``, :func:`field_lag` with the prior sd ``sd``): a player's own results move their
    strength once, not twice.

    >>> games = [(0.82, 700.0, 0.5)] * 16
    >>> [round(x) for x in field_lag_without(*field_lag(games), games[:2])], round(field_lag(games[2:])[0])
    ([782, 110], 782)
    >>> field_lag_without(0.0, 1.0 / FIELD_LAG_SD ** 2, [])  # no game: the prior
    (0.0, 375.0)
    """
    score, own_info = _field_terms(own, lag)
    left = max(info - own_info, 1.0 / (sd * sd))
    return lag - score / left, math.sqrt(1.0 / left)


def tag_prior(tag: float, k: float | None = None, junior: bool = False, lag: float = 0.0, lag_sd: float = 0.0
              ) -> StrengthPrior:
    """What a rating tag (on today's scale) says of today's strength.

    A settled rating (K 20, 10 from 2400) is its strength within its own noise; a K = 40 rating
    (``k`` 40, or a ``junior``) trails an improving player by :data:`K_GROWTH`. Without either
    the chance of K = 40 follows :data:`LIKELY_K40` and widens the prior by K = 40's own noise (a low
    rating alone does not say the player improves). The event's field ``lag`` ± ``lag_sd``
    (:func:`field_lag_without`) moves a K = 40 rating with the chance of one (:func:`moved_by_field`).

    >>> p = tag_prior(2600.0); round(p.mean), round(p.sd), p.k40
    (2600, 26, 0.0)
    >>> p = tag_prior(1587.0, junior=True); round(p.mean), round(p.sd), p.k40
    (1647, 159, 1.0)
    >>> p = tag_prior(1500.0); round(p.mean), round(p.sd), round(p.k40, 2)
    (1500, 51, 0.88)
    >>> p = tag_prior(1500.0, lag=180.0, lag_sd=60.0)  # the event's field trails its tags: a K = 40 rating with it
    >>> round(p.mean), round(p.sd)
    (1659, 96)
    """
    p = k40_chance(tag, k, junior)
    settled_k = k if k is not None and k != 40 else (20.0 if tag < 2400.0 else 10.0)
    v0 = rating_noise_sd(settled_k) ** 2
    lag_k40 = K_GROWTH[0] if junior or k == 40 else 0.0  # known to be K = 40: the rating trails on average
    v1 = rating_noise_sd(40.0) ** 2 + (K_GROWTH[1] ** 2 if lag_k40 else 0.0)
    return moved_by_field(StrengthPrior(tag + p * lag_k40, math.sqrt((1.0 - p) * v0 + p * v1), p), lag, lag_sd)


def moved_by_field(prior: StrengthPrior, lag: float, lag_sd: float) -> StrengthPrior:
    """A tag's ``prior`` moved by its event's field lag ``lag`` ± ``lag_sd`` (:func:`field_lag_without`).

    The tag is a K = 40 rating with the chance ``prior.k40``: then the player stands ``lag`` above it, else
    not at all. The mean moves by k40·lag; the variance is the two-part mixture's (law of total variance):
    k40·lag_sd² for the lag's own uncertainty, and k40·(1 − k40)·lag² because which part the player is in is
    unknown. A player of an 1800 tag (k40 0.5) in a field 450 points above its tags is 1800 + 225 ± 230 (the tag's own
    noise and the mixture's 225), not ± 45; a known K = 40 (k40 1) or settled (0) tag gets no such term.

    >>> p = moved_by_field(tag_prior(1800.0), 450.0, 0.0); round(p.mean), round(p.sd)
    (2025, 230)
    >>> p = moved_by_field(tag_prior(1587.0, junior=True), 200.0, 100.0); round(p.mean), round(p.sd)
    (1847, 188)
    """
    p = prior.k40
    if p == 0.0:
        return prior
    var = prior.sd ** 2 + p * lag_sd ** 2 + p * (1.0 - p) * lag ** 2
    return StrengthPrior(prior.mean + p * lag, math.sqrt(var), p)


_GRID = np.arange(400.0, 3600.0, 2.0)


CURVES_KEPT = 256
"""Opponents' curves remembered (26 KB each): an event's rated opponents, most recent first."""


@functools.lru_cache(maxsize=CURVES_KEPT)
def _curve(opponent: float) -> tuple[np.ndarray, np.ndarray]:
    """log e and log(1 − e) on the grid against an opponent of this rating (e: the Elo curve's expected score): what a
    game's points add to the log posterior, made once per opponent (a player's strength is worked out again at each
    of the event's results, every game of theirs read each time)."""
    e = 1.0 / (1.0 + 10.0 ** ((opponent - _GRID) / 400.0))
    log_win, log_loss = np.log(np.maximum(e, 1e-300)), np.log(np.maximum(1.0 - e, 1e-300))
    log_win.setflags(write=False)
    log_loss.setflags(write=False)
    return log_win, log_loss


def results_strength(prior_mean: float, prior_sd: float, games: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """Today's strength from a prior and the event's results: the posterior mean and sd.

    ``games``: (opponent's rating on today's scale, points). Each game's points are read on the Elo
    curve, a draw as half a win and half a loss; the posterior is computed on a 2-point grid.

    >>> mu, sd = results_strength(1647.0, 159.0, [(2300.0, 1.0), (2300.0, 0.5), (2300.0, 1.0), (2300.0, 0.5), (2300.0, 0.0)])
    >>> round(mu), round(sd)  # a junior whose 3/5 against 2300s reads far above the tag
    (1972, 130)
    >>> results_strength(2600.0, 26.0, [])
    (2600.0, 26.0)
    """
    games = list(games)
    if not games:
        return float(prior_mean), float(prior_sd)
    lp = -0.5 * ((_GRID - prior_mean) / prior_sd) ** 2
    for opponent, points in games:
        # lp + points·log e + (1 − points)·log(1 − e); a win's second term and a loss's first are ±0.0, which
        # leave the sum as it is, bit for bit: each is left out
        log_win, log_loss = _curve(opponent)
        if points == 1.0:
            lp = lp + log_win
        elif points == 0.0:
            lp = lp + log_loss
        else:
            lp = lp + points * log_win + (1.0 - points) * log_loss
    w = np.exp(lp - lp.max())
    w /= w.sum()
    mu = float((w * _GRID).sum())
    return mu, max(math.sqrt(float((w * (_GRID - mu) ** 2).sum())), 1.0)


KNEE = 1800.0
"""The strength below which the screening line bends (:attr:`ScreeningLine.h`)."""


@dataclass(frozen=True)
class ScreeningLine:
    """The skill c expected of today's strength against the player's opponents,
    c = a + b·strength + g·(opponents − strength) + h·max(0, knee − strength), and the players' own scatter ``tau``.

    ``opponents`` is the mean rating (today's scale) of the player's opponents in the event: a player facing
    opponents stronger than themselves matches the engine more often than one of the same strength facing equals
    (the fit events' players show it, ``g``), and the lower-rated half of a Swiss open meets it every round. Fitted
    on honest players of the fit events with their strength as the tag and results say it
    (``bench/screening_honest.py``): the line and tau are those that give their match z's mean 0, no trend with
    strength nor with the opponents' gap, and variance 1.

    ``era`` is c's offset for an event played before FIDE's scale change of 1 March 2024 (:meth:`on`): read on
    today's scale, the players of the fit's 2025 event match the engine more often than those of its 2020-2022
    events of the same strength, whatever the reason (the rating pool's drift since, the players' preparation), and
    a line fitted on both without it reads today's players as engine-like (``bench/screening_honest.py``).

    ``h`` bends the line below ``knee``: honest players under 1800 match the engine more often than a straight line
    through the stronger ones expects (their c falls more slowly with strength), so a straight line would read the
    weakest players of an open as engine-like.

    >>> line = ScreeningLine(-0.5, 0.0006, 0.05, g=0.00015)
    >>> round(line.c_for(2000.0), 3), round(line.c_for(2000.0, opponents=2400.0), 3), round(line.slope, 5)
    (0.7, 0.76, 0.00045)
    >>> round(line.strength_for(line.c_for(1700.0, 2300.0), 2300.0))
    1700
    >>> bent = ScreeningLine(-0.5, 0.0006, 0.05, g=0.00015, h=0.0002)
    >>> round(bent.c_for(2000.0), 3), round(bent.c_for(1500.0), 3), round(bent.slope_at(1500.0), 5)
    (0.7, 0.46, 0.00025)
    >>> [round(bent.strength_for(bent.c_for(s, 2300.0), 2300.0)) for s in (1400.0, 1800.0, 2100.0)]
    [1400, 1800, 2100]
    """

    a: float
    b: float
    tau: float
    profile: str = ""
    book_moves: int | None = None
    eval_bound: float | None = None
    scale: str = "today"  # the rating scale the line reads ("today": FIDE's since 1 March 2024)
    g: float = 0.0  # c's rise per point the opponents' mean stands above the player's strength
    era: float = 0.0  # c's offset for an event played before 1 March 2024 (:meth:`on`)
    h: float = 0.0  # c's rise per point the strength stands below ``knee``
    knee: float = KNEE
    rapid: float = 0.0  # c's offset for rapid play, and for blitz (:meth:`on`)

    def on(self, played: datetime.date | None, time_control: str = "classical") -> ScreeningLine:
        """The line for an event played on ``played`` (its first game's date) at ``time_control`` (classical,
        rapid or blitz: :mod:`livemon.rating.timecontrol`): with the ``era`` offset before 1 March 2024, as it is
        after that day or undated (today's events are what an arbiter screens), and the ``rapid`` offset for
        rapid play. Blitz is read with the rapid offset too: no blitz was fitted, and faster play lowers c
        further, so a blitz player reads low against it (the cautious side).

        >>> line = ScreeningLine(-0.5, 0.0006, 0.05, era=-0.02, rapid=-0.1)
        >>> line.on(datetime.date(2022, 5, 1)).a, line.on(datetime.date(2025, 5, 1)).a, line.on(None).a
        (-0.52, -0.5, -0.5)
        >>> line.on(datetime.date(2024, 2, 29)).a, line.on(datetime.date(2024, 3, 1)).a  # the day of the change
        (-0.52, -0.5)
        >>> line.on(datetime.date(2022, 5, 1)).on(datetime.date(2022, 5, 1)).a  # its own era is applied once
        -0.52
        >>> line.on(None, "rapid").a, line.on(None, "blitz").a, round(line.on(datetime.date(2022, 5, 1), "rapid").a, 2)
        (-0.6, -0.6, -0.62)
        """
        era = played is not None and played < COMPRESSION_DATE and bool(self.era)
        fast = time_control != "classical" and bool(self.rapid)
        if not era and not fast:
            return self
        return replace(self, a=self.a + (self.era if era else 0.0) + (self.rapid if fast else 0.0),
                       era=0.0 if era else self.era, rapid=0.0 if fast else self.rapid)

    @property
    def slope(self) -> float:
        """∂c/∂strength with the opponents fixed, at and above the knee: b − g."""
        return self.b - self.g

    @property
    def rises(self) -> bool:
        """Whether c rises with strength on both sides of the knee (the line can be inverted)."""
        return self.b > 0.0 and self.slope > 0.0 and self.slope - self.h > 0.0

    def slope_at(self, strength: float) -> float:
        """∂c/∂strength with the opponents fixed at ``strength``: b − g, less h below the knee (what a strength's
        uncertainty moves c by)."""
        return self.slope - (self.h if strength < self.knee else 0.0)

    def c_for(self, strength: float, opponents: float | None = None) -> float:
        """c expected at ``strength`` against opponents of mean rating ``opponents`` (None: equals), clipped at 0
        (E(c) has no negative skill)."""
        gap = 0.0 if opponents is None else float(opponents) - float(strength)
        bend = self.h * max(self.knee - float(strength), 0.0)
        return max(self.a + self.b * float(strength) + self.g * gap + bend, 0.0)

    def strength_for(self, c: float, opponents: float | None = None) -> float:
        """The strength whose expected c against ``opponents`` (None: equals) is ``c`` (the line inverted)."""
        rest = float(c) - self.a - (0.0 if opponents is None else self.g * float(opponents))
        slope = self.b if opponents is None else self.slope
        strength = rest / slope
        if strength >= self.knee or not self.h:
            return strength
        return (rest - self.h * self.knee) / (slope - self.h)


def widened_z(z: float, var_matches: float, dsum: float, b: float, strength_var: float, tau: float) -> float:
    """A z of the matches against a strength known only to N(·, strength_var), for a player whose own c
    scatters by ``tau``: the sampling variance ``var_matches`` plus dsum²·(b²·strength_var + tau²),
    ``dsum`` = Σ ∂p0/∂c (delta method). ``z`` is the sampling-only z (e.g. from the matches' mid-p tail).

    >>> round(widened_z(5.5, 36.0, 30.0, 0.0006, 135.0 ** 2, 0.05), 2)
    4.97
    """
    extra = dsum * dsum * (b * b * strength_var + tau * tau)
    if not math.isfinite(z) or var_matches <= 0.0:
        return z
    return z * math.sqrt(var_matches / (var_matches + extra))


def expected_by_chance(players: int, threshold: float) -> float:
    """How many of ``players`` honest players reach a z of ``threshold`` by chance: players·P(Z ≥ threshold).

    >>> round(expected_by_chance(120, 2.5), 2), round(expected_by_chance(120, 4.0), 4)
    (0.75, 0.0038)
    """
    return players * normal.cdf(-threshold)


def chance_line(players: int, notice_z: float, alert_z: float, shown: int | None = None,
                min_positions: int | None = None) -> str:
    """The sentence an arbiter reads beside a screening table: ``players`` screened (a z over enough positions
    to be noticed); with ``shown`` rows of which fewer are, it says how many rows are not yet screened and why.

    >>> chance_line(120, 2.5, 4.0)
    '120 players screened: about 0.7 notices and 0.004 alerts expected by chance'
    >>> chance_line(0, 2.5, 4.0, shown=2, min_positions=60)
    '0 of 2 players screened (60+ positions): about 0 notices and 0 alerts expected by chance'
    """
    def fmt(x: float) -> str:
        return f"{x:.1f}" if x >= 0.1 else f"{x:.1g}"

    notices, alerts = expected_by_chance(players, notice_z), expected_by_chance(players, alert_z)
    if shown is not None and shown > players:
        least = f" ({min_positions}+ positions)" if min_positions else ""
        who = f"{players} of {shown} player{'s' if shown != 1 else ''} screened{least}"
    else:
        who = f"{players} player{'s' if players != 1 else ''} screened"
    return f"{who}: about {fmt(notices)} notices and {fmt(alerts)} alerts expected by chance"


def era_line(by_year: Mapping[int, tuple[int, float]], fit_events: int, notice_z: float) -> str:
    """What a line's honest players read year by year, for an arbiter screening an event played today:
    ``by_year`` maps a year to (player-events, mean z) of honest players of that year's events, each read by a
    line that never saw their event; the newest year's mean, if above 0, multiplies the notices expected by
    chance (P(Z ≥ notice_z − mean) / P(Z ≥ notice_z)).

    >>> for part in re.split("(?<=[;,:]) ", era_line({2021: (40, 0.02), 2022: (300, -0.21), 2025: (146, 0.28)}, 32, 2.5)):
    ...     print(part)
    The line is fitted on honest players of 32 events of 2021-2025;
    read by a line that never saw their event,
    those of 2025 events read z +0.28 on average (146),
    of 2022 -0.21 (300),
    of 2021 +0.02 (40):
    at an event played today,
    expect up to about 2.1 times the notices said above by chance.
    >>> era_line({}, 32, 2.5)
    ''
    """
    if not by_year:
        return ""
    years = sorted(by_year, reverse=True)
    newest, (n_new, m_new) = years[0], by_year[years[0]]
    rest = "".join(f", of {y} {by_year[y][1]:+.2f} ({by_year[y][0]})" for y in years[1:])
    text = (f"The line is fitted on honest players of {fit_events} events of {years[-1]}-{newest}; read by a line that "
            f"never saw their event, those of {newest} events read z {m_new:+.2f} on average ({n_new}){rest}")
    if m_new <= 0:
        return text + "."
    ratio = normal.cdf(m_new - notice_z) / normal.cdf(-notice_z)
    return text + f": at an event played today, expect up to about {ratio:.1f} times the notices said above by chance."


def intrinsic_rating(decisions: Sequence[Decision], line: ScreeningLine, level: float = 0.95,
                     opponents: float | None = None) -> tuple[float, tuple[float, float]] | None:
    """Regan's intrinsic performance rating of these moves: the strength whose E(c) expects as many top-move
    matches as were played, with the strengths at the ends of its ``level`` interval (|matches − expected|
    ≤ z·sd, sampling variance only). None without a position; an end the line cannot reach is ±inf.

    >>> ds = [Decision((0.0, -0.4, -1.0), played=0)] * 30 + [Decision((0.0, -0.4, -1.0), played=1)] * 10
    >>> ipr, (lo, hi) = intrinsic_rating(ds, ScreeningLine(-0.5, 0.0006, 0.05))
    >>> round(lo) < round(ipr) < round(hi), round(ipr)
    (True, 2378)
    """
    if not decisions or not line.rises:
        return None
    width = max(len(d.values) for d in decisions)
    dist = np.full((len(decisions), width), np.inf)
    for i, d in enumerate(decisions):
        top = max(d.values)
        dist[i, : len(d.values)] = [math.log((top - x + K) / K) for x in d.values]
    tops = (dist == 0.0).sum(axis=1)
    matched = float(sum(1 for d in decisions if d.values[d.played] == max(d.values)))
    z = -normal.quantile((1.0 - level) / 2.0)

    valid = np.isfinite(dist)
    finite = np.where(valid, dist, 0.0)

    def gap(c: float, side: float) -> float:  # expected + side·z·sd − observed: increasing in c
        p0 = tops / np.where(valid, np.exp(-c * finite), 0.0).sum(axis=1)
        return float(p0.sum() + side * z * math.sqrt(float((p0 * (1.0 - p0)).sum())) - matched)

    def solve(side: float) -> float:
        lo, hi = 0.0, 64.0
        if gap(lo, side) >= 0.0:
            return line.strength_for(0.0, opponents)  # at or below the line's c = 0
        if gap(hi, side) < 0.0:
            return math.inf
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gap(mid, side) < 0.0 else (lo, mid)
        return line.strength_for(0.5 * (lo + hi), opponents)

    point = solve(0.0)
    return point, (solve(1.0), solve(-1.0))


@dataclass(frozen=True)
class ScreenedPlayer:
    """One player-event screened against today's strength (the batch form of the screener's row)."""

    positions: int
    strength: float
    strength_sd: float
    c_r: float
    z: float  # the matches' mid-p tail (exact distribution) as a z, widened by the strength's sd and tau
    z_tag: float  # against the tag alone (its prior, no results, no field lag), to first order in c


def screen_player(decisions: Sequence[Decision], line: ScreeningLine, prior: StrengthPrior,
                  results: Iterable[tuple[float, float]] = (), tag: StrengthPrior | None = None,
                  opponents: float | None = None) -> ScreenedPlayer | None:
    """Screen one player's decisions as :class:`livemon.live.screener.Screener` does: today's strength from the
    ``prior`` (the tag's, with the event's field lag) and the player's ``results`` (opponent's rating today,
    points); z of the matches' mid-p tail (:meth:`PoissonBinomial.mid_tail`) at c_r there (against ``opponents``, their mean rating today),
    widened (:func:`widened_z`); z_tag against the ``tag``'s prior alone (no results, no field; default
    ``prior``). None without a position.

    >>> ds = [Decision((0.0, -0.4, -1.0), played=0)] * 50 + [Decision((0.0, -0.4, -1.0), played=1)] * 30
    >>> row = screen_player(ds, ScreeningLine(-0.5, 0.0006, 0.05), tag_prior(2000.0), [(2000.0, 1.0)] * 3)
    >>> round(row.strength), round(row.z, 2), round(row.z_tag, 2)
    (2014, -0.7, -0.64)
    """
    if not decisions:
        return None
    mean, sd = results_strength(prior.mean, prior.sd, results)
    tag = prior if tag is None else tag
    c_r = line.c_for(mean, opponents)
    es = [position_expectation(d, c_r) for d in decisions]
    matched = sum(int(e.matched) for e in es)
    p0 = math.fsum(e.p0 for e in es)
    var = math.fsum(e.p0 * (1.0 - e.p0) for e in es)
    dsum = math.fsum(e.dp0 for e in es)
    z_exact = tail_z(PoissonBinomial(e.p0 for e in es).mid_tail(matched))
    if z_exact == math.inf:  # the tail underflowed: far beyond any threshold
        z_exact = max(_z(matched - p0, math.sqrt(var)), 40.0)
    z = widened_z(z_exact, var, dsum, line.slope_at(mean), sd * sd, line.tau)
    shift = dsum * (line.c_for(tag.mean, opponents) - c_r)
    total = var + dsum * dsum * (line.slope_at(tag.mean) ** 2 * tag.sd ** 2 + line.tau ** 2)
    z_tag = (matched - p0 - shift) / math.sqrt(total) if total > 0.0 else 0.0
    return ScreenedPlayer(len(es), mean, sd, c_r, z, z_tag)
