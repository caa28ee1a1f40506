"""The runner's engine port on an asyncio engine backend (the embedded pool or the bus).

:class:`AsyncEngine` sends each position the core's cache lacks to an
:class:`~livemon.io.backend.EngineBackend` and puts the answer (or the failure) in the
:class:`~livemon.live.runner.Runner`'s inbox, where the runner's next step hands it to the core.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from livemon.live.effects import Analyse, Preview
from livemon.live.runner import Answered, Previewed, Runner

log = logging.getLogger(__name__)

__all__ = ["AsyncEngine"]


class AsyncEngine:
    """An engine port on an asyncio backend (:class:`~livemon.io.backend.EngineBackend`): each request a task
    that puts the answer (or the failure) in the runner's inbox. ``pending``: requests not answered yet."""

    def __init__(self, backend: Any, runner: Runner | None = None,
                 answered: Callable[[Analyse], None] | None = None) -> None:
        self.backend = backend
        self.runner = runner
        self.answered = answered
        self.tasks: set[asyncio.Task[None]] = set()
        self.pending = 0
        """Requests whose answer is not in the inbox yet."""

    def submit(self, request: Analyse) -> None:
        self.pending += 1
        self._spawn(self._analyse(request), f"analyse {request.game_id}:{request.index}")

    def preview(self, request: Preview) -> None:
        if getattr(self.backend, "previewing", False):  # a task only when a quick search may run
            self._spawn(self._preview(request), f"preview {request.game_id}:{request.index}")

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed: %r", task.get_name(), task.exception(), exc_info=task.exception())

    async def _analyse(self, request: Analyse) -> None:
        assert self.runner is not None  # noqa: S101 - set before the first request
        try:
            answer = await self.backend.submit(request.board, priority=request.priority, key=request.key)
        except Exception as exc:
            event = Answered(request, None, error=str(exc))
        else:
            event = Answered(request, answer.analysis, answer.profile.name)
        self.pending -= 1
        self.runner.put(event)
        if self.answered is not None:
            self.answered(request)

    async def _preview(self, request: Preview) -> None:
        assert self.runner is not None  # noqa: S101 - set before the first request
        try:
            answer = await self.backend.preview(request.board)
        except Exception as exc:  # a preview is a nicety: its failure costs nothing but a line
            log.info("game %s: no quick preview of position %d: %s", request.game_id, request.index, exc)
            return
        if answer is not None:
            self.runner.put(Previewed(request, answer.analysis))
