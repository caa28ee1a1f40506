"""``livemon calibrate PGN...``: fit r̄_e and the Elo ↔ c map of an engine profile from rated games.

The games go through the batch path of ``analyse`` (the same engine pool and
position cache: a position already analysed under the profile is never searched
again), with two differences: ``[%eval]`` comments are ignored (the fit needs the
engine's MultiPV candidates), and positions are filtered as screening filters
them (``[screening] book_moves``, ``eval_bound``; forced moves never count), since
the c_r of a rating is what screening compares a player's positions against.
The fit (:meth:`Calibration.fit_decisions`) is stored with the profile in the
store and printed as a table of Elo bins, or as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable

from typing import TYPE_CHECKING

from livemon.commands import add_engine_arguments, engine_config_from_args, say

if TYPE_CHECKING:  # imported where used: ``calibrate --help`` starts at once
    from livemon.app.batch import PlannedGame
    from livemon.config import Config, ScreeningConfig
    from livemon.io.store import Store
    from livemon.live.estimator import Estimator
    from livemon.rating.agent import Decision
    from livemon.rating.calibration import Calibration


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files of games between rated players (WhiteElo/BlackElo tags)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_engine_arguments(p)
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store: position cache, and where the calibration is stored")
    p.add_argument("--cached-only", action="store_true",
                   help="use only the games whose every position the store already holds under the profile (no search)")
    p.add_argument("--bin-width", type=int, default=100, metavar="ELO", help="width of the Elo bins of the table (default 100)")


@dataclass(frozen=True)
class RatedDecision:
    """One position of a rated player that counts for calibration and screening."""

    player: str
    elo: int
    game_id: str
    ply: int
    decision: Decision


def screened_moves(estimator: Estimator, cfg: ScreeningConfig) -> tuple[list[RatedDecision], Counter[str]]:
    """Every ply of a rated player that screening would use, in game order; and the exclusion counts.

    The exclusions are the screener's own (:meth:`Screener.exclusion`: forced,
    no MultiPV, book moves or Polyglot book, decided), so that c_r is fitted on
    the positions screening will score.
    """
    from livemon.io.book import open_book
    from livemon.live.screener import Screener

    exclusion = Screener(cfg, None, open_book(cfg.book)).exclusion
    kept: list[RatedDecision] = []
    excluded: Counter[str] = Counter()
    for game in sorted(estimator.games.values(), key=lambda g: g.seq):
        for ply in sorted(game.plies):
            player = estimator.mover(game.info.game_id, ply)
            if player.elo is None:
                continue
            sp = game.plies[ply]
            why = exclusion(sp)
            if why is not None:
                excluded[why] += 1
                continue
            assert sp.decision is not None  # noqa: S101 - invariant: excluded as "no_multipv" otherwise
            kept.append(RatedDecision(player.name, player.elo, game.info.game_id, ply, sp.decision))
    return kept, excluded


def by_player(moves: list[RatedDecision]) -> dict[str, tuple[int, list[Decision]]]:
    """(Elo, decisions) per player, in the order of ``moves``."""
    out: dict[str, tuple[int, list[Decision]]] = {}
    for m in moves:
        out.setdefault(m.player, (m.elo, []))[1].append(m.decision)
    return out


def elo_bins(players: dict[str, tuple[int, list[Decision]]], cal: Calibration, width: int) -> list[dict[str, Any]]:
    """Per Elo bin: players, positions, pooled c (one c for all its moves) ± se, and the fitted c_r at its mean Elo."""
    from livemon.rating.calibration import pooled_c

    bins: dict[int, list[tuple[int, list[Decision]]]] = {}
    for elo, decisions in players.values():
        bins.setdefault(int(elo // width) * width, []).append((elo, decisions))
    rows = []
    for lo in sorted(bins):
        members = bins[lo]
        decisions = [d for _, ds in members for d in ds]
        c, se = pooled_c(decisions)
        mean_elo = sum(e * len(ds) for e, ds in members) / len(decisions)  # position-weighted, as the pooled c
        band = cal.c_for_rating_se(mean_elo)
        rows.append({"elo_lo": lo, "elo_hi": lo + width - 1, "players": len(members), "positions": len(decisions),
                     "pooled_c": c, "pooled_c_se": se, "mean_elo": mean_elo, "c_r": cal.c_for_rating(mean_elo),
                     "c_r_se": band})
    return rows


def performance_fit(estimator: Estimator, profile: str, pool: str, report: Callable[[str], None]) -> Calibration | None:
    """The performance map of the profile, on every non-forced move of the rated players (None if it cannot be fitted)."""
    from livemon.rating.performance import fit_performance_calibration

    moves = []
    for game in estimator.games.values():
        for ply, sp in game.plies.items():
            player = estimator.mover(game.info.game_id, ply)
            if player.elo is not None and sp.decision is not None and not sp.forced:
                moves.append((float(player.elo), (player.name, game.info.event), game.info.game_id, sp.decision))
    try:
        return fit_performance_calibration(moves, profile, pool)
    except ValueError as exc:
        report(f"no performance calibration: {exc}")
        return None


def run(args: argparse.Namespace) -> int:
    from livemon.app.batch import COMMENTS_PROFILE, analyse_games, read_files
    from livemon.io.engine import EngineError
    from livemon.io.store import Store
    from livemon.live.pgn import game_info
    from livemon.rating.calibration import Calibration, ProfileCalibration, engine_strength_fit

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    if args.bin_width < 1:
        say(f"--bin-width: must be at least 1, got {args.bin_width}")
        return 2
    cfg.analysis.skip_moves = 0  # the screening filter below decides (book_moves)
    planned: list[PlannedGame] = []
    for game in read_files(args.pgn, say, use_comments=False):
        info = game_info(game.game.headers, game.game_id)
        if info.white_elo is None and info.black_elo is None:
            say(f"skipped {game.label}: no Elo tags")
            continue
        planned.append(game)
    if not planned:
        say("no game with Elo tags to calibrate on")
        return 1
    with Store(cfg.store.path) as store:
        if args.cached_only:
            try:
                planned = asyncio.run(fully_cached(planned, cfg, store, say))
            except EngineError as exc:
                say(str(exc))
                return 1
            if not planned:
                say("no game is fully analysed in the store under this profile")
                return 1
        result = asyncio.run(analyse_games(planned, cfg, store, say))
        if result.profile == COMMENTS_PROFILE:
            say("calibration needs the engine (none could be started)")
            return 1
        moves, excluded = screened_moves(result.estimator, cfg.screening)
        players = by_player(moves)
        say(f"fitting c = a + b·Elo on {len(moves)} positions of {len(players)} rated players")
        try:
            cal = Calibration.fit_decisions(players.values(), profile=result.profile,
                                            z_min_positions=cfg.screening.min_positions)
        except ValueError as exc:
            say(f"cannot calibrate: {exc}")
            return 1
        cal = replace(cal, book_moves=cfg.screening.book_moves, eval_bound=cfg.screening.eval_bound)
        if not cal.b > 0:
            say("warning: the fitted slope b is not positive: c does not map back to Elo (no c-Elo will be shown)")
        if cal.n < 20 or cal.elo_max - cal.elo_min < 300:
            say(f"warning: {cal.n} players over {cal.elo_max - cal.elo_min:.0f} Elo: too few or too narrow for a reliable map")
        rated = [(float(p.elo), p.histogram) for p in result.estimator.rated_players() if p.elo is not None]
        strength = engine_strength_fit(rated)
        perf = performance_fit(result.estimator, result.profile, cfg.analysis.rating_pool, say)
        stored = ProfileCalibration(result.profile, None if strength is None else strength[0], cal, perf)
        store.put_calibration(stored)
    out = {
        "profile": result.profile,
        "store": cfg.store.path,
        "searches": result.searches,
        "games": len(planned),
        "positions_excluded": dict(excluded),
        "engine_strength": None if strength is None else {"value": strength[0], "se": strength[1], "players": strength[2]},
        "calibration": cal.to_dict(),
        "performance": None if perf is None else perf.to_dict(),
        "bins": elo_bins(players, cal, args.bin_width),
    }
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(out))
    return 0


async def fully_cached(planned: list[PlannedGame], cfg: Config, store: Store, report: Callable[[str], None]) -> list[PlannedGame]:
    """The games whose engine positions are all in the cache under the configured profile."""
    from livemon.io.engine import UciEngine, position_key

    engine = await UciEngine.open(cfg.engine)  # only to learn the profile's name (engine id + limit)
    profile = engine.profile.name
    await engine.close()
    keys = {position_key(g.boards[i]) for g in planned for i in g.engine_positions}
    cached = set(store.get_analyses(keys, profile))
    kept = [g for g in planned if all(position_key(g.boards[i]) in cached for i in g.engine_positions)]
    if len(kept) < len(planned):
        report(f"--cached-only: {len(planned) - len(kept)} of {len(planned)} games left out (not fully analysed under {profile})")
    return kept


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
        "pooled c: the one c that best explains all moves of the bin; c_r: the fitted line at the bin's mean Elo",
        "(a bin's pooled c lies between its players' c, so it need not sit on the line when τ > 0).",
    ]
    return "\n".join(lines) + "\n"
