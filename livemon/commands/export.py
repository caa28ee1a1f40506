"""``livemon export``: the current estimates from the store (``analyse --json`` shape plus ``ttt``)."""

from __future__ import annotations

import argparse
import sys

from livemon.commands import add_store_arguments, config_from_args, write_result


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_store_arguments(p)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    import sqlite3

    from livemon.io.store import StoreError, open_reader

    try:
        with open_reader(cfg.store.path) as store:
            if not store.engine.db.execute("SELECT EXISTS (SELECT 1 FROM moves)").fetchone()[0]:
                print(f"livemon: store {cfg.store.path} has no moves yet: nothing to export", file=sys.stderr)
                return 1
            from livemon.app.export import export_report  # numpy, scipy: only when there is something to export

            out = export_report(store, cfg)
    except StoreError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:
        print(f"livemon: store {cfg.store.path}: {exc}: livemon doctor --store {cfg.store.path} says more", file=sys.stderr)
        return 1
    from livemon.commands.analyse import render_table

    def text() -> str:
        ttt = sorted((out.get("ttt") or {}).get("players", {}).items(), key=lambda kv: -kv[1]["elo"])
        return render_table(out) + "".join(f"TTT {name:<28} {r['elo']:7.0f} ± {r['elo_sigma']:.0f}\n" for name, r in ttt)

    write_result(out, args.json, text)
    return 0
