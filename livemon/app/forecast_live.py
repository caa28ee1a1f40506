"""The live tournament forecast: the monitor's events simulated to their end as their games go on.

Every ``[event] live_seconds`` (2 s by default; 0 turns it off) the monitor's state is looked at; when a move or
a result came in since the last forecast, a snapshot of every game's tags, result, and for a game in progress
its newest evaluation, ply and material, is taken on the event loop (a dictionary per game, no board), and the
events are simulated in a thread (numpy releases the interpreter lock for its array work), so the loop keeps
serving moves. Each event's forecast goes out on the hub's ``forecast`` channel as one
:class:`~livemon.live.messages.EventForecast`, keyed by the event's name. The chance of first at the first
forecast of a round is kept, so the faces can show the change since the round began.

Games are grouped into events by their Event tag, or all into one with ``[event] name``. The format, rounds
and tiebreaks are the config's ``[event]``, or guessed (and said in the message's notes); a
Swiss whose number of rounds is not configured gets a forecast with ``error`` set and no players.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Protocol

from livemon.app.forecast import ForecastError, GameRecord, load_params, record_of_info, state_of
from livemon.config import EventConfig
from livemon.faces.hub import Hub
from livemon.live.analysis import LiveGame
from livemon.live.messages import EventForecast, GameInfo
from livemon.rating.forecast import ForecastParams, material
from livemon.rating.standings import StateError, simulate

log = logging.getLogger(__name__)

LIVE_SIMULATIONS = 20_000
"""Simulations per live forecast of a small event (a 14-player round robin: about 0.05 s of one core)."""
PLAYER_SIMULATIONS = 2_000_000
"""A larger event gets fewer: at most this many player-simulations (250 players: 8,000; 2,000 players: 1,000),
so a forecast stays within about a second of one core."""


def simulations_for(players: int, most: int = LIVE_SIMULATIONS) -> int:
    """Simulations of a live forecast of ``players``.

    >>> simulations_for(14), simulations_for(250), simulations_for(5000)
    (20000, 8000, 1000)
    """
    return max(1000, min(most, PLAYER_SIMULATIONS // max(players, 1)))


class _Core(Protocol):
    @property
    def infos(self) -> Mapping[str, GameInfo]: ...

    @property
    def results(self) -> Mapping[str, str]: ...

    @property
    def games(self) -> Mapping[str, LiveGame]: ...


def snapshot(core: _Core, name: str = "") -> dict[str, list[GameRecord]]:
    """Every game's record, by event: taken on the event loop (plain values, nothing the loop changes later).

    A game in progress is read at its newest value: the engine's, else (the engine behind) the source's ``[%eval]``
    of the newest position, as the eval bar shows it.

    With ``name`` every game is of that one event; so is every game when each has an Event tag of its own (a
    lichess broadcast names each game "Round 1: A - B"), under the name "all games".
    """
    out: dict[str, list[GameRecord]] = defaultdict(list)
    for gid, info in core.infos.items():
        game = core.games.get(gid)
        rec = record_of_info(info, core.results.get(gid), 0 if game is None else game.plies)
        score = rec.score
        if score is None and game is not None and game.plies:
            evals = game.evals
            last = next((j for j in range(len(evals) - 1, -1, -1) if evals[j] is not None), None)
            source = game.moves[-1].eval_cp if game.moves else None
            if evals[-1] is None and source is not None:  # the engine is behind: the source's [%eval], as on the eval bar
                rec.eval_cp, rec.ply, rec.material = source, game.plies, material(game.fen)
            elif last is not None:
                rec.eval_cp, rec.ply = evals[last], last
                rec.material = material(game.fen) if last == game.plies else rec.material
        out[name or info.event].append(rec)
    if len(out) > 1 and all(len(v) == 1 for v in out.values()):
        return {"all games": [r for v in out.values() for r in v]}
    return out


def forecast_events(events: dict[str, list[GameRecord]], cfg: EventConfig, params: ForecastParams,
                    simulations: int, seed: int | None = None) -> list[tuple[EventForecast, int]]:
    """One forecast per event (and the event's current round), at most ``simulations`` each (fewer for a large
    field: :func:`simulations_for`); run in a thread."""
    out = []
    for name, records in sorted(events.items()):
        rounds_seen = [int(r.round.split(".")[0]) for r in records if r.round.split(".")[0].isdigit()]
        current = max(rounds_seen, default=0)
        try:
            read = state_of(records, cfg, None, cfg.rounds or None, params, name)
            f = simulate(read.state, simulations_for(len(read.state.players), simulations), seed=seed, params=params)
        except (ForecastError, StateError) as exc:
            out.append((EventForecast(name, cfg.format or "?", cfg.rounds or None, 0, current, 0, 0, (),
                                      error=str(exc)), current))
            continue
        players = sorted(f.players, key=lambda p: (-p.p_winner, -p.p_first, -p.score, p.name))
        rows = tuple({
            "name": p.name, "score": p.score, "p_first": round(p.p_first, 4), "p_first_round_start": None,
            "p_winner": round(p.p_winner, 4), "p_top3": None if math.isnan(p.p_top3) else round(p.p_top3, 4),
            "expected_score": None if math.isnan(p.expected_score) else round(p.expected_score, 3),
            "max_score": None if math.isnan(p.max_score) else p.max_score, "needs": p.needs,
        } for p in players)
        out.append((EventForecast(name, read.state.format, read.state.rounds, f.rounds_left, current, f.simulations,
                                  len(read.state.ongoing), rows, tuple(read.notes + f.notes)), current))
    return out


class LiveForecast:
    """The monitor's forecast job: ``await LiveForecast(cfg.event, hub).run(core)`` until cancelled."""

    def __init__(self, cfg: EventConfig, hub: Hub, simulations: int = LIVE_SIMULATIONS) -> None:
        self.cfg = cfg
        self.hub = hub
        self.simulations = min(simulations, cfg.simulations)
        self.params = load_params()
        self._seen: tuple[int, int] | None = None
        self._round_start: dict[tuple[str, int], dict[str, float]] = {}
        self.forecasts = 0
        self.last_seconds = 0.0

    @staticmethod
    def signature(core: _Core) -> tuple[int, int]:
        """Results and plies so far: a forecast is due when either moved."""
        return len(core.results), sum(g.plies for g in core.games.values())

    async def once(self, core: _Core) -> list[EventForecast]:
        """Forecast every event of ``core`` now (the simulation in a thread) and publish the forecasts."""
        self._seen = self.signature(core)
        events = snapshot(core, self.cfg.name)
        if not events:
            return []
        t0 = time.perf_counter()
        made = await asyncio.to_thread(forecast_events, events, self.cfg, self.params, self.simulations)
        self.last_seconds = time.perf_counter() - t0
        out = []
        for msg, current in made:
            msg = self._with_round_start(msg, current)
            self.hub.publish(msg)
            out.append(msg)
        self.forecasts += 1
        return out

    def _with_round_start(self, msg: EventForecast, current: int) -> EventForecast:
        if not msg.players:
            return msg
        start = self._round_start.setdefault((msg.event, current), {p["name"]: p["p_first"] for p in msg.players})
        rows = tuple({**p, "p_first_round_start": start.get(p["name"])} for p in msg.players)
        return EventForecast(msg.event, msg.format, msg.rounds, msg.rounds_left, msg.round, msg.simulations,
                             msg.games_in_progress, rows, msg.notes, msg.error)

    async def run(self, core: _Core) -> None:
        """Forecast whenever the games moved, at most once per ``live_seconds``."""
        every = self.cfg.live_seconds
        if every <= 0:
            return
        while True:
            await asyncio.sleep(every)
            if self.signature(core) == self._seen:
                continue
            try:
                await self.once(core)
            except Exception:  # a forecast must never take the monitor down: said, and tried again later
                log.exception("forecast failed")

    def status(self) -> dict[str, Any]:
        return {"forecasts": self.forecasts, "last_seconds": round(self.last_seconds, 3)}
