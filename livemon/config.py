"""``config.toml`` read with :mod:`tomllib` into typed dataclasses.

Every key has a default that works on a fresh machine, so an empty or missing
file is a valid configuration. Unknown keys, values of the wrong type, ``nan``
and ``inf`` are rejected at start with an error that names the key and the bad
value (and the file, when read from one).

>>> cfg = load_config_text('[engine]\\ndepth = 10')
>>> cfg.engine.depth, cfg.engine.multipv
(10, 4)
>>> load_config_text('[engine]\\ndepth = "deep"')
Traceback (most recent call last):
...
livemon.config.ConfigError: engine.depth: expected int, got 'deep'
>>> load_config_text('[monitor]\\nstatus_seconds = nan')
Traceback (most recent call last):
...
livemon.config.ConfigError: monitor.status_seconds: expected a finite number, got nan
"""

from __future__ import annotations

import dataclasses
import math
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from livemon.errors import LivemonError
from livemon.rating.points import FIDE_POINTS, Points, PointsError
from livemon.rating.timecontrol import CATEGORIES
from livemon.rating.ttt_params import TIME_UNITS, TTTParams


class ConfigError(LivemonError, ValueError):
    """A bad configuration value; the message names the key."""


def _range(where: str, obj: Any, ranges: "typing.Mapping[str, tuple[float, float]]") -> None:
    """Check each ``key: (lo, hi)`` of ``ranges`` on ``obj`` (None is left to the key's own check): one line
    naming the key and the accepted range. The upper bounds are what a real deployment could want, many times
    over; beyond them a value would exhaust memory, CPU or time (a queue of 10^12, a search of depth 10^5).

    >>> _range("engine", EngineConfig(multipv=100000), {"multipv": (1, 256)})
    Traceback (most recent call last):
    ...
    livemon.config.ConfigError: engine.multipv: must be in 1..256, got 100000
    """
    for key, (lo, hi) in ranges.items():
        value = getattr(obj, key)
        if value is None:
            continue
        if not lo <= value <= hi:  # also refuses nan
            raise ConfigError(f"{where}.{key}: must be in {_num(lo)}..{_num(hi)}, got {value!r}")


def _num(x: float) -> str:
    """A bound as it reads best: 1000000 not 1e+06, 0.05 not 0.05000."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


def _host(where: str, value: str) -> None:
    """A host name or address: not empty (an empty host listens on, or connects to, every interface)."""
    if not value.strip() or value != value.strip() or any(ord(c) < 33 for c in value) or len(value) > 253:
        raise ConfigError(f"{where}: expected a host name or address (not empty, no spaces), got {value!r}")


def check_topic_filter(where: str, topic: str) -> None:
    """An MQTT topic filter as the broker takes it: ``#`` only alone as the last level, ``+`` only alone
    in a level, no NUL, at most 65,535 bytes.

    >>> check_topic_filter("feeds.x.topic", "event/+/moves/#")
    >>> check_topic_filter("feeds.x.topic", "#/a")
    Traceback (most recent call last):
    ...
    livemon.config.ConfigError: feeds.x.topic: '#' may only be the whole last level of a topic filter, got '#/a'
    """
    if not topic or "\0" in topic or len(topic.encode()) > 65535:
        raise ConfigError(f"{where}: expected a topic filter of 1..65535 bytes without NUL, got {topic!r}")
    levels = topic.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            raise ConfigError(f"{where}: '#' may only be the whole last level of a topic filter, got {topic!r}")
        if "+" in level and level != "+":
            raise ConfigError(f"{where}: '+' may only be a whole level of a topic filter, got {topic!r}")


def _plain_path(where: str, value: str, folder_ok: bool) -> None:
    """A path that, when it exists, is a regular file (or a folder, where ``folder_ok``): a device such as
    /dev/zero (endless, and of size 0 to ``stat``) or a FIFO (a read that blocks for ever) is refused."""
    import stat

    try:
        mode = os.stat(value).st_mode
    except OSError:
        return  # not there (yet): the feed says so when it reads
    if stat.S_ISREG(mode) or (folder_ok and stat.S_ISDIR(mode)):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
    want = "a regular file or a folder" if folder_ok else "a regular file"
    raise ConfigError(f"{where}: expected {want}, got {kind}: {value!r}")


@dataclass
class EngineConfig:
    path: str = "/usr/games/stockfish"
    """UCI engine executable."""
    depth: int | None = 12
    """Fixed search depth per position (set ``nodes`` instead for a node limit)."""
    nodes: int | None = None
    """Fixed node count per position; when set it replaces ``depth``."""
    multipv: int = 4
    """Candidate lines per position: the best serves the gain, all serve the E(c) posterior."""
    threads: int = 1
    """Threads per engine process. 1 keeps evaluations reproducible."""
    hash_mb: int = 32
    """Hash table per engine process, MiB."""
    processes: int = 1
    """Engine processes in the pool (the live monitor)."""
    timeout: float = 60.0
    """Seconds before a search is considered hung and the engine restarted."""
    start_timeout: float = 20.0
    """Seconds an engine may take to start (the UCI handshake and options) before it is killed and retried."""
    start_attempts: int = 3
    """Tries to start an engine (waits 1 s, 2 s, 4 s … between them) before its start fails with one log line."""
    retries: int = 2
    """Live pool: times a position is retried on a restarted engine before its request fails."""
    backlog_high: int = 16
    """Live pool: positions waiting above which each game's newest position gets a quick eval-bar preview."""
    backlog_low: int = 4
    """Live pool: positions waiting at or below which previews stop (estimates always use depth/nodes)."""
    min_depth: int = 6
    """Live pool: depth of the quick eval-bar previews; set it to ``depth`` for no previews."""
    min_nodes: int = 10000
    """Live pool: node limit of the quick eval-bar previews when ``nodes`` is set."""

    RANGES = {"depth": (1, 100), "nodes": (1, 10**10), "multipv": (1, 256), "threads": (1, 1024),
              "hash_mb": (1, 65536), "processes": (1, 256), "min_depth": (1, 100), "min_nodes": (1, 10**10),
              "start_attempts": (1, 100), "retries": (0, 100), "timeout": (0.1, 86400),
              "start_timeout": (0.1, 3600), "backlog_high": (1, 10**7)}
    """Accepted range of each numeric key (a depth of 10^5 never ends, a MultiPV over 256 exceeds any
    position's legal moves, a timeout under 0.1 s fails every search)."""

    def validate(self) -> None:
        if self.depth is None and self.nodes is None:
            raise ConfigError("engine: set depth or nodes")
        if not self.path.strip():
            raise ConfigError("engine.path: must not be empty")
        _range("engine", self, self.RANGES)
        if not 0 <= self.backlog_low < self.backlog_high:
            raise ConfigError(
                f"engine.backlog_low: must be at least 0 and below backlog_high ({self.backlog_high}), got {self.backlog_low!r}"
            )


