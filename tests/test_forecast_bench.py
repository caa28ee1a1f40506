"""bench/forecast_calibration.py on tests/data's real round robin: the replay finds it whole and scores it."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"


def _bench():  # type: ignore[no-untyped-def]
    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    return importlib.import_module("forecast_calibration")


def test_replay_of_a_finished_round_robin() -> None:
    bench = _bench()
    fd = importlib.import_module("forecast_data")
    ev = bench.Event("london", fd.real_games(DATA / "london_chess_classic_2011_twic.pgn"), True)
    assert ev.kind() == "rr" and len(ev.players) == 9 and ev.rounds == 9
    y = ev.winner_shares()
    assert y.sum() == pytest.approx(1.0) and y.max() == 1.0  # Kramnik won London 2011 alone
    rows = bench.replay([ev], {"london": "rr"}, 2000)
    assert set(rows) == set(bench.MODELS) and all(len(r) == len(bench.CUTS) for r in rows.values())
    for rs in rows.values():
        for *_, p, _ in rs:
            assert p.sum() == pytest.approx(1.0)
            ll, brier = bench._score(p, y)
            assert math.isfinite(ll) and 0 <= brier <= 2
