"""Bench: Ferreira's expected score, O(bins) CDF form vs the paper's cross-correlation.

Histograms are real-sized (1-cp bins over ±7800, 15601 bins) and filled with
gains from a realistic mixture: most in [−300, 50] around 0, with a long
negative tail (inaccuracies, blunders, missed mates). Prints the time per call
of each form, their ratio, and the largest disagreement seen.

    .venv/bin/python bench/expected_score.py [--pairs 20] [--reps 50] [--moves 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, no install needed

from livemon.rating.gain import MAX_GAIN, GainHistogram, expected_score, expected_score_xcorr


def realistic_gains(rng: np.random.Generator, n: int) -> np.ndarray:
    """Gains of a club-to-master player: mostly small losses, a long negative tail."""
    kind = rng.choice(4, size=n, p=[0.47, 0.40, 0.12, 0.01])
    g = np.select(
        [kind == 0, kind == 1, kind == 2],
        [rng.normal(0, 12, n), -rng.exponential(40, n), -rng.exponential(250, n)],
        -rng.uniform(300, MAX_GAIN, n),
    )
    return np.clip(np.rint(g), -MAX_GAIN, MAX_GAIN).astype(np.int64)


def per_call(fn: Callable[[], float], reps: int) -> float:
    """Best-of-3 mean seconds per call over ``reps`` calls (after one warm-up)."""
    fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20, help="distinct histogram pairs")
    ap.add_argument("--reps", type=int, default=50, help="repetitions per pair (fast forms)")
    ap.add_argument("--moves", type=int, default=2000, help="gains per histogram")
    ap.add_argument("--direct-pairs", type=int, default=2, help="pairs for the O(bins²) direct correlate (0 skips)")
    ap.add_argument("--seed", type=int, default=2012)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    pairs = [
        (GainHistogram.from_gains(realistic_gains(rng, args.moves)), GainHistogram.from_gains(realistic_gains(rng, args.moves)))
        for _ in range(args.pairs)
    ]
    x0 = pairs[0][0]
    print(f"histograms: {len(x0.counts)} bins (±{MAX_GAIN} cp), {args.moves} gains each, "
          f"{len(x0.to_dict())} non-empty bins, mean gain {x0.mean:.1f} cp")

    t_cdf = np.mean([per_call(lambda x=x, y=y: expected_score(x, y), args.reps) for x, y in pairs])
    t_fft = np.mean([per_call(lambda x=x, y=y: expected_score_xcorr(x, y), max(1, args.reps // 5)) for x, y in pairs])
    err_fft = max(abs(expected_score(x, y) - expected_score_xcorr(x, y)) for x, y in pairs)
    print(f"O(bins) CDF form          : {t_cdf * 1e6:10.1f} µs/call  ({args.pairs} pairs x {args.reps} reps)")
    print(f"scipy.signal.correlate fft: {t_fft * 1e6:10.1f} µs/call  max |Δp| = {err_fft:.2e}")
    print(f"ratio correlate(fft) / CDF: {t_fft / t_cdf:10.1f}x")

    if args.direct_pairs > 0:
        sub = pairs[: args.direct_pairs]
        t_dir = np.mean([per_call(lambda x=x, y=y: expected_score_xcorr(x, y, method="direct"), 1) for x, y in sub])
        err_dir = max(abs(expected_score(x, y) - expected_score_xcorr(x, y, method="direct")) for x, y in sub)
        print(f"correlate direct O(bins²) : {t_dir * 1e6:10.1f} µs/call  max |Δp| = {err_dir:.2e}  ({len(sub)} pairs)")
        print(f"ratio correlate(direct)/CDF: {t_dir / t_cdf:9.1f}x")


if __name__ == "__main__":
    main()
