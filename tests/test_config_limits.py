"""Every config key is checked for type and range: one line naming the key and what it accepts.

The table holds the bad values an attack on the service found taken silently (each exhausted memory, CPU or
time, or opened what should stay closed); the sweep after it sets every numeric key of every section to 10^15
and to -10^15 and wants each refused by name. Real files: a FIFO made for the test and /dev/zero.
"""

from __future__ import annotations

import os
import typing
from pathlib import Path

import pytest

from livemon.config import (FEED_CLASSES, AnalysisConfig, BrokerConfig, BusConfig, Config, ConfigError, EngineConfig,
                            MonitorConfig, MqttOutConfig, ScreeningConfig, StoreConfig, TTTConfig, WebConfig,
                            load_config_text)
from livemon.rating.ttt_params import TTTParams

FEEDS = {"file": 'path = "round.pgn"', "http": 'url = "https://x.example/a.pgn"',
         "stream": 'url = "https://x.example/stream.pgn"', "mqtt": 'topic = "event/moves"', "replay": 'path = "a.pgn"'}
"""What each feed type needs besides the key under test."""

BAD = [
    ("[web]\nclient_queue = 1000000000000", "web.client_queue: must be in 1..1000000, got 1000000000000"),
    ("[analysis]\nc_max = 1e308", "analysis.c_max: must be in 0.01..100, got 1e+308"),
    ("[ttt]\nbeta = 1e308", "ttt.beta: must be in 0.001..1000, got 1e+308"),
    ("[ttt]\nsigma0 = 1e300", "ttt.sigma0: must be in 0.001..1000"),
    ('[web]\nhost = ""', "web.host: expected a host name or address (not empty, no spaces), got ''"),
    ('[broker]\nhost = ""', "broker.host: expected a host name or address"),
    ('[broker]\nport = 0', "broker.port: must be in 1..65535, got 0"),
    ('[broker]\nusername = ""', "broker.username: expected 1..65535 bytes (or unset)"),
    ('[bus.broker]\nhost = " "', "bus.broker.host: expected a host name or address"),
    ('[mqtt_out.broker]\nport = 70000', "mqtt_out.broker.port: must be in 1..65535"),
    ('[bus]\nhost = " "', "bus.host: expected a host name or address"),  # the older flat keys, checked as written
    ('[mqtt_out]\nhost = ""', "mqtt_out.host: expected a host name or address"),
    ('[bus]\nhost = "a"\nbroker = { host = "b" }', "bus.host: set the broker in bus.broker (or [broker]), not both"),
    ("[monitor]\nstatus_seconds = 1e-9", "monitor.status_seconds: must be in 0.05..3600, got 1e-09"),
    ("[monitor]\nalgorithm2_seconds = 1e-9", "monitor.algorithm2_seconds: must be in 0.1..86400"),
    ('[[feeds]]\nname = "f"\ntype = "http"\nurl = "http://x/a.pgn"\ninterval = 1e-9',
     "feeds.f.interval: must be in 0.05..86400, got 1e-09"),
    ("[engine]\ntimeout = 1e-9", "engine.timeout: must be in 0.1..86400, got 1e-09"),
    ("[engine]\nmultipv = 100000", "engine.multipv: must be in 1..256, got 100000"),
    ("[engine]\ndepth = 100000", "engine.depth: must be in 1..100, got 100000"),
    ("[engine]\nhash_mb = 100000000", "engine.hash_mb: must be in 1..65536"),
    ("[engine]\nprocesses = 100000", "engine.processes: must be in 1..256"),
    ('[web]\narbiter_token = "        "', "web.arbiter_token: expected 8..1024 characters"),
    ('[web]\narbiter_token = " padded-token "', "web.arbiter_token: expected 8..1024 characters"),
    ('[web]\narbiter_token = "aaaaaaaaaa"', "web.arbiter_token: expected 8..1024 characters, at least 4 different"),
    ('[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "#/a"', "feeds.m.topic: '#' may only be the whole last level"),
    ('[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "a/b#"', "feeds.m.topic: '#' may only be the whole last level"),
    ('[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "a/x+/c"', "feeds.m.topic: '+' may only be a whole level"),
    ('[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "a"\nhost = ""', "feeds.m.host: expected a host name"),
    ('[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "a"\nbroker = { host = "" }', "feeds.m.broker.host: expected a host"),
    ('[[feeds]]\nname = "f"\ntype = "file"\npath = "a.pgn"\nspeed = 2', "feeds.f.speed: unknown key of a file feed"),
    ('[[feeds]]\nname = "h"\ntype = "http"\nurl = "http://x/a.pgn"\ntopic = "t"', "feeds.h.topic: unknown key of a http feed"),
    ('[[feeds]]\nname = "h"\ntype = "gopher"', "feeds.h.type: expected one of file, http, stream, mqtt, replay"),
    ('[[feeds]]\nname = "f"\ntype = "file"\npath = "/dev/zero"',
     "feeds.f.path: expected a regular file or a folder, got a device or socket: '/dev/zero'"),
    ('[[feeds]]\nname = "r"\ntype = "replay"\npath = "/dev/zero"', "feeds.r.path: expected a regular file, got a device"),
    ('[[feeds]]\nname = "f"\ntype = "file"\npath = "/a.pgn"\nmax_body_mb = 999999', "feeds.f.max_body_mb: must be in 0.001..4096"),
    ("[web]\nmax_message_bytes = 1000000000", "web.max_message_bytes: must be in 64..1048576"),
    ("[store]\nbackup_minutes = 1e-9", "store.backup_minutes: must be in 1..525600"),
    ("[bus]\nrequests_per_engine = 1000000", "bus.requests_per_engine: must be in 1..1000"),
    ("[engine]\npath = \"\"", "engine.path: must not be empty"),
    ('[web]\nallowed_origins = [""]', "web.allowed_origins[0]: expected an http:// or https:// origin"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[m.split(":")[0] + "=" + t.rsplit("=", 1)[-1].strip()[:20] for t, m in BAD])
def test_bad_value_is_refused_in_one_line_naming_the_key_and_the_range(text, message):
    with pytest.raises(ConfigError) as caught:
        load_config_text(text)
    assert str(caught.value).startswith(message), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_fifo_as_a_feed_path_is_refused(tmp_path: Path):
    fifo = tmp_path / "round.pgn"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"^feeds\.f\.path: expected a regular file or a folder, got a FIFO"):
        load_config_text(f'[[feeds]]\nname = "f"\ntype = "file"\npath = "{fifo}"')


