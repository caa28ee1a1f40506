"""The audience's models: lichess's win%, accuracy and move classes; FIDE's TPR and rating change.

Each figure is checked against the formula written out again here from lichess's and FIDE's texts
(not by calling the module's helpers), on hand-made and real games.
"""

from __future__ import annotations

import datetime

import math
import statistics
from pathlib import Path

import chess.pgn
import pytest

from livemon.rating.accuracy import (
    event_accuracy,
    game_accuracy,
    move_accuracy,
    move_class,
    win_percent,
    winning_chances,
)
from livemon.rating.evaluation import score_cp
from livemon.rating.fide import dp, expected_score, k_factor, performance_rating, rating_change

BROADCAST = Path(__file__).resolve().parent / "data" / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
"""A lichess broadcast export: every move has its [%eval], and lichess's own judgements in the comments."""


def lichess_win(cp: int) -> float:
    cp = max(-1000, min(1000, cp))
    return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)


def lichess_move(before: float, after: float) -> float:
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (before - after)) - 3.166924740191411 + 1
    return min(100.0, max(0.0, raw))


def lichess_game(cps: list[int]) -> tuple[float | None, float | None]:
    """AccuracyPercent.gameAccuracy, transliterated step by step (Scala's List.fill, sliding, zip)."""
    wins = [lichess_win(15)] + [lichess_win(c) for c in cps]
    size = min(8, max(2, len(cps) // 10))
    windows: list[list[float]] = []
    for _ in range(min(size, len(wins)) - 2):
        windows.append(wins[:size])
    if len(wins) <= size:
        windows.append(wins)
    else:
        for i in range(len(wins) - size + 1):
            windows.append(wins[i:i + size])
    weights = [min(12.0, max(0.5, statistics.pstdev(w))) for w in windows]
    per: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for i, (pair, weight) in enumerate(zip(zip(wins, wins[1:]), weights)):
        white = i % 2 == 0
        prev, nxt = pair
        acc = lichess_move(prev, nxt) if white else lichess_move(100 - prev, 100 - nxt)
        per[white].append((acc, weight))
    out = []
    for white in (True, False):
        xs = per[white]
        if not xs:
            out.append(None)
            continue
        weighted = sum(a * w for a, w in xs) / sum(w for _, w in xs)
        harmonic = len(xs) / sum(1 / max(1.0, a) for a, _ in xs)
        out.append((weighted + harmonic) / 2)
    return out[0], out[1]


def test_win_percent_is_lichess_curve_with_the_ceiling() -> None:
    for cp in (-5000, -3900, -1001, -1000, -350, -15, 0, 1, 15, 99, 640, 1000, 3900):
        assert win_percent(cp) == pytest.approx(lichess_win(cp), abs=1e-12)
    assert win_percent(3900) == win_percent(1000) < 100.0
    assert win_percent(-3900) > 0.0
    assert winning_chances(250) == pytest.approx((win_percent(250) - 50) / 50)


def test_move_accuracy_bonus_and_clamp() -> None:
    assert move_accuracy(55.0, 55.0) == 100.0
    assert move_accuracy(55.0, 70.0) == 100.0
    # a zero loss in the curve gives 103.1668 - 3.1669 + 1 = 101: clamped to 100
    assert move_accuracy(55.0, 54.9999999) == 100.0
    assert move_accuracy(70.0, 60.0) == pytest.approx(lichess_move(70.0, 60.0))
    assert move_accuracy(90.0, 10.0) == pytest.approx(max(0.0, 103.1668100711649 * math.exp(-0.04354415386753951 * 80)
                                                          - 3.166924740191411 + 1))
    assert move_accuracy(100.0, 0.0) == 0.0


@pytest.mark.parametrize("cps", [
    [30],
    [30, 25],
    [20, 10, -250, -240, -260, -250],
    [(-1) ** k * 37 * k for k in range(1, 24)],  # 23 plies: windows of 2
    [int(400 * math.sin(k / 3)) for k in range(1, 35)],  # 34 plies: windows of 3, one head copy
    [int(900 * math.sin(k / 7)) + (3900 if k == 60 else 0) for k in range(1, 101)],  # 100 plies: windows of 8
])
def test_game_accuracy_matches_lichess_transliteration(cps: list[int]) -> None:
    g = game_accuracy(cps)
    white, black = lichess_game(cps)
    assert g.white == pytest.approx(white, abs=1e-9) if white is not None else g.white is None
    assert g.black == pytest.approx(black, abs=1e-9) if black is not None else g.black is None
    assert len(g.moves) == len(cps)


def _broadcast_games() -> list[chess.pgn.Game]:
    games = []
    with BROADCAST.open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            nodes = list(game.mainline())
            if nodes and all(n.eval() is not None for n in nodes[:-1]):
                games.append(game)
    return games


def test_game_accuracy_on_real_games() -> None:
    """A real round's games with their [%eval]s: each side's figure in 0..100 and the transliteration's."""
    games = _broadcast_games()
    assert len(games) >= 30
    for game in games:
        cps = [score_cp(n.eval().white()) for n in game.mainline() if n.eval() is not None]
        g = game_accuracy(cps)
        white, black = lichess_game(cps)
        assert g.white == pytest.approx(white) and g.black == pytest.approx(black)
        assert 0 < g.white <= 100 and 0 < g.black <= 100


def test_move_classes_agree_with_lichess_annotations() -> None:
    """lichess annotated these games itself ("Inaccuracy.", "Mistake.", "Blunder.", and its mate texts
    with a ?!/?/?? glyph): the classes from the same [%eval]s agree on at least 99.5% of the moves (the
    rest: an annotation made from lichess's server analysis where the study shows another eval)."""
    glyphs = {chess.pgn.NAG_BLUNDER: "blunder", chess.pgn.NAG_MISTAKE: "mistake", chess.pgn.NAG_DUBIOUS_MOVE: "inaccuracy"}
    total = agree = judged = 0
    for game in _broadcast_games():
        prev = 15  # lichess's Cp.initial before the first move
        for ply, node in enumerate(game.mainline(), start=1):
            if node.eval() is None:
                break
            cp = score_cp(node.eval().white())
            c = node.comment
            theirs = ("blunder" if "Blunder." in c else "mistake" if "Mistake." in c
                      else "inaccuracy" if "Inaccuracy." in c else None)
            if "Checkmate is now unavoidable" in c or "Lost forced checkmate" in c:
                theirs = glyphs.get(next(iter(node.nags), 0))
            mine = move_class(prev, cp, ply % 2 == 1)
            total += 1
            agree += mine == theirs
            judged += theirs is not None
            prev = cp
    assert total > 3000 and judged > 100
    assert agree / total >= 0.995


def test_game_accuracy_none_before_a_side_moved() -> None:
    assert game_accuracy([]).white is None and game_accuracy([]).black is None
    one = game_accuracy([40])
    assert one.white is not None and one.black is None


def test_move_classes_at_lichess_thresholds() -> None:
    # find cp drops that cross 0.1 / 0.2 / 0.3 of winning chances from equality, by bisection on the curve
    def drop_to(threshold: float) -> int:
        return next(cp for cp in range(0, 2000) if winning_chances(0) - winning_chances(-cp) >= threshold)

    for threshold, name in ((0.1, "inaccuracy"), (0.2, "mistake"), (0.3, "blunder")):
        cp = drop_to(threshold)
        assert move_class(0, -cp, True) == name
        assert move_class(0, cp, False) == name  # Black's view
        assert move_class(0, -(cp - 1), True) != name
    assert move_class(800, 650, True) is None  # the curve is flat far from equality
    assert move_class(0, -150, True) == "mistake"  # the same 150 cp near equality
    assert move_class(-20, -3900, True) == "blunder"  # lets a mate in
    assert move_class(-750, -3900, True) == "mistake"
    assert move_class(-1200, -3900, True) == "inaccuracy"
    assert move_class(3900, 800, True) == "mistake"  # loses a forced mate, still +8
    assert move_class(-3900, 3900, False) == "blunder"  # Black had mate, now is mated
    assert move_class(3900, 3900, True) is None  # a mate kept
    assert move_class(-3900, -3900, True) is None  # mated either way


def test_event_accuracy_is_mean_of_games() -> None:
    assert event_accuracy([80.0, 90.0, None]) == 85.0
    assert event_accuracy([]) is None


# -- FIDE ----------------------------------------------------------------------------------------------


def test_dp_table_symmetry_and_monotone() -> None:
    ps = [k / 100 for k in range(101)]
    dps = [dp(p) for p in ps]
    assert dps == sorted(dps) and len(set(dps)) == 101
    assert all(dp(p) == -dp(1 - p) for p in ps)
    assert (dp(0.0), dp(0.5), dp(1.0), dp(0.8), dp(0.2)) == (-800, 0, 800, 240, -240)
    assert dp(5.5 / 9) == dp(0.61) == 80  # 0.6111 rounds to 0.61


def test_tpr_and_rating_change_by_hand() -> None:
    # 9 games at Ra 2600 with 6/9 = 0.667 -> p .67 -> dp 125
    assert performance_rating([2600] * 9, 6.0) == 2725
    # rating change: K 10 (rated 2750), against 2650 (D 100 -> PD .64) a win, 2850 a loss (PD .36)
    k = k_factor(2750)
    assert rating_change(2750, [(2650, 1.0), (2850, 0.0)], k) == pytest.approx(10 * (1 - 0.64) + 10 * (0 - 0.36))
    # the 400-point rule: a 1,000-point gap is as 400 -> PD .92 / .08 (for the 2800 until 30 September 2025)
    assert expected_score(2800, 1800, datetime.date(2025, 9, 30)) == 0.92
    assert expected_score(1800, 2800) == 0.08
    assert expected_score(2600, 1865) == 0.92  # 735 would be 0.99 without the cap
    assert [expected_score(2000 + d, 2000) for d in (3, 4, 10, 11, 391, 392, 400)] == [
        0.5, 0.51, 0.51, 0.52, 0.91, 0.92, 0.92]


def test_bad_fraction_is_refused() -> None:
    with pytest.raises(ValueError):
        dp(1.5)


def test_judge_in_one_pass_equals_the_functions_one_by_one() -> None:
    """The table-driven pass the live path uses gives the figures of the functions, on real games and on
    made-up sequences with mates and positions still awaited."""
    import random

    from livemon.rating.accuracy import INITIAL_CP, judge

    rng = random.Random(36)
    sequences = [[None, *cps_] for cps_ in
                 ([score_cp(n.eval().white()) for n in g.mainline() if n.eval() is not None] for g in _broadcast_games())]
    for _ in range(200):
        n = rng.randint(0, 90)
        seq: list[int | None] = [rng.choice([None, 20])]
        for _ in range(n):
            r = rng.random()
            seq.append(None if r < 0.08 else rng.choice([3900, -3900]) if r < 0.15 else rng.randint(-1500, 1500))
        sequences.append(seq)
    for evals in sequences:
        j = judge(evals)
        for ply in range(1, len(evals)):
            before = INITIAL_CP if ply == 1 else evals[ply - 1]
            after = evals[ply]
            if before is None or after is None:
                assert j.accuracy[ply - 1] is None and j.classes[ply - 1] is None
                continue
            wb, wa = win_percent(before), win_percent(after)
            expected = move_accuracy(wb, wa) if ply % 2 else move_accuracy(100 - wb, 100 - wa)
            assert j.accuracy[ply - 1] == pytest.approx(expected, abs=1e-12)
            assert j.classes[ply - 1] == move_class(before, after, ply % 2 == 1)
        prefix = []
        for cp in evals[1:]:
            if cp is None:
                break
            prefix.append(cp)
        g = game_accuracy(prefix)
        assert (j.game.white, j.game.black) == (g.white, g.black) or (
            j.game.white == pytest.approx(g.white, abs=1e-12) and j.game.black == pytest.approx(g.black, abs=1e-12))


def test_incremental_judge_equals_the_whole_game_judged_again() -> None:
    """The live path's GameJudge (positions valued in any order, corrections) gives judge()'s figures."""
    import random

    from livemon.rating.accuracy import CLASSES, GameJudge, judge

    rng = random.Random(3600)
    for trial in range(150):
        n = rng.randint(1, 95)
        values = [rng.choice([3900, -3900]) if rng.random() < 0.05 else rng.randint(-1200, 1200) for _ in range(n + 1)]
        order = list(range(n + 1))
        rng.shuffle(order) if trial % 2 else None  # newest-first engines value positions out of order
        g = GameJudge()
        known: list[int | None] = [None] * (n + 1)
        for step, j in enumerate(order):
            g.set(j, values[j])
            known[j] = values[j]
            if rng.random() < 0.3 or step == len(order) - 1:
                _check(g, known, judge, CLASSES)
            if rng.random() < 0.03 and j > 1:  # a correction: back to ply j, then valued again
                g.truncate(j)
                known = known[:j]
                _check(g, known, judge, CLASSES)
                known += [None] * (n + 1 - j)
                for k in range(j, n + 1):
                    if k not in order[: step + 1]:
                        continue
                    g.set(k, values[k])
                    known[k] = values[k]
                _check(g, known, judge, CLASSES)


def _check(g, known, judge, classes) -> None:  # type: ignore[no-untyped-def]
    last = max((i for i, v in enumerate(known) if v is not None), default=-1)
    evals = known[: last + 1]
    whole = judge(evals)
    mine = g.evals()
    while mine and mine[-1] is None:
        mine.pop()
    assert mine == evals
    white, black = g.accuracy()
    assert (white, black) == (whole.game.white, whole.game.black)
    for side in (0, 1):
        plies = [c for i, c in enumerate(whole.classes) if i % 2 == side and whole.accuracy[i] is not None]
        assert g.classes(side == 0) == tuple(plies.count(name) for name in classes)
        assert g.judged[side] == len(plies)
