"""Serving the monitor: its faces (web, MQTT) started beside it, a compact live log, a clean stop.

The wiring of ``livemon serve`` and ``livemon run``; the commands parse arguments and print.
SIGTERM or SIGINT (Ctrl-C) stops it cleanly, also while ``--until-done`` drains: every move read is
already stored, so nothing is lost; the next start resumes. Without a configured feed the bundled replay is
paced to this machine's engines (:func:`pace_demo`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from typing import Any, AsyncIterator, Callable

from livemon.app.monitor import Monitor
from livemon.errors import LivemonError
from livemon.faces.hub import Hub

log = logging.getLogger(__name__)


class StartError(LivemonError, RuntimeError):
    """The monitor cannot start (store, port); the message is the one line to print."""


async def live_log(hub: Hub, every: float = 5.0) -> None:
    """One line per finished game, and a status line every few seconds: the engines' lag (how long the oldest
    position waiting for the pinned profile has waited) apart from the feeds'."""
    from livemon.live.messages import BoardState, MonitorStatus

    sub = hub.subscribe({"games", "status"}, maxsize=10000)
    results: dict[str, str] = {}
    last = 0.0
    while True:
        _, msg = await sub.queue.get()
        if sub.overflowed:
            hub.resubscribe(sub)
        stamp = time.strftime("%H:%M:%S")
        if isinstance(msg, BoardState) and msg.result != "*" and results.get(msg.game_id) != msg.result:
            results[msg.game_id] = msg.result
            print(f"{stamp} result  {msg.white} - {msg.black} {msg.result} ({msg.ply} plies)", flush=True)
        elif isinstance(msg, MonitorStatus) and time.monotonic() - last >= every:
            last = time.monotonic()
            print(f"{stamp} status  moves {msg.moves} games {msg.games} searches {msg.searches} "
                  f"cache {msg.cache_hits} backlog {msg.backlog} engine lag {msg.engine_lag_seconds:.1f}s "
                  f"TTT {msg.ttt_refreshes}  [{msg.engine_profile}]", flush=True)


DEMO_POSITIONS = 6
"""Real positions searched at start to pace the bundled demo (a few seconds on one core at depth 12)."""


def _print(line: str) -> None:
    print(line, flush=True)


async def pace_demo(monitor: Monitor, positions: int = DEMO_POSITIONS,
                    say: Callable[[str], None] = _print) -> float | None:
    """Without a configured feed (the bundled demo) on this machine's engines: measure the pinned profile as
    ``livemon plan`` does and pace the replay to a share of what the engines follow
    (:func:`livemon.app.plan.demo_pace`), so the figures on screen are live; the plies per second set, or None
    (feeds configured, or engines behind a bus whose workers are not here to measure)."""
    from livemon.app.plan import demo_pace, measure

    cfg = monitor.cfg
    if cfg.feeds or cfg.bus.mode == "mqtt":
        return None
    seconds, profile, searched = await measure(cfg, positions)
    rate = demo_pace(seconds, cfg.engine.processes)
    monitor.demo_pace = rate
    say(f"{time.strftime('%H:%M:%S')} demo    {profile}: {seconds * 1e3:.0f} ms a search here ({searched} positions, "
        f"{cfg.engine.processes} engine(s), load {os.getloadavg()[0]:.2f}): the replay plays at most "
        f"{rate:.2f} moves/s, so the engines keep up")
    return rate


async def paced_run(monitor: Monitor, until_done: bool = False, say: Callable[[str], None] = _print) -> None:
    """:meth:`Monitor.run`, the bundled demo paced first (:func:`pace_demo`; its line to ``say``)."""
    await pace_demo(monitor, say=say)
    await monitor.run(until_feeds_end=until_done)


STOP_REPORT_SECONDS = 5.0
"""After a stop signal, if the process is still running this much later, the log lists what it waits on."""


