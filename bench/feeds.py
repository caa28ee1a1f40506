"""The feeds' own cost: moves/s through ``GameTracker`` with and without the append-only path.

500 real games (clocks in comments, ``tests/data``; ``--data`` for other folders) are followed live the
way the round bench feeds them: every game starts at a random ply of its first half, then each read
advances ``--changed`` random games by one ply (220: 1,000 boards at 20x polled every second, half of
them in this text). Two shapes, both timed inside the tracker only (the texts are built before):

- **poll**: the whole round as one multi-game PGN per read (``update_text``, the ``http`` and
  ``file`` feeds): unchanged games cost a split, their tags and a hash; changed games a parse;
- **stream**: only the changed games' whole PGN, one ``update_chunk`` each (the lichess round stream).

The reference is the same tracker with ``append_only=False`` (every changed game parsed whole by
python-chess from its first SAN), fed the same texts in the same process; both must give the same
messages (checked).

    python bench/feeds.py [--games 500] [--changed 220] [--moves 20000]
    PYTHONPATH=../main python bench/feeds.py --as-is     # another checkout's tracker as it is (before/after)
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import chess.pgn

import livemon.live.tracker as feeds_core
from livemon.io.feeds import GameTracker
from livemon.live.messages import MoveEvent

REPO = Path(__file__).resolve().parent.parent
DATA = [REPO / "tests" / "data"]


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


@dataclass
class Board:
    """One game as a broadcast writes it: its tags, then one token (move number, SAN, clock comment) per ply."""

    head: str
    tokens: list[str]
    ply: int = 0

    def text(self) -> str:
        return self.head + " ".join(self.tokens[: self.ply]) + (" *\n\n" if self.ply else "*\n\n")


def boards(n: int, min_plies: int = 40, data: list[Path] | None = None) -> list[Board]:
    """``n`` real games of at least ``min_plies`` plies from the PGN files of ``data`` (default tests/data; the same
    game again under another GameURL if short of games)."""
    data = data or DATA
    games: list[chess.pgn.Game] = []
    seen: set[tuple[str, ...]] = set()
    for folder in data:
        for path in sorted(folder.glob("*.pgn")):
            with open(path, encoding="utf-8", errors="replace") as f:
                while (g := chess.pgn.read_game(f)) is not None:
                    moves = tuple(m.uci() for m in g.mainline_moves())
                    if not g.errors and "FEN" not in g.headers and len(moves) >= min_plies and moves not in seen:
                        seen.add(moves)
                        games.append(g)
    if not games:
        raise SystemExit("no games found in " + ", ".join(map(str, data)))
    out = []
    for i in range(n):
        g = games[i % len(games)]
        tags = [("Event", "Feeds bench"), ("Site", "https://feeds.bench.invalid"), ("Round", "1"),
                ("White", f"{g.headers.get('White', '?')} b{i}"), ("Black", f"{g.headers.get('Black', '?')} b{i}"),
                ("Result", "*"), ("GameURL", f"https://feeds.bench.invalid/game/{i}")]
        head = "".join(f'[{k} "{v}"]\n' for k, v in tags) + "\n"
        tokens = []
        board = g.board()
        for node in g.mainline():
            number = f"{board.fullmove_number}. " if board.turn == chess.WHITE else f"{board.fullmove_number}... "
            clock = node.clock()
            comment = f" {{ [%clk {int(clock // 3600)}:{int(clock % 3600 // 60):02d}:{int(clock % 60):02d}] }}" if clock is not None else ""
            tokens.append(number + board.san(node.move) + comment)
            board.push(node.move)
        out.append(Board(head, tokens))
    return out


def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    logging.getLogger("chess.pgn").setLevel(logging.CRITICAL)  # broken games of the data folders are skipped
    games = boards(args.games, data=[Path(d) for d in args.data] if args.data else None)
    for b in games:
        b.ply = rng.randint(0, len(b.tokens) // 2)
    print(f"{load()} (before)")
    print(f"{len(games)} real games, {sum(len(b.tokens) for b in games) / len(games):.0f} plies on average, "
          f"each starting at a random ply of its first half; {args.changed} games advance one ply per read")
    # the reads: built before anything is timed
    reads: list[tuple[str, list[str]]] = []  # (the whole round's text, the changed games' texts)
    first = "".join(b.text() for b in games)
    moves = 0
    while moves < args.moves:
        live = [b for b in games if b.ply < len(b.tokens)]
        if not live:
            break
        changed = rng.sample(live, min(args.changed, len(live)))
        for b in changed:
            b.ply += 1
        moves += len(changed)
        reads.append(("".join(b.text() for b in games), [b.text() for b in changed]))
    size = sum(len(t) for t, _ in reads) / len(reads)
    print(f"{len(reads)} reads, {moves} new plies; the round's text {size / 1e6:.2f} MB on average")
    for shape in ("poll", "stream"):
        timings = {}
        outputs = {}
        for append_only in ((None, None) if args.as_is else (False, True, False, True)):  # interleaved: the same warm-up
            tracker = (GameTracker("bench", withdraw_after=None) if append_only is None
                       else GameTracker("bench", append_only=append_only, withdraw_after=None))
            tracker.update_text(first, final=False)
            out: list[object] = []
            t0 = time.perf_counter()
            if shape == "poll":
                for text, _ in reads:
                    out.extend(tracker.update_text(text, final=False, view="round"))
            else:
                for _, chunks in reads:
                    for chunk in chunks:
                        out.extend(tracker.update_chunk(chunk, complete=None))
            took = time.perf_counter() - t0
            timings.setdefault(append_only, []).append(took)
            if append_only in outputs:
                continue
            outputs[append_only] = out
            n = sum(isinstance(m, MoveEvent) for m in out)
            assert n == moves, (n, moves)
        best = {k: min(v) for k, v in timings.items()}
        if args.as_is:
            print(f"{shape:6s}: {moves / best[None]:8.0f} moves/s ({1000 * best[None] / len(reads):.1f} ms per read), "
                  f"the tracker of {feeds_core.__file__} as it is; {load()}")
            continue
        assert outputs[True] == outputs[False], "the fast path gave other messages than the full parse"
        ref, fast = moves / best[False], moves / best[True]
        per_read = {k: 1000 * v / len(reads) for k, v in best.items()}
        print(f"{shape:6s}: full parse {ref:8.0f} moves/s ({per_read[False]:.1f} ms per read), "
              f"append-only {fast:8.0f} moves/s ({per_read[True]:.1f} ms per read): x{fast / ref:.1f}, same messages; "
              f"{load()}")
    print(f"{load()} (after)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--changed", type=int, default=220, help="games that gain a ply per read")
    ap.add_argument("--moves", type=int, default=20000, help="new plies in all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", nargs="*", help="folders of PGN files (default: tests/data)")
    ap.add_argument("--as-is", action="store_true", help="time the tracker as it is, no reference (e.g. another checkout's)")
    run(ap.parse_args(argv))


if __name__ == "__main__":
    main()
