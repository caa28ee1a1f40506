"""A game's tags as users have them: escaped, partly unknown, unrated, on older rating scales.

The text is split into games by :mod:`livemon.live.splitter` (``split_games`` is here too, for the
callers that read tags) and each game's moves are read by :mod:`livemon.live.reader`. This module is
the one place that reads a game's tags, for the live feeds and the
batch commands alike: :func:`chunk_headers` (python-chess's
``HeadersBuilder``), :func:`rating` (the one "is rated" rule), :func:`game_date`
(the one date precedence), :func:`parse_result` / :func:`white_score` (the one
result parser) and :func:`game_info`.
"""

from __future__ import annotations

import datetime
import io
import re
from typing import Iterator, Mapping

import chess
import chess.pgn

from livemon.live.messages import GameInfo
from livemon.live.movetext import TAG_LINE
from livemon.live.splitter import numbered_games as numbered_games
from livemon.live.splitter import split_games as split_games
from livemon.rating.scale import FIRST_LIST, read_tag


FINAL_RESULTS = ("1-0", "0-1", "1/2-1/2")
"""The results of a finished game, in PGN notation."""
RESULT_TOKENS = FINAL_RESULTS + ("*",)
"""Every valid ``Result`` tag: a finished game's, or ``*`` (ongoing, unknown, abandoned)."""
_RESULT_SPELLINGS = {"½-½": "1/2-1/2"}
_WHITE_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
_DATE = re.compile(r"^(\d{4})[.\-/](\d{2}|\?\?)[.\-/](\d{2}|\?\?)")


def unescape_tag(value: str) -> str:
    r"""A tag value with the PGN escapes ``\"`` and ``\\`` undone (python-chess keeps them).

    >>> unescape_tag(r'A \"B\" C:\\x')
    'A "B" C:\\x'
    """
    if "\\" not in value:
        return value
    return re.sub(r'\\(["\\])', r"\1", value)


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
        if stripped and not stripped.startswith("%") and not TAG_LINE.match(line):
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


def rating_date(headers: Mapping[str, str]) -> tuple[datetime.date | None, str]:
    """The date a game's rating tags are read with: ``Date``, else ``UTCDate``, else ``EventDate`` (the
    event's); and which tag gave it ("" when none did). A date known only to the year stands for that year
    except 2024, the year of the compression (1 March 2024): a 2024 without its month says nothing.

    >>> rating_date({"Date": "2023.??.??", "EventDate": "2023.05.01"}), rating_date({"EventDate": "2022.07.01"})
    ((datetime.date(2023, 1, 1), 'Date'), (datetime.date(2022, 7, 1), 'EventDate'))
    >>> rating_date({"Date": "2024.??.??"}), rating_date({"Date": "2024.03.??"}), rating_date({})
    ((None, ''), (datetime.date(2024, 3, 1), 'Date'), (None, ''))
    """
    for tag in ("Date", "UTCDate", "EventDate"):
        m = _DATE.match((headers.get(tag) or "").strip())
        if not m:
            continue
        year, month, day = m.groups()
        if year == "2024" and month == "??":
            continue
        try:
            return datetime.date(int(year), 1 if month == "??" else int(month), 1 if day == "??" else int(day)), tag
        except ValueError:
            continue
    return None, ""


def scaled_ratings(headers: Mapping[str, str]) -> tuple[tuple[int | None, int | None], tuple[int | None, int | None], str]:
    """A game's ``(WhiteElo, BlackElo)`` on today's FIDE scale, as published, and one line on what reading
    them assumed ("" when nothing): :func:`livemon.rating.scale.read_tag` with :func:`rating_date`.

    >>> scaled_ratings({"WhiteElo": "1400", "BlackElo": "2501", "Date": "2023.05.01"})
    ((1640, 2501), (1400, 2501), '')
    >>> scaled_ratings({"WhiteElo": "1400"})[2]
    "WhiteElo 1400: no game date, read as on today's FIDE scale"
    """
    played, _ = rating_date(headers)
    published = (rating(headers.get("WhiteElo")), rating(headers.get("BlackElo")))
    current: list[int | None] = []
    notes: list[str] = []
    for tag, value in zip(("WhiteElo", "BlackElo"), published):
        if value is None:
            current.append(None)
            continue
        scaled, note = read_tag(value, played, tag)
        current.append(scaled)
        if note:
            notes.append(note)
    return (current[0], current[1]), published, "; ".join(notes)


