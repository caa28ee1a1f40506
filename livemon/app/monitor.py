"""The wiring: feeds → the runner (live core) → (store, engine pool, hub), and the background TTT.

The monitor decides nothing: it is a :class:`~livemon.live.runner.Runner` with asyncio ports. Every feed
message, engine answer, TTT result and timer tick is put in the runner's inbox; one task (:meth:`Monitor._step`)
hands the inbox to the sans-I/O :class:`~livemon.live.core.LiveCore` within the loop turn's budget, and the
runner carries out the effects it returns — a move is stored before anything else happens to it, positions
the cache lacks go to the engine pool (newest first), updates go to the :class:`Hub`, which the faces read.
Finished games trigger a warm TrueSkill Through Time refresh in a worker process, so the event loop never
waits on it.

On start the monitor pins the event's engine profile (the pool's: every
estimate, screening figure and export is of that one profile) and hands the
core the stored games: a restart loses nothing and repeats no search (the
cache answers every position analysed before).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import math
import logging
import time
from collections.abc import Mapping
from importlib import resources
from typing import Any

from livemon.io.engine_port import AsyncEngine
from livemon.app.turns import TurnBudget
from livemon.config import Config, EventConfig, EventPlayer, ReplayFeedConfig
from livemon.errors import FAULTS
from livemon.faces.hub import Hub
from livemon.io.feeds import Feed, open_feeds
from livemon.io.feeds.replay import ReplayFeed
from livemon.io.pool import EngineBackend, EnginePool
from livemon.io.shelfdb import ShelfDB
from livemon.io.store import RunnerStore, Store
from livemon.io.tttjob import TTTJob
from livemon.live.analysis import LiveGame
from livemon.live.core import CoreCounters, LiveCore
from livemon.live.estimator import Estimator, PlayerState
from livemon.live.messages import GameInfo, Message, MonitorStatus, PlayerEstimate, WorkerQuarantined
from livemon.live.runner import Forget, Ratings, Resume, Runner, Tick
from livemon.io.book import open_book
from livemon.live.screener import Screener
from livemon.live.shelf import Shelf
from livemon.rating.calibration import ProfileCalibration
from livemon.rating.performance import pool_warning

log = logging.getLogger(__name__)

LAG_PROBE_SECONDS = 0.05
"""How often the event-loop lag probe wakes (it measures how late each wake-up is)."""

GC_FREEZE_SECONDS = 2.0
"""How often what has lived that long is moved out of the cyclic garbage collector's sight (``gc.freeze``).

A round's state is millions of long-lived objects (games, plies, estimates, the faces' logs);
CPython's full collection walks all of them whenever the heap has grown by a quarter: at 1,000
boards, unfrozen, that makes 24 pauses of up to 1.9 s in two minutes (15.7 s in all), the loop-lag p99. Frozen
objects are still freed by reference counting; only a reference cycle that becomes garbage after
it was frozen is never collected. Before each freeze the two young generations are collected
(p50 3.7 ms, p99 19 ms at 250 boards × 40×; a full collection of the young heap takes 19/40 ms):
without it, cycles not yet collected (parsed PGN game trees, HTTP responses: ~65,000 objects in
5 minutes) would be frozen with the live state and never freed."""

TURN_BUDGET = 0.008
"""Seconds of the monitor's background work per event-loop turn, shared by all its tasks
(:class:`~livemon.app.turns.TurnBudget`): the runner's steps (feeds' messages, engine answers, Algorithm 2's
and TTT's re-published players, each step's held estimates) and the feeds' own parsing. Each task does at
least one unit a turn, then yields once the turn's budget is spent: were each to take a slice of its own, a
turn in which several were ready, then the web face's fan-out, would be the loop's lag (``bench/turns``
times the turns).

