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
    "Judged",
    "MoveClass",
    "event_accuracy",
    "game_accuracy",
    "judge",
    "move_accuracy",
    "move_class",
    "ply_judgement",
    "win_percent",
    "win_percent_shown",
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


_WIN_SHOWN = tuple(round(w, 1) for w in _WIN)


def win_percent_shown(cp: int) -> float:
    """:func:`win_percent` to one decimal, as a board's messages show it (a table: rounding is the costly part).

    >>> win_percent_shown(-100) == round(win_percent(-100), 1), win_percent_shown(5000)
    (True, 97.5)
    """
    return _WIN_SHOWN[(CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp) + CEILING]


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
    """The population standard deviation (lila ``Maths.standardDeviation``), its sums taken left to right (as
    :func:`_pstdevs` takes them; ``sum`` of floats compensates its rounding from Python 3.12 on)."""
    n = len(xs)
    total = 0.0
    for x in xs:
        total += x
    mean = total / n
    total = 0.0
    for x in xs:
        d = x - mean
        total += d * d
    return math.sqrt(total / n)


def _pstdevs(xs: Sequence[float], size: int) -> list[float]:
    """:func:`_pstdev` of every ``size`` consecutive ``xs`` (of them all when fewer), in order: the same floats, each
    operation made for every window at once (a game's windows are its plies).

    >>> xs = [50.0, 51.2, 49.9, 35.5, 36.0, 20.25, 80.0]
    >>> _pstdevs(xs, 4) == [_pstdev(xs[i:i + 4]) for i in range(4)], _pstdevs(xs, 9) == [_pstdev(xs)]
    (True, True)
    """
    import numpy as np  # here: the commands that start without numpy read this module

    x = np.array(xs, dtype=float)
    n = min(size, len(x))
    rows = len(x) - n + 1
    total = np.zeros(rows)
    for j in range(n):  # sum(xs): 0 + x0 + x1 + ..., in order; x[j:j + rows] is every window's j-th
        total += x[j:j + rows]
    mean = total / n
    total, d = np.zeros(rows), np.empty(rows)
    for j in range(n):
        np.subtract(x[j:j + rows], mean, out=d)
        np.multiply(d, d, out=d)
        total += d
    return np.sqrt(total / n).tolist()  # type: ignore[no-any-return]


