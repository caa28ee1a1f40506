"""Which callbacks make the event loop's long turns, inside ``livemon serve`` (loop lag).

Loaded by Python's ``site`` at start-up when this folder is on ``PYTHONPATH``, and active only in a
``livemon serve`` process with ``LIVEMON_TURNS`` set (a path prefix). It times every callback the
loop runs (``asyncio.events.Handle._run``) and sums them per loop turn (``BaseEventLoop._run_once``).
At exit it writes ``$LIVEMON_TURNS.<pid>``: the distribution of a turn's work (the time its
callbacks ran, select excluded), and, for the turns of at least ``LIVEMON_TURNS_MS`` (default 40)
ms, each callback's share of them (a task's step is named by its coroutine, a plain callback by its
qualified name), the garbage collector's pauses (by generation, and their part of the long turns), and
the single longest callbacks seen. The timing costs ~1 µs a callback. Optional: ``LIVEMON_TURNS_STACKS_MS=N``
samples (every 2 ms, from a thread) the loop thread's stack while a callback has run N ms (where the long
turns spend their time: it found Algorithm 2's per-component loop, ~40 ms a tick at 1,000 boards);
``LIVEMON_GC_SCAN=N`` records the young heap of every Nth collection; ``kill -USR1`` audits the frozen heap
for cyclic garbage (one full collection). Usage::

    PYTHONPATH=bench/turns LIVEMON_TURNS=/tmp/turns python bench/round.py --boards 250 \\
        --compression 40 --minutes 5 --clients 100
    cat /tmp/turns.*
"""

from __future__ import annotations

import os
import sys

