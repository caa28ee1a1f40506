"""Screening per player per event (livemon.live.screener): exact tails, exclusions, rollback, re-rating, alerts."""

from __future__ import annotations

import dataclasses
import itertools
import math
import struct
from pathlib import Path

import chess
import chess.polyglot
import numpy as np
import pytest

from livemon.config import ScreeningConfig
from livemon.live.estimator import ScoredPly
from livemon.live.messages import GameInfo
from livemon.rating.agent import Decision
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.rating.screening import PoissonBinomial, tail_z
from livemon.io.book import open_book
from livemon.live.screener import Screener, _pos
from tests import agents

CAL = ProfileCalibration("test profile", 3000.0, Calibration(a=-1.0, b=0.001, n=30, elo_min=1800, elo_max=2800,
                                                              r2=0.6, residual_sd=0.2, profile="test profile"))


def brute_force_tail(ps: list[float], m: int) -> float:
    """P(Σ Bernoulli(p_t) ≥ m) by enumerating every outcome."""
    total = 0.0
    for outcome in itertools.product((0, 1), repeat=len(ps)):
        if sum(outcome) >= m:
            total += math.prod(p if o else 1.0 - p for p, o in zip(ps, outcome))
    return total


def test_poisson_binomial_tail_equals_brute_force_enumeration():
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 9, 12):
        ps = list(rng.uniform(0.02, 0.98, n))
        pb = PoissonBinomial(ps)
        assert pb.n == n and pb.pmf.sum() == pytest.approx(1.0, abs=1e-14)
        for m in range(-1, n + 2):
            assert pb.upper_tail(m) == pytest.approx(brute_force_tail(ps, m), rel=1e-12, abs=1e-300), (n, m)
            # the mid-p tail: P(M > m) + P(M = m) / 2, the mean of the tails from m and from m + 1
            mid = (brute_force_tail(ps, m) + brute_force_tail(ps, m + 1)) / 2.0
            assert pb.mid_tail(m) == pytest.approx(mid, rel=1e-12, abs=1e-300), (n, m)
    # the equivalent z of a tail: the normal's own tails come back
    assert tail_z(0.5) == pytest.approx(0.0, abs=1e-12)
    assert tail_z(0.0013498980316301) == pytest.approx(3.0, abs=1e-9)


def test_mid_p_tail_gives_honest_players_n01_and_the_nominal_false_alert_rate():
    """Players who are E(c_r): the mid-p z has mean 0 and sd 1 at 20 and 60 positions, and P(z ≥ 2.5) at 60
    positions is nominal; the P(M ≥ m) tail reads low (the point mass at the observed count), the more so the fewer
    positions, and the normal approximation is only as good as the mid-p here."""
    rng = np.random.default_rng(3)
    c_r = 0.6
    trials = 6000
    nominal = 0.0062097
    for npos in (20, 60):
        values, _ = agents.random_positions(rng, (trials, npos))  # every trial's positions drawn at once
        p0 = agents.probabilities(values, c_r)[..., 0]  # the best move's probability
        played_best = (rng.random((trials, npos)) < p0).sum(axis=1)
        pmf = np.zeros((trials, npos + 1))  # every trial's exact distribution at once, by PoissonBinomial's recursion
        pmf[:, 0] = 1.0
        for t in range(npos):
            p = p0[:, t:t + 1]
            pmf[:, 1:] = pmf[:, 1:] * (1.0 - p) + pmf[:, :-1] * p
            pmf[:, :1] *= 1.0 - p
        at = np.take_along_axis(pmf, played_best[:, None], axis=1)[:, 0]
        above = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]  # P(M ≥ m) for each m
        ge = np.take_along_axis(above, played_best[:, None], axis=1)[:, 0]
        for i in range(25):  # the product's tails, on a few trials
            pb = PoissonBinomial(p0[i].tolist())
            assert pb.mid_tail(int(played_best[i])) == pytest.approx(ge[i] - at[i] / 2.0, rel=1e-9, abs=1e-15)
        z_mid, z_ge = np.array([tail_z(x) for x in ge - at / 2.0]), np.array([tail_z(x) for x in ge])
        se_mean = 1.0 / math.sqrt(trials)
        assert abs(z_mid.mean()) < 4 * se_mean and abs(z_mid.std() - 1.0) < 0.05, (npos, z_mid.mean(), z_mid.std())
        assert z_ge.mean() < -0.1, (npos, z_ge.mean())  # what the mid-p corrects: -0.24 at 20, -0.13 at 60
        if npos == 60:
            k = int((z_mid >= 2.5).sum())
            se = math.sqrt(nominal * (1 - nominal) / trials)
            assert abs(k / trials - nominal) <= 3 * se, (k, trials)


