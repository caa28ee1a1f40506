"""Trust on the engine bus: only the analysis asked, of the pinned profile, from a worker the monitor trusts.

A real mosquitto; honest workers are real ``livemon worker`` processes running the scripted UCI engine of
tests/fake_uci.py (quick, and its scores depend on the position alone, so a spot check on this machine agrees
with them exactly); rogues are raw MQTT clients doing what the documented ACL still lets a worker do (take
requests from the share, answer under its own name, write announcements).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import aiomqtt
import chess
import pytest

from livemon.config import BrokerConfig, BusConfig, EngineConfig
from livemon.errors import FAULTS
from livemon.faces.web import codec
from livemon.io.broker import shared_requests_topic, workers_topic
from livemon.io.bus import ALIVE, AnalysisRequest, AnalysisResult, MonitorProtocol, RemoteEnginePool, WorkerAnnouncement
from livemon.io.engine import EngineError, PositionAnalysis, position_key
from livemon.io.store import Store
from tests.conftest import REPO, stop_groups
from tests.test_distributed import until
from tests.test_pool import game_boards

DEPTH = 5
PROFILE = f"FakeUCI 1.0 depth={DEPTH} multipv=4"


@pytest.fixture
def engine(tmp_path: Path) -> str:
    wrapper = tmp_path / "fake-engine"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {REPO / 'tests' / 'fake_uci.py'}\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@contextlib.contextmanager
def honest_workers(tmp_path: Path, port: int, engine: str, names: list[str],
                   delay: float = 0) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Real ``livemon worker`` processes on the fake engine, named ``names`` (``delay``: seconds a search takes)."""
    procs = []
    try:
        for name in names:
            cfg = tmp_path / f"{name}.toml"
            cfg.write_text(f'[engine]\npath = "{engine}"\ndepth = {DEPTH}\n[store]\npath = "{tmp_path / name}.sqlite"\n'
                           f'[broker]\nhost = "127.0.0.1"\nport = {port}\n[bus]\nmode = "mqtt"\nmax_backoff = 1.0\n')
            log = open(tmp_path / f"{name}.log", "wb")
            procs.append(subprocess.Popen([sys.executable, "-m", "livemon.cli", "worker", "--config", str(cfg),
                                           "--name", name], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True, env={**os.environ, "FAKE_UCI_DELAY": str(delay)}))
        yield procs
    finally:
        stop_groups(procs)


def bus_cfg(port: int, **kw: Any) -> BusConfig:
    base: dict[str, Any] = {"broker": BrokerConfig(host="127.0.0.1", port=port), "max_backoff": 1.0, "mode": "mqtt"}
    base.update(kw)
    cfg = BusConfig(**base)
    cfg.validate()
    return cfg


def engine_cfg(engine: str) -> EngineConfig:
    cfg = EngineConfig(path=engine, depth=DEPTH, timeout=10)
    cfg.validate()
    return cfg


def lie(board: chess.Board) -> PositionAnalysis:
    """A well-formed lie: a legal move, a score in range, the profile's depth; far from any honest score."""
    move = next(iter(board.legal_moves)).uci()
    return PositionAnalysis(3000, ((move, 3000),), DEPTH, 100)


async def rogue_worker(port: int, name: str, answer: str, stop: asyncio.Event, seen: list[str]) -> None:
    """A worker that takes requests from the share and answers under its own name: ``lie`` (a well-formed lie
    with the request's id) or ``errors`` (three error answers per request)."""
    async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V5, identifier=name) as client:
        bus = BusConfig()
        await client.subscribe(shared_requests_topic(bus, PROFILE), qos=1)
        await client.publish(workers_topic(bus, name), WorkerAnnouncement(name, "FakeUCI 1.0", DEPTH, None, 4, 4).to_json(),
                             qos=1, retain=True)

        async def serve() -> None:
            async for msg in client.messages:
                request = AnalysisRequest.parse(msg.payload)
                seen.append(request.key)
                reply = f"{msg.properties.ResponseTopic}/{name}"
                if answer == "lie":
                    out = [AnalysisResult(request.key, PROFILE, name, lie(request.board()), request=request.id)]
                else:
                    out = [AnalysisResult(request.key, PROFILE, name, error="no engine here", request=request.id)] * 3
                for result in out:
                    await client.publish(reply, result.to_json(), qos=1)

        task = asyncio.create_task(serve())
        await stop.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.publish(workers_topic(bus, name), b"", qos=1, retain=True)


