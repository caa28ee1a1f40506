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
import signal
import time
from collections import deque
from typing import Any

import chess
import chess.engine

from livemon.config import EngineConfig
from livemon.live.values import EngineProfile, PositionAnalysis, position_key
from livemon.errors import FAULTS, LivemonError
from livemon.rating.evaluation import score_cp

__all__ = ["EngineError", "EngineProfile", "PositionAnalysis", "UciEngine", "analysis_board", "check_info_line",
           "position_key", "resolve_engine_path", "search_limit"]

log = logging.getLogger(__name__)

MAX_ENGINE_CP = 100_000
"""The largest centipawn score an answer may carry: a real engine's largest (a tablebase win) is about
a tenth of it; beyond is a broken or hostile engine, and its answer is refused, not clamped."""

STDERR_LINES = 5
"""Lines of an engine's stderr kept (the last ones, for the message of its failure); the rest is read and dropped."""

STDERR_LINE_CHARS = 200
"""Characters kept of each stderr line."""

MAX_LINE_BYTES = 64 * 1024
"""Longest stdout line an engine may send; a longer one (or endless bytes without a newline) is a fault."""

MAX_MULTIPV = 500
"""The most lines a search may give (Stockfish's own limit): a larger ``multipv`` number is a fault, not a list
that long."""


class _QuietChessLog(logging.Filter):
    """python-chess logs a line for each piece of engine output it cannot parse: an engine that writes
    junk in a loop would fill the log. Let through the first few of each kind a minute; count the rest."""

    def __init__(self, per_minute: int = 3) -> None:
        super().__init__()
        self.per_minute = per_minute
        self._seen: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        now = time.monotonic()
        start, n = self._seen.get(str(record.msg), (now, 0))
        if now - start > 60:
            start, n = now, 0
        self._seen[str(record.msg)] = (start, n + 1)
        if n >= self.per_minute:
            FAULTS.count("engine.output_dropped")
            return False
        return True


_chess_log = logging.getLogger("chess.engine")
if not any(isinstance(f, _QuietChessLog) for f in _chess_log.filters):
    _chess_log.addFilter(_QuietChessLog())


def _legal(board: chess.Board, uci: str) -> chess.Move | None:
    """The move ``uci`` if it is legal in ``board`` (python-chess's reading of UCI moves), else None."""
    try:
        move = board.parse_uci(uci.lower())
    except ValueError:
        return None
    return move if move else None


def pv_line_number(line: str) -> int | None:
    """The ``multipv`` number of an ``info`` line with a ``pv`` (1 when it gives none), or None for an ``info``
    line without one (a ``currmove``, a ``string``, a mate-in-0 score): which of the search's lines it updates.

    >>> pv_line_number("info depth 9 seldepth 12 multipv 3 score cp 20 nodes 900 pv e2e4 e7e5")
    3
    >>> pv_line_number("info depth 9 score cp 20 pv e2e4"), pv_line_number("info depth 13 currmove e2e4")
    (1, None)
    >>> pv_line_number("info string pv of the multipv 2 line"), pv_line_number("info multipv x pv e2e4")
    (None, 0)
    >>> pv_line_number("info multipv " + "9" * 5000 + " pv e2e4"), pv_line_number("info multipv ² pv e2e4")
    (0, 0)
    """
    tokens = line.split()
    if "pv" not in tokens:
        return None
    head = tokens[: tokens.index("pv")]
    if "string" in head:  # the rest of the line is text
        return None
    if "multipv" in head:
        raw = head[head.index("multipv") + 1] if head[-1] != "multipv" else ""
        return int(raw) if raw.isdecimal() and len(raw) <= 6 else 0  # else check_info_line refuses it at once
    return 1


