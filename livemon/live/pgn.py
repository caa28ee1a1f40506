"""Reading PGN as users have it: multi-game files, broken files, files without blank lines.

A plain reader stops at the first bad game or merges games that are not separated
by a blank line. :func:`split_games` splits the text into one chunk per game first
(a tag-pair line that follows move text starts a new game), so that each game is
parsed on its own (:func:`livemon.live.tracker.parse_chunk`, with
:class:`QuietGameBuilder`) and a bad game costs one clear line, not the file.

It is also the one place that reads a game's tags, for the live feeds and the
batch commands alike: :func:`chunk_headers` (python-chess's
``HeadersBuilder``), :func:`rating` (the one "is rated" rule), :func:`game_date`
(the one date precedence), :func:`parse_result` / :func:`white_score` (the one
result parser) and :func:`game_info`.

>>> text = '[White "A"]\\n[Black "B"]\\n\\n1. e4 e5 1-0\\n[White "C"]\\n[Black "D"]\\n\\n1. d4 Ke4 0-1\\n'
>>> [separated for _, separated in split_games(text)]
[True, False]
"""

from __future__ import annotations

import io
import re
from typing import Iterator, Mapping

import chess
import chess.pgn

from livemon.live.messages import GameInfo

_TAG_LINE = re.compile(r'^\s*\[\s*[A-Za-z0-9_]+\s+"(?:[^"\\]|\\.)*"\s*\]\s*$')

FINAL_RESULTS = ("1-0", "0-1", "1/2-1/2")
"""The results of a finished game, in PGN notation."""
RESULT_TOKENS = FINAL_RESULTS + ("*",)
"""Every valid ``Result`` tag: a finished game's, or ``*`` (ongoing, unknown, abandoned)."""
_RESULT_SPELLINGS = {"½-½": "1/2-1/2"}
_WHITE_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_DATE = re.compile(r"^(\d{4})[.\-/](\d{2}|\?\?)[.\-/](\d{2}|\?\?)")


def split_games(text: str) -> Iterator[tuple[str, bool]]:
    """Split PGN text into per-game chunks.

    Yields ``(chunk, separated)``; ``separated`` is False when the game was not
    preceded by a blank line (the chess.com export bug).
    """
    for _, chunk, separated in numbered_games(text):
        yield chunk, separated


def numbered_games(text: str) -> Iterator[tuple[int, str, bool]]:
    """:func:`split_games` with the number of each chunk's first non-blank line: ``(line, chunk, separated)``."""
    chunk: list[str] = []
    first = 0
    in_movetext = False
    last_blank = True
    separated = True
    for number, line in enumerate(text.splitlines(), start=1):
        is_tag = bool(_TAG_LINE.match(line))
        if is_tag and in_movetext:
            yield first, "\n".join(chunk) + "\n", separated
            chunk, in_movetext, first = [], False, 0
            separated = last_blank
        stripped = line.strip()
        if stripped and not first:
            first = number
        if stripped and not is_tag and not stripped.startswith("%"):
            in_movetext = True
        last_blank = not stripped
        chunk.append(line)
    if any(s.strip() for s in chunk):
        yield first, "\n".join(chunk) + "\n", separated


def unescape_tag(value: str) -> str:
    r"""A tag value with the PGN escapes ``\"`` and ``\\`` undone (python-chess keeps them).

    >>> unescape_tag(r'A \"B\" C:\\x')
    'A "B" C:\\x'
    """
    if "\\" not in value:
        return value
    return re.sub(r'\\(["\\])', r"\1", value)


class QuietGameBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, tags unescaped, parse errors collected on the game instead of logged."""

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, unescape_tag(tagvalue))

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


class _TagsBuilder(chess.pgn.HeadersBuilder):  # type: ignore[type-arg]
    """python-chess's headers builder (move text skipped), tags unescaped."""

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        super().visit_header(tagname, unescape_tag(tagvalue))


def parse_result(text: str | None) -> str | None:
    """A result string in PGN notation (``1-0``, ``0-1``, ``1/2-1/2``, ``*``), None when it is none of them.

    Surrounding space is ignored and ``½-½`` read as ``1/2-1/2``.

    >>> parse_result(" 1/2-1/2 "), parse_result("½-½"), parse_result("*"), parse_result("2-0"), parse_result(None)
    ('1/2-1/2', '1/2-1/2', '*', None, None)
    """
    if text is None:
        return None
    value = text.strip()
    value = _RESULT_SPELLINGS.get(value, value)
    return value if value in RESULT_TOKENS else None


def white_score(result: str | None) -> float | None:
    """White's score of a finished game's result (1, 0 or 0.5), None when it is not finished or not a result.

    >>> white_score("1-0"), white_score("½-½"), white_score("*"), white_score("1-1")
    (1.0, 0.5, None, None)
    """
    return _WHITE_SCORES.get(parse_result(result) or "")


