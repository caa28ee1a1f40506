"""The JSON of the outgoing messages: the WebSocket's frames, the JSON snapshot, MQTT's payloads and the
``players``/``moments`` of ``analyse --json`` and ``export --json`` (docs/websocket.md).

One codec writes every outgoing value (:mod:`livemon.live.messages`, which knows no JSON): its fields, its
``kind`` and the message version ``v``; floats rounded to the places a reader can use (:data:`WIRE_DECIMALS`);
a board's ``win_percents``, ``move_accuracy`` and ``move_classes`` beside its ``evals``. A message's copy on its
main channel (``games``: every board of a round, to every client) leaves out the :data:`DETAIL_FIELDS`, sent only
on its detail channel (``game:<id>``); a *patch* carries only the fields that changed since the state it replaces
(:func:`changed_since`, :func:`patch_json`). :func:`from_dict` reads a message back (the web process's pipe).

>>> from livemon.live.messages import BoardState, PlayerEstimate, TTTRating
>>> to_dict(PlayerEstimate("A", 2500, 10, -37.90909090909091, 0.09090909090909091, None, None,
...                        c_cr95=(0.02300497023786008, 0.9397269754859974)))["c_cr95"]
(0.023, 0.9397)
>>> t = TTTRating("A", 1.0, 0.2, 2810.0, 40.0, 9, ts=1.5)
>>> back = from_dict(json.loads(to_json(t)))
>>> back == t, back.ts, json.loads(to_json(t))["v"]
(True, 1.5, 3)
>>> b = BoardState("g1", "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 2, eval_cp=-5, evals=(10, 20, -5))
>>> json.loads(main_json(b))["eval_cp"], "evals" in json.loads(main_json(b)), json.loads(to_json(b))["evals"]
(-5, False, [10, 20, -5])
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable
from typing import Any

from livemon.errors import InputError
from livemon.faces.hub import OUTGOING, ROUTES, route
from livemon.live.messages import BoardState, GainCounts, Outgoing

__all__ = ["DETAIL_FIELDS", "MESSAGE_VERSION", "WIRE_DECIMALS", "changed_since", "detail_fields", "from_dict",
           "from_json", "main_dict", "main_json", "patch_json", "plain_fields", "report_entry", "to_dict", "to_json"]

MESSAGE_VERSION = 3
"""Version of the outgoing messages' JSON (``"v"``): 3 made a player's ``display`` the headline estimate's
(``estimate``; it was ``performance``'s); 2 added ``ts`` and ``v``; 1 was without both."""

WIRE_DECIMALS: dict[str, dict[str, int]] = {
    "player": {"mean_gain": 2, "expected_score_vs_engine": 4, "rating_diff_vs_engine": 1, "perceived_elo": 1,
               "perceived_elo_range": 1, "event_perceived_elo": 1, "c_mean": 4, "c_sd": 4, "c_cr95": 4, "c_elo": 1,
               "c_elo_cr95": 1, "ttt_mu": 1, "ttt_sigma": 1, "accuracy": 1},
    "ttt": {"mu": 4, "sigma": 4, "elo": 1, "elo_sigma": 1},
    "moment": {"win_before": 1, "win_after": 1, "mover_win_before": 1, "mover_win_after": 1},
}
"""Per kind, the decimal places a float field (or a list of floats) keeps in the JSON.

A live round sends hundreds of these a second to every client; ``-37.90909090909091`` says no
more than ``-37.91``. In-process faces (the TUI) get the exact values."""

DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "board": ("evals", "classes", "eval_preview", "moves", "moves_uci", "first_choice"),  # on game:<id>, not games
    "player": ("gain_histogram",),  # O(moves): on player:<name>, not on players
}
"""Per kind, the fields sent only where the message goes out on its detail channel (a board's ``evals``,
O(plies), on ``game:<id>``); its copy on the main channel leaves them out (:func:`main_json`). MQTT gets
every field."""

BOARD_DERIVED: tuple[str, ...] = ("win_percents", "move_accuracy", "move_classes")
"""Keys of a board's JSON made from ``evals`` wherever ``evals`` goes out (not fields: nothing more kept per message)."""


