"""How right are the estimates? Every estimator side by side, on events the fit never saw.

The units are those of ``bench/fit_quality.py``: the analysed calibration games
(``bench/calibration_data.py`` exports, split by event in ``bench/calibration_split.py``) and the
2025 open's screened decisions, one rated player per game, merged per player-event. Two
measures, each per game and per player-event of at least 5 and at least 7 games, against the
players' FIDE ratings (a player without a rating tag is estimated, never counted):

* **leave one event out**: every event in turn is left out, the new estimators are refitted on
  the others and estimate it;
* **held back**: the held-back events (``bench/calibration_split.py``'s four sets and the 2025 round robin), with
  the fit on the fit events only (what ships).

The estimators:

* ``headline`` — what the monitor shows as the estimate: ``quality_field`` where there is one (two other
  rated players in the event), else ``quality``;
* ``quality`` — the moves alone (:mod:`livemon.rating.quality`): twenty move-quality features,
  Elo → features by OLS, inverted by GLS, with the measured noise (by the player's level) as its interval;
* ``quality_field`` — "in this field": the moves and the results with the event's other players'
  ratings as prior, weighed by the measured correlation of the prior's error with theirs;
* ``results`` — FIDE's performance from results (mean opponent rating + dp(p));
* ``moves+results`` — quality and results combined by their measured variances and error correlation;
* ``performance`` — the E(c) performance map (:mod:`livemon.rating.performance`) with the shipped
  calibration (fitted on the fit events: in-sample on them);
* ``perceived`` — Ferreira's perceived Elo (Algorithm 4); ``acpl`` — 3100·exp(−0.01·ACPL)
  (both need the gains, which the open's export does not hold);
* ``c_elo`` — the E(c) posterior mean c̄ through the screening map;
* ``mean`` — predict the training players' mean rating.

For each: MAE, MAE ÷ predict-the-mean on the same units, bias per band (< 1800, 1800–2200,
2200–2500, ≥ 2500), and the coverage and mean width of the 95% intervals shown. It also checks
screening on the held-back honest player-events (mean and sd of z, notices at z ≥ 2.5) as the screener
reads it: for the default profile the shipped line and strength model (:mod:`livemon.rating.screening_params`,
the event's results and field lag from every game of the event in the files), else the calibration's map.

Usage::

    python bench/validity.py [EXPORT] [--calibrations FILE] [--json] [--no-open] [--no-ec] [--field-lag] [--rows FILE]

The profile is the export's (its header line); its calibration is read from
``livemon/data/calibrations.json`` (or ``--calibrations``): a profile without one
is refused, never measured through another profile's calibration. A profile whose
screening map is withheld (``c_map`` null) is measured with the map kept under
``fit.c_map_withheld``, and the output says so.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_quality as fq  # noqa: E402
from calibration_data import DEFAULT, PROFILE, GameData, profile_of  # noqa: E402

from livemon.rating.agent import CPosterior, Decision  # noqa: E402
from livemon.rating.calibration import Calibration, ProfileCalibration  # noqa: E402
from livemon.rating.gain import GainHistogram, expected_score_vs_engine, rating_difference  # noqa: E402
from livemon.rating.performance import PerformanceModel  # noqa: E402
from livemon.rating.screening import (  # noqa: E402
    ScreeningLine,
    junior_event,
    screen_player,
    screening_exclusion,
    screening_stats,
    tag_prior,
)
from livemon.rating.screening_params import SHIPPED  # noqa: E402

BOOK_MOVES, EVAL_BOUND = 8, 3.0  # the [screening] defaults the calibration is fitted with
BANDS = ((0, 1800, "<1800"), (1800, 2200, "1800-2200"), (2200, 2500, "2200-2500"), (2500, 9999, ">=2500"))
MIN_EVENT_GAMES = 7
BIG_EVENT = 100
"""Events with at least this many units are broken out of the per-game ratio to predict-the-mean: the ratio
depends on the spread of the ratings in the units, and a big event near the pool's mean weighs on it."""
ACPL_CAP = 1000