def report_pending() -> None:
    """Log every task still pending and where it waits (a stop that takes long says why)."""
    tasks = [t for t in asyncio.all_tasks() if not t.done()]
    seen: dict[str, list[str]] = {}  # where -> the names of the tasks waiting there (thousands of analyses wait alike)
    for t in tasks:
        frames: list[str] = []
        coro: Any = t.get_coro()
        while coro is not None and len(frames) < 12:  # the chain of awaits, outermost first
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "ag_frame", None)
            if frame is not None:
                frames.append(f"{frame.f_code.co_qualname}:{frame.f_lineno}")
            coro = getattr(coro, "cr_await", None) or getattr(coro, "ag_await", None)
        where = " > ".join(frames) or "?"
        seen.setdefault(where, []).append(t.get_name())
    lines = [f"  {len(names)} x {where} (e.g. {names[0]})" for where, names in sorted(seen.items(), key=lambda kv: -len(kv[1]))]
    log.warning(
        "still stopping %.0f s after the signal; %d tasks pending:\n%s", STOP_REPORT_SECONDS, len(tasks), "\n".join(lines[:30]))


async def serve(monitor: Monitor, until_done: bool) -> None:
    """Run ``monitor`` with its faces until stopped (a signal) or, with ``until_done``, until all is scored.

    A signal while ``until_done`` drains ends the run at once (the drain would wait for every queued search).
    """
    loop = asyncio.get_running_loop()
    async with faces(monitor):
        log_task = asyncio.create_task(live_log(monitor.hub))
        run = asyncio.create_task(paced_run(monitor, until_done))

        def stop() -> None:
            monitor.stop()
            if until_done:
                run.cancel()
            loop.call_later(STOP_REPORT_SECONDS, report_pending)

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await run
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
            log_task.cancel()


def start_line(host: str, port: int) -> str:
    """Where to look: the commentator's page, the overlay (an OBS browser source) and the WebSocket.

    >>> start_line("127.0.0.1", 8765)
    'commentator: http://127.0.0.1:8765/commentator  overlay: http://127.0.0.1:8765/overlay  websocket: ws://127.0.0.1:8765/ws'
    """
    from livemon.faces.web.server import WS_PATH

    where = f"[{host}]" if ":" in host else host
    return (f"commentator: http://{where}:{port}/commentator  overlay: http://{where}:{port}/overlay  "
            f"websocket: ws://{where}:{port}{WS_PATH}")


@contextlib.asynccontextmanager
async def faces(monitor: Monitor) -> AsyncIterator[None]:
    """The WebSocket/overlay server and, when enabled, the MQTT publisher, beside the monitor.

    A port already in use is a :class:`StartError` (the monitor would otherwise run without the
    face its viewers expect); ``[web] enabled = false`` runs without the web face.
    """
    from livemon.faces.mqtt import MqttPublisher
    from livemon.faces.web import WebServer
    from livemon.faces.web.process import WebProcess

    web: WebServer | WebProcess | None = None
    if monitor.cfg.web.enabled:
        face = WebProcess if monitor.cfg.web.process else WebServer
        web = face(monitor.hub, monitor.cfg.web, health=monitor.store.engine.health)
        try:
            await web.start()
        except OSError as exc:
            raise StartError(f"web server cannot listen on {monitor.cfg.web.host}:{monitor.cfg.web.port}: "
                             f"{os.strerror(exc.errno) if exc.errno else exc} "
                             "(another livemon? set [web] port, or enabled = false)") from None
        print(f"{time.strftime('%H:%M:%S')} web     {start_line(monitor.cfg.web.host, web.port)}", flush=True)
    mqtt = asyncio.create_task(MqttPublisher(monitor.hub, monitor.cfg.mqtt_out).run()) if monitor.cfg.mqtt_out.enabled else None
    try:
        yield
    finally:
        if mqtt is not None:
            mqtt.cancel()
        if web is not None:
            await web.close()


async def run_with_screen(monitor: Monitor, arbiter: bool) -> None:
    """The monitor with its faces and the Textual commentary screen (``livemon run``), until the screen is
    closed or SIGTERM; then a clean stop. A failure of the monitor is raised once the screen is down."""
    from multiprocessing import resource_tracker

    from livemon.faces.tui import CommentaryApp

    # Start multiprocessing's helper before Textual replaces sys.stderr: it passes
    # stderr's fd to its child, and the TTT worker process needs it.
    resource_tracker.ensure_running()
    async with faces(monitor):
        task = asyncio.create_task(paced_run(monitor, say=log.info))  # the screen is up: its line to the log
        app = CommentaryApp(monitor.hub, arbiter=arbiter)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, app.exit)  # systemd, kill: a clean stop
        try:
            await app.run_async()
        finally:
            monitor.stop()
            await asyncio.gather(task, return_exceptions=True)
    if task.done() and not task.cancelled() and task.exception():
        raise task.exception()  # type: ignore[misc]
