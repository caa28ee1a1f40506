"""Gain per move and perceived Elo — Ferreira (ICGA Journal 2012), docs/models.md §1.

A move's *gain* is how much it changed the evaluation in the mover's favour
(0 for the engine's own choice, negative for an error). A player's gains form
an integer histogram with 1-cp bins over ``[-MAX_GAIN, MAX_GAIN]``; from two
histograms follow an expected score (Eq. 2) and an Elo difference (Algorithm 1),
from many the perceived ratings of an event (Algorithm 2), the strength of the
engine profile (Algorithm 3) and a live rating updated in O(1) (Algorithm 4).

Histograms keep **counts**, never floats, so they merge and roll back exactly.

>>> strong = GainHistogram.from_gains([0, 0, 0, -10, -20, 5])
>>> weak = GainHistogram.from_gains([0, -30, -80, -150, -5, -400])
>>> p, d = algorithm1(strong, weak)
>>> round(p, 4), round(d, 1)
(0.8472, 289.8)
>>> round(expected_score(weak, strong), 4)
0.1528
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from livemon.rating import normal
from livemon.rating.evaluation import MAX_CP

__all__ = [
    "MAX_GAIN",
    "N_BINS",
    "gain",
    "GainHistogram",
    "expected_score",
    "expected_score_xcorr",
    "expected_score_vs_engine",
    "rating_difference",
    "expected_score_from_difference",
    "finite_or_none",
    "algorithm1",
    "perceived_ratings",
    "perceived_ratings_from_histograms",
    "engine_strength",
    "engine_strength_terms",
    "LiveRating",
]

MAX_GAIN: int = 2 * MAX_CP
"""Largest possible |gain|: from −3900 to +3900 in one move."""

N_BINS: int = 2 * MAX_GAIN + 1
"""1-cp bins over ``[-MAX_GAIN, MAX_GAIN]``; bin ``g + MAX_GAIN`` holds gain g."""

DENSE_GAIN: int = 600
"""A :class:`GainHistogram` keeps its bins within ±DENSE_GAIN cp in an array, the rarer gains beyond in a dict."""
_DENSE_LO, _DENSE_HI = MAX_GAIN - DENSE_GAIN, MAX_GAIN + DENSE_GAIN + 1

_ELO_SCALE: float = 200.0 * math.sqrt(2.0)
"""Elo's normal model: the performance difference has standard deviation 200·√2."""


def _check_gain(g: int) -> int:
    """Validate one gain (an integer in range) and return it as a Python int."""
    v = int(operator.index(g))
    if not -MAX_GAIN <= v <= MAX_GAIN:
        raise ValueError(f"gain {v} outside [-{MAX_GAIN}, {MAX_GAIN}]")
    return v


def gain(before_cp: int, after_cp: int, white_moved: bool) -> int:
    """Gain of one ply: the change of the White-view evaluation, in the mover's favour.

    ``g = after − before`` when White moved, ``−(after − before)`` when Black
    moved. Inputs must already be clamped to ±3900 (see
    :mod:`livemon.rating.evaluation`); anything else is rejected, since a gain
    outside ±7800 could not be binned.

    >>> gain(20, 35, white_moved=True), gain(20, 35, white_moved=False)
    (15, -15)
    >>> gain(-3900, 3900, white_moved=True)
    7800
    """
    b, a = int(operator.index(before_cp)), int(operator.index(after_cp))
    for v in (b, a):
        if not -MAX_CP <= v <= MAX_CP:
            raise ValueError(f"evaluation {v} outside [-{MAX_CP}, {MAX_CP}]; clamp it first")
    return a - b if white_moved else b - a


_MAX_COUNT = 2**31 - 1
"""The most gains one histogram counts (its window's bins are int32)."""


