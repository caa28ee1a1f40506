"""What screening costs the live monitor per move, and what a re-rating costs.

Per screened move the monitor calls ``Screener.add_ply``, ``numbers`` and
``new_alerts`` for the mover's player-event: the exact Poisson-binomial tail
is extended in O(n) when plies arrive in order (the usual case) and rebuilt in
O(n²) when one arrives out of order or a game is rolled back. A TTT refresh
that changes an unrated player's rating re-scores all their positions.

    python bench/screening.py [--positions 60 300 1000]

Prints microseconds per move at n positions (in order, and with every ply
forcing a rebuild), and the cost of a re-rating, with ratios (best of 5 runs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from livemon.config import ScreeningConfig
from livemon.live.estimator import ScoredPly
from livemon.live.messages import GameInfo
from livemon.rating.agent import Decision
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.live.screener import Screener

CAL = ProfileCalibration("bench", None, Calibration(a=-1.0, b=0.001, n=30, elo_min=1800, elo_max=2800, r2=0.5, residual_sd=0.2))


def plies(n: int, seed: int = 1) -> list[ScoredPly]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        k = int(rng.integers(2, 5))
        values = tuple(np.concatenate(([0.0], -np.sort(rng.exponential(0.6, k - 1)))))
        out.append(ScoredPly("g", 2 * i + 1, 0, 0, Decision(values, int(rng.integers(0, k))), uci="e2e4", san="e4"))
    return out


def fresh(tag: int | None = 2000) -> Screener:
    scr = Screener(ScreeningConfig(), CAL)
    scr.add_game(GameInfo("g", white="A", black="B", white_elo=tag, black_elo=2000, event="E"))
    return scr


def per_move(n: int, rebuild: bool) -> float:
    """Mean seconds of add_ply + numbers + new_alerts over the last 20% of n moves."""
    scr, sps = fresh(), plies(n)
    key = ("A", "E")
    start = int(n * 0.8)
    for sp in sps[:start]:
        scr.add_ply(sp)
        scr.numbers(key)
    t0 = time.perf_counter()
    for sp in sps[start:]:
        scr.add_ply(sp)
        if rebuild:
            scr.tracks[key].dist = None  # as after an out-of-order ply or a rollback
        scr.new_alerts(key, scr.numbers(key))
    return (time.perf_counter() - t0) / (n - start)


def rerate(n: int) -> float:
    scr = fresh(tag=None)
    for sp in plies(n):
        scr.add_ply(sp)
    t0 = time.perf_counter()
    reps = 5
    for i in range(reps):
        scr.set_fallback_ratings({"A": 1900.0 + i})
        scr.numbers(("A", "E"))
    return (time.perf_counter() - t0) / reps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, nargs="+", default=[60, 300, 1000])
    args = p.parse_args()
    print(f"{'positions':>9} {'per move (in order)':>20} {'per move (rebuild)':>19} {'ratio':>6} {'re-rating':>10}")
    for n in args.positions:
        # the best of 5 runs: the machine is shared, the minimum is the cost without interference
        in_order = min(per_move(n, False) for _ in range(5))
        rebuilt = min(per_move(n, True) for _ in range(5))
        rr = min(rerate(n) for _ in range(3))
        print(f"{n:>9} {in_order * 1e6:>17.0f} µs {rebuilt * 1e6:>16.0f} µs {rebuilt / in_order:>5.1f}x {rr * 1e3:>7.1f} ms")


if __name__ == "__main__":
    main()
