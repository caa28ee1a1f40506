"""``livemon analyse PGN...``: rate the players of finished games (the analysis is :mod:`livemon.app.analyse`'s;
this parses the arguments and prints the tables or the JSON)."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Any

from livemon.commands import add_engine_arguments, engine_config_from_args, say


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files (several games each is fine)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--engine-strength", type=float, metavar="R", help="r̄_e of the engine profile, in Elo")
    add_engine_arguments(p)
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store holding the position cache")
    p.add_argument("--all-pairs", action="store_true", help="Algorithm 2 over all pairs, not just pairs that met")
    p.add_argument("--screen", action="store_true",
                   help="fair-play screening table per player per event (for arbiters; needs a calibration of the profile)")
    p.add_argument("--one-event", action="store_true",
                   help="with --screen: screen all games as one event (when Event tags name single games)")


def run(args: argparse.Namespace) -> int:
    from livemon.app.analyse import NothingToAnalyse, analyse

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    if args.one_event:
        cfg.screening.scope = "all"
    try:
        out = analyse(args.pgn, cfg, say, screen=args.screen, engine_strength=args.engine_strength,
                      all_pairs=args.all_pairs)
    except NothingToAnalyse as exc:
        say(str(exc))
        return 1
    if not out["games"]:
        return 1
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(out))
        if "screening" in out:
            sys.stdout.write(render_screening(out["screening"]))
    return 0


def _z(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}"


def _ipr(r: dict[str, Any]) -> str:
    ipr, cr = r.get("ipr"), r.get("ipr_cr95")
    if ipr is None:
        return "—"
    ends = "" if not cr else " " + "-".join("…" if x is None or math.isinf(x) else f"{x:.0f}" for x in cr)
    return f"{ipr:.0f}{ends}"


def render_screening(s: dict[str, Any]) -> str:
    """The screening table of ``analyse --screen`` (arbiters only)."""
    if not s["enabled"]:
        return f"\nscreening off: {s['reason']}\n"
    lines = [
        "",
        f"fair-play screening (arbiters only): statistic {s['statistic']}, notice z >= {s['notice_z']:g}, "
        f"alert z >= {s['alert_z']:g}, at least {s['min_positions']} positions"
        + (f", z / {s['z_scale']:g}" if s["z_scale"] != 1.0 else ""),
        f"{'player':<24} {'event':<18} {'rating':>9} {'strength':>10} {'c_r':>5} {'pos':>4} {'excl':>4} "
        f"{'MM obs/exp':>11} {'z_match':>7} {'z_tag':>6} {'IPR (95%)':>16} {'loss obs/exp':>12} {'z_loss':>6} "
        f"{'ROI':>5}  level",
    ]
    for r in s["players"]:
        rating = "—" if r["rating"] is None else f"{r['rating']:.0f}{'t' if r['rating_source'] == 'ttt' else ''}"
        if r.get("rating_scale") == "as read" and r["rating"] is not None:
            rating += "?"
        strength = "—" if r.get("strength") is None else f"{r['strength']:.0f}±{r['strength_sd']:.0f}"
        c_r = "—" if r["c_r"] is None else f"{r['c_r']:.2f}"
        mm = f"{r['matches_observed']}/{r['matches_expected']:.1f}"
        loss = f"{r['loss_observed']:.3f}/{r['loss_expected']:.3f}"
        roi = "—" if r["roi"] is None else f"{r['roi']:.1f}"
        lines.append(
            f"{r['player'][:24]:<24} {r['event'][:18]:<18} {rating:>9} {strength:>10} {c_r:>5} {r['positions']:>4} "
            f"{sum(r['excluded'].values()):>4} {mm:>11} {_z(r['z_match']):>7} {_z(r.get('z_tag')):>6} "
            f"{_ipr(r):>16} {loss:>12} {_z(r['z_loss']):>6} {roi:>5}  {r['level'] or ''}"
        )
    chance = s.get("chance")
    lines += [
        "",
        *([chance["line"] + f" (notice z >= {s['notice_z']:g}, alert z >= {s['alert_z']:g})"] if chance else []),
        "rating: tag on today's FIDE scale (? where the game had no date: read as today's), or TTT posterior mean (t);",
        "strength: today's strength from the rating and the event's results, +- its sd; c_r: E(c) skill expected",
        "there; excl: positions left out (forced, book, decided, no MultiPV); MM: top-move matches; z_match from the",
        "exact tail of the matches against that strength, widened by its sd; z_tag: against the rating alone (an",
        "alert needs both); IPR: the strength the matches read (intrinsic performance rating, 95%); loss in pawns",
        "per position; ROI = 50 + 5z. A screening number is a reason to look, not evidence by itself.",
    ]
    return "\n".join(lines) + "\n"


def _num(x: float | None, fmt: str = "{:+.0f}") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else fmt.format(x)


def _perf_text(perf: dict[str, Any]) -> str:
    if perf.get("elo") is None:
        return "—"
    return ("~" if perf.get("extrapolated") else "") + f"{perf['elo']:.0f}"


def _range_text(perf: dict[str, Any]) -> str:
    cr = perf.get("cr95")
    return "—" if not cr else f"{cr[0]:.0f}-{cr[1]:.0f}"


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
    lines += ["", f"{'player':<28} {'elo':>5} {'est.':>6} {'95% range':>11} {'pos':>4} {'field':>6}   "
              f"diagnostics: {'perf.':>6} {'moves':>5} {'gain':>7} {'p(eng)':>6} {'d(eng)':>6} {'perc.':>6} {'alg2':>6} "
              f"{'c̄ ± σ':>12}"]
    players = sorted(out["players"], key=lambda p: -((p.get("estimate") or {}).get("elo") or -1e9))
    calibrations = set()
    for p in players:
        c = p["c"]
        c_text = "—" if c is None else f"{c['mean']:.2f}±{c['sd']:.2f}"
        perf = p.get("performance") or {}
        est = p.get("estimate") or {}
        if perf.get("calibration"):
            calibrations.add(perf["calibration"])
        lines.append(
            f"{p['name'][:28]:<28} {_num(p['elo'], '{:d}'):>5} {_perf_text(est):>6} {_range_text(est):>11} "
            f"{est.get('positions', 0):>4} {_perf_text(p.get('field_estimate') or {}):>6}                "
            f"{_perf_text(perf):>6} {p['moves']:>5} {_num(p['mean_gain'], '{:+.1f}'):>7} "
            f"{_num(p['expected_score_vs_engine'], '{:.3f}'):>6} {_num(p['rating_diff_vs_engine']):>6} "
            f"{_num(p['perceived_elo'], '{:.0f}'):>6} {_num(perceived.get(p['name']), '{:.0f}'):>6} {c_text:>12}"
        )
    reasons = sorted({re.sub(r"^\d+ positions: | \(±\d+\)", "", e["reason"])  # one line per kind of reason
                      for p in players if (e := p.get("estimate") or {}).get("reason")})
    lines += [
        "",
        "est.: Elo from the quality of the moves (20 per-move features, the engine profile's quality model),",
        "      each game read against the opponent's moves and rating there (a quiet game flatters both sides);",
        "95% range: includes a player's spread from event to event and game to game (one game says little);",
        "pos: the moves it rests on (the first 8 of each side, forced moves and positions beyond ±3 left out);",
        "field: in this field (moves and results, the other players' ratings as prior: how the player does among them).",
    ] + [f"no est.: {r}" for r in reasons] + [
        "perf.: the E(c) performance map (calibration: " + ("; ".join(sorted(calibrations)) or "none")
        + "), ~ = outside the calibrated range.",
        "diagnostics (Ferreira 2012, not estimates of rating): gain: mean centipawns won per move against the",
        "engine (0 = engine-perfect); p(eng)/d(eng): expected score and Elo difference against the engine",
        "(Algorithm 3); perc.: perceived Elo r̄_e + d (Algorithm 4) and alg2 (Algorithm 2) rest on the sign of",
        "each gain only, and read far from perf. (hundreds of points) on real games; c̄ ± σ: apparent skill",
        "of the E(c) reference agent (higher = closer to the engine).",
    ]
    return "\n".join(lines) + "\n"