# -- the profile ------------------------------------------------------------------------------------------------


async def test_a_profile_is_never_taken_from_an_announcement_unless_configured_so(broker, engine, caplog):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    async with aiomqtt.Client("127.0.0.1", broker.port) as rogue:  # a rogue announces depth=1, retained, first
        await rogue.publish(workers_topic(BusConfig(), "rogue"),
                            WorkerAnnouncement("rogue", "FakeUCI 1.0", 1, None, 1, 8).to_json(), qos=1, retain=True)
    async with RemoteEnginePool(bus_cfg(broker.port), engine=engine_cfg(engine)) as pool:
        assert pool.base_profile.name == PROFILE  # this machine's [engine], not the announcement
        await until(lambda: "runs profile 'FakeUCI 1.0 depth=1 multipv=1'" in caplog.text, 10, "the rogue's announcement")
        assert pool.capacity == 0  # the rogue gets no requests: it runs another profile
    with pytest.raises(EngineError, match=r"^bus\.profile: not set, and no \[engine\]"):
        async with RemoteEnginePool(bus_cfg(broker.port)):
            pass
    async with RemoteEnginePool(bus_cfg(broker.port, profile_from_workers=True)) as pool:  # asked for: taken
        assert pool.base_profile.name == "FakeUCI 1.0 depth=1 multipv=1"
    async with aiomqtt.Client("127.0.0.1", broker.port) as rogue:
        await rogue.publish(workers_topic(BusConfig(), "rogue"), b"", qos=1, retain=True)


# -- announcements ----------------------------------------------------------------------------------------------


async def test_an_empty_retained_announcement_cannot_stop_analysis(tmp_path, broker, engine, caplog):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    boards = game_boards()[:6]
    with honest_workers(tmp_path, broker.port, engine, ["good"]):
        async with RemoteEnginePool(bus_cfg(broker.port, profile=PROFILE)) as pool:
            await until(lambda: pool.capacity > 0, 30, "the worker's announcement")
            (worker,) = pool.status().bus.workers
            assert worker.startswith("good/")  # under its name
            first = await asyncio.wait_for(pool.submit(boards[0]), 30)
            async with aiomqtt.Client("127.0.0.1", broker.port) as rogue:
                for _ in range(5):  # cleared, again and again
                    await rogue.publish(workers_topic(BusConfig(), *worker.split("/")), b"", qos=1, retain=True)
                    await asyncio.sleep(0.3)
                    assert pool.capacity > 0  # never out of the count for a message it did not send
            rest = await asyncio.wait_for(asyncio.gather(*(pool.submit(b) for b in boards[1:])), 30)
    assert first.key == position_key(boards[0]) and [r.key for r in rest] == [position_key(b) for b in boards[1:]]
    log = (tmp_path / "good.log").read_text()
    assert log.count("was cleared by another client") == 1, log  # one line, however often


