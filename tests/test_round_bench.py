"""bench/round.py's quick mode, end to end: real feeds, mosquitto, a worker, ``livemon serve``, WebSocket clients.

A small round (10 boards of tests/data's real games at 20x for 6 s, searched live at
depth 2 by the bench's ``livemon worker``s, their engine the scripted one of tests/fake_uci.py):
every fed ply must reach the monitor's store exactly once, and every figure the bench reports
must have been measured.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import sys
from pathlib import Path

from conftest import REAL

REPO = Path(__file__).resolve().parent.parent


def _bench():  # type: ignore[no-untyped-def]
    # imported by name from bench/ (on sys.path), so that its client processes (spawned) can import it too
    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    return importlib.import_module("round")


def test_quick_round_loses_and_duplicates_no_ply_and_measures_everything(fake_engine: str) -> None:
    bench = _bench()
    args = bench.parse_args(["--quick", "--boards", "10", "--minutes", "0.1", "--clients", "10",
                             "--engine", "depth", "--depth", "2", "--data", str(REAL), "--poll", "0.5",
                             "--engine-path", fake_engine])
    report = asyncio.run(bench.run(args))
    m = report.measured
    assert m["lost"] == 0 and m["duplicated"] == 0 and m["results_missing"] == 0, m
    assert m["offered_per_s"] > 2.5 and m["moves_per_s"] > 2.5, m  # 10 boards at 20x offer about 4.5 moves/s
    for key in ("cpu_ms_per_move", "rss_peak_mb", "rss_growth_second_half", "lag_p99_ms", "client_p95_ms"):
        assert m[key] is not None and math.isfinite(m[key]) and m[key] >= 0, (key, m)
    assert m["client_deliveries"] > 0, m
    assert m["worker_pps"] and all(v > 0 for v in m["worker_pps"].values()), m
    assert m["tracebacks"] == 0, m
    assert all(k in m for k in ("goal:loop-lag p99 < 50 ms", "goal:RSS < 1024 MiB")), m


def test_overlay_clients_read_their_board_and_its_two_players_only(fake_engine: str) -> None:
    """``--overlay``: each client subscribes as the overlay page does (its board's games, its two players), so
    client 0 of 10 boards gets its board's messages, not the round's (every board's: ~2 a ply)."""
    bench = _bench()
    args = bench.parse_args(["--quick", "--boards", "10", "--minutes", "0.1", "--clients", "10", "--overlay",
                             "--engine", "depth", "--depth", "2", "--data", str(REAL), "--poll", "0.5",
                             "--engine-path", fake_engine])
    report = asyncio.run(bench.run(args))
    m = report.measured
    assert m["lost"] == 0 and m["duplicated"] == 0 and m["tracebacks"] == 0, m
    got = m["client0_messages"]
    plies = m["offered_per_s"] * args.minutes * 60
    assert 0 < got.get("board", 0) < plies / 3, (got, plies)  # its board's moves (and their evaluations) only
    assert 0 < got.get("player", 0) < plies / 3, (got, plies)
