"""Screening against today's strength: the tag on today's scale, its uncertainty, the event's results.

Simulated players move as the reference agent E(c) does at a chosen strength, over positions drawn
like real ones (2-5 candidates, losses exponential); the screener is the product's, with the shipped
line of the default profile.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from livemon.config import ConfigError, ScreeningConfig
from livemon.live.messages import GameInfo
from livemon.live.plies import ScoredPly
from livemon.live.screener import FIELD_STEP, Screener, screening_report, table_chance
from livemon.rating.agent import Decision, move_probabilities
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.rating.screening import (
    ScreeningLine,
    chance_line,
    expected_by_chance,
    field_game,
    field_lag,
    field_lag_without,
    intrinsic_rating,
    moved_by_field,
    results_strength,
    tag_prior,
    widened_z,
)
from livemon.rating.screening_params import SHIPPED

# the default profile's calibration (any c map: the shipped line replaces it for this profile)
CAL = ProfileCalibration(SHIPPED.profile, 2950.0, Calibration(a=-0.42, b=0.00051, n=400, elo_min=1250,
                                                              elo_max=2860, r2=0.9, residual_sd=0.076))
PLIES_A_GAME = 70  # plies 17..86 of each game: past the book moves of either side


def positions(rng: np.random.Generator, n: int) -> list[tuple[float, ...]]:
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 6))
        out.append(tuple(np.concatenate(([0.0], -np.sort(rng.exponential(0.5, k - 1)))).round(2)))
    return out


def moves(rng: np.random.Generator, values: list[tuple[float, ...]], c: float, engine: float = 0.0) -> list[Decision]:
    """E(c)'s moves, or the engine's best with probability ``engine``."""
    out = []
    for v in values:
        played = 0 if rng.random() < engine else int(rng.choice(len(v), p=move_probabilities(v, c)))
        out.append(Decision(v, played))
    return out


def screen(event: str, tag: int, date: str, opponent: int, points: list[float], c: float, seed: int,
           engine: float = 0.0, cfg: ScreeningConfig | None = None, fide_id: str = "",
           time_control: str = "") -> Screener:
    """One player, rated ``tag`` on ``date`` (FIDE id ``fide_id``), in ``len(points)`` games of ``event`` against
    ``opponent``s, their TimeControl tag ``time_control``."""
    rng = np.random.default_rng(seed)
    scr = Screener(cfg or ScreeningConfig(), CAL)
    assert scr.line is SHIPPED
    for g, pts in enumerate(points):
        gid = f"g{g}"
        scr.add_game(GameInfo(gid, white="P", black=f"O{g}", white_elo=tag, black_elo=opponent, event=event,
                              date=date, white_fide_id=fide_id, time_control=time_control))
        for ply, d in zip(range(17, 17 + PLIES_A_GAME, 2), moves(rng, positions(rng, PLIES_A_GAME // 2), c, engine)):
            scr.add_ply(ScoredPly(gid, ply, 0, 0, d, uci="e2e4", san="e4"))
        scr.set_result(gid, {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[pts])
    return scr


def test_tags_are_read_on_todays_scale_by_the_games_date():
    scr = Screener(ScreeningConfig(), CAL)
    scr.add_game(GameInfo("a", white="Old", black="New", white_elo=1400, black_elo=1400, event="E", date="2023.05.01"))
    scr.add_game(GameInfo("b", white="Undated", black="New", white_elo=1400, black_elo=1400, event="F", date="?"))
    scr.add_game(GameInfo("c", white="Now", black="X", white_elo=1400, black_elo=1400, event="G", date="2024.05.01"))
    for gid in "abc":
        scr.add_ply(ScoredPly(gid, 17, 0, 0, Decision((0.0, -0.5), 0), uci="e2e4", san="e4"))
    old, undated, now = (scr.numbers((p, e)) for p, e in (("Old", "E"), ("Undated", "F"), ("Now", "G")))
    assert (old.rating, old.rating_read, old.rating_scale) == (1640.0, 1400.0, "today")  # 1400 + 0.4 x 600
    assert (undated.rating, undated.rating_scale) == (1400.0, "as read")  # no date: said so, not guessed
    assert now.rating == 1400.0 and now.c_r == pytest.approx(SHIPPED.c_for(1400.0))


def test_the_event_results_move_the_strength_the_moves_are_compared_with():
    prior = tag_prior(1587.0, junior=True)
    assert prior.k40 == 1.0 and prior.sd > 150  # a junior's tag: wide, and trailing
    mu, sd = results_strength(prior.mean, prior.sd, [(2300.0, p) for p in (1.0, 0.5, 1.0, 0.5, 0.0)])
    assert mu > prior.mean + 250 and sd < prior.sd
    settled = tag_prior(2600.0)
    assert settled.sd < 30 and results_strength(settled.mean, settled.sd, [(2700.0, 1.0)] * 3)[0] < 2700


def test_an_underrated_junior_is_not_alerted():
    """A junior rated 1312 (2023) who scores 3/5 against 2300s and plays like a 2400: no alert, and the row says
    what he was compared with. Against his tag as read, with the sampling variance only, he would be."""
    scr = screen("National Junior Championship 2023", 1312, "2023.07.10", 2300, [1.0, 0.5, 1.0, 0.5, 0.0],
                 SHIPPED.c_for(2400.0), seed=5)
    row = scr.numbers(("P", "National Junior Championship 2023"))
    assert row.positions >= 150 and row.rating == 1587.0 and row.rating_read == 1312.0 and row.k40 == 1.0
    assert row.results == 5 and row.strength is not None and row.strength > 1850 and row.strength_sd is not None
    assert row.level != "alert" and row.z is not None and row.z < 4.0
    assert not [a for a in scr.new_alerts(("P", "National Junior Championship 2023")) if a.level == "alert"]
    assert row.ipr is not None and row.ipr_cr95 is not None and row.ipr_cr95[0] is not None
    assert row.ipr_cr95[0] < row.ipr and row.ipr > 2000  # the moves read far above the tag
    # the same moves against the tag as read (old scale, no sd, no results) cross the alert threshold
    naive = Screener(ScreeningConfig(), ProfileCalibration("other profile", None, CAL.c_map))
    for gid, info in scr._games.items():
        naive.add_game(GameInfo(gid, white="P", black=info.black, white_elo=1312, black_elo=2300, event="J"))
    for track in scr.tracks.values():
        for _, sp in track.positions():
            naive.add_ply(sp)
    assert (naive.numbers(("P", "J")).z or 0.0) >= 4.0


def test_a_junior_the_arbiters_name_at_an_open_is_read_as_one():
    """A prodigy rated 2351 who scores 6.5/9 against 2316s at an open and plays like a 2650: read at his tag
    his strength barely moves; named a junior (``screening.juniors``), his results move the strength he is
    compared with, its sd widens, and the same moves give a lower z."""
    args = ("Spring Open 2025", 2351, "2025.02.10", 2316, [1.0, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 0.5, 0.5],
            SHIPPED.c_for(2650.0))
    as_settled, as_junior = screen(*args, seed=3), screen(*args, seed=3, cfg=ScreeningConfig(juniors=["P"]))
    settled, junior = (scr.numbers(("P", "Spring Open 2025")) for scr in (as_settled, as_junior))
    assert settled.k40 < 0.5 and junior.k40 == 1.0
    assert settled.strength is not None and junior.strength is not None and settled.strength_sd is not None
    assert junior.strength > settled.strength + 80 and junior.strength_sd is not None
    assert junior.strength_sd > 2 * settled.strength_sd
    assert settled.z is not None and junior.z is not None and junior.z < settled.z - 0.3
    # the arbiters' table says what he was compared with: a junior's tag (j)
    from livemon.commands.analyse import render_screening

    rows = {scr: next(line for line in render_screening(screening_report(scr)).splitlines() if line.startswith("P "))
            for scr in (as_settled, as_junior)}
    assert f"{junior.strength:.0f}±{junior.strength_sd:.0f}j" in rows[as_junior] and "j " not in rows[as_settled]


def test_the_arbiters_table_says_what_the_shipped_line_was_fitted_on():
    """Under the shipped line's table, how the honest players of 2025 events read (the era, docs/fairplay.md);
    not under a table screened through another profile's map, which that sentence is not about."""
    from livemon.commands.analyse import render_screening

    shipped = screen("Spring Open 2025", 2351, "2025.02.10", 2316, [1.0, 0.5, 0.5], SHIPPED.c_for(2400.0), seed=3)
    other = Screener(ScreeningConfig(), ProfileCalibration("other profile", None, CAL.c_map))
    from livemon.rating.screening_params import BY_YEAR, FIT_EVENTS

    text = " ".join(render_screening(screening_report(shipped)).split())  # the sentence, wrapped as the legend is
    newest = max(BY_YEAR)
    assert f"honest players of {FIT_EVENTS} events of {min(BY_YEAR)}-{newest}" in text
    assert f"those of {newest} events read z {BY_YEAR[newest][1]:+.2f} on average ({BY_YEAR[newest][0]})" in text
    legend = render_screening(screening_report(other))
    assert "reason to look" in legend and "never saw their event" not in legend


