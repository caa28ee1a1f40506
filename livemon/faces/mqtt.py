"""MQTT out: boards, estimates, TTT posteriors and status to a broker; alerts and screening to a separate tree.

Why this shape: MQTT subscribers (dashboards, scoreboards, home-grown bots)
want the *latest* value of each thing, so every message is published
**retained** on a topic of its own. Alerts and the screening table go under ``arbiter_prefix``, a
different topic tree, so a broker ACL can keep them from the public (see
docs/mqtt.md). The publisher only reads the hub: a broker that is down or goes
away is logged and retried with back-off, never raised into the monitor; on
every (re)connect the hub's snapshot is republished, so nothing retained is
left stale by an outage. A removal (a withdrawn game: ``board_removed``,
``player_removed``, ``screening_removed``) publishes an empty retained payload
on each topic it removes, which makes the broker forget the retained message;
a topic published before an outage and gone from the snapshot since is
cleared the same way at the resync.

>>> from livemon.live.messages import Alert, BoardState, TTTRating
>>> cfg = MqttOutConfig(prefix="livemon/wcc")
>>> topic_for(TTTRating("Carlsen, Magnus", 3.1, 0.2, 2830.0, 40.0, 12), cfg)
'livemon/wcc/ttt/Carlsen, Magnus'
>>> topic_for(BoardState("round 1/board 2", "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 0), cfg)
'livemon/wcc/games/round 1%2Fboard 2'
>>> topic_for(Alert("Kramnik,V", "London", 61, 4.1, 70.5, 4.0), cfg)
'livemon-arbiter/default/alerts/London/Kramnik,V'
>>> from livemon.live.messages import PlayerRemoved
>>> cleared_topics(PlayerRemoved("Carlsen, Magnus"), cfg)
['livemon/wcc/players/Carlsen, Magnus', 'livemon/wcc/ttt/Carlsen, Magnus']
"""

from __future__ import annotations

import asyncio
import logging

import aiomqtt

from livemon.config import MqttOutConfig
from livemon.faces.hub import Hub, Subscription
from livemon.io.broker import BrokerLink, BrokerSettings, make_client, message_topic, online_topic
from livemon.faces.hub import ARBITER, ARBITER_CHANNELS, PUBLIC_CHANNELS, route
from livemon.faces.web import codec
from livemon.live.messages import Outgoing

log = logging.getLogger(__name__)

CHANNELS = PUBLIC_CHANNELS + ARBITER_CHANNELS
"""Hub channels forwarded (``games`` carries every board; ``game:<id>`` would repeat them)."""
TOPIC_FIELDS: dict[str, tuple[str, ...]] = {
    "alert": ("event", "player"), "screening": ("event", "player"), "screening_removed": ("event", "player")}
"""Per kind, the fields that make the topic levels after the channel, where they are not the route's key fields
(an event's arbiter reads ``alerts/<event>/#``)."""


def topic_parts(msg: Outgoing) -> tuple[str, ...]:
    """The free-text levels of a message's topic after its channel (escaped by :func:`message_topic`)."""
    fields = TOPIC_FIELDS.get(msg.kind) or route(msg).key_fields
    return tuple(str(getattr(msg, f)) for f in fields)


def topic_for(msg: Outgoing, cfg: MqttOutConfig) -> str:
    """The topic a message is published on (docs/mqtt.md): its channel and key levels under the prefix of its audience."""
    r = route(msg)
    return message_topic(cfg, r.channel, topic_parts(msg), arbiter=r.audience == ARBITER)


def cleared_topics(msg: Outgoing, cfg: MqttOutConfig) -> list[str]:
    """The retained topics a removal clears: the topic of each kind it removes, under the same key."""
    r = route(msg)
    return [message_topic(cfg, channel, topic_parts(msg), arbiter=r.audience == ARBITER) for channel in r.main_channels]


