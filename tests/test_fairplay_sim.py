"""The screening's false-alert rate and power on simulated players, with bench/fairplay.py's simulation.

The simulation is a measurement tool, not a model the product uses, so it
lives in ``bench/fairplay.py`` and is imported here by path. Positions: the
documented model of ``model_pool`` (always) and the real analysed positions of
the 504-game open (``bench/data/open2025_decisions.jsonl.gz``, when the checkout
has it). Moves are drawn from E(c_r) exactly; the z-scores are the library's
(the vectorised form is checked against ``screening_stats`` first).
"""

from __future__ import annotations

import doctest
import importlib.util
import json
import sys

import numpy as np
import pytest
from scipy import stats as sps

from livemon.cli import main
from livemon.config import ScreeningConfig
from tests.conftest import REPO, real

_spec = importlib.util.spec_from_file_location("bench_fairplay", REPO / "bench" / "fairplay.py")
assert _spec is not None and _spec.loader is not None
fp = importlib.util.module_from_spec(_spec)
sys.modules["bench_fairplay"] = fp  # dataclasses resolve their module by name
_spec.loader.exec_module(fp)

C_R = 0.7  # a mid-table c_r (2200 on the stand-in line); the rates must not depend on it much


@pytest.fixture(scope="module", params=["model", "export"])
def pool(request) -> "fp.PositionPool":
    if request.param == "model":
        return fp.model_pool(np.random.default_rng(11), sides=1500)
    if not fp.EXPORT.exists():
        pytest.skip(f"{fp.EXPORT.relative_to(REPO)} not in this checkout (written by bench/export_decisions.py)")
    records = fp.screened(fp.load_export(fp.EXPORT), ScreeningConfig())
    return fp.pool_from_records(records, "export")


def binomial_band(n: int, p: float, level: float = 0.999) -> tuple[int, int]:
    """Central ``level`` range of the number of successes of Bin(n, p)."""
    a = (1.0 - level) / 2.0
    return int(sps.binom.ppf(a, n, p)), int(sps.binom.ppf(1.0 - a, n, p))


def test_vectorised_z_is_the_library_z(pool):
    """The bench's z equal screening_stats' on simulated events; its mid-p tail equals a direct DP's."""
    e = fp.at_c(pool, C_R)
    spectra = fp.match_spectra(pool, e)
    rng = np.random.default_rng(3)
    assert fp.check_against_library(pool, e, rng, events=15, spectra=spectra) < 1e-9
    assert fp.check_against_library(pool, e, rng, events=5, q=0.5, spectra=spectra) < 1e-9


