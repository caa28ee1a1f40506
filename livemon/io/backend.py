"""The engine-backend contract and the request queue its two implementations share.

A backend analyses positions under one pinned :class:`EngineProfile`: the
embedded :class:`livemon.io.pool.EnginePool` (UCI engines on this machine) or
the MQTT :class:`livemon.io.bus.RemoteEnginePool` (``livemon worker``
processes behind a broker). Both satisfy :class:`EngineBackend`, report an
:class:`EngineStatus`, and keep their requests in a :class:`RequestQueue`:

- **one analysis per position and profile** — the store's cache first (a hit
  costs no search), then in-flight dedup (a request for a position already
  wanted joins it);
- **newest first** — lower priority first; the default is ``-arrival``; a
  request for a queued position with a more urgent priority moves it up;
- **a backlog is a queue, never a lower limit** — every estimate request is
  searched under the pinned profile however long it waits (one profile per
  number: no estimate mixes limits); its wait is reported (``queue_lag_seconds``).

>>> async def one_request():
...     q = RequestQueue(None)
...     job = q.request(chess.Board(), EngineProfile("SF", 8, None, 2), None, now=0.0)
...     return q.waiting, q.pop() is job, q.waiting
>>> asyncio.run(one_request())
(1, True, 0)
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import chess

from livemon.io.engine import EngineError
from livemon.io.store.analyses import Analyses
from livemon.live.values import EngineProfile, PositionAnalysis, position_key


@dataclass(frozen=True)
class PooledAnalysis:
    """A backend's answer: the analysis, the profile that produced it, and where it came from."""

    key: str
    analysis: PositionAnalysis
    profile: EngineProfile
    cached: bool
    """True when it came from the store (no search was run for this request)."""


@dataclass(frozen=True)
class WorkerStatus:
    """One ``livemon worker`` as the bus sees it."""

    engines: int
    profile: str
    host: str


@dataclass(frozen=True)
class BusStatus:
    """The MQTT side of a :class:`~livemon.io.bus.RemoteEnginePool`."""

    monitor: str
    broker: str
    connected: bool
    connects: int
    workers: dict[str, WorkerStatus]
    published: int
    rerequests: int
    requeued: int
    rejected: int
    duplicates: int
    remote_cache_hits: int
    answers_by_worker: dict[str, int]
    spot_checks: dict[str, Any] | None = None
    """Re-searches of accepted results on this machine's engine (``bus.spot_check``), and alarms per worker."""
    quarantined: dict[str, str] = field(default_factory=dict)
    """Workers shut out (a spot check caught them lying), and why: their answers are refused."""


@dataclass(frozen=True)
class EngineStatus:
    """Counters and state of a backend, for ``livemon status`` and the status line.

    ``restarts`` is None for a remote pool (its engines restart inside the
    workers, out of its sight). ``quick_profile``/``previews``: the eval-bar
    previews searched under backlog (never an estimate).
    """

    engines: int
    engines_alive: int
    searching: int
    backlog: int
    queue_lag_seconds: float
    """How long the oldest waiting request has waited (0 when none waits)."""
    submitted: int
    searches: int
    """Searches at the pinned profile (previews are ``preview_searches``)."""
    cache_hits: int
    joined: int
    restarts: int | None
    retries: int
    failures: int
    profile: str | None
    """The pinned profile: every estimate request is searched under it."""
    base_profile: str | None
    depth: int | None
    nodes: int | None
    mean_search_s: float | None
    """Mean seconds of a search at the pinned profile (the previews' quicker ones left out)."""
    quick_profile: str | None = None
    previews: int = 0
    preview_searches: int = 0
    bus: BusStatus | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as stored for ``livemon status`` (``bus`` only for a remote pool)."""
        d = asdict(self)
        if self.bus is None:
            del d["bus"]
        return d


class EngineBackend(Protocol):
    """What the monitor needs from an engine backend (embedded pool or MQTT workers)."""

    @property
    def base_profile(self) -> EngineProfile:
        """The pinned profile (known once started)."""

    @property
    def previews(self) -> bool:
        """True when :meth:`preview` can give quick eval-bar evaluations."""

    @property
    def previewing(self) -> bool:
        """True now when :meth:`preview` would search (backlogged): callers skip it otherwise."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def submit(self, board: chess.Board, priority: float | None = None, key: str | None = None) -> PooledAnalysis:
        """The analysis of ``board``'s position under the pinned profile (cache, in flight, or searched); ``key``:
        its :func:`~livemon.live.values.position_key` when the caller has it."""

    async def preview(self, board: chess.Board) -> PooledAnalysis | None:
        """A quick evaluation for the eval bar when the backend is backlogged, else None."""

    def answer_now(self, board: chess.Board) -> PooledAnalysis | None:
        """The pinned profile's cached analysis of ``board``, at once, or None (then :meth:`submit`)."""

    def lookup(self, board: chess.Board, key: str | None = None) -> tuple[PositionAnalysis, str] | None:
        """:meth:`answer_now` as the live core's position cache (:data:`livemon.live.core.PositionCache`)."""

    def status(self) -> EngineStatus: ...

    def engine_pids(self) -> list[int]: ...


