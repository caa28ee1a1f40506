"""The in-process publish/subscribe hub between the monitor and its faces.

The monitor publishes outgoing messages (every
:class:`~livemon.live.messages.Outgoing`); the hub keeps the latest message per key (the
snapshot) and hands every message, numbered in order, to its readers. It never
blocks the publisher. There are two ways to read:

* **the log** (the web face): the hub keeps the last ``log_size`` messages as
  ``(seq, message)`` in one shared ring, and a reader keeps its own cursor (the
  last seq it has taken). Publishing is O(1) per message whatever the number of
  readers; readers registered with :meth:`Hub.add_reader` are woken at most once
  per event-loop turn (``loop.call_soon``), however many messages were published
  in it. A reader whose cursor falls out of the window (:meth:`Hub.log_since`
  returns None) has lost messages: its face sends a fresh snapshot. Beside each
  message the log keeps the state it replaced (:meth:`Hub.previous`), so a face
  may send only what changed.
* **a subscription** (the TUI, MQTT, ``serve``'s log line): a bounded queue per
  subscriber, filled at publish time. Subscribers are indexed by channel, so a
  message costs one queue put per subscriber that wants it, not a look at every
  subscriber. One that falls behind is marked ``overflowed`` (its face then
  sends a fresh snapshot or drops the client) instead of stalling the others.
  Its channels are fixed when it subscribes.

Why both: the queues cost one put per message per subscriber, fine for the few
local faces; the web face may have thousands of clients on the same channels,
for which that cost (and the per-client filtering) would be most of the monitor's
CPU, so it reads the shared log once per group of clients instead.

Channels and keys are declared by the message classes
(:class:`livemon.live.messages.Outgoing`): ``games`` (every board),
``game:<id>`` (one board), ``players``, ``ttt``, ``status``; ``alerts`` and
``screening`` are for arbiters only. The hub stamps each message with the time
it was published (``ts``). A removal (``BoardRemoved``, ``PlayerRemoved``,
``ScreeningRemoved``: the class's ``removes``) deletes its key from the
snapshots of its channels and is delivered to their subscribers; on a detail
channel (``game:<id>``) it stays as the key's last word.

>>> from livemon.live.messages import PlayerEstimate
>>> hub = Hub()
>>> sub = hub.subscribe({"players"})
>>> hub.publish(PlayerEstimate("A", 2500, 10, -12.0, 0.4, -70.0, 2930.0))
1
>>> seq, item = sub.queue.get_nowait(); seq, item.name, item.ts > 0
(1, 'A', True)
>>> [m.name for m in hub.snapshot("players")[1]]
['A']
>>> from livemon.live.messages import PlayerRemoved
>>> hub.publish(PlayerRemoved("A", "withdrawn")), hub.snapshot("players")
(2, (2, []))
>>> [(seq, type(m).__name__) for seq, m in hub.log_since(0)]
[(1, 'PlayerEstimate'), (2, 'PlayerRemoved')]
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from livemon.live.messages import ARBITER_CHANNELS, PUBLIC_CHANNELS, Message, Outgoing

__all__ = ["ARBITER_CHANNELS", "LOG_SIZE", "PUBLIC_CHANNELS", "Hub", "Subscription", "channels_of"]

LOG_SIZE = 4096
"""Messages the shared log keeps by default (a reader may ask for more: :meth:`Hub.add_reader`)."""


def channels_of(msg: Message) -> tuple[str, ...]:
    """The channels a message is delivered on (its class declares them; TypeError for a message not published)."""
    if not isinstance(msg, Outgoing):
        raise TypeError(f"not a published message: {msg!r}")
    return msg.channels()


@dataclass(eq=False)
class Subscription:
    """A subscriber's bounded queue of ``(seq, message)`` on a fixed set of channels."""

    channels: frozenset[str]
    queue: asyncio.Queue[tuple[int, Outgoing]]
    overflowed: bool = False


