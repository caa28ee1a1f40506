"""``livemon fit FILE...``: TrueSkill Through Time (TTT or TTT-D) over game results.

Reads PGN headers or CSV (``time,white,black,result``) through
:mod:`livemon.live.results`, fits :mod:`livemon.rating.ttt`, and prints a table of
players by their latest skill on the Elo scale of the ``[ttt]`` table
(``elo_at_mu0 + (mu − mu0)·elo_per_unit``: 1500 + 200 per β by default; ``--skill``
prints the model's own units, β), or with ``--json`` one object::

    {"model": "ttt", "params": {...}, "log_evidence": -23.1, "iterations": 12,
     "converged": true, "elo_scale": {"mu0": 0.0, "elo_at_mu0": 1500.0, "elo_per_unit": 200.0},
     "players": {"Carlsen": [{"t": "2011-12-03", "mu": 1.2, "sigma": 0.9}, ...]}}

(curves stay in β units; ``elo_scale`` converts them).  With ``--search`` the
chosen β and τ are said on stderr and the object has ``"search": {"beta", "tau",
"evaluations"}``.

Defaults come from the ``[ttt]`` table of the config (:class:`livemon.config.TTTConfig`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import Any

from typing import TYPE_CHECKING

from livemon.config import ConfigError, TTTConfig, load_config
from livemon.live.results import ResultsReport, ScoredGame, read_results

if TYPE_CHECKING:  # numba and scipy load in run(): ``fit --help`` starts at once
    from livemon.rating import ttt

TIME_UNITS = ("day", "week", "month", "year", "round")
"""The time steps of :data:`livemon.rating.ttt.TIME_UNITS` (repeated here to keep numba out of ``--help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="PGN or CSV (time,white,black,result) files")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--ttt-d", action="store_true", help="TTT-D: a draw margin per player and time step")
    p.add_argument("--time-unit", choices=TIME_UNITS, help="time step for dates (numbers are steps as given)")
    p.add_argument("--mu0", type=float, help="prior mean of a new player's skill")
    p.add_argument("--sigma0", type=float, help="prior sd of a new player's skill")
    p.add_argument("--beta", type=float, help="performance sd (the scale)")
    p.add_argument("--tau", type=float, help="skill drift sd per time unit (the package's gamma)")
    p.add_argument("--p-draw", type=float, help="draw probability between equal players")
    p.add_argument("--tolerance", type=float, help="stop when no posterior mean or sd moves more than this")
    p.add_argument("--search", action="store_true", help="choose beta and tau by maximising the log-evidence")
    p.add_argument("--skill", action="store_true", help="print skills in the model's units (beta) instead of Elo")
    p.add_argument("--rating-priors", action="store_true", help="prior from WhiteElo/BlackElo tags where present")
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")


def _settings(args: argparse.Namespace) -> TTTConfig:
    """The ``[ttt]`` table with the command line's overrides, checked by the same rules."""
    cfg = load_config(args.config).ttt
    overrides = {"mu0": args.mu0, "sigma0": args.sigma0, "beta": args.beta, "tau": args.tau,
                 "p_draw": args.p_draw, "tolerance": args.tolerance}
    changed = {key: value for key, value in overrides.items() if value is not None}
    if args.ttt_d:
        changed["model"] = "ttt-d"
    try:
        cfg.params = dataclasses.replace(cfg.params, **changed)
    except ValueError as exc:
        raise ConfigError(f"command line: {exc}") from None
    if args.time_unit is not None:
        cfg.time_unit = args.time_unit
    if args.rating_priors:
        cfg.rating_priors = True
    cfg.validate()
    return cfg


def params_from_config(cfg: TTTConfig) -> ttt.TTTParams:
    """The model parameters of a ``[ttt]`` config table."""
    return cfg.params


def rating_priors(results: list[ScoredGame], cfg: TTTConfig) -> dict[str, tuple[float, float]]:
    """Prior (mu, sigma) per player from their first rating tag, in skill units."""
    priors: dict[str, tuple[float, float]] = {}
    for r in sorted(results, key=lambda r: (str(type(r.time)), r.time)):
        for name, elo in ((r.white, r.white_elo), (r.black, r.black_elo)):
            if elo is not None and elo > 0 and name not in priors:
                priors[name] = cfg.elo_prior(elo)
    return priors


def _same_kind_of_time(results: list[ScoredGame], report: ResultsReport) -> list[ScoredGame]:
    """Keep the results whose time is of the first result's kind (number or date)."""
    if not results:
        return results
    kind = isinstance(results[0].time, str)
    kept = []
    for r in results:
        if isinstance(r.time, str) == kind:
            kept.append(r)
        else:
            what = "a date" if kind else "a number"
            report.errors.append(f"{r.source} line {r.line}: time {r.time!r} is not {what} like the first game's")
    return kept


