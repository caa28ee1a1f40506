"""The engine budget of a round (``livemon plan``): a real measurement of the configured profile, and
the arithmetic of positions per second against boards and their pace (the command's docstring says
what each figure means)."""

from __future__ import annotations

import math
import os
import time
from typing import Any


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


DEMO_SHARE = 0.6
"""The share of the engines' measured positions/s the bundled demo replay may ask for: the rest absorbs what a
measurement of a few positions misses (a busier machine later, positions harder than the ones measured), so the
engines stay ahead and the oldest position waiting stays a few seconds old."""


def demo_pace(search_seconds: float, engines: int, share: float = DEMO_SHARE) -> float:
    """Plies per second the bundled replay may play on engines that search a position in ``search_seconds``:
    ``share`` × ``engines`` / ``search_seconds`` (each ply is one new position to search).

    >>> demo_pace(0.5, 1)
    1.2
    >>> round(demo_pace(0.75, 2, share=0.5), 3)
    1.333
    """
    if search_seconds <= 0 or engines < 1:
        raise ValueError(f"search time {search_seconds} s and engines {engines}: both must be positive")
    return share * engines / search_seconds


async def measure(cfg: Any, positions: int) -> tuple[float, str, int]:
    """Mean seconds per search of ``positions`` real positions with the configured engine; its profile name."""
    from importlib import resources

    import chess

    from livemon.io.engine import UciEngine
    from livemon.live.rules import needs_search
    from livemon.live.reader import read_pgn
    from livemon.live.splitter import split_games

    boards: list[chess.Board] = []
    text = (resources.files("livemon") / "data" / "london_2011.pgn").read_text(encoding="utf-8")
    for chunk, _ in split_games(text):
        game = read_pgn(chunk)
        if len(boards) >= positions:
            break
        if game is None or game.error is not None:
            continue
        board = game.start.copy(stack=False)
        for ply, p in enumerate(game.plies, start=1):
            board.push(chess.Move.from_uci(p.uci))
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


def plan(cfg: Any, boards: int, move_seconds: float, positions: int, workers: int | None) -> dict[str, Any]:
    """Measure the configured engine on ``positions`` real positions and size a round of ``boards`` boards:
    :func:`budget`'s figures with the profile, the positions measured, the machine's load and the mode
    (``mqtt`` with ``workers`` workers of ``[engine] processes`` engines each, else the embedded pool).
    An engine that cannot start raises the :class:`~livemon.errors.LivemonError` that says so."""
    import asyncio

    seconds, profile, searched = asyncio.run(measure(cfg, positions))
    per = cfg.engine.processes
    mqtt = cfg.bus.mode == "mqtt" or workers is not None
    engines = per * (workers or 1) if mqtt else per
    b = budget(seconds, engines, boards, move_seconds, per)
    b.update(profile=profile, measured_positions=searched, load=os.getloadavg()[0], mode="mqtt" if mqtt else "embedded",
             engines_per_worker=per, workers=(workers or 1) if mqtt else None)
    return b
