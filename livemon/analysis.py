"""Turning positions and their evaluations into scored plies.

Spec §0: one analysis per position — the analysis of the position after ply k
is also the "before" of ply k+1, and the same MultiPV analysis of the position
before a move gives both its evaluation (best line) and the E(c) decision
(candidate list). Terminal positions are scored by rule, never searched.
"""

from __future__ import annotations

import chess

from livemon.engine import PositionAnalysis
from livemon.estimator import ScoredPly
from livemon.rating.agent import Decision
from livemon.rating.evaluation import from_mover, terminal_cp


def needs_search(board: chess.Board) -> bool:
    """False for positions scored by rule (checkmate, stalemate, draws by rule)."""
    return terminal_cp(board) is None


def position_value(board: chess.Board, analysis: PositionAnalysis | None) -> int | None:
    """The evaluation of a position: by rule when terminal, else the analysis's best line."""
    rule = terminal_cp(board)
    if rule is not None:
        return rule
    return analysis.score if analysis is not None else None


def decision_for(
    board: chess.Board, move: chess.Move, analysis: PositionAnalysis | None, after_cp: int | None
) -> Decision | None:
    """The E(c) observation of ``move`` played in ``board``, or None without information.

    None when there is no MultiPV analysis or only one legal move (§2).
    """
    if analysis is None or board.legal_moves.count() < 2:
        return None
    white = board.turn == chess.WHITE
    after = None if after_cp is None else from_mover(after_cp, white) / 100.0
    return Decision.from_analysis(analysis.candidates_for_mover(white), move.uci(), after)


def scored_ply(
    game_id: str,
    ply: int,
    board_before: chess.Board,
    move: chess.Move,
    before_cp: int | None,
    after_cp: int,
    analysis_before: PositionAnalysis | None,
) -> ScoredPly:
    """A ply with its evaluations and (when the engine saw the position) its decision."""
    return ScoredPly(game_id, ply, before_cp, after_cp, decision_for(board_before, move, analysis_before, after_cp))
