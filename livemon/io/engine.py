"""The UCI engine adapter: one MultiPV analysis per position, named by an engine profile.

An :class:`EngineProfile` (engine id and version, search limit, MultiPV) names
every evaluation, because a score or a c̄ only means something for the engine
and limit that produced it. An analysis is run on the position alone (no move
history, hash cleared, one thread) so that it depends on nothing but the
position and the profile: that is what makes the position cache honest.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
from dataclasses import dataclass
from typing import Any

import chess
import chess.engine

from livemon.config import EngineConfig
from livemon.errors import LivemonError
from livemon.rating.evaluation import score_cp

log = logging.getLogger(__name__)


class EngineError(LivemonError, RuntimeError):
    """The engine is missing, died, or answered nonsense; the message says which."""


@dataclass(frozen=True)
class EngineProfile:
    """What an evaluation depends on: engine, version, limit and MultiPV.

    >>> EngineProfile("Stockfish 15.1", depth=12, nodes=None, multipv=4).name
    'Stockfish 15.1 depth=12 multipv=4'
    """

    engine: str
    depth: int | None
    nodes: int | None
    multipv: int

    @property
    def name(self) -> str:
        limit = f"nodes={self.nodes}" if self.nodes else f"depth={self.depth}"
        return f"{self.engine} {limit} multipv={self.multipv}"

    def limit(self) -> chess.engine.Limit:
        if self.nodes:
            return chess.engine.Limit(nodes=self.nodes)
        return chess.engine.Limit(depth=self.depth)

    def with_limit(self, depth: int | None = None, nodes: int | None = None) -> "EngineProfile":
        """The same engine and MultiPV at another search limit."""
        return EngineProfile(self.engine, depth, nodes, self.multipv)


@dataclass(frozen=True)
class PositionAnalysis:
    """One MultiPV analysis of a position.

    ``score`` is the evaluation of the position (the best line), White's view,
    centipawns, mates at ±3900. ``candidates`` are the MultiPV first moves with
    their scores on the same scale, best first: the best serves the gain, all
    serve the E(c) posterior.
    """

    score: int
    candidates: tuple[tuple[str, int], ...]
    depth: int = 0
    nodes: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {"score": self.score, "candidates": self.candidates, "depth": self.depth, "nodes": self.nodes},
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> "PositionAnalysis":
        d = json.loads(text)
        return cls(d["score"], tuple((m, int(s)) for m, s in d["candidates"]), d["depth"], d["nodes"])

    def candidates_for_mover(self, white_to_move: bool) -> list[tuple[str, float]]:
        """Candidates as (uci, value in pawns from the mover's view), the agent's input."""
        sign = 1 if white_to_move else -1
        return [(move, sign * cp / 100.0) for move, cp in self.candidates]


def _retrieve(task: "asyncio.Future[Any]") -> None:
    """Mark a background search's outcome as seen (it may end after its caller gave up)."""
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
    position = chess.Board(board.fen())
    position.halfmove_clock, position.fullmove_number = 0, 1
    return position


def position_key(board: chess.Board) -> str:
    """The cache key of a position: its EPD (FEN without the move counters).

    >>> position_key(chess.Board())
    'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -'
    """
    return board.epd()


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
            self._protocol.analyse(position, profile.limit(), multipv=profile.multipv, game=object())
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
        """Kill the process at once and wait until it is reaped: the way out of a hung engine."""
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

    async def close(self) -> None:
        try:
            await asyncio.wait_for(self._protocol.quit(), timeout=5)
        except Exception:  # already dead or hung: make sure the process is gone
            await self.kill()
