"""The background TrueSkill Through Time refresh of the live monitor.

Fits run in a worker process (started once, reused: :mod:`livemon.io.procs`), so that the event loop
never waits on them, not even for the GIL. The worker keeps the fit: a
refresh sends only the games finished since the last one (the usual case)
and gets back only the players it moved (those of the new games, and any
whose rating moved by more than :data:`REPORT_ELO`), so that a refresh
costs the monitor what it changed, not the event's size. The worker sweeps
only what the new games move (:func:`livemon.rating.ttt.refresh`). The
games come as a :class:`~livemon.live.finished.FinishedGames` (the core's,
kept as games finish): while it is the list the last refresh read and its
revision is unchanged (only games appended), a refresh looks at the games
after those it took and nothing else. Any other list (a corrected result, a
withdrawn game, another list, a new worker) is sent whole, and the worker
continues from its EP messages when its games are a prefix of it (a fit
restored after a restart), else fits afresh.

Scale: the ``[ttt]`` table's Elo mapping (``elo_at_mu0``, ``elo_per_unit``,
default β = 1 is 200 Elo, the performance sd of Elo's normal model); rating
tags always seed the priors here (``TTTConfig.elo_prior``), as in ``fit
--rating-priors``, for every player at every refresh, warm or cold.

A finished game without two named, different players is skipped with one
log line (once per game). The worker process dies with the monitor: it
watches a pipe whose other end only the monitor holds and exits when that
pipe reaches end of file; on Linux the kernel also sends it SIGKILL when its
parent process dies (``prctl(PR_SET_PDEATHSIG)``). The worker pickles its fit for
the store when asked (:meth:`TTTJob.state_bytes`; the monitor asks at most
every ``TTT_STORE_SECONDS``), and the fit is read back at start
(:meth:`TTTJob.restore`), so the first refresh after a restart continues
from it with the games finished since.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import datetime
import functools
import json
import logging
import multiprocessing
import os
import pickle
import re
import signal
import sys
import threading
import dataclasses
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Sequence

import numpy as np

from livemon.config import TTTConfig
from livemon.errors import LivemonError
from livemon.io import procs
from livemon.live.finished import FinishedGames
from livemon.live.messages import GameInfo, TTTRating
from livemon.live.pgn import pgn_date, white_score
from livemon.rating.ttt_params import TTTParams

if TYPE_CHECKING:  # the fit's module compiles numba kernels: imported where a fit runs, not at the monitor's start
    from livemon.rating.ttt import TTTFit

log = logging.getLogger(__name__)
_PR_SET_PDEATHSIG = 1


def _round_number(info: GameInfo) -> float:
    m = re.match(r"\s*(\d+)", info.round or "")
    return float(m.group(1)) if m else 0.0


def run_ttt(
    params: TTTParams,
    white: Sequence[str],
    black: Sequence[str],
    times: Sequence[object],
    scores: Sequence[float],
    unit: str,
    priors: dict[str, tuple[float, float]],
    previous: TTTFit | None,
) -> TTTFit:
    """Fit (or refresh) the whole list; the priors of every player are those given, warm or cold."""
    from livemon.rating.ttt import fit, make_games, refresh
    n_old = len(previous.games) if previous is not None else 0
    if (previous is not None and previous.params == params and 0 < n_old <= len(white)
            and _prefix_of(previous, white, black, scores)):
        new = make_games(list(white[n_old:]), list(black[n_old:]), list(times[n_old:]), list(scores[n_old:]), unit=unit)
        return refresh(previous, new, priors=priors)
    games = make_games(list(white), list(black), list(times), list(scores), unit=unit)
    return fit(games, params, priors=priors)


@dataclass(frozen=True, slots=True)
class _Batch:
    """Games sent to the worker: the whole list (``start`` 0) or those after the first ``start``."""

    start: int
    white: list[str]
    black: list[str]
    times: list[object]
    scores: list[float]
    priors: dict[str, tuple[float, float]]  # whole list: every player's; else the players new to the fit


@dataclass(frozen=True, slots=True)
class _Reply:
    """What the worker sends back: the players to re-publish, not the fit (see :func:`_worker_refresh`)."""

    games: int
    moved: dict[str, tuple[float, float]]
    log_evidence: float
    sweeps: int
    incremental: bool


class _WorkerState:
    """The worker process's fit and what it last reported of each player (module global, one per process)."""

    fit: TTTFit | None = None
    reported: dict[str, tuple[float, float]] = {}


