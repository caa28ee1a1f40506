"""Fit the shipped calibration of an engine profile on the fit part of the calibration games.

Reads the exported analyses (``bench/calibration_data.py``), keeps the **fit**
events only (``bench/calibration_split.py``; the held-back events are for
``bench/validity.py`` alone), adds the 2025 open of ``bench/data/open2025_decisions.jsonl.gz``
(a fit event too: it is not in the calibration set; for another profile, the export
of the open's decisions at that profile, below), and fits by maximum likelihood
c ~ N(a + b·Elo, τ²) twice: with one c per player-event (the line, τ and the screening z_scale, which
belong to event-sized samples) and with one c per player-game (``tau_game``: a
player's game-to-game variation on top, which the headline estimate's interval
for a single game must cover), plus Algorithm 3's r̄_e over the
fit players. Writes the result into ``livemon/data/calibrations.json`` under the
profile, with the rating pool it maps to and a record of what it was fitted on.

Usage::

    python bench/fit_calibration.py [EXPORT] [--profile P] [--open FILE | --no-open] [--out calibrations.json]
        [--withhold-c-map REASON] [--dry-run]

The profile is the export's (its header line), written under that name; other
profiles in the file are kept. The open's decisions are used only when their
profile is the export's: ``--open FILE``, else the first of
``bench/data/open2025_decisions.jsonl.gz`` (depth 12, the whole open) and
``bench/data/open2025_decisions_*.jsonl.gz`` (e.g. ``_d14``: depth 14, rounds 5-8)
whose header names the profile. Without one the fit runs on the calibration games
alone, and says so.

``--withhold-c-map REASON``: write the screening map under ``fit.c_map_withheld``
(with the reason) and ``c_map`` null, so that screening and c-Elo stay off at the
profile while the fitted line is kept on record (the performance map and r̄_e are
written as usual).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import gzip
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_data import DEFAULT, RATINGS, load, profile_of  # noqa: E402
from validity import BOOK_MOVES, EVAL_BOUND, Sample, player_events, player_games  # noqa: E402

from livemon.io.store import SHIPPED_CALIBRATIONS  # noqa: E402
from livemon.rating.agent import Decision  # noqa: E402
from livemon.rating.calibration import Calibration, engine_strength_fit  # noqa: E402
from livemon.rating.gain import GainHistogram  # noqa: E402
from livemon.rating.performance import fit_performance_calibration  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
OPEN = REPO / "bench" / "data" / "open2025_decisions.jsonl.gz"
POOL = "FIDE classical"


def open_profile(path: Path = OPEN) -> str | None:
    """The engine profile of the open's decisions (None when the file is missing)."""
    if not path.exists():
        return None
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return str(json.loads(f.readline())["profile"])


def open_export(profile: str) -> Path | None:
    """The export of the open's decisions analysed under ``profile`` (None when there is none)."""
    for path in [OPEN, *sorted(OPEN.parent.glob(OPEN.name.replace(".jsonl.gz", "_*.jsonl.gz")))]:
        if open_profile(path) == profile:
            return path
    return None


def open2025(path: Path = OPEN, profile: str | None = None) -> list[Sample]:
    """The 2025 open's screened decisions, one sample per player-game (one event)."""
    samples: dict[tuple[str, int], Sample] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = json.loads(f.readline())
        if header["book_moves"] != BOOK_MOVES or (profile is not None and header["profile"] != profile):
            raise ValueError(f"{path}: profile {header['profile']!r}, book_moves {header['book_moves']}: "
                             f"not {profile!r} with book_moves {BOOK_MOVES}")
        for line in f:
            d = json.loads(line)
            s = samples.setdefault((d["player"], d["game"]), Sample(d["player"], "open2025", float(d["elo"]), games=1))
            s.decisions.append(Decision(tuple(d["values"]), d["played"]))
    return list(samples.values())


