"""The web face's fan-out without I/O: clients, groups, cursors and rounds; hub messages and the time in, bytes per client out.

As websockets' and h11's protocol objects, :class:`Fanout` never touches a socket, a task or a
clock: the server (:mod:`livemon.faces.web.server`) hands it what happened (a client connected,
sent a frame, its write buffer filled or drained; the hub has new messages; the time) and writes
the bytes it returns. So every decision below is tested by feeding it messages and times
(tests/test_web_sansio.py).

Why this shape: the monitor must never wait for a browser, and hundreds of clients (overlays) on
the same channels must not cost hundreds of times the work of one. So the fan-out is done once
per *kind* of client, not once per client:

* **one shared log** — the hub keeps the last messages in a ring (:meth:`Hub.log_since`);
  publishing costs the same with 1 or 1,000 clients. Each client has a cursor into it (the last
  seq it has been given) and a small queue of *control* frames (snapshots, errors, pongs,
  ``unsubscribed``, heartbeats), each tagged with the hub's seq when it was queued, so it leaves
  after every delta up to that seq and before any later one;
* **rounds** — the server asks for the clients due (:meth:`Fanout.next_client`) when the hub
  woke it (at most once per event-loop turn) and writes what :meth:`Fanout.step` returns for
  each: no task per client and no ``await`` per frame. Rounds with new messages start at least
  ``ROUND_GAP`` apart: a message after a quiet spell leaves at once, a stream is sent in at most
  50 writes a second per client, whatever its rate, so the cost is O(messages + clients ×
  rounds). The gap grows, up to ``MAX_GAP``, to the last round's CPU time serving clients (frame
  building excluded: that is per message) over ``FANOUT_SHARE``, so that with many clients the
  per-client part takes about a quarter of a core at most; its clients then get fewer, bigger
  frames. A client far behind gets its frames ``BUILD_ENTRIES`` log entries at a time;
* **frames built once and shared** — clients are grouped by what they read (channel set, batch
  or not, patches or whole messages); a group's frames for a log range are built once
  (filtering, conflation, JSON splicing, UTF-8 encoding and the WebSocket header) and cached per
  (group, first seq, last seq, ``prev``), so every client of the group at the same place gets the
  very same bytes. ``prev`` is in the key because clients that subscribed at different seqs have
  different chains until their first common delta;
* **patches** — a client that asks for them gets a state message whose previous state it holds
  (``Hub.previous``) as the fields that changed: worked out once per message, shared like the rest;
* **detail-only clients read an index** — a client of detail channels alone (an overlay:
  ``game:<id>``, ``player:<name>``) is a group of its own; its messages come from the hub's
  per-channel index (``Hub.detail_since``), and a round serves it only when one of its channels
  has news (else its cursor moves on);
* **blocked clients wait, the others do not** — the server says when a client's write buffer is
  over its high-water mark (:meth:`Fanout.blocked`); nothing more is returned for it until it
  drains (:meth:`Fanout.drained`), and one blocked longer than ``send_timeout`` is dropped
  (:meth:`Fanout.housekeeping`).

The guarantees are those of per-client queues: frames leave in seq order with ``prev`` chained;
a client more than ``client_queue`` of its messages behind, or whose cursor fell out of the log's
window, is *overflowed*: it loses its backlog and gets a fresh snapshot of the latest state
(errors and pongs queued meanwhile are kept); a subscribe or unsubscribe takes effect at its place
in the stream; an arbiter channel is read only by the groups of clients granted it
(:class:`~livemon.faces.web.auth.ArbiterGate`), so a public client's frame can never hold it.
The protocol is in docs/websocket.md; the frames' text in :mod:`livemon.faces.web.protocol`.

Time: every method that needs it takes ``now`` (seconds of a monotonic clock) or ``wall`` (Unix
time: heartbeats, latency); the CPU meter that sizes the round gap is handed in (``cpu``: the
server's ``time.thread_time``; none: the gap stays at ``round_gap``).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from websockets.frames import Frame, Opcode

from livemon import __version__
from livemon.config import WebConfig
from livemon.faces.hub import Hub, channels_of
from livemon.faces.web import protocol as p
from livemon.faces.web.auth import SNAPSHOT_BURST, SNAPSHOT_RATE, ArbiterGate, SnapshotBucket
from livemon.faces.web.protocol import ProtocolError
from livemon.faces.hub import ARBITER, ROUTES, channel_audience, is_detail_channel
from livemon.faces.web import codec
from livemon.live.messages import Outgoing

log = logging.getLogger(__name__)

_ERRORS_LOGGED = 5
"""Error frames per client logged one by one; after that only every 100th (a flood must not flood the log)."""
BATCH_BYTES = 256 * 1024
"""A ``deltas`` frame takes messages until their JSON reaches this size (clients' frame limits: 1 MiB by default)."""
BIG_SNAPSHOT = 200
"""A snapshot of more messages than this is encoded by the server off its event loop (:class:`Build`)."""
BUILD_ENTRIES = 256
"""Log entries built into one client group's frames at once, at most: a client further behind gets its frames in
several builds, each shared by the group's clients at that place, and the server checks its time slice between them."""
LATENCY_SAMPLE = 50
"""One client in this many (by connection order) has each message's publish -> write latency recorded (client 1
is always sampled): enough stamps for the percentiles at a fraction of the cost of every client's."""
ROUND_GAP = 0.02
"""Seconds between the starts of two rounds with new messages, at least: at most 50 data writes a second per client."""
FANOUT_SHARE = 0.25
"""...and at least the last round's CPU time serving clients over this (about a quarter of a core at most)..."""
MAX_GAP = 0.1
"""...but at most this: building frames costs per message and writing per byte whatever the gap, so only the per-client
part of a round shrinks with fewer rounds, and the gap must not grow without end (latency)."""

__all__ = ["BATCH_BYTES", "BUILD_ENTRIES", "FANOUT_SHARE", "LATENCY_SAMPLE", "MAX_GAP", "ROUND_GAP", "Build", "Client",
           "Fanout", "Latency", "wire"]


def wire(text: str) -> bytes:
    """``text`` as one unmasked WebSocket text frame (a server's: with compression off, the same bytes on every
    connection, so a frame is built once for every client that gets it)."""
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)


