"""livemon.rating.normal against scipy's ndtr and ndtri (the functions it stands in for) on grids and random points:
the cdf to 1e-13 relative over ±10 (the tails included), the quantile to 1e-14 relative, the edges as scipy's."""

from __future__ import annotations

import math

import numpy as np
import scipy.special

from livemon.rating import normal


def test_cdf_is_scipys_ndtr_in_both_tails() -> None:
    xs = np.concatenate([np.linspace(-10.0, 10.0, 4001), np.random.default_rng(7).normal(0.0, 3.0, 4000)])
    got = np.array([normal.cdf(float(x)) for x in xs])
    want = scipy.special.ndtr(xs)
    assert np.max(np.abs(got - want) / want) < 1e-13
    assert abs(normal.cdf(-30.0) / scipy.special.ndtr(-30.0) - 1) < 1e-12  # 4.9e-198: no cancellation
    assert normal.cdf(math.inf) == 1.0 and normal.cdf(-math.inf) == 0.0


def test_quantile_is_scipys_ndtri_and_inverts_the_cdf() -> None:
    ps = np.concatenate([np.linspace(1e-12, 1 - 1e-12, 4001), 10.0 ** -np.arange(1.0, 300.0, 0.5),
                         np.random.default_rng(8).random(4000)])
    got = np.array([normal.quantile(float(p)) for p in ps])
    want = scipy.special.ndtri(ps)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)) < 1e-14
    for p in (1e-9, 0.025, 0.3, 0.5, 0.975):
        assert abs(normal.cdf(normal.quantile(p)) - p) < 1e-15 + 1e-12 * p
    for p in (0.0, 1.0, -0.1, 1.1, math.nan):
        want_edge = scipy.special.ndtri(p)
        assert normal.quantile(p) == want_edge or (math.isnan(want_edge) and math.isnan(normal.quantile(p)))
