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

Defaults come from the ``[ttt]`` table of the config (:class:`livemon.config.TTTConfig`). The arguments
are read and the result printed here; the reading and the fit are :mod:`livemon.app.fit`'s.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from livemon.commands import say, write_result
from livemon.config import ConfigError, TTTConfig, load_config

TIME_UNITS = ("day", "week", "month", "year", "round")
"""The time steps of :data:`livemon.rating.ttt.TIME_UNITS` (repeated here to keep numba out of ``--help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="PGN or CSV (time,white,black,result) files")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--ttt-d", action="store_true", help="TTT-D: each player also gets a draw margin (how drawish they are), per time step")
    p.add_argument("--time-unit", choices=TIME_UNITS, help="time step for dates (numbers are steps as given)")
    p.add_argument("--mu0", type=float, help="prior mean of a new player's skill (the model's units, see --skill)")
    p.add_argument("--sigma0", type=float, help="prior standard deviation of a new player's skill: how unsure the start is")
    p.add_argument("--beta", type=float, help="beta: how much one game's form varies around the skill (sets the scale)")
    p.add_argument("--tau", type=float, help="tau: how far a skill may drift per time step (the trueskillthroughtime package's gamma)")
    p.add_argument("--p-draw", type=float, help="draw probability between equal players")
    p.add_argument("--tolerance", type=float, help="stop when no player's rating or its uncertainty moves more than this")
    p.add_argument("--search", action="store_true", help="choose beta and tau that explain the results best (the highest log-evidence)")
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


def run(args: argparse.Namespace) -> int:
    from livemon.app.fit import FitFailed, fit_files

    try:
        cfg = _settings(args)
    except (ConfigError, ValueError) as exc:
        say(f"config: {exc}")
        return 2
    try:
        out = fit_files(args.files, cfg, say, search=args.search)
    except FitFailed as exc:
        say(str(exc))
        return 1
    write_result(out, args.json, lambda: render_table(out, elo=not args.skill), indent=None)
    return 0


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


__all__ = ["add_arguments", "run", "render_table"]
