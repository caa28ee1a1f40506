"""``livemon analyse PGN...``: rate the players of finished games."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from typing import Any

from livemon.batch import analyse_games, batch_report, engine_strength_for, read_files
from livemon.config import ConfigError, load_config
from livemon.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files (several games each is fine)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--engine-strength", type=float, metavar="R", help="r̄_e of the engine profile, in Elo")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--depth", type=int, metavar="N", help="search depth per position")
    limit.add_argument("--nodes", type=int, metavar="N", help="search nodes per position")
    p.add_argument("--multipv", type=int, metavar="N", help="candidate lines per position")
    p.add_argument("--processes", type=int, metavar="N", help="engine processes in parallel")
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store holding the position cache")
    p.add_argument("--all-pairs", action="store_true", help="Algorithm 2 over all pairs, not just pairs that met")


def run(args: argparse.Namespace) -> int:
    def report(line: str) -> None:
        print(f"livemon: {line}", file=sys.stderr, flush=True)

    try:
        cfg = load_config(args.config)
        if args.depth is not None:
            cfg.engine.depth, cfg.engine.nodes = args.depth, None
        if args.nodes is not None:
            cfg.engine.nodes, cfg.engine.depth = args.nodes, None
        for key in ("multipv", "processes"):
            if getattr(args, key) is not None:
                setattr(cfg.engine, key, getattr(args, key))
        cfg.engine.validate()
        if args.store:
            cfg.store.path = args.store
    except ConfigError as exc:
        report(f"config: {exc}")
        return 2
    planned = read_files(args.pgn, report)
    if not planned:
        report("no game to analyse")
        return 1
    with Store(cfg.store.path) as store:
        result = asyncio.run(analyse_games(planned, cfg, store, report))
        strength, source = engine_strength_for(result, store, args.engine_strength)
        calibration = store.get_calibration(result.profile)
        result.estimator.c_map = None if calibration is None else calibration.c_map
    for note in result.notes:
        report(note)
    out = batch_report(result, strength, source, args.all_pairs or cfg.analysis.all_pairs)
    if not out["games"]:
        return 1
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(out))
    return 0


def _num(x: float | None, fmt: str = "{:+.0f}") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else fmt.format(x)


def _c_elo_text(c_elo: dict[str, Any] | None) -> str:
    if c_elo is None:
        return "—"
    return ("~" if c_elo["extrapolated"] else "") + f"{c_elo['elo']:.0f}"


def render_table(out: dict[str, Any]) -> str:
    """The human-readable report: engine, games (Algorithm 1), players (Algorithms 3–4, c)."""
    eng = out["engine"]
    lines = [
        f"engine profile: {eng['profile']}   searches run: {eng['analyses']}",
        f"engine strength r̄_e: {_num(eng['strength'], '{:.0f}')} ({eng['strength_source']})",
        "",
        f"{'game':<48} {'result':>7} {'plies':>5} {'p(W)':>6} {'d(W-B)':>7}",
    ]
    for g in out["games"]:
        name = f"{g['white']} - {g['black']}"[:48]
        p = g["white_expected_score"]
        lines.append(f"{name:<48} {g['result']:>7} {g['plies']:>5} {_num(p, '{:.3f}'):>6} {_num(g['white_rating_diff']):>7}")
    perceived = out["event"]["perceived_ratings"]
    lines += ["", f"{'player':<28} {'elo':>5} {'moves':>5} {'gain':>7} {'p(eng)':>6} {'d(eng)':>6} {'perc.':>6} {'alg2':>6} {'c̄ ± σ':>12} {'c-Elo':>6}"]
    players = sorted(out["players"], key=lambda p: -(p["perceived_elo"] or -1e9))
    for p in players:
        c = p["c"]
        c_text = "—" if c is None else f"{c['mean']:.2f}±{c['sd']:.2f}"
        lines.append(
            f"{p['name'][:28]:<28} {_num(p['elo'], '{:d}'):>5} {p['moves']:>5} {_num(p['mean_gain'], '{:+.1f}'):>7} "
            f"{_num(p['expected_score_vs_engine'], '{:.3f}'):>6} {_num(p['rating_diff_vs_engine']):>6} "
            f"{_num(p['perceived_elo'], '{:.0f}'):>6} {_num(perceived.get(p['name']), '{:.0f}'):>6} {c_text:>12} "
            f"{_c_elo_text(p.get('c_elo')):>6}"
        )
    lines += [
        "",
        "gain: mean centipawns won per move against the engine's evaluation (0 = engine-perfect);",
        "p(eng)/d(eng): expected score and Elo difference against the engine (Algorithm 3);",
        "perc.: perceived Elo r̄_e + d (Algorithm 4); alg2: perceived Elo within the event (Algorithm 2);",
        "c̄ ± σ: apparent skill of the E(c) reference agent (higher = closer to the engine), — = none;",
        "c-Elo: c̄ on the Elo scale of the profile's calibration (livemon calibrate), ~ = outside its fitted range.",
    ]
    return "\n".join(lines) + "\n"
