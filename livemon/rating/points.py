"""What a game gives its players in an event's standings: FIDE's 1, ½, 0, or the event's own points.

Pure and light (no numpy): the config checks ``[event] points`` with it at start-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from livemon.errors import InputError

__all__ = ["Points", "PointsError", "FIDE_POINTS"]


class PointsError(InputError):
    """Points that are not a win-draw-loss in multiples of ½, a win above a draw at least a loss; one line."""


@dataclass(frozen=True)
class Points:
    """What a game gives its players: points for a win, a draw and a loss, each a multiple of ½, a win more than a
    draw and a draw at least a loss (FIDE's 1, ½, 0 by default; 3, 1, 0 in "football" scoring).

    The simulation counts scores in whole units of :attr:`step` so that ties are exact.

    >>> Points().units, Points().step
    ((0, 1, 2), 0.5)
    >>> football = Points.parse("3-1-0")
    >>> football.units, football.step, football.label
    ((0, 1, 3), 1.0, '3-1-0')
    >>> Points.parse("1-1-0")
    Traceback (most recent call last):
    ...
    livemon.rating.points.PointsError: points 1-1-0: a win must give more than a draw and a draw at least a loss
    """

    win: float = 1.0
    draw: float = 0.5
    loss: float = 0.0

    def __post_init__(self) -> None:
        for v in (self.win, self.draw, self.loss):
            if v < 0 or v > 100 or (2 * v) % 1:
                raise PointsError(f"points {self.label}: each a multiple of ½ from 0 to 100")
        if not self.win > self.draw >= self.loss:
            raise PointsError(f"points {self.label}: a win must give more than a draw and a draw at least a loss")

    @classmethod
    def parse(cls, text: str) -> Points:
        """``"3-1-0"``, ``"1-½-0"`` or ``"1-0.5-0"``: win, draw, loss (:class:`PointsError`, one line, on anything else)."""
        parts = text.replace("½", "0.5").replace(" ", "").split("-")
        try:
            win, draw, loss = (float(x) for x in parts)
        except ValueError:
            raise PointsError(f"points {text!r}: expected win-draw-loss, such as 1-0.5-0 or 3-1-0") from None
        return cls(win, draw, loss)

    def of(self, score: float) -> float:
        """The points of a game whose score is ``score`` (1, ½ or 0: a win, a draw or a loss).

        >>> Points.parse("3-1-0").of(1.0), Points.parse("3-1-0").of(0.5), Points().of(0.0)
        (3.0, 1.0, 0.0)
        """
        return self.win if score == 1.0 else self.draw if score == 0.5 else self.loss

    @property
    def label(self) -> str:
        return "-".join(f"{v:g}" for v in (self.win, self.draw, self.loss))

    @property
    def step(self) -> float:
        """The largest unit every game's points are whole multiples of."""
        return math.gcd(*(round(2 * v) for v in (self.win, self.draw, self.loss))) / 2

    @property
    def units(self) -> tuple[int, int, int]:
        """A loss's, a draw's and a win's points in units of :attr:`step`: indexed by a game's result code (0, 1, 2:
        the player's game half-points)."""
        return (round(self.loss / self.step), round(self.draw / self.step), round(self.win / self.step))


FIDE_POINTS = Points()
