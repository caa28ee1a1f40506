"""``livemon analyse PGN...``: rate the players of finished games (the analysis is :mod:`livemon.app.analyse`'s;
this parses the arguments and prints the tables or the JSON)."""

from __future__ import annotations

import argparse
import math
import re
import sys
import textwrap
from typing import Any

from livemon.commands import add_engine_arguments, engine_config_from_args, say, write_result
from livemon.config import ConfigError
from livemon.rating.timecontrol import mark


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files (several games each is fine)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout (every figure, diagnostics included)")
    p.add_argument("--diagnostics", action="store_true",
                   help="also the research figures of the papers livemon rests on (E(c) performance, perceived "
                        "ratings, apparent skill c̄, Algorithms 1-4), each explained")
    p.add_argument("--engine-strength", type=float, metavar="R",
                   help="the engine profile's own strength in Elo (r̄_e; default: from its calibration)")
    add_engine_arguments(p)
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store holding the position cache")
    p.add_argument("--all-pairs", action="store_true",
                   help="with --diagnostics: the perceived ratings of the event (Algorithm 2) from every pair of "
                        "players, not only the pairs that met")
    p.add_argument("--screen", action="store_true",
                   help="fair-play screening table per player per event (for arbiters; needs a calibration of the profile)")
    p.add_argument("--one-event", action="store_true",
                   help="with --screen: screen all games as one event (when Event tags name single games)")
    p.add_argument("--junior", action="append", metavar="NAME", default=[],
                   help="with --screen: a player known to be a junior or a fast improver (as named in the games, or "
                        "their FIDE id where the games carry FideId tags; repeat for more): the tag is read as a "
                        "K = 40 rating that may trail the player")
    p.add_argument("--time-control", choices=("auto", "classical", "rapid", "blitz"), default=None,
                   help="with --screen: the play the players are compared with (default: screening.time_control, "
                        "auto: by the games' TimeControl tags, else classical)")


def run(args: argparse.Namespace) -> int:
    from livemon.app.analyse import NothingToAnalyse, analyse

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    if args.one_event:
        cfg.screening.scope = "all"
    if args.time_control is not None:
        cfg.screening.time_control = args.time_control
    if args.junior:
        cfg.screening.juniors = [*cfg.screening.juniors, *args.junior]
        try:
            cfg.screening.validate()  # the names as the config's are (the config itself was validated on load)
        except ConfigError as exc:
            print(f"livemon: --junior: {exc}", file=sys.stderr)
            return 2
    try:
        out = analyse(args.pgn, cfg, say, screen=args.screen, engine_strength=args.engine_strength,
                      all_pairs=args.all_pairs, display=not args.json)
    except NothingToAnalyse as exc:
        say(str(exc))
        return 1
    if not out["games"]:
        return 1
    def text() -> str:
        table = render_table(out, args.diagnostics, cfg.display.max_interval_width)
        return table + (render_screening(out["screening"]) if "screening" in out else "")

    write_result(out, args.json, text)
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
        f"{'player':<24} {'event':<18} {'rating':>9} {'strength':>10} {'opp':>5} {'c_r':>5} {'pos':>4} {'excl':>4} "
        f"{'MM obs/exp':>11} {'z_match':>7} {'z_tag':>6} {'IPR (95%)':>16} {'loss obs/exp':>12} {'z_loss':>6} "
        f"{'ROI':>5}  level",
    ]
    for r in s["players"]:
        rating = "—" if r["rating"] is None else f"{r['rating']:.0f}{'t' if r['rating_source'] == 'ttt' else ''}"
        if r.get("rating_scale") == "as read" and r["rating"] is not None:
            rating += "?"
        strength = "—" if r.get("strength") is None else f"{r['strength']:.0f}±{r['strength_sd']:.0f}"
        if r.get("strength") is not None and abs(r.get("field_lag") or 0.0) >= 1.0:
            strength += "^"  # the event's field lag moved it
        if r.get("strength") is not None and (r.get("k40") or 0.0) >= 1.0:
            strength += "j"  # read as a junior's tag: a junior event, or a name or FIDE id in screening.juniors
        c_r = "—" if r["c_r"] is None else f"{r['c_r']:.2f}"
        if r["c_r"] is not None:
            c_r += mark(r.get("time_control", "classical"))  # r: at rapid play; b: blitz, read against rapid play
        opp = "—" if r.get("opponents") is None else f"{r['opponents']:.0f}"
        mm = f"{r['matches_observed']}/{r['matches_expected']:.1f}"
        loss = f"{r['loss_observed']:.3f}/{r['loss_expected']:.3f}"
        roi = "—" if r["roi"] is None else f"{r['roi']:.1f}"
        lines.append(
            f"{r['player'][:24]:<24} {r['event'][:18]:<18} {rating:>9} {strength:>10} {opp:>5} {c_r:>5} {r['positions']:>4} "
            f"{sum(r['excluded'].values()):>4} {mm:>11} {_z(r['z_match']):>7} {_z(r.get('z_tag')):>6} "
            f"{_ipr(r):>16} {loss:>12} {_z(r['z_loss']):>6} {roi:>5}  {r['level'] or ''}"
        )
    chance = s.get("chance")
    notes = sorted({r["time_control_note"] for r in s["players"] if r.get("time_control_note")})
    lines += [
        "",
        *notes,
        *([chance["line"] + f" (notice z >= {s['notice_z']:g}, alert z >= {s['alert_z']:g})"] if chance else []),
        "rating: tag on today's FIDE scale (? where the game had no date: read as today's), or TTT posterior mean (t);",
        "strength: today's strength from the rating and the event's results, +- its sd (^: with the field lag, the",
        "points the event's other games put its likely K = 40 players above their tags; j: the tag read as a junior's,",
        "K = 40: a junior event, or named in screening.juniors); opp: the mean rating of the player's opponents",
        "(today's scale); c_r: E(c) skill expected at that strength against them, in the event's era (lower by the",
        "line's era term for an event played before FIDE's 1 March 2024 scale change) and time control (r: rapid, b:",
        "blitz read against rapid play: screening.time_control, else the TimeControl tags, else classical); excl:",
        "positions left out (forced, book, decided, no MultiPV); MM: top-move matches; z_match from the mid-p",
        "tail of the matches' exact distribution at that strength, widened by its sd; z_tag: against the rating alone (an",
        "alert needs both); IPR: the strength the matches read (intrinsic performance rating, 95%); loss in pawns",
        "per position; ROI = 50 + 5z. A screening number is a reason to look, not evidence by itself.",
    ]
    if (s.get("line") or {}).get("shipped"):  # what the shipped line was fitted on, and how today's events read
        from livemon.rating.screening import era_line
        from livemon.rating.screening_params import BY_YEAR, FIT_EVENTS

        era = era_line(BY_YEAR, FIT_EVENTS, s["notice_z"])
        lines += textwrap.wrap(era[:-1] + " (docs/fairplay.md, the era).", 115) if era else []
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


