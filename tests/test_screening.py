"""Fair-play screening against E(c_r) and the Elo ↔ c calibration (docs/models.md §3)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from livemon.rating.agent import Decision, move_probabilities
from livemon.rating.calibration import Calibration
from livemon.rating.screening import (
    Screening,
    alert_check,
    position_expectation,
    screening_stats,
)
from tests import agents


def positions(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Realistic candidate values: best 0, others Exp(mean 0.5 pawn) worse, 2–5 candidates."""
    ks = rng.integers(2, 6, size=n)
    worse = -np.sort(rng.exponential(0.5, (n, 4)), axis=1)  # drawn at once: a draw per position costs seconds a test
    return [np.concatenate(([0.0], worse[i, : k - 1])) for i, k in enumerate(ks.tolist())]


def play(rng: np.random.Generator, vs: list[np.ndarray], c: float) -> list[Decision]:
    """Each move drawn from the model's probabilities by inverse CDF (``rng.choice`` with ``p`` costs ~15 µs a call)."""
    u = rng.random(len(vs)).tolist()
    out = []
    for v, x in zip(vs, u):
        cdf = np.cumsum(move_probabilities(v, c))
        out.append(Decision(tuple(v), min(int(np.searchsorted(cdf, x * cdf[-1], side="right")), v.size - 1)))
    return out


def test_position_expectation_matches_direct_sums():
    d = Decision((0.2, 0.2, -0.3, -1.0), played=2)
    e = position_expectation(d, 1.5)
    w = np.array([0.1, 0.1, 0.6, 1.3]) ** -1.5
    p = w / w.sum()
    loss = np.array([0.0, 0.0, 0.5, 1.2])
    assert e.p0 == pytest.approx(p[0] + p[1])  # ties at the top both count as matches
    assert e.loss_mean == pytest.approx(p @ loss)
    assert e.loss_var == pytest.approx(p @ loss**2 - (p @ loss) ** 2)
    assert not e.matched and e.loss == pytest.approx(0.5)


def test_z_scores_are_standard_normal_at_c_r():
    """Players who really are E(c_r): both z's have mean ≈ 0 and sd ≈ 1 over 1500 players."""
    rng = np.random.default_rng(42)
    c_r = 1.2
    zm, zl = [], []
    for decisions in agents.play(rng, np.full(1500, c_r), 80):  # 1500 players' moves drawn at once
        st = screening_stats("p", decisions, c_r)
        zm.append(st.z_match)
        zl.append(st.z_loss)
    for z in (np.array(zm), np.array(zl)):
        assert abs(z.mean()) < 0.08, z.mean()  # se of the mean ≈ 0.026
        assert abs(z.std() - 1.0) < 0.08, z.std()
    # and the statistic is one-sided sensitive: a weaker player (c < c_r) scores negative
    weak = screening_stats("w", play(rng, positions(rng, 400), 0.4), c_r)
    assert weak.z_match < -2 and weak.z_loss < -2


def test_engine_like_player_triggers_alert_only_after_enough_positions():
    rng = np.random.default_rng(7)
    c_r = 1.0
    scr = Screening()
    first_alert = None
    for t, v in enumerate(positions(rng, 300), start=1):
        scr.add("Engine", Decision(tuple(v), 0), c_r)  # always the best move
        alert = alert_check(scr.stats("Engine"), z_threshold=4.0, min_positions=50)
        if t < 50:
            assert alert is None  # never below min_positions, even with a huge z
        elif alert is not None and first_alert is None:
            first_alert = alert
    assert scr.stats("Engine").z_match > 4.0
    assert first_alert is not None
    a = first_alert
    assert a.player == "Engine" and a.positions >= 50 and a.statistic == "match"
    assert a.matches_observed == a.positions and a.matches_expected < a.positions
    assert a.z >= 4.0 and a.roi == pytest.approx(50 + 5 * a.z) and a.z_threshold == 4.0
    assert a.min_positions == 50 and a.loss_observed == 0.0 and a.z_loss > 0
    assert json.loads(json.dumps(a.to_dict()))["player"] == "Engine"