async def test_a_worker_whose_announcement_stays_empty_is_asked_while_it_answers(tmp_path, broker, engine):
    """A rogue empties the worker's announcement every 50 ms for the whole round (the worker announces again
    within a second, and is emptied again at once): the monitor still asks it, from its answers."""
    boards = game_boards()[:30]
    stop = asyncio.Event()
    cleared = 0

    async def rogue(topic: str) -> None:
        nonlocal cleared
        async with aiomqtt.Client("127.0.0.1", broker.port) as client:
            while not stop.is_set():
                await client.publish(topic, b"", qos=1, retain=True)
                cleared += 1
                await asyncio.sleep(0.05)

    with honest_workers(tmp_path, broker.port, engine, ["good"], delay=0.05) as (proc,):
        async with RemoteEnginePool(bus_cfg(broker.port, profile=PROFILE, request_timeout=60.0)) as pool:
            await until(lambda: pool.capacity > 0, 30, "the worker's announcement")
            (worker,) = pool.status().bus.workers
            clearing = asyncio.create_task(rogue(workers_topic(BusConfig(), *worker.split("/"))))
            await asyncio.sleep(0.5)
            wanted = asyncio.gather(*(pool.submit(b) for b in boards))
            capacities = []
            while not wanted.done():  # sampled through the round: the worker is never out of the count
                capacities.append(pool.capacity)
                await asyncio.wait({wanted}, timeout=0.01)
            answers = await asyncio.wait_for(wanted, 60)
            stop.set()
            await clearing
            status = pool.status()
    assert cleared > 20, "the rogue cleared nothing: the test proves nothing"
    assert capacities and min(capacities) == max(capacities) > 0, capacities
    assert [a.key for a in answers] == [position_key(b) for b in boards]
    assert status.bus.answers_by_worker == {"good": len(boards)} and status.bus.rerequests == 0
    assert proc.returncode == 0  # it left on SIGTERM at once, not killed (no re-announcement queued per clearing)


def _answer(proto: MonitorProtocol, publish: Any, name: str = "good", score: int = 10, error: bool = False) -> None:
    """``name``'s answer to one publish of the protocol, delivered on its results topic."""
    request = AnalysisRequest.parse(publish.payload)
    board = request.board()
    move = next(iter(board.legal_moves)).uci()
    result = (AnalysisResult(request.key, PROFILE, name, error="engine died", request=request.id) if error else
              AnalysisResult(request.key, PROFILE, name, PositionAnalysis(score, ((move, score),), DEPTH, 100),
                             request=request.id))
    proto.receive(f"{publish.response_topic}/{name}", result.to_json())


def _announce(proto: MonitorProtocol, name: str, worker_id: str, engines: int = 2, as_name: str | None = None) -> None:
    w = WorkerAnnouncement(worker_id, "FakeUCI 1.0", DEPTH, None, 4, engines, "box", as_name or name)
    proto.receive(workers_topic(BusConfig(), name, worker_id), w.to_json())


async def test_a_worker_counts_while_it_announces_or_answers_and_only_under_its_name():
    """The monitor's protocol, no broker, on an injected clock: an announcement counts only on its own name's
    topic; an emptied one still counts while the worker answers, and ALIVE seconds after."""
    now = [100.0]
    proto = MonitorProtocol(bus_cfg(1, profile=PROFILE), monitor_id="m", clock=lambda: now[0])
    _announce(proto, "good", "box-1")
    assert proto.capacity == 4
    _announce(proto, "evil", "box-1", as_name="good")  # good's name on evil's topic
    _announce(proto, "good", "box-9", as_name="evil")  # evil's name on good's topic
    proto.receive(workers_topic(BusConfig(), "good", "box-2"),  # another process's id in the payload
                  WorkerAnnouncement("box-7", "FakeUCI 1.0", DEPTH, None, 4, 100, "", "good").to_json())
    assert proto.capacity == 4 and proto.counters.rejected == 3 and list(proto._workers) == ["good/box-1"]

    proto.receive(workers_topic(BusConfig(), "good", "box-1"), b"")  # emptied (by anyone, under a looser ACL)
    boards = iter(game_boards())
    for t in (101, 110, 119, 128, 137):  # each answer within ALIVE of the last: asked all along
        now[0] = t
        job = proto.request(next(boards))
        (publish,) = proto.publishes()
        _answer(proto, publish)
        assert job.future.done() and proto.capacity == 4
    now[0] = 137 + ALIVE - 0.01
    assert proto.capacity == 4
    now[0] = 137 + ALIVE  # silent for ALIVE seconds: it left
    job = proto.request(next(boards))
    assert proto.publishes() == [] and proto.capacity == 0 and not proto._workers
    _announce(proto, "good", "box-1")  # back: what waited is asked at once
    (publish,) = proto.publishes()
    _answer(proto, publish)
    assert job.future.done()
    proto.receive(workers_topic(BusConfig(), "good", "box-1"), b"")
    now[0] += ALIVE  # its announcement emptied and nothing from it since: its will, it died
    assert proto.capacity == 0