def _check() -> None:
    """Every field named above exists, and a detail field belongs to a kind with a detail channel."""
    for table in (WIRE_DECIMALS, DETAIL_FIELDS):
        for kind, names in table.items():
            fields = {f.name for f in dataclasses.fields(OUTGOING[kind])}
            if not set(names) <= fields:
                raise TypeError(f"{kind}: names no field {sorted(set(names) - fields)}")
    for kind in DETAIL_FIELDS:
        if ROUTES[kind].detail is None:
            raise TypeError(f"{kind}: detail fields without a detail channel")


_check()

_ATOMS = frozenset((str, int, float, bool, type(None)))
_NO_DECIMALS: dict[str, int] = {}


def _plain(value: Any) -> Any:
    """``dataclasses.asdict``'s conversion of one field value (dataclasses to dicts, containers copied)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return kind(*[_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return kind(_plain(v) for v in value)
    if isinstance(value, dict):
        return kind((_plain(k), _plain(v)) for k, v in value.items())
    if kind is GainCounts:
        return dict(value.items())
    return copy.deepcopy(value)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(obj: Any) -> tuple[str, ...]:
    """The dataclass fields' names of ``obj``'s class, in order (looked up once per class)."""
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    return names


def plain_fields(obj: Any, skip: Iterable[str] = ()) -> dict[str, Any]:
    """``dataclasses.asdict(obj)``, several times faster on the flat messages of the live path
    (a str, int, float, bool or None field is taken as is; anything else converted as asdict does);
    without the fields named in ``skip``.

    >>> from livemon.live.messages import MoveEvent
    >>> m = MoveEvent("g", 1, "e2e4", "e4", "8/8 w - - 0 1", clock=61.0)
    >>> plain_fields(m) == dataclasses.asdict(m)
    True
    """
    d = {}
    for name in _field_names(obj):
        if name in skip:
            continue
        value = getattr(obj, name)
        d[name] = value if type(value) in _ATOMS else _plain(value)
    return d


def _rounded(value: Any, places: int) -> Any:
    """``value`` with its floats (alone or in a list) rounded to ``places`` decimals; anything else as is."""
    if type(value) is float:
        return round(value, places)
    if type(value) in (list, tuple):
        return type(value)(round(v, places) if type(v) is float else v for v in value)
    return value


def detail_fields(msg: Outgoing) -> tuple[str, ...]:
    """The fields of ``msg`` sent only on its detail channel (:data:`DETAIL_FIELDS`)."""
    return DETAIL_FIELDS.get(msg.kind, ())


def _wire_dict(msg: Outgoing, skip: Iterable[str]) -> dict[str, Any]:
    d = plain_fields(msg, skip)
    d["kind"] = msg.kind
    for name, places in WIRE_DECIMALS.get(msg.kind, _NO_DECIMALS).items():
        if name in d:
            d[name] = _rounded(d[name], places)
    d["v"] = MESSAGE_VERSION
    if "evals" in d and type(msg) is BoardState:
        _board_figures(msg, d)
    return d


def _board_figures(board: BoardState, d: dict[str, Any]) -> None:
    """With ``evals`` (``game:<id>``): ``win_percents`` (White's, per position), ``move_accuracy`` and
    ``move_classes`` (the mover's, per ply; none on a ply in ``first_choice``), as the board made them when it was
    built (one decimal; a preview never makes a figure)."""
    d["win_percents"], d["move_accuracy"], d["move_classes"] = (list(board.win_percents), list(board.move_accuracy),
                                                                 list(board.move_classes))


def to_dict(msg: Outgoing) -> dict[str, Any]:
    """The JSON shape: every field, ``kind``, ``v``; floats at the kind's :data:`WIRE_DECIMALS`."""
    return _wire_dict(msg, ())


def to_json(msg: Outgoing) -> str:
    """:func:`to_dict` as compact JSON (what ``game:<id>`` and MQTT carry)."""
    return json.dumps(_wire_dict(msg, ()), separators=(",", ":"))


def main_dict(msg: Outgoing) -> dict[str, Any]:
    """:func:`to_dict` of the message's copy on its main channel: without the :data:`DETAIL_FIELDS`."""
    return _wire_dict(msg, detail_fields(msg))


def main_json(msg: Outgoing) -> str:
    """The JSON of the message's copy on its main channel (:func:`main_dict`)."""
    return json.dumps(_wire_dict(msg, detail_fields(msg)), separators=(",", ":"))


def changed_since(msg: Outgoing, prev: Outgoing) -> frozenset[str]:
    """The fields (not the key's, not ``ts``) whose JSON differs from ``prev``'s: what a *patch* carries.

    ``prev`` is the state this message replaces (:meth:`livemon.faces.hub.Hub.previous`: the same
    class and key). A float is compared as the wire sends it (:data:`WIRE_DECIMALS`).

    >>> from livemon.live.messages import PlayerEstimate
    >>> a = PlayerEstimate("A", 2500, 10, -37.901, 0.4, None, None, c_mean=0.5)
    >>> sorted(changed_since(dataclasses.replace(a, moves=11, mean_gain=-37.899, c_mean=0.6), a))
    ['c_mean', 'moves']
    """
    decimals, key = WIRE_DECIMALS.get(msg.kind, _NO_DECIMALS), route(msg).key_fields
    changed = []
    for name in _field_names(msg):
        if name == "ts" or name in key:
            continue
        new, old = getattr(msg, name), getattr(prev, name)
        if new == old:
            continue
        places = decimals.get(name)
        if places is None or _rounded(new, places) != _rounded(old, places):
            changed.append(name)
    return frozenset(changed)


def patch_json(msg: Outgoing, fields: Iterable[str], skip: Iterable[str] = ()) -> str:
    """The JSON of a patch: ``"patch": true``, the key's fields, ``fields`` but not ``skip``, ``kind``, ``v``
    and ``ts`` (docs/websocket.md: a client merges it into the state it holds of the key).

    >>> a = BoardState("g1", "A", "B", 2700, 2650, "8/8/8/8/8/8/8/8 w - - 0 1", 2, evals=(10, 12))
    >>> b = dataclasses.replace(a, ply=3, eval_cp=15, evals=(10, 12, 15), ts=9.5)
    >>> patch_json(b, changed_since(b, a), skip=detail_fields(b))
    '{"ts":9.5,"game_id":"g1","ply":3,"eval_cp":15,"kind":"board","v":3,"patch":true}'
    """
    keep = {"ts", *route(msg).key_fields, *fields}.difference(skip)
    d = _wire_dict(msg, tuple(name for name in _field_names(msg) if name not in keep))
    d["patch"] = True
    return json.dumps(d, separators=(",", ":"))


def report_entry(msg: Outgoing) -> dict[str, Any]:
    """A message as ``analyse --json`` and ``export --json`` list it: :func:`to_dict` (its detail channel's JSON)
    without ``kind``, ``v`` and ``ts``, which say nothing outside a stream.

    >>> from livemon.live.messages import PlayerEstimate
    >>> report_entry(PlayerEstimate("A", 2500, 10, -37.909, 0.4, None, None, ts=3.0))["mean_gain"]
    -37.91
    """
    d = _wire_dict(msg, ())
    for key in ("kind", "v", "ts"):
        del d[key]
    return _json_plain(d)


def _json_plain(value: Any) -> Any:
    """A value as JSON reads it back (tuples as lists), so a report built in process equals the one a command
    printed.

    >>> _json_plain({"range": (1, None), "n": [(2, 3)]})
    {'range': [1, None], 'n': [[2, 3]]}
    """
    if isinstance(value, dict):
        return {k: _json_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_plain(v) for v in value]
    return value


def from_dict(d: dict[str, Any]) -> Outgoing:
    """The outgoing message of a :func:`to_dict` (the class named by its ``kind``: unknown keys ignored, JSON
    arrays back to tuples where a field is one); InputError (a ValueError) when the kind is unknown."""
    cls = OUTGOING.get(str(d.get("kind")))
    if cls is None:
        raise InputError(f"not an outgoing message kind: {str(d.get('kind'))[:40]!r}")
    fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) and fields[k].startswith("tuple") else v
                              for k, v in d.items() if k in fields}
    return cls(**values)


def from_json(text: str | bytes) -> Outgoing:
    """:func:`from_dict` of a JSON text."""
    return from_dict(json.loads(text))
