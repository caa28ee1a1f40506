"""Outgoing messages own their routing: one class per kind, a channel, an audience, never arbiter data in public.

These check the registry in ``livemon.live.messages`` and that every face
(hub, MQTT out, WebSocket protocol, TUI model) routes by it.
"""

from __future__ import annotations

import dataclasses
import json
import time
import typing

import numpy as np
import pytest

from livemon.config import MqttOutConfig
from livemon.faces.hub import Hub
from livemon.faces.mqtt import topic_for
from livemon.faces.tui.model import LiveState
from livemon.faces.web.protocol import ProtocolError, check_channel
from livemon.io import bus  # noqa: F401  (its messages register their kinds too)
from livemon.live import messages as m


def sample(cls: type[m.Outgoing]) -> m.Outgoing:
    """An instance of ``cls`` with every required field filled from its type."""
    values: dict[str, typing.Any] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        t = hints[f.name]
        text = str(t)
        if t is str or text.startswith("str"):
            values[f.name] = f"{f.name} x/y"
        elif t is int or text.startswith("int"):
            values[f.name] = 3
        elif t is float or text.startswith("float"):
            values[f.name] = 1.5
        elif text.startswith("dict"):
            values[f.name] = {}
        else:
            values[f.name] = None
    return cls(**values)


def test_every_kind_has_one_class_and_every_outgoing_a_channel_and_audience() -> None:
    assert len(m.KINDS) == len(set(m.KINDS.values()))  # no class under two kinds
    names = [c.__name__ for c in m.KINDS.values()]
    assert len(names) == len(set(names)), "two message classes with one name"
    assert {"result", "analysis", "request", "worker", "move", "game", "board", "screening"} <= set(m.KINDS)
    assert m.KINDS["result"] is m.GameResult  # the engine bus's answer is "analysis" now
    for kind, cls in m.OUTGOING.items():
        assert m.KINDS[kind] is cls and cls.kind == kind
        assert cls.channel and cls.audience in (m.PUBLIC, m.ARBITER), kind
        assert m.CHANNEL_AUDIENCE[cls.channel] == cls.audience
        assert all(f in {x.name for x in dataclasses.fields(cls)} for f in cls.key_fields), kind
    assert set(m.PUBLIC_CHANNELS).isdisjoint(m.ARBITER_CHANNELS)
    assert {m.Alert.channel, m.ScreeningNumbers.channel} <= set(m.ARBITER_CHANNELS)


def test_a_second_class_with_a_taken_kind_or_a_public_channel_for_arbiters_is_refused() -> None:
    before = (dict(m.KINDS), dict(m.OUTGOING), dict(m.CHANNEL_AUDIENCE))
    try:
        with pytest.raises(TypeError, match="already"):
            @dataclasses.dataclass(frozen=True)
            class Result2(m.Message):
                kind: typing.ClassVar[str] = "result"

        with pytest.raises(TypeError, match="channel 'players' is public"):
            @dataclasses.dataclass(frozen=True)
            class Secret(m.Outgoing):
                kind: typing.ClassVar[str] = "secret"
                channel: typing.ClassVar[str] = "players"
                audience: typing.ClassVar[m.Audience] = m.ARBITER

        with pytest.raises(TypeError, match="must declare its audience"):
            @dataclasses.dataclass(frozen=True)
            class Loose(m.Outgoing):
                kind: typing.ClassVar[str] = "loose"
                channel: typing.ClassVar[str] = "loose"
    finally:
        for table, old in zip((m.KINDS, m.OUTGOING, m.CHANNEL_AUDIENCE), before):
            table.clear()
            table.update(old)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(m.OUTGOING))
def test_no_arbiter_message_reaches_a_public_channel_or_topic(kind: str) -> None:
    cls = m.OUTGOING[kind]
    msg = sample(cls)
    channels = msg.channels()
    assert channels[0] == cls.channel
    for channel in channels:
        assert m.channel_audience(channel) == cls.audience
        assert check_channel(channel) == channel  # the WebSocket server knows every declared channel
    cfg = MqttOutConfig(prefix="pub/x", arbiter_prefix="arb/x")
    topic = topic_for(msg, cfg)
    assert topic.startswith("arb/x/" if cls.audience == m.ARBITER else "pub/x/")
    assert topic.split("/")[2] == cls.channel and "x/y" not in topic  # free text is one escaped level

    hub = Hub()
    if cls.removes:
        check_removal(cls, msg)
        return
    seq = hub.publish(msg)
    for channel in m.PUBLIC_CHANNELS if cls.audience == m.ARBITER else m.ARBITER_CHANNELS:
        assert hub.snapshot(channel) == (seq, [])
    published = hub.snapshot(cls.channel)[1]
    assert published == [msg] and published[0].ts > 0 and msg.ts == 0.0  # the hub stamps a copy

    state = LiveState()
    assert state.apply(msg) == (kind, msg.key)
    assert state.apply(published[0]) is None  # the same state, stamped: no change (ts takes no part)
    assert state.latest[kind] == {msg.key: msg}

    d = json.loads(published[0].to_json())
    assert d["kind"] == kind and d["v"] == m.MESSAGE_VERSION and d["ts"] == published[0].ts
    assert m.outgoing_from_dict(d) == msg