The bus hands answers over in bursts (a worker's batch, a broker round trip); were each to be applied
where it lands, a turn of a few hundred answers would be the loop's lag. So every answer, like every feed
message, only goes into the runner's inbox, and one task steps the runner, within the budget."""


INBOX_HIGH = 5_000
"""Events in the runner's inbox at which a feed waits until the core has handed half of them (a replay at
full speed, a round's first poll): the backlog is the engines', in their queue, not the feeds' in memory."""

TTT_STORE_SECONDS = 30.0
"""The TTT fit is stored at most this often (the worker pickles it: a few MB for a long event). A restart
continues from the stored fit with the games finished since (the store has them all): nothing is lost."""

LAG_WARNING = 120.0
"""Seconds the oldest queued position may wait before the log says the engines do not keep up."""

STATUS_VERSION = 2
"""Shape of the stored status (``livemon status --json``). 2: ``engine`` is an
:class:`~livemon.io.backend.EngineStatus` (``queue_lag_seconds``, ``quick_profile``,
``previews``; no ``limit_level``/``limit_changes``: no adaptive limit; ``restarts`` null
for a remote pool), and ``gaps``/``illegal_moves`` counters; ``engine_lag_seconds`` (how long the oldest
position waiting for the pinned profile has waited) beside ``feed_lag_seconds`` (since the feeds' last message);
``engine.searches`` and ``engine.mean_search_s`` count the pinned profile's searches only (the quick eval-bar
previews are ``engine.preview_searches``)."""


def _log(level: int, text: str) -> None:
    """The runner's log port: the monitor's log."""
    log.log(level, "%s", text)


def bundled_replay(speed: float = 2.0) -> ReplayFeedConfig:
    """The default feed: the bundled London Chess Classic 2011, replayed as if live."""
    path = resources.files("livemon") / "data" / "london_2011.pgn"
    return ReplayFeedConfig(name="london-2011-replay", path=str(path), speed=speed)


def bundled_event(event: EventConfig) -> EventConfig:
    """The bundled replay's event as its organisers knew it: a round robin of the nine players of its games (one of
    them rests each round), over ``event``'s other keys; ``event`` itself where it sets the format or the field.

    >>> e = bundled_event(EventConfig())
    >>> e.format, len(e.players), sorted(p.name for p in e.players)[-1], max(p.rating for p in e.players)
    ('rr', 9, 'Short,N', 2826)
    """
    import chess.pgn

    from livemon.live.pgn import fide_id, scaled_ratings, short_tag

    if event.format or event.players:
        return event
    field: dict[str, EventPlayer] = {}
    with open(str(resources.files("livemon") / "data" / "london_2011.pgn"), encoding="utf-8") as pgn:
        while (tags := chess.pgn.read_headers(pgn)) is not None:
            for side, rating in zip(("White", "Black"), scaled_ratings(tags)[0]):  # the field on today's scale
                field.setdefault(tags.get(side, "?"), EventPlayer(tags.get(side, "?"), rating or 0, fide_id(tags.get(f"{side}FideId")),
                                                                 short_tag(tags.get(f"{side}Title")), short_tag(tags.get(f"{side}Fed"))))
    return dataclasses.replace(event, format="rr", players=list(field.values()))


class LoopLagProbe:
    """How late the event loop runs a timer: a histogram of every wake-up's delay since start.

    Bins are 1 ms wide below 100 ms, 10 ms to 1 s, 100 ms beyond, so the
    percentiles are exact to a bin and the whole history takes a few hundred
    integers. ``to_dict`` is stored with the status (``livemon status --json``);
    a bench takes two of them and subtracts the histograms for a window.

    >>> probe = LoopLagProbe()
    >>> for ms in (0.2, 0.4, 3.0, 120.0):
    ...     probe.add(ms / 1000)
    >>> d = probe.to_dict()
    >>> d["samples"], d["p50_ms"], d["p99_ms"], d["max_ms"]
    (4, 1.0, 130.0, 120.0)
    >>> lag_percentile(d["hist"], 0.5)
    1.0
    """

    def __init__(self) -> None:
        self.hist: dict[int, int] = {}
        self.running: dict[int, int] = {}  # the part of each delay the loop's thread spent running (CPU)
        self.samples = 0
        self.max = 0.0

    def add(self, seconds: float, running: float | None = None) -> None:
        """One wake-up ``seconds`` late; ``running``: how much of that the loop's thread was on a CPU
        (the rest it waited for one, or for the GIL: other processes, the store's and parsers' threads)."""
        ms = max(seconds, 0.0) * 1000
        self.samples += 1
        self.max = max(self.max, ms)
        edge = lag_bin(ms)
        self.hist[edge] = self.hist.get(edge, 0) + 1
        if running is not None:
            edge = lag_bin(min(max(running, 0.0) * 1000, ms))
            self.running[edge] = self.running.get(edge, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        hist = {str(k): v for k, v in sorted(self.hist.items())}
        running = {str(k): v for k, v in sorted(self.running.items())}
        return {"probe_ms": LAG_PROBE_SECONDS * 1000, "samples": self.samples,
                "p50_ms": lag_percentile(hist, 0.50), "p99_ms": lag_percentile(hist, 0.99),
                "max_ms": round(self.max, 1), "hist": hist,
                "running_p99_ms": lag_percentile(running, 0.99), "running_hist": running}

    async def run(self, every: float = LAG_PROBE_SECONDS) -> None:
        """Sleep ``every`` and record how late the wake-up came, and how much of the lateness the loop's thread
        spent on a CPU (its CPU time in the interval beyond ``every``; a loop that was idle and then late
        waited for a CPU or the GIL, one that ran callbacks all along was late by its own work)."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + every
            cpu0 = time.thread_time()
            await asyncio.sleep(every)
            self.add(loop.time() - due, time.thread_time() - cpu0 - every)


def lag_bin(ms: float) -> int:
    """The upper edge (ms) of the histogram bin of a delay of ``ms`` milliseconds.

    >>> lag_bin(0.0), lag_bin(7.5), lag_bin(100.0), lag_bin(999.0), lag_bin(1234.0)
    (1, 8, 110, 1000, 1300)
    """
    if ms < 100:
        return int(ms) + 1
    if ms < 1000:
        return (int(ms) // 10 + 1) * 10
    return (int(ms) // 100 + 1) * 100


def lag_percentile(hist: dict[str, int], q: float) -> float | None:
    """The ``q`` quantile of a lag histogram (``{"upper edge ms": count}``), as its bin's upper edge; None if empty."""
    total = sum(hist.values())
    if not total:
        return None
    need, seen = q * total, 0
    for edge, count in sorted(((int(k), v) for k, v in hist.items())):
        seen += count
        if seen >= need:
            return float(edge)
    return float(max(int(k) for k in hist))


class Monitor:
    """The live monitor: ``await Monitor(cfg).run()``; see the module docstring.

    Every decision is the :class:`~livemon.live.core.LiveCore`'s; its
    :class:`~livemon.live.runner.Runner` (``runner``) applies the effects with this class's ports: the
    store, the engine backend, the hub, the TTT refresh, the log, the shelf.
    """

    def __init__(self, cfg: Config, hub: Hub | None = None, store: Store | None = None):
        self.cfg = cfg
        self.hub = hub or Hub()
        self.store = store or Store(cfg.store.path)
        if cfg.bus.mode == "mqtt":  # the engines are workers behind a broker (docs/distributed.md)
            from livemon.io.bus import RemoteEnginePool

            remote = RemoteEnginePool(cfg.bus, self.store.analyses, engine=cfg.engine)
            remote.on_quarantine = self._quarantined  # a liar's answers replaced, the arbiters told
            self.pool: EngineBackend = remote
        else:
            self.pool = EnginePool(cfg.engine, self.store.analyses)
        a = cfg.analysis
        # its profile, calibration and screener are set in run() (_pin_profile), once the pool knows the profile
        self.core = LiveCore.for_config(cfg, screener=Screener(cfg.screening, None), given_strength=a.engine_strength,
                                        all_pairs=a.all_pairs, coalesce=True)
        self.shelf = Shelf(ShelfDB())
        """The archive settled games' columns go to (a private temporary database), handed to the core."""
        self._commit_due = False
        self.budget = TurnBudget(TURN_BUDGET)
        self._ttt_wanted = asyncio.Event()
        self.runner = Runner(self.core, store=RunnerStore(self.store), publish=self.hub.publish, ttt_wanted=self._ttt_wanted.set,
                             log=_log, clock=time.time, strict=False)
        """The core, its inbox and the one interpreter of its effects (the monitor's ports)."""
        self.engine = AsyncEngine(self.pool, self.runner)
        self.runner.engine = self.engine
        self.runner.wake = self._wake
        self._ready = asyncio.Event()  # the inbox has work
        self._idle = asyncio.Event()  # nothing in the inbox and no answer owed
        self._room = asyncio.Event()  # the inbox is below INBOX_HIGH / 2: the feeds may go on
        self._stepping: asyncio.Task[None] | None = None
        self._mark = 0.0
        self.feeds: list[Feed] = []
        self.demo_pace: float | None = None
        """Plies per second at most for the bundled replay (``livemon serve`` measures the engines and sets it:
        :func:`livemon.app.plan.demo_pace`); None: its schedule alone."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ttt = TTTJob(cfg.ttt)
        self._ttt_stored = -math.inf  # when the fit was last stored (monotonic)
        self._stopping = asyncio.Event()
        self.loop_lag = LoopLagProbe()
        from livemon.app.forecast_live import LiveForecast  # numpy: only with a monitor

        self.forecast = LiveForecast(cfg.event if cfg.feeds else bundled_event(cfg.event), self.hub)

    # the core's state, for the faces' tests and benches that look inside
    @property
    def games(self) -> Mapping[str, LiveGame]:
        return self.core.games

    @property
    def infos(self) -> Mapping[str, GameInfo]:
        return self.core.infos

    @property
    def results(self) -> Mapping[str, str]:
        return self.core.results

    @property
    def estimator(self) -> Estimator:
        return self.core.estimator

    @property
    def screener(self) -> Screener:
        assert self.core.screener is not None  # noqa: S101 - invariant: the monitor always gives its core a screener
        return self.core.screener

    @property
    def counters(self) -> CoreCounters:
        return self.core.counters

    @property
    def engine_strength(self) -> float | None:
        return self.core.strength

    def _quarantined(self, worker: str, why: str, keys: list[str]) -> None:
        """A worker found lying and shut out (the bus): every ply scored with one of its answers is scored again
        with the answers that replace them (:meth:`LiveCore.forget`; the bus searches them again), and a line
        on the arbiters' status channel (never a public one) says so."""
        self.runner.put(Forget(tuple(keys), f"worker {worker} quarantined, its analyses replaced"))
        self.hub.publish(WorkerQuarantined.of(worker, why, len(keys)))

    # -- life cycle ------------------------------------------------------------------

    async def run(self, until_feeds_end: bool = False) -> None:
        """Run until :meth:`stop` (or, with ``until_feeds_end``, until every feed ends and all is scored)."""
        starting = asyncio.create_task(self.pool.start())  # a remote pool waits for a worker: stop() may come first
        stopping = asyncio.create_task(self._stopping.wait())
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            await self.pool.close()
            return
        starting.result()  # EngineError if no engine can start
        try:
            self._pin_profile()
            self._resume()
            self.feeds = open_feeds(self.cfg.feeds or [bundled_replay(self.cfg.monitor.replay_speed)])
            if not self.cfg.feeds and self.demo_pace:  # the demo paced to this machine's engines, held while behind
                for feed in self.feeds:
                    if isinstance(feed, ReplayFeed):
                        feed.max_rate = self.demo_pace
                        feed.behind = lambda: self.pool.status().queue_lag_seconds
            known = {gid: game.plies for gid, game in self.games.items()}
            for feed in self.feeds:  # a replay resumes where it was (no 100 s of nothing after a restart)
                getattr(feed, "resume", lambda known: None)(known)
            feed_tasks = [self._spawn(self._run_feed(f), f"feed {f.name}") for f in self.feeds]
            background = [
                self._spawn(self._status_loop(), "status"),
                self._spawn(self._algorithm2_loop(), "algorithm 2"),
                self._spawn(self._ttt_loop(), "ttt"),
                self._spawn(self.loop_lag.run(), "loop lag probe"),
                self._spawn(self._gc_loop(), "gc freeze"),
                self._spawn(self.forecast.run(self.core), "forecast"),
            ]
            if until_feeds_end:
                await asyncio.gather(*feed_tasks, return_exceptions=True)
                await self.drain()
                await self._refresh_ttt(store=True)
                await self.drain()
            else:
                await self._stopping.wait()
            for task in feed_tasks + background:
                task.cancel()
            await asyncio.gather(*feed_tasks, *background, return_exceptions=True)
        finally:
            # the status the run ends with, also when it is cancelled (a signal while --until-done drains): the
            # stored status never lags the moves stored
            self._publish_status()
            self.store.status.put(self.status())
            await self.close()

    async def close(self) -> None:
        """Cancel every task the monitor started (its runner's, the engine port's), close the engine backend and
        stop the TTT worker: what :meth:`run` does at its end, for a caller that drove :meth:`handle` and
        :meth:`drain` itself. The store stays open (its owner closes it)."""
        tasks = [*self._tasks, *self.engine.tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.pool.close()
        self._ttt.close()

    def stop(self) -> None:
        self._stopping.set()

    async def drain(self) -> None:
        """Wait until the runner's inbox is empty and every requested analysis has come back and been scored."""
        while self.runner.busy or self.engine.pending:
            self._idle.clear()
            self._wake()
            await self._idle.wait()

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed: %r", task.get_name(), task.exception(), exc_info=task.exception())

    # -- restart -----------------------------------------------------------------------

    def _pin_profile(self) -> None:
        """The event's one engine profile (the pool's), its calibration and screening, handed to the core."""
        profile = self.pool.base_profile.name
        calibration = self.store.calibrations.get(profile)
        a = self.cfg.analysis
        self.runner.apply(self.core.configure(profile, calibration, given_strength=a.engine_strength,
                                       calibrated_strength=self.store.calibrations.engine_strength(profile),
                                       previews=self.pool.previews, screener=self._screener(calibration),
                                       cache=self.pool.lookup, archive=self.shelf))
        warning = pool_warning(self.core.estimator.perf_map or self.core.estimator.c_map, a.rating_pool)
        if warning:
            log.warning("%s", warning)

    def _screener(self, calibration: ProfileCalibration | None) -> Screener:
        """Screening with the profile's calibration; alerts raised before a restart are shown, not raised again."""
        cfg = self.cfg.screening
        screener = Screener(cfg, calibration, open_book(cfg.book), self.pool.base_profile.name)
        for level, alert in self.store.alerts.load():
            screener.mark_raised(alert.player, alert.event, level)
            self.hub.publish(alert)
        if screener.mismatch:
            log.warning("screening: %s; recalibrate (livemon calibrate) or expect z's off", screener.mismatch)
        if screener.enabled:
            log.info("screening on (%s z >= %g notice, >= %g alert, >= %d positions)",
                     cfg.statistic, cfg.notice_z, cfg.alert_z, cfg.min_positions)
        else:
            log.warning("screening off: %s (run livemon calibrate); everything else carries on", screener.off_reason)
        return screener

    def _resume(self) -> None:
        """Rebuild games and estimates from the store; re-request what was never analysed (the cache answers the rest)."""
        stored = self.store.games.load()
        self.runner.put(Resume(stored))
        self._step_now()
        if stored:
            log.info("resumed %d games, %d moves from %s", len(stored), sum(len(m) for _, _, m in stored), self.store.path)
        self._ttt.restore(self.store.ttt.get()[0])  # the first TTT refresh continues from the stored fit

    # -- input -------------------------------------------------------------------------

    async def _run_feed(self, feed: Feed) -> None:
        """Put the feed's messages in the runner's inbox, pausing once the turn's budget is spent
        (``TURN_BUDGET``): a feed's own parsing between messages counts (a stream parses each game's PGN
        as it yields it), and so does a wait for the network (the turn then yields after one unit of each
        task: harmless)."""
        started = time.perf_counter()
        async for msg in feed:
            self.runner.put(msg)
            if len(self.runner.inbox) >= INBOX_HIGH:  # the core is behind: the feed waits, not the memory
                self._room.clear()
                await self._room.wait()
                started = time.perf_counter()
            else:
                started = await self.budget.pause(started)

    def handle(self, msg: Message) -> None:
        """Hand one message to the core now, with what waits in the inbox before it (stored first, then
        analysed; the cache's positions scored before this returns). What it holds is flushed by the runner's
        task at the next loop turn (once for a burst handed in one turn), or at once without a loop. The feeds
        only put their messages in the inbox; tests and benches hand theirs in here."""
        self.runner.put(msg)
        self._write_behind()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.runner.run_until_idle()
        else:
            self.runner.step(flush=False)

    # -- the runner's turns ------------------------------------------------------------

    def _step_now(self) -> None:
        """Every unit of work in the runner, at once (a synchronous caller)."""
        self._write_behind()
        self.runner.run_until_idle()

    def _wake(self) -> None:
        """Work came into the inbox: the task that steps the runner is woken (started on first use)."""
        self._ready.set()
        if self._stepping is None or self._stepping.done():
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # no loop (a synchronous caller): it steps the runner itself
                return
            self._stepping = self._spawn(self._step(), "runner")

    async def _step(self) -> None:
        """Step the runner, within the turns' budget, whenever its inbox has work; tell :meth:`drain` when
        nothing is left and no answer is owed."""
        while True:
            if not self.runner.busy:
                if not self.engine.pending:
                    self._idle.set()
                self._ready.clear()
                await self._ready.wait()
                continue
            self._write_behind()
            self._mark = time.perf_counter()
            try:
                self.runner.step(stop=self._turn_spent)
            except Exception:  # a flush that failed: said, and the next step goes on
                log.exception("the runner's step failed")
            if len(self.runner.inbox) < INBOX_HIGH // 2:
                self._room.set()
            self._mark = await self.budget.pause(self._mark)

    def _turn_spent(self) -> bool:
        now = time.perf_counter()
        spent = self.budget.spend(now - self._mark)
        self._mark = now
        return spent

    def _write_behind(self) -> None:
        """This loop turn's writes in one transaction, committed first thing in the next turn.

        A burst's moves are one commit, not one each, and a transaction is never open while the
        loop waits (the commit is already queued). Without a running loop each write is alone.
        """
        if self._commit_due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self.store.engine.begin_batch():
            loop.call_soon(self._commit)
            self._commit_due = True

    def _commit(self) -> None:
        self._commit_due = False
        self.store.engine.commit_batch()

    # -- output ------------------------------------------------------------------------

    def player_estimate(self, player: PlayerState) -> PlayerEstimate:
        """The player's estimate message (built by the core, the one place)."""
        return self.core.player_estimate(player)

    def status(self) -> dict[str, Any]:
        pool = self.pool.status()
        newest = max((f.status.last_message or 0 for f in self.feeds), default=0)
        c = self.core.counters
        return {
            "version": STATUS_VERSION,
            "feeds": [f.status.to_dict() for f in self.feeds],
            "engine": pool.to_dict(),
            "moves": c.moves,
            "duplicates": c.duplicates,
            "rollbacks": c.rollbacks,
            "withdrawn": c.withdrawn,  # games a feed no longer lists (docs/feeds.md)
            "gaps": c.gaps,
            "illegal_moves": c.illegal,
            "feed_errors": c.feed_errors,
            "failed_positions": c.failed_positions,
            "games": len(self.core.games),
            "unscored_plies": self.core.unscored_plies(),
            "lag_seconds": max(time.time() - newest, 0.0) if newest and pool.backlog else 0.0,
            "engine_lag_seconds": pool.queue_lag_seconds,  # the oldest position waiting for the pinned profile
            "feed_lag_seconds": max(time.time() - newest, 0.0) if newest else None,  # since the feeds' last message
            "ttt_refreshes": c.ttt_refreshes,
            "engine_strength": self.core.strength,
            "screening": "on" if self.screener.enabled else f"off: {self.screener.off_reason}",
            "loop_lag": self.loop_lag.to_dict(),
            "faults": self.faults(),
            "updated": time.time(),
        }

    def faults(self) -> dict[str, int]:
        """Every expected fault met since start, by kind, in one place: what the adapters refused
        (:data:`livemon.errors.FAULTS`: engine answers, bus messages, arbiter tokens, feed text) and what
        the core refused (illegal moves, gaps, feed errors, positions that failed). Kinds with none are left out."""
        c = self.core.counters
        core = {"feed.illegal_moves": c.illegal, "feed.gaps": c.gaps, "feed.errors": c.feed_errors,
                "engine.failed_positions": c.failed_positions}
        return dict(sorted((k, v) for k, v in {**FAULTS.snapshot(), **core}.items() if v))

    def _publish_status(self) -> None:
        s = self.status()
        pool = self.pool.status()
        self.hub.publish(
            MonitorStatus(
                feeds=tuple(s["feeds"]),
                backlog=pool.backlog,
                searches=pool.searches,
                cache_hits=pool.cache_hits,
                engine_profile=pool.profile or "",
                engines=pool.engines,
                lag_seconds=s["lag_seconds"],
                engine_lag_seconds=pool.queue_lag_seconds,
                moves=s["moves"],
                games=s["games"],
                ttt_refreshes=s["ttt_refreshes"],
            )
        )

    async def _status_loop(self) -> None:
        behind = False
        while True:
            self._publish_status()
            self.store.status.put(self.status())
            self.store.engine.maintain()  # retries writes held while the disk refused them; starts a due backup
            behind = self._warn_if_behind(behind)
            await asyncio.sleep(self.cfg.monitor.status_seconds)

    def _warn_if_behind(self, behind: bool) -> bool:
        """One line when the backlog's oldest position has waited LAG_WARNING seconds (again after it recovered)."""
        pool = self.pool.status()
        if not behind and pool.queue_lag_seconds >= LAG_WARNING:
            log.warning("engine backlog: %d positions, the oldest waiting %.0f s: the engines do not keep up with "
                        "the event at %s; estimates stay on this profile and catch up (for the next event: a lower "
                        "depth or nodes, or more engines or workers)", pool.backlog, pool.queue_lag_seconds, pool.profile)
            return True
        return behind and pool.queue_lag_seconds >= LAG_WARNING / 2

    async def _gc_loop(self) -> None:
        """``gc.freeze()`` every GC_FREEZE_SECONDS (see there): full collections walk only the young heap.

        The young heap is collected first: cyclic garbage not yet found (a parsed PGN game tree, an HTTP
        response) would otherwise be frozen with the live objects and never freed.
        """
        while True:
            gc.collect(1)  # the two young generations: cheap, and where the garbage of the last turns is
            gc.freeze()
            await asyncio.sleep(GC_FREEZE_SECONDS)

    async def _algorithm2_loop(self) -> None:
        """Algorithm 2 for the event on a timer (it is a least-squares solve over all pairs): a :class:`Tick`,
        whose work (a whole round's players: many estimates) the runner does a unit a step."""
        while True:
            await asyncio.sleep(self.cfg.monitor.algorithm2_seconds)
            self.runner.put(Tick())

    # -- background TTT ----------------------------------------------------------------

    async def _ttt_loop(self) -> None:
        while True:
            await self._ttt_wanted.wait()
            await asyncio.sleep(self.cfg.monitor.ttt_debounce_seconds)
            await self._refresh_ttt()

    async def _refresh_ttt(self, store: bool = False) -> None:
        self._ttt_wanted.clear()
        finished = self.core.finished
        if not finished:
            return
        ratings = await self._ttt.refresh(finished)  # the players it moved
        self.runner.put(Ratings(tuple(ratings)))
        now = time.monotonic()
        if store or now - self._ttt_stored >= TTT_STORE_SECONDS:
            self._ttt_stored = now
            state = await self._ttt.state_bytes()  # pickled in the worker
            report = await asyncio.to_thread(self._ttt.report_json)  # every player: a thread
            self.store.ttt.put(state, report)
