"""The MQTT bus between a monitor and its engine workers (``[bus] mode = "mqtt"``, docs/distributed.md).

Why a broker and not a new protocol: users who outgrow one machine's cores add
machines running ``livemon worker``; mosquitto already does delivery,
reconnection, authentication, ACLs and TLS. The messages are the pool's own
(a position in, a :class:`PositionAnalysis` out), as JSON.

Topics, under ``bus.prefix``:

- ``<prefix>/requests/<profile>`` — a monitor publishes :class:`AnalysisRequest`
  (QoS 1, MQTT v5 *response topic* ``<prefix>/results/<monitor id>`` and
  *correlation data* = the position key). Workers subscribe to
  ``$share/<share_group>/<prefix>/requests/<their profile>``: each request goes
  to one worker, and only to a worker that runs the profile asked for.
- ``<prefix>/results/<monitor id>/<worker name>`` — a worker publishes :class:`AnalysisResult`
  under its name (the broker's ACL lets each worker's user write only its own name,
  docs/distributed.md); the name in the topic must match the result's ``worker``.
  The bare ``<prefix>/results/<monitor id>`` is still read (no name: no ACL to trust).
- ``<prefix>/workers/<worker name>/<worker id>`` — a worker's :class:`WorkerAnnouncement`,
  retained, repeated every :data:`HEARTBEAT` seconds; an empty retained payload (its
  clean exit, or its MQTT will when it dies) says it is going. The documented ACL
  lets only the worker's own broker user write under its name, and the monitor
  refuses an announcement whose ``name`` and ``worker`` are not its topic's. A
  worker counts while it announces or answers: an emptied announcement takes it
  out only after :data:`ALIVE` seconds without a sign of life, so no retained
  message alone decides whether a live worker is asked.

The monitor side is :class:`MonitorProtocol` (no I/O: what the broker delivers and the clock in,
the publishes to make out, tested without a broker) in :class:`RemoteEnginePool`, its aiomqtt shell and a drop-in for
:class:`livemon.io.pool.EnginePool` (same ``start/close/submit/status``, the same
SQLite cache and in-flight dedup, newest first). It keeps only
``requests_per_engine`` × (announced engines) requests on the broker and holds
the rest in its own priority queue, so the newest position is still searched
first and a worker is never handed a pile. Nothing is lost: a request that is
not answered within ``request_timeout``, or that was on the broker when it
restarted or on a worker that left, is published again; a repeated request is
cheap because a worker joins its search in flight or answers from its cache,
and a second answer is ignored. The monitor accepts results only under its
engine profile and only when they pass :func:`livemon.io.resultcheck.check_analysis`
against the position (scores in ±3900, legal and distinct candidates, the
profile's depth and MultiPV, integers SQLite can hold); anything else is
rejected with a log line. The store records which worker computed each cached
analysis, so a worker found lying can be forgotten (``livemon worker --forget``).

Trust: the profile is ``bus.profile`` or this machine's ``[engine]``, never an
announcement's unless ``bus.profile_from_workers``; each publish carries a
random ``id`` that its answer must carry back, once; with ``bus.workers`` only
those names are heard; a worker a spot check catches lying is quarantined
(:meth:`RemoteEnginePool.quarantine`); an error answer counts once per worker.

Every request is searched at the workers' configured limit, the one pinned
profile (the profile name says which); the bus runs no quick previews. The
queue (cache, in-flight dedup, newest first) is the embedded pool's own
:class:`~livemon.io.backend.RequestQueue`, and the status the same
:class:`~livemon.io.backend.EngineStatus`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import aiomqtt
import chess
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livemon.live.rules import needs_search
from livemon.config import BusConfig, EngineConfig
from livemon.io.engine import EngineError
from livemon.live.values import EngineProfile, PositionAnalysis, board_from_fen, position_key
from livemon.errors import FAULTS, InputError
from livemon.io.broker import (
    BrokerLink,
    BrokerSettings,
    delivered,
    handed,
    make_client,
    no_delay,
    requests_topic,
    results_topic,
    workers_topic,
)
from livemon.io.backend import BusStatus, EngineStatus, Job, PinnedBackend, PooledAnalysis, RequestQueue, WorkerStatus
from livemon.io.resultcheck import check_analysis
from livemon.io.spotcheck import SpotChecker
from livemon.io.store.analyses import Analyses

log = logging.getLogger(__name__)

MAX_PAYLOAD = 65536
"""Largest request or result accepted (a real one is a few hundred bytes)."""
WORKER_ERRORS = 3
"""Error answers for one position after which it fails (each worker already retried on restarted engines)."""
HEARTBEAT = 5.0
"""Seconds between a worker's announcements (retained, the same payload): a sign of life, and an emptied
announcement restored, even where the worker cannot read its own topic."""
ALIVE = 3 * HEARTBEAT
"""Seconds a worker whose announcement was emptied still counts after its last sign of life (an
announcement or an answer): a worker that left is asked nothing once it has passed, a live one is never
dropped for a message it did not send."""
_DUE = float("-inf")
"""``_Request.sent`` of a request to publish again at once (its copy on the broker may be gone)."""


class BusMessageError(InputError):
    """A malformed bus message; the text says what is wrong with it."""


# -- topics and connections: livemon.io.broker (re-exported here for the bus's users) ------------------


MAX_INFLIGHT = 1024
"""QoS 1 publishes of one bus client awaiting their PUBACK at once (the requests in flight are bounded by
``requests_per_engine`` × engines, a worker's results by its Receive Maximum)."""


def client_for(cfg: BusConfig, identifier: str, *, will: aiomqtt.Will | None = None,
               receive_maximum: int | None = None) -> aiomqtt.Client:
    """An MQTT v5 client for the bus (credentials, TLS, and the Receive Maximum a worker wants)."""
    return make_client(BrokerSettings.of(cfg), identifier, will=will, v5=True, receive_maximum=receive_maximum,
                       keepalive=15, timeout=10, max_inflight=MAX_INFLIGHT)


# -- messages: the bus's own schema (a request, an answer, a worker's announcement) ----------------------


class BusMessage:
    """Base of the bus's messages: a frozen dataclass written as JSON with its ``kind``; each class reads its
    own back with ``parse`` (checked field by field: input from the network)."""

    __slots__ = ()

    kind: ClassVar[str] = "bus"

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        d["kind"] = self.kind
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))