def _classes(c: dict[str, int] | None) -> str:
    return "—" if not c else f"{c['inaccuracy']}/{c['mistake']}/{c['blunder']}"


def _score(r: dict[str, Any] | None) -> str:
    return "—" if not r or not r.get("games") else f"{r['score']:g}/{r['games']}"


def _shown(block: dict[str, Any] | None, display: dict[str, Any] | None) -> tuple[str, str]:
    """The estimate and its range as every screen shows them (the display rule: ``estimate_display``)."""
    from livemon.faces.tui.format import shown_estimate

    return shown_estimate(block or {}, display if display is not None else {"show": False, "more_games": None})


def render_table(out: dict[str, Any], diagnostics: bool = False, max_width: float = 1000.0) -> str:
    """The human-readable report: games (accuracy, classes) and players (estimate, moves only, score, TPR,
    accuracy, classes), each estimate as the display rule allows; with ``diagnostics``, the papers' figures
    (Algorithms 1-4, the E(c) performance and c̄) after them, each glossed."""
    eng = out["engine"]
    lines = [f"engine profile: {eng['profile']}   searches run: {eng['analyses']}", "",
             f"{'game':<48} {'result':>7} {'plies':>5} {'accuracy W/B':>13}"]
    for g in out["games"]:
        name = f"{g['white']} - {g['black']}"[:48]
        acc = g.get("accuracy") or {}
        accuracy = f"{_num(acc.get('white'), '{:.1f}')}/{_num(acc.get('black'), '{:.1f}')}"
        lines.append(f"{name:<48} {g['result']:>7} {g['plies']:>5} {accuracy:>13}")
    players = sorted(out["players"], key=lambda p: (-((p.get("results") or {}).get("score") or 0),
                                                    -((p.get("estimate") or {}).get("elo") or -1e9), p["name"]))
    lines += ["", f"{'player':<28} {'rating':>6} {'estimate':>8} {'95% range':>13} {'moves only':>13} "
              f"{'score':>6} {'TPR':>5} {'accuracy':>8} {'?!/?/??':>8}"]
    for p in players:
        shown, rng = _shown(p.get("estimate"), p.get("display"))
        alone = p.get("moves_estimate") or {}
        moves_only, _ = _shown(alone, alone.get("display"))
        r = p.get("results") or {}
        lines.append(f"{p['name'][:28]:<28} {_num(p['elo'], '{:d}'):>6} {shown:>8} {rng:>13} {moves_only:>13} "
                     f"{_score(r):>6} {_num(r.get('tpr'), '{:.0f}'):>5} {_num(p.get('accuracy'), '{:.1f}'):>8} "
                     f"{_classes(p.get('classes')):>8}")
    reasons = sorted({re.sub(r"^\d+ positions: | \(±\d+\)", "", e["reason"])  # one line per kind of reason
                      for p in players if (e := p.get("moves_estimate") or p.get("estimate") or {}).get("reason")})
    lines += [
        "",
        "estimate: how strong the player is playing in this event: the quality of the moves and the results, with the",
        "  other players' ratings of the event as the starting point (the moves alone where fewer than two other",
        "  players are rated); 95% range: where the player's level lies, 19 times in 20.",
        f"  Shown once the range is at most {max_width:.0f} Elo wide and inside the ratings the model was fitted on",
        "  (an open end reads e.g. ≤1409 or 2865+); until then how many more games it takes, or — (one game says little).",
        "moves only: the rating of players who make moves of this quality, read from 20 features of each move and",
        "  against the opponent's moves and rating, nothing else: the figure to compare players of different events.",
        "score and TPR from the results (TPR: FIDE's tournament performance rating); accuracy: lichess's accuracy",
        "  (0-100, the mean of the game accuracies); ?!/?/??: inaccuracies, mistakes, blunders (lichess's thresholds).",
    ] + [f"no estimate: {r}" for r in reasons]
    if diagnostics:
        lines += render_diagnostics(out, players)
    else:
        lines.append("--diagnostics: the research figures of the papers livemon rests on (--json keeps everything).")
    return "\n".join(lines) + "\n"


