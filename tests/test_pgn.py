import dataclasses

from livemon.app.batch import read_files
from livemon.live.tracker import GameTracker, Snapshot, parse_chunk
from livemon.live.messages import FeedError, GameInfo, GameResult
from livemon.live.pgn import (
    chunk_headers,
    parse_result,
    split_games,
    white_score,
)
from livemon.live.results import read_results_text
from tests.conftest import real


def test_games_without_blank_lines_are_split_and_flagged():
    text = real("chesscom_carlsen_clk_allancao.pgn").read_text()
    chunks = list(split_games(text))
    assert len(chunks) == 334
    assert sum(not separated for _, separated in chunks) == 333  # every game but the first follows move text
    snaps = [parse_chunk(chunk) for chunk, _ in chunks[:3]]
    assert all(isinstance(s, Snapshot) for s in snaps)
    # each game has its own headers, not the previous game's moves
    assert snaps[1].headers["Black"] == "solskytz" and snaps[1].fen == snaps[0].fen
    out = GameTracker("t").update_text(text, "carlsen.pgn")  # every game read whole, none an error
    infos = [m for m in out if isinstance(m, GameInfo)]
    assert len(infos) == 334 and infos[1].black == "solskytz" and not any(isinstance(m, FeedError) for m in out)


def test_illegal_move_gives_one_bad_game_and_the_rest_are_read():
    text = real("london_2011_round8_malformed.pgn").read_text()
    out = GameTracker("t").update_text(text, "lcc.pgn")
    bad = [m for m in out if isinstance(m, FeedError)]
    assert sum(isinstance(m, GameInfo) for m in out) == 35 and len(bad) == 1
    assert "Nakamura" in bad[0].message and "Qg2" in bad[0].message and "\n" not in bad[0].message


def test_split_keeps_comments_with_brackets_inside_movetext():
    text = '[White "A"]\n\n1. e4 { [%clk 0:01:00] } e5 1-0\n\n[White "B"]\n\n1. d4 *\n'
    chunks = [c for c, _ in split_games(text)]
    assert len(chunks) == 2 and "%clk" in chunks[0]


def test_game_info_reads_ratings_and_question_marks():
    info = next(iter(live_infos(real("kasparov_deepblue_1997_pythonchess.pgn").read_text()).values()))
    assert info.white_elo is None and info.black_elo is None
    info = next(iter(live_infos(real("wcc2023_nepo_ding_g1_pythonchess.pgn").read_text()).values()))
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


def batch_infos(text: str, tmp_path) -> list[GameInfo]:
    """The GameInfo ``analyse`` reads for ``text`` (:func:`read_files`)."""
    path = tmp_path / "t.pgn"
    path.write_text(text)
    return [g.info for g in read_files([str(path)], lambda line: None)]


def test_unrated_tags_are_unrated_live_and_in_batch(tmp_path):
    """WhiteElo "0" was rated 0 live (screened at c_r = 0, a TTT prior far too low); "0", "-", "" are unrated everywhere."""
    live = live_infos(UNRATED)
    batch = [dataclasses.replace(i, game_id="x") for i in batch_infos(UNRATED, tmp_path)]
    fit = read_results_text(UNRATED, "t.pgn").results
    assert [(i.white_elo, i.black_elo) for i in live.values()] == [(None, None), (2412, None)]
    assert [(i.white_elo, i.black_elo) for i in batch] == [(None, None), (2412, None)]
    assert [(r.white_elo, r.black_elo) for r in fit] == [(None, None), (2412, None)]
    # one date precedence: Date when known, else UTCDate, live, in batch and for the fit
    assert [i.date for i in live.values()] == [i.date for i in batch] == ["2025.03.04", "2025.03.04"]
    assert [r.time for r in fit] == ["2025-03-04", "2025-03-04"]
    assert [dataclasses.replace(i, game_id="x") for i in live.values()] == batch


def test_live_and_batch_read_the_same_tags_from_real_files(tmp_path):
    for name in ("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn", "london_chess_classic_2011_twic.pgn",
                 "kasparov_deepblue_1997_pythonchess.pgn"):
        text = real(name).read_text()
        live = list(live_infos(text).values())
        batch = batch_infos(text, tmp_path)
        assert len(live) >= 6 and live == batch, name
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
    snap = parse_chunk(text)
    assert isinstance(snap, Snapshot) and snap.headers["White"] == 'O"Brien, P'
