"""A game's time control: FIDE's categories, read from a PGN ``TimeControl`` tag.

FIDE's Laws of Chess (Appendices A and B) sort a game by the time each player has for 60 moves, the allotted
time plus 60 times any increment: **blitz** at 10 minutes or less, **rapid** above 10 and below 60 minutes,
**standard** (classical) at 60 minutes or more. Faster play lowers how often a player finds the engine's move,
so the screening compares a player with play of the same category (:mod:`livemon.rating.screening`).

The PGN standard writes the tag in seconds (``5400+30``, ``40/5400+30:1800+30``), but broadcasts also write
it in minutes (``90+30``: 90 minutes and 30 seconds a move). A tag is read both ways when its first period is
short enough to be minutes (180 or less), and the slower of the two categories is taken: a faster event read
as classical only makes the screening more cautious, a classical one read as rapid would make it less so.

>>> category_of("5400+30"), category_of("40/5400+30:1800+30"), category_of("900+10"), category_of("300+3")
('classical', 'classical', 'rapid', 'blitz')
>>> category_of("90+30"), category_of("15+10"), category_of("3+2")  # minutes or seconds: the slower reading
('classical', 'rapid', 'blitz')
>>> category_of("?"), category_of(""), category_of("-"), category_of("fast")
(None, None, None, None)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

__all__ = ["Category", "CATEGORIES", "category_of", "mark", "minutes_for_60", "tag_reading"]

Category = Literal["classical", "rapid", "blitz"]
CATEGORIES: tuple[Category, ...] = ("classical", "rapid", "blitz")
"""Slowest first."""

BLITZ_MAX_MINUTES = 10.0
"""A game of at most this many minutes for 60 moves (each player) is blitz (Laws of Chess, Appendix B)."""
STANDARD_MIN_MINUTES = 60.0
"""A game of at least this many minutes for 60 moves (each player) is standard (Appendix A: rapid is below)."""
MINUTES_MAX_BASE = 180
"""A first period of at most this many units may be written in minutes (a broadcast's ``90+30``)."""

_PERIOD = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?$")


def _periods(tag: str) -> list[tuple[int | None, float, float]] | None:
    """A tag's periods as (moves or None for the rest of the game, time, increment in seconds); None when it says
    no time."""
    periods = []
    for part in tag.strip().split(":"):
        m = _PERIOD.match(part.strip())
        if m is None:
            return None
        moves, time, increment = m.groups()
        periods.append((int(moves) if moves else None, float(time), float(increment or 0.0)))
    return periods


def minutes_for_60(tag: str, unit: float = 1.0) -> float | None:
    """Minutes each player has for 60 moves under a ``TimeControl`` tag, its periods' times in ``unit`` seconds
    (1: the PGN standard; 60: minutes) and its increments in seconds; None for a tag that says no time (``?``,
    ``-``, a sandclock ``*60``, anything else).

    >>> minutes_for_60("5400+30"), minutes_for_60("40/5400+30:1800+30"), minutes_for_60("600")
    (120.0, 150.0, 10.0)
    >>> minutes_for_60("90+30", unit=60.0), minutes_for_60("*60"), minutes_for_60("?")
    (120.0, None, None)
    """
    periods = _periods(tag)
    return _minutes(periods, unit) if periods else None


def _minutes(periods: list[tuple[int | None, float, float]], unit: float) -> float:
    """:func:`minutes_for_60` of a tag's periods."""
    total, covered = 0.0, 0
    for moves, time, _ in periods:
        total += time * unit
        if moves is None:
            break
        covered += moves
        if covered >= 60:
            break
    return (total + 60.0 * periods[0][2]) / 60.0


def _category(minutes: float) -> Category:
    if minutes <= BLITZ_MAX_MINUTES:
        return "blitz"
    return "rapid" if minutes < STANDARD_MIN_MINUTES else "classical"


@lru_cache(maxsize=256)
def tag_reading(tag: str | None) -> tuple[Category | None, str]:
    """The category of a ``TimeControl`` tag and a note when it was read two ways and they differ ("" else);
    (None, "") for a tag that says no time.

    >>> tag_reading("90+30")
    ('classical', 'TimeControl 90+30: 90 minutes or 90 seconds; read as the slower, classical')
    >>> tag_reading("600+5"), tag_reading(None)
    (('rapid', ''), (None, ''))
    """
    periods = _periods(tag) if tag else None
    if tag is None or not periods:
        return None, ""
    readings = [_category(_minutes(periods, 1.0))]  # in seconds, as the PGN standard writes it
    if periods[0][1] <= MINUTES_MAX_BASE:  # and in minutes, as a broadcast may
        readings.append(_category(_minutes(periods, 60.0)))
    slower = min(readings, key=CATEGORIES.index)
    base = f"{periods[0][1]:g}"
    note = "" if len(set(readings)) == 1 else (
        f"TimeControl {tag.strip()}: {base} minutes or {base} seconds; read as the slower, {slower}")
    return slower, note


def mark(category: str) -> str:
    """The letter a screening row's comparison carries for a category: "" for classical, ``r`` for rapid, ``b`` for
    blitz (read against rapid play).

    >>> mark("classical"), mark("rapid"), mark("blitz")
    ('', 'r', 'b')
    """
    return "" if category == "classical" else category[0]


def category_of(tag: str | None) -> Category | None:
    """FIDE's category of a ``TimeControl`` tag (:func:`tag_reading`), None when it says no time."""
    return tag_reading(tag)[0]