@dataclass(eq=False)
class _Control:
    """A control item in a client's queue: a snapshot, an error, a pong, a heartbeat, or a change of what it reads.

    It leaves after every delta up to ``pos`` (the hub's seq when it was queued) and before any later one.
    ``seq`` is set for snapshots: once sent, it is the client's last data frame. A heartbeat has no
    text yet (``wall``: the time it was due); it is written when sent, with the then-current seq. ``reads``
    (no text, nothing sent): the channels and batch mode the client reads the log with from ``pos`` on.
    """

    text: str | None
    seq: int | None = None
    build: Callable[[], str] | None = None  # the text, encoded by the server off its loop when due (a big snapshot)
    reads: tuple[frozenset[str], bool, bool] | None = None  # channels, batch, patch
    pos: int = 0
    wall: float = 0.0


class _Encoded:
    """What the frames need of one hub message, worked out once for every client.

    A message with detail fields (:data:`~livemon.faces.web.codec.DETAIL_FIELDS`) is encoded whole only when
    a client of its detail channel needs it (most clients read the main channels alone); its patches
    (what changed since ``prev``, the state it replaces) only when a client asked for patches.
    """

    __slots__ = ("_changed", "_json", "_main", "_patches", "_prev", "channels", "channels_json", "detail", "key",
                 "message")

    def __init__(self, msg: Outgoing, channels: tuple[str, ...], channels_json: str, key: str | None,
                 prev: Outgoing | None = None) -> None:
        self.message = msg
        self._prev = prev
        self._changed: frozenset[str] | None = None
        self._patches: dict[bool, str] = {}
        self.channels = channels
        self.channels_json = channels_json
        self.key = key  # conflation key (protocol.conflation_key)
        self._main: str | None = None
        self._json: str | None = None
        self.detail = channels[-1] if ROUTES[msg.kind].detail is not None else None  # its detail channel (``game:<id>``)

    @property
    def main(self) -> str:
        """The JSON on the main channel: without the detail fields (a board's evals). Made when a client needs it."""
        if self._main is None:
            self._main = codec.main_json(self.message)
        return self._main

    @property
    def json(self) -> str:
        """The whole message's JSON (on its detail channel)."""
        if self._json is None:
            self._json = codec.to_json(self.message) if codec.detail_fields(self.message) else self.main
        return self._json

    @property
    def changed(self) -> frozenset[str] | None:
        """The fields that differ from the state it replaces; None when it replaces none (sent whole)."""
        if self._changed is None and self._prev is not None:
            self._changed = codec.changed_since(self.message, self._prev)
            self._prev = None  # not needed any more: the log keeps it no longer than it must
        return self._changed

    def patch(self, whole: bool, since: frozenset[str] = frozenset()) -> str:
        """Its JSON for a client of patches: what changed (also ``since``: the changes of states
        conflated before it in a frame), or the message itself when it replaces no state.
        ``whole``: on its detail channel (with the detail fields)."""
        changed = self.changed
        if changed is None:
            return self.json if whole else self.main
        if since:
            return codec.patch_json(self.message, changed | since, () if whole else codec.detail_fields(self.message))
        text = self._patches.get(whole)
        if text is None:
            text = self._patches[whole] = codec.patch_json(self.message, changed,
                                                          () if whole else codec.detail_fields(self.message))
        return text


@dataclass(frozen=True, slots=True)
class _Run:
    """The data frames (``delta`` or ``deltas``) of a stretch of the log for a group, shared by its clients."""

    wire: bytes  # every frame as it goes on the wire (unmasked WebSocket text frames), one after the other
    last: int  # the last frame's seq: the client's last seq once it is sent (the next frame's prev)
    end: int  # the log's seq the stretch ends at (the client's cursor once it is sent; at most BUILD_ENTRIES on)
    frames: int
    messages: int  # log messages of the group's channels they stand for (batch statistics)
    conflated: int  # of which superseded within a frame
    stamps: tuple[float, ...] = ()  # the ``ts`` of each message sent (for the sampled latency)


