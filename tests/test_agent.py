"""The E(c) agent and the posterior of c (docs/models.md §2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livemon.rating.agent import (
    K,
    CPosterior,
    CSummary,
    Decision,
    dense_posterior_summary,
    log_likelihood,
    move_probabilities,
)
from tests import agents

values_st = st.lists(st.floats(-39.0, 39.0, allow_nan=False), min_size=1, max_size=8)


def random_values(rng: np.random.Generator) -> np.ndarray:
    """Realistic MultiPV values: best 0, the others Exp(mean 0.5 pawn) worse; 2–5 candidates."""
    k = int(rng.integers(2, 6))
    return np.concatenate(([0.0], -np.sort(rng.exponential(0.5, k - 1))))


def simulate(rng: np.random.Generator, c: float, n: int) -> list[Decision]:
    """n moves of the agent E(c) in random realistic positions."""
    out = []
    for _ in range(n):
        v = random_values(rng)
        p = move_probabilities(v, c)
        out.append(Decision(tuple(v), int(rng.choice(v.size, p=p))))
    return out


def test_the_vectorised_players_play_the_agent():
    """tests/agents.py draws E(c)'s moves for many positions at once: its positions are random_values's (2–5
    candidates, best 0, the others sorted) and its probabilities are move_probabilities's."""
    rng = np.random.default_rng(9)
    values, k = agents.random_positions(rng, (400,))
    assert set(k.tolist()) == {2, 3, 4, 5}
    cs = np.linspace(0.0, 12.0, 400)
    p = agents.probabilities(values, cs)
    for v, m, c, q in zip(values, k, cs, p):
        assert v[0] == 0.0 and np.all(np.diff(v[:m]) <= 0) and np.all(np.isneginf(v[m:])) and np.all(q[m:] == 0)
        assert np.allclose(q[:m], move_probabilities(v[:m], c), rtol=1e-12, atol=1e-15)
    played = agents.draw(rng, np.broadcast_to(np.array([0.2, 0.5, 0.3, 0.0, 0.0]), (40_000, 5)))
    assert np.allclose(np.bincount(played, minlength=5) / 40_000, [0.2, 0.5, 0.3, 0.0, 0.0], atol=0.01)
    (ds,) = agents.play(rng, np.array([2.0]), 30)
    assert len(ds) == 30 and all(d == Decision(d.values, d.played) for d in ds)


# -- move_probabilities ------------------------------------------------------


@given(values_st, st.floats(0.0, 30.0))
def test_probabilities_sum_to_one_and_best_is_most_likely(values, c):
    p = move_probabilities(values, c)
    assert p.shape == (len(values),)
    assert abs(p.sum() - 1.0) < 1e-12
    assert np.all(p >= 0)
    best = int(np.argmax(values))
    assert p[best] >= p.max() - 1e-15


@given(values_st, st.floats(0.01, 20.0))
def test_probabilities_order_follows_values(values, c):
    p = move_probabilities(values, c)
    v = np.asarray(values)
    for i in range(v.size):
        for j in range(v.size):
            if v[i] > v[j] + 1e-6:  # below that, rounding of v_max − v + K decides
                assert p[i] > p[j] or p[j] == 0.0


def test_c_zero_is_uniform():
    p = move_probabilities([1.0, -3.0, 0.2, -0.7], 0.0)
    assert np.allclose(p, 0.25, atol=1e-15)


def test_larger_c_concentrates_on_best():
    v = [0.0, -0.2, -0.5, -1.5]
    p_best = [move_probabilities(v, c)[0] for c in (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)]
    assert all(a < b for a, b in zip(p_best, p_best[1:]))
    assert p_best[-1] > 0.99


@given(values_st, st.floats(0.0, 10.0))
def test_matches_direct_computation(values, c):
    v = np.asarray(values, dtype=float)
    w = (v.max() - v + K) ** (-c)
    assert np.allclose(move_probabilities(v, c), w / w.sum(), rtol=1e-10, atol=1e-300)


