"""The live pipeline's own costs: overhead, analyses per ply, loop lag.

1. **Overhead**: every position already in the cache, so the engine never
   searches; what is left is the monitor's own work per move (store the move,
   look the positions up, score the ply, update the player's estimates,
   publish to the hub with one subscriber draining it). Measured two ways:
   throughput (all moves of R copies of the London 2011 event handed in at
   once) and latency (one move at a time: from ``Monitor.handle`` until the
   ply is scored). Goal: >= 10,000 moves/s on one core.
2. **Analyses per ply** with the real engine on a cold cache: searches / plies
   (goal <= 1.0: one search per position, shared openings searched once).
3. **Event-loop lag during a TTT refresh** of N finished games: a ticker asks
   for 5 ms sleeps and records how late it wakes, while the refresh runs in
   the worker process. The reference is the same fit run on the event loop
   (what the lag would be without the worker process). Goal: < 50 ms.
4. **Memory of a live ply** (``--live-copies N``): the bytes of Python objects the monitor holds for
   each ply of a game still going (tracemalloc), the growth of a round before its games finish.

    python bench/pipeline.py [--copies 4] [--depth 8] [--ttt-games 20000] [--live-copies 4] [--bursts 3]
"""

from __future__ import annotations

import argparse
import cProfile
import contextlib
import asyncio
import dataclasses
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import numpy as np

from livemon.config import Config, ReplayFeedConfig
from livemon.io.feeds import open_feed
from livemon.live.messages import GameInfo, GameResult, Message, MoveEvent
from livemon.app.monitor import Monitor
from livemon.io.store import Store
from livemon.io.tttjob import run_ttt
from livemon.live.pgn import white_score

REAL = Path(__file__).resolve().parents[1] / "tests" / "data"
LONDON = REAL / "london_chess_classic_2011_twic.pgn"
GOAL_BURST = 10_000
"""Moves/s through the monitor in a burst with every position cached."""


async def replay_messages(path: Path) -> list[Message]:
    """Every message a speed-0 replay of ``path`` yields, in order."""
    feed = open_feed(ReplayFeedConfig(name="bench", path=str(path), speed=0.0))
    return [m async for m in feed]


def renamed(msgs: list[Message], copy: int) -> list[Message]:
    """The same event under other game ids and player names (same positions: cache hits)."""
    out: list[Message] = []
    for m in msgs:
        if isinstance(m, GameInfo):
            m = dataclasses.replace(m, game_id=f"{m.game_id}#{copy}", white=f"{m.white} #{copy}",
                                    black=f"{m.black} #{copy}")
        elif isinstance(m, (MoveEvent, GameResult)):
            m = dataclasses.replace(m, game_id=f"{m.game_id}#{copy}")
        out.append(m)
    return out


def config(store: Path, depth: int, processes: int = 1) -> Config:
    cfg = Config()
    cfg.store.path = str(store)
    cfg.engine.depth = depth
    cfg.engine.processes = processes
    cfg.engine.backlog_high = 10**9  # no eval-bar previews: only the pinned profile is searched, so the warm cache hits
    cfg.store.backup_minutes = 0
    return cfg


def served(cfg: Config) -> Monitor:
    """A monitor on its store as ``livemon serve`` opens it (WAL checkpoints in a thread, not in a commit)."""
    from livemon.io.store import open_monitor_store

    return Monitor(cfg, store=open_monitor_store(cfg.store))


async def drained(monitor: Monitor) -> None:
    """Subscriber that reads everything the faces would read."""
    sub = monitor.hub.subscribe(["games", "players", "status", "ttt"], maxsize=100_000)
    while True:
        await sub.queue.get()


@contextlib.asynccontextmanager
async def running(store: Path, depth: int) -> AsyncIterator[Monitor]:
    """A served monitor on ``store`` with its engine pool started, the profile pinned (performance estimates
    and screening on) and a subscriber draining it; everything closed after."""
    monitor = served(config(store, depth))
    await monitor.pool.start()
    reader = asyncio.create_task(drained(monitor))
    try:
        monitor._pin_profile()
        yield monitor
    finally:
        reader.cancel()
        await monitor.close()
        monitor.store.close()


