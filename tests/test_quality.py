"""The multi-feature estimate (livemon.rating.quality) on real analysed games: exact tallies, live = batch,
the field prior, results, and the reasons shown instead of numbers."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import chess.pgn
import numpy as np
import pytest

from livemon.io.engine import PositionAnalysis
from livemon.live.analysis import position_value, scored_ply
from livemon.live.audience import estimate_display
from livemon.live.estimator import Estimator, ScoredPly
from livemon.live.messages import GameInfo
from livemon.rating.quality import (
    FEATURES,
    FIXED,
    QualityTally,
    fide_dp,
    results_performance,
)
from livemon.rating.quality_params import model_for

REPO = Path(__file__).resolve().parent.parent
EXPORT = REPO / "bench" / "data" / "calibration_d12.jsonl.gz"
COPIED = {"A10_prague_masters_2022.pgn": Path(__file__).parent / "data" / "prague_masters_2022_fsmosca.pgn"}
"""The calibration files the tests read, copied unchanged into tests/data (SOURCES.md): the suite runs anywhere."""
PROFILE = "Stockfish 15.1 depth=12 multipv=4"


def _game_text(name: str, index: int) -> str:
    text = COPIED[name].read_text(encoding="ascii")
    chunks = ["[Event" + c for c in text.split("\n\n[Event")]
    chunks[0] = chunks[0][len("[Event"):]
    return chunks[index - 1]


def real_games(event: str, n: int) -> list[tuple[GameInfo, str, list[ScoredPly]]]:
    """The first ``n`` analysed games of ``event`` in the committed export, scored as livemon scores them."""
    out = []
    with gzip.open(EXPORT, "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            row = json.loads(line)
            if row["file"] not in COPIED:
                continue  # a calibration file not in the repository (only the copied ones travel with it)
            game = chess.pgn.read_game(io.StringIO(_game_text(row["file"], row["index"])))
            h = game.headers
            if h.get("Event") != event:
                continue
            gid = f"{row['file']}#{row['index']}"
            analyses = [None if a is None else PositionAnalysis(int(a[0]), tuple((m, int(s)) for m, s in a[1]), int(a[2]))
                        for a in row["a"]]
            board = game.board()
            plies = []
            for ply, node in enumerate(game.mainline(), start=1):
                before_board = board.copy(stack=False)
                board.push(node.move)
                before = position_value(before_board, analyses[ply - 1])
                after = position_value(board, analyses[ply])
                plies.append(scored_ply(gid, ply, before_board, node.move, before, after, analyses[ply - 1]))
            elo = {c: int(h[f"{c}Elo"]) if h.get(f"{c}Elo", "").isdigit() else None for c in ("White", "Black")}
            out.append((GameInfo(gid, h["White"], h["Black"], elo["White"], elo["Black"], event), h["Result"], plies))
            if len(out) == n:
                break
    return out


@pytest.fixture(scope="module")
def prague():
    return real_games("4th Prague Masters 2022", 12)


def _estimator(games, order: str = "game") -> Estimator:
    est = Estimator()
    est.use_calibration(PROFILE, None)
    for info, _, _ in games:
        est.add_game(info)
    if order == "game":
        for info, result, plies in games:
            for sp in plies:
                est.add_ply(sp)
            est.set_result(info.game_id, result)
    else:  # interleaved, newest game first, with a correction (a rollback and the same plies again)
        longest = max(len(p) for _, _, p in games)
        for i in range(longest):
            for _, _, plies in reversed(games):
                if i < len(plies):
                    est.add_ply(plies[i])
        info, _, plies = games[0]
        est.rollback(info.game_id, 10)
        for sp in plies[9:]:
            est.add_ply(sp)
        for info, result, _ in games:
            est.set_result(info.game_id, result)
    return est


def test_live_equals_batch_on_real_games(prague):
    """Fed in game order, or interleaved with a correction, every player's blocks are the same, bit for bit."""
    a, b = _estimator(prague), _estimator(prague, "interleaved")
    for name, pa in a.players.items():
        pa.quality = None  # a's made from scratch when asked, b's kept move by move
        assert a.estimates(pa) == b.estimates(b.players[name])
    # and the batch tally is what the estimator kept move by move
    model = model_for(PROFILE)
    assert model is not None
    name = next(iter(b.players))
    kept = b.players[name].quality
    assert kept is not None
    fresh = QualityTally.of(model, b._decisions_of(b.players[name]))
    assert kept.stats() == fresh.stats() and kept.stats().positions > 20


