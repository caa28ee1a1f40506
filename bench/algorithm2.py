"""Algorithm 2 (perceived ratings by least squares over the pairs that met) at the size of a big event.

A field of N players paired at random for R rounds (a Swiss-like graph: one
component after a few rounds) and the 1,000-board round of ``bench/round.py``
(every board the same two players: N/2 components of two), with random d_ij.
Times :func:`livemon.rating.gain.perceived_ratings` (the Laplacian solved by a
sparse LU) against the dense ``numpy.linalg.lstsq`` over every pair that it
replaced (the reference, run in the same process), and checks both give the same
differences.

    python bench/algorithm2.py [--players 2000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from livemon.rating.gain import perceived_ratings


def dense(diffs: dict[tuple[str, str], float], names: list[str]) -> np.ndarray:
    index = {p: k for k, p in enumerate(names)}
    a_mat = np.zeros((len(diffs), len(names)))
    for k, (i, j) in enumerate(diffs):
        a_mat[k, index[i]], a_mat[k, index[j]] = 1.0, -1.0
    return np.linalg.lstsq(a_mat, np.array(list(diffs.values())), rcond=None)[0]


def timed(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def case(label: str, diffs: dict[tuple[str, str], float], names: list[str]) -> None:
    actual = {p: 2000.0 for p in names}
    r = perceived_ratings(diffs, actual)
    ref = dense(diffs, names)
    worst = max(abs((r[i] - r[j]) - (ref[names.index(i)] - ref[names.index(j)])) for i, j in list(diffs)[:500])
    t_new = timed(lambda: perceived_ratings(diffs, actual))
    t_ref = timed(lambda: dense(diffs, names), repeat=1)
    print(f"{label}: {len(names)} players, {len(diffs)} pairs: sparse {1000 * t_new:.1f} ms, dense lstsq "
          f"{1000 * t_ref:.0f} ms ({t_ref / t_new:.0f}x); largest difference of r'_i - r'_j {worst:.1e}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=9)
    args = p.parse_args()
    print("load average %.2f, %.2f, %.2f on %d cores (before)" % (*os.getloadavg(), os.cpu_count() or 0))
    rng = np.random.default_rng(1)
    names = [f"p{k}" for k in range(args.players)]
    swiss: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        order = rng.permutation(args.players)
        for k in range(0, args.players - 1, 2):
            swiss[(names[order[k]], names[order[k + 1]])] = float(rng.normal(0, 150))
    case(f"Swiss-like, {args.rounds} rounds", swiss, names)
    boards = {(names[k], names[k + 1]): float(rng.normal(0, 150)) for k in range(0, args.players - 1, 2)}
    case("one round, every board its own pair", boards, names)
    print("load average %.2f, %.2f, %.2f (after)" % os.getloadavg())


if __name__ == "__main__":
    main()
