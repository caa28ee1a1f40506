"""What a position's rules say of it: over by rule (mate, stalemate, a draw by rule) or to be searched, forced
or a choice. Kept apart from :mod:`livemon.live.analysis` (the scored plies, numpy and scipy behind them) for
the engine pools, which ask it of every position they are handed and need nothing else of the live model: a
``livemon worker`` process starts without importing the models.
"""

from __future__ import annotations

import itertools

import chess

from livemon.rating.evaluation import terminal_cp


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
    rule, forced, _ = facts_and_pins(board)
    return rule, forced


def facts_and_pins(board: chess.Board) -> tuple[int | None, bool, tuple[int, int] | None]:
    """:func:`position_facts`, and the king's square and pinned pieces when the side to move is not in check (a
    standard board: :func:`_out_of_check`; what :meth:`LiveGame.legal` reads for the next move)."""
    pins = _out_of_check(board) if type(board) is chess.Board else None
    if pins is not None and _two_sure_moves(board, *pins):
        moves, forced = True, False
    else:
        first = list(itertools.islice(board.legal_moves, 2))
        moves, forced = bool(first), len(first) < 2
    if not moves or board.halfmove_clock >= 150 or len(board.move_stack) >= 8:
        return terminal_cp(board), forced, pins
    if type(board) is chess.Board and board.pawns | board.rooks | board.queens:
        return None, forced, pins  # standard chess with a pawn, rook or queen: no variant end, material suffices
    if board.is_variant_end() or board.is_insufficient_material():
        return terminal_cp(board), forced, pins
    return None, forced, pins


def _out_of_check(board: chess.Board) -> tuple[int, int] | None:
    """The king's square of the side to move and its pinned pieces (ours that alone stand between the king and an
    enemy slider: what python-chess's legal-move generation calls the slider blockers), or None when that side
    is in check or has no king. The enemy sliders on the king's lines are looked at once: one with nothing
    between gives check (python-chess's ``attackers_mask``, read from the same lines), one with one piece between pins it.

    >>> _out_of_check(chess.Board("4r2k/8/8/8/8/8/4N3/4K3 w - - 0 1")) == (chess.E1, chess.BB_E2)
    True
    """
    us = board.turn
    ours, theirs = board.occupied_co[us], board.occupied_co[not us]
    king_mask = ours & board.kings & ~board.promoted
    if not king_mask:
        return None
    king = king_mask.bit_length() - 1
    if (chess.BB_KNIGHT_ATTACKS[king] & board.knights | chess.BB_PAWN_ATTACKS[us][king] & board.pawns
            | chess.BB_KING_ATTACKS[king] & board.kings) & theirs:
        return None  # checked by a knight, a pawn or a king
    occupied = board.occupied
    snipers = ((chess.BB_RANK_ATTACKS[king][0] | chess.BB_FILE_ATTACKS[king][0]) & (board.rooks | board.queens)
               | chess.BB_DIAG_ATTACKS[king][0] & (board.bishops | board.queens)) & theirs
    pinned = 0
    while snipers:  # the squares of a bitboard, without a generator (this runs once per position)
        sniper = snipers.bit_length() - 1
        snipers ^= 1 << sniper
        between = chess.between(king, sniper) & occupied
        if not between:
            return None  # checked by a slider: nothing between
        if between & (between - 1) == 0:  # one piece between
            pinned |= between
    return king, pinned & ours


def _two_sure_moves(board: chess.Board, king: int, pinned: int) -> bool:
    """True when the side to move surely has two legal moves or more (so the position is neither mate nor
    stalemate, nor forced): it is not in check, and its unpinned pawns' one-square pushes, unpinned knights'
    and unpinned sliders' moves number two or more (out of check, a move of an unpinned piece other than the
    king, and other than an en-passant capture, is legal). False: not known (the caller generates the moves).
    A third of a legal-move generation's cost, and it answers for almost every position of a game.
    ``king`` and ``pinned``: :func:`_out_of_check`'s (the side to move is out of check).

    >>> start, kings = chess.Board(), chess.Board("7k/8/8/8/8/8/8/K7 w - - 0 1")  # a king alone: not known
    >>> _two_sure_moves(start, *_out_of_check(start)), _two_sure_moves(kings, *_out_of_check(kings))
    (True, False)
    """
    us = board.turn
    ours = board.occupied_co[us]
    occupied = board.occupied
    free = ours & ~pinned
    pawns = board.pawns & free
    n = ((pawns << 8 if us == chess.WHITE else pawns >> 8) & ~occupied & chess.BB_ALL).bit_count()
    if n >= 2:
        return True
    knights = board.knights & free
    while knights:
        square = knights.bit_length() - 1
        knights ^= 1 << square
        n += (chess.BB_KNIGHT_ATTACKS[square] & ~ours).bit_count()
        if n >= 2:
            return True
    sliders = (board.bishops | board.rooks | board.queens) & free
    while sliders:
        square = sliders.bit_length() - 1
        sliders ^= 1 << square
        n += (board.attacks_mask(square) & ~ours).bit_count()
        if n >= 2:
            return True
    return False
