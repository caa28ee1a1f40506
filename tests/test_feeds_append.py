"""The feeds' append-only fast path (GameTracker: a game that only gained moves is read by its new SANs only)
gives exactly the messages of the full parse, on real games fed move by move and under random edits."""

from __future__ import annotations

import functools
import random

import chess
import chess.pgn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from livemon.io.feeds import GameTracker
from livemon.live.messages import FeedError, GameResult, GameRollback, MoveEvent

from conftest import REAL

EVAL_CLK = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
CLK = "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
EVALS = ["0.31", "-1.5", "12", "#3", "#-2", "#0", "-0.07"]
SPLIT = "zzsplitzz"


def real_games(name: str, n: int | None = None) -> list[chess.pgn.Game]:
    """The first ``n`` games of a real file that read without errors, from the start position, 10 plies or
    more (read once a file and count: the tests only read them; the random-edits test asks each example)."""
    return list(_real_games(name, n))


@functools.cache
def _real_games(name: str, n: int | None) -> tuple[chess.pgn.Game, ...]:
    out: list[chess.pgn.Game] = []
    with open(REAL / name, encoding="utf-8") as f:
        while (n is None or len(out) < n) and (g := chess.pgn.read_game(f)) is not None:
            if not g.errors and "FEN" not in g.headers and len(list(g.mainline_moves())) >= 10:
                out.append(g)
    return tuple(out)


def render(game: chess.pgn.Game, line: list[tuple[chess.Move, str]], result: str = "*", columns: int | None = 80,
           variation_at: int | None = None) -> str:
    """A game's PGN as a broadcast writes it: its tags with ``Result``, ``line`` (move, comment), then ``result``."""
    g = chess.pgn.Game()
    for k, v in game.headers.items():
        g.headers[k] = v
    g.headers["Result"] = result
    node: chess.pgn.GameNode = g
    for i, (move, comment) in enumerate(line):
        if variation_at == i:
            board = node.board()
            alt = next((m for m in board.legal_moves if m != move), None)
            if alt is not None:  # a forced move has no alternative to write
                node.add_variation(alt, comment="an alternative")
        node = node.add_main_variation(move, comment=comment)
    return g.accept(chess.pgn.StringExporter(columns=columns)) + "\n\n"


def pair() -> tuple[GameTracker, GameTracker]:
    return GameTracker("f"), GameTracker("f", append_only=False)


def test_real_games_move_by_move_give_the_full_parse_messages() -> None:
    """Ten real broadcast games with clocks and evals, one multi-game text per move (an HTTP poll each)."""
    games = real_games(EVAL_CLK, 6) + real_games(CLK, 4)
    lines = [[(n.move, n.comment) for n in g.mainline()] for g in games]
    fast, full = pair()
    longest = max(len(ln) for ln in lines)
    moves = evals = clocks = 0
    rendered: dict[tuple[int, int], str] = {}  # a game that has stopped growing is written as it was at its end
    for ply in range(longest + 1):
        for k, ln in enumerate(lines):
            if (k, min(ply, len(ln))) not in rendered or ply == longest:
                rendered[k, min(ply, len(ln))] = render(games[k], ln[:ply], games[k].headers["Result"]
                                                        if ply == longest else "*")
        text = "".join(rendered[k, min(ply, len(ln))] for k, ln in enumerate(lines))
        a = fast.update_text(text, source="round.pgn", final=False, view="round.pgn")
        b = full.update_text(text, source="round.pgn", final=False, view="round.pgn")
        assert a == b, f"ply {ply}"
        for m in a:
            if isinstance(m, MoveEvent):
                moves += 1
                evals += m.eval_cp is not None
                clocks += m.clock is not None
    assert moves == sum(len(ln) for ln in lines)
    assert evals > 50 and clocks > 300  # the new moves' comments were read
    assert sum(isinstance(m, GameResult) for m in a) == 10
    assert fast.fast_applied > 0.8 * moves  # almost every changed game took the fast path...
    assert full.fast_applied == 0 and fast.parsed < full.parsed / 5  # ...and was not parsed whole
    for g in fast.game_ids():
        assert fast.moves(g) == full.moves(g) and fast.result(g) == full.result(g)


def test_a_stream_of_whole_games_gives_the_full_parse_messages() -> None:
    """The round stream's shape: one game's whole PGN per change (update_chunk), lichess style, no wrapping."""
    games = real_games(CLK, 5)
    fast, full = pair()
    for g in games:
        line = [(n.move, n.comment) for n in g.mainline()]
        for ply in range(len(line) + 1):
            chunk = render(g, line[:ply], g.headers["Result"] if ply == len(line) else "*", columns=None)
            assert fast.update_chunk(chunk, complete=None) == full.update_chunk(chunk, complete=None)
    assert fast.fast_applied >= sum(len(list(g.mainline_moves())) for g in games) - 2 * len(games)


