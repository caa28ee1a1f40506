import dataclasses

from livemon.live.tracker import GameTracker
from livemon.live.messages import GameInfo, GameResult
from livemon.live.pgn import (
    BadGame,
    GoodGame,
    chunk_headers,
    game_info,
    parse_result,
    read_games,
    split_games,
    white_score,
)
from livemon.live.results import read_results_text
from tests.conftest import real


def test_games_without_blank_lines_are_split_and_flagged():
    text = real("chesscom_carlsen_clk_allancao.pgn").read_text()
    games = list(read_games(text, "carlsen.pgn"))
    assert len(games) == 334
    assert all(isinstance(g, GoodGame) for g in games)
    flagged = [g for g in games if g.warnings]
    assert len(flagged) == 333  # every game but the first follows move text directly
    assert "not separated" in flagged[0].warnings[0]
    # each game has its own headers, not the previous game's moves
    assert games[1].game.headers["Black"] == "solskytz"
    assert games[1].game.board().fen() == games[0].game.board().fen()


def test_illegal_move_gives_one_bad_game_and_the_rest_are_read():
    text = real("london_2011_round8_malformed.pgn").read_text()
    games = list(read_games(text, "lcc.pgn"))
    bad = [g for g in games if isinstance(g, BadGame)]
    assert len(games) == 36 and len(bad) == 1
    assert "Nakamura" in bad[0].error and "Qg2" in bad[0].error and "\n" not in bad[0].error


def test_split_keeps_comments_with_brackets_inside_movetext():
    text = '[White "A"]\n\n1. e4 { [%clk 0:01:00] } e5 1-0\n\n[White "B"]\n\n1. d4 *\n'
    chunks = [c for c, _ in split_games(text)]
    assert len(chunks) == 2 and "%clk" in chunks[0]


def test_game_info_reads_ratings_and_question_marks():
    games = list(read_games(real("kasparov_deepblue_1997_pythonchess.pgn").read_text()))
    info = game_info(games[0].game.headers, "g")
    assert info.white_elo is None and info.black_elo is None
    games = list(read_games(real("wcc2023_nepo_ding_g1_pythonchess.pgn").read_text()))
    info = game_info(games[0].game.headers, "g")
    assert info.white_elo and info.white_elo > 2700


# -- one game reader: the same tags, ratings, dates and results live and in batch ---------------

UNRATED = """[Event "Open"]
[Site "board-1"]
[Date "2025.??.??"]
[UTCDate "2025.03.04"]
[Round "1.1"]
[White "Zero, Z"]
[Black "Dash, D"]
[WhiteElo "0"]
[BlackElo "-"]
[Result "1/2-1/2"]

1. e4 e5 2. Nf3 Nc6 1/2-1/2

[Event "Open"]
[Site "board-2"]
[Date "2025.03.04"]
[UTCDate "2025.03.05"]
[Round "1.2"]
[White "Rated, R"]
[Black "Empty, E"]
[WhiteElo "2412"]
[BlackElo ""]
[Result "1-0"]

1. d4 d5 1-0
"""


def live_infos(text: str) -> dict[str, GameInfo]:
    """The GameInfo a live feed emits for ``text`` (the feed's sans-I/O tracker)."""
    out = GameTracker("test").update_text(text, "t.pgn", final=True)
    return {m.game_id: m for m in out if isinstance(m, GameInfo)}


def test_unrated_tags_are_unrated_live_and_in_batch():
    """WhiteElo "0" was rated 0 live (screened at c_r = 0, a TTT prior far too low); "0", "-", "" are unrated everywhere."""
    live = live_infos(UNRATED)
    batch = [game_info(g.game.headers, "x") for g in read_games(UNRATED) if isinstance(g, GoodGame)]
    fit = read_results_text(UNRATED, "t.pgn").results
    assert [(i.white_elo, i.black_elo) for i in live.values()] == [(None, None), (2412, None)]
    assert [(i.white_elo, i.black_elo) for i in batch] == [(None, None), (2412, None)]
    assert [(r.white_elo, r.black_elo) for r in fit] == [(None, None), (2412, None)]
    # one date precedence: Date when known, else UTCDate, live, in batch and for the fit
    assert [i.date for i in live.values()] == [i.date for i in batch] == ["2025.03.04", "2025.03.04"]
    assert [r.time for r in fit] == ["2025-03-04", "2025-03-04"]
    assert [dataclasses.replace(i, game_id="x") for i in live.values()] == batch


def test_live_and_batch_read_the_same_tags_from_real_files():
    for name in ("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn", "london_chess_classic_2011_twic.pgn",
                 "kasparov_deepblue_1997_pythonchess.pgn"):
        text = real(name).read_text()
        live = list(live_infos(text).values())
        batch = [game_info(g.game.headers, i.game_id) for g, i in
                 zip((g for g in read_games(text) if isinstance(g, GoodGame)), live)]
        assert len(live) >= 6 and live == batch[: len(live)], name
        scores = {r.line for r in read_results_text(text, name).results}
        assert scores, name


def test_one_result_parser():
    assert [parse_result(r) for r in ("1-0", " 0-1", "1/2-1/2", "½-½", "*", "2-0", "", None)] == [
        "1-0", "0-1", "1/2-1/2", "1/2-1/2", "*", None, None, None]
    assert [white_score(r) for r in ("1-0", "0-1", "½-½", "*")] == [1.0, 0.0, 0.5, None]
    report = read_results_text("time,white,black,result\n1,a,b,½-½\n2,a,b,*\n3,a,b,1-1\n", "t.csv")
    assert [r.score for r in report.results] == [0.5] and report.unfinished == 1 and len(report.errors) == 1
    # a live feed reports the same result once, normalised
    out = GameTracker("t").update_text('[White "A"]\n[Black "B"]\n[Result "½-½"]\n\n1. e4 e5 1/2-1/2\n', "t", final=True)
    assert [m.result for m in out if isinstance(m, GameResult)] == ["1/2-1/2"]


def test_escaped_quotes_in_tags_are_read_once_everywhere():
    text = '[White "O\\"Brien, P"]\n[Black "B"]\n[Result "1-0"]\n[Date "2020.01.01"]\n\n1. e4 1-0\n'
    assert chunk_headers(text)["White"] == 'O"Brien, P'
    assert next(iter(live_infos(text).values())).white == 'O"Brien, P'
    assert read_results_text(text, "t.pgn").results[0].white == 'O"Brien, P'
    game = next(read_games(text))
    assert isinstance(game, GoodGame) and game.game.headers["White"] == 'O"Brien, P'
