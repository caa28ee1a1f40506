"""What the commentary screen knows: the latest message per board, player, alert.

A plain object (no Textual, no asyncio) so that the hub's messages can be
folded in and the screen's orderings checked without an app. :meth:`apply`
says whether anything changed, which is how the app updates only the widgets
that need it.

>>> from livemon.live.messages import PlayerEstimate, TTTRating
>>> s = LiveState()
>>> s.apply(PlayerEstimate("A", 2500, 10, -12.0, 0.4, -70.0, 2930.0))
('player', 'A')
>>> s.apply(PlayerEstimate("A", 2500, 10, -12.0, 0.4, -70.0, 2930.0)) is None  # same again
True
>>> s.apply(TTTRating("B", 1.0, 0.2, 2810.0, 40.0, 9))
('ttt', 'B')
>>> [p.name for p in s.players_sorted("perceived")], [p.name for p in s.players_sorted("ttt")]
(['A', 'B'], ['B', 'A'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from livemon.faces.hub import OUTGOING, ROUTES
from livemon.live.messages import (Alert, BoardState, EventForecast, Message, Moment, MonitorStatus, Outgoing,
                                   PlayerEstimate, ScreeningNumbers, TTTRating)
from livemon.faces.tui.format import finite

#: the player orderings ``s`` cycles through: key -> label
SORTS: dict[str, str] = {
    "estimate": "estimate",
    "alone": "estimate from the moves alone",
    "perceived": "perceived Elo (diagnostic)",
    "ttt": "TTT μ (rating from results)",
    "elo": "rating",
    "moves": "moves analysed",
    "name": "name",
}

RESEARCH_SORTS = frozenset({"perceived", "ttt", "moves"})
"""The orderings by a research figure: ``s`` offers them only while the research panel is open (``r``)."""

Change = tuple[str, str]  # (kind, key) of the message that changed the state: ("board", game_id), ("status", "")…


@dataclass(frozen=True)
class PlayerRow:
    """One line of the players table: a player's estimate and TTT rating, either may be missing."""

    name: str
    estimate: PlayerEstimate | None
    ttt: TTTRating | None

    @property
    def elo(self) -> int | None:
        return self.estimate.elo if self.estimate else None

    @property
    def perceived(self) -> float | None:
        return self.estimate.perceived_elo if self.estimate else None

    @property
    def headline(self) -> dict[str, Any] | None:
        """The headline (``QualityEstimate.to_dict()``: in this field once there is one, else the moves alone; an
        older monitor's ``performance`` block when it sends none), or None before the first message."""
        if not self.estimate:
            return None
        return self.estimate.estimate or self.estimate.performance

    @property
    def headline_elo(self) -> float | None:
        e = self.headline
        return None if e is None else e.get("elo")

    @property
    def alone(self) -> dict[str, Any] | None:
        """The estimate from the moves alone (no results, no prior), with its own ``display``."""
        return self.estimate.moves_estimate if self.estimate else None

    @property
    def performance(self) -> dict[str, Any] | None:
        """The E(c) performance map's estimate (``Performance.to_dict()``): a diagnostic beside the headline."""
        return self.estimate.performance if self.estimate else None

    @property
    def moves(self) -> int:
        return self.estimate.moves if self.estimate else 0

    @property
    def display(self) -> dict[str, Any] | None:
        """Whether the headline may be shown (``estimate_display``), None before the first message."""
        return self.estimate.display if self.estimate else None


def _desc(value: Callable[[PlayerRow], float | None]) -> Callable[[PlayerRow], tuple[int, float, str]]:
    """Sort key: highest first, players without a finite value last, ties by name."""

    def key(row: PlayerRow) -> tuple[int, float, str]:
        v = value(row)
        return (0, -v, row.name) if finite(v) else (1, 0.0, row.name)  # type: ignore[operator]

    return key


_SORT_KEYS: dict[str, Callable[[PlayerRow], tuple[int, float, str]]] = {
    "estimate": _desc(lambda r: r.headline_elo),
    "alone": _desc(lambda r: (r.alone or {}).get("elo")),
    "perceived": _desc(lambda r: r.perceived),
    "ttt": _desc(lambda r: r.ttt.elo if r.ttt else None),
    "elo": _desc(lambda r: r.elo),
    "moves": _desc(lambda r: r.moves),
    "name": lambda r: (0, 0.0, r.name),
}


def _round(text: str) -> tuple[int, ...]:
    """``"4.10"`` → (4, 10), so that board 10 follows board 2; unknown parts sort first."""
    return tuple(int(p) if p.isdigit() else -1 for p in text.split("."))


def alert_key(alert: Alert) -> str:
    """The alert's table key (player NUL event): its hub key."""
    return ROUTES["alert"].key(alert)


