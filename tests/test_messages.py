"""Every outgoing message has one route: one class per kind, a channel, an audience, never arbiter data in public.

These check the routing table in ``livemon.faces.hub`` and that every face (hub, MQTT out, WebSocket protocol,
TUI model) routes by it; and the web codec (``livemon.faces.web.codec``) that writes every message.
"""

from __future__ import annotations

import dataclasses
import json
import time
import typing

import numpy as np
import pytest

from livemon.config import MqttOutConfig
from livemon.faces import hub as h
from livemon.faces.hub import Hub, Route, route, routing
from livemon.faces.mqtt import topic_for
from livemon.faces.tui.model import LiveState
from livemon.faces.web import codec
from livemon.faces.web.protocol import ProtocolError, check_channel
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


def test_every_outgoing_kind_has_one_class_a_channel_and_an_audience() -> None:
    assert set(h.ROUTES) == {cls.kind for cls in m.OUTGOING_CLASSES}  # every outgoing value is routed
    assert len({r.cls for r in h.ROUTES.values()}) == len(h.ROUTES)  # no class under two kinds
    for kind, r in h.ROUTES.items():
        assert h.OUTGOING[kind] is r.cls and r.cls.kind == kind
        assert r.channel and r.audience in (h.PUBLIC, h.ARBITER), kind
        assert h.CHANNEL_AUDIENCE[r.channel] == r.audience
        assert all(f in {x.name for x in dataclasses.fields(r.cls)} for f in r.key_fields), kind
    assert set(h.PUBLIC_CHANNELS).isdisjoint(h.ARBITER_CHANNELS)
    assert {h.ROUTES["alert"].channel, h.ROUTES["screening"].channel} <= set(h.ARBITER_CHANNELS)
    values = [m.GameInfo, m.MoveEvent, m.GameRollback, m.GameResult, m.FeedError, m.FeedNotice, m.GameWithdrawn,
              *m.OUTGOING_CLASSES]
    assert len({c.kind for c in values}) == len(values)  # one kind per value class
    for cls in values:  # a value knows no wire: no JSON, no route
        assert not {"to_json", "to_dict", "from_dict", "channels", "channel", "audience", "key"} & set(dir(cls)), cls


def test_a_second_route_for_a_kind_or_a_public_channel_for_arbiters_is_refused() -> None:
    with pytest.raises(TypeError, match="already routed"):
        routing(Route(m.TTTRating, "ttt", h.PUBLIC, ("name",)), Route(m.TTTRating, "ttt2", h.PUBLIC, ("name",)))
    with pytest.raises(TypeError, match="channel 'players' is public"):
        routing(Route(m.PlayerEstimate, "players", h.PUBLIC, ("name",)),
                Route(m.Alert, "players", h.ARBITER, ("player", "event")))
    with pytest.raises(TypeError, match="audience must be"):
        routing(Route(m.TTTRating, "ttt", "everyone", ("name",)))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="names no field"):
        routing(Route(m.TTTRating, "ttt", h.PUBLIC, ("player",)))


@pytest.mark.parametrize("kind", sorted(h.OUTGOING))
def test_no_arbiter_message_reaches_a_public_channel_or_topic(kind: str) -> None:
    cls = h.OUTGOING[kind]
    r = h.ROUTES[kind]
    msg = sample(cls)
    channels = h.channels_of(msg)
    assert channels[0] == r.channel
    for channel in channels:
        assert h.channel_audience(channel) == r.audience
        assert check_channel(channel) == channel  # the WebSocket server knows every routed channel
    cfg = MqttOutConfig(prefix="pub/x", arbiter_prefix="arb/x")
    topic = topic_for(msg, cfg)
    assert topic.startswith("arb/x/" if r.audience == h.ARBITER else "pub/x/")
    assert topic.split("/")[2] == r.channel and "x/y" not in topic  # free text is one escaped level

    hub = Hub()
    if r.removes:
        check_removal(r, msg)
        return
    seq = hub.publish(msg)
    for channel in h.PUBLIC_CHANNELS if r.audience == h.ARBITER else h.ARBITER_CHANNELS:
        assert hub.snapshot(channel) == (seq, [])
    published = hub.snapshot(r.channel)[1]
    assert published == [msg] and published[0].ts > 0 and msg.ts == 0.0  # the hub stamps a copy

    state = LiveState()
    key = h.key_of(msg)
    assert state.apply(msg) == (kind, key)
    assert state.apply(published[0]) is None  # the same state, stamped: no change (ts takes no part)
    assert state.latest[kind] == {key: msg}

    d = json.loads(codec.to_json(published[0]))
    assert d["kind"] == kind and d["v"] == codec.MESSAGE_VERSION and d["ts"] == published[0].ts
    assert codec.from_dict(d) == msg


def check_removal(r: Route, removal: m.Outgoing) -> None:
    """A removal deletes its key from every face's state of the kinds it removes, and nothing else."""
    targets = [h.ROUTES[k] for k in r.removes]
    states = [sample(t.cls) for t in targets]
    key = h.key_of(removal)
    assert all(h.key_of(s) == key for s in states) and targets[0].channel == r.channel
    other = dataclasses.replace(states[0], **{targets[0].key_fields[0]: "someone else"})
    hub, tui = Hub(), LiveState()
    for s in (*states, other):
        hub.publish(s)
        tui.apply(s)
    seq = hub.publish(removal)
    for t in targets:
        assert hub.snapshot(t.channel)[1] == ([other] if t is targets[0] else [])
    for channel in h.channels_of(removal)[len(r.main_channels):]:  # the detail channel keeps the last word
        assert hub.snapshot(channel) == (seq, [removal])
    assert set(h.channels_of(removal)) >= {t.channel for t in targets}
    for channel in h.PUBLIC_CHANNELS if r.audience == h.ARBITER else h.ARBITER_CHANNELS:
        assert hub.snapshot(channel) == (seq, [])
    assert tui.apply(removal) == (r.removes[0], key) and tui.apply(removal) is None
    assert tui.latest[r.removes[0]] == {h.key_of(other): other}
    assert all(not tui.latest[k] for k in r.removes[1:])
    d = json.loads(codec.to_json(removal))
    assert d["kind"] == r.kind and codec.from_dict(d) == removal


