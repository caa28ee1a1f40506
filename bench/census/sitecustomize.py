"""A memory census inside ``livemon serve``, by owner: what grows over a long event.

Loaded by Python's ``site`` at start-up when this folder is on ``PYTHONPATH``, and active only in a
``livemon serve`` process with ``LIVEMON_CENSUS`` set (a path prefix). Each SIGUSR1 then appends one
census to ``$LIVEMON_CENSUS.<pid>``: the collector is unfrozen and run first (the monitor's
``gc.freeze()`` hides frozen objects from ``gc.get_objects()``), then every object is walked once
(``gc.get_referents``, untracked containers included) and its ``sys.getsizeof`` counted for the first
owner that reaches it, in a fixed order: the core's games, estimator and screener parts, the hub's
latest messages and log, the web face, the feeds, the event loop's tasks, the rest of the hub and the
monitor, then module globals by module and anything else by type. Each line: MB (change since the
last census), objects (change), owner. A census takes 1-2 s at 250 boards and allocates ~60 MB
(its visited set): use it to attribute growth, not in a run whose RSS is the figure. Usage::

    PYTHONPATH=bench/census LIVEMON_CENSUS=/tmp/census python bench/round.py --boards 250 \\
        --compression 40 --minutes 5 --clients 100 &
    kill -USR1 $(pgrep -f "livemon.cli serve")   # at two moments; compare the two censuses
"""

from __future__ import annotations

import os
import sys

if "serve" in sys.argv and os.environ.get("LIVEMON_CENSUS"):
    import asyncio
    import gc
    import signal
    import time
    import types
    from typing import Any

    _OUT = f"{os.environ['LIVEMON_CENSUS']}.{os.getpid()}"
    _SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType)
    _previous: dict[str, tuple[int, int]] = {}

    def _walk(root: Any, seen: set[int]) -> tuple[int, int]:
        size = count = 0
        stack = [root]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or isinstance(obj, _SKIP):
                continue
            seen.add(id(obj))
            size += sys.getsizeof(obj, 0)
            count += 1
            stack.extend(gc.get_referents(obj))
        return size, count

    def _roots(monitor: Any) -> list[tuple[str, Any]]:
        core, hub = monitor.core, monitor.hub
        roots: list[tuple[str, Any]] = [(f"core.{k}", getattr(core, k)) for k in ("games", "infos", "results", "ttt")]
        roots += [(f"est.{k}", getattr(core.estimator, k)) for k in ("games", "players", "_by_seq", "_pairs")]
        if core.screener is not None:
            roots += [(f"scr.{k}", v) for k, v in vars(core.screener).items()]
        roots += [("core.rest", core), ("hub._latest", hub._latest), ("hub._log", hub._log)]
        shorts = {"Fanout": "web", "WebServer": "webserver", "MqttOut": "mqtt"}  # the fan-out holds the caches, clients
        faces = [o for o in gc.get_objects() if type(o).__name__ in shorts]
        faces.sort(key=lambda o: type(o).__name__ != "Fanout")  # its caches are counted under it, not the server
        for face in faces:  # each attribute on its own first (the web face's caches, its clients), then the rest
            short = shorts[type(face).__name__]
            roots += [(f"{short}.{k}", v) for k, v in vars(face).items()]
        roots += [(f"obj.{type(o).__name__}", o) for o in faces]
        roots += [(f"feed{i}", feed) for i, feed in enumerate(monitor.feeds)]
        try:
            roots += [(f"task.{t.get_name().split('-')[0]}", t) for t in asyncio.all_tasks(asyncio.get_running_loop())]
        except RuntimeError:
            pass
        roots += [(f"hub.{k}", v) for k, v in vars(hub).items() if k not in ("_latest", "_log")]
        roots += [(f"mon.{k}", v) for k, v in vars(monitor).items() if k not in ("core", "hub", "feeds")]
        return roots

    def _census(*_: Any) -> None:
        from livemon.app.monitor import Monitor

        start = time.perf_counter()
        gc.unfreeze()
        gc.collect()
        monitors = [o for o in gc.get_objects() if type(o) is Monitor]
        lines = [f"census t={time.time():.0f}"]
        if monitors:
            monitor = monitors[0]
            seen = {id(monitor), id(vars(monitor)), id(monitor.hub), id(vars(monitor.hub))}
            seen.add(id(seen))
            found: dict[str, tuple[int, int]] = {}

            def count(name: str, obj: Any) -> None:
                size, n = _walk(obj, seen)
                if size:
                    was = found.get(name, (0, 0))
                    found[name] = (was[0] + size, was[1] + n)

            for name, root in _roots(monitor):
                count(name, root)
            modules = {id(vars(m)): name for name, m in list(sys.modules.items()) if m is not None and hasattr(m, "__dict__")}
            for obj in gc.get_objects():
                count("rest: " + (f"module {modules[id(obj)]}" if id(obj) in modules else type(obj).__name__), obj)
            for name, (size, n) in sorted(found.items(), key=lambda kv: -kv[1][0]):
                was = _previous.get(name, (0, 0))
                if size > 50_000 or abs(size - was[0]) > 50_000:
                    lines.append(f"  {size / 2**20:8.2f} MB ({(size - was[0]) / 2**20:+7.2f}) {n:9d} ({n - was[1]:+8d})  {name}")
            _previous.update(found)
        else:
            lines.append("  no monitor in this process")
        lines.append(f"  ({time.perf_counter() - start:.1f} s)")
        gc.freeze()
        with open(_OUT, "a") as f:
            f.write("\n".join(lines) + "\n")

    signal.signal(signal.SIGUSR1, _census)