def test_what_the_fast_path_leaves_to_the_full_parse() -> None:
    """A correction, a clock added to a sent ply, a variation, an illegal move, a result: the same messages."""
    g = real_games(EVAL_CLK, 1)[0]
    line = [(n.move, n.comment) for n in g.mainline()][:30]
    fast, full = pair()

    def both(text: str) -> list[object]:
        a, b = fast.update_chunk(text, complete=None), full.update_chunk(text, complete=None)
        assert a == b
        return a

    both(render(g, line[:20]))
    got = both(render(g, line[:21]))
    assert [type(m) for m in got] == [MoveEvent] and fast.fast_applied == 1
    board = chess.Board()
    for move, _ in line[:20]:
        board.push(move)
    other = next(m for m in board.legal_moves if m != line[20][0])
    got = both(render(g, line[:20] + [(other, "[%clk 0:10:00]")]))  # the last move corrected
    assert [type(m) for m in got] == [GameRollback, MoveEvent] and got[1].clock == 600.0  # type: ignore[attr-defined]
    got = both(render(g, line[:20] + [(other, "[%clk 0:09:59] [%eval 1.5]")]))  # a comment changed on a sent ply
    assert got == []
    both(render(g, line[:22], variation_at=21))  # new moves and a variation: parsed whole
    bad = render(g, line[:22]).replace(" *", " Qa1xa1 *")  # never legal (a king move here would be DGT's)
    got = both(bad)
    assert [type(m) for m in got] == [FeedError]
    got = both(render(g, line[:24], result="1-0"))
    assert [type(m) for m in got] == [MoveEvent, MoveEvent, GameResult]
    assert fast.moves(fast.game_ids()[0]) == full.moves(full.game_ids()[0])


