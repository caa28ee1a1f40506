"""Calibration of an engine profile from rated games (``livemon calibrate``): the wiring and the fit.

The games go through the batch path of ``analyse`` (:func:`livemon.app.batch.analyse_games`: the same
engine pool and position cache, so a position already analysed under the profile is never searched
again), with two differences: ``[%eval]`` comments are ignored (the fit needs the engine's MultiPV
candidates), and positions are filtered as screening filters them (``[screening] book_moves``,
``eval_bound``; forced moves never count), since the c_r of a rating is what screening compares a
player's positions against. The fit (:meth:`Calibration.fit_decisions`), Algorithm 3's engine strength
and the performance map are stored with the profile in the store; :func:`calibrate` returns what the
command prints.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from livemon.errors import LivemonError

if TYPE_CHECKING:
    from livemon.app.batch import PlannedGame
    from livemon.config import Config, ScreeningConfig
    from livemon.io.store import Store
    from livemon.live.estimator import Estimator
    from livemon.rating.agent import Decision
    from livemon.rating.calibration import Calibration


class CalibrationFailed(LivemonError):
    """Nothing could be calibrated; the message says why (one line for the user)."""


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


async def fully_cached(planned: list[PlannedGame], cfg: Config, store: Store, report: Callable[[str], None]) -> list[PlannedGame]:
    """The games whose engine positions are all in the cache under the configured profile."""
    from livemon.io.engine import UciEngine, position_key

    engine = await UciEngine.open(cfg.engine)  # only to learn the profile's name (engine id + limit)
    profile = engine.profile.name
    await engine.close()
    keys = {position_key(g.boards[i]) for g in planned for i in g.engine_positions}
    cached = set(store.analyses.get_many(keys, profile))
    kept = [g for g in planned if all(position_key(g.boards[i]) in cached for i in g.engine_positions)]
    if len(kept) < len(planned):
        report(f"--cached-only: {len(planned) - len(kept)} of {len(planned)} games left out (not fully analysed under {profile})")
    return kept


def calibrate(pgn: list[str], cfg: Config, report: Callable[[str], None], *, cached_only: bool = False,
              bin_width: int = 100) -> dict[str, Any]:
    """Fit and store the calibration of the configured engine profile on the rated games of ``pgn``.

    Returns the fit as one JSON-ready dict (profile, games, exclusions, engine strength, the
    calibration, the performance map, the Elo bins); notes and warnings go to ``report``, one line
    each. Raises :class:`CalibrationFailed` when there is nothing to fit on or the fit fails.
    """
    from livemon.app.batch import COMMENTS_PROFILE, analyse_games, read_files
    from livemon.io.engine import EngineError
    from livemon.io.store import Store
    from livemon.rating.calibration import Calibration, ProfileCalibration, engine_strength_fit

    cfg.analysis.skip_moves = 0  # the screening filter below decides (book_moves)
    planned: list[PlannedGame] = []
    for game in read_files(pgn, report, use_comments=False):
        info = game.info
        if info.white_elo is None and info.black_elo is None:
            report(f"skipped {game.label}: no Elo tags")
            continue
        planned.append(game)
    if not planned:
        raise CalibrationFailed("no game with Elo tags to calibrate on")
    with Store(cfg.store.path) as store:
        if cached_only:
            try:
                planned = asyncio.run(fully_cached(planned, cfg, store, report))
            except EngineError as exc:
                raise CalibrationFailed(str(exc)) from None
            if not planned:
                raise CalibrationFailed("no game is fully analysed in the store under this profile")
        result = asyncio.run(analyse_games(planned, cfg, store, report))
        if result.profile == COMMENTS_PROFILE:
            raise CalibrationFailed("calibration needs the engine (none could be started)")
        moves, excluded = screened_moves(result.estimator, cfg.screening)
        players = by_player(moves)
        report(f"fitting c = a + b·Elo on {len(moves)} positions of {len(players)} rated players")
        try:
            cal = Calibration.fit_decisions(players.values(), profile=result.profile,
                                            z_min_positions=cfg.screening.min_positions)
        except ValueError as exc:
            raise CalibrationFailed(f"cannot calibrate: {exc}") from None
        cal = replace(cal, book_moves=cfg.screening.book_moves, eval_bound=cfg.screening.eval_bound)
        if not cal.b > 0:
            report("warning: the fitted slope b is not positive: c does not map back to Elo (no c-Elo will be shown)")
        if cal.n < 20 or cal.elo_max - cal.elo_min < 300:
            report(f"warning: {cal.n} players over {cal.elo_max - cal.elo_min:.0f} Elo: too few or too narrow for a reliable map")
        rated = [(float(p.elo), p.histogram) for p in result.estimator.rated_players() if p.elo is not None]
        strength = engine_strength_fit(rated)
        perf = performance_fit(result.estimator, result.profile, cfg.analysis.rating_pool, report)
        store.calibrations.put(ProfileCalibration(result.profile, None if strength is None else strength[0], cal, perf))
    return {
        "profile": result.profile,
        "store": cfg.store.path,
        "searches": result.searches,
        "games": len(planned),
        "positions_excluded": dict(excluded),
        "engine_strength": None if strength is None else {"value": strength[0], "se": strength[1], "players": strength[2]},
        "calibration": cal.to_dict(),
        "performance": None if perf is None else perf.to_dict(),
        "bins": elo_bins(players, cal, bin_width),
    }
