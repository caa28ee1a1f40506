"""A game's life: one state machine, one transition table — sans I/O.

A game is in one of five states (:class:`GameState`) and moves between them on five events
(:class:`GameEvent`); :data:`TRANSITIONS` is the whole of it, and an event a state does not
accept raises :class:`LifecycleError` naming both. The core asks a game's :class:`GameLife`
what it may do (``life.can(GameEvent.SETTLE)``) and tells it what happened
(``life.send(...)``); nothing else records where a game is in its life.

- **live**: moves come; the game's positions and analyses are held while its plies are scored.
- **finished**: a final result is in (``1-0``, ``0-1``, ``1/2-1/2``); plies may still await an analysis.
- **settled**: finished and every ply scored: its positions and analyses are released and its
  moves and scored plies kept as packed columns (:mod:`livemon.live.plies`). A result taken
  back leaves it settled: its records change only when a move or a correction comes.
- **archived**: settled, its columns moved to the log's archive (the driver's shelf); read back
  from there when something rare needs them.
- **reopened**: a settled or archived game corrected or continued: its positions are rebuilt
  from its moves; it settles again at the timer (:meth:`~livemon.live.core.LiveCore.tick`), not
  at once, so a burst of corrections does not pack and unpack it at every one.

>>> life = GameLife()
>>> [life.send(e).value for e in (GameEvent.RESULT, GameEvent.SETTLE, GameEvent.ARCHIVE, GameEvent.REOPEN)]
['finished', 'settled', 'archived', 'reopened']
>>> life.can(GameEvent.ARCHIVE), life.released
(False, False)
>>> life.send(GameEvent.ARCHIVE)
Traceback (most recent call last):
livemon.live.lifecycle.LifecycleError: a reopened game cannot be archived (settle it first)
"""

from __future__ import annotations

import enum

from livemon.errors import LivemonError


class GameState(enum.Enum):
    """Where a game is in its life (see the module docstring)."""

    LIVE = "live"
    FINISHED = "finished"
    SETTLED = "settled"
    ARCHIVED = "archived"
    REOPENED = "reopened"


class GameEvent(enum.Enum):
    """What happens to a game."""

    RESULT = "given a final result"
    UNFINISH = "have its result taken back"
    SETTLE = "settle"
    ARCHIVE = "be archived"
    REOPEN = "be reopened"


_S, _E = GameState, GameEvent
_FINISHED, _SETTLED, _ARCHIVED = GameState.FINISHED, GameState.SETTLED, GameState.ARCHIVED
"""The states the live path asks about on every move, read once here: a member read through its enum class
costs ~0.5 µs (an attribute of the class's metaclass; a member's hash is a Python method too), a module global
a dict lookup."""

TRANSITIONS: dict[tuple[GameState, GameEvent], GameState] = {
    # a final result, or one taken back (a result corrected leaves a released game's records as they are)
    (_S.LIVE, _E.RESULT): _S.FINISHED,
    (_S.LIVE, _E.UNFINISH): _S.LIVE,
    (_S.FINISHED, _E.RESULT): _S.FINISHED,
    (_S.FINISHED, _E.UNFINISH): _S.LIVE,
    (_S.SETTLED, _E.RESULT): _S.SETTLED,
    (_S.SETTLED, _E.UNFINISH): _S.SETTLED,
    (_S.ARCHIVED, _E.RESULT): _S.ARCHIVED,
    (_S.ARCHIVED, _E.UNFINISH): _S.ARCHIVED,
    (_S.REOPENED, _E.RESULT): _S.REOPENED,
    (_S.REOPENED, _E.UNFINISH): _S.REOPENED,
    # finished with every ply scored: its positions released, its records packed
    (_S.FINISHED, _E.SETTLE): _S.SETTLED,
    (_S.REOPENED, _E.SETTLE): _S.SETTLED,
    # the packed records to the archive
    (_S.SETTLED, _E.ARCHIVE): _S.ARCHIVED,
    # a move or a correction of a released game: its positions rebuilt
    (_S.SETTLED, _E.REOPEN): _S.REOPENED,
    (_S.ARCHIVED, _E.REOPEN): _S.REOPENED,
}
"""(state, event) -> the next state; a pair not here is illegal."""

_WHY: dict[GameEvent, str] = {
    GameEvent.SETTLE: "it needs a final result and every ply scored",
    GameEvent.ARCHIVE: "settle it first",
    GameEvent.REOPEN: "only a settled or archived game is",
}


class LifecycleError(LivemonError):
    """An event the game's state does not accept (a bug in the caller: the core asks :meth:`GameLife.can` first)."""


class GameLife:
    """One game's state; :meth:`send` moves it by :data:`TRANSITIONS`.

    >>> life = GameLife()
    >>> life.state, life.finished
    (<GameState.LIVE: 'live'>, False)
    >>> life.send(GameEvent.SETTLE)
    Traceback (most recent call last):
    livemon.live.lifecycle.LifecycleError: a live game cannot settle (it needs a final result and every ply scored)
    """

    __slots__ = ("state",)

    def __init__(self, state: GameState = GameState.LIVE) -> None:
        self.state = state

    def can(self, event: GameEvent) -> bool:
        """Whether :meth:`send` accepts ``event`` now."""
        return (self.state, event) in TRANSITIONS

    def send(self, event: GameEvent) -> GameState:
        """The game's state after ``event`` (:class:`LifecycleError` when its state does not accept it)."""
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            why = _WHY.get(event)
            raise LifecycleError(f"a {self.state.value} game cannot {event.value}" + (f" ({why})" if why else ""))
        self.state = new
        return new

    @property
    def finished(self) -> bool:
        """Finished and its positions held (it settles once every ply is scored)."""
        return self.state is _FINISHED

    @property
    def released(self) -> bool:
        """Settled or archived: its positions released, its records packed (a move or a correction reopens it)."""
        state = self.state
        return state is _SETTLED or state is _ARCHIVED

    @property
    def archived(self) -> bool:
        return self.state is _ARCHIVED

    def __repr__(self) -> str:
        return f"GameLife({self.state.value})"
