"""livemon.io.broker: the one connect-with-back-off, against a real mosquitto."""

from __future__ import annotations

import asyncio
import logging
import time

import aiomqtt
import pytest

from livemon.io.broker import BrokerLink, BrokerSettings, delivered, handed, make_client, topic
from tests.conftest import Broker, free_port


async def until(cond, timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def test_topic_levels_are_escaped_once() -> None:
    assert topic("a/b", "games", "r1/b2", "x+#%") == "a/b/games/r1%2Fb2/x%2B%23%25"


async def test_a_broker_that_comes_late_is_reached_with_back_off_and_one_line_per_attempt(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, "livemon.io.broker")
    port = free_port()
    link = BrokerLink("probe", BrokerSettings("127.0.0.1", port, max_backoff=0.4), base_delay=0.05)
    got: list[str] = []

    async def session(client: aiomqtt.Client) -> None:
        await client.subscribe("t/#")
        await client.publish("t/x", b"hello")
        async for message in client.messages:
            got.append(message.payload.decode())  # type: ignore[union-attr]
            return

    task = asyncio.create_task(link.run(session))
    await until(lambda: link.backoff.failures >= 3, 10, "three failed attempts")
    assert not task.done() and link.connects == 0 and link.last_error
    retries = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(retries) >= 3 and all(m.startswith(f"probe: broker 127.0.0.1:{port}: ") for m in retries)
    assert not any(r.exc_info for r in caplog.records)  # an expected fault: a line, no traceback
    broker = Broker(tmp_path, port).start()
    try:
        await asyncio.wait_for(task, 10)  # the session returned: the link is done
    finally:
        broker.stop()
    assert got == ["hello"] and link.connects == 1 and link.backoff.failures == 0


async def test_lost_connections_are_retried_and_bugs_survive_only_when_asked(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, "livemon.io.broker")
    broker = Broker(tmp_path).start()
    try:
        settings = BrokerSettings("127.0.0.1", broker.port, max_backoff=0.2)
        calls = 0

        async def flaky(client: aiomqtt.Client) -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise ExceptionGroup("in a task group", [aiomqtt.MqttError("lost")])
            if calls == 2:
                raise RuntimeError("a bug")

        await asyncio.wait_for(BrokerLink("survivor", settings, base_delay=0.01, survive_bugs=True).run(flaky), 10)
        assert calls == 3
        assert any("unexpected error" in r.getMessage() and r.exc_info for r in caplog.records)

        calls = 0
        with pytest.raises(RuntimeError, match="a bug"):
            await asyncio.wait_for(BrokerLink("strict", settings, base_delay=0.01).run(flaky), 10)
        assert calls == 2  # the broker error was retried, the bug was not swallowed
    finally:
        broker.stop()


async def test_stopping_cuts_the_back_off_short() -> None:
    stop = asyncio.Event()
    link = BrokerLink("stopper", BrokerSettings("127.0.0.1", free_port(), max_backoff=60.0), base_delay=30.0,
                      stopping=stop)
    link.lost(aiomqtt.MqttError("refused"), quiet=True)  # next attempt in ~30 s
    task = asyncio.create_task(link.run(lambda client: asyncio.sleep(0)))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    stop.set()
    await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 2 and link.connects == 0


async def test_make_client_takes_the_settings() -> None:
    client = make_client(BrokerSettings("broker.example", 1884, "user", "pw"), "me", v5=True, receive_maximum=3)
    assert (client._hostname, client._port, client.identifier) == ("broker.example", 1884, "me")
    assert client._client._username == b"user" and client._client._protocol == 5  # MQTT v5
    assert client._properties.ReceiveMaximum == 3


async def test_delivered_takes_a_queued_burst_in_a_few_loop_turns_in_order_and_yields_between_slices(broker) -> None:
    """aiomqtt 2.5's iterator costs a loop turn or two per message even when hundreds are queued (the
    bus's pace at 1,000 boards); ``delivered`` hands on what is queued at once, letting the loop run every slice."""
    n = 500
    settings = BrokerSettings("127.0.0.1", broker.port)
    async with make_client(settings, "delivered-probe") as client, make_client(settings, "delivered-sender") as sender:
        await client.subscribe("burst/#", qos=1)
        for i in range(n):
            await sender.publish("burst/x", str(i).encode(), qos=1)
        await until(lambda: len(client.messages) >= n, 10, "the burst queued in aiomqtt")

        async def turns_to_take(messages, count: int) -> tuple[int, list[int]]:  # noqa: ANN001
            turns, got = 0, []

            def tick() -> None:
                nonlocal turns
                turns += 1
                asyncio.get_running_loop().call_soon(tick)

            asyncio.get_running_loop().call_soon(tick)
            async for message in messages:
                got.append(int(message.payload))
                if len(got) == count:
                    return turns, got
            raise AssertionError("the iteration ended")

        plain_turns, first = await turns_to_take(client.messages, 100)  # aiomqtt's own iterator, for reference
        turns, rest = await turns_to_take(delivered(client, slice_seconds=1.0), n - 100)
        assert first + rest == list(range(n))  # nothing lost, nothing reordered
        assert plain_turns >= 100 and turns <= 3, (plain_turns, turns)

        for i in range(n):
            await sender.publish("burst/x", str(i).encode(), qos=1)
        await until(lambda: len(client.messages) >= n, 10, "a second burst queued")
        turns, again = await turns_to_take(delivered(client, slice_seconds=0.0), n)
        assert again == list(range(n)) and turns >= n - 1  # a zero slice: the loop runs between any two


async def test_handed_messages_go_out_in_one_turn_all_delivered_and_a_lost_connection_raises(broker) -> None:
    """The bus's requests are handed to paho without awaiting each PUBACK (aiomqtt's publish made an
    event and a task per message); every one still reaches the broker, in order, and a client whose connection
    went raises as ``publish`` does."""
    n = 300
    settings = BrokerSettings("127.0.0.1", broker.port)
    async with make_client(settings, "handed-probe") as client, make_client(settings, "handed-sender") as sender:
        await client.subscribe("handed/#", qos=1)
        for i in range(n):  # no await between them: one loop turn
            handed(sender, "handed/x", str(i).encode(), qos=1)
        await until(lambda: len(client.messages) >= n, 10, "every handed message delivered")
        got = [int(client._queue.get_nowait().payload) for _ in range(n)]
        assert got == list(range(n))
        await until(lambda: not sender._client._out_messages, 10, "every PUBACK in")  # paho held each until then
    with pytest.raises(aiomqtt.MqttError):
        handed(sender, "handed/x", b"after the connection", qos=1)
