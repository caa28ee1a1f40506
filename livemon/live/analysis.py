"""Turning positions and their evaluations into scored plies.

Spec §0: one analysis per position — the analysis of the position after ply k
is also the "before" of ply k+1, and the same MultiPV analysis of the position
before a move gives both its evaluation (best line) and the E(c) decision
(candidate list). Terminal positions are scored by rule, never searched.
"""

from __future__ import annotations

import itertools

import chess
import chess.polyglot

from livemon.live.values import PositionAnalysis, board_from_fen
from livemon.live.messages import MoveEvent
from livemon.live.estimator import ScoredPly
from livemon.rating.agent import Decision
from livemon.rating.evaluation import from_mover, terminal_cp


def needs_search(board: chess.Board) -> bool:
    """False for positions scored by rule (checkmate, stalemate, draws by rule)."""
    return terminal_cp(board) is None


def is_forced(board: chess.Board) -> bool:
    """One legal move (or none): no choice, so no information about the player.

    >>> is_forced(chess.Board("7k/8/8/8/8/8/5q2/7K w - - 0 1"))
    True
    """
    return len(list(itertools.islice(board.legal_moves, 2))) < 2  # stop at 2: counting all is slow


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
    if analysis is None or is_forced(board):
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
    san: str | None = None,
) -> ScoredPly:
    """A ply with its evaluations, its move, and (when the engine saw the position) its decision.

    ``san``: the move's SAN when the caller has it (a live feed sends it), to
    spare a move generation per ply.
    """
    forced = is_forced(board_before)
    decision = None if forced else decision_for(board_before, move, analysis_before, after_cp)
    return ScoredPly(
        game_id, ply, before_cp, after_cp, decision,
        uci=move.uci(), san=san or board_before.san(move), forced=forced,
        zobrist=chess.polyglot.zobrist_hash(board_before),
    )


class LiveGame:
    """The positions of one live game and how far its plies are scored — sans I/O.

    Position ``j`` is the position after ply ``j`` (0 = the start). A position is
    valued by rule when terminal, else by the ``[%eval]`` comment of the move that
    led to it when the feed gave one, else by its engine analysis (the start
    position always by the engine). Plies are scored strictly in order, each as
    soon as the values before and after it are known, so that the estimator sees
    the same sequence whatever order analyses complete in. A ply valued from a
    comment carries no E(c) decision (no MultiPV), exactly as in ``analyse``.
    """

    def __init__(self, game_id: str):
        self.game_id = game_id
        self.boards: list[chess.Board] = []
        self.rules: list[int | None] = []  # value by rule of each position (terminal), None: not terminal
        self.fens: list[str] = []  # FEN of each position, made once (faces show it at every update)
        self.evals: list[int | None] = []  # value of each position so far (None: not known yet)
        self.moves: list[MoveEvent] = []
        self.analyses: dict[int, PositionAnalysis | None] = {}  # None: the engine gave up
        self.scored: set[int] = set()  # plies already handed to the estimator
        self.pending: set[int] = set()  # plies waiting for a value

    @property
    def plies(self) -> int:
        return len(self.moves)

    def add_move(self, ev: MoveEvent) -> list[int]:
        """Append the next ply; returns the position indices that need the engine."""
        if ev.ply != len(self.moves) + 1:
            raise ValueError(f"{self.game_id}: ply {ev.ply} does not follow ply {len(self.moves)}")
        if not self.boards:
            self.boards.append(board_from_fen(ev.fen_before))
            self.rules.append(terminal_cp(self.boards[0]))
            self.fens.append(self.boards[0].fen())
            self.evals.append(self.value(0)[1])
        board = self.boards[-1].copy(stack=False)
        board.push(chess.Move.from_uci(ev.uci))
        self.moves.append(ev)
        self.boards.append(board)
        self.rules.append(terminal_cp(board))  # once: move generation is the costly part of scoring
        self.fens.append(board.fen())
        self.evals.append(self.value(ev.ply)[1])
        self.pending.add(ev.ply)
        return [j for j in ((0, ev.ply) if ev.ply == 1 else (ev.ply,)) if self.needs_engine(j)]

    def truncate(self, from_ply: int) -> None:
        """Withdraw plies ``from_ply`` on (the caller rolls back the estimator)."""
        keep = max(from_ply - 1, 0)
        del self.moves[keep:]
        del self.boards[keep + 1 if keep else 0 :]
        del self.rules[len(self.boards) :]
        del self.fens[len(self.boards) :]
        del self.evals[len(self.boards) :]
        self.analyses = {j: a for j, a in self.analyses.items() if j <= keep and self.boards}
        self.scored = {k for k in self.scored if k <= keep}
        self.pending = {k for k in self.pending if k <= keep}

    def needs_engine(self, j: int) -> bool:
        if self.rules[j] is not None:  # terminal: valued by rule
            return False
        return j == 0 or self.moves[j - 1].eval_cp is None

    def value(self, j: int) -> tuple[bool, int | None]:
        """(known, value) of position ``j``: known False while an analysis is awaited."""
        rule = self.rules[j]
        if rule is not None:
            return True, rule
        if j > 0 and self.moves[j - 1].eval_cp is not None:
            return True, self.moves[j - 1].eval_cp
        if j not in self.analyses:
            return False, None
        analysis = self.analyses[j]
        return True, None if analysis is None else analysis.score

    def set_analysis(self, j: int, analysis: PositionAnalysis | None) -> None:
        if j < len(self.boards):
            self.analyses[j] = analysis
            self.evals[j] = self.value(j)[1]

    def ready(self) -> list[ScoredPly]:
        """The plies that can now be scored (both positions valued), each once.

        Plies are scored as soon as they can, in any order: the newest-first
        engine queue must not hold every estimate behind one old position, and
        the estimator's figures do not depend on the order plies arrive in.
        """
        out: list[ScoredPly] = []
        for k in sorted(self.pending):
            known_before, before = self.value(k - 1)
            known_after, after = self.value(k)
            if not (known_before and known_after):
                continue
            self.scored.add(k)
            self.pending.discard(k)
            if after is None:  # the engine gave up on this position: nothing to score
                continue
            ev = self.moves[k - 1]
            source = None if ev.eval_cp is not None else self.analyses.get(k - 1)
            out.append(
                scored_ply(self.game_id, k, self.boards[k - 1], chess.Move.from_uci(ev.uci), before, after, source, ev.san)
            )
        return out
