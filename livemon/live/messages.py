"""Typed messages that travel along the pipeline's arrows.

Every message is a frozen dataclass with ``to_json``/``from_json`` so that the
same objects can cross an in-process queue or an MQTT broker unchanged.

>>> m = MoveEvent(game_id="g1", ply=1, uci="e2e4", san="e4",
...               fen_before="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
>>> MoveEvent.from_json(m.to_json()) == m
True
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="Message")


class Message:
    """Mixin: JSON round trip for a frozen dataclass, tagged with its kind."""

    kind: ClassVar[str] = "message"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)  # type: ignore[call-overload]
        d["kind"] = self.kind
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls: type[T], d: dict[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in d.items() if k in names})

    @classmethod
    def from_json(cls: type[T], text: str | bytes) -> T:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class GameInfo(Message):
    """The tags of a game that the estimators and faces need."""

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


@dataclass(frozen=True)
class MoveEvent(Message):
    """One ply of a game, as read from a feed.

    ``ply`` counts from 1 (1 = White's first move). ``fen_before`` is the full
    FEN of the position the move was played from. ``eval_cp`` is an ``[%eval]``
    comment after the move (White's view, centipawns, mates mapped), if any.
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


# -- outgoing: what the monitor publishes to the faces (TUI, WebSocket, MQTT) --


@dataclass(frozen=True)
class BoardState(Message):
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


@dataclass(frozen=True)
class PlayerEstimate(Message):
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
    gain_histogram: dict[str, int] | None = None  # sparse {gain: count}, for the histogram plot
    performance: dict[str, Any] | None = None  # the headline: rating.performance.Performance.to_dict()


@dataclass(frozen=True)
class TTTRating(Message):
    """A player's latest TrueSkill Through Time posterior (β = 1 units and Elo scale)."""

    kind: ClassVar[str] = "ttt"
    name: str
    mu: float
    sigma: float
    elo: float  # mu on the Elo scale of the fit
    elo_sigma: float
    games: int


@dataclass(frozen=True)
class Alert(Message):
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
class ScreeningRow(Message):
    """A player's fair-play screening numbers in one event (``livemon.live.screener``): for arbiters only.

    Published on the arbiter-only ``screening`` channel after every screened
    move, so arbiters see the whole table, not only the alerts. z's are None
    when undefined (no rating yet, no variance).
    """

    kind: ClassVar[str] = "screening"
    player: str
    event: str
    rating: float | None
    rating_source: str
    c_r: float | None
    positions: int
    excluded: dict[str, int]
    matches_observed: int
    matches_expected: float
    matches_sd: float
    z_match: float | None
    p_match: float | None
    z_match_normal: float | None
    loss_observed: float
    loss_expected: float
    loss_sd: float
    z_loss: float | None
    statistic: str
    z: float | None
    roi: float | None
    z_scale: float = 1.0
    level: str | None = None


@dataclass(frozen=True)
class MonitorStatus(Message):
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
