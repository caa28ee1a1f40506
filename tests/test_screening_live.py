"""Screening in the live monitor: live equals batch, alerts raised once and kept, and nothing leaks to the public.

Real parts: a replayed real event, the SQLite store, real WebSocket clients, a
real mosquitto broker (the docs' ACL), the overlay page in headless Chromium; the
engine is the scripted one of tests/fake_uci.py. The calibration is put in the
store by the test (a made-up but plausible Elo → c line: screening needs one, and
the shipped calibration may not cover a depth-5 profile; the alert tests set
thresholds that fire whatever the moves). Most tests put the real Stockfish's
depth-5 analyses of the games (shipped in tests/data) in the store too, and run the
scripted engine under Stockfish's name (their profile), so it is asked for none of
them: their subject is the screening made of them, not the search.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import aiomqtt
import httpx
import pytest
from websockets.asyncio.client import connect

from livemon.cli import main
from livemon.config import BrokerConfig, Config, MqttOutConfig, ReplayFeedConfig, ScreeningConfig, WebConfig
from livemon.io.engine import UciEngine
from livemon.live.messages import Alert, ScreeningNumbers
from livemon.app.monitor import Monitor
from livemon.faces.mqtt import MqttPublisher
from livemon.live.pgn import split_games
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.io.store import Store
from livemon.faces.web import WebServer
from tests.conftest import cached_store, copy_analyses, real
from tests.conftest import free_port, mosquitto
from tests.test_mqtt_out import ACL, ARBITER, PREFIX
from tests.test_overlay import browser, text  # noqa: F401 - the fixture is used by name

DEPTH = 5
TOKEN = "arbiter-s3cret"
C_MAP = Calibration(a=-1.125, b=0.0005, n=30, elo_min=2600, elo_max=2850, r2=0.3, residual_sd=0.1)


def london(tmp_path: Path, games: slice) -> Path:
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][games]
    path = tmp_path / "london.pgn"
    path.write_text("\n".join(chunks))
    return path


async def profile_name(cfg: Config) -> str:
    engine = await UciEngine.open(cfg.engine)
    try:
        return engine.profile.name
    finally:
        await engine.close()


def live_config(tmp_path: Path, pgn: Path, screening: ScreeningConfig, engine: str, db: str = "live.sqlite") -> Config:
    cfg = Config()
    cfg.engine.path = engine
    cfg.engine.depth, cfg.engine.backlog_high = DEPTH, 1_000_000  # one profile for every search
    cfg.store.path = str(tmp_path / db)
    cfg.monitor.status_seconds, cfg.monitor.ttt_debounce_seconds = 0.2, 0.1
    cfg.feeds = [ReplayFeedConfig(name="replay", path=str(pgn), speed=0, max_delay=0.05)]
    cfg.screening = screening
    return cfg


def calibrate(path: str, profile: str) -> None:
    with Store(path) as store:
        store.calibrations.put(ProfileCalibration(profile, None, C_MAP))


def analysed(path: str) -> None:
    """Stockfish's depth-5 analyses of the London games in the store at ``path``."""
    cached_store(Path(path), "analyses_stockfish15.1_d5_london.jsonl.gz")


def searched(path: str) -> int:
    """The searches a monitor's run on the store at ``path`` made (its status's count)."""
    with Store(path) as store:
        return int(store.status.get()["engine"]["searches"])


def engine_config(tmp_path: Path, engine: str, extra: str = "") -> str:
    """A config.toml naming ``engine`` (and ``extra``'s tables) for ``livemon analyse``: its path."""
    path = tmp_path / "analyse.toml"
    path.write_text(f'[engine]\npath = "{engine}"\n{extra}')
    return str(path)


async def run_monitor(cfg: Config) -> tuple[Monitor, list[Alert], list[ScreeningNumbers]]:
    """Run the monitor to the end of its feed; returns it and every alert and screening row it published."""
    monitor = Monitor(cfg)
    sub = monitor.hub.subscribe({"alerts", "screening"}, maxsize=1_000_000)
    await monitor.run(until_feeds_end=True)
    monitor.store.close()
    alerts, rows = [], []
    while not sub.queue.empty():
        _, msg = sub.queue.get_nowait()
        (alerts if isinstance(msg, Alert) else rows).append(msg)
    assert not sub.overflowed
    return monitor, alerts, rows


