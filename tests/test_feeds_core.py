"""The sans-I/O feed core on real PGN: GameTracker, chunk parsing, the stream splitter."""

from __future__ import annotations

import logging
import random
from collections import Counter

import chess
import chess.pgn
import pytest

from livemon.config import ConfigError, FileFeedConfig, load_config_text
from livemon.io.store import row_of, value_of
from livemon.io.feeds import GameTracker, PgnStreamSplitter, Ply, Snapshot, default_game_key, open_feed, tags_key
from livemon.rating.evaluation import MATE_CP
from livemon.live.movetext import is_terminated
from livemon.live.messages import FeedError, FeedNotice, GameInfo, GameResult, GameRollback, Message, MoveEvent

from conftest import REAL
BROADCAST = REAL / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"


def real_games(name: str) -> list[chess.pgn.Game]:
    out = []
    with open(REAL / name, encoding="utf-8") as f:
        while (g := chess.pgn.read_game(f)) is not None:
            out.append(g)
    return out


def prefix_text(game: chess.pgn.Game, n: int, result: str | None = None) -> str:
    """The PGN of ``game`` after ``n`` plies, comments kept, as a broadcast sends it."""
    g = chess.pgn.Game()
    for k, v in game.headers.items():
        g.headers[k] = v
    g.headers["Result"] = result or "*"
    node: chess.pgn.GameNode = g
    for src in list(game.mainline())[:n]:
        node = node.add_main_variation(src.move, comment=src.comment)
    return str(g) + "\n\n"


