"""What the live core asks its driver to do: the effects of :class:`livemon.live.core.LiveCore`.

The core decides; a driver (the asyncio monitor, ``export``, batch ``analyse``,
the TUI demo) applies. Each effect is a small frozen value; a driver that has
no use for one (``export`` does not persist) ignores it.

>>> from livemon.live.messages import GameInfo
>>> StoreGame(GameInfo("g")).info.game_id
'g'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import chess

from livemon.live.messages import Alert, GameInfo, MoveEvent, Outgoing


@dataclass(frozen=True)
class StoreGame:
    """Persist a game's tags (before anything else happens to it)."""

    info: GameInfo


@dataclass(frozen=True)
class StoreMove:
    """Persist a move: stored before it is analysed, so a restart loses nothing."""

    move: MoveEvent


@dataclass(frozen=True)
class DeleteMoves:
    """Withdraw a game's stored moves from ``from_ply`` on (a correction)."""

    game_id: str
    from_ply: int


@dataclass(frozen=True)
class DeleteGame:
    """Forget a game and its moves in the store (its feed withdrew it)."""

    game_id: str


@dataclass(frozen=True)
class StoreResult:
    """Persist a game's result."""

    game_id: str
    result: str


@dataclass(frozen=True, eq=False)
class Analyse:
    """Analyse position ``index`` of a game under the event's pinned profile; answer with
    :meth:`LiveCore.analysed`. Lower ``priority`` first (``-arrival``: the newest position first).

    ``board`` is the position (the core's own object: read it, never change it); ``token``
    tells the core which position it was (:meth:`~livemon.live.analysis.LiveGame.token`): an answer for a position that a
    correction replaced meanwhile is dropped.
    """

    game_id: str
    index: int
    board: chess.Board
    priority: float
    token: int = 0
    key: str | None = None
    """The position's cache key (:func:`~livemon.live.values.position_key`) as the core made it for its cache
    lookup, for the engine's request (None: made there)."""


@dataclass(frozen=True, eq=False)
class Preview:
    """A quick evaluation of a game's newest position, for the eval bar only, if the engine is
    backlogged; answer with :meth:`LiveCore.previewed`. Never reaches an estimate."""

    game_id: str
    index: int
    board: chess.Board
    token: int = 0


@dataclass(frozen=True)
class Publish:
    """Hand a message to the faces (the hub)."""

    message: Outgoing


@dataclass(frozen=True)
class RaiseAlert:
    """A screening level reached for the first time: store it, and publish it when the store says it is new."""

    alert: Alert
    level: str


@dataclass(frozen=True)
class RefreshTTT:
    """A game finished: a TrueSkill Through Time refresh is due (the driver debounces it)."""


@dataclass(frozen=True)
class Log:
    """One line for the log (``level``: a :mod:`logging` level)."""

    level: int
    text: str


Effect = Union[StoreGame, StoreMove, DeleteMoves, DeleteGame, StoreResult, Analyse, Preview, Publish, RaiseAlert, RefreshTTT, Log]
