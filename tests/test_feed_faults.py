"""Feed quirks that must change no number: real files rewritten by the test.

- a same-size correction whose mtime is kept (``cp -p``, ``rsync -t``, a share with coarse timestamps) is
  noticed by its content;
- a path that is a device (``/dev/zero``) or a FIFO is one error line, never a read (an endless read, or one
  that blocks for ever);
- an MQTT ply that never comes is one line on time (a real mosquitto, no later message to carry it), saying what
  recovers the plies held for it; plies refused beyond the hold are one line per gap;
- a file or a URL that flaps between a stale and a fresh copy rolls nothing back and says so once.
"""

from __future__ import annotations

import asyncio
import os
import time

import chess
import pytest

import livemon.io.feeds.file as file_feed
from livemon.io.feeds.file import FileFeed
from tests.test_feeds_live import Rebuilt, real_games, running, until


def plain_pgn(headers: dict[str, str], sans: list[str], result: str = "*") -> str:
    moves = " ".join((f"{i // 2 + 1}. " if i % 2 == 0 else "") + san for i, san in enumerate(sans))
    tags = "".join(f'[{k} "{v}"]\n' for k, v in {**headers, "Result": result}.items())
    return f"{tags}\n{moves} {result}\n"


def same_length_alternative(board: chess.Board, san: str) -> str:
    """Another legal move of the position whose SAN is as long as ``san``."""
    for move in board.legal_moves:
        other = board.san(move)
        if other != san and len(other) == len(san):
            return other
    raise AssertionError("no same-length alternative")


async def test_a_same_size_rewrite_with_its_mtime_kept_is_noticed_by_content(tmp_path, monkeypatch):
    monkeypatch.setattr(file_feed, "HASH_RECHECK_S", 0.2)
    game = real_games(n=1)[0]
    headers = dict(game.headers)
    board, sans, ucis = game.board(), [], []
    for move in list(game.mainline_moves())[:20]:
        sans.append(board.san(move))
        ucis.append(move.uci())
        board.push(move)
    board.pop()
    fixed_san = same_length_alternative(board, sans[-1])
    fixed_uci = board.parse_san(fixed_san).uci()
    path = tmp_path / "round.pgn"
    path.write_text(plain_pgn(headers, sans))
    got = Rebuilt()
    feed = FileFeed("board-pc", path, interval=0.02)
    async with running(feed, got):
        await until(lambda: sum(len(m) for m in got.moves.values()) == 20, 5, "the first version")
        (gid,) = got.moves
        before = os.stat(path)
        wrong = path.read_text()
        right = plain_pgn(headers, [*sans[:-1], fixed_san])
        assert len(right) == len(wrong) and right != wrong
        path.write_text(right)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # what cp -p / rsync -t leave
        after = os.stat(path)
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        await until(lambda: got.moves[gid][-1] == fixed_uci, 5, "the correction")
        reads = feed.reads
        await asyncio.sleep(0.6)  # unchanged since: rechecked by its hash, not read into the tracker again
    assert got.moves[gid] == [*ucis[:-1], fixed_uci] and got.counts["GameRollback"] == 1
    assert feed.rewrites == 1 and feed.reads == reads and not got.errors


@pytest.mark.parametrize("kind", ["device", "fifo"])
async def test_a_device_or_a_fifo_is_one_error_line_and_never_read(tmp_path, kind):
    if kind == "device":
        path = "/dev/zero"
    else:
        path = str(tmp_path / "round.pgn")
        os.mkfifo(path)
    got = Rebuilt()
    feed = FileFeed("hall", path, interval=0.02, max_body=2**20)
    started = time.monotonic()
    async with running(feed, got):
        await until(lambda: bool(got.errors), 5, "the error")
        await asyncio.sleep(0.3)  # a dozen polls more: no second line, no read
    assert time.monotonic() - started < 5
    (error,) = got.errors
    assert ("a FIFO" if kind == "fifo" else "a device or socket") in error.message and "not read" in error.message
    assert feed.reads == 0 and not got.moves


# -- MQTT: out-of-order plies, and a refused message carries nothing ------------------------------------------------


def mv(ply: int, uci: str, **extra: object) -> str:
    import json
    return json.dumps({"game": "board-7", "ply": ply, "uci": uci, "white": "A", "black": "B", **extra})