async def test_the_protocol_asks_again_what_is_unanswered_refuses_replays_and_counts_errors_once_per_worker():
    """Time in, publishes out: capacity, the re-request after request_timeout, one answer per publish, an error
    answer asked again at once of the others, a position failing only after three workers' errors."""
    now = [0.0]
    proto = MonitorProtocol(bus_cfg(1, profile=PROFILE, request_timeout=10.0, requests_per_engine=1),
                            monitor_id="m", clock=lambda: now[0])
    boards = game_boards()[:4]
    jobs = [proto.request(b) for b in boards]
    assert proto.publishes() == []  # no worker: nothing goes to the broker
    _announce(proto, "a", "1", engines=2)
    first = proto.publishes()
    assert len(first) == 2 and proto.waiting == 2  # newest first, two on the broker, two held here
    assert {AnalysisRequest.parse(p.payload).key for p in first} == {position_key(b) for b in boards[2:]}
    assert proto.publishes() == []  # nothing due yet
    now[0] = 10.0
    again = proto.publishes()  # no answer after request_timeout: the same two asked again, fresh ids
    assert len(again) == 2 and proto.counters.rerequests == 2
    assert {AnalysisRequest.parse(p.payload).id for p in again}.isdisjoint(AnalysisRequest.parse(p.payload).id
                                                                          for p in first)
    _answer(proto, first[0])  # the first publish's answer still counts
    _answer(proto, again[0])  # a second answer to the same position: ignored
    _answer(proto, first[0], score=3000)  # a replay of an answered publish: ignored
    done = [j for j in jobs if j.future.done()]
    assert len(done) == 1 and done[0].future.result().analysis.score == 10
    # errors: one worker's count once, the position asked again at once of the others
    _announce(proto, "b", "1", engines=1)
    _announce(proto, "c", "1", engines=1)
    victim = next(j for j in jobs[2:] if not j.future.done())
    for name in ("a", "a", "a", "b"):
        (publish,) = [p for p in proto.publishes() if p.correlation == victim.key.encode()] or \
            [p for p in again if p.correlation == victim.key.encode()]
        _answer(proto, publish, name, error=True)
        assert not victim.future.done()
    (publish,) = [p for p in proto.publishes() if p.correlation == victim.key.encode()]
    _answer(proto, publish, "c", error=True)  # the third worker's error: it fails
    assert isinstance(victim.future.exception(), EngineError)


# -- answers ----------------------------------------------------------------------------------------------------