class GainHistogram:
    """Exact integer counts of gains, one bin per centipawn in ``[-7800, 7800]``.

    Mutable (``add``/``remove`` let a corrected game be rolled back), so it is
    not hashable. ``n`` is kept alongside the counts so it is O(1).

    >>> h = GainHistogram.from_gains([0, -10, -10, 25])
    >>> h.n, h.mean, h.to_dict()
    (4, 1.25, {-10: 2, 0: 1, 25: 1})
    >>> h.remove(25); h.n, h.mean
    (3, -6.666666666666667)
    >>> GainHistogram.from_dict({"-10": 2, "0": 1}) == h
    True
    """

    __slots__ = ("_lo", "_win", "_tail", "_n")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, counts: npt.ArrayLike | None = None) -> None:
        # Only the window of bins [_lo, _lo + len(_win)) that holds counts is kept (a player's gains
        # span a few hundred cp, not 15,601 bins: ~2 KB instead of 125 KB), within DENSE_GAIN of 0; a gain
        # beyond (a blunder) is counted in ``_tail`` (bin -> count), so one blunder of 3,000 cp does not
        # stretch the window to 24 KB; ``_counts`` is the dense view. The window's counts are
        # int32 (4 bytes a bin: a live event keeps one histogram per player); ``n`` stays below 2**31.
        self._lo = MAX_GAIN
        self._win: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._tail: dict[int, int] = {}
        self._n = 0
        if counts is not None:
            arr = np.asarray(counts)
            if arr.shape != (N_BINS,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"counts must be an integer array of shape ({N_BINS},)")
            if (arr < 0).any():
                raise ValueError("counts must be non-negative")
            self._set(arr.astype(np.int64))

    def _set(self, full: npt.NDArray[np.int64]) -> None:
        """Keep the non-empty span of a dense count array (its bins beyond DENSE_GAIN in the tail)."""
        if int(full.sum()) > _MAX_COUNT:
            raise OverflowError(f"more than {_MAX_COUNT} gains in one histogram")
        dense = full[_DENSE_LO:_DENSE_HI]
        nz = np.flatnonzero(dense)
        if nz.size:
            self._lo, self._win = _DENSE_LO + int(nz[0]), dense[nz[0] : nz[-1] + 1].astype(np.int32)
        else:
            self._lo, self._win = MAX_GAIN, np.zeros(0, dtype=np.int32)
        outside = np.flatnonzero(full)
        outside = outside[(outside < _DENSE_LO) | (outside >= _DENSE_HI)]
        self._tail = dict(zip(outside.tolist(), full[outside].tolist()))
        self._n = int(self._win.sum()) + sum(self._tail.values())

    @property
    def _counts(self) -> npt.NDArray[np.int64]:
        """The dense counts (a new array): index ``g + MAX_GAIN``."""
        full = np.zeros(N_BINS, dtype=np.int64)
        full[self._lo : self._lo + self._win.size] = self._win
        for i, c in self._tail.items():
            full[i] = c
        return full

    def _bin(self, i: int) -> int:
        """The count of bin ``i``."""
        if not _DENSE_LO <= i < _DENSE_HI:
            return self._tail.get(i, 0)
        j = i - self._lo
        return int(self._win[j]) if 0 <= j < self._win.size else 0

    # -- construction -----------------------------------------------------
    @classmethod
    def from_gains(cls, gains: Iterable[int]) -> GainHistogram:
        """Build a histogram from gains (vectorised; every gain is range-checked)."""
        arr = np.fromiter((operator.index(g) for g in gains), dtype=np.int64)
        if arr.size and (arr.min() < -MAX_GAIN or arr.max() > MAX_GAIN):
            raise ValueError(f"gain outside [-{MAX_GAIN}, {MAX_GAIN}]")
        return cls(np.bincount(arr + MAX_GAIN, minlength=N_BINS))

    @classmethod
    def from_dict(cls, d: Mapping[Any, int]) -> GainHistogram:
        """Inverse of :meth:`to_dict`; keys may be ints or their strings (JSON)."""
        h = cls()
        for k, c in d.items():
            h.add(int(k), int(c))
        return h

    def to_dict(self) -> dict[int, int]:
        """Sparse ``{gain: count}`` of the non-empty bins, sorted, for JSON/SQLite."""
        return dict(zip(*self.sparse()))

    def sparse(self) -> tuple[list[int], list[int]]:
        """The non-empty bins as two lists: their gains (ascending) and their counts."""
        nz = np.flatnonzero(self._win)
        gains, counts = (nz + (self._lo - MAX_GAIN)).tolist(), self._win[nz].tolist()
        if self._tail:
            below = sorted((i - MAX_GAIN, c) for i, c in self._tail.items() if i < _DENSE_LO)
            above = sorted((i - MAX_GAIN, c) for i, c in self._tail.items() if i >= _DENSE_HI)
            gains = [g for g, _ in below] + gains + [g for g, _ in above]
            counts = [c for _, c in below] + counts + [c for _, c in above]
        return gains, counts

    def copy(self) -> GainHistogram:
        """An independent copy."""
        h = GainHistogram()
        h._lo, h._win, h._tail, h._n = self._lo, self._win.copy(), dict(self._tail), self._n
        return h

    # -- updates ----------------------------------------------------------
    def add(self, g: int, count: int = 1) -> None:
        """Count gain ``g`` (``count`` times)."""
        if count == 1 and type(g) is int and self._n < _MAX_COUNT:  # a move's gain in the window (a valid gain)
            j = g + MAX_GAIN - self._lo
            if 0 <= j < self._win.size:
                self._win[j] += 1
                self._n += 1
                return
        c = int(operator.index(count))
        if c < 0:
            raise ValueError("count must be non-negative")
        if self._n + c > _MAX_COUNT:
            raise OverflowError(f"more than {_MAX_COUNT} gains in one histogram")
        i = _check_gain(g) + MAX_GAIN
        if not _DENSE_LO <= i < _DENSE_HI:
            if c:
                self._tail[i] = self._tail.get(i, 0) + c
                self._n += c
            return
        j = i - self._lo
        if not 0 <= j < self._win.size:  # widen the window (with some room), within the dense bins
            size = self._win.size
            lo = max(min(i - 32, self._lo) if size else i - 32, _DENSE_LO)
            hi = min(max(i + 33, self._lo + size) if size else i + 33, _DENSE_HI)
            win = np.zeros(hi - lo, dtype=np.int32)
            if size:
                win[self._lo - lo : self._lo - lo + size] = self._win
            self._lo, self._win, j = lo, win, i - lo
        self._win[j] += c
        self._n += c

    def remove(self, g: int, count: int = 1) -> None:
        """Uncount gain ``g``, e.g. to roll back a corrected game; never goes negative."""
        c = int(operator.index(count))
        i = _check_gain(g) + MAX_GAIN
        if c < 0 or self._bin(i) < c:
            raise ValueError(f"cannot remove gain {g} x{c}: only {self._bin(i)} counted")
        self._n -= c
        if not _DENSE_LO <= i < _DENSE_HI:
            left = self._tail.get(i, 0) - c
            if left:
                self._tail[i] = left
            else:
                self._tail.pop(i, None)
            return
        self._win[i - self._lo] -= c

    def merge(self, other: GainHistogram) -> GainHistogram:
        """A new histogram with both sets of counts (exact: integer addition)."""
        return GainHistogram(self._counts + other._counts)

    def __add__(self, other: GainHistogram) -> GainHistogram:
        return self.merge(other)

    def __iadd__(self, other: GainHistogram) -> GainHistogram:
        self._set(self._counts + other._counts)
        return self

    def subtract(self, other: GainHistogram) -> None:
        """Remove a whole sub-histogram (a game's gains) in place; all or nothing."""
        if (other._counts > self._counts).any():
            raise ValueError("cannot subtract a histogram that is not contained in this one")
        self._set(self._counts - other._counts)

    # -- statistics -------------------------------------------------------
    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """Read-only view of the counts; index ``g + MAX_GAIN``."""
        v = self._counts
        v.flags.writeable = False
        return v

    @property
    def n(self) -> int:
        """Number of gains counted."""
        return self._n

    @property
    def mean(self) -> float | None:
        """Mean gain in cp (the paper's average error when negative); ``None`` if empty."""
        if self._n == 0:
            return None
        base = self._lo - MAX_GAIN
        total = int(np.dot(self._win, np.arange(base, base + self._win.size, dtype=np.int64)))
        total += sum((i - MAX_GAIN) * c for i, c in self._tail.items())
        return total / self._n

    def pmf(self) -> npt.NDArray[np.float64]:
        """Normalised histogram f[g + MAX_GAIN] = P(gain = g). Raises if empty."""
        self._require_nonempty()
        return self._counts / self._n

    def cdf(self) -> npt.NDArray[np.float64]:
        """F[g + MAX_GAIN] = P(gain ≤ g), from exact cumulative counts. Raises if empty."""
        self._require_nonempty()
        return np.cumsum(self._counts) / self._n

    def _require_nonempty(self) -> None:
        if self._n == 0:
            raise ValueError("empty gain histogram: no distribution yet")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GainHistogram):
            return NotImplemented
        return self._n == other._n and bool(np.array_equal(self._counts, other._counts))

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"GainHistogram(n={self._n}, mean={self.mean})"


