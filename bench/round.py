"""A whole round live, end to end: N boards through real feeds, workers, mosquitto and WebSocket clients.

What runs (every part real, each in its own process where its CPU must be its own):

- **the round** (this process): N concurrent boards built from real games
  (``--engine cache``: the calibration collection, ``--games`` or ``$LIVEMON_CALIBRATION_GAMES``;
  ``--engine depth``: ``tests/data``, or the folders of ``--data``), each
  board its own game ids (``GameURL``) and players (the source names with `` b<k>``);
  a board plays one move every 30–60 s of event time (uniform), time compressed by
  ``--compression``; a finished game shows its result, and a minute of event time later
  the board starts its next game (new id, the same two players, colours swapped), so
  the number of live boards stays N and finished games pile up as in a long event (the
  polled PGN keeps listing them, as a relay's round does: a game it dropped would be withdrawn);
- **two feed servers** (this process, plain asyncio HTTP/1.1): half the boards in one
  multi-game PGN rewritten as the round progresses and polled by an ``http`` feed (ETag,
  304 when unchanged, as a lichess relay serves it), the other half as the lichess-style
  round ``stream`` (every game once, then a game's whole PGN each time it changes);
- **the monitor**: ``livemon serve`` (a subprocess: its CPU, RSS and loop lag are its own)
  with both feeds, the web face, its store, the bus in ``mqtt`` mode;
- **mosquitto** and ``--workers`` real ``livemon worker`` processes. ``--engine cache``
  (the default): the 382 calibration games analysed at Stockfish 15.1 depth 12
  (``bench/data/calibration_d12.jsonl.gz``) are the source games and the workers' stores
  hold their analyses, so every position goes monitor → broker → worker → broker →
  monitor and is answered from the worker's cache: what is measured is livemon and the
  bus, not Stockfish, under the shipped, calibrated profile (performance estimates and
  screening on). ``--engine depth --depth 2``: every source game, searched live;
- **WebSocket clients**: ``--clients`` real ``websockets`` clients in
  ``--client-procs`` processes, subscribed to ``games`` and ``players``; each delta's
  publish→receipt latency from its ``ts`` (one clock: the same machine).

It prints: moves/s through the monitor (offered and handled), monitor CPU per move
(from /proc: the engine is in other processes), peak RSS and RSS over time (first vs
second half, the second half's slope), event-loop lag p50/p99/max (the monitor's own
probe, ``loop_lag`` in ``livemon status --json``, window = the round), publish→client
latency p50/p95/p99, plies lost/duplicated (the monitor's store against what the servers
fed), positions/s answered per worker, and each goal as met / NOT met and by how much,
with ``os.getloadavg()`` before and after.

    python bench/round.py                                  # 1,000 boards, 20x, 5 minutes, 500 clients
    python bench/round.py --boards 1000 --compression 20 --minutes 5 --clients 500
    python bench/round.py --quick                          # smoke: 50 boards, 1 minute, 50 clients
    python bench/round.py --quick --engine depth --depth 2                     # the repository's games alone

Measured (docs/round.md; the README sums it up): 1,000 boards at 20x (441 moves/s offered), 500
clients, batched frames, load 2.9-5.2: the monitor handled every ply offered (435-438
moves/s, caught up 0.8-2.0 s after the end; 3.6 at the first run), 1.9 ms CPU per move, 0 plies
lost or duplicated, loop lag p99 130-150 ms, client p95 613-751 ms (every 10th client timed; the
clients' processes used ~95 s of CPU in 120 s), RSS peak ~465 MiB growing with the analyses waiting
(the bus answered ~100 positions/s inside the round). ``--web-process``: the web face in its own
process (monitor 1.45 ms a move, the child 0.9 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import hashlib
import heapq
import io
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Iterator

import chess
import chess.pgn

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = [REPO / "tests" / "data"]
CACHE_EXPORT = REPO / "bench" / "data" / "calibration_d12.jsonl.gz"
CACHE_PROFILE_DEPTH = 12
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
STOCKFISH = os.environ.get("LIVEMON_STOCKFISH", "/usr/games/stockfish")
SITE = "https://round.bench.invalid"
PAUSE = 60.0
"""Event seconds between a game's result and the board's next game."""

GOAL_MOVES = 500.0
GOAL_LAG_P99 = 50.0
GOAL_RSS_MB = 1024.0
GOAL_P95 = 100.0
GOAL_FLAT = 0.05
"""RSS counts as flat over the second half when it grows by less than 5% of itself there."""


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


# -- the source games ----------------------------------------------------------------------------


@dataclass
class Source:
    """A real game: its players, moves and the PGN token of each ply (with its clock comment if any)."""

    white: str
    black: str
    white_elo: str
    black_elo: str
    ucis: list[str]
    tokens: list[str]
    result: str
    analyses: list[Any] | None = None  # cache mode: the export's rows, one per position


def _source_of(game: chess.pgn.Game, min_plies: int) -> Source | None:
    if game.errors or game.headers.get("FEN") or game.headers.get("Variant", "Standard") not in ("Standard", ""):
        return None
    board = game.board()
    ucis, tokens = [], []
    for node in game.mainline():
        san = board.san(node.move)
        num = f"{board.fullmove_number}. " if board.turn == chess.WHITE else ""
        clk = node.clock()
        comment = ""
        if clk is not None:
            s = int(clk)
            comment = f" {{[%clk {s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}]}}"
        tokens.append(f"{num}{san}{comment}")
        ucis.append(node.move.uci())
        board.push(node.move)
    if len(ucis) < min_plies:
        return None
    h = game.headers
    return Source(h.get("White", "?"), h.get("Black", "?"), h.get("WhiteElo", ""), h.get("BlackElo", ""),
                  ucis, tokens, h.get("Result", "*"))


def pgn_sources(folders: list[Path], want: int, min_plies: int = 20) -> list[Source]:
    """Up to ``want`` games of the PGN files in ``folders`` (file by file, in name order)."""
    out: list[Source] = []
    for folder in folders:
        for path in sorted(folder.glob("*.pgn")):
            with open(path, encoding="utf-8", errors="replace") as f:
                while len(out) < want:
                    game = chess.pgn.read_game(f)
                    if game is None:
                        break
                    src = _source_of(game, min_plies)
                    if src is not None:
                        out.append(src)
            if len(out) >= want:
                return out
    return out


def cached_sources(folder: Path, export: Path = CACHE_EXPORT) -> list[Source]:
    """The calibration games of the depth-12 export, with their analyses (bench/calibration_data.py); ``folder``
    holds the collection's PGN files (not in the repository: only their analyses are)."""
    texts: dict[tuple[str, int], str] = {}
    for path in sorted(folder.glob("A*.pgn")):
        chunks = path.read_text(encoding="ascii").split("\n\n[Event")
        for i, chunk in enumerate(chunks, 1):
            texts[(path.name, i)] = chunk if i == 1 else "[Event" + chunk
    out = []
    with gzip.open(export, "rt", encoding="utf-8") as f:
        json.loads(f.readline())
        for line in f:
            row = json.loads(line)
            game = chess.pgn.read_game(io.StringIO(texts[(row["file"], row["index"])]))
            src = _source_of(game, 1) if game is not None else None
            if src is not None:
                src.analyses = row["a"]
                out.append(src)
    return out