def _worker_refresh(params: TTTParams, unit: str, batch: _Batch, seed: TTTFit | None, tolerance: float) -> _Reply | None:
    """In the worker: add a batch to the fit it keeps; ``None`` when the batch does not continue it
    (the parent then sends the whole list).

    The reply lists the players of the batch's games and every player whose
    mean or sd moved by more than ``tolerance`` since it was last reported,
    so that a refresh costs the monitor what it changed, not the event's
    size. A whole list starts the reports afresh (every player).
    """
    from livemon.rating.ttt import make_games, refresh
    state = _WorkerState
    if batch.start:
        if state.fit is None or len(state.fit.games) != batch.start or state.fit.params != params:
            return None
        new = make_games(batch.white, batch.black, batch.times, batch.scores, unit=unit)
        state.fit = refresh(state.fit, new, priors=batch.priors)
    else:
        state.fit = run_ttt(params, batch.white, batch.black, batch.times, batch.scores, unit, batch.priors,
                            seed if seed is not None else state.fit)
        state.reported = {}
    latest = state.fit.latest()
    moved: dict[str, tuple[float, float]] = {}
    reported = state.reported
    for name in (*batch.white, *batch.black):
        moved[name] = latest[name]
    for label, (mu, sigma) in latest.items():
        was = reported.get(str(label))
        if was is None or abs(mu - was[0]) > tolerance or abs(sigma - was[1]) > tolerance:
            moved[str(label)] = (mu, sigma)
    reported.update(moved)
    fit_ = state.fit
    return _Reply(len(fit_.games), moved, fit_.log_evidence, fit_.sweeps, fit_.incremental)


def _worker_state() -> bytes | None:
    """In the worker: its fit, pickled (for the store)."""
    return pickle.dumps(_WorkerState.fit) if _WorkerState.fit is not None else None


def _worker_forget() -> None:
    """In the worker: drop the fit (the next whole list is fitted cold)."""
    _WorkerState.fit = None
    _WorkerState.reported = {}


def _prefix_of(previous: TTTFit, white: Sequence[str], black: Sequence[str], scores: Sequence[float]) -> bool:
    g = previous.games
    n = len(g)
    labels = g.labels
    return (
        [str(labels[i]) for i in g.white] == list(white[:n])
        and [str(labels[i]) for i in g.black] == list(black[:n])
        and np.array_equal(g.score, np.asarray(scores[:n]))
    )


class WorkerLost(LivemonError):
    """The TTT worker process died under a refresh (a signal from outside, the OOM killer)."""


def _worker_init(watch: Connection | None, pdeathsig: bool) -> None:
    """In the worker: ignore Ctrl-C and SIGTERM (they reach the whole process group — a terminal, systemd,
    ``kill -- -pgid`` — and a fit killed under the monitor's feet is a ``BrokenProcessPool`` traceback in its
    log; the monitor stops the worker itself), and die with the parent (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if pdeathsig and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl: the pipe still works
            pass
    if watch is not None:
        threading.Thread(target=_watch_parent, args=(watch,), name="parent watch", daemon=True).start()


def _watch_parent(watch: Connection) -> None:
    """Block on the parent's pipe; end of file means the parent is gone: exit at once."""
    try:
        while True:
            watch.recv_bytes()
    except (EOFError, OSError):
        os._exit(0)


REPORT_ELO = 0.05
"""A player's rating is returned again once its mean or sd moved by more than this (Elo; the wire shows 0.1)."""


def _named(name: str | None) -> bool:
    return name is not None and name.strip() not in ("", "?")


