"""The engine analyses of the calibration games, exported once and read back without an engine.

Engine time is the scarce resource of this project: every position of the
calibration games analysed under a profile is exported here once, compactly, so
that no later run searches it again. The export is one gzipped JSON line per
game::

    {"file": "A10_prague_masters_2022.pgn", "index": 3, "part": "test",
     "a": [[31, [["e2e4", 31], ["d2d4", 25], ...], 12], null, ...]}

``a[j]`` is the analysis of the position after ply ``j`` (0 = the start) as
livemon's :class:`PositionAnalysis` stores it — best score (White's view, cp,
mates at ±3900), the MultiPV candidates with their scores, the depth reached —
or ``null`` for a position valued by rule (mate, stalemate, draw). The first line
is a header ``{"format": "livemon analyses 1", "profile": ..., "games": ...}``.
The games themselves are read from the calibration collection (``$LIVEMON_CALIBRATION_GAMES``, file and
1-based index); the split into fit and held-back games is
``bench/calibration_split.py``'s.

Reading back (:func:`load`) rebuilds each ply exactly as livemon scores it
(:func:`livemon.live.analysis.scored_ply`), so a bench measures the numbers the
product shows.

Usage::

    python bench/calibration_data.py export --store cal.sqlite [--store cal2.sqlite ...] \
        [--profile "Stockfish 15.1 depth=14 multipv=4"] [--out bench/data/calibration_d14.jsonl.gz]
    python bench/calibration_data.py export --store cal_d12_extra.sqlite --skip bench/data/calibration_d12.jsonl.gz \
        --out bench/data/calibration_d12_extra.jsonl.gz     # only the games not in the first export
    python bench/calibration_data.py export --store rapid.sqlite --rapid --out bench/data/calibration_rapid_d12.jsonl.gz
    python bench/calibration_data.py export --store hb0.sqlite --store hb1.sqlite --held-back \
        --skip bench/data/calibration_d12.jsonl.gz ... --out bench/data/calibration_d12_heldback2.jsonl.gz
    python bench/calibration_data.py export-event --store rr.sqlite --event "BBDDNRR 2025" \
        --pgn tests/data/broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn --out bench/data/broadcast2025_rr_d12.jsonl.gz
    python bench/calibration_data.py summary [EXPORT]

Several stores (e.g. one per analysing process) are merged: a position may be in
any of them. Stores are opened read-only (``mode=ro``); copy a store that is still
being written first (``sqlite3 SRC ".backup DST"``).
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_split import elo, game_chunks, part, read_all  # noqa: E402

from livemon.io.engine import PositionAnalysis, position_key  # noqa: E402
from livemon.live.analysis import position_value, scored_ply  # noqa: E402
from livemon.live.rules import needs_search  # noqa: E402
from livemon.live.estimator import ScoredPly  # noqa: E402
from livemon.live.pgn import rating_date, scaled_ratings  # noqa: E402

RATINGS = os.environ.get("LIVEMON_BENCH_RATINGS", "today")
"""How the benches read the games' rating tags: ``today`` (the default: on today's FIDE scale by each game's
date, as livemon reads them, :mod:`livemon.rating.scale`) or ``published`` (as tagged, for comparison)."""
if RATINGS not in ("today", "published"):
    raise SystemExit(f"LIVEMON_BENCH_RATINGS: today or published, not {RATINGS!r}")


def ratings(h: chess.pgn.Headers) -> tuple[int | None, int | None]:
    """A game's (WhiteElo, BlackElo) as the benches read them (:data:`RATINGS`)."""
    if RATINGS == "published":
        return elo(h, "WhiteElo"), elo(h, "BlackElo")
    return scaled_ratings(h)[0]

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "bench" / "data" / "calibration_d12.jsonl.gz"
PROFILE = "Stockfish 15.1 depth=12 multipv=4"


@dataclass
class GameData:
    """One analysed calibration game: its tags and every ply as livemon scores it."""

    file: str
    index: int
    part: str  # "fit", "test" or "rapid" (the rapid files: never fitted)
    event: str
    white: str
    black: str
    white_elo: int | None
    black_elo: int | None
    white_id: str
    black_id: str
    result: str
    plies: list[ScoredPly]
    played: datetime.date | None = None  # the game's date (Date, else UTCDate, else EventDate)

    def player(self, white: bool) -> tuple[str, int | None]:
        """A stable player key (FIDE id when tagged, else the name) and the Elo tag."""
        if white:
            return (self.white_id or self.white), self.white_elo
        return (self.black_id or self.black), self.black_elo


