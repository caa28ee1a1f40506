"""The one MQTT broker client: settings, connect-with-back-off, topic naming.

Four parts of livemon talk to a broker: the monitor's engine bus
(:mod:`livemon.io.bus`), the engine worker (:mod:`livemon.app.worker`), MQTT out
(:mod:`livemon.faces.mqtt`) and the ``mqtt`` feed (:mod:`livemon.io.feeds.mqtt`).
They share this module:

* :class:`BrokerSettings` — where the broker is and how to log in (host,
  port, user, password, TLS files, longest back-off), read from a config
  section's ``broker`` (``[broker]``, shared by ``[bus]``, ``[mqtt_out]`` and the mqtt ``[[feeds]]``).
* :func:`make_client` — an :class:`aiomqtt.Client` for those settings.
* :func:`delivered` — what the broker delivers to a client, every message
  already queued taken without a loop turn each (aiomqtt's own iterator costs
  one or two).
* :class:`BrokerLink` — keeps one connection up: connect, run a session, and on
  broker trouble log **one line**, wait (:class:`~livemon.io.feeds.base.Backoff`:
  1 s doubling to ``max_backoff``, a little jitter) and connect again. Nothing a
  broker does raises into the caller.
* :func:`topic_level` / :func:`topic` — free text as one topic level, and
  topics joined from a root and levels.

>>> s = BrokerSettings(host="broker.example", port=1884, max_backoff=8.0)
>>> s.where
'broker.example:1884'
>>> topic("livemon/wcc", "games", "round 1/board 2")
'livemon/wcc/games/round 1%2Fboard 2'
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livemon.io.feeds.base import Backoff

log = logging.getLogger(__name__)

_ESCAPES = {c: f"%{ord(c):02X}" for c in "%/+#\0"}


def topic_level(name: str) -> str:
    """A free-text name as one topic level: ``% / + #`` and NUL percent-encoded, the rest kept.

    >>> topic_level("Carlsen, Magnus"), topic_level("a/b+#%")
    ('Carlsen, Magnus', 'a%2Fb%2B%23%25')
    """
    return "".join(_ESCAPES.get(c, c) for c in name)


def topic(root: str, *levels: str) -> str:
    """``root`` and each free-text level (escaped by :func:`topic_level`), joined by ``/``."""
    return "/".join((root, *(topic_level(level) for level in levels)))


@dataclass(frozen=True)
class BrokerSettings:
    """How to reach and log in to an MQTT broker."""

    host: str = "localhost"
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    max_backoff: float = 30.0

    @classmethod
    def of(cls, section: Any) -> BrokerSettings:
        """The broker settings of a config section (``[bus]``, ``[mqtt_out]``, an mqtt feed): its ``broker``
        (the shared ``[broker]`` once loaded; a section made in code without one: the defaults) and its
        ``max_backoff``.

        >>> from livemon.config import BrokerConfig, BusConfig, MqttOutConfig
        >>> BrokerSettings.of(MqttOutConfig(broker=BrokerConfig(port=1999), max_backoff=5.0)).where
        'localhost:1999'
        >>> BrokerSettings.of(BusConfig(broker=BrokerConfig(tls=True))).tls, BrokerSettings.of(BusConfig()).where
        (True, 'localhost:1883')
        """
        from livemon.config import BrokerConfig

        broker = getattr(section, "broker", None) or BrokerConfig()
        return cls(broker.host, broker.port, broker.username, broker.password, broker.tls, broker.ca_file,
                   broker.cert_file, broker.key_file, max_backoff=getattr(section, "max_backoff", cls.max_backoff))

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def make_client(
    settings: BrokerSettings,
    identifier: str | None = None,
    *,
    will: aiomqtt.Will | None = None,
    v5: bool = False,
    receive_maximum: int | None = None,
    keepalive: int = 60,
    timeout: float = 10,
    max_inflight: int | None = None,
) -> aiomqtt.Client:
    """An MQTT client for ``settings`` (credentials, TLS; MQTT v5 with an optional Receive Maximum).

    ``max_inflight``: QoS 1 publishes awaiting their PUBACK at once (paho's default is 20; aiomqtt
    warns past 10 pending publish calls, so its warning threshold follows)."""
    props = None
    if v5:
        props = Properties(PacketTypes.CONNECT)
        if receive_maximum is not None:
            props.ReceiveMaximum = receive_maximum  # the broker sends at most this many unacknowledged messages
    tls = None
    if settings.tls:
        tls = aiomqtt.TLSParameters(ca_certs=settings.ca_file or None, certfile=settings.cert_file or None,
                                    keyfile=settings.key_file or None)
    client = aiomqtt.Client(
        settings.host, settings.port, identifier=identifier, username=settings.username, password=settings.password,
        protocol=aiomqtt.ProtocolVersion.V5 if v5 else None, will=will, properties=props, tls_params=tls,
        keepalive=keepalive, timeout=timeout, max_inflight_messages=max_inflight,
    )
    if max_inflight is not None:
        client.pending_calls_threshold = max(client.pending_calls_threshold, max_inflight)
    return client


def no_delay(client: aiomqtt.Client) -> None:
    """Turn Nagle's algorithm off on a connected client's socket.

    A request/answer bus writes small packets back to back (a result, then the
    PUBACK of its request); with Nagle the second waits for the broker's delayed
    TCP ACK (~40 ms on Linux), and the broker sends a worker its next request
    only after that PUBACK (Receive Maximum). paho has no option for it.
    """
    sock = client._client.socket()
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):  # also TLS sockets
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def handed(client: aiomqtt.Client, topic: str, payload: bytes | str, *, qos: int = 1,
           properties: Properties | None = None) -> None:
    """Hand a message to paho to publish, without waiting for the broker's PUBACK.

    aiomqtt's ``publish`` waits for each PUBACK (an event and a timeout task per message): for
    the bus's requests, that is work on the monitor's loop for every position, and each
    request waits for nothing the bus uses. paho keeps a QoS 1 message until its PUBACK and sends it again
    on the same session; one lost with the connection is the caller's to send again (the bus
    asks again for every position in flight when it reconnects, and after ``request_timeout``).
    Raises :class:`aiomqtt.MqttCodeError` when paho refuses it (the connection is gone), as
    ``publish`` does.
    """
    info = client._client.publish(topic, payload, qos, False, properties)
    if info.rc != 0:  # MQTT_ERR_SUCCESS
        raise aiomqtt.MqttCodeError(info.rc, "Could not publish message")


RECEIVE_SLICE = 0.01
"""Seconds of delivered messages handed on by :func:`delivered` before the event loop runs again."""


async def delivered(client: aiomqtt.Client, slice_seconds: float = RECEIVE_SLICE) -> AsyncIterator[aiomqtt.Message]:
    """Every message the broker delivers to ``client``, in order, as ``client.messages`` gives them.

    aiomqtt's iterator (2.5) makes a task and waits on it for every message: a loop
    turn or two each, even with hundreds queued. Behind a busy loop that would set the
    bus's pace (results waiting in aiomqtt's queue after paho has read them, while the
    workers idle). So after each message the iterator gives, the messages already
    queued (aiomqtt's private queue, as ``client._client`` is used elsewhere) are
    handed on at once, the event loop running again every ``slice_seconds``. Like
    the iterator, it raises :class:`aiomqtt.MqttError` when the connection goes.
    """
    queue: asyncio.Queue[aiomqtt.Message] | None = getattr(client, "_queue", None)
    async for message in client.messages:
        start = time.perf_counter()
        yield message
        while queue is not None and not queue.empty():
            if time.perf_counter() - start >= slice_seconds:
                await asyncio.sleep(0)
                start = time.perf_counter()
                if queue.empty():  # taken meanwhile? the iterator waits for the next
                    break
            yield queue.get_nowait()


Session = Callable[[aiomqtt.Client], Awaitable[None]]


class BrokerLink:
    """One connection to a broker, kept up with back-off; see the module docstring.

    ``name`` starts every log line (``bus``, ``worker``, ``mqtt_out``,
    ``feed live``), written to ``logger`` (the caller's module logger, so
    that a log set-up for that module sees its connections). ``client`` makes a fresh, unconnected client for each
    attempt (default :func:`make_client`). ``stopping``, when set, ends the
    link at the next attempt and cuts a back-off wait short.

    Either :meth:`run` a session (returns when the session returns; broker
    errors, and with ``survive_bugs`` any other error, are logged and the
    session runs again on a new connection), or, for a session that is an
    async generator (a feed), loop yourself::

        while await link.pause():
            try:
                async with link.connect() as client:
                    ...
            except aiomqtt.MqttError as exc:
                link.lost(exc)
    """

    def __init__(
        self,
        name: str,
        settings: BrokerSettings,
        client: Callable[[], aiomqtt.Client] | None = None,
        *,
        base_delay: float = 1.0,
        stopping: asyncio.Event | None = None,
        survive_bugs: bool = False,
        logger: logging.Logger | None = None,
    ) -> None:
        self.name = name
        self.log = logger or log
        self.settings = settings
        self._client = client or (lambda: make_client(settings))
        self.backoff = Backoff(base_delay, settings.max_backoff)
        self.stopping = stopping
        self.survive_bugs = survive_bugs
        self.connects = 0
        self.last_error: str | None = None
        self._delay: float | None = None  # the wait before the next attempt, once a connection failed

    @property
    def stopped(self) -> bool:
        return self.stopping is not None and self.stopping.is_set()

    def lost(self, exc: BaseException | None, bug: bool = False, quiet: bool = False) -> float:
        """Note a failed or lost connection: one log line (none if ``quiet``); returns the wait before the next attempt."""
        delay = self.backoff.next_delay()
        self._delay = delay
        self.last_error = str(exc) if exc is not None else "unknown error"
        if bug:
            self.log.error("%s: unexpected error; retrying in %.3g s", self.name, delay, exc_info=exc)
        elif not quiet:
            self.log.warning("%s: broker %s: %s; retrying in %.3g s", self.name, self.settings.where, exc, delay)
        return delay

    async def pause(self) -> bool:
        """Wait out the back-off after a failure (cut short by ``stopping``); False once stopping."""
        if self._delay is not None and not self.stopped:
            delay, self._delay = self._delay, None
            if self.stopping is None:
                await asyncio.sleep(delay)
            else:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):  # not wait_for: on 3.11 it may swallow a cancellation
                        await self.stopping.wait()
        return not self.stopped

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[aiomqtt.Client]:
        """One connection: a connected client, disconnected on exit. Broker trouble raises :class:`aiomqtt.MqttError`."""
        async with self._client() as client:
            self.connects += 1
            self.backoff.reset()
            self._delay = None
            self.log.info("%s: connected to %s", self.name, self.settings.where)
            yield client

    async def run(self, session: Session, on_down: Callable[[], None] | None = None) -> None:
        """Run ``session`` on a new connection until it returns (or ``stopping``); broker trouble is retried.

        A session's broker errors may come alone or in an :class:`ExceptionGroup`
        (from a task group). ``on_down`` is called whenever a connection ends.
        """
        while await self.pause():
            try:
                async with self.connect() as client:
                    await session(client)
                    return
            except aiomqtt.MqttError as exc:
                self.lost(exc)
            except ExceptionGroup as group:
                broker, bugs = group.split(aiomqtt.MqttError)
                if bugs is not None and not self.survive_bugs:
                    raise
                if bugs is not None:
                    self.lost(bugs.exceptions[0], bug=True)
                elif broker is not None:
                    self.lost(broker.exceptions[0])
            except Exception as exc:
                if not self.survive_bugs:
                    raise
                self.lost(exc, bug=True)  # a bug here must not take the monitor down
            finally:
                if on_down is not None:
                    on_down()


# -- topic names ----------------------------------------------------------------------------------
# The engine bus (docs/distributed.md): ``cfg`` is a [bus] section (prefix, share_group).


def requests_topic(cfg: Any, profile: str) -> str:
    """Where monitors publish requests for ``profile``: one topic per engine profile, so that a
    worker running another engine or limit never even receives them.

    >>> from livemon.config import BusConfig
    >>> requests_topic(BusConfig(), "Stockfish 15.1 depth=12 multipv=4")
    'livemon/bus/requests/Stockfish 15.1 depth=12 multipv=4'
    """
    return topic(cfg.prefix, "requests", profile)


def shared_requests_topic(cfg: Any, profile: str) -> str:
    """What a worker subscribes to: one request reaches one worker of the share group.

    >>> from livemon.config import BusConfig
    >>> shared_requests_topic(BusConfig(), "Stockfish 15.1 nodes=10000 multipv=4")
    '$share/livemon-workers/livemon/bus/requests/Stockfish 15.1 nodes=10000 multipv=4'
    """
    return f"$share/{cfg.share_group}/{requests_topic(cfg, profile)}"


def results_topic(cfg: Any, monitor_id: str) -> str:
    """Where workers answer one monitor (the MQTT v5 response topic of its requests)."""
    return f"{results_prefix(cfg)}{monitor_id}"


def results_prefix(cfg: Any) -> str:
    """The root every response topic must lie under (a worker refuses any other)."""
    return f"{cfg.prefix}/results/"


def workers_topic(cfg: Any, name: str = "+", worker_id: str | None = None) -> str:
    """A worker's retained announcement, ``<prefix>/workers/<name>/<worker id>``: under its name (its broker
    user, the only user the documented ACL lets write there), then the process (one user may run several);
    ``worker_id`` defaults to the name, and ``+`` is every worker's.

    >>> from livemon.config import BusConfig
    >>> workers_topic(BusConfig()), workers_topic(BusConfig(), "worker1", "box-41-9f2e")
    ('livemon/bus/workers/+/+', 'livemon/bus/workers/worker1/box-41-9f2e')
    """
    return f"{cfg.prefix}/workers/{name}/{worker_id or name}"


# MQTT out (docs/mqtt.md): ``cfg`` is an [mqtt_out] section (prefix, arbiter_prefix).


def online_topic(cfg: Any) -> str:
    """The retained ``online``/``offline`` (will) topic of a publisher."""
    return f"{cfg.prefix}/online"


def message_topic(cfg: Any, channel: str, levels: tuple[str, ...], arbiter: bool) -> str:
    """An outgoing message's topic: its channel and free-text levels under the prefix of its audience.

    >>> from livemon.config import MqttOutConfig
    >>> message_topic(MqttOutConfig(prefix="p"), "alerts", ("WCC", "Gukesh, D"), arbiter=True)
    'livemon-arbiter/default/alerts/WCC/Gukesh, D'
    """
    return topic(cfg.arbiter_prefix if arbiter else cfg.prefix, channel, *levels)
