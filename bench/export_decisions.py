"""Export the analysed decisions of rated players as gzipped JSON lines (for bench/fairplay.py).

Usage::

    python bench/export_decisions.py --store ../cache/default.sqlite \\
        [PGN ...] [--out bench/data/open2025_decisions.jsonl.gz]

Reads the games (default: the 504-game open of ``tests/data``) through
the batch path of ``livemon calibrate`` — the games whose every position the
store holds under the engine profile of the config (default: Stockfish 15.1
depth=12 multipv=4), no search is ever run — and writes one line per position
that screening uses ([screening] book_moves and eval_bound of the config; forced
moves never count) of a player with a rating tag::

    {"player": "Name, First", "elo": 2104, "game": 17, "ply": 23, "values": [0.31, 0.25, -0.12, -0.4], "played": 1}

``game``: the game's 1-based index in its PGN file; ``ply``: 1 = White's first
move; ``values``: the candidate moves' values in pawns from the mover's view
(the engine's MultiPV lines, best first, plus the played move's value when it was
not among them); ``played``: the index in ``values`` of the move played. A line is
exactly a :class:`livemon.rating.agent.Decision` (``Decision(tuple(values), played)``)
with its player, rating and place. The first line is a header:
``{"format": "livemon decisions 1", "profile": ..., "book_moves": ..., "eval_bound": ..., "games": ...,
"rounds": [...], "source": [...]}`` (``rounds``: the round numbers of the exported games, from
their ``Round`` tags, "5.1" counting as round 5).

The committed exports: ``bench/data/open2025_decisions.jsonl.gz`` (depth 12, all nine
rounds of the open) and ``bench/data/open2025_decisions_d14.jsonl.gz`` (depth 14: the 102
games of rounds 7-8 complete when the depth-14 analysis of rounds 5-8 was cut off; exported
from rounds 5-8 concatenated into one PGN, so that ``game`` is unique, and the analysing
processes' stores merged into one, with ``--config`` giving ``[engine] depth = 14``;
docs/calibration.md).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import sys
from pathlib import Path

from livemon.app.batch import analyse_games, read_files
from livemon.app.calibrate import fully_cached, screened_moves
from livemon.config import load_config
from livemon.io.store import Store

REPO = Path(__file__).resolve().parent.parent
OPEN = REPO / "tests" / "data" / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pgn", nargs="*", default=[str(OPEN)], help="PGN files (default: the 2025 open)")
    p.add_argument("--store", required=True, help="SQLite store holding the analyses (read; never searched)")
    p.add_argument("--config", help="config.toml (engine profile, [screening] filter)")
    p.add_argument("--out", default=str(REPO / "bench" / "data" / "open2025_decisions.jsonl.gz"))
    args = p.parse_args(argv)

    def report(line: str) -> None:
        print(f"export: {line}", file=sys.stderr, flush=True)

    cfg = load_config(args.config)
    cfg.analysis.skip_moves = 0
    planned = read_files(args.pgn, report, use_comments=False)
    with Store(args.store) as store:
        planned = asyncio.run(fully_cached(planned, cfg, store, report))
        result = asyncio.run(analyse_games(planned, cfg, store, report))
    if result.searches:
        report(f"warning: {result.searches} searches were run")
    moves, excluded = screened_moves(result.estimator, cfg.screening)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    rounds = sorted({r.split(".")[0] for g in planned if (r := g.info.round) not in ("?", "-", "")},
                    key=lambda r: (not r.isdigit(), int(r) if r.isdigit() else 0, r))
    header = {"format": "livemon decisions 1", "profile": result.profile, "book_moves": cfg.screening.book_moves,
              "eval_bound": cfg.screening.eval_bound, "games": len(planned), "rounds": rounds,
              "source": [Path(x).name for x in args.pgn], "excluded": dict(excluded)}
    index = {g.game_id: g.index for g in planned}
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for m in moves:
            line = {"player": m.player, "elo": m.elo, "game": index[m.game_id], "ply": m.ply,
                    "values": [round(v, 2) for v in m.decision.values], "played": m.decision.played}
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    size = Path(args.out).stat().st_size
    players = len({m.player for m in moves})
    print(f"{len(moves)} positions of {players} rated players from {len(planned)} games -> {args.out} ({size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
