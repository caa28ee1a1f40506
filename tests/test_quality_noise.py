"""The headline estimate's noise by level and the field's prior (livemon.rating.quality), on simulated games
whose truth is known: no engine and no calibration data needed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from livemon.rating.quality import (
    FEATURES,
    FIXED,
    GameSample,
    QualityEstimate,
    QualityModel,
    QualityStats,
    field_estimate,
    fit_field_rho,
    fit_quality_model,
)


def _stats(games: list[np.ndarray]) -> QualityStats:
    """A player's tally of these games' features (what :class:`QualityTally` sums)."""
    per_game = tuple(sorted((tuple(int(v) for v in np.round(f * FIXED).sum(axis=0).astype(np.int64)), len(f))
                            for f in games))
    sums = tuple(sum(pg[0][i] for pg in per_game) for i in range(len(FEATURES)))
    return QualityStats(sums, sum(n for _, n in per_game), len(per_game), per_game)


def _simulated(noise_slope: float, events: int = 12, seed: int = 3) -> list[GameSample]:
    """Players 1400-2800, features = level + noise whose sd scales by exp(noise_slope·(Elo − 2000)/1000)."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(events):
        for p in range(10):
            elo = 1400.0 + 1400.0 * rng.random()
            shift = rng.normal(0.0, 0.1)  # the player's level in this event against their rating
            scale = math.exp(noise_slope * (elo - 2000.0) / 1000.0)
            for _ in range(5):
                f = (elo - 2000.0) / 1000.0 + shift + scale * (rng.normal(0.0, 0.4) + rng.normal(0.0, 2.0, (25, len(FEATURES))))
                out.append(GameSample(elo, (e, p), f, e))
    return out


def test_weaker_players_noise_is_measured_wider_and_their_interval_with_it() -> None:
    model = fit_quality_model(_simulated(-0.6), "sim")
    assert model.noise_level[1] < -0.3  # the games' noise shrinks with the level, as simulated
    pooled = fit_quality_model(_simulated(-0.6), "sim", by_level=False)
    assert pooled.noise_level == (0.0, 0.0, 0.0, 0.0) and pooled.ratings == (0.0, 0.0)
    flat = fit_quality_model(_simulated(0.0), "sim")
    assert abs(flat.noise_level[1]) < 0.25  # no slope where the noise has none
    # five games of 25 moves at a club player's and at a grandmaster's level
    rng = np.random.default_rng(9)
    weak = _stats([-0.4 + rng.normal(0.0, 1.5, (25, len(FEATURES))) for _ in range(5)])
    strong = _stats([0.6 + rng.normal(0.0, 0.6, (25, len(FEATURES))) for _ in range(5)])
    w, s = model.estimate(weak), model.estimate(strong)
    assert w.elo is not None and s.elo is not None and w.sd is not None and s.sd is not None
    assert w.elo < 1800 < 2400 < s.elo
    assert w.sd > 1.3 * s.sd  # the same games and moves: a wider interval at the weaker level
    assert pooled.estimate(weak).sd == pytest.approx(pooled.estimate(strong).sd, rel=0.05)


def test_the_interval_covers_unseen_simulated_players_at_every_level() -> None:
    model = fit_quality_model(_simulated(-0.6, seed=3), "sim")
    test = _simulated(-0.6, events=20, seed=11)
    by_player: dict[object, list[GameSample]] = {}
    for g in test:
        by_player.setdefault(g.player_event, []).append(g)
    hits: dict[str, list[bool]] = {"weak": [], "strong": []}
    widths: dict[str, list[float]] = {"weak": [], "strong": []}
    for games in by_player.values():
        est = model.estimate(_stats([g.features for g in games]))
        if est.cr95 is None:
            continue
        band = "weak" if games[0].elo < 2000 else "strong"
        hits[band].append(est.cr95[0] <= games[0].elo <= est.cr95[1])
        widths[band].append(est.cr95[1] - est.cr95[0])
    for band, h in hits.items():  # one pooled noise covers the strong 100% (too wide) and the weak less
        assert len(h) >= 40, band
        assert 0.88 <= float(np.mean(h)) <= 0.99, (band, float(np.mean(h)))
    assert np.mean(widths["weak"]) > 1.2 * np.mean(widths["strong"])


def _field_case(rng: np.random.Generator, rho: float, n: int = 600) -> list[tuple[float, float, float]]:
    """(rating, evidence, its sd) of players of a field N(2000, 250²) whose evidence's error (sd 150) leans
    with the field prior's error by ``rho``, as a results performance does in a Swiss."""
    out = []
    for _ in range(n):
        elo = float(rng.normal(2000.0, 250.0))
        zp = (2000.0 - elo) / 250.0
        out.append((elo, elo + 150.0 * (rho * zp + math.sqrt(1 - rho**2) * float(rng.normal())), 150.0))
    return out