def check_removal(cls: type[m.Outgoing], removal: m.Outgoing) -> None:
    """A removal deletes its key from every face's state of the kinds it removes, and nothing else."""
    targets = [m.OUTGOING[k] for k in cls.removes]
    states = [sample(t) for t in targets]
    assert all(s.key == removal.key for s in states) and targets[0].channel == cls.channel
    other = dataclasses.replace(states[0], **{targets[0].key_fields[0]: "someone else"})
    hub, tui = Hub(), LiveState()
    for s in (*states, other):
        hub.publish(s)
        tui.apply(s)
    seq = hub.publish(removal)
    for t in targets:
        assert hub.snapshot(t.channel)[1] == ([other] if t is targets[0] else [])
    for channel in removal.channels()[len(cls.main_channels):]:  # the detail channel keeps the last word
        assert hub.snapshot(channel) == (seq, [removal])
    assert set(removal.channels()) >= {t.channel for t in targets}
    for channel in m.PUBLIC_CHANNELS if cls.audience == m.ARBITER else m.ARBITER_CHANNELS:
        assert hub.snapshot(channel) == (seq, [])
    assert tui.apply(removal) == (cls.removes[0], removal.key) and tui.apply(removal) is None
    assert tui.latest[cls.removes[0]] == {other.key: other}
    assert all(not tui.latest[k] for k in cls.removes[1:])
    d = json.loads(removal.to_json())
    assert d["kind"] == cls.kind and m.outgoing_from_dict(d) == removal


def test_a_removal_must_remove_a_state_of_its_key_and_audience() -> None:
    before = (dict(m.KINDS), dict(m.OUTGOING), dict(m.CHANNEL_AUDIENCE))
    try:
        with pytest.raises(TypeError, match="not a state message with its key"):
            @dataclasses.dataclass(frozen=True)
            class Odd(m.Outgoing):
                kind: typing.ClassVar[str] = "odd_removed"
                channel: typing.ClassVar[str] = "players"
                audience: typing.ClassVar[m.Audience] = m.PUBLIC
                key_fields: typing.ClassVar[tuple[str, ...]] = ("game_id",)
                removes: typing.ClassVar[tuple[str, ...]] = ("player",)
                game_id: str
        with pytest.raises(TypeError, match="which is arbiter"):
            @dataclasses.dataclass(frozen=True)
            class Leak(m.Outgoing):
                kind: typing.ClassVar[str] = "leak_removed"
                channel: typing.ClassVar[str] = "players"
                audience: typing.ClassVar[m.Audience] = m.PUBLIC
                key_fields: typing.ClassVar[tuple[str, ...]] = ("player", "event")
                removes: typing.ClassVar[tuple[str, ...]] = ("screening",)
                player: str
                event: str
    finally:
        for table, old in zip((m.KINDS, m.OUTGOING, m.CHANNEL_AUDIENCE), before):
            table.clear()
            table.update(old)  # type: ignore[arg-type]


def test_unknown_channels_and_kinds_are_refused() -> None:
    for bad in ("nope", "game:", "alerts:1", "g" * 10):
        with pytest.raises(ProtocolError):
            check_channel(bad)
    with pytest.raises(ValueError, match="not an outgoing message kind"):
        m.outgoing_from_dict({"kind": "move"})
    with pytest.raises(TypeError):
        Hub().publish(m.GameResult("g", "1-0", 2))  # type: ignore[arg-type]


