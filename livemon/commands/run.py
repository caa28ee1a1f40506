"""``livemon run``: the monitor with the Textual commentary screen (``serve`` stays headless)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from livemon.commands import add_store_arguments, config_from_args
from livemon.io.engine import EngineError
from livemon.app.monitor import Monitor


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_arguments(p)
    p.add_argument("--arbiter", action="store_true", help="show the fair-play alerts pane (arbiters only)")
    p.add_argument("--log", default="livemon.log", metavar="FILE", help="log file while the screen is up")


async def run_with_screen(monitor: Monitor, arbiter: bool) -> None:
    from multiprocessing import resource_tracker

    from livemon.faces.tui import CommentaryApp

    # Start multiprocessing's helper before Textual replaces sys.stderr: it passes
    # stderr's fd to its child, and the TTT worker process needs it.
    resource_tracker.ensure_running()
    from livemon.commands.serve import faces

    async with faces(monitor):
        task = asyncio.create_task(monitor.run())
        try:
            await CommentaryApp(monitor.hub, arbiter=arbiter).run_async()
        finally:
            monitor.stop()
            await asyncio.gather(task, return_exceptions=True)
    if task.done() and not task.cancelled() and task.exception():
        raise task.exception()  # type: ignore[misc]


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    root = logging.getLogger()  # the screen owns the terminal: logs go to a file
    for handler in list(root.handlers):
        root.removeHandler(handler)
    logging.basicConfig(filename=args.log, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_with_screen(Monitor(cfg), args.arbiter))
    except EngineError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    return 0
