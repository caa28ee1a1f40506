"""Ratings on today's FIDE scale.

FIDE compressed the lower part of its rating scale on 1 March 2024 (FIDE Rating Regulations effective
1 March 2024, with the one-off adjustment approved by the FIDE Council in December 2023): every
published rating from 1000 to 2000 rose by ``0.4 · (2000 − R)``, rounded to a whole point, and the
rating floor went from 1000 to 1400. A 1400 became a 1640, a 1000 a 1400; 2000 and above did not
move. A rating tag means what it meant on the day its game was played, so livemon puts every tag on
today's scale with its game's date before any model reads it.

>>> to_current_scale(1400, datetime.date(2023, 5, 1))
1640
>>> to_current_scale(1400, datetime.date(2024, 5, 1))  # already on today's scale
1400
>>> to_current_scale(2100, datetime.date(2021, 1, 1))  # above 2000 nothing moved
2100
"""

from __future__ import annotations

import datetime

__all__ = ["COMPRESSION_DATE", "FLOOR_BEFORE", "FLOOR_AFTER", "to_current_scale", "floor_on"]

COMPRESSION_DATE = datetime.date(2024, 3, 1)
"""The first day of the compressed scale."""

FLOOR_BEFORE = 1000
"""The lowest published rating before the compression."""

FLOOR_AFTER = 1400
"""The lowest published rating from the compression on."""


def floor_on(played: datetime.date | None) -> int:
    """The rating floor in force on ``played`` (today's when the date is unknown).

    >>> floor_on(datetime.date(2022, 1, 1)), floor_on(datetime.date(2025, 1, 1)), floor_on(None)
    (1000, 1400, 1400)
    """
    return FLOOR_BEFORE if played is not None and played < COMPRESSION_DATE else FLOOR_AFTER


def to_current_scale(rating: int, played: datetime.date | None) -> int:
    """``rating``, published as of ``played``, on today's scale.

    A date of None is read as today's scale (the caller says so to the user). A rating under the floor
    of its date is returned as read: the caller decides how to say it.

    >>> to_current_scale(1000, datetime.date(2020, 1, 1)), to_current_scale(1999, datetime.date(2020, 1, 1))
    (1400, 1999)
    >>> to_current_scale(1312, None)
    1312
    """
    if played is None or played >= COMPRESSION_DATE or not FLOOR_BEFORE <= rating < 2000:
        return rating
    return rating + round(0.4 * (2000 - rating))
