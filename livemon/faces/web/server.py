"""WebSocket server and HTTP pages on one port: read-only views of the :class:`~livemon.faces.hub.Hub`.

Why this shape: the monitor must never wait for a browser, and hundreds of
clients (overlays) on the same channels must not cost hundreds of times the
work of one (per-client queues and senders would be most of the monitor's CPU
with 500 clients). So the fan-out is done once per *kind* of
client, not once per client:

* **one shared log** — the hub keeps the last messages in a ring
  (:meth:`Hub.log_since`); publishing costs the same with 1 or 1,000 clients.
  Each client has a cursor into it (the last seq it has been given) and a small
  queue of *control* frames (snapshots, errors, pongs, ``unsubscribed``,
  heartbeats), each tagged with the hub's seq when it was queued, so it leaves
  after every delta up to that seq and before any later one;
* **rounds** — the hub wakes the server at most once per event-loop turn
  (``call_soon``); the pump then takes every message published since (a
  *round*) and serves each client synchronously: no task per client and no
  ``await`` per frame. Rounds with new messages start at least ``ROUND_GAP``
  (20 ms) apart: a message after a quiet spell leaves at once, a stream is
  sent in at most 50 writes a second per client, whatever its rate. That is
  what makes the cost O(messages + clients × rounds): the write (a system
  call per client) is the floor, and without the gap a stream of 200
  messages/s was 200 rounds a second, each message its own frame and system
  call for every client (bench/fanout.py: 9.8 µs per message-client instead of
  3.5). The gap also grows, up to ``MAX_GAP`` (100 ms), to the last round's
  CPU time serving clients (frame building excluded: that is per message)
  over ``FANOUT_SHARE`` (¼), so that with many clients the per-client part of
  the fan-out takes about a quarter of a core at most and the monitor the
  rest; its clients then get fewer, bigger frames. A round
  longer than ``PUMP_SLICE`` goes on in the next loop turn (with the same
  end), so the monitor's own tasks keep running; a client far behind gets
  its frames ``BUILD_ENTRIES`` log entries at a time, the slice checked in
  between;
* **frames built once and shared** — clients are grouped by what they read
  (channel set, batch or not, patches or whole messages); a group's frames for a log range are built once
  (filtering, conflation, JSON splicing, UTF-8 encoding and the WebSocket
  header) and cached per (group, first seq, last seq, ``prev``), so every
  client of the group at the same place gets the very same bytes. ``prev``
  is in the key because clients that subscribed at different seqs have
  different chains until their first common delta;
* **patches** — a client that asks for them gets a state message whose previous
  state it holds (``Hub.previous``) as the fields that changed (a move changes a
  few of a board's 19): worked out once per message, shared like the rest;
  at 1,000 boards the bytes to 500 clients fell by 43%;
* **detail-only clients read an index** — a client of detail channels alone (an
  overlay: a board's ``game:<id>``, its players' ``player:<name>``) is a group of its
  own; its messages come from the hub's per-channel index (``Hub.detail_since``),
  not from a scan of the log each round (at 1,000 boards, 500 overlays scanning it fell
  behind the round and were resnapshotted hundreds of times a second), and a round
  serves it only when one of its channels has news (``_due``; else its cursor moves on);
* **writes without awaits** — the shared bytes go straight to the client's
  transport, every frame of a round in one write (websockets' own
  ``broadcast`` writes synchronously too, through its protocol object; with
  compression off a server's frame bytes are the same on every connection),
  and only when its connection is open and its write buffer is not over the
  transport's high-water mark. A client over it is *blocked*: nothing more is
  written until the transport drains (``resume_writing`` wakes it); a client
  blocked longer than ``send_timeout`` is dropped (the transport aborted).

The guarantees are the per-client queues' ones: frames leave in seq order with
``prev`` chained; a client more than ``client_queue`` of its messages behind, or
whose cursor fell out of the log's window (``LOG_PER_QUEUE`` × ``client_queue``
messages, at least :data:`~livemon.faces.hub.LOG_SIZE`), is *overflowed*: it
loses its backlog and gets a fresh snapshot (errors and pongs queued meanwhile
are kept); a subscribe or unsubscribe takes effect at its place in the stream
(deltas after the snapshot carry the new channel); an arbiter channel is read
only by the groups of clients granted it, so a public client's frame can never
hold it. A rude client gets an error frame and a log line. The protocol is in
docs/websocket.md.

HTTP on the same port (websockets' ``process_request`` hook): ``/`` (an
index of the games with their overlay links), ``/overlay`` (the OBS page),
``/commentator`` (every board, the leaderboard, one game in detail), ``/static/…`` (the pages'
script and the vendored chessground board, read once at start), ``/api/snapshot`` (every public channel as JSON) and ``/healthz``.

Abuse limits (fixed, docs/websocket.md): a client may ask for at most
``SNAPSHOT_BURST`` snapshots at once and ``SNAPSHOT_RATE`` a second after that
(``rate_limited`` error frames beyond); a wrong arbiter token is logged with the
client's address, and ``ARBITER_TRIES`` wrong tokens close the connection
(1008). Once an address has ``ARBITER_TRIES_PER_ADDRESS`` wrong tokens in the
last ``ARBITER_WINDOW`` seconds, each further try from it waits
``ARBITER_SLOW`` seconds before it is checked and a wrong one closes its
connection: the guesses are limited, never the arbiter (the right token is
always accepted, behind a NAT or a proxy shared with a guesser too). A TCP connection that
never completes a handshake (a port scan, a health check, a browser closing
early) is one DEBUG line, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import http
import json
import logging
import time
from collections import deque
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, AsyncIterator, Callable, Sequence, cast
from urllib.parse import quote, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State

from livemon import __version__
from livemon.config import WebConfig
from livemon.errors import FAULTS
from livemon.faces.hub import LOG_SIZE, PUBLIC_CHANNELS, Hub, channels_of
from livemon.live.messages import ARBITER, Outgoing, channel_audience, is_detail_channel
from livemon.faces.web import protocol as p
from livemon.faces.web.protocol import PROTOCOL_VERSION, ProtocolError

log = logging.getLogger(__name__)

WS_PATH = "/ws"
HARD_LIMIT_FACTOR = 16
"""A client frame over ``max_message_bytes`` × this closes the connection (1009) instead of an error frame."""
_ERRORS_LOGGED = 5
"""Error frames per client logged one by one; after that only every 100th (a flood must not flood the log)."""
SNAPSHOT_BURST = 10
"""Snapshot-producing requests (``snapshot``, ``subscribe``) a client may send at once..."""
SNAPSHOT_RATE = 2.0
"""...and per second after that; beyond, a ``rate_limited`` error frame (encoding snapshots is the costly part)."""
ARBITER_TRIES = 3
"""Wrong arbiter tokens on one connection before it is closed (1008)."""
ARBITER_TRIES_PER_ADDRESS = 10
"""Wrong arbiter tokens from one address within ``ARBITER_WINDOW`` after which its tries are slowed."""
ARBITER_WINDOW = 60.0
"""Seconds over which wrong arbiter tokens from one address are counted."""
ARBITER_SLOW = 1.0
"""Seconds a token try from an address over its budget waits before it is checked (right or wrong alike,
so the wait tells nothing); a wrong one then closes its connection: one guess per connection and second."""
BATCH_BYTES = 256 * 1024
"""A ``deltas`` frame takes messages until their JSON reaches this size (clients' frame limits: 1 MiB by default)."""
BIG_SNAPSHOT = 200
"""A snapshot of more messages than this is encoded in a worker thread, off the event loop."""
PUMP_SLICE = 0.005
"""Seconds of serving clients after which the pump lets the event loop run (and goes on in the next turn)."""
BUILD_ENTRIES = 256
"""Log entries built into one client group's frames at once, at most: a client further behind gets its frames in
several builds, each shared by the group's clients at that place, and the pump checks its slice between them
(at 1,000 boards a client ~1 s behind needs ~1,000 entries: built in one step, they would be the loop's lag)."""
LATENCY_SAMPLE = 50
"""One client in this many (by connection order) has each message's publish -> write latency recorded (one
in 10 was 3% of the monitor's CPU at 1,000 boards with 500 clients, ~55,000 stamps a second; one in 50 still gives
~10,000 a second there, and client 1 is always sampled)."""
ROUND_GAP = 0.02
"""Seconds between the starts of two rounds with new messages, at least: at most 50 data writes a second per client."""
FANOUT_SHARE = 0.25
"""...and at least the last round's CPU time serving clients over this (about a quarter of a core at most)..."""
MAX_GAP = 0.1
"""...but at most this: building frames costs per message and writing per byte whatever the gap, so only the per-client
part of a round shrinks with fewer rounds, and the gap must not grow without end (latency)."""
LOG_PER_QUEUE = 4
"""The hub's log keeps at least this many times ``client_queue`` messages (all channels together)."""

__all__ = ["PROTOCOL_VERSION", "WebServer", "serve_web"]


@dataclass(eq=False)
class _Frame:
    """A control item in a client's queue: a snapshot, an error, a pong, a heartbeat, or a change of what it reads.

    It leaves after every delta up to ``pos`` (the hub's seq when it was queued) and before any later one.
    ``seq`` is set for snapshots: once sent, it is the client's last data frame. A heartbeat has no
    text yet; it is written when sent, with the then-current seq. ``reads`` (no text, nothing sent):
    the channels and batch mode the client reads the log with from ``pos`` on (a subscribe or unsubscribe).
    """

    text: str | None
    seq: int | None = None
    build: Callable[[], str] | None = None  # encodes the text in a thread when due (a big snapshot)
    reads: tuple[frozenset[str], bool, bool] | None = None  # channels, batch, patch
    pos: int = 0


class _Encoded:
    """What the frames need of one hub message, worked out once for every client.

    A message with :attr:`~livemon.live.messages.Outgoing.detail_fields` is encoded whole only when
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
        self.detail = channels[-1] if msg.detail is not None else None  # its detail channel (``game:<id>``)

    @property
    def main(self) -> str:
        """The JSON on the main channel: without the detail fields (a board's evals). Made when a client needs
        it: a client of patches reads a state that replaces one as its patch alone (at 1,000 boards the main
        JSON of every message was ~5% of the monitor's time, and nearly all of it went unread)."""
        if self._main is None:
            self._main = self.message.main_json()
        return self._main

    @property
    def json(self) -> str:
        """The whole message's JSON (on its detail channel)."""
        if self._json is None:
            self._json = self.message.to_json() if self.message.detail_fields else self.main
        return self._json

    @property
    def changed(self) -> frozenset[str] | None:
        """The fields that differ from the state it replaces; None when it replaces none (sent whole)."""
        if self._changed is None and self._prev is not None:
            self._changed = self.message.changed_since(self._prev)
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
            return self.message.patch_json(changed | since, () if whole else self.message.detail_fields)
        text = self._patches.get(whole)
        if text is None:
            text = self._patches[whole] = self.message.patch_json(changed, () if whole else self.message.detail_fields)
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
class _Group:
    """Clients that read the log alike (channels, batch, patch): their frames are built once."""

    channels: frozenset[str]
    batch: bool
    patch: bool = False
    clients: set[_Client] = field(default_factory=set)
    detail_only: bool = False  # detail channels alone (an overlay): read from the hub's index, served on news only

    def __post_init__(self) -> None:
        self.detail_only = all(is_detail_channel(ch) for ch in self.channels)


@dataclass(eq=False)
class _Client:
    ws: ServerConnection
    peer: str
    cursor: int = 0  # the last hub seq this client has been given (or passed over: not on its channels)
    last: int = 0  # seq of the last snapshot/delta sent: the next delta's ``prev``
    channels: set[str] = field(default_factory=set)  # subscribed (requests see a change at once; the log, at its place)
    group: _Group | None = None  # how it reads the log now (None: no channel)
    control: deque[_Frame] = field(default_factory=deque)
    overflowed: bool = False
    live: bool = False  # hello sent, not gone: the pump may write
    building: bool = False  # a big snapshot is being encoded for it in a thread
    arbiter: bool = False
    sending_since: float | None = None  # its write buffer went over the high-water mark then
    last_sent: float = field(default_factory=time.monotonic)
    errors: int = 0
    address: str = "?"
    tokens: float = SNAPSHOT_BURST  # snapshot rate limit (a token bucket)
    refilled: float = field(default_factory=time.monotonic)
    wrong_tokens: int = 0
    close_reason: str | None = None  # set: the handler closes the connection (1008) after this message
    batch: bool = False  # asked for ``deltas`` frames (subscribe with ``"batch": true``)
    patch: bool = False  # asked for patches (subscribe with ``"patch": true``): a state sends what changed
    timed: bool = False  # one client in LATENCY_SAMPLE: its writes feed the publish -> write latency histogram

    def reads(self) -> tuple[frozenset[str], bool, bool]:
        """How it reads the log now: its channels, batch, patch (a group's key)."""
        return frozenset(self.channels), self.batch, self.patch


class _Connection(ServerConnection):
    """websockets' server connection, telling the fan-out when a full write buffer has drained."""

    on_drain: Callable[[], None] | None = None

    def resume_writing(self) -> None:
        super().resume_writing()
        if self.on_drain is not None:
            self.on_drain()


class WebServer:
    """The WebSocket server and HTTP pages for one hub; ``await start()``, then ``port``."""

    def __init__(self, hub: Hub, cfg: WebConfig, health: Callable[[], dict[str, Any]] | None = None) -> None:
        self.hub = hub
        self.cfg = cfg
        self.health = health  # e.g. Store.health: /healthz is 503 while it says not ok
        self.port: int = cfg.port
        self.stats: dict[str, int] = {"connections": 0, "dropped": 0, "resnapshots": 0, "errors": 0}
        self.batch_stats: dict[str, int] = {"frames": 0, "messages": 0, "conflated": 0}  # deltas frames sent (benches)
        # rounds with news, data frames built and sent again from the cache, seconds in the pump (benches)
        self.fanout_stats: dict[str, float] = {"rounds": 0, "built": 0, "shared": 0, "pump_seconds": 0.0}
        self.latency_hist: dict[int, int] = {}  # ms -> messages (publish -> write, sampled clients: _timed)
        self._clients: set[_Client] = set()
        self._groups: dict[tuple[frozenset[str], bool, bool], _Group] = {}
        self._server: Server | None = None
        self._housekeeper: asyncio.Task[None] | None = None
        self._encoded: dict[int, _Encoded] = {}  # seq -> message JSON etc., encoded once for every client
        self._encoded_from = 1  # every seq below is gone from _encoded
        self._encoded_ahead = 0  # messages up to this seq were encoded between rounds (_encode_ahead)
        self._chjson: dict[tuple[str, ...], str] = {}  # delivered channels -> their JSON array
        self._snapshots: dict[str, tuple[int, str]] = {}  # channel -> (hub seq, messages JSON) of the last snapshot
        self._snapshot_parts: dict[str, dict[int, str]] = {}  # channel -> seq -> JSON of its latest messages
        self._wrong_tokens: dict[str, deque[float]] = {}  # address -> times of its last wrong arbiter tokens
        self._slow_logged: dict[str, float] = {}  # address -> when its "keeps coming" line was last logged
        self._overlay = resources.files("livemon.faces.web").joinpath("static/overlay.html").read_bytes()
        self._static = _static_files()  # "/static/<path>" -> (body, content type): only what the package ships
        # the pump (see the module docstring)
        self._frames_cache: dict[tuple[_Group, int, int, int], _Run | None] = {}
        self._stop = hub.seq  # the end of the current round
        self._round: list[_Client] = []
        self._round_at = 0
        self._kicked: dict[_Client, None] = {}  # clients with something new outside a round (insertion-ordered)
        self._pump_handle: asyncio.Handle | None = None  # a pump due in this or the next loop turn
        self._pump_timer: asyncio.TimerHandle | None = None  # a pump due when ROUND_GAP has passed
        self._round_t = 0.0  # when the last round with new messages started (time.monotonic)
        self.round_gap = ROUND_GAP
        self.fanout_share = FANOUT_SHARE
        self._round_cost = 0.0  # CPU seconds serving clients (frames built excluded) since the last round with news started
        self._gap = ROUND_GAP  # the gap before the next round with news
        self._builds: set[asyncio.Task[str]] = set()

    @property
    def clients(self) -> int:
        return len(self._clients)

    @property
    def url(self) -> str:
        return f"http://{self.cfg.host}:{self.port}"

    async def start(self) -> None:
        """Listen on ``cfg.host:cfg.port`` (port 0: a free port, then in ``self.port``)."""
        self._server = await serve(
            self._handler, self.cfg.host, self.cfg.port,
            process_request=self._process_request,
            create_connection=_Connection,
            max_size=self.cfg.max_message_bytes * HARD_LIMIT_FACTOR,
            ping_interval=self.cfg.heartbeat_seconds,
            ping_timeout=max(self.cfg.heartbeat_seconds, self.cfg.send_timeout),
            close_timeout=2.0,
            compression=None,  # deflate per client costs more CPU than it saves; and shared frames need it off
            server_header=f"livemon/{__version__}",
            logger=_handshake_logger(),
        )
        self.port = next(iter(self._server.sockets)).getsockname()[1]
        self._stop = self.hub.seq
        self.hub.add_reader(self._pump, log_size=max(LOG_SIZE, LOG_PER_QUEUE * self.cfg.client_queue))
        self._housekeeper = asyncio.create_task(self._housekeeping(), name="web-housekeeping")
        log.info("web: listening on %s (WebSocket %s, overlay /overlay)", self.url, WS_PATH)

    async def close(self) -> None:
        """Stop listening and close every connection (1001 going away)."""
        self.hub.remove_reader(self._pump)
        for handle in (self._pump_handle, self._pump_timer):
            if handle is not None:
                handle.cancel()
        self._pump_handle = self._pump_timer = None
        if self._housekeeper:
            self._housekeeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._housekeeper
        if self._server:
            self._server.close()
            # Browsers open speculative sockets that never send a request; without this they
            # would hold wait_closed() for the whole open_timeout.
            for conn in list(getattr(self._server, "handlers", ())):
                if conn.protocol.state is State.CONNECTING:
                    conn.transport.abort()
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> WebServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- HTTP --------------------------------------------------------------

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.partition("?")[0]
        if path == WS_PATH:
            origin = request.headers.get("Origin")
            if not self._origin_ok(origin, request.headers.get("Host")):
                log.warning("web: refused WebSocket from origin %r (%s)", origin, _peer(connection))
                return connection.respond(http.HTTPStatus.FORBIDDEN, "origin not allowed\n")
            return None  # the WebSocket handshake goes on
        if path in ("/", "/index.html"):
            return _http(200, self.index_page().encode(), "text/html; charset=utf-8")
        if path in ("/overlay", "/overlay/"):
            return _http(200, self._overlay, "text/html; charset=utf-8")
        if path in ("/commentator", "/commentator/"):
            path = "/static/commentator.html"
        if path in self._static:
            return _http(200, *self._static[path])
        if path == "/api/snapshot":
            return _http(200, json.dumps(self.public_snapshot(), separators=(",", ":")).encode(), "application/json")
        if path == "/healthz":
            store = self.health() if self.health is not None else None
            ok = store is None or bool(store.get("ok", True))
            body: dict[str, Any] = {"ok": ok, "protocol": PROTOCOL_VERSION, "seq": self.hub.seq, "clients": self.clients, **self.stats}
            if store is not None:
                body["store"] = store
            body["latency"] = self.latency()
            return _http(200 if ok else 503, json.dumps(body).encode(), "application/json")
        return _http(404, b"not found\n", "text/plain; charset=utf-8")

    def _origin_ok(self, origin: str | None, host: str | None) -> bool:
        """Browsers send Origin; other clients may not (and could forge it anyway)."""
        allowed = self.cfg.allowed_origins
        if allowed is None or origin is None or origin in allowed:
            return True
        return urlsplit(origin).netloc == (host or "")  # same-origin: our own overlay page

    def index_page(self) -> str:
        """``/``: every game, live ones first, each with its overlay link (the id URL-encoded)."""
        _, boards = self.hub.snapshot("games")
        live = [b for b in boards if getattr(b, "result", "*") == "*"]
        done = [b for b in boards if getattr(b, "result", "*") != "*"]
        rows = []
        for b in live + done[::-1]:
            gid = getattr(b, "game_id", "?")
            link = f"/overlay?game={quote(gid, safe='')}"
            who = f"{getattr(b, 'white', '?')} – {getattr(b, 'black', '?')}"
            state = "live" if b in live else getattr(b, "result", "")
            event = " · ".join(x for x in (getattr(b, "event", "?"), f"R{getattr(b, 'round', '?')}") if x not in ("?", "R?"))
            rows.append(f'<tr><td>{html.escape(state)}</td><td><a href="{html.escape(link)}">{html.escape(who)}</a></td>'
                        f'<td>{html.escape(event)}</td><td>{getattr(b, "ply", 0)}</td><td><code>{html.escape(gid)}</code></td></tr>')
        body = "\n".join(rows) or '<tr><td colspan="5">no games yet</td></tr>'
        return (
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>livemon</title>"
            "<style>body{font:15px/1.4 sans-serif;margin:2em}td,th{padding:.2em .8em;text-align:left}"
            "tr:nth-child(even){background:#f3f3f3}</style></head><body>"
            f"<h1>livemon {html.escape(__version__)}</h1>"
            "<p><a href=\"/commentator\">/commentator</a>: every board, the leaderboard and one game in detail. "
            "<a href=\"/overlay\">/overlay</a> follows a live game (the first live board, else the latest); "
            "a game's link follows that game. Also: <a href=\"/api/snapshot\">/api/snapshot</a>, "
            "<a href=\"/healthz\">/healthz</a>, WebSocket <code>/ws</code> (docs/websocket.md).</p>"
            "<table><tr><th></th><th>game (overlay link)</th><th>event</th><th>plies</th><th>id</th></tr>"
            f"{body}</table></body></html>\n"
        )

    def public_snapshot(self) -> dict[str, Any]:
        """Every public channel's latest messages (the body of ``/api/snapshot``)."""
        channels = {}
        for channel in PUBLIC_CHANNELS:
            _, msgs = self.hub.snapshot(channel)
            channels[channel] = [m.main_dict() for m in msgs]  # main channels: a board without its evals
        return {"protocol": PROTOCOL_VERSION, "seq": self.hub.seq, "channels": channels}

    # -- WebSocket ---------------------------------------------------------

    # -- WebSocket ---------------------------------------------------------

    async def _handler(self, conn: ServerConnection) -> None:
        ws = cast(_Connection, conn)
        client = _Client(ws, _peer(ws), cursor=self.hub.seq, address=_address(ws))
        ws.on_drain = lambda: self._drained(client)
        self._clients.add(client)
        self.stats["connections"] += 1
        client.timed = self.stats["connections"] % LATENCY_SAMPLE == 1 or LATENCY_SAMPLE == 1
        log.info("web: client %s connected (%d now)", client.peer, len(self._clients))
        try:
            await ws.send(p.hello_frame(self.hub.seq, self.cfg.arbiter_token is not None,
                                        self.cfg.heartbeat_seconds, self.cfg.max_message_bytes, __version__))
            client.live = client in self._clients  # from here on the pump owns every write to this socket
            async for raw in ws:
                if not client.arbiter and isinstance(raw, str) and '"token"' in raw and self._over_budget(client.address):
                    await asyncio.sleep(ARBITER_SLOW)  # a guesser's address: each of its tries costs it time
                self._on_message(client, raw)
                if client.close_reason is not None:
                    log.warning("web: closing client %s: %s", client.peer, client.close_reason)
                    for _ in range(100):  # let its error frames out first (at most 1 s)
                        if not client.control or not client.live:
                            break
                        await asyncio.sleep(0.01)
                    await ws.close(1008, client.close_reason)
                    break
        except ConnectionClosed:
            pass
        finally:
            self._forget(client)
            log.info("web: client %s gone (%s; %d left)", client.peer, ws.close_code, len(self._clients))

    def _on_message(self, c: _Client, raw: str | bytes) -> None:
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
                self._subscribe(c, req)
            elif req.op == "unsubscribe":
                names = [p.check_channel(ch) for ch in req.channels or ()]
                c.channels.difference_update(names)
                self._enqueue(c, _Frame(None, reads=c.reads()))
                self._enqueue(c, _Frame(p.unsubscribed_frame(names, rid)))
            elif req.op == "snapshot":
                self._rate_limit(c)
                names = list(req.channels) if req.channels is not None else sorted(c.channels)
                missing = [ch for ch in names if ch not in c.channels]
                if missing:
                    raise ProtocolError("not_subscribed", f"not subscribed to {', '.join(missing)[:200]}")
                self._snapshot(c, names, "request")
            else:  # ping
                self._enqueue(c, _Frame(p.pong_frame(self.hub.seq, rid)))
        except ProtocolError as exc:
            self._error(c, exc.code, exc.message, rid if rid is not None else exc.rid)

    def _rate_limit(self, c: _Client) -> None:
        """Take one snapshot token or raise ``rate_limited`` (a token bucket: SNAPSHOT_BURST, SNAPSHOT_RATE/s)."""
        now = time.monotonic()
        c.tokens = min(SNAPSHOT_BURST, c.tokens + (now - c.refilled) * SNAPSHOT_RATE)
        c.refilled = now
        if c.tokens < 1:
            raise ProtocolError("rate_limited", f"at most {SNAPSHOT_BURST} snapshots at once and "
                                f"{SNAPSHOT_RATE:g} a second after that; try again later")
        c.tokens -= 1

    def _subscribe(self, c: _Client, req: p.Request) -> None:
        self._rate_limit(c)
        if req.batch is not None:
            c.batch = req.batch
        if req.patch is not None:
            c.patch = req.patch
        granted = []
        for name in req.channels or ():
            try:
                p.check_channel(name)
                if channel_audience(name) == ARBITER and not self._arbiter(c, req.token):
                    why = (f"{name} (arbiters only) is disabled on this server" if self.cfg.arbiter_token is None
                           else "a valid arbiter token is required")
                    raise ProtocolError("forbidden", why)
                granted.append(name)
            except ProtocolError as exc:
                # a wrong token was logged by _arbiter (with the address): the error frame is not logged again
                self._error(c, exc.code, exc.message, req.id, channel=name, logged=req.token is not None)
            if c.close_reason is not None:
                return
        c.channels.update(granted)
        # Deltas of the new channels start after their snapshots: the client reads the log with them from here.
        self._enqueue(c, _Frame(None, reads=c.reads()))
        self._snapshot(c, granted, "subscribe")

    def _arbiter(self, c: _Client, token: str | None) -> bool:
        """Is ``c`` an arbiter (now, with ``token``)? Wrong tokens are counted, logged and limited."""
        want = self.cfg.arbiter_token
        if want is None:
            return False
        if c.arbiter or token is None:
            return c.arbiter
        now = time.monotonic()
        over = self._over_budget(c.address)
        if hmac.compare_digest(token.encode(), want.encode()):  # checked whatever the address did before
            c.arbiter = True
            log.info("web: client %s is an arbiter", c.peer)
            return True
        FAULTS.count("web.wrong_arbiter_token")
        c.wrong_tokens += 1
        recent = self._wrong_tokens.setdefault(c.address, deque(maxlen=ARBITER_TRIES_PER_ADDRESS))
        recent.append(now)
        if over:  # one guess per connection, each after ARBITER_SLOW; a line a minute per address, not per guess
            c.close_reason = "too many wrong arbiter tokens from this address"
            logged = self._slow_logged.get(c.address)
            if logged is None or now - logged > ARBITER_WINDOW:
                self._slow_logged[c.address] = now
                log.warning("web: wrong arbiter tokens from %s keep coming (%d in the last %g s): each further try "
                            "from it waits %g s and a wrong one closes its connection (a line a minute)",
                            c.address, ARBITER_TRIES_PER_ADDRESS, ARBITER_WINDOW, ARBITER_SLOW)
            return False
        log.warning("web: wrong arbiter token from %s (%d of %d on this connection, %d from %s in %g s)",
                    c.peer, c.wrong_tokens, ARBITER_TRIES, len(recent), c.address, ARBITER_WINDOW)
        if c.wrong_tokens >= ARBITER_TRIES:
            c.close_reason = "too many wrong arbiter tokens"
        if len(self._wrong_tokens) > 10000:  # forget quiet addresses (a scan from many must not grow this forever)
            for addr in [a for a, d in self._wrong_tokens.items() if not d or now - d[-1] > ARBITER_WINDOW]:
                del self._wrong_tokens[addr]
                self._slow_logged.pop(addr, None)
        return False

    def _over_budget(self, address: str) -> bool:
        """Has ``address`` sent ``ARBITER_TRIES_PER_ADDRESS`` wrong tokens within the last ``ARBITER_WINDOW`` s?"""
        recent = self._wrong_tokens.get(address)
        return (recent is not None and len(recent) >= ARBITER_TRIES_PER_ADDRESS
                and time.monotonic() - recent[0] <= ARBITER_WINDOW)

    def _snapshot(self, c: _Client, channels: list[str], reason: str, force: bool = False) -> None:
        """Queue a snapshot of ``channels`` behind every delta due before it (so order holds).

        The messages are encoded once per channel and hub seq for every client that asks (2,000
        clients connecting at once cost one encoding); a big one is encoded in a thread when due.
        """
        for channel in channels:
            seq, items = self.hub.snapshot_items(channel)
            cached = self._snapshots.get(channel)
            if cached is not None and cached[0] == seq:
                self._enqueue(c, _Frame(p.snapshot_frame_from(channel, seq, cached[1], reason), seq), force)
                continue
            known = self._snapshot_parts.get(channel, {})
            if sum(1 for s, _ in items if s not in known) > BIG_SNAPSHOT:
                self._enqueue(c, _Frame(None, seq, build=self._snapshot_builder(channel, seq, items, reason)), force)
            else:
                text = self._snapshot_json(channel, seq, items)
                self._enqueue(c, _Frame(p.snapshot_frame_from(channel, seq, text, reason), seq), force)

    def _snapshot_json(self, channel: str, seq: int, items: Sequence[tuple[int, Outgoing]]) -> str:
        """The ``messages`` array of ``channel``'s snapshot at ``seq``, re-encoding only the messages new since the last.

        Each message's JSON is kept (by its seq) while it is a channel's latest, so a snapshot of a
        1,000-board round asked again a moment later encodes the few boards that moved, not all of
        them (clients resnapshotted one after another each had their own full encoding before).
        The text is the array of the messages' ``to_json()`` (``main_json()`` on a main channel), in seq order.
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
                    text = msg.to_json() if detail else msg.main_json()
            parts[s] = text
        self._snapshot_parts[channel] = parts
        array = "[" + ",".join(parts.values()) + "]"
        self._snapshots[channel] = (seq, array)
        return array

    def _snapshot_builder(self, channel: str, seq: int, items: Sequence[tuple[int, Outgoing]],
                          reason: str) -> Callable[[], str]:
        def build() -> str:  # runs in a worker thread: the messages are frozen dataclasses
            cached = self._snapshots.get(channel)
            text = cached[1] if cached is not None and cached[0] == seq else self._snapshot_json(channel, seq, items)
            return p.snapshot_frame_from(channel, seq, text, reason)
        return build

    def _error(self, c: _Client, code: str, message: str, rid: Any = None, channel: str | None = None,
               logged: bool = False) -> None:
        c.errors += 1
        self.stats["errors"] += 1
        if not logged and (c.errors <= _ERRORS_LOGGED or c.errors % 100 == 0):
            log.warning("web: client %s: error frame %s: %s (%d so far)", c.peer, code, message, c.errors)
        self._enqueue(c, _Frame(p.error_frame(code, message, rid, channel)))

    def _channels_json(self, channels: list[str]) -> str:
        key = tuple(channels)
        text = self._chjson.get(key)
        if text is None:
            if len(self._chjson) > 4096:
                self._chjson.clear()
            text = self._chjson[key] = p.channels_json(channels)
        return text

    def _enqueue(self, c: _Client, frame: _Frame, force: bool = False) -> None:
        """Queue a control frame at the hub's current seq; a full queue (``client_queue``) overflows the client."""
        if len(c.control) >= self.cfg.client_queue and not force:
            c.overflowed = True  # this frame is lost, as in a full queue; the resnapshot keeps those queued
        else:
            frame.pos = self.hub.seq
            c.control.append(frame)
        self._kick(c)

    def _info(self, seq: int, msg: Outgoing) -> _Encoded:
        """``msg`` as every client needs it (JSON, channels, conflation key), worked out once per seq."""
        info = self._encoded.get(seq)
        if info is None:
            channels = channels_of(msg)
            key = p.conflation_key(msg)  # None: never conflated, never patched (status; an alert is an event to show)
            info = self._encoded[seq] = _Encoded(msg, channels, p.channels_json(list(channels)), key,
                                                 self.hub.previous(seq) if key is not None else None)
        return info

    # -- the fan-out (see the module docstring) ------------------------------

    def _kick(self, c: _Client) -> None:
        """``c`` has something new outside the log (a control frame, a drained buffer): serve it soon."""
        self._kicked[c] = None
        if self._pump_handle is None:
            self._pump_handle = asyncio.get_running_loop().call_soon(self._pump)

    def _drained(self, c: _Client) -> None:
        """The transport's write buffer is under its low-water mark again."""
        c.sending_since = None
        c.last_sent = time.monotonic()
        self._kick(c)

    def _pump(self) -> None:
        """Serve clients for up to ``PUMP_SLICE`` seconds: the round in progress, then a new one if there is news.

        Called by the hub (once per loop turn with new messages) and by ``call_soon`` (kicks, a
        round that did not fit its slice).
        """
        if self._pump_handle is not None:
            self._pump_handle.cancel()
            self._pump_handle = None
        t0, cpu0 = time.perf_counter(), time.thread_time()
        while True:
            if self._round_at >= len(self._round):
                now = time.monotonic()
                news = self.hub.seq > self._stop
                if news and now >= self._round_t + self._gap:  # new messages: every client, up to the hub's seq now
                    if self._pump_timer is not None:
                        self._pump_timer.cancel()
                        self._pump_timer = None
                    self._gap = max(self.round_gap, min(MAX_GAP, self._round_cost / self.fanout_share))
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
                    if news and self._pump_timer is None:
                        self._pump_timer = asyncio.get_running_loop().call_at(
                            asyncio.get_running_loop().time() + self._round_t + self._gap - now, self._timer)
                    if news and self._clients:
                        self._encode_ahead(t0)
                    self._spent(cpu0)
                    return
                self._round_at = 0
                continue  # (a round of no client ends at once)
            c = self._round[self._round_at]
            self._round_at += 1
            if c.live:
                try:
                    if not self._serve(c, self._stop, t0 + PUMP_SLICE):
                        self._round_at -= 1  # more for this client: it goes on in the next slice
                except Exception:  # noqa: BLE001 - a bug must cost one client, not every client's pump
                    log.exception("web: serving %s failed; closing it", c.peer)
                    self._forget(c)
                    c.ws.transport.abort()
            if time.perf_counter() - t0 > PUMP_SLICE:
                if self._pump_handle is None:
                    self._pump_handle = asyncio.get_running_loop().call_soon(self._pump)
                self._spent(cpu0)
                return

    def _due(self, start: int, stop: int) -> list[_Client]:
        """The clients a round of the log after ``start`` up to ``stop`` serves: all but those of detail channels
        alone (overlays) that are up to date at ``start`` with nothing due (no control frame) and no message on
        their channels in the round; those are passed over at once (their cursor to ``stop``): with 500 overlays,
        each a group of its own, every group's frames were built each round (``bench/round.py --overlay`` at
        1,000 boards: 2.00 -> 1.74 ms of the monitor's CPU a move)."""
        if not any(group.detail_only for group in self._groups.values()):
            return list(self._clients)
        entries = self.hub.log_since(start, stop) if stop - start <= self.cfg.client_queue else None
        if entries is None:
            return list(self._clients)
        touched = {msg.channels()[-1] for _, msg in entries if msg.detail is not None}  # their detail channels
        due = []
        for c in self._clients:
            group = c.group
            if (group is not None and group.detail_only and c.cursor == start and not c.control and not c.overflowed
                    and group.channels.isdisjoint(touched)):
                c.cursor = stop
            else:
                due.append(c)
        return due

    def _encode_ahead(self, t0: float) -> None:
        """Between two rounds, encode the messages published since (within the pump's slice), so that a
        round only splices JSON: encoding a round's messages at its start was one step of 30-60 ms at 250
        boards (``bench/turns``), the loop's lag, while the loop turns in between had time to spare."""
        cpu0 = time.thread_time()
        groups = [g for g in self._groups.values() if not g.detail_only]  # an overlay's few messages: when read
        patches, plain = any(g.patch for g in groups), not all(g.patch for g in groups)
        seq, last = max(self._encoded_ahead, self.hub.log_first - 1), self.hub.seq
        while seq < last and time.perf_counter() - t0 < PUMP_SLICE:
            seq += 1
            msg = self.hub.log_entry(seq)
            if msg is not None:
                info = self._info(seq, msg)
                if plain:
                    info.main  # noqa: B018 - made now, between rounds
                if patches:
                    info.patch(False)
        self._encoded_ahead = seq
        self._round_cost -= time.thread_time() - cpu0  # per message, not per client: no part of the gap

    def _spent(self, cpu0: float) -> None:
        """The pump's CPU time (this thread's: not the machine's other load, nor snapshot threads)."""
        spent = time.thread_time() - cpu0
        self._round_cost += spent
        self.fanout_stats["pump_seconds"] += spent

    def _timer(self) -> None:
        self._pump_timer = None
        self._pump()

    def _serve(self, c: _Client, stop: int, deadline: float = float("inf")) -> bool:
        """Write what ``c`` is due, up to ``stop`` and its control frames in place, until its buffer is full.

        False when ``deadline`` (``time.perf_counter()``) passed with more of the log due to it: serve it again.
        """
        ws = c.ws
        while c.live and not c.building and not ws.paused:
            if c.overflowed:
                self._resnapshot(c)
                continue
            control = c.control
            target = control[0].pos if control else stop
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
                if run.frames:  # one write (one system call) for every frame of the stretch
                    self._write(c, run.wire)
                    c.last = run.last
                    if c.timed:
                        self._timed(run.stamps)
                    if group.batch:
                        bs = self.batch_stats
                        bs["frames"] += run.frames
                        bs["messages"] += run.messages
                        bs["conflated"] += run.conflated
                if run.end < target and time.perf_counter() > deadline:
                    return False
                continue
            if not control:
                return True
            frame = control[0]
            if frame.build is not None:
                self._build_snapshot(c, frame)
                return True
            control.popleft()
            if frame.reads is not None:
                self._regroup(c, *frame.reads)
                continue
            text = frame.text if frame.text is not None else p.heartbeat_frame(self.hub.seq, c.last)
            self._write(c, _wire(text))
            if frame.seq is not None:
                c.last = frame.seq
        return True

    def _frames(self, group: _Group, cursor: int, stop: int, last: int) -> _Run | None:
        """The data frames of the log after ``cursor`` up to ``stop`` (at most :data:`BUILD_ENTRIES` on: the
        run's ``end``) for ``group``, from ``prev`` = ``last``.

        Built once per round for all the group's clients at that place (the cache is emptied when a
        round starts); None: overflowed (out of the log, or more than ``client_queue`` messages up to ``stop``).
        """
        key = (group, cursor, stop, last)
        try:
            run = self._frames_cache[key]
        except KeyError:
            cpu0 = time.thread_time()
            run = self._frames_cache[key] = self._build_frames(group, cursor, stop, last)
            self._round_cost -= time.thread_time() - cpu0  # per message, not per client: no part of the gap
            if run is not None:
                self.fanout_stats["built"] += run.frames
        else:
            if run is not None:
                self.fanout_stats["shared"] += run.frames
        return run

    def _build_frames(self, group: _Group, cursor: int, stop: int, last: int) -> _Run | None:
        entries: list[tuple[int, Outgoing]] | None
        if group.detail_only:  # detail channels only (an overlay): their messages alone
            seqs = self.hub.detail_since(group.channels, cursor, stop)
            if seqs is None or len(seqs) > self.cfg.client_queue:
                return None
            log = self.hub.log_entry
            entries = [(s, log(s)) for s in seqs]  # type: ignore[misc]  # in the log: detail_since said so
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
        wire = b"".join(_wire(text) for text in texts)
        return _Run(wire, last, stop, len(texts), len(rows), conflated, tuple(stamps))

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
            chain = (msg.channel, info.key)
            if k not in at:  # conflated away: a later message of its key stands for it
                dropped = since.get(chain, frozenset())
                changed = None if msg.removes else info.changed
                since[chain] = None if dropped is None or changed is None else dropped | changed
                continue
            dropped = since.pop(chain, frozenset())
            if msg.removes or dropped == frozenset():
                continue  # a removal, or a patch nothing was conflated into
            whole = info.detail in wanted
            if dropped is None:
                text = info.json if whole else info.main
            else:
                text = info.patch(whole, dropped)
            items[at[k]] = (*items[at[k]][:2], text)

    def _behind(self, group: _Group, cursor: int, stop: int) -> int:
        """The group's messages in the log after ``cursor`` up to ``stop`` (the whole window if some left it)."""
        entries = self.hub.log_since(cursor, stop)
        if entries is None:
            return self.cfg.client_queue + 1
        subs = group.channels
        return sum(1 for _, msg in entries if not subs.isdisjoint(channels_of(msg)))

    def _timed(self, stamps: tuple[float, ...]) -> None:
        """Publish -> socket write latency of each message just written to a sampled client (1 ms bins)."""
        now, hist = time.time(), self.latency_hist
        for ts in stamps:
            ms = min(int(1000 * (now - ts)), 60_000)
            if ts and ms >= 0:  # ts 0: not stamped by a hub
                hist[ms] = hist.get(ms, 0) + 1

    def latency(self) -> dict[str, Any]:
        """The server's own part of publish -> client latency: from the hub's ``ts`` to the write into the
        socket, for every message to one client in :data:`LATENCY_SAMPLE` (``/healthz``; a bench
        subtracts two histograms for a window). What a client measures adds the network and its own queue."""
        total = sum(self.latency_hist.values())

        def q(p: float) -> int | None:
            acc = 0
            for ms in sorted(self.latency_hist):
                acc += self.latency_hist[ms]
                if acc >= p * total:
                    return ms + 1
            return None

        return {"samples": total, "p50_ms": q(0.5), "p95_ms": q(0.95), "p99_ms": q(0.99),
                "hist": {str(k): v for k, v in sorted(self.latency_hist.items())}}

    def _write(self, c: _Client, wire: bytes) -> None:
        """Put whole frames in ``c``'s transport, now (nothing is written on a connection not open).

        As websockets' ``broadcast`` does, but with the frame bytes built once for every client: a
        server's frames are not masked, and with no extension (compression is off) they are the
        same bytes on every connection.
        """
        ws = c.ws
        if ws.protocol.state is not State.OPEN:
            c.live = False  # closing: the handler forgets it
            return
        if ws.protocol.extensions:
            raise RuntimeError("shared frames need a connection without extensions (compression=None)")
        try:
            ws.transport.write(wire)
        except (OSError, RuntimeError) as exc:
            log.info("web: write to %s failed: %s", c.peer, exc)
            c.live = False
            ws.transport.abort()
            return
        c.last_sent = now = time.monotonic()
        if ws.paused and c.sending_since is None:
            c.sending_since = now  # blocked: nothing more until it drains (or send_timeout drops it)

    def _regroup(self, c: _Client, channels: frozenset[str], batch: bool, patch: bool) -> None:
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
                group = self._groups[(channels, batch, patch)] = _Group(channels, batch, patch)
            group.clients.add(c)
            c.group = group

    def _resnapshot(self, c: _Client) -> None:
        """After an overflow: keep control frames with text, forget the backlog, queue a fresh snapshot."""
        keep = [f for f in c.control if f.text is not None and f.seq is None]
        c.control.clear()
        c.overflowed = False
        self._regroup(c, *c.reads())
        c.cursor = self.hub.seq
        for frame in keep:
            frame.pos = c.cursor
            c.control.append(frame)
        self._snapshot(c, sorted(c.channels), "overflow", force=True)
        self.stats["resnapshots"] += 1
        log.warning("web: client %s fell over %d messages behind; sending a fresh snapshot", c.peer, self.cfg.client_queue)

    def _build_snapshot(self, c: _Client, frame: _Frame) -> None:
        """Encode a big snapshot in a thread; ``c`` waits for it (its later frames stay behind it)."""
        build = frame.build
        if build is None or c.building:
            return
        c.building = True
        task: asyncio.Task[str] = asyncio.ensure_future(asyncio.to_thread(build))
        self._builds.add(task)

        def done(t: asyncio.Task[str]) -> None:
            self._builds.discard(t)
            c.building = False
            if t.cancelled():
                return
            exc = t.exception()
            if exc is not None:
                log.error("web: encoding a snapshot for %s failed; closing it", c.peer, exc_info=exc)
                self._forget(c)
                c.ws.transport.abort()
                return
            frame.text, frame.build = t.result(), None
            self._kick(c)

        task.add_done_callback(done)

    def _forget_encoded(self) -> None:
        first = self.hub.log_first
        while self._encoded_from < first:
            self._encoded.pop(self._encoded_from, None)
            self._encoded_from += 1

    def _forget(self, c: _Client) -> None:
        """``c`` is gone: out of the clients and its group (its socket is the caller's business)."""
        c.live = False
        self._clients.discard(c)
        self._kicked.pop(c, None)
        self._regroup(c, frozenset(), c.batch, c.patch)

    async def _housekeeping(self) -> None:
        """Heartbeats to idle clients; drop clients whose write buffer has been full too long."""
        tick = min(0.5, self.cfg.heartbeat_seconds / 2, self.cfg.send_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for c in list(self._clients):
                if c.sending_since is not None:
                    if not c.ws.paused:
                        c.sending_since = None
                    elif now - c.sending_since > self.cfg.send_timeout:
                        self._drop(c, f"its write buffer stayed full for over {self.cfg.send_timeout:g} s")
                elif c.live and now - c.last_sent >= self.cfg.heartbeat_seconds and not c.control:
                    c.last_sent = now
                    self._enqueue(c, _Frame(None))

    def _drop(self, c: _Client, why: str) -> None:
        self.stats["dropped"] += 1
        log.warning("web: dropping client %s: %s", c.peer, why)
        self._forget(c)
        c.ws.transport.abort()


@contextlib.asynccontextmanager
async def serve_web(hub: Hub, cfg: WebConfig) -> AsyncIterator[WebServer]:
    """Run a :class:`WebServer` for the body of an ``async with``; ``.port`` is the bound port."""
    server = WebServer(hub, cfg)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".md": "text/plain; charset=utf-8", "LICENSE": "text/plain; charset=utf-8"}


def _static_files() -> dict[str, tuple[bytes, str]]:
    """Every file under ``static/`` (the vendored chessground included) by its URL path, read once: a request
    can name only these (no path is ever joined from a URL)."""
    files: dict[str, tuple[bytes, str]] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
                continue
            kind = next((t for ext, t in STATIC_TYPES.items() if child.name.endswith(ext)), None)
            if kind is not None:
                files[f"/static/{prefix}{child.name}"] = (child.read_bytes(), kind)

    walk(resources.files("livemon.faces.web").joinpath("static"), "")
    return files


def _http(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers([
        ("Content-Type", content_type), ("Content-Length", str(len(body))),
        ("Cache-Control", "no-store"), ("Connection", "close"),
    ])
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def _address(ws: ServerConnection) -> str:
    """The client's IP address (the unit of the per-address arbiter limit)."""
    try:
        return str(ws.remote_address[0])
    except Exception:  # noqa: BLE001 - for limits and logs only
        return "?"


class _HandshakeFilter(logging.Filter):
    """websockets logs a failed opening handshake at ERROR with a traceback; for a bare TCP connect
    (a port scan, a health check) or a browser closing early that is no error: one DEBUG line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and "handshake failed" in record.getMessage():
            exc = record.exc_info[1]
            causes: list[str] = []
            while exc is not None and len(causes) < 3:
                causes.append(str(exc) or type(exc).__name__)
                exc = exc.__cause__
            conn = getattr(record, "websocket", None)
            peer = _peer(conn) if conn is not None else "?"
            record.msg, record.args = "web: handshake with %s failed: %s", (peer, "; ".join(causes))
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(__name__).isEnabledFor(logging.DEBUG)
        return True


def _handshake_logger() -> logging.Logger:
    logger = logging.getLogger(f"{__name__}.websockets")
    if not any(isinstance(f, _HandshakeFilter) for f in logger.filters):
        logger.addFilter(_HandshakeFilter())
    return logger


def _peer(ws: ServerConnection) -> str:
    try:
        host, port = ws.remote_address[:2]
        return f"{host}:{port}#{ws.id.hex[:6]}"
    except Exception:  # noqa: BLE001 - a peer name is for logs only
        return "?"


def _wire(text: str) -> bytes:
    """``text`` as one unmasked WebSocket text frame (a server's)."""
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)
