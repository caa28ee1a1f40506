"""Game results from files, for the TTT fit: PGN headers or a CSV table.

Only what a rating fit needs is read: when (:func:`~livemon.live.pgn.game_date`:
``Date``, else ``UTCDate``), who had White and Black, and the result. PGN is
read header-only by :func:`livemon.live.pgn.headers_of`, which starts a new game
at any tag line following move text, so files whose games are not separated by
blank lines (chess.com exports) are read right; ratings and results are read by
the same rules as live (:func:`~livemon.live.pgn.rating`,
:func:`~livemon.live.pgn.parse_result`), the ratings put on today's FIDE scale by
the game's date (:func:`~livemon.live.pgn.scaled_ratings`; what it assumed, one
line each in ``notes``).
CSV has the header ``time,white,black,result`` with results in PGN notation.
Bad games or rows become one error line naming the file and line; unfinished
games (``*``) are counted, not fitted.

>>> report = read_results_text('time,white,black,result\\n1,a,b,1-0\\n2,b,a,*\\n3,a,b,2-0\\n', "t.csv")
>>> [(r.time, r.white, r.black, r.score) for r in report.results], report.unfinished
([(1.0, 'a', 'b', 1.0)], 1)
>>> report.errors
["t.csv line 4: result '2-0' is not 1-0, 0-1, 1/2-1/2 or *"]
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from livemon.live.pgn import game_date, headers_of, parse_result, pgn_date, scaled_ratings, white_score

__all__ = ["ResultsReport", "ScoredGame", "pgn_date", "read_csv_results", "read_pgn_results", "read_results",
           "read_results_text"]


@dataclass(frozen=True)
class ScoredGame:
    """One finished game: time as given (a number or an ISO date string) and White's score; the ratings on
    today's FIDE scale."""

    time: float | str
    white: str
    black: str
    score: float
    source: str = ""
    line: int = 0
    white_elo: int | None = None
    black_elo: int | None = None


@dataclass
class ResultsReport:
    """What a file gave: finished games, error lines, and the count of unfinished games."""

    results: list[ScoredGame] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    unfinished: int = 0
    notes: list[str] = field(default_factory=list)
    """What reading the rating tags assumed (no date, under the floor...): one line each, the game still read."""

    def extend(self, other: "ResultsReport") -> None:
        self.results.extend(other.results)
        self.errors.extend(other.errors)
        self.unfinished += other.unfinished
        self.notes.extend(other.notes)


def read_results(path: str | Path) -> ResultsReport:
    """Results of one file (``.csv`` as CSV, anything else as PGN); unreadable file → one error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        return ResultsReport(errors=[f"{path}: cannot read ({exc.strerror or exc})"])
    return read_results_text(text, str(path))


def read_results_text(text: str, source: str) -> ResultsReport:
    """Results of a text; CSV when ``source`` ends with ``.csv``, else PGN."""
    if source.lower().endswith(".csv"):
        return read_csv_results(text, source)
    return read_pgn_results(text, source)


def read_pgn_results(text: str, source: str) -> ResultsReport:
    """Results from PGN headers: Date (or UTCDate when Date is unknown), White, Black, Result."""
    report = ResultsReport()
    for line, tags in headers_of(text):
        where = f"{source} line {line}"
        result = tags.get("Result", "")
        score = white_score(result)
        if parse_result(result) == "*":
            report.unfinished += 1
            continue
        if score is None:
            report.errors.append(f"{where}: result {result!r} is not 1-0, 0-1, 1/2-1/2 or *")
            continue
        white, black = tags.get("White", "").strip(), tags.get("Black", "").strip()
        if not white or not black or white == "?" or black == "?":
            report.errors.append(f"{where}: missing White or Black")
            continue
        if white == black:
            report.errors.append(f"{where}: {white} plays themselves")
            continue
        when = pgn_date(game_date(tags))
        if when is None:
            report.errors.append(f"{where}: no Date or UTCDate")
            continue
        (white_elo, black_elo), _, note = scaled_ratings(tags)
        if note:
            report.notes.append(f"{where}: {note}")
        report.results.append(ScoredGame(when, white, black, score, source, line, white_elo, black_elo))
    return report


def _csv_time(value: str) -> float | str:
    value = value.strip()
    try:
        number = float(value)
    except ValueError:
        iso = pgn_date(value)
        if iso is None:
            raise ValueError(f"time {value!r} is neither a number nor an ISO date") from None
        return iso
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"time {value!r} is not finite")
    return number


def read_csv_results(text: str, source: str) -> ResultsReport:
    """Results from CSV with header ``time,white,black,result`` (extra columns ignored)."""
    report = ResultsReport()
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    columns = [h.strip().lower() for h in header] if header else []
    missing = [c for c in ("time", "white", "black", "result") if c not in columns]
    if missing:
        report.errors.append(f"{source} line 1: header lacks {', '.join(missing)} (need time,white,black,result)")
        return report
    at = {c: columns.index(c) for c in ("time", "white", "black", "result")}
    for row in reader:
        where = f"{source} line {reader.line_num}"
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(columns):
            report.errors.append(f"{where}: {len(row)} fields, expected {len(columns)}")
            continue
        result = row[at["result"]].strip()
        score = white_score(result)
        if parse_result(result) == "*":
            report.unfinished += 1
            continue
        if score is None:
            report.errors.append(f"{where}: result {result!r} is not 1-0, 0-1, 1/2-1/2 or *")
            continue
        white, black = row[at["white"]].strip(), row[at["black"]].strip()
        if not white or not black:
            report.errors.append(f"{where}: empty white or black")
            continue
        if white == black:
            report.errors.append(f"{where}: {white} plays themselves")
            continue
        try:
            when = _csv_time(row[at["time"]])
        except ValueError as exc:
            report.errors.append(f"{where}: {exc}")
            continue
        report.results.append(ScoredGame(when, white, black, score, source, reader.line_num))
    return report
