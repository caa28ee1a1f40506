"""The headline estimate beside its alternatives, on events the fit never saw, per event.

Every fit event in turn is left out and the model refitted on the other **fit** events (the held-back events of
``bench/calibration_split.py`` never enter a fit); the held-back events are estimated by the fit on every fit event.
The units are ``bench/validity.py``'s (``bench/fit_quality.py``: per game, per player-event of 5+ and 7+ games),
every event's MAE and bias under ``events``. From each fold's one fit (``fit_quality_model(level_bias=True)``, the
shipped ``joint_level``):

* ``quality`` — shipped: the joint reading's noise by level fitted on its own out-of-fold errors;
* ``quality_sl`` — the joint reading with the single side's noise by level, its ``scale`` refitted;
* ``quality_sym`` — the interval ±1.96·sd at the level expected given the estimate instead of every rating whose
  players read within 1.96 of their own noise (:meth:`~livemon.rating.quality.QualityModel.interval`), ``scale``
  refitted for it;
* ``quality_lb`` — the out-of-fold errors' trend by level taken off the point (``level_bias``);
* ``quality_es`` — the event's shift taken off: minus the mean error of the event's other rated units, shrunk by
  k/(k + λ), λ the within-event over the between-event variance of the errors of the other left-out fit events;
* ``field_moves`` — the moves with the event's other players' ratings as the prior (``field_estimate`` without
  results): what a prior toward the field does to the headline;
* ``mean`` — the training players' mean rating.

Each variant's ``scale`` is fitted on the fold's own out-of-fold scores (``_joint_scale``: every game's intervals,
shown or not), beside the fit's own calibration (``_joint_calibration``, ``bench/joint_noise.py``). Usage (a busy
machine: split the folds over processes, then merge)::

    python bench/quality_alternatives.py --out DIR [--part I/N]   # I = 0..N-1; the last part also fits the held back
    python bench/quality_alternatives.py --out DIR --merge N > alternatives.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pickle
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_quality as fq  # noqa: E402
import validity  # noqa: E402
from calibration_data import PROFILE  # noqa: E402

from livemon.rating import quality as q  # noqa: E402
from livemon.rating.quality import FEATURES, QualityModel, field_estimate, fit_field_rho, fit_quality_model  # noqa: E402

SECTIONS = (("per game", "game", 1), ("per player-event, >= 5 games", "event", 5),
            ("per player-event, >= 7 games", "event", 7))
NAMES = ["quality", "quality_sl", "quality_sym", "quality_lb", "quality_es", "field_moves", "mean"]
Rows = dict[str, list[tuple[fq.Unit, dict[str, Any]]]]

_scales: dict[str, float] = {}
_joint_scale = q._joint_scale
_joint_calibration = q._joint_calibration


def _with_variants(model: QualityModel, samples: Any, pairs: Any, scores: Any, target: float = 0.95) -> q.JointWeights:
    """The fit's own calibration, and beside it each variant's scale (on every game's intervals), on the same
    out-of-fold scores."""
    j = model.joint
    assert j is not None
    _scales["quality_sl"] = _joint_scale(dataclasses.replace(model, joint=dataclasses.replace(j, noise_level=None)),
                                         samples, pairs, scores, target)
    _scales["quality_sym"] = _symmetric_scale(model, samples, pairs, scores, target)
    return _joint_calibration(model, samples, pairs, scores, target)


def _symmetric_scale(model: QualityModel, samples: Any, pairs: Any, scores: Any, target: float) -> float:
    """``quality_sym``'s factor on the joint reading's games' parts: its out-of-fold single games' ±1.96·sd, at the
    level expected given the estimate, cover ``target`` of their ratings."""
    mean, sd = model.ratings
    return _joint_scale(model, samples, pairs, scores, target,
                        read_at=lambda e, p, g, elo, f: mean + sd**2 / (sd**2 + p + f * f * g) * (elo + e - mean))


q._joint_calibration = _with_variants  # type: ignore[assignment]


def _estimate(model: QualityModel, u: fq.Unit, symmetric: bool = False) -> validity.Estimate:
    st = u.stats()
    if st.positions < 5:
        return None
    e = model.estimate(st)
    if symmetric and e.point is not None and e.sd is not None:
        half = 1.959963984540054 * e.sd
        return (e.point, None if 2 * half > model.elo_max - model.elo_min else (e.point - half, e.point + half))
    if e.elo is None:
        return None if e.point is None else (e.point, None)
    return (e.elo, e.cr95)


def run(plan: Sequence[tuple[str, Sequence[fq.Side], Sequence[fq.Side]]],
        fields: dict[str, dict[str, float]]) -> tuple[Rows, dict[str, Any]]:
    rows: Rows = {t: [] for t, _, _ in SECTIONS}
    fits: dict[str, Any] = {}
    t0 = time.perf_counter()
    for key, train, test in plan:
        m = fit_quality_model(fq.samples(train), PROFILE, FEATURES, 0.5, fq.BOOK_MOVES, fq.EVAL_BOUND, "", 0,
                              level_bias=True, joint_level=fq.JOINT_LEVEL)
        assert m.joint is not None
        base = dataclasses.replace(m, level_bias=(0.0, 0.0, 0.0))
        variants = {"quality": base, "quality_lb": m,
                    "quality_sl": dataclasses.replace(base, joint=dataclasses.replace(
                        m.joint, noise_level=None, scale=_scales["quality_sl"])),
                    "quality_sym": dataclasses.replace(base, joint=dataclasses.replace(
                        m.joint, scale=_scales["quality_sym"]))}
        rho, fscale = fit_field_rho(fq.field_rows(base, train))
        in_field = dataclasses.replace(base, field_rho=rho, field_scale=fscale)
        fits[key] = {"scale": m.joint.scale, "noise_level": list(m.joint.noise_level or ()),
                     "level_bias": list(m.level_bias), **{f"scale_{k}": v for k, v in _scales.items()}}
        mean = float(np.mean([s.elo for s in train if s.elo is not None]))
        for title, per, mg in SECTIONS:
            for u in fq.units(test, per, mg):
                if u.elo is None:
                    continue
                e = {k: _estimate(v, u, k == "quality_sym") for k, v in variants.items()}
                st = u.stats()
                others = [r for p, r in fields.get(u.event, {}).items() if p != u.player]
                if st.positions >= 5:
                    f = field_estimate(in_field, in_field.estimate(st), st, others)
                    e["field_moves"] = None if f.elo is None or f.cr95 is None else (f.elo, f.cr95)
                rows[title].append((fq.Unit(u.event, u.player, u.elo, []), {**e, "mean": (mean, None)}))
        print(f"  {key}: scale {m.joint.scale:.3f} (single side's noise by level {_scales['quality_sl']:.3f}), "
              f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    return rows, fits


def with_event_shift(rows: Rows, fit_events: set[str]) -> Rows:
    """``quality_es`` beside ``quality``: minus the event's other units' mean error, shrunk (module docstring)."""
    out: Rows = {}
    for title, rs in rows.items():
        errors: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for u, e in rs:
            if e.get("quality") is not None and u.elo is not None:
                errors[u.event].append((u.player, e["quality"][0] - u.elo))

        def lam_without(event: str, errors: dict[str, list[tuple[str, float]]] = errors) -> float:
            means, within, sizes = [], [], []
            for ev, v in errors.items():
                if ev != event and ev in fit_events and len(v) >= 5:
                    d = np.array([x for _, x in v])
                    means.append(float(d.mean()))
                    within.append(float(d.var(ddof=1)))
                    sizes.append(len(v))
            if len(means) < 2:
                return float("inf")
            w = float(np.mean(within))
            between = max(float(np.var(means, ddof=1)) - float(np.mean([w / n for n in sizes])), 1.0)
            return w / between

        lams: dict[str, float] = {}
        new = []
        for u, e in rs:
            e = dict(e)
            if e.get("quality") is not None:
                lam = lams.setdefault(u.event, lam_without(u.event))
                others = [x for p, x in errors[u.event] if p != u.player]
                shift = len(others) / (len(others) + lam) * float(np.mean(others)) if others else 0.0
                point, iv = e["quality"]
                e["quality_es"] = (point - shift, None if iv is None else (iv[0] - shift, iv[1] - shift))
            new.append((u, e))
        out[title] = new
    return out


def figures(rows: Rows, fit_events: set[str]) -> dict[str, Any]:
    rows = with_event_shift(rows, fit_events)
    report: dict[str, Any] = {}
    for title, rs in rows.items():
        f = validity.section_figures(rs, NAMES)
        for name in NAMES[:-1]:
            per_ev: dict[str, list[float]] = defaultdict(list)
            for u, e in rs:
                if e.get(name) is not None and u.elo is not None:
                    per_ev[u.event].append(e[name][0] - u.elo)
            f[name]["events"] = {ev: {"n": len(v), "mae": float(np.mean(np.abs(v))), "bias": float(np.mean(v))}  # type: ignore[index]
                                 for ev, v in sorted(per_ev.items())}
        report[title] = f
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="folder of the parts")
    p.add_argument("--part", default="0/1", help="I/N: this process's share of the events")
    p.add_argument("--merge", type=int, metavar="N", help="merge N parts and print the figures (JSON)")
    args = p.parse_args(argv)
    if args.merge:
        parts = [pickle.loads((args.out / f"part{i}.pkl").read_bytes()) for i in range(args.merge)]
        loeo: Rows = {t: [r for part in parts for r in part["loeo"][0][t]] for t, _, _ in SECTIONS}
        held = next(part["held"] for part in parts if "held" in part)
        fit_events = set(parts[0]["fit_events"])
        print(json.dumps({"leave_one_event_out": figures(loeo, fit_events), "held_back": figures(held[0], fit_events),
                          "fits": {k: v for part in parts for k, v in part["loeo"][1].items()} | held[1]}, indent=1))
        return 0
    i, n = (int(x) for x in args.part.split("/"))
    sides = fq.all_sides()
    fields = fq.field_of(sides)
    fit_sides = [s for s in sides if s.part == "fit"]
    by_event: dict[str, list[fq.Side]] = defaultdict(list)
    for s in fit_sides:
        by_event[s.event].append(s)
    events = [ev for k, ev in enumerate(sorted(by_event, key=lambda e: (-len(by_event[e]), e))) if k % n == i]
    out: dict[str, Any] = {"fit_events": sorted(by_event),
                           "loeo": run([(ev, [s for s in fit_sides if s.event != ev], by_event[ev]) for ev in events],
                                       fields)}
    if i == n - 1:
        out["held"] = run([("held back", fit_sides, [s for s in sides if s.part == "test"])], fields)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"part{i}.pkl").write_bytes(pickle.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
