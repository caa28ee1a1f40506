"""The values every layer shares about an engine's work — imports no engine.

An :class:`EngineProfile` (engine id and version, search limit, MultiPV) names
every evaluation, because a score or a c̄ only means something for the engine
and limit that produced it. A :class:`PositionAnalysis` is one MultiPV analysis
of one position. Both live here, not in the engine adapter, so that the store,
the bus and the live core use them without importing an engine.

>>> p = EngineProfile.parse("Stockfish 15.1 depth=12 multipv=4")
>>> p, p.name == "Stockfish 15.1 depth=12 multipv=4"
(EngineProfile(engine='Stockfish 15.1', depth=12, nodes=None, multipv=4), True)
"""

from __future__ import annotations

import functools
import json
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import chess

from livemon.live.memo import Memo

COMMENTS_PROFILE = "[%eval] comments"
"""The pinned "profile" of a driver with no engine (``analyse`` without one, the TUI demo): positions are valued
from the source's ``[%eval]`` comments (:class:`~livemon.live.analysis.LiveGame`'s rule) and nothing that needs a
MultiPV search (the estimates, the field, screening) can be made. Under any engine profile every position is
searched and the comments only stand in on the eval bar while the engine is busy."""
_PROFILE = re.compile(r"^(?P<engine>.+) (?P<limit>depth|nodes)=(?P<n>\d+) multipv=(?P<multipv>\d+)$")


@dataclass(frozen=True)
class EngineProfile:
    """What an evaluation depends on: engine, version, limit and MultiPV.

    >>> EngineProfile("Stockfish 15.1", depth=12, nodes=None, multipv=4).name
    'Stockfish 15.1 depth=12 multipv=4'
    """

    engine: str
    depth: int | None
    nodes: int | None
    multipv: int

    @functools.cached_property
    def name(self) -> str:
        """The profile's name (made once: the position cache reads it for every position it is asked)."""
        limit = f"nodes={self.nodes}" if self.nodes else f"depth={self.depth}"
        return f"{self.engine} {limit} multipv={self.multipv}"

    @classmethod
    def parse(cls, name: str) -> "EngineProfile":
        """The profile a name stands for (the inverse of :attr:`name`); ValueError if it is none.

        >>> EngineProfile.parse("Stockfish 15.1 nodes=100000 multipv=4")
        EngineProfile(engine='Stockfish 15.1', depth=None, nodes=100000, multipv=4)
        >>> EngineProfile.parse("depth 12")
        Traceback (most recent call last):
        ...
        ValueError: not an engine profile name (e.g. 'Stockfish 15.1 depth=12 multipv=4'): 'depth 12'
        """
        m = _PROFILE.match(name)
        if not m:
            raise ValueError(f"not an engine profile name (e.g. 'Stockfish 15.1 depth=12 multipv=4'): {name!r}")
        n = int(m["n"])
        return cls(m["engine"], n if m["limit"] == "depth" else None, n if m["limit"] == "nodes" else None,
                   int(m["multipv"]))

    def with_limit(self, depth: int | None = None, nodes: int | None = None) -> "EngineProfile":
        """The same engine and MultiPV at another search limit.

        >>> EngineProfile("SF", 12, None, 4).with_limit(depth=6).name
        'SF depth=6 multipv=4'
        """
        return EngineProfile(self.engine, depth, nodes, self.multipv)


_SCAN: Callable[[str, int], tuple[Any, int]] = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _json_object(text: str) -> Any:
    """``json.loads(text)``: the C scanner it runs, called at once on a text that is one JSON value and nothing
    else (what :meth:`PositionAnalysis.to_json` writes: the position cache reads one a position, and the wrapper
    around the scanner is a third of ``json.loads``'s time on one); anything else through ``json.loads``.

    >>> _json_object('{"a":[1,2]}'), _json_object(' {"a":1} ')
    ({'a': [1, 2]}, {'a': 1})
    """
    if type(text) is str:
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:
            end = -1
        if end == len(text):
            return value
    return json.loads(text)


