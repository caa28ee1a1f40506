"""The one runner: a :class:`~livemon.live.core.LiveCore`, its inbox, and the one interpreter of its effects.

Sans I/O like the core (every port is handed in: a clock, a log, a store, an engine, a publisher), so the
faces' demo may drive it as well as the app; :mod:`livemon.app.runner` adds the asyncio engine port.

Every driver of the core is a :class:`Runner` with its own ports: the monitor (asyncio: the store, the
engine backend, the hub, the TTT worker), batch ``analyse``/``calibrate`` (an engine pool, nothing
persisted), ``export`` (the store's cache, nothing asked) and the TUI demo (no engine). What comes in —
a feed's message, an engine's answer, a timer tick, TTT ratings, a withdrawal, positions to forget — is an
event put in the inbox (:meth:`Runner.put`); :meth:`Runner.step` hands a batch of events to the core, in
order, carries out each one's effects (:meth:`Runner.apply`), then flushes the updates the batch held
(one estimate per player and one board message per game however many plies it scored) and carries those
out. The work a timer tick or a TTT refresh leaves (a whole round's players: :meth:`LiveCore.work`) is
done a unit at a time within the same steps, ahead of the events behind it. The core is configured before
any event (``LiveCore.configure``), its position cache among its settings: a position the cache holds is
scored inside the event that needed it; only a miss reaches the engine port, whose answer comes back as an
:class:`Answered` event.

>>> from livemon.live.messages import GameInfo, MoveEvent
>>> import chess
>>> core = LiveCore(profile="[%eval] comments")
>>> seen: list[Outgoing] = []
>>> runner = Runner(core, publish=seen.append)
>>> runner.put(GameInfo("g", white="A", black="B"))
>>> runner.put(MoveEvent("g", 1, "e2e4", "e4", chess.STARTING_FEN, eval_cp=20, start_eval_cp=15))
>>> runner.run_until_idle()
2
>>> [type(m).__name__ for m in seen]
['PlayerEstimate', 'BoardState']
"""

from __future__ import annotations

import logging
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, Union

from livemon.live.core import LiveCore
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
    Shelve,
    StoreGame,
    StoreMove,
    StoreResult,
)
from livemon.live.messages import Alert, GameInfo, Message, MoveEvent, Outgoing, TTTRating
from livemon.live.shelf import Shelf
from livemon.live.values import PositionAnalysis

__all__ = ["Answered", "EnginePort", "Event", "Forget", "Previewed", "Ratings", "Resume", "Runner", "StorePort",
           "Tick", "Unanswered"]


# -- what comes in ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Answered:
    """The engine's answer to an :class:`Analyse` effect: the analysis under ``profile``, or ``error``."""

    request: Analyse
    analysis: PositionAnalysis | None
    profile: str | None = None
    error: str | None = None


@dataclass(frozen=True, eq=False)
class Previewed:
    """A quick evaluation for a :class:`Preview` effect (the eval bar only)."""

    request: Preview
    analysis: PositionAnalysis | None


@dataclass(frozen=True)
class Tick:
    """The timer: Algorithm 3 and Algorithm 2 (:meth:`LiveCore.tick`)."""


@dataclass(frozen=True, eq=False)
class Ratings:
    """New TrueSkill Through Time ratings (the players a refresh moved)."""

    ratings: tuple[TTTRating, ...]


@dataclass(frozen=True, eq=False)
class Forget:
    """Analyses not to be trusted any more (a quarantined worker's): their plies scored again."""

    keys: tuple[str, ...]
    reason: str


@dataclass(frozen=True, eq=False)
class Resume:
    """The stored games of a restart (or of an export): nothing persisted again."""

    stored: list[tuple[GameInfo, str, list[MoveEvent]]] = field(default_factory=list)


Event = Union[Message, Answered, Previewed, Tick, Ratings, Forget, Resume]


# -- ports --------------------------------------------------------------------------------


class EnginePort(Protocol):
    """Where positions the cache lacks go; each answer comes back as an :class:`Answered` event."""

    def submit(self, request: Analyse, /) -> None: ...

    def preview(self, request: Preview, /) -> None: ...


class StorePort(Protocol):
    """What the core persists (the monitor's :class:`~livemon.io.store.RunnerStore`)."""

    def put_game(self, info: GameInfo, /) -> None: ...

    def put_move(self, move: MoveEvent, /) -> None: ...

    def put_result(self, game_id: str, result: str, /) -> None: ...

    def delete_moves(self, game_id: str, from_ply: int, /) -> None: ...

    def delete_game(self, game_id: str, /) -> None: ...

    def put_alert(self, alert: Alert, level: str, raised_at: float, /) -> bool: ...


class Unanswered:
    """An engine port that asks nobody: the requests are kept (``requests``), their positions stay awaited
    (``export``: what the cache lacks; the demo's board with no analysis)."""

    def __init__(self) -> None:
        self.requests: list[Analyse] = []

    def submit(self, request: Analyse) -> None:
        self.requests.append(request)

    def preview(self, request: Preview) -> None:
        return None


def _silent(level: int, text: str) -> None:
    """The log port of a runner given none."""


# -- the runner ---------------------------------------------------------------------------


