"""The stochastic reference agent E(c) and the posterior of c (docs/models.md §2).

Di Fatta, Haworth and Regan, *Skill Rating by Bayesian Inference* (IEEE CIDM
2009): in a position with candidate moves of values v_i (pawns, mover's view),
the agent E(c) plays m_i with probability

    P(m_i | c) = (v_max - v_i + K)^(-c) / sum_j (v_max - v_j + K)^(-c),  K = 0.1.

c = 0 plays uniformly at random among the candidates; the larger c, the more
the agent prefers the engine's best move. A player's "apparent skill" is the
posterior of c given their moves, under a uniform prior on [c_min, c_max].

What the caller decides (not this module):

* positions with a single legal move carry no information and are not added;
* the first ``analysis.skip_moves`` moves of each side (the paper skips 12,
  livemon defaults to 0) are simply not added.

>>> best, worse = Decision((0.0, -0.5), played=0), Decision((0.0, -0.5), played=1)
>>> [round(float(x), 4) for x in move_probabilities(best.values, 1.0)]
[0.8571, 0.1429]
>>> post = CPosterior()
>>> for d in [best] * 24 + [worse] * 6:
...     post.add(d)
>>> s = post.summary()   # MLE: 6^-c = 6/24, c = log 4 / log 6 = 0.77
>>> s.n, round(s.mean, 2), s.cr95[0] < 0.77 < s.cr95[1]
(30, 0.81, True)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

K = 0.1
"""Offset in the E(c) weights: a move K pawns worse than "no loss" (paper's value)."""

_LOG_K = math.log(K)


@dataclass(frozen=True, slots=True)
class Decision:
    """One observed move: candidate values (pawns, mover's view) and the index played.

    ``values`` come from the MultiPV analysis of the position before the move,
    plus the played move when it was outside the candidates (see
    :meth:`from_analysis`). Frozen and hashable so that equal decisions merge.

    >>> Decision.from_dict(Decision((0.3, 0.1), 1).to_dict())
    Decision(values=(0.3, 0.1), played=1)
    """

    values: tuple[float, ...]
    played: int

    def __post_init__(self) -> None:
        values = tuple(map(float, self.values))
        if len(values) < 1:
            raise ValueError("Decision: no candidate values")
        if not all(map(math.isfinite, values)):
            raise ValueError(f"Decision: values must be finite, got {values!r}")
        if not 0 <= self.played < len(values):
            raise ValueError(f"Decision: played index {self.played} outside 0..{len(values) - 1}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "played", int(self.played))

    @classmethod
    def checked(cls, values: tuple[float, ...], played: int) -> Decision:
        """A decision whose ``values`` (a tuple of finite floats) and ``played`` were checked when it was
        first made: read back from a packed record, not checked again (a record's every ply is read
        whenever a player's posterior is re-gridded).

        >>> Decision.checked((0.3, 0.1), 1) == Decision((0.3, 0.1), 1)
        True
        """
        d = object.__new__(cls)
        _set_values(d, values)
        _set_played(d, played)
        return d

    @classmethod
    def from_analysis(
        cls,
        candidates: Sequence[tuple[str, float]],
        played_move: str,
        played_value_after: float | None,
    ) -> Decision | None:
        """Build a decision from MultiPV candidates and the move actually played.

        The played-move rule of §2: the paper gives probability 0 to a move
        outside the top lines, which would kill the posterior; instead such a
        move is appended with ``played_value_after``, the evaluation of the
        position after it (pawns, mover's view). If that value beats every
        candidate it simply becomes v_max.

        Returns None when the move carries no information: fewer than two
        candidates once the played move is included, or the played move is
        not among the candidates and its value after is unknown.

        >>> Decision.from_analysis([("e2e4", 0.3), ("d2d4", 0.25)], "g1f3", 0.1)
        Decision(values=(0.3, 0.25, 0.1), played=2)
        >>> Decision.from_analysis([("e2e4", 0.3), ("d2d4", 0.25)], "d2d4", None)
        Decision(values=(0.3, 0.25), played=1)
        >>> Decision.from_analysis([("e2e4", 0.3)], "e2e4", 0.3) is None
        True
        """
        moves = [m for m, _ in candidates]
        values = [float(v) for _, v in candidates]
        if played_move in moves:
            played = moves.index(played_move)
        elif played_value_after is None:
            return None
        else:
            values.append(float(played_value_after))
            played = len(values) - 1
        if len(values) < 2:
            return None
        return cls(tuple(values), played)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form for storage."""
        return {"values": list(self.values), "played": self.played}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Decision:
        """Inverse of :meth:`to_dict`."""
        return cls(tuple(float(v) for v in d["values"]), int(d["played"]))

    def log_distances(self) -> np.ndarray:
        """a_i = log((v_max - v_i + K) / K) >= 0; zero for the best move(s)."""
        v = np.asarray(self.values, dtype=float)
        out: np.ndarray = np.log((v.max() - v + K) / K)
        return out


_set_values = Decision.__dict__["values"].__set__
_set_played = Decision.__dict__["played"].__set__
"""The slots' own setters (a frozen dataclass refuses ``d.values = ...``): :meth:`Decision.checked` sets them
without ``object.__setattr__``'s look-up of the attribute on the class, once per ply each re-grid reads."""


def move_probabilities(values: Sequence[float] | np.ndarray, c: float | np.ndarray) -> np.ndarray:
    """P(m_i | c) for every candidate, computed in log space.

    ``values`` has shape (n,). For scalar ``c`` the result has shape (n,); for
    an array of c (a grid) it has shape (n,) + c.shape, so each column sums to 1.

    >>> p = move_probabilities([0.0, -1.0, -1.0], np.array([0.0, 2.0]))
    >>> p.shape, np.allclose(p.sum(axis=0), 1.0), np.allclose(p[:, 0], 1 / 3)
    ((3, 2), True, True)
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0:
        raise ValueError("move_probabilities: values must be a non-empty 1-D sequence")
    a = np.log((v.max() - v + K) / K)
    cc = np.asarray(c, dtype=float)
    e = -np.multiply.outer(a, cc)  # shape (n,) + c.shape
    e = e - e.max(axis=0)
    w = np.exp(e)
    p: np.ndarray = w / w.sum(axis=0)
    return p


def group_by_candidates(decisions: Iterable[Decision] | dict[Decision, int]
                        ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Pack decisions by candidate count: (log distances (m, k), played (m,), weight (m,))."""
    counts = decisions if isinstance(decisions, dict) else None
    groups: dict[int, list[Decision]] = {}
    for d in decisions:  # the groups in the order their first decision comes, each in the decisions' order
        g = groups.get(len(d.values))
        if g is None:
            groups[len(d.values)] = [d]
        else:
            g.append(d)
    out = {}
    for k, ds in groups.items():
        weights = np.ones(len(ds)) if counts is None else np.array([counts[d] for d in ds], dtype=float)
        values = np.fromiter(chain.from_iterable([d.values for d in ds]), dtype=float, count=len(ds) * k)
        out[k] = (log_distances(values.reshape(len(ds), k)),
                  np.fromiter([d.played for d in ds], dtype=np.intp, count=len(ds)), weights)
    return out


def log_distances(values: np.ndarray) -> np.ndarray:
    """The log distances a = log((v_best - v + K) / K) of rows of candidate values (0 for each row's best).

    >>> log_distances(np.array([[0.0, -0.1]])).round(4).tolist()
    [[0.0, 0.6931]]
    """
    return np.log((values.max(axis=1, keepdims=True) - values + K) / K)  # type: ignore[no-any-return]


SUM_ELEMENTS = 32_768
"""Elements (decisions × candidates × grid points) each weighted sum of :func:`_log_lik_packed` takes: its
sums come in these steps whatever the steps its rows are made in, so a grid's log-likelihood is the same
floats however they are made."""


ROW_ELEMENTS = 1 << 18
"""Elements (decisions × grid points) of the rows :func:`played_log_probs` makes in one step (2 MB): a
player's decisions on a grid of a few hundred points come in one step, sharing its distances' weights."""


BLOCK_ELEMENTS = 1 << 13
"""Elements (decisions × grid points, 64 KB) of the blocks in which :func:`_minus_log_sums` sums the candidates'
weights and takes their log: its two buffers of this size are reused block after block and stay in the cache,
whatever the number of decisions (each row's floats are those it has made alone)."""


Distinct = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Decisions' distinct distances (sorted), each candidate's index among them ((k, m): one row per candidate
column) and each played move's (:func:`distinct_distances`)."""


def distinct_distances(a: np.ndarray, played: np.ndarray) -> Distinct:
    """The distinct log distances of decisions ``a`` (m, k) with the index of each candidate's and each played
    move's among them: what :func:`played_log_probs` weighs once per distance (np.unique's sort, unrolled).

    >>> dist, idx, chosen = distinct_distances(log_distances(np.array([[0.0, -0.1], [0.0, 0.0]])), np.array([1, 0]))
    >>> dist.round(4).tolist(), idx.tolist(), chosen.tolist()
    ([0.0, 0.6931], [[0, 0], [1, 0]], [1, 0])
    """
    m, k = a.shape
    flat = a.ravel()
    perm = flat.argsort(kind="quicksort")
    ordered = flat[perm]
    first = np.empty(flat.size, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(flat.size, dtype=np.intp)
    inverse[perm] = np.cumsum(first) - 1
    idx = inverse.reshape(m, k)
    return ordered[first], np.ascontiguousarray(idx.T), idx[np.arange(m), played]


def _minus_log_sums(rows: np.ndarray, table: np.ndarray, idx: np.ndarray) -> None:
    """``rows -= log Σ_j table[idx[j]]``, the sum taken left to right (as numpy sums an array over its middle
    axis), in blocks of :data:`BLOCK_ELEMENTS`."""
    m, g = rows.shape
    block = max(1, BLOCK_ELEMENTS // max(g, 1))
    total = np.empty((min(block, m), g))
    term = np.empty_like(total)
    for r in range(0, m, block):
        cols = idx[:, r:r + block]
        n = cols.shape[1]
        t, u = (total, term) if n == total.shape[0] else (total[:n], term[:n])
        np.take(table, cols[0], axis=0, out=t, mode="clip")  # indices in range: "clip" takes them unbuffered
        for j in range(1, cols.shape[0]):
            np.take(table, cols[j], axis=0, out=u, mode="clip")
            t += u
        np.log(t, out=t)
        rows[r:r + n] -= t


def _step_rows(k: int, g: int) -> int:
    """Decisions of ``k`` candidates :func:`played_log_probs` makes in one step on a grid of ``g`` points: about
    :data:`ROW_ELEMENTS`, a whole number of the steps of :func:`_log_lik_packed`'s sums."""
    unit = max(1, SUM_ELEMENTS // (k * g)) if g else 1
    return max(unit, ROW_ELEMENTS // max(g, 1) // unit * unit)


def played_log_probs(a: np.ndarray, played: np.ndarray, c: np.ndarray,
                     distinct: Distinct | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """log P(played | c) of decisions with the same number of candidates, on the grid ``c``, in steps.

    ``a``: their log distances (m, k) (:func:`log_distances`); yields ``(first row, rows)`` with rows of
    shape (steps' decisions, len(c)), each step a whole number of :func:`_log_lik_packed`'s. Each row is
    the max-shifted log-softmax of its decision's log weights ``-a c``, the same floats, bit for bit, as
    computed row by row: rows made one at a time equal rows made together.

    A step's decisions share their distances: the moves of positions lost by the same amount have the
    same ``a``, so each distinct ``a`` is weighed once at each c (one exponential, where each candidate
    of each position took one: a player's ~1,500 candidates hold ~400 distinct distances), and each row
    sums its candidates' weights from that table, in their order. Where c >= 0 a row's largest log weight
    is 0 (or -0.0), the best move having a = 0: taking it out before the exponential and adding it back
    after leave every float as it is, so it is taken out only below 0, where it is the largest ``a``'s
    and each candidate's weight depends on its row's largest distance too (made candidate by candidate).
    ``distinct``: :func:`distinct_distances` of all the decisions, for a caller reading them on several
    grids (used when they come in one step; a distance's weight is the same float in any table).

    >>> a = log_distances(np.array([[0.0, -1.0], [0.0, 0.0]]))
    >>> [(s, rows.round(4).tolist()) for s, rows in played_log_probs(a, np.array([0, 1]), np.array([0.0]))]
    [(0, [[-0.6931], [-0.6931]])]
    """
    step = _step_rows(a.shape[1], c.size)
    negc = -c
    below = c < 0.0
    neg = np.flatnonzero(below) if below.any() else None
    pos = None if neg is None else np.flatnonzero(~below)
    for s in range(0, a.shape[0], step):
        part = a[s:s + step]
        dist, idx, chosen = (distinct if distinct is not None and part.shape[0] == a.shape[0]
                             else distinct_distances(part, played[s:s + step]))
        e = np.multiply.outer(dist, negc)  # (distances, G): each distinct distance's log weight at each c
        rows = e[chosen]
        if neg is None:
            _minus_log_sums(rows, np.exp(e, out=e), idx)
            yield s, rows
            continue
        kept = rows[:, pos]
        _minus_log_sums(kept, np.exp(e[:, pos]), idx)
        rows[:, pos] = kept
        # below 0 each candidate's weight depends on its row's largest distance too: made row by row
        en = part[:, :, None] * negc[neg]  # (m, k, columns below 0)
        mx = en.max(axis=1)
        np.subtract(en, mx[:, None, :], out=en)
        np.exp(en, out=en)
        lse = en.sum(axis=1)
        np.log(lse, out=lse)
        lse += mx
        rows[:, neg] -= lse
        yield s, rows


def _add_weighted(total: np.ndarray, w: np.ndarray, rows: np.ndarray, k: int) -> None:
    """``total += w @ rows`` for rows of decisions with ``k`` candidates, in the steps of :data:`SUM_ELEMENTS`:
    a grid's sum is the same floats whatever steps its rows were made in."""
    step = max(1, SUM_ELEMENTS // (k * total.size))
    for r in range(0, rows.shape[0], step):
        total += w[r:r + step] @ rows[r:r + step]


def _log_lik_packed(packed: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], c: np.ndarray) -> np.ndarray:
    """Sum of log P(played | c) over packed decisions (weighted by their counts), on the grid c."""
    total = np.zeros(c.shape, dtype=float)
    for a, played, w in packed.values():
        for s, rows in played_log_probs(a, played, c):
            _add_weighted(total, w[s:s + rows.shape[0]], rows, a.shape[1])
    return total


KEPT_ELEMENTS = 1 << 21
"""Most rows (decisions × grid points, 16 MB) one c-posterior read keeps for its next grid (:func:`_log_lik_kept`)."""

Rows = dict[int, np.ndarray]


def _log_lik_kept(packed: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], c: np.ndarray,
                  kept: tuple[np.ndarray, Rows] | None, distinct: dict[int, Distinct]) -> tuple[np.ndarray, Rows]:
    """:func:`_log_lik_packed` on the grid ``c`` (sorted), the same floats, with each group's rows (m, len(c)):
    the columns an earlier grid of the same decisions made (``kept``: its c and rows) are taken from there. A
    lattice node is the same float at every level, and each row's value at a c depends on that c alone, so
    the rows are those made afresh; the sums are taken in :func:`_log_lik_packed`'s steps. ``distinct``: each
    group's :func:`distinct_distances`, made here when first needed and kept by the caller for its next grid."""
    total = np.zeros(c.shape, dtype=float)
    out: Rows = {}
    fresh: np.ndarray | slice = slice(None)
    take = src = np.zeros(0, dtype=np.intp)
    if kept is not None:
        old_c, old_rows = kept
        at = np.minimum(np.searchsorted(old_c, c), old_c.size - 1)
        same = old_c[at] == c
        take, src, fresh = np.flatnonzero(same), at[same], np.flatnonzero(~same)
    for k, (a, played, w) in packed.items():
        rows = np.empty((a.shape[0], c.size))
        if kept is not None:
            rows[:, take] = kept[1][k][:, src]
        if kept is None or take.size < c.size:
            table = distinct.get(k)
            if table is None and a.shape[0] <= _step_rows(k, c.size - take.size):  # one step: one table for the grids
                table = distinct[k] = distinct_distances(a, played)
            for s, part in played_log_probs(a, played, c[fresh], table):
                rows[s:s + part.shape[0], fresh] = part
        _add_weighted(total, w, rows, a.shape[1])
        out[k] = rows
    return total, out


def log_likelihood(decisions: Iterable[Decision], c_grid: Sequence[float] | np.ndarray) -> np.ndarray:
    """Σ_decisions log P(played | c) at every c of ``c_grid``.

    >>> d = Decision((0.0, -1.0), 0)
    >>> ll = log_likelihood([d, d], [0.0, 1.0])
    >>> bool(np.isclose(ll[0], 2 * math.log(0.5)))
    True
    """
    c = np.asarray(c_grid, dtype=float)
    return _log_lik_packed(group_by_candidates(decisions), c.ravel()).reshape(c.shape)


@dataclass(frozen=True)
class CSummary:
    """Posterior summary of c: mean ("apparent skill"), sd and the 95% credible region.

    ``cr95`` is the **equal-tailed** region (2.5% and 97.5% quantiles): it is
    invariant under reparametrisation (e.g. mapping c to Elo by a monotone
    calibration), unlike the HPD region.
    """

    n: int
    mean: float
    sd: float
    cr95: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {"n": self.n, "mean": self.mean, "sd": self.sd, "cr95": list(self.cr95)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CSummary:
        """Inverse of :meth:`to_dict`."""
        lo, hi = d["cr95"]
        return cls(int(d["n"]), float(d["mean"]), float(d["sd"]), (float(lo), float(hi)))


def _integrals(c: np.ndarray, f: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    """Mass, mean, sd and node CDF of an unnormalised density f on a uniform grid c.

    Corrected trapezoid rule (Euler–Maclaurin end terms, derivatives by second
    order finite differences): O(h^4) for the smooth posterior, so a grid with
    ~10 points per sd already matches a very dense grid to ~1e-5. Written with
    few numpy calls: summary() runs after every move on the live path.
    """
    h = float(c[1] - c[0])
    x = c - c[0]  # shifted abscissa: no cancellation in the variance
    f0, f1, f2, fn, fm, fl = f[0], f[1], f[2], f[-1], f[-2], f[-3]
    d0 = (-3.0 * f0 + 4.0 * f1 - f2) / (2.0 * h)  # f' at the ends, one-sided 2nd order
    dn = (3.0 * fn - 4.0 * fm + fl) / (2.0 * h)
    xn = float(x[-1])
    k = h * h / 12.0
    xf = x * f
    s0, s1, s2 = float(f.sum()), float(xf.sum()), float(xf @ x)
    i0 = h * (s0 - 0.5 * (f0 + fn)) - k * (dn - d0)
    i1 = h * (s1 - 0.5 * xn * fn) - k * ((fn + xn * dn) - f0)
    i2 = h * (s2 - 0.5 * xn * xn * fn) - k * (2.0 * xn * fn + xn * xn * dn)
    mean = i1 / i0
    var = max(i2 / i0 - mean * mean, 0.0)
    df = np.empty_like(f)
    df[1:-1] = (f[2:] - f[:-2]) / (2.0 * h)
    df[0], df[-1] = d0, dn
    cdf = (h * (np.cumsum(f) - 0.5 * (f0 + f)) - k * (df - d0)) / i0
    return float(i0), float(c[0]) + float(mean), math.sqrt(var), cdf


def _quantile(c: np.ndarray, f: np.ndarray, cdf: np.ndarray, q: float) -> float:
    """Invert the CDF: node CDFs, then a linear density inside the cell."""
    i = int(np.searchsorted(cdf, q, side="right")) - 1
    i = min(max(i, 0), c.size - 2)
    mass = float(cdf[i + 1] - cdf[i])
    c0 = float(c[0])
    h = float(c[1]) - c0
    ci = c0 + i * h
    if mass <= 0.0:
        return ci
    # density in the cell, linear from f0 to f1, rescaled so that its mass equals the cell's CDF step
    f0, f1 = float(f[i]), float(f[i + 1])
    scale = mass / (0.5 * h * (f0 + f1)) if f0 + f1 > 0 else 0.0
    f0, f1 = f0 * scale, f1 * scale
    m = q - float(cdf[i])
    s = (f1 - f0) / h
    denom = f0 + math.sqrt(max(f0 * f0 + 2.0 * s * m, 0.0))
    t = 2.0 * m / denom if denom > 0 else 0.0
    return ci + min(max(t, 0.0), h)


def _summary_on_grid(c: np.ndarray, ll: np.ndarray, n: int) -> tuple[CSummary, float]:
    """Summary from log posterior values on a grid; also returns the sd for the grid checks."""
    f = np.exp(ll - ll.max())
    _, mean, sd, cdf = _integrals(c, f)
    lo = _quantile(c, f, cdf, 0.025)
    hi = _quantile(c, f, cdf, 0.975)
    return CSummary(n=n, mean=mean, sd=sd, cr95=(lo, hi)), sd


def dense_posterior_summary(
    decisions: Iterable[Decision], c_min: float = 0.0, c_max: float = 10.0, n: int = 20001
) -> CSummary:
    """Reference posterior summary on a dense uniform grid of n points (slow, exact to ~1e-6).

    >>> s = dense_posterior_summary([], 0.0, 10.0, n=1001)
    >>> round(s.mean, 6), round(s.sd, 4), tuple(round(x, 6) for x in s.cr95)
    (5.0, 2.8868, (0.25, 9.75))
    """
    decisions = list(decisions)
    c = np.linspace(c_min, c_max, n)
    ll = log_likelihood(decisions, c)
    return _summary_on_grid(c, ll, len(decisions))[0]


class CPosterior:
    """Incremental posterior of c for one player, on an adaptive grid (§IV.A).

    Prior: uniform on [c_min, c_max], defaults 0 and 10 — "know nothing" as in
    the paper; c < 0 (preferring worse moves) is excluded, and 10 is far
    above any human (E(10) almost always plays the best move), so the upper
    bound only matters when there is little evidence.

    Grid: the nodes of a lattice on the prior range, its level k's step δ_k = δ_0 / 2^k
    (δ_0 ≈ 0.1: §IV.A's coarse grid, dividing the range evenly), so a node is
    the same number whatever grid holds it. The running log-likelihood on the
    current grid is kept; the decisions added or removed since it was last read
    wait and go in together when the posterior is next read (one vectorised
    evaluation for a burst's moves; one move alone costs one evaluation on
    ~100–300 grid points, ~10 µs). :meth:`summary` reads the posterior on
    the grid its decisions call for, a function of the decisions alone: the
    level whose step is the largest at most sd/8, the nodes where the log
    density is within ``_SPAN`` of its peak plus one, widened to whole blocks of
    ``_BLOCK`` nodes. When that differs from the current grid, the
    log-likelihood is made again from the decisions on it (and the grid checked
    again), so whatever order the decisions came in, and whatever grids they
    passed through, the posterior is read on the same grid: its figures are the
    same to the last few bits of a sum (a live posterior and one rebuilt in game
    order agree on the wire). Since sd ∝ 1/√n, the level moves at n, 4n, 16n,
    …, and the window by a block only once the mass has moved ~1–2 sd, so the
    O(n·G) recomputation costs O(G) amortised per move, G ≈ 100–300 grid points.
    Agreement with :func:`dense_posterior_summary`: ~1e-4 or better on mean,
    sd and cr95 (the quadrature is O(δ^4)).

    :meth:`remove` subtracts a decision's log-likelihood (roll-back of a
    corrected game); the log posterior is a sum, so this is exact up to
    rounding, and every re-grid recomputes from the stored decisions anyway.
    """

    _DELTA0 = 0.1  # the coarsest step (§IV.A), made to divide the prior range evenly
    _PER_SD = 8.0  # at least this many grid points per posterior sd (the level's step is > sd/16)
    _SPAN = 25.0  # the window keeps log density >= peak - 25 (mass outside < ~1e-10)
    _BLOCK = 16  # the window's ends are multiples of this many nodes (it moves only once the mass has moved)
    _ROOM = 2  # a new grid holds this many blocks beyond the window each side
    _MIN_POINTS = 9
    _ZOOM = 3  # levels one read may go finer by (the next read, on the finer grid, may go on)
    _MAX_LEVEL = 30  # a step of ~1e-10 on the default range
    _MAX_GRIDS = 12  # grids tried by one read (a fixed point comes in 2-3)

    def __init__(self, c_min: float = 0.0, c_max: float = 10.0,
                 source: Callable[[], Iterable[Decision]] | None = None) -> None:
        if not c_max > c_min:
            raise ValueError(f"CPosterior: need c_min < c_max, got {c_min}, {c_max}")
        self.c_min = float(c_min)
        self.c_max = float(c_max)
        self._source = source
        """Where the decisions are when the caller keeps them (a re-grid reads them there, so a ply's
        decision is held once); None: the posterior keeps its own counts."""
        self._counts: dict[Decision, int] = {}
        self._pending: list[tuple[Decision, int]] = []  # added (+1) or removed (-1) since the grid's sum
        self._n = 0
        self._summary: CSummary | None = None
        self._reading = False  # within :meth:`summary`
        self._packed: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        """The decisions grouped (:func:`group_by_candidates`) for the grids of one :meth:`summary`, then dropped."""
        self._rows: tuple[np.ndarray, Rows] | None = None
        """The last grid of one :meth:`summary` and its rows (:func:`_log_lik_kept`), then dropped."""
        self._distinct: dict[int, Distinct] = {}
        """The distinct distances of :attr:`_packed`'s groups (:func:`_log_lik_kept`), dropped with them."""
        self._cells = max(int(math.ceil((self.c_max - self.c_min) / self._DELTA0 - 1e-9)), self._MIN_POINTS - 1)
        """Cells of the coarsest level on the prior range (level k has ``_cells << k``)."""
        self._set_grid(0, 0, self._cells)

    # -- grid -----------------------------------------------------------
    def _set_grid(self, level: int, first: int, last: int) -> None:
        """Make the grid of nodes ``first``..``last`` of lattice level ``level`` and recompute the log-likelihood."""
        self._grid_key = (level, first, last)
        self._window = (first, last)
        """The nodes the posterior is read on (:meth:`summary`): the grid held may be wider, by up to ``_ROOM``
        blocks a side, so the window moves within it as the mass moves, with no new grid."""
        step = (self.c_max - self.c_min) / (self._cells << level)
        self._c = self.c_min + np.arange(first, last + 1) * step
        if not self._n:  # nothing multiplied in: a caller's source may already hold the decision being added
            self._ll = np.zeros(self._c.size)
        else:
            packed = self._packed
            if packed is None:
                kept = self._counts if self._source is None else list(self._source())
                packed = group_by_candidates(kept) if kept else {}
                if self._reading:  # one read's grids all hold the same decisions: grouped once
                    self._packed = packed
            if not packed:
                self._ll = np.zeros(self._c.size)
            elif self._reading and sum(a.shape[0] for a, _, _ in packed.values()) * self._c.size <= KEPT_ELEMENTS:
                # a read's next grid holds half this one's nodes (one level finer) or more: their rows are kept
                self._ll, rows = _log_lik_kept(packed, self._c, self._rows, self._distinct)
                self._rows = (self._c, rows)
            else:
                self._ll = _log_lik_packed(packed, self._c)
        self._pending.clear()  # every decision kept is in the sum made from them

    def _take_pending(self) -> None:
        """Sum in the decisions added or removed since the log-likelihood was last read: one at a time
        as a single row, a burst's together (:func:`_log_lik_packed`: one vectorised call a candidate count)."""
        pending = self._pending
        if len(pending) == 1:
            decision, sign = pending[0]
            a = decision.log_distances()
            e = -np.multiply.outer(a, self._c)
            mx = e.max(axis=0)
            row = e[decision.played] - mx - np.log(np.exp(e - mx).sum(axis=0))
            if sign > 0:
                self._ll += row
            else:
                self._ll -= row
        elif pending:
            added = [d for d, s in pending if s > 0]
            removed = [d for d, s in pending if s < 0] if len(added) < len(pending) else []
            for sign, part in ((1, added), (-1, removed)):
                if part:
                    self._ll += sign * _log_lik_packed(group_by_candidates(part), self._c)
        pending.clear()

    @property
    def grid(self) -> np.ndarray:
        """The current grid (read-only view; for inspection and benchmarks)."""
        view = self._c.view()
        view.flags.writeable = False
        return view

    def _wanted(self, sd: float) -> tuple[int, int, int]:
        """The window (level, first node, last node) the posterior calls for, read on the grid held: the level
        whose step is the largest at most sd / ``_PER_SD``; the nodes within ``_SPAN`` of the peak and one more
        each side, to whole blocks (the grid doubled towards an inner end the mass reaches)."""
        level, first, last = self._grid_key
        rel = self._ll - self._ll.max()
        inside = np.flatnonzero(rel > -self._SPAN)  # contiguous: the log-likelihood is concave in c
        lo, hi = first + int(inside[0]) - 1, first + int(inside[-1]) + 1
        if inside[0] == 0 and first > 0:  # the mass reaches an inner end: look further that way
            lo = first - (last - first)
        if inside[-1] == last - first and last < self._cells << level:
            hi = last + (last - first)
        want = 0  # at most _ZOOM levels finer than the grid read (an sd read on too few nodes is not trusted)
        limit = min(level + self._ZOOM, self._MAX_LEVEL)
        while want < limit and (self.c_max - self.c_min) / (self._cells << want) > sd / self._PER_SD:
            want += 1
        if want >= level:
            lo, hi = lo << (want - level), hi << (want - level)
        else:
            lo, hi = lo >> (level - want), -((-hi) >> (level - want))
        block, top = self._BLOCK, self._cells << want
        lo, hi = max(lo // block * block, 0), min(-(-hi // block) * block, top)
        if hi - lo < self._MIN_POINTS - 1:
            lo, hi = max(min(lo, top - self._MIN_POINTS + 1), 0), min(max(hi, self._MIN_POINTS - 1), top)
        return want, lo, hi

    # -- public ---------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of decisions in the posterior."""
        return self._n

    def add(self, decision: Decision) -> None:
        """Multiply in the likelihood of one observed move (O(grid size), when the posterior is next read)."""
        self._pending.append((decision, 1))
        if self._source is None:
            self._counts[decision] = self._counts.get(decision, 0) + 1
        self._n += 1
        self._summary = None

    def remove(self, decision: Decision) -> None:
        """Divide out a decision added before (roll-back); KeyError if it was not added (without a ``source``)."""
        if self._source is None:
            count = self._counts.get(decision, 0)
            if count == 0:
                raise KeyError(f"CPosterior.remove: decision not in the posterior: {decision!r}")
            if count == 1:
                del self._counts[decision]
            else:
                self._counts[decision] = count - 1
        self._n -= 1
        self._summary = None
        if self._n == 0:
            self._set_grid(0, 0, self._cells)
            return
        self._pending.append((decision, -1))

    def decisions(self) -> list[Decision]:
        """The stored decisions (each repeated by its multiplicity)."""
        if self._source is not None:
            return list(self._source())
        return [d for d, k in self._counts.items() for _ in range(k)]

    def _grouped(self) -> dict[Decision, int]:
        return self._counts if self._source is None else Counter(self._source())

    def summary(self) -> CSummary | None:
        """Mean, sd and equal-tailed 95% credible region of c; None before any decision."""
        if self._n == 0:
            return None
        if self._summary is None:
            self._take_pending()
            self._reading = True
            try:
                summary = self._read()
            finally:
                self._reading, self._packed, self._rows, self._distinct = False, None, None, {}
            self._summary = summary
        return self._summary

    def _read(self) -> CSummary:
        """The summary on the grid the decisions call for (a new grid made from them each time it moves)."""
        for _ in range(self._MAX_GRIDS):
            level, first, last = self._grid_key
            a, b = self._window[0] - first, self._window[1] - first + 1
            summary, sd = _summary_on_grid(self._c[a:b], self._ll[a:b], self._n)
            want, lo, hi = self._wanted(sd)
            if (lo, hi) == self._window and want == level:
                break
            if want != level or lo < first or hi > last:  # beyond the grid held: a new one, with room
                room = self._ROOM * self._BLOCK
                self._set_grid(want, max(lo - room, 0), min(hi + room, self._cells << want))
            self._window = (lo, hi)
        else:  # pragma: no cover - a fixed point comes in 2-3 reads
            summary = _summary_on_grid(self._c, self._ll, self._n)[0]
        return summary

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form: the prior range and the decisions (the grid is rebuilt)."""
        return {
            "c_min": self.c_min,
            "c_max": self.c_max,
            "decisions": [{**d.to_dict(), "count": k} for d, k in self._grouped().items()],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CPosterior:
        """Inverse of :meth:`to_dict`; recomputes the log-likelihood in one batch."""
        post = cls(float(d["c_min"]), float(d["c_max"]))
        for item in d["decisions"]:
            dec = Decision.from_dict(item)
            post._counts[dec] = post._counts.get(dec, 0) + int(item.get("count", 1))
        post._n = sum(post._counts.values())
        post._set_grid(0, 0, post._cells)
        return post
