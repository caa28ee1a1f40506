"""WebSocket server and HTTP pages on one port: read-only views of the :class:`~livemon.faces.hub.Hub`.

Why this shape: the monitor must never wait for a browser. Each client gets
its own bounded hub subscription and a single sender task that owns every write
to its socket, so frames leave in sequence order; a client that falls behind is
resnapshotted (its queue overflowed) or dropped (a send stayed blocked longer
than ``send_timeout``), and nobody else notices. A rude client gets an error
frame and a log line. The protocol is in docs/websocket.md.

HTTP on the same port (websockets' ``process_request`` hook): ``/`` (an
index of the games with their overlay links), ``/overlay`` (the OBS page),
``/api/snapshot`` (every public channel as JSON) and ``/healthz``.

Abuse limits (fixed, docs/websocket.md): a client may ask for at most
``SNAPSHOT_BURST`` snapshots at once and ``SNAPSHOT_RATE`` a second after that
(``rate_limited`` error frames beyond); a wrong arbiter token is logged with the
client's address, and ``ARBITER_TRIES`` wrong tokens close the connection
(1008), as do any tries from an address with ``ARBITER_TRIES_PER_ADDRESS``
wrong tokens in the last ``ARBITER_WINDOW`` seconds. A TCP connection that
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
from typing import Any, AsyncIterator, Callable, Sequence
from urllib.parse import quote, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from livemon import __version__
from livemon.config import WebConfig
from livemon.faces.hub import PUBLIC_CHANNELS, Hub, Subscription, channels_of
from livemon.live.messages import ARBITER, Message, channel_audience
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
"""Wrong arbiter tokens from one address within ``ARBITER_WINDOW`` after which its tries are refused unheard."""
ARBITER_WINDOW = 60.0
"""Seconds over which wrong arbiter tokens from one address are counted."""
BATCH_BYTES = 256 * 1024
"""A ``deltas`` frame takes queued messages until their JSON reaches this size (clients' frame limits: 1 MiB by default)."""
YIELD_EVERY = 16
"""A sender with a backlog yields to the event loop after this many frames (sends that do not block never yield)."""
BIG_SNAPSHOT = 200
"""A snapshot of more messages than this is encoded in a worker thread, off the event loop."""

__all__ = ["PROTOCOL_VERSION", "WebServer", "serve_web"]


@dataclass
class _Frame:
    """A non-delta item in a client's queue: a snapshot, an error, a pong or a heartbeat.

    ``seq`` is set for snapshots: once sent, it is the client's last data frame.
    A heartbeat has no text yet; it is written when sent, with the then-current seq.
    """

    text: str | None
    seq: int | None = None
    build: Callable[[], str] | None = None  # encodes the text in a thread when sent (a big snapshot)


@dataclass(frozen=True, slots=True)
class _Encoded:
    """What the senders need of one hub message, worked out once for every client."""

    json: str
    channels: tuple[str, ...]
    channels_json: str
    key: str | None  # conflation key (protocol.conflation_key)


@dataclass(eq=False)
class _Client:
    ws: ServerConnection
    sub: Subscription
    peer: str
    last: int = 0  # seq of the last snapshot/delta sent: the next delta's ``prev``
    arbiter: bool = False
    sending_since: float | None = None
    last_sent: float = field(default_factory=time.monotonic)
    errors: int = 0
    address: str = "?"
    tokens: float = SNAPSHOT_BURST  # snapshot rate limit (a token bucket)
    refilled: float = field(default_factory=time.monotonic)
    wrong_tokens: int = 0
    close_reason: str | None = None  # set: the handler closes the connection (1008) after this message
    batch: bool = False  # asked for ``deltas`` frames (subscribe with ``"batch": true``)


class WebServer:
    """The WebSocket server and HTTP pages for one hub; ``await start()``, then ``port``."""

    def __init__(self, hub: Hub, cfg: WebConfig, health: Callable[[], dict[str, Any]] | None = None) -> None:
        self.hub = hub
        self.cfg = cfg
        self.health = health  # e.g. Store.health: /healthz is 503 while it says not ok
        self.port: int = cfg.port
        self.stats: dict[str, int] = {"connections": 0, "dropped": 0, "resnapshots": 0, "errors": 0}
        self.batch_stats: dict[str, int] = {"frames": 0, "messages": 0, "conflated": 0}  # deltas frames (benches)
        self._clients: set[_Client] = set()
        self._server: Server | None = None
        self._housekeeper: asyncio.Task[None] | None = None
        self._encoded: dict[int, _Encoded] = {}  # seq -> message JSON etc., encoded once for every client
        self._chjson: dict[tuple[str, ...], str] = {}  # delivered channels -> their JSON array
        self._snapshots: dict[str, tuple[int, str]] = {}  # channel -> (hub seq, messages JSON) of the last snapshot
        self._wrong_tokens: dict[str, deque[float]] = {}  # address -> times of its recent wrong arbiter tokens
        self._overlay = resources.files("livemon.faces.web").joinpath("static/overlay.html").read_bytes()

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
            max_size=self.cfg.max_message_bytes * HARD_LIMIT_FACTOR,
            ping_interval=self.cfg.heartbeat_seconds,
            ping_timeout=max(self.cfg.heartbeat_seconds, self.cfg.send_timeout),
            close_timeout=2.0,
            compression=None,  # deflate per client costs more CPU than it saves on loopback/LAN
            server_header=f"livemon/{__version__}",
            logger=_handshake_logger(),
        )
        self.port = next(iter(self._server.sockets)).getsockname()[1]
        self._housekeeper = asyncio.create_task(self._housekeeping(), name="web-housekeeping")
        log.info("web: listening on %s (WebSocket %s, overlay /overlay)", self.url, WS_PATH)

    async def close(self) -> None:
        """Stop listening and close every connection (1001 going away)."""
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
        if path == "/api/snapshot":
            return _http(200, json.dumps(self.public_snapshot(), separators=(",", ":")).encode(), "application/json")
        if path == "/healthz":
            store = self.health() if self.health is not None else None
            ok = store is None or bool(store.get("ok", True))
            body: dict[str, Any] = {"ok": ok, "protocol": PROTOCOL_VERSION, "seq": self.hub.seq, "clients": self.clients, **self.stats}
            if store is not None:
                body["store"] = store
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
            "<p><a href=\"/overlay\">/overlay</a> follows a live game (the first live board, else the latest); "
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
            channels[channel] = [m.to_dict() for m in msgs]
        return {"protocol": PROTOCOL_VERSION, "seq": self.hub.seq, "channels": channels}

    # -- WebSocket ---------------------------------------------------------

    async def _handler(self, ws: ServerConnection) -> None:
        client = _Client(ws, self.hub.subscribe((), maxsize=self.cfg.client_queue), _peer(ws), address=_address(ws))
        self._clients.add(client)
        self.stats["connections"] += 1
        log.info("web: client %s connected (%d now)", client.peer, len(self._clients))
        sender: asyncio.Task[None] | None = None
        try:
            await ws.send(p.hello_frame(self.hub.seq, self.cfg.arbiter_token is not None,
                                        self.cfg.heartbeat_seconds, self.cfg.max_message_bytes, __version__))
            sender = asyncio.create_task(self._sender(client), name=f"web-send-{client.peer}")
            sender.add_done_callback(lambda t: _sender_done(t, client))
            async for raw in ws:
                self._on_message(client, raw)
                if client.close_reason is not None:
                    log.warning("web: closing client %s: %s", client.peer, client.close_reason)
                    for _ in range(100):  # let its error frames out first (at most 1 s)
                        if client.sub.queue.empty() or sender.done():
                            break
                        await asyncio.sleep(0.01)
                    await ws.close(1008, client.close_reason)
                    break
        except ConnectionClosed:
            pass
        finally:
            if sender:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await sender
            self.hub.unsubscribe(client.sub)
            self._clients.discard(client)
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
                c.sub.channels.difference_update(names)
                self._enqueue(c, _Frame(p.unsubscribed_frame(names, rid)))
            elif req.op == "snapshot":
                self._rate_limit(c)
                names = list(req.channels) if req.channels is not None else sorted(c.sub.channels)
                missing = [ch for ch in names if ch not in c.sub.channels]
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
        granted = []
        for name in req.channels or ():
            try:
                p.check_channel(name)
                if channel_audience(name) == ARBITER and not self._arbiter(c, req.token):
                    why = f"{name} (arbiters only) is disabled on this server" if self.cfg.arbiter_token is None else "a valid arbiter token is required"
                    raise ProtocolError("forbidden", why)
                granted.append(name)
            except ProtocolError as exc:
                # a wrong token was logged by _arbiter (with the address): the error frame is not logged again
                self._error(c, exc.code, exc.message, req.id, channel=name, logged=req.token is not None)
            if c.close_reason is not None:
                return
        c.sub.channels.update(granted)
        self._snapshot(c, granted, "subscribe")

    def _arbiter(self, c: _Client, token: str | None) -> bool:
        """Is ``c`` an arbiter (now, with ``token``)? Wrong tokens are counted, logged and limited."""
        want = self.cfg.arbiter_token
        if want is None:
            return False
        if c.arbiter or token is None:
            return c.arbiter
        now = time.monotonic()
        recent = self._wrong_tokens.setdefault(c.address, deque())
        while recent and now - recent[0] > ARBITER_WINDOW:
            recent.popleft()
        if len(recent) >= ARBITER_TRIES_PER_ADDRESS:
            log.warning("web: arbiter token from %s refused unheard: %d wrong tokens from %s in the last %g s",
                        c.peer, len(recent), c.address, ARBITER_WINDOW)
            c.close_reason = "too many wrong arbiter tokens from this address"
            return False
        if hmac.compare_digest(token.encode(), want.encode()):
            c.arbiter = True
            log.info("web: client %s is an arbiter", c.peer)
            return True
        c.wrong_tokens += 1
        recent.append(now)
        log.warning("web: wrong arbiter token from %s (%d of %d on this connection, %d from %s in %g s)",
                    c.peer, c.wrong_tokens, ARBITER_TRIES, len(recent), c.address, ARBITER_WINDOW)
        if c.wrong_tokens >= ARBITER_TRIES:
            c.close_reason = "too many wrong arbiter tokens"
        if len(self._wrong_tokens) > 10000:  # forget quiet addresses (a scan from many must not grow this forever)
            for addr in [a for a, d in self._wrong_tokens.items() if not d or now - d[-1] > ARBITER_WINDOW]:
                del self._wrong_tokens[addr]
        return False

    def _snapshot(self, c: _Client, channels: list[str], reason: str) -> None:
        """Queue a snapshot of ``channels`` behind every delta already queued (so order holds).

        The messages are encoded once per channel and hub seq for every client that asks (2,000
        clients connecting at once cost one encoding); a big one is encoded in a thread when sent.
        """
        for channel in channels:
            seq, msgs = self.hub.snapshot(channel)
            cached = self._snapshots.get(channel)
            if cached is not None and cached[0] == seq:
                self._enqueue(c, _Frame(p.snapshot_frame_from(channel, seq, cached[1], reason), seq))
            elif len(msgs) > BIG_SNAPSHOT:
                self._enqueue(c, _Frame(None, seq, build=self._snapshot_builder(channel, seq, msgs, reason)))
            else:
                text = p.messages_json(msgs)
                self._snapshots[channel] = (seq, text)
                self._enqueue(c, _Frame(p.snapshot_frame_from(channel, seq, text, reason), seq))

    def _snapshot_builder(self, channel: str, seq: int, msgs: Sequence[Message], reason: str) -> Callable[[], str]:
        def build() -> str:  # runs in a worker thread: the messages are frozen dataclasses
            cached = self._snapshots.get(channel)
            text = cached[1] if cached is not None and cached[0] == seq else p.messages_json(msgs)
            self._snapshots[channel] = (seq, text)
            return p.snapshot_frame_from(channel, seq, text, reason)
        return build

    def _error(self, c: _Client, code: str, message: str, rid: Any = None, channel: str | None = None,
               logged: bool = False) -> None:
        c.errors += 1
        self.stats["errors"] += 1
        if not logged and (c.errors <= _ERRORS_LOGGED or c.errors % 100 == 0):
            log.warning("web: client %s: error frame %s: %s (%d so far)", c.peer, code, message, c.errors)
        self._enqueue(c, _Frame(p.error_frame(code, message, rid, channel)))

    def _enqueue(self, c: _Client, frame: _Frame) -> None:
        try:
            c.sub.queue.put_nowait((self.hub.seq, frame))  # type: ignore[arg-type]
        except asyncio.QueueFull:
            c.sub.overflowed = True  # the sender resnapshots; control frames queued so far survive

    def _message_json(self, seq: int, msg: Message) -> str:
        return self._info(seq, msg).json

    def _info(self, seq: int, msg: Any) -> _Encoded:
        """``msg`` as every client needs it (JSON, channels, conflation key), worked out once per seq."""
        info = self._encoded.get(seq)
        if info is None:
            channels = channels_of(msg)
            info = self._encoded[seq] = _Encoded(msg.to_json(), channels, p.channels_json(list(channels)),
                                                 p.conflation_key(msg))
            if len(self._encoded) > 4096:
                for old in list(self._encoded)[:1024]:
                    del self._encoded[old]
        return info

    def _channels_json(self, channels: list[str]) -> str:
        key = tuple(channels)
        text = self._chjson.get(key)
        if text is None:
            if len(self._chjson) > 4096:
                self._chjson.clear()
            text = self._chjson[key] = p.channels_json(channels)
        return text

    async def _sender(self, c: _Client) -> None:
        """The only writer of ``c``'s socket after hello: queued frames in order, resnapshot on overflow.

        A batching client (``"batch": true``) gets, per wake-up, every delta already queued in one
        ``deltas`` frame (superseded states conflated), up to the next control frame, which keeps
        its place: no timer, so an idle server still sends each message at once.
        """
        queue = c.sub.queue
        streak = 0  # frames taken from a queue that never ran empty: awaiting get() did not yield
        while True:
            if c.sub.overflowed:
                await self._resnapshot(c, [])
                continue
            if queue.empty():
                streak = 0
            else:
                streak += 1
                if streak % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # a deep backlog must not hold the event loop (the monitor's too)
            seq, item = await queue.get()
            if c.sub.overflowed:
                await self._resnapshot(c, [item] if isinstance(item, _Frame) else [])
                continue
            if isinstance(item, _Frame):
                await self._send_frame(c, item)
                continue
            if c.batch:
                batch: list[tuple[int, Any]] = [(seq, item)]
                control: _Frame | None = None
                size = len(self._info(seq, item).json)
                while size < BATCH_BYTES:  # the rest of a longer backlog waits for the next frame
                    try:
                        seq, nxt = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        break
                    if isinstance(nxt, _Frame):
                        control = nxt
                        break
                    batch.append((seq, nxt))
                    size += len(self._info(seq, nxt).json)
                if c.sub.overflowed:
                    await self._resnapshot(c, [control] if control is not None else [])
                    continue
                await self._send_batch(c, batch)
                if control is not None:
                    await self._send_frame(c, control)
                continue
            wanted = [ch for ch in channels_of(item) if ch in c.sub.channels]
            if not wanted:
                continue  # unsubscribed since it was queued
            await self._send(c, p.delta_frame(seq, c.last, wanted, self._message_json(seq, item)))
            c.last = seq

    async def _send_frame(self, c: _Client, item: _Frame) -> None:
        """Send a queued non-delta frame (a snapshot sets the client's last seq)."""
        if item.build is not None:
            text = await asyncio.to_thread(item.build)
        else:
            text = item.text if item.text is not None else p.heartbeat_frame(self.hub.seq, c.last)
        await self._send(c, text)
        if item.seq is not None:
            c.last = item.seq

    async def _send_batch(self, c: _Client, batch: list[tuple[int, Any]]) -> None:
        """One ``deltas`` frame for ``batch`` (queued deltas in seq order), superseded states conflated."""
        subs = c.sub.channels
        rows: list[tuple[int, str | None, tuple[str, ...]]] = []
        texts: list[tuple[str, str]] = []  # (channels JSON, message JSON) per row
        for seq, msg in batch:
            info = self._info(seq, msg)
            channels = info.channels
            if all(ch in subs for ch in channels):
                rows.append((seq, info.key, channels))
                texts.append((info.channels_json, info.json))
                continue
            wanted = tuple(ch for ch in channels if ch in subs)
            if wanted:  # else: unsubscribed since it was queued
                rows.append((seq, info.key, wanted))
                texts.append((self._channels_json(list(wanted)), info.json))
        if not rows:
            return
        kept = p.conflate(rows)
        self.batch_stats["frames"] += 1
        self.batch_stats["messages"] += len(batch)
        self.batch_stats["conflated"] += len(rows) - len(kept)
        await self._send(c, p.deltas_frame(c.last, [(rows[i][0], *texts[i]) for i in kept]))
        c.last = rows[kept[-1]][0]

    async def _resnapshot(self, c: _Client, pending: list[Any]) -> None:
        """After an overflow: keep control frames, forget queued deltas, send a fresh snapshot."""
        keep = [f for f in pending if f.seq is None and f.text is not None and f.build is None]
        while not c.sub.queue.empty():
            _, item = c.sub.queue.get_nowait()
            if isinstance(item, _Frame) and item.seq is None and item.text is not None and item.build is None:
                keep.append(item)
        self.hub.resubscribe(c.sub)
        frames = []
        for channel in sorted(c.sub.channels):  # taken at once: nothing is published in between
            seq, msgs = self.hub.snapshot(channel)
            frames.append(_Frame(p.snapshot_frame(channel, seq, msgs, "overflow"), seq))
        self.stats["resnapshots"] += 1
        log.warning("web: client %s fell %d messages behind; sending a fresh snapshot", c.peer, self.cfg.client_queue)
        for frame in keep + frames:
            assert frame.text is not None  # noqa: S101 - invariant: kept frames have text
            await self._send(c, frame.text)
            if frame.seq is not None:
                c.last = frame.seq

    async def _send(self, c: _Client, text: str) -> None:
        c.sending_since = time.monotonic()
        await c.ws.send(text)
        c.sending_since = None
        c.last_sent = time.monotonic()

    async def _housekeeping(self) -> None:
        """Heartbeats to idle clients; drop clients whose send has been blocked too long."""
        tick = min(0.5, self.cfg.heartbeat_seconds / 2, self.cfg.send_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for c in list(self._clients):
                if c.sending_since is not None:
                    if now - c.sending_since > self.cfg.send_timeout:
                        self._drop(c, f"a send blocked for over {self.cfg.send_timeout:g} s")
                elif now - c.last_sent >= self.cfg.heartbeat_seconds and c.sub.queue.empty():
                    c.last_sent = now
                    self._enqueue(c, _Frame(None))

    def _drop(self, c: _Client, why: str) -> None:
        self.stats["dropped"] += 1
        log.warning("web: dropping client %s: %s", c.peer, why)
        self._clients.discard(c)
        self.hub.unsubscribe(c.sub)
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


def _sender_done(task: asyncio.Task[None], c: _Client) -> None:
    """A sender that dies of a bug closes its connection loudly rather than leaving it mute."""
    if task.cancelled() or isinstance(task.exception(), ConnectionClosed):
        return
    log.error("web: sender of %s failed; closing it", c.peer, exc_info=task.exception())
    c.ws.transport.abort()
