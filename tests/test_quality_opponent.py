"""A game read from both sides (livemon.rating.quality.JointWeights), on simulated games whose truth is known: the
two sides share part of their day (a quiet game flatters both), and a strong opponent's hard positions make a
player's moves look weaker."""

from __future__ import annotations

import numpy as np
import pytest

from livemon.rating.quality import FEATURES, FIXED, GameSample, QualityStats, fit_quality_model

SHARE = 0.6  # the share of a game's day part the two sides have in common


def _sums(f: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.round(f * FIXED).sum(axis=0).astype(np.int64))


def _games(events: int, seed: int, opponent_effect: float = 0.0) -> list[tuple[GameSample, GameSample]]:
    """Round robins of 10 players 1400-2800: per game a shared part, each side's own part and its moves' noise;
    ``opponent_effect``: how much the opponent's rating lowers a side's features (harder positions)."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(events):
        elos = 1400.0 + 1400.0 * rng.random(10)
        shift = rng.normal(0.0, 0.1, 10)
        for i in range(10):
            for j in range(i + 1, 10):
                shared = rng.normal(0.0, 0.4)
                pair = []
                for p, q in ((i, j), (j, i)):
                    day = np.sqrt(SHARE) * shared + np.sqrt(1 - SHARE) * rng.normal(0.0, 0.4)
                    level = (elos[p] - 2000.0) / 1000.0 - opponent_effect * (elos[q] - 2000.0) / 1000.0
                    f = level + shift[p] + day + rng.normal(0.0, 2.0, (25, len(FEATURES)))
                    pair.append(GameSample(float(elos[p]), (e, p), f, e, (e, i, j)))
                out.append((pair[0], pair[1]))
    return out


def _one_game(g: GameSample, opp: GameSample | None) -> QualityStats:
    own = (_sums(g.features), len(g.features))
    return QualityStats(own[0], own[1], 1, (own,), () if opp is None else ((_sums(opp.features), len(opp.features), opp.elo),))


def _errors(model, games) -> dict[str, list[tuple[float, float, float]]]:
    """(player's rating, opponent's rating, error) of each side, read from its own moves and from both sides."""
    out: dict[str, list[tuple[float, float, float]]] = {"alone": [], "both": []}
    for a, b in games:
        for me, them in ((a, b), (b, a)):
            out["alone"].append((me.elo, them.elo, model.score(_one_game(me, None)) - me.elo))
            out["both"].append((me.elo, them.elo, model.score(_one_game(me, them)) - me.elo))
    return out


def test_a_game_read_from_both_sides_is_sharper_and_stays_unbiased() -> None:
    fit = [s for pair in _games(8, seed=5) for s in pair]
    model = fit_quality_model(fit, "sim")
    assert model.joint is not None
    assert fit_quality_model([GameSample(s.elo, s.player_event, s.features, s.event) for s in fit], "sim").joint is None
    assert fit_quality_model(fit, "sim", opponents=False).joint is None
    errors = _errors(model, _games(12, seed=17))
    mae = {k: float(np.mean([abs(e) for _, _, e in v])) for k, v in errors.items()}
    assert mae["both"] < 0.93 * mae["alone"]  # the shared part of the day is read off the opponent's moves
    for weak in (True, False):  # and still unbiased at either end of the range (sd of a mean: ~15)
        assert abs(float(np.mean([e for r, _, e in errors["both"] if (r < 2100) == weak]))) < 45
    a, b = _games(1, seed=2)[0]
    assert model.variance_of(_one_game(a, b)) < model.variance_of(_one_game(a, None))  # and the interval narrows
    # an opponent who played above their rating: the game was an easy one, the player's score lower
    better = GameSample(b.elo, b.player_event, b.features + 0.3, b.event, b.game)
    assert model.score(_one_game(a, better)) < model.score(_one_game(a, b)) - 30


def test_a_strong_opponents_hard_positions_are_not_read_as_weakness() -> None:
    """Where a stronger opponent lowers a side's features, moves alone read the player low against strong opponents
    and high against weak ones; the joint reading, on both ratings, does not."""
    model = fit_quality_model([s for pair in _games(10, seed=8, opponent_effect=0.3) for s in pair], "sim")
    errors = _errors(model, _games(12, seed=21, opponent_effect=0.3))

    def bias(kind: str, stronger: bool) -> float:
        return float(np.mean([e for r, o, e in errors[kind] if (o - r > 300) == stronger and abs(o - r) > 300]))

    assert bias("alone", True) < -60 and bias("alone", False) > 40
    assert abs(bias("both", True)) < 40 and abs(bias("both", False)) < 40


def test_no_opponent_reads_as_the_players_moves_alone() -> None:
    fit = [s for pair in _games(4, seed=3) for s in pair]
    model = fit_quality_model(fit, "sim")
    single = fit_quality_model(fit, "sim", opponents=False)
    a, _ = _games(1, seed=4)[0]
    assert model.score(_one_game(a, None)) == single.score(_one_game(a, None))
    assert model.variance_of(_one_game(a, None)) == single.variance_of(_one_game(a, None))


def _games_by_level(events: int, seed: int, slope: float) -> list[GameSample]:
    """Round robins as :func:`_games`, each side's day and moves noisier at lower levels by exp(slope·x)."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(events):
        elos = 1400.0 + 1400.0 * rng.random(10)
        for i in range(10):
            for j in range(i + 1, 10):
                shared = rng.normal(0.0, 0.4)
                for p in (i, j):
                    x = (elos[p] - 2000.0) / 1000.0
                    day = np.sqrt(SHARE) * shared + np.sqrt(1 - SHARE) * rng.normal(0.0, 0.4)
                    f = x + np.exp(slope * x) * (day + rng.normal(0.0, 2.0, (25, len(FEATURES))))
                    out.append(GameSample(float(elos[p]), (e, p), f, e, (e, i, j)))
    return out