class MqttPublisher:
    """Forwards the hub to an MQTT broker; the monitor runs ``run()`` as a task and cancels it."""

    def __init__(self, hub: Hub, cfg: MqttOutConfig, queue_size: int = 10000) -> None:
        self.hub = hub
        self.cfg = cfg
        self.queue_size = queue_size
        self.published = 0
        self.last_seq = 0  # hub seq up to which everything is published: lag = hub.seq - last_seq
        self.connected = asyncio.Event()
        self.retained: set[str] = set()  # topics holding a retained message of ours
        self.online_topic = online_topic(cfg)
        self.link = BrokerLink("mqtt_out", BrokerSettings.of(cfg), self._client, survive_bugs=True, logger=log)

    @property
    def connects(self) -> int:
        """Connections made so far."""
        return self.link.connects

    async def run(self) -> None:
        """Connect, publish, and on any broker trouble log, wait (1 s doubling to ``max_backoff``) and retry."""
        sub = self.hub.subscribe(CHANNELS, maxsize=self.queue_size)
        try:
            await self.link.run(lambda client: self._session(client, sub), on_down=self.connected.clear)
        finally:
            self.hub.unsubscribe(sub)
            self.connected.clear()

    def _client(self) -> aiomqtt.Client:
        will = aiomqtt.Will(self.online_topic, b"offline", qos=self.cfg.qos, retain=True)
        return make_client(self.link.settings, will=will, timeout=10)

    async def _session(self, client: aiomqtt.Client, sub: Subscription) -> None:
        self.connected.set()
        log.info("mqtt_out: publishing under %s and %s", self.cfg.prefix, self.cfg.arbiter_prefix)
        await client.publish(self.online_topic, b"online", qos=self.cfg.qos, retain=True)
        await self._resync(client, sub)
        while True:
            if sub.overflowed:
                log.warning("mqtt_out: fell %d messages behind; republishing the snapshot", self.queue_size)
                await self._resync(client, sub)
            seq, msg = await self._next(client, sub)
            await self._publish(client, msg)
            self.last_seq = seq

    async def _next(self, client: aiomqtt.Client, sub: Subscription) -> tuple[int, Outgoing]:
        """The next hub message, or MqttError as soon as the broker goes (not at the next publish)."""
        gone: asyncio.Future[None] | None = getattr(client, "_disconnected", None)  # aiomqtt 2.x internal
        if gone is None:
            return await sub.queue.get()
        get = asyncio.ensure_future(sub.queue.get())
        await asyncio.wait((get, gone), return_when=asyncio.FIRST_COMPLETED)
        if get.done():
            return get.result()
        get.cancel()
        raise aiomqtt.MqttError("connection lost")  # the queued message waits for the resync

    async def _resync(self, client: aiomqtt.Client, sub: Subscription) -> None:
        """Republish the latest of everything: what a disconnection or overflow may have skipped."""
        self.hub.resubscribe(sub)
        seq = self.hub.seq
        latest: dict[int, Outgoing] = {}
        for channel in CHANNELS:  # read at once: later messages queue behind
            for msg in self.hub.snapshot(channel)[1]:
                latest[id(msg)] = msg
        current = {topic_for(msg, self.cfg) for msg in latest.values()}
        for topic in sorted(self.retained - current):  # removed while we could not say so
            await client.publish(topic, b"", qos=self.cfg.qos, retain=True)
            self.retained.discard(topic)
        for msg in latest.values():
            await self._publish(client, msg)
        self.last_seq = seq

    async def _publish(self, client: aiomqtt.Client, msg: Outgoing) -> None:
        if route(msg).removes:
            for topic in cleared_topics(msg, self.cfg):  # an empty retained payload: the broker forgets it
                await client.publish(topic, b"", qos=self.cfg.qos, retain=True)
                self.retained.discard(topic)
        else:
            topic = topic_for(msg, self.cfg)
            await client.publish(topic, codec.to_json(msg), qos=self.cfg.qos, retain=True)
            self.retained.add(topic)
        self.published += 1
