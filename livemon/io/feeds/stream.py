"""``stream`` feed: the lichess broadcast round stream, a long-lived chunked response.

The server sends every game once, then the whole PGN of a game again each
time it changes (``/api/stream/broadcast/round/{id}.pgn``). Games are split
incrementally (:class:`~livemon.live.splitter.PgnStreamSplitter`); a game whose
movetext ends in a result or ``*`` (lichess always ends one so) is a complete
snapshot, so a shorter or different move list *is* a correction; one that does
not is treated as cut (it may only add plies). A game cut by a broken
connection is dropped; the reconnect re-sends it whole. A single game over
``max_game`` characters (``feeds.<name>.max_body_mb``) is dropped with one
error and the stream goes on from the next game.
"""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator

import httpx

from livemon.io.feeds.base import Backoff, BaseFeed
from livemon.live.splitter import PgnStreamSplitter
from livemon.live.tracker import KeyFunc
from livemon.live.messages import FeedError, Message

log = logging.getLogger(__name__)


class StreamFeed(BaseFeed):
    """Follows ``url``; reconnects with back-off when it ends or fails."""

    type = "stream"

    def __init__(self, name: str, url: str, timeout: float = 60.0, reconnect: float = 1.0,
                 max_backoff: float = 60.0, key: KeyFunc | None = None,
                 client: httpx.AsyncClient | None = None, max_game: int = 64 * 2**20) -> None:
        super().__init__(name, key)
        self.url = url
        self.max_game = max_game
        # the read timeout is a keep-alive watchdog: lichess sends data at least every few seconds
        self.timeout = httpx.Timeout(10.0, read=timeout)
        self.backoff = Backoff(reconnect, max_backoff)
        self._client = client
        self.connections = 0

    async def run(self) -> AsyncIterator[Message]:
        client = self._client or httpx.AsyncClient(timeout=self.timeout, follow_redirects=True)
        self.status.state = "running"
        try:
            while True:
                splitter = PgnStreamSplitter(self.max_game)
                error: str | None = None
                got_data = False
                try:
                    async with client.stream("GET", self.url, headers={"Accept": "application/x-chess-pgn"}) as r:
                        r.raise_for_status()
                        self.connections += 1
                        self.status.state = "running"
                        async for text in r.aiter_text():
                            overflows = splitter.overflows
                            chunks = splitter.feed(text)
                            if splitter.overflows > overflows:
                                for m in self._account([FeedError(self.name, (
                                        f"{self.url}: a game of more than {self.max_game / 2**20:g} MB "
                                        f"(feeds.{self.name}.max_body_mb) dropped; going on with the next game"))]):
                                    yield m
                            for chunk in chunks:
                                got_data = True
                                for m in self._account(self.tracker.update_chunk(chunk, complete=None)):
                                    yield m
                    for chunk in splitter.close():
                        for m in self._account(self.tracker.update_chunk(chunk, complete=None)):
                            yield m
                    log.info("feed %s: stream ended; reconnecting", self.name)
                except httpx.HTTPError as exc:
                    error = f"{self.url}: {type(exc).__name__}: {exc}" if str(exc) else f"{self.url}: {type(exc).__name__}"
                    if isinstance(exc, httpx.HTTPStatusError):
                        error = f"{self.url}: HTTP {exc.response.status_code}"
                if got_data:
                    self.backoff.reset()
                if error is not None:
                    for m in self._io_error(error, self.backoff.failures == 0):
                        yield m
                self.status.state = "waiting"
                await asyncio.sleep(self.backoff.next_delay())
        finally:
            self.status.state = "stopped"
            if self._client is None:
                await client.aclose()
