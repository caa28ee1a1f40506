"""``livemon plan --boards N``: how many boards the configured engine profile can follow live, measured.

A dry run before a round: a few real positions (the bundled London 2011 games) are searched
with the configured engine under the configured limit (``[engine]`` depth/nodes, multipv), one
at a time, and their mean search time gives the profile's speed per engine. From it:

- positions/s = engines / mean search time, where engines = ``[engine] processes`` (the
  embedded pool) or ``--workers K`` × processes per worker (``[bus] mode = "mqtt"``);
- every move of a board is one new position: N boards at one move every S seconds ask for
  N / S positions/s; boards followable = positions/s × S;
- the backlog: none when the engines keep up, else it grows by (N / S − positions/s) positions
  a second (printed per hour of play);
- workers to start for N boards (each with the configured processes).

The measured figure holds for this machine with its present load (printed); engines running
side by side on fewer cores than engines share them, so measure with the machine as it will be.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

from livemon.commands import add_store_arguments, config_from_args

DEFAULT_MOVE_SECONDS = 45.0
"""One move per board every 45 s: a classical round's average pace over its first hours."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--boards", type=int, required=True, metavar="N", help="boards of the round")
    p.add_argument("--move-seconds", type=float, default=DEFAULT_MOVE_SECONDS, metavar="S",
                   help=f"seconds between two moves of one board (default {DEFAULT_MOVE_SECONDS:g})")
    p.add_argument("--workers", type=int, metavar="K", help="livemon workers planned (mqtt mode; default 1)")
    p.add_argument("--positions", type=int, default=8, metavar="P", help="real positions searched to measure (default 8)")
    p.add_argument("--json", action="store_true", help="the figures as JSON")
    add_store_arguments(p)


def budget(search_seconds: float, engines: int, boards: int, move_seconds: float,
           engines_per_worker: int | None = None) -> dict[str, Any]:
    """The arithmetic of a round's engine budget (``search_seconds``: mean search time of one position).

    >>> b = budget(0.5, 4, 100, 45.0, engines_per_worker=2)
    >>> b["positions_per_second"], b["boards_followable"], b["demand_per_second"] > 2
    (8.0, 360, True)
    >>> b["backlog_per_hour"], b["workers_needed"]
    (0, 1)
    >>> budget(0.5, 2, 1000, 45.0, 2)["backlog_per_hour"]
    65600
    """
    per_engine = 1.0 / search_seconds
    rate = engines * per_engine
    demand = boards / move_seconds
    per_worker = (engines_per_worker or engines) * per_engine
    return {
        "search_seconds": search_seconds,
        "positions_per_second": rate,
        "engines": engines,
        "boards": boards,
        "move_seconds": move_seconds,
        "demand_per_second": demand,
        "boards_followable": int(rate * move_seconds),
        "backlog_per_hour": max(0, round((demand - rate) * 3600)),
        "workers_needed": max(1, math.ceil(demand / per_worker)),
        "engines_needed": max(1, math.ceil(demand / per_engine)),
    }


async def measure(cfg: Any, positions: int) -> tuple[float, str, int]:
    """Mean seconds per search of ``positions`` real positions with the configured engine; its profile name."""
    import io
    from importlib import resources

    import chess
    import chess.pgn

    from livemon.io.engine import UciEngine
    from livemon.live.analysis import needs_search

    boards: list[chess.Board] = []
    text = (resources.files("livemon") / "data" / "london_2011.pgn").read_text(encoding="utf-8")
    with io.StringIO(text) as f:
        while len(boards) < positions and (game := chess.pgn.read_game(f)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves(), start=1):
                board.push(move)
                if ply in (16, 30, 44) and needs_search(board):
                    boards.append(board.copy(stack=False))
    boards = boards[:positions]
    engine = await UciEngine.open(cfg.engine)
    try:
        await engine.analyse(boards[0])  # warm-up (hash, first-search costs), not counted
        t0 = time.perf_counter()
        for board in boards:
            await engine.analyse(board)
        return (time.perf_counter() - t0) / len(boards), engine.profile.name, len(boards)
    finally:
        await engine.close()


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json

    cfg = config_from_args(args)
    if cfg is None:
        return 2
    if args.boards < 1 or args.move_seconds <= 0 or args.positions < 1 or (args.workers is not None and args.workers < 1):
        print("livemon plan: --boards, --move-seconds, --positions and --workers must be positive", file=sys.stderr)
        return 2
    from livemon.errors import LivemonError

    try:
        seconds, profile, searched = asyncio.run(measure(cfg, args.positions))
    except LivemonError as exc:
        print(f"livemon plan: {exc}", file=sys.stderr)
        return 1
    per = cfg.engine.processes
    mqtt = cfg.bus.mode == "mqtt" or args.workers is not None
    engines = per * (args.workers or 1) if mqtt else per
    b = budget(seconds, engines, args.boards, args.move_seconds, per)
    b.update(profile=profile, measured_positions=searched, load=os.getloadavg()[0], mode="mqtt" if mqtt else "embedded")
    if args.json:
        print(json.dumps(b, indent=1))
        return 0
    where = f"{args.workers or 1} worker(s) x {per} engine(s)" if mqtt else f"{per} embedded engine(s)"
    print(f"profile {profile}: {seconds * 1e3:.0f} ms per position (mean of {searched} real positions, one engine, "
          f"load {b['load']:.2f})")
    print(f"{where}: {b['positions_per_second']:.1f} positions/s -> {b['boards_followable']} boards followable "
          f"at one move per board every {args.move_seconds:g} s")
    if b["backlog_per_hour"]:
        print(f"{args.boards} boards need {b['demand_per_second']:.1f} positions/s: the backlog grows by "
              f"{b['backlog_per_hour']} positions per hour of play")
    else:
        print(f"{args.boards} boards need {b['demand_per_second']:.1f} positions/s: no backlog")
    print(f"for {args.boards} boards start {b['workers_needed']} worker(s) of {per} engine(s) "
          f"({b['engines_needed']} engines in all), or lower the profile's depth/nodes")
    return 0
