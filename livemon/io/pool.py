"""The embedded engine backend of the live monitor: N UCI engines, one analysis per position.

Why a pool and not a loop over one engine: live games arrive faster than one
engine searches, engines crash or hang, and the newest position is the one the
viewers are looking at. So:

- **one analysis per position** — :meth:`EnginePool.submit` looks in the
  shared SQLite cache first (a hit costs no search), and concurrent requests
  for a position already queued or being searched join that search (in-flight
  dedup on the position key); the queue is :class:`~livemon.io.backend.RequestQueue`,
  shared with the MQTT backend;
- **newest first** — a priority queue, lower priority served first; the
  default priority is ``-arrival`` (the latest submitted position first); a
  caller may give its own (e.g. ``-move_time``);
- **failures are contained** — an engine that dies or whose search exceeds
  ``engine.timeout`` is killed, restarted, and the position retried up to
  ``engine.retries`` times; after that the request fails with
  :class:`EngineError` and an error log line, and the pool goes on;
- **one profile per number** — every :meth:`~EnginePool.submit` is searched
  under the pinned (configured) profile, however long the backlog: a backlog
  queues and its lag is reported (``queue_lag_seconds``), it never lowers the
  limit of an estimate. While more than ``engine.backlog_high`` positions wait
  (until the backlog is down to ``engine.backlog_low``), :meth:`~EnginePool.preview`
  searches a game's newest position at the quick limit (``engine.min_depth``
  or ``engine.min_nodes``) ahead of the queue, for the eval bar only: those
  analyses are cached under the quick profile's own name and never answer
  :meth:`~EnginePool.submit`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import chess

from livemon.config import EngineConfig
from livemon.io.backend import EngineBackend, EngineStatus, Job, PinnedBackend, PooledAnalysis, RequestQueue, fail
from livemon.io.engine import EngineError, UciEngine
from livemon.io.store.analyses import Analyses
from livemon.live.rules import needs_search
from livemon.live.values import EngineProfile

__all__ = ["EngineBackend", "EnginePool", "PooledAnalysis"]

log = logging.getLogger(__name__)

PREVIEW_PRIORITY = float("-inf")
"""Previews go ahead of every estimate request (newest preview first among them)."""


@dataclass
class _Slot:
    """One engine process of the pool and its worker's state."""

    index: int
    engine: UciEngine | None = None
    job: Job | None = None
    search_started: float = 0.0


@dataclass
class _Counters:
    searches: int = 0
    """Searches at the pinned profile (the figures' own; the rate ``livemon status`` measures)."""
    search_seconds: float = 0.0
    restarts: int = 0
    retries: int = 0
    failures: int = 0
    previews: int = 0
    """Eval-bar previews asked for while backlogged (answered from a cache or searched)."""
    preview_searches: int = 0
    """Previews searched at the quick limit (never counted in ``searches``)."""


