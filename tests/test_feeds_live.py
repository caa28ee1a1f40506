"""Each feed against a real local source: files rewritten by the test, HTTP servers
started by the test (plain, ETag/304, chunked stream, with injected faults),
a real mosquitto broker, and the replay clock."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

import chess
import chess.pgn
import pytest

from livemon.config import (BrokerConfig, FileFeedConfig, HttpFeedConfig, MqttFeedConfig, ReplayFeedConfig,
                            StreamFeedConfig)
from livemon.io.broker import BrokerSettings
from livemon.io.feeds import open_feed, open_feeds
from livemon.io.feeds.file import FileFeed
from livemon.io.feeds.http import HttpFeed
from livemon.io.feeds.mqtt import MqttFeed
from livemon.io.feeds.replay import ReplayFeed
from livemon.io.feeds.stream import StreamFeed
from livemon.live.messages import FeedError, FeedNotice, GameInfo, GameResult, GameRollback, Message, MoveEvent

from conftest import REAL
BROADCAST = REAL / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"


# ------------------------------------------------------------------ helpers
def real_games(name: str = BROADCAST.name, n: int | None = None) -> list[chess.pgn.Game]:
    """The games of a real file (the first ``n``: the rest not read)."""
    out = []
    with open(REAL / name, encoding="utf-8") as f:
        while (n is None or len(out) < n) and (g := chess.pgn.read_game(f)) is not None:
            out.append(g)
    return out


class Rebuilt:
    """Move lists rebuilt from MoveEvents and GameRollbacks; a duplicate or a gap fails at once."""

    def __init__(self) -> None:
        self.moves: dict[str, list[str]] = {}
        self.results: dict[str, str] = {}
        self.infos: dict[str, GameInfo] = {}
        self.counts: Counter[str] = Counter()
        self.errors: list[FeedError] = []

    def add(self, m: Message) -> None:
        self.counts[type(m).__name__] += 1
        if isinstance(m, MoveEvent):
            lst = self.moves.setdefault(m.game_id, [])
            assert m.game_id in self.infos, "a move before its GameInfo"
            assert m.ply == len(lst) + 1, f"{m.game_id}: ply {m.ply} after {len(lst)} (duplicate or gap)"
            lst.append(m.uci)
        elif isinstance(m, GameRollback):
            lst = self.moves[m.game_id]
            assert 1 <= m.from_ply <= len(lst)
            del lst[m.from_ply - 1:]
        elif isinstance(m, GameInfo):
            assert m.game_id not in self.infos, "GameInfo twice"
            self.infos[m.game_id] = m
        elif isinstance(m, GameResult):
            assert m.game_id not in self.results, "GameResult twice"
            self.results[m.game_id] = m.result
        elif isinstance(m, FeedError):
            self.errors.append(m)


@contextlib.asynccontextmanager
async def running(feed: Any, sink: Rebuilt | list[Message]) -> AsyncIterator[None]:
    """Iterate ``feed`` in a task for the duration of the block."""
    agen = feed.__aiter__()

    async def pump() -> None:
        async for m in agen:
            sink.add(m) if isinstance(sink, Rebuilt) else sink.append(m)

    task = asyncio.create_task(pump())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await agen.aclose()
        if task.done() and not task.cancelled() and task.exception():
            raise task.exception()  # type: ignore[misc]


async def until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def pgn_of(game: chess.pgn.Game, ucis: list[str], result: str = "*") -> str:
    """A game's PGN with the given moves; comments ([%clk], [%eval]) kept where the move is the real one."""
    g = chess.pgn.Game()
    for k, v in game.headers.items():
        g.headers[k] = v
    g.headers["Result"] = result
    real = list(game.mainline())
    node: chess.pgn.GameNode = g
    same = True
    for i, u in enumerate(ucis):
        same = same and i < len(real) and real[i].move.uci() == u
        node = node.add_main_variation(chess.Move.from_uci(u), comment=real[i].comment if same else "")
    return str(g) + "\n\n"