def test_vectorised_over_grid_equals_scalar_calls():
    v = [0.3, 0.1, -0.4]
    grid = np.linspace(0, 5, 11)
    p = move_probabilities(v, grid)
    assert p.shape == (3, 11)
    for k, c in enumerate(grid):
        assert np.allclose(p[:, k], move_probabilities(v, c))


def test_huge_c_does_not_overflow():
    p = move_probabilities([0.0, -39.0, -0.01], 500.0)
    assert np.all(np.isfinite(p)) and abs(p.sum() - 1) < 1e-12
    assert p[0] > p[2] > p[1]


def test_log_likelihood_is_sum_of_log_probabilities():
    rng = np.random.default_rng(5)
    ds = simulate(rng, 1.3, 25)
    grid = np.linspace(0, 10, 41)
    expected = sum(np.log(move_probabilities(d.values, grid)[d.played]) for d in ds)
    assert np.allclose(log_likelihood(ds, grid), expected, rtol=1e-12, atol=1e-9)


# -- Decision and the played-move rule ----------------------------------------


def test_played_move_outside_candidates_is_appended_with_value_after():
    d = Decision.from_analysis([("e2e4", 0.30), ("d2d4", 0.25), ("c2c4", 0.20)], "a2a3", -0.40)
    assert d == Decision((0.30, 0.25, 0.20, -0.40), 3)
    # probability is positive, not zero as in the paper
    assert move_probabilities(d.values, 2.0)[d.played] > 0


def test_played_move_among_candidates_uses_its_index_and_ignores_after_value():
    d = Decision.from_analysis([("e2e4", 0.30), ("d2d4", 0.25)], "d2d4", 5.0)
    assert d == Decision((0.30, 0.25), 1)


def test_played_move_better_than_all_candidates_becomes_best():
    d = Decision.from_analysis([("e2e4", 0.30), ("d2d4", 0.25)], "g1f3", 0.50)
    assert d is not None and d.played == 2
    assert np.argmax(move_probabilities(d.values, 1.0)) == 2


@pytest.mark.parametrize(
    "candidates, played, after",
    [
        ([("e2e4", 0.3), ("d2d4", 0.2)], "g1f3", None),  # not among candidates, no value after
        ([("e2e4", 0.3)], "e2e4", 0.3),  # only one candidate
        ([], "e2e4", 0.3),  # nothing analysed: a single value is no choice
    ],
)
def test_no_information_gives_none(candidates, played, after):
    assert Decision.from_analysis(candidates, played, after) is None


def test_decision_validation_and_round_trip():
    with pytest.raises(ValueError):
        Decision((0.0, 1.0), 2)
    with pytest.raises(ValueError):
        Decision((0.0, math.nan), 0)
    d = Decision((0.5, -0.25, 1.0), 1)
    assert Decision.from_dict(json.loads(json.dumps(d.to_dict()))) == d
    assert hash(Decision((0.5, -0.25, 1.0), 1)) == hash(d)


# -- posterior ------------------------------------------------------------------


def test_empty_posterior_has_no_summary_and_prior_reference_is_uniform():
    assert CPosterior().summary() is None
    ref = dense_posterior_summary([], 0.0, 10.0)
    assert ref.mean == pytest.approx(5.0, abs=1e-9)
    assert ref.sd == pytest.approx(10 / math.sqrt(12), abs=1e-6)
    assert ref.cr95 == pytest.approx((0.25, 9.75), abs=1e-6)


def test_posterior_concentrates_near_true_c():
    rng = np.random.default_rng(11)
    post = CPosterior()
    for d in simulate(rng, 2.0, 3000):
        post.add(d)
    s = post.summary()
    assert s is not None and s.n == 3000
    assert abs(s.mean - 2.0) < 4 * s.sd
    assert s.sd < 0.15
    assert s.cr95[0] < s.mean < s.cr95[1]