def _pgn_index() -> dict[tuple[str, int], str]:
    return {(name, i): text for name, i, text, _, _ in read_all()}


class MergedStores:
    """Several stores read-only as one cache of analyses (the first store holding a position wins)."""

    def __init__(self, paths: Sequence[str]):
        import sqlite3

        self.dbs = [sqlite3.connect(f"file:{Path(p).resolve()}?mode=ro", uri=True) for p in paths]

    def get_analyses(self, positions: Iterable[str], profile: str) -> dict[str, PositionAnalysis]:
        keys = list(dict.fromkeys(positions))
        found: dict[str, PositionAnalysis] = {}
        for db in self.dbs:
            want = [k for k in keys if k not in found]
            for start in range(0, len(want), 500):
                chunk = want[start:start + 500]
                marks = ",".join("?" * len(chunk))
                for position, text in db.execute(
                        f"SELECT position, candidates FROM analyses WHERE profile = ? AND position IN ({marks})",
                        (profile, *chunk)):
                    found.setdefault(position, PositionAnalysis.from_json(text))
        return found

    def close(self) -> None:
        for db in self.dbs:
            db.close()


def profile_of(path: Path) -> str:
    """The engine profile named in an export's header line."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return str(json.loads(f.readline())["profile"])


def exported(paths: Sequence[Path]) -> set[tuple[str, int]]:
    """(file, index) of the games already in these exports."""
    out: set[tuple[str, int]] = set()
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            next(f)
            out |= {(r["file"], r["index"]) for r in map(json.loads, f)}
    return out


def _rows(game: chess.pgn.Game, store: MergedStores, profile: str) -> list | None:
    """A game's export row ``a`` (each position's analysis, ``None`` for one valued by rule), or None when the
    stores lack one of its positions (or it has none to search)."""
    board = game.board()
    boards = [board.copy(stack=False)]
    for move in game.mainline_moves():
        board.push(move)
        boards.append(board.copy(stack=False))
    wanted = {position_key(b): b for b in boards if needs_search(b)}
    got = store.get_analyses(wanted, profile)
    if len(got) < len(wanted) or not wanted:
        return None
    rows = []
    for b in boards:
        a = got.get(position_key(b)) if needs_search(b) else None
        rows.append(None if a is None else [a.score, [list(c) for c in a.candidates], a.depth])
    return rows


def export(store_paths: Sequence[str], out: Path, profile: str = PROFILE, skip: Sequence[Path] = (),
           rapid: bool = False, held_back: bool = False) -> None:
    """Write every calibration game whose positions the stores (merged) hold entirely under ``profile``
    (but those already in the exports ``skip``: an export beside them holds only the new games); ``rapid``:
    the rapid files' games instead (part ``rapid``: in neither part of the split, never fitted); ``held_back``:
    only the held-back games (a short fit game whose positions the stores happen to hold stays out)."""
    if isinstance(store_paths, str):
        store_paths = [store_paths]
    done = exported(skip)
    n = 0
    store = MergedStores(store_paths)
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        games = read_all()
        f.write(json.dumps({"format": "livemon analyses 1", "profile": profile,
                            "source": "the calibration collection", "split": "bench/calibration_split.py"}) + "\n")
        for name, index, text, headers, _ in games:
            where = part(headers.get("Event", ""), name)
            if rapid:
                where = "rapid" if where is None else None
            if where is None or (name, index) in done or (held_back and where != "test"):
                continue
            rows = _rows(chess.pgn.read_game(io.StringIO(text)), store, profile)
            if rows is None:
                continue
            f.write(json.dumps({"file": name, "index": index, "part": where, "a": rows}, separators=(",", ":")) + "\n")
            n += 1
    store.close()
    if n == 0:
        print(f"no calibration game complete under {profile!r} in {', '.join(store_paths)}")
    print(f"{n} games -> {out} ({out.stat().st_size / 1e6:.2f} MB)")


def pgn_games(path: Path) -> list[tuple[int, str]]:
    """(1-based index, text) of each game of a PGN file of the repository (an event outside the collection),
    numbered as :func:`calibration_split.read_all` numbers the collection's."""
    return [(i, chunk.strip() + "\n\n") for i, chunk in enumerate(game_chunks(path.read_text(encoding="utf-8")), 1)
            if chunk.strip()]


