"""``livemon plan``: the engine budget of a round, from a measured search speed: of the real engine (is its measure
plausible), and of the scripted engine whose searches take a known time (is the measure that time)."""

from __future__ import annotations

import json
import math

from livemon.cli import main


def _plan(capsys, tmp_path, engine, *args: str) -> dict:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[engine]\npath = "{engine}"\ndepth = 4\nmultipv = 2\nprocesses = 2\n'
                   f'[store]\npath = "{tmp_path / "s.sqlite"}"\n', encoding="utf-8")
    assert main(["plan", "--config", str(cfg), "--positions", "3", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_measures_the_profile_and_does_the_arithmetic(capsys, tmp_path, stockfish):
    b = _plan(capsys, tmp_path, stockfish, "--boards", "500", "--move-seconds", "30")
    assert b["profile"].endswith("depth=4 multipv=2") and b["measured_positions"] == 3 and b["mode"] == "embedded"
    s = b["search_seconds"]
    assert 0 < s < 5
    assert b["engines"] == 2 and math.isclose(b["positions_per_second"], 2 / s)
    assert b["boards_followable"] == int(2 / s * 30)
    assert math.isclose(b["demand_per_second"], 500 / 30)
    assert b["backlog_per_hour"] == max(0, round((500 / 30 - 2 / s) * 3600))
    assert b["workers_needed"] == max(1, math.ceil((500 / 30) / (2 / s)))


def test_plan_with_workers_counts_their_engines(capsys, tmp_path, fake_engine, monkeypatch):
    monkeypatch.setenv("FAKE_UCI_DELAY", "0.05")  # each search of the scripted engine takes 50 ms
    b = _plan(capsys, tmp_path, fake_engine, "--boards", "10000000", "--workers", "3")
    s = b["search_seconds"]
    assert b["profile"] == "FakeUCI 1.0 depth=4 multipv=2" and 0.05 <= s < 0.5
    assert b["mode"] == "mqtt" and b["engines"] == 6 and math.isclose(b["positions_per_second"], 6 / s)
    assert b["backlog_per_hour"] > 0  # ten million boards: no machine keeps up
    assert b["workers_needed"] == math.ceil((10000000 / 45) / (2 / s)) > 3


def test_plan_refuses_bad_numbers_in_one_line(capsys, tmp_path):
    assert main(["plan", "--boards", "0", "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be positive" in err


def test_status_shows_the_live_budget(capsys, tmp_path):
    import time

    from livemon.io.store import Store

    path = tmp_path / "s.sqlite"
    engine = {"profile": "SF depth=12", "engines": 2, "engines_alive": 2, "backlog": 0, "queue_lag_seconds": 0.0,
              "searches": 10, "cache_hits": 0, "restarts": 0, "failures": 0, "mean_search_s": 0.4}
    with Store(path) as store:
        store.status.put({"version": 2, "feeds": [], "engine": engine, "moves": 1, "games": 1, "unscored_plies": 0,
                          "lag_seconds": 0.0, "duplicates": 0, "rollbacks": 0, "ttt_refreshes": 0, "updated": time.time()})
    assert main(["status", "--store", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("budget"))
    assert "5.0 positions/s measured at SF depth=12 (400 ms a search, 2 engines): 225 boards followable" in line
