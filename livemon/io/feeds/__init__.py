"""Live feeds: async sources of MoveEvent / GameRollback / GameResult / GameInfo / FeedError.

The game logic is the sans-I/O :class:`GameTracker` (:mod:`livemon.live.tracker`, with
:mod:`livemon.live.reader`, the one PGN reader, and :mod:`livemon.live.splitter`);
the adapters (file, http, stream, mqtt, replay) only move bytes to it. Build
one from config with :func:`open_feed` and iterate it::

    async for message in open_feed(cfg):
        ...

See docs/feeds.md for the formats and the MQTT message schema.
"""

from __future__ import annotations

from typing import Sequence

from livemon.config import (
    ConfigError,
    FeedConfig,
    FileFeedConfig,
    HttpFeedConfig,
    MqttFeedConfig,
    ReplayFeedConfig,
    StreamFeedConfig,
)
from livemon.io.feeds.base import Backoff, BaseFeed, Feed, FeedStatus
from livemon.live.splitter import PgnStreamSplitter
from livemon.live.tracker import (
    GameTracker,
    Ply,
    Snapshot,
    default_game_key,
    parse_chunk,
    tags_key,
)

__all__ = [
    "Backoff", "BaseFeed", "Feed", "FeedStatus", "GameTracker", "PgnStreamSplitter", "Ply", "Snapshot",
    "default_game_key", "open_feed", "open_feeds", "parse_chunk", "tags_key",
]


def open_feed(cfg: FeedConfig) -> Feed:
    """The feed a config table describes (validated already by the config loader): one class per type."""
    cfg.validate()
    key = tags_key if getattr(cfg, "identity", "auto") == "tags" else None
    if isinstance(cfg, FileFeedConfig):
        from livemon.io.feeds.file import FileFeed

        return FileFeed(cfg.name, cfg.path, interval=cfg.interval, follow=cfg.follow, key=key,
                        max_body=int(cfg.max_body_mb * 2**20), withdraw_after=cfg.withdraw_after or None)
    if isinstance(cfg, HttpFeedConfig):
        from livemon.io.feeds.http import HttpFeed

        return HttpFeed(cfg.name, cfg.url, interval=cfg.interval, timeout=cfg.timeout,
                        max_backoff=cfg.max_backoff, key=key, max_body=int(cfg.max_body_mb * 2**20),
                        withdraw_after=cfg.withdraw_after or None)
    if isinstance(cfg, StreamFeedConfig):
        from livemon.io.feeds.stream import StreamFeed

        return StreamFeed(cfg.name, cfg.url, timeout=cfg.timeout, reconnect=cfg.interval,
                          max_backoff=cfg.max_backoff, key=key, max_game=int(cfg.max_body_mb * 2**20))
    if isinstance(cfg, MqttFeedConfig):
        from livemon.io.broker import BrokerSettings
        from livemon.io.feeds.mqtt import MqttFeed

        return MqttFeed(cfg.name, cfg.topic, BrokerSettings.of(cfg), reconnect=cfg.interval, gap_wait=cfg.gap_wait)
    if isinstance(cfg, ReplayFeedConfig):
        from livemon.io.feeds.replay import ReplayFeed

        return ReplayFeed(cfg.name, cfg.path, speed=cfg.speed, max_delay=cfg.max_delay,
                          default_delay=cfg.default_delay, key=key)
    raise ConfigError(f"feeds.{cfg.name}.type: unknown feed type {cfg.type!r}")


def open_feeds(cfgs: Sequence[FeedConfig]) -> list[Feed]:
    """All configured feeds; names must be unique (they tag every message)."""
    seen: set[str] = set()
    for cfg in cfgs:
        if cfg.name in seen:
            raise ConfigError(f"feeds.{cfg.name}.name: two feeds are called {cfg.name!r}")
        seen.add(cfg.name)
    return [open_feed(c) for c in cfgs]