def test_a_junior_the_arbiters_name_by_fide_id_is_read_as_one_under_any_spelling():
    """``screening.juniors`` takes FIDE ids as well as names (a lichess broadcast's WhiteFideId/BlackFideId tags):
    the id names the player whatever the games spell; named so after his games came, he is read anew."""
    args = ("Spring Open 2025", 2351, "2025.02.10", 2316, [1.0, 1.0, 0.5, 1.0, 0.5, 1.0, 0.5, 0.5, 0.5],
            SHIPPED.c_for(2650.0))
    by_name = screen(*args, seed=3, cfg=ScreeningConfig(juniors=["P"])).numbers(("P", "Spring Open 2025"))
    by_id = screen(*args, seed=3, cfg=ScreeningConfig(juniors=["24123456"]), fide_id="24123456")
    other = screen(*args, seed=3, cfg=ScreeningConfig(juniors=["24123457"]), fide_id="24123456")
    assert by_id.numbers(("P", "Spring Open 2025")) == by_name and by_name.k40 == 1.0
    settled = other.numbers(("P", "Spring Open 2025"))
    assert settled.k40 < 0.5 and settled.z is not None and by_name.z is not None and by_name.z < settled.z - 0.3
    assert other.set_juniors(["24123456"]) == [("P", "Spring Open 2025")]  # named later: re-scored
    assert other.numbers(("P", "Spring Open 2025")) == by_name


