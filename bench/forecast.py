"""The forecast's game model fitted and measured, and the forecast itself calibrated and timed.

Usage::

    python bench/forecast.py fit [--data DIR]        # writes livemon/data/forecast.json; prints the game model's log-loss
    python bench/forecast.py calibrate [--data DIR]  # event replays cut at 1/3, 1/2, 2/3: log-loss, Brier, reliability
    python bench/forecast.py timing                  # 14-player DRR and a 250-player open, with a reference run
    python bench/forecast.py fit-rapid [--games DIR] # the rapid model of a knockout's tiebreak (RAPID in rating/forecast.py)
    python bench/forecast.py live                    # the live forecast at a 1,000-board round's pace: move -> message

``--games`` is the calibration collection's folder (its ``A*.pgn``; default ``$LIVEMON_CALIBRATION_GAMES``);
the real games with clocks and the other round robins are read from ``tests/data``.
The split is bench/forecast_data.py's (held-back events written there).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # timed on one core: no BLAS threads behind the matrix products
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import forecast_data as fd  # noqa: E402

from livemon.rating.forecast import (  # noqa: E402
    ForecastParams, fit_ingame, fit_pregame, ingame_arrays, lichess_expected, log_loss, pregame_arrays,
)

REPO = Path(__file__).resolve().parent.parent
PARAMS = REPO / "livemon" / "data" / "forecast.json"
EXPORTS = sorted((REPO / "bench" / "data").glob("calibration_d12*.jsonl.gz"))


def _rated(games: list[fd.Game], part: str) -> list[fd.Game]:
    return [g for g in games if g.part == part and g.result is not None and g.moves
            and g.white_elo is not None and g.black_elo is not None]


def _pre_arrays(games: list[fd.Game]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.array([g.rating(True) for g in games], float), np.array([g.rating(False) for g in games], float),
            np.array([g.result for g in games], float))


def fixed_draw_baseline(rw: np.ndarray, rb: np.ndarray, draw: float) -> np.ndarray:
    """Ratings alone: a fixed draw rate, the decisive rest split by the Elo expected score (no White advantage)."""
    e = 1.0 / (1.0 + 10 ** (-(rw - rb) / 400.0))
    return np.stack([(1 - draw) * e, np.full_like(e, draw), (1 - draw) * (1 - e)], axis=1)


def _weighted_ll(probs: np.ndarray, pos: fd.Positions) -> float:
    r = np.asarray(pos.result)
    idx = np.where(r == 1.0, 0, np.where(r == 0.5, 1, 2))
    p = np.clip(probs[np.arange(len(idx)), idx], 1e-12, 1)
    w = np.asarray(pos.weight)
    return float(-(w * np.log(p)).sum() / w.sum())


def _weighted_score_ll(e: np.ndarray, pos: fd.Positions) -> float:
    r = np.asarray(pos.result)
    e = np.clip(e, 1e-12, 1 - 1e-12)
    w = np.asarray(pos.weight)
    return float(-(w * (r * np.log(e) + (1 - r) * np.log(1 - e))).sum() / w.sum())


def _ingame_probs(pos: fd.Positions, params: ForecastParams) -> np.ndarray:
    return ingame_arrays(pos.white, pos.black, pos.cp, pos.ply, pos.mat, pos.clock, params)


def _report_ingame(name: str, pos: fd.Positions, params: ForecastParams, draw: float) -> None:
    probs = _ingame_probs(pos, params)
    base = fixed_draw_baseline(np.asarray(pos.white), np.asarray(pos.black), draw)
    ours = probs[:, 0] + probs[:, 1] / 2
    lich = lichess_expected(pos.cp)
    ngames = len(set(pos.game))
    print(f"  {name}: {ngames} games, {len(pos.cp)} positions (each game weighs 1)")
    print(f"    3-way log-loss: model {_weighted_ll(probs, pos):.4f}, ratings alone (fixed draw {draw:.2f}) "
          f"{_weighted_ll(base, pos):.4f}")
    print(f"    expected-score cross-entropy: model {_weighted_score_ll(ours, pos):.4f}, lichess win% "
          f"{_weighted_score_ll(lich, pos):.4f}, ratings alone {_weighted_score_ll(base[:, 0] + base[:, 1] / 2, pos):.4f}")
    ply = np.asarray(pos.ply)
    print("    by move: " + ", ".join(
        f"moves {lo // 2 + 1}-{hi // 2}: {_weighted_ll(probs[m], _sub(pos, m)):.3f} (3-way); score "
        f"{_weighted_score_ll(ours[m], _sub(pos, m)):.3f} vs lichess {_weighted_score_ll(lich[m], _sub(pos, m)):.3f}"
        for lo, hi in ((0, 20), (20, 40), (40, 60), (60, 80), (80, 400))
        if (m := (ply > lo) & (ply <= hi)).any()))


def _sub(pos: fd.Positions, mask: np.ndarray) -> fd.Positions:
    idx = np.flatnonzero(mask)
    return fd.Positions(*[[getattr(pos, f)[i] for i in idx] for f in fd.Positions.__dataclass_fields__])


def cmd_fit(folder: Path, write: bool) -> None:
    games = fd.calibration_games(folder)
    fit_games, test_games = _rated(games, "fit"), _rated(games, "test")
    rw, rb, res = _pre_arrays(fit_games)
    t0 = time.perf_counter()
    pre = fit_pregame(rw, rb, res)
    draw = float(np.mean(res == 0.5))
    print(f"pre-game: fitted on {len(fit_games)} games of {len({g.event for g in fit_games})} events "
          f"in {time.perf_counter() - t0:.1f} s: k={pre.k:.4f} white={pre.white:.1f} Elo c0={pre.c0:.3f} "
          f"c1={pre.c1:.3f} c2={pre.c2:.3f}; fit draw rate {draw:.3f}")
    trw, trb, tres = _pre_arrays(test_games)
    print(f"  held back: {len(test_games)} games of {len({g.event for g in test_games})} events: log-loss model "
          f"{log_loss(pregame_arrays(trw, trb, pre), tres):.4f}, ratings alone with fixed draw rate "
          f"{log_loss(fixed_draw_baseline(trw, trb, draw), tres):.4f}")

    pos = fd.export_positions(games, EXPORTS, "fit")
    t0 = time.perf_counter()
    params = fit_ingame(pre, pos.white, pos.black, pos.cp, pos.ply, pos.mat, pos.result, pos.weight)
    print(f"in-game: fitted on {len(set(pos.game))} games, {len(pos.cp)} positions in {time.perf_counter() - t0:.1f} s: "
          f"tau={params.tau:.1f} a0={params.a0:.3f} a1={params.a1:.3f} a2={params.a2:.3f} g0={params.g0:.3f} "
          f"g1={params.g1:.3f} d1={params.d1:.3f} d2={params.d2:.3f}")
    # the clock term, on the 2025 open (rounds 5-8 analysed at depth 14), the rest fixed
    real = fd.REAL
    open_games = fd.real_games(real / fd.OPEN2025)
    open_pos = fd.broadcast_positions(open_games, fd.open2025_analyses(REPO / "bench" / "data" / "open2025_d14_analyses.jsonl.gz"))
    kc = _fit_clock(params, open_pos)
    params = ForecastParams(**{**params.__dict__, "kc": kc, "fitted_on": {
        "pregame": f"{len(fit_games)} rated games, calibration set less its held-back events",
        "ingame": f"{len(set(pos.game))} games with engine evaluations (depth 12), same split",
        "clock": f"{len(set(open_pos.game))} games of the 2025 open with clocks (depth 14)",
        "held_back": sorted(fd.TEST_EVENTS) + [fd.RR2025.removesuffix('.pgn')],
    }})
    print(f"clock term: kc={kc:.3f} on {len(set(open_pos.game))} games of the 2025 open")
    print("in-game, held back:")
    _report_ingame("calibration held-back events", fd.export_positions(games, EXPORTS, "test"), params, draw)
    rr = fd.real_games(real / fd.RR2025)
    rr_pos = fd.broadcast_positions(rr, None)
    _report_ingame("2025 round robin, lichess [%eval] and clocks", rr_pos, params, draw)
    no_clock = ForecastParams(**{**params.__dict__, "kc": 0.0})
    print(f"    same without the clock term: {_weighted_ll(_ingame_probs(rr_pos, no_clock), rr_pos):.4f}")
    if write:
        PARAMS.write_text(params.to_json(), encoding="utf-8")
        print(f"-> {PARAMS.relative_to(REPO)}")


def cmd_fit_rapid(folder: Path) -> None:
    """The rapid game model: fitted on the ch-ROU rapid championships and checked on Saint Louis Rapid 2022 (held
    back), then fitted on all three events, the figures livemon.rating.forecast.RAPID holds."""
    games = fd.calibration_games(folder)
    rapid = [g for g in games if g.part is None and g.result is not None and g.moves
             and g.white_elo is not None and g.black_elo is not None]
    fit = [g for g in rapid if g.file.startswith("A03_")]
    held = [g for g in rapid if g.file.startswith("A14_")]
    pre = fit_pregame(*_pre_arrays(fit))
    hw, hb, hr = _pre_arrays(held)
    print(f"rapid: fitted on {len(fit)} games of the ch-ROU rapid championships: k={pre.k:.3f} white={pre.white:.1f} "
          f"c0={pre.c0:.3f} c1={pre.c1:.3f} c2={pre.c2:.3f}")
    print(f"  held back, Saint Louis Rapid 2022 ({len(held)} games, {np.mean(hr == 0.5):.0%} drawn): log-loss rapid "
          f"model {log_loss(pregame_arrays(hw, hb, pre), hr):.3f}, classical model "
          f"{log_loss(pregame_arrays(hw, hb, ForecastParams.from_mapping(__import__('json').loads(PARAMS.read_text()))), hr):.3f}")
    every = fit_pregame(*_pre_arrays(rapid))
    print(f"  all {len(rapid)} rapid games: k={every.k:.6f} white={every.white:.6f} c0={every.c0:.6f} c1={every.c1:.6f} "
          f"c2={every.c2:.6f} (livemon.rating.forecast.RAPID)")


def _fit_clock(params: ForecastParams, pos: fd.Positions) -> float:
    from scipy.optimize import minimize_scalar

    def nll(kc: float) -> float:
        return _weighted_ll(_ingame_probs(pos, ForecastParams(**{**params.__dict__, "kc": kc})), pos)

    return float(minimize_scalar(nll, bounds=(-5, 5), method="bounded").x)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("fit", "fit-rapid", "calibrate", "timing", "live"):
        s = sub.add_parser(name)
        s.add_argument("--games", type=Path, default=None,
                       help="the calibration collection's folder (default: $LIVEMON_CALIBRATION_GAMES)")
        if name == "fit":
            s.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    if args.cmd in ("fit", "fit-rapid", "calibrate") and args.games is None:
        folder = os.environ.get("LIVEMON_CALIBRATION_GAMES")
        if not folder:
            raise SystemExit("give --games or set LIVEMON_CALIBRATION_GAMES to the folder of the calibration "
                             "collection (its A*.pgn files)")
        args.games = Path(folder)
    if args.cmd == "fit":
        cmd_fit(args.games, not args.no_write)
    elif args.cmd == "fit-rapid":
        cmd_fit_rapid(args.games)
    elif args.cmd == "calibrate":
        import forecast_calibration

        forecast_calibration.run(args.games)
    elif args.cmd == "timing":
        import forecast_calibration

        forecast_calibration.timing()
    else:
        import forecast_calibration

        forecast_calibration.live_timing()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
