"""``bench/analyse_games.py``: a plan's games analysed by several engines at once into an export, with the scripted
UCI engine answering as Stockfish 15.1 (the subject is the export, not the search)."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import chess.pgn

from livemon.live.rules import needs_search
from livemon.live.values import position_key
from tests.conftest import REPO, real

if str(REPO / "bench") not in sys.path:  # bench/ is scripts, not a package
    sys.path.insert(0, str(REPO / "bench"))

from analyse_games import PROFILE, main  # noqa: E402
from calibration_data import PROFILE as EXPORTS_PROFILE  # noqa: E402
from calibration_split import game_chunks  # noqa: E402


def _plan(path: Path) -> list[dict]:
    """Two real games of tests/data as a plan names them (file, 1-based index, part, PGN), the second first."""
    src = real("london_chess_classic_2011_twic.pgn")
    chunks = game_chunks(src.read_text(encoding="utf-8"))
    games = [{"file": src.name, "index": i, "part": "fit", "pgn": chunks[i - 1].strip() + "\n\n"} for i in (2, 1)]
    path.write_text("".join(json.dumps(g) + "\n" for g in games), encoding="ascii")
    return games


def _export(path: Path) -> tuple[dict, list[dict]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header, *rows = (json.loads(line) for line in f)
    return header, rows


def test_a_plan_becomes_an_export_each_game_once_resumed_from_what_was_done(tmp_path, fake_stockfish,
                                                                            monkeypatch) -> None:
    log = tmp_path / "searches.log"
    monkeypatch.setenv("FAKE_UCI_LOG", str(log))
    games = _plan(tmp_path / "plan.jsonl")
    out = tmp_path / "extra.jsonl.gz"
    assert PROFILE == EXPORTS_PROFILE  # the exports' profile, checked against the engine's own name
    # no time: no game taken, an empty export (a lent machine's time can run out before the first game)
    assert main([str(tmp_path / "plan.jsonl"), "--out", str(out), "--jobs", "2", "--seconds", "0",
                 "--engine", fake_stockfish]) == 0
    assert _export(out)[1] == [] and not log.exists()
    assert main([str(tmp_path / "plan.jsonl"), "--out", str(out), "--jobs", "2", "--engine", fake_stockfish]) == 0
    header, rows = _export(out)
    assert header == {"format": "livemon analyses 1", "profile": PROFILE, "source": "the calibration collection",
                      "split": "bench/calibration_split.py"}
    assert [(r["file"], r["index"], r["part"]) for r in rows] == [(g["file"], g["index"], "fit") for g in games[::-1]]
    searched = log.read_text().splitlines()
    distinct = 0
    for row, game in zip(rows, games[::-1]):
        board = chess.pgn.read_game(io.StringIO(game["pgn"])).board()  # type: ignore[union-attr]
        boards = [board.copy()]
        for move in chess.pgn.read_game(io.StringIO(game["pgn"])).mainline_moves():  # type: ignore[union-attr]
            board.push(move)
            boards.append(board.copy())
        assert len(row["a"]) == len(boards)
        keys = {position_key(b): a for b, a in zip(boards, row["a"]) if a is not None}
        assert all(a == keys[position_key(b)] for b, a in zip(boards, row["a"]) if a is not None)  # a repeat: one analysis
        distinct += len(keys)
        for b, a in zip(boards, row["a"]):
            assert (a is None) == (not needs_search(b))  # a position valued by rule has no analysis
            if a is not None:  # best score, MultiPV candidates (legal, best first), depth
                score, candidates, depth = a
                assert score == candidates[0][1] and depth == 12 and 1 <= len(candidates) <= 4
                assert all(chess.Move.from_uci(m) in b.legal_moves for m, _ in candidates)
    assert len(searched) == distinct > 100  # each position of a game searched once
    # again: every game is in OUT.partial already, so nothing is searched and the export is the same
    before = out.read_bytes()
    assert main([str(tmp_path / "plan.jsonl"), "--out", str(out), "--jobs", "2", "--engine", fake_stockfish]) == 0
    assert log.read_text().splitlines() == searched
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(before)