@dataclass
class StoreConfig:
    path: str = "livemon.sqlite"
    """SQLite database: position cache, moves, results, estimates."""
    backup_minutes: float = 30.0
    """A live monitor copies the store (SQLite's online backup) this often; 0: never (docs/operations.md)."""
    backup_path: str = ""
    """Where the backup goes (replaced atomically each time); empty: the store's path + ".backup"."""

    def validate(self) -> None:
        if not self.path.strip():
            raise ConfigError("store.path: must not be empty")
        if self.backup_minutes != 0:  # 0: never; else at least a minute apart (a copy of the whole store each time)
            _range("store", self, {"backup_minutes": (1, 525600)})


@dataclass
class AnalysisConfig:
    engine_strength: float | None = None
    """r̄_e of the engine profile (Elo); unset: calibration, else Algorithm 3."""
    skip_moves: int = 0
    """First moves of each side left out of the E(c) posterior (the paper skips 12)."""
    all_pairs: bool = False
    """Algorithm 2 over all pairs of players instead of the pairs that met."""
    c_min: float = 0.0
    c_max: float = 10.0
    """Range of the uniform prior of c."""
    rating_pool: str = "FIDE classical"
    """The rating scale of the event's rating tags (and so of the performance Elo): a calibration
    made for another pool (lichess, chess.com, FIDE rapid...) gives a warning, once."""

    def validate(self) -> None:
        _range("analysis", self, {"engine_strength": (-1000, 5000), "skip_moves": (0, 1000), "c_max": (0.01, 100)})
        if not 0 <= self.c_min < self.c_max:
            raise ConfigError(f"analysis.c_min: must be at least 0 and below c_max ({self.c_max}), got {self.c_min!r}")
        if not self.rating_pool.strip():
            raise ConfigError("analysis.rating_pool: must not be empty")


@dataclass
class ScreeningConfig:
    notice_z: float = 2.5
    """z at which a player is reported to arbiters as a notice (ROI 62.5; supports other evidence)."""
    alert_z: float = 4.0
    """z at which an alert is raised (ROI 70)."""
    min_positions: int = 60
    """No notice or alert before a player has this many screened positions in the event."""
    statistic: str = "match"
    """The z that raises alerts: match (top-move matches), loss (average loss) or max (the larger)."""
    book_moves: int = 8
    """First moves of each side left out of screening as opening theory (Regan skips 8)."""
    book: str = ""
    """Polyglot opening book; positions found in it are left out of screening. Empty: none."""
    eval_bound: float = 3.0
    """Positions where the best move's value is beyond ±this many pawns (decided games) are left out."""
    scope: str = "event"
    """What "per event" means: event (the Event tag) or all (every game seen is one event, named event_name)."""
    event_name: str = "all games"
    """The event's name when scope = "all"."""
    min_ttt_games: int = 10
    """A player without a rating tag is screened at their TTT rating only with at least this many finished
    games behind it; with fewer they are listed as unrated (a rating from a game or two is mostly the prior)."""
    juniors: list[str] = field(default_factory=list)
    """Players the arbiters know to be juniors or fast improvers (as named in the games, or by FIDE id where the games
    carry WhiteFideId/BlackFideId tags, as lichess broadcasts do: an id holds whatever the spelling): each tag is read as a
    K = 40 rating, which may trail the player by a few hundred points, so the event's results move the strength
    the moves are compared with further (a junior event's players are read so already, by the event's name)."""
    time_control: str = "auto"
    """The time control the players are compared with: classical, rapid or blitz (every screened game is of it),
    or auto: each event's from its games' TimeControl tags (a tag that may be minutes or seconds, such as 90+30,
    is read as the slower of the two; no tag: classical). Blitz is read against rapid play (no blitz was fitted)."""

    def validate(self) -> None:
        if self.time_control not in ("auto", *CATEGORIES):
            raise ConfigError(f"screening.time_control: expected auto, classical, rapid or blitz, got {self.time_control!r}")
        if any(not isinstance(n, str) or not n.strip() for n in self.juniors):
            raise ConfigError(f"screening.juniors: expected player names or FIDE ids, got {self.juniors!r}")
        if self.scope not in ("event", "all"):
            raise ConfigError(f"screening.scope: expected event or all, got {self.scope!r}")
        if self.statistic not in ("match", "loss", "max"):
            raise ConfigError(f"screening.statistic: expected match, loss or max, got {self.statistic!r}")
        _range("screening", self, {"alert_z": (0.1, 100), "min_positions": (1, 10**6), "book_moves": (0, 1000),
                                   "min_ttt_games": (0, 10**6), "eval_bound": (0.01, 100)})
        if not 0 < self.notice_z <= self.alert_z:
            raise ConfigError(f"screening.notice_z: must be positive and at most alert_z ({self.alert_z}), got {self.notice_z!r}")
        if not self.event_name.strip():
            raise ConfigError("screening.event_name: must not be empty")
        if self.book:
            _plain_path("screening.book", self.book, folder_ok=False)
        if self.book and not Path(self.book).is_file():
            raise ConfigError(f"screening.book: no such file {self.book!r}")


_TTT_ALIASES = {"max_iterations": "max_sweeps"}
"""Older names of [ttt] keys, still read."""