def _close(a: CSummary, b: CSummary, tol: float) -> None:
    assert a.n == b.n
    assert abs(a.mean - b.mean) < tol, (a, b)
    assert abs(a.sd - b.sd) < tol, (a, b)
    assert abs(a.cr95[0] - b.cr95[0]) < tol, (a, b)
    assert abs(a.cr95[1] - b.cr95[1]) < tol, (a, b)


TOL = 1e-3  # stated tolerance against the dense 20001-point grid (observed: ~1e-4 or better)


@pytest.mark.parametrize("seed", range(30))
def test_adaptive_grid_matches_dense_grid_few_moves(seed):
    """Flat and moderately informative posteriors, including ones piled at c_min or c_max."""
    rng = np.random.default_rng(seed)
    c = float(rng.choice([0.0, 0.3, 1.0, 2.5, 6.0, 10.0, rng.uniform(0, 10)]))
    n = int(rng.choice([1, 2, 3, 5, 10, 20, 50, 150]))
    ds = simulate(rng, c, n)
    post = CPosterior()
    for d in ds:
        post.add(d)
    _close(post.summary(), dense_posterior_summary(ds), TOL)


@pytest.mark.parametrize("c, n", [(0.05, 2000), (1.0, 4000), (2.5, 3000), (4.5, 2000)])
def test_adaptive_grid_matches_dense_grid_concentrated(c, n):
    rng = np.random.default_rng(int(c * 100) + n)
    ds = simulate(rng, c, n)
    post = CPosterior()
    for i, d in enumerate(ds):
        post.add(d)
        if i % 97 == 0:  # the live path: summaries along the way re-grid incrementally
            post.summary()
    s = post.summary()
    assert post.grid.size < 400
    assert post.grid[-1] - post.grid[0] < 5.0  # the window did narrow
    _close(s, dense_posterior_summary(ds), TOL)


def test_adaptive_grid_other_prior_range():
    rng = np.random.default_rng(3)
    ds = simulate(rng, 1.5, 40)
    post = CPosterior(c_min=0.5, c_max=4.0)
    for d in ds:
        post.add(d)
    _close(post.summary(), dense_posterior_summary(ds, 0.5, 4.0), TOL)


def test_mass_moving_to_an_inner_edge_is_followed():
    """Concentrate near c=1, then a long run of best moves drags the mass upward."""
    rng = np.random.default_rng(8)
    ds = simulate(rng, 1.0, 400)
    post = CPosterior()
    for d in ds:
        post.add(d)
    first = post.summary()
    extra = simulate(rng, 6.0, 3000)
    for d in extra:
        post.add(d)
        post.summary()
    s = post.summary()
    assert s.mean > first.cr95[1] + 0.5
    _close(s, dense_posterior_summary(ds + extra), TOL)


def test_add_remove_round_trip():
    rng = np.random.default_rng(21)
    base = simulate(rng, 1.5, 300)
    extra = simulate(rng, 4.0, 50)  # a "corrected game"
    post = CPosterior()
    for d in base:
        post.add(d)
    before = post.summary()
    for d in extra:
        post.add(d)
    assert abs(post.summary().mean - before.mean) > 1e-3  # the extra game mattered
    for d in extra:
        post.remove(d)
    after = post.summary()
    assert post.n == len(base)
    _close(after, before, 1e-9)
    _close(after, dense_posterior_summary(base), TOL)


def test_remove_all_returns_to_prior_and_unknown_remove_fails():
    d = Decision((0.0, -0.3), 0)
    post = CPosterior()
    post.add(d)
    post.add(d)
    post.remove(d)
    assert post.n == 1 and post.summary().n == 1
    post.remove(d)
    assert post.n == 0 and post.summary() is None
    with pytest.raises(KeyError):
        post.remove(d)


