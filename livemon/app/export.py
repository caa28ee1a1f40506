"""Estimates rebuilt from the store, in the ``analyse --json`` shape (``livemon export``).

The rebuild is the monitor's :class:`~livemon.app.runner.Runner` with in-memory
ports: it hands the stored games to the core (as a restart does), whose position
cache is the store's analyses of exactly the event's pinned profile:
an analysis of any other profile (a quick preview, an older limit) never enters
an export. So export after a live replay equals ``analyse`` on the same PGN.
"""

from __future__ import annotations

import json
from typing import Any

import chess

from livemon.app.batch import moments_of, players_report, with_moments
from livemon.config import Config
from livemon.io.store import Store
from livemon.live.core import LiveCore, PositionCache
from livemon.live.runner import Resume, Runner, Tick
from livemon.live.estimator import Estimator
from livemon.live.values import PositionAnalysis
from livemon.rating.calibration import ProfileCalibration


def rebuild_core(store: Store, cfg: Config, profile: str, calibration: ProfileCalibration | None = None,
                 tick: bool = False) -> LiveCore:
    """A core holding every stored game, scored from the cache of ``profile`` only (no engine needed), read
    through ``calibration`` (the profile's own, or none); ``tick``: then the timer's figures. A position the
    cache does not hold yet (the monitor's engine is behind) stays awaited, as it is live: its plies are not
    scored (``unscored_plies``), and no moment past it is decided."""
    a = cfg.analysis
    core = LiveCore.for_config(cfg, profile=profile, coalesce=True)  # estimates read at the end
    core.configure(profile, calibration, given_strength=a.engine_strength,
                   calibrated_strength=store.calibrations.engine_strength(profile), cache=store_cache(store, profile))
    runner = Runner(core, log=_quiet)  # no engine: what the cache lacks stays awaited; nothing persisted
    runner.put(Resume(store.games.load()))
    if tick:
        runner.put(Tick())  # the timer's figures (Algorithm 3 and 2), as the monitor's players channel has them
    runner.run_until_idle()
    return core


def _quiet(level: int, text: str) -> None:
    """The rebuild's log: what the monitor logged when it met the games was said then."""


def store_cache(store: Store, profile: str) -> PositionCache:
    """The store's analyses of exactly ``profile``, as the core's position cache."""

    def lookup(board: chess.Board, key: str) -> tuple[PositionAnalysis, str] | None:
        found = store.analyses.get(key, profile)
        return None if found is None else (found, profile)

    return lookup


def rebuild(store: Store, cfg: Config, profile: str, calibration: ProfileCalibration | None = None) -> Estimator:
    """The estimator of :func:`rebuild_core`."""
    return rebuild_core(store, cfg, profile, calibration).estimator


def export_report(store: Store, cfg: Config) -> dict[str, Any]:
    status = store.status.get() or {}
    engine = status.get("engine", {})
    profile = engine.get("base_profile") or next(store.analyses.profiles(), "")
    calibration = store.calibrations.get(profile)
    core = rebuild_core(store, cfg, profile, calibration, tick=True)
    est = core.estimator
    strength, source = core.strength, core.strength_source
    out: dict[str, Any] = {
        "engine": {"profile": profile, "strength": strength, "strength_source": source,
                   "analyses": int(engine.get("searches", 0))},
    }
    out.update(est.report(cfg.analysis.all_pairs))
    out["players"] = players_report(core)
    with_moments(out, est, moments_of(core))
    _, ttt_report = store.ttt.get()
    out["ttt"] = json.loads(ttt_report) if ttt_report else None
    return out
