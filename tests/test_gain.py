"""Spec §1: gains, histograms and Ferreira's Algorithms 1–4."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from livemon.rating.gain import (
    MAX_GAIN,
    N_BINS,
    GainHistogram,
    LiveRating,
    algorithm1,
    engine_strength,
    expected_score,
    expected_score_from_difference,
    expected_score_vs_engine,
    expected_score_xcorr,
    finite_or_none,
    gain,
    perceived_ratings,
    perceived_ratings_from_histograms,
    rating_difference,
)

ELO = 200 * math.sqrt(2)


# -- strategies ---------------------------------------------------------------


def realistic_gains(rng: np.random.Generator, n: int) -> np.ndarray:
    """Mostly in [-300, 50] around 0, with a long negative tail (blunders, missed mates)."""
    kind = rng.choice(4, size=n, p=[0.45, 0.40, 0.12, 0.03])
    g = np.where(
        kind == 0,
        rng.normal(0, 12, n),
        np.where(
            kind == 1,
            -rng.exponential(40, n),
            np.where(kind == 2, -rng.exponential(250, n), -rng.uniform(300, MAX_GAIN, n)),
        ),
    )
    return np.clip(np.rint(g), -MAX_GAIN, MAX_GAIN).astype(np.int64)


uniform_gains = st.lists(st.integers(-MAX_GAIN, MAX_GAIN), min_size=1, max_size=60)
narrow_gains = st.lists(st.integers(-300, 50), min_size=1, max_size=300)
realistic = st.builds(
    lambda seed, n: realistic_gains(np.random.default_rng(seed), n).tolist(),
    st.integers(0, 2**32 - 1),
    st.integers(1, 3000),
)
any_gains = st.one_of(uniform_gains, narrow_gains, realistic)
histograms = any_gains.map(GainHistogram.from_gains)


def brute_force_p(xs: list[int], ys: list[int]) -> Fraction:
    """P(X > Y) + ½P(X = Y) over all pairs, exactly."""
    wins2 = sum(2 * (x > y) + (x == y) for x in xs for y in ys)
    return Fraction(wins2, 2 * len(xs) * len(ys))


# -- gain -----------------------------------------------------------------------


def test_gain_white_and_black() -> None:
    # White improves the White-view score from +20 to +35: +15 for White.
    assert gain(20, 35, white_moved=True) == 15
    # White blunders from +20 to -300: -320 for White.
    assert gain(20, -300, white_moved=True) == -320
    # Black moves, the White-view score drops from +30 to -50: Black gained 80.
    assert gain(30, -50, white_moved=False) == 80
    # Black blunders into a mate for White: the score goes from 0 to +3900.
    assert gain(0, 3900, white_moved=False) == -3900
    assert gain(-3900, 3900, white_moved=True) == MAX_GAIN
    assert gain(-3900, 3900, white_moved=False) == -MAX_GAIN


def test_gain_rejects_unclamped_scores() -> None:
    with pytest.raises(ValueError):
        gain(0, 3901, True)
    with pytest.raises(ValueError):
        gain(-4000, 0, False)


@given(st.integers(-3900, 3900), st.integers(-3900, 3900))
def test_gain_colour_symmetry(before: int, after: int) -> None:
    gw, gb = gain(before, after, True), gain(before, after, False)
    assert gw == -gb
    assert -MAX_GAIN <= gw <= MAX_GAIN
    # Mirroring the board (negating both scores) swaps the colours.
    assert gain(-before, -after, False) == gw


# -- histogram ------------------------------------------------------------------


def test_histogram_basics() -> None:
    h = GainHistogram()
    assert h.n == 0 and h.mean is None and len(h.counts) == N_BINS == 15601
    for g in [0, -10, -10, 25, -MAX_GAIN, MAX_GAIN]:
        h.add(g)
    assert h.n == 6
    assert h.to_dict() == {-MAX_GAIN: 1, -10: 2, 0: 1, 25: 1, MAX_GAIN: 1}
    assert h.mean == pytest.approx((0 - 20 + 25) / 6)
    assert h.counts.dtype == np.int64
    assert h.counts[MAX_GAIN - 10] == 2
    pmf, cdf = h.pmf(), h.cdf()
    assert pmf.sum() == pytest.approx(1.0) and cdf[-1] == 1.0
    assert cdf[MAX_GAIN] == pytest.approx(4 / 6)  # P(g <= 0)
    with pytest.raises(ValueError):
        h.counts[0] = 5  # read-only view


def test_histogram_rejects_bad_input() -> None:
    h = GainHistogram()
    with pytest.raises(ValueError):
        h.add(MAX_GAIN + 1)
    with pytest.raises(ValueError):
        h.remove(0)
    with pytest.raises(ValueError):
        GainHistogram.from_gains([0, -7801])
    with pytest.raises(ValueError):
        GainHistogram(np.zeros(10, dtype=np.int64))
    with pytest.raises(ValueError):
        GainHistogram(np.full(N_BINS, -1))
    with pytest.raises(ValueError):
        h.pmf()
    with pytest.raises(TypeError):
        h.add(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        hash(h)


@given(any_gains)
def test_histogram_from_gains_matches_adds_and_round_trips(gains: list[int]) -> None:
    h = GainHistogram()
    for g in gains:
        h.add(g)
    assert h == GainHistogram.from_gains(gains)
    assert h.n == len(gains)
    assert h.mean == pytest.approx(np.mean(gains))
    # JSON turns keys into strings; from_dict takes them back.
    assert GainHistogram.from_dict(json.loads(json.dumps(h.to_dict()))) == h
    assert GainHistogram.from_dict(h.to_dict()) == h
    for g in reversed(gains):
        h.remove(g)
    assert h == GainHistogram() and h.n == 0


@given(any_gains)
def test_histogram_keeps_rare_big_gains_out_of_its_array(gains: list[int]) -> None:
    """The array spans at most ±DENSE_GAIN (one blunder no longer stretches it to 24 KB);
    the gains beyond are counted apart, and every figure is the dense histogram's."""
    from livemon.rating.gain import DENSE_GAIN

    h = GainHistogram()
    for g in gains:
        h.add(g)
    dense = np.bincount(np.array(gains) + MAX_GAIN, minlength=N_BINS)
    assert np.array_equal(h.counts, dense) and h.n == len(gains)
    assert h._win.size <= 2 * DENSE_GAIN + 1
    assert len(h._tail) == len({g for g in gains if abs(g) > DENSE_GAIN})
    assert h.mean == sum(gains) / len(gains)  # exact integer sum, one division
    values, counts = h.sparse()
    assert values == sorted(set(gains)) and counts == [int(dense[v + MAX_GAIN]) for v in values]
    assert list(h.to_dict()) == values and h.copy() == h and GainHistogram(dense) == h
    for g in gains[::2]:
        h.remove(g)
    assert np.array_equal(h.counts, np.bincount(np.array(gains[1::2], dtype=np.int64) + MAX_GAIN, minlength=N_BINS))


