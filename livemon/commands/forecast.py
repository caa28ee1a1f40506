"""``livemon forecast PGN... [--rounds N] [--format F] [--json]``: who can still win, from the games so far."""

from __future__ import annotations

import argparse

from livemon.commands import config_from_args, say, write_result
from livemon.config import ConfigError


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files of the event so far (finished games, games in progress)")
    p.add_argument("--rounds", type=_positive, metavar="N", help="rounds of the whole event (default: [event] rounds, "
                   "or a round robin's by its players)")
    p.add_argument("--format", choices=("rr", "drr", "swiss", "ko"),
                   help="round robin, double round robin, Swiss or knockout (default: [event] format, else guessed)")
    p.add_argument("--simulations", type=_positive, metavar="N",
                   help="simulations of the rest of the event (default: [event] simulations; a Swiss 20,000)")
    p.add_argument("--points", metavar="W-D-L", help="what a win, a draw and a loss give in the standings, such as "
                   "3-1-0 (default: [event] points, else FIDE's 1-0.5-0)")
    p.add_argument("--withdrawn", action="append", metavar="NAME", default=[],
                   help="a player who left the event (as named in the games; repeat for several)")
    p.add_argument("--seed", type=int, metavar="S", help="random seed (the same seed, the same figures)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    from livemon.app.forecast import ForecastError, forecast_event, forecast_text

    if args.withdrawn:
        cfg.event.withdrawn = [*cfg.event.withdrawn, *args.withdrawn]
    if args.points:
        cfg.event.points = args.points
        try:
            cfg.event.validate()
        except ConfigError as exc:
            say(f"--{str(exc).removeprefix('event.')}")
            return 2
    try:
        data = forecast_event(args.pgn, cfg.event, args.format, args.rounds, args.simulations, args.seed, say)
    except ForecastError as exc:
        say(str(exc))
        return 1
    write_result(data, args.json, lambda: forecast_text(data) + "\n")
    return 0