def test_to_dict_round_trip():
    rng = np.random.default_rng(4)
    ds = simulate(rng, 2.0, 200) + [Decision((0.0, -0.3), 0)] * 3
    post = CPosterior(0.0, 8.0)
    for d in ds:
        post.add(d)
    back = CPosterior.from_dict(json.loads(json.dumps(post.to_dict())))
    assert back.n == post.n and back.c_min == 0.0 and back.c_max == 8.0
    assert sorted(map(repr, back.decisions())) == sorted(map(repr, ds))
    _close(back.summary(), post.summary(), 1e-6)
    s = post.summary()
    assert CSummary.from_dict(json.loads(json.dumps(s.to_dict()))) == s


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.floats(-5, 5), min_size=2, max_size=5), st.integers(0, 4)),
                min_size=1, max_size=30))
def test_adaptive_matches_dense_on_arbitrary_decisions(raw):
    ds = [Decision(tuple(v), p % len(v)) for v, p in raw]
    post = CPosterior()
    for d in ds:
        post.add(d)
    _close(post.summary(), dense_posterior_summary(ds, n=4001), 2e-3)


def test_credible_region_coverage():
    """Calibration of the 95% region: 2000 players × 60 positions, true c drawn from the prior.

    When the true c is drawn from the prior the frequentist coverage of a
    Bayesian region equals its nominal level exactly, so 95% ± 4 binomial sd
    (93–97%). A wrong model (K, sign of c, the played-move probabilities, the
    quadrature) moves it far outside this band.
    """
    rng = np.random.default_rng(1)  # seed fixed; an independent check over 20000 players gave 95.0%
    players, covered = 2000, 0
    cs = rng.uniform(0.0, 10.0, players)
    for c, decisions in zip(cs.tolist(), agents.play(rng, cs, 60)):
        post = CPosterior()
        for d in decisions:
            post.add(d)
        lo, hi = post.summary().cr95
        covered += lo <= c <= hi
    assert 0.93 <= covered / players <= 0.97, covered


def test_credible_region_coverage_at_fixed_realistic_c():
    """At a fixed c the coverage is asymptotic (Bernstein–von Mises); 150 moves is plenty."""
    rng = np.random.default_rng(77)
    players, covered = 400, 0
    for decisions in agents.play(rng, np.full(players, 1.5), 150):
        post = CPosterior()
        for d in decisions:
            post.add(d)
        lo, hi = post.summary().cr95
        covered += lo <= 1.5 <= hi
    assert 0.92 <= covered / players <= 0.98, covered


def test_posterior_reading_the_callers_record_equals_one_keeping_its_own_counts():
    """The live posterior keeps no decision (``source``: the estimator's record); through re-grids
    and removals it gives what a posterior keeping its own counts gives."""
    rng = np.random.default_rng(5)
    decisions = [Decision(tuple(np.concatenate(([0.0], -np.sort(rng.exponential(0.5, 3))))), int(rng.integers(0, 4)))
                 for _ in range(400)]
    record: list[Decision] = []
    own, read = CPosterior(), CPosterior(source=lambda: record)
    for i, d in enumerate(decisions):
        record.append(d)
        own.add(d)
        read.add(d)
        if i % 50 == 49:  # a correction: the last ten withdrawn
            for gone in record[-10:]:
                own.remove(gone)
            del record[-10:]
            for gone in decisions[i - 9:i + 1]:
                read.remove(gone)
        if i % 25 == 0:
            a, b = own.summary(), read.summary()
            assert a is not None and b is not None and own.n == read.n == len(record)
            assert abs(a.mean - b.mean) < 1e-9 and abs(a.sd - b.sd) < 1e-9
    assert read.decisions() == record and len(read.grid) != 101  # re-gridded from the record