async def test_mqtt_out_of_order_plies_wait_for_the_missing_one_and_a_refused_message_carries_nothing(broker):
    import aiomqtt

    from livemon.io.broker import BrokerSettings
    from livemon.io.feeds.mqtt import MqttFeed
    from livemon.live.messages import FeedError, GameResult

    g = real_games(n=1)[0]
    truth = [m.uci() for m in g.mainline_moves()][:40]
    feed = MqttFeed("boards", "livemon/test/moves/#", BrokerSettings("127.0.0.1", broker.port))
    msgs: list = []
    async with running(feed, msgs), aiomqtt.Client("127.0.0.1", broker.port) as pub:
        await asyncio.wait_for(feed.connected.wait(), 5)
        topic = "livemon/test/moves/board-7"
        order = [*range(1, 11), *range(12, 31), 11]  # ply 11 arrives last: 19 plies wait for it
        for ply in order:
            await pub.publish(topic, mv(ply, truth[ply - 1]), qos=1)
        await pub.publish(topic, mv(31, "e1e8", result="0-1"), qos=1)  # illegal, with a result: refused whole
        await pub.publish(topic, mv(31, truth[30]), qos=1)  # the good ply 31, no result
        await until(lambda: sum(1 for m in msgs if type(m).__name__ == "MoveEvent") == 31, 10, "31 plies")
        await asyncio.sleep(0.3)
    got = Rebuilt()
    for m in msgs:
        got.add(m)
    assert got.moves == {"board-7": truth[:31]}  # nothing lost to the late ply
    errors = [m.message for m in msgs if isinstance(m, FeedError)]
    assert len(errors) == 1 and "illegal" in errors[0], errors  # the late ply cost no line at all
    assert not [m for m in msgs if isinstance(m, GameResult)]  # the refused message's 0-1 was not kept
    assert feed.handler.held == 19


def test_a_ply_that_never_comes_is_one_line_after_the_wait_saying_what_is_needed():
    from livemon.io.feeds.base import BaseFeed
    from livemon.io.feeds.mqtt import GAP_WAIT_S, MoveMessages
    from livemon.live.messages import FeedError, MoveEvent

    g = real_games(n=1)[0]
    truth = [m.uci() for m in g.mainline_moves()][:30]
    handler = MoveMessages(BaseFeed("boards"))
    out = []
    for ply in range(1, 6):
        out += handler.handle(mv(ply, truth[ply - 1]), now=0.0)
    for ply in range(7, 30):  # ply 6 lost for good
        out += handler.handle(mv(ply, truth[ply - 1]), now=1.0 + ply)
    assert not [m for m in out if isinstance(m, FeedError)]  # waiting, silently
    late = handler.handle(mv(30, truth[29]), now=GAP_WAIT_S + 8.0)  # the wait is over
    again = handler.handle(mv(30, truth[29]), now=GAP_WAIT_S + 60.0)
    (line,) = [m.message for m in late if isinstance(m, FeedError)]
    assert line == (f"board-7: ply 6 has not arrived in {GAP_WAIT_S:g} s; 24 later plies (to ply 30) are held for it: "
                    "re-send ply 6 to recover them")
    assert not [m for m in again if isinstance(m, FeedError)]  # said once
    recovered = handler.handle(mv(6, truth[5]), now=GAP_WAIT_S + 70.0)
    assert [m.ply for m in recovered if isinstance(m, MoveEvent)] == list(range(6, 31))


