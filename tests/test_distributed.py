"""Engine work over MQTT: a real mosquitto, real ``livemon worker`` subprocesses, a replayed real event (London
Chess Classic 2011). The engines are the scripted UCI engine of tests/fake_uci.py answering as Stockfish 15.1
(the bus, not the search, is the subject here; the real Stockfish's contract is tested in test_analyse.py and
test_pool.py)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

import aiomqtt
import chess
import chess.pgn
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from livemon.live.rules import needs_search
from livemon.io.bus import (
    ALIVE,
    AnalysisRequest,
    AnalysisResult,
    RemoteEnginePool,
    WorkerAnnouncement,
)
from livemon.io.broker import requests_topic, shared_requests_topic, workers_topic
from livemon.config import BROKER_KEYS, BrokerConfig, BusConfig, ConfigError, load_config, load_config_text
from livemon.io.engine import PositionAnalysis, position_key
from livemon.app.export import export_report
from livemon.app.monitor import Monitor
from livemon.live.pgn import split_games
from livemon.io.store import Store
from tests.conftest import REPO, mosquitto, real, stop_groups

DEPTH = 5
PROFILE = f"Stockfish 15.1 depth={DEPTH} multipv=4"


@pytest.fixture
def event(tmp_path: Path) -> Path:
    """The first four games of the London Chess Classic 2011 (rounds 1 and 2)."""
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:4]
    path = tmp_path / "london.pgn"
    path.write_text("\n".join(chunks))
    return path


def positions(pgn: Path) -> set[str]:
    """Every searched position of the games: the keys a complete event leaves in the cache."""
    keys: set[str] = set()
    for chunk, _ in split_games(pgn.read_text()):
        game = chess.pgn.read_game(io.StringIO(chunk))
        board = game.board()
        for move in [None, *game.mainline_moves()]:
            if move is not None:
                board.push(move)
            if needs_search(board):
                keys.add(position_key(board))
    return keys


def write_config(path: Path, port: int, *, mode: str = "mqtt", pgn: Path | None = None, engine: str = "", **bus: Any) -> Path:
    """A monitor config (with ``pgn``: a replay at full speed) or a worker config (``engine``: the engine's path)."""
    engine_line = f"path = {json.dumps(engine)}\n" if engine else ""
    text = (f'[engine]\n{engine_line}depth = {DEPTH}\nbacklog_high = 1000000\n[store]\npath = "{path.with_suffix(".sqlite")}"\n'
            f'[monitor]\nstatus_seconds = 0.2\nttt_debounce_seconds = 0.1\n'
            f'[bus]\nmode = "{mode}"\nmax_backoff = 1.0\n')
    text += "".join(f"{k} = {json.dumps(v)}\n" for k, v in bus.items() if k not in BROKER_KEYS)
    text += f'[broker]\nhost = "127.0.0.1"\nport = {port}\n'
    text += "".join(f"{k} = {json.dumps(v)}\n" for k, v in bus.items() if k in BROKER_KEYS)
    if pgn is not None:
        text += f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.05\n'
    path.write_text(text)
    return path


@contextlib.contextmanager
def workers(tmp_path: Path, port: int, n: int, engine: str = "", **bus: Any) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` real ``livemon worker`` processes (each its own session: killing it kills its engine too)."""
    procs = []
    try:
        for i in range(n):
            cfg = write_config(tmp_path / f"worker{i}.toml", port, engine=engine, **bus)
            log = open(tmp_path / f"worker{i}.log", "wb")
            procs.append(subprocess.Popen([sys.executable, "-m", "livemon.cli", "worker", "--config", str(cfg)],
                                          cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        yield procs
    finally:
        stop_groups(procs)


async def wait_for_workers(port: int, n: int, timeout: float = 60) -> None:
    """Until ``n`` workers have announced themselves (retained) on the broker."""
    seen: set[str] = set()
    async with asyncio.timeout(timeout), aiomqtt.Client("127.0.0.1", port) as client:
        await client.subscribe(workers_topic(BusConfig()), qos=1)
        async for msg in client.messages:
            if msg.payload:
                seen.add(str(msg.topic))
            if len(seen) >= n:
                return


async def until(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def replay(cfg_path: Path, during: Callable[[Monitor], Any] | None = None) -> tuple[Monitor, dict[str, Any]]:
    """Run the monitor on its replay until the event is scored (``during`` runs beside it); its export."""
    cfg = load_config(cfg_path)
    monitor = Monitor(cfg)
    run = asyncio.create_task(monitor.run(until_feeds_end=True))
    if during is not None:
        await during(monitor)
    await asyncio.wait_for(run, 240)
    monitor.store.close()
    with Store(cfg.store.path) as store:
        return monitor, export_report(store, cfg)


def cached_positions(cfg_path: Path) -> set[str]:
    with Store(load_config(cfg_path).store.path) as store:
        return {row[0] for row in store.engine.db.execute("SELECT position FROM analyses WHERE profile = ?", (PROFILE,))}


def assert_same_ttt(a: dict[str, Any], b: dict[str, Any]) -> None:
    """The TTT blocks of two runs of one event: equal up to the refresh tolerance.

    A live refresh sweeps only what the newly finished games move (to 1e-6 in beta units), so
    which games arrived together decides the last digits and the last refresh's sweep count.
    """
    assert a["model"] == b["model"] and a["players"].keys() == b["players"].keys()
    assert a["log_evidence"] == pytest.approx(b["log_evidence"], abs=1e-3)
    for name, r in a["players"].items():
        q = b["players"][name]
        assert {k: v for k, v in r.items() if not isinstance(v, float)} == {k: v for k, v in q.items() if not isinstance(v, float)}
        for key in ("mu", "sigma"):
            assert r[key] == pytest.approx(q[key], abs=1e-4), (name, key)
        for key in ("elo", "elo_sigma"):
            assert r[key] == pytest.approx(q[key], abs=0.02), (name, key)


async def test_two_workers_give_the_embedded_estimates(tmp_path, event, broker, fake_stockfish):
    embedded_monitor, embedded = await replay(write_config(tmp_path / "embedded.toml", broker.port, engine=fake_stockfish,
                                                           mode="embedded", pgn=event))
    with workers(tmp_path, broker.port, 2, engine=fake_stockfish):
        await wait_for_workers(broker.port, 2)
        monitor, live = await replay(write_config(tmp_path / "monitor.toml", broker.port, engine=fake_stockfish, pgn=event))
    bus = monitor.pool.status().to_dict()["bus"]
    for part in ("games", "players", "event"):
        assert live[part] == embedded[part], part
    assert_same_ttt(live["ttt"], embedded["ttt"])
    assert live["engine"]["profile"] == embedded["engine"]["profile"] == PROFILE
    # each position searched once, by one of the two workers, and both did their share
    assert live["engine"]["analyses"] == embedded["engine"]["analyses"] == len(positions(event))
    assert len(bus["answers_by_worker"]) == 2 and min(bus["answers_by_worker"].values()) > 0.2 * len(positions(event))
    assert bus["rerequests"] == bus["rejected"] == bus["duplicates"] == 0
    assert monitor.counters.failed_positions == embedded_monitor.counters.failed_positions == 0


async def test_a_worker_killed_mid_event_loses_no_position(tmp_path, event, broker, fake_stockfish):
    # asked again after 1 s: the broker keeps handing the frozen worker its share, which the other worker
    # takes only once asked again
    cfg = write_config(tmp_path / "monitor.toml", broker.port, engine=fake_stockfish, pgn=event, request_timeout=1.0)
    killed: dict[str, Any] = {}

    async def kill_one(monitor: Monitor) -> None:
        pool = monitor.pool
        assert isinstance(pool, RemoteEnginePool)
        await until(lambda: pool.counters.searches >= 60, 120, "the event under way")
        # frozen first, so that it surely holds requests when it dies (a live worker answering from its
        # cache in a millisecond may hold none): the broker keeps handing it its share meanwhile
        os.killpg(procs[0].pid, signal.SIGSTOP)
        answered = pool.counters.searches
        await until(lambda: pool.counters.searches >= answered + 20 and len(pool._outstanding) >= 2, 120,
                    "requests held by the frozen worker")
        killed["outstanding"] = len(pool._outstanding)
        killed["searches"] = pool.counters.searches
        # the pool's clock jumps ALIVE seconds ahead: the dead worker has been silent that long when its will
        # arrives, so the monitor forgets it at once (the test does not wait the seconds out)
        pool.clock = lambda: time.monotonic() + ALIVE
        os.killpg(procs[0].pid, signal.SIGKILL)  # the worker and its Stockfish, mid-search

    with workers(tmp_path, broker.port, 2, engine=fake_stockfish) as procs:
        await wait_for_workers(broker.port, 2)
        monitor, live = await replay(cfg, kill_one)
        assert procs[0].poll() == -signal.SIGKILL and procs[1].poll() is None
    status = monitor.pool.status().to_dict()
    assert killed["outstanding"] >= 2 and killed["searches"] < len(positions(event))
    assert monitor.counters.failed_positions == 0
    assert cached_positions(cfg) == positions(event)  # 0 positions lost
    assert sum(len(g.scored) for g in monitor.games.values()) == sum(g.plies for g in monitor.games.values())
    assert status["bus"]["requeued"] >= 1  # the dead worker's requests were asked for again
    assert len(status["bus"]["workers"]) == 1


async def test_the_broker_restarted_mid_event(tmp_path, event, broker, fake_stockfish):
    cfg = write_config(tmp_path / "monitor.toml", broker.port, engine=fake_stockfish, pgn=event, request_timeout=5.0)

    async def restart_broker(monitor: Monitor) -> None:
        pool = monitor.pool
        assert isinstance(pool, RemoteEnginePool)
        await until(lambda: pool.counters.searches >= 60, 120, "the event under way")
        broker.stop(kill=True)
        await asyncio.sleep(1.5)
        broker.start()

    with workers(tmp_path, broker.port, 2, engine=fake_stockfish) as procs:
        await wait_for_workers(broker.port, 2)
        monitor, _ = await replay(cfg, restart_broker)
        assert all(p.poll() is None for p in procs)  # the workers rode it out
    status = monitor.pool.status().to_dict()
    assert status["bus"]["connects"] >= 2
    assert monitor.counters.failed_positions == 0
    assert cached_positions(cfg) == positions(event)
    assert sum(len(g.scored) for g in monitor.games.values()) == sum(g.plies for g in monitor.games.values())
    for i in range(2):
        assert "retrying" in (tmp_path / f"worker{i}.log").read_text()


@contextlib.asynccontextmanager
async def results_client(port: int, topic: str) -> AsyncIterator[tuple[aiomqtt.Client, asyncio.Queue[AnalysisResult]]]:
    """A raw MQTT v5 client playing a monitor: it publishes requests and collects results on ``topic``."""
    got: asyncio.Queue[AnalysisResult] = asyncio.Queue()
    async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V5) as client:
        await client.subscribe(f"{topic}/+", qos=1)  # workers publish under <topic>/<their name>

        async def collect() -> None:
            async for msg in client.messages:
                got.put_nowait(AnalysisResult.parse(msg.payload))

        task = asyncio.create_task(collect())
        try:
            yield client, got
        finally:
            task.cancel()


def request_props(reply_to: str) -> Properties:
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = reply_to
    props.CorrelationData = b"test"
    return props


async def test_worker_analyses_a_repeated_request_once_and_rejects_bad_ones(tmp_path, broker, fake_stockfish):
    bus = BusConfig()
    reply = f"{bus.prefix}/results/test"
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    good = AnalysisRequest(board.fen(), PROFILE).to_json()
    with workers(tmp_path, broker.port, 1, engine=fake_stockfish, requests_per_engine=1) as (proc,):  # one request in hand at a time
        await wait_for_workers(broker.port, 1)
        async with results_client(broker.port, reply) as (client, got):
            topic = requests_topic(bus, PROFILE)
            for bad, props in [
                (b"not json", request_props(reply)),
                (json.dumps({"fen": "8/8/8/8/8/8/8/8 w - - 0 1", "profile": PROFILE}), request_props(reply)),
                (AnalysisRequest(board.fen(), "Stockfish 15.1 depth=30 multipv=4").to_json(), request_props(reply)),
                (good, request_props("livemon-arbiter/default/alerts/x")),  # a reply outside the bus: refused
            ]:
                await client.publish(topic, bad, qos=1, properties=props)
            await client.publish(topic, good, qos=1, properties=request_props(reply))
            await client.publish(topic, good, qos=1, properties=request_props(reply))
            first = await asyncio.wait_for(got.get(), 60)
            second = await asyncio.wait_for(got.get(), 60)
            await asyncio.sleep(0.5)
            assert got.empty()  # the four bad requests got no answer
        # Receive Maximum 1 (1 engine x 1 request): the repeat came after the first was answered, from the cache
        assert (first.cached, second.cached) == (False, True)
        assert first.analysis == second.analysis and first.key == position_key(board) and first.profile == PROFILE
        assert {m for m, _ in first.analysis.candidates} <= {m.uci() for m in board.legal_moves}
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0
    log = (tmp_path / "worker0.log").read_text()
    assert log.count("malformed request rejected") == 3 and "not JSON" in log and "not under livemon/bus/results/" in log
    assert "request for profile 'Stockfish 15.1 depth=30 multipv=4' rejected" in log
    assert "answered 2, searched 1, rejected 4" in log


async def test_monitor_dedups_and_rejects_bad_results(tmp_path, broker, caplog, fake_stockfish):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    bus = BusConfig(broker=BrokerConfig(host="127.0.0.1", port=broker.port), profile=PROFILE, max_backoff=1.0)
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    key = position_key(board)
    analysis = PositionAnalysis(50, (("e1e8", 50),), 5, 100)  # an illegal move
    with Store(tmp_path / "monitor.sqlite") as store:
        pool = RemoteEnginePool(bus, store.analyses, monitor_id="m1")
        await pool.start()  # the profile is configured: no worker needed yet
        try:
            await until(pool.connected.is_set, 10, "the monitor's connection")
            wanted = [asyncio.create_task(pool.submit(board)) for _ in range(2)]
            await until(lambda: any(k == key for k, _ in pool.queue.jobs), 5, "the request")
            async with aiomqtt.Client("127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5) as rogue:
                for payload in [
                    b"\xff garbage",
                    AnalysisResult(key, "Stockfish 15.1 depth=30 multipv=4", "rogue", analysis).to_json(),
                    AnalysisResult(key, PROFILE, "rogue", analysis).to_json(),
                    json.dumps({"key": key, "profile": PROFILE, "worker": "rogue", "analysis": {"score": "high"}}),
                ]:
                    await rogue.publish(pool.reply_topic, payload, qos=1)
            await until(lambda: pool.counters.rejected == 4, 10, "the four bad results")
            assert not any(t.done() for t in wanted)  # nothing accepted from them
            assert pool.counters.published == 0  # no worker yet: the request waits at the monitor
            with workers(tmp_path, broker.port, 1, engine=fake_stockfish):
                answers = await asyncio.wait_for(asyncio.gather(*wanted), 60)
            again = await pool.submit(board)
        finally:
            await pool.close()
    assert answers[0] == answers[1] and answers[0].analysis.candidates[0][0] != "e1e8"
    assert pool.counters.published == 1 and pool.counters.searches == 1 and pool.queue.counters.joined == 1
    assert again.cached and again.analysis == answers[0].analysis and pool.queue.counters.cache_hits == 1
    text = caplog.text
    assert "malformed result rejected: not JSON" in text
    assert "profile 'Stockfish 15.1 depth=30 multipv=4', this monitor uses 'Stockfish 15.1 depth=5 multipv=4'" in text
    assert "candidate 'e1e8' is not legal in the position" in text
    assert "malformed result rejected: 'analysis'" in text


def docs_acl() -> str:
    """The ACL of docs/distributed.md, as written there."""
    text = (REPO / "docs" / "distributed.md").read_text()
    start = text.index("# livemon bus ACL")
    return "\n".join(line.strip() for line in text[start : text.index("```", start)].splitlines()) + "\n"


def make_certificates(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A throw-away CA and a broker certificate for 127.0.0.1 (openssl)."""
    if not shutil.which("openssl"):
        pytest.fail("the openssl command is needed to make test certificates (apt-get install openssl)")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp_path, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
            "-subj", "/CN=livemon-test-ca", "-days", "2")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out", "broker.csr", "-subj", "/CN=127.0.0.1")
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "broker.crt", "-days", "2", "-extfile", "san.ext")
    return tmp_path / "ca.crt", tmp_path / "broker.crt", tmp_path / "broker.key"


async def test_tls_and_the_docs_acl_workers_work_but_cannot_read_alerts(tmp_path, fake_stockfish):
    ca, cert, key = make_certificates(tmp_path)
    listener = (f"certfile {cert}\nkeyfile {key}\ncafile {ca}\n"  # and the tuning lines of the docs
                "set_tcp_nodelay true\nmax_inflight_messages 20\nmax_queued_messages 1000\n")
    with mosquitto(tmp_path, acl=docs_acl(), listener=listener) as tls_broker:
        port = tls_broker.port
        with pytest.raises(aiomqtt.MqttError):  # TLS only
            async with aiomqtt.Client("127.0.0.1", port, timeout=3):
                pass
        tls = dict(tls=True, ca_file=str(ca))
        bus = BusConfig(broker=BrokerConfig(host="127.0.0.1", port=port, username="monitor", **tls), profile=PROFILE)
        with workers(tmp_path, port, 1, engine=fake_stockfish, username="worker1", **tls), Store(tmp_path / "m.sqlite") as store:
            async with RemoteEnginePool(bus, store.analyses) as pool:
                await until(lambda: pool.capacity > 0, 60, "the worker's announcement through TLS and the ACL")
                answer = await asyncio.wait_for(pool.submit(chess.Board()), 60)
                assert answer.profile.name == PROFILE and not answer.cached

        def client(user: str) -> aiomqtt.Client:
            return aiomqtt.Client("127.0.0.1", port, username=user, tls_params=aiomqtt.TLSParameters(ca_certs=str(ca)))

        seen: dict[str, list[str]] = {"worker1": [], "arbiter": []}

        async def listen(user: str) -> None:
            async with client(user) as c:
                await c.subscribe("livemon-arbiter/#", qos=1)
                await c.subscribe("livemon/bus/results/#", qos=1)
                await c.subscribe("livemon/default/#", qos=1)
                async for msg in c.messages:
                    seen[user].append(str(msg.topic))

        listeners = [asyncio.create_task(listen(u)) for u in seen]
        await asyncio.sleep(1.0)
        async with client("monitor") as monitor:
            await monitor.publish("livemon-arbiter/default/alerts/event/player", b"{}", qos=1, retain=True)
            await monitor.publish("livemon/default/status", b"{}", qos=1, retain=True)
        await asyncio.sleep(1.0)
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)
    assert sorted(seen["arbiter"]) == ["livemon-arbiter/default/alerts/event/player", "livemon/default/status"]
    assert seen["worker1"] == []  # no alerts, no public tree, no results of any monitor


@pytest.mark.parametrize("text, message", [
    ('[bus]\nmode = "cluster"', "bus.mode: expected embedded or mqtt, got 'cluster'"),
    ('[bus]\nprefix = "livemon/#"', "bus.prefix: expected a topic without wildcards"),
    ('[bus]\nshare_group = "a/b"', "bus.share_group"),
    ('[bus]\nrequest_timeout = 0', "bus.request_timeout: must be in 0.1..86400"),
    ('[bus]\ntls = true\ncert_file = "c.pem"', "bus.cert_file: cert_file and key_file go together"),
    ('[bus]\nca_file = "ca.pem"', "bus.ca_file: set only with tls = true"),
    ('[bus]\ntls = true\nca_file = "/nonexistent/ca.pem"', "bus.ca_file: no such file"),
])
def test_bad_bus_settings_name_the_key(text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("*", r"\*")):
        load_config_text(text)


async def test_a_request_nobody_answers_is_asked_again_after_the_timeout(tmp_path, broker, caplog, fake_stockfish):
    """A worker that answers with an error, then takes requests and never answers (hung, cut off):
    the monitor asks again each time, and a real worker answers."""
    caplog.set_level(logging.INFO, "livemon.io.bus")
    bus = BusConfig(broker=BrokerConfig(host="127.0.0.1", port=broker.port), profile=PROFILE, request_timeout=1.0,
                    max_backoff=1.0)
    swallowed: list[str] = []
    async with aiomqtt.Client("127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5) as silent:
        await silent.subscribe(shared_requests_topic(bus, PROFILE), qos=1)
        await silent.publish(workers_topic(bus, "silent"), WorkerAnnouncement("silent", "Stockfish 15.1", DEPTH, None, 4, 1).to_json(),
                             qos=1, retain=True)

        async def swallow() -> None:
            async for msg in silent.messages:
                request = AnalysisRequest.parse(msg.payload)
                swallowed.append(request.key)
                if len(swallowed) == 1:  # the first one: "my engines failed"
                    error = AnalysisResult(swallowed[0], PROFILE, "silent", error="engine died on it, twice",
                                           request=request.id)
                    await silent.publish(msg.properties.ResponseTopic, error.to_json(), qos=1)

        swallower = asyncio.create_task(swallow())
        async with RemoteEnginePool(bus, cache=None) as pool:
            wanted = asyncio.create_task(pool.submit(chess.Board()))
            await until(lambda: len(swallowed) >= 3, 20, "the request, its repeat after the error, and after the timeout")
            assert not wanted.done() and pool.counters.rerequests >= 1
            assert "worker silent could not analyse" in caplog.text and "requesting it again" in caplog.text
            with workers(tmp_path, broker.port, 1, engine=fake_stockfish):
                answer = await asyncio.wait_for(wanted, 60)
        swallower.cancel()
        await silent.publish(workers_topic(bus, "silent"), b"", qos=1, retain=True)
    assert answer.profile.name == PROFILE and answer.key == position_key(chess.Board())
    assert set(swallowed) == {position_key(chess.Board())}


async def test_a_monitor_waiting_for_its_first_worker_can_be_stopped(tmp_path, broker, caplog):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    monitor = Monitor(load_config(write_config(tmp_path / "monitor.toml", broker.port)))
    run = asyncio.create_task(monitor.run())
    await until(lambda: "bus: connected to" in caplog.text, 20, "the monitor's connection")
    assert not run.done()  # no worker, no profile: it waits
    monitor.stop()  # what SIGINT/SIGTERM do in `livemon serve`
    await asyncio.wait_for(run, 10)
    monitor.store.close()
