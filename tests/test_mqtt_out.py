"""MQTT out against a real mosquitto started by the test on a free port.

The mosquitto ACL used here is the example of docs/mqtt.md: anonymous clients
may only read the public tree; the ``arbiter`` user may read alerts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import AsyncIterator

import aiomqtt
import pytest

from livemon.config import BrokerConfig, ConfigError, MqttOutConfig, load_config_text
from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.faces.web.codec import MESSAGE_VERSION
from livemon.live.messages import Alert, BoardState, MonitorStatus, PlayerEstimate, TTTRating
from livemon.faces.mqtt import MqttPublisher
from tests.conftest import free_port, mosquitto

PREFIX, ARBITER = "livemon/test", "livemon-arbiter/test"
ACL = """\
# Anonymous clients (the public): read the public tree only.
topic read livemon/#
# The monitor's own user writes both trees.
user livemon
topic readwrite livemon/#
topic readwrite livemon-arbiter/#
# Arbiters read both.
user arbiter
topic read livemon/#
topic read livemon-arbiter/#
"""


@contextlib.asynccontextmanager
async def running(publisher: MqttPublisher) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(publisher.run())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def collect(port: int, topic: str, seconds: float, username: str | None = None) -> dict[str, tuple[dict, bool]]:
    """Subscribe late to ``topic`` and gather {topic: (payload, retained)} for ``seconds``."""
    got: dict[str, tuple[dict, bool]] = {}
    async with aiomqtt.Client("127.0.0.1", port, username=username) as client:
        await client.subscribe(topic, qos=1)
        with contextlib.suppress(asyncio.TimeoutError):
            async with asyncio.timeout(seconds):
                async for msg in client.messages:
                    payload = msg.payload.decode() if isinstance(msg.payload, bytes) else str(msg.payload)
                    got[str(msg.topic)] = (json.loads(payload) if payload.startswith("{") else {"raw": payload}, msg.retain)
    return got


def messages() -> list:
    return [
        BoardState("r1/b1", "Ding, Liren", "Gukesh, D", 2728, 2783, "8/8/8/8/8/8/8/K6k w - - 0 1", 40, eval_cp=-31),
        PlayerEstimate("Gukesh, D", 2783, 20, -8.0, 0.45, -35.0, 2841.5, perceived_elo_range=(2790.0, 2893.0)),
        TTTRating("Gukesh, D", 3.2, 0.4, 2790.0, 80.0, 14),
        MonitorStatus(backlog=2, moves=40, games=1),
        Alert("Gukesh, D", "WCC 2024", 40, 3.7, 0.66, 3.0),
    ]


def cfg(port: int, **kw) -> MqttOutConfig:
    return MqttOutConfig(enabled=True, broker=BrokerConfig(host="127.0.0.1", port=port, username="livemon"), prefix=PREFIX,
                         arbiter_prefix=ARBITER, max_backoff=1.0, **kw)


async def wait_until(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_retained_values_reach_a_late_subscriber_and_alerts_stay_apart(tmp_path: Path) -> None:
    port = free_port()
    hub = Hub()
    with mosquitto(tmp_path, port, ACL):
        publisher = MqttPublisher(hub, cfg(port))
        async with running(publisher):
            await asyncio.wait_for(publisher.connected.wait(), 10)
            for msg in messages():
                hub.publish(msg)
            hub.publish(PlayerEstimate("Gukesh, D", 2783, 21, -7.0, 0.46, -30.0, 2850.0, perceived_elo_range=(2800.0, 2900.0)))
            await wait_until(lambda: publisher.last_seq == hub.seq)

            public = await collect(port, "#", 0.7)  # anonymous, subscribed after everything was sent
            arbiter = await collect(port, f"{ARBITER}/#", 0.7, username="arbiter")

    assert set(public) == {f"{PREFIX}/games/r1%2Fb1", f"{PREFIX}/players/Gukesh, D", f"{PREFIX}/ttt/Gukesh, D",
                           f"{PREFIX}/status", f"{PREFIX}/online"}
    assert all(retained for _, retained in public.values())
    assert public[f"{PREFIX}/players/Gukesh, D"][0]["perceived_elo"] == 2850.0  # the latest, not the first
    board, sent = dict(public[f"{PREFIX}/games/r1%2Fb1"][0]), json.loads(codec.to_json(messages()[0]))
    assert 0 < time.time() - board.pop("ts") < 60 and sent.pop("ts") == 0.0  # stamped by the hub when published
    assert board == sent and board["v"] == MESSAGE_VERSION == 3
    assert public[f"{PREFIX}/ttt/Gukesh, D"][0]["kind"] == "ttt"
    assert public[f"{PREFIX}/online"][0] == {"raw": "online"}
    assert not any(payload.get("kind") == "alert" for payload, _ in public.values())

    assert list(arbiter) == [f"{ARBITER}/alerts/WCC 2024/Gukesh, D"]
    payload, retained = arbiter[f"{ARBITER}/alerts/WCC 2024/Gukesh, D"]
    assert retained and payload["kind"] == "alert" and payload["z"] == 3.7


async def test_broker_down_is_retried_and_nothing_is_lost(tmp_path: Path) -> None:
    port = free_port()
    hub = Hub()
    publisher = MqttPublisher(hub, cfg(port))
    async with running(publisher) as task:
        hub.publish(messages()[1])  # published while no broker listens
        await asyncio.sleep(1.5)  # at least one failed attempt and a back-off
        assert not task.done() and publisher.connects == 0
        with mosquitto(tmp_path, port, ACL):
            await asyncio.wait_for(publisher.connected.wait(), 10)
            await wait_until(lambda: publisher.last_seq == hub.seq)
            got = await collect(port, f"{PREFIX}/players/#", 0.5)
        assert got[f"{PREFIX}/players/Gukesh, D"][0]["perceived_elo"] == 2841.5

        # The broker goes away under a running publisher, and comes back (a fresh one: no retained store).
        await wait_until(lambda: not publisher.connected.is_set())
        hub.publish(TTTRating("Ding, Liren", 2.9, 0.3, 2740.0, 60.0, 30))
        assert not task.done()
        with mosquitto(tmp_path, port, ACL):
            await wait_until(lambda: publisher.connects >= 2)
            await wait_until(lambda: publisher.last_seq == hub.seq)  # the snapshot, republished on reconnect
            got = await collect(port, f"{PREFIX}/#", 0.5)
        assert {f"{PREFIX}/players/Gukesh, D", f"{PREFIX}/ttt/Ding, Liren"} <= set(got)
        assert not task.done()


def test_config_keys_are_validated() -> None:
    cfg = load_config_text('[mqtt_out]\nenabled = true\nprefix = "livemon/wcc"\nqos = 0')
    assert (cfg.mqtt_out.enabled, cfg.mqtt_out.prefix, cfg.mqtt_out.qos, cfg.mqtt_out.broker.port) == (True, "livemon/wcc", 0, 1883)
    assert load_config_text("").mqtt_out.enabled is False
    with pytest.raises(ConfigError, match=r"^mqtt_out\.qos: "):
        load_config_text("[mqtt_out]\nqos = 3")
    with pytest.raises(ConfigError, match=r"^mqtt_out\.prefix: "):
        load_config_text('[mqtt_out]\nprefix = "livemon/#"')
    with pytest.raises(ConfigError, match=r"^mqtt_out\.arbiter_prefix: "):
        load_config_text('[mqtt_out]\nprefix = "livemon"\narbiter_prefix = "livemon/arbiter"')
