"""`livemon analyse` end to end on real games: one test with the real Stockfish searching, the others with the
scripted engine (tests/fake_uci.py) or the real Stockfish's analyses shipped in tests/data, their subject being
what analyse makes of the engine's answers."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import chess.pgn

from livemon.cli import main
from tests.conftest import REPO, cached_store, real


def engine_config(tmp_path, engine: str) -> str:
    """A config.toml naming ``engine`` as the engine: its path."""
    cfg = tmp_path / "engine.toml"
    cfg.write_text(f'[engine]\npath = "{engine}"\n')
    return str(cfg)


def analyse(capsys, *args: str) -> tuple[dict, str]:
    code = main(["analyse", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_real_engine_one_search_per_position_then_cache(capsys, tmp_path, stockfish):
    pgn = real("byrne_fischer_1956_pgnmentor.pgn")
    plies = sum(1 for _ in chess.pgn.read_game(pgn.open()).mainline())
    store = str(tmp_path / "cache.sqlite")
    cfg = engine_config(tmp_path, stockfish)
    first, err = analyse(capsys, str(pgn), "--depth", "6", "--store", store, "--config", cfg)
    assert 0 < first["engine"]["analyses"] <= plies + 1
    assert "analysing positions" in err  # the progress bar
    assert first["engine"]["profile"] == "Stockfish 15.1 depth=6 multipv=4" or "depth=6" in first["engine"]["profile"]
    second, _ = analyse(capsys, str(pgn), "--depth", "6", "--store", store, "--config", cfg)
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
        assert p["c_cr95"][0] <= p["c_mean"] <= p["c_cr95"][1] and p["c_sd"] > 0 and p["c_positions"] > 0
    # no ratings in the tags: no engine strength, no perceived Elo
    assert first["engine"]["strength"] is None and byrne["perceived_elo"] is None


def test_a_broadcast_with_an_eval_on_every_move_is_searched_and_every_player_has_the_estimate(capsys, tmp_path,
                                                                                                fake_stockfish):
    """A lichess broadcast carries an [%eval] on every move but no MultiPV: the engine searches every position at the
    pinned (default, fitted) profile all the same, so every player's headline estimate reads their moves (one game
    each here: the estimate is withheld only where its interval would be wider than the fitted range).

    The searches are counted with the scripted engine under the real one's name (the same profile); the estimates
    are made of the real Stockfish's analyses of these positions, shipped in tests/data (a depth-12 search of every
    position is the engine's work, not analyse's): the scripted engine is asked none of them."""
    text = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn").read_text()
    games = text.split("\n\n[Event")
    pgn = tmp_path / "two.pgn"
    pgn.write_text(games[0] + "\n\n[Event" + games[1])
    cfg = tmp_path / "scripted.toml"
    cfg.write_text(f'[engine]\npath = "{fake_stockfish}"\n')
    store = str(tmp_path / "scripted.sqlite")
    out, _ = analyse(capsys, str(pgn), "--store", store, "--config", str(cfg))
    assert out["engine"]["profile"] == "Stockfish 15.1 depth=12 multipv=4"
    plies = sum(g["plies"] for g in out["games"])
    assert len(out["games"]) == 2 and out["engine"]["analyses"] >= plies - 2  # every position, the start once
    assert len(out["players"]) == 4
    for p in out["players"]:
        assert p["c_mean"] is not None  # the engine's MultiPV: an E(c) decision per move
        assert p["estimate"]["positions"] >= 15, p["estimate"]
    again, _ = analyse(capsys, str(pgn), "--store", store, "--config", str(cfg))
    assert again["engine"]["analyses"] == 0 and again["players"] == out["players"]

    real_store = cached_store(tmp_path / "cache.sqlite", "analyses_stockfish15.1_d12.jsonl.gz")
    out, _ = analyse(capsys, str(pgn), "--store", real_store, "--config", str(cfg))
    assert out["engine"]["profile"] == "Stockfish 15.1 depth=12 multipv=4" and len(out["players"]) == 4
    assert out["engine"]["analyses"] == 0  # every position from the shipped analyses
    for p in out["players"]:
        assert p["c_mean"] is not None
        assert p["estimate"]["positions"] >= 15, p["estimate"]
        assert p["estimate"]["elo"] is not None or "wider than the rating range" in p["estimate"]["reason"]
    assert sum(p["estimate"]["elo"] is not None for p in out["players"]) >= 3


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


def test_bad_games_one_line_each_rest_analysed(capsys, tmp_path, fake_engine):
    lcc = real("london_2011_round8_malformed.pgn")
    # a short excerpt keeps the engine work small: the illegal game and two good ones
    games = lcc.read_text().split("\n\n[Event")
    text = games[0] + "".join("\n\n[Event" + g for g in games[29:32])
    excerpt = tmp_path / "lcc.pgn"
    excerpt.write_text(text)
    out, err = analyse(capsys, str(excerpt), "--depth", "4", "--store", str(tmp_path / "s.sqlite"),
                       "--config", engine_config(tmp_path, fake_engine))
    bad_lines = [line for line in err.splitlines() if line.startswith("livemon: skipped")]
    assert len(bad_lines) == 1 and "illegal san: 'Qg2'" in bad_lines[0]
    assert len(out["games"]) == 3


def test_table_output_renders_infinities_as_dash(capsys, tmp_path, fake_engine):
    args = ["analyse", str(real("byrne_fischer_1956_pgnmentor.pgn")), "--depth", "4", "--store", str(tmp_path / "s.sqlite"),
            "--config", engine_config(tmp_path, fake_engine)]
    code = main(args)
    out, _ = capsys.readouterr()
    assert code == 0
    assert "Fischer" in out and "engine profile:" in out and "inf" not in out
    # the audience's figures: the estimate (none at depth 4: no quality model of that profile, and it says so),
    # moves only, score, TPR, accuracy, classes; the papers' diagnostics only behind --diagnostics
    header = next(line for line in out.splitlines() if line.startswith("player"))
    assert header.split() == ["player", "rating", "estimate", "95%", "range", "moves", "only", "score", "TPR",
                              "accuracy", "?!/?/??"]
    assert "no estimate: uncalibrated: no quality model of the engine profile" in out
    assert not any(word in out for word in ("perf.", "p(W)", "c̄", "Algorithm", "r̄_e"))
    assert main([*args, "--diagnostics"]) == 0
    full, _ = capsys.readouterr()
    same = out.rsplit("--diagnostics:", 1)[0].split("\n", 1)[1]  # the same tables first (searches run: 0 now)
    assert full.split("\n", 1)[1].startswith(same)
    for word in ("perf.", "p(W)", "d(W-B)", "c̄ ± σ", "perc.", "alg2", "r̄_e", "Algorithm 4"):
        assert word in full, word
    assert "inf" not in full


def dgt_round(games: int = 3) -> str:
    """A DGT round file as LiveChess writes it: the first game ends in the kings put on the centre (two
    illegal king moves before its result), the second is listed twice (a cut copy without a result, then
    the whole game), the third is plain."""
    from livemon.live.pgn import split_games

    chunks = [c for c, _ in split_games(real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn").read_text())][:games]
    board = chess.pgn.read_game(io.StringIO(chunks[0])).end().board()
    king = board.king(board.turn)
    targets = [sq for sq in (chess.E4, chess.D5, chess.E5, chess.D4)
               if chess.square_distance(sq, king) > 1 and board.piece_at(sq) is None]
    body, result = chunks[0].rstrip().rsplit(" ", 1)
    kings = f"K{chess.square_name(targets[0])} K{chess.square_name(targets[1])}"
    dgt = f"{body} {kings} {result}\n"
    second = chunks[1].rstrip()
    cut = second.replace('[Result "0-1"]', '[Result "*"]').replace('[Result "1-0"]', '[Result "*"]')
    cut = cut[: cut.index(" 20. ")] + " *"
    return "\n\n".join([dgt, cut, second, chunks[2]]) + "\n"


def test_a_dgt_round_gives_the_games_of_the_live_feed(capsys, tmp_path, fake_engine):
    """``analyse`` reads a file as the file feed does: the DGT end-of-game king moves dropped (one line), a game
    listed twice read once (one line), the same games and plies as the live tracker."""
    from livemon.live.messages import MoveEvent
    from livemon.live.tracker import GameTracker

    text = dgt_round()
    pgn = tmp_path / "round.pgn"
    pgn.write_text(text)
    live: dict[str, int] = {}
    for m in GameTracker("round.pgn").update_text(text, "round.pgn"):
        if isinstance(m, MoveEvent):
            live[m.game_id] = max(live.get(m.game_id, 0), m.ply)
    assert len(live) == 3
    out, err = analyse(capsys, str(pgn), "--depth", "4", "--store", str(tmp_path / "cache.sqlite"),
                       "--config", engine_config(tmp_path, fake_engine))
    assert err.count("dropping DGT end-of-game king move(s)") == 1, err
    assert err.count("listed 2 times") == 1, err
    assert "skipped" not in err
    assert sorted(g["plies"] for g in out["games"]) == sorted(live.values())
    first = chess.pgn.read_game(io.StringIO(text))  # stops at the first king move: the game's legal plies
    assert out["games"][0]["plies"] == sum(1 for _ in first.mainline()) == 79 and out["games"][0]["result"] == "0-1"


async def test_the_replay_feed_reads_a_dgt_round_as_the_file_feed(tmp_path):
    """The replay feed parses each game as the live feeds do: the DGT end-of-game king moves dropped with a notice."""
    from livemon.io.feeds.replay import ReplayFeed
    from livemon.live.messages import FeedError, FeedNotice, MoveEvent
    from livemon.live.tracker import GameTracker

    text = dgt_round()
    pgn = tmp_path / "round.pgn"
    pgn.write_text(text)
    live: dict[str, int] = {}
    for m in GameTracker("round.pgn").update_text(text, "round.pgn"):
        if isinstance(m, MoveEvent):
            live[m.game_id] = max(live.get(m.game_id, 0), m.ply)
    replayed: dict[str, int] = {}
    notices, errors = [], []
    async for m in ReplayFeed("r", pgn, speed=0).run():
        if isinstance(m, MoveEvent):
            replayed[m.game_id] = max(replayed.get(m.game_id, 0), m.ply)
        notices += [m.message] if isinstance(m, FeedNotice) else []
        errors += [m.message] if isinstance(m, FeedError) else []
    assert not errors
    assert sum("dropping DGT end-of-game king move(s)" in n for n in notices) == 1, notices
    first = next(iter(live))
    assert replayed[first] == live[first] == 79  # the DGT game, its king moves dropped, as live