async def test_a_ply_that_never_comes_is_one_line_on_time_with_no_later_message_and_a_resend_recovers(broker, caplog):
    """The wait is driven by the feed's own timer: after the gap, nothing more is published."""
    import aiomqtt

    from livemon.io.broker import BrokerSettings
    from livemon.io.feeds.mqtt import MqttFeed
    from livemon.live.messages import FeedError, MoveEvent

    truth = [m.uci() for m in real_games(n=1)[0].mainline_moves()][:12]
    feed = MqttFeed("boards", "livemon/test/moves/#", BrokerSettings("127.0.0.1", broker.port), gap_wait=0.5)
    msgs: list = []
    topic = "livemon/test/moves/board-7"
    async with running(feed, msgs), aiomqtt.Client("127.0.0.1", broker.port) as pub:
        await asyncio.wait_for(feed.connected.wait(), 5)
        for ply in [*range(1, 6), *range(7, 13)]:  # ply 6 lost
            await pub.publish(topic, mv(ply, truth[ply - 1]), qos=1)
        await until(lambda: sum(isinstance(m, MoveEvent) for m in msgs) == 5, 5, "plies 1-5")
        gap_from = time.monotonic()
        await until(lambda: any(isinstance(m, FeedError) for m in msgs), 5, "the gap's line")
        waited = time.monotonic() - gap_from
        await asyncio.sleep(1.0)  # two waits more: said once
        errors = [m.message for m in msgs if isinstance(m, FeedError)]
        await pub.publish(topic, mv(6, truth[5]), qos=1)
        await until(lambda: sum(isinstance(m, MoveEvent) for m in msgs) == 12, 5, "the held plies, recovered")
    assert errors == ["board-7: ply 6 has not arrived in 0.5 s; 6 later plies (to ply 12) are held for it: "
                      "re-send ply 6 to recover them"]
    assert waited < 2.5, waited  # on its timer, not on a next message (none came)
    assert [m.uci for m in msgs if isinstance(m, MoveEvent)] == truth


def test_the_wait_is_told_to_the_driver_and_refused_plies_are_one_line_per_gap():
    from livemon.io.feeds.base import BaseFeed
    from livemon.io.feeds.mqtt import GAP_HOLD, MoveMessages
    from livemon.live.messages import FeedError

    truth = [m.uci() for m in real_games(n=1)[0].mainline_moves()]
    handler = MoveMessages(BaseFeed("boards"), gap_wait=5.0)
    assert handler.deadline() is None
    handler.handle(mv(1, truth[0]), now=0.0)
    handler.handle(mv(3, truth[2]), now=10.0)  # ply 2 missing from t = 10
    assert handler.deadline() == 15.0 and handler.overdue(14.9) == []
    (line,) = handler.overdue(15.0)
    assert "ply 2 has not arrived in 5 s" in line.message and handler.deadline() is None  # said: nothing more due
    out = []
    for ply in range(4, 4 + GAP_HOLD + 10):  # beyond the hold: refused, one line for the gap
        out += handler.handle(mv(ply, "e2e4"), now=20.0)
    (refused,) = [m.message for m in out if isinstance(m, FeedError)]
    assert refused.startswith(f"board-7: ply {3 + GAP_HOLD} refused, and any later ply until ply 2 comes")
    assert handler.refused == 11


# -- a file that flaps between a stale and a fresh copy -------------------------------------------------------------


async def test_a_file_flapping_between_a_stale_and_a_fresh_copy_rolls_nothing_back_and_says_so_once(tmp_path, caplog):
    import logging

    from livemon.io.feeds.stale import STALE_POLLS
    from tests.test_feeds_live import pgn_of

    caplog.set_level(logging.INFO, "livemon.io.feeds")
    games = real_games(n=3)
    stale = "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:20]) for g in games)
    fresh = "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:30]) for g in games)
    path = tmp_path / "round.pgn"
    path.write_text(stale)
    got = Rebuilt()
    feed = FileFeed("mirror", path, interval=0.05)

    async def polled() -> None:
        seen = feed.polls
        await until(lambda: feed.polls > seen, 5, "a poll")

    async with running(feed, got):
        await until(lambda: sum(len(v) for v in got.moves.values()) == 60, 5, "the first version")
        path.write_text(fresh)
        await until(lambda: sum(len(v) for v in got.moves.values()) == 90, 5, "the fresh version")
        for i in range(20):  # two mirrors copying in turn, each copy seen by a poll or two
            path.write_text(stale if i % 2 == 0 else fresh)
            await polled()
        await polled()
        assert got.counts["GameRollback"] == 0 and sum(len(v) for v in got.moves.values()) == 90
        assert feed.stale_versions >= 10
        path.write_text(stale)  # the round really went back, and stays so
        await until(lambda: sum(len(v) for v in got.moves.values()) == 60, 5, "the revert, kept steadily")
    assert got.counts["GameRollback"] == 3  # once per game, for the revert only
    lines = [r.getMessage() for r in caplog.records if "earlier version of the file" in r.getMessage()]
    assert len(lines) == 1 and f"unless it stays {STALE_POLLS} polls" in lines[0]
    assert not got.errors