@dataclass
class Hub:
    """Latest state per (channel, key), a shared log and an ordered fan-out; see the module docstring."""

    seq: int = 0
    log_size: int = LOG_SIZE
    _latest: dict[str, dict[str, tuple[int, Outgoing]]] = field(default_factory=dict)
    _subscribers: list[Subscription] = field(default_factory=list)
    _by_channel: dict[str, list[Subscription]] = field(default_factory=dict)
    _log: list[tuple[int, Outgoing] | None] = field(default_factory=list)
    _prevs: list[Outgoing | None] = field(default_factory=list)
    """Beside each log entry, the state its message replaced (:meth:`previous`)."""
    _detail_seqs: dict[str, deque[int]] = field(default_factory=dict)
    """Per detail channel (``game:<id>``, ``player:<name>``), the seqs of its messages still in the log (an index:
    a reader of a few such channels finds its messages without scanning the log; :meth:`detail_since`)."""
    _readers: list[Callable[[], None]] = field(default_factory=list)
    _wake_loop: asyncio.AbstractEventLoop | None = None  # the loop a wake-up is scheduled on

    def __post_init__(self) -> None:
        self._log = [None] * self.log_size
        self._prevs = [None] * self.log_size

    def publish(self, msg: Outgoing) -> int:
        """Stamp (``ts``, unless set), record and fan out ``msg``; returns its sequence number. Never blocks."""
        if not isinstance(msg, Outgoing):
            raise TypeError(f"not a published message: {msg!r}")
        if not msg.ts:
            msg = msg.stamped(round(time.time(), 3))  # ms: what a client can use, 6 bytes less per message
        self.seq += 1
        seq = self.seq
        channels = msg.channels()
        detail = channels[len(msg.main_channels):]
        key = msg.key
        prev = None
        if msg.key_fields and not msg.removes:
            old = self._latest.get(msg.channel, {}).get(key)
            if old is not None and type(old[1]) is type(msg):
                prev = old[1]
        if msg.removes:
            for channel in msg.main_channels:
                self._latest.get(channel, {}).pop(key, None)
            for channel in detail:  # the detail channel keeps it: "withdrawn"
                self._latest.setdefault(channel, {})[key] = (seq, msg)
        else:
            for channel in channels:
                self._latest.setdefault(channel, {})[key] = (seq, msg)
        self._log[seq % self.log_size] = (seq, msg)
        self._prevs[seq % self.log_size] = prev
        self._index(seq, detail)
        if self._by_channel:
            self._enqueue(seq, msg, channels)
        if self._readers:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # published outside a loop (a script, a doctest): nobody to wake
                pass
            else:
                if self._wake_loop is not loop:  # once per loop turn, however many messages
                    self._wake_loop = loop
                    loop.call_soon(self._wake)
        return seq

    def _enqueue(self, seq: int, msg: Outgoing, channels: tuple[str, ...]) -> None:
        by_channel = self._by_channel
        if len(channels) == 1:
            subs: Iterable[Subscription] = by_channel.get(channels[0], ())
        else:  # a subscriber on both games and game:<id> gets the board once
            subs = dict.fromkeys(s for ch in channels for s in by_channel.get(ch, ()))
        for sub in subs:
            if sub.overflowed:
                continue
            try:
                sub.queue.put_nowait((seq, msg))
            except asyncio.QueueFull:
                sub.overflowed = True

    def _wake(self) -> None:
        self._wake_loop = None
        for reader in list(self._readers):
            reader()

    def channels(self) -> list[str]:
        """Every channel that holds a latest message (the fixed ones and each ``game:<id>`` seen)."""
        return list(self._latest)

    def snapshot(self, channel: str) -> tuple[int, list[Outgoing]]:
        """The current sequence number and the latest message of every key on ``channel``."""
        seq, items = self.snapshot_items(channel)
        return seq, [m for _, m in items]

    def snapshot_items(self, channel: str) -> tuple[int, list[tuple[int, Outgoing]]]:
        """:meth:`snapshot` with each message's own seq (a face may reuse what it encoded of it before)."""
        return self.seq, sorted(self._latest.get(channel, {}).values(), key=lambda t: t[0])

    # -- the shared log ------------------------------------------------------

    @property
    def log_first(self) -> int:
        """The oldest seq still in the log (``seq + 1`` when nothing was published)."""
        return max(1, self.seq - self.log_size + 1)

    def log_entry(self, seq: int) -> Outgoing | None:
        """Message ``seq`` if it is still in the log (None once it has left the window, or not yet published)."""
        entry = self._log[seq % self.log_size]
        return entry[1] if entry is not None and entry[0] == seq else None

    def previous(self, seq: int) -> Outgoing | None:
        """The state message ``seq`` replaced: the last message of its class and key before it, unless none
        was published or a removal came in between (None then, or once ``seq`` has left the log). A reader
        that holds it may be sent only what changed (the web face's patches: :meth:`Outgoing.changed_since`).

        >>> from livemon.live.messages import PlayerEstimate, PlayerRemoved
        >>> hub = Hub()
        >>> for m in (PlayerEstimate("A", 2500, 1, -5.0, 0.4, None, None), PlayerEstimate("A", 2500, 2, -6.0, 0.4, None, None),
        ...           PlayerRemoved("A"), PlayerEstimate("A", 2500, 1, -5.0, 0.4, None, None)):
        ...     _ = hub.publish(m)
        >>> [getattr(hub.previous(s), "moves", None) for s in range(1, 5)]
        [None, 1, None, None]
        """
        entry = self._log[seq % self.log_size]
        return self._prevs[seq % self.log_size] if entry is not None and entry[0] == seq else None

    def log_since(self, after: int, upto: int | None = None) -> list[tuple[int, Outgoing]] | None:
        """``(seq, message)`` for ``after < seq <= upto`` (default: all), or None if some have left the log."""
        upto = self.seq if upto is None else min(upto, self.seq)
        if after + 1 < self.log_first:
            return None
        size, log = self.log_size, self._log
        return [log[s % size] for s in range(after + 1, upto + 1)]  # type: ignore[misc]

    def _index(self, seq: int, detail: tuple[str, ...]) -> None:
        """File message ``seq`` under its detail channels (:attr:`_detail_seqs`), dropping what left the log."""
        first = seq - self.log_size
        for channel in detail:
            seqs = self._detail_seqs.get(channel)
            if seqs is None:
                seqs = self._detail_seqs[channel] = deque()
            while seqs and seqs[0] <= first:  # out of the log
                seqs.popleft()
            seqs.append(seq)
        if seq % self.log_size == 0:  # once a log window: a finished game's channel gets no more messages to trim it
            self._detail_seqs = {ch: seqs for ch, seqs in self._detail_seqs.items() if seqs and seqs[-1] > first}

    def detail_since(self, channels: Iterable[str], after: int, upto: int) -> list[int] | None:
        """The seqs of messages on the detail ``channels`` with ``after < seq <= upto``, in order (each once), or
        None if some have left the log: O(their messages), not O(the log) as :meth:`log_since` is.

        >>> from livemon.live.messages import BoardState
        >>> hub = Hub()
        >>> for g, ply in (("g1", 1), ("g2", 1), ("g1", 2)):
        ...     _ = hub.publish(BoardState(g, "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", ply))
        >>> hub.detail_since(["game:g1"], 0, 3), hub.detail_since(["game:g1", "game:g2"], 1, 3)
        ([1, 3], [2, 3])
        """
        if after + 1 < self.log_first:
            return None
        found: set[int] = set()
        for channel in channels:
            for s in reversed(self._detail_seqs.get(channel, ())):
                if s <= after:
                    break
                if s <= upto:
                    found.add(s)
        return sorted(found)

    def add_reader(self, wake: Callable[[], None], log_size: int = 0) -> None:
        """Call ``wake()`` (once per loop turn at most) after messages were published; keep at least ``log_size``."""
        if log_size > self.log_size:
            old, prevs, first = self._log, self._prevs, self.log_first
            self._log, self._prevs = [None] * log_size, [None] * log_size
            for s in range(first, self.seq + 1):
                self._log[s % log_size] = old[s % self.log_size]
                self._prevs[s % log_size] = prevs[s % self.log_size]
            self.log_size = log_size
            self._detail_seqs = {}  # the index again, over the same messages (none was trimmed by the new window)
            for s in range(first, self.seq + 1):
                entry = self._log[s % log_size]
                if entry is not None:
                    self._index(s, entry[1].channels()[len(entry[1].main_channels):])
        self._readers.append(wake)

    def remove_reader(self, wake: Callable[[], None]) -> None:
        if wake in self._readers:
            self._readers.remove(wake)

    # -- queue subscriptions -------------------------------------------------

    def subscribe(self, channels: Iterable[str], maxsize: int = 1000) -> Subscription:
        sub = Subscription(frozenset(channels), asyncio.Queue(maxsize))
        self._subscribers.append(sub)
        for channel in sub.channels:
            self._by_channel.setdefault(channel, []).append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscribers:
            self._subscribers.remove(sub)
            for channel in sub.channels:
                subs = self._by_channel.get(channel, [])
                if sub in subs:
                    subs.remove(sub)
                if not subs:
                    self._by_channel.pop(channel, None)

    def resubscribe(self, sub: Subscription) -> None:
        """Clear an overflowed subscriber so it can start again from a fresh snapshot."""
        while not sub.queue.empty():
            sub.queue.get_nowait()
        sub.overflowed = False

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @property
    def readers(self) -> int:
        """How many log readers (web servers) are woken after a publish."""
        return len(self._readers)

    @property
    def detail_channels(self) -> frozenset[str]:
        """The detail channels (``game:<id>``) with a message still in the log."""
        return frozenset(self._detail_seqs)
