"""The E(c) performance estimate, a diagnostic: a player's Elo from the quality of their moves, with an interval.

A calibration of the engine profile (:class:`livemon.rating.calibration.Calibration`,
fitted by maximum likelihood on real rated games) says that a player rated r
has a skill c ~ N(a + b·r, τ²) and plays each move as the reference agent
E(c) would (docs/models.md §2). Read backwards, a player's moves give a likelihood over
their **performance Elo** r:

    L(r) = ∫ Π_moves P(move | c) · N(c; a + b·r, τ²) dc

— the E(c) likelihood of the moves (which weighs every candidate by how much
worse it is, so the size of each loss counts, not only its sign), blurred by
τ, the real spread of honest players of one rating around the line. The estimate
is the posterior median of r under a flat prior on a wide Elo range, and the 95%
interval its equal-tailed credible region, widened in quadrature by the
calibration line's own uncertainty (a, b). Because τ is inside L(r), the interval
never shrinks below the scatter of honest players, however many moves are seen:
that is what keeps its coverage honest on real players (``bench/validity.py``).

The estimate needs a calibration of exactly the engine profile that produced the
moves' evaluations, for a named rating pool (FIDE classical by default); without
one it is not computed, and :class:`Performance` says why.

>>> from livemon.rating.agent import Decision, move_probabilities
>>> import numpy as np
>>> cal = Calibration(a=-0.5, b=0.0005, n=100, elo_min=1400, elo_max=2800, r2=0.5, residual_sd=0.07,
...                   method="ml", cov_ab=(0.0, 0.0, 0.0), tau=0.07, profile="sf d12")
>>> model = PerformanceModel.from_calibration(cal, pool="FIDE classical")
>>> rng = np.random.default_rng(7)
>>> def moves(c, n):
...     vs = [np.array([0.0, -0.1, -0.4, -1.2]) for _ in range(n)]
...     return [Decision(tuple(v), int(rng.choice(4, p=move_probabilities(v, c)))) for v in vs]
>>> p = model.estimate(moves(0.5, 400))          # c = 0.5 is Elo 2000 on this line
>>> p.cr95[0] < 2000 < p.cr95[1], p.positions, p.reason
(True, 400, None)
>>> model.estimate(moves(0.5, 3)).reason
'3 positions: at least 5 needed'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from livemon.rating.agent import Decision, group_by_candidates, log_distances, played_log_probs
from livemon.rating.calibration import Calibration
from livemon.rating.limits import MIN_POSITIONS as MIN_POSITIONS  # "as": importable from here too
from livemon.rating.screening import screening_exclusion

_Z95 = 1.959963984540054
DEFAULT_POOL = "FIDE classical"
ELO_RANGE = (400.0, 3600.0)
"""Support of the flat prior on the performance Elo (wider than any human rating)."""


@dataclass(frozen=True)
class Performance:
    """A performance Elo with its 95% interval, or the reason there is none.

    ``elo`` / ``cr95`` are None when it cannot be computed (``reason`` says why:
    no calibration of this profile, too few positions). ``positions`` counts the
    moves it rests on; ``profile`` the engine profile of their evaluations;
    ``calibration`` names the calibration and its rating pool.
    ``extrapolated`` is True when the estimate lies outside the rating range the
    calibration was fitted on.

    >>> Performance(None, None, 0, "p", None, reason="no calibration").to_dict()["elo"] is None
    True
    """

    elo: float | None
    cr95: tuple[float, float] | None
    positions: int
    profile: str
    calibration: str | None
    reason: str | None = None
    extrapolated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape shown by ``analyse --json``, ``export --json`` and the ``player`` message."""
        d: dict[str, Any] = {
            "elo": None if self.elo is None else round(self.elo, 1),
            "cr95": None if self.cr95 is None else [round(self.cr95[0], 1), round(self.cr95[1], 1)],
            "positions": self.positions,
            "profile": self.profile,
            "calibration": self.calibration,
        }
        if self.reason is not None:
            d["reason"] = self.reason
        if self.extrapolated:
            d["extrapolated"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Performance:
        """Inverse of :meth:`to_dict`."""
        cr = d.get("cr95")
        return cls(None if d.get("elo") is None else float(d["elo"]),
                   None if cr is None else (float(cr[0]), float(cr[1])), int(d.get("positions", 0)),
                   str(d.get("profile", "")), d.get("calibration"), d.get("reason"), bool(d.get("extrapolated", False)))

    @classmethod
    def unavailable(cls, reason: str, positions: int = 0, profile: str = "") -> Performance:
        """No estimate, with the reason."""
        return cls(None, None, positions, profile, None, reason)


ALL_MOVES_BOUND = 99.0
"""eval_bound of a performance calibration: no position is too decided (values are clamped at ±39)."""


def fit_performance_calibration(moves: Iterable[tuple[float, Hashable, Hashable, Decision]], profile: str = "",
                                pool: str = DEFAULT_POOL) -> Calibration:
    """Fit the performance map on every non-forced move: ``(elo, player, game, decision)`` per move.

    Two maximum-likelihood fits of c ~ N(a + b·Elo, τ²)
    (:meth:`Calibration.fit_decisions`): one c per ``player`` (the line and τ:
    how players of one rating differ) and one c per (player, game) (``tau_game``:
    how one game of a player differs on top). ``player`` should be a player in
    one event. Book moves and decided positions are kept (``book_moves`` 0):
    they carry rating signal too, unlike in screening.
    ValueError as :meth:`Calibration.fit_decisions`.
    """
    players: dict[Hashable, tuple[float, list[Decision]]] = {}
    games: dict[tuple[Hashable, Hashable], tuple[float, list[Decision]]] = {}
    for elo, player, game, decision in moves:
        players.setdefault(player, (elo, []))[1].append(decision)
        games.setdefault((player, game), (elo, []))[1].append(decision)
    by_player = Calibration.fit_decisions(players.values(), profile=profile)
    by_game = Calibration.fit_decisions(games.values(), profile=profile)
    return replace(by_player, tau_game=by_game.tau, book_moves=0, eval_bound=ALL_MOVES_BOUND, pool=pool,
                   z_scale=None, z_scale_loss=None, z_players=0)


def pool_warning(calibration: Calibration | None, pool: str) -> str | None:
    """The one-line warning when a calibration maps another rating pool than the event's, else None.

    >>> cal = Calibration(a=0, b=0.001, n=9, elo_min=0, elo_max=1, r2=0, residual_sd=0, profile="sf d12")
    >>> pool_warning(cal, "FIDE classical") is None
    True
    >>> print(pool_warning(cal, "lichess classical").replace(": ", ":\\n"))
    the calibration of sf d12 maps FIDE classical ratings, the event's ratings are lichess classical:
    performance Elo is on the calibration's scale
    """
    if calibration is None or calibration.pool.casefold() == pool.casefold():
        return None
    return (f"the calibration of {calibration.profile} maps {calibration.pool} ratings, the event's ratings are "
            f"{pool}: performance Elo is on the calibration's scale")


@functools.lru_cache(maxsize=8)
def _grids(a: float, b: float, pad: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The c grid, the Elo grid and the line's c at each Elo of it (made once per line).

    The c grid spans the line over the Elo support, padded by 5 ``pad`` (the largest τ of the model,
    c < 0 included: the line and τ reach there at low ratings); it does not depend on τ, so a player's
    summed log-likelihood on it holds whatever their number of games (τ) becomes.
    """
    c = np.linspace(a + b * ELO_RANGE[0] - 5 * pad, a + b * ELO_RANGE[1] + 5 * pad, 400)
    elo = np.linspace(ELO_RANGE[0], ELO_RANGE[1], 641)
    c_of_elo = a + b * elo
    for arr in (c, elo, c_of_elo):
        arr.setflags(write=False)
    return c, elo, c_of_elo


@functools.lru_cache(maxsize=64)
def _taps(step: float, tau: float) -> tuple[int, np.ndarray]:
    """The Gaussian of sd ``tau`` sampled every ``step`` out to ``KERNEL_SDS`` τ: (half width, taps); a few KB."""
    half = int(math.ceil(KERNEL_SDS * tau / step))
    taps = np.exp(-0.5 * (np.arange(-half, half + 1) * (step / tau)) ** 2)
    taps.setflags(write=False)
    return half, taps


KERNEL_SDS = 6.0
"""The Gaussian N(c; a + b·r, τ²) is cut at this many τ (exp(-18) ≈ 1.5e-8 of its peak)."""


def _elo_posterior(like: np.ndarray, lo: int, c: np.ndarray, elo_at: np.ndarray, tau: float) -> np.ndarray:
    """∝ ∫ N(c; a + b·r, τ²) L(c) dc at each r of the Elo grid, from the likelihood ``like`` on ``c[lo:lo + len]``.

    The c grid is even, so the integral is a convolution of ``like`` with the Gaussian sampled at the
    grid's step (a few hundred taps, made per call), read at each rating's c = a + b·r
    (``elo_at``) by linear interpolation: the Gaussian's τ spans ~17 steps, so the interpolation
    moves a quantile by far less than an Elo. It replaced a dense 641 × 400 kernel per τ (1 MB each
    in float32, 8 kept, the largest thing filling a long event's memory).

    >>> c = np.linspace(0.0, 1.0, 401)
    >>> like = np.zeros(401); like[200] = 1.0  # all the likelihood at c = 0.5
    >>> post = _elo_posterior(like[150:251], 150, c, np.array([0.5, 0.6, 2.0]), 0.1)
    >>> [round(float(v / post[0]), 4) for v in post]  # exp(-1/2) one τ away, nothing far off
    [1.0, 0.6065, 0.0]
    """
    dc = float(c[1] - c[0])
    half, taps = _taps(dc, tau)
    conv = np.convolve(like, taps)  # at c[lo - half], c[lo - half + 1], …
    post: np.ndarray = np.interp(elo_at, float(c[0]) + (lo - half + np.arange(conv.size)) * dc, conv, left=0.0, right=0.0)
    return post


@dataclass(frozen=True)
class PerformanceModel:
    """The calibration of one engine profile and rating pool, ready to turn moves into a performance Elo."""

    calibration: Calibration
    pool: str = DEFAULT_POOL
    min_positions: int = MIN_POSITIONS

    @classmethod
    def from_calibration(cls, calibration: Calibration, pool: str | None = None,
                         min_positions: int = MIN_POSITIONS) -> PerformanceModel:
        """ValueError unless the calibration is a maximum-likelihood fit with a positive slope and a τ."""
        if not calibration.b > 0.0 or calibration.tau is None or not calibration.tau > 0.0:
            raise ValueError("PerformanceModel: the calibration needs a positive slope and a tau (a maximum-likelihood fit)")
        return cls(calibration, pool or calibration.pool, min_positions)

    @property
    def book_moves(self) -> int:
        """Moves of each side left out as book: those the calibration was fitted without."""
        return 8 if self.calibration.book_moves is None else self.calibration.book_moves

    @property
    def eval_bound(self) -> float:
        """Positions decided beyond this many pawns are left out, as in the calibration."""
        return 3.0 if self.calibration.eval_bound is None else self.calibration.eval_bound

    def counts(self, decision: Decision, ply: int) -> bool:
        """Whether a (non-forced) move enters the estimate: the positions the calibration was fitted on."""
        return screening_exclusion(decision, ply, self.book_moves, self.eval_bound) is None

    @property
    def label(self) -> str:
        """How the estimate is labelled: the rating pool and the calibration's extent."""
        cal = self.calibration
        return f"{self.pool}, {cal.n} players, Elo {cal.elo_min:.0f}-{cal.elo_max:.0f}"

    def spread(self, games: int) -> float:
        """τ for a performance over ``games`` games: the sd of a player's mean c around the line.

        A player's c in one game scatters around their own level (``tau_game`` of
        the calibration, fitted with one c per player-game) and their level
        around the line (``tau``, one c per player-event); over k games the first
        part averages down: τ_k² = τ² + (τ_game² − τ²)/k.

        >>> cal = Calibration(a=0, b=0.001, n=9, elo_min=0, elo_max=1, r2=0, residual_sd=0, tau=0.1, tau_game=0.2)
        >>> m = PerformanceModel(cal)
        >>> round(m.spread(1), 4), round(m.spread(9), 4)
        (0.2, 0.1155)
        """
        tau = float(self.calibration.tau or 0.0)
        tau_game = float(self.calibration.tau_game or tau)
        k = max(int(games), 1)
        return math.sqrt(tau * tau + max(tau_game * tau_game - tau * tau, 0.0) / k)

    @property
    def c_grid(self) -> np.ndarray:
        """The c grid of every estimate of this model: the line over the Elo support, padded by 5 τ
        of one game (the largest τ), the same for any number of games."""
        return self._grids()[0]

    def _grids(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return _grids(self.calibration.a, self.calibration.b, self.spread(1))

    def estimate(self, decisions: Sequence[Decision], games: int = 1) -> Performance:
        """The performance of a player from their (already filtered) decisions over ``games`` games.

        Computed from scratch; :class:`PerformanceTally` gives the same figures, bit for bit,
        keeping the sum up to date move by move.
        """
        n = len(decisions)
        if n < self.min_positions:
            return Performance.unavailable(f"{n} positions: at least {self.min_positions} needed", n,
                                           self.calibration.profile)
        return self.estimate_from(fixed_point_log_likelihood(decisions, self.c_grid).sum(axis=0), n, self.spread(games))

    def estimate_from(self, ll_fixed: np.ndarray, n: int, tau: float) -> Performance:
        """The performance from the summed fixed-point log-likelihood on :attr:`c_grid` (``n`` moves), τ ``tau``."""
        if n < self.min_positions:
            return Performance.unavailable(f"{n} positions: at least {self.min_positions} needed", n,
                                           self.calibration.profile)
        cal = self.calibration
        c, elo, c_of_elo = self._grids()
        ll = ll_fixed * (1.0 / LL_SCALE)
        like_c = np.exp(ll - ll.max())
        # ∝ L(r) on the Elo grid (flat prior), over the c where the likelihood is not nil (a player's moves
        # narrow it to a fraction of the grid: the convolution is most of an estimate's cost)
        support = np.flatnonzero(like_c > LIKELIHOOD_FLOOR)
        lo_c, hi_c = int(support[0]), int(support[-1]) + 1
        post = _elo_posterior(like_c[lo_c:hi_c], lo_c, c, c_of_elo, tau)
        if not np.isfinite(post).all() or post.sum() <= 0.0:
            return Performance.unavailable("likelihood underflow", n, cal.profile)
        cdf = np.cumsum(post)
        cdf /= cdf[-1]
        med, lo, hi = (float(np.interp(q, cdf, elo)) for q in (0.5, 0.025, 0.975))
        se = cal.rating_for_c_se(cal.c_for_rating(med)) or 0.0
        w = _Z95 * se
        lo, hi = med - math.hypot(med - lo, w), med + math.hypot(hi - med, w)
        return Performance(med, (lo, hi), n, cal.profile, self.label, None, not cal.in_range(med))


LIKELIHOOD_FLOOR = 1e-16
"""Likelihood in c (relative to its peak) below which a grid column is left out of the Elo posterior."""

BELOW_MARGIN = 40.0
"""Nats under the peak beyond which a column's likelihood is under :data:`LIKELIHOOD_FLOOR` (e^-36.8) with room for
the sum's rounding: the columns below c = 0 bounded there are left unsummed (:meth:`PerformanceTally._for_estimate`)."""

LL_SCALE = 2.0**32
"""Fixed point of the summed log-likelihood (units of 2⁻³²): integer sums are exact in any order, so
a tally kept move by move, one rolled back and one made from scratch agree bit for bit."""


def fixed_point_log_likelihood(decisions: Sequence[Decision], c: np.ndarray) -> np.ndarray:
    """log P(played | c) of each decision on the grid ``c``, in fixed point: int64, shape (n, len(c)).

    Each row depends on its decision alone (element-wise operations and a sum over
    the candidates in order), so rows made one at a time equal rows made together.

    >>> d = Decision((0.0, -1.0), 0)
    >>> rows = fixed_point_log_likelihood([d, d], np.array([0.0, 1.0]))
    >>> rows.shape, bool((rows[0] == rows[1]).all()), round(float(rows[0, 0]) / LL_SCALE, 6) == round(math.log(0.5), 6)
    ((2, 2), True, True)
    """
    out = np.empty((len(decisions), c.size), dtype=np.int64)
    groups: dict[int, list[int]] = {}
    for i, d in enumerate(decisions):
        groups.setdefault(len(d.values), []).append(i)
    for idx in groups.values():
        a = log_distances(np.array([decisions[i].values for i in idx], dtype=float))
        played = np.array([decisions[i].played for i in idx], dtype=np.intp)
        for s, rows in played_log_probs(a, played, c):
            rows *= LL_SCALE
            out[idx[s:s + rows.shape[0]]] = np.rint(rows, out=rows)
    return out


def fixed_point_sum(decisions: Sequence[Decision], c: np.ndarray) -> np.ndarray:
    """``fixed_point_log_likelihood(decisions, c).sum(axis=0)``, the same integers (their sum is exact in any
    order), without the rows: each step's rows are rounded and summed as they come.

    >>> ds = [Decision((0.0, -1.0), 0), Decision((0.0, -0.3, -0.5), 2), Decision((0.1, -0.2), 1)]
    >>> c = np.linspace(-0.5, 2.0, 7)
    >>> bool((fixed_point_sum(ds, c) == fixed_point_log_likelihood(ds, c).sum(axis=0)).all())
    True
    """
    total = np.zeros(c.size, dtype=np.int64)
    reach = float(np.abs(c).max()) if c.size else 0.0
    for a, played, _ in group_by_candidates(decisions).values():
        # |log P| <= max a · max |c| + log k (a row's log weights span at most that): while a step's rounded
        # rows add up to less than 2**53 in magnitude, their float sum is exact, the same integers
        bound = (float(a.max()) * reach + math.log(a.shape[1]) + 1.0) * LL_SCALE
        for _, rows in played_log_probs(a, played, c):
            rows *= LL_SCALE
            np.rint(rows, out=rows)
            if bound * rows.shape[0] < 2.0**53:
                total += rows.sum(axis=0).astype(np.int64)
            else:
                total += rows.astype(np.int64).sum(axis=0)
    return total


class PerformanceTally:
    """One player's moves that count for :meth:`PerformanceModel.estimate`, summed as they come.

    The log-likelihood of the counted moves on the model's c grid is kept in fixed
    point (:data:`LL_SCALE`), so adding a move costs one row (O(grid)) instead of all
    the player's moves again, and removing one (a corrected game) is exact. The rows of the
    moves added or removed since the last estimate are made together when it is asked (one
    vectorised call for a burst; the same integers as one at a time). The c grid is the
    model's, whatever the number of games (τ) becomes, so the sum is made from ``moves`` only
    once, when first asked. The estimate is cached until the next change.

    The tally keeps no move itself (memory per ply): ``moves()`` gives every move
    of the player as ``(game, decision, ply)`` from the caller's own record, which
    :meth:`add` and :meth:`remove` follow (call them as a move enters or leaves it).

    >>> cal = Calibration(a=-0.5, b=0.0005, n=100, elo_min=1400, elo_max=2800, r2=0.5, residual_sd=0.07,
    ...                   method="ml", cov_ab=(0.0, 0.0, 0.0), tau=0.07, tau_game=0.1, profile="sf d12")
    >>> model = PerformanceModel.from_calibration(cal)
    >>> record = []  # the caller's moves: (game, decision, ply)
    >>> tally = PerformanceTally(model, lambda: record)
    >>> moves = [Decision((0.0, -0.2, -0.9), i % 3) for i in range(12)]
    >>> for i, d in enumerate(moves):
    ...     record.append(("g1" if i < 6 else "g2", d, 40 + 2 * i))
    ...     _ = tally.add(*record[-1])
    >>> tally.estimate() == model.estimate(moves, games=2)
    True
    """

    def __init__(self, model: PerformanceModel, moves: Callable[[], Iterable[tuple[Hashable, Decision, int]]]) -> None:
        self.model = model
        self._source = moves
        self._games: dict[Hashable, int] = {}  # counted moves per game
        self._n = 0
        self._sum: np.ndarray | None = None
        self._from = 0
        """The first column ``_sum`` holds (the columns below c = 0 are made when they can count: :meth:`_for_estimate`)."""
        self._pending: list[tuple[Decision, int]] = []  # moves added (+1) or removed (-1) since the sum
        self._estimate: Performance | None = None
        self._counted: list[Decision] | None = []
        """The counted moves read here, kept for the first sum (made at once when a tally is first asked for an
        estimate) and dropped then or at the first change: ``moves()`` read once, not twice."""
        for game, decision, ply in moves():
            if model.counts(decision, ply):
                self._games[game] = self._games.get(game, 0) + 1
                self._n += 1
                self._counted.append(decision)

    @property
    def positions(self) -> int:
        """The moves counted."""
        return self._n

    @property
    def games(self) -> int:
        """The games the counted moves come from (at least 1)."""
        return len(self._games) or 1

    def add(self, game: Hashable, decision: Decision, ply: int) -> bool:
        """A move entered the record: counted if the model counts it; True when counted."""
        if not self.model.counts(decision, ply):
            return False
        self._games[game] = self._games.get(game, 0) + 1
        self._n += 1
        self._changed([decision], +1)
        return True

    def remove(self, game: Hashable, decision: Decision, ply: int) -> None:
        """A move left the record (nothing when it was not counted)."""
        if not self.model.counts(decision, ply):
            return
        left = self._games[game] - 1
        if left:
            self._games[game] = left
        else:
            del self._games[game]
        self._n -= 1
        self._changed([decision], -1)

    def _changed(self, decisions: list[Decision], sign: int) -> None:
        self._estimate = None
        self._counted = None
        if self._sum is not None:  # else nothing summed yet: made from the moves when first asked
            self._pending.extend((d, sign) for d in decisions)  # their rows are made together when asked

    def log_likelihood(self) -> np.ndarray:
        """The summed fixed-point log-likelihood on the model's c grid (made from the moves when first asked)."""
        return self._summed(0)

    def _summed(self, start: int) -> np.ndarray:
        """The sum, made on the grid's columns from ``start`` on at least (the columns before those it holds
        are 0): from the moves when first asked, then kept up to date; columns before those it holds are made
        from the moves when asked."""
        c = self.model.c_grid
        if self._sum is None:
            decisions = self._counted
            if decisions is None:
                decisions = [d for _, d, ply in self._source() if self.model.counts(d, ply)]
            self._counted = None
            self._sum = np.zeros(c.size, dtype=np.int64)
            self._sum[start:] = fixed_point_sum(decisions, c[start:])
            self._from = start
            self._pending.clear()
        elif self._pending:  # rows are independent and the sum is of integers: made together, the same sum
            rows = fixed_point_log_likelihood([d for d, _ in self._pending], c[self._from:])
            signs = np.array([sign for _, sign in self._pending], dtype=np.int64)
            total = self._sum.copy()
            total[self._from:] += (rows * signs[:, None]).sum(axis=0)
            self._sum = total
            self._pending.clear()
        if start < self._from:
            decisions = [d for _, d, ply in self._source() if self.model.counts(d, ply)]
            total = self._sum.copy()
            total[start:self._from] = fixed_point_sum(decisions, c[start:self._from])
            self._sum, self._from = total, start
        return self._sum

    def _for_estimate(self) -> np.ndarray:
        """The sum as :meth:`PerformanceModel.estimate_from` reads it: the columns below c = 0 made only where
        they can count.

        The log-likelihood is concave in c (its second derivative is minus the variance of the distances
        under E(c)), so below the first column c0 >= 0 it is at most L(c0) + max(0, L(c0) - L(c1)) (c0 -
        c_min) / (c1 - c0). When that bound is more than :data:`BELOW_MARGIN` under the peak the columns there
        are out of the estimate's support (a likelihood under :data:`LIKELIHOOD_FLOOR` of the peak's) and not
        its peak: they are given the bound, and the estimate is the one of the whole sum, bit for bit. Else
        they are made from the moves, and kept."""
        c = self.model.c_grid
        start = int(np.searchsorted(c, 0.0))  # the first column c >= 0
        if start == 0 or start + 1 >= c.size or (self._sum is not None and self._from == 0):
            return self._summed(0)
        ll = self._summed(start)
        if self._from == 0:
            return ll
        l0, l1, peak = int(ll[start]), int(ll[start + 1]), int(ll[start:].max())
        bound = l0 + max(0, l0 - l1) * float((c[start] - c[0]) / (c[start + 1] - c[start]))
        if peak - bound <= BELOW_MARGIN * LL_SCALE:
            return self._summed(0)
        out = ll.copy()
        out[:start] = math.floor(bound)
        return out

    def estimate(self) -> Performance:
        """:meth:`PerformanceModel.estimate` of the counted moves (cached until a move is added or removed)."""
        if self._estimate is None:
            n = self._n
            if n < self.model.min_positions:
                self._estimate = self.model.estimate_from(np.zeros(0, dtype=np.int64), n, 0.0)
            else:
                tau = self.model.spread(self.games)
                self._estimate = self.model.estimate_from(self._for_estimate(), n, tau)
        return self._estimate
