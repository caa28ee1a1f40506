"""What the audience sees, from the evaluations the core holds: accuracy, move classes, moments, results.

Sans I/O. Every figure is a function of a game's position values (White's view, the pinned profile's or
the game's ``[%eval]``s, by the core's one rule) and its result and rating tags, so the live messages,
``analyse --json`` and ``export --json`` agree by construction:

- **per ply** (:func:`ply_figures`): the win% (White's) of every position, each move's accuracy (the
  mover's) and class, as lichess computes them (:mod:`livemon.rating.accuracy`); a ply whose
  positions are not both valued yet has none (null, never 0 or 100);
- **per game** (:func:`game_figures`): each side's game accuracy over the plies from the start up to the
  first position still awaited (lichess's figure needs the whole sequence: a gap would shift its
  windows), and each side's inaccuracies, mistakes and blunders over every ply valued;
- **per player** (:func:`player_results`, :func:`event_figures`): the event accuracy (the mean of the
  game accuracies), the classes summed, and FIDE's score, TPR and rating change
  (:mod:`livemon.rating.fide`) from the finished games;
- **the engine's first choice** is never judged: a move that was the first line of the pinned profile's search of
  the position before it (or the only legal move) has no class and is never a blunder moment, whatever the search
  of the next position says (a fixed-depth search sees further from the position after; lichess gives advice only
  where the played move differs from its engine's line). Accuracy stays lichess's formula over the successive
  values, first choice or not. ``first_choice`` below: those plies;
- **moments** (:func:`moment_kinds`): blunders, turning points and lead changes (docs/websocket.md), each ply
  decided once every position up to it is valued, in ply order, so a live game's moments are those of the
  finished game;
- **display rules** (:func:`display_rules`, :func:`estimate_display`): when an estimate may be shown.

>>> f = game_figures([None, 20, 10, -250, -240])
>>> round(f.white, 1), round(f.black, 1), f.white_classes, f.to_accuracy()["black"] is not None
(46.5, 98.8, (0, 0, 1), True)
>>> game_figures([None, None, 30]).to_accuracy()
{'white': None, 'black': None}
"""

from __future__ import annotations

import bisect
import datetime
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from livemon.rating.accuracy import (
    CLASSES,
    INITIAL_CP,
    GameJudge,
    MoveClass,
    event_accuracy,
    judge,
    ply_judgement,
    win_percent,
    win_percent_shown,
)
from livemon.rating.fide import k_factor, performance_rating, rating_change
from livemon.rating.limits import MIN_POSITIONS
from livemon.rating.points import FIDE_POINTS, Points
if TYPE_CHECKING:  # the quality model needs numpy and scipy: a message module must not load them (CLI start-up)
    from livemon.rating.quality import QualityModel

__all__ = ["BoardFigures", "DEFAULT_MAX_INTERVAL_WIDTH",
           "GameFigures", "LEAD_MARGIN", "MIN_ACCURACY_MOVES", "TURNING_POINT", "display_rules",
           "event_moves",
           "estimate_display", "event_figures", "figures_of", "game_figures", "moment_kinds", "ply_figures", "player_results"]

TURNING_POINT = 60.0
"""A side "has the winning chances" at a win% of at least this (lichess's scale); a turning point is a ply
after which the other side has them than the last side that had them."""
LEAD_MARGIN = 5.0
"""A side "leads" at a win% above 50 + this (about ±30 cp, beyond the noise of a fixed-depth search
around equality); a lead change is a ply after which the other side leads than the last side that led."""
DEFAULT_MAX_INTERVAL_WIDTH = 1000.0
"""``[display] max_interval_width``'s default (Elo). The moves estimate's 95% range is about ±510-870 Elo on one
game's moves (2700 down to 1600) and about ±180-350 over nine games (docs/performance.md): at ±500 a figure read
from one game, where it would mislead, is withheld, and screens show accuracy, the estimate in this field and how
many more games it takes until the range narrows."""
MIN_ACCURACY_MOVES = 10
"""A side's game accuracy is shown once it reads at least this many of the side's moves (or every move of a finished
game): before, it reads the opening, which every player plays near 100. On the 45 games of a lichess broadcast
(its own ``[%eval]``s), each side's accuracy after 5 moves averages 98.0 (sd 1.9 between players), after 10 moves
97.1 (sd 2.7), after 15 95.8 (sd 3.5), and over the whole game 93.5 (sd 4.5): from 10 moves the figure starts to
tell players apart (its spread is over half the final one) while a classical game shows it within its first hour."""
_POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


