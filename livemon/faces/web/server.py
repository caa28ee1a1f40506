"""The web face's asyncio server: moves bytes between sockets and the :class:`~livemon.faces.web.fanout.Fanout`.

One port carries the WebSocket endpoint (``/ws``, docs/websocket.md) and the HTTP pages
(:mod:`livemon.faces.web.pages`, through websockets' ``process_request`` hook). Every decision —
who reads what, when a round starts, which bytes a client gets, when a slow one is dropped, who
is an arbiter — is the fan-out's (:mod:`~livemon.faces.web.fanout`, :mod:`~livemon.faces.web.auth`),
made without I/O; this module only:

* hands it what happens: a connection, a client frame, the hub's wake-up (at most once per
  event-loop turn), a write buffer over or under its high-water mark, the time;
* runs its pump for up to ``PUMP_SLICE`` seconds at a time (a longer round goes on in the next
  loop turn, so the monitor's own tasks keep running), and at the round gap on a timer;
* writes the bytes it returns straight into the client's transport, every frame of a step in one
  write and without an ``await`` (as websockets' own ``broadcast``: with compression off, a
  server's frame bytes are the same on every connection), only while the connection is open;
* encodes a big snapshot in a worker thread, off the event loop;
* every half second, its housekeeping: heartbeats, and aborting a client blocked longer than
  ``send_timeout``;
* sleeps ``ARBITER_SLOW`` before a token try from an address over its guess budget.

A TCP connection that never completes a handshake (a port scan, a health check, a browser closing
early) is one DEBUG line, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import time
from typing import Any, AsyncIterator, Callable, cast

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from livemon import __version__
from livemon.config import WebConfig
from livemon.faces.hub import LOG_SIZE, Hub
from livemon.faces.web.auth import ARBITER_SLOW
from livemon.faces.web.fanout import (BATCH_BYTES, BUILD_ENTRIES, FANOUT_SHARE, LATENCY_SAMPLE, MAX_GAP, ROUND_GAP, Build,
                                      Client, Fanout)
from livemon.faces.web.pages import Pages, origin_ok
from livemon.faces.web.protocol import PROTOCOL_VERSION

log = logging.getLogger(__name__)

WS_PATH = "/ws"
HARD_LIMIT_FACTOR = 16
"""A client frame over ``max_message_bytes`` × this closes the connection (1009) instead of an error frame."""
PUMP_SLICE = 0.005
"""Seconds of serving clients after which the pump lets the event loop run (and goes on in the next turn)."""
ENCODE_STEP = 64
"""Messages encoded ahead between two checks of the pump's slice."""
LOG_PER_QUEUE = 4
"""The hub's log keeps at least this many times ``client_queue`` messages (all channels together)."""
HOUSEKEEPING = 0.5
"""Seconds between two housekeeping passes, at most (less with a short heartbeat or send timeout)."""

