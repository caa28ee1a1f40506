"""The engine pool of the live monitor: N UCI engines, one analysis per position.

Why a pool and not a loop over one engine: live games arrive faster than one
engine searches, engines crash or hang, and the newest position is the one the
viewers are looking at. So:

- **one analysis per position** — :meth:`EnginePool.submit` looks in the
  shared SQLite cache first (a hit costs no search), and concurrent requests
  for a position already queued or being searched join that search (in-flight
  dedup on the position key);
- **newest first** — a priority queue, lower priority served first; the
  default priority is ``-arrival`` (the latest submitted position first); a
  caller may give its own (e.g. ``-move_time``);
- **failures are contained** — an engine that dies or whose search exceeds
  ``engine.timeout`` is killed, restarted, and the position retried up to
  ``engine.retries`` times; after that the request fails with
  :class:`EngineError` and an error log line, and the pool goes on;
- **adaptive limit** — when more than ``engine.backlog_high`` positions wait,
  each search started lowers the limit one step (depth − 2 down to
  ``engine.min_depth``, or nodes halved down to ``engine.min_nodes``); at or
  below ``engine.backlog_low`` each search raises it one step, and an idle
  engine (nothing waiting) restores the configured limit.

Honesty of evaluations: every result carries the :class:`EngineProfile`
actually searched, and is cached under that profile's name. A cache lookup
accepts the configured profile or a lowered one down to the *current* limit,
strongest first: never an evaluation weaker than the search the pool would run
now, so a calm pool (current = configured) only answers configured-profile
evaluations, and a busy one reuses what it would otherwise search again at a
lower limit. A request that joins a search in flight gets that search's profile.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from dataclasses import dataclass
from typing import Any

import chess

from livemon.live.analysis import needs_search
from livemon.config import EngineConfig
from livemon.io.engine import EngineError, EngineProfile, PositionAnalysis, UciEngine, position_key
from livemon.io.store import Store

log = logging.getLogger(__name__)

DEPTH_STEP = 2
"""Plies the depth drops per step of the adaptive limit."""


@dataclass(frozen=True)
class PooledAnalysis:
    """A pool's answer: the analysis, the profile that produced it, and where it came from."""

    key: str
    analysis: PositionAnalysis
    profile: EngineProfile
    cached: bool
    """True when it came from the store (no search was run for this request)."""


@dataclass
class _Job:
    """One position to search; every request for it awaits the same future."""

    key: str
    board: chess.Board
    priority: float
    future: asyncio.Future[PooledAnalysis]
    started: bool = False
    waiters: int = 1


@dataclass
class _Slot:
    """One engine process of the pool and its worker's state."""

    index: int
    engine: UciEngine | None = None
    job: _Job | None = None
    search_started: float = 0.0


@dataclass
class _Counters:
    searches: int = 0
    search_seconds: float = 0.0
    cache_hits: int = 0
    joined: int = 0
    restarts: int = 0
    retries: int = 0
    failures: int = 0
    submitted: int = 0
    limit_changes: int = 0