@dataclass
class Sample:
    """One player over some games: the evidence every estimator reads."""

    key: str
    event: str
    elo: float
    decisions: list[Decision] = field(default_factory=list)  # the screened ones (book, decided left out)
    moves: list[tuple[int, Decision]] = field(default_factory=list)  # every non-forced move's (ply, decision)
    gains: list[int] = field(default_factory=list)
    games: int = 0
    results: list[tuple[float, float]] = field(default_factory=list)  # (opponent today, points): the event's games
    lag: tuple[float, float] = (0.0, 0.0)  # the event's field lag and its sd (livemon.rating.screening.field_lag)
    played: datetime.date | None = None  # its first game's date (the screening line's era)


def player_games(games: Sequence[GameData], min_plies: int = 20) -> list[Sample]:
    """One sample per rated player per game: screened decisions and every gain."""
    out = []
    for g in games:
        if len(g.plies) < min_plies:
            continue
        for white in (True, False):
            key, elo = g.player(white)
            if elo is None:
                continue
            s = Sample(key, g.event, float(elo), games=1, played=g.played)
            for sp in g.plies:
                if sp.white_moved != white:
                    continue
                if sp.gain is not None:
                    s.gains.append(sp.gain)
                if sp.decision is None or sp.forced:
                    continue
                s.moves.append((sp.ply, sp.decision))
                if screening_exclusion(sp.decision, sp.ply, BOOK_MOVES, EVAL_BOUND) is None:
                    s.decisions.append(sp.decision)
            out.append(s)
    return out


def player_events(samples: Sequence[Sample], min_games: int = MIN_EVENT_GAMES) -> list[Sample]:
    """Player-game samples merged per player per event; those with at least ``min_games`` games."""
    merged: dict[tuple[str, str], Sample] = {}
    elos: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in samples:
        m = merged.setdefault((s.key, s.event), Sample(s.key, s.event, s.elo, played=s.played))
        if s.played is not None and (m.played is None or s.played < m.played):
            m.played = s.played
        m.decisions += s.decisions
        m.moves += s.moves
        m.gains += s.gains
        m.games += 1
        elos[(s.key, s.event)].append(s.elo)
    for k, m in merged.items():
        m.elo = float(np.mean(elos[k]))
    return [m for m in merged.values() if m.games >= min_games]


Estimate = tuple[float, tuple[float, float] | None] | None


# -- the figures ------------------------------------------------------------------------------

def screening_check(samples: Sequence[Sample], cal: Calibration, min_positions: int = 60,
                    line: ScreeningLine | None = None) -> dict[str, object]:
    """z of honest held-back player-events as the screener reads it: with the shipped ``line``, against today's
    strength (the tag's prior, the field lag, the event's results; c against the opponents' mean; the mid-p tail widened,
    :func:`~livemon.rating.screening.screen_player`); else against c_r of their rating, scaled by the
    calibration's z_scale (a calibration's own map)."""
    zs = []
    by_event: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        if len(s.decisions) < min_positions:
            continue
        if line is not None:
            junior = junior_event(s.event)
            opponents = float(np.mean([o for o, _ in s.results])) if s.results else None
            row = screen_player(s.decisions, line.on(s.played), tag_prior(s.elo, junior=junior, lag=s.lag[0], lag_sd=s.lag[1]),
                                s.results, tag_prior(s.elo, junior=junior), opponents)
            assert row is not None
            zs.append(row.z)
        else:
            st = screening_stats(s.key, s.decisions, cal.c_for_rating(s.elo))
            zs.append(st.z_match / (cal.z_scale or 1.0))
        by_event[s.event].append(zs[-1])
    if not zs:
        return {"n": 0}
    z = np.array(zs)
    nominal = float(stats.norm.sf(2.5))
    return {"n": len(z), "mean": float(z.mean()), "sd": float(z.std(ddof=1)) if len(z) > 1 else None,
            "notices": int((z >= 2.5).sum()), "notice_rate": float((z >= 2.5).mean()), "nominal": nominal,
            "events": {e: {"n": len(v), "mean": float(np.mean(v))} for e, v in sorted(by_event.items())}}


def shipped(profile: str = PROFILE, path: Path | None = None) -> tuple[ProfileCalibration, dict[str, object]]:
    from livemon.io.store import SHIPPED_CALIBRATIONS

    entry = json.loads((path or SHIPPED_CALIBRATIONS).read_text(encoding="utf-8"))[profile]
    return ProfileCalibration.from_dict(entry), entry.get("fit", {})


