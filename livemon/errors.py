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
