"""The headline estimate with ratings on today's FIDE scale and as published, side by side, per band.

``bench/validity.py --json`` run twice — with the default ``LIVEMON_BENCH_RATINGS=today`` (every tag
on today's scale by its game's date, :mod:`livemon.rating.scale`) and with
``LIVEMON_BENCH_RATINGS=published`` (tags as tagged) — and the two reports compared here: for
each estimator and section (leave one event out, held back), per band of the truth (< 1800,
1800–2200, 2200–2500, ≥ 2500) the MAE, bias, 95% coverage and mean width. Each run's truth is on
its own scale: the comparison is of how well each reading of the tags is predicted on events the
fit never saw.

Usage::

    LIVEMON_BENCH_RATINGS=today python bench/validity.py --json > today.json
    LIVEMON_BENCH_RATINGS=published python bench/validity.py --json > published.json
    python bench/rating_scale.py today.json published.json [--markdown]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

BANDS = ("<1800", "1800-2200", "2200-2500", ">=2500")
ESTIMATORS = ("headline", "quality", "quality_field", "results", "moves+results")


def _f(v: Any, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def rows(report: dict[str, Any], section: str, title: str, name: str) -> list[list[str]]:
    """One line per band and one for all: n, MAE, bias, coverage %, width."""
    fig = report[section][title].get(name) or {}
    if not fig.get("n"):
        return []
    out = [["all", str(fig["n"]), _f(fig["mae"], ".0f"), _f(fig["bias"], "+.0f"),
            _f(None if fig.get("coverage") is None else 100 * fig["coverage"], ".0f"), _f(fig.get("width"), ".0f")]]
    for band in BANDS:
        b = fig["bands"][band]
        out.append([band, str(b["n"]), _f(b["mae"], ".0f"), _f(b["bias"], "+.0f"),
                     _f(None if b.get("coverage") is None else 100 * b["coverage"], ".0f"), _f(b.get("width"), ".0f")])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("today", type=Path)
    p.add_argument("published", type=Path)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--estimators", default=",".join(ESTIMATORS))
    args = p.parse_args(argv)
    today, published = json.loads(args.today.read_text()), json.loads(args.published.read_text())
    for section in ("leave_one_event_out", "held_back"):
        for title in today[section]:
            for name in args.estimators.split(","):
                a, b = rows(today, section, title, name), rows(published, section, title, name)
                if not a and not b:
                    continue
                print(f"\n{section.replace('_', ' ')}, {title}: {name} (today's scale | as published)")
                head = ["band", "n", "MAE", "bias", "cover %", "width"]
                if args.markdown:
                    print("| " + " | ".join(head) + " | " + " | ".join(head[1:]) + " |")
                    print("|" + "---|" * (2 * len(head) - 1))
                for x, y in zip(a or [[""] * 6] * len(b), b or [[""] * 6] * len(a)):
                    if args.markdown:
                        print("| " + " | ".join(x) + " | " + " | ".join(y[1:]) + " |")
                    else:
                        print(f"  {x[0]:>10} " + " ".join(f"{v:>6}" for v in x[1:]) + "  |" + " ".join(f"{v:>6}" for v in y[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
