"""``livemon status``: feeds, engine backlog and lag, as last stored by the running monitor."""

from __future__ import annotations

import argparse
import json
import sys
import time

from livemon.commands import add_store_arguments, config_from_args


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="the raw status object")
    p.add_argument("--check", action="store_true", help="check the store instead (the same as livemon doctor)")
    add_store_arguments(p)


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
            status = store.get_status()
            raised = store.load_alerts() if status is not None else []
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
    age = time.time() - status.get("updated", 0)
    eng = status["engine"]
    print(f"updated {age:.0f}s ago" + ("  (monitor not running?)" if age > 30 else ""))
    restarts = eng.get("restarts")
    print(f"engine  {eng.get('profile')}  engines {eng.get('engines_alive')}/{eng.get('engines')}  "
          f"backlog {eng.get('backlog')} (oldest waiting {eng.get('queue_lag_seconds') or 0:.1f}s)  "
          f"searches {eng.get('searches')}  cache hits {eng.get('cache_hits')}  "
          f"restarts {'—' if restarts is None else restarts}  failures {eng.get('failures')}"
          + (f"  eval-bar previews {eng['previews']} at {eng.get('quick_profile')}" if eng.get("previews") else ""))
    mean, alive = eng.get("mean_search_s"), eng.get("engines_alive") or 0
    if mean and alive:  # the live figure of livemon plan: the searches done so far
        rate = alive / mean
        print(f"budget  {rate:.1f} positions/s measured ({mean * 1e3:.0f} ms a search, {alive} engines): "
              f"{int(rate * 45)} boards followable at one move per board every 45 s (livemon plan --boards N for more)")
    bus = eng.get("bus")
    if bus:  # [bus] mode = "mqtt": the engines are workers behind a broker
        workers = ", ".join(f"{k} ({w['engines']})" for k, w in bus["workers"].items()) or "none"
        print(f"bus     {bus['broker']} {'connected' if bus['connected'] else 'DISCONNECTED'}  workers {workers}  "
              f"re-requests {bus['rerequests']}  rejected {bus['rejected']}")
        for name, why in (bus.get("quarantined") or {}).items():
            print(f"bus     worker {name} QUARANTINED: {why}")
    print(f"moves   {status['moves']} in {status['games']} games  unscored {status['unscored_plies']}  "
          f"lag {status['lag_seconds']:.1f}s  duplicates {status['duplicates']}  rollbacks {status['rollbacks']}  "
          f"TTT refreshes {status['ttt_refreshes']}")
    print(f"screening {status.get('screening', '?')}  notices {sum(lv == 'notice' for lv, _ in raised)}  "
          f"alerts {sum(lv == 'alert' for lv, _ in raised)}")
    faults = status.get("faults") or {}
    print(f"faults  {sum(faults.values())}" + (f"  ({', '.join(f'{k} {v}' for k, v in faults.items())})" if faults else ""))
    for f in status["feeds"]:
        print(f"feed    {f['name']:<24} {f['type']:<7} {f['state']:<9} games {f['games']:<4} plies {f['plies']:<6} "
              f"errors {f['errors']}" + (f"  last error: {f['last_error']}" if f.get("last_error") else ""))
    return 0
