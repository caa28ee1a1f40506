"""Stale copies of a source that flaps: a CDN whose edges serve an old and a new body in turn, a file
that two mirrors rewrite in turn. Left alone, every flap would roll the games back and forward again.

A version taken before, seen again after a longer one was taken (an older copy of a growing round), is
stale: it is ignored until it has been seen ``polls`` reads in a row, so that an operator's real revert
(served steadily) comes through. What came between counts too: a read cut while the file was rewritten
(shorter, and new) does not make the stale copy look fresh. A full version after a cut one is never
stale: it is the longer. Sans I/O: the feed hands in each version's digest and size and asks whether to
take it.

>>> guard = StaleCopies()
>>> [guard.take("src", d, n) for d, n in [("A", 10), ("B", 20), ("A", 10), ("B", 20), ("A", 10)]]
[True, True, False, True, False]
>>> guard.stale
2
>>> [guard.take("src", "A", 10) for _ in range(2)]  # then served steadily: a revert, taken at its third read
[False, True]
"""

from __future__ import annotations

from collections.abc import Hashable

STALE_POLLS = 3
"""Reads in a row an earlier version must be seen before it is taken (a revert), not ignored as stale."""
HISTORY = 8
"""Versions remembered per source (a flap between two copies needs two; cut reads between them take a few more)."""


class StaleCopies:
    """The last versions taken of each source (a URL, a file of a folder) and the stale one being seen."""

    def __init__(self, polls: int = STALE_POLLS) -> None:
        self.polls = polls
        self._versions: dict[str, list[tuple[Hashable, int]]] = {}  # source -> (digest, size) taken, oldest first
        self._run: dict[str, tuple[Hashable, int]] = {}  # source -> the stale version being seen, and reads in a row
        self.stale = 0  # stale versions ignored, all sources (the first is the feed's one log line)

    def take(self, source: str, digest: Hashable, size: int) -> bool:
        """Whether to read this version of ``source`` (False: a stale copy, ignored and counted)."""
        versions = self._versions.setdefault(source, [])
        at = next((i for i, (d, _) in enumerate(versions) if d == digest), None)
        if at is not None and any(n > size for _, n in versions[at + 1:]):  # A, B, A with B longer: stale?
            seen = self._run.get(source)
            run = seen[1] + 1 if seen is not None and seen[0] == digest else 1
            self._run[source] = (digest, run)
            if run < self.polls:
                self.stale += 1
                return False
        self._run.pop(source, None)
        if not versions or versions[-1][0] != digest:
            self._versions[source] = [*(v for v in versions if v[0] != digest), (digest, size)][-HISTORY:]
        return True

    def forget(self, source: str) -> None:
        """``source`` is gone (a file removed from a folder): what it served is no longer compared."""
        self._versions.pop(source, None)
        self._run.pop(source, None)