def _json_time(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def run(args: argparse.Namespace) -> int:
    from livemon.rating import ttt

    def say(line: str) -> None:
        print(f"livemon: {line}", file=sys.stderr, flush=True)

    try:
        cfg = _settings(args)
        params = params_from_config(cfg)
    except (ConfigError, ValueError) as exc:
        say(f"config: {exc}")
        return 2
    report = ResultsReport()
    for path in args.files:
        report.extend(read_results(path))
    results = _same_kind_of_time(report.results, report)
    for line in report.errors:
        say(line)
    say(f"{len(results)} games read from {len(args.files)} file(s); "
        f"{report.unfinished} unfinished skipped; {len(report.errors)} bad skipped")
    if not results:
        say("no finished game to fit")
        return 1
    games = ttt.make_games([r.white for r in results], [r.black for r in results],
                           [r.time for r in results], [r.score for r in results], unit=cfg.time_unit)
    priors = rating_priors(results, cfg) if cfg.rating_priors else {}
    started = time.monotonic()
    last = [0.0]

    def on_sweep(sweeps: int, step: float) -> None:
        now = time.monotonic()
        if sweeps == 1 or now - last[0] >= 1.0:
            last[0] = now
            say(f"fit sweep {sweeps}: largest change {step:.2e} (tolerance {params.tolerance:g})")

    def on_trial(trial: ttt.TTTParams, log_evidence: float) -> None:
        say(f"search beta={trial.beta:.4f} tau={trial.tau:.5f}: log-evidence {log_evidence:.4f}")

    evaluations = [0]

    def on_trial_counted(trial: ttt.TTTParams, log_evidence: float) -> None:
        evaluations[0] += 1
        on_trial(trial, log_evidence)

    if args.search:
        result = ttt.search_parameters(games, params, priors=priors, progress=on_trial_counted)
    else:
        result = ttt.fit(games, params, priors=priors, progress=on_sweep)
    say(f"{'converged' if result.converged else 'NOT converged'} after {result.sweeps} sweeps "
        f"in {time.monotonic() - started:.2f} s; log-evidence {result.log_evidence:.4f}")
    out = fit_report(result, cfg.time_unit, cfg)
    if args.search:
        chosen = result.params
        say(f"search chose beta={chosen.beta:.4f} ({chosen.beta * cfg.elo_per_unit:.0f} Elo) "
            f"tau={chosen.tau:.5f} per {cfg.time_unit} ({chosen.tau * cfg.elo_per_unit:.1f} Elo) "
            f"after {evaluations[0]} evaluations, log-evidence {result.log_evidence:.4f}")
        out["search"] = {"beta": chosen.beta, "tau": chosen.tau, "evaluations": evaluations[0]}
    out["games"] = len(results)
    out["unfinished"] = report.unfinished
    out["skipped"] = len(report.errors)
    if args.json:
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_table(out, elo=not args.skill))
    return 0


def fit_report(result: ttt.TTTFit, time_unit: str, cfg: TTTConfig | None = None) -> dict[str, Any]:
    """The JSON object of a fit (documented in the module docstring)."""
    cfg = cfg or TTTConfig()
    p = result.params
    params: dict[str, Any] = {"mu0": p.mu0, "sigma0": p.sigma0, "beta": p.beta, "tau": p.tau,
                              "p_draw": p.p_draw, "draw_margin": p.margin, "time_unit": time_unit}
    if p.model == "ttt-d":
        params.update(nu0=p.margin_prior_mean, zeta0=p.zeta0, zeta=p.zeta)
    players = {str(name): [dict(pt, t=_json_time(pt["t"])) for pt in points]
               for name, points in result.curves().items()}
    return {"model": p.model, "params": params, "log_evidence": result.log_evidence,
            "iterations": result.sweeps, "converged": result.converged,
            "elo_scale": {"mu0": p.mu0, "elo_at_mu0": cfg.elo_at_mu0, "elo_per_unit": cfg.elo_per_unit},
            "players": players}


def render_table(out: dict[str, Any], elo: bool = True) -> str:
    """Players by latest skill, with ± one sd (and the draw margin for TTT-D); Elo or β units.

    >>> out = {"model": "ttt", "log_evidence": -1.0, "iterations": 3, "converged": True,
    ...        "elo_scale": {"mu0": 0.0, "elo_at_mu0": 1500.0, "elo_per_unit": 200.0},
    ...        "players": {"A": [{"t": 1, "mu": 1.0, "sigma": 0.5}], "B": [{"t": 1, "mu": -1.0, "sigma": 0.5}]}}
    >>> print(render_table(out), end="")
    model ttt  log-evidence -1.000  sweeps 3  (Elo = 1500 + 200 per skill unit)
       #  player      Elo ± sd  steps  last
       1  A        1700 ± 100       1  1
       2  B        1300 ± 100       1  1
    """
    rows = sorted(out["players"].items(), key=lambda kv: -kv[1][-1]["mu"])
    is_d = out["model"] == "ttt-d"
    scale = out.get("elo_scale") or {"mu0": 0.0, "elo_at_mu0": 1500.0, "elo_per_unit": 200.0}
    width = max([len(name) for name, _ in rows] + [6])
    if elo:
        head = f"{'#':>4}  {'player':<{width}}  {'Elo ± sd':>12}"
        note = f"  (Elo = {scale['elo_at_mu0']:g} + {scale['elo_per_unit']:g} per skill unit)"
    else:
        head = f"{'#':>4}  {'player':<{width}}  {'skill':>16}"
        note = "  (skill in units of the model, beta)"
    head += f"  {'draw margin':>16}" if is_d else ""
    head += f"  {'steps':>5}  last"
    lines = [f"model {out['model']}  log-evidence {out['log_evidence']:.3f}  "
             f"sweeps {out['iterations']}{'' if out['converged'] else ' (not converged)'}{note}", head]
    for rank, (name, points) in enumerate(rows, start=1):
        last = points[-1]
        if elo:
            e = scale["elo_at_mu0"] + (last["mu"] - scale["mu0"]) * scale["elo_per_unit"]
            line = f"{rank:>4}  {name:<{width}}  {e:>5.0f} ± {last['sigma'] * scale['elo_per_unit']:<4.0f}"
        else:
            line = f"{rank:>4}  {name:<{width}}  {last['mu']:>7.3f} ± {last['sigma']:<6.3f}"
        if is_d:
            line += f"  {last['nu']:>7.3f} ± {last['zeta']:<6.3f}"
        line += f"  {len(points):>5}  {last['t']}"
        lines.append(line)
    return "\n".join(lines) + "\n"


__all__ = ["add_arguments", "run", "params_from_config", "rating_priors", "fit_report", "render_table"]
