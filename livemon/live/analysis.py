"""Turning positions and their evaluations into scored plies.

Spec §0: one analysis per position — the analysis of the position after ply k
is also the "before" of ply k+1, and the same MultiPV analysis of the position
before a move gives both its evaluation (best line) and the E(c) decision
(candidate list). Terminal positions are scored by rule, never searched.
"""

from __future__ import annotations

from collections.abc import Container

import chess
import chess.polyglot

from livemon.live.values import (PositionAnalysis, board_from_fen, epd_of, fast_fen, move_of, moved_rank_texts,
                                  position_key, pushed, rank_texts)
from livemon.live.messages import MoveEvent
from livemon.live.lifecycle import GameEvent, GameLife, LifecycleError
from livemon.live.plies import MoveLog, ScoredPly, _shared
from livemon.live.shelf import Shelf
from livemon.rating.agent import Decision
from livemon.rating.evaluation import MATE_CP, from_mover, terminal_cp
from livemon.live.rules import facts_and_pins, is_forced


def position_value(board: chess.Board, analysis: PositionAnalysis | None) -> int | None:
    """The evaluation of a position: by rule when terminal, else the analysis's best line."""
    rule = terminal_cp(board)
    if rule is not None:
        return rule
    return analysis.score if analysis is not None else None


def decision_for(
    board: chess.Board, move: chess.Move, analysis: PositionAnalysis | None, after_cp: int | None,
    forced: bool | None = None, uci: str | None = None,
) -> Decision | None:
    """The E(c) observation of ``move`` played in ``board``, or None without information.

    None when there is no MultiPV analysis or only one legal move (§2);
    ``forced``: whether the position has one legal move, when the caller knows it; ``uci``: the move's
    UCI, when the caller has it. :meth:`Decision.from_analysis`'s decision, made in one pass over the
    candidates (their values are centipawns over 100, and the value after the move too: finite floats,
    not checked again).

    >>> a = PositionAnalysis(30, (("e2e4", 30), ("d2d4", 25)), 8)
    >>> board = chess.Board()
    >>> decision_for(board, chess.Move.from_uci("g1f3"), a, 10) == Decision.from_analysis(
    ...     a.candidates_for_mover(True), "g1f3", 0.1)
    True
    """
    if analysis is None or (is_forced(board) if forced is None else forced):
        return None
    white = board.turn == chess.WHITE
    values, played = analysis.mover_values(white, uci or move.uci())
    if played < 0:
        if after_cp is None:
            return None
        values.append(from_mover(after_cp, white) / 100.0)
        played = len(values) - 1
    if len(values) < 2:
        return None
    return Decision.checked(tuple(values), played)


def scored_ply(
    game_id: str,
    ply: int,
    board_before: chess.Board,
    move: chess.Move,
    before_cp: int | None,
    after_cp: int,
    analysis_before: PositionAnalysis | None,
    san: str | None = None,
    *,
    forced: bool | None = None,
    zobrist: bool = True,
    uci: str | None = None,
) -> ScoredPly:
    """A ply with its evaluations, its move, and (when the engine saw the position) its decision.

    ``san``: the move's SAN when the caller has it (a live feed sends it), to
    spare a move generation per ply; ``forced``: whether ``board_before`` has one legal
    move, when known; ``zobrist``: False leaves out the Polyglot key (only an opening
    book needs it: 40 µs a ply); ``uci``: the move's UCI when the caller has it (kept per ply: the
    feed's string is shared rather than a new one made).
    """
    if forced is None:
        forced = is_forced(board_before)
    decision = None if forced else decision_for(board_before, move, analysis_before, after_cp, forced=False, uci=uci)
    return ScoredPly(game_id, ply, before_cp, after_cp, decision, uci or move.uci(), san or board_before.san(move), forced,
                     chess.polyglot.zobrist_hash(board_before) if zobrist else None)  # by position: one scored ply a move


_KING_ATTACKS = chess.BB_KING_ATTACKS
_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8
_DOUBLE_STEPS = (chess.BB_RANK_6 | chess.BB_RANK_5, chess.BB_RANK_3 | chess.BB_RANK_4)  # by colour: python-chess's masks


