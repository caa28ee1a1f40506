"""Benchmark: livemon's TTT against the ``trueskillthroughtime`` package (1.1.0).

Usage::

    python bench/ttt.py                       # 10k, 100k (with the package), 1m, 3.5m (livemon alone)
    python bench/ttt.py --sizes 10k,100k --reference-sizes 10k
    python bench/ttt.py --refresh 3.5m        # the live case: one more finished game, cold vs incremental

``--refresh SIZES`` fits all games but the last cold, then refreshes with the last one (a game at
the last time step, as at a running event) and fits all games cold again to compare: game updates
(a sweep is two per game; the incremental refresh reports its updates as fractional sweeps),
seconds (wall and CPU), their ratios, and the largest difference of any posterior mean or sd
between the refresh and the cold fit.  The machine's load average is printed with every result.

Data are simulated from the TTT model (skills drift linearly per player, performance
noise β = 1, draw margin for p_draw = 0.3), with the paper's ratio of ~17 games per
player (3.5M games / 200k players) over 100 time steps.  Every measurement runs in a
fresh subprocess, so peak RSS (``ru_maxrss``) is that of one fit; the process
baseline after imports is shown separately.  livemon's numba kernels are compiled
(and cached) by a warm-up fit before timing.

For the package, "to the fixed point" means ``History.convergence(epsilon=tol)``;
when its full run is too slow for a size, its seconds per sweep are measured on a
few sweeps and multiplied by the number of plain (unaccelerated) livemon sweeps to
the same tolerance — the same schedule — and the output says "extrapolated".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000, "3.5m": 3_500_000}
GAMES_PER_PLAYER = 17.5
N_STEPS = 100


def simulate(n_games: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(white, black, step, white's score) from the TTT model; players active over a window of steps."""
    rng = np.random.default_rng(seed)
    n_players = max(int(n_games / GAMES_PER_PLAYER), 20)
    window = N_STEPS // 5
    start = np.sort(rng.integers(-window + 1, N_STEPS, n_players))
    base = rng.normal(0.0, 0.8, n_players)
    slope = rng.normal(0.0, 0.03, n_players)
    t = np.sort(rng.integers(0, N_STEPS, n_games))
    lo = np.searchsorted(start, t - window + 1)
    hi = np.searchsorted(start, t, side="right")
    span = hi - lo
    keep = span >= 2
    t, lo, span = t[keep], lo[keep], span[keep]
    a = lo + (rng.random(t.size) * span).astype(np.int64)
    b = lo + (a - lo + 1 + (rng.random(t.size) * (span - 1)).astype(np.int64)) % span
    skill_a = base[a] + slope[a] * (t - start[a])
    skill_b = base[b] + slope[b] * (t - start[b])
    d = skill_a - skill_b + rng.normal(0.0, np.sqrt(2.0), t.size)
    eps = np.sqrt(2.0) * 0.5244005127080407  # Φ⁻¹(0.65): p_draw 0.3, β = 1
    score = np.where(d > eps, 1.0, np.where(d < -eps, 0.0, 0.5))
    return a, b, t, score


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker_livemon(n_games: int, tol: float) -> dict:
    from livemon.rating import ttt

    ttt.fit(ttt.make_games([0, 1], [1, 2], [0, 1], [1.0, 0.5]))  # compile / load the numba cache
    baseline = _rss_mb()
    a, b, t, s = simulate(n_games)
    params = ttt.TTTParams(tolerance=tol, max_sweeps=5000)
    c0 = time.process_time()
    t0 = time.perf_counter()
    games = ttt.make_games(a, b, t, s)
    t1 = time.perf_counter()
    result = ttt.fit(games, params)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    out = {"games": len(games), "players": int(games.labels.size), "draws": float(np.mean(s == 0.5)),
           "encode_s": t1 - t0, "fit_s": t2 - t1, "total_s": t2 - t0, "cpu_s": cpu, "sweeps": result.sweeps,
           "converged": result.converged, "log_evidence": result.log_evidence,
           "rss_baseline_mb": baseline, "rss_peak_mb": _rss_mb(),
           "mu_checksum": float(np.sum(result.mu))}
    if n_games <= 200_000:
        t3 = time.perf_counter()
        plain = ttt.fit(games, params.__class__(**{**params.__dict__, "accelerate": False}))
        out.update(plain_sweeps=plain.sweeps, plain_s=time.perf_counter() - t3, plain_converged=plain.converged,
                   plain_vs_accelerated=float(np.max(np.abs(plain.mu - result.mu))))
    np.save(f"/tmp/_bench_ttt_mu_{n_games}.npy", np.stack([result.mu, result.sigma]))
    return out