class EnginePool(PinnedBackend):
    """``cfg.processes`` UCI engines behind a priority queue with a shared cache.

    ``quick=False`` never runs previews (batch analysis and workers want one
    profile for everything and no eval bar).
    """

    def __init__(self, cfg: EngineConfig, cache: Analyses | None = None, *, quick: bool = True):
        self.cfg = cfg
        self.cache = cache
        self.quick = quick
        self._slots = [_Slot(i) for i in range(cfg.processes)]
        self.queue: RequestQueue[Job] = RequestQueue(cache)
        self._wake = asyncio.Condition()
        self._workers: list[asyncio.Task[None]] = []
        self._closing = False
        self._base: EngineProfile | None = None
        self._backlogged = False
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
        self.queue.clear(EngineError("engine pool closed"))
        await asyncio.gather(*(s.engine.kill() if s in busy else s.engine.close() for s in self._slots if s.engine))
        for slot in self._slots:
            slot.engine = None

    # -- requests (base_profile, profile and ``async with``: PinnedBackend) ---

    @property
    def quick_profile(self) -> EngineProfile | None:
        """The eval-bar preview profile (the quick limit), None when previews are off or no lower."""
        if not self.quick or self._base is None:
            return None
        base = self._base
        if base.nodes:
            quick = base.with_limit(nodes=min(self.cfg.min_nodes, base.nodes))
        elif base.depth is not None:
            quick = base.with_limit(depth=min(self.cfg.min_depth, base.depth))
        else:  # a profile is limited by nodes or depth; without either there is no lower limit to preview at
            return None
        return None if quick == base else quick

    @property
    def previews(self) -> bool:
        return self.quick_profile is not None

    @property
    def previewing(self) -> bool:
        return self.quick_profile is not None and self.backlogged

    @property
    def backlogged(self) -> bool:
        """Above ``backlog_high`` waiting, until down to ``backlog_low``: previews are worth a search."""
        waiting = self.queue.waiting
        if waiting > self.cfg.backlog_high:
            self._backlogged = True
        elif waiting <= self.cfg.backlog_low:
            self._backlogged = False
        return self._backlogged

    async def submit(self, board: chess.Board, priority: float | None = None, key: str | None = None) -> PooledAnalysis:
        """The analysis of ``board``'s position under the pinned profile: cached, in flight, or searched.

        ``priority``: lower is served first; default ``-arrival`` (newest first); ``key``: the position's
        :func:`~livemon.live.values.position_key` when the caller has it. A terminal position (mate, stalemate,
        draw by rule) is a ValueError: it is scored by rule (:func:`livemon.live.analysis.position_value`), not
        searched.
        Raises EngineError when the position failed after its retries or the pool closed.
        """
        return await self._request(board, self.base_profile, priority, key)

    async def preview(self, board: chess.Board) -> PooledAnalysis | None:
        """A quick evaluation of ``board`` for the eval bar while the pool is backlogged, else None.

        Answered from the pinned profile's cache when it has the position, else
        from the quick profile's cache, else searched at the quick limit ahead
        of the queue. Never an estimate's input (the caller's core makes sure).
        """
        quick = self.quick_profile
        if quick is None or not self.backlogged:
            return None
        key_hit = self.queue.cached(board.epd(), self.base_profile)
        if key_hit is not None:
            return key_hit
        self.counters.previews += 1
        return await self._request(board, quick, PREVIEW_PRIORITY)

    async def _request(self, board: chess.Board, profile: EngineProfile, priority: float | None,
                       key: str | None = None) -> PooledAnalysis:
        if self._closing or not self._workers:
            raise EngineError("engine pool not running")
        if not needs_search(board):
            raise ValueError(f"position is scored by rule, not searched: {board.fen()}")
        answer = self.queue.request(board, profile, priority, time.monotonic(), key=key)
        if isinstance(answer, PooledAnalysis):
            return answer
        async with self._wake:
            self._wake.notify()
        return await asyncio.shield(answer.future)

    @property
    def _waiting(self) -> int:
        return self.queue.waiting

    # -- workers --------------------------------------------------------------

    async def _next_job(self) -> Job:
        async with self._wake:
            while True:
                job = self.queue.pop()
                if job is not None:
                    return job
                await self._wake.wait()

    async def _work(self, slot: _Slot) -> None:
        while True:
            job = await self._next_job()
            slot.job = job
            try:
                await self._run(slot, job)
            finally:  # also on cancellation by close(): no request is left waiting forever
                fail(job, EngineError("engine pool closed"))
                slot.job = None
                self.queue.finish(job)

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

    async def _run(self, slot: _Slot, job: Job) -> None:
        """Search ``job`` on the slot's engine, restarting and retrying on failure."""
        attempts = self.cfg.retries + 1
        profile = job.profile
        for attempt in range(1, attempts + 1):
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
                fail(job, EngineError(f"{job.key}: {exc}"))
                return
            if profile == self._base:
                self.counters.searches += 1
                self.counters.search_seconds += time.monotonic() - slot.search_started
            else:  # a quick eval-bar preview: not a search of the figures, nor of their rate
                self.counters.preview_searches += 1
            if self.cache is not None:
                self.cache.put(job.key, profile.name, analysis)
            job.future.set_result(PooledAnalysis(job.key, analysis, profile, cached=False))
            return

    # -- status ---------------------------------------------------------------

    def engine_pids(self) -> list[int]:
        """Process ids of the engines running now."""
        return [s.engine.pid for s in self._slots if s.engine is not None and s.engine.alive]

    def status(self) -> EngineStatus:
        """Counters and state for ``livemon status`` and the status line."""
        c, q = self.counters, self.queue.counters
        profile = self._base
        quick = self.quick_profile
        return EngineStatus(
            engines=len(self._slots),
            engines_alive=len(self.engine_pids()),
            searching=sum(1 for s in self._slots if s.job is not None),
            backlog=self.queue.waiting,
            queue_lag_seconds=self.queue.oldest_wait(time.monotonic()),
            submitted=q.submitted - c.previews,
            searches=c.searches,
            cache_hits=q.cache_hits,
            joined=q.joined,
            restarts=c.restarts,
            retries=c.retries,
            failures=c.failures,
            profile=profile.name if profile else None,
            base_profile=profile.name if profile else None,
            depth=profile.depth if profile else None,
            nodes=profile.nodes if profile else None,
            mean_search_s=c.search_seconds / c.searches if c.searches else None,
            quick_profile=quick.name if quick else None,
            previews=c.previews,
            preview_searches=c.preview_searches,
        )
