"""Validation of the fields a feed or a peer sends, at the edge (no I/O).

Everything that enters livemon from outside passes one of these checks before
it reaches a message, the store or a model, so that a hostile or buggy source
costs one log line and never an exception: a number that is not finite, too
big for SQLite, of the wrong type, or a string that cannot be stored.

Evaluations follow docs/models.md §0 (:mod:`livemon.rating.evaluation`): centipawns,
White's view, clamped to ±3900. A number beyond that is a mate score in the
sending tool's own convention (±10000, ±32000, 100000 - n, ...) and becomes
±3900, as python-chess's ``Mate(n)`` does; ``"#3"``/``"#-2"`` strings are mates.

>>> eval_field(31), eval_field(10000), eval_field(-32000), eval_field("#-2"), eval_field(12.6)
(31, 3900, -3900, -3900, 13)
>>> eval_field(float("inf"))
Traceback (most recent call last):
...
livemon.live.fields.FieldError: not a finite number: inf
>>> sane_eval(10**30), sane_eval(float("nan")), sane_eval(None), sane_eval(-120)
(3900, None, None, -120)
"""

from __future__ import annotations

import math
import operator
import re
from typing import Any

from livemon.errors import LivemonError
from livemon.rating.evaluation import MATE_CP, MAX_CP

__all__ = [
    "FieldError", "INT64_MAX", "MAX_ID", "MAX_TEXT", "elo_field", "eval_field", "fits_int64", "id_field",
    "int_field", "sane_eval", "sane_seconds", "seconds_field", "text_field",
]

INT64_MAX = 2**63 - 1
"""SQLite's INTEGER is a signed 64-bit int: a larger Python int cannot be stored."""
MAX_TEXT = 200
"""Longest tag value accepted (a player's name, an event); longer is cut."""
MAX_ID = 200
"""Longest game id (the WebSocket ``game:<id>`` channel allows as much)."""
MAX_SECONDS = 1e7
"""A clock or a think time beyond ~115 days is nonsense, not a slow game."""

_MATE = re.compile(r"^\s*#\s*([+-]?)\s*(\d{1,4})\s*$")


class FieldError(LivemonError, ValueError):
    """A field that cannot be used; the text says why (the caller names the field)."""


def fits_int64(value: int) -> bool:
    """True when SQLite can store ``value`` as an INTEGER.

    >>> fits_int64(2**63 - 1), fits_int64(2**63), fits_int64(-2**63)
    (True, False, True)
    """
    return -INT64_MAX - 1 <= value <= INT64_MAX


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError(f"not a number: {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(f"not a finite number: {value!r}")
    return value


def eval_field(value: Any) -> int:
    """An evaluation as sent (number of centipawns, or ``"#n"``) in livemon's clamped centipawns."""
    if isinstance(value, str):
        m = _MATE.match(value)
        if not m:
            raise FieldError(f"not centipawns or a mate '#n': {_show(value)}")
        return -MATE_CP if m.group(1) == "-" else MATE_CP
    v = _number(value)
    cp = round(v) if isinstance(v, float) else v
    return -MAX_CP if cp < -MAX_CP else MAX_CP if cp > MAX_CP else int(cp)


def sane_eval(value: Any) -> int | None:
    """A stored or computed evaluation made safe for the models: clamped, None if unusable.

    For readers of data written before the edges checked it (the store's moves).
    """
    if value is None:
        return None
    try:
        return eval_field(value)
    except FieldError:
        return None


def seconds_field(value: Any) -> float:
    """A clock or think time in seconds: finite, 0 ≤ s ≤ 10^7."""
    v = float(_number(value)) if not isinstance(value, int) or abs(value) < 10**15 else math.inf
    if not 0 <= v <= MAX_SECONDS:
        raise FieldError(f"not between 0 and {MAX_SECONDS:g} seconds: {_show(value)}")
    return v


def sane_seconds(value: Any) -> float | None:
    """A clock or think time read from a PGN comment, None when it is not a sane one.

    >>> sane_seconds(5391.0), sane_seconds(359999999.0), sane_seconds(None)
    (5391.0, None, None)
    """
    if value is None:
        return None
    try:
        return seconds_field(value)
    except FieldError:
        return None


def int_field(value: Any, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (a float with an integral value is not one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(f"not an integer: {_show(value)}")
    v = operator.index(value)
    if not low <= v <= high:
        raise FieldError(f"not between {low} and {high}: {_show(value)}")
    return v


def elo_field(value: Any) -> int:
    """A rating: an integer 0..4000 (a numeric string is accepted, as PGN tags are strings)."""
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 5:
        value = int(value.strip())
    return int_field(value, 0, 4000)


def text_field(value: Any, limit: int = MAX_TEXT) -> str:
    """A string that can be stored (UTF-8 encodable, no NUL), cut to ``limit`` characters.

    A number is accepted and written as text (``"round": 5``).
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise FieldError(f"not a string: {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FieldError(f"not a finite number: {value!r}")
    text = str(value) if not isinstance(value, int) or abs(value) < 10**30 else None
    if text is None:
        raise FieldError(f"a number too long for a tag: {_show(value)}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(f"not valid Unicode text: {_show(value)}") from None
    if "\0" in text:
        raise FieldError(f"contains a NUL character: {_show(value)}")
    return text[:limit]


def id_field(value: Any) -> str:
    """A game id: a non-empty string or integer of at most :data:`MAX_ID` characters."""
    if isinstance(value, float):
        raise FieldError(f"not a string id: {_show(value)}")
    text = text_field(value, MAX_ID + 1)
    if not text.strip():
        raise FieldError("empty")
    if len(text) > MAX_ID:
        raise FieldError(f"longer than {MAX_ID} characters: {_show(value)}")
    return text


def _show(value: Any, n: int = 40) -> str:
    """A short, safe rendering of a bad value for a log line."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."
