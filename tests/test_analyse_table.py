"""``livemon analyse``'s table speaks to the audience: each estimate through the display rule of every screen
(:func:`livemon.live.audience.estimate_display`: no interval wider than ``[display] max_interval_width`` or
beyond the ratings the model was fitted on), the papers' diagnostics only with ``--diagnostics``.

The figures are those of the shipped depth-12 quality model on blocks shaped as ``analyse --json`` writes them
(one game's moves: 2793 with 2239–3348, 1,109 Elo wide), so no engine runs here; tests/test_analyse.py runs the
command end to end.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from livemon.app.analyse import add_display
from livemon.commands.analyse import render_table
from livemon.rating.quality_params import model_for

PROFILE = "Stockfish 15.1 depth=12 multipv=4"
RANGE = re.compile(r"(≤?)(\d{3,4})–(\d{3,4})(\+?)")


def _player(name: str, elo: int, est: dict[str, Any], field: dict[str, Any]) -> dict[str, Any]:
    # the headline is the moves alone here (as where the field has too few rated players), beside it the same
    return {"name": name, "elo": elo, "estimate": est, "moves_estimate": dict(est), "field_estimate": field,
            "performance": {"elo": 2650.0, "cr95": [2400.0, 2900.0], "calibration": "demo"},
            "moves": 41, "mean_gain": -21.5, "expected_score_vs_engine": 0.31, "rating_diff_vs_engine": -140.0,
            "perceived_elo": 2930.0, "c_mean": 0.31, "c_sd": 0.05, "c_cr95": [0.2, 0.4], "c_positions": 30,
            "accuracy": 91.4, "classes": {"inaccuracy": 1, "mistake": 0, "blunder": 0},
            "results": {"score": 1.0, "games": 1, "tpr": 3000, "rating_change": 4.2}}


@pytest.fixture
def out() -> dict[str, Any]:
    one_game = {"elo": 2793.0, "cr95": [2239.0, 3348.0], "sd": 283.0, "positions": 30, "games": 1, "kind": "moves"}
    event = {"elo": 2712.0, "cr95": [2390.0, 3020.0], "sd": 160.0, "positions": 260, "games": 9, "kind": "moves"}
    field = {"elo": 2750.0, "cr95": [2600.0, 2900.0], "sd": 75.0, "positions": 30, "games": 1, "kind": "field"}
    return {
        "engine": {"profile": PROFILE, "strength": 3070.0, "strength_source": "calibration", "analyses": 0},
        "games": [{"white": "Kramnik, V", "black": "Aronian, L", "result": "1-0", "plies": 81,
                   "white_expected_score": 0.62, "white_rating_diff": 86.0,
                   "accuracy": {"white": 96.1, "black": 88.0}}],
        "players": [_player("Kramnik, V", 2800, one_game, field), _player("Carlsen, M", 2826, event, dict(field))],
        "event": {"perceived_ratings": {"Kramnik, V": 2790.0}},
    }


def _row(text: str, name: str) -> str:
    """The player's row of the players table (not the game's, which also starts with the name)."""
    return next(line for line in text.splitlines() if line.startswith(name + " ") and " - " not in line)


def _displayed(out: dict[str, Any], max_width: float = 1000.0) -> None:
    model = model_for(PROFILE)
    assert model is not None
    estimator = SimpleNamespace(players={p["name"]: SimpleNamespace(quality=SimpleNamespace(model=model))
                                         for p in out["players"]})
    add_display(out, estimator, max_width)


def test_analyse_prints_no_interval_wider_than_the_display_rule(out):
    _displayed(out)
    model = model_for(PROFILE)
    assert model is not None
    text = render_table(out)
    kramnik = _row(text, "Kramnik, V")
    assert "2793" not in kramnik and "3348" not in kramnik and "2239" not in kramnik
    assert out["players"][0]["display"]["show"] is False
    more = out["players"][0]["display"]["more_games"]
    assert more and f"{more} more game" in kramnik  # what report and every screen say instead
    ranges = [m for line in text.splitlines() for m in RANGE.finditer(line)]
    assert ranges  # the event's estimates are shown
    for _, lo, hi, _ in (m.groups() for m in ranges):
        assert int(hi) - int(lo) <= 1000
        assert int(lo) >= model.elo_min and int(hi) <= model.elo_max  # cut at the fitted range, the cut marked
    carlsen = _row(text, "Carlsen, M")
    assert f"2390–{model.elo_max:.0f}+" in carlsen and "2712" in carlsen
    # the audience's columns, and no diagnostic in them
    for word in ("score", "TPR", "accuracy", "?!/?/??", "moves only", "1/1", "3000", "91.4", "1/0/0"):
        assert word in text, word
    for word in ("perf.", "p(W)", "d(W-B)", "perc.", "c̄", "r̄_e", "Algorithm", "2930", "0.620"):
        assert word not in text, word


def test_a_narrower_display_rule_hides_more(out):
    _displayed(out, max_width=400.0)
    text = render_table(out, max_width=400.0)
    for line in text.splitlines():
        for m in RANGE.finditer(line):
            assert int(m.group(3)) - int(m.group(2)) <= 400, line
    assert "at most 400 Elo wide" in text


def test_diagnostics_show_the_papers_figures_each_glossed(out):
    _displayed(out)
    plain = render_table(out)
    text = render_table(out, diagnostics=True)
    assert text.startswith(plain.rsplit("--diagnostics:", 1)[0])
    for word in ("perf.", "p(W)", "d(W-B)", "perc.", "alg2", "c̄ ± σ", "r̄_e: 3070", "0.620", "+86", "2930", "2790",
                 "0.31±0.05", "-21.5"):
        assert word in text, word
    legend = text.split("diagnostics (research figures", 1)[1]
    for term in ("r̄_e:", "p(W), d(W-B):", "perf.:", "E(c):", "gain:", "p(eng), d(eng):", "perc.:", "alg2:", "c̄ ± σ:"):
        assert term in legend, term
    # still no interval wider than the rule among the headline's
    kramnik = _row(text, "Kramnik, V")
    assert "3348" not in kramnik