async def test_live_screening_equals_analyse_screen(capsys, tmp_path, fake_engine):
    pgn = london(tmp_path, slice(0, 4))
    cfg = live_config(tmp_path, pgn, ScreeningConfig(), fake_engine)
    profile = await profile_name(cfg)
    calibrate(cfg.store.path, profile)
    monitor, _, rows = await run_monitor(cfg)
    live = {(r.player, r.event): {k: v for k, v in dataclasses.asdict(r).items() if k != "ts"}
            for r in rows}  # the last row published per player-event
    assert len(live) == 8 and all(r["positions"] > 10 and r["rating_source"] == "tag" for r in live.values())

    calibrate(str(tmp_path / "batch.sqlite"), profile)
    # the batch run reads the analyses the engine gave the live run (searched once): the numbers made of them
    # are the subject, not the search
    assert copy_analyses(cfg.store.path, tmp_path / "batch.sqlite") > 0
    config = engine_config(tmp_path, fake_engine)
    assert await asyncio.to_thread(main, ["analyse", "--json", "--screen", str(pgn), "--depth", str(DEPTH),
                 "--store", str(tmp_path / "batch.sqlite"), "--config", config]) == 0
    batch = json.loads(capsys.readouterr().out)["screening"]
    assert batch["enabled"] and len(batch["players"]) == 8
    for row in batch["players"]:
        row.pop("top_moves")
        mine = json.loads(json.dumps(live[(row["player"], row["event"])]))  # as JSON: tuples are lists
        assert mine == row, row["player"]  # bit for bit: exact sums (fsum), the tail built in game order
    # the plain analyse has no screening block, and the table form prints the screening table
    batch_store = str(tmp_path / "batch.sqlite")
    assert await asyncio.to_thread(main, ["analyse", "--json", str(pgn), "--depth", str(DEPTH), "--store", batch_store,
                                          "--config", config]) == 0
    assert "screening" not in json.loads(capsys.readouterr().out)
    assert await asyncio.to_thread(main, ["analyse", "--screen", str(pgn), "--depth", str(DEPTH), "--store", batch_store,
                                          "--config", config]) == 0
    table = capsys.readouterr().out
    assert "fair-play screening (arbiters only)" in table and "Carlsen,M" in table.split("fair-play")[1]


async def test_alerts_are_raised_once_stored_and_not_raised_again_after_restart(tmp_path, fake_stockfish, caplog):
    caplog.set_level(logging.INFO, logger="livemon.app.monitor")
    pgn = london(tmp_path, slice(0, 2))
    low = ScreeningConfig(notice_z=-10.0, alert_z=-10.0, min_positions=10)  # certain to fire (not a valid config.toml)
    cfg = live_config(tmp_path, pgn, low, fake_stockfish)
    analysed(cfg.store.path)
    calibrate(cfg.store.path, await profile_name(cfg))
    _, alerts, _ = await run_monitor(cfg)
    assert searched(cfg.store.path) == 0  # the screening is made of the shipped analyses alone
    keys = [(a.player, a.event, a.details["level"]) for a in alerts]
    raised_lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("screening: a ")]
    assert len(raised_lines) == 8 and not any(a.player in line for a in alerts for line in raised_lines)
    assert len(keys) == 8 == len(set(keys))  # 4 players x notice, alert: each once
    for a in alerts:
        n = a.details["numbers"]
        assert a.positions == n["positions"] == 10 and a.z == n["z"] and a.roi == pytest.approx(50 + 5 * a.z)
        assert a.threshold == -10.0 and n["rating_source"] == "tag" and n["c_r"] > 0
        assert 1 <= len(a.details["top_moves"]) <= 5
        assert all({"game_id", "ply", "move", "p0", "matched", "loss"} <= set(m) for m in a.details["top_moves"])
    with Store(cfg.store.path) as store:
        stored = store.alerts.load()
        first_rows = store.engine.db.execute("SELECT player, event, level, raised FROM alerts ORDER BY rowid").fetchall()
    assert [(a.player, a.event, lv) for lv, a in stored] == keys and [a for _, a in stored] == alerts

    # A restart on the same store and feed: the stored alerts are shown again, none is raised again.
    caplog.clear()
    _, again, _ = await run_monitor(live_config(tmp_path, pgn, low, fake_stockfish))
    assert again == alerts  # republished from the store, unchanged
    assert not [r for r in caplog.records if r.getMessage().startswith("screening: a ")]
    with Store(cfg.store.path) as store:
        assert store.engine.db.execute("SELECT player, event, level, raised FROM alerts ORDER BY rowid").fetchall() == first_rows


async def test_screening_is_off_without_a_calibration(tmp_path, fake_engine, caplog):
    cfg = live_config(tmp_path, london(tmp_path, slice(0, 1)), ScreeningConfig(notice_z=-10.0, alert_z=-10.0, min_positions=1),
                      fake_engine)
    monitor, alerts, rows = await run_monitor(cfg)
    assert alerts == rows == [] and not monitor.screener.enabled
    assert sum("screening off" in r.getMessage() for r in caplog.records) == 1
    with Store(cfg.store.path) as store:
        status = store.status.get()
    assert status["screening"].startswith("off: no Elo-to-c calibration") and status["moves"] > 0


