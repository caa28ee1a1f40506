"""The web face in a process of its own (``[web] process = true``): the monitor's hub, relayed.

At a whole round (1,000 boards, 500 overlay clients) the fan-out was half of the monitor's
CPU: building frames and writing ~300 MiB/s into 500 sockets, on the loop that also reads the
feeds and scores the plies. In this mode the monitor only relays each published message,
once, as a line of JSON over a pipe to a child process, which keeps a replica of the hub and
runs the same :class:`~livemon.faces.web.server.WebServer` on it.

The relay protocol (one JSON object a line, parent → child on the child's stdin)::

    {"op": "start", "web": {WebConfig fields}}     first line: the server's configuration
    {"op": "health", "health": {...}}               the store's health for /healthz, every second
    {...a message's to_json()...}                   every published message, in hub order

and child → parent on its stdout: ``{"port": N}`` once listening, or ``{"error": "..."}``.

At start (and at a restart after the child died) the parent sends, after ``start``, the
latest message of every (channel, key) of its hub in seq order, then every message published
since: replaying them reproduces the hub's state (a later message supersedes the same keys in
all its channels; a removal leaves its detail channel's last word), so clients of the child see
the same snapshots and deltas as clients of an in-process server. Sequence numbers are the
child's own. The child exits when its stdin closes (the monitor stopped or died).

>>> from livemon.live.messages import PlayerEstimate, PlayerRemoved
>>> hub = Hub()
>>> _ = hub.publish(PlayerEstimate("A", 2500, 10, -12.0, 0.4, -70.0, 2930.0))
>>> _ = hub.publish(PlayerEstimate("B", 2400, 10, -20.0, 0.3, -90.0, 2800.0))
>>> _ = hub.publish(PlayerRemoved("A"))
>>> replica = Hub()
>>> for line in bootstrap_lines(hub):
...     apply_line(replica, line)
>>> [m.name for m in replica.snapshot("players")[1]]
['B']
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from dataclasses import asdict
from typing import Any, Callable

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.live.messages import Outgoing

log = logging.getLogger(__name__)

LINE_LIMIT = 2**24
"""Longest relay line the child reads (a message is a few KB)."""
BACKLOG_LIMIT = 64 * 2**20
"""Bytes of relay lines the pipe may hold unread before the child is taken as stuck and restarted."""
START_TIMEOUT = 30.0
RESTART_DELAY = 1.0


def bootstrap_lines(hub: Hub) -> list[bytes]:
    """The latest message of every (channel, key) of ``hub``, each once, in seq order, as relay lines."""
    latest: dict[int, Outgoing] = {}
    for channel in hub.channels():
        for seq, msg in hub.snapshot_items(channel)[1]:
            latest[seq] = msg
    return [_line(latest[seq]) for seq in sorted(latest)]


def _line(msg: Outgoing) -> bytes:
    return codec.to_json(msg).encode() + b"\n"


def apply_line(hub: Hub, line: bytes | str) -> None:
    """Publish the message of one relay line on the replica ``hub`` (its ``ts`` kept)."""
    hub.publish(codec.from_json(line))


class WebProcess:
    """The parent's side: starts the child, relays the hub to it, restarts it if it dies."""

    def __init__(self, hub: Hub, cfg: WebConfig, health: Callable[[], dict[str, Any]] | None = None) -> None:
        self.hub = hub
        self.cfg = cfg
        self.health = health
        self.port = cfg.port
        self.restarts = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._cursor = hub.seq
        self._closing = False
        self._watch: asyncio.Task[None] | None = None
        self._health_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the child and wait until it listens; OSError with the child's reason if it cannot."""
        await self._spawn()
        self.hub.add_reader(self._relay)
        self._watch = asyncio.create_task(self._watch_child(), name="web process watch")
        self._health_task = asyncio.create_task(self._health_loop(), name="web process health")

    async def _spawn(self) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "livemon.faces.web.process", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, env=env, start_new_session=True, limit=LINE_LIMIT)
        assert proc.stdin is not None and proc.stdout is not None  # noqa: S101 - pipes asked for above
        cfg = asdict(self.cfg)
        if self.port and self.restarts:
            cfg["port"] = self.port  # a restart listens where the first one did
        proc.stdin.write(json.dumps({"op": "start", "web": cfg}).encode() + b"\n")
        self._cursor = self.hub.seq
        proc.stdin.writelines(bootstrap_lines(self.hub))
        try:
            first = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT)
        except TimeoutError:
            proc.kill()
            raise OSError(0, f"the web process did not start within {START_TIMEOUT:g} s") from None
        reply = json.loads(first) if first.strip() else {"error": "the web process exited at start"}
        if "port" not in reply:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            errno = int(reply.get("errno") or 0)
            raise OSError(errno, str(reply.get("error"))) if errno else OSError(str(reply.get("error")))
        self.port = int(reply["port"])
        self._proc = proc

    def _relay(self) -> None:
        """Hub reader: every message since the last relay, one line each (a lost stretch: a bootstrap)."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            return
        entries = self.hub.log_since(self._cursor)
        self._cursor = self.hub.seq
        if entries is None:  # the child fell further behind than the hub's log: start it over
            log.warning("web process: relay fell out of the hub's log; restarting it")
            proc.kill()
            return
        transport = proc.stdin.transport
        if transport.get_write_buffer_size() > BACKLOG_LIMIT:  # type: ignore[attr-defined]
            log.warning("web process: %d MiB unread by the web process; restarting it",
                        transport.get_write_buffer_size() // 2**20)  # type: ignore[attr-defined]
            proc.kill()
            return
        proc.stdin.writelines([_line(msg) for _, msg in entries])

    async def _health_loop(self) -> None:
        while self.health is not None:
            await asyncio.sleep(1.0)
            proc = self._proc
            if proc is not None and proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.write(json.dumps({"op": "health", "health": self.health()}).encode() + b"\n")

    async def _watch_child(self) -> None:
        """Restart the child when it exits on its own (one line each time)."""
        while not self._closing:
            proc = self._proc
            if proc is None:
                return
            code = await proc.wait()
            if self._closing:
                return
            self._proc = None
            self.restarts += 1
            log.warning("web process exited (code %s); restarting it (restart %d); clients reconnect",
                        code, self.restarts)
            await asyncio.sleep(RESTART_DELAY)
            try:
                await self._spawn()
            except OSError as exc:
                log.error("web process cannot restart: %s; the monitor goes on without its web face", exc)
                return

    async def close(self) -> None:
        self._closing = True
        self.hub.remove_reader(self._relay)
        for task in (self._watch, self._health_task):
            if task is not None:
                task.cancel()
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # the child's cue to close its server and exit
        try:
            await asyncio.wait_for(proc.wait(), 5.0)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


# -- the child ------------------------------------------------------------------------------


async def _child() -> int:
    from livemon.faces.web.server import WebServer

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    first = json.loads(await reader.readline() or b"{}")
    if first.get("op") != "start":
        return 2
    cfg = WebConfig(**first["web"])
    hub = Hub()
    health: dict[str, Any] = {"ok": True}
    server = WebServer(hub, cfg, health=lambda: health)
    try:
        await server.start()
    except OSError as exc:
        print(json.dumps({"error": f"{os.strerror(exc.errno) if exc.errno else exc}", "errno": exc.errno or 0}),
              flush=True)
        return 1
    print(json.dumps({"port": server.port}), flush=True)
    try:
        while True:
            line = await reader.readline()
            if not line:
                break  # the monitor closed the pipe: stop
            if line.startswith(b'{"op":'):
                d = json.loads(line)
                if d.get("op") == "health":
                    health = d["health"]
                continue
            try:
                apply_line(hub, line)
            except Exception:  # noqa: BLE001 - one bad line costs that message, not the face
                log.exception("web process: cannot apply a relayed message")
    finally:
        await server.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="the web face's process (started by livemon serve)").parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s web %(levelname)s %(message)s", stream=sys.stderr)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the monitor stops it by closing the pipe
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return asyncio.run(_child())


if __name__ == "__main__":
    sys.exit(main())