def test_high_z_below_min_positions_is_not_an_alert():
    scr = Screening()
    for _ in range(20):
        scr.add("X", Decision((0.0, -0.2, -0.3), 0), 0.5)
    st = scr.stats("X")
    assert st.z_match > 3.0
    assert alert_check(st, z_threshold=3.0, min_positions=21) is None
    assert alert_check(st, z_threshold=3.0, min_positions=20) is not None
    assert alert_check(st, z_threshold=st.z_match + 0.1, min_positions=1) is None


def test_alert_statistic_choice():
    scr = Screening()
    for _ in range(50):
        scr.add("Y", Decision((0.0, -0.05, -2.0), 1), 1.0)  # never the top move, but tiny losses
    st = scr.stats("Y")
    assert st.z_match < 0 < st.z_loss
    assert alert_check(st, 0.5, 10, statistic="match") is None
    a = alert_check(st, 0.5, 10, statistic="max")
    assert a is not None and a.statistic == "loss" and a.z == st.z_loss
    with pytest.raises(ValueError):
        alert_check(st, 1.0, 10, statistic="sum")  # type: ignore[arg-type]


def test_screening_add_remove_and_batch_agree():
    rng = np.random.default_rng(3)
    ds = play(rng, positions(rng, 100), 1.0)
    extra = play(rng, positions(rng, 20), 3.0)
    scr = Screening()
    for d in ds + extra:
        scr.add("A", d, 1.0)
    for d in extra:
        scr.remove("A", d, 1.0)
    got, ref = scr.stats("A"), screening_stats("A", ds, 1.0)
    assert got.positions == ref.positions == 100 and got.matches_observed == ref.matches_observed
    for name in ("matches_expected", "matches_sd", "z_match", "loss_observed", "loss_expected", "loss_sd", "z_loss"):
        assert getattr(got, name) == pytest.approx(getattr(ref, name), rel=1e-12, abs=1e-12)
    with pytest.raises(KeyError):
        scr.remove("A", ds[0], 2.0)  # different c_r than when added
    for d in ds:
        scr.remove("A", d, 1.0)
    assert scr.players() == [] and scr.stats("A").positions == 0


def test_zero_variance_gives_infinite_or_zero_z():
    d = Decision((0.0, -3.0), 0)
    big = screening_stats("Z", [d] * 10, 200.0)  # E(200) always matches: variance 0
    assert big.z_match == 0.0
    miss = screening_stats("Z", [Decision((0.0, -3.0), 1)] * 10, 200.0)
    assert miss.z_match == -math.inf
    assert screening_stats("E", [], 1.0).z_match == 0.0


def test_calibration_recovers_a_line_and_round_trips():
    rng = np.random.default_rng(0)
    elo = rng.uniform(1400, 2700, 200)
    c = 0.2 + 0.001 * elo + rng.normal(0, 0.05, 200)
    cal = Calibration.fit(zip(elo, c), profile="sf-d14")
    assert cal.b == pytest.approx(0.001, rel=0.05)
    assert cal.a == pytest.approx(0.2, abs=0.15)
    assert cal.n == 200 and cal.r2 > 0.9 and cal.residual_sd == pytest.approx(0.05, rel=0.2)
    assert cal.rating_for_c(cal.c_for_rating(2100.0)) == pytest.approx(2100.0)
    assert Calibration.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal


def test_calibration_rejects_degenerate_data():
    with pytest.raises(ValueError):
        Calibration.fit([(2000, 1.0)])
    with pytest.raises(ValueError):
        Calibration.fit([(2000, 1.0), (2000, 1.5)])
    flat = Calibration.fit([(1800, 1.0), (2200, 1.0)])
    with pytest.raises(ValueError):
        flat.rating_for_c(1.0)


def test_store_keeps_a_profile_calibration_and_engine_strength_alone_keeps_the_map(tmp_path):
    from livemon.rating.calibration import ProfileCalibration
    from livemon.io.store import Store

    cal = Calibration.fit([(1800, 0.8), (2200, 1.1), (2600, 1.5)], profile="p")
    with Store(tmp_path / "s.sqlite") as store:
        assert store.calibrations.get("unknown profile") is None
        store.calibrations.put(ProfileCalibration("p", 2950.0, cal))
        assert store.calibrations.get("p") == ProfileCalibration("p", 2950.0, cal)
        store.calibrations.put_engine_strength("p", 3000.0)
        assert store.calibrations.get("p") == ProfileCalibration("p", 3000.0, cal)
        assert store.calibrations.engine_strength("p") == 3000.0


