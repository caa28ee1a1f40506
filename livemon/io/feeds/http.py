"""``http`` feed: a URL returning a multi-game PGN, polled with conditional requests.

Sends ``If-None-Match``/``If-Modified-Since`` from the last good response so
an unchanged round costs a 304 and no parsing. Errors (connection refused or
dropped, 5xx, a body cut short) back off exponentially up to ``max_backoff``;
the first error of an outage is also sent as a FeedError, the rest are logged.
A 200 body is read as possibly half-written (the server may be serving a file
that is being rewritten), so a cut last game never rolls anything back.
"""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator

import httpx

from livemon.io.feeds.base import Backoff, BaseFeed
from livemon.io.feeds.core import KeyFunc, text_is_cut
from livemon.live.messages import Message

log = logging.getLogger(__name__)


class HttpFeed(BaseFeed):
    """Polls ``url`` every ``interval`` seconds."""

    type = "http"

    def __init__(self, name: str, url: str, interval: float = 5.0, timeout: float = 10.0,
                 max_backoff: float = 60.0, key: KeyFunc | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        super().__init__(name, key)
        self.url = url
        self.interval = interval
        self.timeout = timeout
        self.backoff = Backoff(interval, max_backoff)
        self._client = client
        self._etag: str | None = None
        self._last_modified: str | None = None
        self.requests = 0
        self.not_modified = 0
        self._unsettled: str | None = None  # last body, if its last game had no result or *

    async def run(self) -> AsyncIterator[Message]:
        client = self._client or httpx.AsyncClient(timeout=self.timeout, follow_redirects=True)
        self.status.state = "running"
        try:
            while True:
                try:
                    messages = await self._poll(client)
                except (httpx.HTTPError, UnicodeDecodeError) as exc:
                    first = self.backoff.failures == 0
                    for m in self._io_error(f"{self.url}: {_describe(exc)}", first):
                        yield m
                    self.status.state = "waiting"
                    await asyncio.sleep(self.backoff.next_delay())
                    continue
                self.backoff.reset()
                self.status.state = "running"
                for m in self._account(messages):
                    yield m
                await asyncio.sleep(self.interval)
        finally:
            self.status.state = "stopped"
            if self._client is None:
                await client.aclose()

    async def _poll(self, client: httpx.AsyncClient) -> list[Message]:
        headers = {"Accept": "application/x-chess-pgn, text/plain, */*"}
        if self._etag:
            headers["If-None-Match"] = self._etag
        if self._last_modified:
            headers["If-Modified-Since"] = self._last_modified
        self.requests += 1
        response = await client.get(self.url, headers=headers)
        if response.status_code == 304:
            self.not_modified += 1
            if self._unsettled is not None:
                # the same body a poll later: its last game is not being written, it just lacks a result
                text, self._unsettled = self._unsettled, None
                return self.tracker.update_text(text, source=self.url, final=False, settled=True)
            return []
        response.raise_for_status()
        text = response.text
        self._etag = response.headers.get("ETag")
        self._last_modified = response.headers.get("Last-Modified")
        settled = self._unsettled is not None and text == self._unsettled  # a server without ETags
        self._unsettled = text if text_is_cut(text) and not settled else None
        return self.tracker.update_text(text, source=self.url, final=False, settled=settled)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