@dataclass(frozen=True, slots=True)
class GameFigures:
    """One game's accuracy per side (None: no move of that side valued from the start yet) and classes
    per side as ``(inaccuracies, mistakes, blunders)``."""

    white: float | None
    black: float | None
    white_classes: tuple[int, int, int]
    black_classes: tuple[int, int, int]
    judged: tuple[int, int] = (0, 0)
    """Moves of White and of Black whose both positions are valued (the classes are over these)."""
    read: tuple[int, int] = (0, 0)
    """Moves of White and of Black the game accuracy reads (those from the start to the first position awaited)."""
    played: tuple[int, int] = (0, 0)
    """Moves of White and of Black played (0, 0: not told)."""

    def withheld(self, played: tuple[int, int], finished: bool) -> GameFigures:
        """These figures with the moves played, each side's accuracy withheld (None) while it reads fewer than
        :data:`MIN_ACCURACY_MOVES` of the side's moves, unless the game is finished and it reads them all.

        >>> f = GameFigures(97.0, 95.0, (0, 0, 0), (0, 0, 0), (9, 9), (9, 9))
        >>> f.withheld((12, 11), False).to_accuracy(), f.withheld((9, 9), True).to_accuracy()
        ({'white': None, 'black': None}, {'white': 97.0, 'black': 95.0})
        >>> f.withheld((12, 11), False).to_moves()["white"]
        {'played': 12, 'judged': 9, 'accuracy_read': 9}
        """
        def shown(acc: float | None, side: int) -> float | None:
            read = self.read[side]
            return acc if read >= MIN_ACCURACY_MOVES or (finished and read >= played[side]) else None
        return GameFigures(shown(self.white, 0), shown(self.black, 1), self.white_classes, self.black_classes,
                           self.judged, self.read, played)

    def to_moves(self) -> dict[str, dict[str, int]]:
        """Per side, the moves ``played``, ``judged`` (what the classes read) and ``accuracy_read`` (what the game
        accuracy reads): a figure reading fewer than were played is provisional ("94.1 · 28 of 41 moves")."""
        return {side: {"played": self.played[i], "judged": self.judged[i], "accuracy_read": self.read[i]}
                for i, side in enumerate(("white", "black"))}

    def to_accuracy(self) -> dict[str, float | None]:
        """``{"white": ..., "black": ...}``, one decimal (lichess shows whole percents)."""
        return {"white": _one(self.white), "black": _one(self.black)}

    def classes_of(self, white: bool) -> tuple[int, int, int]:
        return self.white_classes if white else self.black_classes

    def to_classes(self) -> dict[str, dict[str, int] | None]:
        """Each side's ``{inaccuracy, mistake, blunder}``; None for a side with no move judged yet."""
        return {"white": dict(zip(CLASSES, self.white_classes)) if self.judged[0] else None,
                "black": dict(zip(CLASSES, self.black_classes)) if self.judged[1] else None}


