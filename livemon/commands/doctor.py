"""``livemon doctor``: is the store sound, writable, locked, backed up? And how to recover if not.

The checks and the recovery steps are :mod:`livemon.app.doctor`'s; this prints them, one line each.
Exit 0 when all is well, 1 with the recovery steps otherwise (docs/operations.md explains them).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from livemon.commands import add_store_arguments, config_from_args

if TYPE_CHECKING:
    from livemon.config import Config


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_arguments(p)
    p.add_argument("--full", action="store_true", help="PRAGMA integrity_check (slower, checks indexes too)")


def diagnose(cfg: Config, full: bool = False, out: TextIO | None = None) -> int:
    """Print the checks of ``cfg``'s store and, if any fails, how to recover; 0 if sound."""
    from livemon.app.doctor import diagnose as checks

    stream = out or sys.stdout
    found = checks(cfg, full)
    for check in found.checks:
        print(check.line(), file=stream)
    if found.sound:
        print("the store is sound", file=stream)
        return 0
    if found.problems == ["missing"]:
        return 1
    print("how to recover (docs/operations.md):", file=stream)
    for i, step in enumerate(found.steps, 1):
        print(f"  {i}. {step}", file=stream)
    return 1


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    return diagnose(cfg, args.full)
