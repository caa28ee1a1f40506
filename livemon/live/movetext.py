"""Reading a game's movetext without a board: is it finished, which SAN tokens, and the plain tail a live
file appends to.

A live PGN file or HTTP round grows by appended moves; re-parsing every game at every read would cost
a full python-chess parse per game per poll. These scanners read the text the way python-chess does
(comments, clocks, evaluations) for the common case of plain movetext, and say "not sure" (None) for
anything else, so that the tracker falls back to the full parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import chess
import chess.engine
import chess.pgn

from livemon.live.pgn import _TAG_LINE, split_games
from livemon.rating.evaluation import score_cp

_TERMINATED = re.compile(r"(?:^|\s)(?:1-0|0-1|1/2-1/2|\*)\s*$")
_COMMENT = re.compile(r"\{[^}]*\}?|;[^\n]*", re.S)


def is_terminated(chunk: str) -> bool:
    """True when a game's movetext ends in a result or ``*`` (ignoring comments)."""
    lines = [ln for ln in chunk.splitlines() if not _TAG_LINE.match(ln)]
    text = _COMMENT.sub(" ", "\n".join(lines))
    return bool(_TERMINATED.search(text))


def mainline_sans(chunk: str) -> list[str]:
    """The SAN tokens of the main line, read without a board (for the DGT rule)."""
    lines = [ln for ln in chunk.splitlines() if not _TAG_LINE.match(ln) and not ln.startswith("%")]
    text = _COMMENT.sub(" ", "\n".join(lines))
    depth = 0
    sans: list[str] = []
    for m in chess.pgn.MOVETEXT_REGEX.finditer(text):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and m.group(1):
            sans.append(tok)
    return sans


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
        if stripped and not stripped.startswith("%") and not _TAG_LINE.match(line):
            break
        end = stop
    return chunk[:end]


def text_is_cut(text: str) -> bool:
    """True when the last game of a PGN text has no result or ``*`` (maybe half-written)."""
    chunks = list(split_games(text))
    return bool(chunks) and not is_terminated(chunks[-1][0])


def balanced(chunk: str) -> bool:
    body = "\n".join(ln for ln in chunk.splitlines() if not _TAG_LINE.match(ln))
    return body.count("{") == body.count("}")


@dataclass(frozen=True)
class Tail:
    """The last chunk applied to a game, cut before its final ``*`` (``core``), and its plies."""

    core: str
    plies: int


_BAD_LINE = re.compile(r"\n(?:[^\S\n]*(?:\n|$)|[%;])")
"""A blank line (python-chess ends the game there) or a ``%``/``;`` line (skipped whole)."""
_GAP = re.compile(r"[\s\d.+#]*")
"""What python-chess skips between tokens in a plain game: whitespace, move numbers, check and mate signs."""
_NAGS = frozenset(("?", "??", "!", "!!", "!?", "?!"))


def scan_moves(text: str) -> tuple[list[tuple[str, str]], int] | None:
    r"""The SAN tokens of plain movetext ending in ``*``, each with its comment as python-chess reads it
    (comments after it joined by a space), and the end of the ``*``; None if the text is not plain.

    Plain: move numbers, SAN, NAGs and comments closed on their own line, then ``*`` and only
    whitespace after it; no variation, result, ``;`` or ``%`` line, blank line, or anything else
    python-chess would skip over. Tokens are found with python-chess's own ``MOVETEXT_REGEX``.

    >>> scan_moves(" 12. Nf3 { [%clk 0:01:00] } {x} 12... e5 $1 *\n")
    ([('Nf3', '[%clk 0:01:00] x'), ('e5', '')], 45)
    >>> scan_moves(" 12. Nf3 (12. d4) *"), scan_moves(" 12. Nf3 1-0"), scan_moves(" Nf3 {a\nb} *")
    (None, None, None)
    """
    star = text.rfind("*")
    if star < 0 or text[star + 1:].strip() or _BAD_LINE.search(text, 0, star):
        return None
    moves: list[tuple[str, str]] = []
    pos = 0
    while True:
        m = chess.pgn.MOVETEXT_REGEX.search(text, pos, star + 1)
        if m is None or not _GAP.fullmatch(text, pos, m.start()):
            return None
        token = m.group(0)
        if m.start() == star:
            return moves, star + 1
        if m.group(1):
            moves.append((token, ""))
            pos = m.end()
        elif token[0] == "{":
            close = text.find("}", m.start(), star)
            if close < 0 or "\n" in text[m.start():close]:
                return None
            line = text[m.start() + (2 if token.startswith("{ ") else 1): close + 1]  # as read_game cuts it
            close_index = line.find("}")
            end_index = close_index - 1 if close_index > 0 and line[close_index - 1] == " " else close_index
            comment = line[:end_index]
            if moves:  # a comment before the first new move belongs to a ply already sent: no message changes
                san, before = moves[-1]
                moves[-1] = (san, " ".join(filter(None, (before, comment))))
            pos = close + 1
        elif token[0] == "$" or token in _NAGS:
            pos = m.end()
        else:
            return None  # a variation, a result, a ';' comment


def plain_core(chunk: str, plies: int) -> str | None:
    """A plain game's text (see :func:`scan_moves`) cut before its final ``*``; None if it is not one.

    The tags must be one block of tag lines at the top, then at most one blank line, then the moves
    (``plies`` SAN tokens: those python-chess read).
    """
    lines = chunk.split("\n")
    i = 0
    while i < len(lines) and lines[i].startswith("[") and _TAG_LINE.match(lines[i]):
        i += 1
    if i == 0:
        return None
    offset = sum(len(ln) + 1 for ln in lines[:i])
    if i < len(lines) and not lines[i].strip():
        offset += len(lines[i]) + 1
    if offset > len(chunk) or chunk[offset:offset + 1] in ("%", ";"):
        return None
    scanned = scan_moves("\n" + chunk[offset:])
    if scanned is None or len(scanned[0]) != plies:
        return None
    return chunk[: offset + scanned[1] - 2].rstrip()


def comment_seconds(regex: re.Pattern[str], comment: str) -> float | None:
    """``[%clk]`` / ``[%emt]`` in a comment, as python-chess's ``GameNode.clock``/``emt`` read it."""
    m = regex.search(comment)
    if m is None:
        return None
    return int(m.group("hours")) * 3600 + int(m.group("minutes")) * 60 + float(m.group("seconds"))


def comment_mate(comment: str) -> int | None:
    """The distance to mate of an ``[%eval #n]`` in a comment (moves, White's view), for display; None when the
    comment has no mate.

    >>> comment_mate("[%eval #-2] [%clk 0:01:00]"), comment_mate("[%eval 0.35]"), comment_mate("")
    (-2, None, None)
    """
    m = chess.pgn.EVAL_REGEX.search(comment)
    return int(m.group("mate")) if m is not None and m.group("mate") else None


def comment_eval(comment: str, turn: chess.Color) -> int | None:
    """``[%eval]`` in a comment in White-POV centipawns, as :func:`eval_cp` reads a node's (``GameNode.eval``).

    ``turn``: the side to move after the move the comment follows.
    """
    m = chess.pgn.EVAL_REGEX.search(comment)
    if m is None:
        return None
    score: chess.engine.Score
    if m.group("mate"):
        mate = int(m.group("mate"))
        score = chess.engine.Mate(mate)
        if mate == 0:  # python-chess: the side to move after mate is the side mated
            return score_cp(chess.engine.PovScore(score, turn))
    else:
        score = chess.engine.Cp(round(float(m.group("cp")) * 100))
    return score_cp(chess.engine.PovScore(score if turn else -score, turn))
