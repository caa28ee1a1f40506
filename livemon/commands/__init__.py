"""Subcommands of the ``livemon`` CLI, one module each (``add_arguments``, ``run``)."""

import argparse
import sys

from livemon.config import Config, ConfigError, load_config


def add_store_arguments(p: argparse.ArgumentParser) -> None:
    """``--config`` and ``--store``, shared by the commands that use the monitor's store."""
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store (default: store.path of the config)")


def config_from_args(args: argparse.Namespace) -> Config | None:
    """The config named by ``--config`` with ``--store`` applied; None (after one stderr line) if invalid."""
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"livemon: config: {exc}", file=sys.stderr)
        return None
    if getattr(args, "store", None):
        cfg.store.path = args.store
    return cfg