# -- Eq. 2 and Algorithm 1 ----------------------------------------------------


def _score_numerator(x: GainHistogram, y: GainHistogram) -> int:
    """2·N_X·N_Y·p_XY as an exact integer: Σ_y c_Y[y]·(c_X[y] + 2·(N_X − C_X[y]))."""
    x._require_nonempty()
    y._require_nonempty()
    cx, cy = x._counts, y._counts
    above = x._n - np.cumsum(cx)  # number of X gains strictly greater than each bin
    return int(np.dot(cy, cx + 2 * above))


def expected_score(x: GainHistogram, y: GainHistogram) -> float:
    """Expected score of X against Y, p_XY = 0.5·P(X = Y) + P(X > Y), in O(bins).

    Ferreira's Eq. 2 via the CDF: p_XY = Σ_y f_Y[y]·(0.5·f_X[y] + 1 − F_X[y]),
    evaluated on exact integer counts and divided once at the end (correctly
    rounded), so p_XY + p_YX = 1 up to one rounding. Raises on an empty histogram.

    >>> a, b = GainHistogram.from_gains([0, -5]), GainHistogram.from_gains([-5, -50])
    >>> expected_score(a, b), expected_score(b, a)
    (0.875, 0.125)
    """
    return _score_numerator(x, y) / (2 * x.n * y.n)