def test_derivatives_in_c_match_finite_differences(pool):
    """Σ∂p0/∂c and Σ∂μ/∂c per game-side (the scatter term of match+tau) are the slopes of Σp0 and Σμ."""
    h = 1e-5
    mid, lo, hi = fp.at_c(pool, C_R), fp.at_c(pool, C_R - h), fp.at_c(pool, C_R + h)
    numeric = (hi.side_sums - lo.side_sums) / (2 * h)
    np.testing.assert_allclose(mid.side_sums[:, 5], numeric[:, 1], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(mid.side_sums[:, 6], numeric[:, 3], rtol=1e-5, atol=1e-7)
    assert (mid.side_sums[:, 5] > 0).all() and (mid.side_sums[:, 6] < 0).all()  # higher c: more matches, less loss


def test_scattered_players_break_the_nominal_rate_and_the_tau_term_restores_it(pool):
    """Honest players whose own c is N(c_r, τ²): the plain z over-flags after 9 games; match+tau does not."""
    e = fp.at_c(pool, C_R)
    z = fp.simulate_scattered(pool, e, tau=0.2, events=6300, rng=np.random.default_rng(9))
    nominal = fp.nominal(2.5)
    _, hi = binomial_band(z.n.shape[0], nominal)
    assert np.count_nonzero(z.z_match[:, 2] >= 2.5) > 3 * hi
    assert np.count_nonzero(z.z_match_tau[:, 2] >= 2.5) <= hi
    assert 0.85 < np.std(z.z_match_tau[:, 2]) < 1.1 < 1.5 < np.std(z.z_match[:, 2])


def test_bench_doctests():
    assert doctest.testmod(fp).failed == 0


def test_false_alert_rate_at_z2_is_nominal(pool):
    """Honest E(c_r) players: P(z_match ≥ 2) within a 99.9% binomial band of 1 − Φ(2) after 3 and 9 games.

    The average-loss z is skewed the other way (a few big losses pull the
    observed mean up): its false-alert rate is at most nominal, never above.
    """
    e = fp.at_c(pool, C_R)
    events = 12_000
    sums = fp.simulate(pool, e, events, np.random.default_rng(5), checkpoints=(3, 9), spectra=fp.match_spectra(pool, e))
    nominal = fp.nominal(2.0)
    lo, hi = binomial_band(events, nominal)
    z_match, z_loss = sums.z_match, sums.z_loss
    for gi, games in enumerate((3, 9)):
        k = int(np.count_nonzero(z_match[:, gi] >= 2.0))
        assert lo <= k <= hi, f"match after {games} games: {k}/{events} vs nominal {nominal:.4f} (band {lo}..{hi})"
        kl = int(np.count_nonzero(z_loss[:, gi] >= 2.0))
        assert kl <= hi, f"loss after {games} games: {kl}/{events} above the band of nominal ({hi})"
        # the screener's mid-p tail of the exact distribution: at nominal too (P(M ≥ m) would read under it)
        ke = int(np.count_nonzero(sums.z_exact[:, gi] >= 2.0))
        assert lo <= ke <= hi, f"mid-p tail after {games} games: {ke}/{events} vs nominal (band {lo}..{hi})"
    # the simulated z is centred and of unit spread, as the screening assumes
    z9 = z_match[:, 1]
    assert abs(z9.mean()) < 0.05 and abs(z9.std() - 1.0) < 0.05


def test_power_of_an_engine_user(pool):
    """q = 1 (always the engine's move) is flagged at the alert level by 3 games; never after 1 (min_positions)."""
    cfg = ScreeningConfig()
    e = fp.at_c(pool, C_R)
    rng = np.random.default_rng(8)
    full = fp.simulate(pool, e, 1000, rng, q=1.0)
    z = full.z_match
    enough = full.n >= cfg.min_positions
    alerted = (z >= cfg.alert_z) & enough
    assert not alerted[full.n[:, 0] < cfg.min_positions, 0].any()
    assert alerted[:, 1][enough[:, 1]].mean() > 0.99 and alerted[:, 2].mean() > 0.99
    # partial help is caught more often the longer it goes on
    part = fp.simulate(pool, e, 3000, rng, q=0.2)
    flagged = ((part.z_match >= cfg.notice_z) & (part.n >= cfg.min_positions)).mean(axis=0)
    honest = fp.simulate(pool, e, 3000, rng, q=0.0)
    honest_flagged = ((honest.z_match >= cfg.notice_z) & (honest.n >= cfg.min_positions)).mean(axis=0)
    assert flagged[2] > flagged[1] > honest_flagged[1] and flagged[2] > 0.5 > honest_flagged[2] * 10


def test_real_report_alerts_the_engine_user_only():
    """real_report screens players by their Elo and lists the one who always played the engine's move."""
    pool = fp.model_pool(np.random.default_rng(2), sides=600)
    cal = fp.STAND_IN
    rng = np.random.default_rng(4)
    records: list[fp.Record] = []
    players = [(f"Honest {i:02d}", 1800 + 20 * i, 0.0) for i in range(30)] + [("Engine, User", 2000, 1.0)]
    for game0, (name, elo, q) in enumerate(players):
        e = fp.at_c(pool, cal.c_for_rating(elo))
        _, info = fp.simulate_chunk(pool, e, 1, 9, rng, q=q, checkpoints=(9,), detail=True)
        assert info is not None
        cursor = 0
        for g, side in enumerate(info.sides[0]):
            for ply in range(int(pool.starts[side + 1] - pool.starts[side])):
                t = int(info.positions[cursor])
                records.append(fp.Record(name, float(elo), 1000 * game0 + g, 2 * ply + 1, pool.decision(t, int(info.played[cursor]))))
                cursor += 1
    records.append(fp.Record("No Elo", None, 99_999, 1, records[0].decision))
    text, figures = fp.real_report(records, cal, ScreeningConfig(book_moves=0))  # plies here are not real plies
    assert figures["players"] == 31 and figures["unrated"] == 1
    assert figures["alerts"] == 1
    alert_lines = [line for line in text.splitlines() if line.rstrip().endswith("ALERT")]
    assert alert_lines and all("Engine, User" in line for line in alert_lines)  # listed, and first of the top 8
    assert figures["match"]["n"] == 31 and figures["match"]["ge_4"] == 1 and figures["match-exact"]["ge_4"] == 1
    # the alert is explained by the moves that raised z most: top moves where E(c_r) expected few
    explained = text.split("moves that raised z_match most")[1].splitlines()[1:6]
    assert len(explained) == 5 and all(" match " in line and "no match" not in line for line in explained)


def test_records_from_a_real_store_are_the_decisions_analyse_uses(capsys, tmp_path, fake_engine):
    """The --real STORE route rebuilds exactly the E(c) decisions ``livemon analyse`` counted (the scripted engine's
    analyses: the subject is the store's reading, not the search)."""
    pgn = real("wcc2023_nepo_ding_g1_pythonchess.pgn")
    store = tmp_path / "cache.sqlite"
    config = tmp_path / "engine.toml"
    config.write_text(f'[engine]\npath = "{fake_engine}"\n')
    assert main(["analyse", "--json", str(pgn), "--depth", "6", "--store", str(store), "--config", str(config)]) == 0
    report = json.loads(capsys.readouterr().out)
    records, what = fp.records_from_store(store, pgn)
    assert what == f"{report['engine']['profile']}; 1 of 1 games (complete ones)"
    per_player = {p["name"]: p["c_positions"] for p in report["players"]}
    counted: dict[str, int] = {}
    for r in records:
        counted[r.player] = counted.get(r.player, 0) + 1
        assert r.elo in (2788.0, 2795.0)
    assert counted == per_player and sum(counted.values()) > 80