def game_info(headers: Mapping[str, str], game_id: str) -> GameInfo:
    """The :class:`~livemon.live.messages.GameInfo` of a game's tags: unrated → None (:func:`rating`), :func:`game_date`;
    the ratings on today's FIDE scale by the game's date (:func:`scaled_ratings`), the tags kept as published.

    >>> info = game_info({"White": "A", "WhiteElo": "0", "BlackElo": "2501", "UTCDate": "2024.01.02"}, "g")
    >>> info.white_elo, info.black_elo, info.date, info.black
    (None, 2501, '2024.01.02', '?')
    >>> info = game_info({"WhiteElo": "1400", "BlackElo": "1900", "Date": "2023.10.02"}, "g")
    >>> info.white_elo, info.white_published, info.black_elo, info.black_published, info.rating_scale
    (1640, 1400, 1940, 1900, 'today')
    >>> info = game_info({"WhiteElo": "1400", "EventDate": "2023.10.01"}, "g")  # no Date: the event's dates the tags
    >>> info.white_elo, info.rating_scale, info.rating_date_source, info.rating_note
    (1640, 'today', 'EventDate', '')
    >>> info = game_info({"WhiteElo": "1400"}, "g")  # no date at all: read as on today's scale, and said
    >>> info.white_elo, info.rating_scale, info.rating_date_source, info.rating_note
    (1400, 'as read', '', "WhiteElo 1400: no game date, read as on today's FIDE scale")
    """
    (white_elo, black_elo), (white_tag, black_tag), note = scaled_ratings(headers)
    played, source = rating_date(headers)
    return GameInfo(
        game_id=game_id,
        white=headers.get("White", "?"),
        black=headers.get("Black", "?"),
        white_elo=white_elo,
        black_elo=black_elo,
        white_tag=white_tag,
        black_tag=black_tag,
        rating_note=note,
        rating_scale="today" if played is not None and played >= FIRST_LIST else "as read",
        rating_date_source=source,
        event=headers.get("Event", "?"),
        round=headers.get("Round", "?"),
        date=game_date(headers),
        site=headers.get("Site", "?"),
        white_title=short_tag(headers.get("WhiteTitle")),
        black_title=short_tag(headers.get("BlackTitle")),
        white_fed=short_tag(headers.get("WhiteFed")),
        black_fed=short_tag(headers.get("BlackFed")),
        white_fide_id=fide_id(headers.get("WhiteFideId")),
        black_fide_id=fide_id(headers.get("BlackFideId")),
        time_control=short_tag(headers.get("TimeControl"), 40),
    )


def fide_id(value: str | None) -> str:
    """A FideId tag as an id: its digits, "" for none ("0", "-", "?", or anything not a number).

    >>> fide_id("1503014"), fide_id(" 25006479 "), fide_id("0"), fide_id("-"), fide_id(None), fide_id("12a")
    ('1503014', '25006479', '', '', '', '')
    """
    v = (value or "").strip()
    return v if v.isdigit() and int(v) > 0 else ""


def short_tag(value: str | None, most: int = 8) -> str:
    """A title, federation or time control tag as kept: "" for none, "-" or "?", at most ``most`` characters.

    >>> short_tag("GM"), short_tag("-"), short_tag(None), short_tag(" NOR "), short_tag("40/5400+30:1800+30", 40)
    ('GM', '', '', 'NOR', '40/5400+30:1800+30')
    """
    v = (value or "").strip()
    return "" if v in ("", "-", "?") else v[:most]