def event_export(path: Path) -> tuple[Path, str] | None:
    """An export of an event outside the collection (:func:`export_event`): its PGN and the event's name, from its
    header; None for an export of the collection's games."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return _outside(json.loads(f.readline()))


def _outside(header: dict[str, object]) -> tuple[Path, str] | None:
    """The PGN and event an export's header names (:func:`event_export`), None for the collection's."""
    return (REPO / str(header["pgn"]), str(header["event"])) if "pgn" in header else None


def export_event(store_paths: Sequence[str], pgn: Path, event: str, out: Path, profile: str = PROFILE) -> None:
    """Write every game of ``pgn`` (a file of the repository: an event outside the calibration collection, held
    back: part ``test``, never fitted) whose positions the stores hold entirely, under the one ``event`` name (a
    broadcast's Event tags may name each game)."""
    source = pgn.resolve().relative_to(REPO).as_posix()
    store = MergedStores(store_paths)
    n = 0
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"format": "livemon analyses 1", "profile": profile, "source": source, "pgn": source,
                            "event": event, "split": "held back: never fitted"}) + "\n")
        for index, text in pgn_games(pgn):
            rows = _rows(chess.pgn.read_game(io.StringIO(text)), store, profile)
            if rows is not None:
                f.write(json.dumps({"file": pgn.name, "index": index, "part": "test", "a": rows},
                                   separators=(",", ":")) + "\n")
                n += 1
    store.close()
    print(f"{n} games -> {out} ({out.stat().st_size / 1e6:.2f} MB)")


def load(path: Path = DEFAULT, folder: Path | None = None) -> Iterator[GameData]:
    """Every exported game, its plies scored as livemon scores them (no engine). An export of an event outside the
    collection names its PGN (``pgn``, a path in the repository) and its event (``event``) in its header."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = json.loads(f.readline())
        assert header.get("format") == "livemon analyses 1", header
        files = {json.loads(line)["file"] for line in f}  # read (and parse) only the files the export holds
    source = _outside(header)  # the header read above
    event = None if source is None else source[1]
    if source is None:
        texts = {(name, i): text for name, i, text, _, _ in read_all(folder, files)}
    else:
        texts = {(source[0].name, i): text for i, text in pgn_games(source[0])}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            row = json.loads(line)
            game = chess.pgn.read_game(io.StringIO(texts[(row["file"], row["index"])]))
            h = game.headers
            analyses = [None if a is None else PositionAnalysis(int(a[0]), tuple((m, int(s)) for m, s in a[1]), int(a[2]))
                        for a in row["a"]]
            board = game.board()
            plies: list[ScoredPly] = []
            for ply, node in enumerate(game.mainline(), start=1):
                before_board = board.copy(stack=False)
                board.push(node.move)
                a_before, a_after = analyses[ply - 1], analyses[ply]
                before = position_value(before_board, a_before)
                after = position_value(board, a_after)
                assert after is not None
                plies.append(scored_ply(f"{row['file']}#{row['index']}", ply, before_board, node.move,
                                        before, after, a_before))
            yield GameData(row["file"], row["index"], row["part"], event or h.get("Event", ""), h.get("White", ""),
                           h.get("Black", ""), *ratings(h), h.get("WhiteFideId", ""),
                           h.get("BlackFideId", ""), h.get("Result", "*"), plies, rating_date(h)[0])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--store", required=True, action="append", help="a store (repeat to merge several)")
    e.add_argument("--out", type=Path, default=DEFAULT)
    e.add_argument("--profile", default=PROFILE)
    e.add_argument("--skip", type=Path, action="append", default=[], help="leave out the games of this export")
    e.add_argument("--rapid", action="store_true", help="the rapid files' games (part rapid, never fitted)")
    e.add_argument("--held-back", action="store_true", help="only the held-back games (part test)")
    v = sub.add_parser("export-event", help="the games of a PGN of the repository outside the collection, held back")
    v.add_argument("--store", required=True, action="append", help="a store (repeat to merge several)")
    v.add_argument("--pgn", type=Path, required=True, help="the event's PGN, in the repository")
    v.add_argument("--event", required=True, help="the event's name (a broadcast's Event tags may name each game)")
    v.add_argument("--out", type=Path, required=True)
    v.add_argument("--profile", default=PROFILE)
    s = sub.add_parser("summary")
    s.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    args = p.parse_args(argv)
    if args.cmd == "export":
        export(args.store, args.out, args.profile, args.skip, args.rapid, args.held_back)
    elif args.cmd == "export-event":
        export_event(args.store, args.pgn, args.event, args.out, args.profile)
    else:
        games = list(load(args.path))
        for where in ("fit", "test"):
            gs = [g for g in games if g.part == where]
            print(f"{where}: {len(gs)} games, {sum(len(g.plies) for g in gs)} plies, "
                  f"{len({g.event for g in gs})} events")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
