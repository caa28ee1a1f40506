"""FIDE's time control categories read from PGN TimeControl tags (livemon.rating.timecontrol)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import chess.pgn
import pytest

from livemon.live.pgn import game_info
from livemon.rating.timecontrol import category_of, minutes_for_60, tag_reading


@pytest.mark.parametrize("tag, category", [
    ("600", "blitz"),  # 10 minutes: blitz (Appendix B: 10 minutes or less)
    ("540+1", "blitz"),  # 9 + 1 = 10
    ("540+2", "rapid"),  # 9 + 2 = 11
    ("3000+10", "classical"),  # 50 + 10 = 60: standard (rapid is below 60)
    ("3000+9", "rapid"),  # 50 + 9 = 59
    ("40/7200:3600", "classical"),
    ("40/5400+30:1800+30", "classical"),
    ("1500+10", "rapid"),  # 25 + 10
    ("*60", None),  # a sandclock: no time for 60 moves
    ("-", None), ("?", None), ("", None), (None, None), ("5400+", None), ("90 min", None),
])
def test_fides_categories_by_the_time_for_60_moves(tag, category):
    assert category_of(tag) == category


def test_a_tag_that_may_be_minutes_is_read_as_the_slower_category():
    # a broadcast's 90+30 (minutes) or the PGN standard's seconds: classical or rapid; classical, and said
    assert minutes_for_60("90+30") == pytest.approx(31.5) and minutes_for_60("90+30", unit=60.0) == 120.0
    category, note = tag_reading("90+30")
    assert category == "classical" and "90 minutes or 90 seconds" in note
    assert tag_reading("15+10") == ("rapid", "")  # 25 minutes or 10.25: rapid either way, nothing to say
    assert tag_reading("181+2") == ("blitz", "")  # longer than any game in minutes: seconds
    assert tag_reading("5400+30") == ("classical", "")


def test_a_games_time_control_tag_is_kept_as_published():
    game = chess.pgn.read_game(io.StringIO('[Event "E"]\n[TimeControl "40/5400+30:1800+30"]\n\n1. e4 *\n'))
    assert game is not None
    assert game_info(game.headers, "g").time_control == "40/5400+30:1800+30"
    assert game_info({"TimeControl": "?"}, "g").time_control == ""


def test_the_real_files_time_controls():
    """A lichess broadcast writes minutes (90+30: classical, and said); chess.com writes seconds; the PGN standard's
    periods (the 2023 world championship) read as classical."""
    data = Path(__file__).parent / "data"
    seen: dict[str, set[tuple[str | None, bool]]] = {}
    for name in ("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn", "chesscom_carlsen_clk_allancao.pgn",
                 "wcc2023_nepo_ding_g1_pythonchess.pgn"):
        for tag in re.findall(r'^\[TimeControl "([^"]*)"\]', (data / name).read_text(encoding="utf-8"), re.M):
            category, note = tag_reading(tag)
            seen.setdefault(name[:9], set()).add((category, bool(note)))
    assert seen["broadcast"] == {("classical", True)}
    assert seen["wcc2023_n"] == {("classical", False)}
    assert {("rapid", False), ("blitz", False), ("classical", True)} <= seen["chesscom_"]  # 900+2, 300+2, 60+1
