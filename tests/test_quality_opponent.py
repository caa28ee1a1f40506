"""The opponent's moves as a control variate of a game's score (livemon.rating.quality), on simulated games whose
truth is known: two sides of a game share part of their day's noise (a quiet game flatters both)."""

from __future__ import annotations

import numpy as np

from livemon.rating.quality import FEATURES, FIXED, GameSample, QualityModel, QualityStats, fit_quality_model

SHARE = 0.6  # the share of a game's day part the two sides have in common


def _sums(f: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.round(f * FIXED).sum(axis=0).astype(np.int64))


def _games(events: int, seed: int) -> list[tuple[GameSample, GameSample]]:
    """Round robins of 10 players 1400-2800: per game a shared part, each side's own part and its moves' noise."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(events):
        elos = 1400.0 + 1400.0 * rng.random(10)
        shift = rng.normal(0.0, 0.1, 10)
        for i in range(10):
            for j in range(i + 1, 10):
                shared = rng.normal(0.0, 0.4)
                pair = []
                for p in (i, j):
                    day = np.sqrt(SHARE) * shared + np.sqrt(1 - SHARE) * rng.normal(0.0, 0.4)
                    f = (elos[p] - 2000.0) / 1000.0 + shift[p] + day + rng.normal(0.0, 2.0, (25, len(FEATURES)))
                    pair.append(GameSample(float(elos[p]), (e, p), f, e, (e, i, j)))
                out.append((pair[0], pair[1]))
    return out


def _one_game(g: GameSample, opp: GameSample | None) -> QualityStats:
    own = (_sums(g.features), len(g.features))
    return QualityStats(own[0], own[1], 1, (own,), () if opp is None else ((_sums(opp.features), len(opp.features), opp.elo),))


def test_the_shared_part_is_measured_and_taken_out_without_bias() -> None:
    fit = [s for pair in _games(8, seed=5) for s in pair]
    model = fit_quality_model(fit, "sim")
    assert 0.4 < model.opponent_rho < 0.8  # the simulated share, 0.6
    blind = fit_quality_model([GameSample(s.elo, s.player_event, s.features, s.event) for s in fit], "sim")
    assert blind.opponent_rho == 0.0  # no game keys: no pairs to measure it on
    assert fit_quality_model(fit, "sim", opponents=False).opponent_rho == 0.0
    errors: dict[str, list[float]] = {"alone": [], "with": []}
    by_level: dict[bool, list[float]] = {True: [], False: []}
    for a, b in _games(12, seed=17):
        for me, them in ((a, b), (b, a)):
            alone, both = model.score(_one_game(me, None)), model.score(_one_game(me, them))
            errors["alone"].append(alone - me.elo)
            errors["with"].append(both - me.elo)
            by_level[me.elo < 2100].append(both - me.elo)
    mae = {k: float(np.mean(np.abs(v))) for k, v in errors.items()}
    assert mae["with"] < 0.93 * mae["alone"]  # sharper per game
    for errs in by_level.values():  # and still unbiased at either end of the range (sd of a mean: ~15)
        assert abs(float(np.mean(errs))) < 45
    # the interval narrows with the opponent's moves, by the day part's share removed
    a, b = _games(1, seed=2)[0]
    assert model.variance_of(_one_game(a, b)) < model.variance_of(_one_game(a, None))


def test_no_opponent_reads_as_before() -> None:
    model = QualityModel("p", 2000.0, (1000.0,) + (0.0,) * (len(FEATURES) - 1), 100.0, 400.0, 1500.0, 1400, 2800,
                         opponent_rho=0.5)
    a, b = _games(1, seed=4)[0]
    alone = _one_game(a, None)
    assert model.score(alone) == QualityModel(**{**model.__dict__, "opponent_rho": 0.0}).score(_one_game(a, b))
    # an opponent who played exactly to their rating changes nothing; one who played above it lowers the score
    to_rating = np.full((30, len(FEATURES)), (b.elo - 2000.0) / 1000.0)
    fair = GameSample(b.elo, b.player_event, to_rating, b.event, b.game)
    assert abs(model.score(_one_game(a, fair)) - model.score(alone)) < 1e-6
    better = GameSample(b.elo, b.player_event, to_rating + 0.3, b.event, b.game)
    assert model.score(_one_game(a, better)) < model.score(alone) - 50
    assert model.opponent_beta(0, 2000.0) == 0.0