@dataclass
class Timeline:
    """Games growing 3 plies a step, with injected wrong moves corrected at the next step."""

    games: list[chess.pgn.Game]
    seed: int = 1
    steps: list[list[tuple[list[str], str]]] = field(default_factory=list)
    corrections: int = 0

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        truths = [[m.uci() for m in g.mainline_moves()] for g in self.games]
        longest = max(len(t) for t in truths)
        step = 0
        while True:
            versions = []
            for i, (g, t) in enumerate(zip(self.games, truths)):
                n = min(len(t), 3 * step + i)
                ucis = t[:n]
                if 2 <= n < len(t) and rng.random() < 0.15:  # the board misread a move
                    b = chess.Board()
                    for u in ucis[:-1]:
                        b.push_uci(u)
                    wrong = rng.choice([m for m in b.legal_moves if m.uci() != ucis[-1]])
                    ucis = ucis[:-1] + [wrong.uci()]
                    self.corrections += 1
                versions.append((ucis, g.headers["Result"] if n == len(t) else "*"))
            self.steps.append(versions)
            if 3 * step >= longest:
                break
            step += 1
        self.truth = {g.headers["Site"]: t for g, t in zip(self.games, truths)}
        self._cache: dict[tuple[int, tuple[str, ...], str], str] = {}

    def game_text(self, step: int, i: int) -> str:
        ucis, result = self.steps[min(step, len(self.steps) - 1)][i]
        key = (i, tuple(ucis), result)
        if key not in self._cache:
            self._cache[key] = pgn_of(self.games[i], ucis, result)
        return self._cache[key]

    def text(self, step: int) -> str:
        return "".join(self.game_text(step, i) for i in range(len(self.games)))

    @property
    def last(self) -> int:
        return len(self.steps) - 1


