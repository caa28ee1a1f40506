"""Splitting a stream of concatenated PGN games (a lichess round stream) into whole games, incrementally."""

from __future__ import annotations

from livemon.live.movetext import is_terminated
from livemon.live.pgn import _TAG_LINE


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
        self._lines: list[str] = []
        self._size = 0  # characters in _lines
        self._movetext = False
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
            is_tag = bool(_TAG_LINE.match(line))
            if self._skipping:
                if not is_tag:
                    continue
                self._skipping = False
            if is_tag and self._movetext:
                out.append(self._take())
            if not line.strip():
                if self._movetext and is_terminated("\n".join(self._lines)):
                    out.append(self._take())
                    continue
            elif not is_tag and not line.lstrip().startswith("%"):
                self._movetext = True
            self._lines.append(line)
            self._size += len(line) + 1
            self._check_size()
        self._check_size()
        return [c for c in out if c.strip()]

    def _check_size(self) -> None:
        if self.max_game is not None and self._size + self._partial > self.max_game:
            self.overflows += 1
            self.reset()
            self._skipping = True

    def close(self) -> list[str]:
        """End of stream: the buffered game if it is whole."""
        if self._pieces:
            self.feed("\n")
        chunk = self._take()
        return [chunk] if chunk.strip() and self._movetext_done(chunk) else []

    def reset(self) -> None:
        """Drop a partial game (the connection broke)."""
        self._pieces, self._partial, self._lines, self._size, self._movetext = [], 0, [], 0, False
        self._skipping = False

    @staticmethod
    def _movetext_done(chunk: str) -> bool:
        return is_terminated(chunk)

    def _take(self) -> str:
        chunk = "\n".join(self._lines) + "\n"
        self._lines, self._size, self._movetext = [], 0, False
        return chunk
