"""The live core: every decision of the monitor, sans I/O.

Modelled on websockets' protocol/IO split: :class:`LiveCore` takes events —
a feed message (:meth:`~LiveCore.handle`), the stored state of a restart
(:meth:`~LiveCore.resume`), an analysis (:meth:`~LiveCore.analysed`), a quick
preview (:meth:`~LiveCore.previewed`), new TrueSkill ratings
(:meth:`~LiveCore.ttt_ratings`), a timer tick (:meth:`~LiveCore.tick`) — and
returns effects (:mod:`livemon.live.effects`): persist, analyse, publish,
raise an alert, refresh TTT, log. It never awaits, reads a clock, opens a file
or a socket; the one thing it calls is the position cache it is handed
(:meth:`LiveCore.configure`), a read. One :class:`~livemon.live.runner.Runner`
drives it and applies the effects, with the ports of each driver: the asyncio
monitor, ``export`` (from the store), batch ``analyse``/``calibrate`` and the TUI
demo, so there is one path into the estimator, and
:class:`~livemon.live.messages.PlayerEstimate` and
:class:`~livemon.live.messages.BoardState` are each built in one place
(:meth:`LiveCore.player_estimate`, :meth:`LiveCore.board_state`).

What it decides:

- **dedup and ordering**: a re-sent ply is counted and dropped; a ply with
  another move at a known number is a correction (the game rolls back to it,
  and a finished game keeps its result);
  a ply beyond the next one is a gap, logged and dropped (the feed re-sends);
- **legality of a message**: a move that is not legal in the position it
  claims to follow is logged and dropped, whoever sent it (the bus brings moves
  written by other processes; a local feed's tracker emits only moves its
  reader found legal on its own board, so they never fail here); nothing later
  checks it again;
- **what to analyse**: each position that needs the engine (not terminal, no
  ``[%eval]`` from the feed) and that the cache does not hold (a hit is scored at
  once, in the same call), once, newest first (priority ``-arrival``), under
  the event's one pinned engine profile; answers under another profile are
  refused (one profile per number); a quick preview of a game's
  newest position may feed the eval bar, never an estimate;
- **scoring**: plies handed to the estimator and the screener as soon as both
  their positions are valued (a move that was the first line of the search of
  the position before it marked: never judged); **moments** decided once every
  position up to a ply is valued, in ply order; **engine strength** precedence
  (:func:`engine_strength`); **alerts** and **what to publish**.

>>> core = LiveCore(profile="SF depth=1 multipv=2")
>>> effects = core.handle(GameInfo("g", white="A", black="B"))
>>> [type(e).__name__ for e in effects]
['StoreGame']
>>> move = MoveEvent("g", 1, "e2e4", "e4", chess.STARTING_FEN)
>>> [type(e).__name__ for e in core.handle(move)]
['StoreMove', 'Analyse', 'Analyse', 'Publish']
>>> core.handle(move)  # the same ply again: a duplicate
[]
"""

from __future__ import annotations

import logging
import dataclasses
from itertools import islice
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Iterable

import chess

from livemon.live.analysis import LiveGame
from livemon.live.audience import DEFAULT_MAX_INTERVAL_WIDTH, BoardFigures, estimate_displays, moment_kinds
from livemon.live.effects import (
    Analyse,
    DeleteGame,
    DeleteMoves,
    Effect,
    Log,
    Preview,
    Publish,
    RaiseAlert,
    RefreshTTT,
    StoreGame,
    StoreMove,
    StoreResult,
)
from livemon.live.estimator import Estimator, PlayerState
from livemon.live.finished import FinishedGames
from livemon.live.messages import (
    Alert,
    BoardRemoved,
    BoardState,
    FeedError,
    FeedNotice,
    GainCounts,
    GameInfo,
    GameResult,
    GameRollback,
    GameWithdrawn,
    Message,
    Moment,
    MomentRemoved,
    MoveEvent,
    PlayerEstimate,
    PlayerRemoved,
    ScreeningRemoved,
    TTTRating,
)
from livemon.live.lifecycle import GameEvent
from livemon.live.pgn import FINAL_RESULTS
from livemon.live.screener import Screener, TrackKey, alert_details
from livemon.live.shelf import Shelf
from livemon.live.values import COMMENTS_PROFILE, PositionAnalysis, board_from_fen, move_of
from livemon.rating.accuracy import INITIAL_CP, MoveClass, win_percent
from livemon.rating.evaluation import MATE_CP
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.rating.points import FIDE_POINTS, Points
from livemon.rating.gain import finite_or_none

if TYPE_CHECKING:
    from livemon.config import Config

FINISHED = FINAL_RESULTS
PositionCache = Callable[[chess.Board, str], tuple[PositionAnalysis, str] | None]
"""The driver's read-only position cache (:meth:`LiveCore.configure`): a position's (given with its key,
:func:`~livemon.live.values.position_key`, made once: a miss's request carries it) analysis and the name of
the profile it is of, or None. A hit is scored at once, inside the event that needed it; only a miss becomes
an :class:`~livemon.live.effects.Analyse` effect."""
MAX_TEXTS_BEHIND = 16
"""A board message adds at most this many moves to its last message's move lists (else it reads them whole)."""
WORK_PAIRS = 20
"""Pairs whose d_ij (Algorithm 1, ~35 µs each on an idle core, 2-3 times that in a busy round) one unit of
:meth:`LiveCore.work` works out."""
WORK_PLAYERS = 5
"""Players (their TTT rating and estimate) or screening rows one unit of :meth:`LiveCore.work` publishes: ~1-2 ms,
a small part of the monitor's turn budget on 2 shared cores at 1,000 boards."""
PACK_CHUNK = 16
"""A live game's scored plies are packed (:meth:`Estimator.pack`, :meth:`Screener.pack`) this many at a time:
as objects they are several hundred bytes a ply until the game finishes, the monitor's growth over a round;
each chunk is joined to the packed part at the cost of its own plies."""
PACK_MARGIN = 8
"""The newest plies of a live game that stay objects: a correction there (a DGT board's misread last moves)
rolls back without unpacking the game."""


def engine_strength(
    given: float | None, calibrated: float | None, estimator: Estimator | None = None
) -> tuple[float | None, str]:
    """r̄_e and where it came from — the one precedence: the flag or config, the profile's
    calibration, Algorithm 3 over the rated players seen (when ``estimator`` is given), none.

    >>> engine_strength(None, 3010.0)
    (3010.0, 'calibration')
    >>> engine_strength(None, None, Estimator())
    (None, 'none')
    """
    if given is not None:
        return given, "given"
    if calibrated is not None:
        return calibrated, "calibration"
    estimate = estimator.engine_strength() if estimator is not None else None
    if estimate is not None:
        return estimate, "algorithm 3"
    return None, "none"


@dataclass
class CoreCounters:
    """What the core saw; the monitor adds them to ``livemon status``."""

    moves: int = 0
    duplicates: int = 0
    rollbacks: int = 0
    gaps: int = 0
    illegal: int = 0
    feed_errors: int = 0
    failed_positions: int = 0
    foreign_profile: int = 0
    """Analyses refused because they came under another profile than the pinned one (must stay 0)."""
    ttt_refreshes: int = 0
    withdrawn: int = 0
    rescored: int = 0
    """Plies scored again because analyses they used were withdrawn (:meth:`LiveCore.forget`)."""


