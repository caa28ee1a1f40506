"""The background TrueSkill Through Time refresh of the live monitor.

Fits run in a worker process (spawned once, reused), so that the event loop
never waits on them, not even for the GIL. Each refresh sends the finished
results and the previous fit; the worker continues from the previous EP
messages when the old games are a prefix of the new list (the usual case: a
game just finished), else fits afresh.

Scale: the ``[ttt]`` table's Elo mapping (``elo_at_mu0``, ``elo_per_unit``,
default β = 1 is 200 Elo, the performance sd of Elo's normal model); rating
tags always seed the priors here (``TTTConfig.elo_prior``), as in ``fit
--rating-priors``.
"""

from __future__ import annotations

import asyncio
import datetime
import concurrent.futures
import json
import multiprocessing
import pickle
import re
import signal
from typing import Sequence

import numpy as np

from livemon.config import TTTConfig
from livemon.live.messages import GameInfo, TTTRating
from livemon.live.pgn import pgn_date, white_score
from livemon.rating.ttt import TTTFit, TTTParams, fit, make_games, refresh



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
    """Fit (or warm-refresh) in the worker process."""
    games = make_games(list(white), list(black), list(times), list(scores), unit=unit)
    n_old = len(previous.games) if previous is not None else 0
    if previous is not None and 0 < n_old < len(games) and _prefix_of(previous, white, black, scores):
        new = make_games(list(white[n_old:]), list(black[n_old:]), list(times[n_old:]), list(scores[n_old:]), unit=unit)
        return refresh(previous, new)
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


def _ignore_sigint() -> None:
    """In the worker: Ctrl-C reaches the whole process group; the monitor stops the worker itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class TTTJob:
    """Owns the worker process and the latest fit; see the module docstring."""

    def __init__(self, cfg: TTTConfig):
        self.cfg = cfg
        self.params = cfg.params()
        self.fit: TTTFit | None = None
        self.latest: dict[str, TTTRating] = {}
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_sigint)
        return self._executor

    async def refresh(self, finished: Sequence[tuple[GameInfo, str]]) -> list[TTTRating]:
        """Refit on all finished games; returns every player's latest rating.

        Preparing the arguments and reading the fit back are plain Python over
        every game: they run in a thread, so the event loop gets the GIL back
        every switch interval instead of waiting for the whole pass.
        """
        args = await asyncio.to_thread(self._arguments, finished)
        loop = asyncio.get_running_loop()
        self.fit = await loop.run_in_executor(self._pool(), run_ttt, self.params, *args, self.fit)
        self.latest = await asyncio.to_thread(self._ratings, finished, self.fit)
        return list(self.latest.values())

    def _arguments(
        self, finished: Sequence[tuple[GameInfo, str]]
    ) -> tuple[list[str], list[str], list[object], list[float], str, dict[str, tuple[float, float]]]:
        priors: dict[str, tuple[float, float]] = {}
        for info, _ in finished:  # a player's first rating tag, as in `livemon fit`
            for name, elo in ((info.white, info.white_elo), (info.black, info.black_elo)):
                if elo is not None and name not in priors:
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
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