@dataclass
class TTTConfig:
    """The ``[ttt]`` table: the model's keys (those of :class:`~livemon.rating.ttt_params.TTTParams`,
    flat in the table, with its defaults and checks) and how livemon uses the fit.

    >>> cfg = load_config_text('[ttt]\\nbeta = 2.0\\nmax_iterations = 50\\ntime_unit = "round"')
    >>> cfg.ttt.params.beta, cfg.ttt.params.max_sweeps, cfg.ttt.time_unit
    (2.0, 50, 'round')
    >>> load_config_text('[ttt]\\np_draw = 1.5')
    Traceback (most recent call last):
    ...
    livemon.config.ConfigError: ttt.p_draw: must be in (0, 1), got 1.5
    """

    params: TTTParams = field(default_factory=TTTParams)
    """The model and solver parameters (mu0, sigma0, beta, tau, p_draw, model, nu0, zeta0, zeta,
    tolerance, max_sweeps, accelerate, inner_passes)."""
    time_unit: str = "day"
    """day, week, month, year or round."""
    rating_priors: bool = False
    """``livemon fit``: prior of a player with a rating tag (WhiteElo/BlackElo, on today's FIDE scale by the
    game's date: :mod:`livemon.rating.scale`): N(mu0 + (Elo − elo_at_mu0)/elo_per_unit, elo_sigma²). The live
    refresh always uses them."""
    elo_at_mu0: float = 1500.0
    """Elo that maps to mu0 for rating-tag priors and the Elo scale of the output."""
    elo_per_unit: float = 200.0
    """Elo points per skill unit (β) for rating-tag priors and the Elo scale of the output."""
    elo_sigma: float = 1.0
    """Prior sd, in skill units, of a player with a rating tag."""

    MODEL_RANGES = {
        "mu0": (-1000, 1000), "sigma0": (1e-3, 1000), "beta": (1e-3, 1000), "tau": (0, 100),
        "nu0": (-1000, 1000), "zeta0": (1e-6, 100), "zeta": (0, 100), "tolerance": (1e-12, 1),
        "max_sweeps": (1, 10**6), "inner_passes": (1, 1000)}
    """Accepted range of the model's keys, in skill units (a beta of 1e308 overflows every message)."""

    @classmethod
    def from_table(cls, table: dict[str, Any], prefix: str = "ttt") -> "TTTConfig":
        """Read the flat ``[ttt]`` table: model keys into :attr:`params`, the others here."""
        model_hints = typing.get_type_hints(TTTParams)
        own_hints = typing.get_type_hints(cls)
        own_hints.pop("params")
        model_kw: dict[str, Any] = {}
        own_kw: dict[str, Any] = {}
        for key, value in table.items():
            name = _TTT_ALIASES.get(key, key)
            if name in model_hints:
                model_kw[name] = _check_type(f"{prefix}.{key}", value, model_hints[name])
            elif key in own_hints:
                own_kw[key] = _check_type(f"{prefix}.{key}", value, own_hints[key])
            else:
                known = ", ".join(sorted(set(model_hints) | set(own_hints) | set(_TTT_ALIASES)))
                raise ConfigError(f"{prefix}.{key}: unknown key (known: {known})")
        try:
            params = TTTParams(**model_kw)
        except ValueError as exc:
            raise ConfigError(f"{prefix}.{exc}") from None
        _range(prefix, params, cls.MODEL_RANGES)
        obj = cls(params, **own_kw)
        obj.validate()
        return obj

    def elo_prior(self, elo: float) -> tuple[float, float]:
        """Prior (mu, sigma) in skill units of a player with rating tag ``elo``."""
        return self.params.mu0 + (elo - self.elo_at_mu0) / self.elo_per_unit, self.elo_sigma

    def to_elo(self, mu: float, sigma: float) -> tuple[float, float]:
        """A skill posterior on the Elo scale of the rating-tag priors."""
        return self.elo_at_mu0 + (mu - self.params.mu0) * self.elo_per_unit, sigma * self.elo_per_unit

    def validate(self) -> None:
        if self.time_unit not in TIME_UNITS:
            raise ConfigError(f"ttt.time_unit: expected {', '.join(TIME_UNITS)}, got {self.time_unit!r}")
        _range("ttt", self, {"elo_per_unit": (1, 10000), "elo_sigma": (1e-3, 1000), "elo_at_mu0": (-10000, 10000)})


FEED_TYPES = ("file", "http", "stream", "mqtt", "replay")


@dataclass
class FeedConfig:
    """One live feed, a ``[[feeds]]`` table in config.toml (docs/feeds.md): its ``type`` picks the class
    that reads the rest (:class:`FileFeedConfig`, :class:`HttpFeedConfig`, :class:`StreamFeedConfig`,
    :class:`MqttFeedConfig`, :class:`ReplayFeedConfig`), so a key of another type is an unknown key.

    >>> cfg = load_config_text('[[feeds]]\\nname = "hall"\\ntype = "file"\\npath = "round.pgn"')
    >>> type(cfg.feeds[0]).__name__, cfg.feeds[0].interval
    ('FileFeedConfig', 2.0)
    >>> load_config_text('[[feeds]]\\nname = "r"\\npath = "games.pgn"\\ninterval = 1')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    livemon.config.ConfigError: feeds.r.interval: unknown key of a replay feed (known: default_delay, identity, ...)
    """

    name: str = ""
    """Unique name, used in messages, logs and ``livemon status``."""
    type: str = "replay"
    """file, http, stream, mqtt or replay."""

    @classmethod
    def from_table(cls, table: dict[str, Any], prefix: str = "feeds") -> "FeedConfig":
        """The feed class of the table's ``type`` (default replay), built from the table."""
        name = table.get("name")
        where = f"feeds.{name}" if isinstance(name, str) and name.strip() else prefix
        kind = table.get("type", "replay")
        if kind not in FEED_CLASSES:
            raise ConfigError(f"{where}.type: expected one of {', '.join(FEED_TYPES)}, got {kind!r}")
        feed: FeedConfig = _build(FEED_CLASSES[kind], table, where)
        return feed

    @property
    def where(self) -> str:
        return f"feeds.{self.name}" if self.name.strip() else "feeds"

    def validate(self) -> None:
        if not self.name.strip():
            raise ConfigError("feeds.name: every feed needs a name")
        if len(self.name) > 200 or any(ord(c) < 32 for c in self.name):
            raise ConfigError(f"feeds.name: expected at most 200 characters, no control characters, got {self.name[:200]!r}")
        kind = _FEED_TYPE_OF.get(type(self))
        if self.type != kind:
            raise ConfigError(f"{self.where}.type: expected {kind!r} for a {type(self).__name__}, got {self.type!r}")
        identity = getattr(self, "identity", "auto")
        if identity not in ("auto", "tags"):
            raise ConfigError(f"{self.where}.identity: expected auto or tags, got {identity!r}")


