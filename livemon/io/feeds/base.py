"""What every feed shares: the protocol, the status, back-off, message counting."""

from __future__ import annotations

import logging
import random
import time
from dataclasses import asdict, dataclass
from typing import Any, AsyncIterator, Iterable, Protocol, runtime_checkable

from livemon.live.tracker import GameTracker, KeyFunc
from livemon.live.messages import FeedError, Message

log = logging.getLogger(__name__)


@dataclass
class FeedStatus:
    """A feed's health, for ``livemon status``.

    ``state`` is one of: starting, running (connected or polling), waiting
    (backing off after an error), finished (a replay or file read to its end
    with ``follow`` off), stopped.
    """

    name: str
    type: str
    state: str = "starting"
    games: int = 0
    plies: int = 0
    errors: int = 0
    last_message: float | None = None  # time.time() of the last message yielded
    last_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Feed(Protocol):
    """An async source of typed messages; iterate it to run it."""

    name: str
    status: FeedStatus

    def __aiter__(self) -> AsyncIterator[Message]: ...


class Backoff:
    """Exponential back-off with a cap and a little jitter (so feeds do not retry in step)."""

    def __init__(self, base: float, cap: float, jitter: float = 0.1) -> None:
        self.base, self.cap, self.jitter = base, cap, jitter
        self.failures = 0

    def next_delay(self) -> float:
        delay = min(self.cap, self.base * (2 ** self.failures))
        self.failures += 1
        return delay * (1 + random.uniform(0, self.jitter))

    def reset(self) -> None:
        self.failures = 0


class BaseFeed:
    """A feed with a tracker and a status; subclasses implement :meth:`run`."""

    type = "base"

    def __init__(self, name: str, key: KeyFunc | None = None, withdraw_after: float | None = None) -> None:
        self.name = name
        self.tracker = GameTracker(name, key, withdraw_after)
        self.status = FeedStatus(name, self.type)
        self._junk_logged: dict[str, str] = {}  # source -> the junk last logged for it

    def __aiter__(self) -> AsyncIterator[Message]:
        return self.run()

    def resume(self, known: dict[str, int]) -> None:
        """Plies already stored per game id, told by the monitor before the feed runs (after a restart).

        A live feed needs nothing from it (it sends the games as they are now, deduplicated downstream);
        the replay uses it to skip the waits of what was already played.
        """

    async def run(self) -> AsyncIterator[Message]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield  # noqa

    def _without_junk(self, text: str, source: str) -> str:
        """``text`` without junk after its last game (:mod:`livemon.io.feeds.junk`); one log line per new junk
        of a source (a file re-read, a body re-sent with the same junk, say nothing again)."""
        from livemon.errors import FAULTS
        from livemon.io.feeds.junk import cut_junk

        kept, junk = cut_junk(text)
        if junk:
            if self._junk_logged.get(source) != junk:
                self._junk_logged[source] = junk
                FAULTS.count("feed.junk")
                log.warning("feed %s: %s: %d characters after the last game's result ignored (not a game): %r",
                            self.name, source, len(junk), junk[:60])
        return kept

    def _account(self, messages: Iterable[Message]) -> list[Message]:
        """Update the status from messages about to be yielded."""
        out = list(messages)
        for m in out:
            if isinstance(m, FeedError):
                self.status.errors += 1
                self.status.last_error = m.message
        if out:
            self.status.last_message = time.time()
        self.status.games = self.tracker.games
        self.status.plies = self.tracker.plies
        return out

    def _io_error(self, message: str, first: bool) -> list[Message]:
        """A transport error: counted each time, sent as a FeedError once per outage.

        A FeedError is logged by whoever reads the feed (the monitor), so the
        feed itself logs only the repeats it does not send: one line per fault.
        """
        self.status.errors += 1
        self.status.last_error = message
        if not first:
            log.warning("feed %s: %s", self.name, message)
            return []
        self.status.last_message = time.time()
        return [FeedError(self.name, message)]

