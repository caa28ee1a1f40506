"""``livemon run``: the monitor with the Textual commentary screen (``serve`` stays headless).

The screen owns the terminal, so the log goes to a file: ``--log``, by default
``livemon.log`` beside the store (its path is printed before the screen starts
and again when it ends).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from livemon.commands import add_store_arguments, config_from_args


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_arguments(p)
    p.add_argument("--arbiter", action="store_true", help="show the fair-play alerts pane (arbiters only)")
    p.add_argument("--log", metavar="FILE",
                   help="log file while the screen is up (default: livemon.log in the store's folder)")


def log_path(store_path: str, given: str | None) -> Path:
    """Where ``run`` logs: ``given``, else ``livemon.log`` beside the store.

    >>> str(log_path("event/livemon.sqlite", None))
    'event/livemon.log'
    >>> str(log_path(":memory:", "x.log"))
    'x.log'
    """
    if given:
        return Path(given)
    return Path("livemon.log") if store_path == ":memory:" else Path(store_path).parent / "livemon.log"


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    from livemon.app.monitor import Monitor
    from livemon.app.serve import StartError, run_with_screen
    from livemon.io.engine import EngineError
    from livemon.io.store import StoreError, open_monitor_store

    try:
        store = open_monitor_store(cfg.store)
    except StoreError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    log_file = log_path(cfg.store.path, args.log)
    print(f"livemon: log file {log_file}", file=sys.stderr, flush=True)
    root = logging.getLogger()  # the screen owns the terminal: logs go to a file
    for handler in list(root.handlers):
        root.removeHandler(handler)
    logging.basicConfig(filename=log_file, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(run_with_screen(Monitor(cfg, store=store), args.arbiter))
    except (EngineError, StartError) as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
        print(f"livemon: the log is in {log_file}", file=sys.stderr)
    return 0
