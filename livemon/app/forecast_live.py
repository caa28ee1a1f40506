"""The live tournament forecast: the monitor's events simulated to their end as their games go on.

The job keeps each event's games as records (tags, result, and for a game in progress its newest evaluation,
ply, material and both clocks), updated incrementally on the event loop: a poll every :data:`POLL` seconds looks
only at the games still in progress (and at games new to it), and a game's record is made again only when its
result, ply or newest evaluation moved. An event whose records moved is forecast again, latest wins: one
forecast at a time, the next one starting as soon as the previous is published (and at most one start per
``[event] live_seconds``) from the newest records, whatever came in meanwhile. An event whose records did not
move is not simulated again.

The forecasts are made off the loop, in one long-lived process of their own (started at the first forecast,
stopped with the job), so the loop's other messages never wait on the simulations' hold of the interpreter
lock. The process keeps each event's records (sent whole once, then only those that changed), state, table of
pairings and simulations; the loop shares its newest version with it, so a chunked simulation stops refining
once the games moved. When no process can start, one log line says so and the forecasts run in a thread.

Inside the job, an event whose finished games and pairings are as before keeps its state and values only its
games in progress anew (:func:`~livemon.app.forecast.refresh_ongoing`); its simulations reuse the game model's
table of the field's pairings (:class:`~livemon.rating.standings.SimCache`) and the same random numbers each
time (one seed per event: the chances move with the games, not with the draw); they stop once every chance of
first is known to :data:`LIVE_SE` (a standard error), at most :func:`simulations_for` of them. Each event's
forecast goes out on the hub's ``forecast`` channel as one :class:`~livemon.live.messages.EventForecast`, keyed
by the event's name. The chance of first at the first forecast of a round is kept, so the faces can show the
change since the round began.

Games are grouped into events by their Event tag, or all into one with ``[event] name``. The format, rounds
and tiebreaks are the config's ``[event]``, or guessed (and said in the message's notes); a
Swiss whose number of rounds is not configured gets a forecast with ``error`` set and no players.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import multiprocessing
import multiprocessing.connection
import time
import zlib
from collections.abc import Mapping
from typing import Any, Callable, Protocol

from livemon.app.forecast import ForecastError, GameRecord, ReadEvent, load_params, record_of_info, refresh_ongoing, state_of
from livemon.config import EventConfig, EventPlayer
from livemon.errors import LivemonError
from livemon.faces.hub import Hub
from livemon.io import procs
from livemon.live.analysis import LiveGame
from livemon.live.messages import EventForecast, GameInfo
from livemon.rating.forecast import ForecastParams, material
from livemon.rating.standings import EventState, Forecast, SimCache, Sims, StateError, reweigh, simulate

log = logging.getLogger(__name__)

LIVE_SIMULATIONS = 20_000
"""Simulations per live forecast of a small event (a 14-player round robin: about 0.05 s of one core)."""
PLAYER_SIMULATIONS = 2_000_000
"""A larger event gets fewer: at most this many player-simulations (250 players: 8,000; 2,000 players: 1,000),
so a forecast stays within about a second of one core."""


def simulations_for(players: int, most: int = LIVE_SIMULATIONS) -> int:
    """Simulations of a live forecast of ``players``.

    >>> simulations_for(14), simulations_for(250), simulations_for(5000)
    (20000, 8000, 1000)
    """
    return max(1000, min(most, PLAYER_SIMULATIONS // max(players, 1)))


class _Core(Protocol):
    @property
    def infos(self) -> Mapping[str, GameInfo]: ...

    @property
    def results(self) -> Mapping[str, str]: ...

    @property
    def games(self) -> Mapping[str, LiveGame]: ...


LIVE_SE = 0.01
"""A live forecast stops simulating once every chance of first has at most this standard error (one point)."""
INTERIM_CPU = 0.1
"""A forecast that has taken this many CPU seconds publishes what it has after each chunk of simulations (a
large event's first chunk is on screen at once; a small event's forecast is done before)."""
POLL = 0.1
"""Seconds between looks at the games in progress (on the event loop; only the games in progress are read)."""


def _record(gid: str, info: GameInfo, result: str | None, game: LiveGame | None) -> GameRecord:
    """One game's record: its tags and result; for a game in progress its newest value (the engine's, else, the
    engine behind, the source's ``[%eval]`` of the newest position as the eval bar shows it), ply, material and
    both clocks (the last two moves' ``[%clk]``)."""
    rec = record_of_info(info, result, 0 if game is None else game.plies)
    if rec.score is None and game is not None and game.plies:
        evals = game.evals
        last = next((j for j in range(len(evals) - 1, -1, -1) if evals[j] is not None), None)
        moves = game.moves
        newest = moves[-1] if len(moves) else None
        source = newest.eval_cp if newest is not None else None
        if evals[-1] is None and source is not None:  # the engine is behind: the source's [%eval], as on the eval bar
            rec.eval_cp, rec.ply, rec.material = source, game.plies, material(game.fen)
        elif last is not None:
            rec.eval_cp, rec.ply = evals[last], last
            rec.material = material(game.fen) if last == game.plies else rec.material
        if len(moves) >= 2:
            before = moves[-2]
            mover, other = newest.clock if newest is not None else None, before.clock
            if mover is not None and other is not None:  # ply odd: White moved last
                rec.clocks = (mover, other) if game.plies % 2 else (other, mover)
    return rec


def _key(result: str | None, game: LiveGame | None) -> tuple[Any, ...]:
    """What a game's record depends on that moves during the game: its result, ply and newest evaluation."""
    if game is None:
        return (result, 0, None)
    evals = game.evals
    return (result, game.plies, evals[-1] if evals else None)


def snapshot(core: _Core, name: str = "") -> dict[str, list[GameRecord]]:
    """Every game's record, by event (:func:`_record`), read at once.

    With ``name`` every game is of that one event; so is every game when each has an Event tag of its own (a
    lichess broadcast names each game "Round 1: A - B"), under the name "all games".
    """
    out: dict[str, list[GameRecord]] = {}
    for gid, info in core.infos.items():
        out.setdefault(name or info.event, []).append(_record(gid, info, core.results.get(gid), core.games.get(gid)))
    return _grouped(out)


def _grouped(events: dict[str, list[GameRecord]]) -> dict[str, list[GameRecord]]:
    if len(events) > 1 and all(len(v) == 1 for v in events.values()):
        return {"all games": [r for v in events.values() for r in v]}
    return events


def forecast_events(events: dict[str, list[GameRecord]], cfg: EventConfig, params: ForecastParams,
                    simulations: int, seed: int | None = None) -> list[tuple[EventForecast, int]]:
    """One forecast per event (and the event's current round), at most ``simulations`` each (fewer for a large
    field: :func:`simulations_for`), each read afresh: for a one-off; the live job keeps its state
    (:class:`LiveForecast`)."""
    return [_forecast(name, records, [r for r in records if r.score is None], None, None, cfg, params, simulations,
                      seed, None, None)[0] for name, records in sorted(events.items())]


def _forecast(name: str, records: list[GameRecord], pending: list[GameRecord], base: ReadEvent | None,
              sims: Sims | None, cfg: EventConfig, params: ForecastParams, simulations: int, seed: int | None,
              cache: SimCache | None, se: float | None, progress: Callable[[EventForecast, int], bool] | None = None,
              ) -> tuple[tuple[EventForecast, int], ReadEvent | None, Sims | None, bool]:
    """One event's forecast, the state it was read into and its simulations (kept: the next forecast of the
    same finished games and pairings values only the games in progress anew, and weighs the same simulations
    again while they are worth enough, :func:`~livemon.rating.standings.reweigh`), and whether it was weighed
    rather than simulated. ``progress`` is given each chunk's forecast so far (with the event's current round) and
    says whether to go on."""
    rounds_seen = [int(r.round.split(".")[0]) for r in records if r.round.split(".")[0].isdigit()]
    current = max(rounds_seen, default=0)
    try:
        read = refresh_ongoing(base, pending, params) if base is not None else None
        f = reweigh(sims, read.state) if read is not None and sims is not None else None
        weighed = f is not None
        if read is None:
            read = state_of(records, cfg, None, cfg.rounds or None, params, name, set_by="config")
        if f is None:
            state = read.state
            so_far = None if progress is None else (
                lambda g: progress(_message(name, state, read.notes, g, current, read.listed), current))  # noqa: E731
            f = simulate(state, simulations_for(len(state.players), simulations), seed=seed, params=params,
                         se=se, cache=cache, keep=cache is not None, progress=so_far)
    except (ForecastError, StateError) as exc:
        return (EventForecast(name, cfg.format or "?", cfg.rounds or None, 0, current, 0, 0, (),
                              error=str(exc), points=cfg.scoring.label), current), None, None, False
    return (_message(name, read.state, read.notes, f, current, read.listed), current), read, f.sims, weighed


def _badge(player: EventPlayer | None) -> dict[str, str | int]:
    """What the list says of a player for the screens: its ``title``, ``fed`` and ``rating``, those it gives."""
    if player is None:
        return {}
    return {k: v for k, v in (("title", player.title), ("fed", player.fed), ("rating", player.rating)) if v}


def _message(name: str, state: EventState, notes: list[str], f: Forecast, current: int,
             listed: Mapping[str, EventPlayer] | None = None) -> EventForecast:
    """The event's forecast message; ``listed``: the listed player (``[[event.players]]``) each player is
    (:attr:`~livemon.app.forecast.ReadEvent.listed`), whose title, federation and rating its row carries
    (``title``, ``fed``, ``rating``) for the faces to show where no board of the player is (a player resting this
    round, in the standings too)."""
    players = sorted(f.players, key=lambda p: (-p.p_winner, -p.p_first, -p.score, p.name))
    listed = listed or {}
    rows = tuple({
        "name": p.name, "score": p.score, "p_first": round(p.p_first, 4), "p_first_round_start": None,
        "p_winner": round(p.p_winner, 4), "p_top3": None if math.isnan(p.p_top3) else round(p.p_top3, 4),
        "expected_score": None if math.isnan(p.expected_score) else round(p.expected_score, 3),
        "max_score": None if math.isnan(p.max_score) else p.max_score, "needs": p.needs,
        **_badge(listed.get(p.name)),
    } for p in players)
    return EventForecast(name, state.format, state.rounds, f.rounds_left, current, f.simulations, len(state.ongoing),
                         rows, tuple(notes + f.notes), points=state.points.label)


@dataclasses.dataclass
class _Event:
    """One event's games as the job keeps them on the loop, and what its last forecast was made of."""

    records: dict[str, GameRecord] = dataclasses.field(default_factory=dict)
    pending: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    """The games in progress: each one's :func:`_key` at its record."""
    version: int = 0
    """Bumped by every change of a record."""
    base_version: int = 0
    """Bumped by a change of the finished games or of which games are in progress (the state is read again)."""
    done_version: int = -1
    """The version of the last forecast published."""
    dirty: set[str] = dataclasses.field(default_factory=set)
    """Games whose record changed since the forecaster was last sent the event (it is sent only those)."""
    dropped: set[str] = dataclasses.field(default_factory=set)
    synced: bool = False
    """Whether the forecaster holds the event's records (else it is sent them all)."""


@dataclasses.dataclass
class _Job:
    """One event to forecast, as the loop sends it to the forecaster: its records (all, or those changed since the
    last job of the event), the games dropped, and which games are in progress."""

    name: str
    base_version: int
    full: bool
    records: dict[str, GameRecord]
    dropped: list[str]
    pending: list[str]


@dataclasses.dataclass
class _Kept:
    """One event as the forecaster keeps it: its records and the state, table and simulations of its last
    forecast."""

    seed: int
    records: dict[str, GameRecord] = dataclasses.field(default_factory=dict)
    base: ReadEvent | None = None
    base_of: int = -1
    cache: SimCache = dataclasses.field(default_factory=SimCache)
    sims: Sims | None = None
    """The simulations of the event's last full forecast, kept to be weighed again as evaluations move."""


@dataclasses.dataclass
class _Settings:
    cfg: EventConfig
    params: ForecastParams
    simulations: int
    se: float | None


def _forecast_jobs(jobs: list[_Job], kept: dict[str, _Kept], settings: _Settings,
                   progress: Callable[[EventForecast, int], bool] | None,
                   ) -> tuple[list[tuple[EventForecast, int]], tuple[int, int, int], float]:
    """The forecasts of ``jobs`` (in the forecaster: its process, else a thread), each event's records and state
    kept in ``kept``; with the counts of states read, forecasts simulated and forecasts weighed again, and the
    CPU seconds taken."""
    c0 = time.thread_time()
    out = []
    reads = simulated = weighed = 0
    for job in jobs:
        k = kept.get(job.name)
        if k is None:
            k = kept[job.name] = _Kept(seed=zlib.crc32(job.name.encode()))
        if job.full:
            k.records = dict(job.records)
        else:
            k.records.update(job.records)
        for gid in job.dropped:
            k.records.pop(gid, None)
        records = list(k.records.values())
        pending = [k.records[g] for g in job.pending if g in k.records]
        base = k.base if k.base_of == job.base_version else None
        made, read, sims, was_weighed = _forecast(
            job.name, records, pending, base, k.sims if base is not None else None, settings.cfg, settings.params,
            settings.simulations, k.seed, k.cache, settings.se, progress)
        reads += base is None
        if was_weighed:
            weighed += 1
        else:
            k.sims = sims
            simulated += 1
        k.base, k.base_of = read, job.base_version
        out.append(made)
    return out, (reads, simulated, weighed), time.thread_time() - c0


def _serve(conn: multiprocessing.connection.Connection, version: Any, settings: _Settings) -> None:
    """The forecaster's process: jobs in on ``conn``, each forecast out (and a large event's chunks so far at
    once); ``version`` is the loop's newest (shared): a chunked simulation goes on only while it is the job's. Ends
    when the loop closes its end of the pipe."""
    kept: dict[str, _Kept] = {}
    try:
        while True:
            what, job_id, job_version, jobs = conn.recv()
            if what != "run":
                return
            start = time.thread_time()

            def progress(msg: EventForecast, current: int, job_id: int = job_id, job_version: int = job_version,
                         start: float = start) -> bool:
                if time.thread_time() - start >= INTERIM_CPU:
                    conn.send(("interim", job_id, msg, current))
                return bool(version.value == job_version)

            try:
                made, counts, cpu = _forecast_jobs(jobs, kept, settings, progress)
            except Exception as exc:  # said on the loop; the worker goes on
                kept.clear()
                conn.send(("error", job_id, f"{type(exc).__name__}: {exc}", None))
                continue
            conn.send(("done", job_id, (made, counts, cpu), time.process_time()))
    except (EOFError, OSError, KeyboardInterrupt):  # the loop closed the pipe (the monitor stopped or died)
        return


class _Worker:
    """The forecaster's process (:mod:`livemon.io.procs`), and the loop's end of its pipe."""

    def __init__(self, settings: _Settings) -> None:
        ctx = procs.context(__name__)
        self.version = ctx.RawValue("q", 0)
        self.jobs = 0
        """Jobs sent; each answer names its job."""
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, self.version, settings), daemon=True,
                                name="livemon-forecast")
        try:
            self.proc.start()
        finally:
            child.close()

    def close(self) -> None:
        """Stop the process: its pipe closed (it ends at its next look), then, if it lingers, terminated."""
        self.stop()
        self.wait()

    def stop(self) -> None:
        """Tell the process to end (at once: it ends at its next look at the pipe)."""
        self.version.value = -1  # a chunked simulation in flight stops at its next chunk
        if not self.conn.closed:
            self.conn.close()

    def wait(self) -> None:
        """Wait for the process to end (blocking), terminating it if it lingers."""
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


