"""Estimates rebuilt from the store, in the ``analyse --json`` shape (``livemon export``).

The rebuild runs the stored moves and cached analyses through the same
:class:`LiveGame` and :class:`Estimator` as the monitor and the batch command,
so that export after a live replay equals ``analyse`` on the same PGN.
"""

from __future__ import annotations

import json
from typing import Any

from livemon.live.analysis import LiveGame
from livemon.config import Config
from livemon.io.engine import position_key
from livemon.live.estimator import Estimator
from livemon.io.store import Store


def rebuild(store: Store, cfg: Config, profile: str) -> Estimator:
    """An Estimator holding every stored game, scored from the cache (no engine needed)."""
    est = Estimator(cfg.analysis.skip_moves, cfg.analysis.c_min, cfg.analysis.c_max)
    for info, result, moves in store.load_games():
        est.add_game(info)
        game = LiveGame(info.game_id)
        for ev in moves:
            for j in game.add_move(ev):
                game.set_analysis(j, store.get_any_analysis(position_key(game.boards[j]), profile))
        for sp in game.ready():
            est.add_ply(sp)
        if result != "*":
            est.set_result(info.game_id, result)
    return est


def export_report(store: Store, cfg: Config) -> dict[str, Any]:
    status = store.get_status() or {}
    engine = status.get("engine", {})
    profile = engine.get("base_profile") or next(store.iter_profiles(), "")
    est = rebuild(store, cfg, profile)
    calibration = store.get_calibration(profile)
    est.use_calibration(profile, calibration)
    strength = cfg.analysis.engine_strength
    source = "given"
    if strength is None:
        strength, source = store.get_engine_strength(profile), "calibration"
    if strength is None:
        strength, source = est.engine_strength(), "algorithm 3"
    if strength is None:
        source = "none"
    out: dict[str, Any] = {
        "engine": {"profile": profile, "strength": strength, "strength_source": source,
                   "analyses": int(engine.get("searches", 0))},
    }
    out.update(est.report(strength, cfg.analysis.all_pairs))
    _, ttt_report = store.get_ttt()
    out["ttt"] = json.loads(ttt_report) if ttt_report else None
    return out
