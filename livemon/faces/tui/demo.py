"""A hub filled from real games, so the screen can be seen and tested without a monitor.

The games are a real over-the-board event (a lichess broadcast export with
``[%eval]`` and ``[%clk]`` on every move, bundled in livemon/data, see its SOURCES.md):
rounds 1–3 finished, round 4 cut part-way so its boards are "live". The moves
go through the monitor's own :class:`~livemon.live.runner.Runner` and core (in-memory ports), valued
from the ``[%eval]`` comments, so the boards and the players table are what
the monitor would publish (and the figures ``livemon analyse`` gives).
Everything is deterministic: no wall clock, no engine. One extra board
(Nepomniachtchi–Ding, no comments) shows a game whose positions still await
analysis (its requests are never answered).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

from livemon.faces.hub import Hub
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse, Preview
from livemon.live.messages import GameInfo, MonitorStatus, Outgoing
from livemon.live.runner import Answered, Runner, Tick
from livemon.live.pgn import game_info, split_games
from livemon.live.tracker import GameTracker, Snapshot, parse_chunk
from livemon.live.values import COMMENTS_PROFILE

def real_data() -> Path:
    """Where the demo's real games are: ``$LIVEMON_DEMO_DATA`` (a folder with files of the names below), else the
    games bundled with livemon (livemon/data)."""
    return Path(os.environ.get("LIVEMON_DEMO_DATA", Path(__file__).resolve().parents[2] / "data"))


EVENT_PGN = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
PENDING_PGN = "wcc2023_game1.pgn"


@dataclass
class Demo:
    """The messages already published and those a replay would publish next (in order)."""

    hub: Hub
    pending: list[Outgoing]


def _games(name: str) -> list[tuple[int, Snapshot]]:
    """The good games of a file and their places in it, each read as the live feeds read it (parse_chunk)."""
    text = (real_data() / name).read_text(encoding="utf-8")
    out = []
    for index, (chunk, _separated) in enumerate(split_games(text), 1):
        snap = parse_chunk(chunk, True)
        if isinstance(snap, Snapshot):
            out.append((index, snap))
    return out


class _NoEngine:
    """The demo's engine port: there is none. A position without an ``[%eval]`` before it is answered "no engine"
    at once while ``answering`` (its plies are not scored, the others are), else never (it stays awaited)."""

    def __init__(self) -> None:
        self.runner: Runner | None = None
        self.answering = True

    def submit(self, request: Analyse) -> None:
        if self.answering and self.runner is not None:
            self.runner.put(Answered(request, None, error="no engine in the demo"))

    def preview(self, request: Preview) -> None:
        return None


class _Board:
    """One game being replayed ply by ply through the runner: the messages are the game tracker's (the one
    conversion of a PGN game into messages, as a feed of it would send them)."""

    def __init__(self, snap: Snapshot, game_id: str) -> None:
        self.game_id = game_id
        self.snap = snap
        self.tracker = GameTracker()
        self.info: GameInfo = game_info(snap.headers, game_id)
        self.ply = 0

    def step(self, runner: Runner) -> None:
        """Play the next ply."""
        self.ply += 1
        done = self.ply == len(self.snap.plies)
        headers = dict(self.snap.headers) if done else {**self.snap.headers, "Result": "*"}
        for msg in self.tracker.update(dataclasses.replace(self.snap, headers=headers, plies=self.snap.plies[:self.ply]),
                                       game_id=self.game_id):
            if not isinstance(msg, GameInfo):  # the tags were handed to the core when the board was set up
                runner.put(msg)
        runner.run_until_idle()


def _interleave(boards: list[_Board], stops: list[int], runner: Runner) -> None:
    """Ply 1 of every board, then ply 2, ... each board up to its stop (as a round is broadcast)."""
    for _ in range(max(stops, default=0)):
        for b, stop in zip(boards, stops):
            if b.ply < stop:
                b.step(runner)


def demo(live_fraction: float = 0.6) -> Demo:
    """Rounds 1–3 finished, round 4 at ``live_fraction`` of each game, plus one unanalysed board."""
    core = LiveCore(profile=COMMENTS_PROFILE)
    engine = _NoEngine()
    published_: list[Outgoing] = []
    runner = engine.runner = Runner(core, engine=engine, publish=published_.append)
    games = _games(EVENT_PGN)
    pending_boards: list[_Board] = []
    for rnd in ("1", "2", "3", "4"):
        boards = []
        for index, snap in games:
            if snap.headers.get("Round", "").split(".")[0] == rnd:
                b = _Board(snap, f"{EVENT_PGN}#{index}")
                runner.put(b.info)
                boards.append(b)
        runner.run_until_idle()
        live = rnd == "4"
        stops = [int(len(b.snap.plies) * live_fraction) if live else len(b.snap.plies) for b in boards]
        _interleave(boards, stops, runner)
        if live:
            pending_boards += boards
    # the monitor's timer: Algorithm 3 gives the engine strength, every estimate is published again
    runner.put(Tick())
    runner.run_until_idle()
    wcc = _Board(_games(PENDING_PGN)[0][1], f"{PENDING_PGN}#1")
    runner.put(wcc.info)
    engine.answering = False
    _interleave([wcc], [30], runner)
    engine.answering = True
    plies = core.counters.moves
    published_.append(
        MonitorStatus(
            feeds=(
                {"name": "broadcast", "type": "replay", "state": "running", "games": 20, "plies": plies - 30, "errors": 0},
                {"name": "wcc2023", "type": "file", "state": "running", "games": 1, "plies": 30, "errors": 0},
            ),
            backlog=30,
            engine_profile=COMMENTS_PROFILE,
            engines=1,
            lag_seconds=1.5,
            moves=plies,
            games=21,
        )
    )
    hub = Hub()
    for msg in published_:
        hub.publish(msg)
    shown = len(published_)
    _interleave(pending_boards, [len(b.snap.plies) for b in pending_boards], runner)
    return Demo(hub, published_[shown:])


def demo_hub() -> Hub:
    """A hub holding the demo's snapshot (see :func:`demo`)."""
    return demo().hub