def game(gid: str, white: str, black: str, event: str = "Open", welo: int | None = 2000, belo: int | None = 2000) -> GameInfo:
    return GameInfo(gid, white=white, black=black, white_elo=welo, black_elo=belo, event=event)


def plies(gid: str, n: int, seed: int) -> list[ScoredPly]:
    """n plies with varied candidate values and moves, a forced move at ply 7 and a decided position at ply 9."""
    rng = np.random.default_rng(seed)
    out = []
    for ply in range(1, n + 1):
        if ply == 7:
            out.append(ScoredPly(gid, ply, 0, 0, None, uci="e1g1", san="O-O", forced=True))
            continue
        k = int(rng.integers(2, 5))
        values = np.concatenate(([0.0], -np.sort(rng.exponential(0.6, k - 1))))
        if ply == 9:
            values = values + 5.0
        played = int(rng.integers(0, k))
        out.append(ScoredPly(gid, ply, 0, 0, Decision(tuple(values), played), uci=f"m{ply}", san=f"M{ply}"))
    return out


def fed(infos: list[GameInfo], sps: list[ScoredPly], cfg: ScreeningConfig | None = None) -> Screener:
    scr = Screener(cfg or ScreeningConfig(book_moves=0, min_positions=5), CAL)
    for info in infos:
        scr.add_game(info)
    for sp in sps:
        scr.add_ply(sp)
    return scr


def test_exclusions_are_counted_by_reason_and_positions_screened():
    scr = fed([game("g", "A", "B")], plies("g", 40, 1) + [ScoredPly("g", 41, 0, 0, None, uci="a2a3", san="a3")])
    a, b = scr.numbers(("A", "Open")), scr.numbers(("B", "Open"))
    assert a.excluded == {"decided": 1, "forced": 1, "no_multipv": 1}  # plies 7, 9 and 41 are White's
    assert a.positions == 21 - 3 and b.positions == 20 and b.excluded == {}
    assert a.c_r == pytest.approx(1.0) and a.rating_source == "tag"
    booked = fed([game("g", "A", "B")], plies("g", 40, 1), ScreeningConfig(book_moves=4))
    assert booked.numbers(("A", "Open")).excluded == {"book": 3, "decided": 1, "forced": 1}  # ply 7: forced first


def test_polyglot_book_positions_are_excluded(tmp_path: Path):
    board = chess.Board()
    entries = []
    for uci in ("e2e4", "e7e5"):  # the start position and the one after 1.e4 are "in the book"
        move = chess.Move.from_uci(uci)
        raw = (move.to_square) | (move.from_square << 6)
        entries.append(struct.pack(">QHHI", chess.polyglot.zobrist_hash(board), raw, 1, 0))
        board.push(move)
    book = tmp_path / "tiny.bin"
    book.write_bytes(b"".join(sorted(entries)))
    in_book = open_book(str(book))
    assert in_book is not None and open_book(str(tmp_path / "missing.bin")) is None
    scr = Screener(ScreeningConfig(book_moves=0), CAL, in_book)
    scr.add_game(game("g", "A", "B"))
    board = chess.Board()
    for ply, uci in enumerate(("e2e4", "e7e5", "g1f3"), start=1):
        scr.add_ply(ScoredPly("g", ply, 0, 0, Decision((0.1, 0.0), 0), uci=uci, zobrist=chess.polyglot.zobrist_hash(board)))
        board.push_uci(uci)
    assert scr.numbers(("A", "Open")).excluded == {"book": 1} and scr.numbers(("A", "Open")).positions == 1
    assert scr.numbers(("B", "Open")).excluded == {"book": 1} and scr.numbers(("B", "Open")).positions == 0