@dataclass(eq=False)
class Group:
    """Clients that read the log alike (channels, batch, patch): their frames are built once."""

    channels: frozenset[str]
    batch: bool
    patch: bool = False
    clients: set[Client] = field(default_factory=set)
    detail_only: bool = False  # detail channels alone (an overlay): read from the hub's index, served on news only

    def __post_init__(self) -> None:
        self.detail_only = all(is_detail_channel(ch) for ch in self.channels)


@dataclass(eq=False)
class Client:
    """One WebSocket client as the fan-out sees it; ``io`` is the server's (its connection), never read here."""

    peer: str
    address: str = "?"
    io: Any = None
    cursor: int = 0  # the last hub seq this client has been given (or passed over: not on its channels)
    last: int = 0  # seq of the last snapshot/delta sent: the next delta's ``prev``
    channels: set[str] = field(default_factory=set)  # subscribed (requests see a change at once; the log, at its place)
    group: Group | None = None  # how it reads the log now (None: no channel)
    control: deque[_Control] = field(default_factory=deque)
    overflowed: bool = False
    live: bool = False  # hello sent, not gone: the fan-out may return bytes for it
    building: bool = False  # a big snapshot is being encoded for it by the server
    arbiter: bool = False
    sending_since: float | None = None  # its write buffer went over the high-water mark then (blocked)
    last_sent: float = 0.0
    errors: int = 0
    bucket: SnapshotBucket = field(default_factory=lambda: SnapshotBucket(0.0))
    wrong_tokens: int = 0
    close_reason: str | None = None  # set: the server closes the connection (1008) after its queued frames
    batch: bool = False  # asked for ``deltas`` frames (subscribe with ``"batch": true``)
    patch: bool = False  # asked for patches (subscribe with ``"patch": true``): a state sends what changed
    timed: bool = False  # one client in LATENCY_SAMPLE: its writes feed the publish -> write latency histogram
    partial: bool = False  # the last step left more of the log due to it (the server may check its time slice)
    stamps: tuple[float, ...] = ()  # the ``ts`` of the messages in the last bytes returned (timed clients only)

    def reads(self) -> tuple[frozenset[str], bool, bool]:
        """How it reads the log now: its channels, batch, patch (a group's key)."""
        return frozenset(self.channels), self.batch, self.patch


@dataclass(eq=False)
class Build:
    """A big snapshot for ``client``: the server runs ``run`` off its event loop, then hands the text to
    :meth:`Fanout.built` (or calls :meth:`Fanout.build_failed`); the client's later frames wait behind it."""

    client: Client
    run: Callable[[], str]
    _item: _Control


class Latency:
    """Publish -> socket write latency of the messages written to sampled clients, in 1 ms bins."""

    def __init__(self) -> None:
        self.hist: dict[int, int] = {}

    def record(self, stamps: Sequence[float], wall: float) -> None:
        """The messages published at ``stamps`` (the hub's ``ts``; 0: not stamped) were written at ``wall``."""
        hist = self.hist
        for ts in stamps:
            ms = min(int(1000 * (wall - ts)), 60_000)
            if ts and ms >= 0:
                hist[ms] = hist.get(ms, 0) + 1

    def summary(self) -> dict[str, Any]:
        """Sample count, p50/p95/p99 (ms, upper bin edges) and the histogram (``/healthz``)."""
        total = sum(self.hist.values())

        def q(frac: float) -> int | None:
            acc = 0
            for ms in sorted(self.hist):
                acc += self.hist[ms]
                if acc >= frac * total:
                    return ms + 1
            return None

        return {"samples": total, "p50_ms": q(0.5), "p95_ms": q(0.95), "p99_ms": q(0.99),
                "hist": {str(k): v for k, v in sorted(self.hist.items())}}