def test_a_removal_must_remove_a_state_of_its_key_and_audience() -> None:
    players = Route(m.PlayerEstimate, "players", h.PUBLIC, ("name",))
    screening = Route(m.ScreeningNumbers, "screening", h.ARBITER, ("player", "event"))
    with pytest.raises(TypeError, match="not a state message with its key"):
        routing(players, Route(m.BoardRemoved, "players", h.PUBLIC, ("game_id",), removes=("player",)))
    with pytest.raises(TypeError, match="which is arbiter"):
        routing(players, screening, Route(m.ScreeningRemoved, "players", h.PUBLIC, ("player", "event"),
                                          removes=("screening",)))


def test_unknown_channels_and_kinds_are_refused() -> None:
    for bad in ("nope", "game:", "alerts:1", "g" * 10):
        with pytest.raises(ProtocolError):
            check_channel(bad)
    with pytest.raises(ValueError, match="not an outgoing message kind"):
        codec.from_dict({"kind": "move"})
    with pytest.raises(TypeError):
        Hub().publish(m.GameResult("g", "1-0", 2))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        route(m.GameResult("g", "1-0", 2))


def test_to_dict_is_asdict_for_every_shape_of_field():
    """The codec's fast to_dict gives exactly dataclasses.asdict's dicts, copies included (and the store's rows
    read back as the values they were)."""
    from livemon.io.store import row_of, value_of
    from livemon.live.messages import Alert, BoardState, GameInfo, MoveEvent, PlayerEstimate

    details = {"level": "notice", "numbers": {"z": 3.1, "excluded": {"book": 2}}, "top_moves": [{"ply": 7, "p0": 0.5}]}
    samples = [
        BoardState("g", "A", "B", 2400, None, "8/8/8/8/8/8/8/8 w - - 0 1", 2, evals=(10, None, -5), ts=3.5),
        PlayerEstimate("A", 2400, 12, -3.5, 0.4, -70.0, 2700.0, perceived_elo_range=(2650.0, None),
                       c_cr95=(0.5, 0.9), gain_histogram={"0": 5, "-10": 7},
                       performance={"elo": 2500.0, "cr95": [2400.0, 2600.0], "positions": 12}),
        Alert("A", "Ev", 40, 3.2, 66.0, 3.0, details),
    ]
    for msg in samples:
        fast, slow = codec.to_dict(msg), dataclasses.asdict(msg)
        derived = {k: fast.pop(k) for k in codec.BOARD_DERIVED if k in fast}  # made from evals on the wire
        assert all(len(v) >= len(msg.evals) - 1 for v in derived.values())  # type: ignore[attr-defined]
        slow["kind"] = msg.kind
        slow["v"] = fast["v"]
        assert fast == slow and list(fast) == list(slow)
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]  # tuples stay tuples
    alert = codec.to_dict(samples[-1])
    assert alert["details"] == details and alert["details"] is not details  # a copy, as asdict's
    assert alert["details"]["top_moves"][0] is not details["top_moves"][0]
    rows = [MoveEvent("g", 3, "e2e4", "e4", "8/8 w - - 0 1", clock=61.5, eval_cp=-20),
            GameInfo("g", white="A", black="B", white_elo=2400, event="Ev", round="1.2"), samples[-1]]
    for value in rows:
        assert value_of(type(value), row_of(value)) == value
        assert json.loads(row_of(value)) == {**dataclasses.asdict(value), "kind": value.kind}


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
    assert json.loads(codec.to_json(msg))["gain_histogram"] == plain
    assert codec.from_json(codec.to_json(msg)).gain_histogram == counts  # type: ignore[attr-defined]  # a reader gets a dict: equal
    assert pickle.loads(pickle.dumps(counts)) == counts  # kept as the dict was: a message may be pickled
    deep = sys.getsizeof(plain) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in plain.items())
    assert sys.getsizeof(counts) + sys.getsizeof(counts._gains) + sys.getsizeof(counts._counts) < deep / 5


def test_the_wire_keeps_the_decimals_a_reader_can_use_and_the_hub_stamps_milliseconds():
    """A round sends ~500 player estimates a second to each of 500 clients; full float reprs made
    a third of each. The JSON keeps each kind's WIRE_DECIMALS; in-process faces get the exact values."""
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
    text = codec.to_json(sent)
    d = json.loads(text)
    assert d["mean_gain"] == -37.91 and d["perceived_elo"] == 2047.0 and d["c_cr95"] == [0.023, 0.9397]
    assert d["perceived_elo_range"] == [None, 2243.4] and d["c_elo_cr95"] == [872.8, 2673.8]
    assert d["ts"] == round(d["ts"], 3) and abs(d["ts"] - time.time()) < 5
    assert len(text) < len(json.dumps({**dataclasses.asdict(sent), "kind": "player", "v": 2}, separators=(",", ":"))) - 150
    for kind, decimals in codec.WIRE_DECIMALS.items():  # every named field exists (checked on import, too)
        assert set(decimals) <= {f.name for f in dataclasses.fields(h.OUTGOING[kind])}
    assert codec.to_dict(TTTRating("A", 1.23456789, 0.2, 2810.123456, 40.0, 9))["elo"] == 2810.1
