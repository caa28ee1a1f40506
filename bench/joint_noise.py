"""The joint reading's noise set on coverage, beside the ways it could be set, on events the fit never saw.

Every fit event in turn is left out and the model refitted on the other **fit** events (the held-back events of
``bench/calibration_split.py`` never enter a fit); the held-back events are estimated by the fit on every fit event.
Each fold's fit is made once; the variants differ only in the joint reading's games' slope by level and its factor
(:attr:`~livemon.rating.quality.JointWeights.scale`), set on the same fold's out-of-fold single games
(:func:`~livemon.rating.quality._joint_rows`):

* ``shipped`` — the slope that evens every game's coverage over the four bands, the factor on the intervals shown,
  fading over k games as √(1 + (scale² − 1)/k) (:func:`~livemon.rating.quality._joint_calibration`);
* ``every_game`` — the likelihood's slope, the factor on every game's interval, shown or not (also those of fewer
  counted moves than an estimate needs), the same for one game and many;
* ``shown`` — the likelihood's slope, the factor on the intervals shown, the same for one game and many;
* ``shown_fading`` — the likelihood's slope, the factor on the intervals shown, fading over k games;
* ``slope_shown`` — the slope evened over the bands, the factor on the intervals shown, the same for one game and
  many;
* ``slope_every_game`` — the slope evened over the bands, the factor on every game's interval (of as many counted
  moves as an estimate needs), not fading.

Per game, per player-event of 5+ and 7+ games (``bench/validity.py``'s units): MAE, bias by band, the coverage and
width of the intervals shown, by band. Usage::

    python bench/joint_noise.py [--folds FILE]   # FILE: the folds' fits, made once and kept (a pickle)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_quality as fq  # noqa: E402
from calibration_data import PROFILE  # noqa: E402

from livemon.rating import quality as q  # noqa: E402
from livemon.rating.quality import FEATURES, QualityModel, fit_quality_model  # noqa: E402

BANDS = ((0, 1800, "<1800"), (1800, 2200, "1800-2200"), (2200, 2500, "2200-2500"), (2500, 9999, ">=2500"))
VARIANTS = ("shipped", "every_game", "shown", "shown_fading", "slope_shown", "slope_every_game")
_captured: dict[str, Any] = {}
_calibration = q._joint_calibration


def _capture(model: QualityModel, samples: Any, pairs: Any, scores: Any, target: float = 0.95) -> Any:
    _captured["rows"] = q._joint_rows(model, samples, pairs, scores)
    _captured["every_row"] = q._joint_rows(model, samples, pairs, scores, min_positions=1)
    _captured["ml"] = model.joint
    return _calibration(model, samples, pairs, scores, target)


q._joint_calibration = _capture  # type: ignore[assignment]


def folds(sides: list[fq.Side]) -> dict[str, dict[str, Any]]:
    """Each fold's fit (the shipped calibration), its joint reading before calibration and its out-of-fold rows."""
    fit_sides = [s for s in sides if s.part == "fit"]
    events = sorted({s.event for s in fit_sides})
    plan = [(ev, [s for s in fit_sides if s.event != ev]) for ev in events] + [("held back", fit_sides)]
    out = {}
    t0 = time.perf_counter()
    for key, train in plan:
        m = fit_quality_model(fq.samples(train), PROFILE, FEATURES, 0.5, fq.BOOK_MOVES, fq.EVAL_BOUND, "", 0,
                              level_bias=False, joint_level=fq.JOINT_LEVEL)
        out[key] = {"model": m, "ml": _captured["ml"], "rows": _captured["rows"], "every_row": _captured["every_row"]}
        print(f"  {key}: scale {m.joint.scale:.3f} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return out


@dataclasses.dataclass(frozen=True)
class _Flat(q.JointWeights):
    """The joint reading with one game's factor on any number of games (no fading)."""

    def factor(self, games: int = 1) -> float:
        return self.scale


def _factor(rows: np.ndarray, model: QualityModel, level: tuple[float, float, float, float], shown_only: bool) -> float:
    def coverage(f: float) -> float:
        shown, covered = q._shown_covered(model, rows, f, level)
        mask = shown if shown_only else np.ones_like(shown)
        return float(covered[mask].mean()) if mask.any() else 1.0

    lo, hi = 0.3, 3.0
    for _ in range(25):
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if coverage(mid) >= 0.95 else (mid, hi)
    return hi


def variant(fold: dict[str, Any], name: str) -> tuple[QualityModel, bool]:
    """The fold's model under the variant, and whether its factor fades over k games."""
    m: QualityModel = fold["model"]
    if name == "shipped":
        return m, True
    ml = fold["ml"]
    assert m.joint is not None and ml.noise_level is not None and m.joint.noise_level is not None
    level = m.joint.noise_level if name.startswith("slope") else ml.noise_level
    f = _factor(fold["every_row" if name == "every_game" else "rows"], m, level, "shown" in name)
    return dataclasses.replace(m, joint=dataclasses.replace(m.joint, scale=f, noise_level=level)), name == "shown_fading"


def _figures(rows: list[tuple[float, float, tuple[float, float] | None]]) -> dict[str, Any]:
    elo = np.array([r[0] for r in rows])
    err = np.array([r[1] for r in rows]) - elo
    iv = [(r[0], r[2]) for r in rows if r[2] is not None]
    e = np.array([x for x, _ in iv])
    cov = np.array([lo <= x <= hi for x, (lo, hi) in iv])
    w = np.array([hi - lo for _, (lo, hi) in iv])
    bands = {}
    for b0, b1, name in BANDS:
        k, kb = (e >= b0) & (e < b1), (elo >= b0) & (elo < b1)
        bands[name] = {"n": int(kb.sum()), "bias": float(err[kb].mean()) if kb.any() else None, "shown": int(k.sum()),
                       "coverage": float(cov[k].mean()) if k.any() else None, "width": float(w[k].mean()) if k.any() else None}
    return {"n": len(rows), "mae": float(np.abs(err).mean()), "shown": len(iv), "coverage": float(cov.mean()),
            "width": float(w.mean()), "bands": bands}


def measure(fits: dict[str, dict[str, Any]], sides: list[fq.Side], name: str) -> dict[str, Any]:
    by_event: dict[str, list[fq.Side]] = defaultdict(list)
    for s in sides:
        by_event[s.event].append(s)
    test = [s for s in sides if s.part == "test"]
    acc: dict[str, list[tuple[float, float, tuple[float, float] | None]]] = defaultdict(list)
    for key, fold in fits.items():
        model, fading = variant(fold, name)
        j = model.joint
        assert j is not None
        if not fading:
            model = dataclasses.replace(model, joint=_Flat(*(getattr(j, f.name) for f in dataclasses.fields(j))))
        part = "held back" if key == "held back" else "left out"
        for per, mg in (("game", 1), ("event 5+", 5), ("event 7+", 7)):
            for u in fq.units(test if key == "held back" else by_event[key], "game" if per == "game" else "event", mg):
                st = u.stats()
                if u.elo is None or st.positions < 5:
                    continue
                e = model.estimate(st)
                point = e.elo if e.elo is not None else e.point
                if point is not None:
                    acc[f"{part}, {per}"].append((u.elo, point, e.cr95 if e.elo is not None else None))
    return {k: _figures(v) for k, v in acc.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--folds", type=Path, help="the folds' fits: read when there, else made and kept there")
    args = p.parse_args(argv)
    sides = fq.all_sides()
    if args.folds is not None and args.folds.exists():
        fits = pickle.loads(args.folds.read_bytes())
    else:
        fits = folds(sides)
        if args.folds is not None:
            args.folds.write_bytes(pickle.dumps(fits))
    report = {name: measure(fits, sides, name) for name in VARIANTS}
    report["fits"] = {k: {"scale": f["model"].joint.scale, "slope": f["model"].joint.noise_level[1],
                          "likelihood_slope": f["ml"].noise_level[1]} for k, f in fits.items()}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