@given(any_gains, any_gains)
def test_merge_is_exact(a: list[int], b: list[int]) -> None:
    ha, hb = GainHistogram.from_gains(a), GainHistogram.from_gains(b)
    both = GainHistogram.from_gains(a + b)
    assert ha.merge(hb) == ha + hb == hb + ha == both
    assert (ha + hb).n == len(a) + len(b)
    acc = ha.copy()
    acc += hb
    assert acc == both and acc.n == both.n
    acc.subtract(hb)  # roll back a whole game
    assert acc == ha and acc.n == ha.n
    assert GainHistogram.from_gains(a) == ha  # merge did not mutate its inputs


def test_subtract_refuses_non_subset() -> None:
    h = GainHistogram.from_gains([0, -5])
    with pytest.raises(ValueError):
        h.subtract(GainHistogram.from_gains([0, 0]))
    assert h == GainHistogram.from_gains([0, -5])  # untouched


# -- expected score -------------------------------------------------------------


@settings(max_examples=200)
@given(st.lists(st.integers(-40, 40), min_size=1, max_size=40), st.lists(st.integers(-40, 40), min_size=1, max_size=40))
def test_expected_score_equals_pairwise_definition(xs: list[int], ys: list[int]) -> None:
    """Eq. 2 by brute force over all pairs; the O(bins) form is correctly rounded."""
    p = expected_score(GainHistogram.from_gains(xs), GainHistogram.from_gains(ys))
    assert p == float(brute_force_p(xs, ys))


