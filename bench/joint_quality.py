"""A study: how much a game's score gains from the other side of the game, variant by variant.

The shipped headline (``livemon/rating/quality.py``) reads a game against a rated opponent from both
sides (``JointWeights``: the ``joint`` variant below, with its noise model). This script measures, on
the same committed analyses and leave one event out, that reading beside the simpler ones it was
chosen over, on one footing:

* ``own``: the player's features, lines on the player's rating only (the single-side inversion);
* ``own+opp rating``: the lines on both ratings (x̄_A = α + β·r_A + δ·r_B), inverted for r_A with r_B
  known: a strong opponent's hard positions no longer read as the player's weakness;
* ``own+opp rating+control``: that, with the opponent's score error as a scalar control variate
  (β fitted on the player's error);
* ``joint``: both sides' features in one GLS, each side's lines on both ratings
  (x̄_A = α + β·r_A + δ·r_B, x̄_B = α + β·r_B + δ·r_A), the residual covariance of the 40 features
  (the shared part of a game included), inverted for r_A with r_B known. Linear in the two sides'
  feature means, so it keeps the tally's sufficient statistics.

Every variant here weighs games alike and has no interval: the figures compare point estimates only
(the shipped model's own figures are ``bench/validity.py``'s). Games: both sides rated, 5+ counted
moves each.

Usage::

    python bench/joint_quality.py
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fit_quality as fq  # noqa: E402

BANDS = ((0, 1800), (1800, 2200), (2200, 2500), (2500, 4000))
RIDGE = 0.5  # of Σ's diagonal, as the shipped fit


def _gls(b: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    s = np.cov(residuals.T)
    s = s + RIDGE * np.diag(np.diag(s))
    si = np.linalg.inv(s)
    return si @ b / (b @ si @ b)


def estimates(r_a: np.ndarray, r_b: np.ndarray, f_a: np.ndarray, f_b: np.ndarray, train: np.ndarray,
              test: np.ndarray) -> dict[str, np.ndarray]:
    """Each variant's estimate of the test rows' r_a, fitted on the train rows."""
    ones = np.ones(int(train.sum()))
    a1, b1 = np.linalg.lstsq(np.column_stack([ones, r_a[train]]), f_a[train], rcond=None)[0]
    w1 = _gls(b1, f_a[train] - (a1 + np.outer(r_a[train], b1)))
    a, b, d = np.linalg.lstsq(np.column_stack([ones, r_a[train], r_b[train]]), f_a[train], rcond=None)[0]
    res_a = f_a - (a + np.outer(r_a, b) + np.outer(r_b, d))
    res_b = f_b - (a + np.outer(r_b, b) + np.outer(r_a, d))
    w = _gls(b, res_a[train])
    own_delta = (f_a - a - np.outer(r_b, d)) @ w
    opp_error = (f_b - a1) @ w1 - r_b  # the opponent's score error (single-side lines: r_a is not known)
    err = own_delta - r_a
    beta = float(np.dot(err[train], opp_error[train]) / np.dot(opp_error[train], opp_error[train]))
    bb = np.concatenate([b, d])
    wj = _gls(bb, np.hstack([res_a, res_b])[train])
    joint = np.hstack([f_a - a - np.outer(r_b, d), f_b - a - np.outer(r_b, b)]) @ wj
    return {"own": ((f_a - a1) @ w1)[test], "own+opp rating": own_delta[test],
            "own+opp rating+control": (own_delta - beta * opp_error)[test], "joint": joint[test]}


def main() -> int:
    t0 = time.perf_counter()
    rows = [(s.event, s.player, s.elo, s.opponent.elo, s.features.mean(axis=0), s.opponent.features.mean(axis=0))
            for s in fq.all_sides() if s.elo is not None and s.opponent is not None and s.opponent.elo is not None
            and len(s.features) >= 5 and len(s.opponent.features) >= 5]
    event = np.array([r[0] for r in rows])
    player = np.array([r[1] for r in rows])
    r_a, r_b = np.array([r[2] for r in rows]), np.array([r[3] for r in rows])
    f_a, f_b = np.array([r[4] for r in rows]), np.array([r[5] for r in rows])
    est: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(len(rows)))
    mean = np.zeros(len(rows))
    for ev in sorted(set(event)):
        test = event == ev
        for name, e in estimates(r_a, r_b, f_a, f_b, ~test, test).items():
            est[name][test] = e
        mean[test] = r_a[~test].mean()
    base = float(np.abs(mean - r_a).mean())
    games: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in range(len(rows)):
        games[(event[i], player[i])].append(i)
    seven = [v for v in games.values() if len(v) >= 7]
    pe_elo = np.array([r_a[v].mean() for v in seven])
    print(f"{len(rows)} rated player-games against rated opponents, {len(set(event))} events; leave one event out; "
          f"predict-the-mean MAE {base:.0f}")
    print(f"  {'estimator':<24} per game: MAE  /mean  bias by band <1800 1800-2200 2200-2500 >=2500 | "
          f"per event 7+ ({len(seven)}, mean of its games): MAE  bias by band")
    for name, e in est.items():
        err = e - r_a
        pe = np.array([err[v].mean() for v in seven])
        bias = " ".join(f"{err[(r_a >= lo) & (r_a < hi)].mean():+6.0f}" for lo, hi in BANDS)
        pbias = " ".join(f"{pe[(pe_elo >= lo) & (pe_elo < hi)].mean():+5.0f}" for lo, hi in BANDS)
        print(f"  {name:<24} {np.abs(err).mean():14.0f} {np.abs(err).mean() / base:5.2f}  {bias} | "
              f"{np.abs(pe).mean():5.0f}  {pbias}")
    print(f"({time.perf_counter() - t0:.1f} s, load {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