class TTTJob:
    """Owns the worker process and the players' latest ratings; see the module docstring."""

    def __init__(self, cfg: TTTConfig, *, pdeathsig: bool = True):
        self.cfg = cfg
        self.params = cfg.params
        self.latest: dict[str, TTTRating] = {}
        self.games = 0
        """Games in the worker's fit after the last refresh."""
        self.log_evidence: float | None = None
        self.sweeps: int | None = None
        self.incremental = False
        """Whether the last refresh swept only what its new games moved."""
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._lifeline: Connection | None = None
        self._pdeathsig = pdeathsig
        self._skipped: set[str] = set()
        self._seed: TTTFit | None = None  # a stored fit, sent with the first whole list
        self._fitted = 0
        """Games in the worker's fit as this side sent them (the next batch's ``start``)."""
        self._follow: tuple[FinishedGames, int, int] | None = None
        """The list the last refresh read, its revision and its length then (it goes on growing while
        the worker fits: what a refresh took is what it held when read)."""
        self._priors: dict[str, tuple[float, float]] = {}
        self._counts: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._context = procs.context(__name__)

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            watch, self._lifeline = multiprocessing.Pipe(duplex=False)
            self._executor = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=self._context, initializer=_worker_init, initargs=(watch, self._pdeathsig))
        return self._executor

    def worker_pids(self) -> list[int]:
        """Process ids of the live worker (empty before the first refresh)."""
        procs = getattr(self._executor, "_processes", None) or {}
        return [p.pid for p in procs.values() if p.pid is not None]

    def restore(self, state: bytes | None) -> bool:
        """Continue from a fit stored by :meth:`state_bytes` (e.g. before a restart); False if unusable.

        The next refresh continues from it when its games are the first of the
        finished list, else fits afresh; an unreadable state is one log line.
        """
        if not state:
            return False
        try:
            restored = pickle.loads(state)
        except Exception as exc:  # a store from another version: not fatal, the first refresh fits afresh
            log.warning("TTT: stored fit not usable (%s); the first refresh fits afresh", exc)
            return False
        from livemon.rating.ttt import TTTFit
        if not isinstance(restored, TTTFit):
            log.warning("TTT: stored fit not usable (a %s); the first refresh fits afresh", type(restored).__name__)
            return False
        self._seed = restored
        self._fitted, self._follow = 0, None
        return True

    def forget(self) -> None:
        """Make the next refresh a cold fit of every finished game (benchmarks: the longest refresh)."""
        self._seed = None
        self._fitted, self._follow = 0, None
        if self._executor is not None:
            self._executor.submit(_worker_forget).result()

    async def refresh(self, finished: FinishedGames) -> list[TTTRating]:
        """Fit the finished games; returns the ratings that changed (all of them at the first refresh).

        When ``finished`` is the list of the last refresh with games appended
        since (the usual case: games just finished), only the new games travel
        to the worker, which keeps the fit and sweeps what they move; a player
        is returned when they played one of them or their rating moved by more
        than :data:`REPORT_ELO` since it was last returned. A revised list (a
        corrected result, a withdrawn game), another list or a new worker: the
        whole list is sent. :attr:`latest` holds every player's rating.
        """
        async with self._lock:  # one at a time: two in flight would both continue from the same games
            try:
                return await self._refresh(finished)
            except WorkerLost as exc:  # an expected fault: one line, and the next refresh goes on
                log.warning("%s", exc)
                self._fitted, self._follow = 0, None
                return []

    async def _refresh(self, finished: FinishedGames) -> list[TTTRating]:
        taken = (finished, finished.revision, len(finished))
        follow = self._follow
        reply = None
        if self._fitted and follow is not None and follow[0] is finished and follow[1] == taken[1]:
            # only appended to since the last refresh: its new games continue the fit (O(new games))
            new = self._usable(finished[follow[2]:taken[2]])
            if not new:
                self._follow = taken
                return []
            batch = self._batch(new, self._fitted, self._priors)
            reply = await self._send(batch, None)  # None: the worker lost the fit (a new one)
        if reply is None:
            whole = await self._whole(finished[:taken[2]])
            if whole is None:
                return []
            new, batch, reply = whole
        # what the worker's fit now holds (a failed refresh changed nothing: the next one sends the same games)
        self._fitted += len(new)
        self._follow = taken
        self._priors.update(batch.priors)
        for name in (*batch.white, *batch.black):
            self._counts[name] = self._counts.get(name, 0) + 1
        self.games, self.log_evidence, self.sweeps, self.incremental = (
            reply.games, reply.log_evidence, reply.sweeps, reply.incremental)
        changed = [TTTRating(name, mu, sigma, *self.cfg.to_elo(mu, sigma), self._counts.get(name, 0))
                   for name, (mu, sigma) in reply.moved.items()]
        self.latest.update((r.name, r) for r in changed)
        return changed

    async def _whole(self, finished: list[tuple[GameInfo, str]]) -> tuple[list[tuple[GameInfo, str]], _Batch, _Reply] | None:
        """Send every usable game of ``finished`` (the worker continues from its fit when that is a prefix, else
        fits afresh) and start the players' counts and ratings afresh; None when no game is usable."""
        games = self._usable(finished)
        if not games:
            return None
        batch = await asyncio.to_thread(self._batch, games, 0, {})  # a long event: plain Python over every game
        reply = await self._send(batch, self._seed)
        self._seed = None
        if reply is None:  # pragma: no cover - a whole list always continues or starts the fit
            raise RuntimeError("TTT worker refused a whole list")
        self._fitted, self._priors, self._counts, self.latest = 0, {}, {}, {}
        return games, batch, reply

    async def _send(self, batch: _Batch, seed: TTTFit | None) -> _Reply | None:
        tolerance = REPORT_ELO / self.cfg.elo_per_unit
        pool = self._pool()
        try:  # submitted off the loop: a submit may start the worker (see livemon.io.procs)
            reply = await procs.start(functools.partial(pool.submit, _worker_refresh, self.params,
                                                        self.cfg.time_unit, batch, seed, tolerance))
            return await asyncio.wrap_future(reply)
        except concurrent.futures.process.BrokenProcessPool:  # at the submit, or while it ran
            self.close()  # the next refresh starts a new worker, with the whole list
            raise WorkerLost("TTT: the worker process died (killed from outside?); "
                             "the next refresh starts a new one and fits every finished game again") from None

    def _batch(self, games: Sequence[tuple[GameInfo, str]], start: int,
               known: dict[str, tuple[float, float]]) -> _Batch:
        """``games``, to follow the first ``start`` of the fit, and the priors of players not ``known`` to it
        yet (a player's first rating tag, as in ``livemon fit``)."""
        priors: dict[str, tuple[float, float]] = {}
        for info, _ in games:
            for name, elo in ((info.white, info.white_elo), (info.black, info.black_elo)):
                if elo is not None and elo > 0 and name not in known and name not in priors:
                    priors[name] = self.cfg.elo_prior(elo)
        unit = self.cfg.time_unit
        today = datetime.date.today().isoformat()  # a live game with no year in its Date tag is played today
        times: list[object] = [_round_number(i) if unit == "round" else pgn_date(i.date) or today for i, _ in games]
        return _Batch(start, [i.white for i, _ in games], [i.black for i, _ in games], times,
                      [white_score(r) or 0.0 for _, r in games], priors)

    def _usable(self, finished: Sequence[tuple[GameInfo, str]]) -> list[tuple[GameInfo, str]]:
        """The games with two named, different players and a decisive or drawn result; one log line per other."""
        out = []
        for info, result in finished:
            if _named(info.white) and _named(info.black) and info.white != info.black and white_score(result) is not None:
                out.append((info, result))
            elif info.game_id not in self._skipped:
                self._skipped.add(info.game_id)
                log.warning("TTT: game %s skipped: players %r and %r are not two named players",
                            info.game_id, info.white, info.black)
        return out

    async def state_bytes(self) -> bytes | None:
        """The worker's fit, pickled there (for the store; :meth:`restore` reads it back); a restored fit not
        yet sent to the worker as it was read."""
        if self._seed is not None or self._executor is None:
            return pickle.dumps(self._seed) if self._seed is not None else None
        return await asyncio.get_running_loop().run_in_executor(self._executor, _worker_state)

    def report_json(self) -> str:
        """The fit as the store keeps it (``export --json``'s ``ttt``): the model, its evidence, each player's rating."""
        return json.dumps(
            {
                "model": self.params.model,
                "log_evidence": self.log_evidence,
                "sweeps": self.sweeps,
                "players": {n: _rating_row(r) for n, r in sorted(self.latest.items())},
            }
        )

    def close(self) -> None:
        """Stop the worker now: a fit still running is dropped (the last finished one is stored), so neither
        the monitor's stop nor the interpreter's exit (which joins the pool) waits for it."""
        if self._executor is not None:
            pids = self.worker_pids()
            self._executor.shutdown(wait=False, cancel_futures=True)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self._executor = None
        if self._lifeline is not None:
            self._lifeline.close()  # the worker sees end of file and exits, should shutdown not reach it
            self._lifeline = None


def _rating_row(rating: TTTRating) -> dict[str, object]:
    """A player's TTT rating in the stored report: its fields (not ``ts``: no publication of it)."""
    return {f.name: getattr(rating, f.name) for f in dataclasses.fields(rating) if f.name != "ts"}
