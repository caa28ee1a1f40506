"""``http`` feed: a URL returning a multi-game PGN, polled with conditional requests.

Sends ``If-None-Match``/``If-Modified-Since`` from the last good response so
an unchanged round costs a 304 and no parsing. Errors (connection refused or
dropped, 5xx, a body cut short) back off exponentially up to ``max_backoff``;
the first error of an outage is also sent as a FeedError, the rest are logged.
A 200 body is read as possibly half-written (the server may be serving a file
that is being rewritten), so a cut last game never rolls anything back.

A poll has a total deadline of ``timeout`` seconds (connect, headers and the
whole body: a server trickling bytes cannot hold it longer), a body over
``max_body`` bytes is refused with one error (``feeds.<name>.max_body_mb``),
and a body is decoded and parsed in a worker thread, so a big one never
blocks the event loop.

Every 200 body is the whole round, and a 304 says it is unchanged: a game the
round no longer lists is withdrawn after ``withdraw_after`` seconds
(:meth:`~livemon.live.tracker.GameTracker.poll_done`); a failed poll counts
for nothing.

A source that flaps (a CDN whose edges serve a stale and a fresh copy in turn)
must not roll games back and forth: a stale body
(:class:`~livemon.io.feeds.stale.StaleCopies`) is ignored until it has been
served ``STALE_POLLS`` polls in a row (an operator's real revert comes through
then). The feed's first stale body is one log line; the rest are counted
(``feed.stale_bodies`` in the status's faults).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from typing import AsyncIterator

import httpx

from livemon.errors import FAULTS, LivemonError
from livemon.io.feeds.base import Backoff, BaseFeed
from livemon.io.feeds.stale import STALE_POLLS, StaleCopies
from livemon.live.splitter import text_is_cut
from livemon.live.tracker import KeyFunc
from livemon.live.messages import Message

log = logging.getLogger(__name__)

class HttpFeed(BaseFeed):
    """Polls ``url`` every ``interval`` seconds."""

    type = "http"

    def __init__(self, name: str, url: str, interval: float = 5.0, timeout: float = 10.0,
                 max_backoff: float = 60.0, key: KeyFunc | None = None,
                 client: httpx.AsyncClient | None = None, max_body: int = 64 * 2**20,
                 withdraw_after: float | None = 10.0) -> None:
        super().__init__(name, key, withdraw_after)
        self.url = url
        self.interval = interval
        self.timeout = timeout
        self.max_body = max_body
        self.backoff = Backoff(interval, max_backoff)
        self._client = client
        self._etag: str | None = None
        self._last_modified: str | None = None
        self.requests = 0
        self.not_modified = 0
        self._unsettled: str | None = None  # last body, if its last game had no result or *
        self._copies = StaleCopies()  # the bodies taken, to tell a stale copy of the round

    async def run(self) -> AsyncIterator[Message]:
        client = self._client or httpx.AsyncClient(timeout=self.timeout, follow_redirects=True)
        self.status.state = "running"
        try:
            while True:
                try:
                    messages = await self._poll(client)
                except (httpx.HTTPError, UnicodeDecodeError, BodyTooBig, TimeoutError) as exc:
                    first = self.backoff.failures == 0
                    for m in self._io_error(f"{self.url}: {_describe(exc)}", first):
                        yield m
                    self.status.state = "waiting"
                    await asyncio.sleep(self.backoff.next_delay())
                    continue
                self.backoff.reset()
                self.status.state = "running"
                # a whole read of the round (a 200, or a 304: unchanged): games it no longer lists go, after a while
                messages += self.tracker.poll_done([self.url], time.monotonic())
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
        # the deadline covers the network only: a parse in its thread is never cancelled half-way
        async with asyncio.timeout(self.timeout), client.stream("GET", self.url, headers=headers) as response:
            if response.status_code == 304:
                self.not_modified += 1
                chunks = None
            else:
                response.raise_for_status()
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > self.max_body:
                    raise BodyTooBig(int(declared), self.max_body, self.name)
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > self.max_body:
                        raise BodyTooBig(size, self.max_body, self.name)
                    chunks.append(chunk)
                etag, last_modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
                encoding = response.encoding or "utf-8"
        if chunks is None:
            if self._unsettled is not None:
                # the same body a poll later: its last game is not being written, it just lacks a result
                text, self._unsettled = self._unsettled, None
                return await asyncio.to_thread(self.tracker.update_text, text, source=self.url, final=False,
                                               settled=True, view=self.url)
            return []
        return await asyncio.to_thread(self._apply, b"".join(chunks), encoding, etag, last_modified)

    @property
    def stale_bodies(self) -> int:
        """Stale bodies ignored so far."""
        return self._copies.stale

    def _apply(self, body: bytes, encoding: str, etag: str | None, last_modified: str | None) -> list[Message]:
        """Decode and parse a 200 body (in a worker thread; only this feed's task uses the tracker)."""
        digest = hashlib.blake2b(body, digest_size=16).digest()
        if not self._copies.take(self.url, digest, len(body)):
            FAULTS.count("feed.stale_bodies")
            if self._copies.stale == 1:
                log.warning("feed %s: %s served an earlier version of the round again (a stale cache?): "
                            "ignored unless it is served %d polls in a row; logged once", self.name, self.url,
                            STALE_POLLS)
            return []
        try:
            text = body.decode(encoding, errors="replace")
        except LookupError:  # an unknown charset in Content-Type
            text = body.decode("utf-8", errors="replace")
        self._etag, self._last_modified = etag, last_modified
        text = self._without_junk(text, self.url)
        settled = self._unsettled is not None and text == self._unsettled  # a server without ETags
        self._unsettled = text if text_is_cut(text) and not settled else None
        return self.tracker.update_text(text, source=self.url, final=False, settled=settled, view=self.url)


class BodyTooBig(LivemonError):
    """A response body over the feed's ``max_body_mb``."""

    def __init__(self, size: int, limit: int, feed: str) -> None:
        super().__init__(f"response body of {size / 2**20:.1f} MB or more, over the limit of {limit / 2**20:g} MB "
                         f"(feeds.{feed}.max_body_mb)")


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, BodyTooBig):
        return str(exc)
    if isinstance(exc, TimeoutError):
        return "no complete response within the feed's timeout (a slow or trickling server)"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