@settings(max_examples=150, deadline=None)
@given(histograms, histograms)
def test_expected_score_equals_cross_correlation(x: GainHistogram, y: GainHistogram) -> None:
    assert abs(expected_score(x, y) - expected_score_xcorr(x, y)) <= 1e-12


def test_expected_score_equals_direct_cross_correlation() -> None:
    rng = np.random.default_rng(7)
    x = GainHistogram.from_gains(realistic_gains(rng, 2000))
    y = GainHistogram.from_gains(realistic_gains(rng, 1500))
    assert abs(expected_score(x, y) - expected_score_xcorr(x, y, method="direct")) <= 1e-12


@settings(max_examples=200, deadline=None)
@given(histograms, histograms)
def test_expected_scores_sum_to_one(x: GainHistogram, y: GainHistogram) -> None:
    assert abs(expected_score(x, y) + expected_score(y, x) - 1.0) <= 2.3e-16
    assert expected_score(x, x) == 0.5


def test_expected_score_stochastic_dominance() -> None:
    strong = GainHistogram.from_gains([0] * 8 + [-20, -50])
    weak = GainHistogram.from_gains([0] * 4 + [-20, -50, -100, -300, -900, -3900])
    assert expected_score(strong, weak) > 0.5 > expected_score(weak, strong)


def test_expected_score_empty_raises() -> None:
    with pytest.raises(ValueError):
        expected_score(GainHistogram(), GainHistogram.from_gains([0]))


@given(histograms)
def test_vs_engine_is_expected_score_against_a_peak_at_zero(x: GainHistogram) -> None:
    engine = GainHistogram.from_gains([0])
    assert expected_score_vs_engine(x) == expected_score(x, engine)
    c = x.counts
    assert expected_score_vs_engine(x) == pytest.approx((0.5 * c[MAX_GAIN] + c[MAX_GAIN + 1 :].sum()) / x.n)


# -- rating difference and infinities ------------------------------------------


def test_rating_difference_values() -> None:
    assert rating_difference(0.5) == 0.0
    assert rating_difference(norm.cdf(1.0)) == pytest.approx(ELO, rel=1e-12)
    assert rating_difference(0.25) == pytest.approx(ELO * norm.ppf(0.25), rel=1e-12)
    assert rating_difference(1.0) == math.inf and rating_difference(0.0) == -math.inf
    for bad in (-0.01, 1.01, math.nan):
        with pytest.raises(ValueError):
            rating_difference(bad)


@given(st.floats(0.001, 0.999))
def test_rating_difference_antisymmetric_and_inverse(p: float) -> None:
    d = rating_difference(p)
    assert rating_difference(1.0 - p) == pytest.approx(-d, rel=1e-9, abs=1e-9)
    assert expected_score_from_difference(d) == pytest.approx(p, abs=1e-12)
    assert (d > 0) == (p > 0.5)


def test_player_who_never_loses_to_the_engine_is_infinite() -> None:
    perfect = GainHistogram.from_gains([3, 12, 1])  # every move beat the engine's eval
    assert expected_score_vs_engine(perfect) == 1.0
    live = LiveRating.from_histogram(perfect)
    assert live.rating_diff == math.inf
    assert live.perceived(2800.0) == math.inf
    blob = json.dumps({"p": live.expected_score, "d": finite_or_none(live.rating_diff)})
    assert json.loads(blob) == {"p": 1.0, "d": None}