def expected_score_xcorr(x: GainHistogram, y: GainHistogram, method: str = "auto") -> float:
    """p_XY from the full cross-correlation f_Y ⋆ f_X, as the paper computes it.

    ``scipy.signal.correlate(f_Y, f_X)[k]`` is P(Y − X = k − (N_BINS − 1)), so
    p_XY sums the lags below the centre plus half the centre. O(bins·log bins)
    with FFT (``method="auto"``), O(bins²) with ``"direct"``; kept as the
    reference for tests and ``bench/expected_score.py``.

    >>> a, b = GainHistogram.from_gains([0, -5]), GainHistogram.from_gains([-5, -50])
    >>> round(expected_score_xcorr(a, b), 12)
    0.875
    """
    import scipy.signal  # here, not at the top: scipy.signal costs ~1 s of every process's start, and only this reference needs it

    z = scipy.signal.correlate(y.pmf(), x.pmf(), mode="full", method=method)
    centre = N_BINS - 1
    return float(np.sum(z[:centre]) + 0.5 * z[centre])


def expected_score_vs_engine(x: GainHistogram) -> float:
    """Algorithm 3's p_i = 0.5·f_i[0] + Σ_{n>0} f_i[n]: the engine's gain is always 0.

    >>> expected_score_vs_engine(GainHistogram.from_gains([0, 0, -10, 3]))
    0.5
    """
    x._require_nonempty()
    c = x._counts
    return _vs_engine(x._n, int(c[MAX_GAIN + 1 :].sum()), int(c[MAX_GAIN]))


def _vs_engine(n: int, n_positive: int, n_zero: int) -> float:
    """Shared exact formula, so Algorithm 4 matches Algorithm 3 bit for bit."""
    return (n_zero + 2 * n_positive) / (2 * n)