__all__ = ["BATCH_BYTES", "BUILD_ENTRIES", "FANOUT_SHARE", "LATENCY_SAMPLE", "MAX_GAP", "PROTOCOL_VERSION", "ROUND_GAP",
           "WebServer", "serve_web"]


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
        self.port: int = cfg.port
        self.fanout = Fanout(hub, cfg, kick=self._soon, cpu=time.thread_time)
        self.pages = Pages(hub, health, self._health)
        self._server: Server | None = None
        self._housekeeper: asyncio.Task[None] | None = None
        self._pump_handle: asyncio.Handle | None = None  # a pump due in this or the next loop turn
        self._pump_timer: asyncio.TimerHandle | None = None  # a pump due when the round gap has passed
        self._builds: set[asyncio.Task[str]] = set()

    # the fan-out's figures (benches, /healthz)
    @property
    def stats(self) -> dict[str, int]:
        return self.fanout.stats

    @property
    def batch_stats(self) -> dict[str, int]:
        return self.fanout.batch_stats

    @property
    def fanout_stats(self) -> dict[str, float]:
        return self.fanout.fanout_stats

    @property
    def round_gap(self) -> float:
        return self.fanout.round_gap

    @round_gap.setter
    def round_gap(self, value: float) -> None:
        self.fanout.round_gap = value

    @property
    def clients(self) -> int:
        return len(self.fanout.clients)

    @property
    def url(self) -> str:
        return f"http://{self.cfg.host}:{self.port}"

    def latency(self) -> dict[str, Any]:
        """The server's own part of publish -> client latency: from the hub's ``ts`` to the write into the
        socket, for every message to one client in :data:`LATENCY_SAMPLE` (``/healthz``; a bench
        subtracts two histograms for a window). What a client measures adds the network and its own queue."""
        return self.fanout.latency.summary()

    def index_page(self) -> str:
        return self.pages.index_page()

    def public_snapshot(self) -> dict[str, Any]:
        return self.pages.public_snapshot()

    def _health(self) -> dict[str, Any]:
        return {"clients": self.clients, **self.stats, "latency": self.latency()}

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
            if not origin_ok(self.cfg.allowed_origins, origin, request.headers.get("Host")):
                log.warning("web: refused WebSocket from origin %r (%s)", origin, _peer(connection))
                return connection.respond(http.HTTPStatus.FORBIDDEN, "origin not allowed\n")
            return None  # the WebSocket handshake goes on
        return self.pages.respond(path)

    # -- WebSocket ---------------------------------------------------------

    async def _handler(self, conn: ServerConnection) -> None:
        ws = cast(_Connection, conn)
        fanout = self.fanout
        client = fanout.connect(_peer(ws), _address(ws), time.monotonic(), io=ws)
        ws.on_drain = lambda: fanout.drained(client, time.monotonic())
        log.info("web: client %s connected (%d now)", client.peer, len(fanout.clients))
        try:
            await ws.send(fanout.hello())
            fanout.opened(client)  # from here on the pump owns every write to this socket
            async for raw in ws:
                if (not client.arbiter and isinstance(raw, str) and '"token"' in raw
                        and fanout.gate.over_budget(client.address, time.monotonic())):
                    await asyncio.sleep(ARBITER_SLOW)  # a guesser's address: each of its tries costs it time
                fanout.receive(client, raw, time.monotonic())
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
            fanout.forget(client)
            log.info("web: client %s gone (%s; %d left)", client.peer, ws.close_code, len(fanout.clients))

    # -- the pump --------------------------------------------------------------

    def _soon(self) -> None:
        """Pump in this or the next loop turn (a client has something new outside a round)."""
        if self._pump_handle is None:
            self._pump_handle = asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        """Serve clients for up to ``PUMP_SLICE`` seconds: the round in progress, then a new one if it is due.

        Called by the hub (once per loop turn with new messages), by ``call_soon`` (kicks, a round that
        did not fit its slice) and by the round-gap timer.
        """
        if self._pump_handle is not None:
            self._pump_handle.cancel()
            self._pump_handle = None
        fanout = self.fanout
        t0, cpu0 = time.perf_counter(), time.thread_time()
        deadline = t0 + PUMP_SLICE
        now = time.monotonic()
        rounds = fanout.fanout_stats["rounds"]
        try:
            while True:
                c = fanout.next_client(now)
                if c is None:
                    break
                try:
                    if not self._serve(c, now, deadline):
                        fanout.again(c)  # more for this client: it goes on in the next slice
                except Exception:  # noqa: BLE001 - a bug must cost one client, not every client's pump
                    log.exception("web: serving %s failed; closing it", c.peer)
                    fanout.forget(c)
                    c.io.transport.abort()
                if time.perf_counter() > deadline:
                    self._soon()
                    return
            if fanout.fanout_stats["rounds"] != rounds and self._pump_timer is not None:
                self._pump_timer.cancel()
                self._pump_timer = None
            wake = fanout.wake_at()
            if wake is not None:
                if self._pump_timer is None:
                    loop = asyncio.get_running_loop()
                    self._pump_timer = loop.call_at(loop.time() + max(0.0, wake - now), self._timer)
                while fanout.encode_ahead(ENCODE_STEP) and time.perf_counter() < deadline:
                    pass
        finally:
            fanout.spent(time.thread_time() - cpu0)

    def _timer(self) -> None:
        self._pump_timer = None
        self._pump()

    def _serve(self, c: Client, now: float, deadline: float) -> bool:
        """Write what the fan-out has for ``c`` until nothing is due or its buffer is full; False when
        ``deadline`` (``time.perf_counter()``) passed with more of the log due to it: serve it again."""
        fanout = self.fanout
        while True:
            out = fanout.step(c, now)
            if out is None:
                return True
            if isinstance(out, Build):
                self._build(out)
                return True
            if out:
                self._write(c, out)
                if c.timed and c.stamps:
                    fanout.latency.record(c.stamps, time.time())
            if c.partial and time.perf_counter() > deadline:
                return False

    def _write(self, c: Client, data: bytes) -> None:
        """Put whole frames in ``c``'s transport, now (nothing is written on a connection not open).

        As websockets' ``broadcast`` does, but with the frame bytes built once for every client: a
        server's frames are not masked, and with no extension (compression is off) they are the
        same bytes on every connection.
        """
        ws: ServerConnection = c.io
        if ws.protocol.state is not State.OPEN:
            c.live = False  # closing: the handler forgets it
            return
        if ws.protocol.extensions:
            raise RuntimeError("shared frames need a connection without extensions (compression=None)")
        try:
            ws.transport.write(data)
        except (OSError, RuntimeError) as exc:
            log.info("web: write to %s failed: %s", c.peer, exc)
            c.live = False
            ws.transport.abort()
            return
        if ws.paused:
            self.fanout.blocked(c, time.monotonic())  # nothing more until it drains (or send_timeout drops it)

    def _build(self, build: Build) -> None:
        """Encode a big snapshot in a thread; its client waits for it (its later frames stay behind it)."""
        task: asyncio.Task[str] = asyncio.ensure_future(asyncio.to_thread(build.run))
        self._builds.add(task)
        c = build.client

        def done(t: asyncio.Task[str]) -> None:
            self._builds.discard(t)
            if t.cancelled():
                self.fanout.build_failed(build)
                return
            exc = t.exception()
            if exc is not None:
                self.fanout.build_failed(build)
                log.error("web: encoding a snapshot for %s failed; closing it", c.peer, exc_info=exc)
                self.fanout.forget(c)
                c.io.transport.abort()
                return
            self.fanout.built(build, t.result())

        task.add_done_callback(done)

    async def _housekeeping(self) -> None:
        """Heartbeats to idle clients; abort clients whose write buffer has been full too long."""
        tick = min(HOUSEKEEPING, self.cfg.heartbeat_seconds / 2, self.cfg.send_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for c in list(self.fanout.clients):
                if c.sending_since is not None and not c.io.paused:
                    self.fanout.drained(c, now)  # a drain the transport did not report
            for c in self.fanout.housekeeping(now, time.time()):
                c.io.transport.abort()


@contextlib.asynccontextmanager
async def serve_web(hub: Hub, cfg: WebConfig) -> AsyncIterator[WebServer]:
    """Run a :class:`WebServer` for the body of an ``async with``; ``.port`` is the bound port."""
    server = WebServer(hub, cfg)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


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