def _pawn_reaches(board: chess.Board, start: int, to: int, turn: bool) -> bool:
    """A pawn of the side to move on ``start`` goes to ``to`` (not a back rank, not en passant) by a push onto an empty
    square (two squares from its own side's second or third rank, over an empty one) or a capture of a piece of the
    other side: python-chess's pseudo-legal pawn moves.

    >>> board = chess.Board("4k3/8/8/3p4/4P3/8/P7/4K3 w - - 0 1")
    >>> [_pawn_reaches(board, chess.parse_square(a), chess.parse_square(b), True)
    ...  for a, b in (("a2", "a4"), ("a2", "a3"), ("e4", "d5"), ("e4", "e5"), ("e4", "f5"), ("e4", "e6"))]
    [True, True, True, True, False, False]
    """
    occupied = board.occupied
    step = to - start if turn else start - to
    if step == 8:
        return not occupied >> to & 1
    if step == 16:
        return not occupied >> to & 1 and not occupied >> (start + to) // 2 & 1 and bool(_DOUBLE_STEPS[turn] >> to & 1)
    return bool(chess.BB_PAWN_ATTACKS[turn][start] >> to & 1 and board.occupied_co[not turn] >> to & 1)


class LiveGame:
    """The positions of one live game and how far its plies are scored — sans I/O.

    Position ``j`` is the position after ply ``j`` (0 = the start). A position is
    valued by rule when terminal. Otherwise **one rule** says where its value comes
    from, for every driver alike (a feed, ``analyse``, ``export``, the demo):

    - under an engine profile (``comments`` False, every driver with an engine) the
      engine values every position at the pinned profile, whatever ``[%eval]``
      comments the source carries: the ratings need its MultiPV, and one source of
      values makes every figure of a game (estimates, accuracy, classes, moments)
      agree. The comments are kept on the moves; the eval bar may show the newest
      one while the engine is busy (:meth:`LiveCore.board_state`);
    - with no engine at all (``comments`` True: the ``[%eval] comments`` profile) a
      game is valued from its comments while every ply of it carries one (a
      terminal position needs none; the start position by the comment before the
      first move, else by the engine); from the first ply that carries none, the
      whole game is valued by the engine, and its plies scored from the comments are
      scored again (:meth:`drop_comments`: the caller rolls the estimates back). A
      ply valued from a comment carries no E(c) decision (no MultiPV).

    So a game's figures depend only on its moves (and, without an engine, its
    comments), never on how they arrived.

    Per position it keeps its value by rule and whether it is forced (one legal-move
    generation per position) and its evaluation; its board and analysis only until
    both plies next to it are scored (the newest position's always: the game goes on
    from it; a correction rebuilds the one it goes back to from the moves); the FEN of
    the newest position only (the faces show that one). A finished game whose
    plies are all scored settles (:meth:`settle`, its :attr:`life` says which state it
    is in: :mod:`livemon.live.lifecycle`): boards, analyses and per-ply caches are
    released, the moves (without their FENs) and evaluations kept; a correction
    reopens it, its positions rebuilt from the moves (:meth:`reopen`).
    """

    __slots__ = ("game_id", "boards", "rules", "forced", "_fen", "evals", "moves", "analyses", "pending", "start_fen",
                 "start_eval", "comments", "epoch", "epochs", "life", "_candidates",
                 "_unreleased", "_pins", "_ranks")  # slots: ~1,000 finished games an hour are kept

    def __init__(self, game_id: str, comments: bool = False):
        self.game_id = game_id
        self.boards: list[chess.Board | None] = []  # None: released (both plies next to it scored)
        self.rules: list[int | None] = []  # value by rule of each position (terminal), None: not terminal
        self.forced: list[bool] = []  # one legal move (or none) in each position
        self._fen: str | None = chess.STARTING_FEN  # FEN of the newest position, None until :attr:`fen` reads it
        self.evals: list[int | None] = []  # value of each position so far (None: not known yet)
        self.moves = MoveLog(game_id)  # sealed into columns as they settle (:meth:`pack`), archived if the driver says so
        self.analyses: dict[int, PositionAnalysis | None] = {}  # None: the engine gave up
        self.pending: set[int] = set()  # plies waiting for a value
        self.start_fen: str | None = None  # FEN before the first move
        self.start_eval: int | None = None  # the [%eval] before the first move, if any
        self.comments = comments  # valued from [%eval] comments (no engine): every ply so far carries one
        self.epoch = 0  # counts the corrections: a position added after one is another position
        self.epochs: list[int] = []  # the epoch each position was added in: an analysis request's token
        self.life = GameLife()  # live, finished, settled, archived or reopened: :mod:`livemon.live.lifecycle`
        self._candidates: set[int] = set()  # pending plies whose positions got a value since the last ready()
        self._unreleased: list[int] = []  # plies ready() scored whose positions :meth:`release` has not looked at yet
        self._pins: tuple[chess.Board, int, int] | None = None  # the newest position's king and pins (:meth:`legal`)
        self._ranks: tuple[chess.Board, list[str]] | None = None  # the last position :meth:`key` read, its rank texts

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def fen(self) -> str:
        """The FEN of the newest position, made when first read after a move (only a board message reads it;
        a burst of moves makes one per game, not one per move)."""
        if self._fen is None:
            self._fen = fast_fen(self.board(-1)) if self.boards else chess.STARTING_FEN
        return self._fen

    @property
    def scored(self) -> range | set[int]:
        """The plies handed to the estimator (all but the pending ones: plies are scored once each)."""
        if not self.pending:
            return range(1, len(self.moves) + 1)
        return set(range(1, len(self.moves) + 1)) - self.pending

    def _add_position(self, board: chess.Board) -> None:
        rule, forced, pins = facts_and_pins(board)  # once: move generation is the costly part of scoring
        self._pins = None if pins is None else (board, *pins)
        self.boards.append(board)
        self.epochs.append(self.epoch)
        self.rules.append(rule)
        self.forced.append(forced)

    def add_move(self, ev: MoveEvent) -> list[int]:
        """Append the next ply; returns the position indices that need the engine."""
        if ev.ply != len(self.moves) + 1:
            raise ValueError(f"{self.game_id}: ply {ev.ply} does not follow ply {len(self.moves)}")
        if self.life.released:
            self.reopen()
        if not self.boards:
            self.start_fen = ev.fen_before
            self.start_eval = ev.start_eval_cp
            self._add_position(board_from_fen(ev.fen_before))
            self.evals.append(_shared(self.value(0)[1]))
        board = pushed(self.board(-1), move_of(ev.uci))
        self.moves.append(ev)
        self._add_position(board)
        self.evals.append(_shared(self.value(ev.ply)[1]))
        self._fen = None
        self.pending.add(ev.ply)
        self._candidates.add(ev.ply)
        if ev.ply == 1:
            return [j for j in (0, 1) if self.needs_engine(j)]
        return [ev.ply] if self.needs_engine(ev.ply) else []

    def legal(self, board: chess.Board, move: chess.Move) -> bool:
        """``board.is_legal(move)``; for the newest position out of check, with the king and the pins found when
        it was added (:func:`livemon.live.rules._out_of_check`), python-chess's rule read from the bitboards: a king's
        step (not castling) is legal when it lands on no piece of ours and no attacked square; a move of any other
        piece, other than an en-passant capture, when it is pseudo-legal and not a pinned piece leaving its line (a
        knight's or a slider's pseudo-legality read from its attacks, a pawn's push or capture from its squares, a
        promotion's from python-chess).

        >>> game = LiveGame("g")
        >>> _ = game.add_move(MoveEvent("g", 1, "e2e4", "e4", chess.STARTING_FEN))
        >>> board = game.board(-1)
        >>> [game.legal(board, chess.Move.from_uci(u)) for u in ("e7e5", "e8e7", "d7d4", "e2e4", "d7d5", "e7e6")]
        [True, False, False, False, True, True]
        """
        pins = self._pins
        if pins is None or pins[0] is not board:
            return board.is_legal(move)
        _, king, pinned = pins
        start, to = move.from_square, move.to_square
        pawn = board.pawns >> start & 1
        if move.drop or (to == board.ep_square and pawn):
            return board.is_legal(move)
        turn = board.turn
        ours = board.occupied_co[turn]
        if start == king:
            if move.promotion or ours >> to & 1 or not _KING_ATTACKS[start] >> to & 1:
                return board.is_legal(move)  # castling, or no king's step
            return not board.attackers_mask(not turn, to)
        if move.promotion or (pawn and _BACKRANKS >> to & 1):
            if not board.is_pseudo_legal(move):
                return False
        elif pawn:
            if not ours >> start & 1 or not _pawn_reaches(board, start, to, turn):
                return False
        elif not ours >> start & 1 or ours >> to & 1 or not board.attacks_mask(start) >> to & 1:
            return False  # a piece's move: one of ours, to a square it attacks, not onto one of ours
        return not pinned >> start & 1 or bool(chess.ray(start, to) & chess.BB_SQUARES[king])

    def truncate(self, from_ply: int) -> list[int]:
        """Withdraw plies ``from_ply`` on (the caller rolls back the estimator).

        Returns the position indices that need the engine again: after a compaction the
        analysis of the position the game goes on from (the cache answers it).
        """
        again: list[int] = []
        if self.life.released:
            self.reopen()
            keep = max(from_ply - 1, 0)
            if keep and keep <= len(self.moves) and self.needs_engine(keep):
                again.append(keep)
        keep = max(from_ply - 1, 0)
        self.moves.truncate(keep)
        del self.boards[keep + 1 if keep else 0 :]
        del self.epochs[len(self.boards) :]
        self.epoch += 1
        del self.rules[len(self.boards) :]
        del self.forced[len(self.boards) :]
        del self.evals[len(self.boards) :]
        self.analyses = {j: a for j, a in self.analyses.items() if j <= keep and self.boards}
        self.pending = {k for k in self.pending if k <= keep}
        self._candidates = {k for k in self._candidates if k <= keep}
        if self.boards and self.boards[-1] is None:  # released: the game goes on from it, so it is rebuilt
            self.board(keep)
            if keep not in self.analyses and self.needs_engine(keep) and keep not in again:
                again.append(keep)  # its analysis was released too: the cache answers it again
        self._fen = None if self.boards else chess.STARTING_FEN
        return again

    def replay_from(self, ply: int) -> list[int]:
        """Every ply from ``ply`` on unscored and its positions added again (the same moves, new tokens: an
        answer asked before is dropped); the caller rolls the estimates back first. Returns the positions
        that need the engine (the cache answers those it still holds)."""
        start, start_eval = self.start_fen or chess.STARTING_FEN, self.start_eval
        moves = list(self.moves)[ply - 1:]
        positions = self.truncate(ply)
        for ev in moves:
            if ev.ply == 1:
                ev = MoveEvent(ev.game_id, 1, ev.uci, ev.san, start, ev.clock, ev.emt, ev.eval_cp, ev.feed, start_eval,
                               ev.eval_mate)
            positions.extend(self.add_move(ev))
        return sorted(set(positions))

    def engine_positions(self, keys: Container[str]) -> list[int]:
        """The positions valued by the engine whose key (:func:`~livemon.live.values.position_key`) is in
        ``keys``, replayed from the game's first FEN (a rare event: every position is made again)."""
        if self.start_fen is None or not self.moves:
            return []
        board = board_from_fen(self.start_fen)
        found = []
        released = self.life.released
        for j, ev in enumerate((None, *self.moves)):  # the moves read once (an archived game's from its archive)
            if ev is not None:
                board.push(move_of(ev.uci))
            if position_key(board) in keys and (self._comment(j) is None if released else self.needs_engine(j)):
                found.append(j)
        return found

    def board(self, j: int) -> chess.Board:
        """Position ``j`` (``-1``: the newest), rebuilt and kept again if it was released."""
        board = self.boards[j]
        if board is None:
            board = self.boards[j] = self._replayed(j % len(self.boards))
        return board

    def _replayed(self, j: int) -> chess.Board:
        """Position ``j`` rebuilt from the nearest kept position before it (or the first FEN) and the moves."""
        i = j
        while i > 0 and self.boards[i] is None:
            i -= 1
        start = self.boards[i]
        board = start.copy(stack=False) if start is not None else board_from_fen(self.start_fen or chess.STARTING_FEN)
        for ev in self.moves[i:j]:
            board.push(move_of(ev.uci))
        return board.copy(stack=False)

    def key(self, j: int) -> str:
        """:func:`~livemon.live.values.position_key` of position ``j``: when the last key made was position ``j - 1``'s
        (a game's positions are keyed in turn as its moves come), its rank texts with only the two ranks of ply
        ``j``'s move read again (:func:`~livemon.live.values.moved_rank_texts`), else every rank.

        >>> game = LiveGame("g")
        >>> for ply, uci in enumerate(("e2e4", "d7d5", "e4d5", "e8d7", "d5d6", "c7c5", "d6c7"), 1):
        ...     _ = game.add_move(MoveEvent("g", ply, uci, "", game.fen))
        >>> all(game.key(j) == position_key(game.board(j)) for j in range(8))
        True
        """
        board = self.board(j)
        kept = self._ranks
        stack = board.move_stack
        if kept is not None and j and stack and kept[0] is self.boards[j - 1] and type(board) is chess.Board:
            texts = moved_rank_texts(board, kept[1], stack[-1])  # board was made by its last move from kept's
        else:
            texts = rank_texts(board)
        self._ranks = (board, texts)
        return epd_of(board, "/".join(texts))

    def token(self, j: int) -> int:
        """What an analysis request for position ``j`` carries: its answer is for this game's position ``j``
        while :meth:`current` says so (not after a correction replaced the position)."""
        return self.epochs[j]

    def current(self, j: int, token: int) -> bool:
        """Position ``j`` is the one a request with ``token`` asked for."""
        return 0 <= j < len(self.epochs) and self.epochs[j] == token

    def needs_engine(self, j: int) -> bool:
        if self.rules[j] is not None:  # terminal: valued by rule
            return False
        return self._comment(j) is None

    def _comment(self, j: int) -> int | None:
        """The comment that values position ``j`` under the game's rule (None: the engine does)."""
        if not self.comments:
            return None
        return self.start_eval if j == 0 else self.moves[j - 1].eval_cp

    def breaks_comments(self, ply: int) -> bool:
        """Ply ``ply`` (just added) ends the game's valuation from comments: it carries no ``[%eval]``
        and its position is not terminal."""
        return self.comments and self.moves[ply - 1].eval_cp is None and self.rules[ply] is None

    def all_commented(self) -> bool:
        """Every ply carries an ``[%eval]`` or leads to a terminal position (the rule's condition; not for a
        settled game)."""
        return all(ev.eval_cp is not None or self.rules[k] is not None for k, ev in enumerate(self.moves, 1))

    def drop_comments(self, comments: bool = False) -> list[int]:
        """Value the game from the engine (``comments`` False) or from its comments again: every ply
        unscored, every position revalued. Returns the positions that need the engine; the caller
        rolls the game's scored plies back in the estimates first."""
        start = self.start_fen or chess.STARTING_FEN
        start_eval = self.start_eval
        moves = list(self.moves)
        self.moves, self.boards, self.rules, self.forced, self.evals, self.epochs = MoveLog(self.game_id), [], [], [], [], []
        self.analyses, self.pending, self._candidates = {}, set(), set()
        self.comments = comments
        positions: list[int] = []
        for k, ev in enumerate(moves, 1):
            if k == 1:
                ev = MoveEvent(ev.game_id, 1, ev.uci, ev.san, start, ev.clock, ev.emt, ev.eval_cp, ev.feed, start_eval,
                               ev.eval_mate)
            positions.extend(self.add_move(ev))
        return sorted(set(positions))

    def value(self, j: int) -> tuple[bool, int | None]:
        """(known, value) of position ``j``: known False while an analysis is awaited."""
        rule = self.rules[j]
        if rule is not None:
            return True, rule
        if self.comments:
            comment = self._comment(j)
            if comment is not None:
                return True, comment
        analyses = self.analyses
        if j not in analyses:
            return False, None
        analysis = analyses[j]
        return True, None if analysis is None else analysis.score

    def mate(self, j: int) -> int | None:
        """Position ``j``'s distance to mate when its value is a mate and the distance is known (moves, White's
        view; 0: the position is mate), from what values it (rule, comment or analysis); for display only."""
        rule = self.rules[j] if 0 <= j < len(self.rules) else None
        if rule is not None:
            return 0 if abs(rule) >= MATE_CP else None
        if self.comments:
            return None if j <= 0 else self.moves[j - 1].eval_mate
        analysis = self.analyses.get(j)
        return None if analysis is None else analysis.mate

    def set_analysis(self, j: int, analysis: PositionAnalysis | None) -> None:
        if j < len(self.boards):
            self.analyses[j] = analysis
            self.evals[j] = _shared(self.value(j)[1])
            for k in (j, j + 1):  # the plies into and out of position j
                if k in self.pending:
                    self._candidates.add(k)

    def ready(self, zobrist: bool = True) -> list[ScoredPly]:
        """The plies that can now be scored (both positions valued), each once.

        Plies are scored as soon as they can, in any order: the newest-first
        engine queue must not hold every estimate behind one old position, and
        the estimator's figures do not depend on the order plies arrive in.
        Only plies next to a newly valued position are looked at.
        ``zobrist``: give each ply the Polyglot key of its position (for an opening book).
        The boards and analyses of their positions stay until :meth:`release` (the caller reads them first).
        """
        if not self._candidates:
            return []
        out: list[ScoredPly] = []
        candidates, self._candidates = sorted(self._candidates), set()
        for k in candidates:
            if k not in self.pending:
                continue
            known_before, before = self.value(k - 1)
            known_after, after = self.value(k)
            if not (known_before and known_after):
                continue
            self.pending.discard(k)
            if after is not None:  # None: the engine gave up on this position: nothing to score
                ev = self.moves[k - 1]
                source = None if self.comments else self.analyses.get(k - 1)
                board = self.boards[k - 1]
                assert board is not None  # noqa: S101 - invariant: kept while ply k is pending
                out.append(scored_ply(self.game_id, k, board, move_of(ev.uci), before, after,
                                      source, ev.san, forced=self.forced[k - 1], zobrist=zobrist, uci=ev.uci))
            self._unreleased.append(k)
        return out

    def release(self) -> None:
        """Release the positions next to the plies :meth:`ready` scored that no pending ply needs (:meth:`_release`)."""
        plies = self._unreleased
        for k in plies:
            self._release(k - 1)
            self._release(k)
        plies.clear()

    def _release(self, j: int) -> None:
        """Drop position ``j``'s board and analysis once both plies next to it are scored (not the newest:
        the game goes on from it). A live game holds a few positions, not one per ply (at 1,000 boards one
        per ply would grow the monitor by tens of MB a minute); a correction rebuilds the one it goes on
        from (:meth:`truncate`)."""
        if j >= len(self.boards) - 1 or self.boards[j] is None:
            return
        if (j > 0 and j in self.pending) or j + 1 in self.pending:
            return
        self.boards[j] = None
        self.analyses.pop(j, None)

    # -- memory ---------------------------------------------------------------------

    def pack(self, through: int) -> None:
        """Pack the moves through ply ``through`` (the core packs a live game's settled plies a chunk at a time)."""
        if not self.life.released:
            self.moves.seal(through)

    @property
    def all_scored(self) -> bool:
        """Every ply scored: nothing awaited from the engine for it."""
        return not self.pending

    def settle(self) -> None:
        """Settle the game (finished, every ply scored: :class:`~livemon.live.lifecycle.LifecycleError`
        otherwise): its per-position state released (boards, analyses, per-ply caches).

        Kept: the moves without their FENs, packed (duplicates and corrections are recognised,
        the board message shows the last move and clocks), the evaluations, the newest FEN.
        """
        if self.pending or not self.moves:
            raise LifecycleError(f"game {self.game_id} cannot settle: "
                                 + ("plies await an analysis" if self.pending else "no move"))
        self.life.send(GameEvent.SETTLE)
        self._fen = self.fen  # kept: the board message of a settled game shows it
        self._ranks = None  # its board goes with the others
        self.boards, self.rules, self.forced, self.analyses, self.epochs = [], [], [], {}, []
        self._candidates, self.pending = set(), set()  # fresh sets: a set keeps the table it grew to
        self.moves.seal()

    def archive(self, shelf: Shelf) -> bool:
        """Archive a settled game: its moves and evaluations onto ``shelf`` (the core's archive); whether
        they moved."""
        if not self.life.can(GameEvent.ARCHIVE) or not self.moves.archive(shelf, self.archive_key, self.evals):
            return False
        self.life.send(GameEvent.ARCHIVE)
        self.evals = []  # in the record: :meth:`evaluations`
        return True

    @property
    def archive_key(self) -> str:
        """The key of this game's record in the archive (:meth:`archive`)."""
        return f"moves {self.game_id}"

    def evaluations(self) -> tuple[int | None, ...]:
        """The value of each position (:attr:`evals`, read from the archive for an archived game)."""
        return self.moves.evals if self.moves.archived else tuple(self.evals)

    def reopen(self) -> None:
        """Reopen a settled or archived game: its positions rebuilt from its first FEN and moves (before a
        correction or a move after its last).

        Every ply stays scored; the analyses are not kept (the caller asks the engine's
        cache again for the one position the game goes on from).
        """
        if not self.life.released or self.start_fen is None:
            return
        self.life.send(GameEvent.REOPEN)
        if self.moves.archived:
            self.evals = [_shared(v) for v in self.moves.evals]
        self.moves.unseal()
        board = board_from_fen(self.start_fen)
        self._add_position(board)
        for ev in self.moves:
            board = pushed(board, move_of(ev.uci))
            self._add_position(board)
