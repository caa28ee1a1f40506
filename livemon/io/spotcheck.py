"""Spot re-checks of remote engine results on this machine's engine (``bus.spot_check``).

A well-formed lie from a bus worker (legal moves, a score in range) passes
:func:`livemon.io.resultcheck.check_analysis`. To catch one, the monitor can
search a random fraction of the accepted remote results again with a local
engine of the same profile, in the background, one at a time (it never delays
an answer). When the scores differ by more than ``tolerance`` centipawns, it
logs an alarm line naming the worker and the way to revoke it (``livemon
worker --forget NAME``), and replaces that cached analysis with its own.

Searches are deterministic for one engine build and profile (one thread, no
history, hash cleared: :mod:`livemon.io.engine`), but another machine's build
or hash size can move a score a little; hence the tolerance.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from typing import Callable

import chess

from livemon.config import EngineConfig
from livemon.io.engine import EngineError, PositionAnalysis, UciEngine, position_key
from livemon.io.store.analyses import Analyses

log = logging.getLogger(__name__)

QUEUE = 64
"""Re-checks waiting at most; when the local engine falls behind, further samples are skipped."""


@dataclass
class SpotCounters:
    offered: int = 0
    checked: int = 0
    skipped: int = 0
    alarms: int = 0


class SpotChecker:
    """``offer()`` accepted remote results; a background task re-searches a ``fraction`` of them.

    ``profile`` is the bus profile name: the local engine must run exactly it, or
    spot checks are turned off with one log line.
    """

    def __init__(self, engine: EngineConfig, fraction: float, profile: str, cache: Analyses | None = None,
                 tolerance: int = 100, seed: int | None = None,
                 on_alarm: Callable[[str, str, str], None] | None = None) -> None:
        self.engine_cfg = engine
        self.fraction = fraction
        self.profile = profile
        self.cache = cache
        self.tolerance = tolerance
        self.on_alarm = on_alarm  # (worker, why, the position's key): the bus quarantines the worker
        self.counters = SpotCounters()
        self.alarmed: dict[str, int] = {}  # worker -> alarms
        self._rng = random.Random(seed)
        self._queue: asyncio.Queue[tuple[chess.Board, PositionAnalysis, str]] = asyncio.Queue(QUEUE)
        self._task: asyncio.Task[None] | None = None
        self._engine: UciEngine | None = None

    async def start(self) -> bool:
        """Start the local engine; False (and one log line) if it cannot run the bus profile."""
        try:
            self._engine = await UciEngine.open(self.engine_cfg)
        except EngineError as exc:
            log.warning("spot checks off: %s", exc)
            return False
        if self._engine.profile.name != self.profile:
            log.warning("spot checks off: this machine's engine runs %r, the workers %r",
                        self._engine.profile.name, self.profile)
            await self._engine.close()
            self._engine = None
            return False
        self._task = asyncio.create_task(self._run(), name="spot checks")
        log.info("spot checks on: %g%% of remote results searched again here (%s)", 100 * self.fraction, self.profile)
        return True

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._engine is not None:
            await self._engine.close()
            self._engine = None

    def offer(self, board: chess.Board, analysis: PositionAnalysis, worker: str) -> None:
        """An accepted remote result; re-checked with probability ``fraction``."""
        if self._task is None:
            return
        self.counters.offered += 1
        if self._rng.random() >= self.fraction:
            return
        try:
            self._queue.put_nowait((board.copy(stack=False), analysis, worker))
        except asyncio.QueueFull:
            self.counters.skipped += 1

    async def wait_idle(self) -> None:
        """Until every offered check is done (tests)."""
        await self._queue.join()

    async def _run(self) -> None:
        if self._engine is None:  # start() sets it before this task runs
            return
        while True:
            board, remote, worker = await self._queue.get()
            try:
                try:
                    local = await self._engine.analyse(board)
                except EngineError as exc:
                    log.warning("spot check of %s skipped: %s", position_key(board), exc)
                    self.counters.skipped += 1
                    if not self._engine.alive:
                        await self._engine.kill()
                        self._engine = await UciEngine.open(self.engine_cfg)
                    continue
                self.counters.checked += 1
                if abs(local.score - remote.score) > self.tolerance:
                    self.counters.alarms += 1
                    self.alarmed[worker] = self.alarmed.get(worker, 0) + 1
                    log.error("spot check ALARM: worker %s said %+d for %s, this machine's engine %+d (best %s, not %s); "
                              "the cached analysis is replaced; to drop all of its results: livemon worker --forget %s",
                              worker, remote.score, position_key(board), local.score, local.candidates[0][0],
                              remote.candidates[0][0], worker)
                    if self.cache is not None:
                        self.cache.put(position_key(board), self.profile, local)
                    if self.on_alarm is not None:
                        self.on_alarm(worker, f"it said {remote.score:+d} for {position_key(board)}, "
                                              f"a search here {local.score:+d}", position_key(board))
            finally:
                self._queue.task_done()