@dataclass
class FileFeedConfig(FeedConfig):
    """``type = "file"``: a PGN file or a DGT LiveChess round folder, polled."""

    type: str = "file"
    path: str = ""
    """A PGN file or a DGT LiveChess round folder."""
    interval: float = 2.0
    """Seconds between polls."""
    follow: bool = True
    """Keep watching for changes (false: read once and finish)."""
    identity: str = "auto"
    """How games are told apart: auto (GameURL, unique URL Site, else tags) or tags (Event+Round+White+Black)."""
    max_body_mb: float = 64.0
    """Largest file read, in MB; larger: one error, skipped."""
    withdraw_after: float = 10.0
    """Seconds (and at least 3 whole reads) a game must be missing from its round before it is withdrawn; 0 = never."""

    def validate(self) -> None:
        super().validate()
        if not self.path:
            raise ConfigError(f"{self.where}.path: required for a file feed")
        _range(self.where, self, {"interval": (0.05, 86400), "withdraw_after": (0, 10**6), "max_body_mb": (0.001, 4096)})
        _plain_path(f"{self.where}.path", self.path, folder_ok=True)


@dataclass
class UrlFeedConfig(FeedConfig):
    """The keys the feeds read over HTTP share (:class:`HttpFeedConfig` polls a URL, :class:`StreamFeedConfig`
    holds one GET open); not a ``type`` of its own. The defaults are the same for both."""

    url: str = ""
    """An http:// or https:// URL: a round's multi-game PGN (http) or a round stream (stream)."""
    timeout: float = 30.0
    """Seconds before a read is given up: a whole poll (http: connecting, headers, the whole body) or a
    silence of the stream (stream: then it reconnects)."""
    max_backoff: float = 60.0
    """Longest wait between retries after errors (the wait doubles per error up to this)."""
    identity: str = "auto"
    """How games are told apart: auto (GameURL, unique URL Site, else tags) or tags (Event+Round+White+Black)."""
    max_body_mb: float = 64.0
    """Largest piece read, in MB (http: a response body; stream: a single game); larger: one error, skipped."""

    def validate(self) -> None:
        super().validate()  # the type is checked there, so it names this feed's own
        _url(self.where, self.url, self.type)
        _range(self.where, self, {"timeout": (0.1, 86400), "max_backoff": (0.05, 86400), "max_body_mb": (0.001, 4096)})


@dataclass
class HttpFeedConfig(UrlFeedConfig):
    """``type = "http"``: a URL returning a round's multi-game PGN, polled with conditional requests."""

    type: str = "http"
    interval: float = 2.0
    """Seconds between polls (and the first retry delay after an error)."""
    withdraw_after: float = 10.0
    """Seconds (and at least 3 whole reads) a game must be missing from its round before it is withdrawn; 0 = never."""

    def validate(self) -> None:
        super().validate()
        _range(self.where, self, {"interval": (0.05, 86400), "withdraw_after": (0, 10**6)})


@dataclass
class StreamFeedConfig(UrlFeedConfig):
    """``type = "stream"``: one long-lived GET in the lichess broadcast round-stream format
    (``/api/stream/broadcast/round/{id}.pgn``)."""

    type: str = "stream"
    interval: float = 2.0
    """First reconnect delay, seconds (doubling per failure up to ``max_backoff``)."""

    def validate(self) -> None:
        super().validate()
        _range(self.where, self, {"interval": (0.05, 86400)})


@dataclass
class MqttFeedConfig(FeedConfig):
    """``type = "mqtt"``: one JSON message per ply on a topic of the broker (``[broker]``, or ``broker``)."""

    type: str = "mqtt"
    topic: str = ""
    """The topic filter (wildcards allowed) carrying JSON move messages."""
    broker: "BrokerConfig | None" = None
    """A broker of this feed's own (a ``broker`` table); unset: the shared ``[broker]``."""
    interval: float = 2.0
    """First reconnect delay, seconds (doubling per failure up to ``max_backoff``)."""
    max_backoff: float = 60.0
    """Longest wait between reconnection attempts."""
    gap_wait: float = 30.0
    """Seconds a game waits for a missing ply (the later ones held) before one line says what recovers them."""

    def validate(self) -> None:
        super().validate()
        if not self.topic:
            raise ConfigError(f"{self.where}.topic: required for a mqtt feed")
        _range(self.where, self, {"interval": (0.05, 86400), "max_backoff": (0.05, 86400), "gap_wait": (0.1, 86400)})
        check_topic_filter(f"{self.where}.topic", self.topic)


@dataclass
class ReplayFeedConfig(FeedConfig):
    """``type = "replay"`` (the default): finished games played again as if live."""

    type: str = "replay"
    path: str = ""
    """A PGN file of finished games."""
    speed: float = 1.0
    """Time factor (10 = ten times faster than the real game; 0 = no waiting)."""
    max_delay: float = 10.0
    """Cap, in seconds, on any single wait."""
    default_delay: float = 1.0
    """Think time of a ply that has neither [%emt] nor [%clk]."""
    identity: str = "auto"
    """How games are told apart: auto (GameURL, unique URL Site, else tags) or tags (Event+Round+White+Black)."""

    def validate(self) -> None:
        super().validate()
        if not self.path:
            raise ConfigError(f"{self.where}.path: required for a replay feed")
        _range(self.where, self, {"max_delay": (0.001, 86400), "speed": (0, 10**6), "default_delay": (0, 86400)})
        _plain_path(f"{self.where}.path", self.path, folder_ok=False)


FEED_CLASSES: dict[str, type[FeedConfig]] = {
    "file": FileFeedConfig, "http": HttpFeedConfig, "stream": StreamFeedConfig, "mqtt": MqttFeedConfig,
    "replay": ReplayFeedConfig}
"""The config class of each feed type."""
_FEED_TYPE_OF = {cls: kind for kind, cls in FEED_CLASSES.items()}


def _url(where: str, url: str, kind: str) -> None:
    if not url:
        raise ConfigError(f"{where}.url: required for a {kind} feed")
    if not url.startswith(("http://", "https://")) or len(url) > 8192 or any(ord(c) < 33 for c in url):
        raise ConfigError(f"{where}.url: expected an http:// or https:// URL (no spaces, at most 8192 characters), got {url[:200]!r}")