def test_a_posterior_made_when_its_source_already_holds_the_first_decision_counts_it_once():
    """The estimator records a ply before it makes the mover's posterior and adds the ply's decision to it:
    the new posterior's sum starts empty (it holds none of its decisions yet), so that decision is counted
    once, re-gridded or not."""
    record = [Decision((0.0, -0.4, -1.1), 0)]
    made_late = CPosterior(source=lambda: record)
    made_late.add(record[0])
    alone = CPosterior()
    alone.add(record[0])
    a, b = made_late.summary(), alone.summary()
    assert a is not None and b is not None and a.n == 1
    assert abs(a.mean - b.mean) < 1e-12 and abs(a.sd - b.sd) < 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_a_posterior_reads_the_same_figures_whatever_order_and_reads_its_decisions_came_in(seed):
    """The grid a posterior is read on is a function of its decisions alone: fed in another order, read after
    other moves (so through other grids), with a correction on the way, it gives the same figures to the last
    bits of a sum."""
    rng = np.random.default_rng(seed)
    decisions = simulate(rng, float(rng.uniform(0.2, 3.0)), 300)
    in_order = CPosterior()
    for d in decisions:
        in_order.add(d)
    reference = in_order.summary()
    shuffled, extra = CPosterior(), decisions[:7]
    order = list(rng.permutation(len(decisions)))
    for k, i in enumerate(order):
        shuffled.add(decisions[i])
        if k % int(rng.integers(1, 30)) == 0:
            shuffled.summary()
        if k == 150:  # a correction: some decisions out and back in
            for d in extra:
                shuffled.add(d)
            shuffled.summary()
            for d in extra:
                shuffled.remove(d)
    got = shuffled.summary()
    assert reference is not None and got is not None and got.n == reference.n
    assert abs(got.mean - reference.mean) < 1e-12 and abs(got.sd - reference.sd) < 1e-12
    assert max(abs(a - b) for a, b in zip(got.cr95, reference.cr95)) < 1e-12


def test_a_burst_read_once_equals_reading_after_every_move():
    """The decisions added or removed between two reads go into the grid's sum together (one vectorised
    call): the same posterior as reading it after each one, through re-grids and a correction."""
    rng = np.random.default_rng(8)
    decisions = simulate(rng, 2.0, 600)
    each, burst = CPosterior(), CPosterior()
    for i, d in enumerate(decisions):
        each.add(d)
        burst.add(d)
        each.summary()  # read after every move: one row at a time
        if i % 97 == 96:  # a correction in the burst: the last five withdrawn, two put back
            for gone in decisions[i - 4:i + 1]:
                each.remove(gone)
                each.summary()
                burst.remove(gone)
            for back in decisions[i - 1:i + 1]:
                each.add(back)
                each.summary()
                burst.add(back)
        if i % 150 == 149:  # the burst is read now and then (its grid moves with its own reads)
            a, b = each.summary(), burst.summary()
            assert a is not None and b is not None and a.n == b.n
            _close(a, b, 1e-4)  # their grids differ (each re-grids when its own reads find it due): ~1e-5
    a, b = each.summary(), burst.summary()
    assert a is not None and b is not None and a.n == b.n == each.n
    _close(a, b, 1e-4)
    _close(b, dense_posterior_summary(burst.decisions()), TOL)


def test_played_log_probs_are_the_max_shifted_log_softmax_bit_for_bit():
    """Where c >= 0 the rows are made without taking each row's largest log weight out first (it is 0 or -0.0): the
    same floats, to the bit, as the shifted form; with c < 0 the shift is taken."""
    from livemon.rating.agent import log_distances, played_log_probs

    rng = np.random.default_rng(4)
    for trial in range(60):
        k, m = int(rng.integers(2, 7)), int(rng.integers(1, 500))
        values = np.round(rng.normal(0, 2, (m, k)) * 100) / 100
        values[: m // 3, 1] = values[: m // 3, 0]  # ties at the top
        a, played = log_distances(values), rng.integers(0, k, m)
        c = np.linspace(-1.0 if trial % 3 == 0 else 0.0, float(rng.uniform(0.5, 10.0)), int(rng.integers(2, 300)))
        e = a[:, :, None] * -c
        mx = e.max(axis=1)
        want = e[np.arange(m), played] - (np.log(np.exp(e - mx[:, None, :]).sum(axis=1)) + mx)
        got = np.concatenate([rows for _, rows in played_log_probs(a, played, c)])
        assert got.tobytes() == want.tobytes()
