"""Engine work through an MQTT broker: positions per second with 1 and 2 workers, and the broker's latency.

Real Stockfish at a fixed depth, one thread and one engine per worker; a real
mosquitto started here on a free port; real ``livemon worker`` subprocesses
(each with a fresh cache, so every position is searched); the monitor side is
:class:`livemon.io.bus.RemoteEnginePool` without a cache. The positions are
distinct positions of the bundled London Chess Classic 2011 (after the first
8 plies of each game).

- **throughput**: all positions submitted at once; positions/s with 1 worker
  and with 2, and the ratio (goal ≥ 1.8× on a 2-core machine); for reference
  the same with the embedded pool of 1 and 2 engines (no broker), which shows
  what the machine allowed at the time;
- **added latency**: positions asked one at a time, each on a local engine
  (:class:`livemon.io.pool.EnginePool`) and through the broker to 1 worker, back
  to back; the paired difference is what the bus adds per position (JSON, two
  MQTT hops each way with QoS 1 acknowledgements, the worker's pool and cache).

    python bench/scale.py --depth 12 --positions 160 --latency-positions 40

The machine's load average is printed before and after: on a shared machine
the ratio mostly measures the other work. The broker runs with
``set_tcp_nodelay true`` (as docs/distributed.md advises); ``BROKER_NODELAY=0``
runs it with mosquitto's default (Nagle on) for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Iterator

import aiomqtt
import chess
import chess.pgn

from livemon.live.rules import needs_search
from livemon.io.broker import workers_topic
from livemon.io.bus import RemoteEnginePool
from livemon.config import BrokerConfig, BusConfig, EngineConfig
from livemon.io.engine import position_key
from livemon.live.pgn import split_games
from livemon.io.pool import EnginePool

REPO = Path(__file__).resolve().parent.parent
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
NODELAY = os.environ.get("BROKER_NODELAY", "1") == "1"


def bench_positions(n: int, skip_plies: int = 8) -> list[chess.Board]:
    """``n`` distinct searchable positions of the bundled London 2011 replay, game after game."""
    text = (resources.files("livemon") / "data" / "london_2011.pgn").read_text(encoding="utf-8")
    seen: set[str] = set()
    out: list[chess.Board] = []
    for chunk, _ in split_games(text):
        game = chess.pgn.read_game(io.StringIO(chunk))
        if game is None:
            continue
        board = game.board()
        for ply, move in enumerate(game.mainline_moves(), 1):
            board.push(move)
            key = position_key(board)
            if ply > skip_plies and needs_search(board) and key not in seen:
                seen.add(key)
                out.append(board.copy(stack=False))
                if len(out) == n:
                    return out
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def broker(tmp: Path) -> Iterator[int]:
    port = free_port()
    conf = tmp / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n"
                    + ("set_tcp_nodelay true\n" if NODELAY else ""))
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"mosquitto did not start ({MOSQUITTO})")
            time.sleep(0.02)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def workers(tmp: Path, port: int, n: int, depth: int, tag: str) -> Iterator[None]:
    """``n`` worker processes, one engine (one thread) each, each with a fresh cache."""
    procs = []
    try:
        for i in range(n):
            cfg = tmp / f"{tag}-{i}.toml"
            cfg.write_text(f'[engine]\ndepth = {depth}\nthreads = 1\nprocesses = 1\n'
                           f'[store]\npath = "{tmp / f"{tag}-{i}.sqlite"}"\n'
                           f'[broker]\nhost = "127.0.0.1"\nport = {port}\n[bus]\nmode = "mqtt"\nrequest_timeout = 600.0\n')
            procs.append(subprocess.Popen([sys.executable, "-m", "livemon.cli", "worker", "--config", str(cfg)],
                                          cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        yield
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(30)


async def wait_for_workers(port: int, n: int) -> None:
    seen: set[str] = set()
    async with asyncio.timeout(60), aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe(workers_topic(BusConfig()), qos=1)
        async for msg in client.messages:
            if msg.payload:
                seen.add(str(msg.topic))
            if len(seen) >= n:
                return


async def throughput(pool: RemoteEnginePool | EnginePool, boards: list[chess.Board]) -> float:
    """Positions per second with every position submitted at once."""
    t0 = time.perf_counter()
    await asyncio.gather(*(pool.submit(b) for b in boards))
    return len(boards) / (time.perf_counter() - t0)


async def remote(port: int, workers_n: int, tmp: Path, depth: int, tag: str, boards: list[chess.Board]) -> float:
    """Throughput through the broker with ``workers_n`` fresh workers."""
    with workers(tmp, port, workers_n, depth, tag):
        await wait_for_workers(port, workers_n)
        cfg = BusConfig(mode="mqtt", broker=BrokerConfig(host="127.0.0.1", port=port), request_timeout=600.0)
        async with RemoteEnginePool(cfg, cache=None) as pool:
            while pool.capacity < workers_n * cfg.requests_per_engine:  # every worker announced
                await asyncio.sleep(0.05)
            return await throughput(pool, boards)


async def paired_latency(port: int, tmp: Path, depth: int, boards: list[chess.Board]) -> tuple[list[float], list[float]]:
    """Each position asked alone on a local engine and through the broker to one worker, back to back
    (the order alternating), so that the machine's other load falls on both alike."""
    local_times: list[float] = []
    remote_times: list[float] = []
    engine = EngineConfig(depth=depth, threads=1, processes=1)
    with workers(tmp, port, 1, depth, "lat"):
        await wait_for_workers(port, 1)
        cfg = BusConfig(mode="mqtt", broker=BrokerConfig(host="127.0.0.1", port=port), request_timeout=600.0)
        async with EnginePool(engine, cache=None, quick=False) as local, RemoteEnginePool(cfg, cache=None) as far:
            while far.capacity == 0:
                await asyncio.sleep(0.05)
            for i, b in enumerate(boards):
                pair = (local, far) if i % 2 == 0 else (far, local)
                for pool in pair:
                    t0 = time.perf_counter()
                    await pool.submit(b)
                    (local_times if pool is local else remote_times).append(time.perf_counter() - t0)
    return local_times, remote_times


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--positions", type=int, default=160, help="positions of the throughput runs")
    ap.add_argument("--latency-positions", type=int, default=40, help="positions of the one-at-a-time runs")
    args = ap.parse_args()
    boards = bench_positions(args.positions + args.latency_positions)
    work, seq_local = boards[: args.positions], boards[args.positions :]
    print(f"{load()} (before)")
    print(f"Stockfish depth {args.depth}, multipv 4, 1 thread per engine, 1 engine per worker; "
          f"{len(work)} positions for throughput, {len(seq_local)} for latency")
    with tempfile.TemporaryDirectory() as d, broker(Path(d)) as port:
        tmp = Path(d)
        one = await remote(port, 1, tmp, args.depth, "one", work)
        two = await remote(port, 2, tmp, args.depth, "two", work)
        print(f"throughput through the broker: 1 worker {one:.2f} positions/s, 2 workers {two:.2f} positions/s, "
              f"ratio {two / one:.2f}x (goal >= 1.8x on 2 cores)")
        # the same positions on the embedded pool, 1 and 2 engines: what the machine allows right now
        local_pps = []
        for n in (1, 2):
            async with EnginePool(EngineConfig(depth=args.depth, threads=1, processes=n), cache=None, quick=False) as pool:
                local_pps.append(await throughput(pool, work))
        print(f"reference, embedded pool (no broker): 1 engine {local_pps[0]:.2f} positions/s, 2 engines "
              f"{local_pps[1]:.2f} positions/s, ratio {local_pps[1] / local_pps[0]:.2f}x; "
              f"broker vs embedded: {one / local_pps[0]:.2f} (1), {two / local_pps[1]:.2f} (2)")
        # latency: the same positions, one at a time, on a local engine and through the broker, paired
        local_times, remote_times = await paired_latency(port, tmp, args.depth, seq_local)
        diffs = [r - lt for lt, r in zip(local_times, remote_times)]
        lm, rm = statistics.mean(local_times), statistics.mean(remote_times)
        print(f"one at a time: local engine {lm * 1000:.1f} ms/position (median {statistics.median(local_times) * 1000:.1f}), "
              f"through the broker {rm * 1000:.1f} ms/position (median {statistics.median(remote_times) * 1000:.1f})")
        print(f"broker's added latency per position (paired): mean {statistics.mean(diffs) * 1000:.1f} ms, "
              f"median {statistics.median(diffs) * 1000:.1f} ms, "
              f"{statistics.mean(diffs) / lm * 100:.1f}% of a depth-{args.depth} search")
    print(f"{load()} (after)")


if __name__ == "__main__":
    asyncio.run(main())