@dataclass
class WebConfig:
    """The WebSocket server and overlay page (docs/websocket.md); read-only views of the hub."""

    enabled: bool = True
    """Serve the WebSocket endpoint and overlay; a port already in use then ends ``serve``/``run`` with one line."""
    host: str = "127.0.0.1"
    """Address to listen on; 127.0.0.1 keeps the server local, 0.0.0.0 opens it to the network."""
    port: int = 8765
    """TCP port of the WebSocket endpoint (/ws) and the HTTP pages (/overlay, /api/snapshot, /healthz); 0 = any free port."""
    arbiter_token: str | None = None
    """Secret a client must send to subscribe to ``alerts``; unset: alerts are not served at all."""
    allowed_origins: list[str] | None = None
    """Browser origins allowed to open the WebSocket (e.g. ["https://example.org"]); unset: any.
    Same-origin pages and non-browser clients are always allowed."""
    max_message_bytes: int = 4096
    """Largest client message answered normally; larger ones get an error frame, and 16 times this closes the connection (1009)."""
    client_queue: int = 1024
    """How many of its messages a client may fall behind (the shared log keeps 4x this), and its queue of
    control frames; beyond, a fresh snapshot. At about 1,300 messages a second (1,000 boards at 20x)
    1,024 is under a second."""
    heartbeat_seconds: float = 15.0
    """Idle interval before an app-level heartbeat frame; also the WebSocket ping interval."""
    send_timeout: float = 10.0
    """Seconds a send may stay blocked on a client that does not read before that client is dropped."""
    process: bool = False
    """Serve the web face from a process of its own, fed by the monitor over a pipe: for hundreds of clients
    (at 1,000 boards and 500 clients the fan-out was half of the monitor's CPU). A child that dies is restarted."""

    def validate(self) -> None:
        _host("web.host", self.host)
        _range("web", self, {"port": (0, 65535), "max_message_bytes": (64, 2**20), "client_queue": (1, 10**6),
                             "heartbeat_seconds": (0.1, 3600), "send_timeout": (0.1, 3600)})
        token = self.arbiter_token
        if token is not None and (len(token.strip()) < 8 or token != token.strip() or len(set(token)) < 4
                                  or len(token) > 1024 or any(ord(c) < 32 for c in token)):
            raise ConfigError("web.arbiter_token: expected 8..1024 characters, at least 4 different ones, no spaces "
                              "around and no control characters (or unset to disable alerts)")
        for i, origin in enumerate(self.allowed_origins or ()):
            if not origin.startswith(("http://", "https://")):
                raise ConfigError(f"web.allowed_origins[{i}]: expected an http:// or https:// origin, got {origin!r}")


BROKER_KEYS = ("host", "port", "username", "password", "tls", "ca_file", "cert_file", "key_file")
"""The keys of a broker table ([broker], or a section's own ``broker``)."""


@dataclass
class BrokerConfig:
    """An MQTT broker: where it is and how to log in (docs/distributed.md, docs/mqtt.md).

    ``[broker]`` is the one broker of the engine bus (``[bus]``), MQTT out (``[mqtt_out]``) and the mqtt
    feeds. Each of them may add a ``broker`` table of its own: without ``host`` it is ``[broker]`` with the
    keys it sets (another user on the same broker, the usual case: the ACL gives the monitor, the
    publisher and each worker a user of its own); with ``host`` it is another broker, read from its
    own keys alone (no credentials of ``[broker]`` go to another host).

    >>> cfg = load_config_text('[broker]\\nhost = "mq.example"\\nport = 8883\\n[mqtt_out.broker]\\nusername = "livemon"')
    >>> cfg.bus.broker.host, cfg.mqtt_out.broker.host, cfg.mqtt_out.broker.port, cfg.mqtt_out.broker.username
    ('mq.example', 'mq.example', 8883, 'livemon')
    """

    host: str = "localhost"
    """Broker host."""
    port: int = 1883
    """Broker port (8883 is the usual TLS port)."""
    username: str | None = None
    """Broker user (docs/distributed.md: the monitor, the publisher and each worker get users of their own)."""
    password: str | None = None
    """Broker password."""
    tls: bool = False
    """Connect with TLS; ``ca_file`` checks the broker (unset: the system's CAs)."""
    ca_file: str = ""
    """CA certificate(s) of the broker, PEM; empty: the system's CAs."""
    cert_file: str = ""
    """Client certificate, PEM, when the broker wants one (with ``key_file``)."""
    key_file: str = ""
    """Private key of ``cert_file``, PEM."""

    def validate(self, where: str = "broker") -> None:
        _host(f"{where}.host", self.host)
        _range(where, self, {"port": (1, 65535)})
        for key in ("username", "password"):
            value = getattr(self, key)
            if value is not None and not 1 <= len(value.encode()) <= 65535:
                raise ConfigError(f"{where}.{key}: expected 1..65535 bytes (or unset), got {len(value.encode())} bytes")
        if self.username is not None and ("\0" in self.username or self.username != self.username.strip()):
            raise ConfigError(f"{where}.username: expected no NUL and no spaces around, got {self.username!r}")
        if bool(self.cert_file) != bool(self.key_file):
            raise ConfigError(f"{where}.cert_file: cert_file and key_file go together")
        for key in ("ca_file", "cert_file", "key_file"):
            value = getattr(self, key)
            if value and not self.tls:
                raise ConfigError(f"{where}.{key}: set only with tls = true, got {value!r}")
            if value and not Path(value).is_file():
                raise ConfigError(f"{where}.{key}: no such file {value!r}")