# -- every estimator side by side, on the quality bench's units -------------------------------

SECTIONS = (("per game", "game", 1), ("per player-event, >= 5 games", "event", 5),
            ("per player-event, >= 7 games", "event", 7),
            ("early in the event: a 7+ game player-event after its first game", "first", 1),
            ("early in the event: after 3 games", "first", 3), ("early in the event: after 5 games", "first", 5))
"""(title, unit, games): ``first`` k: the first k games (in the order of the files: by round) of the
player-events of at least 7 games, what a commentator sees part way through an event."""


def shipped_estimators(cal: Calibration, perf: Calibration, engine_strength: float) -> dict[str, fq.Estimator]:
    """The shipped estimators on a unit of sides (their calibration is the shipped one, fitted on the fit events)."""
    model = PerformanceModel.from_calibration(perf)

    def performance(u: fq.Unit) -> Estimate:
        p = model.estimate([d for s in u.sides for ply, d in s.all_moves if model.counts(d, ply)], u.games)
        return None if p.elo is None or p.cr95 is None else (p.elo, p.cr95)

    def perceived(u: fq.Unit) -> Estimate:
        gains = [g for s in u.sides for g in s.gains]
        if not gains:
            return None
        d = rating_difference(expected_score_vs_engine(GainHistogram.from_gains(gains)))
        return (engine_strength + d, None) if math.isfinite(d) else None

    def c_elo(u: fq.Unit) -> Estimate:
        post = CPosterior()
        for s in u.sides:
            for _, d in s.decisions:
                post.add(d)
        summ = post.summary()
        if summ is None:
            return None
        scale = cal.elo_scale(summ.mean, summ.cr95[0], summ.cr95[1])
        return None if scale is None else (scale["elo"], (scale["cr95"][0], scale["cr95"][1]))

    def acpl(u: fq.Unit) -> Estimate:
        gains = [g for s in u.sides for g in s.gains]
        if not gains:
            return None
        return (3100.0 * math.exp(-0.01 * float(np.mean([min(max(-g, 0), ACPL_CAP) for g in gains]))), None)

    return {"performance": performance, "perceived": perceived, "c_elo": c_elo, "acpl": acpl}


def new_estimators(train: Sequence[fq.Side], fields: dict[str, dict[str, float]]) -> dict[str, fq.Estimator]:
    model = fq.fit(train)
    mean_elo = float(np.mean([s.elo for s in train if s.elo is not None]))
    est = fq.estimators(model, fields, mean_elo)
    if FIELD_LAG is not None:  # the headline with the field's and the opponents' ratings moved by the field lag
        est["field_lagged"] = fq.estimators(model, fields, mean_elo, moved=FIELD_LAG)["headline"]
    return est


def field_lag_mover() -> fq.Moved:
    """The ratings of each event's likely K = 40 players moved by the event's field lag, as the screener reads it
    (:func:`~livemon.rating.screening.field_lag`, every finished game of the event in the files, the player's own
    games left out), by each rating's chance of being K = 40: what ``--field-lag`` gives the headline's results and
    prior in place of the tags."""
    import screening_honest as sh

    from livemon.rating.screening import field_lag_without, k40_chance

    per_event, own = sh.event_lags(sh.event_games())

    def moved(event: str, player: str, rating: float) -> float:
        if event not in per_event:
            return rating
        lag = field_lag_without(*per_event[event], own[(event, player)])[0]
        return rating + k40_chance(rating, junior=junior_event(event)) * lag

    return moved


FIELD_LAG: fq.Moved | None = None
"""``--field-lag``: the ratings the ``field_lagged`` headline reads (None: not measured)."""


