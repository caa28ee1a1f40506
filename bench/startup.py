"""Start-up time of every ``livemon`` command: wall time from spawn to its first line of output.

Goal: every command should start in < 0.3 s wall on an idle 2-core
machine. Each command runs ``--runs`` times (default 7) as a real subprocess
(``python -m livemon.cli``, as the installed ``livemon`` script does); the time
is from ``Popen`` to the first line on stdout or stderr (merged); the median and
the best are printed, with the machine's load average before and after (on a
shared machine the median mostly measures the other work; the best run is the
closest to an idle machine). ``serve`` is stopped (SIGTERM) after its first
line; its "overlay:" line (web face up, imports done) is timed too.

    python bench/startup.py [--runs 7]

The store the commands read is made here in a temporary folder (a status row
as a running monitor writes it); ``export`` is timed on an empty store (its
one-line refusal): on a full store its first line comes after the estimates
are rebuilt, which is the command's work, not its start-up.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 0.3


def first_line(argv: list[str], until: str | None = None, timeout: float = 60) -> tuple[float, float | None, str]:
    """(seconds to the first line, seconds to the first line containing ``until``, that first line)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "livemon.cli", *argv], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert proc.stdout is not None
    first_at, until_at, text = None, None, ""
    deadline = started + timeout
    while time.perf_counter() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        now = time.perf_counter() - started
        if first_at is None:
            first_at, text = now, line.strip()
        if until is None or until in line:
            until_at = now if until else None
            break
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    return (first_at if first_at is not None else float("nan")), until_at, text


def make_store(folder: Path) -> Path:
    """A store with a status row and a game, as a monitor leaves it."""
    sys.path.insert(0, str(REPO))
    from livemon.io.store import Store
    from livemon.live.messages import GameInfo

    db = folder / "livemon.sqlite"
    with Store(db) as store:
        store.games.put(GameInfo("g1", white="A", black="B"))
        store.status.put({
            "feeds": [{"name": "replay", "type": "replay", "state": "running", "games": 1, "plies": 0, "errors": 0,
                       "last_message": None, "last_error": None}],
            "engine": {"profile": "Stockfish depth=12 multipv=4", "engines_alive": 1, "engines": 1, "backlog": 0,
                       "searches": 0, "cache_hits": 0, "restarts": 0, "failures": 0},
            "moves": 0, "games": 1, "unscored_plies": 0, "lag_seconds": 0.0, "duplicates": 0, "rollbacks": 0,
            "ttt_refreshes": 0, "screening": "on", "updated": time.time(),
        })
    Store(folder / "empty.sqlite").close()
    return db


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="livemon-startup-") as tmp:
        folder = Path(tmp)
        db = make_store(folder)
        config = folder / "config.toml"
        config.write_text("[web]\nport = 0\n[store]\nbackup_minutes = 0\n", encoding="utf-8")
        commands: list[tuple[str, list[str], str | None]] = [
            ("livemon --help", ["--help"], None),
            ("livemon status", ["status", "--store", str(db)], None),
            ("livemon status --json", ["status", "--json", "--store", str(db)], None),
            ("livemon doctor", ["doctor", "--store", str(db)], None),
            ("livemon export (empty store)", ["export", "--store", str(folder / "empty.sqlite")], None),
            ("livemon serve (to 'overlay:')", ["serve", "--config", str(config), "--store", str(folder / "serve.sqlite")],
             "overlay:"),
        ]
        for name in ("analyse", "calibrate", "fit", "run", "serve", "export", "status", "doctor", "worker"):
            commands.append((f"livemon {name} --help", [name, "--help"], None))
        print(f"{os.cpu_count()} CPUs; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'command':<34} {'first line: median':>18} {'best':>7}  {'goal':>5}  first line")
        rows = []
        for label, argv, until in commands:
            firsts, untils, text = [], [], ""
            for _ in range(args.runs):
                first, until_at, text = first_line(argv, until)
                firsts.append(first)
                if until_at is not None:
                    untils.append(until_at)
            med, best = statistics.median(firsts), min(firsts)
            rows.append((label, med, best))
            mark = "ok" if best < GOAL else "MISS"
            print(f"{label:<34} {med:>16.3f} s {best:>6.3f}s  {mark:>5}  {text[:60]}")
            if untils:
                print(f"{'':<34} {statistics.median(untils):>16.3f} s {min(untils):>6.3f}s         to the line with {until!r}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        missed = [label for label, _, best in rows if best >= GOAL]
        print(f"goal < {GOAL} s (best run): {len(rows) - len(missed)}/{len(rows)} commands"
              + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