class _WorkerGone(LivemonError):
    pass


class _Failed(LivemonError):
    """A forecast that failed in the forecaster's process (which goes on)."""


class LiveForecast:
    """The monitor's forecast job: ``await LiveForecast(cfg.event, hub).run(core)`` until cancelled.

    The simulations run in one long-lived process of their own (started at the first forecast, stopped when
    :meth:`run` ends or at :meth:`close`), so the event loop and its other messages never wait on them; the
    process keeps each event's records, state and simulations, and is sent only the records that changed. With
    ``process=False``, or when the process cannot start (said in one log line), they run in a thread.
    """

    def __init__(self, cfg: EventConfig, hub: Hub, simulations: int = LIVE_SIMULATIONS, se: float | None = LIVE_SE,
                 process: bool = True) -> None:
        self.cfg = cfg
        self.hub = hub
        self.simulations = min(simulations, cfg.simulations)
        self.se = se
        self.params = load_params()
        self.process = process
        """Whether the simulations run in a process of their own (else in a thread)."""
        if process:
            procs.context(__name__)  # this module imported once by the workers' server, should it start now
        self._worker: _Worker | None = None
        self._retired: list[_Worker] = []  # processes told to end, not yet waited for
        self._kept: dict[str, _Kept] = {}  # the thread's forecaster: the events as it keeps them
        self._events: dict[str, _Event] = {}
        self._merged = _Event()  # every game its own Event tag: all games one event
        self._event_of: dict[str, str] = {}  # game id -> its event
        self._final: dict[str, str | None] = {}  # finished games: their result
        self._seen_infos = 0
        self._round_start: dict[tuple[str, int], dict[str, float]] = {}
        self.forecasts = 0
        self.simulated = 0
        """Event forecasts simulated (an event whose games did not move is not)."""
        self.weighed = 0
        """Event forecasts made by weighing the kept simulations again (only evaluations moved)."""
        self.reads = 0
        """Event states read from all their games (the first forecast, a result, a new game); the others value
        only the games in progress anew."""
        self.last_seconds = 0.0
        self.last_cpu = 0.0
        """The last forecast's CPU seconds (the forecaster's)."""
        self.worker_cpu = 0.0
        """The forecaster process's CPU seconds so far (as of its last forecast)."""
        self.messages = 0
        """Forecast messages published (a large event's first chunk published at once is one more)."""
        self.in_flight = 0
        """The version the forecast being made (or the last made) is of."""
        self.version = 0
        """Bumped by every change the job has seen; :attr:`published` is the version the last forecasts were of."""
        self.published = 0

    def update(self, core: _Core) -> bool:
        """Bring the records up to date with ``core`` (on the event loop); whether any moved.

        Games new to the job are found when the count of games changed; a finished game is looked at again
        only when the count of results went down (a result taken back); otherwise only the games in progress
        are read, each cheaply (:func:`_key`).
        """
        changed = False
        infos, results, games = core.infos, core.results, core.games
        if len(infos) != self._seen_infos or len(self._final) > len(results):
            gone = [gid for gid in self._event_of if gid not in infos]
            for gid in gone:
                self._drop(gid)
                changed = True
            for gid in infos:
                if gid not in self._event_of:
                    self._add(gid, infos[gid])
                    changed = True
            for gid in [g for g in self._final if g not in results]:  # a result taken back: in progress again
                del self._final[gid]
                ev = self._events[self._event_of[gid]]
                ev.pending[gid] = ()
                ev.base_version += 1
            self._seen_infos = len(infos)
        for ev in self._events.values():
            for gid, key in list(ev.pending.items()):
                result = results.get(gid)
                game = games.get(gid)
                now = _key(result, game)
                if now == key:
                    continue
                ev.records[gid] = _record(gid, infos[gid], result, game)
                ev.dirty.add(gid)
                ev.version += 1
                changed = True
                if result is not None:
                    del ev.pending[gid]
                    self._final[gid] = result
                    ev.base_version += 1
                else:
                    ev.pending[gid] = now
        if changed:
            self.version += 1
            if self._worker is not None:
                self._worker.version.value = self.version
        return changed

    def _add(self, gid: str, info: GameInfo) -> None:
        name = self.cfg.name or info.event
        ev = self._events.get(name)
        if ev is None:
            ev = self._events[name] = _Event()
        self._event_of[gid] = name
        ev.pending[gid] = ()  # read on this update
        ev.base_version += 1

    def _drop(self, gid: str) -> None:
        name = self._event_of.pop(gid)
        ev = self._events[name]
        ev.records.pop(gid, None)
        ev.pending.pop(gid, None)
        ev.dirty.discard(gid)
        ev.dropped.add(gid)
        self._final.pop(gid, None)
        ev.version += 1
        ev.base_version += 1

    def _due(self) -> list[tuple[_Event, _Job]]:
        """The events to forecast (their records moved), each with its job for the forecaster (on the loop)."""
        events = self._events
        if len(events) > 1 and all(len(ev.records) == 1 for ev in events.values()):  # a broadcast: one event
            merged = self._merged
            records = {gid: r for ev in events.values() for gid, r in ev.records.items()}
            version = sum(ev.version for ev in events.values())
            if version == merged.done_version:
                return []
            merged.version, merged.base_version = version, sum(ev.base_version for ev in events.values())
            pending = [gid for ev in events.values() for gid in ev.pending if gid in ev.records]
            return [(merged, _Job("all games", merged.base_version, True, records, [], pending))]
        out = []
        for name, ev in events.items():
            if ev.version == ev.done_version or not ev.records:
                continue
            pending = [g for g in ev.pending if g in ev.records]
            if ev.synced:
                job = _Job(name, ev.base_version, False, {g: ev.records[g] for g in ev.dirty if g in ev.records},
                           sorted(ev.dropped), pending)
            else:
                job = _Job(name, ev.base_version, True, dict(ev.records), [], pending)
            ev.dirty.clear()
            ev.dropped.clear()
            ev.synced = True
            out.append((ev, job))
        return out

    def _due_any(self) -> bool:
        events = self._events
        if len(events) > 1 and all(len(ev.records) == 1 for ev in events.values()):
            return sum(ev.version for ev in events.values()) != self._merged.done_version
        return any(ev.version != ev.done_version and ev.records for ev in events.values())

    def _unsync(self) -> None:
        """The forecaster lost what it kept (a failed job, a new process): every event is sent whole next."""
        for ev in self._events.values():
            ev.synced = False
        self._kept = {}

    async def _start(self) -> _Worker | None:
        """The forecaster's process, started at the first forecast (off the loop); None (and the thread from then
        on, said in one log line) when it cannot start."""
        if self._worker is None and self.process:
            settings = _Settings(self.cfg, self.params, self.simulations, self.se)
            try:
                self._worker = await procs.start(lambda: _Worker(settings))
                self._worker.version.value = self.version
            except Exception as exc:
                log.warning("forecast: no process of its own (%s: %s); the simulations run in a thread",
                            type(exc).__name__, exc)
                self.process = False
                self._worker = None
            self._unsync()
        return self._worker

    async def _in_thread(self, jobs: list[_Job], version: int,
                         ) -> tuple[list[tuple[EventForecast, int]], tuple[int, int, int], float]:
        loop = asyncio.get_running_loop()
        start = time.thread_time()

        def progress(msg: EventForecast, current: int) -> bool:
            if time.thread_time() - start >= INTERIM_CPU:
                loop.call_soon_threadsafe(self._publish, msg, current, False)
            return self.version == version

        settings = _Settings(self.cfg, self.params, self.simulations, self.se)
        return await asyncio.to_thread(_forecast_jobs, jobs, self._kept, settings, progress)

    async def _in_process(self, worker: _Worker, jobs: list[_Job], version: int, core: _Core,
                          ) -> tuple[list[tuple[EventForecast, int]], tuple[int, int, int], float]:
        """The forecasts of ``jobs`` from the forecaster's process; its chunks so far published as they come."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        conn = worker.conn

        def readable() -> None:
            try:
                while not done.done() and conn.poll():
                    what, job_id, body, extra = conn.recv()
                    if job_id != worker.jobs:  # a job given up (its forecast cancelled): late, dropped
                        continue
                    if what == "interim":
                        self._publish(body, extra, False)
                    elif what == "done":
                        self.worker_cpu = extra
                        done.set_result(body)
                    else:
                        done.set_exception(_Failed(f"forecast failed in its process: {body}"))
            except (EOFError, OSError) as exc:
                done.set_exception(_WorkerGone(f"{type(exc).__name__}: {exc}"))

        fd = conn.fileno()
        loop.add_reader(fd, readable)
        try:
            worker.version.value = self.version
            worker.jobs += 1
            conn.send(("run", worker.jobs, version, jobs))
            while not done.done():  # the games are still read meanwhile: the job stops refining once they moved
                await asyncio.wait({done}, timeout=POLL)
                self.update(core)
            return done.result()  # type: ignore[no-any-return]
        finally:
            loop.remove_reader(fd)

    async def once(self, core: _Core) -> list[EventForecast]:
        """Forecast now every event of ``core`` whose games moved (the simulation off the loop) and publish."""
        self.update(core)
        version = self.version
        if not self._due_any():
            self.published = version
            return []
        worker = await self._start()  # before the jobs are made: a new process is sent every event whole
        due = self._due()
        marks = [(ev, ev.version) for ev, _ in due]
        jobs = [job for _, job in due]
        t0 = time.perf_counter()
        self.in_flight = version
        try:
            if worker is not None:
                made, counts, cpu = await self._in_process(worker, jobs, version, core)
            else:
                job = asyncio.ensure_future(self._in_thread(jobs, version))
                while not job.done():  # the games are still read meanwhile: the job stops refining once they moved
                    await asyncio.wait({job}, timeout=POLL)
                    self.update(core)
                made, counts, cpu = job.result()
        except _WorkerGone as exc:  # the process died: the thread from now on
            log.warning("forecast: its process ended (%s); the simulations run in a thread", exc)
            self.close()
            self.process = False
            self._unsync()
            raise
        except _Failed:
            self._unsync()
            raise
        except BaseException:  # given up (cancelled) while the process may still work on it: told to end
            if worker is not None and worker is self._worker:
                self._worker = None
                worker.stop()
                self._retired.append(worker)  # waited for when the job ends
            self._unsync()
            raise
        self.reads += counts[0]
        self.simulated += counts[1]
        self.weighed += counts[2]
        self.last_cpu = cpu
        self.last_seconds = time.perf_counter() - t0
        out = []
        for (ev, mark), (msg, current) in zip(marks, made):
            ev.done_version = mark
            out.append(self._publish(msg, current))
        self.forecasts += 1
        self.published = version
        return out

    def _publish(self, msg: EventForecast, current: int, final: bool = True) -> EventForecast:
        msg = self._with_round_start(msg, current, final)
        self.hub.publish(msg)
        self.messages += 1
        return msg

    def _with_round_start(self, msg: EventForecast, current: int, final: bool = True) -> EventForecast:
        """``msg`` with each player's chance of first at the round's first complete forecast (this one if it is)."""
        if not msg.players:
            return msg
        start = self._round_start.get((msg.event, current), {}) if not final else self._round_start.setdefault(
            (msg.event, current), {p["name"]: p["p_first"] for p in msg.players})
        rows = tuple({**p, "p_first_round_start": start.get(p["name"])} for p in msg.players)
        return dataclasses.replace(msg, players=rows)

    async def run(self, core: _Core) -> None:
        """Forecast whenever the games moved: latest wins, one forecast at a time, at most one start per
        ``live_seconds``."""
        every = self.cfg.live_seconds
        if every <= 0:
            return
        last = -math.inf
        try:
            while True:
                await asyncio.sleep(POLL)
                self.update(core)
                if self.version == self.published or time.monotonic() - last < every:
                    continue
                last = time.monotonic()
                try:
                    await self.once(core)
                except Exception:  # a forecast must never take the monitor down: said, and tried again later
                    log.exception("forecast failed")
                    self.published = self.version
        finally:  # the process told to end at once, and waited for off the loop
            for worker in self._ending():
                await asyncio.to_thread(worker.wait)

    def close(self) -> None:
        """Stop the forecaster's process, if one runs (the next forecast starts another)."""
        for worker in self._ending():
            worker.wait()

    def _ending(self) -> list[_Worker]:
        """The processes to wait for, each told to end; the job has none from then on."""
        workers = self._retired + ([self._worker] if self._worker is not None else [])
        self._worker, self._retired = None, []
        for worker in workers:
            worker.stop()
        if workers:
            self._unsync()
        return workers

    def status(self) -> dict[str, Any]:
        return {"forecasts": self.forecasts, "simulated": self.simulated, "weighed": self.weighed,
                "last_seconds": round(self.last_seconds, 3),
                "last_cpu_seconds": round(self.last_cpu, 3)}
