"""A progress bar on stderr for long batch work (analyse, fit, calibrate).

On a terminal the bar is redrawn in place; otherwise (CI logs, pipes) a line is
written at every 10% so that logs stay short.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress(total, "analysing") as bar: bar.advance()``.

    Work found done already (a cache's answers) is counted with ``advance(n, done_already=True)``: it moves the
    bar but not the rate, so the rate and the time left are those of the work being done.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = Progress(100, "analysing", stream=out)
    >>> bar.advance(90, done_already=True)
    >>> out.getvalue().splitlines()[-1]
    'analysing 90/100 (?/s, eta ?)'
    """

    def __init__(self, total: int, label: str, stream: TextIO | None = None, width: int = 30):
        self.total, self.label, self.width = max(total, 0), label, width
        self.stream = stream or sys.stderr
        self.done = 0
        self._worked = 0  # of ``done``, what was done since the start (not found done)
        self.started = time.monotonic()
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_decile = -1

    def __enter__(self) -> "Progress":
        self._draw()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tty and self.total:
            self.stream.write("\n")
            self.stream.flush()

    def advance(self, n: int = 1, done_already: bool = False) -> None:
        self.done += n
        if not done_already:
            self._worked += n
        self._draw()

    def _draw(self) -> None:
        if not self.total:
            return
        frac = min(self.done / self.total, 1.0)
        elapsed = time.monotonic() - self.started
        rate = self._worked / elapsed if elapsed > 0 else 0.0
        eta = f"{(self.total - self.done) / rate:.0f}s" if rate > 0 else "?"
        shown = f"{rate:.1f}" if rate > 0 else "?"
        text = f"{self.label} {self.done}/{self.total} ({shown}/s, eta {eta})"
        if self._tty:
            filled = int(frac * self.width)
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {text}")
            self.stream.flush()
        else:
            decile = int(frac * 10)
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(f"{text}\n")
                self.stream.flush()
