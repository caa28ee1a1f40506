"""Calibration of an engine profile: the maximum-likelihood Elo ↔ c map, r̄_e, z_scale, and ``livemon calibrate``."""

from __future__ import annotations

import json
import math
import re
import sqlite3

import chess
import chess.pgn
import numpy as np
import pytest

from conftest import cached_store, real
from livemon.cli import main
from livemon.rating.agent import CPosterior, Decision, move_probabilities
from livemon.rating.calibration import (
    Calibration,
    ProfileCalibration,
    engine_strength_fit,
    pooled_c,
    z_dispersion,
)
from livemon.rating.gain import GainHistogram, engine_strength
from livemon.rating.screening import screening_stats
from tests import agents

A, B = -0.8, 0.0008  # c_r = A + B·Elo: 0.64 at 1800, 1.36 at 2700 (the order of real players at depth 12)


def simulate(rng: np.random.Generator, players: int, positions: int, tau: float) -> list[tuple[float, list[Decision]]]:
    """Players rated U(1800, 2700) whose c is A + B·Elo + N(0, τ²), each playing E(c) on random positions."""
    out = []
    for _ in range(players):
        elo = float(rng.uniform(1800, 2700))
        c = A + B * elo + rng.normal(0.0, tau)
        decisions = []
        for _ in range(positions):
            k = int(rng.integers(2, 6))
            v = np.concatenate(([0.0], -np.sort(rng.exponential(0.5, k - 1))))
            decisions.append(Decision(tuple(v), int(rng.choice(k, p=move_probabilities(v, c)))))
        out.append((elo, decisions))
    return out


def simulate_at_once(rng: np.random.Generator, players: int, positions: int, tau: float) -> list[tuple[float, list[Decision]]]:
    """``simulate``'s players, their moves drawn for all positions at once (tests/agents.py): the same
    distribution, other draws for a seed."""
    elo = rng.uniform(1800, 2700, players)
    c = A + B * elo + rng.normal(0.0, tau, players)
    return list(zip(elo.tolist(), agents.play(rng, c, positions)))


def test_fit_recovers_a_b_tau_within_their_standard_errors():
    """Coverage: over 16 simulated calibrations, the errors divided by their se look like N(0, 1)."""
    rng = np.random.default_rng(2024)
    tau = 0.25  # far enough from 0 that the maximum is inside (at τ = 0 a se means little)
    z = {"a": [], "b": [], "tau": []}
    for _ in range(16):
        cal = Calibration.fit_decisions(simulate_at_once(rng, 80, 50, tau), profile="sim")
        va, _, vb = cal.cov_ab
        z["a"].append((cal.a - A) / math.sqrt(va))
        z["b"].append((cal.b - B) / math.sqrt(vb))
        z["tau"].append((cal.tau - tau) / cal.tau_se)
        assert cal.method == "ml" and cal.n == 80 and cal.positions == 80 * 50
        assert cal.residual_sd == cal.tau and 1800 <= cal.elo_min < cal.elo_max <= 2700
    for name, zs in z.items():
        zs = np.array(zs)
        inside = int(np.sum(np.abs(zs) <= 2.0))
        assert inside >= 13, (name, zs)  # 95% nominal: 15.3 of 16 expected; 13 or more with probability > 0.99
        assert abs(zs.mean()) < 0.75, (name, zs.mean())  # se of the mean of 16 N(0,1) is 0.25
        assert 0.5 < zs.std() < 1.6, (name, zs.std())  # se are neither far too small nor far too large