# -- HTTP: a source that flaps between a stale and a fresh copy ------------------------------------------------------


async def test_a_cdn_serving_stale_and_fresh_copies_in_turn_rolls_nothing_back_and_says_so_once(caplog):
    import logging

    from livemon.io.feeds.http import STALE_POLLS, HttpFeed
    from tests.test_feeds_live import MiniHttp, pgn_of, response

    caplog.set_level(logging.INFO, "livemon.io.feeds")
    games = real_games(n=3)
    stale = "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:20]) for g in games).encode()
    fresh = "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:30]) for g in games).encode()
    state = {"mode": "stale", "served": 0}

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        state["served"] += 1
        if state["mode"] == "stale":
            body = stale
        elif state["mode"] == "flap":  # two edges of a CDN, in turn; no ETag, no Last-Modified
            body = fresh if state["served"] % 2 else stale
        else:
            body = stale  # the round really went back (an operator's revert): served steadily
        w.write(response("200 OK", body, Content_Type="application/x-chess-pgn"))
        await w.drain()

    got = Rebuilt()
    async with MiniHttp(handler) as srv:
        feed = HttpFeed("cdn", srv.url, interval=0.01)
        async with running(feed, got):
            await until(lambda: sum(len(v) for v in got.moves.values()) == 60, 5, "the first version")
            state["mode"] = "flap"
            await until(lambda: sum(len(v) for v in got.moves.values()) == 90, 5, "the fresh version")
            await until(lambda: feed.stale_bodies >= 20, 10, "twenty stale copies")
            assert got.counts["GameRollback"] == 0 and sum(len(v) for v in got.moves.values()) == 90
            state["mode"] = "revert"
            await until(lambda: sum(len(v) for v in got.moves.values()) == 60, 5, "the revert, served steadily")
    assert got.counts["GameRollback"] == 3  # once per game, for the revert only
    lines = [r.getMessage() for r in caplog.records if "earlier version" in r.getMessage()]
    assert len(lines) == 1 and f"served {STALE_POLLS} polls in a row" in lines[0]
    assert not got.errors


# -- junk after the last game ---------------------------------------------------------------------------------------

JUNK = ["garbage here\n", "%%%% junk\n\x00\x01 blah", "}} 1. e4 {", "[Event", "1. e4 e5"]


@pytest.mark.parametrize("junk", JUNK, ids=["line", "binary", "braces", "half-tag", "moves"])
async def test_junk_after_the_last_game_costs_none_of_its_plies_nor_its_result(tmp_path, caplog, junk):
    import logging

    caplog.set_level(logging.INFO, "livemon.io.feeds")
    games = real_games(n=2)
    ucis = [[m.uci() for m in g.mainline_moves()][:20] for g in games]
    text = "".join(pgn_of_result(g, u, "1-0") for g, u in zip(games, ucis))
    clean, dirty = tmp_path / "clean.pgn", tmp_path / "dirty.pgn"
    clean.write_text(text)
    dirty.write_text(text + junk)
    got = {}
    for path in (clean, dirty):
        sink = got[path.name] = Rebuilt()
        feed = FileFeed(path.stem, path, interval=0.02)
        async with running(feed, sink):
            await until(lambda sink=sink: sum(len(v) for v in sink.moves.values()) == 40 and len(sink.results) == 2,
                        5, f"both games of {path.name}")
            await asyncio.sleep(0.2)
    assert got["dirty.pgn"].moves == got["clean.pgn"].moves and got["dirty.pgn"].results == got["clean.pgn"].results
    assert list(got["dirty.pgn"].results.values()) == ["1-0", "1-0"]
    lines = [r.getMessage() for r in caplog.records if "after the last game's result ignored" in r.getMessage()]
    assert len(lines) == 1 and "dirty.pgn" in lines[0]  # one line, though the file was polled many times


def pgn_of_result(game, ucis, result):
    from tests.test_feeds_live import pgn_of
    return pgn_of(game, ucis, result=result)
