"""Turning positions and their evaluations into scored plies.

Spec §0: one analysis per position — the analysis of the position after ply k
is also the "before" of ply k+1, and the same MultiPV analysis of the position
before a move gives both its evaluation (best line) and the E(c) decision
(candidate list). Terminal positions are scored by rule, never searched.
"""

from __future__ import annotations

import itertools
import math
import sys
from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import chess
import chess.polyglot

from livemon.live.memo import Memo
from livemon.live.values import PositionAnalysis, board_from_fen, fast_fen
from livemon.live.messages import MoveEvent
from livemon.live.estimator import ScoredPly
from livemon.live.shelf import Shelf, Shelved
from livemon.rating.agent import Decision
from livemon.rating.evaluation import MAX_CP, from_mover, terminal_cp


def needs_search(board: chess.Board) -> bool:
    """False for positions scored by rule (checkmate, stalemate, draws by rule): ``terminal_cp(board) is None``,
    with :func:`position_facts`' shortcuts (the engine pool asks this of every position it is handed)."""
    return position_facts(board)[0] is None


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
    board: chess.Board, move: chess.Move, analysis: PositionAnalysis | None, after_cp: int | None,
    forced: bool | None = None,
) -> Decision | None:
    """The E(c) observation of ``move`` played in ``board``, or None without information.

    None when there is no MultiPV analysis or only one legal move (§2);
    ``forced``: whether the position has one legal move, when the caller knows it.
    """
    if analysis is None or (is_forced(board) if forced is None else forced):
        return None
    white = board.turn == chess.WHITE
    after = None if after_cp is None else from_mover(after_cp, white) / 100.0
    return Decision.from_analysis(analysis.candidates_for_mover(white), move.uci(), after)


def position_facts(board: chess.Board) -> tuple[int | None, bool]:
    """``(terminal_cp(board), is_forced(board))`` with one legal-move generation (the costly part).

    Only a position that may be over by rule (no legal move, insufficient material, the
    75-move rule, a long enough history for a fivefold repetition, a variant's end) goes
    through :func:`terminal_cp`; any other has no value by rule.

    >>> position_facts(chess.Board())
    (None, False)
    >>> position_facts(chess.Board("7k/8/8/8/8/8/6q1/7K w - - 0 1"))  # one move: Kxg2
    (None, True)
    >>> position_facts(chess.Board("7k/8/8/8/8/8/5q2/7K w - - 0 1"))  # stalemate
    (0, True)
    """
    first = list(itertools.islice(board.legal_moves, 2))
    forced = len(first) < 2
    if not first or board.halfmove_clock >= 150 or len(board.move_stack) >= 8:
        return terminal_cp(board), forced
    if type(board) is chess.Board and board.pawns | board.rooks | board.queens:
        return None, forced  # standard chess with a pawn, rook or queen: no variant end, material suffices
    if board.is_variant_end() or board.is_insufficient_material():
        return terminal_cp(board), forced
    return None, forced


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
    decision = None if forced else decision_for(board_before, move, analysis_before, after_cp, forced=False)
    return ScoredPly(
        game_id, ply, before_cp, after_cp, decision,
        uci=uci or move.uci(), san=san or board_before.san(move), forced=forced,
        zobrist=chess.polyglot.zobrist_hash(board_before) if zobrist else None,
    )


_NO_EVAL = -(2**31)