def test_rollback_withdraws_exactly():
    g1, g2 = plies("g1", 50, 2), plies("g2", 44, 3)
    infos = [game("g1", "A", "B"), game("g2", "B", "A")]
    whole = fed(infos, g1 + g2)
    whole.rollback("g2", 21)
    reference = fed(infos, g1 + g2[:20])
    for key in reference.keys():
        assert whole.numbers(key) == reference.numbers(key)
    assert whole.numbers(("A", "Open")).positions < fed(infos, g1 + g2).numbers(("A", "Open")).positions
    # a corrected ply (same number, another move) replaces the old one
    corrected = fed(infos, g1 + g2[:20])
    corrected.add_ply(g2[20])
    corrected.add_ply(ScoredPly("g2", 21, 0, 0, Decision((0.0, -0.2), 1), uci="x", san="X"))
    again = fed(infos, g1 + g2[:20] + [ScoredPly("g2", 21, 0, 0, Decision((0.0, -0.2), 1), uci="x", san="X")])
    assert corrected.numbers(("B", "Open")) == again.numbers(("B", "Open"))


def test_order_of_arrival_does_not_change_the_numbers():
    sps = plies("g1", 60, 4) + plies("g2", 60, 5)
    infos = [game("g1", "A", "B"), game("g2", "B", "A")]
    in_order = fed(infos, sps)
    shuffled = list(sps)
    np.random.default_rng(0).shuffle(shuffled)
    scr = Screener(ScreeningConfig(book_moves=0, min_positions=5), CAL)
    for info in infos:
        scr.add_game(info)
    for i, sp in enumerate(shuffled):
        scr.add_ply(sp)
        if i % 7 == 0:
            scr.numbers(scr.keys()[0])  # builds the running distribution midway
    for key in in_order.keys():
        assert scr.numbers(key) == in_order.numbers(key)


def test_a_result_counts_whether_it_comes_before_or_after_the_players_first_screened_ply():
    """A restart hands the core a finished game's result before its plies are scored again: the event's results
    are the player's evidence either way."""
    infos = [game("g1", "A", "B", welo=1500, belo=2300), game("g2", "B", "A", welo=2300, belo=1500)]
    sps = plies("g1", 60, 4) + plies("g2", 60, 5)
    after = fed(infos, sps)
    after.set_result("g1", "1-0")
    before = Screener(ScreeningConfig(book_moves=0, min_positions=5), CAL)
    for info in infos:
        before.add_game(info)
    before.set_result("g1", "1-0")
    for sp in sps:
        before.add_ply(sp)
    for key in after.keys():
        assert before.numbers(key) == after.numbers(key)
    assert after.numbers(("A", "Open")).results == 1


def test_a_rating_change_rescores_exactly():
    infos = [game("g", "A", "B", welo=None, belo=2100)]
    sps = plies("g", 80, 6)
    late = fed(infos, sps)
    assert late.numbers(("A", "Open")).rating_source == "none" and late.numbers(("A", "Open")).z is None
    assert late.set_fallback_ratings({"A": 1700.0, "B": 2500.0}) == [("A", "Open")]  # B keeps its tag
    early = Screener(ScreeningConfig(book_moves=0, min_positions=5), CAL)
    early.set_fallback_ratings({"A": 1700.0})
    for info in infos:
        early.add_game(info)
    for sp in sps:
        early.add_ply(sp)
    assert late.numbers(("A", "Open")) == early.numbers(("A", "Open"))
    row = late.numbers(("A", "Open"))
    assert row.rating == 1700.0 and row.rating_source == "ttt" and row.c_r == pytest.approx(0.7)
    assert late.numbers(("B", "Open")).rating_source == "tag"
    # a new TTT figure re-scores; the same figure again does not
    assert late.set_fallback_ratings({"A": 1900.0}) == [("A", "Open")] and late.set_fallback_ratings({"A": 1900.0}) == []
    assert late.numbers(("A", "Open")).c_r == pytest.approx(0.9)