def test_to_dict_is_asdict_for_every_shape_of_field():
    """The live path's fast to_dict/body give exactly dataclasses.asdict's dicts, copies included."""
    from livemon.live.messages import Alert, BoardState, GameInfo, MoveEvent, PlayerEstimate

    details = {"level": "notice", "numbers": {"z": 3.1, "excluded": {"book": 2}}, "top_moves": [{"ply": 7, "p0": 0.5}]}
    samples = [
        MoveEvent("g", 3, "e2e4", "e4", "8/8 w - - 0 1", clock=61.5, eval_cp=-20),
        GameInfo("g", white="A", black="B", white_elo=2400, event="Ev", round="1.2"),
        BoardState("g", "A", "B", 2400, None, "8/8/8/8/8/8/8/8 w - - 0 1", 2, evals=(10, None, -5), ts=3.5),
        PlayerEstimate("A", 2400, 12, -3.5, 0.4, -70.0, 2700.0, perceived_elo_range=(2650.0, None),
                       c_cr95=(0.5, 0.9), gain_histogram={"0": 5, "-10": 7},
                       performance={"elo": 2500.0, "cr95": [2400.0, 2600.0], "positions": 12}),
        Alert("A", "Ev", 40, 3.2, 66.0, 3.0, details),
    ]
    for msg in samples:
        fast, slow = msg.to_dict(), dataclasses.asdict(msg)
        derived = {k: fast.pop(k) for k in getattr(msg, "derived_fields", ())}  # made from evals when built
        assert all(len(v) >= len(msg.evals) - 1 for v in derived.values())
        slow["kind"] = msg.kind
        if "ts" in slow:
            slow["v"] = fast["v"]
        assert fast == slow and list(fast) == list(slow)
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]  # tuples stay tuples
        assert msg.body() == {k: v for k, v in dataclasses.asdict(msg).items() if k != "ts"}
    alert = samples[-1].to_dict()
    assert alert["details"] == details and alert["details"] is not details  # a copy, as asdict's
    assert alert["details"]["top_moves"][0] is not details["top_moves"][0]


def test_a_player_message_carries_its_histogram_compactly_and_sends_the_same_json():
    """The hub's log keeps thousands of player messages; their gain histograms as dicts of
    strings were most of its memory. GainCounts reads as that dict, compares equal to it, and sends it."""
    import pickle
    import sys

    from livemon.live.messages import GainCounts, PlayerEstimate
    from livemon.rating.gain import GainHistogram

    rng = np.random.default_rng(3)
    hist = GainHistogram.from_gains(int(g) for g in np.round(-rng.exponential(60.0, 2000)))
    plain = {str(k): v for k, v in hist.to_dict().items()}
    counts = GainCounts(*hist.sparse())
    assert counts == plain and plain == counts and dict(counts) == plain and list(counts) == list(plain)
    assert len(plain) > 200 and counts["0"] == plain["0"] and "7" not in counts and "x" not in counts
    msg = PlayerEstimate("A", 2400, hist.n, hist.mean, None, None, None, gain_histogram=counts)
    assert json.loads(msg.to_json())["gain_histogram"] == plain
    assert PlayerEstimate.from_json(msg.to_json()).gain_histogram == counts  # a reader gets a dict: equal
    assert pickle.loads(pickle.dumps(counts)) == counts  # kept as the dict was: a message may be pickled
    deep = sys.getsizeof(plain) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in plain.items())
    assert sys.getsizeof(counts) + sys.getsizeof(counts._gains) + sys.getsizeof(counts._counts) < deep / 5


def test_the_wire_keeps_the_decimals_a_reader_can_use_and_the_hub_stamps_milliseconds():
    """A round sends ~500 player estimates a second to each of 500 clients; full float reprs made
    a third of each. The JSON keeps each class's wire_decimals; in-process faces get the exact values."""
    from livemon.live.messages import PlayerEstimate, TTTRating

    exact = PlayerEstimate("Johnson,Donald", 2116, 11, -37.90909090909091, 0.09090909090909091, -377.64529251960124,
                           2046.9961592027862, perceived_elo_range=(None, 2243.3691583055333),
                           event_perceived_elo=2169.344970787781, c_mean=0.3803165545918311, c_sd=0.24569168883405748,
                           c_cr95=(0.02300497023786008, 0.9397269754859974), c_elo=1575.446160558727,
                           c_elo_cr95=(872.8311542735714, 2673.8103017441717))
    hub = Hub()
    hub.publish(exact)
    sent = hub.snapshot("players")[1][0]
    assert sent.c_mean == exact.c_mean  # the in-process copy is exact
    text = sent.to_json()
    d = json.loads(text)
    assert d["mean_gain"] == -37.91 and d["perceived_elo"] == 2047.0 and d["c_cr95"] == [0.023, 0.9397]
    assert d["perceived_elo_range"] == [None, 2243.4] and d["c_elo_cr95"] == [872.8, 2673.8]
    assert d["ts"] == round(d["ts"], 3) and abs(d["ts"] - time.time()) < 5
    assert len(text) < len(json.dumps({**dataclasses.asdict(sent), "kind": "player", "v": 2}, separators=(",", ":"))) - 150
    for cls in m.OUTGOING.values():  # every declared field exists (checked when the class is made, too)
        assert set(cls.wire_decimals) <= {f.name for f in dataclasses.fields(cls)}
    assert TTTRating("A", 1.23456789, 0.2, 2810.123456, 40.0, 9).to_dict()["elo"] == 2810.1