def test_per_player_least_squares_on_c_mean_is_biased_where_the_likelihood_fit_is_not():
    """Short samples (15 moves a player): c̄ under the uniform prior is skewed, so OLS on c̄ misses b."""
    rng = np.random.default_rng(11)
    ml, ols = [], []
    for _ in range(6):
        players = simulate(rng, 150, 15, 0.15)
        ml.append(Calibration.fit_decisions(players).b)
        pairs = []
        for elo, decisions in players:
            post = CPosterior()
            for d in decisions:
                post.add(d)
            pairs.append((elo, post.summary().mean))
        ols.append(Calibration.fit(pairs).b)
    ml, ols = np.array(ml), np.array(ols)
    se_ml = ml.std(ddof=1) / math.sqrt(ml.size)
    assert abs(ml.mean() - B) < 3 * se_ml, (ml.mean(), se_ml)
    diff = ols - ml  # paired on the same players: the sampling noise they share cancels
    assert diff.mean() > 4 * diff.std(ddof=1) / math.sqrt(diff.size), diff  # here c̄ steepens the line
    assert abs(ols.mean() - B) > 0.15 * B


def test_z_scale_is_one_at_c_r_and_grows_with_the_spread_of_real_players():
    rng = np.random.default_rng(5)
    truth = Calibration(A, B, n=0, elo_min=1800, elo_max=2700, r2=1.0, residual_sd=0.0)
    exact = simulate_at_once(rng, 200, 120, 0.0)
    (sd_match, n_match), (sd_loss, _) = z_dispersion(exact, truth, min_positions=60)
    assert n_match == 200
    assert abs(sd_match - 1.0) < 0.15 and abs(sd_loss - 1.0) < 0.15  # se of an sd of 200 normals ≈ 0.05
    spread = simulate_at_once(rng, 200, 120, 0.3)
    (sd_spread, _), _ = z_dispersion(spread, truth, min_positions=60)
    assert sd_spread > 1.3  # var z ≈ 1 + n·τ²·(∂p0/∂c)²/(p0(1−p0)) well above 1 at 120 positions
    short = simulate_at_once(rng, 30, 20, 0.0)
    assert z_dispersion(short, truth, min_positions=60) == (None, None)  # nobody has 60 positions


def test_fit_decisions_stores_z_scale_of_the_players_it_was_fitted_on():
    rng = np.random.default_rng(8)
    players = simulate(rng, 60, 80, 0.2)
    cal = Calibration.fit_decisions(players, z_min_positions=60)
    (expected, n), (expected_loss, _) = z_dispersion(players, cal, 60)
    assert cal.z_scale == pytest.approx(expected) and cal.z_players == n == 60
    assert cal.z_scale_loss == pytest.approx(expected_loss)
    zs = [screening_stats("p", ds, cal.c_for_rating(elo)).z_match for elo, ds in players]
    assert cal.z_scale == pytest.approx(np.std(zs, ddof=1))


def test_uncertainty_of_the_map_matches_draws_of_the_line():
    cal = Calibration(a=-0.8, b=0.0008, n=100, elo_min=1800, elo_max=2700, r2=0.8, residual_sd=0.1,
                      cov_ab=(0.04, -1.6e-5, 6.5e-12 + 6.4e-9))
    rng = np.random.default_rng(3)
    va, cab, vb = cal.cov_ab
    draws = rng.multivariate_normal([cal.a, cal.b], [[va, cab], [cab, vb]], 200_000)
    line = draws[:, 0] + draws[:, 1] * 2300.0
    assert cal.c_for_rating_se(2300.0) == pytest.approx(line.std(), rel=0.02)
    inverse = (1.2 - draws[:, 0]) / draws[:, 1]
    assert cal.rating_for_c_se(1.2) == pytest.approx(inverse.std(), rel=0.05)
    lo, hi = cal.rating_interval(1.2, 1.0, 1.45)
    r = cal.rating_for_c(1.2)
    assert lo < cal.rating_for_c(1.0) < r < cal.rating_for_c(1.45) < hi
    assert cal.in_range(2000) and not cal.in_range(2800)
    bare = Calibration.fit([(1500, 0.5), (2000, 1.0), (2500, 1.5)])
    assert bare.c_for_rating_se(2000) == pytest.approx(0.0, abs=1e-9)  # a perfect line: no uncertainty


