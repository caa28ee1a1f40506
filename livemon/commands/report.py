"""``livemon report PGN... -o event.html``: one self-contained page of a finished event or round."""

from __future__ import annotations

import argparse
from pathlib import Path

from livemon.commands import add_engine_arguments, engine_config_from_args, say


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("pgn", nargs="+", help="PGN files of the event (several games each is fine)")
    p.add_argument("-o", "--output", metavar="HTML", required=True, help="the page to write (event.html)")
    p.add_argument("--title", help="the page's title (default: the Event tag most games share)")
    add_engine_arguments(p)
    p.add_argument("--config", metavar="F", help="config.toml (default: ./config.toml if present)")
    p.add_argument("--store", metavar="DB", help="SQLite store holding the position cache")


def run(args: argparse.Namespace) -> int:
    from livemon.app.analyse import NothingToAnalyse, event_page
    from livemon.faces.report import render_html

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    out = Path(args.output)
    if not out.parent.is_dir():
        say(f"{out}: no such directory {out.parent}")
        return 2
    try:
        data = event_page(args.pgn, cfg, say, args.title)
    except NothingToAnalyse as exc:
        say(str(exc))
        return 1
    try:
        out.write_text(render_html(data), encoding="utf-8")
    except OSError as exc:
        say(f"{out}: cannot write ({exc.strerror or exc})")
        return 1
    print(f"{out}: {len(data['games'])} games, {len(data['players'])} players")
    return 0
