"""The real games the forecast's game model is fitted and measured on, read without an engine.

* **Results** (pre-game model, the event replays): every game of the calibration collection (not in the
  repository: the folder ``--games`` or ``$LIVEMON_CALIBRATION_GAMES`` names, its ``A*.pgn``) by its tags.
  The split is bench/calibration_split.py's first, by event: its ``FIRST_TEST_EVENTS`` (Prague Masters 2022,
  Charlotte Spring IMB 2022, Ekrem Galijatovic Memorial, 1st Guwahati Open 2022) are held back from every fit;
  the rapid files (A03, A14) are in neither part. The forecast was fitted before the second held-back set of the
  move models was drawn: its events are fit data here.
* **Evaluations** (in-game model): the committed engine exports ``bench/data/calibration_d12*.jsonl.gz``
  (Stockfish 15.1 depth 12, the same split), every position's best score.
* **Clocks** (``tests/data``): the 2025 open
  (``broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn``, rounds 5-8 analysed in
  ``bench/data/open2025_d14_analyses.jsonl.gz``) fits the clock term; the 2025 round robin
  (``broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn``, lichess's ``[%eval]`` and ``[%clk]``) is held back to
  measure it.
"""

from __future__ import annotations

import datetime
import gzip
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn
from calibration_split import FIRST_TEST_EVENTS as TEST_EVENTS
from calibration_split import RAPID_FILES

from livemon.live.pgn import fide_id, rating_date
from livemon.rating.forecast import material
from livemon.rating.scale import to_current_scale

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "tests" / "data"
"""The real games that travel with the repository (the 2025 open and round robin, London 2011)."""
OPEN2025 = "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
RR2025 = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}

_TAG = re.compile(r'^\[(\w+) "(.*)"\]\s*$', re.M)


@dataclass
class Game:
    file: str
    index: int
    event: str
    round: str
    date: datetime.date | None
    white: str
    black: str
    white_elo: int | None
    black_elo: int | None
    result: float | None
    moves: bool
    text: str

    @property
    def part(self) -> str | None:
        if self.file.startswith(RAPID_FILES):
            return None
        return "test" if self.event in TEST_EVENTS else "fit"

    def rating(self, white: bool) -> int | None:
        r = self.white_elo if white else self.black_elo
        return None if r is None else to_current_scale(r, self.date)


def _elo(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def split_games(text: str) -> list[str]:
    chunks = ["[Event" + c for c in text.split("\n\n[Event")]
    chunks[0] = chunks[0][len("[Event"):]
    return [c for c in chunks if c.strip()]


def parse(file: str, index: int, chunk: str) -> Game:
    tags = dict(_TAG.findall(chunk))
    body = chunk.split("\n\n", 1)[1] if "\n\n" in chunk.strip() else ""
    key = {c: fide_id(tags.get(f"{c}FideId")) or tags.get(c, "?") for c in ("White", "Black")}
    return Game(file, index, tags.get("Event", "?"), tags.get("Round", "?"), rating_date(tags)[0],
                key["White"], key["Black"], _elo(tags.get("WhiteElo")), _elo(tags.get("BlackElo")),
                RESULTS.get(tags.get("Result", "*")), bool(re.search(r"\b1\.", body)), chunk)


def calibration_games(folder: Path) -> list[Game]:
    out = []
    for path in sorted(folder.glob("A*.pgn")):
        for i, chunk in enumerate(split_games(path.read_text(encoding="ascii")), 1):
            out.append(parse(path.name, i, chunk))
    return out


def real_games(path: Path) -> list[Game]:
    return [parse(path.name, i, c) for i, c in enumerate(split_games(path.read_text(encoding="utf-8")), 1)]


@dataclass
class Positions:
    """One row per position of games with evaluations; each game's rows weigh 1 in all."""

    white: list[float]
    black: list[float]
    cp: list[float]
    ply: list[float]
    mat: list[float]
    clock: list[float]
    result: list[float]
    weight: list[float]
    game: list[int]

    @classmethod
    def empty(cls) -> Positions:
        return cls([], [], [], [], [], [], [], [], [])

    def add_game(self, gid: int, rw: float, rb: float, result: float, rows: list[tuple[int, int, int, float]]) -> None:
        if not rows:
            return
        w = 1.0 / len(rows)
        for ply, cp, mat, clock in rows:
            self.white.append(rw)
            self.black.append(rb)
            self.cp.append(cp)
            self.ply.append(ply)
            self.mat.append(mat)
            self.clock.append(clock)
            self.result.append(result)
            self.weight.append(w)
            self.game.append(gid)


def _value(board: chess.Board, score: int | None) -> int:
    if score is not None:
        return score
    if board.is_checkmate():
        return -3900 if board.turn == chess.WHITE else 3900
    return 0


def export_positions(games: list[Game], exports: list[Path], part: str) -> Positions:
    """Positions of the exported calibration games of ``part`` (each game once, the first export holding it)."""
    by_key = {(g.file, g.index): g for g in games}
    out = Positions.empty()
    seen: set[tuple[str, int]] = set()
    for path in exports:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            next(f)
            for line in f:
                row = json.loads(line)
                key = (row["file"], row["index"])
                g = by_key.get(key)
                if key in seen or g is None or g.part != part or g.result is None:
                    continue
                rw, rb = g.rating(True), g.rating(False)
                if rw is None or rb is None:
                    continue
                seen.add(key)
                game = chess.pgn.read_game(io.StringIO(g.text))
                board = game.board()
                rows = []
                for ply, move in enumerate(game.mainline_moves(), 1):
                    board.push(move)
                    a = row["a"][ply] if ply < len(row["a"]) else None
                    rows.append((ply, _value(board, None if a is None else int(a[0])), material(board.fen()), 0.0))
                out.add_game(len(seen), rw, rb, g.result, rows)
    return out


def _clock_edge(tw: float | None, tb: float | None) -> float:
    return 0.0 if tw is None or tb is None else (tw - tb) / (tw + tb + 60.0)


def broadcast_positions(games: list[Game], analyses: dict[str, int] | None) -> Positions:
    """Positions of broadcast games: evaluations from ``analyses`` (FEN's first four fields -> White's cp) or,
    without it, the games' own ``[%eval]`` comments; clocks from ``[%clk]``."""
    out = Positions.empty()
    for gid, g in enumerate(games):
        rw, rb = g.rating(True), g.rating(False)
        if rw is None or rb is None or g.result is None or not g.moves:
            continue
        game = chess.pgn.read_game(io.StringIO(g.text))
        board = game.board()
        clocks: list[float | None] = [None, None]
        rows = []
        complete = True
        for ply, node in enumerate(game.mainline(), 1):
            mover = board.turn
            board.push(node.move)
            clk = node.clock()
            clocks[0 if mover == chess.WHITE else 1] = clk
            if analyses is not None:
                key = " ".join(board.fen().split(" ")[:4])
                score = analyses.get(key)
                if score is None and not board.is_game_over():
                    complete = False
                    break
            else:
                ev = node.eval()
                score = None if ev is None else ev.white().score(mate_score=3900)
                if score is None and not board.is_game_over():
                    continue
            rows.append((ply, _value(board, score), material(board.fen()), _clock_edge(clocks[0], clocks[1])))
        if complete:
            out.add_game(gid, rw, rb, g.result, rows)
    return out


def open2025_analyses(path: Path) -> dict[str, int]:
    out = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            row = json.loads(line)
            out[row["p"]] = int(row["a"]["score"])
    return out
