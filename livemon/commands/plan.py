"""``livemon plan --boards N``: how many boards the configured engine profile can follow live, measured.

A dry run before a round: a few real positions (the bundled London 2011 games) are searched
with the configured engine under the configured limit (``[engine]`` depth/nodes, multipv), one
at a time, and their mean search time gives the profile's speed per engine. From it:

- positions/s = engines / mean search time, where engines = ``[engine] processes`` (the
  embedded pool) or ``--workers K`` × processes per worker (``[bus] mode = "mqtt"``);
- every move of a board is one new position: N boards at one move every S seconds ask for
  N / S positions/s; boards followable = positions/s × S;
- the backlog: none when the engines keep up, else it grows by (N / S − positions/s) positions
  a second (printed per hour of play);
- workers to start for N boards (each with the configured processes).

The measured figure holds for this machine with its present load (printed); engines running
side by side on fewer cores than engines share them, so measure with the machine as it will be.
"""

from __future__ import annotations

import argparse
import sys

from livemon.commands import add_store_arguments, config_from_args

DEFAULT_MOVE_SECONDS = 45.0
"""One move per board every 45 s: a classical round's average pace over its first hours."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--boards", type=int, required=True, metavar="N", help="boards of the round")
    p.add_argument("--move-seconds", type=float, default=DEFAULT_MOVE_SECONDS, metavar="S",
                   help=f"seconds between two moves of one board (default {DEFAULT_MOVE_SECONDS:g})")
    p.add_argument("--workers", type=int, metavar="K", help="livemon workers planned (mqtt mode; default 1)")
    p.add_argument("--positions", type=int, default=8, metavar="P", help="real positions searched to measure (default 8)")
    p.add_argument("--json", action="store_true", help="the figures as JSON")
    add_store_arguments(p)


def run(args: argparse.Namespace) -> int:
    import json

    cfg = config_from_args(args)
    if cfg is None:
        return 2
    if args.boards < 1 or args.move_seconds <= 0 or args.positions < 1 or (args.workers is not None and args.workers < 1):
        print("livemon plan: --boards, --move-seconds, --positions and --workers must be positive", file=sys.stderr)
        return 2
    from livemon.app.plan import plan
    from livemon.errors import LivemonError

    try:
        b = plan(cfg, args.boards, args.move_seconds, args.positions, args.workers)
    except LivemonError as exc:
        print(f"livemon plan: {exc}", file=sys.stderr)
        return 1
    per = b.pop("engines_per_worker")
    workers = b.pop("workers")
    if args.json:
        print(json.dumps(b, indent=1))
        return 0
    where = f"{workers} worker(s) x {per} engine(s)" if b["mode"] == "mqtt" else f"{per} embedded engine(s)"
    print(f"profile {b['profile']}: {b['search_seconds'] * 1e3:.0f} ms per position (mean of {b['measured_positions']} "
          f"real positions, one engine, load {b['load']:.2f})")
    print(f"{where}: {b['positions_per_second']:.1f} positions/s -> {b['boards_followable']} boards followable "
          f"at one move per board every {args.move_seconds:g} s")
    if b["backlog_per_hour"]:
        print(f"{args.boards} boards need {b['demand_per_second']:.1f} positions/s: the backlog grows by "
              f"{b['backlog_per_hour']} positions per hour of play")
    else:
        print(f"{args.boards} boards need {b['demand_per_second']:.1f} positions/s: no backlog")
    print(f"for {args.boards} boards start {b['workers_needed']} worker(s) of {per} engine(s) "
          f"({b['engines_needed']} engines in all), or lower the profile's depth/nodes")
    return 0
