"""The one PGN reader: python-chess's parser with one visitor, from a game's start or from its ply N.

Every game livemon reads from PGN text -- a live feed's round, the replay, ``analyse``, ``calibrate``,
the TUI demo, ``forecast``, ``plan`` -- is read here, by :class:`PlyReader` driven by ``chess.pgn.read_game`` (the
way python-chess's own ``GameBuilder`` is): the tags (unescaped), the start position, and for each ply of
the main line its move with the ``[%clk]``, ``[%emt]`` and ``[%eval]`` of the comments after it, read as
python-chess's ``GameNode.clock()``/``emt()``/``eval()`` read them. Variations are skipped unread.

**Legality.** A move is read by parsing its SAN on the board before it (python-chess's
``Board.parse_san``): a SAN that names no legal move there ends the game's reading with that error
(:attr:`Read.error`), except under the DGT rule below; so does a null move (``--``). The plies a
:class:`Read` gives are legal from its start position by construction, and the tracker does not check them
again (the core checks every message it receives, whoever sent it).

**DGT boards.** At game end the arbiter or players put the kings on the centre squares to signal the
result and LiveChess may send that as moves. Rule (conservative, after lichess's
``RelayInputSanity.fixDgtKingsInTheCenter``): when the first illegal move of the main line is a king
move and it and whatever follows it are at most two king moves at the very end of the main line, they
are dropped (:attr:`Read.dropped`) and the game is read without them. A legal final king move is kept
(it cannot be told from a real one); an illegal king move in the middle of a game is an error like any.

**Resuming.** :func:`read_from` reads the movetext that follows ply N on the board at ply N, so a game
that only grows costs its new moves, not a parse from its first. The text it is given must start where
the reader stood after ply N, outside any comment or variation: :attr:`Read.resumable` says when the
text just read may be resumed so (it ended in ``*`` at the top level of the main line, nothing after it,
no ``;`` comment, ``%`` line or blank line in its movetext), and :func:`resume_point` where.

>>> read = read_pgn('[White "A"]\\n\\n1. e4 { [%clk 1:30:00] [%eval 0.3] } e5 { [%clk 1:29:50] } 2. Nf3 *\\n')
>>> [(p.uci, p.clock, p.eval_cp) for p in read.plies], read.resumable, read.sans
([('e2e4', 5400.0, 30), ('e7e5', 5390.0, None), ('g1f3', None, None)], True, 3)
>>> after = read_from(' 2... Nc6 { [%clk 1:29:40] } *\\n', read.board())
>>> [(p.uci, p.clock) for p in after.plies], after.resumable
([('b8c6', 5380.0)], True)
>>> dgt = read_pgn('[White "A"]\\n\\n1. e4 e5 2. Ke4 Kd5 1/2-1/2\\n')
>>> [p.uci for p in dgt.plies], dgt.dropped, dgt.error
(['e2e4', 'e7e5'], ['Ke4', 'Kd5'], None)
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import chess
import chess.engine
import chess.pgn

from livemon.live.fields import sane_seconds
from livemon.live.pgn import unescape_tag
from livemon.live.values import fast_fen
from livemon.rating.evaluation import score_cp

_KING_MOVE = re.compile(r"^Kx?[a-h][1-8][+#]?[!?]*$")
_BLANK_OR_ESCAPE = re.compile(r"\n[^\S\n]*\n|\n%|;")
_VARIES_PLY_N = re.compile(r"(?:\s+|\{[^}]*\}|\$\d+|[!?]+)*\(")
"""A movetext whose first token, after comments, NAGs and move suffixes, opens a variation."""
"""What makes a movetext unsafe to resume in: a blank line (python-chess ends the game there), a ``%`` line or a
``;`` comment (skipped to the end of the line, wherever the next text would be appended)."""


@dataclass(frozen=True)
class Ply:
    """One ply as a source knows it; only ``uci`` identifies it."""

    uci: str
    clock: float | None = None
    emt: float | None = None
    eval_cp: int | None = None
    eval_mate: int | None = None


@dataclass
class Read:
    """One game as :class:`PlyReader` read it."""

    headers: chess.pgn.Headers
    start: chess.Board
    """The board before the first ply read (the game's start, or ply N's board for :func:`read_from`)."""
    plies: list[Ply] = field(default_factory=list)
    start_eval: int | None = None
    """The ``[%eval]`` of the comment before the first move (White's view), if any (a read from the start only)."""
    error: Exception | None = None
    """Why the game could not be read whole (an illegal or unreadable move, a bad FEN); None when it was."""
    dropped: list[str] = field(default_factory=list)
    """DGT end-of-game king moves dropped (their SANs)."""
    resumable: bool = False
    """The text ended in ``*`` at the top level of a clean main line: :func:`resume_point` may cut it."""
    sans: int = 0
    """SAN tokens parsed: the work the read did."""
    written: list[tuple[str, str]] = field(default_factory=list)
    """The plies from :attr:`written_from` on as the core is sent them: ``(SAN, FEN before it)`` each, made while
    the parser stood on the board before the move (its SAN's check or mate suffix once the parser has played it)."""
    written_from: int = 0
    """The index of the first ply :attr:`written` holds (those before it were sent already)."""
    end: chess.Board | None = None
    """The board after the plies read (the parser's own), None after an error or dropped DGT moves."""

    def board(self) -> chess.Board:
        """The board after the plies read (replayed from :attr:`start`: the plies are legal there)."""
        b = self.start.copy(stack=False)
        for p in self.plies:
            b.push(chess.Move.from_uci(p.uci))
        return b


def comment_seconds(regex: re.Pattern[str], comment: str) -> float | None:
    """``[%clk]`` / ``[%emt]`` in a comment, as python-chess's ``GameNode.clock``/``emt`` read it."""
    m = regex.search(comment)
    if m is None:
        return None
    return int(m.group("hours")) * 3600 + int(m.group("minutes")) * 60 + float(m.group("seconds"))


def comment_mate(comment: str) -> int | None:
    """The distance to mate of an ``[%eval #n]`` in a comment (moves, White's view), for display; None when the
    comment has no mate.

    >>> comment_mate("[%eval #-2] [%clk 0:01:00]"), comment_mate("[%eval 0.35]"), comment_mate("")
    (-2, None, None)
    """
    m = chess.pgn.EVAL_REGEX.search(comment)
    return int(m.group("mate")) if m is not None and m.group("mate") else None


def comment_eval(comment: str, turn: chess.Color) -> int | None:
    """``[%eval]`` in a comment in White-POV centipawns (mates at ±3900, clamped), as python-chess's
    ``GameNode.eval()`` reads it; ``turn``: the side to move after the move the comment follows.

    >>> comment_eval("[%eval 0.31]", chess.BLACK), comment_eval("[%eval #-2]", chess.WHITE), comment_eval("x", True)
    (31, -3900, None)
    """
    m = chess.pgn.EVAL_REGEX.search(comment)
    if m is None:
        return None
    score: chess.engine.Score
    if m.group("mate"):
        mate = int(m.group("mate"))
        score = chess.engine.Mate(mate)
        if mate == 0:  # python-chess: the side to move after mate is the side mated
            return score_cp(chess.engine.PovScore(score, turn))
    else:
        score = chess.engine.Cp(round(float(m.group("cp")) * 100))
    return score_cp(chess.engine.PovScore(score if turn else -score, turn))


def _ply(uci: str, turn_after: chess.Color, comment: str) -> Ply:
    if not comment:
        return Ply(uci)
    return Ply(uci, sane_seconds(comment_seconds(chess.pgn.CLOCK_REGEX, comment)),
               sane_seconds(comment_seconds(chess.pgn.EMT_REGEX, comment)), comment_eval(comment, turn_after),
               comment_mate(comment))


class PlyReader(chess.pgn.BaseVisitor[Read]):
    """The visitor: tags, start, and the main line's plies with their comments' clocks and evals.

    ``resume``: the board at ply N, when the game is read from ply N on (:func:`read_from`): the parser's
    board is set to it, and a comment before the first move read belongs to ply N (sent already), not to
    the game's start.
    """

    def __init__(self, resume: chess.Board | None = None, write_from: int = 0) -> None:
        self._resume = resume
        self._write_from = write_from
        self._headers = chess.pgn.Headers()  # python-chess's defaults, as its GameBuilder gives them
        self._start: chess.Board | None = None
        self._moves: list[tuple[str, chess.Color]] = []  # (uci, side to move after it)
        self._written: list[tuple[str, str]] = []  # (SAN, FEN before) of each move
        self._suffix_due = False  # the last SAN written still waits for its '+' or '#' (the board after it)
        self._board: chess.Board | None = None  # the parser's board
        self._comments: list[list[str]] = []  # per move: the comments after it
        self._start_comment: list[str] = []
        self._error: Exception | None = None
        self._tail: list[str] | None = None  # SANs from the first illegal king move on (the DGT rule)
        self._variations = 0  # open variations (skipped)
        self._after_star = False  # the last thing read was a top-level '*'
        self._sans = 0

    def begin_headers(self) -> chess.pgn.Headers:
        return self._headers

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self._headers[tagname] = unescape_tag(tagvalue)

    def visit_board(self, board: chess.Board) -> None:
        if self._start is not None:
            return
        self._board = board
        if self._resume is not None:
            _assume(board, self._resume)
            self._start = self._resume
        else:
            self._start = board.copy(stack=False)

    def begin_variation(self) -> chess.pgn.SkipType:
        self._variations += 1
        self._after_star = False
        return chess.pgn.SKIP

    def end_variation(self) -> None:
        self._variations -= 1

    def visit_comment(self, comment: str) -> None:
        self._after_star = False
        if self._error is not None or self._tail is not None:
            return
        if self._moves:
            self._comments[-1].append(comment)
        elif self._resume is None:
            self._start_comment.append(comment)

    def visit_nag(self, nag: int) -> None:
        self._after_star = False

    def visit_result(self, result: str) -> None:
        self._after_star = result == "*"

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        """``Board.parse_san``, with the DGT rule: from the first illegal king move on, every main-line SAN is
        kept aside (a null move stands in for it) to be judged at the end of the game."""
        self._after_star = False
        if self._suffix_due:
            self._add_suffix(board)
        if self._tail is not None:
            self._tail.append(san)
            return chess.Move.null()
        if self._error is not None:
            return chess.Move.null()  # after an error (a ')' ended python-chess's skipping): nothing more is read
        self._sans += 1
        try:
            return board.parse_san(san)
        except chess.IllegalMoveError as exc:
            if not _KING_MOVE.match(san):
                raise
            self._tail = [san]
            self._error = exc  # stands unless the DGT rule drops the tail
            return chess.Move.null()

    def visit_move(self, board: chess.Board, move: chess.Move) -> None:
        if self._error is not None or self._tail is not None:
            return
        if not move:
            self._error = chess.IllegalMoveError(f"null move at ply {len(self._moves) + 1} in {board.fen()}")
            return
        if len(self._moves) >= self._write_from:
            # Board.san without its look-ahead push: the suffix is read on the board the parser makes next
            self._written.append((board._algebraic_without_suffix(move), fast_fen(board)))
            self._suffix_due = True
        self._moves.append((move.uci(), not board.turn))
        self._comments.append([])

    def _add_suffix(self, board: chess.Board) -> None:
        """The last SAN written gets the suffix ``Board.san`` gives it; ``board``: the board after its move (the
        parser's, before it plays anything more)."""
        self._suffix_due = False
        check = board.is_check()
        if check or board.is_variant_end():
            san, fen = self._written[-1]
            mate = (check and board.is_checkmate()) or board.is_variant_loss() or board.is_variant_win()
            self._written[-1] = (san + ("#" if mate else "+" if check else ""), fen)

    def handle_error(self, error: Exception) -> None:
        self._after_star = False
        if self._error is None:
            self._error = error

    def result(self) -> Read:
        if self._suffix_due and self._board is not None:
            self._add_suffix(self._board)
        start = self._start if self._start is not None else chess.Board()
        dropped: list[str] = []
        error = self._error
        if self._tail is not None:
            if len(self._tail) <= 2 and all(_KING_MOVE.match(s) for s in self._tail):
                dropped, error = self._tail, None
        plies = [_ply(uci, turn, " ".join(filter(None, comments)))
                 for (uci, turn), comments in zip(self._moves, self._comments)]
        start_comment = " ".join(filter(None, self._start_comment))
        start_eval = comment_eval(start_comment, start.turn) if start_comment else None
        resumable = (self._after_star and error is None and not dropped and not self._variations)
        end = self._board if error is None and not dropped and self._tail is None else None
        if end is not None:
            end.clear_stack()  # handed over to be kept (a tracker's live game): the position, not the game's moves
        return Read(self._headers, start, plies, start_eval, error, dropped, resumable, self._sans, self._written,
                    written_from=min(self._write_from, len(plies)), end=end)


def read_pgn(chunk: str, write_from: int = 0) -> Read | None:
    """One game's PGN text (a chunk of :func:`livemon.live.pgn.split_games`) read from its start; None when
    the text holds no game. python-chess's own failures (truly broken input) are a :attr:`Read.error`.
    ``write_from``: the plies sent already, whose SAN and FEN are not written (:attr:`Read.written`)."""
    try:
        read = chess.pgn.read_game(io.StringIO(chunk), Visitor=lambda: PlyReader(write_from=write_from))
    except Exception as exc:  # python-chess raises only on truly broken input
        return Read(chess.pgn.Headers({}), chess.Board(), error=ValueError(f"unreadable PGN ({exc})"))
    if read is not None and read.resumable:
        read.resumable = _clean(chunk, _movetext_start(chunk))
    return read


def read_from(movetext: str, board: chess.Board) -> Read:
    """The movetext that follows ply N (see :func:`resume_point`), read on ``board``, the board at ply N
    (not changed: the parser's own board is set to it).

    Its plies are those a read of the whole game from its start gives after ply N, with the same clocks
    and evals; a comment before its first move (one more for ply N) is not read. A text that opens with a
    variation (after comments and NAGs) is an alternative to ply N itself: nothing is read from it (no plies,
    not resumable), and the game is read whole.

    >>> start = read_pgn('[White "A"]\\n\\n1. Nc3 Nf6 2. e3 *\\n')
    >>> [p.uci for p in read_from(' { [%clk 0:01:00] } ( 2. Ne4 ) *', start.board()).plies]
    []
    """
    if _VARIES_PLY_N.match(movetext):  # an alternative to ply N: only the whole game's read knows ply N's move
        return Read(chess.pgn.Headers({}), board)
    # "{}" keeps the first line a continued line, as it is in the whole text: never a '%' line or an empty one
    try:
        read = chess.pgn.read_game(io.StringIO("{}" + movetext), Visitor=lambda: PlyReader(resume=board))
    except Exception as exc:  # python-chess raises only on truly broken input
        return Read(chess.pgn.Headers({}), board, error=ValueError(f"unreadable PGN ({exc})"))
    assert read is not None  # noqa: S101 - "{}" is a game
    if read.resumable:
        read.resumable = _clean(movetext, 0)
    return read


def _assume(board: chess.Board, position: chess.Board) -> None:
    """Set python-chess's fresh parser board to ``position`` (its pieces, side to move, castling rights, en
    passant square, move counters, variant), without a FEN round trip: a resumed read costs its moves only."""
    board.pawns, board.knights, board.bishops = position.pawns, position.knights, position.bishops
    board.rooks, board.queens, board.kings = position.rooks, position.queens, position.kings
    board.occupied_co = list(position.occupied_co)
    board.occupied, board.promoted = position.occupied, position.promoted
    board.turn, board.castling_rights, board.ep_square = position.turn, position.castling_rights, position.ep_square
    board.fullmove_number, board.halfmove_clock = position.fullmove_number, position.halfmove_clock
    board.chess960 = position.chess960


def resume_point(text: str) -> int:
    """Where a :attr:`Read.resumable` text is cut to be resumed: before its final ``*``, trailing space dropped.

    >>> text = '[White "A"]\\n\\n1. e4 { [%clk 1:00:00] } *\\n'
    >>> text[:resume_point(text)][-8:]
    '00:00] }'
    """
    return len(text[: text.rindex("*")].rstrip())


def _clean(text: str, start: int) -> bool:
    """The text ends in ``*`` and its movetext before it has no blank line, ``%`` line or ``;`` comment."""
    end = len(text.rstrip())
    return end > start and text[end - 1] == "*" and not _BLANK_OR_ESCAPE.search(text, start, end - 1)


def _movetext_start(chunk: str) -> int:
    """Where a chunk's movetext starts: after its leading tag, ``%`` and blank lines."""
    end = 0
    for line in chunk.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("%") and not stripped.startswith("["):
            break
        end += len(line)
    return max(end - 1, 0)