def test_algorithm1_infinite_both_ways() -> None:
    x, y = GainHistogram.from_gains([0, -1]), GainHistogram.from_gains([-2, -300])
    assert algorithm1(x, y) == (1.0, math.inf)
    assert algorithm1(y, x) == (0.0, -math.inf)
    assert finite_or_none(algorithm1(y, x)[1]) is None
    assert finite_or_none(-12.5) == -12.5 and finite_or_none(math.nan) is None


def test_algorithm1_finite() -> None:
    x, y = GainHistogram.from_gains([0, -5, -20]), GainHistogram.from_gains([-5, -40])
    p, d = algorithm1(x, y)
    assert p == pytest.approx(4.5 / 6)
    assert d == pytest.approx(ELO * norm.ppf(4.5 / 6), rel=1e-12)


# -- Algorithm 2 ----------------------------------------------------------------


def objective(r: dict[str, float], diffs: dict[tuple[str, str], float]) -> float:
    return sum((r[i] - r[j] - d) ** 2 for (i, j), d in diffs.items() if math.isfinite(d))


def test_algorithm2_exact_on_consistent_differences() -> None:
    rng = np.random.default_rng(1)
    names = [f"p{k}" for k in range(8)]
    true = dict(zip(names, rng.normal(2300, 150, len(names))))
    pairs = [(a, b) for a, b in itertools.combinations(names, 2) if rng.random() < 0.5]
    pairs += [(names[k], names[k + 1]) for k in range(len(names) - 1)]  # connected
    diffs = {(a, b): true[a] - true[b] for a, b in pairs}
    actual = {n: float(v) for n, v in zip(names, rng.normal(2250, 100, len(names)))}
    r = perceived_ratings(diffs, actual)
    shift = np.mean(list(actual.values())) - np.mean(list(true.values()))
    for n in names:
        assert r[n] == pytest.approx(true[n] + shift, abs=1e-8)
    assert np.mean([r[n] for n in names]) == pytest.approx(np.mean(list(actual.values())), abs=1e-9)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-3000, 3000))
def test_algorithm2_shift_invariance(seed: int, c: float) -> None:
    rng = np.random.default_rng(seed)
    names = [f"p{k}" for k in range(6)]
    diffs = {(a, b): float(rng.normal(0, 200)) for a, b in itertools.combinations(names, 2) if rng.random() < 0.7}
    actual = {n: float(rng.normal(2000, 200)) for n in names[:5]}  # p5 unrated
    r0 = perceived_ratings(diffs, actual)
    r1 = perceived_ratings(diffs, {n: v + c for n, v in actual.items()})
    assert r0.keys() == r1.keys()
    for n in r0:
        assert r1[n] == pytest.approx(r0[n] + c, abs=1e-7)


def test_algorithm2_minimises_the_objective_on_inconsistent_differences() -> None:
    diffs = {("a", "b"): 100.0, ("b", "c"): 80.0, ("a", "c"): 120.0, ("c", "d"): -30.0, ("a", "d"): 50.0}
    actual = {"a": 2100.0, "b": 2000.0, "c": 1950.0, "d": 2050.0}
    r = perceived_ratings(diffs, actual)
    best = objective(r, diffs)
    rng = np.random.default_rng(3)
    for _ in range(200):
        moved = {k: v + rng.normal(0, 5) for k, v in r.items()}
        assert objective(moved, diffs) >= best - 1e-9
    assert np.mean(list(r.values())) == pytest.approx(2025.0)