LEAK_MARKS = ('"kind":"alert"', '"kind":"screening"', '"z_match"', '"roi"', '"top_moves"', '"c_r"',
              '"matches_expected"', '"rating_source"', "alerts/", "screening/")


def leaks(text: str) -> list[str]:
    squeezed = text.replace(" ", "")
    return [m for m in LEAK_MARKS if m in squeezed]


async def test_no_alert_or_screening_number_reaches_a_public_face(tmp_path, fake_stockfish, browser):  # noqa: F811
    pgn = london(tmp_path, slice(0, 2))
    cfg = live_config(tmp_path, pgn, ScreeningConfig(notice_z=-10.0, alert_z=-10.0, min_positions=5), fake_stockfish)
    cfg.web = WebConfig(port=0, arbiter_token=TOKEN)
    port = free_port()
    cfg.mqtt_out = MqttOutConfig(enabled=True, broker=BrokerConfig(host="127.0.0.1", port=port, username="livemon"),
                                 prefix=PREFIX, arbiter_prefix=ARBITER, max_backoff=1.0)
    analysed(cfg.store.path)
    calibrate(cfg.store.path, await profile_name(cfg))
    monitor = Monitor(cfg)
    frames: dict[str, list[str]] = {"public": [], "arbiter": [], "mqtt_public": [], "mqtt_arbiter": []}
    tasks: list[asyncio.Task[Any]] = []

    async def read_ws(ws: Any, into: list[str]) -> None:
        async for raw in ws:
            into.append(raw)

    async def read_mqtt(client: aiomqtt.Client, into: list[str]) -> None:
        async for msg in client.messages:
            payload = msg.payload.decode() if isinstance(msg.payload, bytes) else str(msg.payload)
            into.append(f"{msg.topic} {payload}")

    with mosquitto(tmp_path, port, ACL):
        web = WebServer(monitor.hub, cfg.web)
        await web.start()
        publisher = MqttPublisher(monitor.hub, cfg.mqtt_out)
        tasks.append(asyncio.create_task(publisher.run()))
        async with contextlib.AsyncExitStack() as stack:
            public = await stack.enter_async_context(connect(f"ws://127.0.0.1:{web.port}/ws"))
            await public.send(json.dumps({"op": "subscribe", "channels": ["games", "players", "ttt", "status"]}))
            await public.send(json.dumps({"op": "subscribe", "channels": ["alerts", "screening"]}))  # no token: refused
            arbiter = await stack.enter_async_context(connect(f"ws://127.0.0.1:{web.port}/ws"))
            await arbiter.send(json.dumps({"op": "subscribe", "channels": ["alerts", "screening"], "token": TOKEN}))
            mqtt_public = await stack.enter_async_context(aiomqtt.Client("127.0.0.1", port))
            await mqtt_public.subscribe(f"{PREFIX}/#", qos=1)
            await mqtt_public.subscribe("#", qos=1)  # the broker's ACL is the second line of defence
            mqtt_arbiter = await stack.enter_async_context(aiomqtt.Client("127.0.0.1", port, username="arbiter"))
            await mqtt_arbiter.subscribe(f"{ARBITER}/#", qos=1)
            tasks += [asyncio.create_task(read_ws(public, frames["public"])),
                      asyncio.create_task(read_ws(arbiter, frames["arbiter"])),
                      asyncio.create_task(read_mqtt(mqtt_public, frames["mqtt_public"])),
                      asyncio.create_task(read_mqtt(mqtt_arbiter, frames["mqtt_arbiter"]))]
            try:
                await monitor.run(until_feeds_end=True)
                game_ids = list(monitor.games)
                await public.send(json.dumps({"op": "subscribe", "channels": [f"game:{g}" for g in game_ids]}))
                for _ in range(200):  # let the publisher and the clients catch up
                    if publisher.last_seq == monitor.hub.seq and any("screening/" in f for f in frames["mqtt_arbiter"]):
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.5)
                async with httpx.AsyncClient() as http:
                    snapshot = (await http.get(f"{web.url}/api/snapshot")).text

                # The overlay page, with every frame it receives recorded.
                await browser.call("Page.addScriptToEvaluateOnNewDocument", source="""
                    window.__frames = [];
                    const Native = window.WebSocket;
                    window.WebSocket = function (...args) {
                      const ws = new Native(...args);
                      ws.addEventListener("message", (ev) => window.__frames.push(ev.data));
                      return ws;
                    };""")
                await browser.call("Page.enable")
                await browser.navigate(f"{web.url}/overlay?game={game_ids[0]}")
                white = monitor.infos[game_ids[0]].white
                await browser.wait_for(text("white-name"), white)
                await asyncio.sleep(0.3)
                overlay_frames = await browser.js("JSON.stringify(window.__frames)")
                overlay_html = await browser.js("document.documentElement.outerHTML")
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await web.close()

    # The arbiters got alerts and the screening table, on the WebSocket and the arbiter MQTT tree ...
    arbiter_text = "\n".join(frames["arbiter"])
    assert '"kind":"alert"' in arbiter_text and '"kind":"screening"' in arbiter_text and '"top_moves"' in arbiter_text
    assert any(f.startswith(f"{ARBITER}/alerts/") for f in frames["mqtt_arbiter"])
    assert any(f.startswith(f"{ARBITER}/screening/") and '"z_match"' in f for f in frames["mqtt_arbiter"])
    # ... and nothing of it reached a public face, which did get its boards and players.
    public_text = "\n".join(frames["public"])
    assert '"kind":"board"' in public_text and '"kind":"player"' in public_text
    assert public_text.count('"code":"forbidden"') == 2
    assert leaks(public_text) == []
    assert '"players"' in snapshot and leaks(snapshot) == []
    assert any(f.startswith(f"{PREFIX}/players/") for f in frames["mqtt_public"])
    assert leaks("\n".join(frames["mqtt_public"])) == [] and not any(ARBITER in f for f in frames["mqtt_public"])
    assert '"kind":"player"' in overlay_frames.replace("\\", "") and leaks(overlay_frames.replace("\\", "")) == []
    assert leaks(overlay_html) == []