def _weighted(wins: Sequence[float], moves: Sequence[float], white_first: bool) -> tuple[float | None, float | None]:
    """Both sides' game accuracy from the win%s of the positions (the start's first) and the moves' accuracies."""
    n = len(moves)
    size = min(max(n // 10, 2), 8)
    head = _pstdev(wins[:size])
    weights = [head] * (min(size, len(wins)) - 2)  # lichess pads with copies of the first window
    weights += _pstdevs(wins, size)
    # Σ accuracy·weight, Σ weight, Σ 1/max(1, accuracy), moves: White's then Black's
    ws = ww = wh = bs = bw = bh = 0.0
    wn = bn = 0
    for i in range(min(n, len(weights))):
        accuracy = moves[i]
        w = weights[i]
        w = 0.5 if w < 0.5 else 12.0 if w > 12.0 else w
        if (i % 2 == 0) == white_first:
            ws += accuracy * w
            ww += w
            wh += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
            wn += 1
        else:
            bs += accuracy * w
            bw += w
            bh += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
            bn += 1
    return ((ws / ww + wn / wh) / 2.0 if wn and ww else None), ((bs / bw + bn / bh) / 2.0 if bn and bw else None)


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
    if not cps:
        return GameAccuracy(None, None, ())
    wins = [win_percent(INITIAL_CP)]
    wins += map(win_percent, cps)
    moves = []
    for i in range(len(cps)):
        prev, nxt = wins[i], wins[i + 1]
        moves.append(move_accuracy(prev, nxt) if (i % 2 == 0) == white_first else move_accuracy(nxt, prev))
    white, black = _weighted(wins, moves, white_first)
    return GameAccuracy(white, black, tuple(moves))


@dataclass(frozen=True)
class Judged:
    """A game's figures from its position values in one pass (:func:`judge`)."""

    wins: list[float | None]
    """White's win% of each position (index 0 = the start, as evaluated); None while awaited."""
    accuracy: list[float | None]
    """The mover's accuracy of each ply (index 0 = ply 1); None while a position next to it is awaited."""
    classes: list[MoveClass | None]
    """The class of each ply, None for a good move or one not judged yet."""
    game: GameAccuracy | None
    """Both sides' game accuracy over the plies up to the first position awaited (``game=True``)."""


_ACC_A, _ACC_K, _ACC_B = 103.1668100711649, -0.04354415386753951, -3.166924740191411 + 1.0


def judge(evals: Sequence[int | None], game: bool = True) -> Judged:
    """Every ply of a game judged at once, from its White-view position values (``evals[j]``: after ply j,
    None while awaited; the start, as lichess, taken as :data:`INITIAL_CP` for the first move): the same
    figures as :func:`win_percent`, :func:`move_accuracy`, :func:`move_class` and :func:`game_accuracy`,
    read from tables (a live game is judged again after each of its plies).

    >>> j = judge([30, 20, 10, -250, -240, -260, -250])
    >>> j.classes[2], round(j.game.white, 2), [round(a, 1) for a in j.accuracy] == [round(a, 1) for a in j.game.moves]
    ('blunder', 52.69, True)
    >>> judge([None, 40, None, 10]).accuracy, judge([None, 40, None, 10]).game.black
    ([100.0, None, None], None)
    """
    table, chances, exp = _WIN, _CHANCES, math.exp
    wins: list[float | None] = [None if cp is None else table[
        (CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp) + CEILING] for cp in evals]
    accs: list[float | None] = []
    classes: list[MoveClass | None] = []
    prefix = True
    prefix_moves: list[float] = []
    before_cp: int | None = INITIAL_CP
    for ply in range(1, len(evals)):
        after_cp = evals[ply]
        if before_cp is None or after_cp is None:
            accs.append(None)
            classes.append(None)
            prefix = False
            before_cp = after_cp
            continue
        b = (CEILING if before_cp > CEILING else -CEILING if before_cp < -CEILING else before_cp) + CEILING
        a = (CEILING if after_cp > CEILING else -CEILING if after_cp < -CEILING else after_cp) + CEILING
        white = ply % 2 == 1
        wb, wa = table[b], table[a]
        drop = wb - wa if white else wa - wb
        if drop <= 0.0:
            accuracy = 100.0
        else:
            raw = _ACC_A * exp(_ACC_K * drop) + _ACC_B
            accuracy = 100.0 if raw > 100.0 else 0.0 if raw < 0.0 else raw
        accs.append(accuracy)
        if prefix:
            prefix_moves.append(accuracy)
        if -MATE_CP < before_cp < MATE_CP and -MATE_CP < after_cp < MATE_CP:
            delta = chances[b] - chances[a] if white else chances[a] - chances[b]
            classes.append("blunder" if delta >= 0.3 else "mistake" if delta >= 0.2 else "inaccuracy" if delta >= 0.1
                           else None)
        else:
            classes.append(move_class(before_cp, after_cp, white))
        before_cp = after_cp
    result = None
    if game:
        if prefix_moves:
            start = [table[INITIAL_CP + CEILING]]
            start += [w for w in wins[1:len(prefix_moves) + 1] if w is not None]  # the prefix: every one valued
            white_acc, black_acc = _weighted(start, prefix_moves, True)
            result = GameAccuracy(white_acc, black_acc, tuple(prefix_moves))
        else:
            result = GameAccuracy(None, None, ())
    return Judged(wins, accs, classes, result)


def event_accuracy(games: Sequence[float | None]) -> float | None:
    """A player's event accuracy: the mean of their game accuracies (games without one left out).

    >>> event_accuracy([90.0, None, 80.0]), event_accuracy([None])
    (85.0, None)
    """
    known = [a for a in games if a is not None]
    return sum(known) / len(known) if known else None


_CODES: tuple[MoveClass | None, ...] = (None, "inaccuracy", "mistake", "blunder")
_UNJUDGED = 255
_NO_CP = -(2**31)


def _judge_ply(before_cp: int, after_cp: int, white: bool) -> tuple[float, int]:
    """One ply's accuracy (the mover's) and class code (0 none, 1..3 :data:`CLASSES`), by :func:`judge`'s rules."""
    b = (CEILING if before_cp > CEILING else -CEILING if before_cp < -CEILING else before_cp) + CEILING
    a = (CEILING if after_cp > CEILING else -CEILING if after_cp < -CEILING else after_cp) + CEILING
    wb, wa = _WIN[b], _WIN[a]
    drop = wb - wa if white else wa - wb
    if drop <= 0.0:
        accuracy = 100.0
    else:
        raw = _ACC_A * math.exp(_ACC_K * drop) + _ACC_B
        accuracy = 100.0 if raw > 100.0 else 0.0 if raw < 0.0 else raw
    if -MATE_CP < before_cp < MATE_CP and -MATE_CP < after_cp < MATE_CP:
        delta = _CHANCES[b] - _CHANCES[a] if white else _CHANCES[a] - _CHANCES[b]
        code = 3 if delta >= 0.3 else 2 if delta >= 0.2 else 1 if delta >= 0.1 else 0
    else:
        name = move_class(before_cp, after_cp, white)
        code = 0 if name is None else CLASSES.index(name) + 1
    return accuracy, code


def ply_judgement(before_cp: int, after_cp: int, white: bool) -> tuple[float, MoveClass | None]:
    """One ply's accuracy (the mover's) and class from its White-view position values, by :func:`judge`'s rules
    (the same floats).

    >>> acc, cls = ply_judgement(30, -300, True); round(acc, 2), cls
    (28.49, 'blunder')
    """
    accuracy, code = _judge_ply(before_cp, after_cp, white)
    return accuracy, _CODES[code]


class GameJudge:
    """A live game's figures kept up to date position by position: each ply judged once when its positions
    are valued, the classes counted as they come, and the game accuracy extended by one window a ply (made
    again whole only when lichess's window size changes, every 10 plies up to 80, or an earlier value
    changes). The same figures as :func:`judge`, bit for bit. A ply marked :meth:`unclassed` (the engine's first
    choice: lichess gives advice only where the move played differs from its engine's line) keeps its accuracy
    and is counted as judged, but not in the classes.

    >>> g = GameJudge()
    >>> for j, cp in enumerate([30, 20, 10, -250, -240, -260, -250]):
    ...     g.set(j, cp)
    >>> g.classes(True), g.judged, round(g.accuracy()[0], 2)
    ((0, 0, 1), (3, 3), 52.69)
    >>> g.truncate(3); g.classes(True), g.evals()
    ((0, 0, 0), [30, 20, 10])
    >>> g.set(3, -250); g.unclassed(3); g.classes(True), g.judged, g.prefix
    ((0, 0, 0), (2, 1), 3)
    """

    __slots__ = ("_acc", "_codes", "_counts", "_cps", "_judged", "_m", "_prefix", "_size", "_sums", "_unclassed",
                 "_weights", "_wins")

    def __init__(self) -> None:
        from array import array

        self._cps = array("i")  # position values (index 0 = the start), _NO_CP while awaited
        self._acc = array("d")  # per ply (index 0 = ply 1): the mover's accuracy, nan while not judged
        self._codes = bytearray()  # per ply: class code, _UNJUDGED while not judged
        self._counts = [0, 0, 0, 0, 0, 0]  # White's inaccuracies, mistakes, blunders, then Black's
        self._judged = [0, 0]
        self._prefix = 0  # positions 1.. valued without a gap
        self._unclassed = 0  # the plies never classed, as the bits of an int (bit k: ply k)
        self._m = 0  # the game accuracy's sums are over this many plies (0: made again when asked)
        self._size = 0
        self._weights: list[float] = []
        self._sums = [0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0]  # Σ a·w, Σ w, Σ 1/max(1, a), n: White's, Black's
        self._wins: list[float] = []

    @property
    def judged(self) -> tuple[int, int]:
        """Plies of White and of Black judged (both positions valued)."""
        return self._judged[0], self._judged[1]

    @property
    def prefix(self) -> int:
        """Positions 1.. valued without a gap: the plies the game accuracy reads."""
        return self._prefix

    def unclassed(self, ply: int) -> None:
        """Never class ``ply`` (the engine's first choice): its class leaves the counts, its accuracy stays; until a
        :meth:`truncate` at or before it."""
        bit = 1 << ply
        if self._unclassed & bit:
            return
        if ply <= len(self._codes):
            code = self._codes[ply - 1]
            if code != _UNJUDGED and code:
                self._counts[3 * (0 if ply % 2 else 1) + code - 1] -= 1
        self._unclassed |= bit

    def classes(self, white: bool) -> tuple[int, int, int]:
        """One side's (inaccuracies, mistakes, blunders), the plies :meth:`unclassed` left out."""
        c = self._counts
        return (c[0], c[1], c[2]) if white else (c[3], c[4], c[5])

    def evals(self) -> list[int | None]:
        return [None if cp == _NO_CP else cp for cp in self._cps]

    def set(self, j: int, cp: int) -> None:
        """Position ``j`` (after ply j) is worth ``cp`` (White's view)."""
        cps = self._cps
        n = len(cps)
        if j < n and cps[j] == cp:
            return
        if j == n == self._prefix + 1 == len(self._codes) + 1 and cp != _NO_CP:
            # the position after the newest one, every position before it valued and every ply before it judged
            # (a game scored in order: the live path's every ply): appended and its ply judged at once, with
            # nothing to take back or to wait for
            cps.append(cp)
            self._prefix = j
            self._codes.append(_UNJUDGED)
            self._acc.append(math.nan)
            self._score(j, INITIAL_CP if j == 1 else cps[j - 1], cp)
            return
        if j >= len(cps):
            cps.extend([_NO_CP] * (j + 1 - len(cps)))
        cps[j] = cp
        if j <= self._prefix or j == 0:
            self._m = 0  # a value the accuracy was made of changed
        while self._prefix + 1 < len(cps) and cps[self._prefix + 1] != _NO_CP:
            self._prefix += 1
        for ply in (j, j + 1):
            if 1 <= ply < len(cps):
                self._judge(ply)

    def truncate(self, j: int) -> None:
        """Forget the positions from ``j`` on (a correction from ply ``j``)."""
        j = max(j, 1)
        for ply in range(j, len(self._codes) + 1):
            self._unjudge(ply)
        del self._cps[j:]
        del self._acc[j - 1:]
        del self._codes[j - 1:]
        self._unclassed &= (1 << j) - 1
        if self._prefix >= j:
            self._prefix = j - 1
            self._m = 0

    def _unjudge(self, ply: int) -> None:
        if ply > len(self._codes):
            return
        code = self._codes[ply - 1]
        if code == _UNJUDGED:
            return
        side = 0 if ply % 2 else 1
        self._judged[side] -= 1
        if code and not (self._unclassed >> ply) & 1:
            self._counts[3 * side + code - 1] -= 1
        self._codes[ply - 1] = _UNJUDGED
        self._acc[ply - 1] = math.nan

    def _judge(self, ply: int) -> None:
        self._unjudge(ply)
        before = INITIAL_CP if ply == 1 else self._cps[ply - 1]
        after = self._cps[ply]
        while len(self._codes) < ply:
            self._codes.append(_UNJUDGED)
            self._acc.append(math.nan)
        if before != _NO_CP and after != _NO_CP:
            self._score(ply, before, after)

    def _score(self, ply: int, before: int, after: int) -> None:
        """Judge ``ply`` (its slots in the lists there, nothing of it counted yet) from the values around it."""
        side = 0 if ply % 2 else 1
        accuracy, code = _judge_ply(before, after, not side)
        self._acc[ply - 1] = accuracy
        self._codes[ply - 1] = code
        self._judged[side] += 1
        if code and not (self._unclassed >> ply) & 1:
            self._counts[3 * side + code - 1] += 1

    def ply(self, ply: int, before: int, after: int) -> tuple[float, MoveClass | None]:
        """:func:`ply_judgement` of ``ply`` from these White-view values (``before``: :data:`INITIAL_CP` for ply 1): the
        accuracy and class (:meth:`unclassed` or not) this judge gave it when it judged it from the same values, else
        judged here (the same floats either way).

        >>> g = GameJudge.of([30, 20, 10, -250])
        >>> g.ply(3, 10, -250) == ply_judgement(10, -250, True), g.ply(3, 10, -200) == ply_judgement(10, -200, True)
        (True, True)
        """
        if ply <= len(self._codes):
            code = self._codes[ply - 1]
            cps = self._cps
            if code != _UNJUDGED and cps[ply] == after and (cps[ply - 1] if ply > 1 else INITIAL_CP) == before:
                return self._acc[ply - 1], _CODES[code]
        return ply_judgement(before, after, ply % 2 == 1)

    def plies(self, evals: Sequence[int | None], first: int) -> tuple[list[float], list[MoveClass | None]] | None:
        """:meth:`ply` of every ply from ``first`` (1 or more) through the last of ``evals`` (``evals[j]``: after ply j)
        at once, when this judge judged each of them from these values (a live board's figures: the usual case);
        None when it did not (:meth:`ply` one at a time tells them).

        >>> g = GameJudge.of([30, 20, 10, -250])
        >>> g.plies([30, 20, 10, -250], 2) == ([g.ply(2, 20, 10)[0], g.ply(3, 10, -250)[0]], [None, "blunder"])
        True
        >>> g.plies([30, 20, 10, -200], 2), g.plies([30, 20, 10, -250, 40], 2)
        (None, None)
        """
        end = len(evals)
        if first >= end:
            return [], []
        lo = max(first - 1, 1)  # the values its plies are judged from (ply 1's before is INITIAL_CP, not evals[0])
        codes = self._codes[first - 1:end - 1]
        if (end > len(self._cps) or len(codes) < end - first or _UNJUDGED in codes
                or self._cps[lo:end].tolist() != list(evals[lo:end])):
            return None
        return self._acc[first - 1:end - 1].tolist(), [_CODES[code] for code in codes]

    def accuracy(self) -> tuple[float | None, float | None]:
        """Both sides' game accuracy over the plies up to the first position awaited (None: no move yet)."""
        m = self._prefix
        if not m:
            return None, None
        size = min(max(m // 10, 2), 8)
        if self._m and size == self._size and m > self._m and self._weights:
            for k in range(self._m + 1, m + 1):
                self._wins.append(_WIN[self._index(k)])
                self._weights.append(_pstdev(self._wins[-size:]))
            self._add(self._m, m)
            self._m = m
        elif self._m != m or size != self._size:
            self._wins = [_WIN[INITIAL_CP + CEILING]] + [_WIN[self._index(k)] for k in range(1, m + 1)]
            head = _pstdev(self._wins[:size])
            self._weights = [head] * (min(size, len(self._wins)) - 2)
            self._weights += _pstdevs(self._wins, size)
            self._size = size
            self._sums = [0.0, 0.0, 0.0, 0, 0.0, 0.0, 0.0, 0]
            self._add(0, min(m, len(self._weights)))
            self._m = m
        s = self._sums
        return ((s[0] / s[1] + s[3] / s[2]) / 2.0 if s[3] and s[1] else None,
                (s[4] / s[5] + s[7] / s[6]) / 2.0 if s[7] and s[5] else None)

    def settle(self) -> None:
        """Release what extending the game accuracy needs (a finished game's ~60 bytes a ply); the figures stay,
        and a later change makes them again whole.

        >>> g = GameJudge()
        >>> for j, cp in enumerate([0, 20, -300, -280]):
        ...     g.set(j, cp)
        >>> before = g.accuracy(); g.settle(); g.accuracy() == before, g._weights
        (True, [])
        >>> g.set(4, -250); g.accuracy() == GameJudge.of([0, 20, -300, -280, -250]).accuracy()
        True
        """
        self.accuracy()
        self._wins, self._weights = [], []

    @classmethod
    def of(cls, evals: Sequence[int | None]) -> GameJudge:
        """A judge of these position values (``evals[j]``: after ply j, None while awaited)."""
        g = cls()
        for j, cp in enumerate(evals):
            if cp is not None:
                g.set(j, cp)
        return g

    def _index(self, j: int) -> int:
        cp = self._cps[j]
        return (CEILING if cp > CEILING else -CEILING if cp < -CEILING else cp) + CEILING

    def _add(self, lo: int, hi: int) -> None:
        """Plies ``lo + 1``..``hi``'s accuracies into their sides' sums, in order, each with its window's weight."""
        acc, weights, s = self._acc, self._weights, self._sums
        for i in range(lo, hi):
            accuracy = acc[i]
            w = weights[i]
            w = 0.5 if w < 0.5 else 12.0 if w > 12.0 else w
            o = 0 if i % 2 == 0 else 4
            s[o] += accuracy * w
            s[o + 1] += w
            s[o + 2] += 1.0 / (accuracy if accuracy > 1.0 else 1.0)
            s[o + 3] += 1