@dataclass
class MqttOutConfig:
    """Publishing estimates, boards and TTT posteriors to an MQTT broker (docs/mqtt.md)."""

    enabled: bool = False
    """Publish to the broker below; the monitor starts the publisher only when true."""
    broker: BrokerConfig | None = None
    """A broker (or a user) of its own, a ``[mqtt_out.broker]`` table; unset: ``[broker]``. The ACL of
    docs/mqtt.md gives its user write access to both topic trees."""
    prefix: str = "livemon/default"
    """Root of the public topics: <prefix>/games/<id>, <prefix>/players/<name>, <prefix>/ttt/<name>, <prefix>/status."""
    arbiter_prefix: str = "livemon-arbiter/default"
    """Root of the arbiters' topics, <arbiter_prefix>/alerts/<event>/<player>; keep it outside ``prefix`` so an ACL can close it."""
    qos: int = 1
    """MQTT quality of service of every publish: 0, 1 or 2."""
    max_backoff: float = 30.0
    """Longest wait between reconnection attempts (the wait doubles from 1 s up to this)."""

    def validate(self) -> None:
        _range("mqtt_out", self, {"max_backoff": (0.05, 3600)})
        if self.qos not in (0, 1, 2):
            raise ConfigError(f"mqtt_out.qos: expected 0, 1 or 2, got {self.qos!r}")
        for key in ("prefix", "arbiter_prefix"):
            value = getattr(self, key)
            if not value or value.startswith(("/", "$")) or value.endswith("/") or any(c in value for c in "+#\0"):
                raise ConfigError(f"mqtt_out.{key}: expected a topic without wildcards, $ or leading/trailing /, got {value!r}")
        a, b = self.prefix, self.arbiter_prefix
        if a == b or b.startswith(a + "/") or a.startswith(b + "/"):
            raise ConfigError(f"mqtt_out.arbiter_prefix: must lie outside prefix {a!r} so an ACL can separate them, got {b!r}")


BUS_MODES = ("embedded", "mqtt")


@dataclass
class BusConfig:
    """Where engine work runs: in this process, or on workers behind an MQTT broker (docs/distributed.md)."""

    mode: str = "embedded"
    """embedded (the monitor's own engine pool) or mqtt (``livemon worker`` processes through the broker)."""
    broker: BrokerConfig | None = None
    """A broker (or a user) of its own, a ``[bus.broker]`` table; unset: ``[broker]``. A worker's name is
    its broker user (docs/distributed.md: monitors and workers get different ACLs)."""
    prefix: str = "livemon/bus"
    """Topic root: <prefix>/requests, <prefix>/results/<monitor id>, <prefix>/workers/<worker name>/<worker id>."""
    share_group: str = "livemon-workers"
    """Workers take requests from $share/<share_group>/<prefix>/requests: each request goes to one worker."""
    profile: str = ""
    """Engine profile the monitor expects (e.g. "Stockfish 15.1 depth=12 multipv=4"); empty: this machine's
    [engine] (its name, depth or nodes, MultiPV), or with ``profile_from_workers`` the first worker's."""
    profile_from_workers: bool = False
    """With ``profile`` empty, take the profile from the first worker announcement: whoever announces first
    (a rogue announcing depth=1) then sets it. Off: a profile is never taken from an announcement."""
    workers: list[str] | None = None
    """Names of the workers whose answers are used (their broker users, docs/distributed.md); unset: any name
    the broker lets answer. Answers from others, and on the bare results topic, are refused."""
    request_timeout: float = 30.0
    """Seconds after which an unanswered request is published again (its worker may have died)."""
    requests_per_engine: int = 2
    """Requests the monitor keeps on the broker per worker engine; the rest wait at the monitor, newest first.
    A worker takes up to this many per engine at once (MQTT receive maximum), so the next is at hand when a search ends."""
    max_backoff: float = 30.0
    """Longest wait between reconnection attempts (the wait doubles from 1 s up to this)."""
    spot_check: float = 0.0
    """Fraction of remote results the monitor searches again on its own [engine] (same profile); an alarm line on disagreement."""

    def validate(self) -> None:
        if not 0 <= self.spot_check <= 1:  # also refuses nan
            raise ConfigError(f"bus.spot_check: a fraction from 0 to 1, got {self.spot_check!r}")
        if self.mode not in BUS_MODES:
            raise ConfigError(f"bus.mode: expected embedded or mqtt, got {self.mode!r}")
        _range("bus", self, {"request_timeout": (0.1, 86400), "max_backoff": (0.05, 3600),
                             "requests_per_engine": (1, 1000)})
        p = self.prefix
        if not p or p.startswith(("/", "$")) or p.endswith("/") or any(c in p for c in "+#\0"):
            raise ConfigError(f"bus.prefix: expected a topic without wildcards, $ or leading/trailing /, got {p!r}")
        if not self.share_group or any(c in self.share_group for c in "/+#\0"):
            raise ConfigError(f"bus.share_group: expected a name without / + #, got {self.share_group!r}")
        for i, name in enumerate(self.workers or ()):
            if not 1 <= len(name) <= 64 or any(c in name for c in "/+#") or any(ord(c) < 32 for c in name):
                raise ConfigError(f"bus.workers[{i}]: expected a worker name of 1..64 characters without / + #, got {name!r}")


@dataclass
class MonitorConfig:
    status_seconds: float = 1.0
    """How often the status (feeds, backlog, lag) is published and stored."""
    algorithm2_seconds: float = 5.0
    """How often Algorithm 2 (perceived ratings within the event) is recomputed."""
    ttt_debounce_seconds: float = 2.0
    """Wait after a finished game before the TTT refresh, to batch results that finish together."""
    replay_speed: float = 2.0
    """Speed factor of the bundled replay used when no feed is configured."""

    def validate(self) -> None:
        _range("monitor", self, {"status_seconds": (0.05, 3600), "algorithm2_seconds": (0.1, 86400),
                                 "ttt_debounce_seconds": (0.01, 86400), "replay_speed": (0, 10**6)})


@dataclass
class DisplayConfig:
    """What the faces may show the audience (``livemon.live.audience.display_rules``)."""

    max_interval_width: float = 1000.0
    """No performance figure is shown while its 95% interval is wider than this (Elo). The interval is about
    ±950 Elo on one game's moves and ±475 over a 7-9 game event: at ±500 the figure appears for most players
    by the end of an event and never on one game; until then the screens show accuracy and "n more games"."""

    def validate(self) -> None:
        if not self.max_interval_width > 0:
            raise ConfigError(f"display.max_interval_width: must be positive, got {self.max_interval_width!r}")


@dataclass
class ResultsConfig:
    """Performance and rating change from results, by FIDE's rules (``livemon.rating.fide``)."""

    k_factor: float = 20.0
    """FIDE's K for a player rated below 2400 (40 for juniors under 2300 and players new to the list, which
    a PGN's tags do not say); a player rated 2400 or more is on K = 10. The 400-point rule follows the
    game's date (:mod:`livemon.rating.fide`)."""

    def validate(self) -> None:
        if self.k_factor not in (10.0, 20.0, 40.0):
            raise ConfigError(f"results.k_factor: FIDE's K is 10, 20 or 40, not {self.k_factor!r}")