@dataclass(frozen=True)
class PositionAnalysis:
    """One MultiPV analysis of a position.

    ``score`` is the evaluation of the position (the best line), White's view,
    centipawns, mates at ±3900. ``candidates`` are the MultiPV first moves with
    their scores on the same scale, best first: the best serves the gain, all
    serve the E(c) posterior. ``mate`` is the best line's distance to mate when
    it is one (moves, White's view: 3 White mates in 3, -2 Black mates in 2),
    for display only (every figure reads ``score``); None when it is not a mate
    or unknown (an analysis stored without it).

    >>> a = PositionAnalysis(31, (("e2e4", 31), ("d2d4", 25)), 12, 9000)
    >>> PositionAnalysis.from_json(a.to_json()) == a, "mate" in a.to_json()
    (True, False)
    >>> m = PositionAnalysis(3900, (("h5f7", 3900),), 12, 900, mate=1)
    >>> PositionAnalysis.from_json(m.to_json()).mate
    1
    """

    score: int
    candidates: tuple[tuple[str, int], ...]
    depth: int = 0
    nodes: int = 0
    mate: int | None = None

    def to_json(self) -> str:
        d: dict[str, object] = {"score": self.score, "candidates": self.candidates, "depth": self.depth,
                                "nodes": self.nodes}
        if self.mate is not None:
            d["mate"] = self.mate
        return json.dumps(d, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "PositionAnalysis":
        d = _json_object(text)
        mate = d.get("mate")
        return cls(d["score"], tuple([(m, s) if type(s) is int else (m, int(s)) for m, s in d["candidates"]]),
                   d["depth"], d["nodes"], mate if type(mate) is int else None)  # JSON's ints: int or bool

    def mover_values(self, white_to_move: bool, played: str) -> tuple[list[float], int]:
        """The candidates' values in pawns from the mover's view (the floats of :meth:`candidates_for_mover`)
        and the index of the candidate ``played`` (its first, -1 when it is not one): what a decision reads.

        >>> PositionAnalysis(30, (("e2e4", 30), ("d2d4", 25)), 8).mover_values(False, "d2d4")
        ([-0.3, -0.25], 1)
        """
        sign = 1 if white_to_move else -1
        pawns = _PAWNS
        values = []
        index = -1
        for i, (move, cp) in enumerate(self.candidates):
            v = sign * cp
            f = pawns.get(v)
            if f is None:
                f = pawns.put(v, v / 100.0)
            values.append(f)
            if index < 0 and move == played:
                index = i
        return values, index

    def candidates_for_mover(self, white_to_move: bool) -> list[tuple[str, float]]:
        """Candidates as (uci, value in pawns from the mover's view), the agent's input."""
        sign = 1 if white_to_move else -1
        pawns = _PAWNS
        out = []
        for move, cp in self.candidates:
            v = sign * cp
            f = pawns.get(v)
            if f is None:  # one float object per value: a decision's values are kept for the whole event
                f = pawns.put(v, v / 100.0)
            out.append((move, f))
        return out


def board_from_fen(fen: str) -> chess.Board:
    """The position of a FEN, in Chess960 mode when its castling rights only make sense there.

    A Chess960 start (king or rooks off e1/a1/h1, with castling rights) read as
    standard chess loses its castling rights, and every castling move after it
    would be refused; such a FEN gives a ``chess960`` board (castling written
    king-takes-rook, the engine told ``UCI_Chess960``). Any other FEN gives a
    standard board, so standard games are unchanged. ValueError for a bad FEN.

    >>> board_from_fen("1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w KQkq - 0 1").chess960
    True
    >>> board_from_fen(chess.STARTING_FEN).chess960
    False
    """
    board = chess.Board(fen)
    if board.castling_rights:
        as960 = chess.Board(fen, chess960=True)
        if as960.clean_castling_rights() != board.clean_castling_rights():
            return as960
    return board


MOVES_KEPT = 32_768
"""Moves remembered by their UCI text (a few thousand occur in practice; cleared when full)."""
_MOVES = Memo[str, chess.Move](MOVES_KEPT)


def move_of(uci: str) -> chess.Move:
    """``chess.Move.from_uci(uci)``, one shared object per text (a move is a value: nothing changes it): the live path
    reads each ply's UCI several times (its check, its push, its scoring). ValueError for a bad text.

    >>> move_of("e7e8q") == chess.Move.from_uci("e7e8q"), move_of("e2e4") is move_of("e2e4")
    (True, True)
    """
    move = _MOVES.get(uci)
    return _MOVES.put(uci, chess.Move.from_uci(uci)) if move is None else move


_SQUARES, _KING_ATTACKS = chess.BB_SQUARES, chess.BB_KING_ATTACKS
_RANK_1, _RANK_2, _RANK_7, _RANK_8 = chess.BB_RANK_1, chess.BB_RANK_2, chess.BB_RANK_7, chess.BB_RANK_8


def _type_at(pieces: list[int], square: int) -> int:
    """The index in ``pieces`` (pawns … kings) of the bitboard holding the occupied ``square`` (a bitboard)."""
    for i, bb in enumerate(pieces):
        if bb & square:
            return i
    raise ValueError("an empty square")  # pragma: no cover - the caller knows it is occupied


def pushed(board: chess.Board, move: chess.Move) -> chess.Board:
    """``board.copy(stack=False)`` with ``move`` pushed (``move`` pseudo-legal): the same board, attribute for
    attribute, stack included. A standard board's ordinary move (no castling, promotion, en-passant capture,
    drop, or capture of a king) is made here on the bitboards, into a new board; python-chess's copy and push make
    the rest. The live path makes one board per move.

    >>> board = chess.Board("r3k2r/pp1ppppp/8/2pP4/8/8/PPP1PPPP/R3K2R w KQkq c6 0 3")
    >>> moves = [chess.Move.from_uci(u) for u in ("d5c6", "e1g1", "a1a7", "e1f1", "e1d2", "d5d6")]
    >>> def ref(m):
    ...     b = board.copy(stack=False); b.push(m); return b
    >>> all(pushed(board, m) == ref(m) and pushed(board, m).move_stack == [m] for m in moves)
    True
    """
    start, to = move.from_square, move.to_square
    from_bb, to_bb = _SQUARES[start], _SQUARES[to]
    turn = board.turn
    ours, theirs = board.occupied_co[turn], board.occupied_co[not turn]
    kings = board.kings
    if (type(board) is not chess.Board or move.promotion or move.drop or not ours & from_bb or ours & to_bb
            or kings & to_bb or kings & from_bb and not _KING_ATTACKS[start] & to_bb
            or to == board.ep_square and board.pawns & from_bb):
        other = board.copy(stack=False)  # castling, a promotion, an en-passant capture, a drop, a null move, a variant
        other.push(move)
        return other
    touched = from_bb | to_bb
    rights = board.castling_rights
    if rights:  # cleaned in full on a board read from a FEN (an empty stack), as the copy's push would; kept else
        rights = board.clean_castling_rights() & ~touched
    pieces = [board.pawns, board.knights, board.bishops, board.rooks, board.queens, kings]  # by piece type - 1
    captured = theirs & to_bb
    if captured:  # the captured piece goes (not a king: python-chess's push above)
        theirs ^= to_bb
        pieces[_type_at(pieces, to_bb)] ^= to_bb
    mover = _type_at(pieces, from_bb)
    pieces[mover] ^= touched
    ep = None
    pawn = mover == 0
    if pawn:
        if to - start == 16 and _RANK_2 & from_bb:
            ep = start + 8
        elif start - to == 16 and _RANK_7 & from_bb:
            ep = start - 8
    elif mover == 5 and not board.promoted & from_bb:  # a king's move: its side's castling rights go
        rights &= ~(_RANK_1 if turn else _RANK_8)
    # the attributes set one by one, not as a dict: the board keeps CPython's compact per-instance layout, which
    # every later read of it (its legality, facts, key and successor) finds faster
    copy: chess.Board = object.__new__(chess.Board)
    copy.pawns, copy.knights, copy.bishops, copy.rooks, copy.queens, copy.kings = pieces
    moved = ours ^ touched
    copy.occupied_co = [theirs, moved] if turn else [moved, theirs]
    copy.occupied = board.occupied ^ from_bb | to_bb
    promoted = board.promoted
    copy.promoted = promoted & ~touched | (to_bb if promoted & from_bb else 0) if promoted else 0
    copy.chess960 = board.chess960
    copy.ep_square = ep
    copy.castling_rights = rights
    copy.turn = not turn
    copy.fullmove_number = board.fullmove_number if turn else board.fullmove_number + 1
    copy.halfmove_clock = 0 if pawn or captured else board.halfmove_clock + 1
    copy.move_stack = [move]  # equal to the Move python-chess pushes (no promotion, no drop here)
    copy._stack = [chess._BoardState(board)]
    return copy


def position_key(board: chess.Board) -> str:
    """The cache key of a position: its EPD (FEN without the move counters).

    >>> position_key(chess.Board())
    'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -'
    """
    return fast_epd(board)


_PAWNS = Memo[int, float](20_000)
"""Centipawns (mover's view) -> pawns, the float objects shared by every decision's values (engine
scores are clamped to ±3900 cp: never cleared in practice)."""
RANKS_KEPT = 32_768
"""Ranks' texts remembered (~130 B each with their 7-byte keys; a clear rebuilds them: a long event meets ever new ranks)."""
_RANKS = Memo[bytes, str](RANKS_KEPT)
_RUNS = tuple(("1" * n, str(n)) for n in range(8, 1, -1))
_PACK = struct.Struct("<7Q").pack


def _rank_text(key: bytes) -> str:
    """One rank of a FEN from its 7 bytes (pawns … kings, white), e.g. ``r1bqkb1r``: each piece type's byte read
    a piece at a time (a rank holds at most 8).

    >>> _rank_text(bytes((0, 0, 0, 0b10000001, 0, 0b00010000, 0b00010001)))
    'R3K2r'
    """
    white = key[6]
    out = ["1"] * 8
    for pt, sym in enumerate("pnbrqk"):
        byte = key[pt]
        while byte:
            low = byte & -byte
            out[low.bit_length() - 1] = sym.upper() if white & low else sym
            byte ^= low
    text = "".join(out)
    for run, digit in _RUNS:
        text = text.replace(run, digit)
    return text


def _packed(board: chess.BaseBoard) -> bytes:
    """The seven bitboards (pawns … kings, white's pieces) packed end to end, little-endian, in one 56-byte text,
    where byte ``8·t + r`` holds rank ``r`` of bitboard ``t``: every eighth byte from ``r`` on is rank ``r``'s key."""
    return _PACK(board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                 board.occupied_co[chess.WHITE])


def rank_texts(board: chess.BaseBoard) -> list[str]:
    """The texts of the board's ranks, rank 8 first (what ``board.board_fen()`` joins with "/"): each rank read
    from the piece bitboards (:func:`_packed`) and its text looked up (a game has few distinct ranks).

    >>> rank_texts(chess.Board())[:3]
    ['rnbqkbnr', 'pppppppp', '8']
    """
    packed = _packed(board)
    get = _RANKS.get
    keys = (packed[7::8], packed[6::8], packed[5::8], packed[4::8], packed[3::8], packed[2::8], packed[1::8], packed[0::8])
    texts = [get(keys[0]), get(keys[1]), get(keys[2]), get(keys[3]), get(keys[4]), get(keys[5]), get(keys[6]),
             get(keys[7])]
    if None in texts:  # a rank not met yet
        return [_RANKS.put(key, _rank_text(key)) if text is None else text for key, text in zip(keys, texts)]
    return cast(list[str], texts)


def moved_rank_texts(board: chess.Board, before: list[str], move: chess.Move) -> list[str]:
    """:func:`rank_texts` of ``board``, a standard board made by ``move`` from the position whose rank texts are
    ``before``: ``before`` with the ranks of the move's two squares read again. A move of standard chess or
    Chess960 changes no other rank (a castling rook stays on the king's rank, a pawn taken en passant stands
    on the capturing pawn's rank).

    >>> board = chess.Board("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")
    >>> def after(m):
    ...     b = board.copy(stack=False); b.push(m); return b
    >>> moves = [chess.Move.from_uci(u) for u in ("e5d6", "e1g1", "a1a8", "e5e6")]
    >>> all(moved_rank_texts(after(m), rank_texts(board), m) == rank_texts(after(m)) for m in moves)
    True
    """
    packed = _packed(board)
    texts = before.copy()
    for rank in (move.from_square >> 3, move.to_square >> 3):
        key = packed[rank::8]
        text = _RANKS.get(key)
        texts[7 - rank] = _RANKS.put(key, _rank_text(key)) if text is None else text
    return texts


def fast_board_fen(board: chess.BaseBoard) -> str:
    """``board.board_fen()``, about 10x faster: its :func:`rank_texts` joined. The live path makes one per move.

    >>> b = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4")
    >>> fast_board_fen(b) == b.board_fen()
    True
    """
    return "/".join(rank_texts(board))


def fast_epd(board: chess.Board) -> str:
    """``board.epd()`` (no operations), with :func:`fast_board_fen`.

    >>> b = chess.Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    >>> fast_epd(b) == b.epd(), fast_fen(b) == b.fen()
    (True, True)
    """
    return epd_of(board, fast_board_fen(board))


def epd_of(board: chess.Board, board_fen: str) -> str:
    """``board.epd()`` (no operations) when ``board_fen`` is ``board.board_fen()``: the side to move, castling
    rights and en-passant square put after it."""
    ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else None
    return " ".join((board_fen, "w" if board.turn == chess.WHITE else "b",
                     _castling(board) if board.castling_rights else "-", chess.SQUARE_NAMES[ep] if ep is not None else "-"))


CASTLING_KEPT = 8_192
"""Castling fields remembered (~300 B each; cleared when full)."""
_CASTLING = Memo[tuple[int, ...], str](CASTLING_KEPT)
_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8


def _castling(board: chess.Board) -> str:
    """``board.castling_xfen()``, looked up by what it depends on (castling rights, kings, back-rank rooks
    and colours, promoted pieces, Chess960): "-" at once without castling rights.

    >>> b = chess.Board("r3k2r/8/8/8/8/8/8/R3K1R1 w Qkq - 0 1")
    >>> _castling(b) == b.castling_xfen() == "Qkq", _castling(chess.Board("8/8/8/8/8/8/8/K6k w - - 0 1"))
    (True, '-')
    """
    rights = board.castling_rights
    if not rights:
        return "-"
    key = (rights, board.kings, board.rooks & _BACKRANKS, board.occupied_co[chess.WHITE] & _BACKRANKS,
           board.occupied_co[chess.BLACK] & _BACKRANKS, board.promoted, int(board.chess960))
    text = _CASTLING.get(key)
    return _CASTLING.put(key, board.castling_xfen()) if text is None else text


def fast_fen(board: chess.Board) -> str:
    """``board.fen()``, with :func:`fast_board_fen`."""
    return f"{fast_epd(board)} {board.halfmove_clock} {board.fullmove_number}"
