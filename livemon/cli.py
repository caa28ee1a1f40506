"""The one entry point: ``livemon SUBCOMMAND ...``.

Each subcommand lives in :mod:`livemon.commands` as a module with
``add_arguments(parser)`` and ``run(args) -> int``; this file only lists them.
Only the module of the command given is imported (``livemon --help`` imports
none), and those modules import their heavy dependencies (numpy, scipy, numba,
Textual, websockets, aiomqtt, httpx) inside ``run``: every command starts in a
fraction of a second (bench/startup.py measures it).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from livemon.errors import LivemonError

#: subcommand name -> (module under livemon.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "analyse": ("analyse", "rate the players of finished games (PGN): the estimate, accuracy and results "
                "(--diagnostics: the papers' research figures)"),
    "calibrate": ("calibrate", "fit the engine profile's models on games of rated players: its own strength in Elo "
                  "(r̄_e), the map from a rating to the apparent skill c of the E(c) model (the Elo ↔ c map) and the "
                  "quality model behind the estimate"),
    "fit": ("fit", "rate players from game results over time with TrueSkill Through Time (TTT; TTT-D: with a "
            "draw margin per player, how drawish each one is) on PGN or CSV results"),
    "run": ("run", "run the live monitor with the commentary screen (Textual)"),
    "serve": ("serve", "run the live monitor headless, with a compact live log"),
    "export": ("export", "print the monitor's current estimates from the store"),
    "forecast": ("forecast", "who can still win: the event's final standings simulated from its games so far (PGN)"),
    "report": ("report", "write one self-contained HTML page of a finished event or round (PGN): leaderboard, charts, moments"),
    "status": ("status", "show the monitor's feeds, its engines' backlog and lag (how long the oldest position has "
               "waited), and the positions/s they search"),
    "plan": ("plan", "measure the engine profile and say how many boards it follows live, and how many workers to start"),
    "doctor": ("doctor", "check the store (sound, writable, locked, backed up) and say how to recover"),
    "worker": ("worker", "run engines for a monitor whose [bus] is mqtt (requests and results through the broker)"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, the arguments of that one command are added (the others list their help).

    >>> build_parser("status").parse_args(["status", "--json"]).json
    True
    """
    parser = argparse.ArgumentParser(
        prog="livemon",
        description="Rate chess players live, move by move, against a UCI engine, and from results with "
        "TrueSkill Through Time.",
        epilog="livemon COMMAND --help: the options of a command. Docs: README.md and docs/.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text.replace("%", "%%"), description=help_text)  # help is %-formatted
        if only is None or only == name:
            importlib.import_module(f"livemon.commands.{module}").add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option), if any.

    >>> command_of(["-v", "status", "--json"])
    'status'
    """
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(command_of(argv) or "").parse_args(argv)  # "": no command module imported
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    module = importlib.import_module(f"livemon.commands.{args._module}")
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except LivemonError as exc:  # an expected fault no command caught: one line, no traceback
        print(f"livemon {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
