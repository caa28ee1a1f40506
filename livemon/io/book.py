"""An opening book for screening, read from a Polyglot file and handed to the screener as a predicate.

The screener (sans I/O) only asks "is this position in the book?"; this adapter opens the file.
"""

from __future__ import annotations

import logging
from typing import Callable

import chess.polyglot

log = logging.getLogger(__name__)


def open_book(path: str) -> Callable[[int], bool] | None:
    """A Polyglot book as a predicate on position keys; None (with a log line) when it cannot be read."""
    if not path:
        return None
    try:
        reader = chess.polyglot.open_reader(path)
    except OSError as exc:
        log.error("screening: opening book %s cannot be read (%s); no book exclusions", path, exc.strerror or exc)
        return None

    def in_book(key: int) -> bool:
        return reader.get(key) is not None

    return in_book
