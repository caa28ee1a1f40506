"""Games that vanish from a feed's view of a round are withdrawn, through the real interfaces.

A correction that renames a player, or one game listed twice with different move lists, used to leave
phantom plies for ever (a ``…#2`` game; the old-name game): 62 plies duplicated, a phantom player, McShane
counted 56 moves instead of 41. Here: the sans-I/O tracker's rules (whole reads only, a debounce of reads
*and* seconds, a wholesale change is a new view, one game per key unless all listings are finished), the
file feed on a real DGT folder, and a monitor (its engine the scripted one of tests/fake_uci.py) polling a
real HTTP server whose round is corrected, with cut bodies, a failed poll and an emptied body in between,
watched by a WebSocket client; the end state equals the batch analysis of the final correct PGN.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import random
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from livemon.cli import main
from livemon.app.export import export_report
from livemon.app.monitor import Monitor
from livemon.config import WebConfig, load_config
from livemon.faces.web import serve_web
from livemon.live.splitter import text_is_cut
from livemon.live.tracker import WITHDRAW_READS, GameTracker
from livemon.io.feeds.file import FileFeed
from livemon.io.store import Store
from livemon.live.messages import FeedError, FeedNotice, GameInfo, GameWithdrawn, Message, MoveEvent
from livemon.live.pgn import split_games
from tests.conftest import copy_analyses, real
from tests.test_feeds_live import MiniHttp, Rebuilt, response, running, until
from tests.test_web import client, subscribe

LONDON = "london_chess_classic_2011_twic.pgn"


def london_round(n: int) -> list[str]:
    """The four games of round ``n`` of the London Chess Classic 2011, as PGN texts."""
    chunks = [c for c, _ in split_games(real(LONDON).read_text(encoding="utf-8"))]
    return [c.strip() + "\n" for c in chunks[4 * (n - 1): 4 * n]]


def text_of(*games: str) -> str:
    return "\n".join(games)


def stale_copy(chunk: str, keep: int, extra: int) -> str:
    """A stale, wrong listing of the same game: its first ``keep`` plies, then ``extra`` other legal plies, ``*``."""
    game = chess.pgn.read_game(io.StringIO(chunk))
    assert game is not None
    copy = chess.pgn.Game()
    for k, v in game.headers.items():
        copy.headers[k] = v
    copy.headers["Result"] = "*"
    node: chess.pgn.GameNode = copy
    real_moves = list(game.mainline_moves())
    board = game.board()
    for move in real_moves[:keep]:
        node = node.add_main_variation(move)
        board.push(move)
    for _ in range(extra):
        move = sorted(board.legal_moves, key=lambda m: m.uci())[0]
        if board.ply() < len(real_moves) and move == real_moves[board.ply()]:
            move = sorted(board.legal_moves, key=lambda m: m.uci())[1]
        node = node.add_main_variation(move)
        board.push(move)
    return str(copy) + "\n"


def renamed(chunk: str, old: str, new: str) -> str:
    assert f'"{old}"' in chunk
    return chunk.replace(f'"{old}"', f'"{new}"')


def withdrawn(messages: list[Any]) -> list[str]:
    return [m.game_id for m in messages if isinstance(m, GameWithdrawn)]


# -- the tracker, sans I/O ------------------------------------------------------------------------------------


def test_a_renamed_player_is_withdrawn_after_enough_whole_reads_and_seconds():
    games = london_round(2)
    wrong = text_of(games[0], games[1], renamed(games[2], "Adams,Mi", "Adams,Mic"), games[3])
    right = text_of(*games)
    t = GameTracker("hall", withdraw_after=5.0)
    first = t.update_text(wrong, view="r2")
    assert sum(isinstance(m, GameInfo) for m in first) == 4 and t.poll_done(["r2"], 0.0) == []
    old = "3rd London Chess Classic|2|Howell,D|Adams,Mic"
    assert old in t.game_ids()
    new_msgs = t.update_text(right, view="r2")
    assert [m.white + " - " + m.black for m in new_msgs if isinstance(m, GameInfo)] == ["Howell,D - Adams,Mi"]
    # missing from 1, 2 whole reads: not yet; from 3 but within 5 s: not yet; 3 reads over 5 s: withdrawn, once
    assert [t.poll_done(["r2"], s) for s in (1.0, 2.0, 3.0)] == [[], [], []]
    assert t.update_text(right, view="r2") == []  # an unchanged body is a whole read too (the feeds call poll_done)
    out = t.poll_done(["r2"], 6.0)
    assert withdrawn(out) == [old] and out[0].feed == "hall" and "4 whole reads in a row, over 5 s" in out[0].reason
    assert old not in t.game_ids() and len(t.game_ids()) == 4
    assert t.poll_done(["r2"], 7.0) == [] and t.poll_done(["r2"], 60.0) == []
    # the old listing coming back is a new game again, every ply of it (nothing is left of it in the tracker)
    back = t.update_text(wrong, view="r2")
    assert sum(isinstance(m, MoveEvent) for m in back) == len(t.moves(old)) > 0


def unsaid(messages: list[Message]) -> list[Message]:
    """The messages that are not notices (what a poll changed)."""
    return [m for m in messages if not isinstance(m, FeedNotice)]


def test_cut_failed_and_emptied_reads_withdraw_nothing():
    games = london_round(2)
    full = text_of(*games)
    t = GameTracker("web", withdraw_after=0.0)
    t.update_text(full, view="u")
    assert t.poll_done(["u"], 0.0) == []
    rng = random.Random(4)
    clock = 1.0
    boundary = text_of(*games[:2])  # a body cut right after a game: it looks whole
    cuts = [c for c in (full[: rng.randrange(len(full))] for _ in range(40)) if text_is_cut(c)][:20]
    for body in [boundary, boundary, *cuts, boundary, boundary, full, boundary, boundary]:
        t.update_text(body, view="u", final=False)
        assert t.poll_done(["u"], clock) == [], "a cut body withdrew a game"
        clock += 1.0
    # two whole-looking reads missing games, then a cut one (the round is being rewritten: the count restarts)
    # or the whole round: never three in a row
    for _ in range(WITHDRAW_READS + 2):
        t.update_text("", view="u", final=False)  # an emptied file or an empty 200: a new view, not a withdrawal
        assert unsaid(t.poll_done(["u"], clock)) == []
        t.unlisted("u")  # an unreadable read (OSError, a body over the cap): no evidence either way
        assert t.poll_done(["u"], clock) == []
    t.update_text(full, view="u", final=False)
    assert unsaid(t.poll_done(["u"], clock)) == [] and len(t.game_ids()) == 4
    assert t.poll_done(["never read"], clock) == [] and t.poll_done([], clock) == []


def test_a_new_round_at_the_same_url_withdraws_nothing():
    t = GameTracker("rounds", withdraw_after=0.0)
    t.update_text(text_of(*london_round(1)), view="u")
    t.poll_done(["u"], 0.0)
    said: list[Message] = []
    for s in range(1, 10):
        t.update_text(text_of(*london_round(2)), view="u")
        polled = t.poll_done(["u"], float(s))
        assert unsaid(polled) == []
        said += polled
    assert len(t.game_ids()) == 8
    assert [(n.feed, n.level, n.message) for n in said] == [  # said once, as a message: the tracker logs nothing
        ("rounds", "info", "its round now lists none of the 4 games it listed before (4 now): a new view, "
                           "nothing withdrawn")]
    # within the new view, a game that vanishes is withdrawn as usual
    out = []
    for s in range(10, 10 + WITHDRAW_READS):
        assert t.update_text(text_of(*london_round(2)[:3]), view="u") == []
        out += t.poll_done(["u"], float(s))
    assert withdrawn(out) == ["3rd London Chess Classic|2|Short,N|Kramnik,V"] and len(t.game_ids()) == 7


def test_a_game_listed_twice_is_one_game_the_finished_or_longer_listing_wins():
    games = london_round(2)
    mcshane = games[0]
    plies = len(list(chess.pgn.read_game(io.StringIO(mcshane)).mainline_moves()))
    stale = stale_copy(mcshane, 24, 8)  # 32 plies, 8 of them not played
    gid = "3rd London Chess Classic|2|McShane,L|Carlsen,M"
    t = GameTracker("twice")
    out = t.update_text(text_of(stale, *games), source="u", view="u")  # the stale copy first: the finished one still wins
    errors = [m for m in out if isinstance(m, FeedError)]
    assert len(errors) == 1 and errors[0].game_id == gid
    assert errors[0].message == f"u: game {gid} is listed 2 times (32, {plies} plies); one game: the finished listing is used"
    assert not [g for g in t.game_ids() if "#" in g] and len(t.game_ids()) == 4
    assert len(t.moves(gid)) == plies
    assert [m for m in t.update_text(text_of(*games, stale), view="u") if isinstance(m, FeedError)] == []  # once
    # two unfinished listings (a live round): the longer wins, whichever comes first; no rollback to the shorter
    live = GameTracker("live")
    short, long_ = stale_copy(mcshane, 10, 0), stale_copy(mcshane, 30, 0)
    first = live.update_text(text_of(long_, short), view="u")
    assert sum(isinstance(m, MoveEvent) for m in first) == 30 and live.game_ids() == [gid]
    assert "the longest listing is used" in [m for m in first if isinstance(m, FeedError)][0].message
    again = live.update_text(text_of(short, long_), view="u")
    assert again == [] and len(live.moves(gid)) == 30
    # the duplicate gone, then back: one line per game is enough
    assert live.update_text(long_, view="u") == [] and live.update_text(text_of(short, long_), view="u") == []
    # every listing finished: an archive of a match (chess.com exports): distinct games, as before
    archive = GameTracker("archive")
    two = text_of(mcshane, renamed(games[1], "Nakamura,Hi", "McShane,L").replace('"Aronian,L"', '"Carlsen,M"'))
    out = archive.update_text(two.replace('[Round "2"]', '[Round "-"]'))
    assert not [m for m in out if isinstance(m, FeedError)]
    assert archive.game_ids() == ["3rd London Chess Classic|-|McShane,L|Carlsen,M",
                                  "3rd London Chess Classic|-|McShane,L|Carlsen,M#2"]


async def test_a_dgt_folder_game_file_deleted_or_renamed_is_withdrawn(tmp_path, caplog):
    caplog.set_level(logging.INFO, "livemon")
    games = london_round(3)
    folder = tmp_path / "round-3"
    folder.mkdir()
    for i, g in enumerate(games, 1):
        (folder / f"game-{i}.pgn").write_text(g)
    got = Rebuilt()
    msgs: list[Any] = []

    class Both(Rebuilt):
        def add(self, m: Any) -> None:
            got.add(m)
            msgs.append(m)

    feed = FileFeed("dgt", folder, interval=0.01, withdraw_after=0.2)
    async with running(feed, Both()):
        await until(lambda: got.counts["GameInfo"] == 4, 10, "the round")
        t0 = time.monotonic()
        (folder / "game-4.pgn").unlink()  # a board removed by the operator
        (folder / "game-2.pgn").write_text(renamed(games[1], "Anand,V", "Anand,Vi"))  # a name fixed... wrongly
        await until(lambda: len(withdrawn(msgs)) == 2, 10, "the withdrawals")
        elapsed = time.monotonic() - t0
        await asyncio.sleep(0.1)
    ids = [c for c in (chess.pgn.read_game(io.StringIO(g)).headers for g in games)]
    gone = sorted(f"{h['Event']}|{h['Round']}|{h['White']}|{h['Black']}" for h in (ids[1], ids[3]))
    assert sorted(withdrawn(msgs)) == gone and elapsed >= 0.2
    assert feed.tracker.games == 3 and not got.errors
    assert "3rd London Chess Classic|3|Anand,Vi|Howell,D" in feed.tracker.game_ids()
    assert "Traceback" not in caplog.text


# -- the monitor: a real HTTP server, the scripted engine, a WebSocket client -------------------------------


DEPTH = 3


def monitor_config(tmp_path: Path, url: str, engine: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[engine]\npath = "{engine}"\ndepth = {DEPTH}\nbacklog_high = 1000000\n[store]\npath = "{tmp_path / "live.sqlite"}"\n'
        f'[monitor]\nstatus_seconds = 0.2\nttt_debounce_seconds = 0.1\n'
        f'[[feeds]]\nname = "web"\ntype = "http"\nurl = "{url}"\ninterval = 0.05\ntimeout = 5.0\n'
        f'max_backoff = 0.1\nwithdraw_after = 0.5\n'
    )
    return path


async def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    capsys.readouterr()
    assert await asyncio.to_thread(main, list(args)) == 0  # the CLI runs its own event loop
    return json.loads(capsys.readouterr().out)


async def test_a_corrected_round_over_http_leaves_no_phantom_and_equals_batch(tmp_path, caplog, capsys, fake_engine):
    caplog.set_level(logging.INFO, "livemon")
    games = london_round(2)
    old_gid = "3rd London Chess Classic|2|Howell,D|Adams,Mic"
    wrong = text_of(games[0], games[1], renamed(games[2], "Adams,Mi", "Adams,Mic"), games[3],
                    stale_copy(games[0], 40, 12))  # McShane - Carlsen listed twice, the stale copy 52 plies long
    right = text_of(*games)
    truth = tmp_path / "london_r2.pgn"
    truth.write_text(right)
    cut = wrong[: wrong.index(games[2][:30])]  # cut after two games: looks like a whole round of two
    plan: list[tuple[str, str]] = (
        [("200", wrong)] * 3
        + [("slow 200", cut)] * 2  # whole-looking but cut: 2 reads, spread over more than withdraw_after
        + [("slow 200", wrong[: len(wrong) * 2 // 3])] * 2  # cut mid-game: no evidence
        + [("500", ""), ("slow 200", "")]  # a failed poll, an emptied body
        + [("200", wrong)]
        + [("200", right)]
    )
    served: list[str] = []
    withdrawn_before_fix: list[int] = []

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        kind, body = plan[min(len(served), len(plan) - 1)]
        served.append(kind)
        if body is right and len(withdrawn_before_fix) == 0:
            withdrawn_before_fix.append(monitor.counters.withdrawn)
        if kind == "500":
            w.write(response("500 Internal Server Error", b"oops"))
        else:
            if kind.startswith("slow"):
                await asyncio.sleep(0.15)
            w.write(response("200 OK", body.encode(), Content_Type="application/x-chess-pgn"))
        await w.drain()

    frames: list[dict[str, Any]] = []
    async with MiniHttp(handler) as srv:
        cfg = load_config(monitor_config(tmp_path, srv.url, fake_engine))
        monitor = Monitor(cfg)
        run = asyncio.create_task(monitor.run())
        try:
            async with serve_web(monitor.hub, WebConfig(port=0, host="127.0.0.1")) as web:
                ws = await client(web)
                await subscribe(ws, "games", "players", f"game:{old_gid}")

                async def reader() -> None:
                    while True:
                        frames.append(json.loads(await ws.recv()))

                reading = asyncio.create_task(reader())
                await until(lambda: len(served) >= 3 and old_gid in monitor.games, 60, "the wrong round")
                assert "Adams,Mic" in monitor.estimator.players  # the phantom-to-be
                await until(lambda: monitor.counters.withdrawn >= 1, 60, "the withdrawal")
                await monitor.drain()
                await until(lambda: any(f.get("message", {}).get("kind") == "player_removed" for f in frames), 10,
                            "the removals on the WebSocket")
                reading.cancel()
                await ws.close()
        finally:
            monitor.stop()
            await asyncio.wait_for(run, 60)
    print(f"served: {served[:len(plan)]} + {len(served) - len(plan)} more; withdrawn {monitor.counters.withdrawn}")
    assert withdrawn_before_fix == [0], "a cut, failed or emptied body withdrew a game"
    assert monitor.counters.withdrawn == 1 and old_gid not in monitor.games

    # the WebSocket client saw the board and the phantom player go, on every channel it watched
    removals = [f for f in frames if f["type"] == "delta" and f["message"]["kind"].endswith("_removed")]
    board = [f for f in removals if f["message"]["kind"] == "board_removed"]
    assert len(board) == 1 and board[0]["message"]["game_id"] == old_gid
    assert set(board[0]["channels"]) == {"games", f"game:{old_gid}"}
    assert "no longer listed" in board[0]["message"]["reason"] and "feed web" in board[0]["message"]["reason"]
    assert [f["message"]["name"] for f in removals if f["message"]["kind"] == "player_removed"] == ["Adams,Mic"]
    assert not [k for k in monitor.hub.snapshot("games")[1] if k.game_id == old_gid]  # type: ignore[attr-defined]
    assert monitor.hub.snapshot(f"game:{old_gid}")[1][0].kind == "board_removed"
    assert {p.name for p in monitor.hub.snapshot("players")[1]} <= {  # type: ignore[attr-defined]
        "McShane,L", "Carlsen,M", "Nakamura,Hi", "Aronian,L", "Howell,D", "Adams,Mi", "Short,N", "Kramnik,V"}

    # the store: the final round exactly, 0 phantom plies, no "#2" game
    def mainlines(text: str) -> dict[tuple[str, str], list[str]]:
        out = {}
        for chunk, _ in split_games(text):
            g = chess.pgn.read_game(io.StringIO(chunk))
            out[(g.headers["White"], g.headers["Black"])] = [m.uci() for m in g.mainline_moves()]
        return out

    with Store(cfg.store.path) as store:
        stored = {(info.white, info.black): [m.uci for m in moves] for info, _, moves in store.games.load()}
        assert not [info.game_id for info, _, _ in store.games.load() if "#" in info.game_id]
        live = export_report(store, cfg)
    assert stored == mainlines(right)
    # the batch run reads the analyses the engine gave the live run (searched once): the figures made of
    # them are the subject, not the search
    assert copy_analyses(cfg.store.path, tmp_path / "batch.sqlite") > 0
    batch = await run_cli(capsys, "analyse", "--json", str(truth), "--depth", str(DEPTH), "--config",
                          str(tmp_path / "config.toml"), "--store", str(tmp_path / "batch.sqlite"))
    assert live["players"] == batch["players"]  # McShane's moves, every figure: as if the round was never wrong
    key = lambda g: (g["white"], g["black"])  # noqa: E731
    assert sorted(live["games"], key=key) == sorted(batch["games"], key=key)
    mcshane = next(p for p in live["players"] if p["name"] == "McShane,L")
    assert mcshane["moves"] == next(p for p in batch["players"] if p["name"] == "McShane,L")["moves"]
    assert "Adams,Mic" not in {p["name"] for p in live["players"]}
    lines = [r.getMessage() for r in caplog.records if "listed 2 times" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("feed web: ")
    said = [r.getMessage() for r in caplog.records if " withdrawn: " in r.getMessage()]
    assert len(said) == 1 and said[0].startswith(f"game {old_gid} withdrawn: feed web: no longer listed (")
    assert not [r for r in caplog.records if r.exc_info] and "Traceback" not in caplog.text


# -- the faces: the overlay page in headless Chromium, MQTT out against a real mosquitto ---------------------

from tests.test_overlay import CDP, board as overlay_board, browser, estimate, text  # noqa: E402,F401


async def test_the_overlay_says_a_game_was_withdrawn_and_follows_another(browser: CDP) -> None:  # noqa: F811
    from livemon.faces.hub import Hub
    from livemon.live.messages import BoardRemoved, PlayerRemoved

    hub = Hub()
    hub.publish(overlay_board("r2-b3", "Howell, David", "Adams, Mic", 30, 20))
    hub.publish(overlay_board("r2-b4", "Short, Nigel", "Kramnik, Vladimir", 40, -35))
    hub.publish(estimate("Adams, Mic", 2650.0, 2550.0, 2750.0))
    async with serve_web(hub, WebConfig(port=0, host="127.0.0.1")) as srv:
        await browser.call("Page.enable")
        await browser.navigate(f"{srv.url}/overlay?game=r2-b3")
        await browser.wait_for(text("black-perf"), "2650")
        assert await browser.js(text("withdrawn")) == ""
        hub.publish(BoardRemoved("r2-b3", "feed hall: no longer listed (3 whole reads in a row, over 10 s)"))
        hub.publish(PlayerRemoved("Adams, Mic", "feed hall: no longer listed"))
        await browser.wait_for(text("withdrawn"), "withdrawn")
        assert await browser.js("document.getElementById('withdrawn').title") == (
            "feed hall: no longer listed (3 whole reads in a row, over 10 s)")
        assert await browser.js(text("white-name")) == "Howell, David"  # the last board stays, dimmed
        assert await browser.js("document.body.classList.contains('withdrawn')") is True
        await browser.wait_for(text("black-perf"), "—")  # the phantom player's figures are gone
        # opened after the withdrawal: the game channel's last word is the removal
        await browser.navigate(f"{srv.url}/overlay?game=r2-b3")
        await browser.wait_for(text("withdrawn"), "withdrawn")
        # without ?game the page never shows a withdrawn game: it follows one still listed
        await browser.navigate(f"{srv.url}/overlay")
        await browser.wait_for(text("white-name"), "Short, Nigel")
        assert await browser.js(text("withdrawn")) == ""
        # the game listed again (a correction undone): shown as before
        await browser.navigate(f"{srv.url}/overlay?game=r2-b3")
        await browser.wait_for(text("withdrawn"), "withdrawn")
        hub.publish(overlay_board("r2-b3", "Howell, David", "Adams, Mic", 31, 25))
        await browser.wait_for(text("withdrawn"), "")
        assert await browser.js("document.body.classList.contains('withdrawn')") is False


async def test_mqtt_out_clears_the_retained_topics_of_what_was_withdrawn(tmp_path: Path) -> None:
    from livemon.faces.hub import Hub
    from livemon.faces.mqtt import MqttPublisher
    from livemon.live.messages import BoardRemoved, BoardState, PlayerEstimate, PlayerRemoved, TTTRating
    from tests.conftest import free_port, mosquitto
    from tests.test_mqtt_out import ACL, ARBITER, PREFIX, cfg, collect, running as publishing, wait_until

    port = free_port()
    hub = Hub()
    fen = chess.STARTING_FEN
    with mosquitto(tmp_path, port, ACL):
        publisher = MqttPublisher(hub, cfg(port))
        async with publishing(publisher):
            await asyncio.wait_for(publisher.connected.wait(), 10)
            for gid, black in (("r2/b3", "Adams, Mic"), ("r2/b4", "Kramnik, V")):
                hub.publish(BoardState(gid, "Howell, D", black, 2633, 2706, fen, 10))
                hub.publish(PlayerEstimate(black, 2700, 5, -10.0, 0.4, -60.0, 2650.0))
                hub.publish(TTTRating(black, 1.0, 0.2, 2700.0, 40.0, 1))
            await wait_until(lambda: publisher.last_seq == hub.seq)
            before = await collect(port, f"{PREFIX}/#", 0.5)
            hub.publish(BoardRemoved("r2/b3", "withdrawn"))
            hub.publish(PlayerRemoved("Adams, Mic", "withdrawn"))
            await wait_until(lambda: publisher.last_seq == hub.seq)
            after = await collect(port, f"{PREFIX}/#", 0.5)  # a late subscriber: only what is retained
    gone = {f"{PREFIX}/games/r2%2Fb3", f"{PREFIX}/players/Adams, Mic", f"{PREFIX}/ttt/Adams, Mic"}
    assert gone <= set(before)
    assert set(before) - set(after) == gone and len(after) == len(before) - 3
    assert after[f"{PREFIX}/games/r2%2Fb4"][0]["black"] == "Kramnik, V"
    assert not [t for t in after if t.startswith(ARBITER)]
    assert not publisher.retained & gone and publisher.retained >= set(after) - {f"{PREFIX}/online"}