def test_juniors_must_be_names():
    from livemon.config import ConfigError

    with pytest.raises(ConfigError, match="screening.juniors"):
        ScreeningConfig(juniors=["Oro, Faustino", " "]).validate()


def test_an_engine_user_is_still_alerted():
    """A 1500 who plays the engine's move 60% of the time and wins every game: alerted, against the tag and
    against the strength his results make of him."""
    scr = screen("Weekend Open", 1500, "2025.03.01", 1550, [1.0] * 5, SHIPPED.c_for(1500.0), seed=7, engine=0.6)
    row = scr.numbers(("P", "Weekend Open"))
    assert row.strength is not None and row.strength > 1520  # the wins moved it
    assert row.z is not None and row.z >= 4.0 and row.z_tag is not None and row.z_tag >= 4.0
    assert row.level == "alert"
    assert [a.level for a in scr.new_alerts(("P", "Weekend Open"))] == ["notice", "alert"]


def test_honest_players_of_uncertain_strength_give_z_near_n01():
    """Players whose strength differs from their tag as the prior says, moving as E(c) does there (and their own
    scatter tau): the library's widened z has mean ~0 and sd ~1, where the sampling-only z is too wide."""
    rng = np.random.default_rng(2)
    zs, raw = [], []
    for i in range(160):
        tag = float(rng.uniform(1400, 2600))
        prior = tag_prior(tag, junior=i % 2 == 0)
        strength = rng.normal(prior.mean, prior.sd)
        c = SHIPPED.c_for(strength, tag) + rng.normal(0.0, SHIPPED.tau)  # against opponents rated as the tag
        decisions = moves(rng, positions(rng, 150), max(c, 0.0))
        from livemon.rating.screening import screening_stats

        c0 = SHIPPED.c_for(prior.mean, tag)
        st = screening_stats("p", decisions, c0)
        from livemon.rating.screening import position_expectation

        dsum = sum(position_expectation(d, c0).dp0 for d in decisions)
        raw.append(st.z_match)
        zs.append(widened_z(st.z_match, st.matches_sd ** 2, dsum, SHIPPED.slope_at(prior.mean), prior.sd ** 2,
                            SHIPPED.tau))
    z = np.array(zs)
    assert abs(z.mean()) < 0.25 and 0.8 < z.std() < 1.2
    assert np.std(raw) > z.std() * 1.1  # without the strength's sd the z's spread too wide