async def test_an_answer_to_nothing_asked_or_from_an_untrusted_worker_is_refused(tmp_path, broker, engine, caplog):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    board = game_boards()[3]
    key = position_key(board)
    with honest_workers(tmp_path, broker.port, engine, ["good"], delay=2), Store(tmp_path / "m.sqlite") as store:
        async with RemoteEnginePool(bus_cfg(broker.port, profile=PROFILE, workers=["good"]), store.analyses) as pool:
            await until(lambda: pool.capacity > 0, 30, "the worker's announcement")
            wanted = asyncio.create_task(pool.submit(board))
            await until(lambda: any(k == key for k, _ in pool.queue.jobs), 5, "the request")
            async with aiomqtt.Client("127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5) as rogue:
                forged = [
                    (f"{pool.reply_topic}/good", AnalysisResult(key, PROFILE, "good", lie(board), request="guessed")),
                    (f"{pool.reply_topic}/evil", AnalysisResult(key, PROFILE, "evil", lie(board), request="x")),
                    (pool.reply_topic, AnalysisResult(key, PROFILE, "good", lie(board), request="x")),
                ]
                for topic, result in forged:
                    await rogue.publish(topic, result.to_json(), qos=1)
            answer = await asyncio.wait_for(wanted, 30)
    assert answer.analysis.score != 3000  # the honest one
    text = caplog.text
    assert "it answers no request of this monitor" in text
    assert text.count("not from a worker of bus.workers") == 2
    with Store(tmp_path / "m.sqlite") as store:
        assert store.analyses.by_worker() == {"good": 1}


async def test_a_liar_caught_by_a_spot_check_is_quarantined_and_its_answers_searched_again(tmp_path, broker, engine,
                                                                                          caplog):
    caplog.set_level(logging.INFO, "livemon")
    boards = game_boards()[:24]
    stop, seen = asyncio.Event(), []
    before = FAULTS.snapshot().get("bus.quarantined", 0)
    with honest_workers(tmp_path, broker.port, engine, ["good"]), Store(tmp_path / "m.sqlite") as store:
        rogue = asyncio.create_task(rogue_worker(broker.port, "liar", "lie", stop, seen))
        bus = bus_cfg(broker.port, profile=PROFILE, spot_check=1.0, request_timeout=3.0)
        async with RemoteEnginePool(bus, store.analyses, engine=engine_cfg(engine)) as pool:
            await until(lambda: len(pool.status().bus.workers) == 2, 30, "both announcements")
            answers = await asyncio.wait_for(asyncio.gather(*(pool.submit(b) for b in boards)), 60)
            await until(lambda: "liar" in pool.quarantined, 20, "the spot check")
            await pool.spot.wait_idle()
            await until(lambda: not pool.queue.jobs, 30, "the liar's positions searched again")
            later = await asyncio.wait_for(asyncio.gather(*(pool.submit(b) for b in game_boards()[24:40])), 60)
            status = pool.status()
        stop.set()
        await rogue
        lies_left = store.engine.db.execute("SELECT COUNT(*) FROM analyses WHERE worker = 'liar'").fetchone()[0]
        cached = store.analyses.count(PROFILE)
    assert seen, "the liar took no request: the test proves nothing"
    assert lies_left == 0 and cached >= 40  # every analysis it gave was dropped and searched again by "good"
    assert all(a.analysis.score != 3000 for a in later)  # nothing of it used once caught
    assert status.bus.quarantined.keys() == {"liar"} and "said +3000" in status.bus.quarantined["liar"]
    assert FAULTS.snapshot()["bus.quarantined"] == before + 1
    assert sum("QUARANTINED" in r.getMessage() for r in caplog.records) == 1
    assert any(a.analysis.score == 3000 for a in answers)  # (the lies used before it was caught: see docs)


async def test_error_answers_from_one_worker_take_no_ply_out(tmp_path, broker, engine, caplog):
    caplog.set_level(logging.INFO, "livemon.io.bus")
    boards = game_boards()[:20]
    stop, seen = asyncio.Event(), []
    with honest_workers(tmp_path, broker.port, engine, ["good"]):
        rogue = asyncio.create_task(rogue_worker(broker.port, "flooder", "errors", stop, seen))
        async with RemoteEnginePool(bus_cfg(broker.port, profile=PROFILE, request_timeout=5.0)) as pool:
            await until(lambda: len(pool.status().bus.workers) == 2, 30, "both announcements")
            answers = await asyncio.wait_for(asyncio.gather(*(pool.submit(b) for b in boards)), 60)
            status = pool.status()
        stop.set()
        await rogue
    assert seen, "the flooder took no request: the test proves nothing"
    assert [a.key for a in answers] == [position_key(b) for b in boards] and status.failures == 0
    assert status.bus.answers_by_worker == {"good": 20}
    lines = [r for r in caplog.records if "rejected" in r.getMessage() and "flooder" in r.getMessage()]
    assert len(lines) <= 6  # its repeats are refused (unknown id), without a line each after the fifth
    assert sum("rejected" in r.getMessage() for r in caplog.records) < len(seen) * 2


def test_the_documented_acl_keeps_answers_private(tmp_path):
    """The ACL of docs/distributed.md: a worker may write results only under its own name and read none."""
    from tests.test_distributed import docs_acl

    acl = docs_acl()
    worker = acl[acl.index("user worker1"):acl.index("user worker2")]
    assert "topic write livemon/bus/results/+/worker1" in worker
    assert "results" not in "".join(line for line in worker.splitlines() if line.startswith("topic read"))
    # its announcement only under its own name: no worker can empty another's
    assert "topic readwrite livemon/bus/workers/worker1/#" in worker
    assert [line for line in acl.splitlines() if "workers/" in line and "worker1" not in line and "worker2" not in line] \
        == ["topic read livemon/bus/workers/#"]  # the monitor's
    # (the broker-level check of this very ACL: tests/test_distributed.py, the TLS test)


def acl_broker(tmp_path: Path) -> Any:
    """A real mosquitto with passwords and the documented ACL (its workers renamed ``good`` and ``evil``)."""
    from tests.conftest import Broker
    from tests.test_distributed import docs_acl

    passwd = tmp_path / "passwd"
    for i, user in enumerate(("monitor", "good", "evil")):
        subprocess.run(["mosquitto_passwd", "-b", *(["-c"] if i == 0 else []), str(passwd), user, f"pw-{user}"],
                       check=True, capture_output=True)
    (tmp_path / "acl").write_text(docs_acl().replace("worker1", "good").replace("worker2", "evil"))
    broker = Broker(tmp_path)
    broker.conf.write_text(f"listener {broker.port} 127.0.0.1\nallow_anonymous false\npassword_file {passwd}\n"
                           f"acl_file {tmp_path / 'acl'}\npersistence false\nuser root\n")
    return broker.start()


def as_user(port: int, user: str) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", port, username=user, password=f"pw-{user}", identifier=f"{user}-{os.getpid()}",
                          protocol=aiomqtt.ProtocolVersion.V5, timeout=10)