if "serve" in sys.argv and os.environ.get("LIVEMON_TURNS"):
    import asyncio.base_events
    import asyncio.events
    import atexit
    import gc
    import time

    _OUT = f"{os.environ['LIVEMON_TURNS']}.{os.getpid()}"
    _SLOW = float(os.environ.get("LIVEMON_TURNS_MS", "40")) / 1000
    _clock = time.perf_counter
    _turn: list[tuple[object, float]] = []
    _turn_hist: dict[int, int] = {}  # turn work, 5 ms bins
    _slow_share: dict[str, list[float]] = {}  # name -> [seconds in slow turns, calls]
    _longest: list[tuple[float, str]] = []
    _slow_turns = [0, 0.0]
    _gc = {"start": 0.0, "turn": 0.0, "slow": 0.0}  # a collection's start; GC seconds in this turn, in slow turns
    _gc_gens: dict[int, list[float]] = {}  # generation -> [collections, seconds, longest]

    _SCAN = int(os.environ.get("LIVEMON_GC_SCAN", "0"))  # every Nth young collection: what it walks
    _scans: list[tuple[float, int, int, list[tuple[int, str]]]] = []  # seconds, generation, objects, biggest
    _scan_at: list[object] = [None]
    _gc_n = [0]

    def _young() -> tuple[int, list[tuple[int, str]]]:
        objs = [o for g in (0, 1) for o in gc.get_objects(g)]
        big = []
        for o in objs:
            if o is objs:
                continue
            if isinstance(o, (dict, list, set, frozenset, tuple)) or hasattr(o, "__len__") and type(o).__name__ == "deque":
                n = len(o)  # type: ignore[arg-type]
                if n >= 256:
                    hint = ""
                    if isinstance(o, dict) and o:
                        k = next(iter(o))
                        hint = f" key {type(k).__name__} {repr(k)[:40]} -> {type(o[k]).__name__}"
                    elif isinstance(o, (list, tuple)) and o:
                        hint = f" of {type(o[0]).__name__}"
                    big.append((n, f"{type(o).__name__}{hint}"))
        big.sort(reverse=True)
        return len(objs) - 1, big[:6]

    def _collected(phase: str, info: dict[str, int]) -> None:
        """``gc.callbacks``: the time of each collection, by generation, and in the turn it ran in."""
        if phase == "start":
            _scan_at[0] = None
            if _SCAN:
                _gc_n[0] += 1
                if _gc_n[0] % _SCAN == 0 and info["generation"] < 2:
                    _scan_at[0] = _young()
            _gc["start"] = _clock()
            return
        d = _clock() - _gc["start"]
        if _scan_at[0] is not None:
            n, big = _scan_at[0]  # type: ignore[misc]
            _scans.append((d, info["generation"], n, big))
        _gc["turn"] += d
        entry = _gc_gens.setdefault(info["generation"], [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += d
        entry[2] = max(entry[2], d)

    gc.callbacks.append(_collected)

    def _name(cb: object) -> str:
        owner = getattr(cb, "__self__", None)
        if isinstance(owner, asyncio.Task):
            coro = owner.get_coro()
            return f"task {getattr(coro, '__qualname__', type(coro).__name__)}"
        return getattr(cb, "__qualname__", type(cb).__name__)

    _run = asyncio.events.Handle._run
    _current: list[float] = [0.0]  # when the running callback started (0: none running)

    def _timed_run(self: asyncio.events.Handle) -> None:
        callback = self._callback  # a handle that cancels itself while it runs clears it
        start = _current[0] = _clock()
        _run(self)
        _current[0] = 0.0
        _turn.append((callback, _clock() - start))

    _STACKS_MS = float(os.environ.get("LIVEMON_TURNS_STACKS_MS", "0")) / 1000
    _stacks: dict[str, int] = {}  # a long callback's stack, where it was when sampled -> samples

    if _STACKS_MS:
        import threading
        import traceback

        _main = threading.main_thread().ident

        def _watch() -> None:
            """Every 2 ms: if the loop's callback has run longer than ``LIVEMON_TURNS_STACKS_MS``, count
            the main thread's stack (its livemon frames): where the long callbacks spend their time."""
            while True:
                time.sleep(0.002)
                started = _current[0]
                if not started or _clock() - started < _STACKS_MS:
                    continue
                frame = sys._current_frames().get(_main)  # noqa: SLF001 - a profiler's own tool
                if frame is None:
                    continue
                frames = [f for f in traceback.extract_stack(frame) if "livemon" in f.filename or "json" in f.filename]
                key = " <- ".join(f"{os.path.basename(f.filename)}:{f.name}:{f.lineno}" for f in reversed(frames[-6:]))
                _stacks[key] = _stacks.get(key, 0) + 1

        threading.Thread(target=_watch, name="turns-watch", daemon=True).start()

    _run_once = asyncio.base_events.BaseEventLoop._run_once

    def _timed_run_once(self: asyncio.base_events.BaseEventLoop) -> None:
        _turn.clear()
        _gc["turn"] = 0.0
        _run_once(self)
        work = sum(d for _, d in _turn)
        edge = int(work * 200)
        _turn_hist[edge] = _turn_hist.get(edge, 0) + 1
        if work >= _SLOW:
            _slow_turns[0] += 1
            _slow_turns[1] += work
            _gc["slow"] += _gc["turn"]
            for cb, d in _turn:
                entry = _slow_share.setdefault(_name(cb), [0.0, 0])
                entry[0] += d
                entry[1] += 1
        for cb, d in _turn:
            if d >= 0.010:
                _longest.append((d, _name(cb)))
        if len(_longest) > 2000:
            _longest.sort(reverse=True)
            del _longest[200:]

    asyncio.events.Handle._run = _timed_run  # type: ignore[method-assign]
    asyncio.base_events.BaseEventLoop._run_once = _timed_run_once  # type: ignore[method-assign]

    def _report() -> None:
        turns = sum(_turn_hist.values())
        lines = [f"turns {turns}; turn work (callbacks' time) in 5 ms bins: count"]
        lines += [f"  {k * 5:>4}-{k * 5 + 5} ms: {v}" for k, v in sorted(_turn_hist.items()) if k]
        lines.append(f"turns of >= {_SLOW * 1000:.0f} ms: {_slow_turns[0]}, {_slow_turns[1]:.1f} s of work; "
                     "by callback (s, share, calls, mean ms):")
        total = _slow_turns[1] or 1.0
        for name, (sec, calls) in sorted(_slow_share.items(), key=lambda kv: -kv[1][0])[:40]:
            lines.append(f"  {sec:7.2f} {sec / total:6.1%} {calls:8d} {sec / calls * 1000:7.2f}  {name}")
        lines.append(f"garbage collections (gc.callbacks; {_gc['slow']:.2f} s of them in the turns of >= "
                     f"{_SLOW * 1000:.0f} ms): generation, count, seconds, longest ms")
        lines += [f"  {g}  {n:8.0f} {sec:7.2f} {top * 1000:7.1f}" for g, (n, sec, top) in sorted(_gc_gens.items())]
        if _scans:
            _scans.sort(key=lambda r: -r[0])
            lines.append(f"young collections scanned ({len(_scans)}), slowest: ms, generation, young objects, biggest"
                         " young containers (len, type)")
            for d, g, n, big in _scans[:25]:
                lines.append(f"  {d * 1000:7.2f} gen{g} {n:8d}  " + "; ".join(f"{k} {t}" for k, t in big))
            by_gen: dict[int, list[tuple[float, int]]] = {}
            for d, g, n, _ in _scans:
                by_gen.setdefault(g, []).append((d, n))
            for g, rows in sorted(by_gen.items()):
                rows.sort()
                mid = rows[len(rows) // 2]
                lines.append(f"  gen{g}: {len(rows)} scanned, median {mid[0] * 1000:.2f} ms with {mid[1]} young objects")
        if _stacks:
            total_s = sum(_stacks.values())
            lines.append(f"where callbacks past {_STACKS_MS * 1000:.0f} ms were ({total_s} samples, every 2 ms):")
            for key, n in sorted(_stacks.items(), key=lambda kv: -kv[1])[:40]:
                lines.append(f"  {n:6d} {n / total_s:6.1%}  {key}")
        _longest.sort(reverse=True)
        lines.append("longest single callbacks (ms):")
        lines += [f"  {d * 1000:7.1f}  {name}" for d, name in _longest[:40]]
        with open(_OUT, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")

    atexit.register(_report)

    import signal

    def _audit(signum: int, frame: object) -> None:
        """SIGUSR1: how much cyclic garbage the periodic ``gc.freeze()`` kept out of the collector's sight
        (unfreeze, full collection, freeze again; one pause of a full collection). Appends a line to
        ``$LIVEMON_TURNS.<pid>.audit``."""
        def rss() -> float:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        before, frozen, t0 = rss(), gc.get_freeze_count(), _clock()
        gc.unfreeze()
        found = gc.collect()
        took = _clock() - t0
        gc.freeze()
        with open(f"{_OUT}.audit", "a", encoding="utf-8") as f:
            f.write(f"{time.time():.0f} frozen {frozen} unreachable {found} full collection {took * 1000:.0f} ms "
                    f"rss {before:.1f} -> {rss():.1f} MiB\n")

    signal.signal(signal.SIGUSR1, _audit)
