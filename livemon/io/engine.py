"""The UCI engine adapter: one MultiPV analysis per position, named by an engine profile.

Every evaluation is named by an :class:`~livemon.live.values.EngineProfile`
(engine id and version, search limit, MultiPV; the value lives in
:mod:`livemon.live.values` so that nothing needs this module to read it). An analysis is run on the position alone (no move
history, hash cleared, one thread) so that it depends on nothing but the
position and the profile: that is what makes the position cache honest.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from typing import Any

import chess
import chess.engine

from livemon.config import EngineConfig
from livemon.live.values import EngineProfile, PositionAnalysis, position_key
from livemon.errors import LivemonError
from livemon.rating.evaluation import score_cp

__all__ = ["EngineError", "EngineProfile", "PositionAnalysis", "UciEngine", "analysis_board", "position_key",
           "resolve_engine_path", "search_limit"]

log = logging.getLogger(__name__)


class EngineError(LivemonError, RuntimeError):
    """The engine is missing, died, or answered nonsense; the message says which."""


def search_limit(profile: EngineProfile) -> chess.engine.Limit:
    """The python-chess search limit of a profile.

    >>> search_limit(EngineProfile("SF", None, 5000, 4))
    Limit(nodes=5000)
    """
    if profile.nodes:
        return chess.engine.Limit(nodes=profile.nodes)
    return chess.engine.Limit(depth=profile.depth)


def _retrieve(task: "asyncio.Future[Any]") -> None:
    """Mark a future's outcome as seen: a background search (it may end after its caller gave up), a killed
    engine's command or its AnalysisResult (:meth:`UciEngine.kill`)."""
    if not task.cancelled():
        task.exception()


def analysis_board(board: chess.Board) -> chess.Board:
    """The position exactly as the engine sees it: no history, move counters reset.

    The cache key leaves the counters out, so the search must not depend on them
    either: Stockfish scales its evaluation by the halfmove clock (rule 50), and
    the same position reached at different clocks would otherwise get whichever
    evaluation was cached first. The cost: rule-50 proximity is ignored.

    >>> analysis_board(chess.Board("8/8/8/4k3/8/8/4K3/7R w - - 37 80")).fen()
    '8/8/8/4k3/8/8/4K3/7R w - - 0 1'
    """
    position = chess.Board(board.fen(), chess960=board.chess960)
    position.halfmove_clock, position.fullmove_number = 0, 1
    return position


def resolve_engine_path(path: str) -> str:
    """An executable path for ``path`` (absolute, relative or on PATH), or EngineError."""
    found = path if os.path.isfile(path) and os.access(path, os.X_OK) else shutil.which(path)
    if not found:
        raise EngineError(
            f"UCI engine not found at {path!r}: install it (Debian: apt-get install stockfish) "
            "or set engine.path in config.toml"
        )
    return found


