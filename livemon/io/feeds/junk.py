"""Junk after the last game of a PGN text: cut off before the text is read, so it costs the games nothing.

A file or a body that ends in a finished game followed by something that is not a game (a stray line, a
half-written tag, bytes of a failed write) would otherwise glue that junk to the last game: the game then
looks half-written (no result at its end), its result is not taken and its last ply may be held back.
What follows the last game's result token at the top level of its movetext (outside comments) is junk
unless it is a new game (which starts with a tag line and is a chunk of its own).

>>> text = '[Event "E"]\\n[Result "1-0"]\\n\\n1. e4 e5 1-0\\n\\ngarbage }{ here\\n'
>>> kept, junk = cut_junk(text)
>>> kept.endswith("1-0\\n"), junk
(True, 'garbage }{ here')
>>> cut_junk('[Event "E"]\\n\\n1. e4 {a 1-0 comment} e5\\n')[1]
''
"""

from __future__ import annotations

import re

from livemon.live.pgn import split_games

_TAG_LINE = re.compile(r'^\s*\[\s*[A-Za-z0-9_]+\s+"(?:[^"\\]|\\.)*"\s*\]\s*$', re.M)
_COMMENT = re.compile(r"\{[^}]*(?:\}|$)|;[^\n]*|^%[^\n]*", re.M)
_RESULT = re.compile(r"(?<!\S)(?:1-0|0-1|1/2-1/2|\*)(?!\S)")


def _blanked(chunk: str) -> str:
    """``chunk`` with its tag lines and comments replaced by spaces (offsets kept)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return _COMMENT.sub(blank, _TAG_LINE.sub(blank, chunk))


def cut_junk(text: str) -> tuple[str, str]:
    """``(text without the junk after its last game, the junk stripped)``; ``(text, "")`` when there is none."""
    chunks = [c for c, _ in split_games(text)]
    if not chunks:
        return text, ""
    last = chunks[-1]
    plain = _blanked(last)
    results = list(_RESULT.finditer(plain))
    if not results:
        return text, ""
    end = results[-1].end()
    junk = last[end:]
    if not plain[end:].strip():
        return text, ""
    return "".join(chunks[:-1]) + last[:end] + "\n", junk.strip()