async def warm_cache(msgs: list[Message], store: Path, depth: int) -> dict[str, int]:
    """Analyse every position once with the real engine (cold cache); count searches per ply."""
    monitor = Monitor(config(store, depth, processes=2))
    await monitor.pool.start()
    try:
        for m in msgs:
            monitor.handle(m)
        await monitor.drain()
        plies = sum(g.plies for g in monitor.games.values())
        return {"plies": plies, "searches": monitor.pool.counters.searches, "games": len(monitor.games)}
    finally:
        await monitor.close()


def copy_cache(src: Path, dst: Path, depth: int) -> None:
    """A fresh store holding only the position cache of ``src`` (no games: nothing to resume), and the
    shipped calibration of the default profile filed under the bench's profile, so that the performance
    estimate and screening run as at a real event (their figures mean nothing here, their cost is real)."""
    from livemon.io.store import shipped_calibrations

    with Store(dst) as store:
        store.engine.db.execute("ATTACH DATABASE ? AS src", (str(src),))
        store.engine.db.execute("INSERT INTO analyses SELECT * FROM src.analyses")
        store.engine.db.execute("DETACH DATABASE src")
        profile = store.engine.db.execute("SELECT profile FROM analyses LIMIT 1").fetchone()[0]
        shipped = next(iter(shipped_calibrations().values()), None)
        if shipped is not None:
            store.calibrations.put(dataclasses.replace(shipped, profile=profile))


