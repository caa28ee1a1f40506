"""Engine analyses of any set of positions, exported from stores and imported into one: no search repeated.

For analyses that are not (yet) whole games of the calibration set (``bench/calibration_data.py``
has those): e.g. the 2025 open at depth 14, analysed in part by one run and finished by a
later one. One gzipped JSON line per position, after a header::

    {"format": "livemon position analyses 1", "profile": "...", "positions": N, "source": "..."}
    {"p": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -", "a": {...PositionAnalysis JSON...}}

``p`` is the store's position key (EPD), ``a`` the analysis exactly as the store keeps it.

    python bench/position_cache.py export --store a.sqlite --store b.sqlite \\
        --profile "Stockfish 15.1 depth=14 multipv=4" --source "2025 open rounds 5-8" --out FILE
    python bench/position_cache.py import FILE --store livemon.sqlite

An import puts every analysis in the store under the export's profile (existing ones are kept),
so that ``livemon analyse --depth 14 --store livemon.sqlite`` searches only what is missing.
Stores are read with ``mode=ro``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sqlite3
import sys
from pathlib import Path

from livemon.io.store import Store
from livemon.live.values import PositionAnalysis

FORMAT = "livemon position analyses 1"


def export(stores: list[str], profile: str, source: str, out: Path) -> int:
    rows: dict[str, str] = {}
    for path in stores:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            for position, candidates in db.execute(
                    "SELECT position, candidates FROM analyses WHERE profile = ? ORDER BY position", (profile,)):
                rows.setdefault(position, candidates)
        finally:
            db.close()
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(json.dumps({"format": FORMAT, "profile": profile, "positions": len(rows), "source": source}) + "\n")
        for position in sorted(rows):
            f.write(json.dumps({"p": position, "a": json.loads(rows[position])}, separators=(",", ":")) + "\n")
    return len(rows)


def import_(path: Path, store_path: str) -> tuple[str, int, int]:
    """(profile, positions in the export, added to the store)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        header = json.loads(f.readline())
        if header.get("format") != FORMAT:
            raise SystemExit(f"{path}: not a {FORMAT!r} export")
        profile = header["profile"]
        rows = [json.loads(line) for line in f]
    with Store(store_path) as store:
        have = store.analyses.get_many((d["p"] for d in rows), profile)
        new = [d for d in rows if d["p"] not in have]
        with store.engine.transaction():  # one commit, not one per position
            for d in new:
                store.analyses.put(d["p"], profile, PositionAnalysis.from_json(json.dumps(d["a"])))
    return profile, len(rows), len(new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export")
    ex.add_argument("--store", action="append", required=True)
    ex.add_argument("--profile", required=True)
    ex.add_argument("--source", default="")
    ex.add_argument("--out", type=Path, required=True)
    im = sub.add_parser("import")
    im.add_argument("export", type=Path)
    im.add_argument("--store", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "export":
        n = export(args.store, args.profile, args.source, args.out)
        print(f"{n} analyses under {args.profile} -> {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    else:
        profile, total, added = import_(args.export, args.store)
        print(f"{args.export}: {total} analyses under {profile}, {added} added to {args.store}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