class PackedMoves(Sequence[MoveEvent]):
    """A compacted game's moves in a few flat arrays (~30 bytes a ply instead of ~250 as objects).

    Read as the list of :class:`MoveEvent` it was made from, without their FENs (the game's
    first FEN and the moves rebuild every position: :meth:`LiveGame.expand`).

    >>> moves = [MoveEvent("g", 1, "e2e4", "e4", "", clock=5400.0), MoveEvent("g", 2, "e7e5", "e5", "", eval_cp=-20)]
    >>> packed = PackedMoves("g", moves)
    >>> list(packed) == moves, packed[-1].eval_cp, [m.san for m in packed[-2:]], len(packed)
    (True, -20, ['e4', 'e5'], 2)
    """

    __slots__ = ("_clock", "_emt", "_eval", "_feeds", "_game_id", "_san", "_uci")

    def __init__(self, game_id: str, moves: Sequence[MoveEvent]) -> None:
        nan = math.nan
        self._game_id = game_id
        self._uci = " ".join(m.uci for m in moves)
        self._san = " ".join(m.san for m in moves)
        self._clock = array("d", [nan if m.clock is None else m.clock for m in moves])
        self._emt = array("d", [nan if m.emt is None else m.emt for m in moves])
        self._eval = array("i", [_NO_EVAL if m.eval_cp is None else m.eval_cp for m in moves])
        feeds = {m.feed for m in moves}
        self._feeds: str | tuple[str, ...] = feeds.pop() if len(feeds) == 1 else tuple(m.feed for m in moves)

    def extended(self, moves: Sequence[MoveEvent]) -> PackedMoves:
        """These moves and ``moves`` (the next ones) packed, these not made again (:meth:`LiveGame.pack`).

        >>> moves = [MoveEvent("g", k, "e2e4", "e4", "", clock=60.0 * k, feed="a" if k < 4 else "b") for k in (1, 2, 3, 4)]
        >>> list(PackedMoves("g", moves[:2]).extended(moves[2:])) == moves
        True
        """
        new = PackedMoves(self._game_id, moves)
        if not len(new) or not len(self):
            return self if not len(new) else new
        out = object.__new__(PackedMoves)
        out._game_id = self._game_id
        out._uci, out._san = f"{self._uci} {new._uci}", f"{self._san} {new._san}"
        out._clock, out._emt, out._eval = self._clock + new._clock, self._emt + new._emt, self._eval + new._eval
        if isinstance(self._feeds, str) and self._feeds == new._feeds:
            out._feeds = self._feeds
        else:
            out._feeds = tuple(f for p in (self, new) for f in (
                p._feeds if isinstance(p._feeds, tuple) else (p._feeds,) * len(p)))
        return out

    def __len__(self) -> int:
        return len(self._eval)

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        ucis, sans = self._uci.split(" "), self._san.split(" ")
        if isinstance(i, slice):
            return [self._move(k, ucis, sans) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._move(i, ucis, sans)

    def __iter__(self) -> Iterator[MoveEvent]:
        return iter(self[:])

    def _move(self, k: int, ucis: list[str], sans: list[str]) -> MoveEvent:
        clock, emt, cp = self._clock[k], self._emt[k], self._eval[k]
        return MoveEvent(self._game_id, k + 1, ucis[k], sans[k], "", None if math.isnan(clock) else clock,
                         None if math.isnan(emt) else emt, None if cp == _NO_EVAL else cp,
                         self._feeds if isinstance(self._feeds, str) else self._feeds[k])


class LiveMoves(Sequence[MoveEvent]):
    """A live game's moves: the settled ones packed (:class:`PackedMoves`), the newest ones objects
    (:meth:`LiveGame.pack`: a move object is ~110 bytes kept until the game finishes; packed, ~30).

    >>> moves = [MoveEvent("g", k, "e2e4" if k % 2 else "e7e5", "x", "", clock=60.0 * k) for k in range(1, 6)]
    >>> live = LiveMoves(PackedMoves("g", moves[:3]), moves[3:])
    >>> list(live) == moves, live[-1].ply, live[1].clock, [m.ply for m in live[2:4]], len(live)
    (True, 5, 120.0, [3, 4], 5)
    >>> [live[i].ply for i in (0, 2, 3, 4, -1, -2, -3, -5)], [m.ply for m in live[::2]]
    ([1, 3, 4, 5, 5, 4, 3, 1], [1, 3, 5])
    >>> live[5]  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    IndexError: 5
    >>> live[-6]  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    IndexError: -6
    """

    __slots__ = ("head", "tail")

    def __init__(self, head: PackedMoves, tail: list[MoveEvent]) -> None:
        self.head, self.tail = head, tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        n, tail = len(self.head), self.tail
        if isinstance(i, slice):
            start, stop, step = i.indices(n + len(tail))
            if step != 1:
                return [self[k] for k in range(start, stop, step)]
            return (self.head[start:min(stop, n)] if start < n else []) + tail[max(start - n, 0):max(stop - n, 0)]
        if i >= n:  # the live path reads the newest moves: the tail's, at a list's cost
            return tail[i - n]
        if i < 0:
            return tail[i] if -i <= len(tail) else self.head[i + len(tail)]
        return self.head[i]

    def __iter__(self) -> Iterator[MoveEvent]:
        yield from self.head
        yield from self.tail

    def append(self, ev: MoveEvent) -> None:
        self.tail.append(ev)


def _kept(ev: MoveEvent, game_id: str) -> MoveEvent:
    """``ev`` as a live game keeps it: without its FEN (~120 bytes a ply; only a game's first FEN is read,
    :attr:`LiveGame.start_fen`, and a compacted game's moves have none either: :class:`PackedMoves`), and
    with one object for each of its values that repeat: the game's own id, one str per move text (UCI,
    SAN), one int per evaluation, one float per clock reading. A feed makes them anew for every move
    (the game id per poll): ~160 bytes a live ply kept until the game is compacted.

    >>> ev = MoveEvent("g", 1, "e2e4", "e4", chess.STARTING_FEN, clock=5400.0)
    >>> _kept(ev, "g")
    MoveEvent(game_id='g', ply=1, uci='e2e4', san='e4', fen_before='', clock=5400.0, emt=None, eval_cp=None, feed='', start_eval_cp=None)
    >>> again = MoveEvent("".join("g"), 1, "".join(["e2", "e4"]), "".join("e4"), "", clock=float("5400"))
    >>> kept = _kept(again, "g")
    >>> kept.uci is _kept(ev, "g").uci, kept.clock is _kept(ev, "g").clock, kept.game_id is _kept(ev, "g").game_id
    (True, True, True)
    """
    return MoveEvent(game_id, ev.ply, sys.intern(ev.uci), sys.intern(ev.san), "", _seconds(ev.clock),
                     _seconds(ev.emt), _shared(ev.eval_cp), ev.feed)


_SECONDS = Memo[float, float](20_000)
"""One float object per clock reading (``[%clk]`` and ``[%emt]`` are whole seconds: a few thousand values)."""


def _seconds(s: float | None) -> float | None:
    """The one float object of a clock reading."""
    return None if s is None else _SECONDS.one(s)


_CP = Memo[int, int](2 * MAX_CP + 1)
"""One int object per evaluation value (at most 2 × MAX_CP + 1 of them, ~250 KB: never cleared)."""


def _shared(cp: int | None) -> int | None:
    """The one int object of an evaluation (an int above 256 is an object of its own: a board message's
    ~80 evaluations were ~2.5 KB of ints, kept per game and per message in the hub).

    >>> a, b = int("1234"), int("1234")
    >>> a is b, _shared(a) is _shared(b), _shared(None)
    (False, True, None)
    """
    if cp is None or not -MAX_CP <= cp <= MAX_CP:
        return cp
    return _CP.one(cp)


class ShelvedMoves(Shelved, Sequence[MoveEvent]):
    """A compacted game's :class:`PackedMoves` and evaluations put on a :class:`~livemon.live.shelf.Shelf`:
    read from it on access; in memory only its key and length.

    >>> from livemon.live.shelf import Shelf
    >>> moves = [MoveEvent("g", 1, "e2e4", "e4", ""), MoveEvent("g", 2, "e7e5", "e5", "", eval_cp=-20)]
    >>> shelved = ShelvedMoves(Shelf(), "g", PackedMoves("g", moves), [20, 30, -20])
    >>> list(shelved) == moves, shelved[-1].san, len(shelved), shelved.evals
    (True, 'e5', 2, (20, 30, -20))
    """

    __slots__ = ()

    def __init__(self, shelf: Shelf, key: str, moves: PackedMoves, evals: Sequence[int | None]) -> None:
        super().__init__(shelf, key, (moves, tuple(evals)), len(moves))

    @property
    def _record(self) -> tuple[PackedMoves, tuple[int | None, ...]]:
        return self.record  # type: ignore[no-any-return]

    @property
    def evals(self) -> tuple[int | None, ...]:
        """The value of each position (as :attr:`LiveGame.evals`)."""
        return self._record[1]

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        return self._record[0][i]

    def __iter__(self) -> Iterator[MoveEvent]:
        return iter(self._record[0])


class LiveGame:
    """The positions of one live game and how far its plies are scored — sans I/O.

    Position ``j`` is the position after ply ``j`` (0 = the start). A position is
    valued by rule when terminal. Otherwise **one rule** says where its value comes
    from, for every driver alike (a feed, ``analyse``, ``export``, the demo): a game
    is valued from its ``[%eval]`` comments while every ply of it carries one (a
    terminal position needs none; the start position by the comment before the
    first move, else by the engine); from the first ply that carries none, the
    whole game is valued by the engine, and its plies scored from the comments are
    scored again (:meth:`drop_comments`: the caller rolls the estimates back). So a
    game's figures depend only on its moves and comments, never on how they
    arrived. A ply valued from a comment carries no E(c) decision (no MultiPV).

    Per position it keeps its value by rule and whether it is forced (one legal-move
    generation per position) and its evaluation; its board and analysis only until
    both plies next to it are scored (the newest position's always: the game goes on
    from it; a correction rebuilds the one it goes back to from the moves); the FEN of
    the newest position only (the faces show that one). A finished game whose
    plies are all scored is :meth:`compact`-ed: boards, analyses and per-ply caches are
    released, the moves (without their FENs) and evaluations kept; a correction
    rebuilds the positions from the moves (:meth:`expand`).
    """

    __slots__ = ("game_id", "boards", "rules", "forced", "fen", "evals", "moves", "analyses", "pending", "start_fen",
                 "start_eval", "comments", "epoch", "epochs", "compacted", "expanded", "_candidates",
                 "_unscored")  # slots: ~1,000 finished games an hour are kept

    def __init__(self, game_id: str):
        self.game_id = game_id
        self.boards: list[chess.Board | None] = []  # None: released (both plies next to it scored)
        self.rules: list[int | None] = []  # value by rule of each position (terminal), None: not terminal
        self.forced: list[bool] = []  # one legal move (or none) in each position
        self.fen = chess.STARTING_FEN  # FEN of the newest position, made once per move
        self.evals: list[int | None] = []  # value of each position so far (None: not known yet)
        self.moves: list[MoveEvent] | LiveMoves = []  # LiveMoves: the settled ones packed (:meth:`pack`)
        self.analyses: dict[int, PositionAnalysis | None] = {}  # None: the engine gave up
        self.pending: set[int] = set()  # plies waiting for a value
        self.start_fen: str | None = None  # FEN before the first move
        self.start_eval: int | None = None  # the [%eval] before the first move, if any
        self.comments = True  # valued from [%eval] comments: every ply so far carries one
        self.epoch = 0  # counts the corrections: a position added after one is another position
        self.epochs: list[int] = []  # the epoch each position was added in: an analysis request's token
        self.compacted = False
        self.expanded = False  # rebuilt after a compaction (a corrected finished game)
        self._candidates: set[int] = set()  # pending plies whose positions got a value since the last ready()
        self._unscored = 0

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def scored(self) -> range | set[int]:
        """The plies handed to the estimator (all but the pending ones: plies are scored once each)."""
        if not self.pending:
            return range(1, len(self.moves) + 1)
        return set(range(1, len(self.moves) + 1)) - self.pending

    def _add_position(self, board: chess.Board) -> None:
        rule, forced = position_facts(board)  # once: move generation is the costly part of scoring
        self.boards.append(board)
        self.epochs.append(self.epoch)
        self.rules.append(rule)
        self.forced.append(forced)

    def add_move(self, ev: MoveEvent) -> list[int]:
        """Append the next ply; returns the position indices that need the engine."""
        if ev.ply != len(self.moves) + 1:
            raise ValueError(f"{self.game_id}: ply {ev.ply} does not follow ply {len(self.moves)}")
        if self.compacted:
            self.expand()
        if not self.boards:
            self.start_fen = ev.fen_before
            self.start_eval = ev.start_eval_cp
            self._add_position(board_from_fen(ev.fen_before))
            self.evals.append(_shared(self.value(0)[1]))
        board = self.board(-1).copy(stack=False)
        board.push(chess.Move.from_uci(ev.uci))
        self.moves.append(_kept(ev, self.game_id))
        self._add_position(board)
        self.fen = fast_fen(board)
        self.evals.append(_shared(self.value(ev.ply)[1]))
        self.pending.add(ev.ply)
        self._candidates.add(ev.ply)
        return [j for j in ((0, ev.ply) if ev.ply == 1 else (ev.ply,)) if self.needs_engine(j)]

    def truncate(self, from_ply: int) -> list[int]:
        """Withdraw plies ``from_ply`` on (the caller rolls back the estimator).

        Returns the position indices that need the engine again: after a compaction the
        analysis of the position the game goes on from (the cache answers it).
        """
        again: list[int] = []
        if self.compacted:
            self.expand()
            keep = max(from_ply - 1, 0)
            if keep and keep <= len(self.moves) and self.needs_engine(keep):
                again.append(keep)
        keep = max(from_ply - 1, 0)
        moves = self.moves
        if isinstance(moves, LiveMoves) and keep >= len(moves.head):
            del moves.tail[keep - len(moves.head):]
        else:
            self.moves = list(moves)[:keep]
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
        self.fen = fast_fen(self.board(-1)) if self.boards else chess.STARTING_FEN
        return again

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
            board.push(chess.Move.from_uci(ev.uci))
        return board.copy(stack=False)

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
        compacted game)."""
        return all(ev.eval_cp is not None or self.rules[k] is not None for k, ev in enumerate(self.moves, 1))

    def drop_comments(self, comments: bool = False) -> list[int]:
        """Value the game from the engine (``comments`` False) or from its comments again: every ply
        unscored, every position revalued. Returns the positions that need the engine; the caller
        rolls the game's scored plies back in the estimates first."""
        start = self.start_fen or chess.STARTING_FEN
        start_eval = self.start_eval
        moves = list(self.moves)
        self.moves, self.boards, self.rules, self.forced, self.evals, self.epochs = [], [], [], [], [], []
        self.analyses, self.pending, self._candidates = {}, set(), set()
        self.compacted = self.expanded = False
        self.comments = comments
        positions: list[int] = []
        for k, ev in enumerate(moves, 1):
            if k == 1:
                ev = MoveEvent(ev.game_id, 1, ev.uci, ev.san, start, ev.clock, ev.emt, ev.eval_cp, ev.feed, start_eval)
            positions.extend(self.add_move(ev))
        return sorted(set(positions))

    def value(self, j: int) -> tuple[bool, int | None]:
        """(known, value) of position ``j``: known False while an analysis is awaited."""
        rule = self.rules[j]
        if rule is not None:
            return True, rule
        comment = self._comment(j)
        if comment is not None:
            return True, comment
        if j not in self.analyses:
            return False, None
        analysis = self.analyses[j]
        return True, None if analysis is None else analysis.score

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
                out.append(scored_ply(self.game_id, k, board, chess.Move.from_uci(ev.uci), before, after,
                                      source, ev.san, forced=self.forced[k - 1], zobrist=zobrist, uci=ev.uci))
            self._release(k - 1)
            self._release(k)
        return out

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
        """Pack the moves through ply ``through`` (:class:`LiveMoves`; the core's ``_pack_settled`` packs a live
        game's settled plies a chunk at a time)."""
        moves = self.moves
        if self.compacted or through > len(moves):
            return
        if not isinstance(moves, LiveMoves):
            self.moves = LiveMoves(PackedMoves(self.game_id, moves[:through]), moves[through:])
        elif through > len(moves.head):
            n = len(moves.head)
            self.moves = LiveMoves(moves.head.extended(moves.tail[:through - n]), moves.tail[through - n:])

    @property
    def settled(self) -> bool:
        """Every ply scored: nothing awaited from the engine for it."""
        return not self.pending

    def compact(self, shelf: Shelf | None = None) -> None:
        """Release the per-position state of a settled game (boards, analyses, per-ply caches).

        Kept: the moves without their FENs (duplicates and corrections are recognised,
        the board message shows the last move and clocks), the evaluations, the newest FEN;
        with a ``shelf``, the moves and evaluations are put there (:class:`ShelvedMoves`).
        """
        if self.compacted or self.pending or not self.moves:
            return
        self.boards, self.rules, self.forced, self.analyses, self.epochs = [], [], [], {}, []
        self._candidates, self.pending = set(), set()  # fresh sets: a set keeps the table it grew to
        moves = self.moves
        packed = moves.head.extended(moves.tail) if isinstance(moves, LiveMoves) else PackedMoves(self.game_id, moves)
        if shelf is None:
            self.moves = packed  # type: ignore[assignment]
        else:
            self.moves = ShelvedMoves(shelf, self.shelf_key, packed, self.evals)  # type: ignore[assignment]
            self.evals = []  # in the record: :meth:`evaluations`
        self.compacted = True

    @property
    def shelf_key(self) -> str:
        """The key of this game's record on a shelf (:meth:`compact`)."""
        return f"moves {self.game_id}"

    def evaluations(self) -> tuple[int | None, ...]:
        """The value of each position (:attr:`evals`, read from the shelf for a shelved game)."""
        moves = self.moves
        return moves.evals if isinstance(moves, ShelvedMoves) else tuple(self.evals)

    def expand(self) -> None:
        """Rebuild the positions of a compacted game from its first FEN and moves (before a correction).

        Every ply stays scored; the analyses are not kept (the caller asks the engine's
        cache again for the one position the game goes on from).
        """
        if not self.compacted or self.start_fen is None:
            return
        if isinstance(self.moves, ShelvedMoves):
            self.evals = [_shared(v) for v in self.moves.evals]
        self.moves = list(self.moves)
        board = board_from_fen(self.start_fen)
        self._add_position(board)
        for ev in self.moves:
            board = board.copy(stack=False)
            board.push(chess.Move.from_uci(ev.uci))
            self._add_position(board)
        self.compacted = False
        self.expanded = True