def rating_difference(p: float) -> float:
    """Elo difference for an expected score: d = 200·√2·Φ⁻¹(p).

    p = 1 gives +inf and p = 0 gives −inf: the model keeps them; render with
    :func:`finite_or_none`. Raises outside [0, 1] or on NaN.

    >>> rating_difference(0.5), rating_difference(1.0), rating_difference(0.0)
    (0.0, inf, -inf)
    >>> round(rating_difference(0.76), 1)
    199.8
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"expected score {p!r} outside [0, 1]")
    return _ELO_SCALE * normal.quantile(p)


def expected_score_from_difference(d: float) -> float:
    """Inverse of :func:`rating_difference`: p = Φ(d / (200·√2)); ±inf map to 1/0.

    >>> expected_score_from_difference(math.inf), expected_score_from_difference(0.0)
    (1.0, 0.5)
    """
    return normal.cdf(d / _ELO_SCALE)


def finite_or_none(x: float | None) -> float | None:
    """JSON helper: a finite float stays, ±inf/NaN/None become ``None`` (``null``).

    >>> finite_or_none(12.5), finite_or_none(math.inf), finite_or_none(None)
    (12.5, None, None)
    """
    if x is None or not math.isfinite(x):
        return None
    return float(x)


def algorithm1(x: GainHistogram, y: GainHistogram) -> tuple[float, float]:
    """Algorithm 1: (p_XY, d_XY) for two players from their gain histograms.

    >>> algorithm1(GainHistogram.from_gains([0]), GainHistogram.from_gains([-1]))
    (1.0, inf)
    """
    p = expected_score(x, y)
    return p, rating_difference(p)


# -- Algorithm 2 --------------------------------------------------------------


def perceived_ratings(
    diffs: Mapping[tuple[str, str], float],
    actual: Mapping[str, float],
    all_pairs: bool = False,
) -> dict[str, float]:
    """Algorithm 2: ratings r' minimising Σ (r'_i − r'_j − d_ij)², anchored to ``actual``.

    ``diffs[(i, j)] = d_ij`` for the pairs to use (the pairs that met, or all
    pairs). Giving both (i, j) and (j, i) is allowed and, with d_ji = −d_ij,
    is the paper's double sum. With ``all_pairs=True`` every pair of players
    named in ``diffs`` must be present (either order), else ``ValueError`` — a
    guard so that "all pairs" never silently degrades to a sparse fit.

    Choices where the paper is silent (it assumes one connected, rated field):

    * **Infinite d_ij are dropped.** An infinite target has no finite
      least-squares solution, and clipping would inject an arbitrary number;
      the pair simply carries no finite information. NaN is an error.
    * The system is solved directly rather than by iteration, through its normal
      equations: the graph Laplacian L r' = b (L_ii = pairs of i, L_ij = −pairs
      of i and j, b_i = Σ d_ij − Σ d_ji), one player per connected component
      held at 0 and the rest solved by conjugate gradients (a sparse LU if they
      do not converge); a dense least squares over all pairs cost seconds at
      2,000 players, this costs milliseconds, the same r' to 1e-9 Elo. Differences fix r' only up to one constant per **connected
      component** of the graph of (finite) pairs. Each component is shifted so
      that the mean r' of its *rated* players equals their mean actual rating;
      with one component this is exactly the paper's final shift, and in
      general the mean r' over all rated players equals their mean actual
      rating. Consequently a rated player with no finite pair keeps their
      actual rating.
    * **Unrated players** (named in ``diffs`` but not in ``actual``) get an r'
      but do not enter the means. A component with no rated player at all is
      centred on the mean actual rating of the whole field (nothing better is
      known about it).
    * Players in ``actual`` only are returned too, at their actual rating.
      Raises ``ValueError`` if ``actual`` is empty (nothing to anchor to).

    >>> r = perceived_ratings({("a", "b"): 100.0, ("b", "c"): 50.0},
    ...                       {"a": 2000.0, "b": 2000.0, "c": 2000.0})
    >>> {k: round(v, 6) for k, v in r.items()}
    {'a': 2083.333333, 'b': 1983.333333, 'c': 1933.333333}
    """
    if not actual:
        raise ValueError("no actual ratings to anchor the perceived ratings to")
    players: list[str] = []
    index: dict[str, int] = {}

    def idx(name: str) -> int:
        if name not in index:
            index[name] = len(players)
            players.append(name)
        return index[name]

    rows: list[tuple[int, int, float]] = []
    seen: set[frozenset[str]] = set()
    for (i, j), d in diffs.items():
        if i == j:
            raise ValueError(f"pair ({i!r}, {j!r}) compares a player with themself")
        a, b = idx(i), idx(j)
        seen.add(frozenset((i, j)))
        d = float(d)
        if math.isnan(d):
            raise ValueError(f"d[{i!r}, {j!r}] is NaN")
        if math.isfinite(d):
            rows.append((a, b, d))
    if all_pairs:
        n = len(players)
        if len(seen) != n * (n - 1) // 2:
            raise ValueError("all_pairs=True but some pairs of players have no difference")
    for name in actual:
        idx(name)

    n = len(players)
    ii = np.array([a for a, _, _ in rows], dtype=np.int64)
    jj = np.array([b for _, b, _ in rows], dtype=np.int64)
    dd = np.array([d for _, _, d in rows], dtype=np.float64)
    from scipy.sparse import coo_matrix  # scipy.sparse here, not at the top: it costs every process's start
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(rows)), (ii, jj)), shape=(n, n))
    n_comp, label = connected_components(graph, directed=False)
    r = _solve_differences(ii, jj, dd, n, label)

    rated = np.array([p in actual for p in players], dtype=np.float64)
    act = np.array([float(actual[p]) if p in actual else 0.0 for p in players])
    field_mean = float(np.mean([float(v) for v in actual.values()]))
    # each component's shift at once: a loop over components would be O(components x players), and at an
    # event's start, or on 1,000 boards, each pair of opponents is a component of its own
    anchors = np.bincount(label, weights=rated, minlength=n_comp)
    to_actual = np.bincount(label, weights=(act - r) * rated, minlength=n_comp) / np.maximum(anchors, 1.0)
    centred = field_mean - np.bincount(label, weights=r, minlength=n_comp) / np.bincount(label, minlength=n_comp)
    r += np.where(anchors > 0, to_actual, centred)[label]
    return dict(zip(players, r.tolist()))


def _solve_differences(ii: npt.NDArray[np.int64], jj: npt.NDArray[np.int64], dd: npt.NDArray[np.float64],
                       n: int, label: npt.NDArray[np.int32]) -> npt.NDArray[np.float64]:
    """A least-squares solution of r_i − r_j = d for every row (i, j, d), each component's first player at 0.

    The normal equations are the graph Laplacian L r = b; holding one player per
    connected component fixes the constant each component is free in, and the rest
    is a sparse symmetric positive definite system.

    >>> r = _solve_differences(np.array([0, 1]), np.array([1, 2]), np.array([100.0, 50.0]), 4,
    ...                        np.array([0, 0, 0, 1], dtype=np.int32))
    >>> [round(float(x), 9) for x in r]
    [0.0, -100.0, -150.0, 0.0]
    """
    import scipy.sparse.linalg
    from scipy.sparse import coo_matrix

    r: npt.NDArray[np.float64] = np.zeros(n)
    if not len(dd):
        return r
    ones = np.ones(len(dd))
    lap = coo_matrix((np.concatenate([ones, ones, -ones, -ones]),
                      (np.concatenate([ii, jj, ii, jj]), np.concatenate([ii, jj, jj, ii]))), shape=(n, n)).tocsr()
    rhs = np.bincount(ii, weights=dd, minlength=n) - np.bincount(jj, weights=dd, minlength=n)
    free = np.ones(n, dtype=bool)
    free[np.unique(label, return_index=True)[1]] = False  # one held player per component
    if free.any():
        idx = np.flatnonzero(free)
        system, b = lap[idx][:, idx], rhs[idx]
        # conjugate gradients: milliseconds at 2,000 players (a sparse LU of a Swiss field's graph fills in: ~0.2-0.7 s)
        x, info = scipy.sparse.linalg.cg(system, b, rtol=1e-12, atol=0.0, maxiter=10 * len(idx))
        if info != 0:  # not converged (a long chain of pairs is ill-conditioned): the direct solve
            x = scipy.sparse.linalg.spsolve(system.tocsc(), b, permc_spec="MMD_AT_PLUS_A")
        r[idx] = x
    return r


def perceived_ratings_from_histograms(
    hists: Mapping[str, GainHistogram],
    actual: Mapping[str, float],
    met: Iterable[tuple[str, str]] | None = None,
    difference: Callable[[str, str], float] | None = None,
) -> dict[str, float]:
    """Algorithm 2 end to end: d_ij by Algorithm 1, then :func:`perceived_ratings`.

    ``met`` lists the pairs that played each other; ``None`` means all pairs.
    Each unordered pair is used once (a pair that met twice, or listed in both
    orders, does not get double weight). Pairs involving a player with an empty
    histogram are skipped (no evidence); a player in ``met`` but not in
    ``hists`` is an error. ``difference(i, j)``, when given, is d_ij as the caller keeps it: it must
    equal ``algorithm1(hists[i], hists[j])[1]`` (a live estimator caches pairs whose histograms did not change).

    >>> h = {"a": GainHistogram.from_gains([0, 0, -20]),
    ...      "b": GainHistogram.from_gains([0, -20, -90])}
    >>> r = perceived_ratings_from_histograms(h, {"a": 1800.0, "b": 1800.0})
    >>> round(r["a"] - r["b"], 3), round((r["a"] + r["b"]) / 2, 3)
    (166.723, 1800.0)
    """
    diffs: dict[tuple[str, str], float] = {}
    for i, j in algorithm2_pairs(hists, met):
        diffs[(i, j)] = algorithm1(hists[i], hists[j])[1] if difference is None else difference(i, j)
    return perceived_ratings(diffs, actual)


def algorithm2_pairs(hists: Mapping[str, GainHistogram], met: Iterable[tuple[str, str]] | None = None
                     ) -> list[tuple[str, str]]:
    """The pairs (i, j) whose d_ij Algorithm 2 uses, as :func:`perceived_ratings_from_histograms` orders
    them: each unordered pair once, players with an empty histogram left out (``met`` None: all pairs).

    >>> h = {"a": GainHistogram.from_gains([0]), "b": GainHistogram.from_gains([-5]), "c": GainHistogram()}
    >>> algorithm2_pairs(h, [("b", "a"), ("a", "b"), ("a", "c")])
    [('a', 'b')]
    """
    if met is None:
        names = sorted(hists)
        pairs = [(names[k], names[m]) for k in range(len(names)) for m in range(k + 1, len(names))]
    else:
        unique: dict[frozenset[str], tuple[str, str]] = {}
        for i, j in sorted(met):  # one order whatever the caller's set: the same last bits in every run
            for p in (i, j):
                if p not in hists:
                    raise ValueError(f"player {p!r} met someone but has no histogram")
            unique.setdefault(frozenset((i, j)), (i, j))
        pairs = list(unique.values())
    return [(i, j) for i, j in pairs if hists[i].n and hists[j].n]


# -- Algorithm 3 --------------------------------------------------------------


def engine_strength(players: Iterable[tuple[float | None, GainHistogram]]) -> float | None:
    """Algorithm 3: r̄_e = mean_i (r_i − d_i), d_i the Elo difference vs the engine.

    The engine's gain is a single peak at 0, so p_i = 0.5·f_i[0] + Σ_{n>0} f_i[n]
    (:func:`expected_score_vs_engine`). Players are skipped when their rating is
    unknown (``None``/NaN), their histogram is empty, or d_i is infinite (p_i is
    0 or 1, typically a very short game: r_i − d_i would be ∓∞ and swamp the
    mean). Dropping them biases r̄_e a little, towards the players who did
    lose something to the engine; that is stated rather than hidden. Returns
    ``None`` when no player remains.

    >>> h = GainHistogram.from_gains([0, -10, -25, 4])   # p = 0.375
    >>> round(engine_strength([(2500.0, h), (2400.0, h)]), 3)
    2540.125
    """
    vals = engine_strength_terms(players)
    return float(np.mean(vals)) if vals else None


def engine_strength_terms(players: Iterable[tuple[float | None, GainHistogram]]) -> list[float]:
    """r_i − d_i of each usable player (the terms Algorithm 3 averages; rules as in :func:`engine_strength`)."""
    vals: list[float] = []
    for rating, h in players:
        if rating is None or math.isnan(rating) or h.n == 0:
            continue
        d = rating_difference(expected_score_vs_engine(h))
        if math.isfinite(d):
            vals.append(float(rating) - d)
    return vals


# -- Algorithm 4 --------------------------------------------------------------


@dataclass
class LiveRating:
    """Algorithm 4: a player's perceived strength, updated in O(1) per move.

    Keeps only the counts the engine comparison needs (n, n_positive, n_zero)
    and the sum of gains for the mean. ``remove`` undoes ``add`` (a corrected
    move); it cannot check that the gain was ever added, but refuses to drive a
    count negative. Empty → every statistic is ``None``.

    >>> live = LiveRating()
    >>> for g in [0, -30, 5, 0]:
    ...     live.add(g)
    >>> live.expected_score, round(live.rating_diff, 2), round(live.perceived(2900.0), 2)
    (0.5, 0.0, 2900.0)
    >>> live.add(-12); round(live.perceived(2900.0), 1)
    2828.3
    """

    n: int = 0
    n_positive: int = 0
    n_zero: int = 0
    total: int = 0

    @classmethod
    def from_histogram(cls, h: GainHistogram) -> LiveRating:
        """Start from stored gains (e.g. after a restart)."""
        c = h.counts
        total = int(np.dot(c, np.arange(-MAX_GAIN, MAX_GAIN + 1, dtype=np.int64)))
        return cls(h.n, int(c[MAX_GAIN + 1 :].sum()), int(c[MAX_GAIN]), total)

    def add(self, g: int) -> None:
        """Count one more gain."""
        v = _check_gain(g)
        self.n += 1
        self.n_positive += v > 0
        self.n_zero += v == 0
        self.total += v

    def remove(self, g: int) -> None:
        """Uncount a gain previously added."""
        v = _check_gain(g)
        if self.n == 0 or (v > 0 and self.n_positive == 0) or (v == 0 and self.n_zero == 0):
            raise ValueError(f"cannot remove gain {v}: not counted")
        self.n -= 1
        self.n_positive -= v > 0
        self.n_zero -= v == 0
        self.total -= v

    @property
    def mean(self) -> float | None:
        """Mean gain so far."""
        return self.total / self.n if self.n else None

    @property
    def expected_score(self) -> float | None:
        """p_i against the engine (same exact formula as :func:`expected_score_vs_engine`)."""
        return _vs_engine(self.n, self.n_positive, self.n_zero) if self.n else None

    @property
    def rating_diff(self) -> float | None:
        """d_i = 200·√2·Φ⁻¹(p_i); may be ±inf."""
        p = self.expected_score
        return None if p is None else rating_difference(p)

    def perceived(self, engine_strength: float | None) -> float | None:
        """r'_i = r̄_e + d_i; ``None`` without an engine strength or any move, ±inf kept."""
        d = self.rating_diff
        if engine_strength is None or d is None:
            return None
        return engine_strength + d

    def rating_diff_interval(self, z: float = 1.959963984540054) -> tuple[float, float] | None:
        """An approximate 95% interval of d_i, for "perceived Elo with its range".

        Each move scores 1, ½ or 0 against the engine's single peak at 0, so p̂_i
        is a mean of n such scores; its standard error is √(s²/n) with s² the
        sample variance of the scores. The interval p̂ ± z·se, clipped to [0, 1],
        is mapped through d = 200·√2·Φ⁻¹(p) (monotone), so its ends may be ±inf.
        A normal approximation: honest for tens of moves, rough for a handful.

        >>> live = LiveRating(n=40, n_positive=4, n_zero=8, total=-900)
        >>> lo, hi = live.rating_diff_interval(); lo < live.rating_diff < hi
        True
        """
        if not self.n:
            return None
        p = (self.n_positive + 0.5 * self.n_zero) / self.n
        second = (self.n_positive + 0.25 * self.n_zero) / self.n
        se = math.sqrt(max(second - p * p, 0.0) / self.n)
        lo, hi = max(p - z * se, 0.0), min(p + z * se, 1.0)
        return rating_difference(lo), rating_difference(hi)