class LiveState:
    """Latest boards, player estimates, TTT ratings, status and alerts: the latest message per kind and key.

    Every outgoing message kind has its table (``latest[kind][key]``), so a
    new message kind is kept without an edit here; the properties name the
    tables the screen shows.
    """

    def __init__(self) -> None:
        self.latest: dict[str, dict[str, Outgoing]] = {kind: {} for kind in OUTGOING}

    def _table(self, kind: str) -> dict[str, Any]:
        return self.latest.setdefault(kind, {})

    @property
    def boards(self) -> dict[str, BoardState]:
        return self._table(BoardState.kind)

    @property
    def estimates(self) -> dict[str, PlayerEstimate]:
        return self._table(PlayerEstimate.kind)

    @property
    def ttt(self) -> dict[str, TTTRating]:
        return self._table(TTTRating.kind)

    @property
    def alerts(self) -> dict[str, Alert]:
        return self._table(Alert.kind)

    @property
    def screening(self) -> dict[str, ScreeningNumbers]:
        return self._table(ScreeningNumbers.kind)

    @property
    def moments(self) -> dict[str, Moment]:
        return self._table(Moment.kind)

    @property
    def status(self) -> MonitorStatus | None:
        return self._table(MonitorStatus.kind).get("")

    def apply(self, msg: Message) -> Change | None:
        """Fold in one message; the change it made (its kind and key), or None when it changed nothing.

        A removal takes its key out of the tables of the kinds it removes (a withdrawn board leaves the list):

        >>> from livemon.live.messages import BoardRemoved
        >>> s = LiveState()
        >>> _ = s.apply(BoardState("g", "W", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 0))
        >>> s.apply(BoardRemoved("g", "no longer listed")), s.boards, s.apply(BoardRemoved("g"))
        (('board', 'g'), {}, None)
        """
        r = ROUTES.get(msg.kind) if isinstance(msg, Outgoing) else None
        if r is None or type(msg) is not r.cls:
            return None  # a message the screen does not show
        key = r.key(msg)
        if r.removes:
            gone = [kind for kind in r.removes if self._table(kind).pop(key, None) is not None]
            return (gone[0], key) if gone else None
        table = self._table(msg.kind)
        if table.get(key) == msg:  # equality ignores ts: the same state sent again
            return None
        table[key] = msg  # type: ignore[assignment]
        return (msg.kind, key)

    def reset(self, messages: Iterable[Message]) -> None:
        """Start again from a snapshot (after the hub dropped messages for us)."""
        self.latest = {kind: {} for kind in OUTGOING}
        for msg in messages:
            self.apply(msg)

    # -- orderings ---------------------------------------------------------------

    def boards_ordered(self) -> list[BoardState]:
        """Live games by round and board, then finished ones, latest round first.

        A fixed order (not the order of the last update) keeps a board in its
        place while the reader looks at the list.

        >>> s = LiveState()
        >>> for gid, rnd, res in [("a", "3.2", "1-0"), ("b", "4.10", "*"), ("c", "4.2", "*"), ("d", "2.1", "0-1")]:
        ...     _ = s.apply(BoardState(gid, "W", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 0, result=res, round=rnd))
        >>> [b.game_id for b in s.boards_ordered()]
        ['c', 'b', 'a', 'd']
        """
        live = sorted((b for b in self.boards.values() if b.result == "*"), key=lambda b: (_round(b.round), b.game_id))
        done = sorted((b for b in self.boards.values() if b.result != "*"), key=lambda b: (_round(b.round), b.game_id))
        return live + done[::-1]

    def player_names(self) -> list[str]:
        names = dict.fromkeys(self.estimates)
        names.update(dict.fromkeys(self.ttt))
        return list(names)

    def player(self, name: str) -> PlayerRow:
        return PlayerRow(name, self.estimates.get(name), self.ttt.get(name))

    def players_sorted(self, sort: str) -> list[PlayerRow]:
        """Every player with an estimate or a TTT rating, in the order ``sort`` names."""
        return sorted((self.player(n) for n in self.player_names()), key=_SORT_KEYS[sort])

    def screening_ordered(self) -> list[tuple[str, ScreeningNumbers]]:
        """Every screened player-event, highest z first (not yet rated last)."""
        return sorted(self.screening.items(), key=lambda kv: (kv[1].z is None, -(kv[1].z or 0.0), kv[0]))

    def forecast_shown(self) -> EventForecast | None:
        """The forecast to show: of the event with the most players (a forecast that could not be made, when
        that is all there is)."""
        forecasts = list(self._table(EventForecast.kind).values())
        if not forecasts:
            return None
        return max(forecasts, key=lambda f: (len(f.players), f.event))

    def moments_ordered(self) -> list[Moment]:
        """The round's moments, newest first (in the order they came)."""
        return list(self.moments.values())[::-1]

    def alerts_ordered(self) -> list[Alert]:
        """Strongest signal first."""
        return sorted(self.alerts.values(), key=lambda a: (-a.z, a.player))
