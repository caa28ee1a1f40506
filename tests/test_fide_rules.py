"""FIDE's rating rules by the game's date: dated games on both sides of each change (livemon.rating.fide)."""

from __future__ import annotations

import datetime

import pytest

from livemon.live.audience import player_results
from livemon.rating.fide import expected_score, k_factor, rating_change, rules_on

D = datetime.date


def test_a_2700_beating_a_2200_before_and_after_1_october_2025() -> None:
    # K 10; until 30 September 2025 the 500-point gap counts as 400 (PD .92); from 1 October the real one (PD .96)
    k = k_factor(2700, played=D(2025, 9, 1))
    assert k == 10.0
    assert rating_change(2700, [(2200, 1.0)], k, D(2025, 9, 1)) == pytest.approx(0.8)
    assert rating_change(2700, [(2200, 1.0)], k, D(2025, 9, 30)) == pytest.approx(0.8)
    assert rating_change(2700, [(2200, 1.0)], k, D(2025, 10, 1)) == pytest.approx(0.4)
    assert rating_change(2700, [(2200, 1.0)], k, D(2025, 11, 15)) == pytest.approx(0.4)
    # a loss costs the real difference's figure: 10 * (0 - .96)
    assert rating_change(2700, [(2200, 0.0)], k, D(2025, 11, 15)) == pytest.approx(-9.6)


def test_2650_is_the_line_and_the_weaker_side_keeps_the_cap() -> None:
    after = D(2025, 11, 15)
    assert expected_score(2650, 2000, after) == 0.99  # 650 (620-735): the real difference
    assert expected_score(2649, 2000, after) == 0.92  # below 2650: counted as 400
    assert expected_score(2200, 2700, after) == 0.08  # the 2200 is below 2650: capped on their side
    # without a date: today's rules
    assert expected_score(2700, 2200) == 0.96


def test_once_per_event_between_january_2022_and_february_2024() -> None:
    games = [(1600, 1.0), (1500, 1.0), (1550, 1.0)]  # D 400+: 500 is the greatest, counted as 400; 450 real
    in_force = D(2023, 5, 1)
    # 20 * ((1 - .92) + (1 - .92) + (1 - .94)): D 400 is not over 400, D 500 capped, D 450 real (.94)
    assert rating_change(2000, games, 20, in_force) == pytest.approx(20 * (0.08 + 0.08 + 0.06))
    for per_game in (D(2021, 12, 31), D(2024, 3, 1)):  # the day before and the day it was abolished: every game
        assert rating_change(2000, games, 20, per_game) == pytest.approx(20 * (0.08 + 0.08 + 0.08))
    assert rating_change(2000, games, 20, D(2022, 1, 1)) == pytest.approx(20 * (0.08 + 0.08 + 0.06))
    # the weaker side: only the game of the greatest difference is counted as 400 (PD .08); the others real
    weak = [(2450, 0.0), (2500, 0.0)]
    assert rating_change(2000, weak, 20, in_force) == pytest.approx(20 * ((0 - 0.06) + (0 - 0.08)))
    assert rating_change(2000, weak, 20, D(2024, 3, 1)) == pytest.approx(20 * ((0 - 0.08) + (0 - 0.08)))


def test_a_game_s_own_date_wins_over_the_event_s() -> None:
    games = [(2200, 1.0, D(2025, 9, 30)), (2200, 1.0, D(2025, 10, 1))]
    assert rating_change(2700, games, 10, D(2025, 12, 1)) == pytest.approx(0.8 + 0.4)


def test_the_350_point_rule_before_july_2009() -> None:
    assert expected_score(2000, 2380, D(2009, 6, 30)) == 0.11  # counted as 350
    assert expected_score(2000, 2380, D(2009, 7, 1)) == 0.09  # real: 380 (under 400)


def test_k_by_date() -> None:
    # from 1 July 2014 (§8.56, §8.3.3 since 2022): 40 new / junior under 2300, 20, 10 from 2400
    assert k_factor(2100, junior=True, played=D(2014, 7, 1)) == 40.0
    assert k_factor(2100, junior=True, played=D(2014, 6, 30)) == 15.0
    assert k_factor(2100, played=D(2014, 6, 30)) == 15.0
    assert k_factor(2100, played=D(2014, 7, 1)) == 20.0
    assert k_factor(1800, rated_games=10, played=D(2014, 6, 30)) == 30.0
    assert k_factor(1800, rated_games=10, played=D(2011, 6, 30)) == 25.0
    assert k_factor(1800, rated_games=10, played=D(2025, 1, 1)) == 40.0
    assert k_factor(2300, junior=True) == 20.0  # 2300 is not below 2300
    assert k_factor(2399, reached_2400=True) == 10.0
    # K·n ≤ 700 over a rating period (from 1 July 2014): 20 games at K 40 -> 35
    assert k_factor(1900, junior=True, period_games=20) == 35.0
    assert k_factor(1900, junior=True, period_games=20, played=D(2013, 1, 1)) == 15.0  # no such rule, nor K 40


def test_rules_name_their_regulation() -> None:
    assert "1 October 2025" in rules_on(D(2025, 10, 1)).regulation
    assert "1 January 2022" in rules_on(D(2023, 1, 1)).regulation
    assert "1 March 2024" in rules_on(D(2024, 3, 1)).regulation


def test_audience_results_follow_the_game_date() -> None:
    games = [(True, "1-0", 2200)]
    before = player_results(2700, games, event_date=D(2025, 9, 1))
    after = player_results(2700, games, event_date=D(2025, 11, 15))
    assert (before["rating_change"], after["rating_change"]) == (0.8, 0.4)
    assert before["k"] == after["k"] == 10.0
