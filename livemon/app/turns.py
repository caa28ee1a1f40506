"""One budget of work per event-loop turn, shared by the monitor's background tasks.

The monitor's tasks each do work in small units (the runner's steps: feeds' messages, engine answers,
units of the work a tick or a TTT refresh leaves, :meth:`~livemon.live.core.LiveCore.work`; the feeds' parsing) and let the loop run between
slices. Were each task to take a slice of its own, a turn in which four of them were ready would
run four slices, then the web face's fan-out, and the loop's lag would be their sum (``bench/turns``
times the turns). So one :class:`TurnBudget` is shared: every task adds what its unit cost, and
once the turn has spent the budget, each yields after its next unit (at least one unit a turn
each, so none starves).

A turn is told from the next by a callback: the first spending in a turn schedules a reset with
``loop.call_soon``, which runs in the next turn, ahead of the tasks that yielded after it. Nothing
is scheduled while nobody spends, so an idle loop stays idle.

>>> budget = TurnBudget(0.010)
>>> budget.spend(0.004), budget.spend(0.004), budget.spend(0.004)  # outside a loop: one long turn
(False, False, True)
>>> async def two_turns():
...     budget = TurnBudget(0.010)
...     spent = [budget.spend(0.012)]
...     await asyncio.sleep(0)  # the next turn: the reset ran first
...     return spent + [budget.spend(0.004)]
>>> asyncio.run(two_turns())
[True, False]
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["TurnBudget"]


class TurnBudget:
    """Seconds of background work allowed per loop turn, shared by every task that spends from it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self._armed = False

    def spend(self, seconds: float) -> bool:
        """Count ``seconds`` of work done in this turn; True once the turn's budget is spent (yield now)."""
        if not self._armed:
            try:
                asyncio.get_running_loop().call_soon(self._reset)
                self._armed = True
            except RuntimeError:  # no loop (a script): one long turn
                pass
        self.spent += seconds
        return self.spent >= self.seconds

    def _reset(self) -> None:
        self.spent = 0.0
        self._armed = False

    async def pause(self, started: float) -> float:
        """Spend the time since ``started`` (``time.perf_counter()``); yield to the loop if the turn's
        budget is gone. Returns the new start (now)."""
        now = time.perf_counter()
        if self.spend(now - started):
            await asyncio.sleep(0)
            now = time.perf_counter()
        return now