def worker_reference(n_games: int, tol: float, full: bool, max_sweeps: int) -> dict:
    import trueskillthroughtime as ref

    baseline = _rss_mb()
    a, b, t, s = simulate(n_games)
    comp = [[[str(x)], [str(y)]] if r != 0.0 else [[str(y)], [str(x)]] for x, y, r in zip(a, b, s)]
    results = [[0, 0] if r == 0.5 else [1, 0] for r in s]
    times = [int(x) for x in t]
    c0 = time.process_time()
    t0 = time.perf_counter()
    h = ref.History(comp, results, times=times, mu=0.0, sigma=6.0, beta=1.0, gamma=0.03, p_draw=0.3)
    t1 = time.perf_counter()
    out: dict = {"build_s": t1 - t0}
    if full:
        step, sweeps = h.convergence(epsilon=tol, iterations=max_sweeps, verbose=False)
        t2 = time.perf_counter()
        out.update(sweeps=sweeps, converged=bool(max(step) <= tol), sweeps_s=t2 - t1, cpu_s=time.process_time() - c0,
                   sec_per_sweep=(t2 - t1) / max(sweeps, 1), total_s=t2 - t0, log_evidence=h.log_evidence())
        # distance of the package's stopping point from livemon's fixed point
        try:
            from livemon.rating import ttt

            games = ttt.make_games(a, b, t, s)
            mine = ttt.fit(games, ttt.TTTParams(tolerance=1e-9, max_sweeps=5000))
            curves = mine.curves()
            lc = h.learning_curves()
            dist = max(abs(g.mu - p["mu"]) for name, pts in lc.items() for (_, g), p in zip(pts, curves[int(name)]))
            out["max_mu_distance_from_fixed_point"] = dist
            h30 = ref.History(comp, results, times=times, mu=0.0, sigma=6.0, beta=1.0, gamma=0.03, p_draw=0.3)
            h30.convergence(verbose=False)  # the package defaults: 30 sweeps, epsilon 1e-6
            lc30 = h30.learning_curves()
            out["default_30_sweeps_mu_distance"] = max(
                abs(g.mu - p["mu"]) for name, pts in lc30.items() for (_, g), p in zip(pts, curves[int(name)]))
        except Exception as exc:  # pragma: no cover - diagnostics only
            out["distance_error"] = repr(exc)
    else:
        sweeps = 3
        for _ in range(sweeps):
            h.iteration()
        t2 = time.perf_counter()
        out.update(measured_sweeps=sweeps, sec_per_sweep=(t2 - t1) / sweeps)
    out.update(rss_baseline_mb=baseline, rss_peak_mb=_rss_mb())
    return out