def test_the_expectation_is_read_against_the_players_opponents():
    """Honest players match the engine more against stronger opponents (the shipped line's g > 0): a 1800 who meets
    2300s is expected to match more than one who meets equals, the row says against whom, and a new game against
    another opponent re-reads it."""
    assert SHIPPED.g > 0.0 and SHIPPED.c_for(1800.0, 2300.0) > SHIPPED.c_for(1800.0) == SHIPPED.c_for(1800.0, 1800.0)
    up = screen("Weekend Open", 1800, "2025.03.01", 2300, [0.0, 0.5, 0.0], SHIPPED.c_for(1800.0, 2300.0), seed=4)
    row = up.numbers(("P", "Weekend Open"))
    assert row.opponents == 2300.0 and row.strength is not None
    assert row.c_r == pytest.approx(SHIPPED.c_for(row.strength, 2300.0))
    # the same moves against the same strength, the opponents ignored: read as more engine-like
    assert row.z is not None and row.z_tag is not None
    flat = Screener(ScreeningConfig(), ProfileCalibration(CAL.profile, CAL.engine_strength, CAL.c_map))
    flat.line = ScreeningLine(SHIPPED.a, SHIPPED.b, SHIPPED.tau, SHIPPED.profile, SHIPPED.book_moves,
                              SHIPPED.eval_bound)  # g = 0
    for info in up._games.values():
        flat.add_game(info)
    for track in up.tracks.values():
        for _, sp in track.positions():
            flat.add_ply(sp)
    for gid, points in zip(("g0", "g1", "g2"), ("0-1", "1/2-1/2", "0-1")):
        flat.set_result(gid, points)
    other = flat.numbers(("P", "Weekend Open"))
    assert other.strength == pytest.approx(row.strength) and other.z is not None and other.z > row.z + 0.3
    # a fourth game against an 1800: the opponents' mean and c_r move
    assert ("P", "Weekend Open") in up.add_game(GameInfo("g3", white="P", black="O3", white_elo=1800, black_elo=1800,
                                                         event="Weekend Open", date="2025.03.01"))
    again = up.numbers(("P", "Weekend Open"))
    assert again.opponents == pytest.approx(2175.0) and again.c_r is not None and again.c_r < (row.c_r or 0.0)


def test_honest_players_under_1800_are_read_against_the_bent_line():
    """The shipped line bends below 1800 (honest weak players match the engine more often than a straight line
    through the stronger ones expects): players there, moving as the bent line says, read z about 0 in the
    screener, where the same moves against the straight line read each of them more engine-like; the line
    inverts on both sides of the knee, and the screener's intrinsic rating reads their strength."""
    assert SHIPPED.h > 0.0 and SHIPPED.rises and SHIPPED.knee == 1800.0
    assert SHIPPED.slope_at(1500.0) == pytest.approx(SHIPPED.b - SHIPPED.g - SHIPPED.h)
    for s in (1300.0, 1799.0, 1800.0, 2400.0):
        assert SHIPPED.strength_for(SHIPPED.c_for(s, 2000.0), 2000.0) == pytest.approx(s)
        assert SHIPPED.strength_for(SHIPPED.c_for(s)) == pytest.approx(s)
    straight = dataclasses.replace(SHIPPED, h=0.0)
    bent_z, straight_z, ipr = [], [], []
    for seed in range(24):
        scr = screen("Weekend Open 2025", 1500, "2025.03.01", 1500, [0.5] * 4,
                     SHIPPED.c_for(tag_prior(1500.0).mean, 1500.0), seed=100 + seed)
        row = scr.numbers(("P", "Weekend Open 2025"))
        assert row.strength is not None and row.strength < 1800.0 and row.z is not None and row.ipr is not None
        assert row.c_r == pytest.approx(SHIPPED.c_for(row.strength, 1500.0))
        bent_z.append(row.z)
        ipr.append(row.ipr)
        scr.line = straight
        scr.set_result("g3", "1/2-1/2")  # read again with the straight line
        other = scr.numbers(("P", "Weekend Open 2025"))
        assert other.z is not None
        straight_z.append(other.z)
    assert abs(np.mean(bent_z)) < 0.4 and np.mean(straight_z) > np.mean(bent_z) + 0.15
    assert all(s > b for s, b in zip(straight_z, bent_z))  # the same moves, a lower expectation
    assert abs(np.mean(ipr) - tag_prior(1500.0).mean) < 150.0