def check_info_line(board: chess.Board, line: str) -> str | None:
    """Why an engine's ``info`` or ``bestmove`` line about ``board`` cannot be taken, or None when it can.

    Checked: every move of a ``pv`` is legal in turn, ``currmove`` and ``bestmove`` are legal, a score is
    an integer of at most :data:`MAX_ENGINE_CP` centipawns or a mate in a nonzero number of moves (a
    position being searched is not mate), ``multipv`` a positive integer of at most :data:`MAX_MULTIPV`. Other
    info fields are left to python-chess. What a refusal quotes of the line is cut at 20 characters.

    >>> b = chess.Board()
    >>> check_info_line(b, "info depth 3 multipv 1 score cp 20 nodes 30 pv e2e4 e7e5")
    >>> check_info_line(b, "info depth 3 score cp 20 pv e2e5")
    'illegal pv move e2e5'
    >>> check_info_line(b, "info depth 3 score cp 999999999999 pv e2e4")
    'score cp 999999999999 beyond 100000'
    >>> check_info_line(b, "info score cp " + "9" * 4000 + " pv e2e4")  # a line says what was refused, cut short
    'score cp 99999999999999999999 beyond 100000'
    >>> check_info_line(b, "info depth 3 score mate 0 pv e2e4")
    'score mate 0 in a position that is not mate'
    >>> check_info_line(b, "bestmove a1a8"), check_info_line(b, "bestmove g1f3 ponder e7e5")
    ('illegal bestmove a1a8', None)
    >>> check_info_line(b, "info depth 3 multipv 100000000 score cp 20 pv e2e4")
    'multipv 100000000 beyond 500'
    >>> check_info_line(b, "info multipv " + "9" * 5000 + " pv e2e4"), check_info_line(b, "info multipv ² pv e2e4")
    ('multipv 99999999999999999999 beyond 500', "multipv '²' is not a positive integer")
    >>> check_info_line(b, "info string anything at all")
    """
    tokens = line.split()
    if not tokens:
        return None
    if tokens[0] == "bestmove":
        if len(tokens) < 2 or _legal(board, tokens[1]) is None:
            return f"illegal bestmove {tokens[1][:20] if len(tokens) > 1 else '(missing)'}"
        return None
    if tokens[0] != "info" or (len(tokens) > 1 and tokens[1] == "string"):
        return None
    i = 1
    while i < len(tokens):
        field = tokens[i]
        if field == "string":
            return None
        if field == "score":
            kind = tokens[i + 1] if i + 1 < len(tokens) else ""
            raw = tokens[i + 2] if i + 2 < len(tokens) else ""
            try:
                value = int(raw)
            except ValueError:
                return f"score {kind[:20]} {raw[:20]!r} is not an integer"
            if kind == "cp":
                if abs(value) > MAX_ENGINE_CP:
                    return f"score cp {raw[:20]} beyond {MAX_ENGINE_CP}"
            elif kind == "mate":
                if value == 0 and not board.is_checkmate():
                    return "score mate 0 in a position that is not mate"
            else:
                return f"score of unknown kind {kind[:20]!r}"
            i += 3
            continue
        if field == "multipv":
            raw = tokens[i + 1] if i + 1 < len(tokens) else ""
            digits = raw.lstrip("0")
            if not raw.isdecimal() or not digits:
                return f"multipv {raw[:20]!r} is not a positive integer"
            if len(digits) > 3 or int(digits) > MAX_MULTIPV:  # (a 5,000-digit number is not even read)
                return f"multipv {raw[:20]} beyond {MAX_MULTIPV}"
            i += 2
            continue
        if field == "currmove":
            raw = tokens[i + 1] if i + 1 < len(tokens) else ""
            if _legal(board, raw) is None:
                return f"illegal currmove {raw[:20]}"
            i += 2
            continue
        if field == "pv":
            position = board.copy(stack=False)
            i += 1
            if i >= len(tokens):
                return "empty pv"
            while i < len(tokens) and chess.engine.UCI_REGEX.match(tokens[i]):
                move = _legal(position, tokens[i])
                if move is None:
                    return f"illegal pv move {tokens[i][:20]}"
                position.push(move)
                i += 1
            continue
        i += 1
    return None


