"""TrueSkill Through Time over game results (``livemon fit``): read the results, fit or search, report.

Results come from PGN headers or CSV (``time,white,black,result``) through :mod:`livemon.live.results`;
the model is :mod:`livemon.rating.ttt` with the ``[ttt]`` table's parameters
(:class:`livemon.config.TTTConfig`). :func:`fit_files` returns the JSON object the command prints
(its fields are documented in :mod:`livemon.commands.fit`); progress and faults go to ``report``, one
line each.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from livemon.config import TTTConfig
from livemon.errors import LivemonError
from livemon.live.results import ResultsReport, ScoredGame, read_results
from livemon.rating.scale import SCALE_NOTE

if TYPE_CHECKING:  # numba and scipy load in fit_files(): ``fit --help`` starts at once
    from livemon.rating import ttt


class FitFailed(LivemonError):
    """Nothing to fit; the message says why (one line for the user)."""


def fit_files(files: list[str], cfg: TTTConfig, report: Callable[[str], None], *, search: bool = False) -> dict[str, Any]:
    """Fit (or with ``search``, choose β and τ by the log-evidence and fit) the finished games of ``files``.

    Raises :class:`FitFailed` when no finished game was read.
    """
    from livemon.rating import ttt

    params = cfg.params
    results_report = ResultsReport()
    for path in files:
        results_report.extend(read_results(path))
    results = _same_kind_of_time(results_report.results, results_report)
    for line in results_report.errors + (results_report.notes if cfg.rating_priors else []):
        report(line)
    report(f"{len(results)} games read from {len(files)} file(s); "
           f"{results_report.unfinished} unfinished skipped; {len(results_report.errors)} bad skipped")
    if not results:
        raise FitFailed("no finished game to fit")
    games = ttt.make_games([r.white for r in results], [r.black for r in results],
                           [r.time for r in results], [r.score for r in results], unit=cfg.time_unit)
    priors = rating_priors(results, cfg) if cfg.rating_priors else {}
    started = time.monotonic()
    last = [0.0]
    evaluations = [0]

    def on_sweep(sweeps: int, step: float) -> None:
        now = time.monotonic()
        if sweeps == 1 or now - last[0] >= 1.0:
            last[0] = now
            report(f"fit sweep {sweeps}: largest change {step:.2e} (tolerance {params.tolerance:g})")

    def on_trial(trial: ttt.TTTParams, log_evidence: float) -> None:
        evaluations[0] += 1
        report(f"search beta={trial.beta:.4f} tau={trial.tau:.5f}: log-evidence {log_evidence:.4f}")

    if search:
        result = ttt.search_parameters(games, params, priors=priors, progress=on_trial)
    else:
        result = ttt.fit(games, params, priors=priors, progress=on_sweep)
    report(f"{'converged' if result.converged else 'NOT converged'} after {result.sweeps} sweeps "
           f"in {time.monotonic() - started:.2f} s; log-evidence {result.log_evidence:.4f}")
    out = fit_report(result, cfg.time_unit, cfg)
    if search:
        chosen = result.params
        report(f"search chose beta={chosen.beta:.4f} ({chosen.beta * cfg.elo_per_unit:.0f} Elo) "
               f"tau={chosen.tau:.5f} per {cfg.time_unit} ({chosen.tau * cfg.elo_per_unit:.1f} Elo) "
               f"after {evaluations[0]} evaluations, log-evidence {result.log_evidence:.4f}")
        out["search"] = {"beta": chosen.beta, "tau": chosen.tau, "evaluations": evaluations[0]}
    out["games"] = len(results)
    out["unfinished"] = results_report.unfinished
    out["skipped"] = len(results_report.errors)
    return out


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
            "elo_scale": {"mu0": p.mu0, "elo_at_mu0": cfg.elo_at_mu0, "elo_per_unit": cfg.elo_per_unit,
                          "ratings": SCALE_NOTE},
            "players": players}