def test_a_rapid_event_is_compared_with_rapid_play():
    """The line's rapid offset applies where the games' TimeControl tags say rapid (or blitz, read against rapid
    play), or where the arbiters set it; a tag that may be minutes (90+30) is read as the slower, classical, and
    said; no tag: classical, said as assumed. The row says what the player was compared with."""
    assert SHIPPED.rapid < 0.0  # faster play: fewer of the engine's moves
    rows = {}
    for name, tag, cfg in (("tag rapid", "900+10", None), ("tag blitz", "180+2", None), ("minutes", "90+30", None),
                           ("none", "", None), ("set", "5400+30", ScreeningConfig(time_control="rapid"))):
        scr = screen("Open 2025", 1900, "2025.03.01", 1900, [0.5] * 2, SHIPPED.c_for(1900.0), seed=7, cfg=cfg,
                     time_control=tag)
        rows[name] = scr.numbers(("P", "Open 2025"))
    for row in rows.values():
        assert row.strength is not None and row.c_r is not None
    assert (rows["tag rapid"].time_control, rows["tag rapid"].time_control_source) == ("rapid", "tag")
    assert rows["tag rapid"].c_r == pytest.approx(SHIPPED.on(None, "rapid").c_for(rows["tag rapid"].strength, 1900.0))
    assert rows["tag rapid"].c_r < rows["none"].c_r and rows["tag rapid"].z > rows["none"].z  # the same moves
    # 180+2: 3 minutes + 2 s (blitz) or 3 hours (classical): the slower
    assert rows["tag blitz"].time_control == "classical" and "180 minutes or 180 seconds" in rows["tag blitz"].time_control_note
    assert (rows["minutes"].time_control, rows["minutes"].c_r) == ("classical", rows["none"].c_r)
    assert rows["minutes"].time_control_note.startswith("TimeControl 90+30")
    assert (rows["none"].time_control, rows["none"].time_control_source) == ("classical", "assumed")
    assert (rows["set"].time_control, rows["set"].time_control_source, rows["set"].c_r) == (
        "rapid", "setting", rows["tag rapid"].c_r)
    blitz = screen("Open 2025", 1900, "2025.03.01", 1900, [0.5] * 2, SHIPPED.c_for(1900.0), seed=7,
                   time_control="300+2").numbers(("P", "Open 2025"))
    assert (blitz.time_control, blitz.c_r) == ("blitz", rows["tag rapid"].c_r)
    # a later game's tag moves a player-event screened before it
    scr = screen("Open 2025", 1900, "2025.03.01", 1900, [0.5] * 2, SHIPPED.c_for(1900.0), seed=7)
    assert scr.numbers(("P", "Open 2025")).time_control == "classical"
    scr.add_game(GameInfo("g9", white="P", black="O9", white_elo=1900, black_elo=1900, event="Open 2025",
                          date="2025.03.02", time_control="900+10"))
    assert scr.numbers(("P", "Open 2025")).c_r == rows["tag rapid"].c_r
    with pytest.raises(ConfigError, match="time_control"):
        ScreeningConfig(time_control="bullet").validate()