def test_a_ttt_rating_counts_only_with_enough_games_behind_it():
    infos = [game("g", "A", "B", welo=None, belo=None)]
    scr = fed(infos, plies("g", 80, 6))
    assert scr.cfg.min_ttt_games == 10  # the default
    assert scr.set_fallback_ratings({"A": 1700.0, "B": 2000.0}, {"A": 9, "B": 10}) == [("B", "Open")]
    assert scr.numbers(("A", "Open")).rating_source == "none" and scr.numbers(("B", "Open")).rating_source == "ttt"
    # A reaches ten games; B's rating is recomputed from too few (a new fit) -> unrated again
    assert sorted(scr.set_fallback_ratings({"A": 1710.0, "B": 2010.0}, {"A": 10, "B": 3})) == [("A", "Open"), ("B", "Open")]
    assert scr.numbers(("A", "Open")).rating == 1710.0 and scr.numbers(("B", "Open")).rating is None


def test_each_level_is_raised_once_and_carries_its_numbers():
    cfg = ScreeningConfig(book_moves=0, notice_z=1.0, alert_z=2.0, min_positions=30)
    scr = Screener(cfg, CAL)
    scr.add_game(game("g", "A", "B"))
    raised = []
    for ply in range(1, 201, 2):  # A always plays the top move of a position where E(1.0) would do so 3 times in 4
        scr.add_ply(ScoredPly("g", ply, 0, 0, Decision((0.0, -0.3, -0.9), 0), uci="a1a2", san=f"Ra{ply}"))
        for a in scr.new_alerts(("A", "Open")):
            raised.append((ply, a))
    assert [a.level for _, a in raised] == ["notice", "alert"]
    first_ply = raised[0][0]
    assert first_ply == 2 * 30 - 1  # nothing before min_positions, though z was already high
    notice = raised[0][1]
    assert notice.numbers.positions == 30 and notice.numbers.z >= 1.0 and notice.threshold == 1.0
    assert len(notice.top_moves) == 5 and all(m["matched"] and m["share"] > 0 for m in notice.top_moves)
    # restored from a store: nothing is raised again
    again = Screener(cfg, CAL)
    again.mark_raised("A", "Open", "notice")
    again.mark_raised("A", "Open", "alert")
    again.add_game(game("g", "A", "B"))
    for ply in range(1, 201, 2):
        again.add_ply(ScoredPly("g", ply, 0, 0, Decision((0.0, -0.3, -0.9), 0), uci="a1a2"))
        assert again.new_alerts(("A", "Open")) == []
    assert again.numbers(("A", "Open")).level == "alert"


def test_statistics_and_z_scale():
    sps = plies("g", 120, 8)
    match = fed([game("g", "A", "B")], sps, ScreeningConfig(book_moves=0, statistic="match")).numbers(("A", "Open"))
    loss = fed([game("g", "A", "B")], sps, ScreeningConfig(book_moves=0, statistic="loss")).numbers(("A", "Open"))
    best = fed([game("g", "A", "B")], sps, ScreeningConfig(book_moves=0, statistic="max")).numbers(("A", "Open"))
    assert match.z == match.z_match and loss.z == loss.z_loss and best.z == max(match.z_match, match.z_loss)
    assert match.roi == pytest.approx(50 + 5 * match.z)

    class Scaled(ProfileCalibration):
        z_scale = 2.0

    scaled = Screener(ScreeningConfig(book_moves=0), Scaled(CAL.profile, CAL.engine_strength, CAL.c_map))
    scaled.add_game(game("g", "A", "B"))
    for sp in sps:
        scaled.add_ply(sp)
    row = scaled.numbers(("A", "Open"))
    assert row.z_scale == 2.0 and row.z_match == pytest.approx(match.z_match / 2) and row.z_loss == pytest.approx(match.z_loss / 2)