class UciEngine:
    """One UCI engine process driven with python-chess's asyncio API.

    Use :meth:`open`; then :meth:`analyse` positions; :meth:`close` at the end.
    """

    def __init__(self, protocol: chess.engine.UciProtocol, transport: Any, profile: EngineProfile, cfg: EngineConfig):
        self._protocol = protocol
        self._transport = transport
        self.profile = profile
        self._cfg = cfg
        self.searches = 0

    @classmethod
    async def open(cls, cfg: EngineConfig) -> "UciEngine":
        """Start an engine process and configure it.

        Each attempt must finish within ``cfg.start_timeout`` (an engine that hangs while starting is
        killed); a failed attempt is logged (one line) and retried after 1 s, 2 s, 4 s … up to
        ``cfg.start_attempts`` tries; then EngineError. The process gets its own process group, so a
        SIGINT/SIGTERM meant for livemon (Ctrl-C, systemd) does not kill it under the pool's feet:
        the pool quits it in order.
        """
        path = resolve_engine_path(cfg.path)
        delay = 1.0
        for attempt in range(1, cfg.start_attempts + 1):
            try:
                return await cls._open_once(path, cfg)
            except EngineError as exc:
                error = str(exc)
            if attempt == cfg.start_attempts:
                raise EngineError(f"cannot start UCI engine {path!r} ({attempt} attempts): {error}")
            log.warning("engine %s did not start (attempt %d/%d): %s; retrying in %gs",
                        path, attempt, cfg.start_attempts, error, delay)
            await asyncio.sleep(delay)
            delay = min(2 * delay, 30.0)
        raise EngineError(f"cannot start UCI engine {path!r}: start_attempts is {cfg.start_attempts}")

    @classmethod
    async def _open_once(cls, path: str, cfg: EngineConfig) -> "UciEngine":
        """One start: spawn, then the UCI handshake and options within ``cfg.start_timeout`` (else killed and reaped)."""
        try:
            transport, protocol = await chess.engine.UciProtocol.popen(path, setpgrp=True)
        except OSError as exc:
            raise EngineError(exc.strerror or str(exc)) from None
        engine = cls(protocol, transport, EngineProfile("?", None, None, 1), cfg)

        async def handshake() -> None:
            await protocol.initialize()
            options = {"Threads": cfg.threads, "Hash": cfg.hash_mb}
            await protocol.configure({k: v for k, v in options.items() if k in protocol.options})

        try:
            await asyncio.wait_for(handshake(), cfg.start_timeout)
        except asyncio.TimeoutError:
            await engine.kill()
            raise EngineError(f"no answer to the UCI handshake within {cfg.start_timeout:g}s") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as exc:
            await engine.kill()
            raise EngineError(f"it failed in the UCI handshake: {exc}") from None
        except BaseException:  # cancelled (the monitor stops): no process left behind
            await engine.kill()
            raise
        name = protocol.id.get("name", os.path.basename(path))
        engine.profile = EngineProfile(name, None if cfg.nodes else cfg.depth, cfg.nodes, cfg.multipv)
        return engine

    async def analyse(self, board: chess.Board, profile: EngineProfile | None = None) -> PositionAnalysis:
        """Analyse the position of ``board`` (its history is ignored) under ``profile``."""
        profile = profile or self.profile
        position = analysis_board(board)
        # The search runs as its own task that is never cancelled: cancelling python-chess's
        # analyse mid-search breaks its bookkeeping (1.11: InvalidStateError when the engine
        # then dies, and the exit is never reported). A hung engine is killed instead.
        search = asyncio.ensure_future(
            self._protocol.analyse(position, search_limit(profile), multipv=profile.multipv, game=object())
        )
        search.add_done_callback(_retrieve)
        done, _ = await asyncio.wait({search}, timeout=self._cfg.timeout)
        if not done:
            log.warning("engine %d: search over %ss, killing it", self.pid, self._cfg.timeout)
            await self.kill()
            raise EngineError(f"engine search timed out after {self._cfg.timeout}s on {position.fen()}")
        try:
            infos = search.result()
        except chess.engine.EngineError as exc:
            raise EngineError(f"engine failed on {position.fen()}: {exc}") from None
        except chess.engine.EngineTerminatedError as exc:
            raise EngineError(f"engine died on {position.fen()}: {exc}") from None
        self.searches += 1
        candidates = []
        for info in infos:
            if "pv" not in info or not info["pv"] or "score" not in info:
                continue
            candidates.append((info["pv"][0].uci(), score_cp(info["score"].white())))
        if not candidates:
            raise EngineError(f"engine returned no line for {position.fen()}")
        best = infos[0]
        return PositionAnalysis(candidates[0][1], tuple(candidates), int(best.get("depth", 0)), int(best.get("nodes", 0)))

    @property
    def pid(self) -> int:
        """The engine's process id (for status lines and tests)."""
        return int(self._transport.get_pid())

    @property
    def alive(self) -> bool:
        """False once the process has exited (crashed, killed or quit)."""
        return self._transport.get_returncode() is None and not self._protocol.returncode.done()

    async def kill(self) -> None:
        """Kill the process at once and wait until it is reaped: the way out of a hung engine.

        The commands python-chess still had under way fail with EngineTerminatedError when
        the process goes; nobody waits for them any more (their callers were cancelled or
        gave up), so their outcome is marked seen here — else asyncio logs "Future exception
        was never retrieved" for an engine killed on purpose. An analysis killed before its
        ``go`` (waiting for ``readyok`` after ``ucinewgame``) is failed by python-chess 1.11
        but its command never is: that command is failed here, so the task awaiting it ends.
        """
        commands = [c for c in (self._protocol.command, self._protocol.next_command) if c is not None]
        for command in commands:
            for fut in (command.result, command.finished):
                fut.add_done_callback(_retrieve)  # seen whenever it ends, however many turns that takes
        if self._transport.get_returncode() is None:
            try:
                self._transport.kill()
            except ProcessLookupError:
                pass
        for _ in range(500):  # the child watcher reaps it within milliseconds
            if self._transport.get_returncode() is not None:
                break
            await asyncio.sleep(0.01)
        else:
            log.error("engine process %d did not exit after SIGKILL", self.pid)
        self._transport.close()
        # python-chess has failed its commands once it saw the exit (its returncode future)
        await asyncio.wait({self._protocol.returncode}, timeout=1)
        for command in commands:
            analysis = getattr(command, "analysis", None)  # started (before or after the kill): its AnalysisResult
            if analysis is not None:
                analysis._finished.add_done_callback(_retrieve)
            if not command.result.done():
                command.result.set_exception(chess.engine.EngineTerminatedError("engine process killed"))

    async def close(self) -> None:
        """Ask the engine to quit; kill it if it has not within 5 s (or is already gone).

        The quit is never cancelled: cancelling python-chess's command leaves its result
        future to fail unseen when the process then dies ("Future exception was never
        retrieved" in the log at every slow shutdown). It runs as a task whose outcome is
        always retrieved, and is given a moment to see the kill.
        """
        quitting = asyncio.ensure_future(self._protocol.quit())
        quitting.add_done_callback(_retrieve)
        done, _ = await asyncio.wait({quitting}, timeout=5)
        if not done or quitting.cancelled() or quitting.exception() is not None:
            await self.kill()
            await asyncio.wait({quitting}, timeout=2)