@dataclass
class EventPlayer:
    """A player of the event's field as its organisers list it (``[[event.players]]``): the forecast counts them from
    the start, a round robin's player resting in its first rounds included."""

    name: str = ""
    """As the games name the player."""
    rating: int = 0
    """On today's FIDE scale; 0: unrated (the games' tags give it once the player has played)."""
    fide_id: str = ""
    """The player's FIDE id, where the games carry FideId tags (it matches the games whatever their spelling)."""
    title: str = ""
    """GM, IM, WGM, ...: shown beside the name where no board of the player is (a player resting this round)."""
    fed: str = ""
    """The player's federation (FIDE's code: NOR, IND, ...), shown as the title is."""

    def validate(self) -> None:
        if not self.name.strip():
            raise ConfigError(f"event.players: a player needs a name, got {self.name!r}")
        if self.rating and not 1000 <= self.rating <= 3500:
            raise ConfigError(f"event.players: {self.name}'s rating: expected 0 (unrated) or 1000 to 3500, got {self.rating!r}")
        if self.fide_id and not self.fide_id.isdigit():
            raise ConfigError(f"event.players: {self.name}'s fide_id: expected digits, got {self.fide_id!r}")
        for key in ("title", "fed"):
            if len(getattr(self, key)) > 8:
                raise ConfigError(f"event.players: {self.name}'s {key}: at most 8 characters, got {getattr(self, key)!r}")


@dataclass
class EventConfig:
    """The event the forecast plays to its end (``livemon forecast``); unset keys are guessed from the games and said."""

    name: str = ""
    """The live forecast: every game the monitor follows is of this one event; empty: events by their Event tag."""
    format: str = ""
    """rr, drr, swiss or ko; empty: guessed from the games."""
    rounds: int = 0
    """Rounds of the whole event; 0: unknown (a round robin's follow from its players; a Swiss needs them)."""
    tiebreaks: list[str] = field(default_factory=list)
    """In order, of direct, sb (Sonneborn-Berger), buchholz; a tie they leave is shared (playoff or lots)."""
    bye_points: float = 1.0
    """A pairing-allocated bye in a Swiss as a game result: 1 (counted as a win), 0.5 (a draw) or 0 (a loss)."""
    points: str = FIDE_POINTS.label
    """What a win, a draw and a loss give in the standings, win-draw-loss: FIDE's 1-0.5-0, or for instance 3-1-0
    ("football" scoring); each a multiple of 0.5."""
    withdrawn: list[str] = field(default_factory=list)
    """Players (as named in the games, or by FIDE id where the games carry FideId tags) who left the event: their
    games to come are not played."""
    players: list[EventPlayer] = field(default_factory=list)
    """The field, where known (``[[event.players]]``): players not yet seen in a game are in the forecast from the
    start; empty: the field is the players of the games."""
    simulations: int = 100_000
    """Simulations of the rest of the event per forecast (the live forecast runs at most 20,000)."""
    live_seconds: float = 1.0
    """The monitor's live forecast (the ``forecast`` channel): at most one started per this many seconds while
    moves come in (one at a time, the newest state each); 0 turns it off."""
    ko_games: int = 2
    """A knockout's classical games per match."""
    ko_tiebreak: str = "rapid"
    """How a knockout match level after its classical games is decided: rapid (two rapid games, then an
    Armageddon game), armageddon (one game, a draw counting as Black's win) or elo (the Elo expected score)."""

    @property
    def scoring(self) -> Points:
        """:attr:`points` read (validated at start-up)."""
        return Points.parse(self.points)

    def validate(self) -> None:
        if self.format not in ("", "rr", "drr", "swiss", "ko"):
            raise ConfigError(f"event.format: expected rr, drr, swiss or ko, got {self.format!r}")
        if self.rounds < 0 or self.rounds > 1000:
            raise ConfigError(f"event.rounds: expected 0 (unknown) to 1000, got {self.rounds!r}")
        for tb in self.tiebreaks:
            if tb not in ("direct", "sb", "buchholz"):
                raise ConfigError(f"event.tiebreaks: expected direct, sb or buchholz, got {tb!r}")
        if self.bye_points not in (0.0, 0.5, 1.0):
            raise ConfigError(f"event.bye_points: expected 0, 0.5 or 1, got {self.bye_points!r}")
        try:
            Points.parse(self.points)
        except PointsError as exc:
            raise ConfigError(f"event.{exc}") from None
        if not 100 <= self.simulations <= 10_000_000:
            raise ConfigError(f"event.simulations: expected 100 to 10,000,000, got {self.simulations!r}")
        if not 0 <= self.live_seconds <= 3600:
            raise ConfigError(f"event.live_seconds: expected 0 (off) to 3600, got {self.live_seconds!r}")
        if not 1 <= self.ko_games <= 20:
            raise ConfigError(f"event.ko_games: expected 1 to 20, got {self.ko_games!r}")
        if self.ko_tiebreak not in ("rapid", "armageddon", "elo"):
            raise ConfigError(f"event.ko_tiebreak: expected rapid, armageddon or elo, got {self.ko_tiebreak!r}")


