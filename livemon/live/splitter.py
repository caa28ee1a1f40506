r"""The one splitter: PGN text into one chunk per game, whole or as it streams in.

One rule, one implementation (:class:`_Games`): a tag-pair line that follows move text starts a new game
(files whose games are not separated by a blank line, the chess.com export bug, are split too); ``%``
lines and blank lines are no move text. A stream (:class:`PgnStreamSplitter`) adds one rule, because its
next game may not come for minutes: a blank line after move text that ends in a result or ``*`` ends the
game. Each chunk is then read on its own (:mod:`livemon.live.reader`), so a bad game costs one clear line,
not the file.

>>> text = '[White "A"]\n[Black "B"]\n\n1. e4 e5 1-0\n[White "C"]\n[Black "D"]\n\n1. d4 Ke4 0-1\n'
>>> [separated for _, separated in split_games(text)]
[True, False]
"""

from __future__ import annotations

from typing import Iterator

from livemon.live.movetext import TAG_LINE, is_terminated


class _Games:
    """The lines of the game being split, and whether move text has begun (the splitting rule's state)."""

    __slots__ = ("lines", "size", "movetext")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0  # characters in lines
        self.movetext = False

    def add(self, line: str, stripped: str, end_at_blank: bool) -> str | None:
        """One line (``stripped``: it without surrounding space): the game it ended, or None. A tag line after
        move text ends the game before it (and starts the next); with ``end_at_blank``, a blank line after
        move text that ends in a result or ``*`` ends the game (and is dropped)."""
        done = None
        if stripped.startswith("[") and TAG_LINE.match(line):
            if self.movetext:
                done = self.take()
        elif not stripped:
            if end_at_blank and self.movetext and is_terminated("\n".join(self.lines)):
                return self.take()
        elif not stripped.startswith("%"):
            self.movetext = True
        self.lines.append(line)
        self.size += len(line) + 1
        return done

    def take(self) -> str:
        chunk = "\n".join(self.lines) + "\n"
        self.lines, self.size, self.movetext = [], 0, False
        return chunk


def split_games(text: str) -> Iterator[tuple[str, bool]]:
    """Split PGN text into per-game chunks.

    Yields ``(chunk, separated)``; ``separated`` is False when the game was not
    preceded by a blank line (the chess.com export bug).
    """
    for _, chunk, separated in numbered_games(text):
        yield chunk, separated


def numbered_games(text: str) -> Iterator[tuple[int, str, bool]]:
    """:func:`split_games` with the number of each chunk's first non-blank line: ``(line, chunk, separated)``."""
    games = _Games()
    first = 0
    last_blank = True
    separated = True
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        done = games.add(line, stripped, False)
        if done is not None:
            yield first, done, separated
            first, separated = 0, last_blank
        if stripped and not first:
            first = number
        last_blank = not stripped
    if any(s.strip() for s in games.lines):
        yield first, games.take(), separated


def text_is_cut(text: str) -> bool:
    """True when the last game of a PGN text has no result or ``*`` (maybe half-written)."""
    chunks = list(split_games(text))
    return bool(chunks) and not is_terminated(chunks[-1][0])


class PgnStreamSplitter:
    r"""Incremental splitter for concatenated PGNs (the lichess round stream).

    ``feed(text)`` returns the games completed by this piece of text: a game
    is complete when the next game's tag section starts, or at a blank line
    after movetext that ends in a result or ``*``. ``close()`` returns the
    last game if it is terminated, and discards a cut one.

    Linear in the input: text without a newline is only buffered (never
    re-scanned), so a server that sends megabytes without one costs O(n).
    A game (its lines plus the partial line) over ``max_game`` characters is
    dropped: ``overflows`` counts them, and the splitter skips to the next
    tag line.

    >>> s = PgnStreamSplitter()
    >>> s.feed('[Event "a"]\n\n1. e4 *\n'), s.feed('\n[Event "b"]\n\n1. d4 *\n\n')
    ([], ['[Event "a"]\n\n1. e4 *\n', '[Event "b"]\n\n1. d4 *\n'])
    """

    def __init__(self, max_game: int | None = None) -> None:
        self._pieces: list[str] = []  # the partial line, in pieces
        self._partial = 0  # its length
        self._games = _Games()
        self._skipping = False
        self.max_game = max_game
        self.overflows = 0

    def feed(self, text: str) -> list[str]:
        if "\n" not in text:
            self._pieces.append(text)
            self._partial += len(text)
            self._check_size()
            return []
        head, *lines, tail = text.split("\n")
        first = "".join(self._pieces) + head
        self._pieces, self._partial = ([tail], len(tail)) if tail else ([], 0)
        out: list[str] = []
        for line in [first, *lines]:
            line = line.rstrip("\r")
            if self._skipping:
                if not TAG_LINE.match(line):
                    continue
                self._skipping = False
            done = self._games.add(line, line.strip(), True)
            if done is not None:
                out.append(done)
            self._check_size()
        self._check_size()
        return [c for c in out if c.strip()]

    def _check_size(self) -> None:
        if self.max_game is not None and self._games.size + self._partial > self.max_game:
            self.overflows += 1
            self.reset()
            self._skipping = True

    def close(self) -> list[str]:
        """End of stream: the buffered game if it is whole."""
        if self._pieces:
            self.feed("\n")
        chunk = self._games.take()
        return [chunk] if chunk.strip() and is_terminated(chunk) else []

    def reset(self) -> None:
        """Drop a partial game (the connection broke)."""
        self._pieces, self._partial, self._games = [], 0, _Games()
        self._skipping = False
