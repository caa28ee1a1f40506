"""WebSocket fan-out: N clients on loopback, latency from hub.publish to each client's receipt.

The server (hub + :class:`livemon.faces.web.WebServer`) runs in this process; the
clients run in a second process (one asyncio loop, real ``websockets``
clients that parse every frame), so the server's CPU and RSS are its own.
Both sides timestamp with ``time.monotonic()`` (CLOCK_MONOTONIC, shared by
the processes of one Linux machine).

    python bench/fanout.py --clients 500 --rate 20 --seconds 10

Goal: p95 under 50 ms with 500 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import time
from multiprocessing.connection import Connection

from websockets.asyncio.client import connect

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.live.messages import BoardState
from livemon.faces.web import WebServer

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def clients_main(port: int, n: int, pipe: Connection) -> None:
    """The client process: connect n clients, subscribe to games, record (seq, receipt time)."""

    async def one(i: int, got: dict[int, float], ready: asyncio.Event, stop: asyncio.Event) -> None:
        async with connect(f"ws://127.0.0.1:{port}/ws", max_queue=None) as ws:
            await ws.recv()  # hello
            await ws.send(json.dumps({"op": "subscribe", "channels": ["games"]}))
            await ws.recv()  # snapshot
            ready.set()
            closer = asyncio.create_task(_close_on(stop, ws))
            async for raw in ws:
                t = time.monotonic()
                frame = json.loads(raw)
                if frame["type"] == "delta":
                    got[frame["seq"]] = t
            closer.cancel()

    async def _close_on(stop: asyncio.Event, ws) -> None:  # type: ignore[no-untyped-def]
        await stop.wait()
        await ws.close()

    async def main() -> None:
        stop = asyncio.Event()
        results: list[dict[int, float]] = [{} for _ in range(n)]
        tasks = []
        for start in range(0, n, 50):  # connect in batches: the listen backlog is finite
            events = [asyncio.Event() for _ in range(start, min(n, start + 50))]
            for k, ev in enumerate(events):
                tasks.append(asyncio.create_task(one(start + k, results[start + k], ev, stop)))
            await asyncio.gather(*(ev.wait() for ev in events))
        pipe.send("ready")
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # "stop"
        await asyncio.sleep(2.0)  # the tail
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        pipe.send(results)

    asyncio.run(main())


async def bench(n: int, rate: float, seconds: float) -> None:
    hub = Hub()
    server = WebServer(hub, WebConfig(port=0, client_queue=1024))
    await server.start()
    rss0 = rss_mib()
    here, there = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=clients_main, args=(server.port, n, there), daemon=True)
    proc.start()
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, here.recv) == "ready"
    rss_connected = rss_mib()
    published: dict[int, float] = {}
    count = int(rate * seconds)
    cpu0 = time.process_time()
    start = time.monotonic()
    for i in range(count):
        await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
        evals = tuple(range(-20, 20 + i % 40))
        msg = BoardState(f"g{i % 8}", "White, W", "Black, B", 2700, 2650, FEN, 5 + i, "Nc6", "b8c6", i % 300 - 150, evals)
        published[hub.publish(msg)] = time.monotonic()
    elapsed = time.monotonic() - start
    rss_peak = rss_mib()
    here.send("stop")
    results = await loop.run_in_executor(None, here.recv)
    cpu = time.process_time() - cpu0  # the server process's CPU: independent of other load on the machine
    proc.join(10)
    await server.close()

    lat = sorted(1000 * (t - published[s]) for got in results for s, t in got.items() if s in published)
    missing = n * count - len(lat)
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]  # noqa: E731
    print(f"clients {n}, messages {count} at {count / elapsed:.1f}/s, deliveries {len(lat)} (missing {missing}), "
          f"server resnapshots {server.stats['resnapshots']}, dropped {server.stats['dropped']}")
    print(f"latency publish->client: p50 {q(0.50):.1f} ms  p95 {q(0.95):.1f} ms  p99 {q(0.99):.1f} ms  "
          f"max {lat[-1]:.1f} ms  mean {statistics.fmean(lat):.1f} ms")
    print(f"server CPU: {cpu:.2f} s for {len(lat)} deliveries = {1e6 * cpu / max(1, len(lat)):.1f} us/delivery "
          f"(one core could fan out about {len(lat) / max(cpu, 1e-9) / n:.0f} messages/s to {n} clients)")
    print(f"server RSS: {rss0:.1f} MiB before clients, {rss_connected:.1f} MiB with {n} connected "
          f"({1024 * (rss_connected - rss0) / n:.0f} KiB/client), {rss_peak:.1f} MiB at the end of publishing")
    print(f"goal p95 < 50 ms: {'met' if q(0.95) < 50 else 'NOT met'} (ratio {q(0.95) / 50:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=500)
    ap.add_argument("--rate", type=float, default=20.0, help="messages published per second")
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    asyncio.run(bench(args.clients, args.rate, args.seconds))


if __name__ == "__main__":
    main()