def test_without_a_calibration_screening_is_off():
    scr = Screener(ScreeningConfig(book_moves=0), ProfileCalibration("p", 2900.0, None), profile="p")
    scr.add_game(game("g", "A", "B"))
    assert not scr.enabled and "'p'" in scr.off_reason
    assert all(scr.add_ply(sp) is None for sp in plies("g", 20, 9)) and scr.keys() == []


def test_scope_all_screens_games_with_per_game_event_tags_as_one_event():
    """lichess study exports put "Round 1: A - B" in Event: scope = "all" keeps a player's games together."""
    from livemon.config import ScreeningConfig
    from livemon.live.estimator import ScoredPly
    from livemon.live.messages import GameInfo
    from livemon.rating.agent import Decision
    from livemon.rating.calibration import Calibration, ProfileCalibration
    from livemon.live.screener import Screener

    cal = ProfileCalibration("p", None, Calibration.fit([(1800, 0.5), (2600, 1.5)]))
    for scope, events in (("event", 2), ("all", 1)):
        scr = Screener(ScreeningConfig(scope=scope, min_positions=1, book_moves=0), cal)
        for g in ("g1", "g2"):
            scr.add_game(GameInfo(g, white="A", black="B", white_elo=2000, black_elo=2000, event=f"Round {g}: A - B"))
            scr.add_ply(ScoredPly(g, 21, 20, 30, Decision((0.1, -0.2), 0), uci="e2e4", san="e4"))
        assert len({e for _, e in scr.keys()}) == events


def test_screening_with_other_exclusions_than_the_calibration_says_so():
    from dataclasses import replace

    from livemon.config import ScreeningConfig
    from livemon.rating.calibration import Calibration, ProfileCalibration
    from livemon.live.screener import Screener
    from livemon.io.store import shipped_calibrations

    fitted = replace(Calibration.fit([(1800, 0.5), (2600, 1.5)]), book_moves=8, eval_bound=3.0)
    cal = ProfileCalibration("p", None, fitted)
    assert Screener(ScreeningConfig(), cal).mismatch == ""
    said = Screener(ScreeningConfig(book_moves=0), cal).mismatch
    assert "book_moves 0 (calibrated with 8)" in said and "eval_bound" not in said
    assert Screener(ScreeningConfig(book_moves=0), ProfileCalibration("p", None, Calibration.fit([(1, 0), (2, 1)]))).mismatch == ""
    # the shipped calibration records the defaults it was fitted with
    shipped_all = shipped_calibrations()
    assert shipped_all["Stockfish 15.1 depth=12 multipv=4"].c_map is not None  # the default profile screens
    for shipped in shipped_all.values():
        assert Screener(ScreeningConfig(), shipped).mismatch == ""
        if shipped.c_map is not None:  # a withheld screening map (depth 14: docs/calibration.md) is None
            assert shipped.c_map.book_moves == ScreeningConfig().book_moves


def test_running_exact_sums_give_the_numbers_of_a_screener_fed_from_scratch():
    """A track's sums are kept as positions come, go (rollback) and are re-scored (a new rating),
    exactly: the numbers equal those of a fresh screener fed the surviving plies in order, bit for bit."""
    import random

    rng = random.Random(11)
    cfg = ScreeningConfig(min_positions=5, book_moves=2)
    infos = [GameInfo(f"g{i}", white="A", black=f"B{i}", white_elo=2300, black_elo=2200, event="E") for i in range(3)]

    def ply(gid: str, k: int) -> ScoredPly:
        vals = tuple(sorted((round(rng.uniform(-4.5, 1.0), 2) for _ in range(rng.randint(2, 4))), reverse=True))
        decision = None if rng.random() < 0.1 else Decision(vals, rng.randrange(len(vals)))
        return ScoredPly(gid, k, 0, 0, decision, uci="e2e4", san="e4", forced=rng.random() < 0.05)

    live = Screener(cfg, CAL)
    for info in infos:
        live.add_game(info)
    plies = {(info.game_id, k): ply(info.game_id, k) for info in infos for k in range(1, 61)}
    order = list(plies)
    rng.shuffle(order)
    for key in order:
        live.add_ply(plies[key])
    live.rollback("g1", 41)  # a correction: these plies go, others come instead
    for k in range(41, 51):
        plies[("g1", k)] = ply("g1", k)
        live.add_ply(plies[("g1", k)])
    for k in range(51, 61):
        del plies[("g1", k)]
    live.add_game(dataclasses.replace(infos[0], white_elo=2450))  # A re-rated: every position re-scored
    fresh = Screener(cfg, CAL)
    for info in infos:
        fresh.add_game(info)
    fresh.add_game(dataclasses.replace(infos[0], white_elo=2450))
    for key in sorted(plies, key=lambda gk: (int(gk[0][1:]), gk[1])):
        fresh.add_ply(plies[key])
    for track in fresh.tracks:
        got, want = live.numbers(track), fresh.numbers(track)
        assert got == want and got.positions > 0
        es = list(live.tracks[track].expectations().values())
        assert live.tracks[track].sums[3] / 2**1074 == math.fsum(e.loss for e in es)
    assert live.numbers(("A", "E")).excluded == fresh.numbers(("A", "E")).excluded != {}