def _object(payload: bytes | str) -> dict[str, Any]:
    if len(payload) > MAX_PAYLOAD:
        raise BusMessageError(f"{len(payload)} bytes, more than {MAX_PAYLOAD}")
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BusMessageError(f"not JSON: {exc}") from None
    if not isinstance(d, dict):
        raise BusMessageError("expected a JSON object")
    return d


def _field(d: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = d.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BusMessageError(f"{key!r}: got {value!r}")
    return value


def excerpt(payload: bytes | str, n: int = 80) -> str:
    """The start of a payload for a log line."""
    text = payload.decode("utf-8", "replace") if isinstance(payload, (bytes, bytearray)) else str(payload)
    return repr(text[:n])


@dataclass(frozen=True)
class AnalysisRequest(BusMessage):
    """Analyse this position under this profile (the monitor's request to any worker).

    >>> r = AnalysisRequest("8/8/8/4k3/8/8/4K3/7R w - - 0 1", "Stockfish 15.1 depth=12 multipv=4")
    >>> AnalysisRequest.parse(r.to_json()) == r, r.key
    (True, '8/8/8/4k3/8/8/4K3/7R w - -')
    >>> AnalysisRequest.parse('{"fen": "8/8/8/8/8/8/8/8 w - - 0 1", "profile": "x"}')
    Traceback (most recent call last):
    ...
    livemon.io.bus.BusMessageError: 'fen': not a legal position: 8/8/8/8/8/8/8/8 w - - 0 1
    """

    kind: ClassVar[str] = "request"
    fen: str
    profile: str
    id: str = ""
    """A fresh random token per publish; the answer must carry it back (an answer to nothing asked is refused)."""

    @property
    def key(self) -> str:
        return position_key(self.board())

    def board(self) -> chess.Board:
        return board_from_fen(self.fen)

    @classmethod
    def parse(cls, payload: bytes | str) -> "AnalysisRequest":
        """The request in ``payload``, or BusMessageError (bad JSON, bad FEN, terminal position)."""
        d = _object(payload)
        fen, profile = _field(d, "fen", str), _field(d, "profile", str)
        rid = d.get("id", "")
        if not isinstance(rid, str) or len(rid) > 64:
            raise BusMessageError(f"'id': expected a string of at most 64 characters, got {str(rid)[:80]!r}")
        try:
            board = board_from_fen(fen)
        except ValueError as exc:
            raise BusMessageError(f"'fen': {exc}") from None
        if not board.is_valid():
            raise BusMessageError(f"'fen': not a legal position: {fen}")
        if not needs_search(board):
            raise BusMessageError(f"'fen': scored by rule, not searched: {fen}")
        return cls(fen, profile, rid)


@dataclass(frozen=True)
class AnalysisResult(BusMessage):
    """A worker's answer: the analysis (or the error after its retries) of one position.

    ``cached`` says the worker answered from its own cache without searching.
    """

    kind: ClassVar[str] = "analysis"  # not "result": that is a game's (livemon.live.messages.GameResult)
    key: str
    profile: str
    worker: str
    analysis: PositionAnalysis | None = None
    error: str | None = None
    cached: bool = False
    request: str = ""
    """The ``id`` of the request this answers."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "key": self.key, "profile": self.profile, "worker": self.worker,
                             "cached": self.cached, "request": self.request}
        if self.analysis is not None:
            d["analysis"] = json.loads(self.analysis.to_json())
        if self.error is not None:
            d["error"] = self.error
        return d

    @classmethod
    def parse(cls, payload: bytes | str) -> "AnalysisResult":
        """The result in ``payload``, or BusMessageError.

        >>> a = PositionAnalysis(31, (("e2e4", 31), ("d2d4", 25)), 12, 9000)
        >>> r = AnalysisResult("k", "p", "w1", a)
        >>> AnalysisResult.parse(r.to_json()) == r
        True
        >>> AnalysisResult.parse('{"key": "k", "profile": "p", "worker": "w1", "analysis": {"score": "high"}}')
        Traceback (most recent call last):
        ...
        livemon.io.bus.BusMessageError: 'analysis': expected score, candidates [[uci, cp], ...], depth, nodes: ...
        """
        d = _object(payload)
        key, profile, worker = _field(d, "key", str), _field(d, "profile", str), _field(d, "worker", str)
        request = d.get("request", "")
        if not isinstance(request, str):
            raise BusMessageError(f"'request': got {request!r}")
        error = d.get("error")
        if error is not None:
            return cls(key, profile, worker, None, str(error)[:500], request=request[:64])
        a = d.get("analysis")
        analysis = _analysis(a)
        if analysis is None:
            raise BusMessageError(f"'analysis': expected score, candidates [[uci, cp], ...], depth, nodes: {str(a)[:80]}")
        return cls(key, profile, worker, analysis, None, d.get("cached") is True, request[:64])


def _whole(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _analysis(a: Any) -> PositionAnalysis | None:
    """The analysis in a result's JSON, or None when it is malformed (checked, not asserted: input from the network).

    >>> _analysis({"score": 3, "candidates": [["e2e4", 3]], "depth": 9, "nodes": 100}).candidates
    (('e2e4', 3),)
    >>> [_analysis(x) for x in (None, {"score": 3, "candidates": [], "depth": 9, "nodes": 1},
    ...  {"score": 3, "candidates": [["e2e4", True]], "depth": 9, "nodes": 1},
    ...  {"score": 3.5, "candidates": [["e2e4", 3]], "depth": 9, "nodes": 1})]
    [None, None, None, None]
    """
    if not isinstance(a, dict) or not all(_whole(a.get(k)) for k in ("score", "depth", "nodes")):
        return None
    raw = a.get("candidates")
    if not isinstance(raw, list) or not raw:
        return None
    candidates = []
    for c in raw:
        if not (isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and _whole(c[1])):
            return None
        candidates.append((c[0], c[1]))
    mate = a.get("mate")  # the distance to mate, for display: absent or malformed -> None
    return PositionAnalysis(a["score"], tuple(candidates), a["depth"], a["nodes"], mate if _whole(mate) else None)


@dataclass(frozen=True)
class WorkerAnnouncement(BusMessage):
    """A worker's presence (retained): who, how many engines, and the engine profile it searches."""

    kind: ClassVar[str] = "worker"
    worker: str
    engine: str
    depth: int | None
    nodes: int | None
    multipv: int
    engines: int
    host: str = ""
    name: str = ""
    """The worker's name (its broker user): the one its answers carry; "" from older workers."""

    @property
    def profile(self) -> EngineProfile:
        return EngineProfile(self.engine, self.depth, self.nodes, self.multipv)

    @classmethod
    def parse(cls, payload: bytes | str) -> "WorkerAnnouncement":
        """The announcement in ``payload``, or BusMessageError.

        >>> w = WorkerAnnouncement("w1", "Stockfish 15.1", 12, None, 4, 2, "box")
        >>> WorkerAnnouncement.parse(w.to_json()) == w, w.profile.name
        (True, 'Stockfish 15.1 depth=12 multipv=4')
        """
        d = _object(payload)
        depth, nodes = d.get("depth"), d.get("nodes")
        if not (depth is None or isinstance(depth, int)) or not (nodes is None or isinstance(nodes, int)) or depth == nodes:
            raise BusMessageError(f"'depth'/'nodes': got {depth!r}/{nodes!r}")
        engines = _field(d, "engines", int)
        if engines < 1:
            raise BusMessageError(f"'engines': got {engines!r}")
        return cls(_field(d, "worker", str), _field(d, "engine", str), depth, nodes, _field(d, "multipv", int),
                   engines, str(d.get("host", ""))[:256], str(d.get("name", ""))[:64])


# -- the monitor side -----------------------------------------------------------------


@dataclass
class _Request(Job):
    """One position wanted by the monitor; every submit for it awaits the same future."""

    sent: float = 0.0
    """monotonic time of the last publish; 0 while it waits at the monitor."""
    first_sent: float = 0.0
    publishes: int = 0
    errors: int = 0
    """error answers so far (a worker whose engines failed on it)."""
    ids: list[str] = field(default_factory=list)
    """The ids of its publishes (the last few): an answer must carry one."""
    error_workers: set[str] = field(default_factory=set)
    """Workers that answered it with an error (each counts once: one worker's flood cannot fail it)."""


@dataclass
class _Worker:
    """A worker the monitor has heard of: its announcement and its last sign of life (clock seconds)."""

    announcement: WorkerAnnouncement
    seen: float
    cleared: float | None = None
    """When its retained announcement was emptied (None: announced); it still counts until ``seen + ALIVE``."""

    @property
    def name(self) -> str:
        return self.announcement.name or self.announcement.worker


@dataclass
class _Counters:
    searches: int = 0
    failures: int = 0
    published: int = 0
    rerequests: int = 0
    requeued: int = 0
    rejected: int = 0
    duplicates: int = 0
    remote_cache_hits: int = 0
    connects: int = 0
    round_trip_seconds: float = 0.0
    by_worker: dict[str, int] = field(default_factory=dict)
    refused_quarantined: int = 0


@dataclass(frozen=True)
class Publish:
    """A message the protocol wants sent (QoS 1): a request, with its MQTT v5 response topic and correlation data."""

    topic: str
    payload: str
    response_topic: str
    correlation: bytes


class MonitorProtocol:
    """The monitor's side of the bus without I/O: messages and time in, publishes out.

    :meth:`receive` takes what the broker delivers (a topic and its payload), :meth:`request` what the
    monitor wants analysed, :meth:`publishes` says what to send now (re-requests due and, up to the
    capacity, the most urgent positions waiting), :meth:`on_connect` that a new connection is up (its
    :attr:`subscriptions` made). Time is :attr:`clock`'s; answers resolve the futures of the queue's jobs.
    No socket, no task, no sleep: :class:`RemoteEnginePool` is its aiomqtt shell, and the tests drive it
    alone on an injected clock.
    """

    not_ready: ClassVar[str] = "engine profile not known yet (no worker announced one)"

    def __init__(self, cfg: BusConfig, cache: Analyses | None = None, monitor_id: str | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self.clock = clock
        """Seconds (monotonic): when answers are due and workers are still alive."""
        self.spot: SpotChecker | None = None
        """Offered every accepted answer (spot checks: ``bus.spot_check``), set by the shell."""
        self.cache = cache
        self.monitor_id = monitor_id or f"monitor-{uuid.uuid4().hex[:12]}"
        self.reply_topic = results_topic(cfg, self.monitor_id)
        try:
            self._base: EngineProfile | None = EngineProfile.parse(cfg.profile) if cfg.profile else None
        except ValueError as exc:
            raise EngineError(f"bus.profile: {exc}") from None
        self.quarantined: dict[str, str] = {}  # worker name -> why (a spot check caught it lying)
        self.on_quarantine: Callable[[str, str, list[str]], None] | None = None
        """Told (worker, why, the keys of the positions it answered) when a worker is quarantined: the monitor
        has the numbers built on them scored again (:meth:`livemon.live.core.LiveCore.forget`) and says so on
        the arbiters' status."""
        self._rejected_by: dict[str, int] = {}  # worker name -> results of it refused
        self._no_worker_logged = False
        self._workers: dict[str, _Worker] = {}  # "<name>/<worker id>" (its topic) -> what we know of it
        self.queue: RequestQueue[_Request] = RequestQueue(cache, _Request)  # wanted and not answered
        self._outstanding: dict[str, _Request] = {}  # published, not answered
        self.counters = _Counters()
        self._wakeup: Callable[[], None] = lambda: None
        """Called when there may be something to publish (a request, an answer, a worker)."""
        self._on_profile: Callable[[], None] = lambda: None
        """Called when the engine profile becomes known (from an announcement, ``bus.profile_from_workers``)."""

    @property
    def base_profile(self) -> EngineProfile:
        """The pinned profile (EngineError until it is known)."""
        if self._base is None:
            raise EngineError(self.not_ready)
        return self._base

    @property
    def subscriptions(self) -> list[str]:
        """What a connection subscribes to: the results (bare, and under each worker's name) and the announcements."""
        return [self.reply_topic, f"{self.reply_topic}/+", workers_topic(self.cfg)]

    def on_connect(self) -> None:
        """A connection is up and subscribed: the retained announcements arrive again, and every request in
        flight is asked again (what was on the broker or on a worker before may be gone)."""
        self.counters.connects += 1
        self._workers.clear()
        self._requeue_outstanding("reconnected")

    def request(self, board: chess.Board, priority: float | None = None, key: str | None = None
                ) -> PooledAnalysis | _Request:
        """The cached analysis of ``board``, or the job whose future its answer resolves (new or in flight); ``key``:
        the position's :func:`~livemon.live.values.position_key` when the caller has it."""
        answer = self.queue.request(board, self.base_profile, priority, self.clock(), key=key)
        if not isinstance(answer, PooledAnalysis):
            self._wakeup()
        return answer

    def receive(self, topic: str, payload: bytes | str) -> None:
        """A message the broker delivered on one of :attr:`subscriptions`."""
        workers = f"{self.cfg.prefix}/workers/"
        if topic.startswith(workers):
            levels = topic[len(workers):].split("/")
            if len(levels) == 2:
                self._on_announcement(levels[0], levels[1], payload)
        elif topic == self.reply_topic:
            self._on_result(payload)
        elif topic.startswith(f"{self.reply_topic}/") and "/" not in topic[len(self.reply_topic) + 1:]:
            self._on_result(payload, topic[len(self.reply_topic) + 1:])

    def publishes(self) -> list[Publish]:
        """What to publish now: the requests due again (no answer after ``request_timeout``, or asked again
        at once) and, up to the capacity, the most urgent positions waiting. Nothing while no worker counts:
        the broker would drop a request nobody is subscribed to."""
        now = self.clock()
        self._expire(now)
        if not self.capacity:
            return []
        due: list[_Request] = []
        for job in list(self._outstanding.values()):
            if now - job.sent >= self.cfg.request_timeout and self._outstanding.get(job.key) is job:
                if job.sent != _DUE:
                    self.counters.rerequests += 1
                    log.warning("bus: no answer for %s after %g s; requesting it again", job.key,
                                self.cfg.request_timeout)
                due.append(job)
        while len(self._outstanding) < self.capacity:
            waiting = self.queue.pop()
            if waiting is None:
                break
            self._outstanding[waiting.key] = waiting
            due.append(waiting)
        return [self._publish(job, now) for job in due]

    def _publish(self, job: _Request, now: float) -> Publish:
        """A publish of ``job``'s request, with a fresh id its answer must carry back."""
        rid = uuid.uuid4().hex
        job.ids = [*job.ids[-7:], rid]
        request = AnalysisRequest(job.board.fen(), self.base_profile.name, rid)
        job.sent = now
        job.first_sent = job.first_sent or job.sent  # the round trip counts from the first publish
        job.publishes += 1
        self.counters.published += 1
        return Publish(requests_topic(self.cfg, request.profile), request.to_json(), self.reply_topic, job.key.encode())

    @property
    def capacity(self) -> int:
        """Requests kept on the broker: requests_per_engine × the engines of workers on our profile."""
        return self.cfg.requests_per_engine * sum(w.announcement.engines for w in self._counted())

    def _counted(self) -> list[_Worker]:
        """The workers asked now: serving our profile, and announced or heard from within ALIVE seconds."""
        now = self.clock()
        return [w for w in self._workers.values()
                if self._serves(w.announcement) and (w.cleared is None or now - w.seen < ALIVE)]

    def _serves(self, w: WorkerAnnouncement) -> bool:
        """Does the worker of this announcement count (our profile, not quarantined, trusted if bus.workers)?"""
        name = w.name or w.worker
        return (w.profile == self._base and name not in self.quarantined
                and (self.cfg.workers is None or name in self.cfg.workers))

    @property
    def waiting(self) -> int:
        """Requests held at the monitor, not yet published (the backlog)."""
        return self.queue.waiting

    def _requeue_outstanding(self, why: str) -> None:
        """Publish every request in flight again at the next send (a worker or the broker lost them)."""
        if self._outstanding:
            log.info("bus: %s; requesting %d positions in flight again", why, len(self._outstanding))
            self.counters.requeued += len(self._outstanding)
            for job in self._outstanding.values():
                job.sent = _DUE
            self._wakeup()

    def _on_announcement(self, name: str, worker_id: str, payload: bytes | str) -> None:
        """The retained message of topic ``<prefix>/workers/<name>/<worker_id>``: an announcement, or empty."""
        key, now = f"{name}/{worker_id}", self.clock()
        if not payload:  # emptied: the worker left (its will, or its clean exit), or someone cleared it
            known = self._workers.get(key)
            if known is not None and known.cleared is None:
                known.cleared = now
                log.info("bus: worker %s emptied its announcement (%d engines): it counts until %g s pass without "
                         "a word from it", key, known.announcement.engines, ALIVE)
                self._requeue_outstanding(f"worker {key} going")
            return
        try:
            w = WorkerAnnouncement.parse(payload)
            if (w.name or w.worker) != name or w.worker != worker_id:
                raise BusMessageError(f"it names worker {w.name or w.worker!r} ({w.worker!r}) but came on the "
                                      f"topic of {name!r} ({worker_id!r})")
        except BusMessageError as exc:
            self._refused(f"announcement {key}",
                          f"bus: worker announcement on {key} rejected: {exc}: {excerpt(payload)}")
            return
        if self._base is None:
            self._base = w.profile
            self._on_profile()
            log.info("bus: engine profile %s, announced by worker %s", w.profile.name, key)
        known = self._workers.get(key)
        if w.profile != self._base:
            if known is None or known.announcement != w:
                log.warning("bus: worker %s runs profile %r, this monitor uses %r: it gets no requests from here",
                            key, w.profile.name, self._base.name)
        elif known is None:
            log.info("bus: worker %s on %s joined with %d engines", key, w.host or "?", w.engines)
            self._no_worker_logged = False
        elif known.cleared is not None:
            log.info("bus: worker %s announced itself again", key)
        self._workers[key] = _Worker(w, now)
        self._wakeup()

    def _alive(self, name: str) -> None:
        """An answer from worker ``name`` (trusted by the ACL: its topic): it is alive, whatever its announcement says."""
        now = self.clock()
        for key, w in self._workers.items():
            if w.name == name:
                if w.cleared is not None and now - w.seen >= ALIVE:
                    log.info("bus: worker %s answers again: asked again", key)
                w.seen = now

    def _expire(self, now: float) -> None:
        """Forget the workers emptied and silent for ALIVE seconds (one line each)."""
        for key, w in list(self._workers.items()):
            if w.cleared is not None and now - w.seen >= ALIVE:
                del self._workers[key]
                log.info("bus: worker %s left (%d engines)", key, w.announcement.engines)
                if not self.capacity and not self._no_worker_logged:
                    self._no_worker_logged = True
                    log.warning("bus: no worker left on profile %s: requests wait at the monitor until one announces "
                                "itself", self._base.name if self._base else "?")

    def _reject(self, what: str, result: AnalysisResult, why: str) -> None:
        self._refused(result.worker, f"bus: {what} for {result.key} from worker {result.worker} rejected: {why}")

    def _refused(self, sender: str, line: str) -> None:
        """Count and log a refused message: the first 5 from a sender (a worker's name, or its topic) one by
        one, then every 100th (a flood from one worker must not flood the log; ``livemon status`` counts all)."""
        self.counters.rejected += 1
        FAULTS.count("bus.rejected")
        if len(self._rejected_by) > 10000:  # names chosen by senders: bounded
            self._rejected_by.clear()
        n = self._rejected_by.get(sender, 0) + 1
        self._rejected_by[sender] = n
        if n <= 5 or n % 100 == 0:
            log.warning("%s%s", line, f" ({n} rejected from {sender})" if n > 5 else "")

    def _on_result(self, payload: bytes | str, named: str | None = None) -> None:
        """A result; ``named`` is the worker name of its topic (``None``: the bare reply topic)."""
        try:
            result = AnalysisResult.parse(payload)
        except BusMessageError as exc:
            self._refused(named or "?", f"bus: malformed result rejected: {exc}: {excerpt(payload)}")
            return
        if self._base is None or result.profile != self._base.name:
            self._reject("result", result, f"profile {result.profile!r}, this monitor uses "
                                           f"{self._base.name if self._base else None!r}")
            return
        if named is not None and result.worker != named:
            self._reject("result", result, f"it names worker {result.worker!r} but came on the topic of {named!r}")
            return
        if self.cfg.workers is not None and (named is None or named not in self.cfg.workers):
            self._reject("result", result, "not from a worker of bus.workers" + ("" if named else " (no name in its topic)"))
            return
        if result.worker in self.quarantined:
            self.counters.refused_quarantined += 1
            FAULTS.count("bus.refused_quarantined")
            log.debug("bus: result for %s from quarantined worker %s refused", result.key, result.worker)
            job = self.queue.jobs.get((result.key, result.profile))
            if job is not None and result.request in job.ids:  # it took our request: ask the others at once
                job.ids.remove(result.request)
                job.sent = _DUE
                self._wakeup()
            return
        job = self.queue.jobs.get((result.key, result.profile))
        if job is None:
            self.counters.duplicates += 1  # answered already (a request published twice)
            log.debug("bus: late or repeated result for %s from %s ignored", result.key, result.worker)
            return
        if result.analysis is not None:
            problem = check_analysis(result.analysis, job.board, self.base_profile)
            if problem is not None:
                self._reject("result", result, problem)
                return
        elif job.key not in self._outstanding:
            self._reject("error result", result, "not requested yet")
            return
        if result.request not in job.ids:
            self._reject("error result" if result.analysis is None else "result", result,
                         "it answers no request of this monitor (unknown or already answered request id)")
            return
        job.ids.remove(result.request)  # one answer per publish
        self._alive(result.worker)
        if result.analysis is None:
            job.errors += 1
            FAULTS.count("bus.error_answers")
            first_from_it = result.worker not in job.error_workers
            job.error_workers.add(result.worker)
            # One worker's errors count once: a worker that answers errors (broken or hostile) cannot fail a
            # position another worker can search. It fails after WORKER_ERRORS error answers from
            # WORKER_ERRORS workers, or from every worker there is.
            workers_now = max(1, len({w.name for w in self._counted()}))
            if len(job.error_workers) < min(WORKER_ERRORS, workers_now) or job.errors < WORKER_ERRORS:
                # asked again at once (each error answers one publish: no loop faster than the answers);
                # a line for the first error of each worker on it
                if first_from_it:
                    log.warning("bus: worker %s could not analyse %s (%s); requesting it again", result.worker,
                                result.key, result.error)
                job.sent = _DUE
                self._wakeup()
                return
        self.queue.finish(job)
        self._outstanding.pop(job.key, None)
        self._wakeup()
        if job.future.done():
            return
        if result.analysis is None:
            self.counters.failures += 1
            log.error("bus: gave up on %s after %d error answers; the last from worker %s: %s", result.key,
                      WORKER_ERRORS, result.worker, result.error)
            job.future.set_exception(EngineError(f"{result.key}: worker {result.worker}: {result.error}"))
            job.future.exception()
            return
        if result.cached:
            self.counters.remote_cache_hits += 1
        else:
            self.counters.searches += 1
        self.counters.by_worker[result.worker] = self.counters.by_worker.get(result.worker, 0) + 1
        self.counters.round_trip_seconds += self.clock() - job.first_sent
        if self.cache is not None:
            self.cache.put(job.key, result.profile, result.analysis, worker=result.worker)
        if self.spot is not None:
            self.spot.offer(job.board, result.analysis, result.worker)
        job.future.set_result(PooledAnalysis(job.key, result.analysis, self.base_profile, cached=False))

    def quarantine(self, worker: str, why: str, caught: str | None = None) -> None:
        """Shut ``worker`` out: its answers are refused from now on, the analyses it gave are dropped from
        the cache and searched again by the others; one ERROR line, and ``livemon status`` lists it.
        ``caught``: the key of the position it was caught on (its lie there already replaced in the cache, yet
        used). :attr:`on_quarantine` is then told every position it answered, so the numbers built on them
        are scored again with the new answers."""
        if worker in self.quarantined:
            return
        self.quarantined[worker] = why
        FAULTS.count("bus.quarantined")
        keys: list[str] = []
        if self.cache is not None:  # its answers still held count: they are in the table before they are dropped
            keys = [position for position, profile in self.cache.forget_worker(worker)
                    if profile == self.base_profile.name]
        answered = [*keys, *((caught,) if caught is not None and caught not in keys else ())]
        log.error("bus: worker %s QUARANTINED (%s): its answers are refused from now on, and the %d analyses it "
                  "gave are searched again by the others; revoke its broker user", worker, why, len(keys))
        now = self.clock()
        for key in keys:
            try:
                board = board_from_fen(f"{key} 0 1")
            except ValueError:
                continue
            answer = self.queue.request(board, self.base_profile, None, now)
            if not isinstance(answer, PooledAnalysis):
                answer.future.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._wakeup()
        if self.on_quarantine is not None:
            self.on_quarantine(worker, why, answered)


class RemoteEnginePool(MonitorProtocol, PinnedBackend):
    """The engine pool of a monitor whose engines are ``livemon worker`` processes behind a broker: the aiomqtt
    shell of :class:`MonitorProtocol` (a connection kept up, what it receives handed to the protocol, what
    the protocol publishes handed to paho).

    Same interface as :class:`livemon.io.pool.EnginePool` as the monitor uses it;
    see the module docstring for the protocol.
    """

    def __init__(self, cfg: BusConfig, cache: Analyses | None = None, monitor_id: str | None = None,
                 engine: EngineConfig | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__(cfg, cache, monitor_id, clock)
        self.engine_cfg = engine  # for spot checks (bus.spot_check > 0): this machine's engine
        self._profile_known = asyncio.Event()
        self._wake = asyncio.Event()
        self._wakeup = self._wake.set
        self._on_profile = self._profile_known.set
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.connected = asyncio.Event()
        self._stop_link = asyncio.Event()
        self.link = BrokerLink("bus", BrokerSettings.of(cfg), lambda: client_for(cfg, self.monitor_id), survive_bugs=True,
                               logger=log, stopping=self._stop_link)

    # -- lifetime -------------------------------------------------------------

    async def start(self) -> None:
        """Connect (retrying in the background) and wait until the engine profile is known."""
        self._closing = False
        self._stop_link.clear()
        if self._base is None and not self.cfg.profile_from_workers:
            self._base = await self._local_profile()
        if self._base is not None:
            self._on_profile()
        self._task = asyncio.create_task(self._connection(), name="bus")
        while not self._profile_known.is_set():
            try:
                async with asyncio.timeout(10):  # not wait_for: on 3.11 it may swallow a cancellation (see _send)
                    await self._profile_known.wait()
            except TimeoutError:
                log.warning("bus: waiting for a worker to announce its engine profile on %s (broker %s:%d)",
                            workers_topic(self.cfg), self.link.settings.host, self.link.settings.port)
        log.info("bus: monitor %s, profile %s, results on %s", self.monitor_id, self.base_profile.name, self.reply_topic)
        if self.cfg.spot_check > 0 and self.engine_cfg is not None and self.spot is None:
            spot = SpotChecker(self.engine_cfg, self.cfg.spot_check, self.base_profile.name, self.cache,
                               on_alarm=self.quarantine)
            if await spot.start():
                self.spot = spot

    async def _local_profile(self) -> EngineProfile:
        """The profile of this machine's [engine] (started once to read its name): the profile when
        ``bus.profile`` is empty, so that no announcement can choose it."""
        from livemon.io.engine import UciEngine

        if self.engine_cfg is None:
            raise EngineError("bus.profile: not set, and no [engine] to take it from: set bus.profile "
                              "(e.g. \"Stockfish 15.1 depth=12 multipv=4\") or bus.profile_from_workers = true")
        try:
            engine = await UciEngine.open(self.engine_cfg)
        except EngineError as exc:
            raise EngineError(f"bus.profile: not set, and this machine's [engine] cannot give it ({exc}): set "
                              "bus.profile (e.g. \"Stockfish 15.1 depth=12 multipv=4\")") from None
        profile = engine.profile
        await engine.close()
        log.info("bus: engine profile %s, from this machine's [engine] (bus.profile is empty)", profile.name)
        return profile

    async def close(self) -> None:
        """Disconnect and fail what is still wanted (the monitor is stopping).

        The link is told to stop as well as cancelled: on Python 3.11 a task group whose child fails
        while the group is being cancelled raises the child's error, not CancelledError, and the link
        would take that for a broker failure and reconnect.
        """
        self._closing = True
        self._stop_link.set()
        if self.spot is not None:
            await self.spot.close()
            self.spot = None
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.queue.clear(EngineError("engine pool closed"))
        self._outstanding.clear()

    # -- requests (base_profile, profile and ``async with``: PinnedBackend) ---

    async def submit(self, board: chess.Board, priority: float | None = None, key: str | None = None) -> PooledAnalysis:
        """The analysis of ``board``'s position: from the cache, a request in flight, or a new request.

        Same contract as :meth:`livemon.io.pool.EnginePool.submit` (lower priority first,
        default newest first; ValueError for a terminal position).
        """
        if self._closing or self._task is None:
            raise EngineError("engine pool not running")
        if not needs_search(board):
            raise ValueError(f"position is scored by rule, not searched: {board.fen()}")
        answer = self.request(board, priority, key)
        if isinstance(answer, PooledAnalysis):
            return answer
        return await asyncio.shield(answer.future)

    @property
    def previews(self) -> bool:
        """No quick previews over the bus: the workers search the one pinned profile."""
        return False

    @property
    def previewing(self) -> bool:
        return False

    async def preview(self, board: chess.Board) -> PooledAnalysis | None:
        """None: the bus runs no quick searches (the eval bar waits for the pinned profile)."""
        return None

    # -- the connection -------------------------------------------------------

    async def _connection(self) -> None:
        """Keep the broker connection up (livemon.io.broker: logged, retried with back-off to max_backoff)."""
        await self.link.run(self._session, on_down=self.connected.clear)

    async def _session(self, client: aiomqtt.Client) -> None:
        no_delay(client)
        for topic in self.subscriptions:
            await client.subscribe(topic, qos=1)
        self.connected.set()
        log.info("bus: monitor %s subscribed to %s", self.monitor_id, self.reply_topic)
        self.on_connect()
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._receive(client))
            tg.create_task(self._send(client))

    async def _receive(self, client: aiomqtt.Client) -> None:
        """Handle what the broker delivers (:func:`~livemon.io.broker.delivered`: every result already
        queued at each wake-up, the event loop running again every ``RECEIVE_SLICE`` seconds)."""
        async for message in delivered(client):
            payload = message.payload if isinstance(message.payload, (bytes, str)) else str(message.payload)
            self.receive(str(message.topic), payload)

    async def _send(self, client: aiomqtt.Client) -> None:
        """Publish due re-requests and, up to the capacity, the most urgent waiting positions.

        The wait for work is ``asyncio.timeout``, not ``asyncio.wait_for``: on Python 3.11 a
        ``wait_for`` cancelled in the loop turn its awaitable finishes returns that result and the
        cancellation is lost. ``_wake`` is set by every request and answer, so under load that was
        the usual case at a stop: this loop went on for ever and ``close()`` (SIGTERM) never returned.
        """
        while not self._closing:
            with_timeout = min(1.0, self.cfg.request_timeout / 4)
            try:
                async with asyncio.timeout(with_timeout):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            # handed to paho in one turn, no PUBACK awaited (:func:`~livemon.io.broker.handed`); when the
            # connection has gone it raises: the link reconnects and asks again for every position in flight
            for out in self.publishes():
                props = Properties(PacketTypes.PUBLISH)
                props.ResponseTopic = out.response_topic
                props.CorrelationData = out.correlation
                handed(client, out.topic, out.payload, qos=1, properties=props)

    # -- status ---------------------------------------------------------------

    def engine_pids(self) -> list[int]:
        """No local engine processes: they run in the workers."""
        return []

    def status(self) -> EngineStatus:
        """The backend status, with ``bus`` (workers, re-requests, rejected messages); ``restarts`` None:
        engines restart inside the workers, out of the monitor's sight."""
        c, q = self.counters, self.queue.counters
        profile = self._base
        engines = sum(w.announcement.engines for w in self._counted())
        answered = sum(c.by_worker.values())
        return EngineStatus(
            engines=engines,
            engines_alive=engines,
            searching=len(self._outstanding),
            backlog=self.waiting,
            queue_lag_seconds=self.queue.oldest_wait(self.clock()),
            submitted=q.submitted,
            searches=c.searches,
            cache_hits=q.cache_hits,
            joined=q.joined,
            restarts=None,
            retries=c.rerequests,
            failures=c.failures,
            profile=profile.name if profile else None,
            base_profile=profile.name if profile else None,
            depth=profile.depth if profile else None,
            nodes=profile.nodes if profile else None,
            mean_search_s=c.round_trip_seconds / answered if answered else None,
            bus=BusStatus(
                monitor=self.monitor_id,
                broker=self.link.settings.where,
                connected=self.connected.is_set(),
                connects=c.connects,
                workers={k: WorkerStatus(w.announcement.engines, w.announcement.profile.name, w.announcement.host)
                         for k, w in sorted(self._workers.items())},
                published=c.published,
                rerequests=c.rerequests,
                requeued=c.requeued,
                rejected=c.rejected,
                duplicates=c.duplicates,
                remote_cache_hits=c.remote_cache_hits,
                answers_by_worker=dict(sorted(c.by_worker.items())),
                spot_checks=None if self.spot is None else {**vars(self.spot.counters),
                                                            "alarms_by_worker": dict(self.spot.alarmed)},
                quarantined=dict(self.quarantined),
            ),
        )