def test_round_trips_through_json_and_the_store(tmp_path):
    from livemon.io.store import Store

    rng = np.random.default_rng(1)
    cal = Calibration.fit_decisions(simulate(rng, 30, 70, 0.1), profile="sim d12")
    again = Calibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert again == cal and again.cov_ab == cal.cov_ab and again.z_scale == cal.z_scale
    pc = ProfileCalibration("sim d12", 2950.0, cal)
    assert ProfileCalibration.from_dict(json.loads(json.dumps(pc.to_dict()))) == pc
    with Store(tmp_path / "s.sqlite") as store:
        store.calibrations.put(pc)
        assert store.calibrations.get("sim d12") == pc
    old = {k: v for k, v in cal.to_dict().items() if k in ("a", "b", "n", "elo_min", "elo_max", "r2", "residual_sd")}
    legacy = Calibration.from_dict(old)  # a dict written before the maximum-likelihood fields existed
    assert legacy.method == "ols" and legacy.cov_ab is None and legacy.c_for_rating_se(2000) is None
    assert legacy.c_for_rating(2000) == pytest.approx(cal.c_for_rating(2000))


def test_bad_input_is_refused_with_a_reason():
    d = Decision((0.0, -0.5), 0)
    with pytest.raises(ValueError, match="at least 2"):
        Calibration.fit_decisions([(2000.0, [d] * 10)])
    with pytest.raises(ValueError, match="at least 2"):
        Calibration.fit_decisions([(2000.0, [d] * 10), (2100.0, [])])  # a player without moves does not count
    with pytest.raises(ValueError, match="same Elo"):
        Calibration.fit_decisions([(2000.0, [d] * 10), (2000.0, [d] * 5)])
    with pytest.raises(ValueError, match="finite"):
        Calibration.fit_decisions([(math.nan, [d] * 10), (2000.0, [d] * 5)])
    with pytest.raises(ValueError, match="cov_ab"):
        Calibration.from_dict({"a": 0, "b": 1, "n": 2, "elo_min": 0, "elo_max": 1, "r2": 1, "residual_sd": 0, "cov_ab": [1]})
    with pytest.raises(ValueError, match="no proper maximum"):  # always the best move: c runs off to infinity
        Calibration.fit_decisions([(1800.0 + 50 * i, [d] * 40) for i in range(10)])
    with pytest.raises(ValueError, match="no decisions"):
        pooled_c([])


def test_pooled_c_and_engine_strength_fit_agree_with_direct_computations():
    best, worse = Decision((0.0, -0.5, -1.0), 0), Decision((0.0, -0.5, -1.0), 2)
    c, se = pooled_c([best] * 40 + [worse] * 10)
    grid = np.linspace(0.0, 5.0, 50001)
    ll = 40 * np.log(move_probabilities(best.values, grid)[0]) + 10 * np.log(move_probabilities(best.values, grid)[2])
    assert c == pytest.approx(grid[np.argmax(ll)], abs=2e-4)
    curvature = np.gradient(np.gradient(ll, grid), grid)[np.argmax(ll)]
    assert se == pytest.approx(1.0 / math.sqrt(-curvature), rel=1e-3)
    h1 = GainHistogram.from_gains([0, -10, -25, 4, 0, -3])
    h2 = GainHistogram.from_gains([0, -80, -5, -30])
    players = [(2400.0, h1), (2100.0, h2), (None, h1), (2000.0, GainHistogram())]
    r, r_se, n = engine_strength_fit(players)
    assert r == pytest.approx(engine_strength(players)) and n == 2
    assert engine_strength_fit([(None, h1)]) is None


# -- the command, on real games with real Stockfish ------------------------------------------


def _games(name: str, count: int) -> list[str]:
    text = real(name).read_text(encoding="utf-8")
    return re.split(r"\n\n(?=\[Event )", text.strip())[:count]