def test_chance_expected_counts():
    assert expected_by_chance(120, 2.5) == pytest.approx(120 * 0.00620967, rel=1e-4)
    assert chance_line(120, 2.5, 4.0) == "120 players screened: about 0.7 notices and 0.004 alerts expected by chance"
    scr = screen("Weekend Open", 1800, "2025.03.01", 1800, [0.5] * 2, SHIPPED.c_for(1800.0), seed=1)
    report = screening_report(scr)
    assert report["chance"]["players"] == 1 and report["chance"]["notices"] == pytest.approx(expected_by_chance(1, 2.5))
    assert report["line"]["shipped"] and report["line"]["scale"] == "today"
    row = report["players"][0]
    assert {"strength", "strength_sd", "z_tag", "ipr", "ipr_cr95", "rating_read", "rating_scale", "opponents"} <= set(row)
    assert (report["line"]["g"], report["line"]["h"], report["line"]["knee"], report["line"]["era"]) == (
        SHIPPED.g, SHIPPED.h, SHIPPED.knee, SHIPPED.era)
    # a face with only the rows reads the thresholds from them
    assert table_chance(scr.table())["line"] == report["chance"]["line"] == chance_line(1, 2.5, 4.0)


def test_intrinsic_rating_reads_the_strength_that_played():
    rng = np.random.default_rng(0)
    values = positions(rng, 600)
    line = ScreeningLine(SHIPPED.a, SHIPPED.b, 0.0)
    ipr = intrinsic_rating(moves(rng, values, line.c_for(2200.0)), line)
    assert ipr is not None
    point, (lo, hi) = ipr
    assert lo < 2200.0 < hi and abs(point - 2200.0) < 250 and math.isfinite(hi)
    assert intrinsic_rating([], line) is None


def test_the_screeners_ipr_reads_the_bent_line_as_the_exact_solution_does():
    """The screener's O(1) intrinsic rating (first order in c, read back on the line) agrees with the exact
    solution over the positions for players compared below 1800 whose moves read across the bend, and for one
    above it; a straight read of the local slope (1500's) would put the first 200+ points too high."""
    from livemon.live.screener import first_order_ipr
    from livemon.rating.screening import position_expectation

    for played, compared, opponents in ((2000.0, 1500.0, None), (1650.0, 1500.0, 1700.0), (2300.0, 2000.0, 2200.0)):
        rng = np.random.default_rng(5)
        decisions = moves(rng, positions(rng, 300), SHIPPED.c_for(played, opponents))
        exact = intrinsic_rating(decisions, SHIPPED, opponents=opponents)
        c_r = SHIPPED.c_for(compared, opponents)
        es = [position_expectation(d, c_r) for d in decisions]
        diff = sum(e.matched for e in es) - sum(e.p0 for e in es)
        dsum = sum(e.dp0 for e in es)
        got = first_order_ipr(c_r, diff, sum(e.p0 * (1.0 - e.p0) for e in es), dsum, SHIPPED, opponents)
        assert exact is not None and got is not None
        assert abs(got[0] - exact[0]) < 15.0 and abs(got[1][0] - exact[1][0]) < 20.0
        assert abs(got[1][1] - exact[1][1]) < 40.0  # the upper end: c further from c_r
        assert got[1][0] < played < got[1][1]
        if compared < SHIPPED.knee < got[0]:
            assert compared + diff / (dsum * SHIPPED.slope_at(compared)) > got[0] + 200.0


def _field_event(scr: Screener, wins: float, cohort: int = 8) -> None:
    """An open of 2023 where ``cohort`` players rated 1400 each meet two players rated 2200 and score ``wins``
    a game (the other players' games: no positions screened)."""
    for i in range(cohort):
        for j in range(2):
            gid = f"f{i}-{j}"
            scr.add_game(GameInfo(gid, white=f"L{i}", black=f"H{j}", white_elo=1400, black_elo=2200, event="Open",
                                  date="2023.06.01"))
            scr.set_result(gid, "1-0" if wins == 1.0 else "1/2-1/2" if wins == 0.5 else "0-1")


