"""A plan's games analysed by many engines at once, straight into an export (no store, no collection needed).

``bench/calibration_split.py plan-… OUTDIR`` writes ``OUTDIR/plan.jsonl`` (each game's file, index, part and PGN, in
the plan's order). This runs livemon's own engine adapter (:class:`livemon.io.engine.UciEngine`, the profile of
``bench/calibration_data.py``: depth 12, MultiPV 4, one thread, 32 MiB of hash per engine) on ``--jobs`` engines
in parallel, one game per engine at a time in the plan's order, and writes every game it finished as an export
(``bench/calibration_data.py``'s format, games in the collection's order). It stops taking games after
``--seconds``, so that a machine lent for a fixed time returns what it did; the games in flight then finish.

Each finished game is also appended at once to ``OUT.partial`` (one JSON line), so that a run killed early keeps
its games: ``--merge`` makes the export from that file alone.

Usage::

    python bench/calibration_split.py plan-olympiad /tmp/olympiad --skip bench/data/calibration_d12*.jsonl.gz
    python bench/analyse_games.py /tmp/olympiad/plan.jsonl --out bench/data/calibration_d12_extra8.jsonl.gz \
        --jobs 16 --seconds 520 --engine /usr/games/stockfish
    python bench/analyse_games.py /tmp/olympiad/plan.jsonl --out bench/data/calibration_d12_extra8.jsonl.gz --merge

Only ``chess`` and livemon's engine adapter are imported, so it runs on a machine with python-chess and an engine.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import io
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import chess
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from livemon.config import EngineConfig  # noqa: E402
from livemon.io.engine import UciEngine  # noqa: E402
from livemon.live.rules import needs_search  # noqa: E402
from livemon.live.values import position_key  # noqa: E402

PROFILE = "Stockfish 15.1 depth=12 multipv=4"  # bench/calibration_data.py's (not imported: it needs numpy)

_engine_path = ""
_deadline = 0.0


def _start(engine_path: str, deadline: float) -> None:
    global _engine_path, _deadline
    _engine_path, _deadline = engine_path, deadline


async def _analyse(text: str) -> list | None:
    """A game's export row ``a`` (each position's analysis; None for one valued by rule, as the export has them),
    or None when the game has no position to search."""
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    engine = await UciEngine.open(EngineConfig(path=_engine_path))
    try:
        if engine.profile.name != PROFILE:
            raise SystemExit(f"the engine's profile is {engine.profile.name!r}, the exports' {PROFILE!r}")
        board = game.board()
        boards = [board.copy(stack=False)]
        for move in game.mainline_moves():
            board.push(move)
            boards.append(board.copy(stack=False))
        seen: dict[object, list] = {}  # a repeated position reads its one analysis, as from a store
        rows: list = []
        for b in boards:
            if not needs_search(b):
                rows.append(None)
                continue
            key = position_key(b)
            if key not in seen:
                a = await engine.analyse(b)
                seen[key] = [a.score, [list(c) for c in a.candidates], a.depth]
            rows.append(seen[key])
    finally:
        await engine.close()
    return rows if seen else None


def _work(game: dict) -> tuple[dict, list | None, float] | None:
    if time.time() > _deadline:
        return None
    t = time.perf_counter()
    return game, asyncio.run(_analyse(game["pgn"])), time.perf_counter() - t


def _export(done: dict[tuple[str, int], dict], out: Path) -> None:
    """The export of the games ``done`` (file and index: the collection's order)."""
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"format": "livemon analyses 1", "profile": PROFILE,
                            "source": "the calibration collection", "split": "bench/calibration_split.py"}) + "\n")
        for key in sorted(done):
            f.write(json.dumps(done[key], separators=(",", ":")) + "\n")
    print(f"{len(done)} games -> {out} ({out.stat().st_size / 1e6:.2f} MB)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plan", type=Path, help="a plan's plan.jsonl (bench/calibration_split.py)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seconds", type=float, default=float("inf"), help="take no game after this many seconds")
    p.add_argument("--engine", default=EngineConfig.path)
    p.add_argument("--merge", action="store_true", help="only write the export from OUT.partial")
    args = p.parse_args(argv)
    plan = [json.loads(line) for line in args.plan.read_text(encoding="ascii").splitlines()]
    planned = {(g["file"], g["index"]) for g in plan}
    partial = args.out.with_name(args.out.name + ".partial")
    done: dict[tuple[str, int], dict] = {}
    if partial.exists():
        for line in partial.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done[(row["file"], row["index"])] = row
    if not args.merge:
        todo = [g for g in plan if (g["file"], g["index"]) not in done]
        start = time.time()
        plies = 0
        with partial.open("a", encoding="utf-8") as sink, multiprocessing.Pool(
                args.jobs, _start, (args.engine, start + args.seconds)) as pool:
            for result in pool.imap(_work, todo):
                if result is None:
                    continue
                game, rows, took = result
                if rows is None:
                    continue
                row = {"file": game["file"], "index": game["index"], "part": game["part"], "a": rows}
                sink.write(json.dumps(row, separators=(",", ":")) + "\n")
                sink.flush()
                done[(game["file"], game["index"])] = row
                plies += len(rows) - 1
                elapsed = time.time() - start
                print(f"{len(done)} games, {plies} plies in {elapsed:.0f} s ({plies / elapsed:.1f} plies/s); "
                      f"{game['file']}#{game['index']} {len(rows) - 1} plies in {took:.0f} s", flush=True)
    assert done.keys() <= planned, "OUT.partial holds games of another plan"
    _export(done, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
