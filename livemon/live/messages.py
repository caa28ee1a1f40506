"""Typed messages that travel along the pipeline's arrows, and where each outgoing one goes.

Every message is a frozen dataclass with ``to_json``/``from_json`` so that the
same objects can cross an in-process queue or an MQTT broker unchanged. Every
message class has a ``kind`` of its own: :data:`KINDS` maps it back to the
class (a second class with the same kind is refused when it is defined).

Outgoing messages (what the monitor publishes to its faces) derive from
:class:`Outgoing` and declare their own routing: the hub ``channel``, the
``audience`` (:data:`PUBLIC` or :data:`ARBITER`), the fields that make the
snapshot ``key``, and optionally a per-key ``detail`` channel (``game:<id>``).
The hub, MQTT out, the WebSocket server and the TUI read that and nothing
else, so a new outgoing message is one class here. A *removal* (``removes``:
the kinds it takes away, e.g. :class:`BoardRemoved`) deletes the entries of
those kinds under its key from every snapshot, and is itself kept only on the
detail channel (``game:<id>``: who asks about that one game learns it was
withdrawn). :data:`OUTGOING` is the
registry; a channel carries messages of one audience only, which is checked
when a class is defined.

>>> m = MoveEvent(game_id="g1", ply=1, uci="e2e4", san="e4",
...               fen_before="rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
>>> MoveEvent.from_json(m.to_json()) == m
True
>>> KINDS["move"] is MoveEvent, sorted(OUTGOING)  # doctest: +NORMALIZE_WHITESPACE
(True, ['alert', 'board', 'board_removed', 'forecast', 'moment', 'moment_removed', 'player', 'player_removed',
        'quarantine', 'screening', 'screening_removed', 'status', 'ttt'])
>>> b = BoardState("r1/b2", "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 0)
>>> b.channels(), b.key, b.audience
(('games', 'game:r1/b2'), 'r1/b2', 'public')
>>> PUBLIC_CHANNELS, ARBITER_CHANNELS
(('games', 'players', 'ttt', 'status', 'moments', 'forecast'), ('alerts', 'screening', 'arbiter_status'))
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import json
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import InitVar, dataclass
from typing import Any, ClassVar, Literal, TypeVar

from livemon.errors import InputError
from livemon.live.audience import BoardFigures
from livemon.rating.accuracy import MoveClass

T = TypeVar("T", bound="Message")

Audience = Literal["public", "arbiter"]
PUBLIC: Audience = "public"
ARBITER: Audience = "arbiter"

MESSAGE_VERSION = 3
"""Version of the outgoing messages' JSON (``"v"``): 3 made a player's ``display`` the headline estimate's
(``estimate``; it was ``performance``'s); 2 added ``ts`` and ``v``; 1 was without both."""

KINDS: dict[str, type[Message]] = {}
"""Every message class by its ``kind`` (incoming, outgoing and the engine bus's)."""

OUTGOING: dict[str, type[Outgoing]] = {}
"""The outgoing message classes by ``kind``, in the order they were defined."""

CHANNEL_AUDIENCE: dict[str, Audience] = {}
"""Every hub channel (and detail-channel prefix) with the one audience it may carry."""


_ATOMS = frozenset((str, int, float, bool, type(None)))


class GainCounts(Mapping[str, int]):
    """A player's sparse gain histogram as a message carries it: ``{"gain": count}``, read-only, in two
    int arrays (~8 bytes a bin instead of ~80 as a dict of strings: the hub's log keeps thousands of
    player messages, and their histograms would be most of its memory).

    Equal to the dict it reads as; JSON (:meth:`Message.to_dict`) gives that dict.

    >>> h = GainCounts([-10, 0, 25], [2, 1, 1])
    >>> dict(h), h["-10"], h == {"-10": 2, "0": 1, "25": 1}, len(h)
    ({'-10': 2, '0': 1, '25': 1}, 2, True, 3)
    """

    __slots__ = ("_counts", "_gains")

    def __init__(self, gains: Iterable[int], counts: Iterable[int]) -> None:
        self._gains, self._counts = array("i", gains), array("i", counts)
        if len(self._gains) != len(self._counts):
            raise ValueError("GainCounts: as many counts as gains")

    def __getitem__(self, key: str) -> int:
        try:
            g = int(key)
        except (TypeError, ValueError):
            raise KeyError(key) from None
        i = bisect.bisect_left(self._gains, g)
        if i == len(self._gains) or self._gains[i] != g or str(g) != key:
            raise KeyError(key)
        return self._counts[i]

    def __iter__(self) -> Iterator[str]:
        return map(str, self._gains)

    def __len__(self) -> int:
        return len(self._gains)

    def items(self) -> Iterator[tuple[str, int]]:  # type: ignore[override]
        return zip(map(str, self._gains), self._counts)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, GainCounts):
            return self._gains == other._gains and self._counts == other._counts
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GainCounts({dict(self.items())!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return GainCounts, (list(self._gains), list(self._counts))


def _plain(value: Any) -> Any:
    """``dataclasses.asdict``'s conversion of one field value (dataclasses to dicts, containers copied)."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return kind(*[_plain(v) for v in value])
    if isinstance(value, (list, tuple)):
        return kind(_plain(v) for v in value)
    if isinstance(value, dict):
        return kind((_plain(k), _plain(v)) for k, v in value.items())
    if kind is GainCounts:
        return dict(value.items())
    return copy.deepcopy(value)


def _fields_dict(obj: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """``dataclasses.asdict(obj)``, several times faster on the flat messages of the live path
    (a str, int, float, bool or None field is taken as is; anything else converted as asdict does);
    without the fields named in ``skip``.

    >>> m = MoveEvent("g", 1, "e2e4", "e4", "8/8 w - - 0 1", clock=61.0)
    >>> _fields_dict(m) == dataclasses.asdict(m)
    True
    """
    d = {}
    for name in _field_names(obj):
        if name in skip:
            continue
        value = getattr(obj, name)
        d[name] = value if type(value) in _ATOMS else _plain(value)
    return d


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(obj: Any) -> tuple[str, ...]:
    """The dataclass fields' names of ``obj``'s class, in order (looked up once per class)."""
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    return names


def _rounded(value: Any, places: int) -> Any:
    """``value`` with its floats (alone or in a list) rounded to ``places`` decimals; anything else as is."""
    if type(value) is float:
        return round(value, places)
    if type(value) in (list, tuple):
        return type(value)(round(v, places) if type(v) is float else v for v in value)
    return value


class Message:
    """Mixin: JSON round trip for a frozen dataclass, tagged with its kind."""

    __slots__ = ()  # a message class declared with slots=True (MoveEvent: one per ply is kept) has no __dict__

    kind: ClassVar[str] = "message"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is None:
            return  # an abstract base such as Outgoing
        other = KINDS.get(kind)
        if other is not None and (other.__module__, other.__qualname__) != (cls.__module__, cls.__qualname__):
            raise TypeError(f"message kind {kind!r} of {cls.__qualname__} is already {other.__qualname__}'s")
        KINDS[kind] = cls

    def body(self) -> dict[str, Any]:
        """The dataclass fields as plain JSON-able values (without ``kind``, ``v`` and ``ts``)."""
        d = _fields_dict(self)
        d.pop("ts", None)
        return d

    def to_dict(self) -> dict[str, Any]:
        d = _fields_dict(self)
        d["kind"] = self.kind
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls: type[T], d: dict[str, Any]) -> T:
        """The message of a ``to_dict()``: unknown keys ignored, JSON arrays back to tuples where a field is one."""
        fields = {f.name: str(f.type) for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
        return cls(**{
            k: tuple(v) if isinstance(v, list) and fields[k].startswith("tuple") else v
            for k, v in d.items() if k in fields
        })

    @classmethod
    def from_json(cls: type[T], text: str | bytes) -> T:
        return cls.from_dict(json.loads(text))


@dataclass(frozen=True)
class Outgoing(Message):
    """Base of what the monitor publishes: routing declared by the class, a server timestamp per message.

    ``ts`` is the unix time (seconds) at which the hub published the message
    (0.0 before), for clients to measure publish → receive latency; it takes
    no part in equality, so an unchanged state compares equal whenever it was
    sent.
    """

    channel: ClassVar[str]
    """The hub channel every message of the class goes to (also the MQTT topic level under the prefix)."""
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ()
    """Fields whose values make the snapshot key: a newer message with the same key replaces the older."""
    topic_fields: ClassVar[tuple[str, ...] | None] = None
    """Fields that make the MQTT topic levels after the channel (``key_fields`` when None)."""
    detail: ClassVar[str | None] = None
    """A per-key channel prefix: ``detail:<key>`` carries the messages of one key (``game:<id>``)."""
    removes: ClassVar[tuple[str, ...]] = ()
    """A removal: the outgoing kinds whose entry under this message's key it deletes (empty: a state message)."""
    main_channels: ClassVar[tuple[str, ...]] = ()
    """``channel`` and the channels of the kinds it ``removes`` (set when the class is defined)."""

    detail_fields: ClassVar[tuple[str, ...]] = ()
    """Fields sent only where the message goes out on its ``detail`` channel (a board's ``evals``, O(plies),
    on ``game:<id>``); its copy on the main channel (``games``: every board of a round, to every client)
    leaves them out (:meth:`main_json`). In-process faces and MQTT get every field."""
    wire_decimals: ClassVar[dict[str, int]] = {}
    """Decimal places a float field (or a list of floats) keeps in the JSON (WebSocket, MQTT, snapshots).

    A live round sends hundreds of these a second to every client; ``-37.90909090909091`` says no
    more than ``-37.91``. In-process faces (the TUI) get the exact values."""

    ts: float = dataclasses.field(default=0.0, compare=False, kw_only=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:
            return
        fields = {n for c in cls.__mro__ for n in c.__dict__.get("__annotations__", {})}
        for attr in ("wire_decimals", "detail_fields"):
            unknown = set(getattr(cls, attr)) - fields
            if unknown:
                raise TypeError(f"{cls.__qualname__}: {attr} names no field {sorted(unknown)}")
        if cls.detail_fields and not cls.detail:
            raise TypeError(f"{cls.__qualname__}: detail_fields without a detail channel")
        for attr in ("channel", "audience"):
            if attr not in cls.__dict__:
                raise TypeError(f"outgoing message {cls.__qualname__} must declare its {attr}")
        if cls.audience not in (PUBLIC, ARBITER):
            raise TypeError(f"{cls.__qualname__}: audience must be {PUBLIC!r} or {ARBITER!r}, not {cls.audience!r}")
        for channel in (cls.channel, f"{cls.detail}:" if cls.detail else None):
            if channel is None:
                continue
            had = CHANNEL_AUDIENCE.setdefault(channel, cls.audience)
            if had != cls.audience:
                raise TypeError(f"{cls.__qualname__}: channel {channel!r} is {had}, not {cls.audience}")
        main = [cls.channel]
        for kind in cls.removes:
            target = OUTGOING.get(kind)
            if target is None or target.removes or target.key_fields != cls.key_fields:
                raise TypeError(f"{cls.__qualname__}: removes {kind!r}, which is not a state message with its key")
            if target.audience != cls.audience:
                raise TypeError(f"{cls.__qualname__}: removes {kind!r}, which is {target.audience}")
            main += [target.channel] if target.channel not in main else []
        cls.main_channels = tuple(main)
        OUTGOING[cls.kind] = cls

    @property
    def key(self) -> str:
        """The snapshot key (the ``key_fields`` joined by NUL; ``""`` for a single-state message)."""
        fields = self.key_fields
        if len(fields) == 1:  # most messages: one field, usually a str already (the hub asks per publish)
            value = getattr(self, fields[0])
            return value if type(value) is str else str(value)
        return "\x00".join(str(getattr(self, f)) for f in fields)

    def topic_parts(self) -> tuple[str, ...]:
        """The free-text levels of the message's MQTT topic after its channel."""
        fields = self.key_fields if self.topic_fields is None else self.topic_fields
        return tuple(str(getattr(self, f)) for f in fields)

    def channels(self) -> tuple[str, ...]:
        """The hub channels this message is delivered on."""
        if self.detail is None:
            return self.main_channels
        return (*self.main_channels, f"{self.detail}:{self.key}")

    def stamped(self: OutgoingT, ts: float) -> OutgoingT:
        """A copy of this message with its publication time set (the fields are not validated again).

        >>> m = TTTRating("A", 1.0, 0.2, 2810.0, 40.0, 9)
        >>> s = m.stamped(5.0)
        >>> (s.ts, m.ts, s == m, s.name)
        (5.0, 0.0, True, 'A')
        """
        new = copy.copy(self)
        object.__setattr__(new, "ts", ts)  # a frozen dataclass: replace() would run __init__ again, 8x slower
        return new

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: every field, ``kind``, ``v``; floats at the class's :attr:`wire_decimals`.

        >>> PlayerEstimate("A", 2500, 10, -37.90909090909091, 0.09090909090909091, None, None,
        ...                c_cr95=(0.02300497023786008, 0.9397269754859974)).to_dict()["c_cr95"]
        (0.023, 0.9397)
        """
        return self._wire_dict(())

    def main_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` of the message's copy on its main channel: without the :attr:`detail_fields`."""
        return self._wire_dict(self.detail_fields)

    def _wire_dict(self, skip: tuple[str, ...]) -> dict[str, Any]:
        d = _fields_dict(self, skip)
        d["kind"] = self.kind
        for name, places in self.wire_decimals.items():
            if name not in skip:
                d[name] = _rounded(d[name], places)
        d["v"] = MESSAGE_VERSION
        return d

    def changed_since(self, prev: Outgoing) -> frozenset[str]:
        """The fields (not the key's, not ``ts``) whose JSON differs from ``prev``'s: what a *patch* carries.

        ``prev`` is the state this message replaces (:meth:`livemon.faces.hub.Hub.previous`: the same
        class and key). A float is compared as the wire sends it (:attr:`wire_decimals`).

        >>> a = PlayerEstimate("A", 2500, 10, -37.901, 0.4, None, None, c_mean=0.5)
        >>> sorted(dataclasses.replace(a, moves=11, mean_gain=-37.899, c_mean=0.6).changed_since(a))
        ['c_mean', 'moves']
        """
        decimals, key = self.wire_decimals, self.key_fields
        changed = []
        for name in _field_names(self):
            if name == "ts" or name in key:
                continue
            new, old = getattr(self, name), getattr(prev, name)
            if new == old:
                continue
            places = decimals.get(name)
            if places is None or _rounded(new, places) != _rounded(old, places):
                changed.append(name)
        return frozenset(changed)

    def patch_json(self, fields: Iterable[str], skip: tuple[str, ...] = ()) -> str:
        """The JSON of a patch: ``"patch": true``, the key's fields, ``fields`` but not ``skip``, ``kind``, ``v``
        and ``ts`` (docs/websocket.md: a client merges it into the state it holds of the key).

        >>> a = BoardState("g1", "A", "B", 2700, 2650, "8/8/8/8/8/8/8/8 w - - 0 1", 2, evals=(10, 12))
        >>> b = dataclasses.replace(a, ply=3, eval_cp=15, evals=(10, 12, 15), ts=9.5)
        >>> b.patch_json(b.changed_since(a), skip=b.detail_fields)
        '{"ts":9.5,"game_id":"g1","ply":3,"eval_cp":15,"kind":"board","v":3,"patch":true}'
        """
        keep = {"ts", *self.key_fields, *fields}.difference(skip)
        d = self._wire_dict(tuple(name for name in _field_names(self) if name not in keep))
        d["patch"] = True
        return json.dumps(d, separators=(",", ":"))

    def main_json(self) -> str:
        """The JSON of the message's copy on its main channel (:meth:`main_dict`).

        >>> b = BoardState("g1", "A", "B", None, None, "8/8/8/8/8/8/8/8 w - - 0 1", 2, eval_cp=-5, evals=(10, 20, -5))
        >>> json.loads(b.main_json())["eval_cp"], "evals" in json.loads(b.main_json()), json.loads(b.to_json())["evals"]
        (-5, False, [10, 20, -5])
        """
        if not self.detail_fields:
            return self.to_json()
        return json.dumps(self.main_dict(), separators=(",", ":"))


OutgoingT = TypeVar("OutgoingT", bound="Outgoing")


def outgoing_from_dict(d: dict[str, Any]) -> Outgoing:
    """The outgoing message of a ``to_dict()`` (the class named by its ``kind``); InputError (a ValueError) when unknown.

    >>> t = TTTRating("A", 1.0, 0.2, 2810.0, 40.0, 9, ts=1.5)
    >>> back = outgoing_from_dict(json.loads(t.to_json()))
    >>> back == t, back.ts, json.loads(t.to_json())["v"]
    (True, 1.5, 3)
    """
    cls = OUTGOING.get(str(d.get("kind")))
    if cls is None:
        raise InputError(f"not an outgoing message kind: {str(d.get('kind'))[:40]!r}")
    return cls.from_dict(d)


def is_detail_channel(channel: str) -> bool:
    """A per-key channel (``game:<id>``, ``player:<name>``: a class's ``detail`` prefix), not a main one.

    >>> is_detail_channel("game:r1/b2"), is_detail_channel("games")
    (True, False)
    """
    return ":" in channel


def channel_audience(channel: str) -> Audience | None:
    """The audience of a channel name (``game:<id>`` included), None for no channel.

    >>> channel_audience("game:g1"), channel_audience("alerts"), channel_audience("nope"), channel_audience("game:")
    ('public', 'arbiter', None, None)
    """
    prefix, sep, rest = channel.partition(":")
    if not sep:
        return CHANNEL_AUDIENCE.get(channel)
    return CHANNEL_AUDIENCE.get(prefix + sep) if rest else None


@dataclass(frozen=True)
class GameInfo(Message):
    """The tags of a game that the estimators and faces need. ``white_elo``/``black_elo`` are on today's
    FIDE scale (:mod:`livemon.rating.scale`: what every model reads); ``white_tag``/``black_tag`` as published."""

    kind: ClassVar[str] = "game"
    game_id: str
    white: str = "?"
    black: str = "?"
    white_elo: int | None = None
    black_elo: int | None = None
    event: str = "?"
    round: str = "?"
    date: str = "?"
    site: str = "?"
    white_title: str = ""  # FIDE title from the WhiteTitle tag (GM, IM, WFM, ...), "" when none
    black_title: str = ""
    white_fed: str = ""  # federation from the WhiteFed tag (NOR, IND, ...), "" when none
    black_fed: str = ""
    white_tag: int | None = None  # the WhiteElo tag as published (screens show it); white_elo is on today's scale
    black_tag: int | None = None
    rating_note: str = ""  # what reading the tags assumed (no date, under the floor...), "" when nothing

    @property
    def white_published(self) -> int | None:
        """White's rating as published (the tag), for screens; ``white_elo`` when no tag was kept."""
        return self.white_tag if self.white_tag is not None else self.white_elo

    @property
    def black_published(self) -> int | None:
        """Black's rating as published (the tag), for screens; ``black_elo`` when no tag was kept."""
        return self.black_tag if self.black_tag is not None else self.black_elo


@dataclass(frozen=True, slots=True)
class MoveEvent(Message):
    """One ply of a game, as read from a feed.

    ``ply`` counts from 1 (1 = White's first move). ``fen_before`` is the full
    FEN of the position the move was played from. ``eval_cp`` is an ``[%eval]``
    comment after the move (White's view, centipawns, mates mapped), if any;
    ``start_eval_cp``, on ply 1 only, the ``[%eval]`` of the starting position
    (a comment before the first move, as in Ferreira's Fig. 1). Whether the
    comments value a game is the core's one rule (:class:`~livemon.live.analysis.LiveGame`).
    ``eval_mate``: the comment's distance to mate when it is one (``[%eval #-2]``: -2; moves,
    White's view), for display only.
    """

    kind: ClassVar[str] = "move"
    game_id: str
    ply: int
    uci: str
    san: str
    fen_before: str
    clock: float | None = None
    emt: float | None = None
    eval_cp: int | None = None
    feed: str = ""
    start_eval_cp: int | None = None
    eval_mate: int | None = None


@dataclass(frozen=True)
class GameRollback(Message):
    """A correction: every ply of ``game_id`` from ``from_ply`` on is withdrawn."""

    kind: ClassVar[str] = "rollback"
    game_id: str
    from_ply: int
    feed: str = ""


@dataclass(frozen=True)
class GameResult(Message):
    """A finished game's result in PGN notation (``1-0``, ``0-1``, ``1/2-1/2``)."""

    kind: ClassVar[str] = "result"
    game_id: str
    result: str
    plies: int
    feed: str = ""


@dataclass(frozen=True)
class FeedError(Message):
    """Bad input from a feed: one clear line; the feed and other games go on."""

    kind: ClassVar[str] = "feed_error"
    feed: str
    message: str
    game_id: str | None = None


@dataclass(frozen=True)
class FeedNotice(Message):
    """Something a feed's games made the tracker do that is worth one log line but is no fault of a game
    (DGT king moves dropped, a Site shared by several games, a result changed after it was final…).

    The tracker does no I/O: it says these as messages, and whoever reads the feed logs them at ``level``.
    Not an error: a feed's status does not count it.
    """

    kind: ClassVar[str] = "feed_notice"
    feed: str
    message: str
    game_id: str | None = None
    level: Literal["info", "warning"] = "info"


@dataclass(frozen=True)
class GameWithdrawn(Message):
    """A game its feed no longer lists (a renamed player, a game listed twice): everything of it is withdrawn.

    Sent by feeds whose every read is the whole current view of a round (a PGN
    file or DGT folder, an HTTP poll of a round's PGN), after the game was
    missing from several whole reads in a row (docs/feeds.md).
    """

    kind: ClassVar[str] = "withdrawn"
    game_id: str
    reason: str
    feed: str = ""


# -- outgoing: what the monitor publishes to the faces (TUI, WebSocket, MQTT); one class each --


@dataclass(frozen=True)
class BoardState(Outgoing):
    """A live board as the faces show it, after its latest ply."""

    kind: ClassVar[str] = "board"
    channel: ClassVar[str] = "games"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("game_id",)
    detail: ClassVar[str | None] = "game"
    detail_fields: ClassVar[tuple[str, ...]] = ("evals", "classes", "eval_preview", "moves", "moves_uci",
                                                "first_choice")  # on game:<id>, not on games
    game_id: str
    white: str
    black: str
    white_elo: int | None
    black_elo: int | None
    fen: str
    ply: int
    last_move_san: str | None = None
    last_move_uci: str | None = None
    eval_cp: int | None = None  # White's view; None while the position awaits analysis
    evals: tuple[int | None, ...] = ()  # evaluation after each ply so far (index 0 = start)
    white_clock: float | None = None
    black_clock: float | None = None
    result: str = "*"
    event: str = "?"
    round: str = "?"
    accuracy: dict[str, float | None] | None = None  # lichess's game accuracy {white, black}; null: none yet
    classes: dict[str, dict[str, int] | None] | None = None  # {white: {inaccuracy, mistake, blunder}, black: ...}
    eval_preview: bool = False  # eval_cp (and evals' last) is a quick preview, not the pinned profile's
    eval_mate: int | None = None
    """``eval_cp``'s distance to mate when it is a mate and the distance is known (moves, White's view: 3 White
    mates in 3, -2 Black mates in 2; 0 the position is mate), for display only; null otherwise."""
    white_title: str = ""  # the players' titles and federations from the PGN tags, "" when none
    black_title: str = ""
    white_fed: str = ""
    black_fed: str = ""
    moves: tuple[str, ...] = ()  # every ply's move in SAN (index 0 = ply 1): a page opened mid-game lists them all
    moves_uci: tuple[str, ...] = ()  # the same moves in UCI: a page steps through the game's positions with them
    first_choice: tuple[int, ...] = ()  # the plies whose move was the engine's first choice: never judged (no class)
    moves_read: dict[str, dict[str, int]] | None = None
    """Per side (``white``, ``black``) the moves ``played``, ``judged`` (both positions valued: what ``classes``
    reads) and ``accuracy_read`` (what ``accuracy`` reads: the moves from the start to the first position awaited);
    fewer read than played: the figure is provisional. A side's ``accuracy`` stays null until it reads
    :data:`~livemon.live.audience.MIN_ACCURACY_MOVES` of its moves (or all of a finished game's)."""
    figures: InitVar[BoardFigures | None] = None
    """The board's figures as kept from its previous message (the core's: only what changed is made again); None:
    made here from ``evals``."""
    derived_fields: ClassVar[tuple[str, ...]] = ("win_percents", "move_accuracy", "move_classes")
    """The figures made from ``evals`` when the message is built (``audience.ply_figures``, one decimal; from the
    pinned profile's values only: a preview, ``eval_preview``, never makes one), read as properties and written
    beside ``evals`` wherever it goes out. Kept in one attribute, not three fields: a message's ``__dict__`` stays
    within the 29 keys CPython shares between the instances of a class (a board message in the hub's log: ~300
    bytes, not ~1,600): a slot of this class, beside the fields' ``__dict__``."""

    __slots__ = ("_shown",)

    def __post_init__(self, figures: BoardFigures | None) -> None:
        evals = self.evals[:-1] + (None,) if self.eval_preview and self.evals else self.evals
        object.__setattr__(self, "_shown", (figures if figures is not None else BoardFigures()).of(evals, self.first_choice))

    @property
    def win_percents(self) -> tuple[float | None, ...]:
        """White's win% of each position (one decimal), from ``evals``; None while awaited."""
        return self._shown[0]  # type: ignore[attr-defined, no-any-return]

    @property
    def move_accuracy(self) -> tuple[float | None, ...]:
        """The mover's accuracy of each ply (index 0 = ply 1, one decimal); None while a position next to it is
        awaited."""
        return self._shown[1]  # type: ignore[attr-defined, no-any-return]

    @property
    def move_classes(self) -> tuple[MoveClass | None, ...]:
        """Each ply's class (inaccuracy, mistake, blunder); none on a ply in ``first_choice``, or not judged yet."""
        return self._shown[2]  # type: ignore[attr-defined, no-any-return]

    def __getstate__(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.__dict__, {"_shown": self._shown}  # type: ignore[attr-defined]

    def __setstate__(self, state: tuple[dict[str, Any], dict[str, Any]]) -> None:
        """A copy's or an unpickled message's state (frozen: set past ``__setattr__``)."""
        fields, slots = state
        self.__dict__.update(fields)
        for name, value in slots.items():
            object.__setattr__(self, name, value)

    def _wire_dict(self, skip: tuple[str, ...]) -> dict[str, Any]:
        """With ``evals`` (``game:<id>``): the :attr:`derived_fields` as made when the message was built."""
        d = super()._wire_dict(skip)
        if "evals" in d:
            d["win_percents"], d["move_accuracy"], d["move_classes"] = self._shown  # type: ignore[attr-defined]
        return d


@dataclass(frozen=True)
class BoardRemoved(Outgoing):
    """A board withdrawn by its feed: it leaves the ``games`` list; ``game:<id>`` keeps this as its last word.

    >>> m = BoardRemoved("r1/b2", "no longer listed by its feed")
    >>> m.channels(), m.removes
    (('games', 'game:r1/b2'), ('board',))
    """

    kind: ClassVar[str] = "board_removed"
    channel: ClassVar[str] = "games"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("game_id",)
    detail: ClassVar[str | None] = "game"
    removes: ClassVar[tuple[str, ...]] = ("board",)
    game_id: str
    reason: str = ""


@dataclass(frozen=True)
class PlayerEstimate(Outgoing):
    """A player's live estimates (the ``players[]`` entry of ``analyse --json``, flattened)."""

    kind: ClassVar[str] = "player"
    channel: ClassVar[str] = "players"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("name",)
    detail: ClassVar[str | None] = "player"
    detail_fields: ClassVar[tuple[str, ...]] = ("gain_histogram",)  # O(moves): on player:<name>, not on players
    wire_decimals: ClassVar[dict[str, int]] = {
        "mean_gain": 2, "expected_score_vs_engine": 4, "rating_diff_vs_engine": 1, "perceived_elo": 1,
        "perceived_elo_range": 1, "event_perceived_elo": 1, "c_mean": 4, "c_sd": 4, "c_cr95": 4, "c_elo": 1,
        "c_elo_cr95": 1, "ttt_mu": 1, "ttt_sigma": 1, "accuracy": 1}
    name: str
    elo: int | None
    moves: int
    mean_gain: float | None
    expected_score_vs_engine: float | None
    rating_diff_vs_engine: float | None
    perceived_elo: float | None  # Ferreira's Algorithm 4: a diagnostic, not the headline
    perceived_elo_range: tuple[float | None, float | None] | None = None  # 95% interval
    event_perceived_elo: float | None = None  # Algorithm 2 within the event
    c_mean: float | None = None
    c_sd: float | None = None
    c_cr95: tuple[float, float] | None = None
    c_elo: float | None = None  # c̄ on the Elo scale of the profile's calibration
    c_elo_cr95: tuple[float, float] | None = None
    ttt_mu: float | None = None
    ttt_sigma: float | None = None
    gain_histogram: Mapping[str, int] | None = None  # sparse {gain: count}, for the histogram plot (GainCounts)
    performance: dict[str, Any] | None = None  # the headline: rating.performance.Performance.to_dict()
    accuracy: float | None = None  # event accuracy: the mean of the player's lichess game accuracies
    classes: dict[str, int] | None = None  # {inaccuracy, mistake, blunder} over the event
    results: dict[str, Any] | None = None  # FIDE: {score, games, tpr, rating_change, k, rated_games, reason?}
    display: dict[str, Any] | None = None  # whether a screen shows the headline estimate (live.audience.estimate_display)
    estimate: dict[str, Any] | None = None  # the multi-feature moves estimate: rating.quality.QualityEstimate.to_dict()
    field_estimate: dict[str, Any] | None = None  # the same "in this field" (the other players' ratings as prior)
    results_estimate: dict[str, Any] | None = None  # FIDE's performance from results (mean opponent + dp(p))
    combined_estimate: dict[str, Any] | None = None  # moves and results together (labelled)
    moves_read: dict[str, int] | None = None
    """The player's moves over the games followed: ``played``, ``judged`` (valued: what the classes and the estimates
    read) and ``accuracy_read`` (the moves of the games whose accuracy is shown): a figure reading fewer than were
    played is provisional ("accuracy 94.1 · 28 of 41 moves")."""


@dataclass(frozen=True)
class TTTRating(Outgoing):
    """A player's latest TrueSkill Through Time posterior (β = 1 units and Elo scale)."""

    kind: ClassVar[str] = "ttt"
    channel: ClassVar[str] = "ttt"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("name",)
    wire_decimals: ClassVar[dict[str, int]] = {"mu": 4, "sigma": 4, "elo": 1, "elo_sigma": 1}
    name: str
    mu: float
    sigma: float
    elo: float  # mu on the Elo scale of the fit
    elo_sigma: float
    games: int


@dataclass(frozen=True)
class PlayerRemoved(Outgoing):
    """A player who played only withdrawn games (a name corrected, a phantom): gone from ``players`` and ``ttt``.

    >>> PlayerRemoved("Black B").channels()
    ('players', 'ttt', 'player:Black B')
    """

    kind: ClassVar[str] = "player_removed"
    channel: ClassVar[str] = "players"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("name",)
    detail: ClassVar[str | None] = "player"
    removes: ClassVar[tuple[str, ...]] = ("player", "ttt")
    name: str
    reason: str = ""


@dataclass(frozen=True)
class Alert(Outgoing):
    """A fair-play screening alert: for arbiters only, never on a public channel."""

    kind: ClassVar[str] = "alert"
    channel: ClassVar[str] = "alerts"
    audience: ClassVar[Audience] = ARBITER
    key_fields: ClassVar[tuple[str, ...]] = ("player", "event")
    topic_fields: ClassVar[tuple[str, ...] | None] = ("event", "player")
    player: str
    event: str
    positions: int
    z: float
    roi: float
    threshold: float
    details: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class ScreeningNumbers(Outgoing):
    """Every screening number of one player in one event (``livemon.live.screener``): for arbiters only.

    Published on the arbiter-only ``screening`` channel after every screened
    move, so arbiters see the whole table, not only the alerts. z's are None
    when undefined (no rating yet, no variance) or infinite.
    """

    kind: ClassVar[str] = "screening"
    channel: ClassVar[str] = "screening"
    audience: ClassVar[Audience] = ARBITER
    key_fields: ClassVar[tuple[str, ...]] = ("player", "event")
    topic_fields: ClassVar[tuple[str, ...] | None] = ("event", "player")
    player: str
    event: str
    rating: float | None
    rating_source: str  # "tag", "ttt" or "none" (not screened yet)
    c_r: float | None
    positions: int
    excluded: dict[str, int]
    matches_observed: int
    matches_expected: float
    matches_sd: float
    z_match: float | None  # exact Poisson-binomial tail, as a z
    p_match: float | None  # that tail probability P(M ≥ observed)
    z_match_normal: float | None  # (observed − expected)/sd
    loss_observed: float  # average loss per position, pawns
    loss_expected: float
    loss_sd: float
    z_loss: float | None
    statistic: str  # the configured statistic; for "max", the larger z
    z: float | None  # the z the levels are read from
    roi: float | None  # 50 + 5z
    z_scale: float = 1.0
    level: str | None = None  # highest level reached now (≥ min_positions), None below notice
    # what the player was compared with (livemon.rating.screening): the tag on today's FIDE scale, and
    # today's strength from the tag and the event's results, with its sd; z is against that strength
    rating_read: float | None = None  # the rating tag as printed (before today's scale)
    rating_scale: str = "today"  # "today", or "as read" when the game had no date to convert by
    strength: float | None = None  # today's strength: the tag's prior and the event's results
    strength_sd: float | None = None
    results: int = 0  # the event's finished games against rated opponents in that strength
    k40: float | None = None  # the chance the tag is a K = 40 rating (young, few games; 1 at a junior event)
    z_tag: float | None = None  # z against the tag alone (its prior, no results); an alert needs both
    ipr: float | None = None  # Regan's intrinsic performance rating (first order): the strength the matches read
    ipr_cr95: tuple[float | None, float | None] | None = None  # an end the line cannot reach: None


@dataclass(frozen=True)
class ScreeningRemoved(Outgoing):
    """A player-event whose only games were withdrawn: its screening row goes (arbiters only)."""

    kind: ClassVar[str] = "screening_removed"
    channel: ClassVar[str] = "screening"
    audience: ClassVar[Audience] = ARBITER
    key_fields: ClassVar[tuple[str, ...]] = ("player", "event")
    topic_fields: ClassVar[tuple[str, ...] | None] = ("event", "player")
    removes: ClassVar[tuple[str, ...]] = ("screening",)
    player: str
    event: str
    reason: str = ""


@dataclass(frozen=True)
class WorkerQuarantined(Outgoing):
    """An engine worker the monitor shut out (a spot check caught it lying): for arbiters only.

    Published on the arbiter-only ``arbiter_status`` channel when the engine bus quarantines a
    worker: which worker, why, and how many of its analyses were dropped from the cache and searched
    again by the others (``replaced``); ``line`` says it in one sentence for a screen. Keyed by the
    worker, so an arbiter who connects later finds it in the channel's snapshot. Public faces never
    see it: whether the numbers of a round were touched by a liar is for the arbiters to judge.

    >>> WorkerQuarantined.of("w7", "said +3000 where this machine found +20", 12).line
    'engine worker w7 quarantined: said +3000 where this machine found +20; its 12 answers replaced'
    >>> WorkerQuarantined.of("w7", "lied", 1).channels(), WorkerQuarantined.audience
    (('arbiter_status',), 'arbiter')
    """

    kind: ClassVar[str] = "quarantine"
    channel: ClassVar[str] = "arbiter_status"
    audience: ClassVar[Audience] = ARBITER
    key_fields: ClassVar[tuple[str, ...]] = ("worker",)
    worker: str
    reason: str
    replaced: int
    line: str

    @classmethod
    def of(cls, worker: str, reason: str, replaced: int) -> WorkerQuarantined:
        """The message with its line."""
        answers = "answer" if replaced == 1 else "answers"
        return cls(worker, reason, replaced,
                   f"engine worker {worker} quarantined: {reason}; its {replaced} {answers} replaced")


@dataclass(frozen=True)
class MonitorStatus(Outgoing):
    """Feeds, engine backlog and lag, for the status line and ``livemon status``."""

    kind: ClassVar[str] = "status"
    channel: ClassVar[str] = "status"
    audience: ClassVar[Audience] = PUBLIC
    feeds: tuple[dict[str, Any], ...] = ()
    backlog: int = 0
    searches: int = 0
    cache_hits: int = 0
    engine_profile: str = ""
    engines: int = 0
    lag_seconds: float = 0.0
    moves: int = 0
    games: int = 0
    ttt_refreshes: int = 0
    engine_lag_seconds: float = 0.0
    """How long the oldest position waiting for the pinned profile has waited (0: the engines keep up)."""


@dataclass(frozen=True)
class Moment(Outgoing):
    """A moment of a game as it happens: a blunder, a turning point, a lead change (``kinds``,
    :func:`livemon.live.audience.moment_kinds`, decided once every position up to it is valued, in ply order);
    the move, its class (``move_class``: lichess's, None for a good move or the engine's first choice;
    ``judgement``: "best" for the engine's first choice, "good", or the class), White's win% before and after it
    (``win_before``/``win_after``, the chart's), the mover's (``mover_win_before``/``mover_win_after``), the engine's
    best move there (None when the values came from the game's ``[%eval]``s), and the game: its players, event,
    round and board (``board``: from a round written ``R.B``, as lichess's broadcasts do; None otherwise).

    >>> Moment("r1/b2", 31, "Qxb7", ("blunder",), "blunder", 55.0, 20.0, "Rd1").channels()
    ('moments',)
    """

    kind: ClassVar[str] = "moment"
    channel: ClassVar[str] = "moments"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("game_id", "ply")
    wire_decimals: ClassVar[dict[str, int]] = {"win_before": 1, "win_after": 1, "mover_win_before": 1,
                                               "mover_win_after": 1}
    game_id: str
    ply: int
    move_san: str
    kinds: tuple[str, ...]
    move_class: str | None
    win_before: float
    win_after: float
    best_move_san: str | None = None
    white: str = "?"
    black: str = "?"
    event: str = "?"
    round: str = "?"
    mover_win_before: float | None = None
    mover_win_after: float | None = None
    board: int | None = None
    judgement: str | None = None
    mover: str = "?"


@dataclass(frozen=True)
class MomentRemoved(Outgoing):
    """A moment whose ply a correction withdrew (or whose game its feed withdrew)."""

    kind: ClassVar[str] = "moment_removed"
    channel: ClassVar[str] = "moments"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("game_id", "ply")
    removes: ClassVar[tuple[str, ...]] = ("moment",)
    game_id: str
    ply: int
    reason: str = ""


@dataclass(frozen=True)
class EventForecast(Outgoing):
    """Who can still win one event: its final standings simulated from the games so far and in progress
    (``livemon.app.forecast_live``), most likely winner first.

    Each of ``players`` is ``{name, score, p_first, p_first_round_start, p_winner, p_top3, expected_score,
    max_score, needs}``: ``p_first_round_start`` is the chance of first at the first forecast of ``round`` (the
    change since the round began); ``needs`` the final score giving even chances of first (None: none
    reachable does). ``error`` is one line when the event cannot be forecast (a Swiss whose number of rounds
    is not configured); ``players`` is then empty.

    >>> EventForecast("Candidates", "drr", 14, 6, 8, 20000, 4, ()).channels()
    ('forecast',)
    """

    kind: ClassVar[str] = "forecast"
    channel: ClassVar[str] = "forecast"
    audience: ClassVar[Audience] = PUBLIC
    key_fields: ClassVar[tuple[str, ...]] = ("event",)
    event: str
    format: str
    rounds: int | None
    rounds_left: int
    round: int
    simulations: int
    games_in_progress: int
    players: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()
    error: str | None = None


PUBLIC_CHANNELS: tuple[str, ...] = tuple(c for c, a in CHANNEL_AUDIENCE.items() if a == PUBLIC and not c.endswith(":"))
"""The public channels (``game:<id>`` besides), in the order their messages were defined."""
ARBITER_CHANNELS: tuple[str, ...] = tuple(c for c, a in CHANNEL_AUDIENCE.items() if a == ARBITER and not c.endswith(":"))
"""The channels for arbiters only: never served to the public, on the overlay or in a public MQTT tree."""
