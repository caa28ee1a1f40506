"""Who may read what, and how often: the arbiter token and the snapshot rate limit, without I/O.

Both take the time as an argument (a monotonic clock's seconds) and never read a clock, so the
limits are tested by passing times in.

Arbiter tokens (docs/websocket.md): a wrong token is counted (``web.wrong_arbiter_token``) and
logged with the client's address; ``ARBITER_TRIES`` wrong tokens on one connection close it
(1008). Once an address has ``ARBITER_TRIES_PER_ADDRESS`` wrong tokens in the last
``ARBITER_WINDOW`` seconds, each further try from it waits ``ARBITER_SLOW`` seconds (the server
sleeps before handing the request in) and a wrong one closes its connection: the guesses are
limited, never the arbiter (the right token is always accepted, behind a NAT or a proxy shared
with a guesser too).

>>> gate = ArbiterGate("s3cret-token")
>>> [gate.check("guess", "10.0.0.1", "peer", tries, now=float(tries)).close for tries in (1, 2, 3)]
[None, None, 'too many wrong arbiter tokens']
>>> gate.check("s3cret-token", "10.0.0.1", "peer", 0, now=4.0).granted
True
>>> bucket = SnapshotBucket(now=0.0)
>>> [bucket.take(0.0) for _ in range(SNAPSHOT_BURST + 1)].count(True), bucket.take(0.5)
(10, True)
"""

from __future__ import annotations

import hmac
import logging
from collections import deque
from dataclasses import dataclass

from livemon.errors import FAULTS

log = logging.getLogger(__name__)

SNAPSHOT_BURST = 10
"""Snapshot-producing requests (``snapshot``, ``subscribe``) a client may send at once..."""
SNAPSHOT_RATE = 2.0
"""...and per second after that; beyond, a ``rate_limited`` error frame (encoding snapshots is the costly part)."""
ARBITER_TRIES = 3
"""Wrong arbiter tokens on one connection before it is closed (1008)."""
ARBITER_TRIES_PER_ADDRESS = 10
"""Wrong arbiter tokens from one address within ``ARBITER_WINDOW`` after which its tries are slowed."""
ARBITER_WINDOW = 60.0
"""Seconds over which wrong arbiter tokens from one address are counted."""
ARBITER_SLOW = 1.0
"""Seconds a token try from an address over its budget waits before it is checked (right or wrong alike,
so the wait tells nothing); a wrong one then closes its connection: one guess per connection and second."""
MAX_ADDRESSES = 10000
"""Addresses with wrong tokens remembered before the quiet ones are forgotten (a scan from many)."""


class SnapshotBucket:
    """A client's snapshot rate limit: a token bucket of ``SNAPSHOT_BURST``, refilled at ``SNAPSHOT_RATE`` a second."""

    __slots__ = ("refilled", "tokens")

    def __init__(self, now: float) -> None:
        self.tokens = float(SNAPSHOT_BURST)
        self.refilled = now

    def take(self, now: float) -> bool:
        """Take one token at ``now``; False when none is left (the request is refused)."""
        self.tokens = min(SNAPSHOT_BURST, self.tokens + (now - self.refilled) * SNAPSHOT_RATE)
        self.refilled = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


@dataclass(frozen=True, slots=True)
class Verdict:
    """A token try's outcome: ``granted``, or not and maybe ``close`` (the connection closes with this reason)."""

    granted: bool
    close: str | None = None


class ArbiterGate:
    """The arbiter token (None: the arbiter channels are off) and the wrong tries per address."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self._wrong: dict[str, deque[float]] = {}  # address -> times of its last wrong tokens
        self._slow_logged: dict[str, float] = {}  # address -> when its "keeps coming" line was last logged

    @property
    def enabled(self) -> bool:
        return self.token is not None

    def over_budget(self, address: str, now: float) -> bool:
        """Has ``address`` sent ``ARBITER_TRIES_PER_ADDRESS`` wrong tokens within the last ``ARBITER_WINDOW`` s?"""
        recent = self._wrong.get(address)
        return recent is not None and len(recent) >= ARBITER_TRIES_PER_ADDRESS and now - recent[0] <= ARBITER_WINDOW

    def check(self, token: str, address: str, peer: str, tries: int, now: float) -> Verdict:
        """Check ``token`` from ``peer`` (at ``address``), whose connection sent ``tries`` wrong tokens before,
        this one included if wrong. The right token is granted whatever the address did before."""
        if self.token is None:
            return Verdict(False)
        over = self.over_budget(address, now)
        if hmac.compare_digest(token.encode(), self.token.encode()):
            log.info("web: client %s is an arbiter", peer)
            return Verdict(True)
        FAULTS.count("web.wrong_arbiter_token")
        recent = self._wrong.setdefault(address, deque(maxlen=ARBITER_TRIES_PER_ADDRESS))
        recent.append(now)
        if over:  # one guess per connection, each after ARBITER_SLOW; a line a minute per address, not per guess
            logged = self._slow_logged.get(address)
            if logged is None or now - logged > ARBITER_WINDOW:
                self._slow_logged[address] = now
                log.warning("web: wrong arbiter tokens from %s keep coming (%d in the last %g s): each further try "
                            "from it waits %g s and a wrong one closes its connection (a line a minute)",
                            address, ARBITER_TRIES_PER_ADDRESS, ARBITER_WINDOW, ARBITER_SLOW)
            return Verdict(False, "too many wrong arbiter tokens from this address")
        log.warning("web: wrong arbiter token from %s (%d of %d on this connection, %d from %s in %g s)",
                    peer, tries, ARBITER_TRIES, len(recent), address, ARBITER_WINDOW)
        if len(self._wrong) > MAX_ADDRESSES:  # forget quiet addresses
            for addr in [a for a, d in self._wrong.items() if not d or now - d[-1] > ARBITER_WINDOW]:
                del self._wrong[addr]
                self._slow_logged.pop(addr, None)
        return Verdict(False, "too many wrong arbiter tokens" if tries >= ARBITER_TRIES else None)