def test_algorithm2_matches_the_papers_iteration_on_all_pairs() -> None:
    """Ferreira iterates r'_i ← mean_j (r'_j + d_ij) from the actual ratings; same fixed point."""
    rng = np.random.default_rng(5)
    names = [f"p{k}" for k in range(7)]
    hists = {n: GainHistogram.from_gains(realistic_gains(rng, int(rng.integers(40, 120)))) for n in names}
    actual = {n: float(rng.normal(2200, 120)) for n in names}
    d = {(i, j): algorithm1(hists[i], hists[j])[1] for i in names for j in names if i != j}
    assert all(math.isfinite(v) for v in d.values())
    r = dict(actual)
    for _ in range(500):
        for i in names:
            r[i] = float(np.mean([r[j] + d[(i, j)] for j in names if j != i]))
    m = np.mean(list(r.values()))
    r = {k: v - m + np.mean(list(actual.values())) for k, v in r.items()}
    direct = perceived_ratings_from_histograms(hists, actual)
    for n in names:
        assert direct[n] == pytest.approx(r[n], abs=1e-6)
    # Giving both orders (the paper's double sum) changes nothing.
    assert perceived_ratings(d, actual) == pytest.approx(direct, abs=1e-8)


def test_algorithm2_components_unrated_and_infinite() -> None:
    diffs = {("a", "b"): 100.0, ("c", "d"): 40.0, ("a", "c"): math.inf, ("e", "f"): 20.0}
    actual = {"a": 2000.0, "b": 2000.0, "c": 1800.0, "g": 2300.0}
    r = perceived_ratings(diffs, actual)
    assert set(r) == set("abcdefg")
    # {a, b}: both rated, mean kept.
    assert (r["a"], r["b"]) == pytest.approx((2050.0, 1950.0))
    # {c, d}: only c rated, anchored to c; the infinite a–c pair was dropped.
    assert (r["c"], r["d"]) == pytest.approx((1800.0, 1760.0))
    # {e, f}: nobody rated, centred on the field's mean actual rating.
    field = np.mean(list(actual.values()))
    assert (r["e"], r["f"]) == pytest.approx((field + 10.0, field - 10.0))
    # g: rated, met nobody: keeps the actual rating.
    assert r["g"] == 2300.0
    # Mean over rated players equals their mean actual rating.
    assert np.mean([r[p] for p in actual]) == pytest.approx(field)
    # Dropping infinite d is the same as not giving the pair.
    without = {k: v for k, v in diffs.items() if math.isfinite(v)}
    assert perceived_ratings(without, actual) == pytest.approx(r)


def test_algorithm2_errors() -> None:
    with pytest.raises(ValueError):
        perceived_ratings({("a", "b"): 1.0}, {})
    with pytest.raises(ValueError):
        perceived_ratings({("a", "b"): math.nan}, {"a": 1.0})
    with pytest.raises(ValueError):
        perceived_ratings({("a", "a"): 0.0}, {"a": 1.0})
    with pytest.raises(ValueError):
        perceived_ratings({("a", "b"): 1.0, ("b", "c"): 1.0}, {"a": 1.0}, all_pairs=True)
    full = {("a", "b"): 1.0, ("b", "c"): 1.0, ("c", "a"): -2.0}
    assert perceived_ratings(full, {"a": 1.0}, all_pairs=True)["a"] == pytest.approx(1.0)


def test_algorithm2_from_histograms_met_pairs() -> None:
    h = {
        "a": GainHistogram.from_gains([0, 0, -20, -5]),
        "b": GainHistogram.from_gains([0, -20, -90]),
        "c": GainHistogram.from_gains([-10, -40, -200, 0]),
        "z": GainHistogram(),
    }
    actual = {"a": 1900.0, "b": 1800.0, "c": 1850.0}
    met = [("a", "b"), ("b", "a"), ("b", "c"), ("c", "z")]
    r = perceived_ratings_from_histograms(h, actual, met)
    expect = perceived_ratings({("a", "b"): algorithm1(h["a"], h["b"])[1], ("b", "c"): algorithm1(h["b"], h["c"])[1]}, actual)
    assert r == pytest.approx(expect)
    assert "z" not in r  # empty histogram, unrated: no evidence, no rating
    with pytest.raises(ValueError):
        perceived_ratings_from_histograms(h, actual, [("a", "nobody")])


