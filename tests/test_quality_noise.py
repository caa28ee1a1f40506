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
    field_prior,
    fit_field_prior,
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


def test_the_field_prior_leans_on_the_opponents_only_as_far_as_fitted() -> None:
    # a Swiss-like field: the opponents' mean sits half way from the field's mean to the player's rating
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(200):
        elo = rng.normal(2000.0, 250.0)
        opponents = [2000.0 + 0.5 * (elo - 2000.0) + rng.normal(0.0, 60.0) for _ in range(9)]
        rows.append((elo, 2000.0, 250.0**2, opponents, 150))
    table = fit_field_prior(rows)
    assert len(table["beta"]) == 9 and all(1.6 < b < 2.4 for b in table["beta"][3:])
    model = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 300.0, 1500.0, 1400, 2800, field_table=table)
    centre, var = field_prior(model, 50, 2000.0, 250.0**2, [2200.0] * 9)
    assert 2350 < centre < 2450 and var == 250.0**2  # the centre moves; the spread stays the field's
    assert field_prior(model, 50, 2000.0, 250.0**2) == (2000.0, 250.0**2)  # no opponent yet: the field alone
    assert field_prior(model, 9, 2000.0, 250.0**2, [2200.0] * 9) == (2000.0, 250.0**2)  # a round robin's
    assert fit_field_prior([r[:4] + (9,) for r in rows]) == {"beta": [0.0] * 9}
    # the field estimate moves toward where the opponents put the player, and says so in its label
    stats = QualityStats((0,) * len(FEATURES), 250, 9)
    moves = QualityEstimate(2500.0, (2100.0, 2900.0), 200.0, 250, 9, "moves")
    field = [2000.0 + d for d in np.linspace(-400.0, 400.0, 50)]
    alone, paired = field_estimate(model, moves, stats, field), field_estimate(model, moves, stats, field, [2200.0] * 9)
    assert alone.elo is not None and paired.elo is not None and paired.sd is not None and alone.sd is not None
    assert alone.elo < paired.elo < 2500 and paired.sd == pytest.approx(alone.sd)
    assert "9 opponents" in paired.label and "opponents" not in alone.label