async def test_under_the_documented_acl_a_rogue_worker_cannot_clear_another_workers_announcement(tmp_path):
    """The broker itself, with the ACL of docs/distributed.md: ``evil`` empties ``good``'s retained announcement
    (on its topic and on the bare name's) and can only empty its own; the monitor's protocol, fed what its user
    reads, counts ``good`` all along, and a monitor that connects afterwards still finds its announcement."""
    bus = BusConfig()
    broker = acl_broker(tmp_path)
    try:
        good_topic, evil_topic = workers_topic(bus, "good", "box-1"), workers_topic(bus, "evil", "box-2")
        good_says = WorkerAnnouncement("box-1", "FakeUCI 1.0", DEPTH, None, 4, 2, "", "good").to_json()
        proto = MonitorProtocol(bus_cfg(broker.port, profile=PROFILE), monitor_id="m")
        seen: list[tuple[str, bytes]] = []
        async with as_user(broker.port, "monitor") as monitor, as_user(broker.port, "good") as good, \
                as_user(broker.port, "evil") as evil:
            await monitor.subscribe(f"{bus.prefix}/workers/#", qos=1)  # what the documented ACL lets it read

            async def read() -> None:
                async for message in monitor.messages:
                    payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
                    seen.append((str(message.topic), payload))
                    proto.receive(str(message.topic), payload)

            reader = asyncio.create_task(read())
            await good.publish(good_topic, good_says, qos=1, retain=True)
            await until(lambda: "good/box-1" in proto._workers, 10, "good's announcement")
            alone = proto.capacity
            await evil.publish(evil_topic, WorkerAnnouncement("box-2", "FakeUCI 1.0", DEPTH, None, 4, 1, "",
                                                              "evil").to_json(), qos=1, retain=True)
            await until(lambda: "evil/box-2" in proto._workers, 10, "evil's announcement")
            both = proto.capacity
            await evil.publish(good_topic, b"", qos=1, retain=True)  # the attack: refused by the broker
            await evil.publish(f"{bus.prefix}/workers/good", b"", qos=1, retain=True)
            await evil.publish(evil_topic, b"", qos=1, retain=True)  # after them on evil's connection: a marker
            await until(lambda: (evil_topic, b"") in seen, 10, "evil's own announcement emptied")
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        assert [t for t, payload in seen if payload == b""] == [evil_topic]  # evil could empty its own only
        assert list(proto._workers) == ["good/box-1", "evil/box-2"] and proto.capacity == both > alone > 0
        async with as_user(broker.port, "monitor") as later:  # a monitor (re)starting: the retained state
            await later.subscribe(f"{bus.prefix}/workers/#", qos=1)
            async with asyncio.timeout(10):
                async for message in later.messages:
                    assert str(message.topic) == good_topic and message.retain
                    assert message.payload == good_says.encode()
                    break
    finally:
        broker.stop()