def test_the_field_estimate_weighs_the_prior_by_the_fitted_error_correlation() -> None:
    rng = np.random.default_rng(17)
    fitted, scale = fit_field_rho([("moves", elo, 2000.0, 250.0, est, sd) for elo, est, sd in _field_case(rng, 0.4)])
    assert 0.3 < fitted["moves"] < 0.5 and 1.0 <= scale["moves"] < 1.1  # the errors are as their sd says
    assert fit_field_rho([("moves", 2000.0, 2000.0, 250.0, 2100.0, 150.0)] * 19) == ({"moves": 0.0}, {"moves": 1.0})
    _, wide = fit_field_rho([("moves", elo, 2000.0, 250.0, elo + 2 * (est - elo), sd)  # errors twice their sd
                             for elo, est, sd in _field_case(rng, 0.0)])
    assert wide["moves"] > 1.3
    field = [2000.0 + d for d in np.linspace(-430.0, 430.0, 40)]  # sd ~250
    stats = QualityStats((0,) * len(FEATURES), 250, 9)
    hits: dict[float, list[bool]] = {0.0: [], fitted["moves"]: []}
    for rho in hits:
        model = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 300.0, 1500.0, 1400, 2800,
                             field_rho={"moves": rho})
        for elo, est, sd in _field_case(np.random.default_rng(23), 0.4):
            f = field_estimate(model, QualityEstimate(est, (est - 300, est + 300), sd, 250, 9, "moves"), stats, field)
            assert f.cr95 is not None and f.kind == "field"
            hits[rho].append(f.cr95[0] <= elo <= f.cr95[1])
    naive, weighed = float(np.mean(hits[0.0])), float(np.mean(hits[fitted["moves"]]))
    assert 0.92 <= weighed <= 0.98 and naive < weighed - 0.02, (naive, weighed)


def test_the_field_estimate_takes_the_results_in_once_there_are_some() -> None:
    model = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 130.0, 400.0, 1600.0, 1400, 2800,
                         results={"a": 0.0, "b": 150000.0, "rho": 0.4}, field_rho={"moves": 0.1, "moves+results": 0.3})
    stats = QualityStats((0,) * len(FEATURES), 250, 9)
    moves = QualityEstimate(2300.0, (1900.0, 2700.0), 200.0, 250, 9, "moves")
    results = QualityEstimate(2450.0, None, None, 0, 9, "results")
    field = [2000.0 + d for d in np.linspace(-400.0, 400.0, 50)]
    alone, both = field_estimate(model, moves, stats, field), field_estimate(model, moves, stats, field, results)
    assert alone.elo is not None and both.elo is not None and alone.sd is not None and both.sd is not None
    assert both.sd < alone.sd and both.elo > alone.elo  # sharper, and pulled toward the results
    assert "moves and results" in both.label and "moves;" in alone.label and "50 other players" in alone.label
    assert alone.games_to_150 is not None and both.games_to_150 is not None and both.games_to_150 <= alone.games_to_150
    no_result = QualityEstimate(None, None, None, 0, 0, "results", reason="no finished game")
    assert field_estimate(model, moves, stats, field, no_result) == alone


def test_one_games_interval_covers_the_players_of_every_level_not_only_on_average() -> None:
    """The interval holds every rating whose players' moves read within 1.96 of their own noise: one game of a weak
    player is covered as often as one of a strong player; ±1.96·sd at the level expected given the estimate (pulled
    toward the pool's middle, where the noise is narrower) covers the weak less."""
    model = fit_quality_model(_simulated(-0.6, seed=3), "sim")
    hits: dict[str, list[tuple[bool, bool]]] = {"weak": [], "middle": [], "strong": []}
    for g in _simulated(-0.6, events=20, seed=11):
        stats = _stats([g.features])
        est = model.estimate(stats)
        assert est.point is not None and est.sd is not None
        lo, hi = model.interval(stats, est.point)
        assert est.point - lo >= hi - est.point - 1e-6  # it reaches at least as far down, where the noise is wider
        band = "weak" if g.elo < 1800 else "strong" if g.elo >= 2400 else "middle"
        hits[band].append((lo <= g.elo <= hi, abs(est.point - g.elo) <= 1.96 * est.sd))
    cover = {band: float(np.mean([h for h, _ in v])) for band, v in hits.items()}
    at_level = {band: float(np.mean([h for _, h in v])) for band, v in hits.items()}
    assert all(len(v) >= 200 for v in hits.values())
    assert all(0.90 <= c <= 0.98 for c in cover.values()), cover
    assert cover["weak"] > at_level["weak"] + 0.03, (cover, at_level)