@dataclass
class Config:
    engine: EngineConfig = field(default_factory=EngineConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    ttt: TTTConfig = field(default_factory=TTTConfig)
    screening: ScreeningConfig = field(default_factory=ScreeningConfig)
    """Fair-play screening thresholds and exclusions (docs/models.md §3)."""
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    feeds: list[FeedConfig] = field(default_factory=list)
    """Live feeds, ``[[feeds]]`` tables; empty: the monitor uses its bundled replay."""
    web: WebConfig = field(default_factory=WebConfig)
    """WebSocket server and overlay page."""
    mqtt_out: MqttOutConfig = field(default_factory=MqttOutConfig)
    """MQTT publisher of estimates, boards and TTT posteriors (off by default)."""
    bus: BusConfig = field(default_factory=BusConfig)
    """Engine work in-process (embedded) or on workers through an MQTT broker."""
    display: DisplayConfig = field(default_factory=DisplayConfig)
    """What the faces may show the audience (the performance figure's interval width)."""
    results: ResultsConfig = field(default_factory=ResultsConfig)
    """Score, TPR and rating change from results (FIDE's K)."""
    event: EventConfig = field(default_factory=EventConfig)
    """The event's format, rounds and tiebreaks for the forecast."""
    broker: BrokerConfig = field(default_factory=BrokerConfig)
    """The MQTT broker of the engine bus, MQTT out and the mqtt feeds (each may have a ``broker`` of its own)."""
    deprecations: list[str] = field(default_factory=list, init=False, repr=False, compare=False)
    """Keys of an older release read under their new names, one line each (said with :meth:`warnings`)."""

    def __post_init__(self) -> None:
        # a section without a broker of its own uses the shared one
        for section in (self.bus, self.mqtt_out, *self.feeds):
            if getattr(section, "broker", False) is None:
                section.broker = self.broker  # type: ignore[attr-defined]

    def validate(self) -> None:
        seen: set[str] = set()
        for feed in self.feeds:
            if feed.name in seen:
                raise ConfigError(f"feeds.{feed.name}: two feeds are named {feed.name!r} (names must be unique)")
            seen.add(feed.name)

    def warnings(self) -> list[str]:
        """Valid but doubtful settings, one line each (the commands print them at start)."""
        out = list(self.deprecations)
        cpus = os.cpu_count() or 1
        if self.engine.processes > cpus:
            out.append(f"engine.processes = {self.engine.processes} is more than the {cpus} CPUs of this machine: "
                       "the engines will share them (each search slower, the same results)")
        return out


def _check_type(key: str, value: Any, hint: Any) -> Any:
    """Return ``value`` converted to ``hint`` or raise a ConfigError naming ``key``."""
    if isinstance(value, float) and not math.isfinite(value):  # TOML has nan and inf: no key wants them
        raise ConfigError(f"{key}: expected a finite number, got {value!r}")
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        for option in options:
            if option is type(None):
                continue
            if dataclasses.is_dataclass(option) and isinstance(value, dict):  # a table: its own faults, by name
                return _check_type(key, value, option)
            try:
                return _check_type(key, value, option)
            except ConfigError:
                pass
        names = " or ".join("a table" if dataclasses.is_dataclass(o) else getattr(o, "__name__", str(o))
                            for o in options if o is not type(None))
        raise ConfigError(f"{key}: expected {names}, got {value!r}")
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        (item,) = typing.get_args(hint)
        return [_check_type(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise ConfigError(f"{key}: expected a table, got {value!r}")
        return _build(typing.cast(type, hint), value, key)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is Any or (isinstance(hint, type) and isinstance(value, hint) and not (hint is int and isinstance(value, bool))):
        return value
    raise ConfigError(f"{key}: expected {getattr(hint, '__name__', hint)}, got {value!r}")


def _build(cls: type, table: dict[str, Any], prefix: str = "") -> Any:
    if "from_table" in cls.__dict__:  # a table with its own reader (TTTConfig, FeedConfig)
        return cls.from_table(table, prefix)  # type: ignore[attr-defined]
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    kind = _FEED_TYPE_OF.get(cls)
    kwargs = {}
    for key, value in table.items():
        full = f"{prefix}.{key}" if prefix else key
        if key not in names:
            of = f" of a {kind} feed" if kind else ""
            raise ConfigError(f"{full}: unknown key{of} (known: {', '.join(sorted(names))})")
        kwargs[key] = _check_type(full, value, hints[key])
    obj = cls(**kwargs)
    if cls is BrokerConfig:
        obj.validate(prefix or "broker")
    elif hasattr(obj, "validate"):
        obj.validate()
    return obj


def _brokers(table: dict[str, Any]) -> list[str]:
    """Give each broker user ([bus], [mqtt_out], mqtt feeds) its whole ``broker`` table, in place; return the
    deprecation lines of the keys an older release read flat in those sections.

    An own ``broker`` table without ``host`` is [broker] with its keys over it; with ``host``, another broker
    (its own keys alone). The flat keys (``[bus] host = …``) are read as that section's own broker, as an
    older release did, with one line per section naming the new keys.
    """
    shared = table.get("broker", {})
    if not isinstance(shared, dict):
        raise ConfigError(f"broker: expected a table, got {shared!r}")
    _build(BrokerConfig, shared, "broker")  # checked first: a fault of it is named as [broker]'s
    users: list[tuple[str, dict[str, Any]]] = []
    for section_name in ("bus", "mqtt_out"):
        if isinstance(table.get(section_name), dict):
            users.append((section_name, table[section_name]))
    feeds = table.get("feeds")
    for i, feed in enumerate(feeds if isinstance(feeds, list) else ()):
        if isinstance(feed, dict) and feed.get("type") == "mqtt":
            name = feed.get("name")
            users.append((f"feeds.{name}" if isinstance(name, str) and name.strip() else f"feeds[{i}]", feed))
    lines = []
    for where, section in users:
        flat = {key: section.pop(key) for key in BROKER_KEYS if key in section}
        if flat:
            if "broker" in section:
                raise ConfigError(f"{where}.{next(iter(flat))}: set the broker in {where}.broker (or [broker]), not both")
            _build(BrokerConfig, flat, where)  # a bad value is named as it was written
            section["broker"] = flat
            old = ", ".join(f"{where}.{key}" for key in flat)
            new = ", ".join(f"{where}.broker.{key}" for key in flat)
            lines.append(f"{old}: deprecated, read as {new}; move them to [broker] (shared by [bus], [mqtt_out] and "
                         f"the mqtt feeds) or to a [{where}.broker] table: the next release refuses them")
        own = section.get("broker")
        if isinstance(own, dict) and "host" not in own:
            section["broker"] = {**shared, **own}
    return lines


def load_config_text(text: str, source: str = "config.toml") -> Config:
    """Parse and validate configuration text (``source`` names it in a syntax error).

    >>> load_config_text('[engine\\ndepth = 3', "event.toml")
    Traceback (most recent call last):
    ...
    livemon.config.ConfigError: event.toml: TOML syntax: Expected ']' at the end of a table declaration (at line 1, column 8)
    """
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: TOML syntax: {exc}") from None
    deprecations = _brokers(table)
    cfg: Config = _build(Config, table)
    cfg.deprecations = deprecations
    return cfg


def load_config(path: str | Path | None) -> Config:
    """Load ``path``; None or a missing default file gives the defaults."""
    if path is None:
        default = Path("config.toml")
        if not default.exists():
            return Config()
        path = default
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    return load_config_text(text, str(path))
