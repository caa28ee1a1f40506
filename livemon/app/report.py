"""The figures of ``livemon report``: an event's leaderboard, games, win% charts and moments.

Built from a batch analysis (:mod:`livemon.app.batch`, the monitor's own core) of the files: the same
accuracy, classes, results and display rules as the live messages and ``analyse --json``
(:mod:`livemon.live.audience`); the moments are the core's (a moment's best move is the pinned profile's
first line; none when the games were valued from their ``[%eval]``s).
"""

from __future__ import annotations

from typing import Any

from livemon.app.batch import BatchResult, PlannedGame
from livemon.config import Config
from livemon.io.store import Store
from livemon.live.audience import estimate_displays
from livemon.rating.accuracy import win_percent
from livemon.rating.scale import SCALE_NOTE


def _title(games: list[dict[str, Any]]) -> str:
    """The Event tag most games share (a broadcast may name each game an event of its own), else a count.

    >>> _title([{"event": "Open"}, {"event": "Open"}, {"event": "Round 1: A - B"}]), _title([{"event": "?"}])
    ('Open', 'livemon report · 1 game')
    """
    counts: dict[str, int] = {}
    for g in games:
        if g["event"] not in ("?", ""):
            counts[g["event"]] = counts.get(g["event"], 0) + 1
    best = max(counts.items(), key=lambda kv: kv[1], default=None)
    if best is not None and best[1] * 2 > len(games):
        return best[0]
    return f"livemon report · {len(games)} game{'s' if len(games) != 1 else ''}"


def event_report(planned: list[PlannedGame], result: BatchResult, store: Store, cfg: Config,
                 title: str | None = None) -> dict[str, Any]:
    """Everything the page shows, as plain data (the page is :func:`livemon.faces.report.render_html`)."""
    est = result.estimator
    calibrated = None
    games: list[dict[str, Any]] = []
    by_id = {g.game_id: g for g in planned}
    for state in sorted(est.games.values(), key=lambda g: g.seq):
        gid = state.info.game_id
        plan = by_id.get(gid)
        if plan is None:
            continue
        evals = est.evals(gid)
        evals += [None] * (len(plan.moves) + 1 - len(evals))
        figures = est.figures(gid)
        # the core's own moments (decided in ply order on complete values, the engine's first choice never a
        # blunder): the same as the live messages and analyse --json
        moments = [{"ply": m.ply, "move_san": m.move_san, "kinds": list(m.kinds), "move_class": m.move_class,
                    "win_before": m.win_before, "win_after": m.win_after, "best_move_san": m.best_move_san,
                    "mover_win_before": m.mover_win_before, "mover_win_after": m.mover_win_after,
                    "judgement": m.judgement} for m in result.moments.get(gid, ())]
        info = state.info
        games.append({
            "game_id": gid, "label": plan.label, "white": info.white, "black": info.black,
            "white_elo": info.white_published, "black_elo": info.black_published, "event": info.event, "round": info.round,
            "result": state.result, "plies": len(plan.moves), "accuracy": figures.to_accuracy(),
            "classes": figures.to_classes(), "win_percents": [None if cp is None else win_percent(cp) for cp in evals],
            "moments": moments,
        })
    players = []
    for player in est.players.values():
        blocks = est.estimates(player)  # the headline, the moves alone, in this field, results, combined
        model = None if player.quality is None else player.quality.model
        if model is not None:
            calibrated = (model.elo_min, model.elo_max)
        display = estimate_displays(blocks, model, cfg.display.max_interval_width)
        players.append({
            "name": player.name, "elo": player.elo, "performance": est.performance(player).to_dict(), **blocks,
            "display": display,
            **est.audience(player.name),
        })
    # ranked by the event's own points where it has them ([event] points: each player's results.points), else score
    players.sort(key=lambda p: (-p["results"].get("points", p["results"]["score"]), -p["results"]["score"],
                                -(p["results"]["tpr"] or 0), p["name"]))
    from livemon.app.forecast import chances_by_round, record_of_info
    from livemon.live.messages import GameResult

    records = [record_of_info(p.info, next((m.result for m in p.messages if isinstance(m, GameResult)), None),
                              len(p.moves)) for p in planned]
    return {"title": title or _title(games), "profile": result.profile, "calibrated": calibrated, "ratings": SCALE_NOTE,
            "max_interval_width": cfg.display.max_interval_width, "players": players, "games": games,
            "points": cfg.event.scoring.label,
            "forecast": chances_by_round(records, cfg.event)}
