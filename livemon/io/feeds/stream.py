"""``stream`` feed: the lichess broadcast round stream, a long-lived chunked response.

The server sends every game once, then the whole PGN of a game again each
time it changes (``/api/stream/broadcast/round/{id}.pgn``). Games are split
incrementally (:class:`~livemon.io.feeds.core.PgnStreamSplitter`); a game whose
movetext ends in a result or ``*`` (lichess always ends one so) is a complete
snapshot, so a shorter or different move list *is* a correction; one that does
not is treated as cut (it may only add plies). A game cut by a broken
connection is dropped; the reconnect re-sends it whole.
"""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator

import httpx

from livemon.io.feeds.base import Backoff, BaseFeed
from livemon.io.feeds.core import KeyFunc, PgnStreamSplitter
from livemon.live.messages import Message

log = logging.getLogger(__name__)


class StreamFeed(BaseFeed):
    """Follows ``url``; reconnects with back-off when it ends or fails."""

    type = "stream"

    def __init__(self, name: str, url: str, timeout: float = 60.0, reconnect: float = 1.0,
                 max_backoff: float = 60.0, key: KeyFunc | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        super().__init__(name, key)
        self.url = url
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
                splitter = PgnStreamSplitter()
                error: str | None = None
                got_data = False
                try:
                    async with client.stream("GET", self.url, headers={"Accept": "application/x-chess-pgn"}) as r:
                        r.raise_for_status()
                        self.connections += 1
                        self.status.state = "running"
                        async for text in r.aiter_text():
                            for chunk in splitter.feed(text):
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