def test_packed_finished_games_give_the_same_numbers_and_unpack_for_a_correction():
    """A finished game's positions packed (no entry per position) change no number, top move,
    re-rating or rollback: the same as a screener that never packed, before and after a correction."""
    from livemon.live.plies import PlyLog

    rng = np.random.default_rng(11)
    cfg = ScreeningConfig(min_positions=5, book_moves=2)

    def ply(game: str, k: int) -> ScoredPly:
        if k % 9 == 0:  # a forced move now and then: excluded
            return ScoredPly(game, k, 0, 0, None, uci="a2a3", san="a3", forced=True)
        values = tuple(np.concatenate(([0.0], -np.sort(rng.exponential(0.4, 3)))))
        return ScoredPly(game, k, 0, 0, Decision(values, int(rng.integers(0, 4))), uci=f"m{k}", san=f"S{k}")

    infos = [GameInfo(f"g{i}", white=f"P{i % 3}", black=f"P{(i + 1) % 3}", white_elo=2300, black_elo=2500,
                      event="Open") for i in range(6)]
    games = {info.game_id: [ply(info.game_id, k) for k in range(1, 61)] for info in infos}
    packed_scr, plain = Screener(cfg, CAL), Screener(cfg, CAL)
    for scr in (packed_scr, plain):
        for info in infos:
            scr.add_game(info)
            for sp in games[info.game_id]:
                scr.add_ply(sp)
            if scr is packed_scr and info.game_id != "g5":  # g5 is still going
                log = PlyLog()
                for sp in games[info.game_id]:
                    log.add(sp)
                log.seal()
                scr.pack(info.game_id, log)

    def same() -> None:
        assert packed_scr.table() == plain.table()
        for key in plain.keys():
            assert packed_scr.top_moves(key) == plain.top_moves(key)

    track = packed_scr.tracks[("P0", "Open")]
    assert not any(k < _pos(5, 0) for k in track.used) and len(track.packed) == 3 and "g0" not in packed_scr._where
    # the left-out positions (book, forced) of the finished games packed too: a ply and a byte each, no dict entry
    assert not any(k < _pos(5, 0) for k in track.excluded) and sum(len(rec.excluded) > 0 for rec in track.packed.values()) == 3
    assert sum(len(rec.excluded) for rec in track.packed.values()) + len(track.excluded) == sum(
        track.reasons.values()) > 3 * 6
    same()
    for scr in (packed_scr, plain):  # a new rating re-scores every position, packed ones too
        scr.add_game(dataclasses.replace(infos[0], white_elo=2600))
    same()
    for scr in (packed_scr, plain):  # a correction of a finished game: it is unpacked, rolled back, played on
        scr.rollback("g1", 31)
        for sp in games["g2"][30:40]:
            scr.add_ply(dataclasses.replace(sp, game_id="g1"))
    same()
    assert "g1" in packed_scr._where and 1 not in packed_scr.tracks[("P1", "Open")].packed