class EnginePool:
    """``cfg.processes`` UCI engines behind a priority queue with a shared cache.

    ``adaptive=False`` keeps the configured limit whatever the backlog (batch
    analysis wants one profile for everything).
    """

    def __init__(self, cfg: EngineConfig, store: Store | None = None, *, adaptive: bool = True):
        self.cfg = cfg
        self.store = store
        self.adaptive = adaptive
        self._slots = [_Slot(i) for i in range(cfg.processes)]
        self._heap: list[tuple[float, int, _Job]] = []
        self._seq = itertools.count()
        self._jobs: dict[str, _Job] = {}  # queued or searching, by position key
        self._waiting = 0  # jobs queued, not yet started (the backlog)
        self._wake = asyncio.Condition()
        self._workers: list[asyncio.Task[None]] = []
        self._closing = False
        self._base: EngineProfile | None = None
        self._level = 0
        self.counters = _Counters()

    # -- lifetime -------------------------------------------------------------

    async def start(self) -> None:
        """Open every engine (EngineError if none can start) and start the workers."""
        results = await asyncio.gather(*(UciEngine.open(self.cfg) for _ in self._slots), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        for slot, result in zip(self._slots, results):
            if isinstance(result, UciEngine):
                slot.engine = result
        opened = [s.engine for s in self._slots if s.engine]
        if not opened:
            raise EngineError(str(errors[0]) if errors else "no engine")
        for error in errors:
            log.warning("engine pool: an engine failed to start (will retry on demand): %s", error)
        self._base = opened[0].profile
        self._workers = [asyncio.create_task(self._work(s), name=f"engine-{s.index}") for s in self._slots]
        log.info("engine pool: %d engines, profile %s", len(opened), self._base.name)

    async def close(self) -> None:
        """Stop the workers, fail what is still queued, quit (or kill) every engine."""
        self._closing = True
        busy = [s for s in self._slots if s.job is not None]  # mid-search: killed, not asked to quit
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        for job in self._jobs.values():
            self._fail(job, EngineError("engine pool closed"))
        self._jobs.clear()
        self._heap.clear()
        self._waiting = 0
        await asyncio.gather(*(s.engine.kill() if s in busy else s.engine.close() for s in self._slots if s.engine))
        for slot in self._slots:
            slot.engine = None

    async def __aenter__(self) -> "EnginePool":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests -------------------------------------------------------------

    @property
    def base_profile(self) -> EngineProfile:
        """The configured profile (known once started)."""
        if self._base is None:
            raise EngineError("engine pool not started")
        return self._base

    @property
    def profile(self) -> EngineProfile:
        """The profile the next search will use (the adaptive limit applied)."""
        return self._profile_at(self._level)

    async def submit(self, board: chess.Board, priority: float | None = None) -> PooledAnalysis:
        """The analysis of ``board``'s position: from the cache, a search in flight, or a new search.

        ``priority``: lower is served first; default ``-arrival`` (newest first).
        A terminal position (mate, stalemate, draw by rule) is a ValueError: it
        is scored by rule (:func:`livemon.live.analysis.position_value`), not searched.
        Raises EngineError when the position failed after its retries or the pool closed.
        """
        if self._closing or not self._workers:
            raise EngineError("engine pool not running")
        if not needs_search(board):
            raise ValueError(f"position is scored by rule, not searched: {board.fen()}")
        self.counters.submitted += 1
        key = position_key(board)
        seq = next(self._seq)
        prio = float(-seq) if priority is None else float(priority)
        job = self._jobs.get(key)
        if job is not None:
            self.counters.joined += 1
            job.waiters += 1
            if not job.started and prio < job.priority:  # a more urgent request moves it up
                job.priority = prio
                heapq.heappush(self._heap, (prio, -seq, job))
                async with self._wake:
                    self._wake.notify()
            return await asyncio.shield(job.future)
        hit = self._cached(key)
        if hit is not None:
            self.counters.cache_hits += 1
            return hit
        job = _Job(key, board.copy(stack=False), prio, asyncio.get_running_loop().create_future())
        self._jobs[key] = job
        heapq.heappush(self._heap, (prio, -seq, job))
        self._waiting += 1
        async with self._wake:
            self._wake.notify()
        return await asyncio.shield(job.future)

    def _cached(self, key: str) -> PooledAnalysis | None:
        """A stored analysis under the configured profile or a lowered one down to the current limit."""
        if self.store is None:
            return None
        for level in range(self._level + 1):
            profile = self._profile_at(level)
            found = self.store.get_analysis(key, profile.name)
            if found is not None:
                return PooledAnalysis(key, found, profile, cached=True)
        return None

    # -- adaptive limit -------------------------------------------------------

    def _profile_at(self, level: int) -> EngineProfile:
        base = self.base_profile
        if level == 0:
            return base
        if base.nodes:
            return base.with_limit(nodes=max(min(self.cfg.min_nodes, base.nodes), base.nodes >> level))
        assert base.depth is not None
        return base.with_limit(depth=max(min(self.cfg.min_depth, base.depth), base.depth - DEPTH_STEP * level))

    def _max_level(self) -> int:
        level = 0
        while self._profile_at(level + 1) != self._profile_at(level):
            level += 1
        return level

    def _adjust_limit(self, idle: bool = False) -> None:
        """One step down above backlog_high, one up at or below backlog_low, fully up when idle.

        Idle means a worker found nothing to do: there is spare capacity, so the
        next position deserves the configured limit.
        """
        if not self.adaptive:
            return
        old = self._level
        if idle:
            self._level = 0
        elif self._waiting > self.cfg.backlog_high:
            self._level = min(self._level + 1, self._max_level())
        elif self._waiting <= self.cfg.backlog_low:
            self._level = max(self._level - 1, 0)
        if self._level != old:
            self.counters.limit_changes += 1
            log.info("engine pool: backlog %d, search limit now %s", self._waiting, self.profile.name)

    # -- workers --------------------------------------------------------------

    async def _next_job(self) -> _Job:
        async with self._wake:
            while True:
                while self._heap:
                    _, _, job = heapq.heappop(self._heap)
                    if not job.started:  # else a stale entry of a job that was moved up
                        job.started = True
                        self._waiting -= 1
                        return job
                self._adjust_limit(idle=True)
                await self._wake.wait()

    async def _work(self, slot: _Slot) -> None:
        while True:
            job = await self._next_job()
            slot.job = job
            try:
                await self._run(slot, job)
            finally:  # also on cancellation by close(): no request is left waiting forever
                self._fail(job, EngineError("engine pool closed"))
                slot.job = None
                if self._jobs.get(job.key) is job:
                    del self._jobs[job.key]

    @staticmethod
    def _fail(job: _Job, exc: EngineError) -> None:
        """Fail ``job``'s requests unless it is already answered."""
        if not job.future.done():
            job.future.set_exception(exc)
            job.future.exception()  # retrieved: no "never retrieved" warning when nobody waits

    async def _engine(self, slot: _Slot) -> UciEngine:
        """The slot's engine, (re)started if it is missing or has died."""
        if slot.engine is not None and not slot.engine.alive:
            log.warning("engine pool: engine %d (pid %d) is dead, restarting", slot.index, slot.engine.pid)
            await slot.engine.kill()
            slot.engine = None
        if slot.engine is None:
            slot.engine = await UciEngine.open(self.cfg)
            self.counters.restarts += 1
        return slot.engine

    async def _run(self, slot: _Slot, job: _Job) -> None:
        """Search ``job`` on the slot's engine, restarting and retrying on failure."""
        attempts = self.cfg.retries + 1
        for attempt in range(1, attempts + 1):
            self._adjust_limit()
            profile = self.profile
            try:
                engine = await self._engine(slot)
                slot.search_started = time.monotonic()
                analysis = await engine.analyse(job.board, profile)
            except EngineError as exc:
                log.warning("engine pool: engine %d failed (attempt %d/%d): %s", slot.index, attempt, attempts, exc)
                if slot.engine is not None:
                    await slot.engine.kill()
                    slot.engine = None
                if attempt < attempts:
                    self.counters.retries += 1
                    continue
                self.counters.failures += 1
                log.error("engine pool: gave up on %s after %d attempts: %s", job.key, attempts, exc)
                self._fail(job, EngineError(f"{job.key}: {exc}"))
                return
            self.counters.searches += 1
            self.counters.search_seconds += time.monotonic() - slot.search_started
            if self.store is not None:
                self.store.put_analysis(job.key, profile.name, analysis)
            job.future.set_result(PooledAnalysis(job.key, analysis, profile, cached=False))
            return

    # -- status ---------------------------------------------------------------

    def engine_pids(self) -> list[int]:
        """Process ids of the engines running now."""
        return [s.engine.pid for s in self._slots if s.engine is not None and s.engine.alive]

    def status(self) -> dict[str, Any]:
        """Counters and state for ``livemon status`` and the status line (JSON-ready)."""
        c = self.counters
        profile = self.profile if self._base is not None else None
        return {
            "engines": len(self._slots),
            "engines_alive": len(self.engine_pids()),
            "searching": sum(1 for s in self._slots if s.job is not None),
            "backlog": self._waiting,
            "submitted": c.submitted,
            "searches": c.searches,
            "cache_hits": c.cache_hits,
            "joined": c.joined,
            "restarts": c.restarts,
            "retries": c.retries,
            "failures": c.failures,
            "limit_level": self._level,
            "limit_changes": c.limit_changes,
            "profile": profile.name if profile else None,
            "base_profile": self._base.name if self._base else None,
            "depth": profile.depth if profile else None,
            "nodes": profile.nodes if profile else None,
            "mean_search_s": c.search_seconds / c.searches if c.searches else None,
        }
