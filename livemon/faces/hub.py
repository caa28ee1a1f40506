"""The in-process publish/subscribe hub between the monitor and its faces.

The monitor publishes outgoing messages (:class:`BoardState`,
:class:`PlayerEstimate`, :class:`TTTRating`, :class:`Alert`,
:class:`MonitorStatus`); the hub keeps the latest message per key (the
snapshot) and hands every message, numbered in order, to its subscribers. It
never blocks the publisher: each subscriber has a bounded queue, and one that
falls behind is marked ``overflowed`` (its face then sends a fresh snapshot or
drops the client) instead of stalling the others.

Channels: ``games`` (every board), ``game:<id>`` (one board), ``players``,
``ttt``, ``status``; ``alerts`` and ``screening`` are for arbiters only.

>>> hub = Hub()
>>> sub = hub.subscribe({"players"})
>>> hub.publish(PlayerEstimate("A", 2500, 10, -12.0, 0.4, -70.0, 2930.0))
1
>>> seq, item = sub.queue.get_nowait(); seq, item.name
(1, 'A')
>>> [m.name for m in hub.snapshot("players")[1]]
['A']
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Iterable

from livemon.live.messages import Alert, BoardState, Message, MonitorStatus, PlayerEstimate, ScreeningRow, TTTRating

PUBLIC_CHANNELS = ("games", "players", "ttt", "status")
ARBITER_CHANNELS = ("alerts", "screening")


def channels_of(msg: Message) -> tuple[str, ...]:
    """The channels a message is delivered on."""
    if isinstance(msg, BoardState):
        return ("games", f"game:{msg.game_id}")
    if isinstance(msg, PlayerEstimate):
        return ("players",)
    if isinstance(msg, TTTRating):
        return ("ttt",)
    if isinstance(msg, MonitorStatus):
        return ("status",)
    if isinstance(msg, Alert):
        return ("alerts",)
    if isinstance(msg, ScreeningRow):
        return ("screening",)
    raise TypeError(f"not a published message: {msg!r}")


def key_of(msg: Message) -> str:
    """The snapshot key: a newer message with the same key replaces the older."""
    if isinstance(msg, BoardState):
        return msg.game_id
    if isinstance(msg, (PlayerEstimate, TTTRating)):
        return msg.name
    if isinstance(msg, (Alert, ScreeningRow)):
        return f"{msg.player}\x00{msg.event}"
    return "status"


@dataclass
class Subscription:
    """A subscriber's bounded queue of ``(seq, message)`` on a set of channels."""

    channels: set[str]
    queue: asyncio.Queue[tuple[int, Message]]
    overflowed: bool = False

    def wants(self, channels: Iterable[str]) -> bool:
        return any(c in self.channels for c in channels)


@dataclass
class Hub:
    """Latest state per (channel, key) and an ordered fan-out; see the module docstring."""

    seq: int = 0
    _latest: dict[str, dict[str, tuple[int, Message]]] = field(default_factory=dict)
    _subscribers: list[Subscription] = field(default_factory=list)

    def publish(self, msg: Message) -> int:
        """Record and fan out ``msg``; returns its sequence number. Never blocks."""
        self.seq += 1
        channels = channels_of(msg)
        key = key_of(msg)
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

    def snapshot(self, channel: str) -> tuple[int, list[Message]]:
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
