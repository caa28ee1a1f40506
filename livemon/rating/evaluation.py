"""Centipawn conventions (docs/models.md §0): one integer scale for every evaluation.

Every evaluation in livemon is an ``int`` in centipawns **from White's point of
view**, clamped to ``[-MAX_CP, MAX_CP]``. Mate scores map to ``±MATE_CP`` = ±3900
(39 pawns, all the material on the board; Ferreira §3), so that a gain is
always an integer in ``[-7800, 7800]`` and fits a fixed 1-cp histogram.

>>> import chess, chess.engine
>>> score_cp(chess.engine.Cp(-123)), score_cp(chess.engine.Cp(5000))
(-123, 3900)
>>> score_cp(chess.engine.Mate(3)), score_cp(chess.engine.Mate(-2))
(3900, -3900)
>>> from_mover(-40, white_to_move=False)
40
"""

from __future__ import annotations

import operator

import chess
import chess.engine

__all__ = [
    "MATE_CP",
    "MAX_CP",
    "clamp_cp",
    "mate_cp",
    "score_cp",
    "terminal_cp",
    "from_mover",
]

MATE_CP: int = 3900
"""Value of a mate (for White; negated for Black): all the material, 39 pawns."""

MAX_CP: int = 3900
"""Every evaluation is clamped to ``[-MAX_CP, MAX_CP]``, so gains stay in ±2·MAX_CP."""


def clamp_cp(cp: int) -> int:
    """Clamp a centipawn score to ``[-MAX_CP, MAX_CP]``.

    Keeps gains bounded by ±7800 whatever the engine reports. Only integers
    (including numpy integers) are accepted: a float here is an upstream bug.

    >>> clamp_cp(12), clamp_cp(-10_000), clamp_cp(3901)
    (12, -3900, 3900)
    """
    v = operator.index(cp)
    return -MAX_CP if v < -MAX_CP else MAX_CP if v > MAX_CP else int(v)


def mate_cp(mate_in: int) -> int:
    """Map a mate distance, **from White's point of view**, to ``±MATE_CP``.

    The argument follows python-chess's ``chess.engine.Mate(n)`` taken from
    White's view (``PovScore.white()``): ``n > 0`` White mates in n (+3900),
    ``n < 0`` White is mated in -n (−3900). ``n == 0`` is python-chess's
    ``Mate(0)`` (printed ``#-0``): the side whose view it is — White — *is*
    checkmated, so −3900. The opposite case, White has already delivered mate,
    is python-chess's ``MateGiven`` (``-Mate(0)``, printed ``#+0``); a plain
    ``int`` cannot say it, so use :func:`score_cp` (``score_cp(MateGiven)`` is
    +3900) or, with a board at hand, :func:`terminal_cp`. A PGN ``[%eval #0]``
    is ambiguous as text; python-chess's ``node.eval()`` resolves it to the side
    to move being mated, and ``score_cp(node.eval().white())`` gets it right.

    The distance itself is dropped: Ferreira scores every mate as all material.

    >>> mate_cp(1), mate_cp(-7), mate_cp(0)
    (3900, -3900, -3900)
    """
    n = operator.index(mate_in)
    return MATE_CP if n > 0 else -MATE_CP


def score_cp(score: chess.engine.Score | chess.engine.PovScore) -> int:
    """Convert a python-chess score to livemon's clamped White-view centipawns.

    A bare ``Score`` (``Cp``, ``Mate``, ``MateGiven``) is taken to be from White's
    point of view already; a ``PovScore`` is turned to White's view first, so
    engine output (``info["score"]``) and ``node.eval()`` can be passed as they
    are. Mates go to ±3900 with the sign of who mates (see :func:`mate_cp`).

    >>> import chess, chess.engine
    >>> score_cp(chess.engine.MateGiven), score_cp(chess.engine.Mate(0))
    (3900, -3900)
    >>> score_cp(chess.engine.PovScore(chess.engine.Cp(50), chess.BLACK))
    -50
    """
    if isinstance(score, chess.engine.PovScore):
        score = score.white()
    if score.is_mate():
        # Mate(n>0) -> big - n > 0; Mate(n<=0) -> -big - n < 0; MateGiven -> big.
        return MATE_CP if score.score(mate_score=10**9) > 0 else -MATE_CP
    cp = score.score()
    assert cp is not None  # noqa: S101 - invariant: a non-mate Score always has a centipawn value
    return clamp_cp(cp)


def terminal_cp(board: chess.Board) -> int | None:
    """Evaluate a game-over position by rule, without an engine.

    Checkmate scores −3900 for the side to move (so +3900 when Black is mated);
    stalemate, insufficient material, the 75-move rule and fivefold repetition
    are draws and score 0. Merely *claimable* draws (50 moves, threefold) are not
    terminal: the game may go on, so they return ``None`` like any position that
    needs an engine. Uses :meth:`chess.Board.outcome`, so a variant board's own
    end conditions are honoured too.

    >>> import chess
    >>> b = chess.Board()
    >>> for san in ["f3", "e5", "g4", "Qh4#"]:
    ...     _ = b.push_san(san)
    >>> terminal_cp(b)
    -3900
    >>> terminal_cp(chess.Board()) is None
    True
    """
    outcome = board.outcome(claim_draw=False)
    if outcome is None:
        return None
    if outcome.winner is None:
        return 0
    return MATE_CP if outcome.winner == chess.WHITE else -MATE_CP


def from_mover(cp_white: int, white_to_move: bool) -> int:
    """Turn a White-view score into the view of the side to move.

    The agent model (§2) wants values from the mover's view; the function is
    its own inverse, so it also turns a mover's view back to White's.

    >>> from_mover(120, True), from_mover(120, False)
    (120, -120)
    """
    v = operator.index(cp_white)
    return int(v) if white_to_move else -int(v)