async def test_a_ttt_rating_with_too_few_games_is_not_a_screening_rating(tmp_path, fake_stockfish):
    """The default [screening] min_ttt_games = 10: after one game each, the players stay unrated."""
    pgn = london(tmp_path, slice(0, 2))
    pgn.write_text("\n".join(line for line in pgn.read_text().splitlines() if not line.startswith(("[WhiteElo", "[BlackElo"))))
    cfg = live_config(tmp_path, pgn, ScreeningConfig(), fake_stockfish)
    assert cfg.screening.min_ttt_games == 10
    profile = await profile_name(cfg)
    analysed(cfg.store.path)
    calibrate(cfg.store.path, profile)
    monitor, alerts, rows = await run_monitor(cfg)
    assert monitor.counters.ttt_refreshes >= 1 and len(monitor._ttt.latest) == 4
    assert all(r.games == 1 for r in monitor._ttt.latest.values())
    last = {(r.player, r.event): r for r in rows}
    assert len(last) == 4 and alerts == []
    for row in last.values():
        assert row.rating_source == "none" and row.rating is None and row.z is None


async def test_players_without_a_rating_tag_are_screened_at_their_ttt_rating(capsys, tmp_path, fake_stockfish):
    """Two London 2011 games with the Elo tags taken out: screening waits for the TTT refresh, then re-scores."""
    pgn = london(tmp_path, slice(0, 2))
    pgn.write_text("\n".join(line for line in pgn.read_text().splitlines() if not line.startswith(("[WhiteElo", "[BlackElo"))))
    cfg = live_config(tmp_path, pgn, ScreeningConfig(min_ttt_games=1), fake_stockfish)  # one game each: enough here
    profile = await profile_name(cfg)
    analysed(cfg.store.path)
    calibrate(cfg.store.path, profile)
    monitor, _, rows = await run_monitor(cfg)
    first = {(r.player, r.event): r for r in reversed(rows)}  # the first row published per player-event
    last = {(r.player, r.event): r for r in rows}
    assert len(last) == 4
    for key, row in last.items():
        assert first[key].rating_source == "none" and first[key].z is None  # before any result: no rating
        ttt = monitor._ttt.latest[key[0]]
        assert row.rating_source == "ttt" and row.rating == ttt.elo and row.c_r == pytest.approx(max(C_MAP.c_for_rating(ttt.elo), 0))
        assert row.z is not None and row.positions > 10
        assert row == monitor.screener.numbers(key)
    # the batch fits TTT once on the same results: the same players get a TTT rating there too
    analysed(str(tmp_path / "batch.sqlite"))
    calibrate(str(tmp_path / "batch.sqlite"), profile)
    one_game = engine_config(tmp_path, fake_stockfish, "[screening]\nmin_ttt_games = 1\n")
    assert await asyncio.to_thread(main, ["analyse", "--json", "--screen", str(pgn), "--depth", str(DEPTH),
                                          "--store", str(tmp_path / "batch.sqlite"), "--config", one_game]) == 0
    batch = {(r["player"], r["event"]): r for r in json.loads(capsys.readouterr().out)["screening"]["players"]}
    assert batch.keys() == last.keys()
    for key, row in batch.items():
        assert row["rating_source"] == "ttt" and row["rating"] == pytest.approx(last[key].rating, abs=1.0)
        assert row["positions"] == last[key].positions and row["matches_observed"] == last[key].matches_observed
