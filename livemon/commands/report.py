"""``livemon report PGN... -o event.html``: one self-contained page of a finished event or round."""

from __future__ import annotations

import argparse
import asyncio
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
    from livemon.app.batch import analyse_games, read_files
    from livemon.app.report import event_report
    from livemon.faces.report import render_html
    from livemon.io.store import Store

    cfg = engine_config_from_args(args)
    if cfg is None:
        return 2
    out = Path(args.output)
    if not out.parent.is_dir():
        say(f"{out}: no such directory {out.parent}")
        return 2
    planned = read_files(args.pgn, say)
    if not planned:
        say("no game to report")
        return 1
    with Store(cfg.store.path) as store:
        result = asyncio.run(analyse_games(planned, cfg, store, say))
        result.estimator.use_calibration(result.profile, store.get_calibration(result.profile))
        result.estimator.k_factor = cfg.results.k_factor
        data = event_report(planned, result, store, cfg, args.title)
    for note in result.notes:
        say(note)
    if not data["games"]:
        say("no game could be analysed")
        return 1
    try:
        out.write_text(render_html(data), encoding="utf-8")
    except OSError as exc:
        say(f"{out}: cannot write ({exc.strerror or exc})")
        return 1
    print(f"{out}: {len(data['games'])} games, {len(data['players'])} players")
    return 0