def test_the_joint_readings_noise_by_level_is_fitted_on_its_own_errors() -> None:
    """joint_level: the joint reading's noise by level from its own out-of-fold errors, kept apart from the single
    side's, read by the estimate of games all read jointly, and kept through to_dict/from_dict."""
    from livemon.rating.quality import QualityModel

    samples = _games_by_level(8, 5, -0.7)
    model = fit_quality_model(samples, "sim", joint_level=True)
    borrowed = fit_quality_model(samples, "sim")
    assert model.joint is not None and borrowed.joint is not None and borrowed.joint.noise_level is None
    assert model.joint.noise_level is not None and model.joint.noise_level[1] < -0.3  # games noisier lower down
    assert model.noise_scale(1500, joint=True) > model.noise_scale(2500, joint=True)
    assert model.noise_scale(1500, joint=True) != model.noise_scale(1500)  # its own, not the single side's
    assert QualityModel.from_dict(model.to_dict()) == model
    by_game = {}
    for s in samples:
        by_game.setdefault(s.game, []).append(s)
    a, b = next(iter(by_game.values()))
    st = _one_game(a, b)
    w = 1.0 / model.joint.game_variance(len(a.features), len(b.features))
    expected = (model.joint.sigma_persist * model.noise_scale(1700, True, True)) ** 2 + model.noise_scale(1700, joint=True) ** 2 / w
    assert model.variance_of(st, 1700.0) == pytest.approx(expected, rel=1e-12)


def test_the_joint_readings_noise_is_set_on_the_intervals_shown_and_its_factor_fades_over_games() -> None:
    """calibrate_joint: the games' slope by level moves within ±0.4 of the likelihood's (the persistent part's stays),
    the factor is one game's and fades over k games as √(1 + (scale² − 1)/k), and the vectorised intervals it is
    fitted on are the estimate's own (QualityModel.interval: shown when no wider than the ratings fitted on)."""
    from livemon.rating import quality as q

    samples = _games_by_level(8, 5, -0.7)
    model = fit_quality_model(samples, "sim", joint_level=True)
    plain = fit_quality_model(samples, "sim", joint_level=True, calibrate_joint=False)
    j, j0 = model.joint, plain.joint
    assert j is not None and j0 is not None and j.noise_level is not None and j0.noise_level is not None
    assert j0.scale == 1.0 and j.scale != 1.0
    moved = j.noise_level[1] - j0.noise_level[1]
    assert abs(moved) <= 0.4 + 1e-9 and abs(10 * moved - round(10 * moved)) < 1e-9
    assert (j.noise_level[0], j.noise_level[2:]) == (j0.noise_level[0], j0.noise_level[2:])
    assert j.factor(1) == pytest.approx(j.scale)
    assert j.factor(9) ** 2 - 1 == pytest.approx((j.scale**2 - 1) / 9)
    assert model.variance(225, 9, 2000.0, joint=True) == pytest.approx(
        (j.sigma_persist * model.noise_scale(2000.0, True, True)) ** 2
        + j.factor(9) ** 2 * (j.sigma_day**2 / 9 + (j.sigma_move**2 + j.sigma_move_opponent**2) / 225)
        * model.noise_scale(2000.0, joint=True) ** 2)
    by_game: dict[object, list[GameSample]] = {}
    for s in samples:
        by_game.setdefault(s.game, []).append(s)
    checked = {True: 0, False: 0}
    for a, b in list(by_game.values())[:60]:
        st = _one_game(a, b)
        lo, hi = model.interval(st)
        n, m = len(a.features), len(b.features)
        row = np.array([[model.score(st) - a.elo, j.sigma_persist**2,
                         j.sigma_day**2 + j.sigma_move**2 / n + j.sigma_move_opponent**2 / m, a.elo]])
        shown, covered = q._shown_covered(model, row, j.scale, j.noise_level)
        assert bool(shown[0]) == (hi - lo <= model.elo_max - model.elo_min)
        assert bool(covered[0]) == (lo <= a.elo <= hi)
        checked[bool(shown[0])] += 1
    assert checked[True] and checked[False]  # both kinds of game met
