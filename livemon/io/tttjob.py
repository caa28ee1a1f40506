"""The background TrueSkill Through Time refresh of the live monitor.

Fits run in a worker process (spawned once, reused), so that the event loop
never waits on them, not even for the GIL. Each refresh sends the finished
results and the previous fit; the worker continues from the previous EP
messages when the old games are a prefix of the new list (the usual case: a
game just finished), else fits afresh.

Scale: the ``[ttt]`` table's Elo mapping (``elo_at_mu0``, ``elo_per_unit``,
default β = 1 is 200 Elo, the performance sd of Elo's normal model); rating
tags always seed the priors here (``TTTConfig.elo_prior``), as in ``fit
--rating-priors``, for every player at every refresh, warm or cold.

A finished game without two named, different players is skipped with one
log line (once per game). The worker process dies with its parent: on Linux
the kernel sends it SIGKILL when the parent dies (``prctl(PR_SET_PDEATHSIG)``),
and everywhere it watches a pipe whose other end only the parent holds and
exits when that pipe reaches end of file. The fit is stored after every
refresh (:meth:`TTTJob.state_bytes`) and read back at start
(:meth:`TTTJob.restore`), so the first refresh after a restart continues
from it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import datetime
import json
import logging
import multiprocessing
import os
import pickle
import re
import signal
import sys
import threading
from multiprocessing.connection import Connection
from typing import Sequence

import numpy as np

from livemon.config import TTTConfig
from livemon.live.messages import GameInfo, TTTRating
from livemon.live.pgn import pgn_date, white_score
from livemon.rating.ttt import TTTFit, TTTParams, fit, make_games, refresh

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
    """Fit (or refresh) in the worker process; the priors of every player are those given, warm or cold."""
    n_old = len(previous.games) if previous is not None else 0
    if (previous is not None and previous.params == params and 0 < n_old <= len(white)
            and _prefix_of(previous, white, black, scores)):
        new = make_games(list(white[n_old:]), list(black[n_old:]), list(times[n_old:]), list(scores[n_old:]), unit=unit)
        return refresh(previous, new, priors=priors)
    games = make_games(list(white), list(black), list(times), list(scores), unit=unit)
    return fit(games, params, priors=priors)


def _prefix_of(previous: TTTFit, white: Sequence[str], black: Sequence[str], scores: Sequence[float]) -> bool:
    g = previous.games
    n = len(g)
    labels = g.labels
    return (
        [str(labels[i]) for i in g.white] == list(white[:n])
        and [str(labels[i]) for i in g.black] == list(black[:n])
        and np.array_equal(g.score, np.asarray(scores[:n]))
    )


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


def _named(name: str | None) -> bool:
    return name is not None and name.strip() not in ("", "?")


class TTTJob:
    """Owns the worker process and the latest fit; see the module docstring."""

    def __init__(self, cfg: TTTConfig, *, pdeathsig: bool = True):
        self.cfg = cfg
        self.params = cfg.params
        self.fit: TTTFit | None = None
        self.latest: dict[str, TTTRating] = {}
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._lifeline: Connection | None = None
        self._pdeathsig = pdeathsig
        self._skipped: set[str] = set()

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        # The worker is started by the thread that first refreshes (the event loop's, for the life of
        # the monitor): Linux's parent-death signal follows that thread, the pipe the whole process.
        if self._executor is None:
            watch, self._lifeline = multiprocessing.Pipe(duplex=False)
            self._executor = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init,
                initargs=(watch, self._pdeathsig))
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
        if not isinstance(restored, TTTFit):
            log.warning("TTT: stored fit not usable (a %s); the first refresh fits afresh", type(restored).__name__)
            return False
        self.fit = restored
        return True

    async def refresh(self, finished: Sequence[tuple[GameInfo, str]]) -> list[TTTRating]:
        """Refit on all finished games; returns every player's latest rating.

        Preparing the arguments and reading the fit back are plain Python over
        every game: they run in a thread, so the event loop gets the GIL back
        every switch interval instead of waiting for the whole pass.
        """
        finished = self._usable(finished)
        if not finished:
            return list(self.latest.values())
        args = await asyncio.to_thread(self._arguments, finished)
        loop = asyncio.get_running_loop()
        self.fit = await loop.run_in_executor(self._pool(), run_ttt, self.params, *args, self.fit)
        self.latest = await asyncio.to_thread(self._ratings, finished, self.fit)
        return list(self.latest.values())

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

    def _arguments(
        self, finished: Sequence[tuple[GameInfo, str]]
    ) -> tuple[list[str], list[str], list[object], list[float], str, dict[str, tuple[float, float]]]:
        priors: dict[str, tuple[float, float]] = {}
        for info, _ in finished:  # a player's first rating tag, as in `livemon fit`
            for name, elo in ((info.white, info.white_elo), (info.black, info.black_elo)):
                if elo is not None and elo > 0 and name not in priors:
                    priors[name] = self.cfg.elo_prior(elo)
        unit = self.cfg.time_unit
        today = datetime.date.today().isoformat()  # a live game with no year in its Date tag is played today
        times: list[object] = [_round_number(i) if unit == "round" else pgn_date(i.date) or today for i, _ in finished]
        return ([i.white for i, _ in finished], [i.black for i, _ in finished], times,
                [white_score(r) or 0.0 for _, r in finished], unit, priors)

    def _ratings(self, finished: Sequence[tuple[GameInfo, str]], fit: TTTFit) -> dict[str, TTTRating]:
        counts: dict[str, int] = {}
        for info, _ in finished:
            counts[info.white] = counts.get(info.white, 0) + 1
            counts[info.black] = counts.get(info.black, 0) + 1
        return {
            str(name): TTTRating(str(name), mu, sigma, *self.cfg.to_elo(mu, sigma), counts.get(str(name), 0))
            for name, (mu, sigma) in fit.latest().items()
        }

    def state_bytes(self) -> bytes | None:
        return pickle.dumps(self.fit) if self.fit is not None else None

    def report_json(self) -> str:
        return json.dumps(
            {
                "model": self.params.model,
                "log_evidence": None if self.fit is None else self.fit.log_evidence,
                "sweeps": None if self.fit is None else self.fit.sweeps,
                "players": {n: r.to_dict() for n, r in sorted(self.latest.items())},
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