def apply(messages: list[Message], moves: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Rebuild each game's move list from MoveEvents and GameRollbacks, checking ply numbers."""
    moves = {} if moves is None else moves
    for m in messages:
        if isinstance(m, MoveEvent):
            lst = moves.setdefault(m.game_id, [])
            assert m.ply == len(lst) + 1, f"ply {m.ply} after {len(lst)} plies of {m.game_id}"
            lst.append(m.uci)
        elif isinstance(m, GameRollback):
            lst = moves.setdefault(m.game_id, [])
            assert 1 <= m.from_ply <= len(lst)
            del lst[m.from_ply - 1:]
    return moves


def wrong_at(game: chess.pgn.Game, ply: int, result: str = "*") -> tuple[str, chess.Move]:
    """The PGN of ``game`` cut before ``ply`` with another legal move played there, and that move."""
    board = chess.Board()
    truth = list(game.mainline_moves())
    for move in truth[:ply - 1]:
        board.push(move)
    wrong = next(m for m in board.legal_moves if m != truth[ply - 1])
    bad = chess.pgn.Game.from_board(board)
    bad.headers.update({k: v for k, v in game.headers.items()})
    bad.headers["Result"] = result
    bad.end().add_main_variation(wrong)
    return str(bad), wrong


def kinds(messages: list[Message]) -> Counter[str]:
    return Counter(type(m).__name__ for m in messages)


@pytest.fixture(scope="module")
def broadcast() -> list[chess.pgn.Game]:
    return real_games(BROADCAST.name)


def test_whole_file_once_and_resend_is_silent(broadcast):
    t = GameTracker("bc")
    text = BROADCAST.read_text(encoding="utf-8")
    msgs = t.update_text(text)
    assert kinds(msgs) == Counter(GameInfo=45, GameResult=45, MoveEvent=sum(len(list(g.mainline_moves())) for g in broadcast))
    rebuilt = apply(msgs)
    for g in broadcast:
        assert rebuilt[g.headers["Site"]] == [m.uci() for m in g.mainline_moves()]
    assert t.update_text(text) == []
    # the store's rows of what it keeps read back as the values written
    for m in msgs[:200]:
        if isinstance(m, (GameInfo, MoveEvent)):
            assert value_of(type(m), row_of(m)) == m


def test_prefixes_emit_each_ply_once_with_clock_and_eval(broadcast):
    t = GameTracker("bc")
    games = broadcast[:6]
    total = [len(list(g.mainline())) for g in games]
    msgs: list[Message] = []
    # boards progress in step, each snapshot re-sent twice, like a polling feed
    for n in range(0, max(total) + 3, 3):
        for g, tot in zip(games, total):
            k = min(n, tot)
            text = prefix_text(g, k, g.headers["Result"] if k == tot else None)
            msgs += t.update_text(text)
            assert t.update_text(text) == []
    moves = [m for m in msgs if isinstance(m, MoveEvent)]
    assert Counter((m.game_id, m.ply) for m in moves).most_common(1)[0][1] == 1
    assert len(moves) == sum(total)
    assert not any(isinstance(m, GameRollback) for m in msgs)
    results = [m for m in msgs if isinstance(m, GameResult)]
    assert {r.game_id: r.result for r in results} == {g.headers["Site"]: g.headers["Result"] for g in games}
    assert len(results) == len(games)
    by_key = {(m.game_id, m.ply): m for m in moves}
    for g in games:
        for i, node in enumerate(g.mainline(), start=1):
            ev = by_key[(g.headers["Site"], i)]
            assert ev.uci == node.move.uci()
            assert ev.clock == node.clock()
            pov = node.eval()
            if pov is None:
                assert ev.eval_cp is None
            elif pov.white().is_mate():
                assert abs(ev.eval_cp) == MATE_CP
            else:
                assert ev.eval_cp == pov.white().score()
            assert ev.san == node.parent.board().san(node.move)
    first = by_key[(games[0].headers["Site"], 1)]
    assert (first.uci, first.clock, first.eval_cp) == ("d2d4", 5449.0, 17)  # 1. d4 { [%eval 0.17] [%clk 1:30:49] }


def test_mates_map_to_3900_white_pov():
    text = '[White "A"]\n[Black "B"]\n\n1. e4 { [%eval #-3] [%clk 0:01:02] [%emt 0:00:05] } 1... e5 { [%eval #2] } *\n'
    t = GameTracker()
    moves = [m for m in t.update_text(text) if isinstance(m, MoveEvent)]
    assert [(m.eval_cp, m.clock, m.emt) for m in moves] == [(-MATE_CP, 62.0, 5.0), (MATE_CP, None, None)]


def test_correction_rolls_back_and_replays(broadcast):
    g = broadcast[0]
    gid = g.headers["Site"]
    truth = [m.uci() for m in g.mainline_moves()]
    t = GameTracker("bc")
    msgs = t.update_text(prefix_text(g, 30))
    # the board recorded a wrong 25th ply, then the operator fixed it
    bad, wrong = wrong_at(g, 25)
    out = t.update_text(bad)
    assert out[0] == GameRollback(gid, 25, "bc")
    assert [(m.ply, m.uci) for m in out[1:]] == [(25, wrong.uci())]
    msgs += out
    out = t.update_text(prefix_text(g, 40))
    assert out[0] == GameRollback(gid, 25, "bc")
    assert [m.ply for m in out[1:]] == list(range(25, 41))
    msgs += out
    assert apply(msgs)[gid] == truth[:40]
    # a whole game re-sent shorter (a takeback) is a correction too
    out = t.update_text(prefix_text(g, 38))
    assert out == [GameRollback(gid, 39, "bc")]
    assert t.moves(gid) == truth[:38]


def test_a_finished_game_is_kept_packed_and_a_later_correction_still_replays(broadcast):
    """A finished game's moves are kept as one string (a long event's round lists every game it has
    played); the round re-sent is silent, and a correction after the result unpacks and replays it."""
    g = broadcast[0]
    gid = g.headers["Site"]
    truth = [m.uci() for m in g.mainline_moves()]
    n = len(truth)
    t = GameTracker("bc")
    msgs = t.update_text(prefix_text(g, n - 10))
    msgs += t.update_text(prefix_text(g, n, result="1-0"))
    assert kinds(msgs)["GameResult"] == 1
    state = t._games[gid]
    assert state._ucis is None and state.board is None and state.plies == n == t.plies
    assert t.moves(gid) == truth and state._ucis is None  # read without unpacking
    assert t.update_text(prefix_text(g, n, result="1-0")) == []  # the round re-sent
    assert t._games[gid]._ucis is None
    # the arbiter corrects ply 20 of the finished game: rolled back and replayed, packed again
    fixed, wrong = wrong_at(g, 20, result="1-0")
    out = t.update_text(fixed)
    assert out[-1] == FeedNotice("bc", f"{gid}: moves before a result were corrected; the result stands", gid)
    out = out[:-1]
    assert out == [GameRollback(gid, 20, "bc"), *out[1:]] and [(m.ply, m.uci) for m in out[1:]] == [(20, wrong.uci())]
    assert t.moves(gid) == truth[:19] + [wrong.uci()] and t._games[gid]._ucis is None
    assert apply(msgs + out)[gid] == truth[:19] + [wrong.uci()]


def test_cut_text_never_rolls_back_and_loses_nothing(broadcast):
    """A file written in pieces: every read cut at a random byte."""
    text = BROADCAST.read_text(encoding="utf-8")
    rng = random.Random(4)
    cuts = sorted(rng.sample(range(1, len(text)), 200)) + [len(text)]
    t = GameTracker("file")
    msgs: list[Message] = []
    for c in cuts:
        msgs += t.update_text(text[:c], final=False)
    assert not any(isinstance(m, (GameRollback, FeedError)) for m in msgs)
    rebuilt = apply(msgs)
    assert rebuilt == {g.headers["Site"]: [m.uci() for m in g.mainline_moves()] for g in broadcast}
    assert kinds(msgs)["GameInfo"] == 45 and kinds(msgs)["GameResult"] == 45
    # and every GameInfo has the full tags, though the tag sections were cut many times
    for info in (m for m in msgs if isinstance(m, GameInfo)):
        assert info.white != "?" and info.black != "?" and info.white_elo is not None


def test_incomplete_snapshot_shorter_or_different_is_not_a_correction(broadcast):
    g = broadcast[1]
    t = GameTracker()
    t.update_text(prefix_text(g, 20))
    plies = [Ply(m.uci()) for m in g.mainline_moves()]
    assert t.update(Snapshot(g.headers, plies[:12], complete=False)) == []
    assert t.update(Snapshot(g.headers, plies[:12] + [Ply("a2a3")], complete=False)) == []
    # incomplete: the last ply is not trusted, the ones before it are
    out = t.update(Snapshot(g.headers, plies[:25], complete=False))
    assert [m.ply for m in out] == [21, 22, 23, 24]


def test_identity_rules():
    base = {"Event": "Ch", "Round": "1.2", "White": "A", "Black": "B"}
    assert default_game_key({**base, "Site": "London ENG"}) == "Ch|1.2|A|B"
    assert default_game_key({**base, "Site": "?"}) == "Ch|1.2|A|B"
    assert default_game_key({**base, "Site": "https://x/s/1"}) == "https://x/s/1"
    assert default_game_key({**base, "Site": "https://x/s/1", "GameURL": "https://x/g/9"}) == "https://x/g/9"

    def pgn(white: str, black: str, site: str, moves: str = "1. e4 *") -> str:
        return f'[Event "Ch"]\n[Site "{site}"]\n[Round "1"]\n[White "{white}"]\n[Black "{black}"]\n\n{moves}\n\n'

    # a Site URL shared by the games of one text is no identity
    t = GameTracker()
    t.update_text(pgn("A", "B", "https://ex.org/round") + pgn("C", "D", "https://ex.org/round"))
    assert sorted(t.game_ids()) == ["Ch|1|A|B", "Ch|1|C|D"]
    # found shared only later (a stream sends one game at a time): the first game keeps its id
    t = GameTracker()
    t.update_text(pgn("A", "B", "https://ex.org/round"))
    t.update_text(pgn("C", "D", "https://ex.org/round"))
    out = t.update_text(pgn("A", "B", "https://ex.org/round", "1. e4 e5 *"))
    assert [m.game_id for m in out] == ["https://ex.org/round"]
    assert sorted(t.game_ids()) == ["Ch|1|C|D", "https://ex.org/round"]
    # unique Site URLs (lichess chapters) are the identity; a bare city is not
    t = GameTracker()
    t.update_text(pgn("A", "B", "https://ex.org/c/1") + pgn("C", "D", "https://ex.org/c/2") + pgn("E", "F", "Tromso NOR"))
    assert sorted(t.game_ids()) == ["Ch|1|E|F", "https://ex.org/c/1", "https://ex.org/c/2"]
    # overridable
    t = GameTracker(key=lambda h: h["White"])
    t.update_text(pgn("A", "B", "https://ex.org/c/1"))
    assert t.game_ids() == ["A"]
    t = GameTracker(key=tags_key)
    t.update_text(pgn("A", "B", "https://ex.org/c/1"))
    assert t.game_ids() == ["Ch|1|A|B"]


def _dgt(game: chess.pgn.Game, tail: str) -> str:
    """A real game as a DGT board would send it: result signalled with the kings."""
    text = prefix_text(game, 10_000, game.headers["Result"])
    body, result = text.rstrip().rsplit(" ", 1)
    return f"{body} {tail} {result}\n"


def test_dgt_final_king_moves_are_dropped_with_a_notice(broadcast, caplog):
    g = broadcast[0]  # ends 0-1 with Black to move? whatever: both kings jump to the centre
    truth = [m.uci() for m in g.mainline_moves()]
    n = len(truth)
    tail = f"{n // 2 + 1}. Kd4" if n % 2 == 0 else f"{n // 2 + 1}... Kd4"
    t = GameTracker("dgt")
    with caplog.at_level(logging.DEBUG):
        out = t.update_text(_dgt(g, tail + " Ke5"))
    assert not any(isinstance(m, FeedError) for m in out)
    notes = [m for m in out if isinstance(m, FeedNotice)]
    assert [(x.feed, x.game_id, x.level) for x in notes] == [("dgt", g.headers["Site"], "info")]
    assert caplog.records == []  # said as a message, not logged: the tracker does no I/O
    assert apply(out)[g.headers["Site"]] == truth
    assert [m for m in out if isinstance(m, GameResult)][0].result == g.headers["Result"]
    assert "dropping DGT end-of-game king move(s) Kd4 Ke5" in notes[0].message
    # a single bogus king move too
    t = GameTracker("dgt")
    out = t.update_text(_dgt(g, tail))
    assert apply(out)[g.headers["Site"]] == truth


def test_a_monitor_logs_a_trackers_notice_once_and_counts_no_error(broadcast, tmp_path, caplog):
    """The tracker says a notice once (a round re-sent says nothing again); the monitor logs each notice it
    is handed once, at the notice's level, and counts it as no feed error."""
    from livemon.app.monitor import Monitor
    from livemon.config import Config, StoreConfig

    g = broadcast[0]
    n = len(list(g.mainline_moves()))
    text = _dgt(g, f"{n // 2 + 1}. Kd4" if n % 2 == 0 else f"{n // 2 + 1}... Kd4")
    t = GameTracker("dgt")
    notes = [m for m in t.update_text(text) + t.update_text(text) if isinstance(m, FeedNotice)]
    assert len(notes) == 1 and notes[0].level in ("info", "warning")
    warning = FeedNotice("dgt", "g: result changed from 1-0 to 0-1; keeping the first", "g", "warning")
    monitor = Monitor(Config(store=StoreConfig(path=tmp_path / "m.sqlite")))
    with caplog.at_level(logging.INFO, "livemon"):
        for m in [*notes, warning]:
            monitor.handle(m)
    said = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert said == [(logging.INFO, f"feed dgt: {notes[0].message}"), (logging.WARNING, f"feed dgt: {warning.message}")]
    assert monitor.core._counters.feed_errors == 0


def test_illegal_king_move_mid_game_is_an_error_and_keeps_what_was_accepted(broadcast):
    g = broadcast[2]
    gid = g.headers["Site"]
    t = GameTracker("x")
    t.update_text(prefix_text(g, 20))
    text = prefix_text(g, 20).replace(" *", " Ke4 Nf6 *") if len(list(g.mainline())) else ""
    # 21st ply is an impossible king move followed by more moves: a real error
    out = t.update_text(text)
    assert len(out) == 1 and isinstance(out[0], FeedError) and out[0].game_id == gid
    assert "Ke4" in out[0].message
    assert t.moves(gid) == [m.uci() for m in g.mainline_moves()][:20]
    assert t.update_text(text) == []  # the same bad game again: no second error
    out = t.update_text(prefix_text(g, 22))
    assert [m.ply for m in out] == [21, 22]


def test_bad_games_one_error_each_the_rest_go_on():
    t = GameTracker("twic")
    text = (REAL / "london_2011_round8_malformed.pgn").read_text(encoding="utf-8")
    msgs = t.update_text(text)
    errors = [m for m in msgs if isinstance(m, FeedError)]
    assert len(errors) == 1 and "Nakamura" in errors[0].message and "Qg2" in errors[0].message
    assert kinds(msgs)["GameInfo"] == 35 and t.games == 35
    assert t.update_text(text) == []
    # the chess.com export with games run together (and the same players, event and round "-"
    # in many games: the 2nd, 3rd... get "#2", "#3"): the first 80 games, all read
    text = (REAL / "chesscom_carlsen_clk_allancao.pgn").read_text(encoding="utf-8")
    starts = [i for i in range(len(text)) if text.startswith("[Event ", i)]
    t = GameTracker("cc")
    msgs = t.update_text(text[: starts[80]])
    assert kinds(msgs)["FeedError"] == 0 and t.games == 80
    assert any(gid.endswith("#2") for gid in t.game_ids())


def test_stream_splitter_any_chunking_gives_the_games(broadcast):
    text = BROADCAST.read_text(encoding="utf-8")
    rng = random.Random(7)
    s = PgnStreamSplitter()
    chunks, i = [], 0
    while i < len(text):
        j = i + rng.randint(1, 3000)
        chunks += s.feed(text[i:j])
        i = j
    chunks += s.close()
    assert len(chunks) == 45
    assert all(is_terminated(c) for c in chunks)
    t = GameTracker()
    for c in chunks:
        t.update_chunk(c)
    assert t.plies == sum(len(list(g.mainline_moves())) for g in broadcast)
    # a game cut by a dropped connection is discarded, not half-used
    s = PgnStreamSplitter()
    cut = text.index("[Event", 100) + 1500  # inside the second game's movetext
    assert len(s.feed(text[:cut])) == 1
    s.reset()
    assert s.close() == []
    assert len(s.feed(text[:cut])) == 1 and s.close() == []  # cut, not terminated: dropped at the end too


def test_feed_config_validation_names_the_key(tmp_path):
    cfg = load_config_text('[[feeds]]\nname = "r1"\ntype = "stream"\nurl = "https://lichess.org/api/stream/broadcast/round/x.pgn"\n')
    assert cfg.feeds[0].type == "stream" and load_config_text("").feeds == []
    for text, key in [
        ('[[feeds]]\nname = "a"\ntype = "http"\n', "feeds.a.url"),
        ('[[feeds]]\nname = "a"\ntype = "carrier-pigeon"\n', "feeds.a.type"),
        ('[[feeds]]\nname = "a"\ntype = "replay"\npath = "x.pgn"\nspeed = -1\n', "feeds.a.speed"),
        ('[[feeds]]\nname = "a"\ntype = "mqtt"\ntopic = "t"\nport = 0\n', "feeds.a.port"),
        ('[[feeds]]\ntype = "mqtt"\ntopic = "t"\n', "feeds.name"),
        ('[[feeds]]\nname = "a"\ntype = "mqtt"\ntopic = "t"\nbroker = "x"\n', "feeds.a.broker: expected a table, got 'x'"),
        ('[[feeds]]\nname = "a"\ntype = "file"\npath = "x.pgn"\nbroker = {}\n', "feeds.a.broker: unknown key of a file feed"),
    ]:
        with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
            load_config_text(text)
    feed = open_feed(FileFeedConfig(name="f", path=str(tmp_path)))
    assert feed.status.name == "f" and feed.status.type == "file" and feed.status.state == "starting"
