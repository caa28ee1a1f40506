from livemon.live.pgn import BadGame, GoodGame, game_info, read_games, split_games
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
    text = real("london_chess_classic_2011_twic.pgn").read_text()
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