class Runner:
    """A core, its inbox and its ports; :meth:`apply` is the one interpreter of the core's effects.

    Ports left out are not there: without ``store`` nothing is persisted (an alert is new each time it is
    raised), without ``publish`` nothing is published, without ``shelf`` a finished game's packed records
    stay in memory, without ``log`` nothing is said. ``clock`` (seconds since the epoch) dates the alerts
    the store keeps. ``strict``: an event that fails raises (batch runs, tests); else it is logged and the
    next event goes on (the monitor: a bad message must not stop a round).
    """

    def __init__(self, core: LiveCore, *, engine: EnginePort | None = None, store: StorePort | None = None,
                 publish: Callable[[Outgoing], object] | None = None, ttt_wanted: Callable[[], object] | None = None,
                 log: Callable[[int, str], None] = _silent, clock: Callable[[], float] | None = None,
                 shelf: Shelf | None = None, strict: bool = True) -> None:
        self.core = core
        self.engine: EnginePort = engine if engine is not None else Unanswered()
        self.store = store
        self.publish = publish
        self.ttt_wanted = ttt_wanted
        self.log = log
        if store is not None and clock is None:
            raise ValueError("a runner with a store needs a clock (the alerts' times)")
        self.clock = clock
        self.shelf = shelf
        self.strict = strict
        self.inbox: deque[Event] = deque()
        self._unflushed = False  # events handed since the last flush
        self.wake: Callable[[], None] | None = None
        """Told when an event is put in an empty inbox (the monitor's task that steps the runner)."""

    # -- in ---------------------------------------------------------------------------

    def put(self, event: Event) -> None:
        """One event for the next :meth:`step`."""
        self.inbox.append(event)
        if self.wake is not None and len(self.inbox) == 1:
            self.wake()

    def put_all(self, events: Iterable[Event]) -> None:
        for event in events:
            self.put(event)

    # -- a turn -----------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Work is left for :meth:`step`: events in the inbox, the core's owed work (:meth:`LiveCore.work`), or a
        flush owed."""
        return bool(self.inbox) or self.core.owed or self._unflushed

    def step(self, max_events: int | None = None, stop: Callable[[], bool] | None = None, flush: bool = True) -> int:
        """Hand up to ``max_events`` units of work (or until ``stop()`` says so, after one at least) to the core —
        a unit of its owed work (:meth:`LiveCore.work`: what a tick or a TTT refresh left, done first), else an
        event — each one's effects carried out in order, then flush once what they held (``flush`` False: the
        next step does, so a caller handing a burst one event at a time flushes it once). Returns how many units
        were done."""
        n = 0
        core = self.core
        while (self.inbox or core.owed) and (max_events is None or n < max_events):
            if core.owed:
                self._work()
            else:
                self._one(self.inbox.popleft())
            n += 1
            if stop is not None and stop():
                break
        if n:
            self._unflushed = True
        if flush and self._unflushed:
            self._unflushed = False
            self.apply(self.core.flush())
        return n

    def run_until_idle(self) -> int:
        """Step until no work is left (an engine port that answers at once answers within); returns the units
        done."""
        n = 0
        while self.busy:
            n += self.step()
        return n

    def _one(self, event: Event) -> None:
        try:
            self.apply(self._handed(event))
        except Exception:
            self._failed(event)

    def _work(self) -> None:
        try:
            self.apply(self.core.work(1))
        except Exception:
            self._failed("a unit of the work a tick or a TTT refresh left")

    def _failed(self, event: object) -> None:
        if self.strict:
            raise
        self.log(logging.ERROR, f"could not handle {_what(event)}:\n{traceback.format_exc().rstrip()}")

    def _handed(self, event: Event) -> list[Effect]:
        core = self.core
        if isinstance(event, Answered):
            return core.analysed(event.request, event.analysis, event.profile, error=event.error)
        if isinstance(event, Previewed):
            return core.previewed(event.request, event.analysis)
        if isinstance(event, Tick):
            return core.tick()
        if isinstance(event, Ratings):
            return core.ttt_ratings(event.ratings)
        if isinstance(event, Forget):
            return core.forget(event.keys, event.reason)
        if isinstance(event, Resume):
            return core.resume(event.stored)
        return core.handle(event)

    # -- out: the one interpreter -----------------------------------------------------

    def apply(self, effects: list[Effect]) -> None:
        """Carry out the core's effects, in order (a move is stored before anything else happens to it)."""
        store, publish = self.store, self.publish
        for e in effects:
            if isinstance(e, Publish):
                if publish is not None:
                    publish(e.message)
            elif isinstance(e, Analyse):  # a position the cache does not hold (the core asked it first)
                self.engine.submit(e)
            elif isinstance(e, StoreMove):
                if store is not None:
                    store.put_move(e.move)
            elif isinstance(e, StoreGame):
                if store is not None:
                    store.put_game(e.info)
            elif isinstance(e, StoreResult):
                if store is not None:
                    store.put_result(e.game_id, e.result)
            elif isinstance(e, DeleteMoves):
                if store is not None:
                    store.delete_moves(e.game_id, e.from_ply)
            elif isinstance(e, DeleteGame):
                if store is not None:
                    store.delete_game(e.game_id)
            elif isinstance(e, Preview):
                self.engine.preview(e)
            elif isinstance(e, RaiseAlert):
                if store is None or store.put_alert(e.alert, e.level, self.clock() if self.clock else 0.0):
                    # no name or number here: the log is not an arbiters' channel
                    self.log(logging.INFO, f"screening: a {e.level} was raised (for arbiters: the alerts channel)")
                    if publish is not None:
                        publish(e.alert)
            elif isinstance(e, RefreshTTT):
                if self.ttt_wanted is not None:
                    self.ttt_wanted()
            elif isinstance(e, Shelve):
                if self.shelf is not None:
                    self.core.shelve(e.game_id, self.shelf)  # a finished game's records out of memory
            elif isinstance(e, Log):
                self.log(e.level, e.text)


def _what(event: object) -> str:
    if isinstance(event, str):  # what failed, said in words
        return event
    if isinstance(event, Answered):
        return f"the answer for game {event.request.game_id} position {event.request.index}"
    return repr(event)
