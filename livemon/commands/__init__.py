"""Subcommands of the ``livemon`` CLI, one module each (``add_arguments``, ``run``)."""

import argparse
import json
import sys
from collections.abc import Callable

from livemon.config import Config, ConfigError, load_config


def say(line: str) -> None:
    """One line for the user on stderr, as every command says a bad input or a note."""
    print(f"livemon: {line}", file=sys.stderr, flush=True)


def write_result(out: object, as_json: bool, text: Callable[[], str], indent: int | None = 1) -> None:
    """A command's result on stdout: the JSON document (one line ending it) or the table ``text()`` makes."""
    if as_json:
        json.dump(out, sys.stdout, indent=indent)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(text())


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
    _warn(cfg)
    return cfg


def _warn(cfg: Config) -> None:
    for line in cfg.warnings():
        print(f"livemon: config: warning: {line}", file=sys.stderr)


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """``--depth | --nodes``, ``--multipv``, ``--processes``: the engine profile of a batch command."""
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--depth", type=int, metavar="N", help="search depth per position (part of the profile)")
    limit.add_argument("--nodes", type=int, metavar="N", help="search nodes per position (part of the profile)")
    p.add_argument("--multipv", type=int, metavar="N", help="candidate lines per position (part of the profile)")
    p.add_argument("--processes", type=int, metavar="N", help="engine processes in parallel")


def engine_config_from_args(args: argparse.Namespace) -> Config | None:
    """The config with the engine flags and ``--store`` applied; None (after one stderr line) if invalid."""
    try:
        cfg = _engine_config(args)
    except ConfigError as exc:
        print(f"livemon: config: {exc}", file=sys.stderr)
        return None
    _warn(cfg)
    return cfg


def _engine_config(args: argparse.Namespace) -> Config:
    cfg = load_config(args.config)
    if args.depth is not None:
        cfg.engine.depth, cfg.engine.nodes = args.depth, None
    if args.nodes is not None:
        cfg.engine.nodes, cfg.engine.depth = args.nodes, None
    for key in ("multipv", "processes"):
        if getattr(args, key) is not None:
            setattr(cfg.engine, key, getattr(args, key))
    cfg.engine.validate()
    if args.store:
        cfg.store.path = args.store
    return cfg
