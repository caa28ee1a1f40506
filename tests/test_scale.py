"""Every rating on one scale: tags read with their game's date, on today's FIDE scale (livemon.rating.scale)."""

from __future__ import annotations

import datetime

import pytest

from livemon.live.estimator import Estimator
from livemon.live.messages import GameInfo
from livemon.live.pgn import game_info, rating_date, scaled_ratings
from livemon.live.results import read_results_text
from livemon.rating.scale import COMPRESSION_DATE, floor_on, read_tag, to_current_scale

D = datetime.date


@pytest.mark.parametrize(("tag", "on_today"), [(1000, 1400), (1400, 1640), (1500, 1700), (1800, 1880), (1999, 1999),
                                               (2000, 2000), (2450, 2450)])
def test_the_compression_on_both_sides_of_1_march_2024(tag: int, on_today: int) -> None:
    assert to_current_scale(tag, D(2024, 2, 29)) == on_today
    assert to_current_scale(tag, COMPRESSION_DATE) == tag  # already today's scale
    assert to_current_scale(tag, D(2025, 11, 15)) == tag


def test_the_floor_by_date() -> None:
    assert (floor_on(D(2024, 2, 29)), floor_on(D(2024, 3, 1)), floor_on(None)) == (1000, 1400, 1400)


def test_bad_input_is_one_line_never_a_silent_number() -> None:
    assert read_tag(1500, D(2023, 1, 1)) == (1700, "")
    value, note = read_tag(1500, None, "WhiteElo")
    assert value == 1500 and note == "WhiteElo 1500: no game date, read as on today's FIDE scale"
    value, note = read_tag(1350, D(2025, 1, 1), "BlackElo")
    assert value == 1350 and "under FIDE's floor of 1400" in note and "\n" not in note
    value, note = read_tag(950, D(2020, 1, 1))
    assert value == 950 and "floor of 1000" in note
    value, note = read_tag(2200, D(1969, 6, 1))
    assert value == 2200 and "before FIDE's first list (1971)" in note


def test_the_date_a_tag_is_read_with() -> None:
    assert rating_date({"Date": "2023.11.05", "UTCDate": "2023.11.06"}) == (D(2023, 11, 5), "Date")
    assert rating_date({"Date": "????.??.??", "UTCDate": "2023.11.06"}) == (D(2023, 11, 6), "UTCDate")
    assert rating_date({"Date": "????.??.??", "EventDate": "2022.04.01"}) == (D(2022, 4, 1), "EventDate")
    assert rating_date({"Date": "2024.??.??"}) == (None, "")  # which side of 1 March 2024 is unknown
    assert rating_date({"Date": "2023.02.30"}) == (None, "")  # not a calendar day


def test_game_info_puts_tags_on_today_s_scale_and_keeps_them_as_published() -> None:
    before = game_info({"White": "A", "Black": "B", "WhiteElo": "1400", "BlackElo": "2300",
                        "Date": "2022.07.10"}, "g1")
    assert (before.white_elo, before.black_elo) == (1640, 2300)
    assert (before.white_published, before.black_published) == (1400, 2300)
    assert before.rating_note == ""
    after = game_info({"White": "A", "Black": "B", "WhiteElo": "1640", "Date": "2024.07.10"}, "g2")
    assert (after.white_elo, after.white_published, after.black_elo) == (1640, 1640, None)
    undated = game_info({"White": "A", "Black": "B", "WhiteElo": "1400", "BlackElo": "1390"}, "g3")
    assert undated.white_elo == 1400 and "no game date" in undated.rating_note
    # the message travels with both
    from livemon.io.store import row_of, value_of
    again = value_of(GameInfo, row_of(before))
    assert (again.white_elo, again.white_tag) == (1640, 1400)


def test_results_files_read_tags_on_today_s_scale_with_a_note_for_what_was_assumed() -> None:
    pgn = ('[White "A"]\n[Black "B"]\n[Date "2021.05.01"]\n[WhiteElo "1500"]\n[BlackElo "900"]\n[Result "1-0"]\n\n'
           '1. e4 1-0\n\n')
    report = read_results_text(pgn, "t.pgn")
    (game,) = report.results
    assert (game.white_elo, game.black_elo) == (1700, 900)
    assert report.errors == []
    assert report.notes == ["t.pgn line 1: BlackElo 900 on 2021-05-01 is under FIDE's floor of 1000 then: read as given"]


def test_the_estimate_reads_today_s_scale_and_the_audience_s_results_the_published_tags() -> None:
    est = Estimator()
    est.add_game(game_info({"White": "Junior", "Black": "Master", "WhiteElo": "1600", "BlackElo": "2100",
                            "Date": "2023.08.01", "Result": "1-0"}, "g"))
    est.set_result("g", "1-0")
    assert est.players["Junior"].elo == 1760  # what the models read
    results = est.audience("Junior")["results"]
    # FIDE's figures on the published tags: D 500 in 2023 (once per event: this is the one game) -> PD .08
    assert results["tpr"] == 2100 + 800 and results["rating_change"] == pytest.approx(20 * (1 - 0.08))


def test_scaled_ratings_both_sides() -> None:
    assert scaled_ratings({"WhiteElo": "1200", "BlackElo": "1900", "Date": "2019.01.01"}) == (
        (1520, 1940), (1200, 1900), "")


