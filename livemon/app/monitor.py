"""The wiring: feeds → store → engine pool → estimator → hub, and the background TTT.

This is the one place that starts tasks. A move read from a feed is stored
before anything else happens to it; its positions go to the engine pool (the
cache first, newest positions first); plies are scored in order per game as
their evaluations arrive and fed to the shared :class:`Estimator`; each update
is published to the :class:`Hub`, which the faces read. Finished games trigger
a warm TrueSkill Through Time refresh in a worker process, so the event loop
never waits on it.

On start the monitor rebuilds its state from the store (games, moves, cached
analyses): a restart loses nothing and repeats no search. Feeds that re-send
what is already stored are deduplicated here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import chess

from livemon.live.analysis import LiveGame
from livemon.config import Config, FeedConfig
from livemon.io.engine import PositionAnalysis
from livemon.live.estimator import Estimator, PlayerState
from livemon.io.feeds import Feed, open_feeds
from livemon.faces.hub import Hub
from livemon.live.messages import (
    Alert,
    BoardState,
    FeedError,
    GameInfo,
    GameResult,
    GameRollback,
    Message,
    MonitorStatus,
    MoveEvent,
    PlayerEstimate,
)
from livemon.io.pool import EnginePool
from livemon.live.pgn import FINAL_RESULTS
from livemon.rating.calibration import ProfileCalibration
from livemon.rating.gain import finite_or_none
from livemon.rating.performance import pool_warning
from livemon.live.screener import Screener, TrackKey, alert_details, open_book
from livemon.io.store import Store
from livemon.io.tttjob import TTTJob

log = logging.getLogger(__name__)


def bundled_replay(speed: float = 2.0) -> FeedConfig:
    """The default feed: the bundled London Chess Classic 2011, replayed as if live."""
    path = resources.files("livemon") / "data" / "london_2011.pgn"
    return FeedConfig(name="london-2011-replay", type="replay", path=str(path), speed=speed)


@dataclass
class MonitorCounters:
    moves: int = 0
    duplicates: int = 0
    rollbacks: int = 0
    feed_errors: int = 0
    failed_positions: int = 0
    ttt_refreshes: int = 0
    started: float = field(default_factory=time.time)


class Monitor:
    """The live monitor: ``await Monitor(cfg).run()``; see the module docstring."""

    def __init__(self, cfg: Config, hub: Hub | None = None, store: Store | None = None):
        self.cfg = cfg
        self.hub = hub or Hub()
        self.store = store or Store(cfg.store.path)
        self.estimator = Estimator(cfg.analysis.skip_moves, cfg.analysis.c_min, cfg.analysis.c_max)
        self.games: dict[str, LiveGame] = {}
        self.infos: dict[str, GameInfo] = {}
        self.results: dict[str, str] = {}
        if cfg.bus.mode == "mqtt":  # the engines are workers behind a broker (docs/distributed.md)
            from livemon.io.bus import RemoteEnginePool

            self.pool: EnginePool | RemoteEnginePool = RemoteEnginePool(cfg.bus, self.store, engine=cfg.engine)
        else:
            self.pool = EnginePool(cfg.engine, self.store)
        self.feeds: list[Feed] = []
        self.counters = MonitorCounters()
        self.engine_strength: float | None = cfg.analysis.engine_strength
        self._tasks: set[asyncio.Task[Any]] = set()
        self._arrivals = 0
        self._ttt_wanted = asyncio.Event()
        self._ttt = TTTJob(cfg.ttt)
        self._stopping = asyncio.Event()
        self._event_perceived: dict[str, float] = {}
        self._strength_source = "given" if self.engine_strength is not None else "none"
        self.screener = Screener(cfg.screening, None)  # replaced in run(), once the engine profile is known

    # -- life cycle ------------------------------------------------------------------

    async def run(self, until_feeds_end: bool = False) -> None:
        """Run until :meth:`stop` (or, with ``until_feeds_end``, until every feed ends and all is scored)."""
        starting = asyncio.create_task(self.pool.start())  # a remote pool waits for a worker: stop() may come first
        stopping = asyncio.create_task(self._stopping.wait())
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            await self.pool.close()
            return
        starting.result()  # EngineError if no engine can start
        try:
            if self.engine_strength is None:
                self.engine_strength = self.store.get_engine_strength(self.pool.base_profile.name)
                self._strength_source = "calibration" if self.engine_strength is not None else "none"
            calibration = self.store.get_calibration(self.pool.base_profile.name)
            self.estimator.use_calibration(self.pool.base_profile.name, calibration)
            warning = pool_warning(self.estimator.perf_map or self.estimator.c_map, self.cfg.analysis.rating_pool)
            if warning:
                log.warning("%s", warning)
            self._start_screening(calibration)
            self._resume()
            self.feeds = open_feeds(self.cfg.feeds or [bundled_replay(self.cfg.monitor.replay_speed)])
            known = {gid: game.plies for gid, game in self.games.items()}
            for feed in self.feeds:  # a replay resumes where it was (no 100 s of nothing after a restart)
                getattr(feed, "resume", lambda known: None)(known)
            feed_tasks = [self._spawn(self._run_feed(f), f"feed {f.name}") for f in self.feeds]
            background = [
                self._spawn(self._status_loop(), "status"),
                self._spawn(self._algorithm2_loop(), "algorithm 2"),
                self._spawn(self._ttt_loop(), "ttt"),
            ]
            if until_feeds_end:
                await asyncio.gather(*feed_tasks, return_exceptions=True)
                await self.drain()
                await self._refresh_ttt()
            else:
                await self._stopping.wait()
            for task in feed_tasks + background:
                task.cancel()
            await asyncio.gather(*feed_tasks, *background, return_exceptions=True)
            self._publish_status()
            self.store.put_status(self.status())
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self.pool.close()
            self._ttt.close()

    def stop(self) -> None:
        self._stopping.set()

    async def drain(self) -> None:
        """Wait until every requested analysis has come back and been scored."""
        while any(not t.done() for t in self._tasks if t.get_name().startswith("analyse")):
            await asyncio.sleep(0.01)

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed: %r", task.get_name(), task.exception(), exc_info=task.exception())

    # -- restart -----------------------------------------------------------------------

    def _start_screening(self, calibration: ProfileCalibration | None) -> None:
        """Screening with the profile's calibration; alerts raised before a restart are shown, not raised again."""
        cfg = self.cfg.screening
        self.screener = Screener(cfg, calibration, open_book(cfg.book), self.pool.base_profile.name)
        for level, alert in self.store.load_alerts():
            self.screener.mark_raised(alert.player, alert.event, level)
            self.hub.publish(alert)
        if self.screener.mismatch:
            log.warning("screening: %s; recalibrate (livemon calibrate) or expect z's off", self.screener.mismatch)
        if self.screener.enabled:
            log.info("screening on (%s z >= %g notice, >= %g alert, >= %d positions)",
                     cfg.statistic, cfg.notice_z, cfg.alert_z, cfg.min_positions)
        else:
            log.warning("screening off: %s (run livemon calibrate); everything else carries on", self.screener.off_reason)

    def _resume(self) -> None:
        """Rebuild games and estimates from the store; re-request what was never analysed."""
        stored = self.store.load_games()
        for info, result, moves in stored:
            self._add_game(info, persist=False)
            for ev in moves:
                self._add_move(ev, persist=False)
            if result != "*":
                self._set_result(info.game_id, result, persist=False)
        if stored:
            log.info("resumed %d games, %d moves from %s", len(stored), sum(len(m) for _, _, m in stored), self.store.path)
        self._ttt.restore(self.store.get_ttt()[0])  # the first TTT refresh continues from the stored fit

    # -- input -------------------------------------------------------------------------

    async def _run_feed(self, feed: Feed) -> None:
        async for msg in feed:
            try:
                self.handle(msg)
            except Exception:  # a bad message must not stop the feed
                log.exception("feed %s: could not handle %s", feed.name, msg)
            await asyncio.sleep(0)  # let analyses and faces run between bursts

    def handle(self, msg: Message) -> None:
        """Apply one feed message (stored first, then analysed)."""
        if isinstance(msg, GameInfo):
            self._add_game(msg)
        elif isinstance(msg, MoveEvent):
            self._add_move(msg)
        elif isinstance(msg, GameRollback):
            self._rollback(msg.game_id, msg.from_ply)
        elif isinstance(msg, GameResult):
            self._set_result(msg.game_id, msg.result)
        elif isinstance(msg, FeedError):
            self.counters.feed_errors += 1
            log.warning("feed %s: %s", msg.feed, msg.message)

    def _add_game(self, info: GameInfo, persist: bool = True) -> None:
        if persist:
            self.store.put_game(info)
        self.infos[info.game_id] = info
        self.estimator.add_game(info)
        for key in self.screener.add_game(info):
            self._screen(key)
        self.games.setdefault(info.game_id, LiveGame(info.game_id))

    def _add_move(self, ev: MoveEvent, persist: bool = True) -> None:
        game = self.games.get(ev.game_id)
        if game is None:
            self._add_game(GameInfo(ev.game_id), persist)
            game = self.games[ev.game_id]
        if ev.ply <= game.plies:
            if game.moves[ev.ply - 1].uci == ev.uci:
                self.counters.duplicates += 1  # a re-sent ply (feed restart, re-sent game)
                return
            self._rollback(ev.game_id, ev.ply)
        if ev.ply != game.plies + 1:
            log.warning("game %s: ply %d arrived after ply %d; ignored", ev.game_id, ev.ply, game.plies)
            return
        board = game.boards[-1] if game.boards else chess.Board(ev.fen_before)
        if not board.is_legal(chess.Move.from_uci(ev.uci)):
            log.warning("game %s: illegal move %s at ply %d; ignored", ev.game_id, ev.uci, ev.ply)
            return
        if persist:
            self.store.put_move(ev)  # stored before it is analysed
        self.counters.moves += 1
        for j in game.add_move(ev):
            self._arrivals += 1
            self._spawn(self._analyse(game, j, game.boards[j], self._arrivals), f"analyse {ev.game_id}:{j}")
        self._score(game)
        self._publish_board(game)

    def _rollback(self, game_id: str, from_ply: int) -> None:
        game = self.games.get(game_id)
        if game is None:
            return
        self.counters.rollbacks += 1
        self.store.delete_moves(game_id, from_ply)
        self.estimator.rollback(game_id, from_ply)
        for key in self.screener.rollback(game_id, from_ply):
            self._screen(key)
        game.truncate(from_ply)
        self.results.pop(game_id, None)
        self._publish_board(game)

    def _set_result(self, game_id: str, result: str, persist: bool = True) -> None:
        if game_id not in self.games:
            return
        if persist:
            self.store.put_result(game_id, result)
        self.results[game_id] = result
        self.estimator.set_result(game_id, result)
        self._publish_board(self.games[game_id])
        self._ttt_wanted.set()

    # -- analysis and scoring ----------------------------------------------------------

    async def _analyse(self, game: LiveGame, j: int, board: chess.Board, arrival: int) -> None:
        try:
            analysis: PositionAnalysis | None = (await self.pool.submit(board, priority=-arrival)).analysis
        except Exception as exc:
            self.counters.failed_positions += 1
            log.error("game %s: position %d not analysed: %s", game.game_id, j, exc)
            analysis = None
        if game.plies >= j and game.boards[j] is board:  # not rolled back meanwhile (a new ply: a new board)
            game.set_analysis(j, analysis)
            self._score(game)
            self._publish_board(game)

    def _score(self, game: LiveGame) -> None:
        for sp in game.ready():
            player = self.estimator.add_ply(sp)
            self.hub.publish(self.player_estimate(player))
            try:
                key = self.screener.add_ply(sp)
                if key is not None:
                    self._screen(key)
            except Exception:  # screening must never stop the estimates
                log.exception("game %s: screening of ply %d failed", sp.game_id, sp.ply)

    def _screen(self, key: TrackKey) -> None:
        """Publish a player-event's screening numbers and raise the levels it reaches for the first time."""
        numbers = self.screener.numbers(key)
        self.hub.publish(numbers)
        for raised in self.screener.new_alerts(key, numbers):
            n = raised.numbers
            alert = Alert(player=n.player, event=n.event, positions=n.positions, z=n.z or 0.0, roi=n.roi or 0.0,
                          threshold=raised.threshold, details=alert_details(raised))
            if self.store.put_alert(alert, raised.level, time.time()):
                # no name or number here: the log is not an arbiters' channel
                log.info("screening: a %s was raised (for arbiters: the alerts channel)", raised.level)
                self.hub.publish(alert)

    # -- output ------------------------------------------------------------------------

    def player_estimate(self, player: PlayerState) -> PlayerEstimate:
        live, strength = player.live, self.engine_strength
        interval = live.rating_diff_interval() if live.n else None
        c = player.posterior.summary() if player.posterior is not None and player.posterior.n else None
        ttt = self._ttt.latest.get(player.name)
        c_elo = c and self.estimator.c_map and self.estimator.c_map.elo_scale(c.mean, *c.cr95)
        return PlayerEstimate(
            name=player.name,
            elo=player.elo,
            moves=live.n,
            mean_gain=live.mean,
            expected_score_vs_engine=live.expected_score,
            rating_diff_vs_engine=finite_or_none(live.rating_diff),
            perceived_elo=finite_or_none(live.perceived(strength)),
            performance=self.estimator.performance(player).to_dict(),
            perceived_elo_range=None
            if interval is None or strength is None
            else (finite_or_none(strength + interval[0]), finite_or_none(strength + interval[1])),
            event_perceived_elo=self._event_perceived.get(player.name),
            c_mean=c.mean if c else None,
            c_sd=c.sd if c else None,
            c_cr95=tuple(c.cr95) if c else None,
            c_elo=c_elo["elo"] if c_elo else None,
            c_elo_cr95=tuple(c_elo["cr95"]) if c_elo else None,
            ttt_mu=ttt.elo if ttt else None,
            ttt_sigma=ttt.elo_sigma if ttt else None,
            gain_histogram={str(k): v for k, v in player.histogram.to_dict().items()},
        )

    def _publish_board(self, game: LiveGame) -> None:
        info = self.infos.get(game.game_id) or GameInfo(game.game_id)
        last = game.moves[-1] if game.moves else None
        evals = tuple(game.evals)
        clocks: list[float | None] = [None, None]
        for ev in game.moves[-2:]:
            clocks[(ev.ply - 1) % 2] = ev.clock
        self.hub.publish(
            BoardState(
                game_id=game.game_id,
                white=info.white,
                black=info.black,
                white_elo=info.white_elo,
                black_elo=info.black_elo,
                fen=game.fens[-1] if game.fens else chess.STARTING_FEN,
                ply=game.plies,
                last_move_san=last.san if last else None,
                last_move_uci=last.uci if last else None,
                eval_cp=evals[-1] if evals else None,
                evals=evals,
                white_clock=clocks[0],
                black_clock=clocks[1],
                result=self.results.get(game.game_id, "*"),
                event=info.event,
                round=info.round,
            )
        )

    def status(self) -> dict[str, Any]:
        pool = self.pool.status()
        newest = max((f.status.last_message or 0 for f in self.feeds), default=0)
        return {
            "feeds": [f.status.to_dict() for f in self.feeds],
            "engine": pool,
            "moves": self.counters.moves,
            "duplicates": self.counters.duplicates,
            "rollbacks": self.counters.rollbacks,
            "feed_errors": self.counters.feed_errors,
            "failed_positions": self.counters.failed_positions,
            "games": len(self.games),
            "unscored_plies": sum(g.plies - len(g.scored) for g in self.games.values()),
            "lag_seconds": max(time.time() - newest, 0.0) if newest and pool.get("backlog") else 0.0,
            "ttt_refreshes": self.counters.ttt_refreshes,
            "engine_strength": self.engine_strength,
            "screening": "on" if self.screener.enabled else f"off: {self.screener.off_reason}",
            "updated": time.time(),
        }

    def _publish_status(self) -> None:
        s = self.status()
        self.hub.publish(
            MonitorStatus(
                feeds=tuple(s["feeds"]),
                backlog=int(s["engine"].get("backlog", 0)),
                searches=int(s["engine"].get("searches", 0)),
                cache_hits=int(s["engine"].get("cache_hits", 0)),
                engine_profile=str(s["engine"].get("profile", "")),
                engines=int(s["engine"].get("engines", 0)),
                lag_seconds=s["lag_seconds"],
                moves=s["moves"],
                games=s["games"],
                ttt_refreshes=s["ttt_refreshes"],
            )
        )

    async def _status_loop(self) -> None:
        while True:
            self._publish_status()
            self.store.put_status(self.status())
            self.store.maintain()  # retries writes held while the disk refused them; starts a due backup
            await asyncio.sleep(self.cfg.monitor.status_seconds)

    async def _algorithm2_loop(self) -> None:
        """Algorithm 2 for the event on a timer (it is a least-squares solve over all pairs)."""
        while True:
            await asyncio.sleep(self.cfg.monitor.algorithm2_seconds)
            if self._strength_source in ("algorithm 3", "none"):
                self.engine_strength = self.estimator.engine_strength()
                self._strength_source = "algorithm 3" if self.engine_strength is not None else "none"
            perceived = self.estimator.perceived_ratings(self.cfg.analysis.all_pairs) or {}
            if perceived != self._event_perceived or self._strength_source == "algorithm 3":
                self._event_perceived = perceived
                for name in perceived or self.estimator.players:
                    self.hub.publish(self.player_estimate(self.estimator.players[name]))

    # -- background TTT ----------------------------------------------------------------

    async def _ttt_loop(self) -> None:
        while True:
            await self._ttt_wanted.wait()
            await asyncio.sleep(self.cfg.monitor.ttt_debounce_seconds)
            await self._refresh_ttt()

    async def _refresh_ttt(self) -> None:
        self._ttt_wanted.clear()
        finished = [
            (self.infos[g], r) for g, r in self.results.items() if r in FINAL_RESULTS and g in self.infos
        ]
        if not finished:
            return
        ratings = await self._ttt.refresh(finished)
        self.counters.ttt_refreshes += 1
        for i, rating in enumerate(ratings, 1):
            self.hub.publish(rating)
            if rating.name in self.estimator.players:
                self.hub.publish(self.player_estimate(self.estimator.players[rating.name]))
            if i % 100 == 0:
                await asyncio.sleep(0)  # thousands of players: let moves and faces through meanwhile
        latest = self._ttt.latest
        for key in self.screener.set_fallback_ratings({n: r.elo for n, r in latest.items()}, {n: r.games for n, r in latest.items()}):
            self._screen(key)
        # pickling a large fit takes a while: in a thread (the GIL is released between bytecodes), stored here
        state, report = await asyncio.to_thread(lambda: (self._ttt.state_bytes(), self._ttt.report_json()))
        self.store.put_ttt(state, report)
