"""``replay`` feed: finished games played again as if live (demos, the bundled default, tests).

Games are grouped into rounds by the major part of their ``Round`` tag
(``"3.2"`` is round 3; no round: one group); all boards of a round start
together and their plies interleave by time, as in a real round; the next
round starts when the last game of the previous one ends.

A ply's think time is its ``[%emt]``, else the drop of the mover's
``[%clk]`` since their previous move plus the increment from
``TimeControl`` (``5400+30``), else ``default_delay``. Each wait is the gap to
the next ply divided by ``speed`` and capped at ``max_delay``; ``speed`` 0
means no waiting at all.

``max_rate`` paces the replay to its engines: at most that many plies a
second, whatever the schedule says (each ply is one new position for the
engines to search). The bundled demo sets it from a measurement of this
machine's engines at start (:func:`livemon.app.plan.demo_pace`), so the
engines keep up and the figures on screen are live, not a backlog's. A
machine that gets busier later (a measurement of a few positions cannot see
it) is met by ``behind``: before each ply the replay holds while the engines'
oldest waiting position has waited ``hold_after`` seconds or more.

After a restart the monitor tells the feed which plies it already stored
(:meth:`ReplayFeed.resume`): those are sent again without waiting (the monitor
counts them as duplicates), so the replay goes on where it was instead of
starting over and adding nothing until it catches up.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, Mapping


from livemon.io.feeds.base import BaseFeed
from livemon.live.tracker import BadSnapshot, KeyFunc, Snapshot, parse_chunk
from livemon.live.messages import FeedError, FeedNotice, Message
from livemon.live.pgn import split_games

log = logging.getLogger(__name__)


@dataclass
class _Board:
    snap: Snapshot  # the whole finished game
    times: list[float]  # seconds from the round start at which each ply is played
    gid: str


def round_of(headers: Mapping[str, str]) -> float:
    """The major round number, for grouping and ordering (unknown rounds sort last as one group)."""
    m = re.match(r"\s*(\d+)", headers.get("Round", "") or "")
    return float(m.group(1)) if m else float("inf")


def increment_of(headers: Mapping[str, str]) -> float:
    m = re.match(r"^(?:\d+/)?\d+\+(\d+(?:\.\d+)?)", headers.get("TimeControl", "") or "")
    return float(m.group(1)) if m else 0.0


def think_times(snap: Snapshot, default_delay: float) -> list[float]:
    """Seconds spent on each ply (see module doc)."""
    inc = increment_of(snap.headers)
    last_clock: list[float | None] = [None, None]
    out = []
    for i, ply in enumerate(snap.plies):
        side = i % 2
        t: float | None = ply.emt
        if t is None and ply.clock is not None and last_clock[side] is not None:
            t = max(0.0, last_clock[side] - ply.clock + inc)  # type: ignore[operator]
        if ply.clock is not None:
            last_clock[side] = ply.clock
        out.append(default_delay if t is None else t)
    return out


HOLD_AFTER = 10.0
"""Seconds the engines' oldest waiting position may have waited before a paced replay holds its next ply."""
HOLD_STEP = 0.5
"""Seconds between two looks at the engines while held."""


