"""Spec §0: centipawn conventions, mate mapping, terminal positions on real boards."""

from __future__ import annotations

import io

import chess
import chess.engine
import chess.pgn
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from livemon.rating.evaluation import (
    MATE_CP,
    MAX_CP,
    clamp_cp,
    from_mover,
    mate_cp,
    score_cp,
    terminal_cp,
)


def play(*sans: str, fen: str | None = None) -> chess.Board:
    board = chess.Board(fen) if fen else chess.Board()
    for san in sans:
        board.push_san(san)
    return board


FOOLS_MATE = ("f3", "e5", "g4", "Qh4#")  # White is mated
SCHOLARS_MATE = ("e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#")  # Black is mated


def test_constants() -> None:
    assert MATE_CP == 3900 and MAX_CP == 3900


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_clamp_cp_bounds_and_identity(cp: int) -> None:
    c = clamp_cp(cp)
    assert -MAX_CP <= c <= MAX_CP
    if -MAX_CP <= cp <= MAX_CP:
        assert c == cp
    else:
        assert c == (MAX_CP if cp > 0 else -MAX_CP)


def test_clamp_cp_accepts_numpy_ints_rejects_floats() -> None:
    assert clamp_cp(np.int64(5000)) == 3900
    assert type(clamp_cp(np.int32(7))) is int
    with pytest.raises(TypeError):
        clamp_cp(1.5)  # type: ignore[arg-type]


def test_mate_cp_signs_follow_python_chess_white_view() -> None:
    assert mate_cp(1) == mate_cp(12) == 3900
    assert mate_cp(-1) == mate_cp(-12) == -3900
    # Mate(0) in python-chess: the point-of-view side (White) is mated.
    assert mate_cp(0) == -3900
    assert str(chess.engine.Mate(0)) == "#-0"


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (chess.engine.Cp(0), 0),
        (chess.engine.Cp(-87), -87),
        (chess.engine.Cp(4200), 3900),
        (chess.engine.Cp(-99999), -3900),
        (chess.engine.Mate(2), 3900),
        (chess.engine.Mate(-3), -3900),
        (chess.engine.Mate(0), -3900),
        (chess.engine.MateGiven, 3900),
        (-chess.engine.Mate(0), 3900),
    ],
)
def test_score_cp(score: chess.engine.Score, expected: int) -> None:
    assert score_cp(score) == expected


def test_score_cp_povscore_is_turned_to_white_view() -> None:
    black_view = chess.engine.PovScore(chess.engine.Cp(150), chess.BLACK)
    assert score_cp(black_view) == -150
    assert score_cp(chess.engine.PovScore(chess.engine.Mate(4), chess.BLACK)) == -3900
    assert score_cp(chess.engine.PovScore(chess.engine.Mate(4), chess.WHITE)) == 3900


def test_checkmate_white_mated() -> None:
    board = play(*FOOLS_MATE)
    assert board.is_checkmate() and board.turn == chess.WHITE
    assert terminal_cp(board) == -3900


def test_checkmate_black_mated() -> None:
    board = play(*SCHOLARS_MATE)
    assert board.is_checkmate() and board.turn == chess.BLACK
    assert terminal_cp(board) == +3900


@pytest.mark.parametrize("moves", [FOOLS_MATE, SCHOLARS_MATE])
def test_engine_mate_zero_agrees_with_terminal(moves: tuple[str, ...]) -> None:
    """UCI 'score mate 0' is relative to the side to move: it is that side that is mated."""
    board = play(*moves)
    engine_report = chess.engine.PovScore(chess.engine.Mate(0), board.turn)
    assert score_cp(engine_report) == terminal_cp(board)


@pytest.mark.parametrize(("moves", "expected"), [(FOOLS_MATE, -3900), (SCHOLARS_MATE, 3900)])
def test_pgn_eval_mate_zero(moves: tuple[str, ...], expected: int) -> None:
    """A lichess '[%eval #0]' after the mating move, read by python-chess, maps right."""
    pgn = "1. " + " ".join(moves) + " { [%eval #0] } *"
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    node = game.end()
    assert node.board().is_checkmate()
    ev = node.eval()
    assert ev is not None
    assert score_cp(ev) == expected == terminal_cp(node.board())


def test_stalemate_is_zero() -> None:
    board = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert board.is_stalemate()
    assert terminal_cp(board) == 0


@pytest.mark.parametrize(
    "fen",
    [
        "8/8/8/4k3/8/8/8/4K3 w - - 0 1",  # K v K
        "8/8/8/4k3/8/8/8/2B1K3 b - - 0 1",  # K+B v K
        "8/8/8/4k3/8/8/8/1N2K3 w - - 0 1",  # K+N v K
    ],
)
def test_insufficient_material_is_zero(fen: str) -> None:
    board = chess.Board(fen)
    assert board.is_insufficient_material()
    assert terminal_cp(board) == 0


def test_sufficient_material_is_not_terminal() -> None:
    assert terminal_cp(chess.Board("8/8/8/4k3/8/8/8/R3K3 w - - 0 1")) is None
    assert terminal_cp(chess.Board()) is None


def test_seventyfive_move_rule_is_zero_but_fifty_is_not() -> None:
    fen = "8/8/8/4k3/8/8/8/R3K3 w - - {hm} 120"
    assert terminal_cp(chess.Board(fen.format(hm=150))) == 0
    assert terminal_cp(chess.Board(fen.format(hm=100))) is None  # only claimable


def test_fivefold_repetition_is_zero_but_threefold_is_not() -> None:
    board = chess.Board()
    cycle = ["Nf3", "Nf6", "Ng1", "Ng8"]
    for _ in range(2):
        for san in cycle:
            board.push_san(san)
    assert board.can_claim_threefold_repetition()
    assert terminal_cp(board) is None
    for _ in range(2):
        for san in cycle:
            board.push_san(san)
    assert board.is_fivefold_repetition()
    assert terminal_cp(board) == 0


def test_checkmate_wins_over_seventyfive_moves() -> None:
    """Mate on the move that reaches the 75-move limit is still mate (python-chess order)."""
    board = chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 149 200")
    board.push_san("Ra8#")
    assert board.is_checkmate() and board.halfmove_clock == 150
    assert terminal_cp(board) == 3900


@given(st.integers(min_value=-MAX_CP, max_value=MAX_CP), st.booleans())
def test_from_mover_is_an_involution(cp: int, white: bool) -> None:
    assert from_mover(from_mover(cp, white), white) == cp
    assert from_mover(cp, white) == (cp if white else -cp)