# -- Algorithm 3 ----------------------------------------------------------------


def test_algorithm3_constructed_example() -> None:
    even = GainHistogram.from_gains([0, 0, 0, 0])  # p = 0.5, d = 0
    quarter = GainHistogram.from_gains([0, -1])  # p = 0.25
    three_eighths = GainHistogram.from_gains([0, -10, -25, 4])  # p = 3/8
    perfect = GainHistogram.from_gains([1, 2])  # p = 1: skipped
    players = [
        (2600.0, even),
        (2400.0, quarter),
        (2500.0, three_eighths),
        (2000.0, perfect),
        (None, quarter),  # unrated: skipped
        (2700.0, GainHistogram()),  # no moves: skipped
    ]
    expect = np.mean([2600.0, 2400.0 - ELO * norm.ppf(0.25), 2500.0 - ELO * norm.ppf(0.375)])
    assert engine_strength(players) == pytest.approx(expect, rel=1e-12)
    assert engine_strength(players) == pytest.approx(2593.63, abs=0.01)  # (2600 + 2590.77 + 2590.12) / 3
    assert engine_strength([(2000.0, perfect)]) is None
    assert engine_strength([]) is None


# -- Algorithm 4 ----------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(any_gains, st.randoms(use_true_random=False), st.floats(1000, 3500))
def test_live_rating_equals_recomputation_after_every_move(gains: list[int], rnd, r_e: float) -> None:
    live, hist = LiveRating(), GainHistogram()
    engine = GainHistogram.from_gains([0])  # the engine's gain, always 0
    assert live.expected_score is None and live.perceived(r_e) is None
    for g in gains:
        live.add(g)
        hist.add(g)
        p = expected_score_vs_engine(hist)
        assert live.expected_score == p == expected_score(hist, engine)
        assert live.rating_diff == rating_difference(p)
        assert live.perceived(r_e) == r_e + rating_difference(p)
        assert live.mean == pytest.approx(hist.mean)
    assert live == LiveRating.from_histogram(hist)
    assert live.perceived(None) is None
    order = list(gains)
    rnd.shuffle(order)
    for g in order:
        live.remove(g)
    assert live == LiveRating()