def _player(scr: Screener, seed: int = 3) -> None:
    rng = np.random.default_rng(seed)
    for g in range(3):
        gid = f"p{g}"
        scr.add_game(GameInfo(gid, white="P", black=f"O{g}", white_elo=1400, black_elo=1500, event="Open",
                              date="2023.06.01"))
        for ply, d in zip(range(17, 87, 2), moves(rng, positions(rng, 35), SHIPPED.c_for(1700.0))):
            scr.add_ply(ScoredPly(gid, ply, 0, 0, d, uci="e2e4", san="e4"))
        scr.set_result(gid, "1/2-1/2")


def test_a_field_that_outscores_its_tags_moves_its_likely_k40_players_strength():
    """The event's other games say its players under 1800 trail their tags (1400s of 2023 scoring half against
    2200s): a 1400 of that field is compared with a stronger player than the tag alone says, and the row says
    by how much; z against the tag alone does not move."""
    alone = Screener(ScreeningConfig(), CAL)
    _player(alone)
    base = alone.numbers(("P", "Open"))
    assert base.field_lag == pytest.approx(0.0, abs=1e-9)  # its own games only: left out
    scr = Screener(ScreeningConfig(), CAL)
    _field_event(scr, 0.5)
    _player(scr)
    row = scr.numbers(("P", "Open"))
    assert row.k40 is not None and row.k40 > 0.7
    assert row.field_lag is not None and row.field_lag > 150.0
    assert row.strength is not None and base.strength is not None and row.strength > base.strength + 120.0
    assert row.z is not None and base.z is not None and row.z < base.z
    assert row.z_tag == pytest.approx(base.z_tag, abs=0.1)  # the tag alone (to first order in c): no field
    # the field's games withdrawn: the lag goes with them
    for i in range(8):
        for j in range(2):
            scr.remove_game(f"f{i}-{j}")
    again = scr.numbers(("P", "Open"))
    assert again.field_lag == pytest.approx(0.0, abs=FIELD_STEP) and again.strength == pytest.approx(base.strength, abs=5)


def test_the_field_lag_moves_a_tag_as_the_two_part_mixture_it_is():
    """A tag is a K = 40 rating (the field's lag applies) with its chance k40, else settled (it does not): the
    moved prior has the mixture's mean and variance, the lag's uncertainty and which part the player is in
    included, as a draw of the two parts says."""
    rng = np.random.default_rng(5)
    for tag, lag, lag_sd in ((1850.0, 450.0, 170.0), (1500.0, 180.0, 60.0), (2100.0, 0.0, 375.0)):
        prior = tag_prior(tag)
        k40 = rng.random(400_000) < prior.k40
        draws = tag + rng.normal(0.0, prior.sd, k40.size) + k40 * rng.normal(lag, lag_sd, k40.size)
        moved = moved_by_field(prior, lag, lag_sd)
        assert moved.mean == pytest.approx(draws.mean(), abs=1.0)
        assert moved.sd == pytest.approx(draws.std(), rel=0.01)
    settled = tag_prior(2400.0)
    assert moved_by_field(settled, 300.0, 100.0) == settled  # no chance of K = 40: nothing moves


def test_the_screener_compares_a_player_of_a_lagging_field_with_the_moved_prior():
    """An 1850 (k40 about 0.4) of a field whose 1400s trail their tags, with no finished game of their own: the
    screener's strength is the tag's prior moved by the field's lag as the mixture says, mean and sd."""
    scr = Screener(ScreeningConfig(), CAL)
    _field_event(scr, 0.5)
    rng = np.random.default_rng(4)
    scr.add_game(GameInfo("q", white="Q", black="O", white_elo=1850, black_elo=1900, event="Open", date="2024.06.01"))
    for ply, d in zip(range(17, 87, 2), moves(rng, positions(rng, 35), SHIPPED.c_for(1850.0))):
        scr.add_ply(ScoredPly("q", ply, 0, 0, d, uci="e2e4", san="e4"))
    row = scr.numbers(("Q", "Open"))
    evidence = [field_game(1640.0, 2200.0, 0.5)] * 16  # the 1400s of 2023 are 1640s today
    assert all(e is not None for e in evidence)
    lag, sd = field_lag_without(*field_lag(evidence), [])  # type: ignore[arg-type]
    moved = moved_by_field(tag_prior(1850.0), lag, sd)
    assert row.strength == pytest.approx(moved.mean, abs=1.0) and row.strength_sd == pytest.approx(moved.sd, abs=1.0)
    assert row.field_lag == pytest.approx(tag_prior(1850.0).k40 * lag, abs=1.0)
    # wider than the lag's uncertainty alone: which part the player is in is unknown
    assert row.strength_sd > math.hypot(tag_prior(1850.0).sd, tag_prior(1850.0).k40 * sd) + 20.0


