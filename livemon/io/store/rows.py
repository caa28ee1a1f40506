"""The store's row codec: a game's tags, a move or an alert as the JSON text a row keeps, and back."""

from __future__ import annotations

import dataclasses
import json
import math
from json.encoder import encode_basestring_ascii
from dataclasses import replace
from typing import TypeVar

from livemon.live.fields import sane_eval
from livemon.live.memo import Memo
from livemon.live.messages import Alert, GameInfo, MoveEvent

Row = TypeVar("Row", GameInfo, MoveEvent, Alert)

_ROW_FIELDS: dict[type, tuple[str, ...]] = {}


def _row_fields(cls: type) -> tuple[str, ...]:
    names = _ROW_FIELDS.get(cls)
    if names is None:
        names = _ROW_FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_ROW_KEYS: dict[type, tuple[tuple[str, str], ...]] = {}


def _flat_row(value: GameInfo | MoveEvent | Alert) -> str | None:
    """``row_of``'s text written field by field when every field is a string, an int, a finite float or None
    (a move's always): what ``json.dumps`` writes, without its per-call encoder; None for any other field."""
    cls = type(value)
    keys = _ROW_KEYS.get(cls)
    if keys is None:
        keys = _ROW_KEYS[cls] = tuple((name, encode_basestring_ascii(name) + ":") for name in _row_fields(cls))
    parts = []
    for name, key in keys:
        v = getattr(value, name)
        t = type(v)
        if t is str:
            parts.append(key + encode_basestring_ascii(v))
        elif v is None:
            parts.append(key + "null")
        elif t is int:
            parts.append(key + int.__repr__(v))
        elif t is float and math.isfinite(v):
            parts.append(key + float.__repr__(v))
        else:
            return None
    parts.append('"kind":' + encode_basestring_ascii(value.kind))
    return "{" + ",".join(parts) + "}"


TEXTS_KEPT = 8_192
"""A move's short texts remembered with their JSON (game ids, moves, feed names; cleared when full)."""
_TEXTS = Memo[str, str](TEXTS_KEPT)


def _text(s: str) -> str:
    """``s`` as JSON writes it, remembered (a game's id and its feed's name come with every move)."""
    text = _TEXTS.get(s)
    return _TEXTS.put(s, encode_basestring_ascii(s)) if text is None else text


def _number(v: object) -> str | None:
    """A number field as JSON writes it (``null`` for None), None for anything but an int, a finite float or
    None."""
    if v is None:
        return "null"
    t = type(v)
    if t is int:
        return int.__repr__(v)  # type: ignore[arg-type]
    if t is float and math.isfinite(v):  # type: ignore[arg-type]
        return float.__repr__(v)  # type: ignore[arg-type]
    return None


_MOVE_IN_ORDER = _row_fields(MoveEvent) == ("game_id", "ply", "uci", "san", "fen_before", "clock", "emt", "eval_cp",
                                             "feed", "start_eval_cp", "eval_mate")
"""The fields :func:`_move_row` writes, in a move's order (a field added to the move: ``_flat_row`` writes it)."""


def _move_row(m: MoveEvent) -> str | None:
    """:func:`_flat_row` of a move, written in one piece (the store writes one a move): its texts'
    JSON remembered but the FEN's, its numbers checked as ``_flat_row`` checks them; None where that
    one would give None (a field of another type), or would write the fields in another order.

    >>> m = MoveEvent("g1", 3, "e2e4", "e4", "8/8 w - - 0 1", clock=61.5, eval_cp=-20, feed="f")
    >>> _move_row(m) == _flat_row(m) == json.dumps({**dataclasses.asdict(m), "kind": "move"}, separators=(",", ":"))
    True
    """
    if not _MOVE_IN_ORDER:
        return None
    numbers = (_number(m.ply), _number(m.clock), _number(m.emt), _number(m.eval_cp), _number(m.start_eval_cp),
               _number(m.eval_mate))
    game_id, uci, san, fen, feed = m.game_id, m.uci, m.san, m.fen_before, m.feed
    if (None in numbers or type(m.ply) is not int or type(game_id) is not str or type(uci) is not str
            or type(san) is not str or type(fen) is not str or type(feed) is not str):
        return None
    ply, clock, emt, eval_cp, start, mate = numbers
    return (f'{{"game_id":{_text(game_id)},"ply":{ply},"uci":{_text(uci)},"san":{_text(san)},'
            f'"fen_before":{encode_basestring_ascii(fen)},"clock":{clock},"emt":{emt},"eval_cp":{eval_cp},'
            f'"feed":{_text(feed)},"start_eval_cp":{start},"eval_mate":{mate},"kind":"move"}}')


def row_of(value: GameInfo | MoveEvent | Alert) -> str:
    """The JSON text a game's tags, a move or an alert is kept as (``games.info``, ``moves.event``,
    ``alerts.alert``): its fields and its ``kind``.

    >>> m = MoveEvent("g1", 1, "e2e4", "e4", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", clock=61.0)
    >>> value_of(MoveEvent, row_of(m)) == m, json.loads(row_of(m))["kind"]
    (True, 'move')
    """
    flat = _move_row(value) if type(value) is MoveEvent else None
    if flat is None:
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
