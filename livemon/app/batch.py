"""Batch analysis of finished games: the engine of ``livemon analyse`` and ``calibrate``.

A batch run is a replay: each game read from a file becomes the messages a feed
would send — made by the feeds' own :class:`~livemon.live.tracker.GameTracker`,
the one conversion of a PGN game into messages — and goes through the monitor's
own :class:`~livemon.live.core.LiveCore`. The core's one rule decides whether a
game is valued by the engine (every position, whatever comments it carries: the ratings need
its MultiPV) or, when no engine can be started, from its ``[%eval]`` comments, so ``analyse``
gives what the monitor gives for the same games: it is the monitor's
:class:`~livemon.app.runner.Runner` with in-memory ports. The core asks the
:class:`EnginePool`'s cache first (one search per position, ever; one pinned
profile) and sends it what the cache lacks; the pool is started only when some
position needs it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import chess

from livemon.app.runner import AsyncEngine, run_until_idle
from livemon.live.runner import Answered, Ratings, Runner, Unanswered
from livemon.config import Config
from livemon.io.book import open_book
from livemon.io.engine import EngineError
from livemon.live.tracker import GameTracker
from livemon.faces.web import codec
from livemon.io.pool import EnginePool
from livemon.io.store import Store
from livemon.io.tttjob import TTTJob
from livemon.live.rules import needs_search
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse
from livemon.live.estimator import Estimator
from livemon.live.finished import FinishedGames
from livemon.live.messages import (FeedError, FeedNotice, GameInfo, GameResult, GameWithdrawn, Message, Moment,
                                   MoveEvent, TTTRating)
from livemon.live.pgn import split_games
from livemon.live.screener import Screener
from livemon.live.values import COMMENTS_PROFILE, board_from_fen
from livemon.progress import Progress
from livemon.rating.scale import SCALE_NOTE
from livemon.rating.calibration import ProfileCalibration

log = logging.getLogger(__name__)


@dataclass
class PlannedGame:
    """A game read from a file: the messages a feed of the file sends for it, and its positions."""

    game_id: str
    info: GameInfo
    label: str
    messages: list[Message]  # its GameInfo, MoveEvents and GameResult, as the file feed's tracker gives them
    boards: list[chess.Board]  # position before ply 1 .. after the last ply
    moves: list[chess.Move]
    use_comments: bool = True  # False: its [%eval]s are not handed on (calibration needs MultiPV)
    index: int = 1  # its place among the games read from its file (1 = the first)

    @property
    def engine_positions(self) -> list[int]:
        """Indices of the positions that need the engine when its comments are not used."""
        return [i for i, b in enumerate(self.boards) if needs_search(b)]


@dataclass
class BatchResult:
    estimator: Estimator
    profile: str
    searches: int
    notes: list[str] = field(default_factory=list)
    screener: Screener | None = None  # with ``screen``: the core's own screening of the replay
    moments: dict[str, tuple[Moment, ...]] = field(default_factory=dict)
    """Each game's moments as the core published them (decided in ply order on complete values)."""
    core: LiveCore | None = None
    """The core that replayed the games: the players' values are read from it (:func:`players_report`)."""


def plan_game(info: GameInfo, messages: list[Message], label: str, use_comments: bool = True,
              index: int = 1) -> PlannedGame:
    """A game's positions, from its moves as the tracker sent them."""
    boards: list[chess.Board] = []
    moves: list[chess.Move] = []
    last_ply = None
    for m in messages:
        if isinstance(m, MoveEvent):
            if last_ply is not None and m.ply == last_ply + 1:  # the next ply: the last board and move (a push
                board = boards[-1].copy(stack=False)            # costs a tenth of reading the FEN again)
                board.push(moves[-1])
            else:
                board = board_from_fen(m.fen_before)
            boards.append(board)
            moves.append(board.parse_uci(m.uci))
            last_ply = m.ply
    if boards:
        last = boards[-1].copy(stack=False)
        last.push(moves[-1])
        boards.append(last)
    return PlannedGame(info.game_id, info, label, messages, boards, moves, use_comments, index)