def test_a_field_that_scores_about_as_its_tags_say_has_little_lag():
    scr = Screener(ScreeningConfig(), CAL)
    _field_event(scr, 0.0)  # 1400s (1640 today) lose every game to 2200s: about as expected (they'd score 0.6)
    _player(scr)
    row = scr.numbers(("P", "Open"))
    # all lost, as expected: a little below the tags (the prior's sd is wide: losses say little of how far)
    assert row.field_lag is not None and -200.0 < row.field_lag < 0.0


def test_an_engine_user_in_a_field_that_trails_its_tags_is_still_alerted():
    """The field lag lowers the z of a lagging field's players, but not z against the tag alone: a 1400 of that
    field who plays the engine's move 60% of the time is alerted (is he simply underrated? not this much)."""
    scr = Screener(ScreeningConfig(), CAL)
    _field_event(scr, 0.5)
    rng = np.random.default_rng(11)
    for g in range(5):
        gid = f"e{g}"
        scr.add_game(GameInfo(gid, white="P", black=f"O{g}", white_elo=1400, black_elo=1450, event="Open",
                              date="2023.06.01"))
        for ply, d in zip(range(17, 87, 2), moves(rng, positions(rng, 35), SHIPPED.c_for(1640.0), engine=0.6)):
            scr.add_ply(ScoredPly(gid, ply, 0, 0, d, uci="e2e4", san="e4"))
        scr.set_result(gid, "1-0")
    row = scr.numbers(("P", "Open"))
    assert row.field_lag is not None and row.field_lag > 150.0
    assert row.z_tag is not None and row.z_tag >= 4.0 and row.z is not None and row.z >= 4.0
    assert row.level == "alert"


def test_a_blank_junior_name_on_the_command_line_is_one_line(capsys):
    from livemon.cli import main

    pgn = Path(__file__).parent / "data" / "byrne_fischer_1956_pgnmentor.pgn"
    assert main(["analyse", "--screen", "--junior", " ", str(pgn)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("livemon: --junior: screening.juniors") and len(err.strip().splitlines()) == 1


def test_an_event_before_the_scale_change_is_read_with_the_lines_era():
    """The same moves and results of a 2200 (a tag the compression left as it was) in 2022 and in 2025: the 2022
    event's expected c is lower by the line's era term, so the same matches read higher there; undated reads as
    today's event."""
    assert SHIPPED.era < 0.0  # the fit's 2020-2022 players matched the engine less than its 2025 players
    rows = {date: screen("Open", 2200, date, 2200, [1.0, 0.5, 0.0, 0.5], SHIPPED.c_for(2200.0), seed=11)
            .numbers(("P", "Open")) for date in ("2022.06.01", "2025.06.01", "?")}
    before, after, undated = rows["2022.06.01"], rows["2025.06.01"], rows["?"]
    assert before.strength == pytest.approx(after.strength)  # the same tags and results: the same strength
    assert after.c_r == pytest.approx(SHIPPED.c_for(after.strength, 2200.0))
    assert before.c_r == pytest.approx(after.c_r + SHIPPED.era)
    assert undated.c_r == pytest.approx(after.c_r)
    assert before.matches_observed == after.matches_observed
    assert before.z is not None and after.z is not None and before.z > after.z + 0.1
    assert before.ipr is not None and after.ipr is not None and before.ipr > after.ipr  # read against its own era
