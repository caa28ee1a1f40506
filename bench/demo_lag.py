"""How far behind the boards the bundled demo's engine runs: ``livemon serve`` with no feed, for a few minutes.

Goal: on a 2-core machine the first five minutes of the demo show live figures, the engine never more than
~30 s behind (its lag: how long the oldest position waiting for it has waited). The demo measures the engine at
start and paces the replay to a share of that rate, holding while the engine is 10 s behind
(``livemon.app.serve.pace_demo``).

    python bench/demo_lag.py [--seconds 200] [--every 5]

It starts ``livemon serve`` (niced, a fresh store in a temporary folder, the web face on a free port), reads
``livemon status --json``'s figures from the store every ``--every`` seconds, with the load average, and
prints them as a table and a summary (the lag's maximum, mean and the share of samples above 10 s and 30 s),
then stops the monitor with SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 30.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=200.0, help="how long the demo runs (default 200)")
    ap.add_argument("--every", type=float, default=5.0, help="seconds between two samples (default 5)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from livemon.io.store import open_reader

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "demo.sqlite"
        cfg = Path(tmp) / "config.toml"
        cfg.write_text(f'[web]\nport = 0\n[store]\npath = "{db}"\nbackup_minutes = 0\n', encoding="utf-8")
        log = open(Path(tmp) / "serve.log", "w+")
        proc = subprocess.Popen(["nice", sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)], cwd=REPO,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        rows: list[tuple[float, int, int, int, float, float]] = []
        started = time.monotonic()
        try:
            print(f"{'t (s)':>6} {'moves':>6} {'searches':>8} {'backlog':>7} {'engine lag (s)':>14} {'load':>5}")
            while time.monotonic() - started < args.seconds:
                time.sleep(args.every)
                if not db.exists():
                    continue
                try:
                    with open_reader(str(db)) as store:
                        s = store.status.get()
                except Exception:  # noqa: BLE001 - the store is being created: the next sample
                    continue
                if not s:
                    continue
                eng = s["engine"]
                row = (time.monotonic() - started, s["moves"], eng["searches"], eng["backlog"],
                       s.get("engine_lag_seconds", eng["queue_lag_seconds"]), os.getloadavg()[0])
                rows.append(row)
                print(f"{row[0]:>6.0f} {row[1]:>6} {row[2]:>8} {row[3]:>7} {row[4]:>14.1f} {row[5]:>5.2f}", flush=True)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.seek(0)
            demo = [line.strip() for line in log if " demo " in line]
            log.close()
    if not rows:
        print("no status was stored: see the demo's log")
        return 1
    lags = [r[4] for r in rows]
    loads = [r[5] for r in rows]
    print("\n".join(demo))
    print(f"{len(rows)} samples over {rows[-1][0]:.0f} s, {rows[-1][1]} moves; engine lag max {max(lags):.1f} s, "
          f"mean {sum(lags) / len(lags):.1f} s, above 10 s in {sum(x > 10 for x in lags) / len(lags):.0%} of the "
          f"samples, above {GOAL:.0f} s in {sum(x > GOAL for x in lags)}; load {min(loads):.1f}-{max(loads):.1f}")
    print(f"goal: never more than {GOAL:.0f} s behind: {'met' if max(lags) <= GOAL else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
