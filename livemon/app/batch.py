"""Batch analysis of finished games: the engine of ``livemon analyse``.

Reads every game, scores each from its ``[%eval]`` comments when all its moves
carry one, otherwise from the engine through the position cache (one search per
position, ever), and feeds the scored plies to an :class:`Estimator`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import chess
import chess.pgn

from livemon.live.analysis import needs_search, position_value, scored_ply
from livemon.config import Config
from livemon.io.engine import EngineError, EngineProfile, PositionAnalysis, UciEngine, position_key
from livemon.live.estimator import Estimator
from livemon.live.pgn import BadGame, GoodGame, game_info, parse_result, read_games
from livemon.progress import Progress
from livemon.rating.evaluation import score_cp
from livemon.io.store import Store

log = logging.getLogger(__name__)

COMMENTS_PROFILE = "[%eval] comments"


@dataclass
class PlannedGame:
    """A game read from a file, with its positions and how it will be scored."""

    game_id: str
    game: chess.pgn.Game
    label: str
    boards: list[chess.Board]  # position before ply 1 .. after the last ply
    moves: list[chess.Move]
    comment_evals: list[int | None] | None  # per position, when every move carries [%eval]

    @property
    def engine_positions(self) -> list[int]:
        """Indices of the positions this game needs from the engine or cache."""
        if self.comment_evals is None:
            return [i for i, b in enumerate(self.boards) if needs_search(b)]
        if self.comment_evals[0] is None and needs_search(self.boards[0]):
            return [0]
        return []


@dataclass
class BatchResult:
    estimator: Estimator
    profile: str
    searches: int
    notes: list[str] = field(default_factory=list)


def plan_game(parsed: GoodGame, game_id: str, use_comments: bool = True) -> PlannedGame:
    """A game's positions; ``use_comments`` False ignores [%eval] (calibration needs MultiPV)."""
    game = parsed.game
    board = game.board()
    boards, moves = [board.copy(stack=False)], []
    evals: list[int | None] = [None if game.eval() is None else score_cp(game.eval().white())]
    for node in game.mainline():
        moves.append(node.move)
        board.push(node.move)
        boards.append(board.copy(stack=False))
        ev = node.eval()
        evals.append(None if ev is None else score_cp(ev.white()))
    all_commented = use_comments and bool(moves) and all(e is not None or not needs_search(b) for e, b in zip(evals[1:], boards[1:]))
    return PlannedGame(game_id, game, parsed.label, boards, moves, evals if all_commented else None)


def read_files(paths: list[str], report: Callable[[str], None], use_comments: bool = True) -> list[PlannedGame]:
    """Every good game of the files; one line to ``report`` per bad game or file."""
    planned: list[PlannedGame] = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            report(f"{path}: cannot read ({exc.strerror})")
            continue
        source = os.path.basename(path)
        unseparated = 0  # chess.com exports: one line per file, not one per game
        for parsed in read_games(text, source):
            if isinstance(parsed, BadGame):
                report(f"skipped {parsed.error}")
                continue
            for warning in parsed.warnings:
                if "not separated from the previous game" in warning:
                    unseparated += 1
                else:
                    report(warning)
            if parsed.game.end() is parsed.game:
                report(f"skipped {parsed.label}: no moves")
                continue
            planned.append(plan_game(parsed, f"{source}#{parsed.index}", use_comments))
        if unseparated:
            report(f"{source}: {unseparated} games not separated from the previous one by a blank line; read anyway")
    return planned


async def search_missing(
    boards: dict[str, chess.Board], engines: list[UciEngine], store: Store, profile: EngineProfile
) -> int:
    """Analyse every position of ``boards`` with the engines, storing each at once."""
    queue: asyncio.Queue[tuple[str, chess.Board]] = asyncio.Queue()
    for item in boards.items():
        queue.put_nowait(item)
    with Progress(len(boards), "analysing positions") as bar:

        async def work(engine: UciEngine) -> None:
            while not queue.empty():
                key, board = queue.get_nowait()
                analysis = await engine.analyse(board, profile)
                store.put_analysis(key, profile.name, analysis)
                bar.advance()

        await asyncio.gather(*(work(e) for e in engines))
    return len(boards)


