"""The monitor's tasks share one budget of work per event-loop turn (livemon.app.turns: loop lag)."""

from __future__ import annotations

import asyncio
import time

from livemon.app.turns import TurnBudget


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def test_three_tasks_share_one_budget_a_turn_and_none_starves():
    """Three tasks of 2 ms units on a 8 ms budget: a turn runs about the budget and one more unit of each
    other task, not 3 x 8 ms as with a slice per task; every task advances in every turn it is ready."""
    budget = TurnBudget(0.008)
    turn = 0
    work: dict[int, float] = {}
    units: dict[str, list[int]] = {"a": [], "b": [], "c": []}
    done = False

    async def ticker() -> None:  # one step a turn: numbers the turns
        nonlocal turn
        while not done:
            turn += 1
            await asyncio.sleep(0)

    async def worker(name: str) -> None:
        started = time.perf_counter()
        for _ in range(40):
            busy(0.002)
            units[name].append(turn)
            work[turn] = work.get(turn, 0.0) + 0.002
            started = await budget.pause(started)

    tick = asyncio.create_task(ticker())
    await asyncio.gather(worker("a"), worker("b"), worker("c"))
    done = True
    await tick
    assert max(work.values()) <= 0.008 + 3 * 0.002 + 1e-9, work  # the budget, then one unit each
    assert len(work) >= 120 * 0.002 / 0.014  # the 240 ms of work took many turns
    for turns in units.values():  # each task moved on in every turn until it finished
        assert sorted(set(turns)) == list(range(turns[0], turns[-1] + 1))


async def test_an_idle_loop_schedules_nothing():
    """Nobody spends: no reset callback is pending, so the loop can sleep."""
    budget = TurnBudget(0.008)
    loop = asyncio.get_running_loop()
    assert not budget.spend(0.001)
    await asyncio.sleep(0)
    assert budget.spent == 0.0
    assert not [h for h in loop._ready if not h.cancelled()]  # nothing left ready: the loop may block in select
