"""The one PGN reader (livemon.live.reader): resumed from ply N it reads what a read from the start reads,
a growing game costs its new moves per poll, and a bad move in a feed is one clear line."""

from __future__ import annotations

import io
import itertools
import time
from typing import Iterator

import chess
import chess.pgn

from livemon.live.messages import FeedError, GameInfo, MoveEvent
from livemon.live.reader import read_from, read_pgn, resume_point
from livemon.live.splitter import split_games
from livemon.live.tracker import GameTracker

from conftest import REAL

FILES = ["broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn", "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn",
         "chesscom_carlsen_clk_allancao.pgn", "prague_masters_2022_fsmosca.pgn", "kasparov_deepblue_1997_pythonchess.pgn"]


def real_games(name: str, n: int) -> list[chess.pgn.Game]:
    return list(itertools.islice(each_real_game(name), n))


def each_real_game(name: str) -> Iterator[chess.pgn.Game]:
    """The games of a real file that read without errors and have 20 plies or more, read as they are asked for."""
    with open(REAL / name, encoding="utf-8") as f:
        while (g := chess.pgn.read_game(f)) is not None:
            if not g.errors and len(list(g.mainline_moves())) >= 20:
                yield g


def prefix(game: chess.pgn.Game, plies: int, columns: int | None = 80) -> str:
    """The game's PGN as a broadcast writes it after ``plies`` plies: its tags, the moves with their comments
    (clocks, evals, notes; python-chess's exporter, wrapped at ``columns``), then ``*``."""
    g = chess.pgn.Game()
    for k, v in game.headers.items():
        g.headers[k] = v
    g.headers["Result"] = "*"
    node: chess.pgn.GameNode = g
    for k, n in enumerate(game.mainline()):
        if k == plies:
            break
        node = node.add_main_variation(n.move, comment=n.comment)
    return g.accept(chess.pgn.StringExporter(columns=columns)) + "\n\n"


def test_resumed_from_ply_n_reads_what_the_whole_read_reads_on_real_growing_games() -> None:
    """Real games (clocks, evals, comments, wrapped lines) written ply by ply: each text resumed at the
    previous text's resume point, on the board of its last ply, gives the whole read's plies after it."""
    checked = resumed = 0
    for name in FILES:
        for game in real_games(name, 2):
            total = len(list(game.mainline_moves()))
            before = read_pgn(prefix(game, 1))
            assert before is not None and before.resumable
            text = prefix(game, 1)
            for n in range(2, total + 1):
                new_text = prefix(game, n)
                whole = read_pgn(new_text)
                assert whole is not None and whole.error is None and len(whole.plies) == n
                core = text[: resume_point(text)]
                assert new_text.startswith(core) and new_text[len(core)].isspace()
                got = read_from(new_text[len(core):], before.board())
                assert got.error is None
                assert got.plies == whole.plies[len(before.plies):], (name, n)
                assert got.sans == n - len(before.plies)  # the new moves only
                resumed += got.resumable
                checked += 1
                before, text = whole, new_text
    assert checked > 700 and resumed == checked


def test_a_clean_text_may_be_resumed_and_others_are_read_whole() -> None:
    """Only a text that ends in ``*`` at the top level of a clean main line says it may be resumed."""
    head = '[White "A"]\n[Black "B"]\n\n'
    ok = read_pgn(head + "1. e4 { [%clk 1:00:00] } e5 (1... c5 2. Nf3) 2. Nf3 *\n")
    assert ok is not None and ok.resumable and [p.uci for p in ok.plies] == ["e2e4", "e7e5", "g1f3"]
    for body in ("1. e4 e5 1-0", "1. e4 e5 * {after}", "1. e4 ; a note\ne5 *", "1. e4\n\ne5 *", "1. e4 (1. d4 *",
                 "1. e4 Qa1xa1 *", "1. e4 {open *"):
        read = read_pgn(head + body + "\n")
        assert read is not None and not read.resumable, body


