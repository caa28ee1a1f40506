"""``livemon worker``: engine worker for a monitor with ``[bus] mode = "mqtt"`` (docs/distributed.md)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from livemon.commands import config_from_args


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="F", help="config.toml: [engine] (processes = engines here), [broker] and [bus], "
                   "[store] (this worker's cache); default: ./config.toml if present")
    p.add_argument("--name", metavar="NAME", help="the name results are published and cached under "
                   "(default: its broker user, else <host name>-<pid>); docs/distributed.md")
    p.add_argument("--forget", metavar="NAME", help="instead of serving: delete every analysis worker NAME computed "
                   "from the store of --config (the monitor's), so those positions are searched again")


def run(args: argparse.Namespace) -> int:
    from livemon.app.worker import EngineWorker, serve
    from livemon.io.engine import EngineError

    cfg = config_from_args(args)
    if cfg is None:
        return 2
    if args.forget is not None:
        from pathlib import Path

        from livemon.app.worker import forget_worker
        from livemon.io.store import Store

        if cfg.store.path != ":memory:" and not Path(cfg.store.path).exists():
            print(f"livemon: no store at {cfg.store.path} (store.path of the monitor's config)", file=sys.stderr)
            return 2
        with Store(cfg.store.path) as store:
            n = forget_worker(store, args.forget)
        print(f"forgot {n} analyses computed by worker {args.forget} in {cfg.store.path}; "
              "restart the monitor to search those positions again")
        return 0
    from livemon.app.worker import worker_name

    try:
        name = worker_name(cfg, args.name)
    except ValueError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    if not logging.getLogger().isEnabledFor(logging.INFO):
        logging.getLogger("livemon").setLevel(logging.INFO)  # a service: its log is its face
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger("livemon").addHandler(handler)
        logging.getLogger("livemon").propagate = False
    try:
        asyncio.run(serve(EngineWorker(cfg, name=name)))
    except EngineError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 2
    return 0