def warm_store(path: Path, sources: list[Source], profile: str) -> int:
    """A worker's store holding every analysis of ``sources`` under ``profile``; returns the count."""
    from livemon.io.engine import position_key
    from livemon.io.store import Store
    from livemon.live.values import PositionAnalysis

    n = 0
    seen: set[str] = set()
    with Store(path) as store:
        store.engine.db.execute("BEGIN")
        for src in sources:
            board = chess.Board()
            rows = src.analyses or []
            for j, row in enumerate(rows):
                if j > 0:
                    board.push(chess.Move.from_uci(src.ucis[j - 1]))
                if row is None:
                    continue
                key = position_key(board)
                if key in seen:
                    continue
                seen.add(key)
                a = PositionAnalysis(int(row[0]), tuple((m, int(s)) for m, s in row[1]), int(row[2]))
                store.analyses.put(key, profile, a)
                n += 1
        store.engine.db.execute("COMMIT")
    return n


# -- the round -----------------------------------------------------------------------------------


@dataclass
class Board:
    """One board of the round: its players and its current game."""

    k: int
    white: str
    black: str
    white_elo: str
    black_elo: str
    feed: str  # "http" or "stream"
    game_no: int = 0
    source: Source | None = None
    shown: int = 0
    finished: bool = False
    text: str = ""
    archive: list[str] = field(default_factory=list)  # the board's finished games, as a relay keeps listing them

    @property
    def game_id(self) -> str:
        return f"{SITE}/b{self.k}/g{self.game_no}"

    def render(self) -> str:
        src = self.source
        assert src is not None
        swap = self.game_no % 2 == 1
        white, black = (self.black, self.white) if swap else (self.white, self.black)
        welo, belo = (self.black_elo, self.white_elo) if swap else (self.white_elo, self.black_elo)
        result = src.result if self.finished else "*"
        tags = [("Event", "Round bench Olympiad"), ("Site", SITE), ("Round", f"{self.game_no + 1}.{self.k + 1}"),
                ("White", white), ("Black", black), ("WhiteElo", welo), ("BlackElo", belo),
                ("Result", result), ("GameURL", self.game_id)]
        head = "\n".join(f'[{t} "{v}"]' for t, v in tags if v)
        moves = " ".join(src.tokens[: self.shown])
        self.text = f"{head}\n\n{moves} {result}\n".replace("\n\n ", "\n\n")
        return self.text


class Round:
    """The boards, the event clock and what was fed (the truth the store is compared with)."""

    def __init__(self, sources: list[Source], boards: int, compression: float, seed: int = 1) -> None:
        self.sources = sources
        self.compression = compression
        self.rng = random.Random(seed)
        self.boards: list[Board] = []
        self.next_source = 0
        for k in range(boards):
            src = self._take()
            feed = "http" if k % 2 == 0 else "stream"
            b = Board(k, f"{src.white} b{k}", f"{src.black} b{k}", src.white_elo, src.black_elo, feed, source=src)
            b.render()
            self.boards.append(b)
        # the first move of each board within its first interval
        self.heap = [(self.rng.uniform(0, 45.0), k) for k in range(boards)]
        heapq.heapify(self.heap)
        self.fed: dict[str, list[str]] = {b.game_id: [] for b in self.boards}
        self.results: dict[str, str] = {}
        self.plies = 0
        self.version = {"http": 0, "stream": 0}
        self.changed: list[Board] = []

    def _take(self) -> Source:
        src = self.sources[self.next_source % len(self.sources)]
        self.next_source += 1
        return src

    def advance(self, event_t: float) -> None:
        """Every move, result and new game due by ``event_t``; changed boards go to ``changed``."""
        while self.heap and self.heap[0][0] <= event_t:
            t, k = heapq.heappop(self.heap)
            b = self.boards[k]
            src = b.source
            assert src is not None
            if b.shown < len(src.ucis):
                self.fed[b.game_id].append(src.ucis[b.shown])
                b.shown += 1
                self.plies += 1
                nxt = t + self.rng.uniform(30.0, 60.0)
            elif not b.finished:
                b.finished = True
                self.results[b.game_id] = src.result
                nxt = t + PAUSE
            else:
                b.archive.append(b.text)  # a finished game stays in the round's PGN (a relay never drops it)
                b.game_no += 1
                b.source, b.shown, b.finished = self._take(), 0, False
                self.fed[b.game_id] = []
                nxt = t + self.rng.uniform(30.0, 60.0)
            b.render()
            self.version[b.feed] += 1
            self.changed.append(b)
            heapq.heappush(self.heap, (nxt, k))

    def body(self, feed: str) -> str:
        """The polled round: every game of the feed's boards, finished ones included (else the feed withdraws them)."""
        return "\n".join(t for b in self.boards if b.feed == feed for t in (*b.archive, b.text))


