"""The WebSocket protocol's frames and request parsing, without any I/O (docs/websocket.md).

Kept apart from the server so the frame shapes can be read (and tested) in one
place; the server only decides *when* to send them.

>>> parse_request('{"op":"subscribe","channels":["players"]}').op
'subscribe'
>>> parse_request('{"op":"subscribe","channels":"players"}')
Traceback (most recent call last):
...
livemon.faces.web.protocol.ProtocolError: bad_request: channels must be a list of strings
>>> check_channel("game:g1"), check_channel("alerts")
('game:g1', 'alerts')
>>> parse_request('{"op":"subscribe","channels":["players"],"batch":true}').batch
True
>>> parse_request('{"op":"subscribe","channels":["players"],"patch":true}').patch
True
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from livemon.errors import InputError
from livemon.faces.hub import ARBITER_CHANNELS, CHANNEL_AUDIENCE, PUBLIC, PUBLIC_CHANNELS, channel_audience, route
from livemon.live.messages import Outgoing

PROTOCOL_VERSION = 1
"""Bumped on any incompatible change of a frame; clients check it in ``hello``."""

OPS = ("subscribe", "unsubscribe", "snapshot", "ping")
DETAIL_CHANNELS = tuple(f"{prefix}<id>" for prefix, a in CHANNEL_AUDIENCE.items() if prefix.endswith(":") and a == PUBLIC)
"""The per-key channels of the hub's routes, as ``hello`` names them (``game:<id>``)."""
FEATURES = ("batch", "patch")
"""Optional behaviours a client may ask for, listed in ``hello.features`` (``batch``: ``deltas`` frames;
``patch``: a state message whose previous state the client holds carries only what changed)."""
NO_CONFLATION = frozenset({"alerts"})
"""Channels whose messages are never conflated in a ``deltas`` frame: each alert level is an event to show."""
MAX_CHANNELS = 64
MAX_GAME_ID = 200


