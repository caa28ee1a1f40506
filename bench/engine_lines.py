"""What a search costs the process that asks it: the CPU of reading the engine's lines.

A UCI engine deepens and reports as it goes: a depth-12 MultiPV-4 Stockfish search sends ~48 ``info``
lines, each with a principal variation. The process that asks (the monitor with its embedded pool, or a
``livemon worker``) reads them on its event loop. livemon's engine (``io/engine.py``) holds each MultiPV
line's latest report and checks those alone when ``bestmove`` comes, taking each line's first move from
it (python-chess reads the scores, no pv); the reference, in the
same process, is python-chess's own ``analyse``, which reads every line (what livemon would cost if it did
the same, less its checks). Both ask the same Stockfish (one thread, a new game before each search of a
position without its history) for the same positions of a real game; the figure is the asking process's
CPU per position (the engine's own time is not in it), and the answers are compared.

    python bench/engine_lines.py [--depth 12] [--multipv 4] [--positions 40] [--engine PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from livemon.config import EngineConfig
from livemon.io.engine import UciEngine, analysis_board, resolve_engine_path, score_cp

GAME = Path(__file__).resolve().parents[1] / "tests" / "data" / "byrne_fischer_1956_pgnmentor.pgn"


def positions(count: int) -> list[chess.Board]:
    """The first ``count`` positions after a move of the game of the century that are not over."""
    with GAME.open(encoding="utf-8") as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    board, out = game.board(), []
    for move in game.mainline_moves():
        board.push(move)
        if not board.is_game_over():
            out.append(board.copy(stack=False))
    return out[:count]


async def ours(path: str, boards: list[chess.Board], depth: int, multipv: int) -> tuple[float, list[tuple]]:
    engine = await UciEngine.open(EngineConfig(path=path, depth=depth, multipv=multipv, threads=1, hash_mb=16))
    try:
        cpu = time.process_time()
        answers = [await engine.analyse(b) for b in boards]
        cpu = time.process_time() - cpu
    finally:
        await engine.close()
    return cpu, [tuple(a.candidates) for a in answers]


async def reference(path: str, boards: list[chess.Board], depth: int, multipv: int) -> tuple[float, list[tuple]]:
    _, engine = await chess.engine.popen_uci(path)
    try:
        await engine.configure({"Threads": 1, "Hash": 16})
        cpu, answers = time.process_time(), []
        for b in boards:
            infos = await engine.analyse(analysis_board(b), chess.engine.Limit(depth=depth), multipv=multipv,
                                         game=object())
            answers.append(tuple((i["pv"][0].uci(), score_cp(i["score"].white())) for i in infos if i.get("pv")))
        cpu = time.process_time() - cpu
    finally:
        await engine.quit()
    return cpu, answers


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--multipv", type=int, default=4)
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--engine", default=EngineConfig().path, help="the UCI engine (default: livemon's)")
    args = parser.parse_args()
    path = resolve_engine_path(args.engine)
    boards = positions(args.positions)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; {len(boards)} positions, depth {args.depth}, "
          f"MultiPV {args.multipv}")
    ref_cpu, ref_answers = await reference(path, boards, args.depth, args.multipv)
    our_cpu, our_answers = await ours(path, boards, args.depth, args.multipv)
    same = sum(a == b for a, b in zip(our_answers, ref_answers))
    n = len(boards)
    print(f"reference, python-chess reading every line: {1000 * ref_cpu / n:.2f} ms of CPU a position")
    print(f"livemon, the last report of each line, checked: {1000 * our_cpu / n:.2f} ms of CPU a position "
          f"({our_cpu / ref_cpu:.2f}x of the reference)")
    print(f"the same answer (moves and scores of every line): {same} of {n} positions")


if __name__ == "__main__":
    asyncio.run(main())
