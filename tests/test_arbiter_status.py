"""The arbiters' status: a worker the engine bus quarantines is a line on the arbiter channel, and only there.

Real parts end to end: a mosquitto broker, an honest ``livemon worker`` on the scripted UCI engine, a
rogue MQTT client answering with well-formed lies, the monitor's own engine bus (spot checks on every
answer, so the first lie is caught), its hub and the web server, read by real WebSocket clients: an
arbiter with the token and a public client subscribed to every public channel.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

import httpx

from livemon.app.monitor import Monitor
from livemon.config import Config, StoreConfig, WebConfig
from livemon.faces.hub import PUBLIC_CHANNELS, ROUTES
from livemon.faces.web import WebServer
from tests.test_bus_trust import PROFILE, bus_cfg, engine, engine_cfg, honest_workers, rogue_worker  # noqa: F401
from tests.test_distributed import until
from tests.test_pool import game_boards
from tests.test_web import TOKEN, board, client, recv_until, subscribe


async def test_a_quarantined_worker_reaches_the_arbiters_channel_and_never_a_public_one(tmp_path, broker, engine,  # noqa: F811
                                                                                         caplog):
    caplog.set_level(logging.INFO, "livemon")
    cfg = Config(engine=engine_cfg(engine), store=StoreConfig(path=tmp_path / "m.sqlite"),
                 bus=bus_cfg(broker.port, profile=PROFILE, spot_check=1.0, request_timeout=3.0),
                 web=WebConfig(port=0, arbiter_token=TOKEN))
    monitor = Monitor(cfg)
    web = WebServer(monitor.hub, cfg.web)
    await web.start()
    public_frames: list[str] = []
    try:
        arbiter = await client(web)
        (snap,) = await subscribe(arbiter, ROUTES["quarantine"].channel, token=TOKEN)
        assert (snap["type"], snap["messages"]) == ("snapshot", [])
        public = await client(web)
        snaps = await subscribe(public, *PUBLIC_CHANNELS, ROUTES["quarantine"].channel)
        assert sorted(f.get("channel", "") for f in snaps if f["type"] == "snapshot") == sorted(PUBLIC_CHANNELS)
        assert [(f["code"], f["channel"]) for f in snaps if f["type"] == "error"] == [("forbidden", "arbiter_status")]

        async def read_public() -> None:
            async for raw in public:
                public_frames.append(str(raw))

        reader = asyncio.create_task(read_public())
        stop, seen = asyncio.Event(), []
        with honest_workers(tmp_path, broker.port, engine, ["good"]):
            rogue = asyncio.create_task(rogue_worker(broker.port, "liar", "lie", stop, seen))
            async with monitor.pool as pool:
                await until(lambda: len(pool.status().bus.workers) == 2, 30, "both announcements")
                await asyncio.wait_for(asyncio.gather(*(pool.submit(b) for b in game_boards()[:24])), 60)
                await until(lambda: "liar" in pool.quarantined, 20, "the spot check")
                frame = await recv_until(arbiter, lambda f: f["type"] == "delta", 10)
                after = monitor.hub.publish(board("g1", 1, 20))  # the public client is served past the line
                await until(lambda: any(f'"seq":{after},' in f for f in public_frames), 10, "the board after it")
                (resnap,) = await subscribe(await client(web), ROUTES["quarantine"].channel, token=TOKEN)  # a later arbiter
            stop.set()
            await rogue
        async with httpx.AsyncClient() as http:
            api = (await http.get(f"http://127.0.0.1:{web.port}/api/snapshot")).text
        await asyncio.sleep(0.2)  # anything still on its way to the public client
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    finally:
        await web.close()
        monitor.store.close()

    assert seen, "the liar took no request: the test proves nothing"
    (logged,) = [r.getMessage() for r in caplog.records if "QUARANTINED" in r.getMessage()]
    # the analyses of it dropped from the cache, and the one the spot check replaced with its own search
    replaced = int(re.search(r"the (\d+) analyses", logged).group(1)) + 1  # type: ignore[union-attr]
    msg = frame["message"]
    assert frame["channels"] == ["arbiter_status"] and msg["kind"] == "quarantine"
    assert (msg["worker"], msg["replaced"]) == ("liar", replaced) and replaced >= 1
    assert "said +3000" in msg["reason"] and msg["line"].startswith("engine worker liar quarantined: ")
    assert resnap["messages"] == [msg]
    everything_public = "\n".join(public_frames) + api
    assert frame["seq"] < after and "liar" not in everything_public and "quarantine" not in everything_public
    assert all(json.loads(f)["type"] != "delta" or "arbiter_status" not in json.loads(f)["channels"] for f in public_frames)

