"""``livemon serve``: the monitor, headless, with a compact live log on stdout (:mod:`livemon.app.serve`).

The log starts with where to look (the commentator's page, the overlay, the WebSocket), then a status line every
few seconds (moves, searches, the engines' backlog and lag) and a line per finished game. Without a configured
feed it replays the bundled event, paced to what this machine's engines follow: a few positions are searched at
start, as ``livemon plan`` does, and the replay plays at most a share of that rate, holding while the engines are
behind, so the figures on screen are live from the first minute.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from livemon.commands import add_store_arguments, config_from_args


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_arguments(p)
    p.add_argument("--until-done", action="store_true", help="exit when every feed has ended and all is scored")


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    feeds = ", ".join(f.name for f in cfg.feeds) or "the bundled replay"
    print(f"{time.strftime('%H:%M:%S')} start   store {cfg.store.path}  feeds {feeds}", flush=True)
    from livemon.app.monitor import Monitor
    from livemon.app.serve import StartError, serve
    from livemon.io.engine import EngineError
    from livemon.io.store import StoreError, open_monitor_store

    try:
        store = open_monitor_store(cfg.store)
    except StoreError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(Monitor(cfg, store=store), args.until_done))
    except (EngineError, StartError) as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    return 0
