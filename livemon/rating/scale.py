"""Ratings on today's FIDE scale.

FIDE compressed the lower part of its rating scale on 1 March 2024 (FIDE Rating Regulations effective
1 March 2024, with the one-off adjustment approved by the FIDE Council in December 2023): every
published rating from 1000 to 2000 rose by ``0.4 · (2000 − R)``, rounded to a whole point, and the
rating floor went from 1000 to 1400. A 1400 became a 1640, a 1000 a 1400; 2000 and above did not
move. A rating tag means what it meant on the day its game was played, so livemon puts every tag on
today's scale with its game's date before any model reads it (:func:`read_tag`, at the one place tags
are read: :func:`livemon.live.pgn.game_info` and the results files). Screens that show a player's
rating show the tag as published (what the audience knows, and what FIDE's rating change is computed
on); every model — the estimate's fit and its noise by level, the field's prior, screening's
expectation, TTT's priors, the benches' truth — reads today's scale.

Bad input is said in one line (:func:`read_tag`'s note), never turned into a silent wrong number: a
tag without a date is read as on today's scale, a date before FIDE's first list (1971) likewise, a tag
under its date's floor is read as given.

>>> to_current_scale(1400, datetime.date(2023, 5, 1))
1640
>>> to_current_scale(1400, datetime.date(2024, 5, 1))  # already on today's scale
1400
>>> to_current_scale(2100, datetime.date(2021, 1, 1))  # above 2000 nothing moved
2100
"""

from __future__ import annotations

import datetime

__all__ = ["COMPRESSION_DATE", "FIRST_LIST", "FLOOR_BEFORE", "FLOOR_AFTER", "SCALE_NOTE", "floor_on", "read_tag",
           "to_current_scale"]

COMPRESSION_DATE = datetime.date(2024, 3, 1)
"""The first day of the compressed scale."""

FLOOR_BEFORE = 1000
"""The lowest published rating before the compression."""

FLOOR_AFTER = 1400
"""The lowest published rating from the compression on."""

FIRST_LIST = datetime.date(1971, 1, 1)
"""FIDE's rating lists start in 1971: a tag dated before is no FIDE rating of its day."""

SCALE_NOTE = "ratings on today's FIDE scale (after the 1 March 2024 compression)"
"""What outputs say of the ratings their models read."""


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


def read_tag(rating: int, played: datetime.date | None, what: str = "rating") -> tuple[int, str]:
    """``rating`` (a tag, published as of ``played``) on today's scale, and one line on what was assumed
    ("" when nothing was): no date (read as on today's scale), a date before FIDE's first list (likewise),
    a tag under its date's floor (read as given: it is no FIDE rating of that day).

    >>> read_tag(1400, datetime.date(2023, 5, 1))
    (1640, '')
    >>> read_tag(1400, None, "WhiteElo")
    (1400, "WhiteElo 1400: no game date, read as on today's FIDE scale")
    >>> read_tag(1300, datetime.date(2024, 6, 1))[1]
    "rating 1300 on 2024-06-01 is under FIDE's floor of 1400 then: read as given"
    >>> read_tag(2100, datetime.date(1965, 1, 1))[1]
    "rating 2100 dated 1965-01-01, before FIDE's first list (1971): read as on today's FIDE scale"
    >>> read_tag(900, None, "BlackElo")[1]  # read as today's, so today's floor is said too
    "BlackElo 900: no game date, read as on today's FIDE scale, under its floor of 1400: read as given"
    """
    below = f", under its floor of {FLOOR_AFTER}: read as given" if rating < FLOOR_AFTER else ""
    if played is None:
        return rating, f"{what} {rating}: no game date, read as on today's FIDE scale{below}"
    if played < FIRST_LIST:
        return rating, (f"{what} {rating} dated {played.isoformat()}, before FIDE's first list "
                        f"({FIRST_LIST.year}): read as on today's FIDE scale{below}")
    floor = floor_on(played)
    if rating < floor:
        return rating, f"{what} {rating} on {played.isoformat()} is under FIDE's floor of {floor} then: read as given"
    return to_current_scale(rating, played), ""