def read_files(paths: list[str], report: Callable[[str], None], use_comments: bool = True) -> list[PlannedGame]:
    """Every good game of the files, read as a file feed reads them (:meth:`GameTracker.update_text`: the
    same games, ids and rules as live, the DGT end-of-game king moves and duplicate listings included);
    one line to ``report`` per bad game or file, and per notice a feed would log."""
    planned: list[PlannedGame] = []
    taken: set[str] = set()
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            report(f"{path}: cannot read ({exc.strerror})")
            continue
        source = os.path.basename(path)
        games: dict[str, list[Message]] = {}
        said: list[FeedError | FeedNotice] = []
        for msg in GameTracker(source, withdraw_after=None, append_only=False).update_text(text, source):
            if isinstance(msg, (FeedError, FeedNotice)):
                said.append(msg)
            elif isinstance(msg, (GameInfo, MoveEvent, GameResult)):
                games.setdefault(msg.game_id, []).append(msg)
        for note in said:  # an error on a game read is no skip (a game listed twice: one listing is read)
            skipped = isinstance(note, FeedError) and note.game_id not in games
            report(f"skipped {note.message}" if skipped else note.message)
        unseparated = sum(not separated for _, separated in split_games(text))
        if unseparated:  # chess.com exports: one line per file, not one per game
            report(f"{source}: {unseparated} games not separated from the previous one by a blank line; read anyway")
        for n, (gid, msgs) in enumerate(games.items(), 1):
            info = next((m for m in msgs if isinstance(m, GameInfo)), None)
            if info is None:
                continue
            label = f"{source} game {n} ({info.white} - {info.black}, round {info.round})"
            if not any(isinstance(m, MoveEvent) for m in msgs):
                report(f"skipped {label}: no moves")
                continue
            if gid in taken:  # the same game in two files: two games here, as two feeds would be
                unique = f"{source}:{gid}"
                msgs = [dataclasses.replace(m, game_id=unique) for m in msgs]  # type: ignore[type-var]
                info = dataclasses.replace(info, game_id=unique)
                gid = unique
            taken.add(gid)
            planned.append(plan_game(info, msgs, label, use_comments, n))
    return planned


def game_messages(game: PlannedGame) -> list[Message]:
    """A finished game as a feed sends it: its tags, its moves (with their comments), its result; without
    its [%eval]s when ``use_comments`` is False."""
    if game.use_comments:
        return game.messages
    return [dataclasses.replace(m, eval_cp=None, start_eval_cp=None) if isinstance(m, MoveEvent) else m
            for m in game.messages]


async def analyse_games(
    planned: list[PlannedGame], cfg: Config, store: Store, report: Callable[[str], None], screen: bool = False
) -> BatchResult:
    """Replay every planned game through a :class:`Runner` (the monitor's own core and interpreter) and answer
    its analysis requests with an :class:`EnginePool` under the one configured profile, opened only if a
    position needs it (every position not over by rule does, whatever its comments). Without an engine the
    games are valued from their ``[%eval]`` comments (the ``[%eval] comments`` profile: no estimate needs them).

    ``screen``: the core screens the replay as the monitor screens a round (the profile's calibration,
    the configured book); players without a rating tag are rated by a TTT fit of the files' results,
    as the monitor does after each finished game.
    """
    messages = [(g, game_messages(g)) for g in planned]
    pool: EnginePool | None = None
    if any(g.engine_positions for g in planned):
        pool = EnginePool(cfg.engine, store.analyses, quick=False)
        try:
            await pool.start()
        except EngineError as exc:
            report(str(exc))
            pool = None
    try:
        profile = pool.base_profile.name if pool is not None else COMMENTS_PROFILE
        core = LiveCore.for_config(cfg, profile=profile, coalesce=True)  # estimates read at the end
        calibration = store.calibrations.get(profile) if screen else None
        core.configure(profile, calibration, screener=_screener(cfg, calibration, profile, report) if screen else None,
                       cache=pool.lookup if pool is not None else None)
        reporter = _Reporter(report)
        engine: AsyncEngine | Unanswered = AsyncEngine(pool) if pool is not None else Unanswered()
        runner = Runner(core, engine=engine, log=reporter.log)
        if isinstance(engine, AsyncEngine):
            engine.runner = runner
        for _, msgs in messages:
            runner.put_all(msgs)
        runner.run_until_idle()  # every message: the cache's positions scored, the others asked for
        notes: list[str] = []
        if isinstance(engine, Unanswered):
            requests = engine.requests
            unvalued: dict[str, int] = {}
            reporter.muted = True  # nothing to value them with: their plies are not scored (said once per game)
            for r in requests:
                unvalued[r.game_id] = unvalued.get(r.game_id, 0) + 1
                runner.put(Answered(r, None, error="no engine"))
            for game, _ in messages:
                n = unvalued.get(game.game_id, 0)
                if n == 1 and _only_start(requests, game.game_id):
                    notes.append(f"{game.label}: first move not scored (no [%eval] before it and no engine)")
                elif n:
                    report(f"skipped {game.label}: not every move has an [%eval] comment and no engine")
                    runner.put(GameWithdrawn(game.game_id, "no engine and not every move has an [%eval] comment"))
            runner.run_until_idle()
            reporter.muted = False
            await _rate_unrated(runner, cfg)
            return BatchResult(core.estimator, profile, 0, notes, core.screener, moments_of(core), core)
        positions = max(sum(len(g.engine_positions) for g in planned), engine.pending)
        with Progress(positions, "analysing positions") as bar:
            bar.advance(positions - engine.pending, done_already=True)  # the cache's, scored already
            engine.answered = lambda _request: bar.advance()
            await run_until_idle(runner, engine)
        await _rate_unrated(runner, cfg)
        assert pool is not None  # noqa: S101 - an AsyncEngine is only made on a pool
        return BatchResult(core.estimator, profile, pool.counters.searches, notes, core.screener, moments_of(core),
                           core)
    finally:
        if pool is not None:
            await pool.close()


