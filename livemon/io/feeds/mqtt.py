"""``mqtt`` feed: one JSON message per ply on a topic (schema in docs/feeds.md).

Ply continuity is checked here, legality by the tracker: the next ply is
appended; a repeat of a known ply is ignored; a known ply with a different
move is a correction (everything from it is rolled back); a gap or an illegal
move is a FeedError and nothing changes, so a later good message still fits.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any, AsyncIterator

import aiomqtt

from livemon.io.broker import BrokerLink, BrokerSettings, make_client
from livemon.io.feeds.base import BaseFeed
from livemon.io.feeds.core import Ply, Snapshot
from livemon.live.pgn import RESULT_TOKENS, parse_result
from livemon.live.messages import FeedError, Message

log = logging.getLogger(__name__)

#: JSON field -> PGN tag, for GameInfo
TAG_FIELDS = {
    "white": "White", "black": "Black", "white_elo": "WhiteElo", "black_elo": "BlackElo",
    "event": "Event", "round": "Round", "date": "Date", "site": "Site",
}


def _num(d: dict[str, Any], key: str, kind: type) -> Any:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{key!r} must be a number, got {v!r}")
    return kind(v)


class MoveMessages:
    """Sans-I/O: JSON move messages in, tracker messages out (the MQTT feed minus the socket)."""

    def __init__(self, feed: BaseFeed) -> None:
        self.feed = feed
        self.tracker = feed.tracker
        self._plies: dict[str, list[Ply]] = {}
        self._headers: dict[str, dict[str, str]] = {}
        self.duplicates = 0

    def handle(self, payload: bytes | str) -> list[Message]:
        try:
            d = json.loads(payload)
            if not isinstance(d, dict):
                raise ValueError("expected a JSON object")
            gid = d.get("game")
            if not isinstance(gid, (str, int)) or isinstance(gid, bool) or gid == "":
                raise ValueError("'game' (a string id) is required")
            gid = str(gid)
        except ValueError as exc:
            text = payload[:80] if isinstance(payload, str) else payload[:80].decode("utf-8", "replace")
            msg = f"bad message {text!r}: {exc}"
            log.warning("feed %s: %s", self.feed.name, msg)
            return [FeedError(self.feed.name, msg)]
        try:
            return self._handle(gid, d)
        except (ValueError, TypeError) as exc:
            return self.tracker.error(gid, f"{gid}: bad message: {exc}")

    def _handle(self, gid: str, d: dict[str, Any]) -> list[Message]:
        headers = self._headers.setdefault(gid, {"Result": "*"})
        for key, tag in TAG_FIELDS.items():
            if d.get(key) is not None:
                headers[tag] = str(d[key])
        result = d.get("result")
        if result is not None:
            token = parse_result(result) if isinstance(result, str) else None
            if token is None:
                raise ValueError(f"'result' must be one of {', '.join(RESULT_TOKENS)}, got {result!r}")
            headers["Result"] = token
        known = self._plies.get(gid, [])
        candidate = known
        uci = d.get("uci")
        if uci is not None:
            n = d.get("ply")
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"'ply' must be a positive integer, got {n!r}")
            if not isinstance(uci, str):
                raise ValueError(f"'uci' must be a string, got {uci!r}")
            ply = Ply(uci, _num(d, "clock", float), _num(d, "emt", float), _num(d, "eval", int))
            if n > len(known) + 1:
                return self.tracker.error(gid, f"{gid}: ply {n} arrived but ply {len(known) + 1} is the next (gap)")
            if n <= len(known) and known[n - 1].uci == uci:
                self.duplicates += 1
                if result is None:
                    return []
            else:
                candidate = known[: n - 1] + [ply]
        out = self.tracker.update(Snapshot(dict(headers), list(candidate), True, d.get("fen")), game_id=gid)
        if not any(isinstance(m, FeedError) for m in out):
            self._plies[gid] = candidate
        return out


class MqttFeed(BaseFeed):
    """Subscribes to ``topic`` on ``host:port``; reconnects with back-off."""

    type = "mqtt"

    def __init__(self, name: str, topic: str, host: str = "localhost", port: int = 1883,
                 username: str | None = None, password: str | None = None,
                 reconnect: float = 1.0, max_backoff: float = 60.0) -> None:
        super().__init__(name)
        self.topic, self.host, self.port = topic, host, port
        self.username, self.password = username, password
        settings = BrokerSettings(host, port, username, password, max_backoff=max_backoff)
        self.link = BrokerLink(f"feed {name}", settings, self._client, base_delay=reconnect, logger=log)
        self.handler = MoveMessages(self)
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
                        log.info("feed %s: subscribed to %s on %s:%d", self.name, self.topic, self.host, self.port)
                        async for message in client.messages:
                            payload = message.payload
                            if not isinstance(payload, (bytes, bytearray, str)):
                                payload = str(payload)
                            for m in self._account(self.handler.handle(bytes(payload) if isinstance(payload, bytearray) else payload)):
                                yield m
                except aiomqtt.MqttError as exc:
                    self.connected.clear()
                    first = self.link.backoff.failures == 0
                    self.link.lost(exc, quiet=True)  # _io_error logs it
                    for m in self._io_error(f"mqtt {self.host}:{self.port}: {exc}", first):
                        yield m
                    self.status.state = "waiting"
        finally:
            self.connected.clear()
            self.status.state = "stopped"