def test_tail_z_is_scipy_norm_isf_to_the_last_bits():
    """tail_z is the normal's upper-tail quantile without scipy (livemon.rating.normal): scipy's norm.isf to 1e-14
    relative, the edges (0, 1, outside [0, 1], NaN) and the sign of zero exactly."""
    import math

    import numpy as np
    from scipy.stats import norm

    from livemon.rating.screening import tail_z

    ps = [0.0, 1.0, 0.5, 1e-300, 5e-324, 1 - 1e-16, 3.167124183311998e-05, 0.975, 0.025, -0.1, 1.5, math.nan]
    ps += list(np.random.default_rng(3).random(2000)) + list(10.0 ** -np.arange(1, 300, 7))
    for p in ps:
        want, got = float(norm.isf(p)), tail_z(float(p))
        if math.isnan(want) or math.isinf(want) or want == 0.0:
            assert (math.isnan(want) and math.isnan(got)) or (want == got and math.copysign(1, want) == math.copysign(1, got)), p
        else:
            assert math.isclose(got, want, rel_tol=1e-14, abs_tol=1e-15), (p, got, want)


def test_position_expectation_is_the_sums_written_out_bit_for_bit():
    """The one-pass form gives the floats of the sums written out over the candidates' probabilities."""
    import math
    import random

    from livemon.rating.agent import K, Decision
    from livemon.rating.screening import position_expectation

    rng = random.Random(2)
    for _ in range(3000):
        k = rng.randint(1, 6)
        values = tuple(rng.choice([rng.randint(-3900, 3900), 0, 25]) / 100.0 for _ in range(k))
        d, c = Decision(values, rng.randrange(k)), rng.choice([0.0, rng.uniform(0, 3), rng.uniform(0, 10)])
        loss = [max(values) - v for v in values]
        e = [-math.log((x + K) / K) * c for x in loss]
        w = [math.exp(x - max(e)) for x in e]
        p = [x / sum(w) for x in w]
        a = [math.log((x + K) / K) for x in loss]
        mu = sum(pi * x for pi, x in zip(p, loss))
        a_mean = sum(pi * ai for pi, ai in zip(p, a))
        p0 = sum(pi for pi, x in zip(p, loss) if x == 0.0)
        got = position_expectation(d, c)
        assert (got.p0, got.loss_mean, got.loss_var, got.loss, got.dp0, got.dloss) == (
            p0, mu, max(sum(pi * x * x for pi, x in zip(p, loss)) - mu * mu, 0.0), loss[d.played], p0 * a_mean,
            a_mean * mu - sum(pi * ai * x for pi, ai, x in zip(p, a, loss)))


def test_expectation_columns_are_position_expectation_bit_for_bit_on_random_decisions():
    """The column form (a flush's recount) gives each decision's floats exactly as the scalar form (the per-move
    path): both feed one player's screening numbers, so a last-bit difference would make live ≠ batch."""
    import random

    from livemon.rating.agent import Decision
    from livemon.rating.screening import expectation_columns, position_expectation

    rng = random.Random(5)
    fields = ("p0", "loss_mean", "loss_var", "matched", "loss", "dp0", "dloss")
    for _ in range(60):
        decisions = []
        for _ in range(rng.randint(1, 40)):  # mixed candidate counts: one column group per count
            k = rng.randint(1, 6)
            values = tuple(rng.choice([rng.randint(-3900, 3900), 0, 25, -25]) / 100.0 for _ in range(k))  # ties too
            decisions.append(Decision(values, rng.randrange(k)))
        c = rng.choice([0.0, rng.uniform(0, 3), rng.uniform(0, 12)])
        cols = expectation_columns(decisions, c)
        for i, d in enumerate(decisions):
            want = position_expectation(d, c)
            got = tuple(getattr(cols, f)[i].item() for f in fields)
            assert got == tuple(getattr(want, f) for f in fields), (d, c)