def _one(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def game_figures(evals: Sequence[int | None]) -> GameFigures:
    """A game's figures from its position values (``evals[j]``: after ply j, None while awaited; the
    start, ``evals[0]``, enters as +15 cp, as lichess's figures do)."""
    judged = judge(evals)
    counts = [[0, 0, 0], [0, 0, 0]]
    seen = [0, 0]
    for i, accuracy in enumerate(judged.accuracy):
        if accuracy is None:
            continue
        side = i % 2  # 0: White's ply (ply i + 1 odd)
        seen[side] += 1
        name = judged.classes[i]
        if name is not None:
            counts[side][CLASSES.index(name)] += 1
    game = judged.game
    assert game is not None  # noqa: S101 - judge(game=True) gives it
    prefix = len(game.moves)
    return GameFigures(game.white, game.black, (counts[0][0], counts[0][1], counts[0][2]),
                       (counts[1][0], counts[1][1], counts[1][2]), (seen[0], seen[1]), ((prefix + 1) // 2, prefix // 2))


Positions = GameJudge
"""A game's position values as the estimator scores them, with its figures kept up to date
(:class:`~livemon.rating.accuracy.GameJudge`: 4 bytes a position, 9 a ply)."""


def figures_of(positions: GameJudge) -> GameFigures:
    """The figures of a game whose positions are kept in ``positions`` (the same as :func:`game_figures` of its
    values; the game accuracy extended a ply at a time, the classes counted as each ply is judged), the plies marked
    :meth:`~livemon.rating.accuracy.GameJudge.unclassed` (the engine's first choice) not judged: no class, their
    accuracy stays. O(1) but when the game accuracy's window size changes.

    >>> g = GameJudge()
    >>> for j, cp in enumerate([None, 20, 10, -250, -240]):
    ...     g.set(j, cp) if cp is not None else None
    >>> figures_of(g) == game_figures([None, 20, 10, -250, -240])
    True
    >>> before = figures_of(g); g.unclassed(3)
    >>> figures_of(g).white_classes, figures_of(g).white == before.white
    ((0, 0, 0), True)
    """
    white, black = positions.accuracy()
    prefix = positions.prefix
    return GameFigures(white, black, positions.classes(True), positions.classes(False), positions.judged,
                       ((prefix + 1) // 2, prefix // 2))


def ply_figures(evals: Sequence[int | None], first_choice: Iterable[int] = ()
                ) -> tuple[list[float | None], list[float | None], list[MoveClass | None]]:
    """Per position the win% (White's), per ply the mover's accuracy and class, from a board's
    ``evals`` (index 0 = the start); None where a value is awaited. The plies in ``first_choice`` (the
    engine's first choice) have no class.

    >>> wins, accs, classes = ply_figures([30, 20, None, -300])
    >>> [None if w is None else round(w, 1) for w in wins], accs[:2], classes
    ([52.8, 51.8, None, 24.9], [100.0, None], [None, None, None])
    >>> ply_figures([15, 20, 300, -250])[2], ply_figures([15, 20, 300, -250], (3,))[2]
    ([None, 'blunder', 'blunder'], [None, 'blunder', None])
    """
    judged = judge(evals, game=False)
    classes = judged.classes
    for ply in first_choice:
        if 1 <= ply <= len(classes):
            classes[ply - 1] = None
    return judged.wins, judged.accuracy, classes


Shown = tuple[tuple[float | None, ...], tuple[float | None, ...], tuple[MoveClass | None, ...]]


class BoardFigures:
    """A board's :func:`ply_figures` as its messages carry them (one decimal), kept from one message to the next:
    each made again only from the first position value (or first-choice ply) that changed, so a long game's
    messages cost O(new plies) each in judgements, not O(plies).

    >>> f = BoardFigures()
    >>> f.of((15, 20, 300, None), ())
    ((51.4, 51.8, 75.1, None), (100.0, 35.3, None), (None, 'blunder', None))
    >>> f.of((15, 20, 300, -250), (3,)) == BoardFigures().of((15, 20, 300, -250), (3,))
    True
    >>> f.of((15, 20, 300, -250), (3,))[2]
    (None, 'blunder', None)
    """

    __slots__ = ("_classes", "_evals", "_first", "_shown", "_wins", "_accs", "judge")

    def __init__(self, judge: GameJudge | None = None) -> None:
        self.judge = judge
        """The game's judge (the estimator's: :meth:`GameJudge.ply`): a ply it judged from the same values is read
        from it, not judged again; None: every ply judged here."""
        self._evals: tuple[int | None, ...] = ()
        self._first: tuple[int, ...] = ()
        self._wins: tuple[float | None, ...] = ()
        self._accs: tuple[float | None, ...] = ()
        self._classes: tuple[MoveClass | None, ...] = ()  # every ply's class, first choices included
        self._shown: tuple[MoveClass | None, ...] = ()  # the same without the first choices' classes

    def of(self, evals: tuple[int | None, ...], first_choice: tuple[int, ...]) -> Shown:
        """Per position the win% (White's), per ply the mover's accuracy and class (none on a ply in
        ``first_choice``, sorted), each rounded to one decimal, of a board's ``evals`` (index 0 = the start; None:
        awaited): the same figures as :func:`ply_figures`."""
        k = _common_prefix(self._evals, evals)
        if k < len(self._evals) or k < len(evals):
            wins = [None if cp is None else win_percent_shown(cp) for cp in evals[k:]]
            judge = self.judge
            held = None if judge is None else judge.plies(evals, max(k, 1))
            if held is not None:  # every ply judged by the game's judge from these values: read at once
                accs: list[float | None] = [round(accuracy, 1) for accuracy in held[0]]
                classes: list[MoveClass | None] = held[1]
            else:
                accs, classes = [], []
                for ply in range(max(k, 1), len(evals)):
                    before, after = INITIAL_CP if ply == 1 else evals[ply - 1], evals[ply]
                    if before is None or after is None:
                        accs.append(None)
                        classes.append(None)
                    else:
                        accuracy, name = (ply_judgement(before, after, ply % 2 == 1) if judge is None
                                          else judge.ply(ply, before, after))
                        accs.append(round(accuracy, 1))
                        classes.append(name)
            keep = max(k, 1) - 1  # plies kept: those before ply max(k, 1)
            self._wins = self._wins[:k] + tuple(wins)
            self._accs = self._accs[:keep] + tuple(accs)
            self._classes = self._classes[:keep] + tuple(classes)
            self._evals = evals
            changed = keep + 1  # the first ply whose class may differ
        else:
            changed = len(evals)
        if first_choice != self._first:
            changed = min(changed, _first_different(self._first, first_choice))
            self._first = first_choice
        if changed < len(evals) or len(self._shown) != len(self._classes):
            shown = list(self._classes[changed - 1:])
            for i in range(bisect.bisect_left(first_choice, changed), len(first_choice)):
                at = first_choice[i] - changed
                if at < len(shown):
                    shown[at] = None
            self._shown = self._shown[:changed - 1] + tuple(shown)
        return self._wins, self._accs, self._shown


def _common_prefix(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
    """How many leading items ``a`` and ``b`` share (compared in C, in windows widening back from the end, where
    a live game's values change).

    >>> _common_prefix((1, 2, 3, 4), (1, 2, 3, 4, 5)), _common_prefix((1, 2, 3, 4), (1, 9, 3, 5)), _common_prefix((), (1,))
    (4, 1, 0)
    """
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    step, lo = 1, n
    while lo > 0:
        lo = max(n - step, 0)
        if a[:lo] == b[:lo]:
            break
        step *= 2
    for i in range(lo, n):
        if a[i] != b[i]:
            return i
    return n


def _first_different(old: tuple[int, ...], new: tuple[int, ...]) -> int:
    """The lowest ply in one of two sorted ply tuples and not in the other (a large number when none)."""
    k = _common_prefix(old, new)
    rest = [t[k] for t in (old, new) if k < len(t)]
    return min(rest) if rest else 1 << 30


_MOMENT_BOUNDS = tuple((kind, 50.0 + margin, 50.0 - margin)
                       for kind, margin in (("turning_point", TURNING_POINT - 50.0), ("lead_change", LEAD_MARGIN)))
"""Each side-taking moment's kind and White's win% at or above which White has it, at or below which Black has it."""


def moment_kinds(evals: Sequence[int | None], ply: int, cls: MoveClass | None) -> list[str]:
    """What makes ``ply`` a moment, from the game's position values (``evals[j]``: after ply j; only those up to
    ``ply`` are read) and the ply's class ``cls`` (:func:`~livemon.rating.accuracy.ply_judgement`'s, as the game's
    judge holds it; None for the engine's first choice, never judged):

    - ``blunder``: lichess's blunder (a drop of 0.3 in winning chances, or a mate let in or lost: ``cls``);
    - ``turning_point``: after it one side has the winning chances (win% ≥ :data:`TURNING_POINT`) and the
      last side that had them, at a position before it, was the other;
    - ``lead_change``: after it one side leads (win% > 50 + :data:`LEAD_MARGIN`) and the last side that led
      was the other (a turning point is also a lead change; both are listed).

    The core decides a ply once every position up to it is valued, so the values read are the game's final ones
    (a position the engine gave up on, None, is skipped).

    >>> moment_kinds([15, 20, 300, -250], 3, ply_judgement(300, -250, True)[1])
    ['blunder', 'turning_point', 'lead_change']
    >>> moment_kinds([15, 20, 300, -250], 3, None)  # the engine's first choice
    ['turning_point', 'lead_change']
    >>> moment_kinds([15, 20, 60, -80], 3, ply_judgement(60, -80, True)[1]), moment_kinds([15, 20, 60, 50], 3, None)
    (['lead_change'], [])
    """
    after = evals[ply]
    if after is None:
        return []
    out = ["blunder"] if cls == "blunder" else []
    w = win_percent(after)
    for kind, high, low in _MOMENT_BOUNDS:
        now = 1 if w >= high else -1 if w <= low else 0  # the side that has it after the ply
        if now == 0:
            continue
        for j in range(ply - 1, -1, -1):
            cp = evals[j]
            if cp is None:
                continue
            x = win_percent(cp)
            last = 1 if x >= high else -1 if x <= low else 0
            if last:
                if last == -now:
                    out.append(kind)
                break
    return out


def player_results(elo: int | None, games: Iterable[tuple[bool, str, int | None]], k: float | None = None,
                   default_k: float = 20.0, event_date: datetime.date | None = None,
                   scoring: Points = FIDE_POINTS) -> dict[str, Any]:
    """FIDE's figures of a player's finished games, each ``(played white, result, opponent's rating)``:
    ``score`` and ``games`` (every finished game), ``tpr`` (Ra + dp(p) over the games against rated
    opponents) and ``rating_change`` (Σ K·(W − PD), the 400-point rule as in force on ``event_date``:
    today's when None), with ``k``; a game without a result adds nothing. The ratings are the
    published tags (FIDE's own figures, as the audience knows them). Without the player's own rating tag
    there is no TPR or rating change, and ``reason`` says so. Where the event scores otherwise than FIDE's
    1-½-0 (``scoring``, ``[event] points``), ``points`` is the player's score in the event's points: what its
    standings rank by (FIDE's figures read the game score).

    >>> player_results(2700, [(True, "1-0", 2600), (False, "1/2-1/2", 2800), (True, "*", 2650)])
    {'score': 1.5, 'games': 2, 'tpr': 2893, 'rating_change': 5.0, 'k': 10.0, 'rated_games': 2}
    >>> player_results(None, [(True, "1-0", 2600)])["reason"]
    'no rating tag for this player'
    >>> player_results(2700, [(True, "1-0", 2600), (False, "1/2-1/2", 2800)], scoring=Points.parse("3-1-0"))["points"]
    4.0
    """
    score, event_points, played, rated = 0.0, 0.0, 0, []
    for white, result, opponent in games:
        points = _POINTS.get(result)
        if points is None:
            continue
        mine = points[0] if white else points[1]
        score += mine
        event_points += scoring.of(mine)
        played += 1
        if opponent is not None:
            rated.append((float(opponent), mine))
    kk = k_factor(elo, default_k, played=event_date) if k is None else k
    out: dict[str, Any] = {"score": score, "games": played, "tpr": None, "rating_change": None, "k": kk,
                           "rated_games": len(rated)}
    if scoring != FIDE_POINTS:
        out["points"] = event_points
    if elo is None:
        out["reason"] = "no rating tag for this player"
    elif not played:
        out["reason"] = "no finished game yet"
    elif not rated:
        out["reason"] = "no finished game against a rated opponent"
    else:
        out["tpr"] = performance_rating([o for o, _ in rated], sum(p for _, p in rated))
        out["rating_change"] = round(rating_change(elo, rated, kk, event_date), 1)
    return out


def event_figures(games: Iterable[tuple[GameFigures, bool]]) -> tuple[float | None, dict[str, int] | None]:
    """A player's event accuracy (the mean of their game accuracies) and classes, from ``(figures, white)``;
    None before any of their moves was valued.

    >>> g = GameFigures(90.0, 70.0, (1, 0, 0), (0, 1, 1), (20, 20))
    >>> event_figures([(g, True), (g, False)])
    (80.0, {'inaccuracy': 1, 'mistake': 1, 'blunder': 1})
    >>> event_figures([(GameFigures(None, None, (0, 0, 0), (0, 0, 0)), True)])
    (None, None)
    """
    accs, counts, judged = [], [0, 0, 0], 0
    for fig, white in games:
        accs.append(fig.white if white else fig.black)
        judged += fig.judged[0 if white else 1]
        for i, n in enumerate(fig.classes_of(white)):
            counts[i] += n
    acc = event_accuracy(accs)
    return (None if acc is None else round(acc, 1)), (dict(zip(CLASSES, counts)) if judged else None)


def event_moves(games: Iterable[tuple[GameFigures, bool]]) -> dict[str, int]:
    """A player's moves over their games, from ``(figures, white)``: ``played``, ``judged`` (what the classes and the
    estimates read) and ``accuracy_read`` (the moves of the games whose accuracy is shown, in the event accuracy).

    >>> g = GameFigures(90.0, None, (1, 0, 0), (0, 1, 1), (20, 18), (20, 9), (21, 20))
    >>> event_moves([(g, True), (g, False)])
    {'played': 41, 'judged': 38, 'accuracy_read': 20}
    """
    played = judged = read = 0
    for fig, white in games:
        side = 0 if white else 1
        played += fig.played[side]
        judged += fig.judged[side]
        if (fig.white if white else fig.black) is not None:
            read += fig.read[side]
    return {"played": played, "judged": judged, "accuracy_read": read}


def display_rules(performance: Mapping[str, Any] | None, games: int, max_width: float,
                  calibrated: tuple[float, float] | None) -> dict[str, Any]:
    """Whether a screen shows the performance figure, and what instead.

    Shown when it has an interval no wider than ``max_width`` and its estimate lies in the
    ``calibrated`` range (the ratings the calibration was fitted on); the interval shown never runs past
    that range (an end beyond it is cut there and named in ``open``: "low" / "high" / "both", for a screen
    to write "< 2150"). Not shown: ``more_games``, the fewest games it should take for the interval to narrow
    to ``max_width`` (as 1/√games; the spread between one game and the next makes it narrow more slowly), when
    it can be told, and ``reason`` when a display rule is why (without an estimate, the performance's own
    ``reason`` says why).

    >>> display_rules({"elo": 2710.0, "cr95": [2550.0, 2880.0]}, 3, 400.0, (1800.0, 2850.0))
    {'show': True, 'elo': 2710.0, 'cr95': [2550.0, 2850.0], 'open': 'high'}
    >>> display_rules({"elo": 2710.0, "cr95": [2300.0, 3100.0]}, 2, 400.0, (1800.0, 2850.0))
    {'show': False, 'more_games': 6, 'reason': 'interval 800 Elo wide, more than 400'}
    """
    elo = None if performance is None else performance.get("elo")
    cr = None if performance is None else performance.get("cr95")
    if elo is None or not cr:  # why: the estimate's own ``reason`` (not repeated here: every player message)
        return {"show": False, "more_games": None}
    lo, hi = float(cr[0]), float(cr[1])
    width = hi - lo
    if width > max_width:
        more = None
        if games > 0 and max_width > 0:
            more = max(1, math.ceil(games * (width / max_width) ** 2 - games))
        return {"show": False, "more_games": more, "reason": f"interval {width:.0f} Elo wide, more than {max_width:.0f}"}
    if calibrated is not None and not calibrated[0] <= elo <= calibrated[1]:
        return {"show": False, "more_games": None,
                "reason": f"outside the calibrated range {calibrated[0]:.0f}-{calibrated[1]:.0f}"}
    out: dict[str, Any] = {"show": True, "elo": elo, "cr95": [lo, hi]}
    if calibrated is not None:
        cut_lo, cut_hi = lo < calibrated[0], hi > calibrated[1]
        out["cr95"] = [max(lo, calibrated[0]), min(hi, calibrated[1])]
        if cut_lo or cut_hi:
            out["open"] = "both" if cut_lo and cut_hi else "low" if cut_lo else "high"
    return out


def more_games(n: int, more: str = "more games") -> str:
    """How long until an estimate is shown, as the screens write it (``more``: the words after the count).

    >>> more_games(4), more_games(1), more_games(1, "more g.")
    ('4 more games', '1 more game', '1 more g.')
    """
    return f"{n} {more.removesuffix('s') if n == 1 else more}"


def estimate_displays(blocks: dict[str, dict[str, Any]], model: QualityModel | None, max_width: float) -> dict[str, Any]:
    """Each estimate's ``display`` (:func:`estimate_display`): set in the ``moves_estimate`` and ``field_estimate``
    blocks of :meth:`livemon.live.estimator.Estimator.estimates`, and the headline's (``estimate``) returned, for
    the player's ``display``: one rule for the live messages, ``analyse`` and ``report``."""
    for key in ("moves_estimate", "field_estimate"):
        if isinstance(blocks.get(key), dict):
            blocks[key]["display"] = estimate_display(blocks[key], model, max_width)
    return estimate_display(blocks.get("estimate"), model, max_width)


def estimate_display(estimate: Mapping[str, Any] | None, model: QualityModel | None, max_width: float) -> dict[str, Any]:
    """:func:`display_rules` of a :mod:`livemon.rating.quality` block (``estimate``, ``moves_estimate``,
    ``field_estimate``): the range
    is the ratings its model was fitted on, and ``more_games`` the model's own count of the games until the interval
    is ``max_width`` wide (a player's persistent spread makes it narrow more slowly than 1/√games; None: never).

    >>> from livemon.rating.quality import FEATURES, QualityModel
    >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 400.0, 1700.0, 1250.0, 2850.0)
    >>> estimate_display({"elo": None, "cr95": None, "positions": 25, "games": 1, "kind": "moves"}, m, 1000.0)
    {'show': False, 'more_games': 5}
    >>> estimate_display({"elo": 2500.0, "cr95": [2100.0, 2900.0], "positions": 250, "games": 10}, m, 1000.0)
    {'show': True, 'elo': 2500.0, 'cr95': [2100.0, 2850.0], 'open': 'high'}
    """
    fitted = None if model is None else (model.elo_min, model.elo_max)
    games = int((estimate or {}).get("games") or 0)
    out = display_rules(estimate, games, max_width, fitted)
    positions = int((estimate or {}).get("positions") or 0)
    if model is None:
        return out
    if (not out["show"] and estimate is not None and estimate.get("kind") == "moves"
            and positions >= MIN_POSITIONS and "outside" not in str(out.get("reason", ""))):
        more = model.games_to(positions, max(games, 1), half_width=max_width / 2)
        out["more_games"] = None if more is None else max(more, 1)
    return out
