"""The values that travel along the pipeline's arrows: what feeds say, and what the monitor publishes.

Every value is a frozen dataclass with a ``kind`` (its name where a table or a wire needs one) and no
knowledge of where it goes or how it is written: where a published value goes (its channel, audience and
snapshot key) is the hub's routing table (:mod:`livemon.faces.hub`); how each face writes it is that face's
codec (the WebSocket's JSON, patches and rounding in :mod:`livemon.faces.web.codec`, MQTT's topics in
:mod:`livemon.faces.mqtt`, the store's rows in :mod:`livemon.io.store`). ``analyse --json`` and
``export --json`` are made of the same values through the web codec.

Incoming (feeds to the core): :class:`GameInfo`, :class:`MoveEvent`, :class:`GameRollback`,
:class:`GameResult`, :class:`GameWithdrawn`, :class:`FeedError`, :class:`FeedNotice`. Outgoing (the core to
the faces, each a subclass of :class:`Outgoing`): a board, a player's estimate, a TTT rating, an alert, the
screening numbers, a moment, a forecast, the status, a quarantined worker, and the removals that withdraw
them (:class:`BoardRemoved`, :class:`PlayerRemoved`, :class:`ScreeningRemoved`, :class:`MomentRemoved`).

>>> m = MoveEvent(game_id="g1", ply=1, uci="e2e4", san="e4",
...               fen_before="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
>>> m.kind, m.ply
('move', 1)
>>> b = BoardState("r1/b2", "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 0)
>>> b.kind, b.ts
('board', 0.0)
"""

from __future__ import annotations

import bisect
import dataclasses
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import InitVar, dataclass
from typing import Any, ClassVar, Literal

from livemon.live.audience import BoardFigures
from livemon.rating.accuracy import MoveClass
from livemon.rating.points import FIDE_POINTS

