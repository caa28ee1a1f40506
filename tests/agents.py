"""Simulated players of the agent E(c) (docs/models.md §2) for the statistical tests, drawn for many positions
at once: a draw per position (``rng.choice`` with ``p``, ``move_probabilities`` on 2–5 values) costs ~100 µs,
seconds for the 10⁵ moves a coverage check needs. tests/test_agent.py checks these probabilities against
``move_probabilities``.
"""

from __future__ import annotations

import numpy as np

from livemon.rating.agent import K, Decision

MOST = 5  # candidates a position has: 2–5


def random_positions(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Realistic MultiPV values for positions of ``shape``: best 0, the others Exp(mean 0.5 pawn) worse, 2–5
    candidates (uniform). Returns the values, ``shape + (5,)``, best first and ``-inf`` past each position's
    count, and the counts, ``shape``."""
    k = rng.integers(2, MOST + 1, size=shape)
    worse = rng.exponential(0.5, size=(*shape, MOST - 1))
    worse[np.arange(MOST - 1) >= (k - 1)[..., None]] = np.inf
    worse.sort(axis=-1)
    return np.concatenate((np.zeros((*shape, 1)), -worse), axis=-1), k


def probabilities(values: np.ndarray, c: np.ndarray | float) -> np.ndarray:
    """``move_probabilities(values, c)`` of each position (the last axis; its best value 0, ``-inf`` for no
    candidate, which gets probability 0), ``c`` broadcast over the positions."""
    present = np.isfinite(values)
    a = np.log((K - np.where(present, values, 0.0)) / K)  # log((v_max - v + K) / K), v_max = 0
    w = np.where(present, np.exp(-a * np.asarray(c, dtype=float)[..., None]), 0.0)
    p: np.ndarray = w / w.sum(axis=-1, keepdims=True)
    return p


def draw(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    """The index drawn from each distribution (the last axis) by inverse CDF."""
    cdf = np.cumsum(p, axis=-1)
    u = rng.random(p.shape[:-1])[..., None] * cdf[..., -1:]
    played: np.ndarray = np.minimum((cdf <= u).sum(axis=-1), p.shape[-1] - 1)
    return played


def play(rng: np.random.Generator, c: np.ndarray, n: int) -> list[list[Decision]]:
    """n moves of E(c) in random realistic positions for each c of ``c`` (one player each)."""
    values, k = random_positions(rng, (len(c), n))
    played = draw(rng, probabilities(values, np.asarray(c, dtype=float)[:, None]))
    return [[Decision.checked(tuple(v[:m]), i) for v, m, i in zip(vs, ks, ps)]
            for vs, ks, ps in zip(values.tolist(), k.tolist(), played.tolist())]