def section_figures(rows: Sequence[tuple[fq.Unit, dict[str, Estimate]]], names: Sequence[str]) -> dict[str, object]:
    """MAE, MAE ÷ predict-the-mean (the same units), bias per band, coverage and mean width, per estimator."""
    out: dict[str, object] = {}
    base_rows = [(u.elo, e["mean"]) for u, e in rows if e.get("mean") is not None and u.elo is not None]
    base = float(np.mean([abs(est[0] - elo) for elo, est in base_rows])) if base_rows else float("nan")
    for name in names:
        got = [(u.elo, e[name]) for u, e in rows if e.get(name) is not None and u.elo is not None]
        if not got:
            out[name] = {"n": 0}
            continue
        elo = np.array([g[0] for g in got], dtype=float)
        err = np.array([g[1][0] for g in got]) - elo
        f: dict[str, object] = {"n": len(got), "of": len(rows), "mae": float(np.abs(err).mean()), "bias": float(err.mean())}
        mean_rows = [abs(e["mean"][0] - u.elo) for u, e in rows if e.get(name) is not None and e.get("mean") and u.elo]
        f["mae_over_mean"] = float(f["mae"]) / float(np.mean(mean_rows)) if mean_rows else None  # type: ignore[arg-type]
        f["bands"] = {b[2]: {"n": int(m.sum()), "bias": float(err[m].mean()) if m.any() else None,
                             "mae": float(np.abs(err[m]).mean()) if m.any() else None}
                      for b in BANDS for m in [(elo >= b[0]) & (elo < b[1])]}
        iv = [(g[0], g[1][1]) for g in got if g[1][1] is not None]
        if iv:
            f["coverage"] = float(np.mean([lo <= e <= hi for e, (lo, hi) in iv]))
            f["width"] = float(np.mean([hi - lo for _, (lo, hi) in iv]))
            f["with_interval"] = len(iv)
            for b in BANDS:
                inside = [(e, c) for e, c in iv if b[0] <= e < b[1]]
                band = f["bands"][b[2]]  # type: ignore[index]
                band["coverage"] = float(np.mean([lo <= e <= hi for e, (lo, hi) in inside])) if inside else None
                band["width"] = float(np.mean([hi - lo for _, (lo, hi) in inside])) if inside else None
        if name in ("headline", "quality", "quality_field", "field_lagged"):  # every event's own MAE and bias (the per-event goal)
            per_ev: dict[str, list[float]] = defaultdict(list)
            for u, e in rows:
                if e.get(name) is not None and u.elo is not None:
                    per_ev[u.event].append(e[name][0] - u.elo)
            f["events"] = {ev: {"n": len(v), "mae": float(np.mean(np.abs(v))), "bias": float(np.mean(v))}
                           for ev, v in sorted(per_ev.items())}
        if name == "quality":  # what the ratio to predict-the-mean depends on: each big event's rating spread
            by_ev: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
            size: dict[str, int] = defaultdict(int)
            for u, _ in rows:
                size[u.event] += 1
            for u, e in rows:
                if e.get(name) is not None and e.get("mean") is not None and u.elo is not None:
                    by_ev[u.event if size[u.event] >= BIG_EVENT else "the rest"].append(
                        (abs(e[name][0] - u.elo), abs(e["mean"][0] - u.elo), u.elo))
            f["by_event"] = {ev: {"n": len(v), "mae": float(np.mean([a for a, _, _ in v])),
                                  "mae_over_mean": float(np.mean([a for a, _, _ in v]) / np.mean([b for _, b, _ in v])),
                                  "rating_sd": float(np.std([r for _, _, r in v]))} for ev, v in sorted(by_ev.items())}
        out[name] = f
    out["_mean_mae"] = base
    return out


def evaluate(sides: Sequence[fq.Side], shipped_est: dict[str, fq.Estimator], held_back: bool) -> dict[str, object]:
    """Every event left out in turn (``held_back`` False) or the fixed held-back events (True)."""
    fields = fq.field_of(sides)
    rows: dict[str, list[tuple[fq.Unit, dict[str, Estimate]]]] = {title: [] for title, _, _ in SECTIONS}
    by_event: dict[str, list[fq.Side]] = defaultdict(list)
    for s in sides:
        by_event[s.event].append(s)
    if held_back:
        plan = [([s for s in sides if s.part == "fit"], [s for s in sides if s.part == "test"])]
    else:
        plan = [([s for s in sides if s.event != ev], by_event[ev]) for ev in sorted(by_event)]
    for train, test in plan:
        est = {**shipped_est, **new_estimators(train, fields)}
        for title, per, mg in SECTIONS:
            units = (fq.units(test, per, mg) if per != "first" else
                     [fq.Unit(u.event, u.player, u.elo, u.sides[:mg]) for u in fq.units(test, "event", MIN_EVENT_GAMES)])
            for u in units:
                if u.elo is None:
                    continue  # estimated, but never counted against a rating it does not have
                rows[title].append((u, {k: f(u) for k, f in est.items()}))
    names = [*shipped_est, "headline", "quality", "quality_field", "results", "moves+results", "mean",
             *(["field_lagged"] if FIELD_LAG is not None else [])]
    if ROWS is not None:  # --rows: each rated player-event's estimates, for a look at which ones miss
        ROWS.extend({"part": "held back" if held_back else "left out", "section": title, "event": u.event,
                     "player": u.player, "elo": u.elo, "games": u.games,
                     **{k: e[k] for k in ("headline", "quality", "quality_field", "results") if k in e}}
                    for title, _, _ in SECTIONS if title.startswith("per player-event") for u, e in rows[title])
    return {title: section_figures(rows[title], names) for title, _, _ in SECTIONS}


