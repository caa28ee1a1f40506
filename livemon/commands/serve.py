"""``livemon serve``: the monitor, headless, with a compact live log on stdout."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from typing import AsyncIterator

from livemon.commands import add_store_arguments, config_from_args
from livemon.io.engine import EngineError
from livemon.faces.hub import Hub
from livemon.live.messages import BoardState, MonitorStatus
from livemon.app.monitor import Monitor


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_arguments(p)
    p.add_argument("--until-done", action="store_true", help="exit when every feed has ended and all is scored")


async def live_log(hub: Hub, every: float = 5.0) -> None:
    """One line per finished game, and a status line every few seconds."""
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


async def serve(monitor: Monitor, until_done: bool) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, monitor.stop)
    log_task = asyncio.create_task(live_log(monitor.hub))
    async with faces(monitor):
        try:
            await monitor.run(until_feeds_end=until_done)
        finally:
            log_task.cancel()


@contextlib.asynccontextmanager
async def faces(monitor: Monitor) -> AsyncIterator[None]:
    """The WebSocket/overlay server and, when enabled, the MQTT publisher, beside the monitor."""
    from livemon.faces.mqtt import MqttPublisher
    from livemon.faces.web import WebServer

    server = WebServer(monitor.hub, monitor.cfg.web)
    web: WebServer | None = server
    try:
        await server.start()
        print(f"overlay: http://{monitor.cfg.web.host}:{server.port}/overlay", flush=True)
    except OSError as exc:  # port taken: the monitor still runs
        print(f"livemon: web server not started: {exc}", file=sys.stderr, flush=True)
        web = None
    mqtt = asyncio.create_task(MqttPublisher(monitor.hub, monitor.cfg.mqtt_out).run()) if monitor.cfg.mqtt_out.enabled else None
    try:
        yield
    finally:
        if mqtt is not None:
            mqtt.cancel()
        if web is not None:
            await web.close()


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    monitor = Monitor(cfg)
    try:
        asyncio.run(serve(monitor, args.until_done))
    except EngineError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    return 0