def rss_mb() -> float:
    """Resident set size of this process now (Linux /proc), MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


async def long_replay(msgs: list[Message], store: Path, depth: int, copies: int,
                      trace: int = 0) -> list[tuple[int, float]]:
    """RSS after each copy of the event handed in (all cached): flat when finished games are compacted.

    ``trace``: print the ``trace`` allocation sites (tracemalloc) that grew most between the middle and
    the end of the run (slow: tracemalloc costs 2-4x)."""
    import tracemalloc

    mid: tracemalloc.Snapshot | None = None
    if trace:
        tracemalloc.start(8)
    out: list[tuple[int, float]] = []
    async with running(store, depth) as monitor:
        for c in range(copies):
            for m in renamed(msgs, 1000 + c):
                monitor.handle(m)
            await monitor.drain()
            await asyncio.sleep(0)
            out.append((len(monitor.games), rss_mb()))
            if trace and c == copies // 2 - 1:
                mid = tracemalloc.take_snapshot()
        if trace and mid is not None:
            end = tracemalloc.take_snapshot()
            games = len(monitor.games) - out[copies // 2 - 1][0]
            for key in ("lineno", "traceback"):
                print(f"tracemalloc, second half ({games} games), top {trace} by {key}:")
                for st in end.compare_to(mid, key)[:trace]:
                    where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in reversed(st.traceback))
                    print(f"  {st.size_diff / 2**20:+8.2f} MB {st.count_diff:+9d} blocks  {where}")
            tracemalloc.stop()
        return out


async def live_ply_bytes(store: Path, depth: int, copies: int) -> tuple[int, float, list[tuple[str, float]]]:
    """Bytes of Python objects the monitor holds a live ply (all cached; tracemalloc): ``2 * copies`` copies of
    the event handed in without their results (every game stays live), the second half measured, each copy
    parsed anew (its strings its own, as a feed makes them). Returns the plies measured, the bytes a ply and
    the files that hold most of them (the hub's bounded log of board messages among them)."""
    import tracemalloc
    from collections import Counter

    async with running(store, depth) as monitor:
        async def live_copies(first: int) -> int:
            plies = 0
            for c in range(first, first + copies):
                for m in renamed(await replay_messages(LONDON), c):
                    if not isinstance(m, GameResult):
                        plies += isinstance(m, MoveEvent)
                        monitor.handle(m)
                await monitor.drain()
            await asyncio.sleep(0.2)  # the subscriber reads what was published
            gc.collect()
            return plies

        await live_copies(0)
        tracemalloc.start(1)
        before = tracemalloc.take_snapshot()
        plies = await live_copies(copies)
        diff = tracemalloc.take_snapshot().compare_to(before, "filename")
        tracemalloc.stop()
        by_file: Counter[str] = Counter()
        for d in diff:
            by_file[Path(d.traceback[0].filename).name] += d.size_diff
        return plies, sum(d.size_diff for d in diff) / plies, [(f, b / plies) for f, b in by_file.most_common(8)]


def reference_moves_per_s(msgs: list[Message]) -> tuple[float, float]:
    """The floor of any monitor: python-chess parsing, pushing and printing the FEN of each move, once. Moves per
    second of wall-clock time and of this process's CPU time (less disturbed by other work on the machine)."""
    moves = [m for m in msgs if isinstance(m, MoveEvent)]
    boards: dict[str, chess.Board] = {}
    c0, t0 = time.process_time(), time.perf_counter()
    for m in moves:
        board = boards.get(m.game_id)
        if board is None:
            board = boards[m.game_id] = chess.Board(m.fen_before)
        board.push(chess.Move.from_uci(m.uci))
        board.fen()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return len(moves) / wall, len(moves) / cpu


async def overhead(msgs: list[Message], store: Path, depth: int, profile: Path | None = None) -> dict[str, float]:
    """Moves/s and per-move latency with every position cached."""
    async with running(store, depth) as monitor:
        moves = [m for m in msgs if isinstance(m, MoveEvent)]
        half = len(msgs) // 2
        # throughput: the first half handed in as fast as a feed can
        prof = cProfile.Profile() if profile is not None else None
        if prof is not None:
            prof.enable()
        c0, t0 = time.process_time(), time.perf_counter()
        for m in msgs[:half]:
            monitor.handle(m)
        await monitor.drain()
        burst, burst_cpu = time.perf_counter() - t0, time.process_time() - c0
        if prof is not None:
            prof.disable()
            prof.dump_stats(str(profile))
        burst_moves = sum(isinstance(m, MoveEvent) for m in msgs[:half])
        # latency: the second half one message at a time, each move until its ply is scored; the burst's
        # objects frozen first, as `serve`'s timer does every GC_FREEZE_SECONDS (else a full collection of
        # them, ~90 ms, lands in one move's latency)
        gc.freeze()
        lat: list[float] = []
        for m in msgs[half:]:
            t1 = time.perf_counter()
            monitor.handle(m)
            if isinstance(m, MoveEvent):
                game = monitor.estimator.games[m.game_id]
                while m.ply not in game.plies:
                    await asyncio.sleep(0)
                lat.append(time.perf_counter() - t1)
        await monitor.drain()
        c = monitor.pool.counters
        assert c.searches == 0, f"{c.searches} searches: the cache was not warm"
        scored = sum(len(g.plies) for g in monitor.estimator.games.values())
        assert scored == len(moves), f"{scored} plies scored of {len(moves)}"
        return {"moves": len(moves), "burst_moves": burst_moves, "burst_s": burst,
                "moves_per_s": burst_moves / burst, "burst_cpu_s": burst_cpu, "lat_p50_ms": 1e3 * statistics.median(lat),
                "lat_p95_ms": 1e3 * float(np.percentile(lat, 95)), "lat_max_ms": 1e3 * max(lat)}


async def least_burst_cpu(msgs: list[Message], cold: Path, depth: int, runs: int, tmp: Path) -> tuple[float, float]:
    """The burst of :func:`overhead` ``runs`` times in this process, each on a fresh copy of the warm store, and the
    reference before each: the least CPU time of the bursts and the reference's most moves per CPU second (the
    least disturbed of each, on a machine shared with other work)."""
    burst_moves = sum(isinstance(m, MoveEvent) for m in msgs[: len(msgs) // 2])
    bursts, refs = [], []
    for k in range(runs):
        warm = tmp / f"burst{k}.sqlite"
        copy_cache(cold, warm, depth)
        refs.append(reference_moves_per_s(msgs)[1])
        async with running(warm, depth) as monitor:
            gc.collect()
            c0 = time.process_time()
            for m in msgs[: len(msgs) // 2]:
                monitor.handle(m)
            await monitor.drain()
            bursts.append(time.process_time() - c0)
    return min(bursts), burst_moves / min(bursts) / max(refs)


def synthetic_results(n_games: int, n_players: int, seed: int = 1) -> list[Message]:
    """``n_games`` finished games among ``n_players`` (skills drawn once; rounds one a day)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 1, n_players)
    out: list[Message] = []
    for k in range(n_games):
        a, b = rng.choice(n_players, 2, replace=False)
        d = skill[a] - skill[b] + rng.normal(0, 1.4)
        result = "1-0" if d > 0.4 else "0-1" if d < -0.4 else "1/2-1/2"
        gid = f"ttt{k}"
        date = f"2024.{1 + (k * 12) // n_games:02d}.{1 + k % 28:02d}"
        out.append(GameInfo(gid, white=f"P{a}", black=f"P{b}", date=date, round=str(1 + k % 9)))
        out.append(GameResult(gid, result, plies=0))
    return out


async def loop_lag(store: Path, n_games: int, n_players: int) -> dict[str, float]:
    """Lateness of a 5 ms ticker while a TTT refresh runs (worker process) vs the fit on the loop."""
    cfg = config(store, 1)
    monitor = Monitor(cfg)
    for m in synthetic_results(n_games, n_players):
        monitor.handle(m)
    late: list[float] = []
    running = True

    async def ticker() -> None:
        while running:
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            late.append(time.perf_counter() - t - 0.005)

    try:
        await monitor._refresh_ttt()  # first fit: spawns the worker process, compiles
        finished = [(monitor.infos[g], r) for g, r in monitor.results.items()]
        tick = asyncio.create_task(ticker())
        t0 = time.perf_counter()
        monitor._ttt.forget()  # a cold fit: the longest refresh
        await monitor._refresh_ttt()
        refresh_s = time.perf_counter() - t0
        running = False
        await tick
        # reference: the same cold fit run on the event loop (what the lag would be without the worker)
        t1 = time.perf_counter()
        run_ttt(monitor._ttt.params, [i.white for i, _ in finished], [i.black for i, _ in finished],
                [i.date.replace(".", "-") for i, _ in finished], [white_score(r) or 0.0 for _, r in finished],
                cfg.ttt.time_unit, {}, None)
        inline_s = time.perf_counter() - t1
        return {"games": n_games, "players": n_players, "refresh_s": refresh_s,
                "lag_p99_ms": 1e3 * float(np.percentile(late, 99)), "lag_max_ms": 1e3 * max(late),
                "ticks": len(late), "inline_fit_s": inline_s}
    finally:
        monitor._ttt.close()


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=4, help="copies of the event for the overhead run")
    ap.add_argument("--depth", type=int, default=8, help="search depth of the cold-cache run")
    ap.add_argument("--ttt-games", type=int, default=20000)
    ap.add_argument("--ttt-players", type=int, default=2000)
    ap.add_argument("--cache", type=Path, help="keep the cold run's store here and reuse it on the next run")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the burst to this file")
    ap.add_argument("--long-copies", type=int, default=0,
                    help="then replay this many more copies (35 games each) and print RSS over time")
    ap.add_argument("--trace", type=int, default=0,
                    help="with --long-copies: print this many top growing allocation sites (tracemalloc)")
    ap.add_argument("--live-copies", type=int, default=0,
                    help="then measure the bytes a live ply holds: 2 x this many copies of the event, no results")
    ap.add_argument("--no-ttt", action="store_true", help="skip the TTT loop-lag part")
    ap.add_argument("--bursts", type=int, default=0,
                    help="then the burst this many more times in this process: the least CPU time and its ratio")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})  # "on one core" (the engines are separate processes)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    event = await replay_messages(LONDON)
    with tempfile.TemporaryDirectory() as tmp:
        cold, warm = Path(tmp) / "cold.sqlite", Path(tmp) / "warm.sqlite"
        if args.cache is not None and args.cache.exists():
            cold = args.cache
            print(f"cold cache: reusing {cold} (no cold run: analyses per ply not measured)")
        else:
            cold = args.cache or cold
            t = time.perf_counter()
            a = await warm_cache(event, cold, args.depth)
            print(f"analyses per ply (real Stockfish depth {args.depth}, cold cache, {a['games']} games): "
                  f"{a['searches']} searches / {a['plies']} plies = {a['searches'] / a['plies']:.3f} "
                  f"(naive N+1 per game: {(a['plies'] + a['games']) / a['plies']:.3f}) in {time.perf_counter() - t:.0f} s")
        copy_cache(cold, warm, args.depth)
        msgs = [m for c in range(args.copies) for m in renamed(event, c)]
        ref, ref_cpu = reference_moves_per_s(msgs)
        o = await overhead(msgs, warm, args.depth, args.profile)
        print(f"overhead, all cached: {o['burst_moves']} moves in {o['burst_s']:.2f} s = {o['moves_per_s']:,.0f} moves/s "
              f"(goal >= {GOAL_BURST:,}: {o['moves_per_s'] / GOAL_BURST:.2f}x the goal; load {os.getloadavg()[0]:.2f})")
        print(f"reference in this process, python-chess alone (parse, push, FEN per move): {ref:,.0f} moves/s; "
              f"the monitor runs at {o['moves_per_s'] / ref:.3f}x of it (CPU time: burst {o['burst_cpu_s']:.2f} s, "
              f"{o['burst_moves'] / o['burst_cpu_s'] / ref_cpu:.3f}x of the reference's {ref_cpu:,.0f} moves/s)")
        print(f"added latency per move (one at a time, {o['moves'] - o['burst_moves']} moves): "
              f"p50 {o['lat_p50_ms']:.2f} ms, p95 {o['lat_p95_ms']:.2f} ms, max {o['lat_max_ms']:.1f} ms")
        if args.bursts:
            least, ratio = await least_burst_cpu(msgs, cold, args.depth, args.bursts, Path(tmp))
            print(f"least CPU time of {args.bursts} more bursts in this process: {least:.2f} s, {ratio:.3f}x of the "
                  f"reference's (its least disturbed run)")
        if args.long_copies:
            rss = await long_replay(event, warm, args.depth, args.long_copies, args.trace)
            # the first copy, the copies nearest every 500 games, the last
            targets = [rss[0][0], *range(500, rss[-1][0], 500), rss[-1][0]]
            marks = [min(rss, key=lambda r: abs(r[0] - t)) for t in targets]
            marks = [m for k, m in enumerate(marks) if m not in marks[:k]]
            half = rss[len(rss) // 2:]
            print(f"long replay, {rss[-1][0]} games ({args.long_copies} copies of the event, all cached): RSS "
                  + ", ".join(f"{mb:.0f} MB at {g} games" for g, mb in marks)
                  + f"; second half grew {half[-1][1] - half[0][1]:+.0f} MB over {half[-1][0] - half[0][0]} games")
        if args.live_copies:
            plies, per_ply, files = await live_ply_bytes(warm, args.depth, args.live_copies)
            print(f"live plies, in process (tracemalloc, {plies} plies of {35 * args.live_copies} games without "
                  f"results, after as many): {per_ply:,.0f} bytes a live ply; by file: "
                  + ", ".join(f"{f} {b:,.0f}" for f, b in files))
        if args.no_ttt:
            return
        lag = await loop_lag(Path(tmp) / "ttt.sqlite", args.ttt_games, args.ttt_players)
        print(f"TTT refresh of {lag['games']} games / {lag['players']} players in the worker process: "
              f"{lag['refresh_s']:.2f} s; loop lag p99 {lag['lag_p99_ms']:.1f} ms, max {lag['lag_max_ms']:.1f} ms "
              f"over {lag['ticks']} ticks (goal < 50 ms)")
        print(f"reference, the same fit on the event loop: {lag['inline_fit_s']:.2f} s of lag "
              f"({lag['inline_fit_s'] * 1e3 / max(lag['lag_max_ms'], 1e-3):,.0f}x the worst lag above)")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
