"""``file`` feed: a PGN file (or a DGT LiveChess round folder) that grows or is rewritten in place.

Polls size and mtime rather than using inotify: it works the same on every
filesystem (including network shares, where broadcast PCs often write) and
the cost is one ``stat`` per file per interval. Size and mtime can stay the
same across a rewrite (a same-size correction copied with ``cp -p`` or
``rsync -t``, a share with coarse timestamps), so a file whose ``stat`` has
not changed is still read and hashed every ``HASH_RECHECK_S`` seconds: a
rewrite is noticed by its content within that time. Only regular files are
read: a device (``/dev/zero``: endless, and of size 0 to ``stat``) or a FIFO
(a read that blocks for ever) is one error line, not a read.

A folder is read as DGT LiveChess writes it: if any ``game-*.pgn`` files
exist below it (``round-N/game-M.pgn``) only those are read, since the
combined ``games.pgn`` repeats the same games and may be written at a
different moment; otherwise every ``games.pgn`` below it, otherwise every
``*.pgn``.

Every poll reads the whole round (the files of the folder, each re-read only
when it changed), so a game that is no longer in it is withdrawn after
``withdraw_after`` seconds (:meth:`~livemon.live.tracker.GameTracker.poll_done`).

A file that flaps (two writers, or a mirror that copies a stale and a fresh
version in turn) must not roll games back and forth: a stale version
(:class:`~livemon.io.feeds.stale.StaleCopies`) is not read, and is looked at
again next poll; it is taken only once it has stayed ``STALE_POLLS`` polls in a
row (an operator's real revert). The feed's first stale version is one log
line; the rest are counted (``feed.stale_files`` in the status's faults).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import stat
import time
from pathlib import Path
from typing import AsyncIterator

from livemon.errors import FAULTS
from livemon.io.feeds.base import BaseFeed
from livemon.io.feeds.stale import STALE_POLLS, StaleCopies
from livemon.live.splitter import text_is_cut
from livemon.live.tracker import KeyFunc
from livemon.live.messages import FeedError, Message

log = logging.getLogger(__name__)

HASH_RECHECK_S = 10.0
"""Seconds after which a file whose size and mtime have not changed is read again and compared by content."""


def pgn_files(path: Path) -> list[Path]:
    """The files to read for a path: itself, or the PGNs of a DGT round folder."""
    if not path.is_dir():
        return [path]
    for pattern in ("game-*.pgn", "games.pgn", "*.pgn"):
        found = sorted(path.rglob(pattern), key=_natural)
        if found:
            return found
    return []


def _natural(p: Path) -> list[object]:
    import re

    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(p))]


class FileFeed(BaseFeed):
    """Re-reads changed files every ``interval`` seconds; ``follow`` False reads once and stops."""

    type = "file"

    def __init__(self, name: str, path: str | Path, interval: float = 1.0, follow: bool = True,
                 key: KeyFunc | None = None, max_body: int = 64 * 2**20,
                 withdraw_after: float | None = 10.0) -> None:
        super().__init__(name, key, withdraw_after)
        self.path = Path(path)
        self.max_body = max_body
        self.interval = interval
        self.follow = follow
        self._seen: dict[Path, tuple[int, int]] = {}
        self._digest: dict[Path, bytes] = {}  # content hash of each file as last read
        self._hashed: dict[Path, float] = {}  # when each file was last read (monotonic)
        self.rewrites = 0  # rewrites noticed by content alone (size and mtime unchanged)
        self.reads = 0  # files actually read (changed since the last poll)
        self.polls = 0  # whole rounds looked at
        self._unsettled: dict[Path, tuple[tuple[int, int], str]] = {}  # last game had no result or *
        self._copies = StaleCopies()  # the versions taken of each file, to tell a stale copy

    async def run(self) -> AsyncIterator[Message]:
        self.status.state = "running"
        missing_reported = False
        try:
            while True:
                if not self.path.exists():
                    if not missing_reported:
                        for m in self._io_error(f"{self.path}: no such file or folder", True):
                            yield m
                        missing_reported = True
                else:
                    missing_reported = False
                    files = pgn_files(self.path)
                    for file in files:
                        # read and parsed in a worker thread: a big file never blocks the event loop
                        for m in self._account(await asyncio.to_thread(self._poll, file)):
                            yield m
                    # the whole round was read: games it no longer lists are withdrawn (after a while)
                    for m in self._account(self.tracker.poll_done([str(f) for f in files], time.monotonic())):
                        yield m
                    self.polls += 1
                if not self.follow:
                    self.status.state = "finished"
                    return
                await asyncio.sleep(self.interval)
        finally:
            if self.status.state != "finished":
                self.status.state = "stopped"

    @property
    def stale_versions(self) -> int:
        """Stale versions of its files ignored so far."""
        return self._copies.stale

    def _poll(self, file: Path) -> list[Message]:
        now = time.monotonic()
        try:
            st = file.stat()
            sig = (st.st_mtime_ns, st.st_size)
            if not stat.S_ISREG(st.st_mode):
                if self._seen.get(file) == sig:
                    return []
                self._seen[file] = sig  # one error per version of it
                self.tracker.unlisted(str(file))
                kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
                return [FeedError(self.name, f"{file}: {kind}, not a regular file; not read")]
            recheck = self._seen.get(file) == sig and now - self._hashed.get(file, now) >= HASH_RECHECK_S
            if self._seen.get(file) == sig and not recheck:
                pending = self._unsettled.pop(file, None)
                if pending is not None and pending[0] == sig:
                    # unchanged for a poll: the writer is done; the game just lacks a result or *
                    return self.tracker.update_text(pending[1], source=file.name, final=False, settled=True,
                                                    view=str(file))
                return []
            if st.st_size > self.max_body:
                self._seen[file] = sig  # one error per version of the file
                self._hashed[file] = now
                self.tracker.unlisted(str(file))
                return [FeedError(self.name, f"{file}: {st.st_size / 2**20:.1f} MB, over the limit of "
                                  f"{self.max_body / 2**20:g} MB (feeds.{self.name}.max_body_mb); not read")]
            with file.open("rb") as f:
                raw = f.read(self.max_body + 1)  # bounded, whatever stat said
        except OSError as exc:
            self.tracker.unlisted(str(file))
            return [FeedError(self.name, f"{file}: {exc.strerror or exc}")]
        if len(raw) > self.max_body:
            self._seen[file] = sig
            self._hashed[file] = now
            self.tracker.unlisted(str(file))
            return [FeedError(self.name, f"{file}: over the limit of {self.max_body / 2**20:g} MB "
                              f"(feeds.{self.name}.max_body_mb) though its size said less; not read")]
        digest = hashlib.blake2b(raw, digest_size=16).digest()
        self._hashed[file] = now
        if not self._copies.take(str(file), digest, len(raw)):
            # not remembered as seen: read again next poll, and taken once it has stayed STALE_POLLS polls
            FAULTS.count("feed.stale_files")
            if self._copies.stale == 1:
                log.warning("feed %s: %s: an earlier version of the file came back (two writers, or a mirror "
                            "flapping?): ignored unless it stays %d polls; logged once", self.name, file, STALE_POLLS)
            return []
        if recheck:
            if digest == self._digest.get(file):
                return []
            self.rewrites += 1
            log.info("feed %s: %s was rewritten with its size and mtime kept; read again", self.name, file)
        self._digest[file] = digest
        text = self._without_junk(raw.decode("utf-8", errors="replace"), str(file))
        self._seen[file] = sig
        self.reads += 1
        if text_is_cut(text):
            self._unsettled[file] = (sig, text)
        else:
            self._unsettled.pop(file, None)
        # final=False: a writer may be half way through the last game
        return self.tracker.update_text(text, source=file.name, final=False, view=str(file))
