"""Serving the monitor: its faces (web, MQTT) started beside it, a compact live log, a clean stop.

The wiring of ``livemon serve`` and ``livemon run``; the commands parse arguments and print.
SIGTERM or SIGINT (Ctrl-C) stops it cleanly, also while ``--until-done`` drains: every move read is
already stored, so nothing is lost; the next start resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from typing import Any, AsyncIterator

from livemon.app.monitor import Monitor
from livemon.errors import LivemonError
from livemon.faces.hub import Hub

log = logging.getLogger(__name__)


class StartError(LivemonError, RuntimeError):
    """The monitor cannot start (store, port); the message is the one line to print."""


async def live_log(hub: Hub, every: float = 5.0) -> None:
    """One line per finished game, and a status line every few seconds."""
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
                  f"cache {msg.cache_hits} backlog {msg.backlog} lag {msg.lag_seconds:.1f}s "
                  f"TTT {msg.ttt_refreshes}  [{msg.engine_profile}]", flush=True)


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
        run = asyncio.create_task(monitor.run(until_feeds_end=until_done))

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
        web = face(monitor.hub, monitor.cfg.web, health=monitor.store.health)
        try:
            await web.start()
        except OSError as exc:
            raise StartError(f"web server cannot listen on {monitor.cfg.web.host}:{monitor.cfg.web.port}: "
                             f"{os.strerror(exc.errno) if exc.errno else exc} "
                             "(another livemon? set [web] port, or enabled = false)") from None
        print(f"overlay: http://{monitor.cfg.web.host}:{web.port}/overlay", flush=True)
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
        task = asyncio.create_task(monitor.run())
        app = CommentaryApp(monitor.hub, arbiter=arbiter)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, app.exit)  # systemd, kill: a clean stop
        try:
            await app.run_async()
        finally:
            monitor.stop()
            await asyncio.gather(task, return_exceptions=True)
    if task.done() and not task.cancelled() and task.exception():
        raise task.exception()  # type: ignore[misc]
