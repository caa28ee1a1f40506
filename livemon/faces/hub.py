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

Where each kind of message goes is one table here, :data:`ROUTES` (a :class:`Route` per outgoing class:
its channel, its audience, the fields that make its snapshot key, its per-key detail channel, the kinds a
removal takes away): ``games`` (every board), ``game:<id>`` (one board), ``players``, ``ttt``, ``status``;
``alerts``, ``screening`` and ``arbiter_status`` are for arbiters only. The hub, MQTT out, the WebSocket server
and the TUI read that table and nothing else, so a new outgoing message is a value in ``livemon.live.messages``,
a row here and its faces' encodings. A channel carries messages of one audience only (checked when the table is
made). The hub stamps each message with the time it was published (``ts``). A removal (``BoardRemoved``,
``PlayerRemoved``, ``ScreeningRemoved``: its route's ``removes``) deletes its key from the snapshots of its
channels and is delivered to their subscribers; on a detail channel (``game:<id>``) it stays as the key's last word.

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
>>> route(PlayerRemoved("A")).channels(PlayerRemoved("A")), route(PlayerRemoved("A")).removes
(('players', 'ttt', 'player:A'), ('player', 'ttt'))
>>> PUBLIC_CHANNELS, ARBITER_CHANNELS
(('games', 'players', 'ttt', 'status', 'moments', 'forecast'), ('alerts', 'screening', 'arbiter_status'))
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal, TypeVar

from livemon.live.messages import (Alert, BoardRemoved, BoardState, EventForecast, Message, Moment, MomentRemoved,
                                   MonitorStatus, Outgoing, PlayerEstimate, PlayerRemoved, ScreeningNumbers,
                                   ScreeningRemoved, TTTRating, WorkerQuarantined)

__all__ = ["ARBITER", "ARBITER_CHANNELS", "LOG_SIZE", "OUTGOING", "PUBLIC", "PUBLIC_CHANNELS", "ROUTES", "Hub",
           "Route", "Subscription", "channel_audience", "channels_of", "is_detail_channel", "key_of", "route",
           "stamped"]

Audience = Literal["public", "arbiter"]
PUBLIC: Audience = "public"
ARBITER: Audience = "arbiter"

LOG_SIZE = 4096
"""Messages the shared log keeps by default (a reader may ask for more: :meth:`Hub.add_reader`)."""


@dataclass(frozen=True)
class Route:
    """Where the messages of one outgoing class go.

    ``channel``: the hub channel every message of the class goes to (also the MQTT topic level under the
    prefix); ``audience``: :data:`PUBLIC` or :data:`ARBITER`; ``key_fields``: the fields whose values make
    the snapshot key (a newer message with the same key replaces the older; none: one state per channel);
    ``detail``: a per-key channel prefix (``detail:<key>`` carries the messages of one key: ``game:<id>``);
    ``removes``: for a removal, the outgoing kinds whose entry under its key it deletes (empty: a state);
    ``main_channels``: ``channel`` and the channels of the kinds it removes (filled by :func:`routing`).
    """

    cls: type[Outgoing]
    channel: str
    audience: Audience
    key_fields: tuple[str, ...] = ()
    detail: str | None = None
    removes: tuple[str, ...] = ()
    main_channels: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.cls.kind

    def key(self, msg: Outgoing) -> str:
        """The snapshot key of ``msg`` (the ``key_fields`` joined by NUL; ``""`` for a single-state message)."""
        fields = self.key_fields
        if len(fields) == 1:  # most messages: one field, usually a str already (the hub asks per publish)
            value = getattr(msg, fields[0])
            return value if type(value) is str else str(value)
        return "\x00".join(str(getattr(msg, f)) for f in fields)

    def channels(self, msg: Outgoing) -> tuple[str, ...]:
        """The hub channels ``msg`` is delivered on: the main ones, then its detail channel if any."""
        if self.detail is None:
            return self.main_channels
        return (*self.main_channels, f"{self.detail}:{self.key(msg)}")


def routing(*routes: Route) -> dict[str, Route]:
    """The table of ``routes`` by kind, each with its ``main_channels``; TypeError when one is inconsistent (a
    kind routed twice, a key field the class lacks, a channel given two audiences, a removal of a kind that is
    not a state with its key and audience).

    >>> routing(Route(TTTRating, "ttt", PUBLIC, ("name",)), Route(Alert, "ttt", ARBITER, ("player",)))
    Traceback (most recent call last):
    ...
    TypeError: Alert: channel 'ttt' is public, not arbiter
    """
    table: dict[str, Route] = {}
    audience: dict[str, Audience] = {}
    for r in routes:
        name = r.cls.__qualname__
        if r.kind in table:
            raise TypeError(f"{name}: kind {r.kind!r} is already routed ({table[r.kind].cls.__qualname__})")
        if r.audience not in (PUBLIC, ARBITER):
            raise TypeError(f"{name}: audience must be {PUBLIC!r} or {ARBITER!r}, not {r.audience!r}")
        fields = {f.name for f in dataclasses.fields(r.cls)}
        if not set(r.key_fields) <= fields:
            raise TypeError(f"{name}: key_fields names no field {sorted(set(r.key_fields) - fields)}")
        for channel in (r.channel, f"{r.detail}:" if r.detail else None):
            if channel is None:
                continue
            had = audience.setdefault(channel, r.audience)
            if had != r.audience:
                raise TypeError(f"{name}: channel {channel!r} is {had}, not {r.audience}")
        main = [r.channel]
        for kind in r.removes:
            target = table.get(kind)
            if target is None or target.removes or target.key_fields != r.key_fields:
                raise TypeError(f"{name}: removes {kind!r}, which is not a state message with its key")
            if target.audience != r.audience:
                raise TypeError(f"{name}: removes {kind!r}, which is {target.audience}")
            main += [target.channel] if target.channel not in main else []
        table[r.kind] = dataclasses.replace(r, main_channels=tuple(main))
    return table


ROUTES: dict[str, Route] = routing(
    Route(BoardState, "games", PUBLIC, ("game_id",), detail="game"),
    Route(BoardRemoved, "games", PUBLIC, ("game_id",), detail="game", removes=("board",)),
    Route(PlayerEstimate, "players", PUBLIC, ("name",), detail="player"),
    Route(TTTRating, "ttt", PUBLIC, ("name",)),
    Route(PlayerRemoved, "players", PUBLIC, ("name",), detail="player", removes=("player", "ttt")),
    Route(Alert, "alerts", ARBITER, ("player", "event")),
    Route(ScreeningNumbers, "screening", ARBITER, ("player", "event")),
    Route(ScreeningRemoved, "screening", ARBITER, ("player", "event"), removes=("screening",)),
    Route(WorkerQuarantined, "arbiter_status", ARBITER, ("worker",)),
    Route(MonitorStatus, "status", PUBLIC),
    Route(Moment, "moments", PUBLIC, ("game_id", "ply")),
    Route(MomentRemoved, "moments", PUBLIC, ("game_id", "ply"), removes=("moment",)),
    Route(EventForecast, "forecast", PUBLIC, ("event",)),
)
"""Every outgoing kind's route, in the order of the channels' listing."""

_BY_CLASS: dict[type, Route] = {r.cls: r for r in ROUTES.values()}

OUTGOING: dict[str, type[Outgoing]] = {kind: r.cls for kind, r in ROUTES.items()}
"""The outgoing message classes by ``kind``."""

CHANNEL_AUDIENCE: dict[str, Audience] = {}
"""Every hub channel (and detail-channel prefix, ``game:``) with the one audience it may carry."""
for _r in ROUTES.values():
    CHANNEL_AUDIENCE.setdefault(_r.channel, _r.audience)
    if _r.detail:
        CHANNEL_AUDIENCE.setdefault(f"{_r.detail}:", _r.audience)

PUBLIC_CHANNELS: tuple[str, ...] = tuple(c for c, a in CHANNEL_AUDIENCE.items() if a == PUBLIC and not c.endswith(":"))
"""The public channels (``game:<id>`` besides)."""
ARBITER_CHANNELS: tuple[str, ...] = tuple(c for c, a in CHANNEL_AUDIENCE.items() if a == ARBITER and not c.endswith(":"))
"""The channels for arbiters only: never served to the public, on the overlay or in a public MQTT tree."""


def route(msg: Message) -> Route:
    """The route of a message (TypeError for a message that is not published)."""
    r = _BY_CLASS.get(type(msg))
    if r is None:
        raise TypeError(f"not a published message: {msg!r}")
    return r


def channels_of(msg: Message) -> tuple[str, ...]:
    """The channels a message is delivered on (TypeError for a message not published)."""
    return route(msg).channels(msg)  # type: ignore[arg-type]


def key_of(msg: Outgoing) -> str:
    """The snapshot key of a message (:meth:`Route.key`)."""
    return route(msg).key(msg)


def is_detail_channel(channel: str) -> bool:
    """A per-key channel (``game:<id>``, ``player:<name>``: a route's ``detail`` prefix), not a main one.

    >>> is_detail_channel("game:r1/b2"), is_detail_channel("games")
    (True, False)
    """
    return ":" in channel


def channel_audience(channel: str) -> Audience | None:
    """The audience of a channel name (``game:<id>`` included), None for no channel.

    >>> channel_audience("game:g1"), channel_audience("alerts"), channel_audience("nope"), channel_audience("game:")
    ('public', 'arbiter', None, None)
    """
    prefix, sep, rest = channel.partition(":")
    if not sep:
        return CHANNEL_AUDIENCE.get(channel)
    return CHANNEL_AUDIENCE.get(prefix + sep) if rest else None


OutgoingT = TypeVar("OutgoingT", bound=Outgoing)


def stamped(msg: OutgoingT, ts: float) -> OutgoingT:
    """A copy of ``msg`` with its publication time set (the fields are not validated again).

    >>> m = TTTRating("A", 1.0, 0.2, 2810.0, 40.0, 9)
    >>> s = stamped(m, 5.0)
    >>> (s.ts, m.ts, s == m, s.name)
    (5.0, 0.0, True, 'A')
    """
    new = copy.copy(msg)
    object.__setattr__(new, "ts", ts)  # a frozen dataclass: replace() would run __init__ again, 8x slower
    return new


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
        r = route(msg)
        if not msg.ts:
            msg = stamped(msg, round(time.time(), 3))  # ms: what a client can use, 6 bytes less per message
        self.seq += 1
        seq = self.seq
        channels = r.channels(msg)
        detail = channels[len(r.main_channels):]
        key = r.key(msg)
        prev = None
        if r.key_fields and not r.removes:
            old = self._latest.get(r.channel, {}).get(key)
            if old is not None and type(old[1]) is type(msg):
                prev = old[1]
        if r.removes:
            for channel in r.main_channels:
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
        that holds it may be sent only what changed (the web face's patches: :func:`livemon.faces.web.codec.changed_since`).

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
                    r = route(entry[1])
                    self._index(s, r.channels(entry[1])[len(r.main_channels):])
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
