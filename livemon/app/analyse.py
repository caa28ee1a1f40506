"""``livemon analyse`` and ``livemon report``: finished games read, replayed through the batch path
(:mod:`livemon.app.batch`: the monitor's own core) and made into the JSON object or the event page's
figures the commands print or write.

The profile's calibration (``livemon calibrate``) and FIDE's K (``[results] k_factor``) are handed to
the estimator before the figures are read; notes and warnings go to ``report``, one line each.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from livemon.config import Config
from livemon.errors import LivemonError


class NothingToAnalyse(LivemonError):
    """No game could be read or analysed; the message is the command's one line."""


def analyse(pgn: list[str], cfg: Config, report: Callable[[str], None], *, screen: bool = False,
            engine_strength: float | None = None, all_pairs: bool = False, display: bool = False) -> dict[str, Any]:
    """The ``analyse --json`` object of the games of ``pgn`` (with ``screen``: its ``screening`` table; with
    ``display``: each player's display blocks for the table, :func:`add_display` — the JSON is left as
    ``export --json`` writes it, so live = batch compares them whole).

    Raises :class:`NothingToAnalyse` when no file holds a game; an object with no game (none could be
    analysed) is returned as it is, for the command to print and exit 1 on.
    """
    from livemon.app.batch import analyse_games, batch_report, read_files
    from livemon.io.store import Store
    from livemon.live.runner import Runner, Tick
    from livemon.live.screener import screening_report
    from livemon.rating.performance import pool_warning

    planned = read_files(pgn, report)
    if not planned:
        raise NothingToAnalyse("no game to analyse")
    with Store(cfg.store.path) as store:
        result = asyncio.run(analyse_games(planned, cfg, store, report, screen=screen))
        core = result.core
        assert core is not None  # noqa: S101 - analyse_games returns its core
        # the settings every figure is read with (the profile's calibration, the engine strength), then the
        # timer's figures (Algorithm 3 and 2): the players' values are then what the players channel carries
        runner = Runner(core)  # in-memory ports: the figures are read from the core
        runner.apply(core.configure(result.profile, store.calibrations.get(result.profile),
                                    given_strength=engine_strength,
                                    calibrated_strength=store.calibrations.engine_strength(result.profile),
                                    screener=core.screener))
        runner.put(Tick())
        runner.run_until_idle()
        strength, source = core.strength, core.strength_source
        warning = pool_warning(result.estimator.perf_map or result.estimator.c_map, cfg.analysis.rating_pool)
        if warning:
            report(f"warning: {warning}")
    for note in result.notes:
        report(note)
    out = batch_report(result, strength, source, all_pairs or cfg.analysis.all_pairs)
    if display:
        add_display(out, result.estimator, cfg.display.max_interval_width)
    if result.screener is not None:
        out["screening"] = screening_report(result.screener)
    return out


def add_display(out: dict[str, Any], estimator: Any, max_width: float) -> None:
    """Each player's ``display`` (the headline's) and each estimate block's: whether a screen shows the estimate, by
    the one rule of every screen (:func:`livemon.live.audience.estimate_displays`, the model's fitted range and
    ``[display] max_interval_width``), as the live ``players`` messages and ``report`` carry."""
    from livemon.live.audience import estimate_displays

    for p in out["players"]:
        state = estimator.players.get(p["name"])
        model = None if state is None or state.quality is None else state.quality.model
        p["display"] = estimate_displays(p, model, max_width)


def event_page(pgn: list[str], cfg: Config, report: Callable[[str], None], title: str | None = None) -> dict[str, Any]:
    """The figures of ``livemon report``'s page (:func:`livemon.app.report.event_report`) of the games of ``pgn``.

    Raises :class:`NothingToAnalyse` when no file holds a game or none could be analysed.
    """
    from livemon.app.batch import analyse_games, read_files
    from livemon.app.report import event_report
    from livemon.io.store import Store

    planned = read_files(pgn, report)
    if not planned:
        raise NothingToAnalyse("no game to report")
    with Store(cfg.store.path) as store:
        result = asyncio.run(analyse_games(planned, cfg, store, report))
        result.estimator.use_calibration(result.profile, store.calibrations.get(result.profile))
        result.estimator.k_factor = cfg.results.k_factor
        data = event_report(planned, result, store, cfg, title)
    for note in result.notes:
        report(note)
    if not data["games"]:
        raise NothingToAnalyse("no game could be analysed")
    return data
