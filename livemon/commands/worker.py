"""``livemon worker``: engine worker for a monitor with ``[bus] mode = "mqtt"`` (docs/distributed.md)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from typing import TYPE_CHECKING

from livemon.commands import config_from_args
from livemon.io.engine import EngineError

if TYPE_CHECKING:
    from livemon.app.worker import EngineWorker


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="F", help="config.toml: [engine] (processes = engines here), [bus] (the broker), "
                   "[store] (this worker's cache); default: ./config.toml if present")


async def serve(worker: EngineWorker) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, worker.stop)
    await worker.run()


def run(args: argparse.Namespace) -> int:
    from livemon.app.worker import EngineWorker

    cfg = config_from_args(args)
    if cfg is None:
        return 2
    if not logging.getLogger().isEnabledFor(logging.INFO):
        logging.getLogger("livemon").setLevel(logging.INFO)  # a service: its log is its face
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger("livemon").addHandler(handler)
        logging.getLogger("livemon").propagate = False
    try:
        asyncio.run(serve(EngineWorker(cfg)))
    except EngineError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    return 0