# -- the feed servers ----------------------------------------------------------------------------


class FeedServer:
    """``/round.pgn`` (the polled multi-game PGN, ETag/304) and ``/stream.pgn`` (the lichess-style stream)."""

    def __init__(self, rnd: Round) -> None:
        self.round = rnd
        self.streams: set[asyncio.Queue[bytes | None]] = set()
        self.polls = 0
        self.not_modified = 0
        self.bytes_polled = 0
        self._body: tuple[int, bytes, str] | None = None
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def publish_changes(self) -> None:
        """Push every changed stream board's whole game to each stream connection."""
        chunks = [b.text.encode() + b"\n" for b in self.round.changed if b.feed == "stream"]
        self.round.changed.clear()
        if chunks:
            data = b"".join(chunks)
            for q in self.streams:
                q.put_nowait(data)

    def _poll_body(self) -> tuple[bytes, str]:
        version = self.round.version["http"]
        if self._body is None or self._body[0] != version:
            body = self.round.body("http").encode()
            self._body = (version, body, '"' + hashlib.blake2b(body, digest_size=8).hexdigest() + '"')
        return self._body[1], self._body[2]

    async def close(self) -> None:
        for q in self.streams:
            q.put_nowait(None)
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.server.wait_closed(), 2)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
                headers = {ln.split(":", 1)[0].strip().lower(): ln.split(":", 1)[1].strip()
                           for ln in lines[1:] if ":" in ln}
                if path.startswith("/round.pgn"):
                    self.polls += 1
                    body, etag = self._poll_body()
                    if headers.get("if-none-match") == etag:
                        self.not_modified += 1
                        writer.write(f"HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nContent-Length: 0\r\n\r\n".encode())
                    else:
                        self.bytes_polled += len(body)
                        writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn; charset=utf-8\r\n"
                                     f"ETag: {etag}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                    await writer.drain()
                elif path.startswith("/stream.pgn"):
                    await self._stream(writer)
                    return
                else:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        q: asyncio.Queue[bytes | None] = asyncio.Queue()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn\r\nTransfer-Encoding: chunked\r\n\r\n")
        first = b"".join(b.text.encode() + b"\n" for b in self.round.boards if b.feed == "stream")
        self.streams.add(q)
        try:
            data: bytes | None = first
            while data is not None:
                writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                await writer.drain()
                data = await q.get()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        finally:
            self.streams.discard(q)


# -- processes: mosquitto, workers, the monitor ----------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start")
        time.sleep(0.05)


@contextlib.contextmanager
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Every process started here, ended (TERM, then KILL) on the way out, newest first."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield procs
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)


