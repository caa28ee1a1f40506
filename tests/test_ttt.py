"""TrueSkill Through Time: agreement with the reference package, TTT-D, numerics, refresh."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import log_ndtr

from livemon.rating import ttt


def simulate(n_players: int, n_games: int, n_steps: int, *, seed: int = 0, spread: float = 0.6,
             tau: float = 0.03, p_draw: float = 0.3, margins: np.ndarray | None = None,
             gaps: bool = False):
    """Games from the TTT model (or TTT-D when per-player ``margins`` are given)."""
    rng = np.random.default_rng(seed)
    walk = rng.normal(0, spread, n_players) + np.cumsum(rng.normal(0, tau, (n_steps, n_players)), axis=0)
    step = np.sort(rng.integers(0, n_steps, n_games))
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    d = walk[step, a] - walk[step, b] + rng.normal(0, math.sqrt(2.0), n_games)
    if margins is None:
        eps = ttt.draw_margin(p_draw, 1.0)
        score = np.where(d > eps, 1.0, np.where(d < -eps, 0.0, 0.5))
    else:
        score = np.where(d > margins[b], 1.0, np.where(-d > margins[a], 0.0, 0.5))
    times = step * 3 + (step % 2) if gaps else step  # uneven elapsed times
    return a, b, times, score


# --- truncated Gaussian moments -------------------------------------------------------


def test_win_moments_match_scipy_and_stay_finite_in_the_tails():
    t = np.array([-40.0, -12.0, -5.5, -4.9, -1.0, 0.0, 2.0, 8.0])
    v, w, log_z = ttt.win_moments(t)
    mean, var = stats.truncnorm.stats(-t[2:], np.inf, moments="mv")
    np.testing.assert_allclose(v[2:], mean, rtol=1e-7)
    np.testing.assert_allclose(1 - w[2:], var, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(log_z, log_ndtr(t), rtol=1e-12)
    v, w, log_z = ttt.win_moments(np.array([-1e300, -1e8, 1e8, 1e300]))
    assert np.all(np.isfinite(v)) and np.all((w >= 0) & (w <= 1)) and np.all(log_z <= 0)


def test_draw_moments_match_scipy_and_survive_tiny_intervals_and_huge_gaps():
    lo = np.array([-1.0, -3.0, 0.5, 4.0, -6.0])
    hi = np.array([1.0, -1.0, 2.5, 4.5, -5.5])
    v, w, log_z = ttt.draw_moments(lo, hi)
    mean, var = stats.truncnorm.stats(lo, hi, moments="mv")
    np.testing.assert_allclose(v, mean, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(1 - w, var, rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(log_z, np.log(stats.norm.cdf(hi) - stats.norm.cdf(lo)), rtol=1e-9)
    margin = ttt.draw_margin(1e-6, 1.0)
    for centre in (0.0, 3.0, 40.0, -300.0, 1e6):
        v, w, log_z = ttt.draw_moments(centre - margin, centre + margin)
        assert np.isfinite(v).all() and np.isfinite(log_z).all() and 0 <= w[0] <= 1
        if abs(centre) < 50:
            assert v[0] == pytest.approx(centre, abs=1e-3)  # the truncated mean sits in the interval


def test_bivariate_normal_orthant_matches_scipy():
    rng = np.random.default_rng(3)
    for _ in range(60):
        h, k = rng.normal(0, 1.5, 2)
        r = rng.uniform(-0.995, 0.995)
        expected = stats.multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([-h, -k])
        assert ttt._bvnu(float(h), float(k), float(r)) == pytest.approx(expected, abs=1e-9)


# --- agreement with the reference package ---------------------------------------------


@pytest.mark.slow
def test_agrees_with_trueskillthroughtime_at_its_fixed_point():
    ref = pytest.importorskip("trueskillthroughtime")
    a, b, times, score = simulate(20, 80, 8, seed=7, gaps=True)
    assert 0.2 < np.mean(score == 0.5) < 0.45
    params = ttt.TTTParams(mu0=0.0, sigma0=6.0, beta=1.0, tau=0.03, p_draw=0.3, tolerance=1e-9)
    mine = ttt.fit(ttt.make_games(a.astype(str), b.astype(str), times, score), params)
    comp = [[[str(x)], [str(y)]] if s != 0 else [[str(y)], [str(x)]] for x, y, s in zip(a, b, score)]
    outcomes = [[0, 0] if s == 0.5 else [1, 0] for s in score]
    h = ref.History(comp, outcomes, times=[int(t) for t in times], mu=0.0, sigma=6.0, beta=1.0,
                    gamma=0.03, p_draw=0.3)
    step, _ = h.convergence(epsilon=1e-7, iterations=4000, verbose=False)  # 294 sweeps (1e-9: 404, 1.35× the CPU)
    assert max(step) < 1e-6, "the reference did not reach its fixed point"
    curves = mine.curves()
    worst_mu = worst_sigma = 0.0
    for name, points in h.learning_curves().items():
        assert [t for t, _ in points] == [p["t"] for p in curves[name]]
        for (_, g), p in zip(points, curves[name]):
            worst_mu = max(worst_mu, abs(g.mu - p["mu"]))
            worst_sigma = max(worst_sigma, abs(g.sigma - p["sigma"]))
    assert worst_mu < 2e-5 and worst_sigma < 2e-5  # 2.4e-6 apart (the reference's own step stops it there)
    assert mine.log_evidence == pytest.approx(h.log_evidence(), abs=1e-5)


def test_common_shift_step_keeps_the_fixed_point_and_saves_sweeps():
    a, b, t, s = simulate(60, 600, 15, seed=2)
    games = ttt.make_games(a, b, t, s)
    fast = ttt.fit(games, ttt.TTTParams(tolerance=1e-10, max_sweeps=5000))
    plain = ttt.fit(games, ttt.TTTParams(tolerance=1e-10, max_sweeps=5000, accelerate=False))
    assert fast.converged and plain.converged
    np.testing.assert_allclose(fast.mu, plain.mu, atol=2e-6)
    np.testing.assert_allclose(fast.sigma, plain.sigma, atol=1e-7)
    assert fast.sweeps * 4 < plain.sweeps


def test_fit_stops_at_tolerance_and_reports_unconverged():
    a, b, t, s = simulate(20, 200, 5, seed=4)
    games = ttt.make_games(a, b, t, s)
    seen: list[tuple[int, float]] = []
    stopped = ttt.fit(games, ttt.TTTParams(max_sweeps=2, accelerate=False), progress=lambda k, x: seen.append((k, x)))
    assert not stopped.converged and stopped.sweeps == 2 and [k for k, _ in seen] == [1, 2]
    done = ttt.fit(games, ttt.TTTParams(tolerance=1e-6))
    assert done.converged and done.step < 1e-6


# --- TTT-D ---------------------------------------------------------------------------


def test_tttd_with_fixed_margins_reproduces_ttt():
    a, b, t, s = simulate(40, 500, 8, seed=5)
    games = ttt.make_games(a, b, t, s)
    plain = ttt.fit(games, ttt.TTTParams(p_draw=0.3, tolerance=1e-9))
    fixed = ttt.fit(games, ttt.TTTParams(p_draw=0.3, model="ttt-d", zeta0=1e-7, zeta=0.0, tolerance=1e-9))
    np.testing.assert_allclose(fixed.mu, plain.mu, atol=1e-6)
    np.testing.assert_allclose(fixed.sigma, plain.sigma, atol=1e-6)
    assert fixed.log_evidence == pytest.approx(plain.log_evidence, abs=1e-6)
    np.testing.assert_allclose(fixed.nu, ttt.draw_margin(0.3, 1.0), atol=1e-6)


def test_tttd_recovers_player_margins_and_beats_ttt_on_evidence():
    rng = np.random.default_rng(11)
    margins = rng.uniform(0.1, 1.3, 50)
    a, b, t, s = simulate(50, 3000, 6, seed=12, margins=margins, tau=0.0)
    games = ttt.make_games(a, b, t, s)
    plain = ttt.fit(games, ttt.TTTParams(p_draw=float(np.mean(s == 0.5))))
    per_player = ttt.fit(games, ttt.TTTParams(p_draw=float(np.mean(s == 0.5)), model="ttt-d", zeta0=0.5, zeta=0.0))
    assert per_player.converged
    latest_nu = {name: pts[-1]["nu"] for name, pts in per_player.curves().items()}
    estimate = np.array([latest_nu[i] for i in range(50)])
    correlation = np.corrcoef(estimate, margins)[0, 1]
    assert correlation > 0.7, f"margin recovery correlation {correlation:.2f}"
    assert per_player.log_evidence > plain.log_evidence + 10


def test_tttd_draw_site_matches_numerical_integration():
    """One draw, uncertain margins: EP moments vs a 3-D grid over (d, ε_a, ε_b)."""
    params = ttt.TTTParams(mu0=0.0, sigma0=1.0, beta=1.0, model="ttt-d", nu0=1.5, zeta0=0.4, zeta=0.0,
                           tolerance=1e-12)
    result = ttt.fit(ttt.make_games(["a", "c"], ["b", "d"], [0, 0], [0.5, 1.0]), params)
    pts = result.curves()
    grid_d = np.linspace(-7, 7, 281)
    grid_e = np.linspace(0.0, 3.6, 181)
    D, EA, EB = np.meshgrid(grid_d, grid_e, grid_e, indexing="ij")
    density = (stats.norm.pdf(D, 0, math.sqrt(2)) * stats.norm.pdf(EA, 1.5, 0.4) * stats.norm.pdf(EB, 1.5, 0.4)
               * (stats.norm.cdf((EB - D) / math.sqrt(2)) - stats.norm.cdf((-EA - D) / math.sqrt(2))))
    density /= density.sum()
    mean_d = (density * D).sum()
    var_d = (density * D ** 2).sum() - mean_d ** 2
    mean_ea = (density * EA).sum()
    var_ea = (density * EA ** 2).sum() - mean_ea ** 2
    # d = s_a − s_b; s_a | d is N(d/2, 1/2), so E s_a = ½ E d and Var s_a = ½ + ¼ Var d
    assert pts["a"][0]["mu"] == pytest.approx(mean_d / 2, abs=2e-3)
    assert pts["a"][0]["sigma"] ** 2 == pytest.approx(0.5 + var_d / 4, abs=2e-3)
    assert pts["a"][0]["nu"] == pytest.approx(mean_ea, abs=2e-3)
    assert pts["a"][0]["zeta"] ** 2 == pytest.approx(var_ea, abs=2e-3)


# --- numerics, time, priors -----------------------------------------------------------


@pytest.mark.parametrize("model", ["ttt", "ttt-d"])
def test_no_nan_for_extreme_inputs(model):
    # a champion who wins 60 games, loses one freak game, and draws with p_draw 1e-6
    white = ["champ"] * 60 + ["champ", "champ", "x0"]
    black = [f"x{i % 5}" for i in range(60)] + ["x1", "x2", "champ"]
    times = list(range(60)) + [60, 61, 61]
    score = [1.0] * 60 + [0.0, 0.5, 0.5]
    games = ttt.make_games(white, black, times, score)
    for p_draw, sigma0, tau in ((1e-6, 100.0, 0.0), (0.999, 0.01, 5.0), (0.3, 6.0, 1e-9)):
        params = ttt.TTTParams(sigma0=sigma0, tau=tau, p_draw=p_draw, model=model, max_sweeps=300)
        result = ttt.fit(games, params)
        arrays = [result.mu, result.sigma] + ([result.nu, result.zeta] if model == "ttt-d" else [])
        assert all(np.isfinite(x).all() for x in arrays) and np.isfinite(result.log_evidence)
        assert (result.sigma > 0).all()


def test_time_units_and_dates():
    dates = ["2024-01-01", "2024-01-08", "2024-02-01", "2025-06-30"]
    assert ttt.time_steps(dates, "day").tolist() == [19723.0, 19730.0, 19754.0, 20269.0]
    week = ttt.time_steps(dates, "week")
    assert week.tolist() == np.floor(ttt.time_steps(dates, "day") / 7).tolist() and week[1] - week[0] == 1
    assert np.diff(ttt.time_steps(dates, "month")).tolist() == [0.0, 1.0, 16.0]
    assert np.diff(ttt.time_steps(dates, "year")).tolist() == [0.0, 0.0, 1.0]
    assert ttt.time_steps(dates, "round").tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError):
        ttt.time_steps(dates, "fortnight")
    # dates in days and the same days as numbers give the same fit
    w, b, s = ["a", "b", "a", "c"], ["b", "c", "c", "a"], [1.0, 0.5, 0.0, 1.0]
    by_date = ttt.fit(ttt.make_games(w, b, dates, s, unit="day"))
    by_number = ttt.fit(ttt.make_games(w, b, ttt.time_steps(dates, "day"), s))
    np.testing.assert_allclose(by_date.mu, by_number.mu)


def test_long_absence_widens_uncertainty():
    w, b, s = ["a", "a", "b"], ["b", "c", "c"], [1.0, 1.0, 0.5]
    near = ttt.fit(ttt.make_games(w, b, [0, 1, 1], s), ttt.TTTParams(tau=0.5)).curves()["a"][-1]["sigma"]
    far = ttt.fit(ttt.make_games(w, b, [0, 50, 50], s), ttt.TTTParams(tau=0.5)).curves()["a"][-1]["sigma"]
    assert far > near + 0.5


def test_rating_priors_anchor_players():
    a, b, t, s = simulate(10, 100, 3, seed=9)
    games = ttt.make_games(a, b, t, s)
    free = ttt.fit(games)
    anchored = ttt.fit(games, priors={0: (5.0, 0.05)})
    assert anchored.curves()[0][0]["mu"] == pytest.approx(5.0, abs=0.1)
    assert abs(free.curves()[0][0]["mu"] - 5.0) > 1.0


# --- refresh, pickling, search -------------------------------------------------------


def simulate_windowed(n_games: int, n_players: int, n_steps: int = 100, seed: int = 0):
    """Players active over a window of steps, as in real histories (slow to converge cold)."""
    rng = np.random.default_rng(seed)
    window = n_steps // 5
    start = np.sort(rng.integers(-window + 1, n_steps, n_players))
    skill = rng.normal(0, 0.8, n_players)
    t = np.sort(rng.integers(0, n_steps, n_games))
    lo = np.searchsorted(start, t - window + 1)
    span = np.searchsorted(start, t, side="right") - lo
    keep = span >= 2
    t, lo, span = t[keep], lo[keep], span[keep]
    a = lo + (rng.random(t.size) * span).astype(np.int64)
    b = lo + (a - lo + 1 + (rng.random(t.size) * (span - 1)).astype(np.int64)) % span
    d = skill[a] - skill[b] + rng.normal(0, math.sqrt(2), t.size)
    eps = ttt.draw_margin(0.3, 1.0)
    return a, b, t, np.where(d > eps, 1.0, np.where(d < -eps, 0.0, 0.5))


def test_warm_refresh_equals_cold_fit_with_far_fewer_sweeps():
    a, b, t, s = simulate_windowed(3000, 170)
    params = ttt.TTTParams(tolerance=1e-6)  # the config default
    first = ttt.fit(ttt.make_games(a[:-1], b[:-1], t[:-1], s[:-1]), params)
    warm = ttt.refresh(first, ttt.make_games(a[-1:], b[-1:], t[-1:], s[-1:]))  # the live case: one more game
    cold = ttt.fit(ttt.make_games(a, b, t, s), params)
    assert warm.converged and cold.converged
    warm_curves, cold_curves = warm.curves(), cold.curves()
    assert warm_curves.keys() == cold_curves.keys()
    for name in cold_curves:
        for p, q in zip(warm_curves[name], cold_curves[name]):
            assert p["mu"] == pytest.approx(q["mu"], abs=3e-5) and p["sigma"] == pytest.approx(q["sigma"], abs=3e-6)
    assert warm.log_evidence == pytest.approx(cold.log_evidence, abs=1e-3)
    assert warm.sweeps * 2 < cold.sweeps


def _by_player_step(result: ttt.TTTFit) -> dict[tuple, tuple[float, float]]:
    labels = result.games.labels[result.node_player]
    return {(ttt._plain(n), float(s)): (float(m), float(sd))
            for n, s, m, sd in zip(labels, result.node_step, result.mu, result.sigma)}


@pytest.mark.parametrize("new_step", ["same", "next"])
def test_incremental_refresh_sweeps_only_what_moved_and_agrees_with_a_cold_fit(new_step):
    """One more game at the last step (or a new one): posteriors within 1e-5 of a cold fit at tolerance 1e-6.

    The stated agreement: |Δμ| and |Δσ| ≤ 1e-5 at every (player, step) (measured ~2e-6), log-evidence
    within 1e-3, for at most 1/10 of the cold fit's game updates.
    """
    a, b, t, s = simulate_windowed(60_000, 3400, seed=3)
    if new_step == "next":
        t = t.copy()
        t[-1] = t.max() + 1
    params = ttt.TTTParams(tolerance=1e-6)
    first = ttt.fit(ttt.make_games(a[:-1], b[:-1], t[:-1], s[:-1]), params)
    warm = ttt.refresh(first, ttt.make_games(a[-1:], b[-1:], t[-1:], s[-1:]))
    cold = ttt.fit(ttt.make_games(a, b, t, s), params)
    assert warm.incremental and cold.converged
    assert warm.updates * 10 <= cold.updates, (warm.updates, cold.updates)
    mine, ref = _by_player_step(warm), _by_player_step(cold)
    assert mine.keys() == ref.keys()
    assert max(abs(mine[k][0] - ref[k][0]) for k in ref) < 1e-5
    assert max(abs(mine[k][1] - ref[k][1]) for k in ref) < 1e-5
    assert warm.log_evidence == pytest.approx(cold.log_evidence, abs=1e-3)
    # and again on top of the incremental one (its state is complete, not a one-off)
    again = ttt.refresh(warm, ttt.make_games([a[0]], [b[0]], [t[-1]], [0.5]))
    assert again.incremental and again.games.white.shape[0] == len(cold.games) + 1


def test_refresh_seeds_priors_of_players_new_to_the_fit():
    """A player first seen in a later refresh gets the prior given then (the live Aronian 1093 ± 719 bug)."""
    a, b, t, s = simulate_windowed(20_000, 1200, seed=4)
    params = ttt.TTTParams(tolerance=1e-6)
    first = ttt.fit(ttt.make_games(a, b, t, s), params, priors={int(a[0]): (1.0, 0.5)})
    newcomer = 10_000  # not in the history
    new = ttt.make_games([newcomer, newcomer], [int(a[-1]), int(b[-1])], [t[-1], t[-1]], [0.0, 0.5])
    for result in (ttt.refresh(first, new, priors={newcomer: (3.0, 0.2)}),
                   ttt.fit(first.games.concat(new), params, priors={int(a[0]): (1.0, 0.5), newcomer: (3.0, 0.2)})):
        mu, sd = result.latest()[newcomer]
        assert 2.3 < mu < 3.1 and sd < 0.2  # the prior holds; a loss and a draw pull it down a little
        assert result.priors[int(a[0])] == (1.0, 0.5)  # earlier priors kept
    warm = ttt.refresh(first, new, priors={newcomer: (3.0, 0.2)})
    cold = ttt.fit(first.games.concat(new), params, priors={int(a[0]): (1.0, 0.5), newcomer: (3.0, 0.2)})
    assert warm.latest()[newcomer][0] == pytest.approx(cold.latest()[newcomer][0], abs=1e-5)


def test_refresh_with_a_new_prior_for_a_player_already_fitted_equals_a_cold_fit():
    """A rating tag that appears in a later game of a player fitted without one."""
    a, b, t, s = simulate_windowed(6000, 340, seed=5)
    params = ttt.TTTParams(tolerance=1e-6)
    first = ttt.fit(ttt.make_games(a[:-1], b[:-1], t[:-1], s[:-1]), params)
    late = {int(a[-1]): (2.0, 0.3)}
    warm = ttt.refresh(first, ttt.make_games(a[-1:], b[-1:], t[-1:], s[-1:]), priors=late)
    cold = ttt.fit(ttt.make_games(a, b, t, s), params, priors=late)
    mine, ref = _by_player_step(warm), _by_player_step(cold)
    assert max(abs(mine[k][0] - ref[k][0]) for k in ref) < 1e-5
    assert warm.latest()[int(a[-1])][0] > first.latest()[int(a[-1])][0] + 0.3  # the prior pulled it up


def test_tttd_refresh_and_pickle_round_trip():
    a, b, t, s = simulate(30, 400, 6, seed=14)
    params = ttt.TTTParams(model="ttt-d", tolerance=1e-8)
    first = ttt.fit(ttt.make_games(a[:390], b[:390], t[:390], s[:390]), params)
    restored = pickle.loads(pickle.dumps(first))
    warm = ttt.refresh(restored, ttt.make_games(a[390:], b[390:], t[390:], s[390:]))
    cold = ttt.fit(ttt.make_games(a, b, t, s), params)
    np.testing.assert_allclose(warm.mu, cold.mu, atol=1e-5)
    np.testing.assert_allclose(warm.nu, cold.nu, atol=1e-5)
    assert warm.sweeps < cold.sweeps


def test_search_finds_higher_evidence_than_a_poor_start():
    a, b, t, s = simulate(40, 800, 10, seed=15, spread=0.8, tau=0.05)
    games = ttt.make_games(a, b, t, s)
    start = dataclasses.replace(ttt.TTTParams(), beta=4.0, tau=0.5)
    poor = ttt.fit(games, start)
    best = ttt.search_parameters(games, start, max_evaluations=25)
    assert best.log_evidence > poor.log_evidence
    assert 0.01 < best.params.tau < 0.2  # the data drift with τ = 0.05


def test_live_refresh_reads_pgn_dates_with_unknown_parts():
    """Kasparov–Deep Blue is dated 1997.05.?? style: the live refresh must not fail on it."""
    import asyncio

    from livemon.config import TTTConfig
    from livemon.live.messages import GameInfo
    from livemon.io.tttjob import TTTJob
    from livemon.live.finished import FinishedGames

    games = [
        (GameInfo("a", white="Kasparov", black="Deep Blue", date="1997.05.??"), "1-0"),
        (GameInfo("b", white="Deep Blue", black="Kasparov", date="1997.??.??"), "1-0"),
        (GameInfo("c", white="Kasparov", black="Deep Blue", date="????.??.??"), "1/2-1/2"),
    ]
    job = TTTJob(TTTConfig())
    try:
        ratings = {r.name: r for r in asyncio.run(job.refresh(FinishedGames(games)))}
    finally:
        job.close()
    assert set(ratings) == {"Kasparov", "Deep Blue"}
    assert ratings["Kasparov"].games == 3 and ratings["Deep Blue"].games == 3