@dataclass
class _Preview:
    index: int
    score: int
    mate: int | None = None


def _shown(elo: float | None) -> int | None:
    """An Elo figure as the faces show it (whole points): a change below it is not re-published.

    >>> _shown(2701.4), _shown(None)
    (2701, None)
    """
    return None if elo is None or elo != elo else round(elo)


@dataclass
class _Replayed:
    """A game's position replayed last by :meth:`LiveCore._board_before` in one pass over its moments: the
    position after its first ``plies`` plies (``board`` None: none yet)."""

    board: chess.Board | None = None
    plies: int = 0


class LiveCore:
    """Games, estimates, screening and what to publish, driven by events; see the module docstring.

    ``profile``: the event's pinned engine profile (its name); every analysis
    handed to :meth:`analysed` must be of it. ``previews``: emit
    :class:`~livemon.live.effects.Preview` for each game's newest position.
    ``coalesce``: hold the estimate, screening and board updates of moves and scored plies until
    :meth:`flush` (one message per player, player-event and board however many plies a burst
    scores or moves a board by; a level is then judged on the burst's final figures; a board's message
    carries all its moves, so a client misses none). ``max_interval_width``: ``[display]
    max_interval_width`` (no performance figure is shown while its interval is wider); ``k_factor``:
    ``[results] k_factor`` (FIDE's K below 2400; None: the estimator's, 20). ``points``: ``[event] points``, what a
    win, a draw and a loss give in the standings (each player's ``results`` carry their points where it is not
    FIDE's 1-½-0).

    Its state is its own: drivers, faces and tests read it through the read-only properties
    below and change it only by events, so every change goes through one of its methods.
    """

    def __init__(self, profile: str = "", estimator: Estimator | None = None, screener: Screener | None = None, *,
                 given_strength: float | None = None, calibrated_strength: float | None = None,
                 all_pairs: bool = False, previews: bool = False, coalesce: bool = False,
                 max_interval_width: float = DEFAULT_MAX_INTERVAL_WIDTH,
                 k_factor: float | None = None, points: Points = FIDE_POINTS, archive: Shelf | None = None) -> None:
        self._profile = profile
        self._archive = archive
        self._by_comments = profile == COMMENTS_PROFILE
        self._cache: PositionCache | None = None
        self._estimator = estimator if estimator is not None else Estimator()
        self._screener = screener
        self._given_strength, self._calibrated_strength = given_strength, calibrated_strength
        self._all_pairs, self._previews, self._coalesce = all_pairs, previews, coalesce
        self._max_interval_width = max_interval_width
        self._games: dict[str, LiveGame] = {}
        self._infos: dict[str, GameInfo] = {}
        self._results: dict[str, str] = {}
        self._finished = FinishedGames()
        self._ttt: dict[str, TTTRating] = {}
        self._counters = CoreCounters()
        self._event_perceived: dict[str, float] = {}
        self._arrivals = 0
        self._preview: dict[str, _Preview] = {}
        self._board_figures: dict[str, BoardFigures] = {}
        """A live board's per-ply figures as its last message carried them (made again from what changed only);
        a finished game's are made whole for each of its rare messages (nothing kept per finished game)."""
        self._board_texts: dict[str, tuple[LiveGame, tuple[str, ...], tuple[str, ...]]] = {}
        """A live board's moves (SAN, UCI) as its last message carried them: the next one adds the moves since."""
        self._persist = True
        self._dirty_players: dict[str, None] = {}
        self._dirty_games: dict[str, None] = {}
        self._dirty_tracks: dict[TrackKey, None] = {}
        self._recompact: dict[str, None] = {}
        self._stale_pairs: deque[tuple[str, str]] = deque()
        """Algorithm 1's pairs a tick found moved, not worked out yet (:meth:`work`)."""
        self._solve_owed = False
        """A tick's Algorithms 3 and 2 wait (for the pairs before them)."""
        self._owed: dict[str, bool] = {}
        """Players whose estimate is owed to the faces (True: their TTT rating too), in ``_owed_order``."""
        self._owed_order: deque[str] = deque()
        self._owed_tracks: dict[TrackKey, None] = {}
        """Screening rows a TTT refresh re-rated, owed to the faces."""
        """Games corrected or reopened since they last settled: what :meth:`tick` looks at."""
        self._moments: dict[str, dict[int, Moment]] = {}
        """The moments of each game published, by ply (a correction withdraws those it takes back)."""
        self._decided: dict[str, int] = {}
        """Per game, the plies through which moments are decided (every position up to them valued)."""
        self._best: dict[str, dict[int, str]] = {}
        """Per game, the engine's first line (UCI) before each ply scored but not yet decided for moments (the
        positions' analyses are released once both plies next to them are scored)."""
        self._strength, self._strength_source = engine_strength(given_strength, calibrated_strength)
        if profile and not self._estimator.profile:
            self._estimator.profile = profile  # labels the performance estimate
        if k_factor is not None:
            self._estimator.k_factor = k_factor
        self._estimator.scoring = points

    # -- what drivers, faces and tests read (read-only) -----------------------------------

    @property
    def profile(self) -> str:
        """The event's pinned engine profile (:meth:`configure`)."""
        return self._profile

    @property
    def estimator(self) -> Estimator:
        """The estimates (read them; only the core's events change them)."""
        return self._estimator

    @property
    def screener(self) -> Screener | None:
        """The fair-play screening (None: not screened)."""
        return self._screener

    @property
    def games(self) -> Mapping[str, LiveGame]:
        """Every game by id."""
        return MappingProxyType(self._games)

    @property
    def infos(self) -> Mapping[str, GameInfo]:
        """Every game's tags by id."""
        return MappingProxyType(self._infos)

    @property
    def results(self) -> Mapping[str, str]:
        """Every game's result by id (``*`` while it goes on)."""
        return MappingProxyType(self._results)

    @property
    def finished(self) -> FinishedGames:
        """The finished games in the order they finished: what the TTT fit is made of (a refresh takes the
        games after those it had while nothing else changed: :mod:`livemon.io.tttjob`)."""
        return self._finished

    @property
    def ttt(self) -> Mapping[str, TTTRating]:
        """The latest TrueSkill Through Time rating of each player (:meth:`ttt_ratings`)."""
        return MappingProxyType(self._ttt)

    @property
    def counters(self) -> CoreCounters:
        """What the core saw (a copy: the driver adds it to ``livemon status``)."""
        return dataclasses.replace(self._counters)

    @property
    def strength(self) -> float | None:
        """The engine strength r̄_e in use (:func:`engine_strength`)."""
        return self._strength

    @property
    def strength_source(self) -> str:
        """Where :attr:`strength` came from: ``given``, ``calibration``, ``algorithm 3`` or ``none``."""
        return self._strength_source

    @property
    def event_perceived(self) -> Mapping[str, float]:
        """Algorithm 2's perceived rating of each player (:meth:`tick`)."""
        return MappingProxyType(self._event_perceived)

    def moments(self, game_id: str) -> tuple[Moment, ...]:
        """A game's moments decided so far, in ply order (those published and not withdrawn)."""
        found = self._moments.get(game_id, {})
        return tuple(found[ply] for ply in sorted(found))

    def moments_through(self, game_id: str) -> int:
        """The plies of a game through which its moments are decided (every position up to them valued)."""
        return self._decided.get(game_id, 0)

    @property
    def previews(self) -> bool:
        """Whether the core asks for eval-bar previews (:meth:`configure`)."""
        return self._previews


    @classmethod
    def for_analysis(
        cls,
        skip_moves: int = 0,
        c_min: float = 0.0,
        c_max: float = 10.0,
        *,
        profile: str = "",
        c_map: Calibration | None = None,
        **kw: object,
    ) -> "LiveCore":
        """A core with a fresh estimator of the ``[analysis]`` settings (and the profile's c map)."""
        estimator = Estimator(skip_moves, c_min, c_max)
        estimator.c_map = c_map
        return cls(profile=profile, estimator=estimator, **kw)  # type: ignore[arg-type]

    @classmethod
    def for_config(cls, cfg: Config, **kw: Any) -> "LiveCore":
        """A core with the event's settings of ``cfg`` (``[analysis]``, ``[display] max_interval_width``,
        ``[results] k_factor``, ``[event] points`` and ``name``): the one way the monitor, ``analyse`` and ``export``
        make theirs, so that a setting reaches all three."""
        a = cfg.analysis
        core = cls.for_analysis(a.skip_moves, a.c_min, a.c_max, max_interval_width=cfg.display.max_interval_width,
                                k_factor=cfg.results.k_factor, points=cfg.event.scoring, **kw)
        core.estimator.event_name = cfg.event.name  # "in this field": the player's event, or every game with a name
        return core

    # -- events -----------------------------------------------------------------------

    def configure(self, profile: str, calibration: ProfileCalibration | None = None, *,
                  given_strength: float | None = None, calibrated_strength: float | None = None,
                  previews: bool = False, screener: Screener | None = None,
                  cache: PositionCache | None = None, archive: Shelf | None = None) -> list[Effect]:
        """The event's settings, as one event: the pinned engine profile and its calibration, the engine
        strength (given, else the profile's calibration), eval-bar previews, the screener (its book handed in
        as data), the position cache (:data:`PositionCache`: a read-only lookup; a hit of the pinned profile is
        scored at once, a miss is asked for). Every figure from then on is of these settings."""
        self._cache = cache
        self._archive = archive
        self._profile = profile
        self._by_comments = profile == COMMENTS_PROFILE
        self._estimator.use_calibration(profile, calibration)
        self._given_strength, self._calibrated_strength = given_strength, calibrated_strength
        self._strength, self._strength_source = engine_strength(given_strength, calibrated_strength)
        self._previews = previews
        self._screener = screener
        return []


    def handle(self, msg: Message) -> list[Effect]:
        """One feed message (a game's tags, a move, a correction, a result, a feed error)."""
        out: list[Effect] = []
        if isinstance(msg, GameInfo):
            self._add_game(msg, out)
        elif isinstance(msg, MoveEvent):
            self._add_move(msg, out)
        elif isinstance(msg, GameRollback):
            if self._rollback(msg.game_id, msg.from_ply, out):
                self._valued(self._games[msg.game_id], out)
        elif isinstance(msg, GameResult):
            self._set_result(msg.game_id, msg.result, out)
        elif isinstance(msg, FeedError):
            self._counters.feed_errors += 1
            out.append(Log(logging.WARNING, f"feed {msg.feed}: {msg.message}"))
        elif isinstance(msg, FeedNotice):
            out.append(Log(logging.WARNING if msg.level == "warning" else logging.INFO,
                           f"feed {msg.feed}: {msg.message}" if msg.feed else msg.message))
        elif isinstance(msg, GameWithdrawn):
            out.extend(self.withdraw(msg.game_id, f"feed {msg.feed}: {msg.reason}" if msg.feed else msg.reason))
        return out

    def resume(self, stored: Iterable[tuple[GameInfo, str, list[MoveEvent]]]) -> list[Effect]:
        """The state persisted before a restart (games, results, moves), nothing persisted again.

        Every position that needs the engine is asked for again: the driver's
        engine pool answers from the cache what was analysed before, so a
        restart repeats no search.
        """
        out: list[Effect] = []
        self._persist = False
        try:
            for info, result, moves in stored:
                self._add_game(info, out)
                for ev in moves:
                    self._add_move(ev, out)
                if result != "*":
                    self._set_result(info.game_id, result, out)
        finally:
            self._persist = True
        return out

    def analysed(self, request: Analyse, analysis: PositionAnalysis | None, profile: str | None = None,
                 error: str | None = None) -> list[Effect]:
        """The answer to an :class:`Analyse` effect: the analysis under ``profile``, or ``error``.

        An analysis of another profile than the pinned one is refused (one
        profile per number): it is logged, counted, and the position stays
        unvalued rather than mixing limits. An error leaves the position
        without a value (its plies are skipped, as in ``analyse``).
        """
        out: list[Effect] = []
        if error is not None or analysis is None:
            self._counters.failed_positions += 1
            out.append(Log(logging.ERROR, f"game {request.game_id}: position {request.index} not analysed: {error}"))
            analysis = None
        elif profile is not None and self._profile and profile != self._profile:
            self._counters.foreign_profile += 1
            out.append(Log(logging.ERROR, f"game {request.game_id}: position {request.index}: an analysis under "
                                          f"{profile!r} refused, the event's profile is {self._profile!r}"))
            return out
        game = self._games.get(request.game_id)
        if game is not None and game.current(request.index, request.token):
            game.set_analysis(request.index, analysis)  # else a correction replaced the position meanwhile
            self._valued(game, out)
        return out

    def _valued(self, game: LiveGame, out: list[Effect]) -> None:
        """Positions of ``game`` were valued (an answer, or the cache): what they make ready is scored."""
        self._score(game, out)
        self._board_changed(game.game_id, out)
        self._settle(game, out)

    def previewed(self, request: Preview, analysis: PositionAnalysis | None) -> list[Effect]:
        """A quick evaluation of a game's newest position: the eval bar shows it until the real one comes."""
        game = self._games.get(request.game_id)
        if (analysis is None or game is None or game.plies != request.index
                or not game.current(request.index, request.token)):
            return []
        if game.value(request.index)[0]:
            return []  # the pinned profile's answer came first
        self._preview[game.game_id] = _Preview(request.index, analysis.score, analysis.mate)
        return [Publish(self.board_state(game.game_id))]

    def flush(self) -> list[Effect]:
        """The updates held since the last flush (``coalesce``): the screening figures and any level reached,
        on the burst's final figures, then each changed player's estimate and each changed board once, in the
        order they first changed. The runner flushes once per step, so a flush is as long as the step's burst."""
        out: list[Effect] = []
        tracks, self._dirty_tracks = self._dirty_tracks, {}
        for key in tracks:
            if self._screener is not None and key in self._screener.tracks:
                try:
                    self._screen(key, out)
                except Exception as exc:  # screening must never stop the estimates
                    out.append(Log(logging.ERROR, f"screening of {key} failed: {exc!r}"))
        players, self._dirty_players = list(self._dirty_players), {}
        games, self._dirty_games = list(self._dirty_games), {}
        found, owed = self._estimator.players, self._owed
        for name in players:
            if name in found:
                out.append(Publish(self.player_estimate(found[name])))
                if owed.get(name) is False:  # a tick's owed estimate: this one is as new
                    del owed[name]
        out.extend(Publish(self.board_state(gid)) for gid in games if gid in self._games)
        return out

    @property
    def held(self) -> bool:
        """Updates wait for :meth:`flush`."""
        return bool(self._dirty_players or self._dirty_games or self._dirty_tracks)

    def tick(self) -> list[Effect]:
        """The timer: finished games corrected or reopened since they settled settle again (those games
        only), and the event's figures are owed (:meth:`work`): Algorithm 1 on the pairs whose players moved
        since they were last worked out, then Algorithm 3 (when neither given nor calibrated) and Algorithm 2,
        then the estimate of every player they moved by a shown Elo."""
        for game_id in list(self._recompact):  # O(corrected games), not O(games)
            game = self._games.get(game_id)
            if game is None or game.life.released:
                del self._recompact[game_id]
            elif self._results.get(game_id) in FINISHED and game.all_scored:
                if self._may_settle(game):
                    self._settle_now(game)
                del self._recompact[game_id]
        self._stale_pairs = deque(self._estimator.stale_pairs(self._all_pairs))
        self._solve_owed = True
        return []

    def ttt_ratings(self, ratings: Iterable[TTTRating]) -> list[Effect]:
        """New TrueSkill Through Time posteriors (a live refresh passes the players it moved, a cold fit every
        player of the event): kept at once, the fallback ratings of the screening among them; each rating, its
        player's estimate and the screening rows it re-rates are owed (:meth:`work`)."""
        self._counters.ttt_refreshes += 1
        ratings = list(ratings)
        for rating in ratings:
            self._ttt[rating.name] = rating
            self._owe(rating.name, rating=True)
        if self._screener is not None and ratings:
            games = {r.name: r.games for r in ratings}
            for key in self._screener.set_fallback_ratings({r.name: r.elo for r in ratings}, games):
                self._owed_tracks[key] = None
        return []

    @property
    def owed(self) -> bool:
        """Work a tick or a TTT refresh left for :meth:`work`."""
        return bool(self._stale_pairs or self._solve_owed or self._owed or self._owed_tracks)

    def work(self, units: int | None = None) -> list[Effect]:
        """Up to ``units`` units of the owed work (None: all of it), in order: :data:`WORK_PAIRS` pairs' d_ij
        (Algorithm 1), then Algorithm 3 and Algorithm 2 (one solve over the event), then :data:`WORK_PLAYERS`
        players' TTT rating and estimate, then :data:`WORK_PLAYERS` screening rows. A tick or a TTT refresh
        moves a whole round's players (2,000 estimates are ~100 ms): the runner does a unit a step, so other
        events go on between them, and each figure is built from the state at its unit (a player gone by then
        is skipped; one published meanwhile by :meth:`flush` is not published again)."""
        out: list[Effect] = []
        done = 0
        while self.owed and (units is None or done < units):
            done += 1
            if self._stale_pairs:
                pairs = self._stale_pairs
                self._estimator.refresh_pairs([pairs.popleft() for _ in range(min(WORK_PAIRS, len(pairs)))])
            elif self._solve_owed:
                self._solve_owed = False
                self._solve()
            elif self._owed:
                players, order = self._estimator.players, self._owed_order
                for _ in range(WORK_PLAYERS):
                    while order and order[0] not in self._owed:  # published by a flush meanwhile
                        order.popleft()
                    if not order:
                        break
                    name = order.popleft()
                    if self._owed.pop(name) and name in self._ttt:
                        out.append(Publish(self._ttt[name]))
                    if name in players:
                        out.append(Publish(self.player_estimate(players[name])))
            else:
                tracks = self._owed_tracks
                for key in list(islice(tracks, WORK_PLAYERS)):
                    del tracks[key]
                    if self._screener is not None and key in self._screener.tracks:
                        self._screen(key, out)
        return out

    def _owe(self, name: str, rating: bool = False) -> None:
        """A player's estimate (and with ``rating`` their TTT rating) is owed to the faces (:meth:`work`)."""
        if name not in self._owed:
            self._owed_order.append(name)
            self._owed[name] = rating
        elif rating:
            self._owed[name] = True

    def _solve(self) -> None:
        """Algorithm 3 (when neither given nor calibrated) and Algorithm 2 for the event: the estimates they
        moved by a shown Elo are owed (every one when the engine strength moved)."""
        strength = self._strength
        if self._strength_source in ("algorithm 3", "none"):
            self._strength, self._strength_source = engine_strength(
                self._given_strength, self._calibrated_strength, self._estimator)
        perceived = self._estimator.perceived_ratings(self._all_pairs) or {}
        before, self._event_perceived = self._event_perceived, perceived
        if _shown(strength) != _shown(self._strength):
            changed = sorted(perceived or self._estimator.players)  # every perceived Elo moved
        else:  # Algorithm 2 is one solve over the event: re-publish only whom it moved by a shown Elo
            changed = sorted(n for n in perceived.keys() | before.keys() if _shown(perceived.get(n)) != _shown(before.get(n)))
        for name in changed:
            self._owe(name)

    def withdraw(self, game_id: str, reason: str = "no longer in its feed") -> list[Effect]:
        """A game its feed no longer lists (a renamed player, a game listed twice, a wrong pairing):
        its plies, its result and, when they played no other game, its players are withdrawn
        (no phantom plies or players). A feed's current view of a round is the truth.

        The faces are told: :class:`BoardRemoved`, and :class:`PlayerRemoved` /
        :class:`ScreeningRemoved` for a player or screening row left with no game.
        """
        out: list[Effect] = []
        if game_id not in self._games:
            return out
        self._counters.withdrawn += 1
        out.append(Log(logging.WARNING, f"game {game_id} withdrawn: {reason}"))
        info = self._infos.pop(game_id, None) or GameInfo(game_id)
        tracks = set(self._screener.tracks) if self._screener is not None else set()
        touched = self._screener.remove_game(game_id) if self._screener is not None else []
        gone = self._estimator.remove_game(game_id)
        game = self._games.pop(game_id)
        game.moves.discard()  # off the archive, if it was archived
        self._dirty_games.pop(game_id, None)
        self._recompact.pop(game_id, None)
        finished = self._results.pop(game_id, None) in FINISHED
        self._finished.drop(game_id)
        self._preview.pop(game_id, None)
        self._board_figures.pop(game_id, None)
        self._board_texts.pop(game_id, None)
        out.append(DeleteGame(game_id))
        out.append(Publish(BoardRemoved(game_id, reason)))
        self._unpublish_moments(game_id, 1, reason, out)
        self._decided.pop(game_id, None)
        self._best.pop(game_id, None)
        for player, event in sorted(tracks - set(self._screener.tracks if self._screener is not None else ())):
            out.append(Publish(ScreeningRemoved(player, event, reason)))
        for key in touched:
            self._screen(key, out)
        for name in gone:
            self._ttt.pop(name, None)
            self._event_perceived.pop(name, None)
            out.append(Publish(PlayerRemoved(name, reason)))
        for name in dict.fromkeys((info.white, info.black)):
            if name in self._estimator.players:  # still playing elsewhere: their figures without this game
                out.append(Publish(self.player_estimate(self._estimator.players[name])))
        if finished:
            out.append(RefreshTTT())
        return out

    def forget(self, keys: Iterable[str], reason: str = "their analyses were withdrawn") -> list[Effect]:
        """The analyses of these positions (keys of :func:`~livemon.live.values.position_key`) are not to be
        trusted any more (the engine worker that gave them was found lying and shut out): every ply that used
        one is rolled out of the estimates and the screening, as a correction rolls a game back, and scored
        again once the new answers come; the moves, the store and the result stay. Returns the requests for
        the positions (the backend answers them anew; the cache those it still trusts) and the figures they
        change."""
        wanted = set(keys)
        out: list[Effect] = []
        if not wanted:
            return out
        plies = games = 0
        for game in list(self._games.values()):
            found = game.engine_positions(wanted)
            if found:
                ply = max(found[0], 1)  # position j is the "after" of ply j and the "before" of ply j + 1
                plies += game.plies - ply + 1
                games += 1
                self._rescore(game, ply, reason, out)
        if plies:
            self._counters.rescored += plies
            out.insert(0, Log(logging.WARNING, f"{plies} plies of {games} games scored again: {reason}"))
        return out

    # -- decisions ----------------------------------------------------------------------

    def _add_game(self, info: GameInfo, out: list[Effect]) -> None:
        if self._persist:
            out.append(StoreGame(info))
        self._infos[info.game_id] = info
        if self._results.get(info.game_id) in FINISHED:  # new tags of a finished game: the fit's names, dates
            self._finished.set(info, self._results[info.game_id])
        self._estimator.add_game(info)
        if self._screener is not None:
            for key in self._screener.add_game(info):
                self._screen(key, out)
        if info.game_id not in self._games:
            self._games[info.game_id] = LiveGame(info.game_id, comments=self._by_comments)

    def _add_move(self, ev: MoveEvent, out: list[Effect]) -> None:
        game = self._games.get(ev.game_id)
        if game is None:
            self._add_game(GameInfo(ev.game_id), out)
            game = self._games[ev.game_id]
        if ev.ply < 1:
            self._counters.illegal += 1
            out.append(Log(logging.WARNING, f"game {ev.game_id}: ply {ev.ply} is not a ply number; ignored"))
            return
        hits = False
        if ev.ply <= game.plies:
            if game.moves[ev.ply - 1].uci == ev.uci:
                self._counters.duplicates += 1  # a re-sent ply (feed restart, re-sent game)
                return
            hits = self._rollback(ev.game_id, ev.ply, out)
        if ev.ply != game.plies + 1:
            self._counters.gaps += 1
            out.append(Log(logging.WARNING, f"game {ev.game_id}: ply {ev.ply} arrived after ply {game.plies}; ignored"))
            if hits:
                self._valued(game, out)
            return
        if game.life.released:  # a move after a settled game's last: its positions back, the last one's analysis again
            game.reopen()
            self._recompact[game.game_id] = None
            hits = self._analyse(game, [game.plies] if game.plies and game.needs_engine(game.plies) else [], out) or hits
        reason = _illegal(game, ev)
        if reason is not None:
            self._counters.illegal += 1
            out.append(Log(logging.WARNING, f"game {ev.game_id}: {reason} at ply {ev.ply}; ignored"))
            if hits:
                self._valued(game, out)
            return
        if self._persist:
            out.append(StoreMove(ev))  # stored before it is analysed
        self._counters.moves += 1
        self._preview.pop(ev.game_id, None)
        positions = game.add_move(ev)
        self._estimator.set_played(ev.game_id, ev.ply)  # the game's plies now
        if game.comments and game.breaks_comments(ev.ply):
            positions = self._revalue(game, False, out)
        hits = self._analyse(game, positions, out) or hits
        if (self._previews and self._persist and game.needs_engine(ev.ply) and ev.eval_cp is None  # else its [%eval]
                and not game.value(ev.ply)[0]):  # else the cache's
            out.append(Preview(ev.game_id, ev.ply, game.board(ev.ply), game.token(ev.ply)))
        self._score(game, out)
        if hits:
            self._settle(game, out)
        self._board_changed(ev.game_id, out)  # coalesced: one message a board for the burst's moves

    def _analyse(self, game: LiveGame, positions: list[int], out: list[Effect]) -> bool:
        """Value these positions: the cache's analysis of the pinned profile at once, else an :class:`Analyse`
        effect (newest first). True when the cache valued one (the caller scores what it made ready)."""
        hits = False
        for j in positions:
            self._arrivals += 1
            board = game.board(j)
            key = found = None
            if self._cache is not None:
                key = game.key(j)
                found = self._cache(board, key)
            if found is not None and (not self._profile or found[1] == self._profile):
                game.set_analysis(j, found[0])
                hits = True
            else:
                out.append(Analyse(game.game_id, j, board, float(-self._arrivals), game.token(j), key))
        return hits

    def _rollback(self, game_id: str, from_ply: int, out: list[Effect]) -> bool:
        """A correction: the game from ``from_ply`` on taken back. True when the cache valued a position again
        (the caller scores)."""
        game = self._games.get(game_id)
        if game is None:
            return False
        self._counters.rollbacks += 1
        self._board_texts.pop(game_id, None)  # its moves from from_ply on go
        self._recompact[game_id] = None  # settled again by the timer once every ply is scored, if finished
        out.append(DeleteMoves(game_id, from_ply))
        self._unscore(game_id, from_ply, "a correction took the move back", out)
        again = game.truncate(from_ply)  # a settled game reopened: the cache answers again
        self._estimator.set_played(game_id, game.plies)
        if self._by_comments and not game.comments and game.all_commented():  # the ply without one corrected away
            again = self._revalue(game, True, out)
        hits = self._analyse(game, again, out)
        self._preview.pop(game_id, None)
        result = self._results.get(game_id)
        if result is not None:  # a corrected finished game keeps its result: the feeds do not send it again
            out.append(StoreResult(game_id, result))
        out.append(Publish(self.board_state(game_id)))
        return hits

    def _rescore(self, game: LiveGame, ply: int, reason: str, out: list[Effect]) -> None:
        """Ply ``ply`` on of ``game`` out of every figure and scored again as its positions are valued anew
        (:meth:`forget`): what a correction does, the moves kept."""
        game_id = game.game_id
        self._recompact[game_id] = None  # settled again by the timer once every ply is scored, if finished
        self._unscore(game_id, ply, reason, out)
        self._preview.pop(game_id, None)
        hits = self._analyse(game, game.replay_from(ply), out)
        self._score(game, out)
        self._results_changed(game_id, out)  # both players' figures lost the plies
        if hits:
            self._settle(game, out)
        self._dirty_games.pop(game_id, None)
        out.append(Publish(self.board_state(game_id)))

    def _revalue(self, game: LiveGame, comments: bool, out: list[Effect]) -> list[int]:
        """The game's valuation switches between its comments and the engine (the one rule of
        :class:`LiveGame`): its scored plies are rolled back and every ply scored again. Returns the
        positions that need the engine."""
        if comments or game.plies > 1:  # plies scored before (at ply 1 only the new ply, not yet scored)
            self._unscore(game.game_id, 1, "its positions are valued anew (engine or comments)", out)
        return game.drop_comments(comments)

    def _unscore(self, game_id: str, from_ply: int, reason: str, out: list[Effect]) -> None:
        """Ply ``from_ply`` on of a game out of the figures: the estimates, its moments (``reason`` says why they
        go) and the screening. What becomes of the plies is the caller's: a correction truncates them
        (:meth:`_rollback`), :meth:`forget` replays them from that ply (:meth:`_rescore`), a switch between
        comments and engine revalues every ply (:meth:`_revalue`). The game keeps its result (the estimator's
        rollback takes it, so it is given back): the feeds do not send it again."""
        # the screener first: its packed positions are read from the game's plies, which the estimator withdraws
        touched = self._screener.rollback(game_id, from_ply) if self._screener is not None else []
        self._estimator.rollback(game_id, from_ply)
        result = self._results.get(game_id)
        if result is not None:
            self._estimator.set_result(game_id, result)
        self._unpublish_moments(game_id, from_ply, reason, out)
        for key in touched:
            self._screen(key, out)

    def _set_result(self, game_id: str, result: str, out: list[Effect]) -> None:
        if game_id not in self._games:
            return
        if self._persist:
            out.append(StoreResult(game_id, result))
        self._results[game_id] = result
        self._games[game_id].life.send(GameEvent.RESULT if result in FINISHED else GameEvent.UNFINISH)
        if result in FINISHED:
            self._finished.set(self._infos[game_id], result)
        else:
            self._finished.drop(game_id)
        self._estimator.set_result(game_id, result)
        if self._screener is not None:  # the event's results move each side's strength, so their expectation
            for key in self._screener.set_result(game_id, result):
                self._track_changed(key, out)
        self._dirty_games.pop(game_id, None)
        out.append(Publish(self.board_state(game_id)))
        self._results_changed(game_id, out)
        out.append(RefreshTTT())
        self._settle(self._games[game_id], out)

    def _settle(self, game: LiveGame, out: list[Effect]) -> None:
        """Settle a finished game once every ply is scored (a reopened one waits for :meth:`tick`)."""
        if game.life.finished and self._may_settle(game):
            self._settle_now(game)

    @staticmethod
    def _may_settle(game: LiveGame) -> bool:
        """Its state accepts :attr:`~GameEvent.SETTLE` and it has moves, every one scored (the caller knows
        its result is final)."""
        return game.life.can(GameEvent.SETTLE) and game.all_scored and game.plies > 0

    def _settle_now(self, game: LiveGame) -> None:
        """A finished game settles: its positions released and its moves and scored plies sealed, here and
        in the estimates (the store keeps every move and analysis; a correction brings them back), then, with
        an archive, archived: its columns are read from the archive when needed (a correction, a re-grid, a
        board message)."""
        game.settle()
        packed = self._estimator.pack(game.game_id)
        if self._screener is not None and packed is not None:
            self._screener.pack(game.game_id, packed)
        archive = self._archive
        if archive is not None:
            self._estimator.archive(game.game_id, archive)  # the screener reads the same log: nothing to tell it
            game.archive(archive)

    def _board_changed(self, game_id: str, out: list[Effect]) -> None:
        if self._coalesce:
            self._dirty_games[game_id] = None
        else:
            out.append(Publish(self.board_state(game_id)))

    def _score(self, game: LiveGame, out: list[Effect]) -> None:
        screener, estimator = self._screener, self._estimator
        book = screener is not None and screener.in_book is not None
        # the positions and analyses of the plies ready() scores stay until release(): a moment names the engine's
        # best move on the position before it
        analyses = game.analyses
        best: dict[int, str] | None = None
        for sp in game.ready(zobrist=book):
            analysis = analyses.get(sp.ply - 1)
            top = analysis.candidates[0][0] if analysis is not None and analysis.candidates else None
            if top is not None:
                if best is None:
                    best = self._best.setdefault(game.game_id, {})
                best[sp.ply] = top
            # the engine's first choice (or the only move) is never judged, whatever the next position's search says
            player = estimator.add_ply(sp, first_choice=sp.forced or top == sp.uci)
            # the mover, and the opponent: each game's score reads the other side's moves (a game read from both sides)
            for moved in estimator.players_of(sp, player):
                if self._coalesce:
                    self._dirty_players[moved.name] = None
                else:
                    out.append(Publish(self.player_estimate(moved)))
            if screener is None:
                continue
            try:
                key = screener.add_ply(sp)
                if key is not None:
                    self._track_changed(key, out)
            except Exception as exc:  # screening must never stop the estimates
                out.append(Log(logging.ERROR, f"game {sp.game_id}: screening of ply {sp.ply} failed: {exc!r}"))
        self._decide_moments(game, game.boards, out)
        game.release()
        self._pack_settled(game)

    def _pack_settled(self, game: LiveGame) -> None:
        """Pack a live game's scored plies but the newest :data:`PACK_MARGIN`, once :data:`PACK_CHUNK` more are
        settled (every ply through them scored): its moves, and its plies in the estimator and the screener."""
        pending = game.pending
        through = (min(pending) - 1 if pending else len(game.moves)) - PACK_MARGIN
        state = self._estimator.games.get(game.game_id)
        if game.life.released or state is None or through - state.plies.sealed_through < PACK_CHUNK:
            return
        game.pack(through)
        head = self._estimator.pack(game.game_id, through)
        if head is not None and self._screener is not None:
            self._screener.pack(game.game_id, head, through)

    def _decide_moments(self, game: LiveGame, boards: list[chess.Board | None], out: list[Effect]) -> None:
        """Decide the moments of the plies whose positions, and every position before them, are now valued, in
        ply order: each is decided once, on the game's final values up to it, so a live game's moments are those
        of the finished game however late and out of order the engine answered."""
        gid = game.game_id
        pending = game.pending
        through = min(pending) - 1 if pending else len(game.moves)
        done = self._decided.get(gid, 0)
        if through <= done:
            return
        evals = game.evals
        best = self._best.get(gid, {})
        replayed: _Replayed | None = None  # the plies go up: each position replayed goes on from the last
        first_choice, judge = self._estimator.is_first_choice, self._estimator.judge(gid)
        for ply in range(done + 1, min(through, len(evals) - 1) + 1):
            top = best.pop(ply, None)
            before = INITIAL_CP if ply == 1 else evals[ply - 1]
            after = evals[ply]
            if before is None or after is None:  # a position the engine gave up on: nothing honest to show
                continue
            first = first_choice(gid, ply)
            cls = None if first else judge.ply(ply, before, after)[1]  # judged when scored
            kinds = moment_kinds(evals, ply, cls)
            if kinds:
                if replayed is None:
                    replayed = _Replayed()
                self._moment(game, ply, before, after, first, cls, kinds, top, boards, out, replayed)
        for ply in range(len(evals), through + 1):  # beyond the values (none in a consistent game): no moment
            best.pop(ply, None)
        if not best:
            self._best.pop(gid, None)
        self._decided[gid] = through

    def _moment(self, game: LiveGame, ply: int, before: int, after: int, first: bool, cls: MoveClass | None,
                kinds: list[str], top: str | None, boards: list[chess.Board | None], out: list[Effect],
                replayed: _Replayed) -> None:
        """Publish ply ``ply`` as a moment of these ``kinds`` (:func:`~livemon.live.audience.moment_kinds`, from the
        values ``before`` and ``after`` it and its class ``cls``; ``first``: the engine's first choice ``top``)."""
        white = ply % 2 == 1
        ev = game.moves[ply - 1]
        best = None
        if top is not None:
            if top == ev.uci:
                best = ev.san
            else:
                try:
                    best = self._board_before(game, ply, boards, replayed).san(chess.Move.from_uci(top))
                except (ValueError, AssertionError):
                    best = None
        info = self._infos.get(game.game_id) or GameInfo(game.game_id)
        w_before, w_after = win_percent(before), win_percent(after)
        moment = Moment(game.game_id, ply, ev.san, tuple(kinds), cls, w_before, w_after, best, info.white,
                        info.black, info.event, info.round,
                        mover_win_before=w_before if white else 100.0 - w_before,
                        mover_win_after=w_after if white else 100.0 - w_after,
                        board=board_number(info.round),
                        judgement="best" if first and top is not None else cls or "good",
                        mover=info.white if white else info.black)
        self._moments.setdefault(game.game_id, {})[ply] = moment
        out.append(Publish(moment))

    @staticmethod
    def _board_before(game: LiveGame, ply: int, boards: list[chess.Board | None],
                      replayed: _Replayed | None = None) -> chess.Board:
        """The position before ``ply``: kept (``boards``: the game's positions, those of its plies just scored not
        released yet), or
        replayed from the nearest one kept before it (the game's first FEN when none is): a moment decided late
        (an answer that came out of order) finds its position released, often far into the game.

        ``replayed``: the last position replayed for an earlier ply of this game, in this pass; a replay goes on
        from it where it is at least as far as the nearest kept one (the same position, fewer moves pushed: the
        moments of a pass would otherwise each replay the game from its start). The board returned is then
        that one, which the next replay moves on: read it before asking for another."""
        j = min(ply - 1, len(boards) - 1)
        while j >= 0 and boards[j] is None:
            j -= 1
        start = boards[j] if j >= 0 else None
        if start is not None and j == ply - 1:
            return start
        if replayed is not None and replayed.board is not None and max(j, 0) <= replayed.plies <= ply - 1:
            board, k = replayed.board, replayed.plies
        else:
            board = start.copy(stack=False) if start is not None else board_from_fen(game.start_fen or chess.STARTING_FEN)
            k = max(j, 0)
        if replayed is not None:
            replayed.board = None  # until the pushes below are all made
        for ev in game.moves[k:ply - 1]:
            board.push(move_of(ev.uci))
        if replayed is not None:
            replayed.board, replayed.plies = board, ply - 1
        return board

    def _unpublish_moments(self, game_id: str, from_ply: int, reason: str, out: list[Effect]) -> None:
        if self._decided.get(game_id, 0) >= from_ply:
            self._decided[game_id] = from_ply - 1
        best = self._best.get(game_id)
        if best:
            for ply in [p for p in best if p >= from_ply]:
                del best[ply]
        plies = self._moments.get(game_id)
        if not plies:
            return
        for ply in sorted(p for p in plies if p >= from_ply):
            del plies[ply]
            out.append(Publish(MomentRemoved(game_id, ply, reason)))
        if not plies:
            del self._moments[game_id]

    def _results_changed(self, game_id: str, out: list[Effect]) -> None:
        """A game's result came or changed: both players' score, TPR and rating change with it."""
        info = self._infos.get(game_id)
        if info is None:
            return
        for name in dict.fromkeys((info.white, info.black)):
            if name not in self._estimator.players:
                continue
            if self._coalesce:
                self._dirty_players[name] = None
            else:
                out.append(Publish(self.player_estimate(self._estimator.players[name])))

    def _track_changed(self, key: TrackKey, out: list[Effect]) -> None:
        """A player-event's screening moved: its numbers now, or at :meth:`flush` (``coalesce``: made once for
        the burst, a re-rated player's positions counted again once however many results it brought)."""
        if self._coalesce:
            self._dirty_tracks[key] = None
        else:
            self._screen(key, out)

    def _screen(self, key: TrackKey, out: list[Effect]) -> None:
        """A player-event's screening numbers, and the levels it reaches for the first time."""
        assert self._screener is not None  # noqa: S101 - invariant: only called with tracks the screener returned
        numbers = self._screener.numbers(key)
        out.append(Publish(numbers))
        for raised in self._screener.new_alerts(key, numbers):
            n = raised.numbers
            alert = Alert(player=n.player, event=n.event, positions=n.positions, z=n.z or 0.0, roi=n.roi or 0.0,
                          threshold=raised.threshold, details=alert_details(raised))
            out.append(RaiseAlert(alert, raised.level))

    # -- what is published --------------------------------------------------------------

    def player_estimate(self, player: PlayerState, *, in_game_order: bool = False) -> PlayerEstimate:
        """The one builder of a player's estimate message (the ``players`` channel, the TUI, MQTT, and the
        ``players`` of ``analyse --json`` and ``export --json``).

        Everything in it comes from ``player`` (its gains, its E(c)
        decisions and posterior), the engine strength and the event's
        Algorithm 2 and TTT figures: add a new per-player figure here.
        ``in_game_order``: the c figures from the posterior rebuilt over the decisions in game order
        (:meth:`Estimator.c_summary`, O(decisions): for a report) instead of the live posterior; both are read
        on the grid the decisions call for (:class:`~livemon.rating.agent.CPosterior`), so they differ only in
        the last bits of a sum taken in another order.
        """
        live, strength = player.live, self._strength
        interval = live.rating_diff_interval() if live.n else None
        if in_game_order:
            c = self._estimator.c_summary(player)
        else:
            c = player.posterior.summary() if player.posterior is not None and player.posterior.n else None
        ttt = self._ttt.get(player.name)
        c_map = self._estimator.c_map
        c_elo = c_map.elo_scale(c.mean, *c.cr95) if c is not None and c_map is not None else None
        performance = self._estimator.performance(player).to_dict()
        seen = self._estimator.audience(player.name)
        blocks = self._estimator.estimates(player)
        quality = None if player.quality is None else player.quality.model
        display = estimate_displays(blocks, quality, self._max_interval_width)  # the headline's
        return PlayerEstimate(
            estimate=blocks["estimate"], moves_estimate=blocks["moves_estimate"], field_estimate=blocks["field_estimate"],
            results_estimate=blocks["results_estimate"], combined_estimate=blocks["combined_estimate"],
            name=player.name,
            elo=player.elo,
            moves=live.n,
            mean_gain=live.mean,
            expected_score_vs_engine=live.expected_score,
            rating_diff_vs_engine=finite_or_none(live.rating_diff),
            perceived_elo=finite_or_none(live.perceived(strength)),
            performance=performance,
            perceived_elo_range=None
            if interval is None or strength is None
            else (finite_or_none(strength + interval[0]), finite_or_none(strength + interval[1])),
            event_perceived_elo=self._event_perceived.get(player.name),
            c_mean=c.mean if c else None,
            c_sd=c.sd if c else None,
            c_cr95=(c.cr95[0], c.cr95[1]) if c else None,
            c_elo=c_elo["elo"] if c_elo else None,
            c_elo_cr95=tuple(c_elo["cr95"]) if c_elo else None,
            ttt_mu=ttt.elo if ttt else None,
            ttt_sigma=ttt.elo_sigma if ttt else None,
            gain_histogram=GainCounts(*player.histogram.sparse()),
            accuracy=seen["accuracy"],
            classes=seen["classes"],
            results=seen["results"],
            moves_read=seen["moves_read"],
            display=display,
        )

    def player_estimates(self) -> tuple[PlayerEstimate, ...]:
        """Every player's estimate as the ``players`` channel carries it once every answer is in, by name: each
        player with a move read or an E(c) posterior (what ``analyse --json`` and ``export --json`` list). The c
        figures are read in game order (:meth:`player_estimate`): the same whatever order the answers came in."""
        players = sorted(self._estimator.players.values(), key=lambda p: p.name)
        return tuple(self.player_estimate(p, in_game_order=True) for p in players if p.histogram.n or p.posterior)

    def board_state(self, game_id: str) -> BoardState:
        """The one builder of a board's message: position, last move, evaluations, clocks, result.

        The newest evaluation is the pinned profile's; while it is awaited, a
        quick preview (if any), else the source's ``[%eval]`` of that position, stands in
        for it on the eval bar only (``eval_preview``: no figure is made of it).
        """
        game = self._games[game_id]
        info = self._infos.get(game_id) or GameInfo(game_id)
        last = game.moves[-1] if game.moves else None
        evals = game.evaluations()
        preview = self._preview.get(game_id)
        previewed = preview is not None and bool(evals) and evals[-1] is None and preview.index == len(evals) - 1
        mate = game.mate(len(evals) - 1) if evals and evals[-1] is not None else None
        if previewed:
            assert preview is not None  # noqa: S101 - checked just above (for mypy)
            evals, mate = evals[:-1] + (preview.score,), preview.mate
        elif evals and evals[-1] is None:  # the source's [%eval] of the newest position stands in, as a preview
            source = last.eval_cp if last is not None else game.start_eval
            if source is not None:
                evals, previewed = evals[:-1] + (source,), True
                mate = last.eval_mate if last is not None else None
        if evals and (evals[-1] is None or abs(evals[-1]) < MATE_CP):
            mate = None  # a distance only beside a mate's value (display only: no figure reads it)
        figures = self._estimator.figures(game_id) if game_id in self._estimator.games else None
        sans, ucis = self._texts(game)
        clocks: list[float | None] = [None, None]
        for ev in game.moves[-2:]:
            clocks[(ev.ply - 1) % 2] = ev.clock
        result = self._results.get(game_id, "*")
        if result in FINISHED:
            kept = self._board_figures.pop(game_id, None) or BoardFigures()
        else:
            kept = self._board_figures.get(game_id) or self._board_figures.setdefault(game_id, BoardFigures())
        kept.judge = self._estimator.judge(game_id)  # the plies it judged are read, not judged again
        return BoardState(
            game_id=game_id,
            white=info.white,
            black=info.black,
            white_elo=info.white_published,  # a screen shows the tag as published
            black_elo=info.black_published,
            fen=game.fen,
            ply=game.plies,
            last_move_san=last.san if last else None,
            last_move_uci=last.uci if last else None,
            eval_cp=evals[-1] if evals else None,
            evals=evals,
            white_clock=clocks[0],
            black_clock=clocks[1],
            result=result,
            event=info.event,
            round=info.round,
            accuracy=figures.to_accuracy() if figures is not None else {"white": None, "black": None},
            classes=figures.to_classes() if figures is not None else None,
            moves_read=figures.to_moves() if figures is not None else None,
            eval_preview=previewed,
            eval_mate=mate,
            white_title=info.white_title,
            black_title=info.black_title,
            white_fed=info.white_fed,
            black_fed=info.black_fed,
            first_choice=self._estimator.first_choice_plies(game_id),
            moves=sans,
            moves_uci=ucis,
            figures=kept,
        )

    def _texts(self, game: LiveGame) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A board's moves in SAN and UCI: its last message's (the same tuples and strings) and the few moves since,
        made whole from the game's record after a correction or when it is finished (nothing kept per finished
        game)."""
        gid, n = game.game_id, game.plies
        kept = self._board_texts.get(gid)
        if kept is not None and kept[0] is game and n - MAX_TEXTS_BEHIND <= len(kept[2]) <= n:
            k = len(kept[2])
            new = [game.moves[i] for i in range(k, n)]
            sans, ucis = kept[1] + tuple(ev.san for ev in new), kept[2] + tuple(ev.uci for ev in new)
        else:
            sans, ucis = game.moves.texts()
        if game.life.released or self._results.get(gid, "*") in FINISHED:
            self._board_texts.pop(gid, None)
        else:
            self._board_texts[gid] = (game, sans, ucis)
        return sans, ucis

    def unscored_plies(self) -> int:
        return sum(len(g.pending) for g in self._games.values())


def board_number(round_tag: str) -> int | None:
    """The board of a game from its round tag written ``R.B`` (lichess's broadcasts), else None.

    >>> board_number("3.12"), board_number("3"), board_number("?")
    (12, None, None)
    """
    head, sep, tail = round_tag.partition(".")
    return int(tail) if sep and head.isdigit() and tail.isdigit() else None


def _illegal(game: LiveGame, ev: MoveEvent) -> str | None:
    """Why ``ev`` cannot follow the game's position (bad FEN, bad UCI, illegal), or None: the core's one check of a
    message, whoever sent it."""
    try:
        board = game.board(-1) if game.boards else board_from_fen(ev.fen_before)
    except ValueError as exc:
        return f"bad FEN {ev.fen_before!r} ({exc})"
    try:
        move = move_of(ev.uci)
    except ValueError:
        return f"bad move {ev.uci!r}"
    if not game.legal(board, move):  # python-chess's rule, with the pins found when the position was added
        return f"illegal move {ev.uci}"
    return None