def test_live_rating_refuses_impossible_removal() -> None:
    live = LiveRating()
    live.add(-5)
    with pytest.raises(ValueError):
        live.remove(3)  # no positive gain was counted
    with pytest.raises(ValueError):
        live.remove(0)
    live.remove(-5)
    with pytest.raises(ValueError):
        live.remove(-5)
    assert live == LiveRating()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_algorithm2_sparse_solve_equals_dense_least_squares(seed: int) -> None:
    """The Laplacian solve gives the dense least-squares r' (pairs twice, both orders, several components)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    names = [f"p{k}" for k in range(n)]
    diffs: dict[tuple[str, str], float] = {}
    for _ in range(int(rng.integers(1, 3 * n))):
        a, b = rng.choice(n, 2, replace=False)
        d = float(rng.normal(0, 150))
        diffs[(names[a], names[b])] = d
        if rng.random() < 0.3:
            diffs[(names[b], names[a])] = -d + float(rng.normal(0, 20))
    actual = {p: float(rng.normal(2100, 200)) for p in names if rng.random() < 0.7} or {names[0]: 2000.0}
    r = perceived_ratings(diffs, actual)
    index = {p: k for k, p in enumerate(r)}
    rows = [(index[i], index[j], d) for (i, j), d in diffs.items()]
    a_mat = np.zeros((len(rows), len(r)))
    for k, (i, j, _) in enumerate(rows):
        a_mat[k, i], a_mat[k, j] = 1.0, -1.0
    dense = np.linalg.lstsq(a_mat, np.array([d for _, _, d in rows]), rcond=None)[0]
    got = np.array([r[p] for p in index])
    # equal up to one constant per component: every pair's difference agrees
    for i, j, _ in rows:
        assert got[i] - got[j] == pytest.approx(dense[i] - dense[j], abs=1e-6)
    assert objective(r, diffs) == pytest.approx(objective(dict(zip(index, dense)), diffs), rel=1e-9, abs=1e-6)


def test_algorithm2_long_chain_of_pairs() -> None:
    """A chain of 400 pairs (the worst conditioned graph) is solved exactly too."""
    names = [f"p{k}" for k in range(401)]
    diffs = {(names[k], names[k + 1]): 3.0 for k in range(400)}
    r = perceived_ratings(diffs, {names[0]: 2000.0, names[-1]: 2000.0})
    assert r[names[0]] - r[names[-1]] == pytest.approx(1200.0, abs=1e-6)
    assert (r[names[0]] + r[names[-1]]) / 2 == pytest.approx(2000.0, abs=1e-6)


def test_a_histogram_keeps_only_its_span_and_equals_a_dense_count_array():
    """A histogram keeps the window of bins it uses (a player's gains span a few hundred cp),
    with the same counts, statistics and exact expected scores as the dense 15,601 bins."""
    import random

    from livemon.rating.gain import expected_score_vs_engine

    rng = random.Random(5)
    dense = [np.zeros(N_BINS, dtype=np.int64) for _ in range(2)]
    hists = [GainHistogram(), GainHistogram()]
    for step in range(3000):
        k = step % 2
        g = rng.choice([0, 0, 3, -10, -25, -80, -300, MAX_GAIN, -MAX_GAIN, rng.randint(-900, 200)])
        if rng.random() < 0.3 and dense[k][g + MAX_GAIN]:
            hists[k].remove(g)
            dense[k][g + MAX_GAIN] -= 1
        else:
            hists[k].add(g)
            dense[k][g + MAX_GAIN] += 1
    for h, c in zip(hists, dense):
        ref = GainHistogram(c)
        assert h == ref and h.n == int(c.sum()) and (h.counts == c).all()
        assert h.to_dict() == ref.to_dict() == {int(i) - MAX_GAIN: int(c[i]) for i in np.flatnonzero(c)}
        assert h.mean == ref.mean and expected_score_vs_engine(h) == expected_score_vs_engine(ref)
        assert (h.cdf() == ref.cdf()).all()
    assert algorithm1(hists[0], hists[1]) == algorithm1(GainHistogram(dense[0]), GainHistogram(dense[1]))
    small = GainHistogram.from_gains([-40, -3, 0, 0, 12])
    assert small._win.nbytes < 1000  # not 125 KB
    copy = small.copy()
    copy.add(-41)
    assert small.n == 5 and copy.n == 6 and small.to_dict() == {-40: 1, -3: 1, 0: 2, 12: 1}
    with pytest.raises(ValueError, match="only 0 counted"):
        small.remove(500)


def test_histogram_window_is_four_bytes_a_bin_and_refuses_to_overflow() -> None:
    """A live event keeps one histogram per player; its window's bins are int32 (4 bytes
    each), and a count that would not fit is refused rather than wrapped."""
    from livemon.rating import gain

    h = GainHistogram.from_gains(range(-300, 301))
    grown = GainHistogram()
    for g in range(-300, 301):  # the live path: the window widens move by move
        grown.add(g)
    assert grown == h and grown._win.itemsize == 4 and grown._win.nbytes <= 4 * (601 + 65)
    assert h._win.itemsize == 4 and h._win.nbytes <= 4 * (601 + 65)
    assert h.mean == 0.0 and h.n == 601 and int(h.counts.sum()) == 601
    h.add(5, 10**6)
    assert h.to_dict()[5] == 10**6 + 1 and h.n == 601 + 10**6
    with pytest.raises(OverflowError):
        h.add(5, gain._MAX_COUNT)
    assert h.to_dict()[5] == 10**6 + 1  # unchanged
    big = np.zeros(N_BINS, dtype=np.int64)
    big[MAX_GAIN] = gain._MAX_COUNT + 1
    with pytest.raises(OverflowError):
        GainHistogram(big)
