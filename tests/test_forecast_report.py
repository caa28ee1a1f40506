"""The report's "who will win" chart: each player's chance of first after each round of a real event."""

from __future__ import annotations

import pytest

from livemon.app.forecast import chances_by_round, pgn_record
from livemon.config import EventConfig
from livemon.faces.report import _forecast_chart
from livemon.live.pgn import split_games
from livemon.live.tracker import Snapshot, parse_chunk
from tests.conftest import real


def _games(name: str) -> list[Snapshot]:
    """The games of a file as ``livemon forecast`` reads them (the one reader)."""
    games = [parse_chunk(chunk, True) for chunk, _ in split_games(real(name).read_text(encoding="utf-8"))]
    return [g for g in games if isinstance(g, Snapshot)]


def test_chances_after_each_round_of_a_round_robin() -> None:
    c = chances_by_round([pgn_record(g) for g in _games("prague_masters_2022_fsmosca.pgn")], EventConfig())
    assert c["rounds"] == list(range(10)) and c["format"] == "rr"
    for j in range(10):
        assert sum(v[j] for v in c["players"].values()) == pytest.approx(1.0, abs=1e-3)
    assert c["players"]["Harikrishna, Pentala"][-1] == 1.0  # the winner, once it is over
    before = c["players"]["Harikrishna, Pentala"][0]
    assert 0 < before < 0.5  # before round 1: one of ten, by the ratings
    svg = _forecast_chart(c)
    assert svg.count('class="forecast"') == 6 and "Harikrishna, Pentala 100%" in svg


def test_a_swiss_of_unknown_length_says_why() -> None:
    games = [g for g in _games("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn")
             if int(g.headers["Round"].split(".")[0]) <= 2]
    c = chances_by_round([pgn_record(g) for g in games], EventConfig(format="swiss"))
    assert "number of rounds" in c["note"]
    assert "No forecast" in _forecast_chart(c) and _forecast_chart(None) == ""
