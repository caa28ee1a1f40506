"""The forecast's game model (livemon.rating.forecast): shape, the shipped fit, and its edge on held-back games."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess.pgn
import numpy as np
import pytest

from livemon.rating.forecast import (
    DEFAULT, ForecastParams, ingame, ingame_arrays, lichess_expected, log_loss, material, pregame, pregame_arrays,
    score_log_loss, ttt_result,
)

DATA = Path(__file__).parent / "data"
PACKAGE = Path(__file__).parent.parent / "livemon" / "data" / "forecast.json"
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def _games(name: str) -> list[chess.pgn.Game]:
    text = (DATA / name).read_text(encoding="utf-8")
    f = io.StringIO(text)
    out = []
    while (g := chess.pgn.read_game(f)) is not None:
        out.append(g)
    return out


def test_shipped_parameters_are_the_defaults() -> None:
    shipped = ForecastParams.from_mapping(json.loads(PACKAGE.read_text(encoding="utf-8")))
    assert shipped == DEFAULT
    assert "held_back" in shipped.fitted_on


def test_probabilities_are_a_distribution_and_move_the_right_way() -> None:
    rng = np.random.default_rng(3)
    rw, rb = rng.uniform(1400, 2850, 500), rng.uniform(1400, 2850, 500)
    p = pregame_arrays(rw, rb)
    assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1)
    gaps = np.arange(-600, 601, 50.0)
    w = pregame_arrays(2400 + gaps / 2, 2400 - gaps / 2)
    assert np.all(np.diff(w[:, 0]) > 0) and np.all(np.diff(w[:, 2]) < 0)
    # the draw rate: higher at a higher level, lower with a larger gap
    assert pregame(2750, 2750)[1] > pregame(2300, 2300)[1] > pregame(1800, 1800)[1]
    assert pregame(2500, 2500)[1] > pregame(2650, 2350)[1] > pregame(2800, 2200)[1]
    assert pregame(2500, 2500)[0] > pregame(2500, 2500)[2]  # White's advantage


def test_ingame_follows_the_evaluation_and_the_clock() -> None:
    even = ingame(2500, 2500, 0, 60, 40)
    ahead = ingame(2500, 2500, 250, 60, 40)
    assert ahead[0] > even[0] and ahead[2] < even[2]
    assert ingame(2500, 2500, 3900, 90, 10)[0] > 0.99 and ingame(2500, 2500, -3900, 90, 10)[2] > 0.99
    low_clock = ingame(2500, 2500, 0, 60, 40, clocks=(30.0, 1800.0))
    assert low_clock[0] < even[0]
    p = ingame_arrays([2000] * 3, [2100] * 3, [-50, 0, 50], [10, 40, 80], [70, 50, 20])
    assert np.allclose(p.sum(axis=1), 1)


def test_material_and_ttt() -> None:
    assert material(chess.STARTING_FEN) == 78
    w, d, lo = ttt_result(1.0, 0.2, 0.0, 0.2, 1.0, 0.6, 0.6)
    assert w > lo and abs(w + d + lo - 1) < 1e-12
    # a larger draw margin for the weaker side makes the stronger side's wins rarer
    assert ttt_result(1.0, 0.2, 0.0, 0.2, 1.0, 0.6, 1.2)[0] < w


@pytest.mark.parametrize("bad", [{"k": float("nan")}, {"k": "1"}, {"nope": 1.0}])
def test_bad_parameter_files_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="forecast parameters"):
        ForecastParams.from_mapping(bad)


def test_pregame_beats_a_fixed_draw_rate_on_a_held_back_event() -> None:
    """Prague Masters 2022 is one of the events every fit leaves out."""
    games = [g for g in _games("prague_masters_2022_fsmosca.pgn") if g.headers.get("Result") in RESULTS]
    rw = np.array([int(g.headers["WhiteElo"]) for g in games], float)
    rb = np.array([int(g.headers["BlackElo"]) for g in games], float)
    res = np.array([RESULTS[g.headers["Result"]] for g in games])
    e = 1 / (1 + 10 ** (-(rw - rb) / 400))
    fixed = np.stack([(1 - 0.361) * e, np.full_like(e, 0.361), (1 - 0.361) * (1 - e)], axis=1)
    assert log_loss(pregame_arrays(rw, rb), res) < log_loss(fixed, res)


def test_ingame_beats_lichess_win_percent_on_a_held_back_event() -> None:
    """The 2025 round robin's own [%eval] comments: a held-back event with clocks."""
    rows: list[tuple[float, ...]] = []
    for g in _games("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"):
        res = RESULTS.get(g.headers.get("Result", "*"))
        if res is None:
            continue
        board = g.board()
        clocks: list[float | None] = [None, None]
        for ply, node in enumerate(g.mainline(), 1):
            clocks[0 if board.turn else 1] = node.clock()
            board.push(node.move)
            ev = node.eval()
            if ev is None:
                continue
            edge = 0.0 if None in clocks else (clocks[0] - clocks[1]) / (clocks[0] + clocks[1] + 60)  # type: ignore[operator]
            rows.append((int(g.headers["WhiteElo"]), int(g.headers["BlackElo"]), ev.white().score(mate_score=3900),
                         ply, material(board.fen()), edge, res))
    a = np.array(rows, float)
    assert len(a) > 3000
    probs = ingame_arrays(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5])
    ours = score_log_loss(probs[:, 0] + probs[:, 1] / 2, a[:, 6])
    theirs = score_log_loss(lichess_expected(a[:, 2]), a[:, 6])
    assert ours < theirs
