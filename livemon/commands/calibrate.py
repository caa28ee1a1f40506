"""``livemon calibrate PGN...``: fit an engine profile's models from rated games: its strength in Elo (r̄_e) and the
Elo ↔ c map (from a rating to the apparent skill c of the E(c) model, the model of how often a player picks each of
the engine's candidate moves).

The arguments are read here and the fit printed as a table of Elo bins, or as JSON; the games, the
fit and where it is stored are :mod:`livemon.app.calibrate`'s.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from livemon.commands import add_engine_arguments, engine_config_from_args, say, write_result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files of games between rated players (WhiteElo/BlackElo tags)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_engine_arguments(p)
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store: position cache, and where the calibration is stored")
    p.add_argument("--cached-only", action="store_true",
                   help="use only the games whose every position the store already holds under the profile (no search)")
    p.add_argument("--bin-width", type=int, default=100, metavar="ELO", help="width of the Elo bins of the table (default 100)")


def run(args: argparse.Namespace) -> int:
    from livemon.app.calibrate import CalibrationFailed, calibrate

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    if args.bin_width < 1:
        say(f"--bin-width: must be at least 1, got {args.bin_width}")
        return 2
    try:
        out = calibrate(args.pgn, cfg, say, cached_only=args.cached_only, bin_width=args.bin_width)
    except CalibrationFailed as exc:
        say(str(exc))
        return 1
    write_result(out, args.json, lambda: render_table(out))
    return 0


def _pm(x: float, se: float | None, fmt: str) -> str:
    return fmt.format(x) + ("" if se is None or not math.isfinite(se) else " ± " + fmt.format(se))


def render_table(out: dict[str, Any]) -> str:
    """The fit as text: the numbers, then observed (pooled) c against the fitted line per Elo bin."""
    from livemon.rating.calibration import Calibration

    cal = Calibration.from_dict(out["calibration"])
    va, _, vb = cal.cov_ab or (math.nan, math.nan, math.nan)
    es = out["engine_strength"]
    excl = out["positions_excluded"]
    lines = [
        f"engine profile: {out['profile']}   searches run: {out['searches']}",
        f"games: {out['games']}   rated players: {cal.n}   positions: {cal.positions} "
        f"(left out: {excl.get('book', 0)} book, {excl.get('decided', 0)} decided, {excl.get('forced', 0)} forced)",
        f"Elo range: {cal.elo_min:.0f}–{cal.elo_max:.0f}",
        "engine strength r̄_e: " + ("—" if es is None else f"{_pm(es['value'], es['se'], '{:.0f}')} (algorithm 3, {es['players']} players)"),
        f"c_r = a + b·Elo: a = {_pm(cal.a, math.sqrt(va), '{:.3f}')}, b = {_pm(cal.b * 1000, math.sqrt(vb) * 1000, '{:.4f}')} per 1000 Elo"
        f"   (maximum likelihood, log L = {cal.log_likelihood:.1f})",
        f"spread of c between players of one rating: τ = {_pm(cal.tau or 0.0, cal.tau_se, '{:.3f}')}"
        f"   (share of the variance of c explained by Elo: {cal.r2:.2f})",
        "z_scale (sd of screening z at c_r): "
        + ("— (fewer than 10 players with enough positions)" if cal.z_scale is None else
           f"match {cal.z_scale:.3f}, loss {cal.z_scale_loss or math.nan:.3f} over {cal.z_players} players"),
        f"stored in {out['store']}",
        "",
        f"{'Elo bin':>11} {'players':>7} {'positions':>9} {'pooled c ± se':>15} {'mean Elo':>8} {'c_r ± 95% band':>16}  "
        "plot (| c_r, * pooled c)",
    ]
    rows = out["bins"]
    cs = [r["pooled_c"] for r in rows] + [r["c_r"] for r in rows]
    lo, hi = (min(cs), max(cs)) if cs else (0.0, 1.0)
    span = hi - lo or 1.0
    width = 30
    for r in rows:
        band = r["c_r_se"]
        plot = [" "] * (width + 1)
        plot[round((r["c_r"] - lo) / span * width)] = "|"
        plot[round((r["pooled_c"] - lo) / span * width)] = "*"
        lines.append(
            f"{r['elo_lo']:>5}–{r['elo_hi']:<5} {r['players']:>7} {r['positions']:>9} "
            f"{r['pooled_c']:>7.3f} ± {r['pooled_c_se']:.3f} {r['mean_elo']:>8.0f} "
            f"{r['c_r']:>7.3f} ± {1.96 * (band or 0.0):.3f}  {''.join(plot)}"
        )
    lines += [
        "",
        "c: a player's apparent skill in the E(c) model, the model of how often a player picks each of the engine's",
        "candidate moves (higher = closer to the engine's choices); the Elo ↔ c map is the line c_r = a + b·Elo.",
        "pooled c: the one c that best explains all moves of the bin; c_r: the fitted line at the bin's mean Elo",
        "(a bin's pooled c lies between its players' c, so it need not sit on the line when τ > 0).",
        "r̄_e: the engine profile's own strength on the Elo scale (algorithm 3: each rated player's rating minus",
        "how far below the engine their moves put them, averaged). z_scale: how wide the screening z's spread on",
        "honest players of these games (1 = as the model says); the screening divides by it.",
    ]
    return "\n".join(lines) + "\n"