def rating(value: str | None) -> int | None:
    """The one "is rated" rule: a rating tag's value as a positive integer, else None (unrated).

    ``""``, ``"-"``, ``"?"``, ``"0"`` (what many broadcasts write for an
    unrated player) and anything not a positive whole number mean unrated:
    such a player must not be screened or given a rating prior as if rated 0.

    >>> [rating(v) for v in ("2750", " 2750 ", "0", "-", "", "?", None, "-5", "25x")]
    [2750, 2750, None, None, None, None, None, None, None]
    """
    try:
        elo = int((value or "").strip())
    except ValueError:
        return None
    return elo if elo > 0 else None


def pgn_date(value: str | None) -> str | None:
    """ISO date of a PGN date; unknown month or day → 01; unknown year (or no date) → None.

    >>> pgn_date("2011.12.03"), pgn_date("1972.??.??"), pgn_date("????.??.??"), pgn_date(None)
    ('2011-12-03', '1972-01-01', None, None)
    """
    m = _DATE.match((value or "").strip())
    if not m:
        return None
    year, month, day = m.groups()
    month = "01" if month == "??" else month
    day = "01" if day == "??" else day
    return f"{year}-{month}-{day}"


def _known(date: str | None) -> bool:
    return bool(date) and "?" not in date  # type: ignore[operator]


def game_date(headers: Mapping[str, str]) -> str:
    """The one date precedence, live and batch: ``Date`` when known, else ``UTCDate`` when known, else the partial one.

    ``Date`` is the Seven Tag Roster's date (local, where the game was
    played: what an event's calendar follows); ``UTCDate`` (lichess and
    other broadcasts) stands in when ``Date`` is missing or partly unknown.

    >>> game_date({"Date": "2024.11.25", "UTCDate": "2024.11.26"})
    '2024.11.25'
    >>> game_date({"Date": "2024.??.??", "UTCDate": "2024.11.26"}), game_date({"Date": "2024.??.??"}), game_date({})
    ('2024.11.26', '2024.??.??', '?')
    """
    date, utc = headers.get("Date"), headers.get("UTCDate")
    if _known(date):
        return date  # type: ignore[return-value]
    if _known(utc):
        return utc  # type: ignore[return-value]
    return date or utc or "?"


def chunk_headers(chunk: str) -> chess.pgn.Headers:
    """The tags of one game's PGN text, read with python-chess's ``HeadersBuilder`` (move text skipped).

    An empty or unreadable chunk gives empty headers (python-chess's defaults
    are not filled in: a tag that is missing stays missing).

    >>> h = chunk_headers('[Event "Open"]\\n[White "A \\\\"B\\\\" C"]\\n[WhiteElo "0"]\\n\\n1. e4 *\\n')
    >>> h["White"], rating(h.get("WhiteElo")), "Black" in h
    ('A "B" C', None, False)
    """
    try:
        headers = chess.pgn.read_game(io.StringIO(_tag_block(chunk)), Visitor=_TagsBuilder)
    except Exception:  # python-chess raises only on truly broken input
        return chess.pgn.Headers({})
    return headers if headers is not None else chess.pgn.Headers({})


def _tag_block(chunk: str) -> str:
    """The leading tag-pair section of a chunk: python-chess need not scan the move text it would skip."""
    end = 0
    for line in chunk.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith("%") and not _TAG_LINE.match(line):
            break
        end += len(line)
    return chunk[:end]


def headers_of(text: str) -> Iterator[tuple[int, chess.pgn.Headers]]:
    """(first line number, tags) of every game of a PGN text, split as :func:`split_games` splits.

    >>> [(n, h.get("White")) for n, h in headers_of('[White "A"]\\n1. e4 *\\n[White "B"]\\n1. d4 *\\n')]
    [(1, 'A'), (3, 'B')]
    """
    for line, chunk, _ in numbered_games(text):
        yield line, chunk_headers(chunk)


def game_info(headers: Mapping[str, str], game_id: str) -> GameInfo:
    """The :class:`~livemon.live.messages.GameInfo` of a game's tags: unrated → None (:func:`rating`), :func:`game_date`.

    >>> info = game_info({"White": "A", "WhiteElo": "0", "BlackElo": "2501", "UTCDate": "2024.01.02"}, "g")
    >>> info.white_elo, info.black_elo, info.date, info.black
    (None, 2501, '2024.01.02', '?')
    """
    return GameInfo(
        game_id=game_id,
        white=headers.get("White", "?"),
        black=headers.get("Black", "?"),
        white_elo=rating(headers.get("WhiteElo")),
        black_elo=rating(headers.get("BlackElo")),
        event=headers.get("Event", "?"),
        round=headers.get("Round", "?"),
        date=game_date(headers),
        site=headers.get("Site", "?"),
        white_title=_short_tag(headers.get("WhiteTitle")),
        black_title=_short_tag(headers.get("BlackTitle")),
        white_fed=_short_tag(headers.get("WhiteFed")),
        black_fed=_short_tag(headers.get("BlackFed")),
    )


def _short_tag(value: str | None) -> str:
    """A title or federation tag as shown beside a name: "" for none, "-" or "?", at most 8 characters.

    >>> _short_tag("GM"), _short_tag("-"), _short_tag(None), _short_tag(" NOR ")
    ('GM', '', '', 'NOR')
    """
    v = (value or "").strip()
    return "" if v in ("", "-", "?") else v[:8]