class ReplayFeed(BaseFeed):
    """Replays the games of ``path`` (a PGN file) once, then finishes."""

    type = "replay"

    def __init__(self, name: str, path: str | Path, speed: float = 1.0, max_delay: float = 10.0,
                 default_delay: float = 1.0, key: KeyFunc | None = None, max_rate: float | None = None,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 behind: Callable[[], float] | None = None, hold_after: float = HOLD_AFTER) -> None:
        super().__init__(name, key)
        self.path = Path(path)
        self.speed = speed
        self.max_delay = max_delay
        self.default_delay = default_delay
        self.max_rate = max_rate  # plies per second at most (None: the schedule alone)
        self._sleep = sleep
        self.behind = behind  # seconds the engines are behind (their oldest position waiting); None: not asked
        self.hold_after = hold_after
        self.held = 0.0  # seconds held for the engines, for tests and the demo's log
        self.slept = 0.0  # total seconds waited, for tests and status
        self.known: dict[str, int] = {}  # plies already stored per game id: replayed without waiting

    def resume(self, known: dict[str, int]) -> None:
        """Skip the waits of the plies already stored (``known``: plies per game id)."""
        self.known = dict(known)

    def _load(self) -> tuple[list[list[_Board]], list[Message]]:
        text = self.path.read_text(encoding="utf-8", errors="replace")
        rounds: dict[float, list[_Board]] = {}
        errors: list[Message] = []
        for index, (chunk, _separated) in enumerate(split_games(text), 1):
            # the live feeds' reading of a game: the DGT end-of-game king moves dropped with a notice
            snap = parse_chunk(chunk, True, f"{self.path.name} game {index}: ")
            if snap is None:
                continue
            if isinstance(snap, BadSnapshot):
                errors.append(FeedError(self.name, snap.error))
                continue
            if snap.note is not None:
                errors.append(FeedNotice(self.name, f"{self.path.name} game {index}: {snap.note}"))
            gid = self.tracker.key_of(snap.headers)
            times, t = [], 0.0
            for dt in think_times(snap, self.default_delay):
                t += dt
                times.append(t)
            rounds.setdefault(round_of(snap.headers), []).append(_Board(snap, times, gid))
        return [rounds[k] for k in sorted(rounds)], errors

    async def run(self) -> AsyncIterator[Message]:
        self.status.state = "running"
        try:
            try:
                rounds, errors = self._load()
            except OSError as exc:
                for m in self._io_error(f"{self.path}: {exc.strerror or exc}", True):
                    yield m
                self.status.state = "finished"
                return
            for m in self._account(errors):
                yield m
            for boards in rounds:
                async for m in self._play_round(boards):
                    yield m
            self.status.state = "finished"
        finally:
            if self.status.state != "finished":
                self.status.state = "stopped"

    async def _play_round(self, boards: list[_Board]) -> AsyncIterator[Message]:
        # every board of the round appears at once, before any move
        for b in boards:
            for m in self._account(self._show(b, 0)):
                yield m
        heap = [(b.times[0], i, 1) for i, b in enumerate(boards) if b.snap.plies]
        heapq.heapify(heap)
        now = 0.0
        while heap:
            t, i, n = heapq.heappop(heap)
            b = boards[i]
            if n > self.known.get(b.gid, 0):  # already played before a restart: no wait
                await self._wait(t - now)
            else:
                await asyncio.sleep(0)
            now = t
            for m in self._account(self._show(b, n)):
                yield m
            if n < len(b.snap.plies):
                heapq.heappush(heap, (b.times[n], i, n + 1))

    def _show(self, b: _Board, n: int) -> list[Message]:
        """The game as known after ``n`` plies: result only with the last ply."""
        done = n == len(b.snap.plies)
        headers = dict(b.snap.headers)
        if not done:
            headers["Result"] = "*"
        return self.tracker.update(dataclasses.replace(b.snap, headers=headers, plies=b.snap.plies[:n], complete=True),
                                   game_id=b.gid)

    def delay(self, seconds: float) -> float:
        """The wait before a ply played ``seconds`` after the previous one: the schedule's (divided by
        ``speed``, capped at ``max_delay``; none at speed 0), and at least ``1 / max_rate``.

        >>> f = ReplayFeed("r", "x.pgn", speed=2.0, max_delay=10.0, max_rate=0.5)
        >>> f.delay(1.0), f.delay(30.0), f.delay(0.0)
        (2.0, 10.0, 2.0)
        >>> ReplayFeed("r", "x.pgn", speed=0).delay(30.0)
        0.0
        """
        delay = 0.0 if self.speed <= 0 else min(max(seconds, 0.0) / self.speed, self.max_delay)
        if self.max_rate:
            delay = max(delay, 1.0 / self.max_rate)
        return delay

    async def _wait(self, seconds: float) -> None:
        while self.behind is not None and self.behind() >= self.hold_after:
            self.held += HOLD_STEP
            await self._sleep(HOLD_STEP)
        delay = self.delay(seconds)
        if delay > 0:
            self.slept += delay
            await self._sleep(delay)
        else:
            await asyncio.sleep(0)  # stay cancellable and fair to other tasks