ROWS: list[dict[str, object]] | None = None
"""Where ``--rows`` gathers each rated player-event's estimates (None: not asked)."""


DESCRIBE = {
    "performance": "shipped E(c) performance map (fitted on the fit events: in-sample there)",
    "perceived": "Ferreira's perceived Elo (Algorithm 4)",
    "c_elo": "c-bar through the screening map",
    "acpl": "3100*exp(-0.01*ACPL)",
    "headline": "HEADLINE: in this field where there is one, else the moves alone",
    "quality": "the moves alone: 20 move-quality features, Elo->features GLS inverted",
    "quality_field": "in this field: moves and results with the others' ratings as prior",
    "results": "FIDE results performance (mean opp + dp(p))",
    "moves+results": "quality and results combined (labelled)",
    "mean": "predict the training players' mean rating",
    "field_lagged": "the headline, the likely K = 40 players' ratings moved by their event's field lag (--field-lag)",
}


def fmt_row(name: str, f: dict[str, object]) -> str:
    if not f.get("n"):
        return f"  {name:<14} (no estimate)"
    bands = f["bands"]  # type: ignore[index]
    b = " ".join(f"{v['bias']:+6.0f}" if v["bias"] is not None else "     -" for v in bands.values())  # type: ignore[union-attr]
    cov = (f"{100 * f['coverage']:5.1f}% {f['width']:5.0f}" if "coverage" in f else "     -      -")  # type: ignore[operator]
    ratio = f"{f['mae_over_mean']:5.2f}" if f.get("mae_over_mean") is not None else "    -"
    line = f"  {name:<14} {f['n']:>5} {f['mae']:5.0f} {ratio} {b}  {cov}  {DESCRIBE.get(name, '')}"
    if "coverage" in f:
        per = " ".join(f"{100 * v['coverage']:3.0f}%/{v['width']:4.0f}" if v.get("coverage") is not None else "   -/   -"
                       for v in bands.values())  # type: ignore[union-attr]
        line += f"\n  {'':<14} {'':>5} coverage/width by band: {per}"
    for ev, v in (f.get("by_event") or {}).items():  # type: ignore[union-attr]
        line += (f"\n  {'':<14} {v['n']:>5} {v['mae']:5.0f} {v['mae_over_mean']:5.2f}  {ev} (ratings sd "
                 f"{v['rating_sd']:.0f})")
    return line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("export", nargs="?", type=Path, default=DEFAULT)
    p.add_argument("--json", action="store_true")
    p.add_argument("--calibrations", type=Path, default=None, help="calibrations JSON (default: the shipped one)")
    p.add_argument("--no-open", action="store_true", help="leave the 2025 open out")
    p.add_argument("--no-ec", action="store_true", help="leave out the E(c) estimators (performance, perceived, "
                   "c_elo, acpl: most of the run's time; bench/ec_scale.py measures the E(c) maps)")
    p.add_argument("--rows", type=Path, default=None,
                   help="also write each rated player-event's estimates and intervals here (JSON lines)")
    p.add_argument("--field-lag", action="store_true",
                   help="also measure the headline with the likely K = 40 players' ratings (its prior's, its opponents') "
                        "moved by their event's field lag (field_lagged)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    global ROWS, FIELD_LAG
    FIELD_LAG = field_lag_mover() if args.field_lag else None
    ROWS = [] if args.rows is not None else None
    profile = profile_of(args.export)
    try:
        pc, fit = shipped(profile, args.calibrations)
    except KeyError:
        print(f"no calibration of {profile!r} in {args.calibrations or 'the shipped calibrations'}: fit it first "
              "(bench/fit_calibration.py)")
        return 2
    cal, perf = pc.c_map, pc.performance_map
    withheld = cal is None and isinstance(fit.get("c_map_withheld"), dict)
    if withheld:  # the profile ships no screening map: measure the one kept on record (fit.c_map_withheld)
        cal = Calibration.from_dict(fit["c_map_withheld"]["c_map"])  # type: ignore[index]
    assert cal is not None and perf is not None and pc.engine_strength is not None
    sides = fq.all_sides(args.export, with_open=not args.no_open and profile == PROFILE)
    events = sorted({s.event for s in sides})
    test_events = sorted({s.event for s in sides if s.part == "test"})
    sh = {} if args.no_ec else shipped_estimators(cal, perf, pc.engine_strength)
    report: dict[str, object] = {
        "profile": profile, "pool": perf.pool, "calibration": fit,
        "data": {"games": len({s.game for s in sides}), "events": events, "held_back": test_events,
                 "player_games": sum(1 for s in sides if s.elo is not None)},
        "leave_one_event_out": evaluate(sides, sh, held_back=False),
        "held_back": evaluate(sides, sh, held_back=True),
    }
    per_event = [fq.Unit(u.event, u.player, u.elo, u.sides) for u in fq.units([s for s in sides if s.part == "test"],
                                                                              "event", MIN_EVENT_GAMES)]
    samples = [Sample(u.player, u.event, float(u.elo), [d for s in u.sides for _, d in s.decisions]) for u in per_event
               if u.elo is not None]
    line = SHIPPED if profile == SHIPPED.profile and not withheld else None  # what the screener reads for it
    if line is not None:  # the strength model's evidence: every finished game of the event in the files
        import screening_honest as sh

        games = sh.event_games()
        for smp in samples:
            own = [g for g in games.get(smp.event, ()) if smp.key in (g.white, g.black)]
            smp.results = [(g.black_today, g.points) if g.white == smp.key else (g.white_today, 1.0 - g.points)
                           for g in own]
            smp.played = min((g.played for g in own if g.played is not None), default=None)  # the line's era
        units = [sh.PlayerEvent(smp.event, smp.key, "test", smp.elo, smp.elo, smp.results) for smp in samples]
        for smp, lag in zip(samples, sh.field_lags(units, games)):
            smp.lag = (float(lag[0]), float(lag[1]))
    report["screening"] = screening_check(samples, cal, line=line)
    report["screening_line"] = "shipped" if line is not None else "calibration map / z_scale"
    report["c_map_withheld"] = withheld
    report["load"], report["seconds"] = os.getloadavg()[0], time.perf_counter() - t0
    if args.rows is not None and ROWS is not None:
        args.rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    d = report["data"]
    print(f"profile {profile}; calibration: {perf.pool}; {d['games']} games, {len(events)} events, "  # type: ignore[index]
          f"{d['player_games']} rated player-games; held back: {', '.join(test_events)}")  # type: ignore[index]
    head = ("  estimator          n   MAE  /mean " + " ".join(f"{b[2]:>6}" for b in BANDS)
            + "  cover95 width")
    for part in ("leave_one_event_out", "held_back"):
        for title, f in report[part].items():  # type: ignore[union-attr]
            print(f"{part.replace('_', ' ')}, {title} (bias by band <1800 1800-2200 2200-2500 >=2500)")
            print(head)
            for name, fig in f.items():
                if not name.startswith("_"):
                    print(fmt_row(name, fig))
    sc = report["screening"]
    if withheld:
        print("screening below: the WITHHELD screening map of fit.c_map_withheld (not shipped)")
    if sc.get("n"):  # type: ignore[union-attr]
        print(f"screening ({report['screening_line']}), held-back honest player-events (>= 60 positions): "
              f"n={sc['n']} z mean {sc['mean']:+.2f} "  # type: ignore[index]
              f"sd {sc['sd']:.2f}; notices {sc['notices']} ({100 * sc['notice_rate']:.1f}% vs {100 * sc['nominal']:.1f}% nominal)")  # type: ignore[index]
    print(f"({report['seconds']:.1f} s, load {report['load']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
