"""The root of livemon's own exceptions: an expected fault, reported in one clear line.

Every error livemon raises on purpose derives from :class:`LivemonError`, so a
caller (the CLI above all) can tell "bad config, bad input, an engine or broker
in trouble" — which get one line and no traceback — from a bug. Each keeps the
built-in base it had (``ValueError`` for bad values, ``RuntimeError`` for a
process in trouble), so existing ``except ValueError`` still catch them.

Checks on input (files, feeds, the network) raise these or log a line; they are
never ``assert`` statements, which ``python -O`` removes.

>>> from livemon.config import ConfigError
>>> from livemon.io.engine import EngineError
>>> issubclass(ConfigError, LivemonError) and issubclass(ConfigError, ValueError)
True
>>> issubclass(EngineError, LivemonError), issubclass(InputError, ValueError)
(True, True)
"""

from __future__ import annotations


class LivemonError(Exception):
    """Root of livemon's exceptions: an expected fault whose message is one line for the user."""


class InputError(LivemonError, ValueError):
    """Malformed input from a file, a feed, a client or a broker; the message says what is wrong with it."""


class FaultCounter:
    """Expected faults met since start, by kind: the one place every refused input is counted.

    Each adapter that refuses something (an engine's answer, a worker's message, a feed's text,
    a wrong arbiter token) counts it here under a short dotted kind (``engine.refused``,
    ``bus.quarantined`` ...); ``livemon status`` and the monitor's status show the totals.
    A plain per-process tally: reading it costs a dict copy.

    >>> faults = FaultCounter()
    >>> faults.count("engine.refused"); faults.count("engine.refused"); faults.count("feed.junk", 3)
    >>> faults.snapshot(), faults.total
    ({'engine.refused': 2, 'feed.junk': 3}, 5)
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def count(self, kind: str, n: int = 1) -> None:
        """Add ``n`` faults of ``kind``."""
        self._counts[kind] = self._counts.get(kind, 0) + n

    def snapshot(self) -> dict[str, int]:
        """The totals by kind, sorted by kind."""
        return dict(sorted(self._counts.items()))

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def clear(self) -> None:
        """Forget every count (tests)."""
        self._counts.clear()


FAULTS = FaultCounter()
"""This process's fault counts."""
