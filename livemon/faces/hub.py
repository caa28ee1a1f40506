"""The in-process publish/subscribe hub between the monitor and its faces.

The monitor publishes outgoing messages (every
:class:`~livemon.live.messages.Outgoing`); the hub keeps the latest message per key (the
snapshot) and hands every message, numbered in order, to its subscribers. It
never blocks the publisher: each subscriber has a bounded queue, and one that
falls behind is marked ``overflowed`` (its face then sends a fresh snapshot or
drops the client) instead of stalling the others.

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
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Iterable

from livemon.live.messages import ARBITER_CHANNELS, PUBLIC_CHANNELS, Message, Outgoing

__all__ = ["ARBITER_CHANNELS", "PUBLIC_CHANNELS", "Hub", "Subscription", "channels_of"]


def channels_of(msg: Message) -> tuple[str, ...]:
    """The channels a message is delivered on (its class declares them; TypeError for a message not published)."""
    if not isinstance(msg, Outgoing):
        raise TypeError(f"not a published message: {msg!r}")
    return msg.channels()


@dataclass
class Subscription:
    """A subscriber's bounded queue of ``(seq, message)`` on a set of channels."""

    channels: set[str]
    queue: asyncio.Queue[tuple[int, Outgoing]]
    overflowed: bool = False

    def wants(self, channels: Iterable[str]) -> bool:
        return any(c in self.channels for c in channels)


@dataclass
class Hub:
    """Latest state per (channel, key) and an ordered fan-out; see the module docstring."""

    seq: int = 0
    _latest: dict[str, dict[str, tuple[int, Outgoing]]] = field(default_factory=dict)
    _subscribers: list[Subscription] = field(default_factory=list)

    def publish(self, msg: Outgoing) -> int:
        """Stamp (``ts``, unless set), record and fan out ``msg``; returns its sequence number. Never blocks."""
        if not isinstance(msg, Outgoing):
            raise TypeError(f"not a published message: {msg!r}")
        if not msg.ts:
            msg = msg.stamped(time.time())
        self.seq += 1
        channels = msg.channels()
        key = msg.key
        if msg.removes:
            for channel in msg.main_channels:
                self._latest.get(channel, {}).pop(key, None)
            for channel in channels[len(msg.main_channels):]:  # the detail channel keeps it: "withdrawn"
                self._latest.setdefault(channel, {})[key] = (self.seq, msg)
        else:
            for channel in channels:
                self._latest.setdefault(channel, {})[key] = (self.seq, msg)
        for sub in self._subscribers:
            if sub.overflowed or not sub.wants(channels):
                continue
            try:
                sub.queue.put_nowait((self.seq, msg))
            except asyncio.QueueFull:
                sub.overflowed = True
        return self.seq

    def snapshot(self, channel: str) -> tuple[int, list[Outgoing]]:
        """The current sequence number and the latest message of every key on ``channel``."""
        items = sorted(self._latest.get(channel, {}).values(), key=lambda t: t[0])
        return self.seq, [m for _, m in items]

    def subscribe(self, channels: Iterable[str], maxsize: int = 1000) -> Subscription:
        sub = Subscription(set(channels), asyncio.Queue(maxsize))
        self._subscribers.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subscribers:
            self._subscribers.remove(sub)

    def resubscribe(self, sub: Subscription) -> None:
        """Clear an overflowed subscriber so it can start again from a fresh snapshot."""
        while not sub.queue.empty():
            sub.queue.get_nowait()
        sub.overflowed = False

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)
