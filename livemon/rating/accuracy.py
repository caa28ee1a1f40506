"""Move quality as audiences know it: lichess's win%, move accuracy, game accuracy and move classes.

Every figure here is lichess's own, so that a number on a livemon screen reads as the same number on
lichess:

- **win%** (lila ``WinPercent``): ``50 + 50·(2/(1 + exp(−0.00368208·cp)) − 1)`` from the mover's (or
  White's) view, the evaluation capped at ±1000 cp first (a mate, ±3900 in livemon, is ±1000);
- **move accuracy** (lila ``AccuracyPercent.fromWinPercents``): 100 when the move kept or raised the
  mover's win%, else ``103.1668·exp(−0.04354·(before − after)) − 3.1669 + 1`` (the +1 an uncertainty
  bonus for imperfect analysis), clamped to 0..100;
- **game accuracy** (lila ``AccuracyPercent.gameAccuracy``): for each side, the mean of the
  volatility-weighted mean and the harmonic mean of its moves' accuracies. The win%s enter as lichess
  builds them: the start position as ``Cp.initial`` (+15 cp, whatever the engine says of it), then the
  position after every ply. Each move's weight is the population standard deviation of a window of
  win%s, clamped to 0.5..12; windows have ``clamp(plies // 10, 2, 8)`` positions: ``size − 2`` copies
  of the first window, then every sliding window, one per move. The harmonic mean reads each accuracy
  as at least 1 (lila ``Maths.harmonicMean``);
- **move classes** (lila ``Advice``): a drop of the mover's winning chances (``2/(1 + exp(−0.00368208·cp))
  − 1``, the [−1, 1] scale) of at least 0.1 / 0.2 / 0.3 is an inaccuracy / mistake / blunder; a move
  that lets a forced mate in or loses one is judged by lichess's mate rules (:func:`move_class`).

In livemon a mate is ±3900 cp (:mod:`livemon.rating.evaluation`): an evaluation of that size is read as
a mate for the classes, and as ±1000 for win% and accuracy (as lichess's ``forceAsCp`` then ``ceiled``).

>>> round(win_percent(0), 6), round(win_percent(100), 2), win_percent(3900) == win_percent(1000)
(50.0, 59.1, True)
>>> round(move_accuracy(80.0, 60.0), 2), move_accuracy(50.0, 55.0)
(41.02, 100.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CEILING",
    "CLASSES",
    "INITIAL_CP",
    "GameAccuracy",
    "MoveClass",
    "event_accuracy",
    "game_accuracy",
    "move_accuracy",
    "move_class",
    "win_percent",
    "winning_chances",
]

CEILING = 1000
"""lichess's ``Cp.CEILING``: an evaluation is capped at ±1000 cp before its win% (a mate counts as 1000)."""
INITIAL_CP = 15
"""lichess's ``Cp.initial``: the evaluation the start position enters game accuracy with."""
MULTIPLIER = -0.00368208
"""lichess's win% curve, fitted on its games (lila pull request 11148)."""
MATE_CP = 3900
"""livemon's value of a mate (:data:`livemon.rating.evaluation.MATE_CP`): an evaluation this large is a mate."""

MoveClass = Literal["inaccuracy", "mistake", "blunder"]
CLASSES: tuple[MoveClass, ...] = ("inaccuracy", "mistake", "blunder")
"""The move classes, mildest first."""
_JUDGEMENTS: tuple[tuple[float, MoveClass], ...] = ((0.3, "blunder"), (0.2, "mistake"), (0.1, "inaccuracy"))


def _ceiled(cp: int) -> int:
    return CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp


def winning_chances(cp: int) -> float:
    """lichess's winning chances in [−1, 1] of an evaluation (the viewer's side), cp capped at ±1000.

    >>> winning_chances(0), round(winning_chances(1000), 4), round(winning_chances(-3900), 4)
    (0.0, 0.9509, -0.9509)
    """
    chances = 2.0 / (1.0 + math.exp(MULTIPLIER * _ceiled(cp))) - 1.0
    return -1.0 if chances < -1.0 else 1.0 if chances > 1.0 else chances


_WIN = tuple(50.0 + 50.0 * winning_chances(cp) for cp in range(-CEILING, CEILING + 1))


def win_percent(cp: int) -> float:
    """lichess's win% (0..100) of an evaluation from the viewer's side (White's for a White-view cp).

    >>> round(win_percent(-100), 2), round(win_percent(15), 4)
    (40.9, 51.3804)
    """
    return _WIN[_ceiled(cp) + CEILING]


def move_accuracy(before: float, after: float) -> float:
    """lichess's accuracy of one move (0..100) from the mover's win% before and after it.

    >>> move_accuracy(60.0, 60.0), round(move_accuracy(60.0, 50.0), 4), move_accuracy(100.0, 0.0)
    (100.0, 64.5798, 0.0)
    """
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (before - after)) - 3.166924740191411
    raw += 1.0  # uncertainty bonus (imperfect analysis)
    return 100.0 if raw > 100.0 else 0.0 if raw < 0.0 else raw


