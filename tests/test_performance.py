"""The headline performance estimate (livemon.rating.performance) and where it is shown."""

from __future__ import annotations

import numpy as np
import pytest

from livemon.live.estimator import Estimator, ScoredPly
from livemon.live.messages import GameInfo
from livemon.rating.agent import Decision, move_probabilities
from livemon.rating.calibration import Calibration
from livemon.rating.performance import Performance, PerformanceModel

CAL = Calibration(a=-0.5, b=0.0005, n=200, elo_min=1400, elo_max=2800, r2=0.6, residual_sd=0.07, method="ml",
                  profile="sf d12", cov_ab=(1e-4, -4e-8, 2e-11), tau=0.07, tau_game=0.15, book_moves=0,
                  eval_bound=3.0)


def simulated(rng: np.random.Generator, c: float, n: int) -> list[Decision]:
    """n moves of E(c) in positions whose candidate values look like real MultiPV lines."""
    out = []
    for _ in range(n):
        gaps = np.cumsum(rng.exponential(0.25, size=3))
        values = np.concatenate([[0.0], -gaps]) + rng.normal(0, 0.5)
        out.append(Decision(tuple(values), int(rng.choice(4, p=move_probabilities(values, c)))))
    return out


def test_single_games_unbiased_with_honest_coverage() -> None:
    """Players drawn from the calibration's own model: no bias by rating, 95% intervals cover ~95%."""
    rng = np.random.default_rng(11)
    model = PerformanceModel.from_calibration(CAL)
    rows = []
    for _ in range(240):
        elo = rng.uniform(1500, 2700)
        c = CAL.a + CAL.b * elo + rng.normal(0, CAL.tau_game)
        p = model.estimate(simulated(rng, c, 35), games=1)
        assert p.elo is not None and p.cr95 is not None
        rows.append((elo, p.elo, p.cr95[0] <= elo <= p.cr95[1]))
    elo, est, inside = (np.array(x) for x in zip(*rows))
    err = est - elo
    assert 0.90 <= inside.mean() <= 0.99, inside.mean()
    for lo, hi in ((1500, 1900), (1900, 2300), (2300, 2700)):
        band = (elo >= lo) & (elo < hi)
        assert abs(err[band].mean()) < 150, (lo, err[band].mean())  # MAE is ~400 for one game here
    assert np.corrcoef(est, elo)[0, 1] > 0.3


def test_more_games_narrow_the_interval_down_to_tau_only() -> None:
    rng = np.random.default_rng(3)
    model = PerformanceModel.from_calibration(CAL)
    moves = simulated(rng, 0.6, 300)
    one, nine = model.estimate(moves, games=1), model.estimate(moves, games=9)
    assert one.cr95 is not None and nine.cr95 is not None
    assert (nine.cr95[1] - nine.cr95[0]) < (one.cr95[1] - one.cr95[0])
    # never narrower than the honest players' own spread around the line (±1.96 τ / b)
    assert nine.cr95[1] - nine.cr95[0] > 2 * 1.96 * CAL.tau / CAL.b * 0.95  # type: ignore[operator]


def test_the_elo_posterior_is_the_dense_kernel_s_to_a_fraction_of_an_elo() -> None:
    """The posterior over ratings is a convolution of the likelihood in c with the Gaussian N(c; a + b·r, τ²)
    (no dense rating × c kernel per τ): the median and interval equal those of the dense
    product to < 0.5 Elo, for short and long performances and every τ."""
    from livemon.rating.performance import ELO_RANGE, LL_SCALE, fixed_point_log_likelihood

    rng = np.random.default_rng(5)
    model = PerformanceModel.from_calibration(CAL)
    c_grid = model.c_grid
    elo = np.linspace(ELO_RANGE[0], ELO_RANGE[1], 641)
    for n, games in ((12, 1), (40, 1), (150, 3), (600, 9)):
        for _ in range(5):
            true_c = CAL.a + CAL.b * rng.uniform(1500, 2700)
            decisions = simulated(rng, true_c, n)
            ll = fixed_point_log_likelihood(decisions, c_grid).sum(axis=0) / LL_SCALE
            tau = model.spread(games)
            kernel = np.exp(-0.5 * ((c_grid[None, :] - (CAL.a + CAL.b * elo)[:, None]) / tau) ** 2)
            cdf = np.cumsum(kernel @ np.exp(ll - ll.max()))
            cdf /= cdf[-1]
            dense = [float(np.interp(q, cdf, elo)) for q in (0.5, 0.025, 0.975)]
            got = model.estimate(decisions, games=games)
            assert got.elo is not None and got.cr95 is not None
            med, lo, hi = dense
            se = CAL.rating_for_c_se(CAL.c_for_rating(med)) or 0.0
            w = 1.959964 * se
            expected = (med, med - np.hypot(med - lo, w), med + np.hypot(hi - med, w))
            assert np.allclose((got.elo, *got.cr95), expected, atol=0.5, rtol=0), (n, games, got, expected)


