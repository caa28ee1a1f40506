"""WebSocket fan-out: N clients on loopback, one delta per message (``plain``) against batched ``deltas`` frames.

The server (hub + :class:`livemon.faces.web.WebServer`) runs in this process; the
clients run in a second process (one asyncio loop, real ``websockets``
clients that read every frame: a regex for the ``ts`` of each message, so the
clients' own CPU disturbs the server as little as it can), so the server's CPU and RSS are its own. Latency
is publish → receipt from each message's ``ts`` (the hub's ``time.time()``) to
the client's ``time.time()`` at receipt (one machine, one clock).

Each mode is one run with the same messages: ``--boards`` boards updated round-robin
(``BoardState`` on ``games``) at ``--rate`` messages/s for ``--seconds`` (every
message due is published when the loop wakes: an overloaded server gets bursts,
as the monitor's hub would, rather than a lower rate); then the
bench waits until every client has caught up (or ``--tail`` seconds). With
``--mode both`` (the default) plain runs first, then batch, in this process, and
the ratios are printed. Reported per mode: messages/s published, deliveries
(message items received by clients) and the messages they stand for (a conflated
board is covered by its newer state), frames/s, server CPU per message published
(for all clients) and per message-client, the server's event-loop lag (a 20 ms
probe) p99/max, client latency p50/p95/p99/max, and the client process's CPU.

    python bench/fanout.py --clients 500 --rate 200 --seconds 10
    python bench/fanout.py --mode batch --clients 500 --rate 20   # the old default, batched

Goal: p95 under 50 ms with 500 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing as mp
import os
import re
import resource
import statistics
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

from websockets.asyncio.client import connect

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import WebServer
from livemon.live.messages import BoardState

DELTA_HEAD = re.compile(r'\{"type":"deltas?","seq":(\d+)')
TS = re.compile(r'"ts":([0-9.e+-]+)')
FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


@dataclass
class ClientResult:
    frames: int = 0
    items: int = 0
    snapshots: int = 0
    last: int = 0
    latencies: list[float] | None = None


def clients_main(port: int, n: int, batch: bool, pipe: Connection) -> None:
    """The client process: connect n clients to ``games`` (batching or not), record each item's latency."""

    async def one(res: ClientResult, ready: asyncio.Event, done: asyncio.Event, target: list[int]) -> None:
        lat: list[float] = []
        res.latencies = lat
        async with connect(f"ws://127.0.0.1:{port}/ws", max_queue=None) as ws:
            await ws.recv()  # hello
            await ws.send(json.dumps({"op": "subscribe", "channels": ["games"], "batch": batch}))
            res.last = json.loads(await ws.recv())["seq"]  # snapshot
            ready.set()
            async for raw in ws:
                t = time.time()
                head = DELTA_HEAD.match(raw)
                if head:  # delta or deltas: the envelope is spliced by the server, the ts read by a regex
                    stamps = TS.findall(raw)
                    res.frames += 1
                    res.items += len(stamps)
                    lat.extend(t - float(ts) for ts in stamps)
                    res.last = int(head.group(1))
                else:
                    frame = json.loads(raw)
                    if frame["type"] != "snapshot":
                        continue
                    res.snapshots += 1
                    res.last = frame["seq"]
                if target and res.last >= target[0]:
                    break
            done.set()

    async def main() -> None:
        results = [ClientResult() for _ in range(n)]
        done = [asyncio.Event() for _ in range(n)]
        target: list[int] = []
        tasks = []
        for start in range(0, n, 50):  # connect in batches: the listen backlog is finite
            events = [asyncio.Event() for _ in range(start, min(n, start + 50))]
            for k, ev in enumerate(events):
                tasks.append(asyncio.create_task(one(results[start + k], ev, done[start + k], target)))
            await asyncio.gather(*(ev.wait() for ev in events))
        cpu0 = time.process_time()
        pipe.send("ready")
        final, tail = await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # (last seq, tail)
        target.append(final)
        for r, ev in zip(results, done):
            if r.last >= final:
                ev.set()
        caught_up = True
        try:
            await asyncio.wait_for(asyncio.gather(*(ev.wait() for ev in done)), tail)
        except TimeoutError:
            caught_up = False
        cpu = time.process_time() - cpu0
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        pipe.send((results, caught_up, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))

    asyncio.run(main())


async def lag_probe(out: list[float], tick: float = 0.02) -> None:
    while True:
        t0 = time.monotonic()
        await asyncio.sleep(tick)
        out.append(1000 * (time.monotonic() - t0 - tick))