def test_a_feed_says_in_one_line_what_reading_a_tag_assumed() -> None:
    from livemon.live.messages import FeedNotice
    from livemon.live.tracker import GameTracker

    t = GameTracker("bc")
    out = t.update_text('[Site "s1"]\n[White "A"]\n[Black "B"]\n[WhiteElo "1500"]\n[BlackElo "2100"]\n\n1. e4 e5 *\n')
    (info,) = [m for m in out if m.kind == "game"]
    assert (info.white_elo, info.white_published) == (1500, 1500)  # no date: read as on today's scale
    notices = [m for m in out if isinstance(m, FeedNotice)]
    assert len(notices) == 1 and "WhiteElo 1500: no game date" in notices[0].message
    more = t.update_text('[Site "s1"]\n[White "A"]\n[Black "B"]\n[WhiteElo "1500"]\n[BlackElo "2100"]\n\n1. e4 e5 *\n\n'
                         '[Site "s3"]\n[White "C"]\n[Black "D"]\n[WhiteElo "1600"]\n\n1. d4 *\n\n'
                         '[Site "s4"]\n[White "E"]\n[Black "F"]\n[Date "2024.06.01"]\n[WhiteElo "1300"]\n\n1. c4 *\n')
    assert len([m for m in more if m.kind == "game"]) == 2
    # a feed without dates is said once, not once a game; a tag under its date's floor is said for its game
    (floor,) = [m.message for m in more if isinstance(m, FeedNotice)]
    assert "WhiteElo 1300 on 2024-06-01 is under FIDE's floor" in floor
    dated = GameTracker("bc").update_text('[Site "s2"]\n[White "A"]\n[Black "B"]\n[Date "2023.04.02"]\n'
                                          '[WhiteElo "1500"]\n\n1. e4 *\n')
    assert not [m for m in dated if isinstance(m, FeedNotice)]
    assert [m.white_elo for m in dated if m.kind == "game"] == [1700]


def test_readers_downstream_do_not_convert_twice() -> None:
    from livemon.app.forecast import record_of_info
    from livemon.live.screener import rating_today

    info = game_info({"White": "A", "Black": "B", "WhiteElo": "1400", "BlackElo": "1900", "Date": "2023.05.01"}, "g")
    record = record_of_info(info, "1-0", 40)
    assert (record.white_elo, record.black_elo) == (1640, 1940)
    assert rating_today(info, True) == (1640.0, 1400.0, "today")


def test_game_info_says_on_which_scale_and_by_which_date_it_read_the_tags() -> None:
    """The screener reads these fields, never the note's text."""
    from livemon.live.screener import rating_today

    dated = game_info({"WhiteElo": "1400", "BlackElo": "2100", "Date": "2023.05.01"}, "g1")
    assert (dated.rating_scale, dated.rating_date_source) == ("today", "Date")
    by_event = game_info({"WhiteElo": "1400", "Date": "????.??.??", "EventDate": "2023.04.28"}, "g2")
    assert (by_event.white_elo, by_event.rating_scale, by_event.rating_date_source) == (1640, "today", "EventDate")
    assert rating_today(by_event, True) == (1640.0, 1400.0, "today")
    undated = game_info({"WhiteElo": "1400"}, "g3")
    assert (undated.rating_scale, undated.rating_date_source) == ("as read", "")
    assert rating_today(undated, True) == (1400.0, 1400.0, "as read")
    ancient = game_info({"WhiteElo": "1400", "Date": "1965.06.01"}, "g4")
    assert (ancient.white_elo, ancient.rating_scale) == (1400, "as read") and "first list" in ancient.rating_note
    assert rating_today(ancient, True) == (1400.0, 1400.0, "as read")
    under = game_info({"WhiteElo": "1350", "Date": "2025.01.01"}, "g5")
    assert under.rating_scale == "today" and "under FIDE's floor of 1400" in under.rating_note
    # a note's wording is for people: the screener's scale does not depend on it
    from dataclasses import replace
    assert rating_today(replace(undated, rating_note="anything"), True)[2] == "as read"
    assert rating_today(replace(dated, rating_note="WhiteElo 1400: no game date"), True)[2] == "today"
    # a GameInfo made without a reader (tags not kept) is dated here, by its Date
    assert rating_today(GameInfo("g", white_elo=1400, date="1965.01.01"), True) == (1400.0, 1400.0, "as read")
    from livemon.io.store import row_of, value_of  # the store keeps them: a restart reads the same scale
    again = value_of(GameInfo, row_of(by_event))
    assert (again.rating_scale, again.rating_date_source) == ("today", "EventDate")
    kept = value_of(GameInfo, row_of(undated))
    assert (kept.rating_scale, kept.rating_date_source) == ("as read", "")


def test_bad_rating_input_in_a_batch_is_one_line_each(tmp_path) -> None:
    """A tag without a date, under the floor, dated before FIDE's lists: one line each in the batch's report."""
    from livemon.app.batch import read_files

    pgn = tmp_path / "bad.pgn"
    pgn.write_text('[Event "E"]\n[White "A"]\n[Black "B"]\n[WhiteElo "1500"]\n[BlackElo "1600"]\n[Result "1-0"]\n\n'
                   '1. e4 e5 2. Nf3 1-0\n\n'
                   '[Event "E"]\n[Date "2025.01.05"]\n[White "C"]\n[Black "D"]\n[WhiteElo "1350"]\n[BlackElo "1600"]\n'
                   '[Result "0-1"]\n\n1. d4 d5 0-1\n\n'
                   '[Event "E"]\n[Date "1965.01.05"]\n[White "E"]\n[Black "F"]\n[WhiteElo "2200"]\n[Result "1-0"]\n\n'
                   '1. c4 1-0\n\n', encoding="utf-8")
    lines: list[str] = []
    read_files([str(pgn)], lines.append)
    notes = [ln for ln in lines if "FIDE" in ln]
    assert len(notes) == 3 and all("\n" not in ln for ln in notes)
    assert "WhiteElo 1500: no game date, read as on today's FIDE scale" in notes[0]
    assert "WhiteElo 1350 on 2025-01-05 is under FIDE's floor of 1400" in notes[1]
    assert "before FIDE's first list (1971)" in notes[2]
