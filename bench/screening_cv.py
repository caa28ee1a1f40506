"""Why is the screening z of honest players off zero? Leave-one-event-out inside the fit events only.

For every fit event E (the calibration set's fit events and the 2025 open), the
screening calibration is refitted on all the **other** fit events and every
player-event of E is scored against it; the held-back events of
``bench/calibration_split.py`` are never read. Methods compared (each fitted on
the training events only, then applied to the left-out event):

* ``ml`` — the shipped method: c_r from the maximum-likelihood line of c on Elo
  (:meth:`Calibration.fit_decisions`), z divided by the training players' sd of z;
* ``ml+shift`` — the same line moved by one δ in c, chosen so that the training
  players' expected top-move matches equal the observed ones
  (:func:`livemon.rating.calibration.match_shift`);
* ``ml+shift-set`` — the same shift chosen on the calibration set's events only
  (the open, 3/4 of the fit's player-games, left out of the choice of δ);
* ``moment`` — a line (a, b) fitted by the two moment equations of the matches
  (Σ (M − E) = 0 and Σ Elo·(M − E) = 0), Regan's way of fitting screening
  parameters, not the likelihood.

Per method it prints the z of the left-out players (mean, sd, notices at ≥ 2.5)
over the player-events with ≥ 60 screened positions (the screener's minimum) and
over all with ≥ 20, the match residual per position by rating band and by game
phase, and the event-level z (pooled over an event's players) whose spread
across events beyond 1 would call for a τ_event component.

Usage::

    python bench/screening_cv.py [EXPORT] [--open OPEN] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_data import DEFAULT, load  # noqa: E402
from validity import BANDS, Sample, player_events, player_games  # noqa: E402

from livemon.rating.agent import K  # noqa: E402
from livemon.rating.calibration import Calibration, match_moment_line, match_shift  # noqa: E402

MIN_Z_POSITIONS = 60


class Packed:
    """Every screened decision of a list of samples: log distances, the top mask, played-is-top, owner."""

    def __init__(self, samples: Sequence[Sample]):
        rows = [(i, d) for i, s in enumerate(samples) for d in s.decisions]
        k = max(len(d.values) for _, d in rows)
        self.a = np.full((len(rows), k), np.inf)
        self.matched = np.zeros(len(rows))
        self.owner = np.array([i for i, _ in rows], dtype=np.intp)
        for r, (_, d) in enumerate(rows):
            v = np.asarray(d.values)
            self.a[r, : v.size] = np.log((v.max() - v + K) / K)
            self.matched[r] = float(v[d.played] == v.max())
        self.top = (self.a == 0.0).sum(axis=1)
        self.elo = np.array([s.elo for s in samples])
        self.n = len(samples)

    def p0(self, c: np.ndarray) -> np.ndarray:
        """p0 of every position for the c of its owner (c per sample)."""
        cn = np.maximum(c[self.owner], 0.0)
        return self.top / np.exp(-self.a * cn[:, None]).sum(axis=1)

    def sums(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per sample: observed matches, expected, variance, positions."""
        p = self.p0(c)
        f = self.n
        return (np.bincount(self.owner, self.matched, f), np.bincount(self.owner, p, f),
                np.bincount(self.owner, p * (1 - p), f), np.bincount(self.owner, minlength=f).astype(float))

    def dsum(self, c: np.ndarray) -> np.ndarray:
        """Per sample: Σ ∂p0/∂c."""
        cn = np.maximum(c[self.owner], 0.0)
        w = np.exp(-self.a * cn[:, None])
        s = w.sum(axis=1)
        aw = np.where(np.isfinite(self.a), np.nan_to_num(self.a, posinf=0.0) * w, 0.0)
        return np.bincount(self.owner, (self.top / s) * aw.sum(axis=1) / s, self.n)


