"""The longest piece of work a timer tick or a TTT refresh puts between two event-loop turns, at a round's size.

A round of ``--boards`` games (two players each: 2,000 players at 1,000 boards), every position valued from
a made-up cache (no engine), then one more move in every game, so every player moved since the last tick (a
busy round). Then, through the runner, one unit of work per step (what the monitor does once a turn's
budget is spent):

- a :class:`~livemon.live.runner.Tick`: Algorithm 1 on the pairs that moved, Algorithm 3's engine strength
  (no strength given: every perceived Elo moves), Algorithm 2, and every moved player's estimate;
- a :class:`~livemon.live.runner.Ratings` of every player (a cold TTT fit).

Printed per event: the units, the longest and median unit (CPU ms: the loop's stall), and the whole work.

    python bench/tick_stall.py [--boards 1000] [--plies 30]
"""

from __future__ import annotations

import argparse
import gc
import inspect
import random
import statistics
import time
import zlib

import chess

from livemon.live.core import LiveCore
from livemon.live.messages import GameInfo, MoveEvent, TTTRating
from livemon.live.runner import Ratings, Runner, Tick
from livemon.live.values import PositionAnalysis

PROFILE = "Bench 1.0 depth=8 multipv=3"


def analysis_of(board: chess.Board) -> PositionAnalysis:
    """A made-up MultiPV analysis that depends on the position alone."""
    epd = board.epd()
    score = zlib.crc32(epd.encode()) % 61 - 30
    sign = 1 if board.turn == chess.WHITE else -1
    moves = sorted(board.legal_moves, key=lambda m: zlib.crc32(f"{epd} {m.uci()}".encode()))[:3]
    return PositionAnalysis(score, tuple((m.uci(), score - sign * 9 * k) for k, m in enumerate(moves)), 8, 1000)


def cache(board: chess.Board) -> tuple[PositionAnalysis, str]:
    return analysis_of(board), PROFILE


def games(boards: int, plies: int) -> dict[str, list[MoveEvent]]:
    """Each game's moves: random legal ones, reproducible."""
    out: dict[str, list[MoveEvent]] = {}
    for g in range(boards):
        rng, board, moves = random.Random(g), chess.Board(), []
        for ply in range(1, plies + 1):
            legal = sorted(board.legal_moves, key=chess.Move.uci)
            if not legal:
                break
            move = rng.choice(legal)
            moves.append(MoveEvent(f"g{g}", ply, move.uci(), board.san(move), board.fen()))
            board.push(move)
        out[f"g{g}"] = moves
    return out


def units(runner: Runner, event: object) -> list[float]:
    """CPU seconds of each step while the runner works ``event`` through one unit a step (the process's CPU time:
    the machine's other processes left out; the garbage collector held off: its pauses are no unit's own)."""
    runner.put(event)  # type: ignore[arg-type]
    took: list[float] = []
    gc.collect()
    gc.disable()
    try:
        while runner.busy:
            t = time.process_time()
            runner.step(stop=lambda: True)
            took.append(time.process_time() - t)
    finally:
        gc.enable()
    return took


def show(name: str, took: list[float]) -> None:
    print(f"{name}: {len(took)} units, longest {1e3 * max(took):.1f} ms (unit {took.index(max(took)) + 1}), "
          f"median {1e3 * statistics.median(took):.2f} ms, whole {1e3 * sum(took):.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=1000)
    ap.add_argument("--plies", type=int, default=30)
    args = ap.parse_args()
    core = LiveCore(profile=PROFILE, coalesce=True)
    core.configure(PROFILE, cache=cache)
    kw: dict[str, object] = {}
    if "batch" in inspect.signature(Runner).parameters:  # a runner that slices a tick into batches
        from livemon.app.turns import PAIR_BATCH, TICK_BATCH  # type: ignore[attr-defined]
        kw["batch"] = (TICK_BATCH, PAIR_BATCH)
    runner = Runner(core, **kw)  # type: ignore[arg-type]
    played = games(args.boards, args.plies + 1)
    t = time.perf_counter()
    for g, (gid, moves) in enumerate(played.items()):
        runner.put(GameInfo(gid, white=f"W{g}", black=f"B{g}", white_elo=1800 + g % 900, black_elo=1850 + g % 850,
                            event="Bench"))
        runner.put_all(moves[:-1])
    runner.run_until_idle()
    runner.put(Tick())
    runner.run_until_idle()
    for moves in played.values():  # one more move in every game: every player moved since the tick
        runner.put(moves[-1])
    runner.run_until_idle()
    print(f"{args.boards} boards, {len(core.estimator.players)} players, {args.plies + 1} plies a game "
          f"(set up in {time.perf_counter() - t:.0f} s)")
    show("tick", units(runner, Tick()))
    ratings = tuple(TTTRating(name, 0.1 * (k % 7), 1.0, 2000.0 + k % 500, 80.0, 1)
                    for k, name in enumerate(sorted(core.estimator.players)))
    show("TTT refresh of every player", units(runner, Ratings(ratings)))


if __name__ == "__main__":
    main()
