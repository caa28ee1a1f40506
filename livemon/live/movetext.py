"""A game's text looked at without reading its moves: is it finished (a result or ``*`` at its end), is a
round's text cut, are its comments closed, where do its tags end.

The splitters and feeds ask these before a game is read; the moves themselves are read only by
:mod:`livemon.live.reader`.
"""

from __future__ import annotations

import re

TAG_LINE = re.compile(r'^\s*\[\s*[A-Za-z0-9_]+\s+"(?:[^"\\]|\\.)*"\s*\]\s*$')
"""A PGN tag-pair line."""

_TERMINATED = re.compile(r"(?:^|\s)(?:1-0|0-1|1/2-1/2|\*)\s*$")
_COMMENT = re.compile(r"\{[^}]*\}?|;[^\n]*", re.S)


def is_terminated(chunk: str) -> bool:
    """True when a game's movetext ends in a result or ``*`` (ignoring comments)."""
    lines = [ln for ln in chunk.splitlines() if not TAG_LINE.match(ln)]
    text = _COMMENT.sub(" ", "\n".join(lines))
    return bool(_TERMINATED.search(text))


_ODD_BREAKS = re.compile("[\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def tag_head(chunk: str) -> str | None:
    """The chunk's leading lines that are blank, ``%`` or tag lines (``live.pgn._tag_block``'s section, found
    without splitting the whole chunk into lines); None when a line break other than ``\\n`` (or ``\\r\\n``)
    comes first, where ``str.splitlines`` would cut lines elsewhere.
    """
    end, n = 0, len(chunk)
    while end < n:
        nl = chunk.find("\n", end)
        stop = n if nl < 0 else nl + 1
        line = chunk[end:stop]
        stripped = line.strip()
        if _ODD_BREAKS.search(line[:-2] if line.endswith("\r\n") else line):
            return None
        if stripped and not stripped.startswith("%") and not TAG_LINE.match(line):
            break
        end = stop
    return chunk[:end]


def balanced(chunk: str) -> bool:
    body = "\n".join(ln for ln in chunk.splitlines() if not TAG_LINE.match(ln))
    return body.count("{") == body.count("}")