def test_too_few_positions_and_no_calibration_give_reasons() -> None:
    model = PerformanceModel.from_calibration(CAL)
    p = model.estimate([Decision((0.0, -1.0), 0)] * 2)
    assert p.elo is None and p.cr95 is None and "at least" in (p.reason or "")
    with pytest.raises(ValueError):
        PerformanceModel.from_calibration(Calibration.fit([(1500, 0.5), (2000, 1.0), (2500, 1.4)]))
    d = Performance.unavailable("uncalibrated: no calibration", 7, "sf d99").to_dict()
    assert d == {"elo": None, "cr95": None, "positions": 7, "profile": "sf d99", "calibration": None,
                 "reason": "uncalibrated: no calibration"}


def _estimator_with_moves(cal: Calibration | None) -> Estimator:
    est = Estimator()
    est.c_map, est.profile = cal, "sf d12"
    est.add_game(GameInfo("g", "A", "B", 2500, 2400, event="event"))
    rng = np.random.default_rng(5)
    for ply, d in enumerate(simulated(rng, 0.8, 40), start=1):
        est.add_ply(ScoredPly("g", ply, 0, 0, d))
    return est


def test_estimator_reports_performance_and_rollback_withdraws_it() -> None:
    est = _estimator_with_moves(CAL)
    player = est.players["A"]
    perf = est.performance(player).to_dict()
    assert perf["positions"] == 20 and perf["elo"] is not None and perf["profile"] == "sf d12"
    assert perf["calibration"].startswith("FIDE classical")
    est.rollback("g", 21)
    assert est.performance(player).positions == 10


def test_uncalibrated_profile_shows_the_reason_not_a_number() -> None:
    est = _estimator_with_moves(None)
    perf = est.performance(est.players["A"]).to_dict()
    assert perf["elo"] is None and perf["reason"].startswith("uncalibrated") and "sf d12" in perf["reason"]


