"""``livemon fit``: real PGN files, CSV, bad input, the JSON shape."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from livemon import cli

from conftest import REAL
LONDON = REAL / "london_chess_classic_2011_twic.pgn"
OPEN = REAL / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
CHESSCOM = REAL / "chesscom_carlsen_clk_allancao.pgn"


@pytest.fixture(autouse=True)
def _no_local_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./config.toml: TTTConfig defaults


def _headers(path: Path) -> list[dict[str, str]]:
    """Tags per game, split at every [Event tag (independent of livemon's reader)."""
    games = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r'\[(\w+) "(.*)"\]', line.strip())
        if m and m.group(1) == "Event":
            games.append({})
        if m and games:
            games[-1][m.group(1)] = m.group(2)
    return games


def run_json(capsys, *args: str) -> tuple[dict, str]:
    assert cli.main(["fit", "--json", *args]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def check_shape(out: dict, model: str) -> None:
    assert set(out) >= {"model", "params", "log_evidence", "iterations", "converged", "players"}
    assert out["model"] == model and out["converged"] is True and isinstance(out["iterations"], int)
    assert math.isfinite(out["log_evidence"]) and out["log_evidence"] < 0
    assert {"mu0", "sigma0", "beta", "tau", "p_draw"} <= set(out["params"])
    keys = {"t", "mu", "sigma"} | ({"nu", "zeta"} if model == "ttt-d" else set())
    for points in out["players"].values():
        assert points and all(set(p) == keys for p in points)
        assert all(math.isfinite(p["mu"]) and p["sigma"] > 0 for p in points)
        assert [p["t"] for p in points] == sorted(p["t"] for p in points)


def test_london_classic_fits_with_every_player(capsys):
    out, err = run_json(capsys, str(LONDON))
    check_shape(out, "ttt")
    games = _headers(LONDON)
    names = {g["White"] for g in games} | {g["Black"] for g in games}
    assert set(out["players"]) == names
    # each player has one point per distinct day they played
    for name, points in out["players"].items():
        days = {g["Date"].replace(".", "-") for g in games if name in (g["White"], g["Black"])}
        assert [p["t"] for p in points] == sorted(days)
    assert "36 games read" in err


@pytest.mark.parametrize("extra", [[], ["--ttt-d"], ["--p-draw", "1e-6"], ["--ttt-d", "--p-draw", "1e-6"]])
def test_open_tournament_fits_ttt_and_ttt_d_even_with_tiny_draw_probability(capsys, extra):
    out, _ = run_json(capsys, str(OPEN), *extra)
    check_shape(out, "ttt-d" if "--ttt-d" in extra else "ttt")
    assert len(out["players"]) == len({g["White"] for g in _headers(OPEN)} | {g["Black"] for g in _headers(OPEN)})
    if "--p-draw" in extra:
        assert out["params"]["p_draw"] == 1e-6


def test_chesscom_file_without_blank_lines_reads_every_game(capsys):
    out, err = run_json(capsys, str(CHESSCOM))
    finished = [g for g in _headers(CHESSCOM) if g.get("Result") != "*"]
    assert f"{len(finished)} games read" in err
    assert "MagnusCarlsen" in out["players"]


def test_csv_with_bad_rows_unfinished_games_and_a_missing_file(tmp_path, capsys):
    csv = tmp_path / "r.csv"
    csv.write_text("time,white,black,result\n"
                   "1,ann,bob,1-0\n2,bob,cid,1/2-1/2\n3,cid,ann,0-1\n"
                   "4,ann,cid,*\n"
                   "five,bob,ann,1-0\n"
                   "6,ann,bob,3-1\n"
                   "2024-01-01,ann,bob,1-0\n", encoding="utf-8")
    out, err = run_json(capsys, str(csv), str(tmp_path / "missing.pgn"), "--time-unit", "round")
    check_shape(out, "ttt")
    assert f"{csv} line 6: time 'five'" in err
    assert f"{csv} line 7: result '3-1'" in err
    assert f"{csv} line 8: time '2024-01-01' is not a number" in err
    assert f"{tmp_path / 'missing.pgn'}: cannot read" in err
    assert "3 games read" in err and "1 unfinished" in err
    assert out["players"]["ann"][-1]["t"] == 3 and len(out["players"]["ann"]) == 2
    assert out["players"]["ann"][-1]["mu"] > out["players"]["cid"][-1]["mu"]


def test_table_is_sorted_by_latest_skill(capsys):
    assert cli.main(["fit", str(LONDON), "--tau", "0.05", "--beta", "1.5", "--skill"]) == 0
    lines = capsys.readouterr().out.splitlines()
    skills = [float(m.group(1)) for line in lines if (m := re.match(r"\s*\d+\s+.+?\s+(-?\d+\.\d+) ± ", line))]
    assert len(skills) == 9 and skills == sorted(skills, reverse=True)
    assert "beta" in lines[0]


def test_table_shows_elo_by_default_on_the_rating_tags_scale(capsys):
    assert cli.main(["fit", str(LONDON), "--rating-priors"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "Elo = 1500 + 200 per skill unit" in out[0]
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)))
            for line in out if (m := re.match(r"\s*\d+\s+(\S+)\s+(\d+) ± (\d+)\s", line))}
    tags = {}
    for g in _headers(LONDON):
        tags.setdefault(g["White"], int(g["WhiteElo"]))
        tags.setdefault(g["Black"], int(g["BlackElo"]))
    assert rows.keys() == tags.keys()
    for name, (elo, sd) in rows.items():
        assert abs(elo - tags[name]) < 300 and 50 < sd < 200, (name, elo, sd)


def test_search_says_which_beta_and_tau_it_chose(capsys):
    out, err = run_json(capsys, str(OPEN), "--search")
    chosen = re.search(r"search chose beta=(\d+\.\d+) \(\d+ Elo\) tau=(\d+\.\d+) per day", err)
    assert chosen, err
    assert float(chosen.group(1)) == pytest.approx(out["search"]["beta"], abs=1e-4)
    assert float(chosen.group(2)) == pytest.approx(out["search"]["tau"], abs=1e-5)
    assert out["params"]["beta"] == out["search"]["beta"] and out["search"]["evaluations"] > 3


def test_bad_parameters_on_the_command_line_are_one_line(capsys):
    assert cli.main(["fit", str(LONDON), "--p-draw", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["livemon: config: command line: p_draw: must be in (0, 1), got 0.0"]


def test_no_game_is_an_error(tmp_path, capsys):
    empty = tmp_path / "e.csv"
    empty.write_text("time,white,black,result\n1,a,b,*\n", encoding="utf-8")
    assert cli.main(["fit", str(empty)]) == 1
    assert "no finished game" in capsys.readouterr().err