def _independent_players(pgn_text: str, store_path: str, profile: str, eval_bound: float, book_moves: int = 8):
    """Per rated player (Elo, decisions) and gains, straight from python-chess and the stored analyses."""
    db = sqlite3.connect(store_path)
    analyses = {pos: json.loads(cands) for pos, cands in
                db.execute("SELECT position, candidates FROM analyses WHERE profile = ?", (profile,))}
    import io

    players: dict[str, tuple[float, list[Decision], list[int]]] = {}
    stream = io.StringIO(pgn_text)
    while (game := chess.pgn.read_game(stream)) is not None:
        board = game.board()
        for ply, move in enumerate(game.mainline_moves(), start=1):
            white = board.turn == chess.WHITE
            name, elo = (game.headers["White"], game.headers.get("WhiteElo")) if white else \
                (game.headers["Black"], game.headers.get("BlackElo"))
            before = analyses.get(board.epd())
            legal = board.legal_moves.count()
            after_board = board.copy()
            after_board.push(move)
            outcome = after_board.copy(stack=False).outcome(claim_draw=False)  # the batch sees positions alone
            if outcome is not None:
                after_cp = 0 if outcome.winner is None else (3900 if outcome.winner == chess.WHITE else -3900)
            else:
                after_cp = analyses[after_board.epd()]["score"]
            if elo and elo.isdigit():
                entry = players.setdefault(name, (float(elo), [], []))
                g = after_cp - before["score"] if white else before["score"] - after_cp
                entry[2].append(g)
                if legal >= 2 and (ply + 1) // 2 > book_moves:
                    sign = 1 if white else -1
                    cands = [(m, sign * cp / 100.0) for m, cp in before["candidates"]]
                    moves = [m for m, _ in cands]
                    values = [v for _, v in cands]
                    if move.uci() in moves:
                        played = moves.index(move.uci())
                    else:
                        values.append(sign * after_cp / 100.0)
                        played = len(values) - 1
                    if max(values) <= eval_bound and -eval_bound <= max(values):
                        entry[1].append(Decision(tuple(values), played))
            board = after_board
    return players


def _marginal_log_lik(players, a: float, b: float, tau: float) -> float:
    """Σ_i log ∫ Π_moves P(move | c) N(c; a + b·Elo_i, τ²) dc by brute force on a dense grid."""
    total = 0.0
    for elo, decisions, _ in players.values():
        if not decisions:
            continue
        mu = a + b * elo
        c = mu + tau * np.linspace(-9.0, 9.0, 4001)
        ll = np.zeros_like(c)
        for d in decisions:
            ll += np.log(move_probabilities(d.values, c)[d.played])
        dens = np.exp(ll - ll.max()) * np.exp(-0.5 * ((c - mu) / tau) ** 2) / (math.sqrt(2 * math.pi) * tau)
        total += ll.max() + math.log(np.trapezoid(dens, c))
    return total