def worker_refresh(n_games: int, tol: float) -> dict:
    """Cold fit of all games but the last, the refresh with the last one, and a cold fit of all."""
    from livemon.rating import ttt

    ttt.refresh(ttt.fit(ttt.make_games([0, 1], [1, 2], [0, 1], [1.0, 0.5])),
                ttt.make_games([0], [2], [1], [0.0]))  # compile / load the numba cache
    a, b, t, s = simulate(n_games)
    params = ttt.TTTParams(tolerance=tol, max_sweeps=5000)

    def timed(fn):
        c0, t0 = time.process_time(), time.perf_counter()
        value = fn()
        return value, time.perf_counter() - t0, time.process_time() - c0

    history = ttt.make_games(a[:-1], b[:-1], t[:-1], s[:-1])
    first, first_s, first_cpu = timed(lambda: ttt.fit(history, params))
    last = ttt.make_games(a[-1:], b[-1:], t[-1:], s[-1:])
    warm, warm_s, warm_cpu = timed(lambda: ttt.refresh(first, last))
    everything = ttt.make_games(a, b, t, s)
    cold, cold_s, cold_cpu = timed(lambda: ttt.fit(everything, params))

    def table(f: "ttt.TTTFit") -> tuple[np.ndarray, np.ndarray]:
        labels = f.games.labels[f.node_player].astype(np.int64)
        order = np.lexsort((f.node_step, labels))
        return np.stack([labels[order], f.node_step[order]]), np.stack([f.mu[order], f.sigma[order]])

    (wk, wv), (ck, cv) = table(warm), table(cold)
    same_nodes = wk.shape == ck.shape and bool(np.array_equal(wk, ck))
    return {"games": len(everything), "players": int(everything.labels.size),
            "first_s": first_s, "first_cpu": first_cpu,
            "cold_s": cold_s, "cold_cpu": cold_cpu, "cold_sweeps": cold.sweeps, "cold_updates": cold.updates,
            "warm_s": warm_s, "warm_cpu": warm_cpu, "warm_sweeps": warm.sweeps, "warm_updates": warm.updates,
            "incremental": warm.incremental, "same_nodes": same_nodes,
            "max_dmu": float(np.max(np.abs(wv[0] - cv[0]))) if same_nodes else None,
            "max_dsigma": float(np.max(np.abs(wv[1] - cv[1]))) if same_nodes else None,
            "log_evidence": [warm.log_evidence, cold.log_evidence], "rss_peak_mb": _rss_mb(),
            "load": os.getloadavg()}