B = TypeVar("B", bound="PinnedBackend")


class PinnedBackend:
    """What the two backends share besides the queue: the pinned profile and the ``async with`` life cycle.

    A subclass sets ``_base`` (None until known) and ``not_ready`` (why it is not known yet), and
    implements :meth:`start` and :meth:`close`.

    >>> class Idle(PinnedBackend):
    ...     not_ready = "idle: no profile"
    ...     async def start(self) -> None: self._base = EngineProfile("SF", 8, None, 2)
    ...     async def close(self) -> None: self._base = None
    >>> async def use():
    ...     async with Idle() as b:
    ...         return b.profile is b.base_profile, b.base_profile.depth
    >>> asyncio.run(use())
    (True, 8)
    >>> Idle().base_profile
    Traceback (most recent call last):
    ...
    livemon.io.engine.EngineError: idle: no profile
    """

    not_ready: ClassVar[str] = "engine pool not started"
    """The EngineError's text while the profile is not known."""
    _base: EngineProfile | None = None

    async def start(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def __aenter__(self: B) -> B:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def base_profile(self) -> EngineProfile:
        """The pinned profile: every :meth:`submit` is searched under it (EngineError until it is known)."""
        if self._base is None:
            raise EngineError(self.not_ready)
        return self._base

    @property
    def profile(self) -> EngineProfile:
        """The profile estimate requests are searched under (always :attr:`base_profile`)."""
        return self.base_profile

    queue: RequestQueue[Any]

    def answer_now(self, board: chess.Board) -> PooledAnalysis | None:
        """The pinned profile's analysis of ``board`` when the cache has it and no search of it is in
        flight, else None (the caller then awaits :meth:`submit`). A burst of cached positions needs
        no task per position; ``board`` must need a search (the caller knows it is not terminal)."""
        if self._base is None:
            return None
        return self.queue.answer_now(board, self._base)

    def lookup(self, board: chess.Board, key: str | None = None) -> tuple[PositionAnalysis, str] | None:
        """The live core's position cache (:data:`livemon.live.core.PositionCache`, handed to
        :meth:`~livemon.live.core.LiveCore.configure`): :meth:`answer_now` as (analysis, profile name); ``key``:
        the position's :func:`~livemon.live.values.position_key` when the caller made it. A position being
        searched is a miss, so its request joins the search (no search repeated)."""
        base = self._base
        if base is None:
            return None
        found = self.queue.cached_now(position_key(board) if key is None else key, base)
        return None if found is None else (found, base.name)


@dataclass
class Job:
    """One position wanted under one profile; every request for it awaits the same future."""

    key: str
    board: chess.Board
    profile: EngineProfile
    priority: float
    future: asyncio.Future[PooledAnalysis]
    queued_at: float
    started: bool = False
    """Taken off the queue (searching, or published to the broker)."""
    waiters: int = 1


J = TypeVar("J", bound=Job)


@dataclass
class QueueCounters:
    submitted: int = 0
    cache_hits: int = 0
    joined: int = 0


class RequestQueue(Generic[J]):
    """Cache, in-flight dedup and a newest-first priority queue, keyed by (position, profile)."""

    def __init__(self, cache: Analyses | None, job_type: type[J] = Job) -> None:  # type: ignore[assignment]
        self.cache = cache
        self.job_type = job_type
        self.jobs: dict[tuple[str, str], J] = {}
        self._heap: list[tuple[float, int, J]] = []
        self._seq = itertools.count()
        self.waiting = 0
        self.counters = QueueCounters()

    def cached(self, key: str, profile: EngineProfile) -> PooledAnalysis | None:
        """The store's analysis of this position under exactly this profile."""
        if self.cache is None:
            return None
        found = self.cache.get(key, profile.name)
        return None if found is None else PooledAnalysis(key, found, profile, cached=True)

    def answer_now(self, board: chess.Board, profile: EngineProfile) -> PooledAnalysis | None:
        """The cached analysis of ``board`` under ``profile`` when no search of it is in flight, else None.

        What :meth:`request` would answer at once, without a future: a caller with a cache hit needs no
        task, so a burst of cached positions costs no loop turn each. Counted as a request when it hits; a miss counts
        nothing (the caller then makes the request).
        """
        key = position_key(board)
        found = self.cached_now(key, profile)
        return None if found is None else PooledAnalysis(key, found, profile, cached=True)

    def cached_now(self, key: str, profile: EngineProfile) -> PositionAnalysis | None:
        """:meth:`answer_now`'s analysis of the position ``key``, without its wrapper (the live core's lookup
        reads the analysis alone, once per position)."""
        cache, jobs = self.cache, self.jobs
        if cache is None or jobs and (key, profile.name) in jobs:  # no search in flight: a burst of cached positions
            return None
        found = cache.get(key, profile.name)
        if found is not None:
            self.counters.submitted += 1
            self.counters.cache_hits += 1
        return found

    def request(self, board: chess.Board, profile: EngineProfile, priority: float | None, now: float,
                use_cache: bool = True, key: str | None = None) -> J | PooledAnalysis:
        """A cached answer, or the job to await (an existing one joined, or a new one queued); ``key``: the
        position's :func:`~livemon.live.values.position_key` when the caller has it."""
        self.counters.submitted += 1
        key = position_key(board) if key is None else key
        seq = next(self._seq)
        prio = float(-seq) if priority is None else float(priority)
        job = self.jobs.get((key, profile.name))
        if job is not None:
            self.counters.joined += 1
            job.waiters += 1
            if not job.started and prio < job.priority:  # a more urgent request moves it up
                job.priority = prio
                heapq.heappush(self._heap, (prio, -seq, job))
            return job
        hit = self.cached(key, profile) if use_cache else None
        if hit is not None:
            self.counters.cache_hits += 1
            return hit
        future: asyncio.Future[PooledAnalysis] = asyncio.get_running_loop().create_future()
        job = self.job_type(key, board.copy(stack=False), profile, prio, future, now)
        self.jobs[(key, profile.name)] = job
        heapq.heappush(self._heap, (prio, -seq, job))
        self.waiting += 1
        return job

    def pop(self) -> J | None:
        """The most urgent waiting job (marked started), or None."""
        while self._heap:
            _, _, job = heapq.heappop(self._heap)
            if not job.started and self.jobs.get((job.key, job.profile.name)) is job:
                job.started = True
                self.waiting -= 1
                return job
        return None

    def peek(self) -> bool:
        """True when a job waits."""
        return self.waiting > 0

    def finish(self, job: J) -> None:
        """Forget ``job`` (answered or failed): the next request for its position starts afresh."""
        if self.jobs.get((job.key, job.profile.name)) is job:
            del self.jobs[(job.key, job.profile.name)]
            if not job.started:
                job.started = True
                self.waiting -= 1

    def oldest_wait(self, now: float) -> float:
        """Seconds the oldest waiting job has waited."""
        waits = [now - j.queued_at for j in self.jobs.values() if not j.started]
        return max(waits, default=0.0)

    def clear(self, exc: BaseException) -> None:
        """Fail every job (the backend is closing)."""
        for job in self.jobs.values():
            fail(job, exc)
        self.jobs.clear()
        self._heap.clear()
        self.waiting = 0


def fail(job: Job, exc: BaseException) -> None:
    """Fail ``job``'s requests unless it is already answered."""
    if not job.future.done():
        job.future.set_exception(exc)
        job.future.exception()  # retrieved: no "never retrieved" warning when nobody waits

