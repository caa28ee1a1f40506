"""``livemon status``: feeds, engine backlog and lag, as last stored by the running monitor."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from livemon.commands import add_store_arguments, config_from_args


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="the raw status object")
    p.add_argument("--check", action="store_true", help="check the store instead (the same as livemon doctor)")
    add_store_arguments(p)


MOVE_SECONDS = 45.0
"""The pace of ``boards followable``: one move per board every 45 s, as ``livemon plan`` assumes by default."""


def summary(status: dict[str, Any], now: float | None = None) -> list[str]:
    """The first lines of ``livemon status``: when updated, the engines with their lag (the oldest position
    waiting for the pinned profile), the feeds' lag (since their last message), and the rate measured on the
    searches at the pinned profile only (quick eval-bar previews are neither searches of the figures nor
    of their rate).

    >>> s = {"updated": 100.0, "engine_lag_seconds": 42.0, "feed_lag_seconds": 0.4, "engine": {
    ...     "profile": "sf d12", "engines": 1, "engines_alive": 1, "backlog": 80, "queue_lag_seconds": 42.0,
    ...     "searches": 300, "cache_hits": 5, "restarts": 0, "failures": 0, "mean_search_s": 0.5,
    ...     "previews": 90, "preview_searches": 60, "quick_profile": "sf d6"}}
    >>> for line in summary(s, now=101.0): print(line)
    updated 1s ago
    engine  sf d12  engines 1/1  lag 42.0s (the oldest of 80 positions waiting)  searches 300  cache hits 5  restarts 0  failures 0
    preview 60 quick searches at sf d6 for the eval bar while behind (not in the figures, nor in the rate)
    budget  2.0 positions/s measured at sf d12 (500 ms a search, 1 engines): 90 boards followable at one move per board every 45 s
    feeds   last message 0.4s ago
    """
    now = time.time() if now is None else now
    age = now - status.get("updated", 0)
    eng = status["engine"]
    lines = [f"updated {age:.0f}s ago" + ("  (monitor not running?)" if age > 30 else "")]
    restarts = eng.get("restarts")
    lag = status.get("engine_lag_seconds", eng.get("queue_lag_seconds")) or 0.0
    backlog = eng.get("backlog") or 0
    waiting = (f"the oldest of {backlog} positions waiting" if backlog > 1 else "1 position waiting" if backlog
               else "no position waiting")
    lines.append(f"engine  {eng.get('profile')}  engines {eng.get('engines_alive')}/{eng.get('engines')}  "
                 f"lag {lag:.1f}s ({waiting})  searches {eng.get('searches')}  cache hits {eng.get('cache_hits')}  "
                 f"restarts {'—' if restarts is None else restarts}  failures {eng.get('failures')}")
    if eng.get("previews"):
        lines.append(f"preview {eng.get('preview_searches', 0)} quick searches at {eng.get('quick_profile')} for the eval "
                     "bar while behind (not in the figures, nor in the rate)")
    mean, alive = eng.get("mean_search_s"), eng.get("engines_alive") or 0
    if mean and alive:  # the live figure of livemon plan: the pinned profile's searches so far
        rate = alive / mean
        lines.append(f"budget  {rate:.1f} positions/s measured at {eng.get('profile')} ({mean * 1e3:.0f} ms a search, "
                     f"{alive} engines): {int(rate * MOVE_SECONDS)} boards followable at one move per board every "
                     f"{MOVE_SECONDS:g} s")
    if "feed_lag_seconds" in status:  # (a status stored by an older monitor has no such figure)
        feed_lag = status["feed_lag_seconds"]
        lines.append("feeds   " + ("no message yet" if feed_lag is None else f"last message {feed_lag:.1f}s ago"))
    return lines


def run(args: argparse.Namespace) -> int:
    """:func:`_status`, its lines written only once they are all made: a status another livemon version stored (a
    key missing, another shape) is one line, never a traceback or half a screen."""
    import contextlib
    import io

    lines = io.StringIO()
    try:
        with contextlib.redirect_stdout(lines):
            code = _status(args)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        print(f"livemon: the monitor's status in the store is not of this version ({type(exc).__name__}: {exc}); "
              "livemon status --json shows it as stored", file=sys.stderr)
        return 1
    sys.stdout.write(lines.getvalue())
    return code


def _status(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    if cfg is None:
        return 2
    if args.check:
        from livemon.commands.doctor import diagnose

        return diagnose(cfg)
    import sqlite3

    from livemon.io.store import StoreError, open_reader

    try:
        with open_reader(cfg.store.path) as store:
            status = store.status.get()
            raised = store.alerts.load() if status is not None else []
    except StoreError as exc:
        print(f"livemon: {exc}", file=sys.stderr)
        return 1
    except sqlite3.Error as exc:
        print(f"livemon: store {cfg.store.path}: {exc}: livemon doctor --store {cfg.store.path} says more", file=sys.stderr)
        return 1
    if status is None:
        print("livemon: no monitor has run with this store yet", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(status, indent=1))
        return 0
    for line in summary(status):
        print(line)
    bus = status["engine"].get("bus")
    if bus:  # [bus] mode = "mqtt": the engines are workers behind a broker
        workers = ", ".join(f"{k} ({w['engines']})" for k, w in bus["workers"].items()) or "none"
        print(f"bus     {bus['broker']} {'connected' if bus['connected'] else 'DISCONNECTED'}  workers {workers}  "
              f"re-requests {bus['rerequests']}  rejected {bus['rejected']}")
        for name, why in (bus.get("quarantined") or {}).items():
            print(f"bus     worker {name} QUARANTINED: {why}")
    print(f"moves   {status['moves']} in {status['games']} games  unscored {status['unscored_plies']}  "
          f"duplicates {status['duplicates']}  rollbacks {status['rollbacks']}  TTT refreshes {status['ttt_refreshes']}")
    print(f"screening {status.get('screening', '?')}  notices {sum(lv == 'notice' for lv, _ in raised)}  "
          f"alerts {sum(lv == 'alert' for lv, _ in raised)}")
    faults = status.get("faults") or {}
    print(f"faults  {sum(faults.values())}" + (f"  ({', '.join(f'{k} {v}' for k, v in faults.items())})" if faults else ""))
    for f in status["feeds"]:
        print(f"feed    {f['name']:<24} {f['type']:<7} {f['state']:<9} games {f['games']:<4} plies {f['plies']:<6} "
              f"errors {f['errors']}" + (f"  last error: {f['last_error']}" if f.get("last_error") else ""))
    return 0