def run_worker(kind: str, n_games: int, tol: float, **kw) -> dict:
    spec = json.dumps({"kind": kind, "n": n_games, "tol": tol, **kw})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, __file__, "--worker", spec], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10k,100k,1m,3.5m", help="comma list of 10k, 100k, 1m, 3.5m or numbers")
    p.add_argument("--reference-sizes", default="10k,100k", help="sizes also run with the package")
    p.add_argument("--reference-full-max", type=int, default=10_000,
                   help="run the package to its fixed point up to this many games; above: sec/sweep only")
    p.add_argument("--reference-max-sweeps", type=int, default=3000)
    p.add_argument("--tolerance", type=float, default=1e-6)
    p.add_argument("--refresh", metavar="SIZES", help="only the live refresh: cold fit vs one more game, these sizes")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        if spec["kind"] == "livemon":
            out = worker_livemon(spec["n"], spec["tol"])
        elif spec["kind"] == "refresh":
            out = worker_refresh(spec["n"], spec["tol"])
        else:
            out = worker_reference(spec["n"], spec["tol"], spec["full"], spec["max_sweeps"])
        print(json.dumps(out))
        return 0

    def size(text: str) -> int:
        return SIZES.get(text.strip().lower()) or int(float(text))

    if args.refresh:
        print(f"TTT live refresh: one more finished game at the last time step; tolerance {args.tolerance:g}; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
        for n in [size(x) for x in args.refresh.split(",") if x.strip()]:
            r = run_worker("refresh", n, args.tolerance)
            cold_sweeps = r["cold_updates"] / (2 * r["games"])
            warm_sweeps = r["warm_updates"] / (2 * r["games"])
            print(f"\n== {r['games']:,} games, {r['players']:,} players (load average during: "
                  f"{r['load'][0]:.1f}) ==\n"
                  f"cold fit    : {r['cold_sweeps']} sweeps, {r['cold_s']:.2f} s wall, {r['cold_cpu']:.2f} s CPU\n"
                  f"refresh     : {'incremental' if r['incremental'] else 'FULL (not incremental)'}, "
                  f"{r['warm_updates']:,} game updates = {warm_sweeps:.3f} sweeps, {r['warm_s']:.2f} s wall, "
                  f"{r['warm_cpu']:.2f} s CPU\n"
                  f"ratio       : sweeps {warm_sweeps / cold_sweeps:.4f} (1/{cold_sweeps / max(warm_sweeps, 1e-9):.0f}), "
                  f"CPU {r['warm_cpu'] / r['cold_cpu']:.3f} (1/{r['cold_cpu'] / max(r['warm_cpu'], 1e-9):.1f}), "
                  f"wall {r['warm_s'] / r['cold_s']:.3f}; goal <= 0.1 in both\n"
                  f"agreement   : max |dmu| {r['max_dmu']:.1e}, max |dsigma| {r['max_dsigma']:.1e} against the cold fit; "
                  f"log-evidence {r['log_evidence'][0]:.3f} vs {r['log_evidence'][1]:.3f}; peak RSS {r['rss_peak_mb']:.0f} MB",
                  flush=True)
        return 0
    sizes = [size(x) for x in args.sizes.split(",") if x.strip()]
    ref_sizes = {size(x) for x in args.reference_sizes.split(",") if x.strip()}
    print(f"TTT benchmark, tolerance {args.tolerance:g} on the largest change of a posterior mean or sd; "
          f"{os.cpu_count()} cores", flush=True)
    for n in sizes:
        mine = run_worker("livemon", n, args.tolerance)
        print(f"\n== {mine['games']:,} games, {mine['players']:,} players, {N_STEPS} time steps, "
              f"{mine['draws']:.0%} draws ==", flush=True)
        print(f"livemon : encode {mine['encode_s']:.2f} s + fit {mine['fit_s']:.2f} s = {mine['total_s']:.2f} s, "
              f"{mine['sweeps']} sweeps ({mine['fit_s'] / max(mine['sweeps'], 1):.4f} s/sweep incl. setup), "
              f"converged={mine['converged']}, CPU {mine['cpu_s']:.2f} s, peak RSS {mine['rss_peak_mb']:.0f} MB "
              f"(baseline after imports {mine['rss_baseline_mb']:.0f} MB)", flush=True)
        if "plain_sweeps" in mine:
            print(f"livemon without the common-shift step: {mine['plain_sweeps']} sweeps, {mine['plain_s']:.2f} s, "
                  f"same fixed point within {mine['plain_vs_accelerated']:.1e}", flush=True)
        if n not in ref_sizes:
            continue
        full = n <= args.reference_full_max
        ref = run_worker("reference", n, args.tolerance, full=full, max_sweeps=args.reference_max_sweeps)
        if full:
            total = ref["total_s"]
            print(f"package : build {ref['build_s']:.2f} s + {ref['sweeps']} sweeps {ref['sweeps_s']:.1f} s = "
                  f"{total:.1f} s ({ref['sec_per_sweep']:.3f} s/sweep, converged={ref['converged']}, CPU {ref['cpu_s']:.1f} s), "
                  f"peak RSS {ref['rss_peak_mb']:.0f} MB (baseline {ref['rss_baseline_mb']:.0f} MB)", flush=True)
            if "max_mu_distance_from_fixed_point" in ref:
                print(f"package at its stop: max |mu - fixed point| = {ref['max_mu_distance_from_fixed_point']:.2e}; "
                      f"with its defaults (30 sweeps): {ref['default_30_sweeps_mu_distance']:.3f}", flush=True)
            print(f"log-evidence: livemon {mine['log_evidence']:.4f}, package {ref['log_evidence']:.4f}")
        else:
            sweeps = mine.get("plain_sweeps", 400)
            total = ref["build_s"] + ref["sec_per_sweep"] * sweeps
            print(f"package : build {ref['build_s']:.2f} s, {ref['sec_per_sweep']:.3f} s/sweep measured on "
                  f"{ref['measured_sweeps']} sweeps; EXTRAPOLATED to {sweeps} sweeps (livemon's plain-sweep count "
                  f"to this tolerance): {total:.0f} s; peak RSS {ref['rss_peak_mb']:.0f} MB "
                  f"(baseline {ref['rss_baseline_mb']:.0f} MB)", flush=True)
        per_sweep_mine = mine["fit_s"] / max(mine["sweeps"], 1)
        print(f"ratios  : time to fixed point {total / mine['total_s']:.0f}x, per sweep "
              f"{ref['sec_per_sweep'] / per_sweep_mine:.0f}x, peak RSS above baseline "
              f"{(ref['rss_peak_mb'] - ref['rss_baseline_mb']) / max(mine['rss_peak_mb'] - mine['rss_baseline_mb'], 1):.1f}x",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