def open_source(path: Path) -> str:
    """How ``fit.sources`` names the open's export: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("export", nargs="?", type=Path, default=DEFAULT)
    p.add_argument("--dry-run", action="store_true", help="print the fit, do not write calibrations.json")
    p.add_argument("--no-open", action="store_true", help="leave the 2025 open out")
    p.add_argument("--open", dest="open_", type=Path, help="the open's decisions export (default: the one of the profile)")
    p.add_argument("--withhold-c-map", metavar="REASON", help="keep the screening map under fit.c_map_withheld, c_map null")
    p.add_argument("--profile", help="the profile to write (default: the export's)")
    p.add_argument("--out", type=Path, default=SHIPPED_CALIBRATIONS, help="the calibrations file to update")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    exported = profile_of(args.export)
    profile = args.profile or exported
    if profile != exported:
        print(f"the export holds analyses of {exported!r}, not {profile!r}: refused")
        return 2
    games = [g for g in load(args.export) if g.part == "fit"]
    samples = player_games(games)
    open_path = None if args.no_open else args.open_ or open_export(profile)
    use_open = open_path is not None and open_profile(open_path) == profile
    if args.open_ is not None and not use_open:
        print(f"{args.open_} holds decisions of {open_profile(args.open_)!r}, not {profile!r}: refused")
        return 2
    if not args.no_open and not use_open:
        print(f"no open decisions of {profile!r} ({OPEN.name} is {open_profile()!r}): fitted on the calibration games only")
    elif use_open and open_path != OPEN:
        print(f"the open's decisions: {open_path}")
    extra = open2025(open_path, profile=profile) if use_open and open_path is not None else []
    per_game = [s for s in samples + extra if s.decisions]
    per_event = player_events(per_game, min_games=1)
    by_game = Calibration.fit_decisions([(s.elo, s.decisions) for s in per_game], profile=profile)
    cal = Calibration.fit_decisions([(s.elo, s.decisions) for s in per_event], profile=profile)
    cal = Calibration(**{**cal.__dict__, "book_moves": BOOK_MOVES, "eval_bound": EVAL_BOUND, "tau_game": by_game.tau})
    perf = fit_performance_calibration(
        ((s.elo, (s.key, s.event), i, d) for i, s in enumerate(samples) for _, d in s.moves), profile, POOL)
    # The calibration set's fit games are a sample of single games (few players have two in one event),
    # so the performance map's per-player τ cannot be told from its per-game τ. The open's players have
    # 9 games each: take the screened map's ratio of the two, the share of a game's spread that is the
    # player's own level, for the performance map too.
    borrowed = float(perf.tau_game or 0.0) * float(cal.tau or 0.0) / float(cal.tau_game or 1.0)
    print(f"  performance map: tau per player-event {perf.tau:.4f} as fitted on mostly single games; "
          f"{borrowed:.4f} = tau_game x {cal.tau:.4f}/{cal.tau_game:.4f} of the screened map (used)")
    perf = replace(perf, tau=borrowed)
    by_player: dict[str, tuple[float, list[int]]] = {}
    for s in samples:
        by_player.setdefault(s.key, (s.elo, []))[1].extend(s.gains)
    strength = engine_strength_fit((elo, GainHistogram.from_gains(g)) for elo, g in by_player.values() if g)
    assert strength is not None
    elos = [s.elo for s in per_game]
    fit = {"games": len(games), "events": len({g.event for g in games}) + (1 if use_open else 0),
           "player_games": len(per_game), "player_events": len(per_event), "positions": cal.positions,
           "mean_elo": round(sum(elos) / len(elos), 1),
           "ratings": "today's FIDE scale" if RATINGS == "today" else "as published",
           "sources": ["the calibration collection (fit events of bench/calibration_split.py)"]
           + ([open_source(open_path)] if use_open and open_path is not None else []),
           "engine_strength_se": strength[1],
           "by_game": {"a": by_game.a, "b": by_game.b, "tau": by_game.tau, "tau_se": by_game.tau_se}}
    print(f"fit on {fit['player_games']} player-games ({fit['games']} calibration games + "
          f"{len(extra)} from the 2025 open), {fit['player_events']} player-events, {cal.positions} positions, "
          f"Elo {cal.elo_min:.0f}-{cal.elo_max:.0f}")
    se = cal.cov_ab
    print(f"  c = {cal.a:.4f} (± {se[0] ** .5:.4f}) + {cal.b * 1000:.4f} (± {se[2] ** .5 * 1000:.4f}) per 1000 Elo; "  # type: ignore[index]
          f"tau {cal.tau:.4f} ± {cal.tau_se or 0:.4f} (per player-event), {by_game.tau:.4f} ± {by_game.tau_se or 0:.4f} "
          f"(per player-game; line {by_game.a:.4f} + {by_game.b * 1000:.4f}/1000); r2 {cal.r2:.2f}; z_scale {cal.z_scale}")
    print(f"  performance map (every non-forced move of the {len(samples)} calibration player-games): "
          f"c = {perf.a:.4f} + {perf.b * 1000:.4f} per 1000 Elo, tau {perf.tau:.4f} (player-event) "
          f"{perf.tau_game:.4f} (player-game), {perf.positions} positions, Elo {perf.elo_min:.0f}-{perf.elo_max:.0f}")
    print(f"  r̄_e {strength[0]:.0f} ± {strength[1] or 0:.0f} ({strength[2]} players); {time.perf_counter() - t0:.1f} s")
    if args.dry_run:
        return 0
    table = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    c_map: dict[str, object] | None = cal.to_dict()
    if args.withhold_c_map:
        fit["c_map_withheld"] = {"reason": args.withhold_c_map, "c_map": c_map}
        c_map = None
        print("  screening map withheld (c_map null; kept under fit.c_map_withheld)")
    table[profile] = {"profile": profile, "engine_strength": strength[0], "fit": fit,
                      "c_map": c_map, "performance": perf.to_dict()}
    args.out.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{profile} written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
