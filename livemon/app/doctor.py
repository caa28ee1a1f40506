"""Is the store sound, writable, locked, backed up? And how to recover if not (``livemon doctor``).

Checks, one line each: the file exists and is an SQLite database; ``PRAGMA quick_check`` (``full``:
``integrity_check``); it and its folder are writable and the filesystem is not read-only; free space;
which monitor holds it (the lock file's pid); what it holds; the backup (``store.backup_minutes``) and
whether that copy is sound. :func:`diagnose` returns them with the recovery steps (docs/operations.md
explains them); the commands print them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from livemon.config import Config

LOW_SPACE_BYTES = 200 * 1024 * 1024
"""Below this much free space beside the store, doctor warns (SQLite needs room for the WAL and checkpoints)."""



@dataclass(frozen=True)
class Check:
    """One line of the diagnosis: ``ok`` True (ok), None (a note) or False (a problem)."""

    ok: bool | None
    text: str

    def line(self) -> str:
        mark = "ok     " if self.ok else ("note   " if self.ok is None else "PROBLEM")
        return f"{mark} {self.text}"


@dataclass(frozen=True)
class Diagnosis:
    """The checks in order, the problems found (empty: the store is sound) and the steps to recover."""

    checks: list[Check]
    problems: list[str]
    steps: list[str]

    @property
    def sound(self) -> bool:
        return not self.problems


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def diagnose(cfg: Config, full: bool = False) -> Diagnosis:
    """The checks of ``cfg``'s store and, if any fails, the steps to recover."""
    import sqlite3

    from livemon.io.store import Store, StoreError, lock_holder, open_reader

    path = cfg.store.path
    backup = cfg.store.backup_path or path + ".backup"
    problems: list[str] = []
    kinds: set[str] = set()
    checks: list[Check] = []

    def say(ok: bool | None, text: str) -> None:
        checks.append(Check(ok, text))

    if not Path(path).is_file():
        say(False, f"no store at {path} (a monitor creates it when it starts: livemon serve)")
        return Diagnosis(checks, ["missing"], [])
    say(True, f"store {path}: {_size(Path(path).stat().st_size)}")
    holder = lock_holder(path)
    say(None, f"held by a running monitor, pid {holder}" if holder else "no monitor holds it")
    try:
        with open_reader(path) as store:
            found = store.engine.check(full)
            if found:
                kinds.add("damaged")
                problems.append("damaged")
                say(False, f"{'integrity_check' if full else 'quick_check'}: {len(found)} problem(s), first: {found[0]}")
            else:
                say(True, f"{'integrity_check' if full else 'quick_check'}: sound")
                try:
                    counts = [store.engine.db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("games", "moves", "analyses")]
                    say(True, f"holds {counts[0]} games, {counts[1]} moves, {counts[2]} analyses")
                except sqlite3.Error as exc:
                    kinds.add("damaged")
                    problems.append("unreadable")
                    say(False, f"cannot read its tables: {exc}")
    except StoreError as exc:
        kinds.add("damaged")
        problems.append("unopenable")
        say(False, str(exc))
    folder = Path(path).resolve().parent
    try:
        vfs = os.statvfs(folder)
        if vfs.f_flag & os.ST_RDONLY:
            kinds.add("readonly")
            problems.append("readonly")
            say(False, f"the filesystem of {folder} is mounted read-only: the monitor cannot write")
        elif not os.access(path, os.W_OK) or not os.access(folder, os.W_OK):
            kinds.add("readonly")
            problems.append("readonly")
            say(False, f"{path} or its folder is not writable by this user")
        else:
            say(True, "writable")
        free = vfs.f_bavail * vfs.f_frsize
        if "readonly" in kinds:
            pass  # nothing is written there anyway
        elif free < LOW_SPACE_BYTES:
            kinds.add("space")
            problems.append("space")
            say(False, f"only {_size(free)} free beside the store: writes will fail when it is gone")
        else:
            say(True, f"{_size(free)} free")
    except OSError as exc:
        say(False, f"cannot stat {folder}: {exc.strerror}")
        problems.append("stat")
    backup_sound = False
    if Path(backup).is_file():
        age = time.time() - Path(backup).stat().st_mtime
        try:
            with Store(backup, create=False, readonly=True) as copy:
                bad = copy.engine.check()
        except StoreError as exc:
            bad = [str(exc)]
        backup_sound = not bad
        say(backup_sound, f"backup {backup}: {age / 60:.0f} min old, " + ("sound" if backup_sound else f"damaged ({bad[0]})"))
    else:
        say(None, f"no backup at {backup} (a monitor makes one every store.backup_minutes = {cfg.store.backup_minutes:g})")
    steps: list[str] = []
    if not problems:
        return Diagnosis(checks, problems, steps)
    if "damaged" in kinds:
        steps.append(f"stop the monitor; keep the damaged file: mv {path} {path}.damaged (and {path}-wal, {path}-shm if present)")
        if backup_sound:
            steps.append(f"restore the backup: cp {backup} {path} (moves since the backup come back as the feeds re-send "
                         "their games; analyses are searched again)")
        else:
            steps.append(f"salvage what SQLite can read: sqlite3 {path}.damaged .recover | sqlite3 {path}")
        steps.append(f"check again: livemon doctor --store {path}; then start the monitor (it resumes from the store)")
    if "readonly" in kinds:
        steps.append(f"make {path} and its folder writable (or remount the filesystem read-write), or copy the store "
                     "to a writable place and point store.path (or --store) at it")
    if "space" in kinds:
        steps.append("free space on that filesystem: a running monitor holds its writes in memory and stores them "
                     "when space returns (/healthz is 503 meanwhile)")
    return Diagnosis(checks, problems, steps)
