"""The store's row codec: a game's tags, a move or an alert as the JSON text a row keeps, and back."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from dataclasses import replace
from operator import attrgetter
from typing import Any, TypeVar

from livemon.live.fields import sane_eval
from livemon.live.messages import Alert, GameInfo, Message, MoveEvent

Row = TypeVar("Row", GameInfo, MoveEvent, Alert)

_ROW_FIELDS: dict[type, tuple[str, ...]] = {}


def _row_fields(cls: type) -> tuple[str, ...]:
    names = _ROW_FIELDS.get(cls)
    if names is None:
        names = _ROW_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_ROW_FORMS: dict[type, tuple[Callable[[Any], tuple[Any, ...]], str]] = {}


def _row_form(cls: type[Message]) -> tuple[Callable[[Any], tuple[Any, ...]], str]:
    """How :func:`_flat_row` writes a row of ``cls``: a getter of its fields' values (in field order) and the text
    with a ``%s`` for each value's JSON, its ``kind`` (the class's) written in.

    >>> get, form = _row_form(MoveEvent)
    >>> form[:23], form[-15:], form.count("%s") == len(get(MoveEvent("g", 1, "e2e4", "e4", "8/8/8/8/8/8/8/8 w - - 0 1")))
    ('{"game_id":%s,"ply":%s,', ',"kind":"move"}', True)
    """
    found = _ROW_FORMS.get(cls)
    if found is None:
        names = _row_fields(cls)
        get = attrgetter(*names) if len(names) > 1 else lambda value: tuple(getattr(value, name) for name in names)
        form = ("{" + "".join(encode_basestring_ascii(name).replace("%", "%%") + ":%s," for name in names)
                + '"kind":' + encode_basestring_ascii(cls.kind).replace("%", "%%") + "}")
        found = _ROW_FORMS[cls] = (get, form)
    return found


_int_text, _float_text, _isfinite = int.__repr__, float.__repr__, math.isfinite


def _flat_row(value: GameInfo | MoveEvent | Alert) -> str | None:
    """``row_of``'s text written field by field when every field is a string, an int, a finite float or None
    (a move's always): what ``json.dumps`` writes, without its per-call encoder, the values' texts put into the
    class's form at once; None for any other field."""
    get, form = _row_form(type(value))
    texts: list[str] = []
    append = texts.append
    for v in get(value):
        t = type(v)
        if t is str:
            append(encode_basestring_ascii(v))
        elif v is None:
            append("null")
        elif t is int:
            append(_int_text(v))
        elif t is float and _isfinite(v):
            append(_float_text(v))
        else:
            return None
    return form % tuple(texts)


def row_of(value: GameInfo | MoveEvent | Alert) -> str:
    """The JSON text a game's tags, a move or an alert is kept as (``games.info``, ``moves.event``,
    ``alerts.alert``): its fields and its ``kind``.

    >>> m = MoveEvent("g1", 1, "e2e4", "e4", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", clock=61.0)
    >>> value_of(MoveEvent, row_of(m)) == m, json.loads(row_of(m))["kind"]
    (True, 'move')
    """
    flat = _flat_row(value)
    if flat is not None:
        return flat
    d = {name: getattr(value, name) for name in _row_fields(type(value))}
    d["kind"] = value.kind
    return json.dumps(d, separators=(",", ":"))


def value_of(cls: type[Row], text: str | bytes) -> Row:
    """The value of a row written by :func:`row_of` (keys it does not know, from another version, ignored)."""
    names = set(_row_fields(cls))
    return cls(**{k: v for k, v in json.loads(text).items() if k in names})


def stored_move(move: MoveEvent) -> MoveEvent:
    """A stored move as the models may use it: an ``eval_cp`` written before the feeds clamped it
    (10000 for a mate, 2**63, NaN) is clamped to ±3900 or dropped, so the reader never breaks.

    >>> m = MoveEvent("g1", 1, "e2e4", "e4", "8/8/8/8/8/8/8/8 w - - 0 1", eval_cp=10000)
    >>> stored_move(m).eval_cp
    3900
    """
    clean, start = sane_eval(move.eval_cp), sane_eval(move.start_eval_cp)
    if clean == move.eval_cp and type(clean) is type(move.eval_cp) and start == move.start_eval_cp \
            and type(start) is type(move.start_eval_cp):
        return move
    return replace(move, eval_cp=clean, start_eval_cp=start)