def test_good_values_at_the_bounds_are_taken(tmp_path: Path):
    pgn = tmp_path / "a.pgn"
    pgn.write_text("")
    cfg = load_config_text(
        '[engine]\ndepth = 100\nmultipv = 256\ntimeout = 0.1\n[web]\nhost = "0.0.0.0"\nclient_queue = 1000000\n'
        'arbiter_token = "abcd1234"\n[monitor]\nstatus_seconds = 0.05\n[analysis]\nc_max = 100\n[ttt]\nbeta = 1000\n'
        f'[[feeds]]\nname = "f"\ntype = "file"\npath = "{pgn}"\ninterval = 0.05\n'
        f'[[feeds]]\nname = "d"\ntype = "file"\npath = "{tmp_path}"\n'
        '[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "event/+/moves/#"\n')
    assert cfg.engine.depth == 100 and cfg.web.client_queue == 10**6 and cfg.ttt.params.beta == 1000
    assert load_config_text("") == Config()
    load_config_text(Path(__file__).parent.parent.joinpath("config.toml").read_text())  # the shipped file


SECTIONS: dict[str, type] = {"engine": EngineConfig, "store": StoreConfig, "monitor": MonitorConfig, "web": WebConfig,
                             "mqtt_out": MqttOutConfig, "bus": BusConfig, "screening": ScreeningConfig,
                             "analysis": AnalysisConfig}


def numeric_keys() -> list[tuple[str, str, type]]:
    out = []
    for section, cls in SECTIONS.items():
        for name, hint in typing.get_type_hints(cls).items():
            base = {int, float} & set(typing.get_args(hint) or (hint,))
            if base:
                out.append((section, name, float if float in base else int))
    for name, hint in typing.get_type_hints(TTTParams).items():
        base = {int, float} & set(typing.get_args(hint) or (hint,))
        if base:
            out.append(("ttt", name, float if float in base else int))
    for name, hint in typing.get_type_hints(TTTConfig).items():
        if hint in (int, float):
            out.append(("ttt", name, hint))
    for name, hint in typing.get_type_hints(BrokerConfig).items():
        if hint in (int, float):
            out.append(("broker", name, hint))
    for kind, cls in FEED_CLASSES.items():
        for name, hint in typing.get_type_hints(cls).items():
            if hint in (int, float):
                out.append((f"feeds/{kind}", name, hint))
    return out


@pytest.mark.parametrize("section, key, kind", numeric_keys(), ids=[f"{s}.{k}" for s, k, _ in numeric_keys()])
@pytest.mark.parametrize("sign", [1, -1])
def test_every_numeric_key_has_a_range(section, key, kind, sign):
    value = sign * 10**15 if kind is int else sign * 1e15
    if section.startswith("feeds/"):
        kind = section.split("/")[1]
        text, where = f'[[feeds]]\nname = "x"\ntype = "{kind}"\n{FEEDS[kind]}\n{key} = {value}', f"feeds.x.{key}"
    else:
        text, where = f"[{section}]\n{key} = {value}", f"{section}.{key}"
    with pytest.raises(ConfigError) as caught:
        load_config_text(text)
    message = str(caught.value)
    # refused naming the key (a pair such as backlog_low/high or c_min/c_max may name its partner's bound)
    assert message.startswith(where) or (key, message.split(":")[0]) in {
        ("backlog_low", "engine.backlog_low"), ("c_min", "analysis.c_min"), ("notice_z", "screening.notice_z")}, message