def start(procs: list[subprocess.Popen[bytes]], argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "wb")
    p = subprocess.Popen(argv, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    procs.append(p)
    return p


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the web face's child with ``[web] process = true``)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
    return out


def proc_mem(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MiB."""
    rss = hwm = float("nan")
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return rss, hwm


def read_status(store: Path) -> dict[str, Any] | None:
    """The monitor's last stored status (its store, read-only, WAL)."""
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT status FROM status WHERE id = 1").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return json.loads(row[0]) if row else None


# -- the WebSocket clients (their own processes) ----------------------------------------------------


LATENCY_EVERY = 10
"""Every this-many-th client times each message it receives (a sample: parsing every ``ts`` of 500
clients' ~400,000 deliveries a second took more CPU than the 2-core machine has besides the monitor,
so the latency measured was the clients' own queueing); every client checks gaps and counts."""


def clients_main(port: int, n: int, first: int, pipe: Connection, batch: bool = True,
                 channels: list[list[str]] | None = None, patch: bool = True) -> None:
    """``n`` clients on ``games`` and ``players``, or each on its own ``channels`` (``batch``: batched ``deltas``
    frames; ``patch``: a state message carries what changed; both as the overlay asks); a latency histogram
    (1 ms bins) of every message delivered in the window to every LATENCY_EVERY-th client."""
    from websockets.asyncio.client import connect

    hist = [0] * 10001
    counts = {"deltas": 0, "frames": 0, "gaps": 0, "snapshots": 0, "overflow_snapshots": 0, "closed": 0, "in_window": 0,
              "bytes": 0}
    kinds: dict[str, list[int]] = {}  # client 0: kind -> [messages, bytes of their JSON]
    window = [float("inf"), float("-inf")]
    ts_re = re.compile(r'"ts":([0-9.e+-]+)')

    async def one(i: int, ready: asyncio.Event, stop: asyncio.Event) -> None:
        try:
            async with connect(f"ws://127.0.0.1:{port}/ws", max_queue=None, open_timeout=60, max_size=2**24,
                               ping_interval=None) as ws:
                await ws.recv()  # hello
                wanted = ["games", "players"] if channels is None else channels[i - first]
                await ws.send(json.dumps({"op": "subscribe", "channels": wanted, "id": i, "batch": batch, "patch": patch}))
                ready.set()
                closer = asyncio.create_task(_close_on(stop, ws))
                last = None
                async for raw in ws:
                    t = time.time()
                    counts["bytes"] += len(raw)
                    if i == 0:  # one client tallies the bytes of each message kind (a full parse)
                        _tally_kinds(raw, kinds)
                    if raw.startswith('{"type":"delta'):  # delta, or a batched deltas frame
                        # the envelope is spliced by the server: seq and prev are at fixed places
                        head = raw[:80]
                        m = re.match(r'\{"type":"deltas?","seq":(\d+),"prev":(\d+)', head)
                        assert m is not None
                        seq, prev = int(m.group(1)), int(m.group(2))
                        counts["frames"] += 1
                        if last is not None and prev != last:
                            counts["gaps"] += 1
                        last = seq
                        if i % LATENCY_EVERY:  # not a measuring client: count its deliveries, at C speed
                            counts["deltas"] += raw.count('"ts":')
                            continue
                        stamps = ts_re.findall(raw)  # one ts per message delivered
                        counts["deltas"] += len(stamps)
                        if window[0] <= t <= window[1]:
                            for ts in stamps:
                                counts["in_window"] += 1
                                hist[min(10000, int(1000 * (t - float(ts))))] += 1
                    else:
                        frame = json.loads(raw)
                        if frame["type"] == "snapshot":
                            counts["snapshots"] += 1
                            counts["overflow_snapshots"] += frame.get("reason") == "overflow"
                            last = frame["seq"]
                closer.cancel()
        except Exception:  # noqa: BLE001 - a dropped client is counted, the others go on
            counts["closed"] += 1
            ready.set()

    async def _close_on(stop: asyncio.Event, ws: Any) -> None:
        await stop.wait()
        await ws.close()

    async def main() -> None:
        stop = asyncio.Event()
        tasks = []
        for start_ in range(0, n, 25):
            events = [asyncio.Event() for _ in range(start_, min(n, start_ + 25))]
            for k, ev in enumerate(events):
                tasks.append(asyncio.create_task(one(first + start_ + k, ev, stop)))
            await asyncio.gather(*(ev.wait() for ev in events))
        pipe.send("ready")
        loop = asyncio.get_running_loop()
        w0, w1 = await loop.run_in_executor(None, pipe.recv)
        window[0], window[1] = w0, w1
        await loop.run_in_executor(None, pipe.recv)  # "stop"
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        counts["cpu_ms"] = int(1000 * time.process_time())
        pipe.send((hist, counts, kinds))

    asyncio.run(main())


OVERLAY_GAMES = 8
"""An overlay client subscribes to the detail channels of its board's first this-many games (a board plays
2-3 in a 3-minute run at 20x): the board followed from game to game, as an operator would."""


def overlay_channels(rnd: Round, i: int) -> list[str]:
    """What the shipped overlay page reads for board ``i % boards``: the board's games on ``game:<id>`` and
    its two players on ``player:<name>`` (not every board on ``games`` and every player on ``players``)."""
    b = rnd.boards[i % len(rnd.boards)]
    return ([f"game:{SITE}/b{b.k}/g{j}" for j in range(OVERLAY_GAMES)]
            + [f"player:{b.white}", f"player:{b.black}"])


def _tally_kinds(raw: str, kinds: dict[str, list[int]]) -> None:
    """Add each message of a delta/deltas/snapshot frame to ``kinds``: kind -> [count, bytes of its JSON]."""
    frame = json.loads(raw)
    if frame["type"] == "delta":
        messages = [frame["message"]]
    elif frame["type"] == "deltas":
        messages = [item["message"] for item in frame["items"]]
    elif frame["type"] == "snapshot":
        messages = frame["messages"]
    else:
        return
    for m in messages:
        tally = kinds.setdefault(str(m.get("kind")), [0, 0])
        tally[0] += 1
        tally[1] += len(json.dumps(m, separators=(",", ":")))


async def web_latency(port: int) -> dict[str, int]:
    """The web face's sampled publish -> write latency histogram (``/healthz``: ms -> messages); {} if unread."""
    import httpx

    try:
        async with httpx.AsyncClient(timeout=10) as http:
            body = (await http.get(f"http://127.0.0.1:{port}/healthz")).json()
    except (httpx.HTTPError, ValueError):
        return {}
    return {k: int(v) for k, v in body.get("latency", {}).get("hist", {}).items()}


def hist_quantile(hist: list[int], q: float) -> float | None:
    total = sum(hist)
    if not total:
        return None
    need, seen = q * total, 0
    for ms, c in enumerate(hist):
        seen += c
        if seen >= need:
            return float(ms + 1)
    return float(len(hist))


# -- the run --------------------------------------------------------------------------------------


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.lines.append(text)


def goal(report: Report, name: str, value: float | None, target: float, below: bool, unit: str) -> None:
    if value is None:
        report.say(f"goal {name}: NOT measured")
        report.measured[f"goal:{name}"] = None
        return
    met = value < target if below else value >= target
    by = (value / target) if target else float("inf")
    how = f"{value:.1f} {unit} vs {'<' if below else '>='} {target:g} {unit}"
    report.say(f"goal {name}: {'met' if met else 'NOT met'} ({how}; {by:.2f}x the target)")
    report.measured[f"goal:{name}"] = met


def lag_window(before: dict[str, Any] | None, after: dict[str, Any] | None) -> tuple[float | None, float | None, int]:
    """p99 and the largest bin of the monitor's loop-lag histogram between two stored statuses."""
    from livemon.app.monitor import lag_percentile

    if after is None or "loop_lag" not in after:
        return None, None, 0
    h1 = after["loop_lag"]["hist"]
    h0 = (before or {}).get("loop_lag", {}).get("hist", {})
    diff = {k: v - h0.get(k, 0) for k, v in h1.items() if v - h0.get(k, 0) > 0}
    top = max((float(k) for k in diff), default=None)
    return lag_percentile(diff, 0.99), top, sum(diff.values())


REQUESTS_PER_ENGINE = 64
"""``[bus] requests_per_engine`` of the monitor and the workers with ``--engine cache``: a worker answers from its
cache in a millisecond, so the answers per second are the requests in flight over the round trip through both
loops and the broker (16 a engine gave ~55 answers a second a worker; the default 2 is for real searches)."""


def config_text(tmp: Path, broker: int, web: int, feeds: int, store: Path, depth: int, poll: float,
                web_process: bool = False, engine: str = STOCKFISH) -> str:
    # [engine]: the workers' engine, started once by the monitor to read its name (the bus's profile)
    return f"""
[engine]
path = "{engine}"
depth = {depth}
[store]
path = "{store}"
backup_minutes = 0
[broker]
host = "127.0.0.1"
port = {broker}
[bus]
mode = "mqtt"
request_timeout = 120.0
# the workers answer from their cache in a millisecond: 2 requests per engine in flight (the default, for
# searches of ~0.6 s) would cap the answers at 8 per round trip through the monitor's loop
requests_per_engine = {REQUESTS_PER_ENGINE}
[web]
port = {web}
client_queue = 4096
process = {"true" if web_process else "false"}
[monitor]
status_seconds = 1.0
[[feeds]]
name = "relay-poll"
type = "http"
url = "http://127.0.0.1:{feeds}/round.pgn"
interval = {poll}
max_body_mb = 64
[[feeds]]
name = "relay-stream"
type = "stream"
url = "http://127.0.0.1:{feeds}/stream.pgn"
"""


async def run(args: argparse.Namespace) -> Report:
    report = Report()
    say = report.say
    say(f"{load()} (before)")
    wall = args.minutes * 60.0
    need_games = int(args.boards * (1 + wall * args.compression / (45.0 * 60) + 1))
    t_load = time.perf_counter()
    if args.engine == "cache":
        games = args.games or os.environ.get("LIVEMON_CALIBRATION_GAMES")
        if not games:
            raise SystemExit("--engine cache needs the calibration collection's PGN files: --games DIR or "
                             "$LIVEMON_CALIBRATION_GAMES (or --engine depth, on tests/data or --data)")
        sources = cached_sources(Path(games))
        depth = CACHE_PROFILE_DEPTH
        what = f"{len(sources)} calibration games analysed at depth 12 (workers answer from their cache)"
    else:
        folders = [Path(d) for d in args.data] if args.data else DEFAULT_DATA
        sources = pgn_sources(folders, need_games)
        depth = args.depth
        what = f"{len(sources)} real games of {', '.join(str(f) for f in folders)} (searched live at depth {depth})"
    if not sources:
        raise SystemExit("no source games found")
    rnd = Round(sources, args.boards, args.compression, seed=args.seed)
    mean_interval = 45.0
    offered = args.boards * args.compression / mean_interval
    say(f"round: {args.boards} boards (half polled as one PGN every {args.poll:g} s, half streamed), "
        f"a move per board every 30-60 s of event time, compression {args.compression:g}x "
        f"-> about {offered:.0f} moves/s offered; {args.minutes:g} min of wall time "
        f"({wall * args.compression / 60:.0f} min of event time); source: {what} (read in {time.perf_counter() - t_load:.1f} s)")
    say(f"engine: {args.workers} livemon worker(s) x {args.engines} engine(s) through mosquitto; "
        f"{args.clients} WebSocket clients on "
        + ("their board's games and two players (as the overlay page)" if args.overlay else "games+players")
        + f" in {args.client_procs} process(es), "
        + ("whole messages" if args.whole else "patches (a state's changed fields)")
        + ("" if args.no_batch else ", batched"))
    tmp = Path(tempfile.mkdtemp(prefix="livemon-round-"))
    feeds = FeedServer(rnd)
    await feeds.start()
    ctx = mp.get_context("spawn")
    client_pipes: list[Connection] = []
    client_procs: list[Any] = []
    try:
        with processes() as procs:
            broker = free_port()
            (tmp / "mosquitto.conf").write_text(f"listener {broker} 127.0.0.1\nallow_anonymous true\n"
                                                f"persistence false\nuser root\nset_tcp_nodelay true\n"
                                                f"max_queued_messages 100000\n")
            mq = start(procs, [MOSQUITTO, "-c", str(tmp / "mosquitto.conf")], tmp / "mosquitto.log")
            wait_port(broker, mq, "mosquitto")
            profile = f"Stockfish 15.1 depth={depth} multipv=4"
            if args.engine == "cache":
                t0 = time.perf_counter()
                n = warm_store(tmp / "warm.sqlite", sources, profile)
                say(f"workers' cache: {n} analyses under {profile} in {time.perf_counter() - t0:.1f} s")
            for i in range(args.workers):
                wstore = tmp / f"worker{i}.sqlite"
                if args.engine == "cache":
                    shutil.copy(tmp / "warm.sqlite", wstore)
                (tmp / f"worker{i}.toml").write_text(
                    f'[engine]\npath = "{args.engine_path}"\ndepth = {depth}\nthreads = 1\nhash_mb = 16\nprocesses = {args.engines}\n'
                    f'[store]\npath = "{wstore}"\nbackup_minutes = 0\n'
                    f'[broker]\nhost = "127.0.0.1"\nport = {broker}\n[bus]\nmode = "mqtt"\n'
                    + (f"requests_per_engine = {REQUESTS_PER_ENGINE}\n" if args.engine == "cache" else ""))
                start(procs, [sys.executable, "-m", "livemon.cli", "worker", "--config", str(tmp / f"worker{i}.toml"),
                              "--name", f"w{i}"], tmp / f"worker{i}.log")
            web = free_port()
            store = tmp / "monitor.sqlite"
            (tmp / "monitor.toml").write_text(config_text(tmp, broker, web, feeds.port, store, depth, args.poll,
                                                          web_process=args.web_process, engine=args.engine_path))
            profiler = ["-m", "cProfile", "-o", args.profile] if args.profile else []
            mon = start(procs, [sys.executable, *profiler, "-m", "livemon.cli", "serve", "--config",
                                str(tmp / "monitor.toml")], tmp / "monitor.log")
            wait_port(web, mon, "the monitor (livemon serve)", timeout=60)
            # the clients connect while the round has not begun (the boards show their first position)
            per = [args.clients // args.client_procs + (1 if i < args.clients % args.client_procs else 0)
                   for i in range(args.client_procs)]
            first = 0
            for n_i in per:
                here, there = ctx.Pipe()
                wanted = [overlay_channels(rnd, i) for i in range(first, first + n_i)] if args.overlay else None
                p = ctx.Process(target=clients_main, daemon=True,
                                args=(web, n_i, first, there, not args.no_batch, wanted, not args.whole))
                p.start()
                first += n_i
                client_pipes.append(here)
                client_procs.append(p)
            loop = asyncio.get_running_loop()
            for pipe in client_pipes:
                got = await loop.run_in_executor(None, pipe.recv)
                assert got == "ready", got
            # wait for the monitor to have read every board (its status says so) and settle
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                st = read_status(store)
                if st and st.get("games", 0) >= args.boards:
                    break
                await asyncio.sleep(0.2)
            await asyncio.sleep(1.0)
            say(f"set-up: broker, {args.workers} workers, the monitor and {args.clients} clients ready; {load()}")

            # ---- the round -------------------------------------------------------------------
            st0 = read_status(store)
            lat0 = await web_latency(web)
            polls0 = (feeds.polls, feeds.not_modified)
            cpu0 = proc_cpu(mon.pid)
            web_pids = child_pids(mon.pid) if args.web_process else []
            web_cpu0 = sum(proc_cpu(p) for p in web_pids)
            t0 = time.monotonic()
            w0, w1 = time.time(), time.time() + wall
            for pipe in client_pipes:
                pipe.send((w0, w1))
            samples: list[tuple[float, float, int]] = []  # (t, rss MiB, moves)
            moves0 = (st0 or {}).get("moves", 0)
            next_sample = 0.0
            while (now := time.monotonic() - t0) < wall:
                rnd.advance(now * args.compression)
                feeds.publish_changes()
                if now >= next_sample:
                    next_sample += 1.0
                    st = read_status(store)
                    samples.append((now, proc_mem(mon.pid)[0], (st or {}).get("moves", 0)))
                await asyncio.sleep(0.01)
            fed_at_end = rnd.plies
            polls_round = (feeds.polls - polls0[0], feeds.not_modified - polls0[1])
            cpu1 = proc_cpu(mon.pid)
            web_cpu = sum(proc_cpu(p) for p in web_pids) - web_cpu0
            web_mem = [proc_mem(p) for p in web_pids]
            st1 = read_status(store)
            lat1 = await web_latency(web)
            t_end = time.monotonic()
            # ---- catch up: every fed ply handled ----------------------------------------------
            caught = None
            fed_total = sum(len(v) for v in rnd.fed.values())
            while time.monotonic() - t_end < 60:
                st = read_status(store)
                if st and st.get("moves", 0) - moves0 >= fed_total:
                    caught = time.monotonic() - t_end
                    break
                await asyncio.sleep(0.25)
            await asyncio.sleep(1.5)  # the last analyses' messages reach the clients
            for pipe in client_pipes:
                pipe.send("stop")
            results = [await loop.run_in_executor(None, pipe.recv) for pipe in client_pipes]
            for p in client_procs:
                p.join(10)
            rss_now, hwm = proc_mem(mon.pid)
            st_end = read_status(store)
            mon_status = st_end or {}
            os.killpg(mon.pid, signal.SIGTERM)
            t_stop = time.monotonic()
            try:
                mon.wait(120)
                say(f"the monitor stopped {time.monotonic() - t_stop:.1f} s after SIGTERM (exit {mon.returncode})")
            except subprocess.TimeoutExpired:
                say("the monitor did not stop within 120 s of SIGTERM (killed)")
            log_text = (tmp / "monitor.log").read_text(errors="replace")
    finally:
        await feeds.close()

    # ---- figures ---------------------------------------------------------------------------------
    elapsed = t_end - t0
    handled = (st1 or {}).get("moves", 0) - moves0
    rate = handled / elapsed
    cpu = cpu1 - cpu0
    say(f"fed {fed_at_end} plies in {elapsed:.1f} s = {fed_at_end / elapsed:.1f} moves/s offered; the monitor handled "
        f"{handled} in that time = {rate:.1f} moves/s; "
        + (f"every fed ply handled {caught:.1f} s after the feeding stopped" if caught is not None
           else "NOT every fed ply handled within 60 s of the end"))
    report.measured["moves_per_s"] = rate
    report.measured["offered_per_s"] = fed_at_end / elapsed
    cpu_ms = 1000 * cpu / max(handled, 1)
    say(f"monitor CPU: {cpu:.1f} s in {elapsed:.1f} s ({100 * cpu / elapsed:.0f}% of a core) = {cpu_ms:.2f} ms per move "
        f"(engine, broker, feeds' servers, clients{'' if not args.web_process else ' and the web face'} are other processes)")
    report.measured["cpu_ms_per_move"] = cpu_ms
    if args.web_process:
        say("web face process ([web] process = true): " + (
            f"CPU {web_cpu:.1f} s in {elapsed:.1f} s ({100 * web_cpu / elapsed:.0f}% of a core) = "
            f"{1000 * web_cpu / max(handled, 1):.2f} ms per move; RSS {sum(r for r, _ in web_mem):.0f} MiB "
            f"(peak {sum(h for _, h in web_mem):.0f}); monitor + web {1000 * (cpu + web_cpu) / max(handled, 1):.2f} ms per move"
            if web_pids else "NOT found (no child of the monitor)"))
        report.measured["web_cpu_ms_per_move"] = 1000 * web_cpu / max(handled, 1)
    rss = [r for _, r, _ in samples]
    half = len(rss) // 2
    first_half, second_half = rss[:half], rss[half:]
    growth = None
    if len(second_half) >= 2:
        growth = (second_half[-1] - second_half[0]) / second_half[0]
        n = len(second_half)
        xs = [samples[half + i][0] for i in range(n)]
        mx, my = sum(xs) / n, sum(second_half) / n
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, second_half)) / max(sum((x - mx) ** 2 for x in xs), 1e-9)
        say(f"monitor RSS: peak {hwm:.0f} MiB (VmHWM); first half mean {sum(first_half) / max(len(first_half), 1):.0f} MiB "
            f"(max {max(first_half, default=0):.0f}), second half mean {my:.0f} MiB (max {max(second_half):.0f}), "
            f"second half {second_half[0]:.0f} -> {second_half[-1]:.0f} MiB ({100 * growth:+.1f}%, slope "
            f"{60 * slope:+.1f} MiB/min); at the end {rss_now:.0f} MiB")
    report.measured["rss_peak_mb"] = hwm
    report.measured["rss_growth_second_half"] = growth
    p99, top, nlag = lag_window(st0, st1)
    whole = (st_end or {}).get("loop_lag", {})
    say(f"event-loop lag (the monitor's probe every {whole.get('probe_ms', 0):g} ms, {nlag} wake-ups in the round): "
        f"p99 {p99} ms, max bin {top} ms (histogram bins: 1 ms below 100 ms); since start p50 {whole.get('p50_ms')} ms "
        f"p99 {whole.get('p99_ms')} ms max {whole.get('max_ms')} ms; of each delay, the part the loop's thread was on a "
        f"CPU (a lower bound of the loop's own work; the rest it waited for a CPU or the GIL): p99 "
        f"{whole.get('running_p99_ms')} ms")
    report.measured["lag_p99_ms"] = p99
    hist = [sum(col) for col in zip(*(h for h, _, _ in results))]
    counts: dict[str, int] = {}
    for _, c, _ in results:
        for k, v in c.items():
            counts[k] = counts.get(k, 0) + v
    p50, p95, p99c = (hist_quantile(hist, q) for q in (0.5, 0.95, 0.99))
    say(f"publish->client latency over {counts.get('in_window', 0)} deliveries in the round to every "
        f"{LATENCY_EVERY}th client "
        f"({counts.get('deltas', 0)} deltas in all in {counts.get('frames', 0)} frames, {counts.get('gaps', 0)} gaps, "
        f"{counts.get('overflow_snapshots', 0)} overflow snapshots, {counts.get('closed', 0)} clients closed; "
        f"the clients' processes used {counts.get('cpu_ms', 0) / 1000:.1f} s of CPU): "
        f"p50 {p50} ms p95 {p95} ms p99 {p99c} ms (1 ms bins)")
    report.measured["client_p95_ms"] = p95
    report.measured["client_frames"] = counts.get("frames", 0)
    server = [0] * 10001
    for k, v in lat1.items():
        server[min(int(k), 10000)] += v - lat0.get(k, 0)
    s50, s95, s99 = (hist_quantile(server, q) for q in (0.5, 0.95, 0.99))
    from livemon.faces.web.server import LATENCY_SAMPLE

    say(f"the server's part (hub publish -> socket write, every message to 1 client in {LATENCY_SAMPLE}, /healthz): "
        f"{sum(server)} messages in the round, p50 {s50} ms p95 {s95} ms p99 {s99} ms")
    report.measured["server_p95_ms"] = s95
    kinds = next((k for _, _, k in results if k), {})
    clients = max(args.clients - counts.get("closed", 0), 1)
    say(f"bytes to the clients: {counts.get('bytes', 0) / elapsed / 2**20:.1f} MiB/s in all "
        f"({counts.get('bytes', 0) / clients / elapsed / 1024:.0f} KiB/s a client); client 0's messages by kind: "
        + ", ".join(f"{k} {n} x {b / max(n, 1):.0f} B" for k, (n, b) in sorted(kinds.items(), key=lambda kv: -kv[1][1])))
    report.measured["client_deliveries"] = counts.get("in_window", 0)
    report.measured["client0_messages"] = {k: n for k, (n, _) in kinds.items()}

    # ---- plies lost / duplicated: the store against what was fed --------------------------------------
    lost = dup = wrong = results_missing = 0
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    stored: dict[str, list[tuple[int, str]]] = {}
    for gid, ply, event in db.execute("SELECT game_id, ply, event FROM moves ORDER BY game_id, ply"):
        stored.setdefault(gid, []).append((ply, json.loads(event)["uci"]))
    stored_results = dict(db.execute("SELECT game_id, result FROM games"))
    by_worker = dict(db.execute("SELECT worker, COUNT(*) FROM analyses GROUP BY worker"))
    db.close()
    for gid, ucis in rnd.fed.items():
        got = stored.get(gid, [])
        plies = [p for p, _ in got]
        dup += len(plies) - len(set(plies))
        got_map = dict(got)
        for i, u in enumerate(ucis, 1):
            if i not in got_map:
                lost += 1
            elif got_map[i] != u:
                wrong += 1
        dup += sum(1 for p in got_map if p > len(ucis))
    for gid, res in rnd.results.items():
        if stored_results.get(gid) != res:
            results_missing += 1
    extra_games = len(set(stored) - set(rnd.fed))
    dup += max(0, handled_total(mon_status, moves0) - fed_total)
    say(f"plies: fed {fed_total} in {len(rnd.fed)} games; lost {lost} (not in the store when the monitor stopped; "
        f"it had {'caught up' if caught is not None else 'NOT caught up: unread plies count as lost'}), "
        f"duplicated {dup}, different {wrong}, "
        f"games in the store not fed {extra_games}; results fed {len(rnd.results)}, not stored {results_missing}; "
        f"monitor counters: duplicates {mon_status.get('duplicates')} gaps {mon_status.get('gaps')} "
        f"rollbacks {mon_status.get('rollbacks')} feed errors {mon_status.get('feed_errors')}")
    report.measured["lost"] = lost + wrong
    report.measured["duplicated"] = dup
    report.measured["results_missing"] = results_missing
    workers = {k: v for k, v in by_worker.items() if k}
    per_worker = {k: v / elapsed for k, v in workers.items()}
    eng = mon_status.get("engine", {})
    say(f"engine: positions answered per worker {', '.join(f'{k} {v:.1f}/s' for k, v in sorted(per_worker.items()))} "
        f"(analyses stored by worker over the round; monitor cache hits {eng.get('cache_hits')}, backlog at the end "
        f"{eng.get('backlog')}, oldest waiting {eng.get('queue_lag_seconds')} s)")
    report.measured["worker_pps"] = per_worker
    report.measured["polls_in_round"] = polls_round[0]
    say(f"feed servers: {feeds.polls} polls ({feeds.not_modified} not modified, {feeds.bytes_polled / 1e6:.1f} MB sent), "
        f"{polls_round[0]} of them in the round ({polls_round[1]} not modified; the poll interval is {args.poll:g} s); "
        f"monitor log: {log_text.count(' WARNING ')} warnings, {log_text.count(' ERROR ')} errors, "
        f"{log_text.count('Traceback')} tracebacks ({tmp / 'monitor.log'})")
    report.measured["tracebacks"] = log_text.count("Traceback")
    say(f"{load()} (after)")
    goal(report, f"moves/s >= {GOAL_MOVES:g} through the monitor", rate, GOAL_MOVES, False, "moves/s")
    keep_up = max(5.0, 2 * args.poll + 2)
    goal(report, f"keeps up: every fed ply handled within {keep_up:g} s of the end", caught, keep_up, True, "s")
    goal(report, f"loop-lag p99 < {GOAL_LAG_P99:g} ms", p99, GOAL_LAG_P99, True, "ms")
    goal(report, f"RSS < {GOAL_RSS_MB:g} MiB", hwm, GOAL_RSS_MB, True, "MiB")
    goal(report, f"client latency p95 < {GOAL_P95:g} ms", p95, GOAL_P95, True, "ms")
    goal(report, f"its server part (publish -> write) p95 < {GOAL_P95:g} ms", s95, GOAL_P95, True, "ms")
    goal(report, f"RSS flat over the second half (< {100 * GOAL_FLAT:g}% growth)",
         None if growth is None else 100 * growth, 100 * GOAL_FLAT, True, "%")
    goal(report, "plies lost + duplicated = 0", float(lost + wrong + dup), 0.5, True, "plies")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        say(f"kept: {tmp}")
    return report