class _Reporter:
    """The batch run's log port: a feed's warnings and the engine's errors go to the report (a feed's info
    notices are the monitor's log, not the report's)."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report
        self.muted = False

    def log(self, level: int, text: str) -> None:
        if level >= logging.WARNING and not self.muted:
            self.report(text)


def _screener(cfg: Config, calibration: ProfileCalibration | None, profile: str,
              report: Callable[[str], None]) -> Screener:
    screener = Screener(cfg.screening, calibration, open_book(cfg.screening.book), profile)
    if not screener.enabled:
        report(f"screening off: {screener.off_reason} (run livemon calibrate)")
    elif screener.mismatch:
        report(f"screening: {screener.mismatch}; recalibrate (livemon calibrate) or expect z's off")
    return screener


async def _rate_unrated(runner: Runner, cfg: Config) -> None:
    """Players the screener has no rating for are rated by a TTT fit of the finished games (run once)."""
    core = runner.core
    screener = core.screener
    if screener is None or not screener.enabled:
        return
    if not any(screener.numbers(k).rating_source == "none" for k in screener.keys()):
        return
    if len(core.finished):
        runner.put(Ratings(tuple((await ttt_ratings(cfg, core.finished)).values())))
        runner.run_until_idle()


async def ttt_ratings(cfg: Config, finished: FinishedGames) -> dict[str, TTTRating]:
    """TTT ratings (Elo scale, with their games) of the monitor's background fit, run once."""
    job = TTTJob(cfg.ttt)
    try:
        await job.refresh(finished)
        return dict(job.latest)
    finally:
        job.close()


def _only_start(requests: list[Analyse], game_id: str) -> bool:
    return all(r.index == 0 for r in requests if r.game_id == game_id)


def moments_of(core: LiveCore) -> dict[str, tuple[Moment, ...]]:
    """Every game's moments as the core decided them."""
    return {gid: core.moments(gid) for gid in core.games}


def moment_dict(moment: Moment) -> dict[str, Any]:
    """A moment as ``analyse --json`` and ``export --json`` list it under its game (the message's fields)."""
    d: dict[str, Any] = json.loads(codec.to_json(moment))  # as the wire has it: lists, win% to one decimal
    for key in ("ts", "v", "kind", "game_id"):
        d.pop(key, None)
    return d


def with_moments(out: dict[str, Any], estimator: Estimator, moments: dict[str, tuple[Moment, ...]]) -> None:
    """Each game of a report (``games``, in the estimator's order) gets its ``moments``."""
    states = sorted(estimator.games.values(), key=lambda g: g.seq)
    for entry, state in zip(out["games"], states):
        entry["moments"] = [moment_dict(m) for m in moments.get(state.info.game_id, ())]


def players_report(core: LiveCore) -> list[dict[str, Any]]:
    """The ``players`` of ``analyse --json`` and ``export --json``: each player's value as the ``players`` channel
    carries it (:meth:`LiveCore.player_estimates` through the web codec, with its ``player:<name>`` histogram),
    and two figures only a report lists: ``history`` (Algorithm 4's rating difference after each move, as
    ``rating_diff_vs_engine`` is rounded) and ``c_positions`` (the E(c) decisions ``c_mean`` reads)."""
    est = core.estimator
    places = codec.WIRE_DECIMALS["player"]["rating_diff_vs_engine"]
    out = []
    for value in core.player_estimates():
        entry = codec.report_entry(value)
        player = est.players[value.name]
        entry["c_positions"] = player.decisions
        entry["history"] = [None if d is None else round(d, places) for d in est.history(player)]
        out.append(entry)
    return out


def batch_report(result: BatchResult, strength: float | None, source: str, all_pairs: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"engine": {"profile": result.profile, "strength": strength, "strength_source": source,
                                      "analyses": result.searches}}
    out.update(result.estimator.report(all_pairs))
    if result.core is not None:
        out["players"] = players_report(result.core)
    with_moments(out, result.estimator, result.moments)
    out["ratings"] = SCALE_NOTE
    out["notes"] = result.notes
    return out