async def test_a_quarantined_liars_answers_are_replaced_in_every_players_numbers(tmp_path, broker, engine):
    """A monitor on the bus with an honest worker and a liar that answers from the shared requests: once a
    spot check catches the liar, every ply scored with one of its answers is scored again with the answers
    that replace them, and every player's numbers equal those of a run that never saw the liar."""
    from livemon.app.monitor import Monitor
    from livemon.config import load_config
    from livemon.live.pgn import split_games
    from tests.conftest import real

    import io

    import chess.pgn

    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:2]
    pgn = tmp_path / "london.pgn"
    pgn.write_text("\n".join(chunks))
    plies = sum(len(list(chess.pgn.read_game(io.StringIO(c)).mainline_moves())) for c in chunks)  # type: ignore[union-attr]

    async def monitored(name: str, liar: bool) -> tuple[dict[str, Any], int, dict[str, str]]:
        cfg_path = tmp_path / f"{name}.toml"
        cfg_path.write_text(
            f'[engine]\npath = "{engine}"\ndepth = {DEPTH}\ntimeout = 10\nbacklog_high = 1000000\n'
            f'[store]\npath = "{tmp_path / name}.sqlite"\n[monitor]\nstatus_seconds = 0.2\n'
            f'[bus]\nmode = "mqtt"\nhost = "127.0.0.1"\nport = {broker.port}\nmax_backoff = 1.0\n'
            f'profile = "{PROFILE}"\nspot_check = 1.0\nrequest_timeout = 3.0\n'
            f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.05\n')
        monitor = Monitor(load_config(cfg_path))
        stop, seen = asyncio.Event(), []
        rogue = asyncio.create_task(rogue_worker(broker.port, "liar", "lie", stop, seen)) if liar else None
        run = asyncio.create_task(monitor.run())
        try:
            pool = monitor.pool
            assert isinstance(pool, RemoteEnginePool)
            await until(lambda: monitor.counters.moves == plies, 120, "the replay")
            if liar:
                await until(lambda: "liar" in pool.quarantined, 60, "the spot check")
            while True:  # every answer scored, spot-checked, and what a quarantine asked again answered
                await monitor.drain()
                if pool.spot is not None:
                    await pool.spot.wait_idle()
                await monitor.drain()
                if not pool.queue.jobs and not monitor.core.unscored_plies():
                    break
                await asyncio.sleep(0.1)
            timer = ("perceived_elo", "perceived_elo_range", "event_perceived_elo", "ttt_mu", "ttt_sigma")  # by the clock
            players = [{k: v for k, v in codec.report_entry(p).items() if k not in timer}
                       for p in monitor.core.player_estimates()]
            report = {**monitor.estimator.report(), "players": players}
            return report, monitor.counters.rescored, dict(pool.quarantined)
        finally:
            monitor.stop()
            await asyncio.wait_for(run, 60)
            stop.set()
            if rogue is not None:
                await rogue
                assert seen, "the liar took no request: the test proves nothing"

    with honest_workers(tmp_path, broker.port, engine, ["good"]):
        clean, rescored_clean, _ = await monitored("clean", False)
        lied, rescored, quarantined = await monitored("lied", True)
    assert quarantined.keys() == {"liar"}
    assert len(clean["players"]) == 4 and all(p["moves"] for p in clean["players"])
    assert lied["players"] == clean["players"] and lied["games"] == clean["games"]
    assert rescored > 0 and rescored_clean == 0  # its answers had been used, and were taken out