def fit_methods(train: Sequence[Sample]) -> dict[str, tuple[float, float, float]]:
    """(a, b, z_scale) per method, fitted on the training samples only."""
    cal = Calibration.fit_decisions([(s.elo, s.decisions) for s in train])
    players = [(s.elo, s.decisions) for s in train]
    delta = match_shift(players, cal.a, cal.b)
    others = [(s.elo, s.decisions) for s in train if s.event != "open2025"]
    delta_cal = match_shift(others, cal.a, cal.b) if others else delta
    ma, mb = match_moment_line(players, cal.a, cal.b)
    out = {}
    pk = Packed(train)
    for name, (a, b) in {"ml": (cal.a, cal.b), "ml+shift": (cal.a + delta, cal.b),
                          "ml+shift-set": (cal.a + delta_cal, cal.b), "moment": (ma, mb)}.items():
        m, e, v, n = pk.sums(a + b * pk.elo)
        big = n >= MIN_Z_POSITIONS
        z = (m - e) / np.sqrt(v)
        out[name] = (a, b, float(np.std(z[big], ddof=1)) if big.sum() >= 10 else 1.0)
    return out


def event_shifts(rs: Sequence[dict[str, float]], tau_player: float) -> dict[str, object]:
    """τ_event: the sd of an event's common shift u_E in c (on top of each player's own τ), by maximum likelihood.

    Per left-out event (≥ 100 positions): u_E ≈ Σ (M − E) / Σ ∂E/∂c (one Newton step of the match
    shift from the training line), its sampling variance Σ V / D² plus the players' own scatter
    τ_player² Σ D_i² / D², D = Σ ∂E/∂c. Then u_E ~ N(μ, s_E² + τ_event²): μ and τ_event by ML.
    """
    import scipy.optimize

    ev: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0.0])
    for r in rs:
        t = ev[str(r["event"])]
        t[0] += r["m"] - r["e"]
        t[1] += r["v"]
        t[2] += r["d"]
        t[3] += r["d"] ** 2
        t[4] += r["n"]
    u, s2, names = [], [], []
    for k, t in ev.items():
        if t[4] < 100:
            continue
        names.append(k)
        u.append(t[0] / t[2])
        s2.append((t[1] + tau_player ** 2 * t[3]) / t[2] ** 2)
    ua, sa = np.array(u), np.array(s2)

    def nll(theta: np.ndarray) -> float:
        var = sa + theta[1] ** 2
        return float(0.5 * (np.log(var) + (ua - theta[0]) ** 2 / var).sum())

    res = scipy.optimize.minimize(nll, np.array([0.0, 0.05]), method="Nelder-Mead")
    return {"events": len(ua), "mu": float(res.x[0]), "tau_event": abs(float(res.x[1])),
            "u": {k: [float(a), float(math.sqrt(b))] for k, a, b in zip(names, ua, sa)}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("export", nargs="?", type=Path, default=DEFAULT)
    p.add_argument("--open", dest="open_", type=Path, default=None,
                   help="the open's decisions (default bench/data/open2025_decisions.jsonl.gz when its profile matches)")
    p.add_argument("--no-open", action="store_true")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    import fit_calibration

    games = [g for g in load(args.export) if g.part == "fit"]  # never the held-back events
    per_game = [s for s in player_games(games) if s.decisions]
    if not args.no_open:
        per_game += fit_calibration.open2025(args.open_ or fit_calibration.OPEN)
    events = sorted({s.event for s in per_game})
    per_event = player_events(per_game, min_games=1)
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    fitted: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    tau_player = Calibration.fit_decisions([(s.elo, s.decisions) for s in per_event]).tau or 0.0
    for ev in events:
        train = [s for s in per_event if s.event != ev]
        test = [s for s in per_event if s.event == ev]
        methods = fit_methods(train)
        pk = Packed(test)
        for name, (a, b, zs) in methods.items():
            fitted[name].append((a, b, zs))
            m, e, v, n = pk.sums(a + b * pk.elo)
            d = pk.dsum(a + b * pk.elo)
            for i, s in enumerate(test):
                rows[name].append({"event": ev, "elo": s.elo, "n": n[i], "m": m[i], "e": e[i], "v": v[i], "d": d[i],
                                   "z": (m[i] - e[i]) / math.sqrt(v[i]) / zs})
    report: dict[str, object] = {"events": len(events), "player_events": len(per_event),
                                 "load": os.getloadavg()[0]}
    for name, rs in rows.items():
        n = np.array([r["n"] for r in rs])
        z = np.array([r["z"] for r in rs])
        elo = np.array([r["elo"] for r in rs])
        res = np.array([r["m"] - r["e"] for r in rs])
        out: dict[str, object] = {}
        for lo_n in (MIN_Z_POSITIONS, 20):
            sel = n >= lo_n
            out[f"z>={lo_n}"] = {"n": int(sel.sum()), "mean": float(z[sel].mean()), "sd": float(z[sel].std(ddof=1)),
                                 "notices": int((z[sel] >= 2.5).sum())}
        out["bands"] = {bn: {"players": int(((elo >= lo) & (elo < hi)).sum()),
                             "residual_per_position": float(res[(elo >= lo) & (elo < hi)].sum()
                                                            / max(n[(elo >= lo) & (elo < hi)].sum(), 1))}
                        for lo, hi, bn in BANDS}
        by_ev: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
        for r in rs:
            t = by_ev[r["event"]]
            t[0] += r["m"] - r["e"]
            t[1] += r["v"]
            t[2] += r["n"]
        ez = np.array([t[0] / math.sqrt(t[1]) for t in by_ev.values() if t[2] >= 100])
        out["event_z"] = {"events": len(ez), "mean": float(ez.mean()), "sd": float(ez.std(ddof=1))}
        if name == "ml":
            out["event_shift"] = event_shifts(rs, tau_player)
        fa = np.array(fitted[name])
        out["fits"] = {"a": [float(fa[:, 0].min()), float(fa[:, 0].max())],
                       "b_per_1000": [float(fa[:, 1].min() * 1000), float(fa[:, 1].max() * 1000)],
                       "z_scale": [float(fa[:, 2].min()), float(fa[:, 2].max())]}
        open_rows = [r for r in rs if r["event"] == "open2025"]
        if open_rows:
            oz = np.array([r["z"] for r in open_rows if r["n"] >= MIN_Z_POSITIONS])
            out["open_left_out"] = {"n": len(oz), "mean": float(oz.mean()), "sd": float(oz.std(ddof=1))}
        report[name] = out
    report["seconds"] = time.perf_counter() - t0
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"leave-one-event-out over {len(events)} fit events ({len(per_event)} player-events); "
          "held-back events not read")
    for name in rows:
        o = report[name]
        print(f"{name}:")
        for key in (f"z>={MIN_Z_POSITIONS}", "z>=20"):
            f = o[key]  # type: ignore[index]
            print(f"  {key:<7} n={f['n']:<4} z mean {f['mean']:+.3f} sd {f['sd']:.3f} notices {f['notices']}")
        if "open_left_out" in o:  # type: ignore[operator]
            f = o["open_left_out"]  # type: ignore[index]
            print(f"  the open left out (>= 60): n={f['n']} z mean {f['mean']:+.3f} sd {f['sd']:.3f}")
        print("  match residual per position by band: " + ", ".join(
            f"{k} {v['residual_per_position']:+.4f} ({v['players']})" for k, v in o["bands"].items()))  # type: ignore[index]
        f = o["event_z"]  # type: ignore[index]
        print(f"  event z (pooled over an event's players, events with >= 100 positions): n={f['events']} "
              f"mean {f['mean']:+.2f} sd {f['sd']:.2f}")
        if "event_shift" in o:  # type: ignore[operator]
            f = o["event_shift"]  # type: ignore[index]
            print(f"  event shift in c (left-out events >= 100 positions, player tau {tau_player:.3f}): n={f['events']} "
                  f"mean {f['mu']:+.4f}, tau_event {f['tau_event']:.4f} (ML)")
        f = o["fits"]  # type: ignore[index]
        print(f"  fits: a {f['a'][0]:.3f}..{f['a'][1]:.3f}, b {f['b_per_1000'][0]:.3f}..{f['b_per_1000'][1]:.3f}/1000, "
              f"z_scale {f['z_scale'][0]:.3f}..{f['z_scale'][1]:.3f}")
    print(f"({report['seconds']:.0f} s, load {report['load']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
