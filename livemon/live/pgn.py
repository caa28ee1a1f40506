"""Reading PGN as users have it: multi-game files, broken files, files without blank lines.

A plain reader stops at the first bad game or merges games that are not separated
by a blank line. :func:`read_games` splits the text into one chunk per game first
(a tag-pair line that follows move text starts a new game), parses each chunk on
its own with python-chess, and reports each bad game as a :class:`BadGame` with
one clear line, so that the other games are still read.

>>> text = '[White "A"]\\n[Black "B"]\\n\\n1. e4 e5 1-0\\n[White "C"]\\n[Black "D"]\\n\\n1. d4 Ke4 0-1\\n'
>>> [type(g).__name__ for g in read_games(text)]
['GoodGame', 'BadGame']
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Iterator

import chess
import chess.pgn

_TAG_LINE = re.compile(r'^\s*\[\s*[A-Za-z0-9_]+\s+"(?:[^"\\]|\\.)*"\s*\]\s*$')


@dataclass
class GoodGame:
    """A game that parsed with all its moves legal."""

    game: chess.pgn.Game
    index: int  # 1-based position of the game in its source
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return game_label(self.game, self.index, self.source)


@dataclass
class BadGame:
    """A game that could not be read; ``error`` is one human-readable line."""

    index: int
    source: str
    error: str
    game: chess.pgn.Game | None = None  # what was readable, if anything


def game_label(game: chess.pgn.Game, index: int, source: str = "") -> str:
    """A short name for messages: ``file.pgn game 3 (White - Black, Round)``."""
    h = game.headers
    where = f"{source} game {index}" if source else f"game {index}"
    return f"{where} ({h.get('White', '?')} - {h.get('Black', '?')}, round {h.get('Round', '?')})"


def split_games(text: str) -> Iterator[tuple[str, bool]]:
    """Split PGN text into per-game chunks.

    Yields ``(chunk, separated)``; ``separated`` is False when the game was not
    preceded by a blank line (the chess.com export bug).
    """
    chunk: list[str] = []
    in_movetext = False
    last_blank = True
    separated = True
    for line in text.splitlines():
        is_tag = bool(_TAG_LINE.match(line))
        if is_tag and in_movetext:
            yield "\n".join(chunk) + "\n", separated
            chunk, in_movetext = [], False
            separated = last_blank
        stripped = line.strip()
        if stripped and not is_tag and not stripped.startswith("%"):
            in_movetext = True
        last_blank = not stripped
        chunk.append(line)
    if any(s.strip() for s in chunk):
        yield "\n".join(chunk) + "\n", separated


class _QuietGameBuilder(chess.pgn.GameBuilder):
    """Collects parse errors on the game instead of logging them (we report them ourselves)."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def parse_game(chunk: str, index: int = 1, source: str = "") -> GoodGame | BadGame:
    """Parse one game's PGN text strictly: any illegal or unreadable move makes it bad."""
    try:
        game = chess.pgn.read_game(io.StringIO(chunk), Visitor=_QuietGameBuilder)
    except Exception as exc:  # python-chess raises only on truly broken input
        return BadGame(index, source, f"{source} game {index}: unreadable PGN ({exc})")
    if game is None:
        return BadGame(index, source, f"{source} game {index}: no game found")
    if game.errors:
        err = game.errors[0]
        return BadGame(index, source, f"{game_label(game, index, source)}: {err}", game)
    return GoodGame(game, index, source)


def read_games(text: str, source: str = "") -> Iterator[GoodGame | BadGame]:
    """Every game of a PGN text, good or bad, in order."""
    for index, (chunk, separated) in enumerate(split_games(text), start=1):
        parsed = parse_game(chunk, index, source)
        if isinstance(parsed, GoodGame) and not separated:
            parsed.warnings.append(
                f"{parsed.label}: not separated from the previous game by a blank line; read anyway"
            )
        yield parsed


def _elo(value: str | None) -> int | None:
    try:
        elo = int(value or "")
    except ValueError:
        return None
    return elo if elo > 0 else None


def game_info(headers: chess.pgn.Headers, game_id: str) -> "GameInfo":
    """The :class:`~livemon.live.messages.GameInfo` of a game's tags (``?`` Elo → None)."""
    from livemon.live.messages import GameInfo

    return GameInfo(
        game_id=game_id,
        white=headers.get("White", "?"),
        black=headers.get("Black", "?"),
        white_elo=_elo(headers.get("WhiteElo")),
        black_elo=_elo(headers.get("BlackElo")),
        event=headers.get("Event", "?"),
        round=headers.get("Round", "?"),
        date=headers.get("UTCDate", headers.get("Date", "?")),
        site=headers.get("Site", "?"),
    )