def test_tally_sums_are_exact_in_any_order(prague):
    model = model_for(PROFILE)
    assert model is not None
    moves = [(info.game_id, sp.decision, sp.ply) for info, _, plies in prague[:3] for sp in plies if sp.decision]
    forward = QualityTally.of(model, moves)
    backward = QualityTally.of(model, reversed(moves))
    assert forward.stats() == backward.stats()
    t = QualityTally.of(model, moves)
    for m in moves[: len(moves) // 2]:
        t.remove(*m)
    assert t.stats() == QualityTally.of(model, moves[len(moves) // 2:]).stats()
    means = forward.stats().means()
    assert means.shape == (len(FEATURES),) and np.all(np.isfinite(means))
    assert 0.0 <= means[FEATURES.index("top1")] <= 1.0  # a share of moves
    assert all(isinstance(x, int) for x in forward.stats().sums) and FIXED == 2.0**32


def test_after_one_game_no_interval_wider_than_the_fitted_range(prague):
    """One game: either an interval no wider than the ratings fitted on, or the reason instead."""
    model = model_for(PROFILE)
    assert model is not None
    span = model.elo_max - model.elo_min
    for game in prague[:6]:
        est = _estimator([game])
        for p in est.players.values():
            e = est.quality(p)
            if e.cr95 is None:
                assert e.elo is None and "wider than the rating range" in (e.reason or "")
            else:
                assert e.cr95[1] - e.cr95[0] <= span


def test_the_screens_display_rules_for_the_headline(prague):
    """What a screen may show (``estimate_display``): after one game no figure (an interval as wide as the ratings
    fitted on) and the games it takes instead; over the event a figure whose interval never runs past that range."""
    model = model_for(PROFILE)
    assert model is not None
    one = _estimator(prague[:1])
    for p in one.players.values():
        block = one.estimates(p)["moves_estimate"]
        assert estimate_display(block, model, 750.0)["show"] is False  # one game's interval is 900-2,000 Elo wide
        shown = estimate_display(block, model, 1000.0)
        if shown["show"]:  # a grandmaster's one game against a rated opponent: just inside the default width
            assert shown["cr95"][1] - shown["cr95"][0] <= 1000.0 and block["elo"] is not None
        else:
            assert shown["more_games"] >= 1
        if block["elo"] is None:  # wider than the ratings fitted on: the reason instead
            assert "wider than the rating range" in block["reason"]
        else:  # never an interval wider than that range
            assert block["cr95"][1] - block["cr95"][0] <= model.elo_max - model.elo_min
    est = _estimator(prague)
    shown_at = {750.0: 0, 4000.0: 0}
    for p in est.players.values():
        block = est.estimates(p)["moves_estimate"]
        for width in shown_at:  # the default, and one wider than any interval the estimate itself gives
            shown = estimate_display(block, model, width)
            if shown["show"]:
                shown_at[width] += 1
                lo, hi = shown["cr95"]
                assert model.elo_min <= lo < shown["elo"] < hi <= model.elo_max and hi - lo <= width
            elif block["elo"] is None or width == 750.0:
                assert shown["more_games"] is None or shown["more_games"] >= 1
            else:
                assert "outside" in shown["reason"]
    assert shown_at[4000.0] > shown_at[750.0]  # 2-3 games each here: intervals of 630-970 Elo


def test_event_estimate_has_an_interval_and_games_to_150(prague):
    est = _estimator(prague)
    blocks = [est.estimates(p) for p in est.players.values() if len(p.sides) >= 3]
    assert blocks
    for b in blocks:
        m = b["moves_estimate"]
        if m["elo"] is not None:
            lo, hi = m["cr95"]
            assert lo < m["elo"] < hi
        # from moves alone the persistent spread (at the player's level) may be wider than ±150: then never
        # reachable, and said so; otherwise a count of further games, and after a few games not there yet
        if m["games_to_150"] is None:
            assert "cannot narrow" in m["note"]
        else:
            assert m["games_to_150"] >= 1 and "note" not in m
        f = b["field_estimate"]
        assert f["kind"] == "field" and f["label"].startswith("in this field")
        if f["elo"] is not None and m["sd"] is not None:
            assert f["sd"] < m["sd"]  # the field's prior narrows it


def test_field_prior_never_uses_the_players_own_rating(prague):
    est = _estimator(prague)
    player = max(est.players.values(), key=lambda p: len(p.sides))
    before = est.field_quality(player)
    n, mean, _ = est.field_prior(player)
    others = [p.elo for p in est.players.values() if p is not player and p.elo is not None]
    assert n == len(others) and mean == pytest.approx(np.mean(others))
    player.elo = 1000  # the player's own rating changes: the field estimate does not
    est._tags += 1
    assert est.field_quality(player) == before
    other = next(p for p in est.players.values() if p is not player)
    other.elo = (other.elo or 2000) - 600
    est._tags += 1
    assert est.field_quality(player).elo != before.elo


def test_results_performance_matches_fide(prague):
    est = _estimator(prague)
    for p in est.players.values():
        res = est.results_of(p)
        r = est.results_quality(p)
        if not res:
            assert r.elo is None
            continue
        expected = np.mean([o for o, _ in res]) + fide_dp(sum(pt for _, pt in res) / len(res))
        assert r.elo == pytest.approx(expected) and r.games == len(res)
        assert (r.cr95 is None) == (len(res) < 5)
    assert fide_dp(0.0) == -800 and fide_dp(0.5) == 0 and fide_dp(0.84) == 284
    assert results_performance([]).reason == "no finished game against a rated opponent"


def test_a_profile_without_a_model_shows_the_reason(prague):
    est = Estimator()
    est.use_calibration("Stockfish 15.1 depth=14 multipv=9", None)
    info, _, plies = prague[0]
    est.add_game(info)
    for sp in plies:
        est.add_ply(sp)
    block = est.estimates(est.players[info.white])["estimate"]
    assert block["elo"] is None and block["reason"].startswith("uncalibrated: no quality model of the engine profile")


def test_unrated_player_is_estimated(prague):
    """A player without a rating tag still gets the moves estimate (and is never counted against a rating)."""
    est = Estimator()
    est.use_calibration(PROFILE, None)
    games = [g for g in prague if g[0].white == prague[0][0].white or g[0].black == prague[0][0].white]
    name = prague[0][0].white
    for info, result, plies in games:
        est.add_game(GameInfo(info.game_id, info.white, info.black,
                              None if info.white == name else info.white_elo,
                              None if info.black == name else info.black_elo, info.event))
        for sp in plies:
            est.add_ply(sp)
        est.set_result(info.game_id, result)
    p = est.players[name]
    assert p.elo is None and est.quality(p).positions > 0


def test_bench_reads_what_livemon_sums(prague):
    """bench/fit_quality.py's per-game features, summed, are the tally's integers."""
    sys.path.insert(0, str(REPO / "bench"))
    import fit_quality

    model = model_for(PROFILE)
    assert model is not None
    info, _, plies = prague[0]
    moves = [(sp.ply, sp.decision) for sp in plies if sp.white_moved and sp.decision is not None and not sp.forced
             and model.counts(sp.decision, sp.ply)]
    side = fit_quality.Side("e", "p", "g", 2000.0, None, None, "fit", fit_quality._features(moves), moves)
    unit = fit_quality.Unit("e", "p", 2000.0, [side])
    tally = QualityTally.of(model, [(info.game_id, d, ply) for ply, d in moves])
    assert unit.stats() == tally.stats()
    # and with the other side of the game linked, what the estimator reads of both
    theirs = [(sp.ply, sp.decision) for sp in plies if not sp.white_moved and sp.decision is not None
              and not sp.forced and model.counts(sp.decision, sp.ply)]
    other = fit_quality.Side("e", "q", "g", float(info.black_elo), 2000.0, None, "fit", fit_quality._features(theirs),
                             theirs)
    side.elo, side.opponent = float(info.white_elo), other
    est = _estimator(prague[:1])
    assert fit_quality.Unit("e", "p", side.elo, [side]).stats() == est.quality_stats(est.players[info.white], model)
    assert est.quality_stats(est.players[info.white], model).opponents[0] == other.as_opponent()


def test_the_opponents_moves_against_their_rating_correct_each_game(prague):
    """A game the opponent played above their rating was an easy one: the player's score is read lower, and the
    interval narrower than from the player's moves alone; an unrated opponent's moves say nothing."""
    est = _estimator(prague)
    model = model_for(PROFILE)
    assert model is not None and model.joint is not None
    name = prague[0][0].white
    player = est.players[name]
    stats = est.quality_stats(player, model)
    assert len(stats.opponents) == stats.games >= 2 and all(o is not None for o in stats.opponents)
    both, alone = est.quality(player), model.estimate(player.quality.stats())
    assert both.elo is not None and alone.elo is not None and both.sd is not None and alone.sd is not None
    assert both.elo != alone.elo and both.sd < alone.sd
    opponent = est.players[prague[0][0].black]
    assert opponent.elo is not None
    opponent.elo -= 200  # the same moves from a player rated 200 lower: above their rating
    assert est.quality(player).elo < both.elo  # type: ignore[operator]
    opponent.elo = None
    unrated = est.quality_stats(player, model)
    assert sum(o is None for o in unrated.opponents) == 1


def test_combined_lies_between_moves_and_results_and_is_labelled(prague):
    est = _estimator(prague)
    seen = 0
    for p in est.players.values():
        b = est.estimates(p)
        c, r = b["combined_estimate"], b["results_estimate"]
        assert c["kind"] == "moves+results"
        if c["elo"] is None:
            continue
        model = model_for(PROFILE)
        stats = est.quality_stats(p, model)
        moves_point = model.score(stats)
        lo, hi = sorted((moves_point, r["elo"]))
        assert lo - 1e-6 <= c["elo"] <= hi + 1e-6 and c["label"].startswith("moves and results")
        assert c["sd"] <= min(x for x in (b["moves_estimate"]["sd"], r["sd"]) if x is not None) + 1e-6
        seen += 1
    assert seen >= 5


def test_game_report_says_whether_the_players_can_be_told_apart(prague):
    est = _estimator(prague)
    for g in est.games.values():
        t = est.game_report(g)["told_apart"]
        if t["apart"] is None:
            assert t["reason"]
        else:
            lo, hi = t["cr95"]
            assert t["apart"] == (lo > 0 or hi < 0) and 0.0 <= t["p_first_stronger"] <= 1.0


def test_the_field_estimate_reads_the_moves_and_the_results(prague):
    est = _estimator(prague)
    player = max(est.players.values(), key=lambda p: len(p.sides))
    assert len(est.results_of(player)) >= 3
    f, both = est.field_quality(player), est.combined_quality(player)
    assert f.elo is not None and f.sd is not None and both.sd is not None
    assert "moves and results" in f.label and "9 other players" in f.label
    assert f.sd < both.sd  # the field's prior narrows what the moves and results say


BROADCAST = Path(__file__).parent / "data" / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"


def _broadcast_games() -> list[tuple[GameInfo, str]]:
    """The tags and results of a lower-rated event (FIDE 1900s–2300s) exported by a lichess broadcast: every game's
    Event tag is its chapter name ("Round 1: A - B")."""
    out = []
    with BROADCAST.open(encoding="utf-8") as f:
        while (h := chess.pgn.read_headers(f)) is not None:
            elo = {c: int(h[f"{c}Elo"]) if h.get(f"{c}Elo", "").isdigit() else None for c in ("White", "Black")}
            out.append((GameInfo(f"bbddnrr#{len(out) + 1}", h["White"], h["Black"], elo["White"], elo["Black"],
                                 h["Event"]), h["Result"]))
    return out


def _with_broadcast(est: Estimator, games: list[tuple[GameInfo, str]]) -> Estimator:
    for info, result in games:
        est.add_game(info)
        est.set_result(info.game_id, result)
    return est


def test_each_event_has_its_own_field(prague):
    """Two real events followed at once (an elite round robin and a lower-rated event): each player's "in this
    field" reads the players of their own event, as their event alone gives it, not the mixed field."""
    broadcast = _broadcast_games()
    assert len({info.event for info, _ in broadcast}) == len(broadcast)  # chapter names: one a game
    alone, together = _estimator(prague), _with_broadcast(_estimator(prague), broadcast)
    mixed = _with_broadcast(_estimator(prague), broadcast)
    mixed.event_name = "one field"  # [event] name: everything followed is one event
    assert set(together.event_keys().values()) == {"4th Prague Masters 2022", ""}
    only_names = {n for info, _ in broadcast for n in (info.white, info.black)}
    for player in alone.players.values():
        mine, theirs = alone.field_prior(player), together.field_prior(together.players[player.name])
        assert theirs[0] == mine[0] and theirs[1:] == pytest.approx(mine[1:], rel=1e-12)
        assert mixed.field_prior(mixed.players[player.name])[0] == mine[0] + len(only_names)
        a, t = alone.field_quality(player), together.field_quality(together.players[player.name])
        m = mixed.field_quality(mixed.players[player.name])
        if a.elo is None:
            continue
        assert t.elo == pytest.approx(a.elo, abs=1e-6) and t.sd == pytest.approx(a.sd, abs=1e-6)
        # the mixed field (its prior ~200 lower and far wider: 2495 ± 190 against 2692 ± 30) reads otherwise
        assert abs(m.elo - a.elo) > 1 and m.sd > 2 * a.sd
    assert any(alone.field_quality(p).elo is not None for p in alone.players.values())
    only = _with_broadcast(Estimator(), broadcast)  # the broadcast's own players: their event alone
    assert set(only.event_keys().values()) == {"all games"}  # every game named alone: one event, as on the page
    for name, player in only.players.items():
        mine, theirs = only.field_prior(player), together.field_prior(together.players[name])
        assert theirs[0] == mine[0] and theirs[1:] == pytest.approx(mine[1:], rel=1e-12)


def test_a_player_of_two_events_reads_both_fields_each_player_once(prague):
    est = _with_broadcast(_estimator(prague), _broadcast_games())
    guest = next(iter(est.players))  # a Prague player who also plays one game of the broadcast's event
    rival = next(info.white for info, _ in _broadcast_games())
    est.add_game(GameInfo("guest#1", guest, rival, est.players[guest].elo, est.players[rival].elo, "Round 9: x - y"))
    assert est.field_of(est.players[guest]) == ["", "4th Prague Masters 2022"]
    n, mean, _ = est.field_prior(est.players[guest])
    others = [p.elo for p in est.players.values() if p.name != guest and p.elo is not None]
    assert n == len(others) and mean == pytest.approx(np.mean(others))
    names = {n for info, _ in _broadcast_games() for n in (info.white, info.black)}
    assert est.field_prior(est.players[rival])[0] == len(names)  # the rival's event: the 9 others and the guest
    assert est.field_of(est.players[rival]) == [""]


def test_an_event_outside_the_collection_reads_back_from_its_export():
    """The 2025 round robin's committed analyses (``calibration_data.py export-event``) read back under the one
    event name of the export, held back, each game whole, its players keyed by FIDE id, its tags on today's scale
    (2025: as printed)."""
    sys.path.insert(0, str(REPO / "bench"))
    import calibration_data
    import calibration_split
    import fit_quality

    games = list(calibration_data.load(fit_quality.HELD_BACK_2025))
    source = calibration_data.event_export(fit_quality.HELD_BACK_2025)
    assert source is not None and source[0] == REPO / "tests" / "data" / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
    texts = dict(calibration_data.pgn_games(source[0]))
    assert len(games) == len(texts) == 45
    assert {g.event for g in games} == {source[1]} == set(calibration_split.HELD_BACK_2025)
    assert {g.part for g in games} == {"test"}
    for g in games:
        game = chess.pgn.read_game(io.StringIO(texts[g.index]))
        assert len(g.plies) == sum(1 for _ in game.mainline_moves())
        assert (g.white_id, g.white_elo) == (game.headers["WhiteFideId"], int(game.headers["WhiteElo"]))
        assert all(sp.decision is not None for sp in g.plies if not sp.forced and sp.ply < len(g.plies))


def test_the_headline_is_the_estimate_in_this_field_once_there_is_one_else_the_moves_alone(prague):
    """``estimate`` (what every screen leads with) is the field estimate where the player's event has two other
    rated players, and the moves alone where it has not (a match, an unrated field): its ``kind`` says which."""
    est = _estimator(prague)
    kinds = set()
    for p in est.players.values():
        b = est.estimates(p)
        want = b["field_estimate"] if b["field_estimate"]["elo"] is not None else b["moves_estimate"]
        assert b["estimate"] == want and b["estimate"] is not want  # a copy: a block's display stays its own
        kinds.add(b["estimate"]["kind"])
    assert kinds == {"field"}  # Prague: a round robin of ten rated players
    alone = _estimator(prague[:1])  # one game: each player's field is the one other player, too few for a prior
    for p in alone.players.values():
        b = alone.estimates(p)
        assert b["field_estimate"]["elo"] is None and b["estimate"] == b["moves_estimate"]
        assert b["estimate"]["kind"] == "moves"