class ProtocolError(InputError):
    """A client request the server answers with an error frame; ``code`` is machine-readable.

    ``rid`` is the request's ``id`` when it could be read, so the error frame echoes it.
    """

    def __init__(self, code: str, message: str, rid: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.rid = rid


@dataclass(frozen=True)
class Request:
    """One parsed client request."""

    op: str
    channels: tuple[str, ...] | None = None
    token: str | None = None
    id: Any = None
    batch: bool | None = None  # subscribe only: True asks for ``deltas`` frames, False for one ``delta`` each
    patch: bool | None = None  # subscribe only: True asks for patches, False for whole messages


def _id_of(d: dict[str, Any]) -> Any:
    rid = d.get("id")
    return rid if isinstance(rid, (str, int, float)) and not isinstance(rid, bool) and len(str(rid)) <= 64 else None


def parse_request(text: str) -> Request:
    """Parse one text frame into a :class:`Request` or raise :class:`ProtocolError` (with the ``id``, if any).

    >>> try:
    ...     parse_request('{"op": "dance", "id": 7}')
    ... except ProtocolError as exc:
    ...     exc.code, exc.rid
    ('unknown_op', 7)
    """
    try:
        d = json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_json", "not valid JSON") from None
    if not isinstance(d, dict):
        raise ProtocolError("bad_request", "expected a JSON object")
    rid = _id_of(d)
    op = d.get("op")
    if op not in OPS:
        raise ProtocolError("unknown_op", f"op must be one of {', '.join(OPS)}, got {str(op)[:40]!r}", rid)
    channels = d.get("channels")
    if channels is not None:
        if not isinstance(channels, list) or not all(isinstance(c, str) for c in channels):
            raise ProtocolError("bad_request", "channels must be a list of strings", rid)
        if len(channels) > MAX_CHANNELS:
            raise ProtocolError("bad_request", f"at most {MAX_CHANNELS} channels per request", rid)
        channels = tuple(dict.fromkeys(channels))
    elif op in ("subscribe", "unsubscribe"):
        raise ProtocolError("bad_request", f"{op} needs a channels list", rid)
    token = d.get("token")
    if token is not None and not isinstance(token, str):
        raise ProtocolError("bad_request", "token must be a string", rid)
    flags = {}
    for flag in ("batch", "patch"):
        value = flags[flag] = d.get(flag)
        if value is not None and not isinstance(value, bool):
            raise ProtocolError("bad_request", f"{flag} must be true or false", rid)
    return Request(op, channels, token, rid, **flags)


def check_channel(name: str) -> str:
    """``name`` if it is a channel a client may ask for, else :class:`ProtocolError`."""
    if channel_audience(name) is not None and len(name.partition(":")[2]) <= MAX_GAME_ID:
        return name  # a channel of a route in the hub's table (``game:<id>`` with a bounded id)
    raise ProtocolError("unknown_channel", f"unknown channel {name[:60]!r}")


def _dumps(d: Any) -> str:
    return json.dumps(d, separators=(",", ":"))


def hello_frame(seq: int, alerts: bool, heartbeat: float, max_message_bytes: int, version: str) -> str:
    return _dumps({
        "type": "hello", "protocol": PROTOCOL_VERSION, "server": f"livemon/{version}", "seq": seq,
        "channels": [*PUBLIC_CHANNELS, *DETAIL_CHANNELS] + (list(ARBITER_CHANNELS) if alerts else []),
        "heartbeat": heartbeat, "max_message_bytes": max_message_bytes, "features": list(FEATURES),
    })


def snapshot_frame_from(channel: str, seq: int, messages: str, reason: str) -> str:
    """A snapshot frame around an already encoded ``messages`` array (the messages' JSON, comma-joined in ``[]``).

    >>> json.loads(snapshot_frame_from("games", 3, "[]", "request"))["seq"]
    3
    """
    return f'{{"type":"snapshot","channel":{_dumps(channel)},"seq":{seq},"reason":{_dumps(reason)},"messages":{messages}}}'


def delta_frame_from(seq: int, prev: int, channels_json: str, message_json: str) -> str:
    """A delta around an already encoded ``channels`` array (:func:`channels_json`) and message.

    >>> delta_frame_from(5, 4, '["players"]', '{"name":"A"}')
    '{"type":"delta","seq":5,"prev":4,"channels":["players"],"message":{"name":"A"}}'
    """
    return f'{{"type":"delta","seq":{seq},"prev":{prev},"channels":{channels_json},"message":{message_json}}}'


def deltas_frame(prev: int, items: list[tuple[int, str, str]]) -> str:
    """A batch of deltas: ``items`` are ``(seq, channels JSON, message JSON)`` in seq order, at least one.

    The frame's ``seq`` is the newest item's, ``prev`` the client's last, so the gap check of a
    single ``delta`` holds for the whole frame.

    >>> f = json.loads(deltas_frame(4, [(5, '["players"]', '{"name":"A"}'), (7, '["players"]', '{"name":"B"}')]))
    >>> f["type"], f["seq"], f["prev"], [i["seq"] for i in f["items"]], f["items"][1]["message"]["name"]
    ('deltas', 7, 4, [5, 7], 'B')
    """
    body = ",".join(f'{{"seq":{s},"channels":{ch},"message":{m}}}' for s, ch, m in items)
    return f'{{"type":"deltas","seq":{items[-1][0]},"prev":{prev},"items":[{body}]}}'


def conflation_key(msg: Outgoing) -> str | None:
    """The key under which a later message supersedes ``msg`` in a batch; None: never conflated.

    Messages without a key (``status``: one state, but the brief keeps every one) and channels in
    :data:`NO_CONFLATION` (alerts) are never dropped.
    """
    r = route(msg)
    if not r.key_fields or any(ch in NO_CONFLATION for ch in r.channels(msg)):
        return None
    return r.key(msg)


def conflate(items: list[tuple[int, str | None, tuple[str, ...]]]) -> list[int]:
    """The indexes of the ``items`` to send: those no later item of the batch supersedes, in order.

    ``items`` are ``(seq, conflation key, channels the client wants)`` in seq order (the key from
    :func:`conflation_key`). An item goes when every one of its channels has a later message with
    the same key (a removal counts: it is the newest state). The hub's snapshot keeps the latest
    message per (channel, key), so the client's state after the batch is the same as after
    every item.

    >>> conflate([(1, "A", ("players",)), (2, "B", ("players",)), (3, "A", ("players",))])
    [1, 2]
    >>> conflate([(1, "B", ("players",)), (2, "B", ("players", "ttt"))])  # a removal of B on both
    [1]
    >>> conflate([(1, "B", ("players", "ttt")), (2, "B", ("players",))])  # ttt still needs the removal
    [0, 1]
    >>> conflate([(1, None, ("status",)), (2, None, ("status",))])  # no key: every one goes
    [0, 1]
    """
    keys = [key for _, key, _ in items if key is not None]
    if len(set(keys)) == len(keys):  # the common case: nothing superseded
        return list(range(len(items)))
    seen: set[tuple[str, str]] = set()
    kept = []
    for i in range(len(items) - 1, -1, -1):
        _, key, wanted = items[i]
        if key is None:
            kept.append(i)
            continue
        pairs = [(ch, key) for ch in wanted]
        if not all(pair in seen for pair in pairs):
            kept.append(i)
            seen.update(pairs)
    kept.reverse()
    return kept


def channels_json(channels: list[str]) -> str:
    """The ``channels`` array of a delta or a ``deltas`` item."""
    return _dumps(channels)


def heartbeat_frame(seq: int, last: int, now: float = 0.0) -> str:
    """A heartbeat at the hub's ``seq``, the client's ``last`` data seq and ``now`` (Unix time; 0: the clock's).

    >>> heartbeat_frame(7, 5, 1700000000.0)
    '{"type":"heartbeat","seq":7,"last":5,"time":1700000000.0}'
    """
    return _dumps({"type": "heartbeat", "seq": seq, "last": last, "time": round(now or time.time(), 3)})


def error_frame(code: str, message: str, rid: Any = None, channel: str | None = None) -> str:
    d: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if channel is not None:
        d["channel"] = channel
    if rid is not None:
        d["id"] = rid
    return _dumps(d)


def pong_frame(seq: int, rid: Any) -> str:
    return _dumps({"type": "pong", "seq": seq, "id": rid})


def unsubscribed_frame(channels: list[str], rid: Any) -> str:
    return _dumps({"type": "unsubscribed", "channels": channels, "id": rid})