class GainCounts(Mapping[str, int]):
    """A player's sparse gain histogram as a message carries it: ``{"gain": count}``, read-only, in two
    int arrays (~8 bytes a bin instead of ~80 as a dict of strings: the hub's log keeps thousands of
    player messages, and their histograms would be most of its memory).

    Equal to the dict it reads as; every codec writes it as that dict.

    >>> h = GainCounts([-10, 0, 25], [2, 1, 1])
    >>> dict(h), h["-10"], h == {"-10": 2, "0": 1, "25": 1}, len(h)
    ({'-10': 2, '0': 1, '25': 1}, 2, True, 3)
    """

    __slots__ = ("_counts", "_gains")

    def __init__(self, gains: Iterable[int], counts: Iterable[int]) -> None:
        self._gains, self._counts = array("i", gains), array("i", counts)
        if len(self._gains) != len(self._counts):
            raise ValueError("GainCounts: as many counts as gains")

    def __getitem__(self, key: str) -> int:
        try:
            g = int(key)
        except (TypeError, ValueError):
            raise KeyError(key) from None
        i = bisect.bisect_left(self._gains, g)
        if i == len(self._gains) or self._gains[i] != g or str(g) != key:
            raise KeyError(key)
        return self._counts[i]

    def __iter__(self) -> Iterator[str]:
        return map(str, self._gains)

    def __len__(self) -> int:
        return len(self._gains)

    def items(self) -> Iterator[tuple[str, int]]:  # type: ignore[override]
        return zip(map(str, self._gains), self._counts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GainCounts):
            return self._gains == other._gains and self._counts == other._counts
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GainCounts({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return GainCounts, (list(self._gains), list(self._counts))




class Message:
    """Base of every value that travels: a frozen dataclass tagged with its ``kind``."""

    __slots__ = ()  # a message class declared with slots=True (MoveEvent: one per ply is kept) has no __dict__

    kind: ClassVar[str] = "message"


@dataclass(frozen=True)
class Outgoing(Message):
    """Base of what the monitor publishes, with the time the hub published it.

    ``ts`` is the unix time (seconds) at which the hub published the message
    (0.0 before), for clients to measure publish → receive latency; it takes
    no part in equality, so an unchanged state compares equal whenever it was
    sent.
    """

    ts: float = dataclasses.field(default=0.0, compare=False, kw_only=True)


@dataclass(frozen=True)
class GameInfo(Message):
    """The tags of a game that the estimators and faces need. ``white_elo``/``black_elo`` are on today's
    FIDE scale (:mod:`livemon.rating.scale`: what every model reads); ``white_tag``/``black_tag`` as published."""

    kind: ClassVar[str] = "game"
    game_id: str
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    event: str = "?"
    round: str = "?"
    date: str = "?"
    site: str = "?"
    white_title: str = ""  # FIDE title from the WhiteTitle tag (GM, IM, WFM, ...), "" when none
    black_title: str = ""
    white_fed: str = ""  # federation from the WhiteFed tag (NOR, IND, ...), "" when none
    black_fed: str = ""
    white_fide_id: str = ""  # the player's FIDE id from the WhiteFideId tag (lichess broadcasts carry it), "" when none
    black_fide_id: str = ""
    white_tag: int | None = None  # the WhiteElo tag as published (screens show it); white_elo is on today's scale
    black_tag: int | None = None
    rating_note: str = ""  # what reading the tags assumed (no date, under the floor...), "" when nothing
    rating_scale: str = "today"  # "today": the tags were put on today's scale by a date; "as read": no usable date
    rating_date_source: str = ""  # the tag that dated the ratings: "Date", "UTCDate", "EventDate" (the event's), "" none
    time_control: str = ""  # the TimeControl tag as published ("" when none or "?"): livemon.rating.timecontrol

    @property
    def white_published(self) -> int | None:
        """White's rating as published (the tag), for screens; ``white_elo`` when no tag was kept."""
        return self.white_tag if self.white_tag is not None else self.white_elo

    @property
    def black_published(self) -> int | None:
        """Black's rating as published (the tag), for screens; ``black_elo`` when no tag was kept."""
        return self.black_tag if self.black_tag is not None else self.black_elo


@dataclass(frozen=True, slots=True)
class MoveEvent(Message):
    """One ply of a game, as read from a feed.

    ``ply`` counts from 1 (1 = White's first move). ``fen_before`` is the full
    FEN of the position the move was played from. ``eval_cp`` is an ``[%eval]``
    comment after the move (White's view, centipawns, mates mapped), if any;
    ``start_eval_cp``, on ply 1 only, the ``[%eval]`` of the starting position
    (a comment before the first move, as in Ferreira's Fig. 1). Whether the
    comments value a game is the core's one rule (:class:`~livemon.live.analysis.LiveGame`).
    ``eval_mate``: the comment's distance to mate when it is one (``[%eval #-2]``: -2; moves,
    White's view), for display only.
    """

    kind: ClassVar[str] = "move"
    game_id: str
    ply: int
    uci: str
    san: str
    fen_before: str
    clock: float | None = None
    emt: float | None = None
    eval_cp: int | None = None
    feed: str = ""
    start_eval_cp: int | None = None
    eval_mate: int | None = None


@dataclass(frozen=True)
class GameRollback(Message):
    """A correction: every ply of ``game_id`` from ``from_ply`` on is withdrawn."""

    kind: ClassVar[str] = "rollback"
    game_id: str
    from_ply: int
    feed: str = ""


@dataclass(frozen=True)
class GameResult(Message):
    """A finished game's result in PGN notation (``1-0``, ``0-1``, ``1/2-1/2``)."""

    kind: ClassVar[str] = "result"
    game_id: str
    result: str
    plies: int
    feed: str = ""


@dataclass(frozen=True)
class FeedError(Message):
    """Bad input from a feed: one clear line; the feed and other games go on."""

    kind: ClassVar[str] = "feed_error"
    feed: str
    message: str
    game_id: str | None = None


@dataclass(frozen=True)
class FeedNotice(Message):
    """Something a feed's games made the tracker do that is worth one log line but is no fault of a game
    (DGT king moves dropped, a Site shared by several games, a result changed after it was final…).

    The tracker does no I/O: it says these as messages, and whoever reads the feed logs them at ``level``.
    Not an error: a feed's status does not count it.
    """

    kind: ClassVar[str] = "feed_notice"
    feed: str
    message: str
    game_id: str | None = None
    level: Literal["info", "warning"] = "info"


@dataclass(frozen=True)
class GameWithdrawn(Message):
    """A game its feed no longer lists (a renamed player, a game listed twice): everything of it is withdrawn.

    Sent by feeds whose every read is the whole current view of a round (a PGN
    file or DGT folder, an HTTP poll of a round's PGN), after the game was
    missing from several whole reads in a row (docs/feeds.md).
    """

    kind: ClassVar[str] = "withdrawn"
    game_id: str
    reason: str
    feed: str = ""


# -- outgoing: what the monitor publishes to the faces (TUI, WebSocket, MQTT); one class each --


@dataclass(frozen=True)
class BoardState(Outgoing):
    """A live board as the faces show it, after its latest ply."""

    kind: ClassVar[str] = "board"
    game_id: str
    white: str
    black: str
    white_elo: int | None
    black_elo: int | None
    fen: str
    ply: int
    last_move_san: str | None = None
    last_move_uci: str | None = None
    eval_cp: int | None = None  # White's view; None while the position awaits analysis
    evals: tuple[int | None, ...] = ()  # evaluation after each ply so far (index 0 = start)
    white_clock: float | None = None
    black_clock: float | None = None
    result: str = "*"
    event: str = "?"
    round: str = "?"
    accuracy: dict[str, float | None] | None = None  # lichess's game accuracy {white, black}; null: none yet
    classes: dict[str, dict[str, int] | None] | None = None  # {white: {inaccuracy, mistake, blunder}, black: ...}
    eval_preview: bool = False  # eval_cp (and evals' last) is a quick preview, not the pinned profile's
    eval_mate: int | None = None
    """``eval_cp``'s distance to mate when it is a mate and the distance is known (moves, White's view: 3 White
    mates in 3, -2 Black mates in 2; 0 the position is mate), for display only; null otherwise."""
    white_title: str = ""  # the players' titles and federations from the PGN tags, "" when none
    black_title: str = ""
    white_fed: str = ""
    black_fed: str = ""
    moves: tuple[str, ...] = ()  # every ply's move in SAN (index 0 = ply 1): a page opened mid-game lists them all
    moves_uci: tuple[str, ...] = ()  # the same moves in UCI: a page steps through the game's positions with them
    first_choice: tuple[int, ...] = ()  # the plies whose move was the engine's first choice: never judged (no class)
    moves_read: dict[str, dict[str, int]] | None = None
    """Per side (``white``, ``black``) the moves ``played``, ``judged`` (both positions valued: what ``classes``
    reads) and ``accuracy_read`` (what ``accuracy`` reads: the moves from the start to the first position awaited);
    fewer read than played: the figure is provisional. A side's ``accuracy`` stays null until it reads
    :data:`~livemon.live.audience.MIN_ACCURACY_MOVES` of its moves (or all of a finished game's)."""
    figures: InitVar[BoardFigures | None] = None
    """The board's figures as kept from its previous message (the core's: only what changed is made again); None:
    made here from ``evals``."""

    __slots__ = ("_shown",)
    """The figures made from ``evals`` when the message is built (``audience.ply_figures``, one decimal; from the
    pinned profile's values only: a preview, ``eval_preview``, never makes one), read as :attr:`win_percents`,
    :attr:`move_accuracy` and :attr:`move_classes`. One slot, not three fields: a message's ``__dict__`` stays
    within the 29 keys CPython shares between the instances of a class (a board message in the hub's log: ~300
    bytes, not ~1,600)."""

    def __post_init__(self, figures: BoardFigures | None) -> None:
        evals = self.evals[:-1] + (None,) if self.eval_preview and self.evals else self.evals
        object.__setattr__(self, "_shown", (figures if figures is not None else BoardFigures()).of(evals, self.first_choice))

    @property
    def win_percents(self) -> tuple[float | None, ...]:
        """White's win% of each position (one decimal), from ``evals``; None while awaited."""
        return self._shown[0]  # type: ignore[attr-defined, no-any-return]

    @property
    def move_accuracy(self) -> tuple[float | None, ...]:
        """The mover's accuracy of each ply (index 0 = ply 1, one decimal); None while a position next to it is
        awaited."""
        return self._shown[1]  # type: ignore[attr-defined, no-any-return]

    @property
    def move_classes(self) -> tuple[MoveClass | None, ...]:
        """Each ply's class (inaccuracy, mistake, blunder); none on a ply in ``first_choice``, or not judged yet."""
        return self._shown[2]  # type: ignore[attr-defined, no-any-return]

    def __getstate__(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.__dict__, {"_shown": self._shown}  # type: ignore[attr-defined]

    def __setstate__(self, state: tuple[dict[str, Any], dict[str, Any]]) -> None:
        """A copy's or an unpickled message's state (frozen: set past ``__setattr__``)."""
        fields, slots = state
        self.__dict__.update(fields)
        for name, value in slots.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class BoardRemoved(Outgoing):
    """A board withdrawn by its feed: it leaves the ``games`` list; ``game:<id>`` keeps this as its last word.

    >>> BoardRemoved("r1/b2", "no longer listed by its feed").reason
    'no longer listed by its feed'
    """

    kind: ClassVar[str] = "board_removed"
    game_id: str
    reason: str = ""


@dataclass(frozen=True)
class PlayerEstimate(Outgoing):
    """A player's live estimates (the ``players[]`` entry of ``analyse --json``, flattened)."""

    kind: ClassVar[str] = "player"
    name: str
    elo: int | None
    moves: int
    mean_gain: float | None
    expected_score_vs_engine: float | None
    rating_diff_vs_engine: float | None
    perceived_elo: float | None  # Ferreira's Algorithm 4: a diagnostic, not the headline
    perceived_elo_range: tuple[float | None, float | None] | None = None  # 95% interval
    event_perceived_elo: float | None = None  # Algorithm 2 within the event
    c_mean: float | None = None
    c_sd: float | None = None
    c_cr95: tuple[float, float] | None = None
    c_elo: float | None = None  # c̄ on the Elo scale of the profile's calibration
    c_elo_cr95: tuple[float, float] | None = None
    ttt_mu: float | None = None
    ttt_sigma: float | None = None
    gain_histogram: Mapping[str, int] | None = None  # sparse {gain: count}, for the histogram plot (GainCounts)
    performance: dict[str, Any] | None = None  # the E(c) diagnostic: rating.performance.Performance.to_dict()
    accuracy: float | None = None  # event accuracy: the mean of the player's lichess game accuracies
    classes: dict[str, int] | None = None  # {inaccuracy, mistake, blunder} over the event
    results: dict[str, Any] | None = None  # FIDE: {score, games, tpr, rating_change, k, rated_games, reason?}
    display: dict[str, Any] | None = None  # whether a screen shows the headline estimate (live.audience.estimate_displays)
    estimate: dict[str, Any] | None = None  # the headline: field_estimate once there is one, else moves_estimate
    moves_estimate: dict[str, Any] | None = None  # the multi-feature moves estimate: rating.quality.QualityEstimate.to_dict()
    field_estimate: dict[str, Any] | None = None  # the same "in this field" (the other players' ratings as prior)
    results_estimate: dict[str, Any] | None = None  # FIDE's performance from results (mean opponent + dp(p))
    combined_estimate: dict[str, Any] | None = None  # moves and results together (labelled)
    moves_read: dict[str, int] | None = None
    """The player's moves over the games followed: ``played``, ``judged`` (valued: what the classes and the estimates
    read) and ``accuracy_read`` (the moves of the games whose accuracy is shown): a figure reading fewer than were
    played is provisional ("accuracy 94.1 · 28 of 41 moves")."""


@dataclass(frozen=True)
class TTTRating(Outgoing):
    """A player's latest TrueSkill Through Time posterior (β = 1 units and Elo scale)."""

    kind: ClassVar[str] = "ttt"
    name: str
    mu: float
    sigma: float
    elo: float  # mu on the Elo scale of the fit
    elo_sigma: float
    games: int


@dataclass(frozen=True)
class PlayerRemoved(Outgoing):
    """A player who played only withdrawn games (a name corrected, a phantom): gone from ``players`` and ``ttt``.
    """

    kind: ClassVar[str] = "player_removed"
    name: str
    reason: str = ""


@dataclass(frozen=True)
class Alert(Outgoing):
    """A fair-play screening alert: for arbiters only, never on a public channel."""

    kind: ClassVar[str] = "alert"
    player: str
    event: str
    positions: int
    z: float
    roi: float
    threshold: float
    details: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ScreeningNumbers(Outgoing):
    """Every screening number of one player in one event (``livemon.live.screener``): for arbiters only.

    Published on the arbiter-only ``screening`` channel after every screened
    move, so arbiters see the whole table, not only the alerts. z's are None
    when undefined (no rating yet, no variance) or infinite.
    """

    kind: ClassVar[str] = "screening"
    player: str
    event: str
    rating: float | None
    rating_source: str  # "tag", "ttt" or "none" (not screened yet)
    c_r: float | None
    positions: int
    excluded: dict[str, int]
    matches_observed: int
    matches_expected: float
    matches_sd: float
    z_match: float | None  # the matches' mid-p tail (exact Poisson-binomial), as a z
    p_match: float | None  # that tail probability P(M > observed) + ½·P(M = observed)
    z_match_normal: float | None  # (observed − expected)/sd
    loss_observed: float  # average loss per position, pawns
    loss_expected: float
    loss_sd: float
    z_loss: float | None
    statistic: str  # the configured statistic; for "max", the larger z
    z: float | None  # the z the levels are read from
    roi: float | None  # 50 + 5z
    z_scale: float = 1.0
    level: str | None = None  # highest level reached now (≥ min_positions), None below notice
    # what the player was compared with (livemon.rating.screening): the tag on today's FIDE scale, and
    # today's strength from the tag and the event's results, with its sd; z is against that strength
    rating_read: float | None = None  # the rating tag as printed (before today's scale)
    rating_scale: str = "today"  # "today", or "as read" when the game had no date to convert by
    strength: float | None = None  # today's strength: the tag's prior and the event's results
    strength_sd: float | None = None
    results: int = 0  # the event's finished games against rated opponents in that strength
    k40: float | None = None  # the chance the tag is a K = 40 rating (young, few games; 1 at a junior event)
    z_tag: float | None = None  # z against the tag alone (its prior, no results); an alert needs both
    ipr: float | None = None  # Regan's intrinsic performance rating (first order): the strength the matches read
    ipr_cr95: tuple[float | None, float | None] | None = None  # an end the line cannot reach: None
    field_lag: float | None = None  # points the event's results put the player above the tag as a likely K = 40
    # rating of a field that trails its tags (the other players' games; in ``strength``)
    opponents: float | None = None  # the mean rating (today's scale) of the player's opponents in the event, which
    # c_r is read against: facing stronger opponents, honest players match the engine more
    time_control: str = "classical"  # the play c_r is of: classical, rapid or blitz (read against rapid play)
    time_control_source: str = "assumed"  # where it was read: "setting", "tag" or "assumed" (no tag)
    time_control_note: str = ""  # how a TimeControl tag that may be minutes or seconds was read
    notice_z: float | None = None  # the thresholds the level is read on (a table's chance count needs them)
    alert_z: float | None = None
    min_positions: int = 0


@dataclass(frozen=True)
class ScreeningRemoved(Outgoing):
    """A player-event whose only games were withdrawn: its screening row goes (arbiters only)."""

    kind: ClassVar[str] = "screening_removed"
    player: str
    event: str
    reason: str = ""


@dataclass(frozen=True)
class WorkerQuarantined(Outgoing):
    """An engine worker the monitor shut out (a spot check caught it lying): for arbiters only.

    Published on the arbiter-only ``arbiter_status`` channel when the engine bus quarantines a
    worker: which worker, why, and how many of its analyses were dropped from the cache and searched
    again by the others (``replaced``); ``line`` says it in one sentence for a screen. Keyed by the
    worker, so an arbiter who connects later finds it in the channel's snapshot. Public faces never
    see it: whether the numbers of a round were touched by a liar is for the arbiters to judge.

    >>> WorkerQuarantined.of("w7", "said +3000 where this machine found +20", 12).line
    'engine worker w7 quarantined: said +3000 where this machine found +20; its 12 answers replaced'
    """

    kind: ClassVar[str] = "quarantine"
    worker: str
    reason: str
    replaced: int
    line: str

    @classmethod
    def of(cls, worker: str, reason: str, replaced: int) -> WorkerQuarantined:
        """The message with its line."""
        answers = "answer" if replaced == 1 else "answers"
        return cls(worker, reason, replaced,
                   f"engine worker {worker} quarantined: {reason}; its {replaced} {answers} replaced")


@dataclass(frozen=True)
class MonitorStatus(Outgoing):
    """Feeds, engine backlog and lag, for the status line and ``livemon status``."""

    kind: ClassVar[str] = "status"
    feeds: tuple[dict[str, Any], ...] = ()
    backlog: int = 0
    searches: int = 0
    cache_hits: int = 0
    engine_profile: str = ""
    engines: int = 0
    lag_seconds: float = 0.0
    moves: int = 0
    games: int = 0
    ttt_refreshes: int = 0
    engine_lag_seconds: float = 0.0
    """How long the oldest position waiting for the pinned profile has waited (0: the engines keep up)."""


@dataclass(frozen=True)
class Moment(Outgoing):
    """A moment of a game as it happens: a blunder, a turning point, a lead change (``kinds``,
    :func:`livemon.live.audience.moment_kinds`, decided once every position up to it is valued, in ply order);
    the move, its class (``move_class``: lichess's, None for a good move or the engine's first choice;
    ``judgement``: "best" for the engine's first choice, "good", or the class), White's win% before and after it
    (``win_before``/``win_after``, the chart's), the mover's (``mover_win_before``/``mover_win_after``), the engine's
    best move there (None when the values came from the game's ``[%eval]``s), and the game: its players, event,
    round and board (``board``: from a round written ``R.B``, as lichess's broadcasts do; None otherwise).
    """

    kind: ClassVar[str] = "moment"
    game_id: str
    ply: int
    move_san: str
    kinds: tuple[str, ...]
    move_class: str | None
    win_before: float
    win_after: float
    best_move_san: str | None = None
    white: str = "?"
    black: str = "?"
    event: str = "?"
    round: str = "?"
    mover_win_before: float | None = None
    mover_win_after: float | None = None
    board: int | None = None
    judgement: str | None = None
    mover: str = "?"


@dataclass(frozen=True)
class MomentRemoved(Outgoing):
    """A moment whose ply a correction withdrew (or whose game its feed withdrew)."""

    kind: ClassVar[str] = "moment_removed"
    game_id: str
    ply: int
    reason: str = ""


@dataclass(frozen=True)
class EventForecast(Outgoing):
    """Who can still win one event: its final standings simulated from the games so far and in progress
    (``livemon.app.forecast_live``), most likely winner first.

    Each of ``players`` is ``{name, score, p_first, p_first_round_start, p_winner, p_top3, expected_score,
    max_score, needs}``: ``p_first_round_start`` is the chance of first at the first forecast of ``round`` (the
    change since the round began); ``needs`` the final score giving even chances of first (None: none
    reachable does). ``error`` is one line when the event cannot be forecast (a Swiss whose number of rounds
    is not configured); ``players`` is then empty.
    """

    kind: ClassVar[str] = "forecast"
    event: str
    format: str
    rounds: int | None
    rounds_left: int
    round: int
    simulations: int
    games_in_progress: int
    players: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()
    error: str | None = None
    points: str = FIDE_POINTS.label
    """What a win, a draw and a loss give, win-draw-loss (``[event] points``): every score of ``players`` is in
    these points."""


OUTGOING_CLASSES: tuple[type[Outgoing], ...] = (
    BoardState, BoardRemoved, PlayerEstimate, TTTRating, PlayerRemoved, Alert, ScreeningNumbers, ScreeningRemoved,
    WorkerQuarantined, MonitorStatus, Moment, MomentRemoved, EventForecast)
"""Every outgoing value class (the hub routes each, every face's codec writes each)."""
