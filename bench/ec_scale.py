"""The E(c) maps of ``livemon/data/calibrations.json`` fitted on today's FIDE scale or on the tags as published,
leave one event out, per band.

``bench/fit_calibration.py`` fits the maps on the fit events of ``calibration_d12.jsonl.gz`` (and the 2025 open's
screened decisions for ``c_map``). Here each fit event in turn is left out of the **performance map**'s fit
(every non-forced move; its τ borrowed by the screened map's ratio τ/τ_game of the full fit, as
``fit_calibration.py`` does) and its units (every analysed game of the event, from every export) are
estimated (the games of ``calibration_d12.jsonl.gz``: a sample of single games of the fit events and the
held-back events whole; ``--all-exports``: every export's and the 2025 open's); the held-back events are estimated
by the fit on every fit event. ``c_elo`` (c̄ through the
screening map ``c_map``) is measured with the full fit of the same reading: in sample on the fit events, so only
its held-back rows are unseen. ``--folds K``: the fit events dealt into K folds (largest first, round the folds),
each fold left out in turn instead of each event (K fits instead of one per event, for a busy machine).
Run once per reading; each run's truth is on its own scale:

    LIVEMON_BENCH_RATINGS=today python bench/ec_scale.py --json > ec_today.json
    LIVEMON_BENCH_RATINGS=published python bench/ec_scale.py --json > ec_published.json
    python bench/rating_scale.py ec_today.json ec_published.json --estimators performance,c_elo
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_quality as fq  # noqa: E402
import validity  # noqa: E402
from calibration_data import DEFAULT, PROFILE, RATINGS, load  # noqa: E402
from fit_calibration import OPEN, open2025  # noqa: E402

from livemon.rating.calibration import Calibration  # noqa: E402
from livemon.rating.performance import fit_performance_calibration  # noqa: E402

SECTIONS = (("per game", "game", 1), ("per player-event, >= 5 games", "event", 5),
            ("per player-event, >= 7 games", "event", 7))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--all-exports", action="store_true", help="estimate the units of every export and the 2025 open "
                   "(default: the games of calibration_d12.jsonl.gz, the export the maps are fitted on)")
    p.add_argument("--folds", type=int, default=0, help="fit events dealt into K folds (default: one per event)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    games = [g for g in load(DEFAULT) if g.part == "fit"]
    samples = validity.player_games(games)
    extra = open2025(OPEN, profile=PROFILE)
    per_game = [s for s in samples + extra if s.decisions]
    per_event = validity.player_events(per_game, min_games=1)
    cal = Calibration.fit_decisions([(s.elo, s.decisions) for s in per_event], profile=PROFILE)
    by_game = Calibration.fit_decisions([(s.elo, s.decisions) for s in per_game], profile=PROFILE)
    ratio = float(cal.tau or 0.0) / float(by_game.tau or 1.0)
    cal = replace(cal, tau_game=by_game.tau)

    def perf_without(events: frozenset[str]) -> Calibration:
        fitted = fit_performance_calibration(((s.elo, (s.key, s.event), i, d) for i, s in enumerate(samples)
                                              if s.event not in events for _, d in s.moves), PROFILE)
        return replace(fitted, tau=float(fitted.tau_game or 0.0) * ratio)

    full = perf_without(frozenset())
    sides = fq.all_sides() if args.all_exports else fq.calibration_sides([DEFAULT])
    by_event: dict[str, list[fq.Side]] = defaultdict(list)
    for s in sides:
        by_event[s.event].append(s)
    fit_events = {g.event for g in games}
    size: dict[str, int] = defaultdict(int)
    for g in games:
        size[g.event] += 1
    order = sorted(size, key=lambda e: (-size[e], e))
    fold = {e: (i % args.folds if args.folds > 1 else i) for i, e in enumerate(order)}
    fits: dict[int, Calibration] = {}
    rows: dict[str, list[tuple[fq.Unit, dict[str, validity.Estimate]]]] = {t: [] for t, _, _ in SECTIONS}
    held: dict[str, list[tuple[fq.Unit, dict[str, validity.Estimate]]]] = {t: [] for t, _, _ in SECTIONS}
    for ev in sorted(by_event):
        if ev in fit_events:
            if fold[ev] not in fits:
                fits[fold[ev]] = perf_without(frozenset(e for e in order if fold[e] == fold[ev]))
            perf = fits[fold[ev]]
        else:
            perf = full
        est = validity.shipped_estimators(cal, perf, 2400.0)
        mean = float(np.mean([s.elo for s in sides if s.event != ev and s.elo is not None]))
        for title, per, mg in SECTIONS:
            for u in fq.units(by_event[ev], per, mg):
                if u.elo is None:
                    continue
                row = (u, {"performance": est["performance"](u), "c_elo": est["c_elo"](u), "mean": (mean, None)})
                rows[title].append(row)
                if by_event[ev][0].part == "test":
                    held[title].append(row)
        print(f"  {ev}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    names = ["performance", "c_elo", "mean"]
    report = {"ratings": RATINGS, "folds": args.folds or "one per event",
              "c_map": {"a": cal.a, "b": cal.b, "tau": cal.tau, "tau_game": cal.tau_game, "z_scale": cal.z_scale},
              "performance": {"a": full.a, "b": full.b, "tau": full.tau, "tau_game": full.tau_game},
              "leave_one_event_out": {t: validity.section_figures(rows[t], names) for t in rows},
              "held_back": {t: validity.section_figures(held[t], names) for t in held},
              "seconds": time.perf_counter() - t0, "load": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"ratings {RATINGS}: c_map {cal.a:+.4f} + {1000 * cal.b:.4f}/1000, tau {cal.tau:.4f}; performance "
          f"{full.a:+.4f} + {1000 * full.b:.4f}/1000, tau {full.tau:.4f}, tau_game {full.tau_game:.4f}")
    for part in ("leave_one_event_out", "held_back"):
        for title, f in report[part].items():  # type: ignore[attr-defined]
            print(f"{part.replace('_', ' ')}, {title}")
            for name in names:
                print(validity.fmt_row(name, f[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
