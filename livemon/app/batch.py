"""Batch analysis of finished games: the engine of ``livemon analyse`` and ``calibrate``.

Reads every game and hands it, as the messages a feed would send, to the
monitor's own :class:`~livemon.live.core.LiveCore`; each game is scored from
its ``[%eval]`` comments when all its moves carry one, otherwise from the
engine: the core's analysis requests go to an :class:`EnginePool` (the
position cache first: one search per position, ever; one pinned profile).
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

from livemon.config import Config
from livemon.io.engine import EngineError
from livemon.io.pool import EnginePool
from livemon.io.store import Store
from livemon.live.analysis import needs_search
from livemon.live.core import LiveCore, engine_strength
from livemon.live.effects import Analyse, Log
from livemon.live.estimator import Estimator
from livemon.live.messages import GameResult, Message, MoveEvent
from livemon.live.pgn import BadGame, GoodGame, game_info, parse_result, read_games
from livemon.progress import Progress
from livemon.rating.evaluation import score_cp

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


def game_messages(game: PlannedGame) -> list[Message]:
    """A finished game as the messages a feed would send: its tags, its moves, its result.

    A move carries its ``[%eval]`` only when every move of the game has one
    (else the engine values every position, and the E(c) decisions need its
    MultiPV anyway).
    """
    info = game_info(game.game.headers, game.game_id)
    out: list[Message] = [info]
    for ply, move in enumerate(game.moves, start=1):
        board = game.boards[ply - 1]
        comment = game.comment_evals[ply] if game.comment_evals is not None else None
        out.append(MoveEvent(game.game_id, ply, move.uci(), board.san(move), board.fen(), eval_cp=comment))
    out.append(GameResult(game.game_id, parse_result(game.game.headers.get("Result")) or "*", len(game.moves)))
    return out


async def analyse_games(
    planned: list[PlannedGame], cfg: Config, store: Store, report: Callable[[str], None]
) -> BatchResult:
    """Feed every planned game to a :class:`LiveCore` (the monitor's own) and answer its analysis
    requests with an :class:`EnginePool` under the one configured profile (opened only if needed)."""
    pool: EnginePool | None = None
    if any(g.engine_positions for g in planned):
        pool = EnginePool(cfg.engine, store, quick=False)
        try:
            await pool.start()
        except EngineError as exc:
            report(str(exc))
            pool = None
    try:
        profile = pool.base_profile.name if pool is not None else COMMENTS_PROFILE
        a = cfg.analysis
        core = LiveCore.for_analysis(a.skip_moves, a.c_min, a.c_max, profile=profile, coalesce=True)  # estimates read at the end
        requests: list[Analyse] = []
        notes: list[str] = []
        for game in planned:
            if game.comment_evals is None and pool is None:
                report(f"skipped {game.label}: no [%eval] comments and no engine")
                continue
            if pool is None and needs_search(game.boards[0]):
                notes.append(f"{game.label}: first move not scored (no [%eval] before it and no engine)")
            for msg in game_messages(game):
                for effect in core.handle(msg):
                    if isinstance(effect, Analyse):
                        requests.append(effect)
                    elif isinstance(effect, Log):
                        report(effect.text)
        if pool is None:
            for r in requests:  # the start positions of commented games: nothing to value them with
                core.analysed(r, None, error="no engine")
            return BatchResult(core.estimator, profile, 0, notes)
        await answer_all(core, pool, requests, report)
        return BatchResult(core.estimator, profile, pool.counters.searches, notes)
    finally:
        if pool is not None:
            await pool.close()


async def answer_all(core: LiveCore, pool: EnginePool, requests: list[Analyse], report: Callable[[str], None]) -> None:
    """Every request answered by the pool (cache first, each position searched once), fed back to the core."""
    with Progress(len(requests), "analysing positions") as bar:

        async def one(r: Analyse) -> None:
            try:
                answer = await pool.submit(r.board, r.priority)
            except EngineError as exc:
                effects = core.analysed(r, None, error=str(exc))
            else:
                effects = core.analysed(r, answer.analysis, answer.profile.name)
            for effect in effects:
                if isinstance(effect, Log) and effect.level >= logging.ERROR:
                    report(effect.text)
            bar.advance()

        await asyncio.gather(*(one(r) for r in requests))


def engine_strength_for(
    result: BatchResult, store: Store, given: float | None
) -> tuple[float | None, str]:
    """r̄_e and where it came from: the flag, the stored calibration, Algorithm 3, or none (one rule:
    :func:`livemon.live.core.engine_strength`)."""
    return engine_strength(given, store.get_engine_strength(result.profile), result.estimator)


def batch_report(result: BatchResult, strength: float | None, source: str, all_pairs: bool) -> dict[str, Any]:
    out = {"engine": {"profile": result.profile, "strength": strength, "strength_source": source, "analyses": result.searches}}
    out.update(result.estimator.report(strength, all_pairs))
    out["notes"] = result.notes
    return out
