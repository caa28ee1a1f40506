"""An engine worker: ``cfg.engine.processes`` local engines serving a monitor's requests over MQTT.

The worker is the embedded :class:`~livemon.io.pool.EnginePool` (crash and hang
recovery, in-flight dedup, its own SQLite cache at ``store.path``) behind the
bus protocol of :mod:`livemon.io.bus`. Load balancing is the broker's: requests
come from an MQTT v5 shared subscription, and the worker neither hoards nor
loses them —

- it connects with **Receive Maximum = its engine count**, and
- it **acknowledges a request only after its result is published** (manual
  acks; aiomqtt has no public API for them, so paho's ``manual_ack_set``/``ack``
  are used through ``client._client``),

so the broker never hands it more requests than it has engines, and a request
whose worker dies mid-search was never acknowledged (the monitor asks again).
A bad request (bad JSON or FEN, a response topic outside the bus, another
engine profile) is acknowledged and dropped with a log line.

A worker has a **name**: ``--name``, else its broker user (``bus.broker.username``, by default ``[broker] username``),
else ``<host name>-<pid>``. Results carry it and are published under it
(``<response topic>/<name>``), and so is its retained announcement
(``<prefix>/workers/<name>/<worker id>``, repeated every ``HEARTBEAT`` seconds), so a
broker ACL that lets each worker's user write only under its own name makes the
name trustworthy and its announcement its own to empty; the monitor records
it with every cached analysis, and :func:`forget_worker` (``livemon worker
--forget NAME``) drops a worker's analyses from a store.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import uuid
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livemon.io.bus import (
    AnalysisRequest,
    AnalysisResult,
    BusMessageError,
    HEARTBEAT,
    WorkerAnnouncement,
    client_for,
    excerpt,
)
from livemon.io.broker import BrokerLink, BrokerSettings, delivered, no_delay, results_prefix, shared_requests_topic, workers_topic
from livemon.config import Config
from livemon.io.engine import EngineError
from livemon.io.pool import EnginePool
from livemon.io.store import Store

log = logging.getLogger(__name__)


def check_worker_name(name: str) -> str:
    """``name`` if it can be one MQTT topic level and a store value, else ValueError saying why.

    >>> check_worker_name("box-3")
    'box-3'
    >>> check_worker_name("a/b")
    Traceback (most recent call last):
    ...
    ValueError: worker name 'a/b': no '/', '+', '#' or control characters, 1 to 64 characters
    """
    if not 1 <= len(name) <= 64 or any(c in name for c in "/+#") or any(ord(c) < 32 for c in name) \
            or name.startswith("$"):
        raise ValueError(f"worker name {name!r}: no '/', '+', '#' or control characters, 1 to 64 characters")
    return name


def worker_name(cfg: Config, name: str | None = None) -> str:
    """The worker's name: given, else its broker user, else ``<host name>-<pid>`` (no user: nothing to trust)."""
    return check_worker_name(name or BrokerSettings.of(cfg.bus).username or f"{socket.gethostname()}-{os.getpid()}")


def forget_worker(store: Store, name: str) -> int:
    """Drop every analysis ``name`` computed from ``store`` (the monitor's); how many were dropped."""
    n = len(store.analyses.forget_worker(name))
    log.info("store %s: forgot %d analyses computed by worker %s; they will be searched again", store.path, n, name)
    return n