class _GuardedUci(chess.engine.UciProtocol):
    """python-chess's UCI protocol with a guard on what the engine sends.

    - a search's lines with a ``pv`` are held, the latest of each ``multipv`` line only, and handed on when its
      ``bestmove`` comes: the search's result is made of those lines alone, and an engine sends ~12 of each
      (one per depth), each costing ~0.4 ms to check and as much for python-chess to read, on the event loop;
      each line's first move is kept from the line checked (:attr:`first_moves`), so python-chess reads no pv;
    - every ``info``/``bestmove`` line handed on is checked (:func:`check_info_line`) before python-chess sees it;
      the first bad one sets :attr:`fault` (the search is then refused) and nothing of it is used;
    - the process's exit, or the end of its stdout, sets :attr:`gone` at once (python-chess notices a
      death only when every pipe has closed, and not at all for a search waiting on ``readyok``);
    - stderr is read as it comes and dropped but for its last :data:`STDERR_LINES` lines, cut to
      :data:`STDERR_LINE_CHARS` characters (an engine that writes to stderr costs no memory and no log);
    - a stdout line over :data:`MAX_LINE_BYTES` is a fault, not a growing buffer.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fault: asyncio.Future[str] = self.loop.create_future()
        self.gone: asyncio.Future[str] = self.loop.create_future()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_LINES)
        self.stderr_bytes = 0
        self._held: dict[int, str] = {}  # multipv -> the latest line with a pv, of the search being run
        self._held_for: object = None  # that search (python-chess's command)
        self.first_moves: dict[int, str] = {}
        """multipv -> the first move of its last line, of the search that ended last: checked here, so
        python-chess is asked for no pv (it would read each line's whole pv again)."""

    def _refuse(self, why: str) -> None:
        if not self.fault.done():
            self.fault.set_result(why)

    def _end(self, why: str) -> None:
        if not self.gone.done():
            self.gone.set_result(why)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if fd == 2:
            raw = data.encode() if isinstance(data, str) else data
            self.stderr_bytes += len(raw)
            buf = self.buffer[2]
            buf.extend(raw)
            *lines, rest = bytes(buf).split(b"\n")
            for line in lines[-STDERR_LINES:]:
                text = line.rstrip(b"\r").decode("utf-8", "replace")[:STDERR_LINE_CHARS]
                if text:
                    self.stderr_tail.append(text)
            self.buffer[2] = bytearray(rest[:STDERR_LINE_CHARS])
            return
        if self.fault.done():  # refused: the rest of its output is not read into anything
            self.buffer[fd].clear()
            return
        super().pipe_data_received(fd, data)
        if len(self.buffer[fd]) > MAX_LINE_BYTES:
            self.buffer[fd].clear()
            self._refuse(f"a line of over {MAX_LINE_BYTES} bytes")

    def _line_received(self, line: str) -> None:
        if self.fault.done():
            return
        if self.command is not None and line.startswith(("info", "bestmove")):
            if self._held_for is not self.command:
                self._held, self._held_for = {}, self.command
            if line.startswith("info"):
                line_no = pv_line_number(line)
                if line_no is not None and 0 < line_no <= MAX_MULTIPV:  # else refused at once, when handed on
                    self._held[line_no] = line
                    return
            else:
                held, self._held = self._held, {}
                self.first_moves = {}
                for line_no in sorted(held):
                    if self._hand_on(held[line_no]):
                        tokens = held[line_no].split()
                        self.first_moves[line_no] = tokens[tokens.index("pv") + 1]  # a pv is never empty here
            self._hand_on(line)
            return
        super()._line_received(line)

    def _hand_on(self, line: str) -> bool:
        """``line`` to python-chess once checked (True); a bad one refuses the search instead (False)."""
        if self.fault.done():
            return False
        problem = check_info_line(self.board, line)
        if problem is not None:
            self._refuse(problem)
            return False
        super()._line_received(line)
        return True

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._end("its stdout closed")
        super().pipe_connection_lost(fd, exc)

    def process_exited(self) -> None:
        code = self.transport.get_returncode() if self.transport is not None else None
        self._end(f"it exited (code {code})")
        super().process_exited()


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

    def __init__(self, protocol: _GuardedUci, transport: Any, profile: EngineProfile, cfg: EngineConfig):
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
            transport, protocol = await _GuardedUci.popen(path, setpgrp=True)
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
            self._protocol.analyse(position, search_limit(profile), multipv=profile.multipv, game=object(),
                                   info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE)  # pv: first_moves
        )
        search.add_done_callback(_retrieve)
        fault, gone = self._protocol.fault, self._protocol.gone
        watched: set[asyncio.Future[Any]] = {search, fault, gone}
        await asyncio.wait(watched, timeout=self._cfg.timeout, return_when=asyncio.FIRST_COMPLETED)
        if fault.done():
            FAULTS.count("engine.refused")
            await self.kill()
            raise EngineError(f"engine answer refused ({fault.result()}) on {position.fen()}")
        if gone.done() and not search.done():
            # an exit at the end of a search may come with its last lines still in the pipe
            await asyncio.wait({search}, timeout=0.1)
            if not search.done() or search.exception() is not None:
                FAULTS.count("engine.died")
                await self.kill()
                raise EngineError(f"engine died ({gone.result()}{self._stderr_note()}) on {position.fen()}")
        if not search.done():
            FAULTS.count("engine.timeout")
            log.warning("engine %d: search over %ss, killing it", self.pid, self._cfg.timeout)
            await self.kill()
            raise EngineError(f"engine search timed out after {self._cfg.timeout}s on {position.fen()}")
        try:
            infos = search.result()
        except chess.engine.EngineTerminatedError as exc:  # (an EngineError too: caught first)
            FAULTS.count("engine.died")
            raise EngineError(f"engine died on {position.fen()}: {exc}{self._stderr_note()}") from None
        except chess.engine.EngineError as exc:
            FAULTS.count("engine.refused")
            raise EngineError(f"engine failed on {position.fen()}: {exc}") from None
        self.searches += 1
        try:
            return self._checked(position, infos, self._protocol.first_moves)
        except EngineError:
            FAULTS.count("engine.refused")
            raise

    @staticmethod
    def _checked(position: chess.Board, infos: list[chess.engine.InfoDict], first_moves: dict[int, str]
                 ) -> PositionAnalysis:
        """The analysis of ``infos`` (line k's first move in ``first_moves[k]``), or EngineError when it is not a
        legal, finite analysis of ``position``."""
        candidates: list[tuple[str, int]] = []
        mate: int | None = None  # the best line's distance to mate (moves, White's view), for display
        for line_no, info in enumerate(infos, start=1):
            first = first_moves.get(line_no)
            if first is None or "score" not in info:
                continue
            move = _legal(position, first)  # python-chess's reading (e1h1 castling is e1g1), as a pv's would be
            if move is None:
                raise EngineError(f"engine answer refused (illegal move {first[:20]}) on {position.fen()}")
            score = info["score"].white()
            if score.is_mate():
                if score.mate() == 0 and not position.is_checkmate():
                    raise EngineError(f"engine answer refused (mate 0, not mate) on {position.fen()}")
            else:
                cp = score.score()
                if not isinstance(cp, int) or abs(cp) > MAX_ENGINE_CP:
                    raise EngineError(f"engine answer refused (score cp {cp}) on {position.fen()}")
            if any(m == move.uci() for m, _ in candidates):
                raise EngineError(f"engine answer refused (move {move.uci()} in two lines) on {position.fen()}")
            if not candidates and score.is_mate():
                mate = score.mate()
            candidates.append((move.uci(), score_cp(score)))
        if not candidates:
            raise EngineError(f"engine returned no line for {position.fen()}")
        best = infos[0]
        return PositionAnalysis(candidates[0][1], tuple(candidates), int(best.get("depth", 0)),
                                int(best.get("nodes", 0)), mate)

    def _stderr_note(self) -> str:
        """The engine's last stderr lines, for the message of its failure ("" when it wrote none)."""
        tail = self._protocol.stderr_tail
        return f"; its stderr ended: {' | '.join(tail)}" if tail else ""

    @property
    def stderr_bytes(self) -> int:
        """Bytes the engine has written to stderr (read and dropped but for the last lines)."""
        return self._protocol.stderr_bytes

    @property
    def pid(self) -> int:
        """The engine's process id (for status lines and tests)."""
        return int(self._transport.get_pid())

    @property
    def alive(self) -> bool:
        """False once the process has exited (crashed, killed or quit)."""
        p = self._protocol
        return self._transport.get_returncode() is None and not (p.returncode.done() or p.gone.done() or p.fault.done())

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
        try:  # its process group (its own, see open): a child it started, holding its pipes, goes with it
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
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
