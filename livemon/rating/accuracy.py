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


def _chances(cp: int) -> float:
    chances = 2.0 / (1.0 + math.exp(MULTIPLIER * cp)) - 1.0
    return -1.0 if chances < -1.0 else 1.0 if chances > 1.0 else chances


_CHANCES = tuple(_chances(cp) for cp in range(-CEILING, CEILING + 1))
"""winning_chances of every capped evaluation (a table: a game's figures read one per position)."""
_WIN = tuple(50.0 + 50.0 * c for c in _CHANCES)


def winning_chances(cp: int) -> float:
    """lichess's winning chances in [−1, 1] of an evaluation (the viewer's side), cp capped at ±1000.

    >>> winning_chances(0), round(winning_chances(1000), 4), round(winning_chances(-3900), 4)
    (0.0, 0.9509, -0.9509)
    """
    return _CHANCES[(CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp) + CEILING]


def win_percent(cp: int) -> float:
    """lichess's win% (0..100) of an evaluation from the viewer's side (White's for a White-view cp).

    >>> round(win_percent(-100), 2), round(win_percent(15), 4)
    (40.9, 51.3804)
    """
    return _WIN[(CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp) + CEILING]


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
    """The population standard deviation (lila ``Maths.standardDeviation``)."""
    n = len(xs)
    mean = sum(xs) / n
    total = 0.0
    for x in xs:
        d = x - mean
        total += d * d
    return math.sqrt(total / n)


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
    n = len(cps)
    if not n:
        return GameAccuracy(None, None, ())
    wins = [win_percent(INITIAL_CP)]
    wins += map(win_percent, cps)
    size = min(max(n // 10, 2), 8)
    head = _pstdev(wins[:size])
    weights = [head] * (min(size, len(wins)) - 2)  # lichess pads with copies of the first window
    weights += [_pstdev(wins[i:i + size]) for i in range(max(len(wins) - size + 1, 1))]
    # Σ accuracy·weight, Σ weight, Σ 1/max(1, accuracy), moves: White's then Black's
    ws = ww = wh = bs = bw = bh = 0.0
    wn = bn = 0
    moves = []
    for i in range(n):
        prev, nxt = wins[i], wins[i + 1]
        white = (i % 2 == 0) == white_first
        accuracy = move_accuracy(prev, nxt) if white else move_accuracy(nxt, prev)
        moves.append(accuracy)
        if i >= len(weights):
            continue
        w = weights[i]
        w = 0.5 if w < 0.5 else 12.0 if w > 12.0 else w
        if white:
            ws += accuracy * w
            ww += w
            wh += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
            wn += 1
        else:
            bs += accuracy * w
            bw += w
            bh += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
            bn += 1
    white_acc = (ws / ww + wn / wh) / 2.0 if wn and ww else None
    black_acc = (bs / bw + bn / bh) / 2.0 if bn and bw else None
    return GameAccuracy(white_acc, black_acc, tuple(moves))


def event_accuracy(games: Sequence[float | None]) -> float | None:
    """A player's event accuracy: the mean of their game accuracies (games without one left out).

    >>> event_accuracy([90.0, None, 80.0]), event_accuracy([None])
    (85.0, None)
    """
    known = [a for a in games if a is not None]
    return sum(known) / len(known) if known else None