class EngineWorker:
    """``await EngineWorker(cfg).run()``; :meth:`stop` finishes the requests in hand and leaves."""

    def __init__(self, cfg: Config, worker_id: str | None = None, name: str | None = None) -> None:
        self.cfg = cfg
        self.bus = cfg.bus
        self.name = worker_name(cfg, name)
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:4]}"
        self.store = Store(cfg.store.path)
        self.pool = EnginePool(cfg.engine, self.store.analyses, quick=False)
        self.announce_topic = workers_topic(self.bus, self.name, self.worker_id)
        self.results_prefix = results_prefix(self.bus)
        self.connected = asyncio.Event()
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self.answered = 0
        self.rejected = 0
        self.reannounced = 0
        self._announcement = ""
        self._last_reannounce = float("-inf")
        self._overwritten = 0
        """Messages seen on our announcement topic that were not our announcement (cleared or replaced)."""
        self._reannouncing = False
        """A re-announcement is pending: it restores whatever was seen before it publishes."""
        self.link = BrokerLink("worker", BrokerSettings.of(self.bus), self._client, stopping=self._stopping, logger=log)

    @property
    def connects(self) -> int:
        """Connections made so far."""
        return self.link.connects

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Start the engines, then serve until :meth:`stop`, reconnecting with back-off."""
        await self.pool.start()
        profile = self.pool.base_profile
        print(f"worker {self.worker_id} (name {self.name}): {self.cfg.engine.processes} engines, profile {profile.name}, "
              f"broker {self.link.settings.where}", flush=True)
        try:
            await self.link.run(self._session, on_down=self.connected.clear)
        finally:
            log.info("worker %s: answered %d, searched %d, rejected %d, connections %d", self.worker_id,
                     self.answered, self.pool.counters.searches, self.rejected, self.connects)
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.pool.close()
            self.store.close()

    def _client(self) -> aiomqtt.Client:
        # as many requests in hand per engine as the monitor keeps on the broker per engine: the next one
        # arrives while a result goes back (a worker answering from its cache in a round: ~45/s with one per
        # engine, ~52/s with 16)
        client = client_for(self.bus, self.worker_id, receive_maximum=self.cfg.engine.processes * self.bus.requests_per_engine,
                            will=aiomqtt.Will(self.announce_topic, b"", qos=1, retain=True))
        client._client.manual_ack_set(True)  # aiomqtt has no public API for manual acks
        return client

    async def _session(self, client: aiomqtt.Client) -> None:
        no_delay(client)
        p = self.pool.base_profile
        announcement = WorkerAnnouncement(self.worker_id, p.engine, p.depth, p.nodes, p.multipv,
                                          self.cfg.engine.processes, socket.gethostname(), self.name)
        self._announcement = announcement.to_json()
        await client.subscribe(shared_requests_topic(self.bus, self.pool.base_profile.name), qos=1)
        await client.publish(self.announce_topic, self._announcement, qos=1, retain=True)
        await client.subscribe(self.announce_topic, qos=1)  # someone else clearing or changing it: announced again
        self.connected.set()
        log.info("worker %s: taking requests from %s", self.worker_id, shared_requests_topic(self.bus, self.pool.base_profile.name))
        receiving = asyncio.create_task(self._take(client))
        beating = asyncio.create_task(self._heartbeat(client))
        stop = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait((receiving, stop), return_when=asyncio.FIRST_COMPLETED)
            if receiving.done():
                receiving.result()  # the connection went: the link logs it and connects again
                return
            # stopping: take no more, finish what is in hand, then leave
            receiving.cancel()
            beating.cancel()
            await asyncio.gather(receiving, beating, return_exceptions=True)
            await client.unsubscribe(shared_requests_topic(self.bus, self.pool.base_profile.name))
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await client.publish(self.announce_topic, b"", qos=1, retain=True)
        finally:
            stop.cancel()
            receiving.cancel()
            beating.cancel()

    async def _heartbeat(self, client: aiomqtt.Client) -> None:
        """Announce again every HEARTBEAT seconds: the monitor's sign of life, and the announcement restored
        whatever happened to the retained copy (the guard below needs to read the topic; this does not)."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            try:
                await client.publish(self.announce_topic, self._announcement, qos=1, retain=True)
            except aiomqtt.MqttError:
                return  # the connection went: the next session announces

    async def _take(self, client: aiomqtt.Client) -> None:
        """Serve every request the broker delivers, each in its own task; guard the announcement."""
        async for message in delivered(client):
            if message.topic.matches(self.announce_topic):
                self._ack(client, message)
                if not self._stopping.is_set():
                    self._spawn(self._guard_announcement(client, message.payload))
                continue
            self._spawn(self._serve(client, message))

    async def _guard_announcement(self, client: aiomqtt.Client, payload: Any) -> None:
        """Our retained announcement was cleared or replaced by another client (an empty retained message
        would stop the monitor sending us requests): announce again, at most once a second, one line.

        Overwrites seen while a re-announcement is pending are restored by it (one publish, not one each:
        a client clearing the topic every 50 ms would otherwise queue 20 publishes a second, each a second
        after the last, for as long again as it cleared); one seen while it publishes gets another."""
        raw = payload if isinstance(payload, (bytes, str)) else str(payload)
        if (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw) == self._announcement:
            return
        self._overwritten += 1
        if self._reannouncing:
            return
        self._reannouncing = True
        try:
            while not self._stopping.is_set():
                wait = self._last_reannounce + 1.0 - asyncio.get_running_loop().time()
                if wait > 0:
                    await asyncio.sleep(wait)
                    if self._stopping.is_set():
                        return  # leaving: the announcement is emptied anyway
                self._last_reannounce = asyncio.get_running_loop().time()
                seen = self._overwritten
                self.reannounced += 1
                if self.reannounced == 1 or self.reannounced % 100 == 0:
                    log.warning("worker %s: its announcement on %s was %s by another client (%d times); announced again",
                                self.worker_id, self.announce_topic, "cleared" if not raw else "replaced", self._overwritten)
                try:
                    await client.publish(self.announce_topic, self._announcement, qos=1, retain=True)
                except aiomqtt.MqttError:
                    return  # the connection went: the next session announces
                if self._overwritten == seen:
                    return
        finally:
            self._reannouncing = False

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, client: aiomqtt.Client, message: aiomqtt.Message) -> None:
        """Analyse one request, publish the result to its response topic, then acknowledge it."""
        payload = message.payload if isinstance(message.payload, (bytes, str)) else str(message.payload)
        props = message.properties
        reply_to = getattr(props, "ResponseTopic", None)
        correlation = getattr(props, "CorrelationData", None)
        try:
            request = AnalysisRequest.parse(payload)
            if not reply_to or not reply_to.startswith(self.results_prefix) or any(c in reply_to for c in "+#"):
                raise BusMessageError(f"response topic {reply_to!r} is not under {self.results_prefix}")
        except BusMessageError as exc:
            self.rejected += 1
            log.warning("worker: malformed request rejected: %s: %s", exc, excerpt(payload))
            self._ack(client, message)
            return
        profile = self.pool.base_profile
        if request.profile != profile.name:
            self.rejected += 1
            log.warning("worker: request for profile %r rejected: this worker runs %r", request.profile, profile.name)
            self._ack(client, message)
            return
        try:
            done = await self.pool.submit(request.board())
            result = AnalysisResult(done.key, done.profile.name, self.name, done.analysis, cached=done.cached,
                                    request=request.id)
        except EngineError as exc:
            result = AnalysisResult(request.key, profile.name, self.name, error=str(exc), request=request.id)
        out = Properties(PacketTypes.PUBLISH)
        if correlation is not None:
            out.CorrelationData = correlation
        try:
            await client.publish(f"{reply_to}/{self.name}", result.to_json(), qos=1, properties=out)
        except aiomqtt.MqttError as exc:  # the connection went: the request was not acked, it comes again
            log.info("worker: result for %s not published (%s); the monitor will ask again", request.key, exc)
            return
        self.answered += 1
        self._ack(client, message)

    @staticmethod
    def _ack(client: aiomqtt.Client, message: aiomqtt.Message) -> None:
        if message.qos > 0:
            client._client.ack(message.mid, message.qos)


async def serve(worker: EngineWorker) -> None:
    """Run ``worker`` until SIGINT or SIGTERM, which stop it cleanly (the searches in hand are answered)."""
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.stop)
    await worker.run()