async def run(mode: str, n: int, rate: float, seconds: float, boards: int, tail: float,
              round_gap: float | None = None) -> dict[str, float]:
    hub = Hub()
    for b in range(boards):
        hub.publish(BoardState(f"g{b}", "White, W", "Black, B", 2700, 2650, FEN, 4, "Nc6", "b8c6", 0, ()))
    server = WebServer(hub, WebConfig(port=0, client_queue=1024))
    if round_gap is not None:
        server.round_gap = round_gap
    await server.start()
    rss0 = rss_mib()
    here, there = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=clients_main, args=(server.port, n, mode == "batch", there), daemon=True)
    proc.start()
    loop = asyncio.get_running_loop()
    assert await loop.run_in_executor(None, here.recv) == "ready"
    rss_connected = rss_mib()
    count = int(rate * seconds)
    lags: list[float] = []
    probe = asyncio.create_task(lag_probe(lags))
    load0 = load()
    cpu0 = time.process_time()
    start = time.monotonic()
    i = 0
    while i < count:  # every message due by now, then sleep: a busy loop gets bursts, not a lower rate
        due = min(count, int((time.monotonic() - start) * rate) + 1)
        while i < due:
            evals = tuple(range(-20, 20 + i % 40))
            hub.publish(BoardState(f"g{i % boards}", "White, W", "Black, B", 2700, 2650, FEN, 5 + i // boards, "Nc6",
                                   "b8c6", i % 300 - 150, evals))
            i += 1
        await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
    elapsed = time.monotonic() - start
    here.send((hub.seq, tail))
    results, caught_up, client_cpu, client_rss = await loop.run_in_executor(None, here.recv)
    wall = time.monotonic() - start
    cpu = time.process_time() - cpu0  # the server process's CPU: independent of other load on the machine
    probe.cancel()
    rss_peak = rss_mib()
    proc.join(10)
    await server.close()
    load1 = load()

    lat = sorted(1000 * x for r in results for x in r.latencies or ())
    items = sum(r.items for r in results)
    frames = sum(r.frames for r in results)
    resnaps = server.stats["resnapshots"]
    q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")  # noqa: E731
    lags.sort()
    pairs = n * count
    print(f"== {mode}: {n} clients on games, {count} messages on {boards} boards at {count / elapsed:.1f}/s "
          f"for {elapsed:.1f} s; all caught up {'yes' if caught_up else 'NO'} after {wall:.1f} s ({load0})")
    print(f"   deliveries {items} items in {frames} frames ({items / max(frames, 1):.1f} items/frame) for {pairs} "
          f"message-clients ({pairs - items} conflated or skipped by {resnaps} resnapshots); "
          f"{items / wall:.0f} items/s, {frames / wall:.0f} frames/s")
    if server.batch_stats["frames"]:
        bs = server.batch_stats
        print(f"   server batching: {bs['frames']} deltas frames for {bs['messages']} queued messages, "
              f"{bs['conflated']} conflated")
    fs = getattr(server, "fanout_stats", None)
    if fs:  # the shared fan-out: frames built once per group and round, then the same bytes to every client
        print(f"   server fan-out: {fs['rounds']} rounds, {fs['built']} data frames built, {fs['shared']} sent again "
              f"from the cache, {fs['pump_seconds']:.2f} s in the pump (round gap at least {server.round_gap * 1000:g} ms)")
    print(f"   server CPU {cpu:.2f} s = {1e3 * cpu / count:.2f} ms per message published (to {n} clients), "
          f"{1e6 * cpu / pairs:.1f} us per message-client; loop lag p99 {q(lags, 0.99):.1f} ms max {lags[-1] if lags else 0:.1f} ms")
    print(f"   latency publish->client (ts): p50 {q(lat, 0.5):.1f} ms  p95 {q(lat, 0.95):.1f} ms  p99 {q(lat, 0.99):.1f} ms  "
          f"max {lat[-1] if lat else float('nan'):.1f} ms  mean {statistics.fmean(lat) if lat else float('nan'):.1f} ms")
    print(f"   client process CPU {client_cpu:.2f} s ({client_cpu / wall:.0%} of a core), RSS peak {client_rss:.0f} MiB; "
          f"server RSS {rss0:.1f} MiB before clients, {rss_connected:.1f} MiB connected, {rss_peak:.1f} MiB at the end")
    print(f"   goal p95 < 50 ms: {'met' if q(lat, 0.95) < 50 else 'NOT met'} (ratio {q(lat, 0.95) / 50:.2f}); {load1}")
    return {"cpu_per_msg": cpu / count, "p95": q(lat, 0.95), "p99": q(lat, 0.99), "items_s": items / wall,
            "frames": frames, "lag_p99": q(lags, 0.99), "wall": wall}


async def bench(mode: str, n: int, rate: float, seconds: float, boards: int, tail: float,
                round_gap: float | None = None) -> None:
    modes = ["plain", "batch"] if mode == "both" else [mode]
    out = {}
    for m in modes:
        out[m] = await run(m, n, rate, seconds, boards, tail, round_gap)
        await asyncio.sleep(1.0)
    if len(out) == 2:
        a, b = out["plain"], out["batch"]
        print(f"== batch vs plain (same process, same messages): server CPU per message {b['cpu_per_msg'] / a['cpu_per_msg']:.2f}x, "
              f"frames {b['frames'] / max(a['frames'], 1):.3f}x, latency p95 {b['p95'] / a['p95']:.3f}x "
              f"({a['p95']:.0f} -> {b['p95']:.0f} ms), p99 {b['p99'] / a['p99']:.3f}x, loop lag p99 "
              f"{a['lag_p99']:.0f} -> {b['lag_p99']:.0f} ms, time to catch up {a['wall']:.1f} -> {b['wall']:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=500)
    ap.add_argument("--rate", type=float, default=200.0, help="messages published per second")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--boards", type=int, default=200, help="distinct boards updated round-robin")
    ap.add_argument("--mode", choices=("plain", "batch", "both"), default="both",
                    help="plain: one delta per message; batch: deltas frames (the overlay's choice); both: plain, then batch")
    ap.add_argument("--tail", type=float, default=60.0, help="seconds to wait after publishing for clients to catch up")
    ap.add_argument("--round-gap", type=float, help="seconds between two fan-out rounds, at least (default: the server's)")
    args = ap.parse_args()
    logging.getLogger("livemon.faces.web").setLevel(logging.ERROR)  # a resnapshot per client is counted, not logged
    asyncio.run(bench(args.mode, args.clients, args.rate, args.seconds, args.boards, args.tail, args.round_gap))


if __name__ == "__main__":
    main()