async def analyse_games(
    planned: list[PlannedGame], cfg: Config, store: Store, report: Callable[[str], None]
) -> BatchResult:
    """Score every planned game and feed an Estimator (engine opened only if needed)."""
    estimator = Estimator(cfg.analysis.skip_moves, cfg.analysis.c_min, cfg.analysis.c_max)
    wanted = {position_key(g.boards[i]): g.boards[i] for g in planned for i in g.engine_positions}
    engines: list[UciEngine] = []
    profile: EngineProfile | None = None
    analyses: dict[str, PositionAnalysis] = {}
    searches = 0
    notes: list[str] = []
    if wanted:
        try:
            engines.append(await UciEngine.open(cfg.engine))
        except EngineError as exc:
            report(str(exc))
        if engines:
            profile = engines[0].profile
            analyses = store.get_analyses(wanted, profile.name)
            missing = {k: b for k, b in wanted.items() if k not in analyses}
            try:
                for _ in range(min(cfg.engine.processes, len(missing)) - 1):
                    engines.append(await UciEngine.open(cfg.engine))
                searches = await search_missing(missing, engines, store, profile)
            finally:
                await asyncio.gather(*(e.close() for e in engines))
            analyses.update(store.get_analyses(missing, profile.name))
    for game in planned:
        if game.comment_evals is None and profile is None:
            report(f"skipped {game.label}: no [%eval] comments and no engine")
            continue
        info = game_info(game.game.headers, game.game_id)
        estimator.add_game(info)
        first_unscored = False
        for ply, move in enumerate(game.moves, start=1):
            before_board, after_board = game.boards[ply - 1], game.boards[ply]
            a_before = analyses.get(position_key(before_board))
            a_after = analyses.get(position_key(after_board))
            if game.comment_evals is None:
                before, after = position_value(before_board, a_before), position_value(after_board, a_after)
                decision_source = a_before
            else:
                before = game.comment_evals[ply - 1] if ply > 1 else game.comment_evals[0]
                if ply == 1 and before is None:
                    before = position_value(before_board, a_before)
                    first_unscored = before is None
                after = position_value(after_board, None)
                if after is None:
                    after = game.comment_evals[ply]
                decision_source = None  # comments carry no MultiPV: no E(c) evidence
            assert after is not None  # noqa: S101 - invariant: a comment eval or an analysis was found above
            estimator.add_ply(scored_ply(game.game_id, ply, before_board, move, before, after, decision_source))
        if first_unscored:
            notes.append(f"{game.label}: first move not scored (no [%eval] before it and no engine)")
        estimator.set_result(game.game_id, parse_result(game.game.headers.get("Result")) or "*")
    return BatchResult(estimator, profile.name if profile else COMMENTS_PROFILE, searches, notes)


def engine_strength_for(
    result: BatchResult, store: Store, given: float | None
) -> tuple[float | None, str]:
    """r̄_e and where it came from: the flag, the stored calibration, Algorithm 3, or none."""
    if given is not None:
        return given, "given"
    stored = store.get_engine_strength(result.profile)
    if stored is not None:
        return stored, "calibration"
    estimate = result.estimator.engine_strength()
    if estimate is not None:
        return estimate, "algorithm 3"
    return None, "none"


def batch_report(result: BatchResult, strength: float | None, source: str, all_pairs: bool) -> dict[str, Any]:
    out = {"engine": {"profile": result.profile, "strength": strength, "strength_source": source, "analyses": result.searches}}
    out.update(result.estimator.report(strength, all_pairs))
    out["notes"] = result.notes
    return out
