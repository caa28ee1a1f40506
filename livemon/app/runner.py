"""The runner driven on an event loop: :func:`run_until_idle` (batch ``analyse`` and ``calibrate``).

The :class:`~livemon.live.runner.Runner` is sans I/O (:mod:`livemon.live.runner`); its asyncio engine port is
:class:`~livemon.io.engine_port.AsyncEngine`. The monitor steps its runner itself, within its loop turns'
budget (:mod:`livemon.app.monitor`).
"""

from __future__ import annotations

import asyncio

from livemon.io.engine_port import AsyncEngine
from livemon.live.runner import Runner

__all__ = ["AsyncEngine", "Runner", "run_until_idle"]


async def run_until_idle(runner: Runner, engine: AsyncEngine) -> None:
    """Step the runner until its inbox is empty and the engine owes no answer."""
    wake = asyncio.Event()
    runner.wake = wake.set
    try:
        while True:
            runner.run_until_idle()
            if not engine.pending and not runner.inbox:
                return
            wake.clear()
            if not runner.inbox:
                await wake.wait()
    finally:
        runner.wake = None
