"""`livemon analyse` end to end, with the real Stockfish on real games."""

from __future__ import annotations

import json
import subprocess
import sys

import chess.pgn

from livemon.cli import main
from tests.conftest import REPO, real


def analyse(capsys, *args: str) -> tuple[dict, str]:
    code = main(["analyse", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_real_engine_one_search_per_position_then_cache(capsys, tmp_path, stockfish):
    pgn = real("byrne_fischer_1956_pgnmentor.pgn")
    plies = sum(1 for _ in chess.pgn.read_game(pgn.open()).mainline())
    store = str(tmp_path / "cache.sqlite")
    first, err = analyse(capsys, str(pgn), "--depth", "6", "--store", store)
    assert 0 < first["engine"]["analyses"] <= plies + 1
    assert "analysing positions" in err  # the progress bar
    assert first["engine"]["profile"] == "Stockfish 15.1 depth=6 multipv=4" or "depth=6" in first["engine"]["profile"]
    second, _ = analyse(capsys, str(pgn), "--depth", "6", "--store", store)
    assert second["engine"]["analyses"] == 0
    assert second["games"] == first["games"] and second["players"] == first["players"]

    (game,) = first["games"]
    assert game["plies"] == plies == 82 and game["result"] == "0-1"
    byrne, fischer = sorted(first["players"], key=lambda p: p["name"])
    assert byrne["moves"] == 41 and fischer["moves"] == 41
    # the game ends in mate: the last position is scored by rule, not searched
    assert first["engine"]["analyses"] <= plies
    # Fischer won brilliantly: he loses less against the engine than Byrne
    assert fischer["mean_gain"] > byrne["mean_gain"]
    assert game["white_expected_score"] < 0.5 and game["white_rating_diff"] < 0
    for p in (byrne, fischer):
        assert len(p["history"]) == p["moves"]
        assert p["history"][-1] == p["rating_diff_vs_engine"]
        c = p["c"]
        assert c is not None and c["cr95"][0] <= c["mean"] <= c["cr95"][1] and c["sd"] > 0
    # no ratings in the tags: no engine strength, no perceived Elo
    assert first["engine"]["strength"] is None and byrne["perceived_elo"] is None


def test_a_broadcast_with_an_eval_on_every_move_is_searched_and_every_player_has_the_estimate(capsys, tmp_path,
                                                                                                stockfish):
    """A lichess broadcast carries an [%eval] on every move but no MultiPV: the engine searches every position at the
    pinned (default, fitted) profile all the same, so every player's headline estimate reads their moves (one game
    each here: the estimate is withheld only where its interval would be wider than the fitted range)."""
    text = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn").read_text()
    games = text.split("\n\n[Event")
    pgn = tmp_path / "two.pgn"
    pgn.write_text(games[0] + "\n\n[Event" + games[1])
    store = str(tmp_path / "cache.sqlite")
    out, _ = analyse(capsys, str(pgn), "--store", store)
    assert out["engine"]["profile"].endswith("depth=12 multipv=4")
    plies = sum(g["plies"] for g in out["games"])
    assert len(out["games"]) == 2 and out["engine"]["analyses"] >= plies - 2  # every position, the start once
    assert len(out["players"]) == 4
    for p in out["players"]:
        assert p["c"] is not None  # the engine's MultiPV: an E(c) decision per move
        assert p["estimate"]["positions"] >= 15, p["estimate"]
        assert p["estimate"]["elo"] is not None or "wider than the rating range" in p["estimate"]["reason"]
    assert sum(p["estimate"]["elo"] is not None for p in out["players"]) >= 3
    again, _ = analyse(capsys, str(pgn), "--store", store)
    assert again["engine"]["analyses"] == 0 and again["players"] == out["players"]


def test_eval_comments_without_engine_leave_first_move_unscored(capsys, tmp_path):
    pgn = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn")
    cfg = tmp_path / "config.toml"
    cfg.write_text('[engine]\npath = "/nonexistent/stockfish"\n')
    out, err = analyse(capsys, str(pgn), "--config", str(cfg), "--store", str(tmp_path / "s.sqlite"))
    assert "UCI engine not found" in err and "Traceback" not in err
    assert out["engine"]["analyses"] == 0
    assert all(g["unscored_plies"] == [1] for g in out["games"])
    assert "first move not scored" in err
    white_moves = {p["name"]: p["moves"] for p in out["players"]}
    assert min(white_moves.values()) >= 1


def test_missing_engine_is_a_clear_error_not_a_traceback(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[engine]\npath = "/nonexistent/stockfish"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "livemon.cli", "analyse", str(real("byrne_fischer_1956_pgnmentor.pgn")),
         "--config", str(cfg), "--store", str(tmp_path / "s.sqlite")],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode != 0
    assert "UCI engine not found at '/nonexistent/stockfish'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_games_one_line_each_rest_analysed(capsys, tmp_path, stockfish):
    lcc = real("london_2011_round8_malformed.pgn")
    # a short excerpt keeps the engine work small: the illegal game and two good ones
    games = lcc.read_text().split("\n\n[Event")
    text = games[0] + "".join("\n\n[Event" + g for g in games[29:32])
    excerpt = tmp_path / "lcc.pgn"
    excerpt.write_text(text)
    out, err = analyse(capsys, str(excerpt), "--depth", "4", "--store", str(tmp_path / "s.sqlite"))
    bad_lines = [line for line in err.splitlines() if line.startswith("livemon: skipped")]
    assert len(bad_lines) == 1 and "illegal san: 'Qg2'" in bad_lines[0]
    assert len(out["games"]) == 3


def test_table_output_renders_infinities_as_dash(capsys, tmp_path, stockfish):
    code = main(["analyse", str(real("byrne_fischer_1956_pgnmentor.pgn")), "--depth", "4",
                 "--store", str(tmp_path / "s.sqlite")])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Fischer" in out and "engine profile:" in out and "inf" not in out
    # the headline is the moves estimate (none at depth 4: no quality model of that profile, and it says so);
    # the E(c) performance is among the diagnostics
    header = next(line for line in out.splitlines() if line.startswith("player"))
    assert header.split()[2:4] == ["est.", "95%"] and header.index("field") < header.index("diagnostics:") < header.index("perf.")
    assert "no est.: uncalibrated: no quality model of the engine profile" in out