def test_calibrate_command_stores_what_an_independent_computation_gives(tmp_path, fake_stockfish, capsys):
    """A few real rated games (an open and London 2011) at depth 6: stored fit = brute-force likelihood maximum.
    Stockfish's analyses of these games are shipped (tests/data): the subject is the fit made of them. The engine
    is the scripted one under Stockfish's name (the shipped analyses' profile), asked for none of them."""
    pgn = tmp_path / "rated.pgn"
    text = "\n\n".join(_games("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn", 8)
                       + _games("london_chess_classic_2011_twic.pgn", 4)) + "\n"
    pgn.write_text(text, encoding="utf-8")
    store = tmp_path / "cal.sqlite"
    cached_store(store, "analyses_stockfish15.1_d6_rated.jsonl.gz")
    config = tmp_path / "config.toml"
    config.write_text(f'[engine]\npath = "{fake_stockfish}"\n', encoding="utf-8")
    code = main(["calibrate", str(pgn), str(real("kasparov_deepblue_1997_pythonchess.pgn")), "--depth", "6",
                 "--store", str(store), "--config", str(config), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err.count("no Elo tags") == 6  # the Deep Blue games: one line each, the rest carries on
    assert "analysing positions" in captured.err  # progress
    out = json.loads(captured.out)
    profile = "Stockfish 15.1 depth=6 multipv=4"
    assert out["profile"] == profile and out["games"] == 12
    assert out["searches"] == 0  # the fit is made of the real Stockfish's shipped analyses alone
    row = sqlite3.connect(store).execute(
        "SELECT engine_strength, c_calibration FROM calibrations WHERE profile = ?", (profile,)).fetchone()
    assert row is not None
    cal = Calibration.from_dict(json.loads(row[1]))
    assert cal.to_dict() == out["calibration"]

    players = _independent_players(text, str(store), profile, eval_bound=3.0)
    with_moves = {k: v for k, v in players.items() if v[1]}
    assert cal.n == len(with_moves)
    assert cal.positions == sum(len(v[1]) for v in with_moves.values())
    assert cal.elo_min == min(v[0] for v in with_moves.values())
    # r̄_e: Algorithm 3 over the histograms of gains computed here
    assert row[0] == pytest.approx(engine_strength((elo, GainHistogram.from_gains(g)) for elo, _, g in players.values()))
    # the stored (a, b, τ) maximise the marginal likelihood computed here by brute force
    tau = max(cal.tau, 1e-3)
    best = _marginal_log_lik(players, cal.a, cal.b, tau)
    if cal.tau > 1e-3:
        assert best == pytest.approx(cal.log_likelihood, abs=1e-3)
    va, _, vb = cal.cov_ab
    for da, db in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        assert _marginal_log_lik(players, cal.a + 0.3 * da * math.sqrt(va), cal.b + 0.3 * db * math.sqrt(vb), tau) < best + 1e-6
    assert cal.b > 0  # stronger players play closer to the engine, even on 12 games
    bins = out["bins"]
    assert sum(b["players"] for b in bins) == cal.n and sum(b["positions"] for b in bins) == cal.positions

    # the table form, from the cache (no search repeated)
    assert main(["calibrate", str(pgn), "--depth", "6", "--store", str(store), "--config", str(config)]) == 0
    table = capsys.readouterr().out
    assert "searches run: 0" in table and "engine strength r̄_e" in table and "Elo bin" in table
    assert f"positions: {cal.positions}" in table

    # --cached-only: a game not in the cache is left out (with a line), nothing is searched
    extra = tmp_path / "plus_one.pgn"
    extra.write_text(text + "\n" + real("wcc2023_nepo_ding_g1_pythonchess.pgn").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["calibrate", str(extra), "--depth", "6", "--store", str(store), "--config", str(config),
                 "--cached-only", "--json"]) == 0
    captured = capsys.readouterr()
    assert "1 of 13 games left out" in captured.err
    again = json.loads(captured.out)
    assert again["searches"] == 0 and again["calibration"] == out["calibration"]

    # analyse reads the stored calibration and shows c̄ on its Elo scale
    assert main(["analyse", str(pgn), "--depth", "6", "--store", str(store), "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"]["strength"] == pytest.approx(row[0]) and report["engine"]["strength_source"] == "calibration"
    shown = [p for p in report["players"] if p["c_mean"] is not None]
    for p in shown:  # the wire's figures: c to 4 decimals, Elo to 1
        scaled = cal.elo_scale(p["c_mean"], *p["c_cr95"])
        assert p["c_elo"] == pytest.approx(scaled["elo"], abs=1.0)
        assert p["c_elo_cr95"] == pytest.approx(scaled["cr95"], abs=1.0)
    lo, hi = shown[0]["c_elo_cr95"]
    assert shown and lo < shown[0]["c_elo"] < hi
    # the headline performance rests on the same stored calibration of this profile
    assert all(p["performance"]["profile"] == report["engine"]["profile"] for p in report["players"])
    assert any(p["performance"]["elo"] is not None for p in report["players"])
    assert main(["analyse", str(pgn), "--depth", "6", "--store", str(store), "--config", str(config), "--diagnostics"]) == 0
    text = capsys.readouterr().out
    assert "perf." in text and f"{cal.n} players" in text


def test_monitor_shows_c_on_the_elo_scale_of_the_stored_calibration(tmp_path, fake_stockfish):
    """The live path: PlayerEstimate.c_elo is rating_for_c(c̄) of the profile's stored map, with its interval (the
    scripted engine under Stockfish's name: the stored map's profile)."""
    import asyncio

    from livemon.config import load_config
    from livemon.faces.hub import Hub
    from livemon.app.monitor import Monitor
    from livemon.live.pgn import split_games
    from livemon.io.store import Store

    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:1]
    pgn = tmp_path / "one.pgn"
    pgn.write_text("\n".join(chunks))
    config = tmp_path / "config.toml"
    config.write_text(
        f'[engine]\npath = "{fake_stockfish}"\ndepth = 4\nbacklog_high = 1000000\n[store]\npath = "{tmp_path / "live.sqlite"}"\n'
        f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.05\n'
    )
    cfg = load_config(str(config))
    cal = Calibration(a=-1.2, b=0.0008, n=50, elo_min=1800, elo_max=2800, r2=0.7, residual_sd=0.1,
                      method="ml", cov_ab=(0.01, -4e-6, 1.7e-9), tau=0.1)
    hub = Hub()
    with Store(cfg.store.path) as store:
        store.calibrations.put(ProfileCalibration("Stockfish 15.1 depth=4 multipv=4", 2900.0, cal))
        asyncio.run(Monitor(cfg, hub, store).run(until_feeds_end=True))
    _, estimates = hub.snapshot("players")
    shown = [e for e in estimates if e.c_mean is not None]
    assert len(shown) == 2
    for e in shown:
        expected = cal.elo_scale(e.c_mean, *e.c_cr95)
        assert e.c_elo == pytest.approx(expected["elo"]) and e.c_elo == pytest.approx(cal.rating_for_c(e.c_mean))
        assert e.c_elo_cr95 == pytest.approx(tuple(expected["cr95"]))
        assert e.c_elo_cr95[0] < e.c_elo < e.c_elo_cr95[1]


def test_the_default_profile_ships_a_likelihood_calibration_the_store_falls_back_to(tmp_path):
    """livemon/data/calibrations.json: made by `livemon calibrate` (docs/calibration.md), read when nothing is stored."""
    from livemon.config import EngineConfig
    from livemon.io.engine import EngineProfile
    from livemon.io.store import Store, shipped_calibrations

    engine = EngineConfig()
    default = EngineProfile("Stockfish 15.1", engine.depth, engine.nodes, engine.multipv).name
    shipped = shipped_calibrations()
    assert default in shipped
    with Store(tmp_path / "empty.sqlite") as store:
        pc = store.calibrations.get(default)
        assert pc == shipped[default] and store.calibrations.engine_strength(default) == pc.engine_strength
    cal = pc.c_map
    assert cal.method == "ml" and cal.profile == default and cal.b > 0 and cal.tau is not None
    assert cal.elo_min < 1800 and cal.elo_max > 2700  # the open plus the 2700+ round robins
    assert cal.n >= 100 and cal.positions > 10 * cal.n and cal.z_players >= 100 and cal.z_scale > 0
    va, _, vb = cal.cov_ab
    assert 0 < va and 0 < vb and math.sqrt(vb) < 0.1 * cal.b  # the slope is well determined
    assert cal.rating_for_c(cal.c_for_rating(2200.0)) == pytest.approx(2200.0)


def test_the_deeper_profile_ships_its_performance_map_and_withholds_its_screening_map():
    """Depth 14 (docs/calibration.md): performance map and r̄_e shipped; its screening map failed the held-back
    check, so it is withheld with the reason and the screener says it is off, never using depth 12's map."""
    from livemon.config import ScreeningConfig
    from livemon.io.store import shipped_calibrations
    from livemon.live.screener import Screener

    name = "Stockfish 15.1 depth=14 multipv=4"
    pc = shipped_calibrations()[name]
    assert pc.c_map is None and pc.performance is not None and pc.performance.profile == name
    assert pc.performance.b > 0 and pc.performance.tau_game is not None and 2000 < (pc.engine_strength or 0) < 2800
    d12 = shipped_calibrations()["Stockfish 15.1 depth=12 multipv=4"]
    assert (pc.performance.a, pc.performance.b) != (d12.performance.a, d12.performance.b)  # type: ignore[union-attr]
    screener = Screener(ScreeningConfig(), pc)
    assert not screener.enabled and name in screener.off_reason


def _bench(name: str):
    """A bench script imported by path (bench/ is not a package)."""
    import importlib
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parent.parent / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module(name)


def test_export_merges_several_stores_and_keeps_profiles_apart(tmp_path):
    """calibration_data.MergedStores: the union of the stores' analyses of one profile, never another profile's."""
    from livemon.io.store import Store
    from livemon.live.values import PositionAnalysis

    data = _bench("calibration_data")
    p14, p12 = "Stockfish 15.1 depth=14 multipv=4", "Stockfish 15.1 depth=12 multipv=4"
    a = {f"pos{i}": PositionAnalysis(10 * i, (("e2e4", 10 * i), ("d2d4", 10 * i - 5)), 14) for i in range(6)}
    for n, keys in ((0, ["pos0", "pos2", "pos4"]), (1, ["pos1", "pos3", "pos4"])):
        with Store(tmp_path / f"s{n}.sqlite") as store:
            for k in keys:
                store.analyses.put(k, p14, a[k])
            store.analyses.put("pos5", p12, a["pos5"])
    merged = data.MergedStores([str(tmp_path / "s0.sqlite"), str(tmp_path / "s1.sqlite")])
    got = merged.get_analyses(list(a), p14)
    assert got == {k: a[k] for k in ("pos0", "pos1", "pos2", "pos3", "pos4")}
    assert merged.get_analyses(["pos5", "pos0"], p12) == {"pos5": a["pos5"]}
    merged.close()


def test_fit_takes_the_open_decisions_of_its_own_profile(tmp_path, monkeypatch):
    """fit_calibration.open_export: the open's export whose header names the profile (depth 12's file first), never
    another profile's; open2025 reads one sample per player-game."""
    import gzip

    fit = _bench("fit_calibration")
    p14, p12 = "Stockfish 15.1 depth=14 multipv=4", "Stockfish 15.1 depth=12 multipv=4"
    files = {}
    for name, profile in (("open2025_decisions.jsonl.gz", p12), ("open2025_decisions_d14.jsonl.gz", p14)):
        files[profile] = tmp_path / name
        with gzip.open(files[profile], "wt", encoding="utf-8") as f:
            f.write(json.dumps({"format": "livemon decisions 1", "profile": profile, "book_moves": 8}) + "\n")
            for game in (1, 2):
                f.write(json.dumps({"player": "A, B", "elo": 2000, "game": game, "ply": 20,
                                    "values": [0.2, 0.1], "played": 1}) + "\n")
    monkeypatch.setattr(fit, "OPEN", files[p12])
    assert fit.open_export(p12) == files[p12] and fit.open_export(p14) == files[p14]
    assert fit.open_export("Stockfish 15.1 depth=16 multipv=4") is None
    samples = fit.open2025(files[p14], profile=p14)
    assert [(s.key, len(s.decisions)) for s in samples] == [("A, B", 1), ("A, B", 1)]
    with pytest.raises(ValueError, match="depth=14"):
        fit.open2025(files[p14], profile=p12)


def test_fit_and_validity_take_the_profile_of_the_export(tmp_path, capsys):
    """A --profile other than the export's is refused; validity refuses a profile without a calibration."""
    import gzip

    export = tmp_path / "x.jsonl.gz"
    with gzip.open(export, "wt", encoding="utf-8") as f:
        f.write(json.dumps({"format": "livemon analyses 1", "profile": "Nodefish 1 nodes=5 multipv=4"}) + "\n")
    assert _bench("calibration_data").profile_of(export) == "Nodefish 1 nodes=5 multipv=4"
    assert _bench("fit_calibration").main([str(export), "--profile", "Stockfish 15.1 depth=12 multipv=4",
                                           "--dry-run"]) == 2
    assert "not 'Stockfish 15.1 depth=12 multipv=4': refused" in capsys.readouterr().out
    assert _bench("validity").main([str(export)]) == 2
    assert "no calibration of 'Nodefish 1 nodes=5 multipv=4'" in capsys.readouterr().out