def test_a_growing_200_ply_game_costs_its_new_moves_per_poll() -> None:
    """A real 200-ply game polled once per new ply (the whole file each time): resumed, every SAN is parsed
    once (200 in all); read whole each poll, 200 x 201 / 2. Measured: SANs parsed and CPU time per poll."""
    game = next(g for g in each_real_game("chesscom_carlsen_clk_allancao.pgn") if len(list(g.mainline_moves())) >= 200)
    texts = [prefix(game, n) for n in range(1, 201)]
    fast, full = GameTracker("f"), GameTracker("f", append_only=False)
    times: dict[bool, list[float]] = {True: [], False: []}
    moves = 0
    for text in texts:
        for tracker in (fast, full):
            t0 = time.process_time()
            out = tracker.update_text(text, source="round.pgn", final=False)
            times[tracker.append_only].append(time.process_time() - t0)
        moves += sum(isinstance(m, MoveEvent) for m in out)
    assert moves == 200 and fast.moves(fast.game_ids()[0]) == full.moves(full.game_ids()[0])
    assert fast.sans_read == 200 and fast.parsed == 1 and fast.fast_applied == 199
    assert full.sans_read == 200 * 201 // 2
    # the time follows: late in the game (plies 151-200) a poll read whole replays 150+ SANs, a resumed one 1
    # (what is left grows with the text, not the moves: the split, the tags, a hash, a prefix compare)
    resumed, whole = sum(times[True][-50:]), sum(times[False][-50:])
    assert resumed < whole / 4, (resumed, whole)
    assert sum(times[True]) < sum(times[False]) / 3, (sum(times[True]), sum(times[False]))


def test_an_illegal_move_in_a_feed_is_one_clear_line() -> None:
    """A round polled again and again with an illegal move in one game: one FeedError, one line naming the
    file's game, the players, the move and the position; the other games are read; a fix is read."""
    chunks = [c for c, _ in split_games((REAL / "london_chess_classic_2011_twic.pgn").read_text(encoding="utf-8"))][:3]
    bad = chunks[1].replace(" 1-0", " Qa1xa1 1-0").replace(" 0-1", " Qa1xa1 0-1").replace(" 1/2-1/2", " Qa1xa1 1/2-1/2")
    assert bad != chunks[1]
    t = GameTracker("hall")
    errors: list[FeedError] = []
    infos = 0
    for _ in range(3):
        out = t.update_text("\n".join([chunks[0], bad, chunks[2]]), source="round.pgn", view="round.pgn")
        errors += [m for m in out if isinstance(m, FeedError)]
        infos += sum(isinstance(m, GameInfo) for m in out)
    assert len(errors) == 1 and infos == 2
    line = errors[0].message
    assert "\n" not in line and line.startswith("round.pgn game 2: ") and "Qa1xa1" in line and "illegal san" in line
    assert "Carlsen" in line or "Nakamura" in line or " - " in line
    out = t.update_text("\n".join(chunks), source="round.pgn", view="round.pgn")  # corrected: read
    assert sum(isinstance(m, GameInfo) for m in out) == 1 and not any(isinstance(m, FeedError) for m in out)


def test_each_ply_is_written_with_python_chess_san_and_fen_and_the_end_board() -> None:
    """The reader writes each ply's SAN and FEN while it parses (no replay): they are python-chess's ``Board.san``
    and ``Board.fen`` of the board before the move, check and mate suffixes, castling, promotions, en passant
    and Chess960 included, on real games; the board it hands over is the one after the last ply, whole reads
    and resumed ones alike."""
    seen = {"960": 0, "#": 0, "+": 0, "=": 0, "O-O": 0}
    for name in FILES:
        chunks = [c for c, _ in split_games((REAL / name).read_text(encoding="utf-8"))]
        for chunk in chunks[:6] + [c for c in chunks[6:] if "Chess960" in c or "#" in c][:6]:
            read = read_pgn(chunk)
            assert read is not None and read.error is None and read.end is not None
            board = read.start.copy()
            want = []
            for ply in read.plies:
                move = chess.Move.from_uci(ply.uci)
                want.append((board.san(move), board.fen()))
                board.push(move)
            assert read.written == want, name
            assert read.end.fen() == board.fen()
            later = read_pgn(chunk, write_from=10)  # the plies a tracker holds already are not written again
            assert later is not None and later.written_from == min(10, len(want)) and later.written == want[10:]
            sans = " ".join(s for s, _ in want)
            seen["960"] += board.chess960
            for mark in ("#", "+", "=", "O-O"):
                seen[mark] += mark in sans
            if len(read.plies) > 10:  # resumed at ply 10: the same SANs and FENs after it
                game = chess.pgn.read_game(io.StringIO(chunk))
                core = prefix(game, 10)
                got = read_from(prefix(game, len(read.plies))[resume_point(core):], read_pgn(core).end)
                assert got.written == want[10:] and got.end is not None and got.end.fen() == board.fen()
    assert min(seen.values()) >= 3, seen