def move_class(before_cp: int, after_cp: int, white_moved: bool) -> MoveClass | None:
    """lichess's judgement of a move (``Advice``) from the White-view evaluations before and after it.

    Neither evaluation a mate: the drop of the mover's winning chances (0.1 / 0.2 / 0.3). Otherwise
    lichess's mate rules, from the mover's view: a move after which the opponent mates (and before which
    they did not) is a blunder, a mistake when the mover stood below −700 cp before, an inaccuracy below
    −999; a move that loses the mover's own forced mate is a blunder, a mistake when still above +700 cp
    after, an inaccuracy above +999. Anything else (a slower mate, a mate kept) has no class.

    >>> move_class(30, -300, True), move_class(-30, 300, False), move_class(30, 10, True)
    ('blunder', 'blunder', None)
    >>> move_class(0, -60, True), move_class(0, -120, True), move_class(0, -200, True)
    ('inaccuracy', 'mistake', 'blunder')
    >>> move_class(-800, -3900, True), move_class(3900, 1200, True), move_class(3900, 200, True)
    ('mistake', 'inaccuracy', 'blunder')
    """
    sign = 1 if white_moved else -1
    before, after = sign * before_cp, sign * after_cp  # the mover's view
    mate_before = abs(before) >= MATE_CP
    mate_after = abs(after) >= MATE_CP
    if not mate_before and not mate_after:
        delta = winning_chances(before) - winning_chances(after)
        for threshold, name in _JUDGEMENTS:
            if threshold <= delta:
                return name
        return None
    if not mate_before and after < 0:  # mate created against the mover
        return "inaccuracy" if before < -999 else "mistake" if before < -700 else "blunder"
    if mate_before and before > 0 and (not mate_after or after < 0):  # the mover's mate lost
        next_cp = 0 if mate_after else after
        return "inaccuracy" if next_cp > 999 else "mistake" if next_cp > 700 else "blunder"
    return None


@dataclass(frozen=True)
class GameAccuracy:
    """Each side's game accuracy (None: no move of that side yet) and every move's accuracy, in ply order."""

    white: float | None
    black: float | None
    moves: tuple[float, ...]


def _pstdev(xs: Sequence[float]) -> float:
    n = len(xs)
    mean = sum(xs) / n
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / n)


def game_accuracy(cps: Sequence[int], white_first: bool = True) -> GameAccuracy:
    """lichess's game accuracy of both sides from the White-view evaluations after each ply, in order.

    ``cps[k]`` is the evaluation of the position after ply ``k + 1``; the start position enters as
    :data:`INITIAL_CP`. ``white_first``: White made the first of these plies.

    >>> g = game_accuracy([20, 10, -250, -240, -260, -250])
    >>> round(g.white, 2), round(g.black, 2), [round(a, 1) for a in g.moves]
    (52.69, 98.45, [100.0, 100.0, 36.7, 97.7, 94.5, 97.7])
    >>> game_accuracy([]).white is None, game_accuracy([40]).black is None
    (True, True)
    """
    wins = [win_percent(INITIAL_CP)] + [win_percent(cp) for cp in cps]
    n = len(cps)
    if not n:
        return GameAccuracy(None, None, ())
    size = min(max(n // 10, 2), 8)
    head = wins[:size]
    windows = [head] * (min(size, len(wins)) - 2) + [wins[i:i + size] for i in range(max(len(wins) - size + 1, 1))]
    weights = [min(max(_pstdev(w), 0.5), 12.0) for w in windows]
    sums = {True: [0.0, 0.0, 0.0, 0], False: [0.0, 0.0, 0.0, 0]}  # Σ a·w, Σ w, Σ 1/max(1, a), count
    moves = []
    for i in range(n):
        prev, nxt = wins[i], wins[i + 1]
        white = (i % 2 == 0) == white_first
        accuracy = move_accuracy(prev, nxt) if white else move_accuracy(nxt, prev)
        moves.append(accuracy)
        if i < len(weights):
            s = sums[white]
            s[0] += accuracy * weights[i]
            s[1] += weights[i]
            s[2] += 1.0 / max(1.0, accuracy)
            s[3] += 1

    def side(s: list[float]) -> float | None:
        if not s[3] or s[1] == 0.0:
            return None
        return (s[0] / s[1] + s[3] / s[2]) / 2.0

    return GameAccuracy(side(sums[True]), side(sums[False]), tuple(moves))


def event_accuracy(games: Sequence[float | None]) -> float | None:
    """A player's event accuracy: the mean of their game accuracies (games without one left out).

    >>> event_accuracy([90.0, None, 80.0]), event_accuracy([None])
    (85.0, None)
    """
    known = [a for a in games if a is not None]
    return sum(known) / len(known) if known else None