class MiniHttp:
    """A tiny HTTP/1.1 server on 127.0.0.1 (one request per connection); the handler writes the response."""

    def __init__(self, handler: Callable[[str, dict[str, str], asyncio.StreamWriter], Awaitable[None]]) -> None:
        self.handler = handler
        self.requests: list[dict[str, str]] = []

    async def __aenter__(self) -> "MiniHttp":
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/round.pgn"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {ln.split(":", 1)[0].lower(): ln.split(":", 1)[1].strip() for ln in lines[1:] if ":" in ln}
            self.requests.append(headers)
            await self.handler(lines[0].split(" ")[1], headers, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


def response(status: str, body: bytes = b"", **headers: str) -> bytes:
    h = "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n{h}\r\n".encode() + body


def etag_of(body: bytes) -> str:
    return '"' + hashlib.md5(body).hexdigest() + '"'


# ------------------------------------------------------------------ file
async def test_file_rewritten_in_place_half_writes_and_a_correction(tmp_path):
    games = real_games(n=4)
    tl = Timeline(games, seed=3)
    path = tmp_path / "round.pgn"
    path.write_text("")
    feed = FileFeed("board-pc", path, interval=0.01)
    got = Rebuilt()
    half_reads = 0
    async with running(feed, got):
        for step in range(tl.last + 1):
            data = tl.text(step).encode()
            with open(path, "r+b") as f:  # rewritten in place, in two writes, like a naive writer
                f.truncate(0)
                cut = random.Random(step).randrange(len(data))
                f.write(data[:cut])
                f.flush()
                os.fsync(f.fileno())
                if step % 3 == 0:  # leave it half-written long enough to be read
                    await asyncio.sleep(0.03)
                    half_reads += 1
                f.write(data[cut:])
            await asyncio.sleep(0.03)
        await until(lambda: got.moves == tl.truth, 5, "the file feed to catch up")
    assert got.moves == tl.truth
    assert got.results == {g.headers["Site"]: g.headers["Result"] for g in games}
    assert not got.errors
    # rollbacks only for the injected wrong moves (at most one undo for each, one for its fix)
    assert got.counts["GameRollback"] <= 2 * tl.corrections
    assert tl.corrections > 0 and half_reads > 5
    assert feed.reads > tl.last + 1  # some reads saw a half-written file
    assert feed.status.state == "stopped" and feed.status.games == 4
    assert feed.status.plies == sum(len(t) for t in tl.truth.values())


async def test_file_without_result_marker_is_read_once_it_settles(tmp_path):
    """A writer that never ends the game with * : the game is used once the file stops changing."""
    g = real_games(n=1)[0]
    ucis = [m.uci() for m in g.mainline_moves()]
    text = pgn_of(g, ucis[:20]).rstrip().removesuffix("*").rstrip()
    path = tmp_path / "game-1.pgn"
    path.write_text(text + "\n")
    got = Rebuilt()
    feed = FileFeed("no-star", path, interval=0.01)
    async with running(feed, got):
        await until(lambda: got.counts["MoveEvent"] == 20, 5, "the settled game")
        path.write_text(pgn_of(g, ucis[:22]).rstrip().removesuffix("*").rstrip())  # no newline: last ply may be cut
        await until(lambda: got.counts["MoveEvent"] == 21, 5, "the next plies")
        await asyncio.sleep(0.1)
    assert got.moves == {g.headers["Site"]: ucis[:21]} and got.counts["GameRollback"] == 0
    assert got.infos[g.headers["Site"]].black_elo == 2350 and not got.results


async def test_dgt_round_folder(tmp_path):
    games = real_games(n=7)[4:]
    rnd = tmp_path / "live" / "round-1"
    rnd.mkdir(parents=True)
    texts = []
    for i, g in enumerate(games, start=1):
        ucis = [m.uci() for m in g.mainline_moves()]
        text = pgn_of(g, ucis, g.headers["Result"])
        if i == 2:  # LiveChess: [%clk] and [%emt] in separate comments, and the kings put in the centre
            text = text.replace("] }", "] } { [%emt 0:00:07] }", 3)
            n = len(ucis)
            mark = f"{n // 2 + 1}. Ke4 Kd4" if n % 2 == 0 else f"{n // 2 + 1}... Ke4"
            body, res = text.rstrip().rsplit(" ", 1)
            text = f"{body} {mark} {res}\n"
        (rnd / f"game-{i}.pgn").write_text(text)
        texts.append(text)
    # the combined file is stale (written earlier): it must not be read when game files exist
    (rnd / "games.pgn").write_text(pgn_of(games[0], [m.uci() for m in games[0].mainline_moves()][:10]))
    got = Rebuilt()
    msgs: list[Message] = []
    feed = FileFeed("dgt", tmp_path / "live", follow=False)
    async for m in feed:
        got.add(m)
        msgs.append(m)
    assert got.moves == {g.headers["Site"]: [m.uci() for m in g.mainline_moves()] for g in games}
    assert not got.errors and got.counts["GameRollback"] == 0
    notes = [m for m in msgs if isinstance(m, FeedNotice)]
    assert notes and all("dropping DGT end-of-game king move" in n.message and n.feed == "dgt" for n in notes)
    assert feed.status.errors == 0 and feed.status.plies == got.counts["MoveEvent"]  # a notice is no error, no ply
    emts = [m.emt for m in msgs if isinstance(m, MoveEvent) and m.game_id == games[1].headers["Site"]][:4]
    assert emts == [7.0, 7.0, 7.0, None]


# ------------------------------------------------------------------ http
async def test_http_etag_304_and_if_modified_since():
    games = real_games(n=3)
    state = {"text": "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:20]) for g in games)}
    counts = Counter()

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        body = state["text"].encode()
        tag = etag_of(body)
        if headers.get("if-none-match") == tag:
            counts[304] += 1
            w.write(response("304 Not Modified", ETag=tag))
        else:
            counts[200] += 1
            w.write(response("200 OK", body, ETag=tag, Last_Modified="Thu, 27 Feb 2025 16:37:58 GMT",
                             Content_Type="application/x-chess-pgn"))
        await w.drain()

    got = Rebuilt()
    async with MiniHttp(handler) as srv:
        feed = HttpFeed("lichess-round", srv.url, interval=0.01)
        async with running(feed, got):
            await until(lambda: counts[304] >= 5, 5, "conditional polls")
            assert counts[200] == 1 and sum(len(v) for v in got.moves.values()) == 60
            state["text"] = "".join(pgn_of(g, [m.uci() for m in g.mainline_moves()][:30]) for g in games)
            await until(lambda: sum(len(v) for v in got.moves.values()) == 90, 5, "the changed round")
            # a body whose last game has no result marker: used once a 304 says it is not being written
            state["text"] += '[Event "Extra"]\n[Site "Oslo"]\n[Round "1.9"]\n[White "X"]\n[Black "Y"]\n\n1. e4 e5 2. Nf3\n'
            await until(lambda: got.counts["GameInfo"] == 4 and got.counts["MoveEvent"] == 93, 5, "the settled game")
        assert srv.requests[-1].get("if-modified-since") == "Thu, 27 Feb 2025 16:37:58 GMT"
    assert counts[200] == 3 and feed.not_modified == counts[304] >= 5
    assert got.counts["MoveEvent"] == 93 and got.counts["GameInfo"] == 4 and not got.errors


async def test_http_faults_lose_and_duplicate_nothing():
    """≥100 injected faults: refused/dropped connections, 500s, truncated bodies, cut-off bodies, re-sends, corrections."""
    tl = Timeline(real_games(n=6), seed=11)
    rng = random.Random(5)
    faults: Counter[str] = Counter()
    clean_final = [0]
    served = [0]

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        step = min(served[0] // 2, tl.last)
        served[0] += 1
        body = tl.text(step).encode()
        r = rng.random()
        if r < 0.12:
            faults["dropped before response"] += 1
            return
        if r < 0.24:
            faults["HTTP 500"] += 1
            w.write(response("500 Internal Server Error", b"oops"))
        elif r < 0.36:  # the file behind the server is half-written: a valid, short 200
            faults["truncated PGN"] += 1
            cut = body[: rng.randrange(1, len(body))]
            w.write(response("200 OK", cut, ETag=etag_of(cut)))
        elif r < 0.46:  # the connection breaks in the middle of the body
            faults["dropped mid-body"] += 1
            full = response("200 OK", body, ETag=etag_of(body))
            w.write(full[: rng.randrange(len(full) - len(body) + 1, len(full))])
        elif headers.get("if-none-match") == etag_of(body) and r < 0.54:
            faults["whole round re-sent despite a matching ETag"] += 1
            w.write(response("200 OK", body, ETag=etag_of(body)))
        elif headers.get("if-none-match") == etag_of(body):
            w.write(response("304 Not Modified", ETag=etag_of(body)))
        else:
            w.write(response("200 OK", body, ETag=etag_of(body)))
            clean_final[0] += step == tl.last
        await w.drain()

    got = Rebuilt()
    async with MiniHttp(handler) as srv:
        feed = HttpFeed("faulty", srv.url, interval=0.002, max_backoff=0.02)
        async with running(feed, got):
            await until(lambda: sum(faults.values()) >= 110 and clean_final[0] >= 2 and got.moves == tl.truth, 40,
                        f"the feed to converge (faults {dict(faults)}, moves equal {got.moves == tl.truth})")
    injected = sum(faults.values()) + tl.corrections
    print(f"http faults injected: {dict(faults)} + {tl.corrections} corrections = {injected}; "
          f"requests {served[0]}, rollbacks {got.counts['GameRollback']}, errors {feed.status.errors}")
    assert got.moves == tl.truth  # 0 plies lost; duplicates would have failed Rebuilt.add
    assert got.results == {g.headers["Site"]: g.headers["Result"] for g in tl.games}
    assert injected >= 100 and tl.corrections >= 5
    assert min(faults[k] for k in ("dropped before response", "HTTP 500", "truncated PGN", "dropped mid-body")) >= 10
    # transport faults are counted in the status, but none is a game error
    assert feed.status.errors >= faults["dropped before response"] + faults["HTTP 500"]
    assert all(e.game_id is None for e in got.errors)


# ------------------------------------------------------------------ stream
def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def test_stream_chunked_every_game_then_changes_then_reconnect():
    games = real_games(n=4)
    truths = [[m.uci() for m in g.mainline_moves()] for g in games]
    updates: asyncio.Queue[bytes | None] = asyncio.Queue()
    connections = [0]
    state = {i: 10 for i in range(4)}

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        connections[0] += 1
        w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i, g in enumerate(games):  # every game once
            w.write(chunk(pgn_of(g, truths[i][: state[i]]).encode()))
        await w.drain()
        while (item := await updates.get()) is not None:
            w.write(chunk(item))
            await w.drain()
        w.write(b"0\r\n\r\n")  # the round stream ends (lichess closes it after a while)
        await w.drain()

    got = Rebuilt()
    async with MiniHttp(handler) as srv:
        feed = StreamFeed("round-stream", srv.url, reconnect=0.01)
        async with running(feed, got):
            await until(lambda: got.counts["MoveEvent"] == 40, 5, "the first pass")
            for n in (11, 12, 13):  # game 2 changes three times; its whole PGN is sent each time, in pieces
                state[1] = n
                text = pgn_of(games[1], truths[1][:n]).encode()
                for k in range(0, len(text), 97):
                    await updates.put(text[k:k + 97])
            await until(lambda: len(got.moves[games[1].headers["Site"]]) == 13, 5, "the changes")
            await updates.put(None)  # end of stream: the feed reconnects and gets every game again
            await until(lambda: connections[0] >= 2, 5, "the reconnect")
            await asyncio.sleep(0.05)
            await updates.put(None)
    assert feed.connections >= 2
    assert got.counts["MoveEvent"] == 43 and got.counts["GameRollback"] == 0 and not got.errors
    assert [len(got.moves[g.headers["Site"]]) for g in games] == [10, 13, 10, 10]


async def test_stream_faults_lose_and_duplicate_nothing():
    tl = Timeline(real_games(n=6), seed=12)
    rng = random.Random(9)
    faults: Counter[str] = Counter()
    step = [0]
    finals = [0]

    async def handler(path: str, headers: dict[str, str], w: asyncio.StreamWriter) -> None:
        if rng.random() < 0.15:
            faults["HTTP 500"] += 1
            w.write(response("500 Internal Server Error", b"busy"))
            await w.drain()
            return
        w.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-chess-pgn\r\nTransfer-Encoding: chunked\r\n\r\n")
        sent = {}
        first = True
        while True:
            for i in range(len(tl.games)):
                text = tl.game_text(step[0], i)
                if not first and sent.get(i) == text:
                    if rng.random() < 0.03:
                        faults["game re-sent unchanged"] += 1
                    else:
                        continue
                data = text.encode()
                if rng.random() < 0.04:  # the connection breaks in the middle of a game
                    faults["dropped mid-game (truncated PGN)"] += 1
                    w.write(chunk(data[: rng.randrange(1, len(data))]))
                    await w.drain()
                    return
                for k in range(0, len(data), 512):
                    w.write(chunk(data[k:k + 512]))
                sent[i] = text
            first = False
            await w.drain()
            if step[0] == tl.last:
                finals[0] += 1
            step[0] = min(step[0] + 1, tl.last)
            await asyncio.sleep(0.001)
            if rng.random() < 0.02:
                w.write(b"0\r\n\r\n")  # a clean end; the feed reconnects (not a fault)
                await w.drain()
                return

    got = Rebuilt()
    async with MiniHttp(handler) as srv:
        feed = StreamFeed("faulty-stream", srv.url, reconnect=0.002, max_backoff=0.02)
        async with running(feed, got):
            await until(lambda: sum(faults.values()) >= 110 and finals[0] >= 3 and got.moves == tl.truth, 40,
                        f"the stream to converge (faults {dict(faults)})")
    injected = sum(faults.values()) + tl.corrections
    print(f"stream faults injected: {dict(faults)} + {tl.corrections} corrections = {injected}; "
          f"connections {feed.connections}, rollbacks {got.counts['GameRollback']}")
    assert got.moves == tl.truth
    assert got.results == {g.headers["Site"]: g.headers["Result"] for g in tl.games}
    assert injected >= 100 and min(faults.values()) >= 5 and len(faults) == 3
    assert all(e.game_id is None for e in got.errors)


# ------------------------------------------------------------------ mqtt
@pytest.fixture
def mosquitto(broker):
    """The port of a real mosquitto (tests/conftest.py starts it)."""
    return broker.port


async def test_mqtt_moves_duplicates_gaps_illegal_corrections(mosquitto):
    import aiomqtt

    g = real_games(n=1)[0]
    nodes = list(g.mainline())[:12]
    feed = MqttFeed("boards", "livemon/test/moves/#", BrokerSettings("127.0.0.1", mosquitto))
    msgs: list[Message] = []

    def mv(ply: int, uci: str, **extra: Any) -> str:
        return json.dumps({"game": "board-7", "ply": ply, "uci": uci, **extra})

    async with running(feed, msgs), aiomqtt.Client("127.0.0.1", mosquitto) as pub:
        await asyncio.wait_for(feed.connected.wait(), 5)
        topic = "livemon/test/moves/board-7"
        first = {"white": "Malka, Samuel", "black": "Hernandez, Cristian Andres", "white_elo": 2211, "black_elo": 2350,
                 "event": "BBDDNRR", "round": "1.1"}
        for i, node in enumerate(nodes[:10], start=1):
            await pub.publish(topic, mv(i, node.move.uci(), clock=node.clock(), **(first if i == 1 else {})), qos=1)
            if i == 5:
                await pub.publish(topic, mv(5, node.move.uci()), qos=1)  # duplicate: ignored
        await pub.publish(topic, mv(13, nodes[11].move.uci()), qos=1)  # out of order: held for plies 11 and 12
        await pub.publish(topic, mv(11, "e1e8"), qos=1)  # illegal
        await pub.publish(topic, b"{not json", qos=1)
        await pub.publish(topic, mv(9, "a2a3"), qos=1)  # correction of ply 9 (White's 5th move)
        await pub.publish(topic, mv(10, "a7a6", result="1/2-1/2"), qos=1)
        await until(lambda: any(isinstance(m, GameResult) for m in msgs), 5, "the result")
    got = Rebuilt()
    for m in msgs:
        got.add(m)
    truth = [n.move.uci() for n in nodes]
    assert got.moves == {"board-7": truth[:8] + ["a2a3", "a7a6"]}
    assert got.infos["board-7"].white_elo == 2211 and got.infos["board-7"].round == "1.1"
    assert got.results == {"board-7": "1/2-1/2"}
    assert [m.from_ply for m in msgs if isinstance(m, GameRollback)] == [9]
    errors = [m.message for m in msgs if isinstance(m, FeedError)]
    assert len(errors) == 2 and "illegal" in errors[0] and "bad message" in errors[1]
    first_moves = [m for m in msgs if isinstance(m, MoveEvent)]
    assert first_moves[0].clock == nodes[0].clock() and first_moves[0].san == "d4"
    assert feed.handler.duplicates == 1 and feed.handler.held == 1 and feed.status.errors == 2


# ------------------------------------------------------------------ replay
async def test_replay_interleaves_a_round_as_fast_as_possible():
    feed = ReplayFeed("demo", BROADCAST, speed=0)
    msgs = [m async for m in feed]
    got = Rebuilt()
    for m in msgs:
        got.add(m)
    games = real_games()
    assert got.moves == {g.headers["Site"]: [m.uci() for m in g.mainline_moves()] for g in games}
    assert len(got.results) == 45 and feed.status.state == "finished" and feed.slept == 0
    # every board of round 1 is shown before the round's first move, and the boards interleave
    r1 = {g.headers["Site"] for g in games if g.headers["Round"].split(".")[0] == "1"}
    first_move = next(i for i, m in enumerate(msgs) if isinstance(m, MoveEvent))
    assert {m.game_id for m in msgs[:first_move] if isinstance(m, GameInfo)} == r1
    order = [m.game_id for m in msgs if isinstance(m, MoveEvent) and m.game_id in r1]
    assert len(set(order[:2 * len(r1)])) == len(r1)
    # a round starts only after the previous one is over
    last_r1 = max(i for i, m in enumerate(msgs) if getattr(m, "game_id", None) in r1)
    first_other = min(i for i, m in enumerate(msgs) if isinstance(m, GameInfo) and m.game_id not in r1)
    assert last_r1 < first_other


async def test_replay_uses_emt_and_clk_scaled_and_capped(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text(
        '[Round "1"]\n[White "A"]\n[Black "B"]\n[TimeControl "60+1"]\n[Result "1-0"]\n\n'
        "1. e4 { [%emt 0:00:20] } e5 { [%emt 0:00:10] } 2. Nf3 { [%clk 0:00:40] } Nc6 { [%clk 0:00:50] } "
        "3. Bb5 { [%clk 0:00:31] } a6 { [%clk 0:00:21] } 4. Ba4 1-0\n\n"
        '[Round "1"]\n[White "C"]\n[Black "D"]\n[Result "0-1"]\n\n1. d4 { [%emt 0:00:15] } 0-1\n'
    )
    # think times: 20, 10, default 2, default 2, 40-31+1=10, 50-21+1=30, default 2
    feed = ReplayFeed("r", pgn, speed=100, max_delay=0.25, default_delay=2)
    t0 = time.monotonic()
    msgs = [m async for m in feed]
    took = time.monotonic() - t0
    moves = [(m.game_id.split("|")[2], m.ply) for m in msgs if isinstance(m, MoveEvent)]
    # at 100x: C-D ply 1 at 0.15 s, A-B ply 1 at 0.20 s; gaps capped at 0.25 s (the 30 s think -> 0.25)
    assert moves[0] == ("C", 1) and moves[1] == ("A", 1)
    expected = 0.15 + 0.05 + 0.1 + 0.02 + 0.02 + 0.1 + 0.25 + 0.02
    assert feed.slept == pytest.approx(expected, abs=1e-6)
    assert expected - 0.02 <= took < expected + 1.0


# ------------------------------------------------------------------ factory
def test_open_feed_builds_each_type(tmp_path):
    cfgs = [
        FileFeedConfig(name="f", path=str(tmp_path)),
        HttpFeedConfig(name="h", url="http://127.0.0.1:1/x.pgn", interval=3),
        StreamFeedConfig(name="s", url="https://lichess.org/api/stream/broadcast/round/abc.pgn"),
        MqttFeedConfig(name="m", topic="t/#", broker=BrokerConfig(host="broker", port=1884)),
        ReplayFeedConfig(name="r", path=str(BROADCAST), speed=0, identity="tags"),
    ]
    feeds = open_feeds(cfgs)
    assert [type(f).__name__ for f in feeds] == ["FileFeed", "HttpFeed", "StreamFeed", "MqttFeed", "ReplayFeed"]
    assert feeds[1].interval == 3 and feeds[3].link.settings.where == "broker:1884"
    assert [f.status.to_dict()["state"] for f in feeds] == ["starting"] * 5
    with pytest.raises(Exception, match="two feeds"):
        open_feeds(cfgs + [cfgs[0]])


async def test_replay_with_tag_identity_and_status():
    feed = open_feed(ReplayFeedConfig(name="r", path=str(REAL / "byrne_fischer_1956_pgnmentor.pgn"), speed=0,
                                identity="tags"))
    msgs = [m async for m in feed]
    assert {m.game_id for m in msgs if isinstance(m, GameInfo)} == {"New York Rosenwald|?|Byrne, Donald|Fischer, Robert James"}
    st = feed.status.to_dict()
    assert st["plies"] == 82 and st["games"] == 1 and st["state"] == "finished" and st["last_message"] is not None