def render_diagnostics(out: dict[str, Any], players: list[dict[str, Any]]) -> list[str]:
    """The papers' figures of ``analyse --diagnostics``, each glossed in plain words."""
    eng = out["engine"]
    lines = ["", "diagnostics (research figures, not ratings to quote on air)",
             f"engine strength r̄_e: {_num(eng['strength'], '{:.0f}')} ({eng['strength_source']})", "",
             f"{'game':<48} {'p(W)':>6} {'d(W-B)':>7}"]
    for g in out["games"]:
        name = f"{g['white']} - {g['black']}"[:48]
        lines.append(f"{name:<48} {_num(g['white_expected_score'], '{:.3f}'):>6} {_num(g['white_rating_diff']):>7}")
    perceived = out["event"]["perceived_ratings"]
    lines += ["", f"{'player':<28} {'perf.':>6} {'moves':>5} {'gain':>7} {'p(eng)':>6} {'d(eng)':>6} {'perc.':>6} "
              f"{'alg2':>6} {'c̄ ± σ':>12}"]
    calibrations = set()
    for p in players:
        c_text = "—" if p["c_mean"] is None else f"{p['c_mean']:.2f}±{p['c_sd']:.2f}"
        perf = p.get("performance") or {}
        if perf.get("calibration"):
            calibrations.add(perf["calibration"])
        lines.append(
            f"{p['name'][:28]:<28} {_perf_text(perf):>6} {p['moves']:>5} {_num(p['mean_gain'], '{:+.1f}'):>7} "
            f"{_num(p['expected_score_vs_engine'], '{:.3f}'):>6} {_num(p['rating_diff_vs_engine']):>6} "
            f"{_num(p['perceived_elo'], '{:.0f}'):>6} {_num(perceived.get(p['name']), '{:.0f}'):>6} {c_text:>12}")
    lines += [
        "",
        "r̄_e: the engine profile's own strength on the Elo scale (from its calibration, or --engine-strength).",
        "p(W), d(W-B): White's expected score and the rating difference between the two sides, as if a move of",
        "  each were drawn at random and the one that gained more won (Ferreira 2012, Algorithm 1).",
        "perf.: the rating of the E(c) model's player who would choose these moves (E(c): a model of how often a",
        "  player of apparent skill c picks each of the engine's candidate moves; calibration: "
        + ("; ".join(sorted(calibrations)) or "none") + "); ~ = outside the calibrated range.",
        "gain: centipawns won per move against the engine's best move (0 = the engine's own choice every time).",
        "p(eng), d(eng): expected score and rating difference against the engine, as if each move were a game",
        "  against it (Algorithm 3); perc.: the perceived rating, r̄_e + d(eng) (Algorithm 4); alg2: the same from",
        "  comparing the event's players with each other (Algorithm 2). These rest on the sign of each gain only",
        "  and read far from perf. (hundreds of points) on real games.",
        "c̄ ± σ: the player's apparent skill c in the E(c) model, mean ± standard deviation (higher = closer to",
        "  the engine's choices).",
    ]
    return lines
