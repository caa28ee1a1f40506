"""Estimates rebuilt from the store, in the ``analyse --json`` shape (``livemon export``).

The rebuild hands the stored games to the monitor's own
:class:`~livemon.live.core.LiveCore` (as a restart does) and answers its
analysis requests from the cache, under exactly the event's pinned profile:
an analysis of any other profile (a quick preview, an older limit) never enters
an export. So export after a live replay equals ``analyse`` on the same PGN.
"""

from __future__ import annotations

import json
from typing import Any

from livemon.app.batch import moments_of, players_report, with_moments
from livemon.config import Config
from livemon.io.store import Store
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse
from livemon.live.estimator import Estimator
from livemon.live.values import position_key
from livemon.rating.calibration import ProfileCalibration


def rebuild_core(store: Store, cfg: Config, profile: str, calibration: ProfileCalibration | None = None) -> LiveCore:
    """A core holding every stored game, scored from the cache of ``profile`` only (no engine needed), read
    through ``calibration`` (the profile's own, or none). A position the cache does not hold yet (the monitor's
    engine is behind) stays awaited, as it is live: its plies are not scored (``unscored_plies``), and no
    moment past it is decided."""
    a = cfg.analysis
    core = LiveCore.for_analysis(a.skip_moves, a.c_min, a.c_max, profile=profile, coalesce=True,  # estimates read at the end
                                 k_factor=cfg.results.k_factor, max_interval_width=cfg.display.max_interval_width)
    core.estimator.event_name = cfg.event.name  # "in this field": the player's event, or every game with a name
    core.configure(profile, calibration, given_strength=a.engine_strength,
                   calibrated_strength=store.get_engine_strength(profile))
    requests = [e for e in core.resume(store.load_games()) if isinstance(e, Analyse)]
    cached = store.get_analyses((position_key(r.board) for r in requests), profile)
    for r in requests:
        found = cached.get(position_key(r.board))
        if found is not None:
            core.analysed(r, found, profile)
    return core


def rebuild(store: Store, cfg: Config, profile: str, calibration: ProfileCalibration | None = None) -> Estimator:
    """The estimator of :func:`rebuild_core`."""
    return rebuild_core(store, cfg, profile, calibration).estimator


def export_report(store: Store, cfg: Config) -> dict[str, Any]:
    status = store.get_status() or {}
    engine = status.get("engine", {})
    profile = engine.get("base_profile") or next(store.iter_profiles(), "")
    calibration = store.get_calibration(profile)
    core = rebuild_core(store, cfg, profile, calibration)
    est = core.estimator
    core.tick()  # the timer's figures (Algorithm 3 and 2), as the monitor's players channel has them
    strength, source = core.strength, core.strength_source
    out: dict[str, Any] = {
        "engine": {"profile": profile, "strength": strength, "strength_source": source,
                   "analyses": int(engine.get("searches", 0))},
    }
    out.update(est.report(cfg.analysis.all_pairs))
    out["players"] = players_report(core)
    with_moments(out, est, moments_of(core))
    _, ttt_report = store.get_ttt()
    out["ttt"] = json.loads(ttt_report) if ttt_report else None
    return out