def test_a_variation_appended_to_the_last_move_is_no_new_move() -> None:
    """Only an alternative to the last sent move is appended (``... 4. Qb3 { } ( 4. Ng5 ) *``): no message, as the
    full parse says, though the alternative's SAN is legal for the side to move after it."""
    fast, full = pair()
    head = '[White "A"]\n[Black "B"]\n[Result "*"]\n\n1. Nc3 Nf6 2. e3 { [%clk 0:10:00] }'
    assert sum(isinstance(m, MoveEvent) for m in fast.update_chunk(head + " *\n", complete=None)) == 3
    full.update_chunk(head + " *\n", complete=None)
    text = head + " ( 2. Ne4 { an alternative } ) *\n"  # 2. Ne4 is White's alternative; Black's Nf6-e4 is legal too
    assert fast.update_chunk(text, complete=None) == full.update_chunk(text, complete=None) == []
    assert fast.moves(fast.game_ids()[0]) == full.moves(full.game_ids()[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_give_the_full_parse_messages(data: st.DataObject) -> None:
    """Random live histories of a real game: moves added (1-3 at once), taken back, corrected, comments
    edited, variations, comments over two lines, illegal moves, cut texts (final=False), results."""
    games = real_games(EVAL_CLK, 8)
    g = games[data.draw(st.integers(0, len(games) - 1), label="game")]
    other = games[(games.index(g) + 1) % len(games)]
    source = [(n.move, n.comment) for n in g.mainline()]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    fast, full = pair()
    line: list[tuple[chess.Move, str]] = []
    result = "*"
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        op = data.draw(st.sampled_from(["add", "add", "add", "add", "takeback", "correct", "comment",
                                        "variation", "two-line", "two-comments", "illegal", "cut", "result"]), label="op")
        board = chess.Board()
        for move, _c in line:
            board.push(move)
        if board.is_game_over():
            op = "result"
        variation_at, extra = None, ""
        if op == "add":
            for _k in range(rng.randint(1, 3)):
                if board.is_game_over():
                    break
                n = len(line)
                move, comment = source[n] if n < len(source) and source[n][0] in board.legal_moves else (
                    rng.choice(list(board.legal_moves)), f"[%clk 0:{rng.randint(10, 59)}:00] [%eval {rng.choice(EVALS)}]")
                line.append((move, comment))
                board.push(move)
        elif op == "takeback" and line:
            del line[-rng.randint(1, min(2, len(line))):]
        elif op == "correct" and line:
            board.pop()
            line[-1] = (rng.choice(list(board.legal_moves)), "[%clk 0:01:02]")
        elif op == "comment" and line:
            line[-1] = (line[-1][0], line[-1][1] + " [%emt 0:00:07]")
        elif op == "variation" and len(line) > 1:
            variation_at = rng.randrange(1, len(line))
        elif op == "two-line" and not board.is_game_over():
            move = rng.choice(list(board.legal_moves))
            line.append((move, "a comment\nover two lines [%clk 0:05:00]"))
        elif op == "two-comments" and not board.is_game_over():  # python-chess joins them with a space
            move = rng.choice(list(board.legal_moves))
            line.append((move, f"[%emt 0:00:0{rng.randint(1, 9)}] {SPLIT} [%eval {rng.choice(EVALS)}] {SPLIT} "
                               f"[%clk 0:04:0{rng.randint(1, 9)}]"))
        elif op == "illegal":
            extra = rng.choice([" Kxh8 ", " Qa1xa1 ", " Ke1 Ke8 "])  # kings: maybe DGT's end-of-game sign
        elif op == "result":
            result = rng.choice(["1-0", "0-1", "1/2-1/2"])
        text = render(other, [(n.move, n.comment) for n in other.mainline()][:10]) + render(g, line, result, variation_at=variation_at)
        text = text.replace(f" {SPLIT} ", " } { ")
        if extra:
            text = text.replace(f" {result}\n", f"{extra}{result}\n")
        final = True
        if op == "cut":
            text, final = text[: rng.randint(len(text) // 2, len(text))], False
        a = fast.update_text(text, source="r.pgn", final=final, view="r.pgn")
        b = full.update_text(text, source="r.pgn", final=final, view="r.pgn")
        assert a == b, (op, text)
        for gid in full.game_ids():
            assert fast.moves(gid) == full.moves(gid) and fast.result(gid) == full.result(gid)
        for tracker in (fast, full):  # the running count of plies (the status's) is the games' sum
            assert tracker.plies == sum(len(tracker.moves(gid)) for gid in tracker.game_ids())


def test_new_moves_evals_and_clocks_read_as_the_full_parse_reads_them() -> None:
    """Every [%eval] form (pawns, mates either way, #0 after either side's move), [%clk], [%emt], two comments."""
    g = real_games(EVAL_CLK, 1)[0]
    moves = [n.move for n in g.mainline()][:2 * len(EVALS) + 1]
    fast, full = pair()
    line: list[tuple[chess.Move, str]] = []
    seen = []
    for i, move in enumerate(moves):
        line.append((move, f"[%eval {EVALS[i // 2 % len(EVALS)] if i % 2 else EVALS[i % len(EVALS)]}] {SPLIT} "
                           f"[%clk 1:{i:02d}:30.5] [%emt 0:00:{i:02d}]"))
        text = render(g, line).replace(f" {SPLIT} ", " } { ")
        a, b = fast.update_chunk(text), full.update_chunk(text)
        assert a == b
        seen += [m for m in a if isinstance(m, MoveEvent)]
    assert fast.fast_applied == len(moves) - 1
    assert {m.eval_cp for m in seen} >= {31, -150, 1200, 3900, -3900, -7}
    assert [m.clock for m in seen] == [3600 + 60 * i + 30.5 for i in range(len(moves))]
    assert [m.emt for m in seen] == [float(i) for i in range(len(moves))]


LINES = ['[Event "Open"]', '[White "A \\\\"B\\\\" C"]', '[Black "D"]', '  [Round "3"]  ', '[Site "https://x.invalid/1"]',
         "", "   ", "% a comment line", "1. e4 e5 *", '[Bad tag]', "; a comment", '[Date "2025.01.01"] 1. d4 *']


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=9), st.sampled_from(["\n", "\r\n", "\r", "\x85", "\u2028", "\x0c"]),
       st.sampled_from(["", "\n", "\r\n"]))
def test_tags_read_once_per_tag_block_are_those_python_chess_reads(lines: list[str], brk: str, end: str) -> None:
    """The tracker reads a round's tags once per distinct tag block (found without splitting the whole
    chunk into lines): the same tags as ``chunk_headers``, whatever the line breaks."""
    from livemon.live.pgn import chunk_headers

    chunk = brk.join(lines) + end
    t = GameTracker("f")
    want = dict(chunk_headers(chunk))
    assert dict(t._headers_of([chunk], fresh=True)[0]) == want
    assert dict(t._headers_of([chunk, chunk + "1. c4 *\n"], fresh=False)[0]) == want  # from the memo