class Fanout:
    """Every client of one hub, their groups, the rounds and the frame caches; see the module docstring."""

    def __init__(self, hub: Hub, cfg: WebConfig, *, kick: Callable[[], None] | None = None,
                 cpu: Callable[[], float] | None = None) -> None:
        self.hub = hub
        self.cfg = cfg
        self.gate = ArbiterGate(cfg.arbiter_token)
        self._kick_hook = kick  # called when a client has something new outside a round: the server pumps soon
        self._cpu = cpu
        self.stats: dict[str, int] = {"connections": 0, "dropped": 0, "resnapshots": 0, "errors": 0}
        self.batch_stats: dict[str, int] = {"frames": 0, "messages": 0, "conflated": 0}  # deltas frames sent (benches)
        # rounds with news, data frames built and sent again from the cache, seconds in the pump (benches)
        self.fanout_stats: dict[str, float] = {"rounds": 0, "built": 0, "shared": 0, "pump_seconds": 0.0}
        self.latency = Latency()
        self.clients: set[Client] = set()
        self._groups: dict[tuple[frozenset[str], bool, bool], Group] = {}
        self._encoded: dict[int, _Encoded] = {}  # seq -> message JSON etc., encoded once for every client
        self._encoded_from = 1  # every seq below is gone from _encoded
        self._encoded_ahead = 0  # messages up to this seq were encoded between rounds (encode_ahead)
        self._chjson: dict[tuple[str, ...], str] = {}  # delivered channels -> their JSON array
        self._snapshots: dict[str, tuple[int, str]] = {}  # channel -> (hub seq, messages JSON) of the last snapshot
        self._snapshot_parts: dict[str, dict[int, str]] = {}  # channel -> seq -> JSON of its latest messages
        self._frames_cache: dict[tuple[Group, int, int, int], _Run | None] = {}
        self._stop = hub.seq  # the end of the current round
        self._round: list[Client] = []
        self._round_at = 0
        self._kicked: dict[Client, None] = {}  # clients with something new outside a round (insertion-ordered)
        self._round_t = float("-inf")  # when the last round with new messages started
        self.round_gap = ROUND_GAP
        self.fanout_share = FANOUT_SHARE
        self._round_cost = 0.0  # CPU seconds serving clients (frames built excluded) since the last round with news
        self.gap = ROUND_GAP  # the gap before the next round with news

    # -- clients ----------------------------------------------------------------

    def connect(self, peer: str, address: str, now: float, io: Any = None) -> Client:
        """A new client (its cursor at the hub's seq); the server sends it :meth:`hello`, then :meth:`opened`."""
        c = Client(peer, address, io, cursor=self.hub.seq, last_sent=now, bucket=SnapshotBucket(now))
        self.clients.add(c)
        self.stats["connections"] += 1
        c.timed = self.stats["connections"] % LATENCY_SAMPLE == 1 or LATENCY_SAMPLE == 1
        return c

    def hello(self) -> str:
        """The ``hello`` frame's text (sent first, before the fan-out writes anything to the client)."""
        cfg = self.cfg
        return p.hello_frame(self.hub.seq, self.gate.enabled, cfg.heartbeat_seconds, cfg.max_message_bytes, __version__)

    def opened(self, c: Client) -> None:
        """``hello`` went out: from now on every write to ``c`` comes from :meth:`step`."""
        c.live = c in self.clients

    def forget(self, c: Client) -> None:
        """``c`` is gone: out of the clients and its group (its socket is the server's business)."""
        c.live = False
        self.clients.discard(c)
        self._kicked.pop(c, None)
        self._regroup(c, frozenset(), c.batch, c.patch)

    def blocked(self, c: Client, now: float) -> None:
        """``c``'s write buffer is over its high-water mark: nothing more for it until :meth:`drained`."""
        if c.sending_since is None:
            c.sending_since = now

    def drained(self, c: Client, now: float) -> None:
        """``c``'s write buffer is under its low-water mark again."""
        c.sending_since = None
        c.last_sent = now
        self._kick(c)

    def housekeeping(self, now: float, wall: float) -> list[Client]:
        """Heartbeats to idle clients; the clients dropped for a write buffer full too long (the server aborts them)."""
        dropped = []
        for c in list(self.clients):
            if c.sending_since is not None:
                if now - c.sending_since > self.cfg.send_timeout:
                    self.drop(c, f"its write buffer stayed full for over {self.cfg.send_timeout:g} s")
                    dropped.append(c)
            elif c.live and now - c.last_sent >= self.cfg.heartbeat_seconds and not c.control:
                c.last_sent = now
                self._enqueue(c, _Control(None, wall=wall))
        return dropped

    def drop(self, c: Client, why: str) -> None:
        """Drop ``c`` (counted and logged); the server aborts its connection."""
        self.stats["dropped"] += 1
        log.warning("web: dropping client %s: %s", c.peer, why)
        self.forget(c)

    def groups(self) -> list[tuple[frozenset[str], bool, bool, int]]:
        """Each group's channels, batch, patch and client count."""
        return [(g.channels, g.batch, g.patch, len(g.clients)) for g in self._groups.values()]

    # -- requests ---------------------------------------------------------------

    def receive(self, c: Client, raw: str | bytes, now: float) -> None:
        """Answer one client frame; anything wrong becomes an error frame, never an exception."""
        rid = None
        try:
            if isinstance(raw, bytes):
                raise ProtocolError("binary", "send JSON in text frames")
            if len(raw) > self.cfg.max_message_bytes or len(raw.encode()) > self.cfg.max_message_bytes:
                raise ProtocolError("too_big", f"messages are limited to {self.cfg.max_message_bytes} bytes")
            req = p.parse_request(raw)
            rid = req.id
            if req.op == "subscribe":
                self._subscribe(c, req, now)
            elif req.op == "unsubscribe":
                names = [p.check_channel(ch) for ch in req.channels or ()]
                c.channels.difference_update(names)
                self._enqueue(c, _Control(None, reads=c.reads()))
                self._enqueue(c, _Control(p.unsubscribed_frame(names, rid)))
            elif req.op == "snapshot":
                self._rate_limit(c, now)
                names = list(req.channels) if req.channels is not None else sorted(c.channels)
                missing = [ch for ch in names if ch not in c.channels]
                if missing:
                    raise ProtocolError("not_subscribed", f"not subscribed to {', '.join(missing)[:200]}")
                self._snapshot(c, names, "request")
            else:  # ping
                self._enqueue(c, _Control(p.pong_frame(self.hub.seq, rid)))
        except ProtocolError as exc:
            self._error(c, exc.code, exc.message, rid if rid is not None else exc.rid)

    def _rate_limit(self, c: Client, now: float) -> None:
        if not c.bucket.take(now):
            raise ProtocolError("rate_limited", f"at most {SNAPSHOT_BURST} snapshots at once and "
                                f"{SNAPSHOT_RATE:g} a second after that; try again later")

    def _subscribe(self, c: Client, req: p.Request, now: float) -> None:
        self._rate_limit(c, now)
        if req.batch is not None:
            c.batch = req.batch
        if req.patch is not None:
            c.patch = req.patch
        granted = []
        for name in req.channels or ():
            try:
                p.check_channel(name)
                if channel_audience(name) == ARBITER and not self._arbiter(c, req.token, now):
                    why = ("a valid arbiter token is required" if self.gate.enabled
                           else f"{name} (arbiters only) is disabled on this server")
                    raise ProtocolError("forbidden", why)
                granted.append(name)
            except ProtocolError as exc:
                # a wrong token was logged by the gate (with the address): the error frame is not logged again
                self._error(c, exc.code, exc.message, req.id, channel=name, logged=req.token is not None)
            if c.close_reason is not None:
                return
        c.channels.update(granted)
        # Deltas of the new channels start after their snapshots: the client reads the log with them from here.
        self._enqueue(c, _Control(None, reads=c.reads()))
        self._snapshot(c, granted, "subscribe")

    def _arbiter(self, c: Client, token: str | None, now: float) -> bool:
        """Is ``c`` an arbiter (now, with ``token``)? Wrong tokens are counted, logged and limited by the gate."""
        if not self.gate.enabled or c.arbiter or token is None:
            return c.arbiter
        verdict = self.gate.check(token, c.address, c.peer, c.wrong_tokens + 1, now)
        if verdict.granted:
            c.arbiter = True
            return True
        c.wrong_tokens += 1
        if verdict.close is not None:
            c.close_reason = verdict.close
        return False

    def _error(self, c: Client, code: str, message: str, rid: Any = None, channel: str | None = None,
               logged: bool = False) -> None:
        c.errors += 1
        self.stats["errors"] += 1
        if not logged and (c.errors <= _ERRORS_LOGGED or c.errors % 100 == 0):
            log.warning("web: client %s: error frame %s: %s (%d so far)", c.peer, code, message, c.errors)
        self._enqueue(c, _Control(p.error_frame(code, message, rid, channel)))

    # -- snapshots ----------------------------------------------------------------

    def _snapshot(self, c: Client, channels: list[str], reason: str, force: bool = False) -> None:
        """Queue a snapshot of ``channels`` behind every delta due before it (so order holds).

        The messages are encoded once per channel and hub seq for every client that asks (2,000
        clients connecting at once cost one encoding); a big one is encoded by the server off its loop.
        """
        for channel in channels:
            seq, items = self.hub.snapshot_items(channel)
            cached = self._snapshots.get(channel)
            if cached is not None and cached[0] == seq:
                self._enqueue(c, _Control(p.snapshot_frame_from(channel, seq, cached[1], reason), seq), force)
                continue
            known = self._snapshot_parts.get(channel, {})
            if sum(1 for s, _ in items if s not in known) > BIG_SNAPSHOT:
                self._enqueue(c, _Control(None, seq, build=self._snapshot_builder(channel, seq, items, reason)), force)
            else:
                text = self._snapshot_json(channel, seq, items)
                self._enqueue(c, _Control(p.snapshot_frame_from(channel, seq, text, reason), seq), force)

    def _snapshot_json(self, channel: str, seq: int, items: Sequence[tuple[int, Outgoing]]) -> str:
        """The ``messages`` array of ``channel``'s snapshot at ``seq``, re-encoding only the messages new since the last.

        Each message's JSON is kept (by its seq) while it is a channel's latest, so a snapshot of a
        1,000-board round asked again a moment later encodes the few boards that moved, not all of them.
        The text is the array of the messages' :func:`~livemon.faces.web.codec.to_json` (``main_json`` on a main channel), in seq order.
        """
        known = self._snapshot_parts.get(channel, {})
        parts: dict[int, str] = {}
        detail = is_detail_channel(channel)  # game:<id>: every field; games: a board without its evals
        for s, msg in items:
            text = known.get(s)
            if text is None:
                info = self._encoded.get(s)
                if info is not None:
                    text = info.json if detail else info.main
                else:
                    text = codec.to_json(msg) if detail else codec.main_json(msg)
            parts[s] = text
        self._snapshot_parts[channel] = parts
        array = "[" + ",".join(parts.values()) + "]"
        self._snapshots[channel] = (seq, array)
        return array

    def _snapshot_builder(self, channel: str, seq: int, items: Sequence[tuple[int, Outgoing]],
                          reason: str) -> Callable[[], str]:
        def build() -> str:  # may run in a worker thread: the messages are frozen dataclasses
            cached = self._snapshots.get(channel)
            text = cached[1] if cached is not None and cached[0] == seq else self._snapshot_json(channel, seq, items)
            return p.snapshot_frame_from(channel, seq, text, reason)
        return build

    def built(self, build: Build, text: str) -> None:
        """The snapshot of ``build`` is encoded: it goes out in its place."""
        build.client.building = False
        build._item.text, build._item.build = text, None
        self._kick(build.client)

    def build_failed(self, build: Build) -> None:
        """Encoding it failed (or was cancelled): the server closes the client (or is closing)."""
        build.client.building = False

    def _resnapshot(self, c: Client) -> None:
        """After an overflow: keep control frames with text, forget the backlog, queue a fresh snapshot."""
        keep = [f for f in c.control if f.text is not None and f.seq is None]
        c.control.clear()
        c.overflowed = False
        self._regroup(c, *c.reads())
        c.cursor = self.hub.seq
        for item in keep:
            item.pos = c.cursor
            c.control.append(item)
        self._snapshot(c, sorted(c.channels), "overflow", force=True)
        self.stats["resnapshots"] += 1
        log.warning("web: client %s fell over %d messages behind; sending a fresh snapshot", c.peer, self.cfg.client_queue)

    # -- queues and groups ----------------------------------------------------------

    def _enqueue(self, c: Client, item: _Control, force: bool = False) -> None:
        """Queue a control frame at the hub's current seq; a full queue (``client_queue``) overflows the client."""
        if len(c.control) >= self.cfg.client_queue and not force:
            c.overflowed = True  # this frame is lost, as in a full queue; the resnapshot keeps those queued
        else:
            item.pos = self.hub.seq
            c.control.append(item)
        self._kick(c)

    def _kick(self, c: Client) -> None:
        """``c`` has something new outside the log (a control frame, a drained buffer): serve it soon."""
        self._kicked[c] = None
        if self._kick_hook is not None:
            self._kick_hook()

    def _regroup(self, c: Client, channels: frozenset[str], batch: bool, patch: bool) -> None:
        """From now on ``c`` reads the log with ``channels`` (and ``batch``, ``patch``)."""
        old = c.group
        if old is not None:
            if (old.channels, old.batch, old.patch) == (channels, batch, patch):
                return
            old.clients.discard(c)
            if not old.clients:
                del self._groups[(old.channels, old.batch, old.patch)]
        c.group = None
        if channels:
            group = self._groups.get((channels, batch, patch))
            if group is None:
                group = self._groups[(channels, batch, patch)] = Group(channels, batch, patch)
            group.clients.add(c)
            c.group = group

    def _channels_json(self, channels: list[str]) -> str:
        key = tuple(channels)
        text = self._chjson.get(key)
        if text is None:
            if len(self._chjson) > 4096:
                self._chjson.clear()
            text = self._chjson[key] = p.channels_json(channels)
        return text

    def _info(self, seq: int, msg: Outgoing) -> _Encoded:
        """``msg`` as every client needs it (JSON, channels, conflation key), worked out once per seq."""
        info = self._encoded.get(seq)
        if info is None:
            channels = channels_of(msg)
            key = p.conflation_key(msg)  # None: never conflated, never patched (status; an alert is an event to show)
            info = self._encoded[seq] = _Encoded(msg, channels, p.channels_json(list(channels)), key,
                                                 self.hub.previous(seq) if key is not None else None)
        return info

    def _forget_encoded(self) -> None:
        first = self.hub.log_first
        while self._encoded_from < first:
            self._encoded.pop(self._encoded_from, None)
            self._encoded_from += 1

    # -- rounds -------------------------------------------------------------------

    @property
    def news(self) -> bool:
        """The hub has messages no round has taken yet."""
        return self.hub.seq > self._stop

    def wake_at(self) -> float | None:
        """When the next round with news may start (the server's timer); None: no news waits."""
        return self._round_t + self.gap if self.news else None

    def next_client(self, now: float) -> Client | None:
        """The next client to serve: the current round's, else a new round's (news, and ``gap`` passed since
        the last one started), else one kicked outside a round; None when nothing is due at ``now``."""
        while True:
            while self._round_at < len(self._round):
                c = self._round[self._round_at]
                self._round_at += 1
                if c.live:
                    return c
            if self.news and now >= self._round_t + self.gap:  # new messages: every client, up to the hub's seq now
                self.gap = max(self.round_gap, min(MAX_GAP, self._round_cost / self.fanout_share))
                self._round_cost = 0.0
                self._round_t = now
                self._round = self._due(self._stop, self.hub.seq)
                self._stop = self.hub.seq
                self._kicked.clear()
                self._frames_cache.clear()
                self._forget_encoded()
                self.fanout_stats["rounds"] += 1
            elif self._kicked:
                self._round = list(self._kicked)
                self._kicked.clear()
            else:
                self._round, self._round_at = [], 0
                return None
            self._round_at = 0

    def again(self, c: Client) -> None:
        """``c`` (the client :meth:`next_client` just gave) has more due: it comes first in the next call."""
        if self._round_at > 0 and self._round[self._round_at - 1] is c:
            self._round_at -= 1

    def spent(self, seconds: float) -> None:
        """The server spent ``seconds`` of CPU serving clients (one slice of its pump): sizes the next gap."""
        self._round_cost += seconds
        self.fanout_stats["pump_seconds"] += seconds

    def _due(self, start: int, stop: int) -> list[Client]:
        """The clients a round of the log after ``start`` up to ``stop`` serves: all but those of detail channels
        alone (overlays) that are up to date at ``start`` with nothing due (no control frame) and no message on
        their channels in the round; those are passed over at once (their cursor to ``stop``), so 500 overlays,
        each a group of its own, cost no frame building in a round that has nothing for them."""
        if not any(group.detail_only for group in self._groups.values()):
            return list(self.clients)
        entries = self.hub.log_since(start, stop) if stop - start <= self.cfg.client_queue else None
        if entries is None:
            return list(self.clients)
        touched = {ROUTES[msg.kind].channels(msg)[-1] for _, msg in entries if ROUTES[msg.kind].detail is not None}  # their detail channels
        due = []
        for c in self.clients:
            group = c.group
            if (group is not None and group.detail_only and c.cursor == start and not c.control and not c.overflowed
                    and group.channels.isdisjoint(touched)):
                c.cursor = stop
            else:
                due.append(c)
        return due

    def encode_ahead(self, limit: int) -> bool:
        """Between two rounds, encode up to ``limit`` of the messages published since, so that a round only splices
        JSON (encoding a round's messages at its start is one long step, the loop's lag, while the loop turns in
        between have time to spare); True while more are left. Costs per message, so no part of the gap."""
        if not self.clients:
            return False
        cpu0 = self._cpu() if self._cpu is not None else 0.0
        groups = [g for g in self._groups.values() if not g.detail_only]  # an overlay's few messages: when read
        patches, plain = any(g.patch for g in groups), not all(g.patch for g in groups)
        seq, last = max(self._encoded_ahead, self.hub.log_first - 1), self.hub.seq
        end = min(last, seq + limit)
        while seq < end:
            seq += 1
            msg = self.hub.log_entry(seq)
            if msg is not None:
                info = self._info(seq, msg)
                if plain:
                    info.main  # noqa: B018 - made now, between rounds
                if patches:
                    info.patch(False)
        self._encoded_ahead = seq
        if self._cpu is not None:
            self._round_cost -= self._cpu() - cpu0
        return seq < last

    # -- one client's bytes -----------------------------------------------------------

    def step(self, c: Client, now: float) -> bytes | Build | None:
        """The next bytes due to ``c``: a run of data frames up to the round's end, or one control frame in its
        place; ``c``'s state moves past them (the server writes them, now). A :class:`Build` when a big snapshot
        must be encoded first; None when nothing is due (or ``c`` is blocked, building or gone). ``c.partial``
        says whether more of the log is due after these bytes (they may be empty then)."""
        while c.live and not c.building and c.sending_since is None:
            if c.overflowed:
                self._resnapshot(c)
                continue
            control = c.control
            target = control[0].pos if control else self._stop
            if c.cursor < target:
                group = c.group
                if group is None:  # no channel: nothing to read
                    c.cursor = target
                    continue
                run = self._frames(group, c.cursor, target, c.last)
                if run is None:
                    c.overflowed = True
                    continue
                c.cursor = run.end
                c.partial = run.end < target
                if run.frames:
                    c.last = run.last
                    c.last_sent = now
                    if c.timed:
                        c.stamps = run.stamps
                    if group.batch:
                        bs = self.batch_stats
                        bs["frames"] += run.frames
                        bs["messages"] += run.messages
                        bs["conflated"] += run.conflated
                    return run.wire
                if c.partial:
                    return b""
                continue
            c.partial = False
            if not control:
                return None
            item = control[0]
            if item.build is not None:
                c.building = True
                return Build(c, item.build, item)
            control.popleft()
            if item.reads is not None:
                self._regroup(c, *item.reads)
                continue
            text = item.text if item.text is not None else p.heartbeat_frame(self.hub.seq, c.last, item.wall)
            if item.seq is not None:
                c.last = item.seq
            c.last_sent = now
            c.stamps = ()
            return wire(text)
        return None

    def _frames(self, group: Group, cursor: int, stop: int, last: int) -> _Run | None:
        """The data frames of the log after ``cursor`` up to ``stop`` (at most :data:`BUILD_ENTRIES` on: the
        run's ``end``) for ``group``, from ``prev`` = ``last``.

        Built once per round for all the group's clients at that place (the cache is emptied when a
        round starts); None: overflowed (out of the log, or more than ``client_queue`` messages up to ``stop``).
        """
        key = (group, cursor, stop, last)
        try:
            run = self._frames_cache[key]
        except KeyError:
            cpu0 = self._cpu() if self._cpu is not None else 0.0
            run = self._frames_cache[key] = self._build_frames(group, cursor, stop, last)
            if self._cpu is not None:
                self._round_cost -= self._cpu() - cpu0  # per message, not per client: no part of the gap
            if run is not None:
                self.fanout_stats["built"] += run.frames
        else:
            if run is not None:
                self.fanout_stats["shared"] += run.frames
        return run

    def _build_frames(self, group: Group, cursor: int, stop: int, last: int) -> _Run | None:
        entries: list[tuple[int, Outgoing]] | None
        if group.detail_only:  # detail channels only (an overlay): their messages alone
            seqs = self.hub.detail_since(group.channels, cursor, stop)
            if seqs is None or len(seqs) > self.cfg.client_queue:
                return None
            entry = self.hub.log_entry
            entries = [(s, entry(s)) for s in seqs]  # type: ignore[misc]  # in the log: detail_since said so
        else:
            if stop - cursor > self.cfg.client_queue and self._behind(group, cursor, stop) > self.cfg.client_queue:
                return None
            stop = min(stop, cursor + BUILD_ENTRIES)
            entries = self.hub.log_since(cursor, stop)
            if entries is None:
                return None
        subs, patch = group.channels, group.patch
        # seq, message JSON, its encodings, channels JSON, channels wanted, ts
        rows: list[tuple[int, str, _Encoded, str, tuple[str, ...], float]] = []
        for seq, msg in entries:
            info = self._encoded.get(seq) or self._info(seq, msg)
            channels = info.channels
            if subs.issuperset(channels):
                rows.append((seq, info.patch(True) if patch else info.json, info, info.channels_json, channels, msg.ts))
                continue
            wanted = tuple(ch for ch in channels if ch in subs)
            if wanted:  # a board on games alone goes without its evals
                whole = info.detail in wanted
                text = info.patch(whole) if patch else info.json if whole else info.main
                rows.append((seq, text, info, self._channels_json(list(wanted)), wanted, msg.ts))
        if len(rows) > self.cfg.client_queue:
            return None
        texts: list[str] = []
        stamps: list[float] = []
        conflated = 0
        if not group.batch:
            for seq, text, _, chjson, _, ts in rows:
                texts.append(p.delta_frame_from(seq, last, chjson, text))
                stamps.append(ts)
                last = seq
        else:
            i = 0
            while i < len(rows):  # frames of up to BATCH_BYTES of messages (at least one), each conflated
                j, size = i, 0
                while j < len(rows) and size < BATCH_BYTES:
                    size += len(rows[j][1])
                    j += 1
                chunk = rows[i:j]
                kept = p.conflate([(seq, info.key, wanted) for seq, _, info, _, wanted, _ in chunk])
                items = [(chunk[k][0], chunk[k][3], chunk[k][1]) for k in kept]
                if patch and len(kept) < len(chunk):
                    self._merge_patches(chunk, kept, items)
                texts.append(p.deltas_frame(last, items))
                stamps.extend(chunk[k][5] for k in kept)
                last = chunk[kept[-1]][0]
                conflated += len(chunk) - len(kept)
                i = j
        data = b"".join(wire(text) for text in texts)
        return _Run(data, last, stop, len(texts), len(rows), conflated, tuple(stamps))

    @staticmethod
    def _merge_patches(chunk: Sequence[tuple[int, str, _Encoded, str, tuple[str, ...], float]], kept: list[int],
                       items: list[tuple[int, str, str]]) -> None:
        """A patch kept in a ``deltas`` frame after states of its key were conflated away carries their
        changes too (the client never saw them); the whole message when one of them replaced no state."""
        at = {k: i for i, k in enumerate(kept)}  # chunk index -> item index
        since: dict[tuple[str, str], frozenset[str] | None] = {}  # (channel, key) -> changes dropped; None: all
        for k, (_, _, info, _, wanted, _) in enumerate(chunk):
            msg = info.message
            if info.key is None:
                continue
            removal = bool(ROUTES[msg.kind].removes)
            chain = (ROUTES[msg.kind].channel, info.key)
            if k not in at:  # conflated away: a later message of its key stands for it
                dropped = since.get(chain, frozenset())
                changed = None if removal else info.changed
                since[chain] = None if dropped is None or changed is None else dropped | changed
                continue
            dropped = since.pop(chain, frozenset())
            if removal or dropped == frozenset():
                continue  # a removal, or a patch nothing was conflated into
            whole = info.detail in wanted
            if dropped is None:
                text = info.json if whole else info.main
            else:
                text = info.patch(whole, dropped)
            items[at[k]] = (*items[at[k]][:2], text)

    def _behind(self, group: Group, cursor: int, stop: int) -> int:
        """The group's messages in the log after ``cursor`` up to ``stop`` (the whole window if some left it)."""
        entries = self.hub.log_since(cursor, stop)
        if entries is None:
            return self.cfg.client_queue + 1
        subs = group.channels
        return sum(1 for _, msg in entries if not subs.isdisjoint(channels_of(msg)))