def test_analyse_never_borrows_another_profiles_calibration_and_warns_once_for_another_pool(
        tmp_path, fake_engine, capsys, monkeypatch) -> None:
    """depth 4 has no calibration: every player's performance is null with the reason; a pool mismatch warns once.

    The profiles are what matter here, not the searches: the scripted engine answers under the shipped
    calibration's engine name."""
    import json
    from importlib import resources

    from livemon.cli import main

    monkeypatch.setenv("FAKE_UCI_NAME", "Stockfish 15.1")
    pgn = resources.files("livemon") / "data" / "wcc2023_game1.pgn"
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[engine]\npath = "{fake_engine}"\n[analysis]\nrating_pool = "lichess classical"\n')
    store = str(tmp_path / "s.sqlite")
    assert main(["analyse", str(pgn), "--depth", "4", "--store", store, "--config", str(cfg), "--json"]) == 0
    captured = capsys.readouterr()
    players = json.loads(captured.out)["players"]
    assert players and all(p["performance"]["elo"] is None for p in players)
    assert all("uncalibrated" in p["performance"]["reason"] and "depth=4" in p["performance"]["reason"] for p in players)
    assert captured.err.count("warning: the calibration") == 0  # no calibration: nothing to mismatch
    # the default profile has the shipped calibration (FIDE classical): the lichess pool warns, once
    assert main(["analyse", str(pgn), "--depth", "12", "--store", store, "--config", str(cfg), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("maps FIDE classical ratings, the event's ratings are lichess classical") == 1
    assert all(p["performance"]["elo"] is not None for p in json.loads(captured.out)["players"])


def test_the_columns_below_zero_are_summed_only_where_they_can_count() -> None:
    """A player whose likelihood at c = 0 is far under its peak gets the estimate of the whole sum without the
    grid's columns below c = 0 (its log-likelihood is concave in c: they are bounded under the support); a
    player of few, random-looking moves has them made. Both equal the estimate made from scratch, bit for bit."""
    from livemon.rating.performance import PerformanceTally, fixed_point_log_likelihood

    model = PerformanceModel.from_calibration(CAL)
    assert (model.c_grid < 0).any()
    rng = np.random.default_rng(5)
    for c, n, below in ((1.0, 300, False), (0.0, 30, True)):
        record = [(i // 40, d, 40 + 2 * (i % 40)) for i, d in enumerate(simulated(rng, c, n))]
        tally = PerformanceTally(model, lambda record=record: record)
        counted = [d for _, d, ply in record if model.counts(d, ply)]
        assert tally.estimate() == model.estimate(counted, games=len({g for g, _, _ in record}))
        assert (tally._from == 0) is below
        assert np.array_equal(tally.log_likelihood(), fixed_point_log_likelihood(counted, model.c_grid).sum(axis=0))


def test_incremental_tally_equals_the_computation_from_scratch() -> None:
    """The per-player sum kept move by move (moves in any order, new games changing τ, rolled-back moves)
    gives bit for bit what PerformanceModel.estimate gives over the same moves from scratch."""
    from livemon.rating.performance import PerformanceTally, fixed_point_log_likelihood

    rng = np.random.default_rng(17)
    cal = CAL.__class__(**{**CAL.__dict__, "book_moves": 4, "eval_bound": 3.0})
    model = PerformanceModel.from_calibration(cal)
    moves = {(g, ply): d for g in range(5) for ply, d in zip(range(1, 120, 2), simulated(rng, 0.4 + 0.2 * g, 60))}
    keys = list(moves)
    order = rng.permutation(len(keys))
    record: dict[tuple[int, int], object] = {}  # the caller's moves, which the tally follows
    reads = []

    def source() -> list:
        reads.append(len(record))
        return [(k[0], d, k[1]) for k, d in record.items()]

    tally = PerformanceTally(model, source)

    def add(k: tuple[int, int]) -> None:
        record[k] = moves[k]
        tally.add(k[0], moves[k], k[1])

    def remove(k: tuple[int, int]) -> None:
        del record[k]
        tally.remove(k[0], moves[k], k[1])

    def counted() -> list[tuple[tuple[int, int], object]]:
        return [(k, d) for k, d in moves.items() if k in record and model.counts(d, k[1])]

    checked = 0
    for step, i in enumerate(order):
        add(keys[i])
        if step % 37 == 0:  # a correction: a few moves withdrawn (checked without them), then sent again
            gone = [keys[j] for j in order[max(0, step - 5):step]]
            for k in gone:
                remove(k)
            now = counted()
            assert tally.estimate() == model.estimate([d for _, d in now], games=len({k[0] for k, _ in now}) or 1)
            for k in gone:
                add(k)
        if step % 23 == 0 or step == len(order) - 1:
            now = counted()
            games = len({k[0] for k, _ in now}) or 1
            assert tally.positions == len(now) and tally.games == games
            assert tally.estimate() == model.estimate([d for _, d in now], games=games)
            if len(now) >= model.min_positions:
                fresh = fixed_point_log_likelihood([d for _, d in now], model.c_grid).sum(axis=0)
                assert np.array_equal(tally.log_likelihood(), fresh)
                checked += 1
    # the moves were read once to count them, once for the first sum, and once for the columns below c = 0 when
    # the whole sum was first asked (the estimates leave them out where they cannot count): a new game (another τ)
    # reads none again
    assert len(reads) == 3
    # a tally made over a record that already holds every move counts the same
    again = PerformanceTally(model, lambda: [(k[0], d, k[1]) for k, d in record.items()])
    assert (again.positions, again.games, again.estimate()) == (tally.positions, tally.games, tally.estimate())
    assert checked > 5 and tally.games == 5
    # book moves (the first 4 of each side) and decided positions never count
    assert tally.positions == sum(1 for (g, ply), d in moves.items() if (ply + 1) // 2 > 4 and max(d.values) <= 3.0) > 200
    # and the fixed point changes nothing that is shown: the float sum gives the same figure to the published 0.1
    from livemon.rating.agent import log_likelihood
    ds = [d for _, d in counted()]
    assert np.allclose(log_likelihood(ds, model.c_grid), tally.log_likelihood() / 2.0**32, rtol=0, atol=1e-6)


def test_estimator_performance_follows_moves_rollbacks_and_a_new_calibration() -> None:
    """Estimator.performance kept up to date equals the estimate over all the player's counted moves."""
    est = _estimator_with_moves(CAL)
    player = est.players["A"]
    first = est.performance(player)
    rng = np.random.default_rng(9)
    est.add_game(GameInfo("h", "A", "C", 2500, 2300, event="event"))
    for ply, d in enumerate(simulated(rng, 0.5, 30), start=1):
        est.add_ply(ScoredPly("h", ply, 0, 0, d))
    model = PerformanceModel.from_calibration(CAL)

    def scratch() -> Performance:
        used = [((g.seq, ply), sp.decision) for g in est.games.values() for ply, sp in sorted(g.plies.items())
                if sp.decision is not None and est.mover(g.info.game_id, ply) is player
                and model.counts(sp.decision, ply)]
        return model.estimate([d for _, d in used], games=len({k[0] for k, _ in used}) or 1)

    assert est.performance(player) == scratch() != first
    est.rollback("h", 11)
    assert est.performance(player) == scratch()
    est.rollback("h", 1)
    assert est.performance(player) == scratch() == first
    other = CAL.__class__(**{**CAL.__dict__, "a": -0.4})
    est.c_map = other  # another calibration: the tally is rebuilt on it
    model = PerformanceModel.from_calibration(other)
    assert est.performance(player) == scratch() != first
