"""``mqtt`` feed: one JSON message per ply on a topic (schema in docs/feeds.md).

Ply continuity is checked here, legality by the tracker: the next ply is
appended; a repeat of a known ply is ignored; a known ply with a different
move is a correction (everything from it is rolled back); an illegal move is a
FeedError and nothing changes (not even the tags or the result the message
carried), so a later good message still fits. A ply that arrives before the
one it follows (out of order) is held, up to ``GAP_HOLD`` plies a game, and
applied as soon as the missing ply comes; if it has not come within
``gap_wait`` seconds (``GAP_WAIT_S`` by default), one FeedError says which ply
is missing, how many are held for it and what recovers them. The line comes
on time whether or not the feed gets another message: :class:`MoveMessages`
(sans I/O) says when the next gap falls due (:meth:`MoveMessages.deadline`) and
what is overdue at a time handed in (:meth:`MoveMessages.overdue`); the feed's
driver wakes up then. Plies refused because too many wait are one line per gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
import uuid
from typing import Any, AsyncGenerator, AsyncIterator

import aiomqtt
import chess

from livemon.io.broker import BrokerLink, BrokerSettings, delivered, make_client
from livemon.io.feeds.base import BaseFeed
from livemon.live.tracker import Ply, Snapshot
from livemon.live.fields import (
    FieldError,
    elo_field,
    eval_field,
    id_field,
    int_field,
    seconds_field,
    text_field,
)
from livemon.live.pgn import RESULT_TOKENS, parse_result
from livemon.live.messages import FeedError, Message

log = logging.getLogger(__name__)

#: JSON field -> PGN tag, for GameInfo
TAG_FIELDS = {
    "white": "White", "black": "Black", "white_elo": "WhiteElo", "black_elo": "BlackElo",
    "event": "Event", "round": "Round", "date": "Date", "site": "Site",
}


GAP_WAIT_S = 30.0
"""Seconds a game waits for a missing ply before one line says what it needs."""
GAP_HOLD = 256
"""Plies held per game while one before them is missing; beyond, they are refused (one line)."""

MAX_MESSAGE = 65536
"""Largest move message accepted, bytes (a real one is a few hundred)."""
_UCI = re.compile(r"^[a-h][1-8][a-h][1-8][qrbn]?$|^0000$")
_ELO_FIELDS = ("white_elo", "black_elo")


def _decode(payload: bytes | str) -> dict[str, Any]:
    """The JSON object of a payload, or ValueError saying what is wrong with it."""
    if len(payload) > MAX_MESSAGE:
        raise ValueError(f"{len(payload)} bytes, more than {MAX_MESSAGE}")
    if isinstance(payload, (bytes, bytearray)):
        try:
            payload = bytes(payload).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None
    try:
        d = json.loads(payload)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(d, dict):
        raise ValueError("expected a JSON object")
    return d


def _fen_field(value: Any) -> str:
    fen = text_field(value, 120)
    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise FieldError(f"not a FEN ({exc})") from None
    if not board.is_valid():
        raise FieldError(f"not a legal position: {fen!r}")
    return fen


class MoveMessages:
    """Sans-I/O: JSON move messages in, tracker messages out (the MQTT feed minus the socket).

    Every field is checked here (:mod:`livemon.live.fields`). A bad
    ``game``, ``ply``, ``uci`` or ``fen`` rejects the message (one FeedError,
    nothing changes); a bad optional field (``eval``, ``clock``, ``emt``, a tag,
    ``result``) is dropped with one FeedError naming it, and the move is kept.
    """

    def __init__(self, feed: BaseFeed, gap_wait: float = GAP_WAIT_S) -> None:
        self.feed = feed
        self.tracker = feed.tracker
        self.gap_wait = gap_wait
        self._plies: dict[str, list[Ply]] = {}
        self._headers: dict[str, dict[str, str]] = {}
        self.duplicates = 0
        self._held: dict[str, dict[int, dict[str, Any]]] = {}  # game -> ply -> its message, waiting for a gap
        self._gap_since: dict[str, float] = {}  # game -> when its first held ply came
        self._gap_reported: set[str] = set()
        self._refusal_reported: set[str] = set()  # games whose gap has said it refuses plies
        self.held = 0  # plies that ever had to wait for an earlier one
        self.refused = 0  # plies refused because GAP_HOLD plies already waited

    def handle(self, payload: bytes | str, now: float | None = None) -> list[Message]:
        """The messages one payload gives; never raises (a fault is a FeedError and a log line)."""
        now = time.monotonic() if now is None else now
        out = self._handle_payload(payload, now)
        return out + self.overdue(now)

    def deadline(self) -> float | None:
        """When the next gap not yet reported falls due (the clock of ``now``), or None: the driver wakes then."""
        due = [since + self.gap_wait for gid, since in self._gap_since.items() if gid not in self._gap_reported]
        return min(due, default=None)

    def overdue(self, now: float) -> list[Message]:
        """One line per game whose missing ply has not come within ``gap_wait`` seconds (once per gap)."""
        out: list[Message] = []
        for gid, since in self._gap_since.items():
            if gid in self._gap_reported or now - since < self.gap_wait:
                continue
            self._gap_reported.add(gid)
            held = self._held.get(gid, {})
            missing = len(self._plies.get(gid, [])) + 1
            out.append(FeedError(self.feed.name, f"{gid}: ply {missing} has not arrived in {self.gap_wait:g} s; "
                                 f"{len(held)} later plies (to ply {max(held, default=missing)}) are held for it: "
                                 f"re-send ply {missing} to recover them", gid))
        return out

    def _handle_payload(self, payload: bytes | str, now: float) -> list[Message]:
        try:
            try:
                d = _decode(payload)
                gid = id_field(d.get("game"))
            except FieldError as exc:
                raise ValueError(f"'game' (a string id) is required: {exc}") from None
        except ValueError as exc:
            return [FeedError(self.feed.name, f"bad message {excerpt(payload)}: {exc}")]
        try:
            return self._handle(gid, d, now)
        except FieldError as exc:
            return [FeedError(self.feed.name, f"{gid}: bad message: {exc}", gid)]
        except Exception as exc:  # noqa: BLE001 - a bug must not end the feed: one line, go on
            msg = f"{gid}: message not handled ({type(exc).__name__}: {str(exc)[:120]}): {excerpt(payload)}"
            return [FeedError(self.feed.name, msg, gid)]

    def _handle(self, gid: str, d: dict[str, Any], now: float) -> list[Message]:
        dropped: list[str] = []

        def optional(key: str, check: Any) -> Any:
            if d.get(key) is None:
                return None
            try:
                return check(d[key])
            except FieldError as exc:
                dropped.append(f"'{key}' ({exc})")
                return None

        uci = d.get("uci")
        n = 0
        if uci is not None:
            try:
                n = int_field(d.get("ply"), 1, 100_000)
            except FieldError as exc:
                raise FieldError(f"'ply' must be a positive integer: {exc}") from None
            if not isinstance(uci, str) or not _UCI.match(uci):
                raise FieldError(f"'uci' must be a move like 'e2e4' or 'e7e8q', got {excerpt(uci, 20)}")
        fen = None
        if d.get("fen") is not None:
            try:
                fen = _fen_field(d["fen"])
            except FieldError as exc:
                raise FieldError(f"'fen': {exc}") from None
        tags = {tag: optional(key, elo_field if key in _ELO_FIELDS else text_field) for key, tag in TAG_FIELDS.items()}
        result = optional("result", _result_field)
        ply = Ply(uci, optional("clock", seconds_field), optional("emt", seconds_field),
                  optional("eval", eval_field)) if uci is not None else None
        out: list[Message] = []
        if dropped:
            where = f"ply {n}" if uci is not None else "message"
            out.append(FeedError(self.feed.name, f"{gid}: {where}: ignored {', '.join(dropped)}", gid))
        # the tags and result of this message count only if it is taken (a refused message carries nothing)
        headers = dict(self._headers.get(gid, {"Result": "*"}))
        for tag, value in tags.items():
            if value is not None:
                headers[tag] = str(value)
        if result is not None:
            headers["Result"] = result
        known = self._plies.get(gid, [])
        candidate = known
        if ply is not None:
            if n > len(known) + 1:  # out of order: held until the missing ply comes
                held = self._held.setdefault(gid, {})
                if n not in held and len(held) >= GAP_HOLD:
                    self.refused += 1
                    if gid in self._refusal_reported:
                        return out
                    self._refusal_reported.add(gid)
                    return out + [FeedError(self.feed.name, f"{gid}: ply {n} refused, and any later ply until ply "
                                            f"{len(known) + 1} comes: {GAP_HOLD} plies already wait for it", gid)]
                held[n] = d
                self.held += 1
                self._gap_since.setdefault(gid, now)
                return out
            if n <= len(known) and known[n - 1].uci == ply.uci:
                self.duplicates += 1
                if result is None and headers == self._headers.get(gid, {"Result": "*"}):
                    return out
            else:
                candidate = known[: n - 1] + [ply]
        got = self.tracker.update(Snapshot(dict(headers), list(candidate), True, fen), game_id=gid)
        if any(isinstance(m, FeedError) for m in got):
            return out + got
        self._plies[gid] = candidate
        self._headers[gid] = headers
        return out + got + self._release(gid, now)

    def _release(self, gid: str, now: float) -> list[Message]:
        """The held plies that follow now, applied in order."""
        held = self._held.get(gid)
        out: list[Message] = []
        while held:
            for n in [k for k in held if k <= len(self._plies.get(gid, []))]:  # overtaken by a correction
                del held[n]
            nxt = held.pop(len(self._plies.get(gid, [])) + 1, None)
            if nxt is None:
                break
            out += self._handle(gid, nxt, now)
        if not held:
            self._held.pop(gid, None)
            self._gap_since.pop(gid, None)
            self._gap_reported.discard(gid)
            self._refusal_reported.discard(gid)
        return out


def _payload(message: aiomqtt.Message) -> bytes | str:
    payload = message.payload
    if isinstance(payload, bytearray):
        return bytes(payload)
    return payload if isinstance(payload, (bytes, str)) else str(payload)


async def _next(messages: AsyncIterator[aiomqtt.Message]) -> aiomqtt.Message | None:
    try:
        return await anext(messages)
    except StopAsyncIteration:
        return None


def _result_field(value: Any) -> str:
    token = parse_result(value) if isinstance(value, str) else None
    if token is None:
        raise FieldError(f"not one of {', '.join(RESULT_TOKENS)}: {excerpt(value, 20)}")
    return token


def excerpt(value: Any, n: int = 80) -> str:
    """The start of a payload or value, for a log line (bytes that are not UTF-8 shown escaped)."""
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value[:n]).decode("utf-8", "backslashreplace")
    elif not isinstance(value, str):
        value = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "<a huge integer>"
    return repr(value[:n])


class MqttFeed(BaseFeed):
    """Subscribes to ``topic`` on the broker of ``settings``; reconnects with back-off (``reconnect`` s doubling
    to the settings' ``max_backoff``)."""

    type = "mqtt"

    def __init__(self, name: str, topic: str, settings: BrokerSettings | None = None, *,
                 reconnect: float = 1.0, gap_wait: float = GAP_WAIT_S) -> None:
        super().__init__(name)
        self.topic = topic
        settings = settings or BrokerSettings(max_backoff=60.0)
        self.link = BrokerLink(f"feed {name}", settings, self._client, base_delay=reconnect, logger=log)
        self.handler = MoveMessages(self, gap_wait)
        self.connected = asyncio.Event()  # set while subscribed (tests and status wait on it)

    def _client(self) -> aiomqtt.Client:
        return make_client(self.link.settings, f"livemon-{self.name}-{uuid.uuid4().hex[:8]}")

    async def run(self) -> AsyncIterator[Message]:
        self.status.state = "starting"
        try:
            while await self.link.pause():
                try:
                    async with self.link.connect() as client:
                        await client.subscribe(self.topic, qos=1)
                        self.status.state = "running"
                        self.connected.set()
                        log.info("feed %s: subscribed to %s on %s", self.name, self.topic, self.link.settings.where)
                        async with contextlib.aclosing(self._timed(client)) as timed:
                            async for got in timed:
                                for m in self._account(got):
                                    yield m
                except aiomqtt.MqttError as exc:
                    self.connected.clear()
                    first = self.link.backoff.failures == 0
                    self.link.lost(exc, quiet=True)  # _io_error logs it
                    for m in self._io_error(f"mqtt {self.link.settings.where}: {exc}", first):
                        yield m
                    self.status.state = "waiting"
        finally:
            self.connected.clear()
            self.status.state = "stopped"

    async def _timed(self, client: aiomqtt.Client) -> AsyncGenerator[list[Message], None]:
        """What each delivered message gives and, while a gap waits, what falls due when it does (on time,
        whether or not another message comes). Raises :class:`aiomqtt.MqttError` when the connection goes."""
        messages = aiter(delivered(client))
        pending: asyncio.Task[aiomqtt.Message | None] | None = None
        try:
            while True:
                due = self.handler.deadline()
                if due is None and pending is None:  # no gap: the plain wait for the next message
                    message = await _next(messages)
                else:
                    if pending is None:
                        pending = asyncio.ensure_future(_next(messages))
                    wait = None if due is None else max(0.0, due - time.monotonic())
                    done, _ = await asyncio.wait({pending}, timeout=wait)
                    if not done:
                        yield self.handler.overdue(time.monotonic())
                        continue
                    message, pending = pending.result(), None
                if message is None:
                    return
                yield self.handler.handle(_payload(message))
        finally:
            if pending is not None:
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await pending