def handled_total(status: dict[str, Any], moves0: int) -> int:
    return int(status.get("moves", 0)) - moves0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=1000)
    ap.add_argument("--compression", type=float, default=20.0, help="event seconds per wall second")
    ap.add_argument("--minutes", type=float, default=5.0, help="wall minutes of the round")
    ap.add_argument("--clients", type=int, default=500)
    ap.add_argument("--client-procs", type=int, default=2)
    ap.add_argument("--web-process", action="store_true",
                    help="the web face in a process of its own ([web] process = true) instead of on the monitor's loop")
    ap.add_argument("--no-batch", action="store_true",
                    help="clients ask for one delta frame per message (default: batched deltas, as the overlay)")
    ap.add_argument("--whole", action="store_true",
                    help="clients ask for whole messages (default: patches, a state's changed fields, as the overlay)")
    ap.add_argument("--overlay", action="store_true",
                    help="each client reads one board and its two players, as the overlay page does (default: every "
                         "board on games and every player on players, the scenario of a broadcast)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--engines", type=int, default=2, help="engines per worker")
    ap.add_argument("--engine", choices=("cache", "depth"), default="cache",
                    help="cache: depth-12 analyses of the calibration games from the workers' cache; depth: live search")
    ap.add_argument("--depth", type=int, default=2, help="with --engine depth")
    ap.add_argument("--engine-path", default=STOCKFISH, metavar="UCI",
                    help="the workers' UCI engine (default $LIVEMON_STOCKFISH, else /usr/games/stockfish)")
    ap.add_argument("--data", nargs="*", help="folders of PGN files (with --engine depth); default tests/data")
    ap.add_argument("--games", metavar="DIR", help="with --engine cache: the calibration collection's folder "
                    "(default $LIVEMON_CALIBRATION_GAMES)")
    ap.add_argument("--poll", type=float, default=1.0, help="seconds between the http feed's polls")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the run's folder (logs, stores)")
    ap.add_argument("--quick", action="store_true", help="smoke: 50 boards, 1 minute, 50 clients in 1 process")
    ap.add_argument("--profile", metavar="FILE", help="run the monitor under cProfile, its stats to FILE")
    ap.add_argument("--json", metavar="FILE", help="write the measured figures as JSON")
    args = ap.parse_args(argv)
    if args.profile:
        args.profile = os.path.abspath(args.profile)
    if args.quick:
        given = set(a.split("=")[0] for a in (argv if argv is not None else sys.argv[1:]))
        if "--boards" not in given:
            args.boards = 50
        if "--minutes" not in given:
            args.minutes = 1.0
        if "--clients" not in given:
            args.clients = 50
        if "--client-procs" not in given:
            args.client_procs = 1
        if "--workers" not in given:
            args.workers = 1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = asyncio.run(run(args))
    if args.json:
        Path(args.json).write_text(json.dumps(report.measured, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
