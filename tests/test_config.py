import pytest

from livemon.config import Config, ConfigError, load_config, load_config_text
from tests.conftest import REPO


def test_shipped_config_equals_defaults():
    assert load_config(REPO / "config.toml") == Config()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[engine]\ndepth = 0", "engine.depth: must be in 1..100, got 0"),
        ("[engine]\nmultipv = 'four'", "engine.multipv: expected int, got 'four'"),
        ("[engine]\ndepht = 3", "engine.depht: unknown key"),
        ("[ttt]\ntime_unit = 'fortnight'", "ttt.time_unit"),
        ("[ttt]\np_draw = 0.0", "ttt.p_draw: must be in (0, 1), got 0.0"),
        ("[ttt]\ntau = nan", "ttt.tau: expected a finite number, got nan"),
        ("[ttt]\nbeta = inf", "ttt.beta: expected a finite number, got inf"),
        ("[ttt]\ntau = -0.1", "ttt.tau: must be a finite number, not negative, got -0.1"),
        ("[ttt]\nmax_iterations = 0", "ttt.max_sweeps: must be at least 1, got 0"),
        ("[ttt]\nbeat = 1.0", "ttt.beat: unknown key"),
        ("[ttt]\nbeta = 'big'", "ttt.beta: expected float, got 'big'"),
        ("[screening]\nmin_ttt_games = -1", "screening.min_ttt_games: must be in 0..1000000, got -1"),
        ("[engine\n", "config.toml"),
    ],
)
def test_bad_values_name_the_key(text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config_text(text)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="nope.toml"):
        load_config(tmp_path / "nope.toml")


def test_ttt_table_embeds_the_model_parameters_with_their_defaults():
    from livemon.rating.ttt_params import TTTParams

    assert Config().ttt.params == TTTParams()
    cfg = load_config_text("[ttt]\nmax_iterations = 7\nbeta = 2\nelo_per_unit = 100.0")
    assert cfg.ttt.params == TTTParams(max_sweeps=7, beta=2.0) and cfg.ttt.elo_per_unit == 100.0
    assert load_config_text("[ttt]\nmax_sweeps = 7").ttt.params.max_sweeps == 7


# -- values that used to be accepted and then broke the service ---------------------------------------

BAD_CONFIGS = [
    ("[monitor]\nstatus_seconds = nan\n", "monitor.status_seconds: expected a finite number, got nan"),
    ("[ttt]\ntau = nan\n", "ttt.tau: expected a finite number"),
    ("[ttt]\nsigma0 = inf\n", "ttt.sigma0: expected a finite number, got inf"),
    ("[engine]\ntimeout = nan\n", "engine.timeout: expected a finite number"),
    ("[analysis]\nc_max = inf\n", "analysis.c_max: expected a finite number, got inf"),
    ("[analysis]\nengine_strength = -inf\n", "analysis.engine_strength: expected a finite number"),
    ("[analysis]\nc_min = 5\nc_max = 2\n", "analysis.c_min: must be at least 0 and below c_max (2.0), got 5.0"),
    ('[[feeds]]\nname = "a"\npath = "x.pgn"\n[[feeds]]\nname = "a"\npath = "y.pgn"\n', "feeds.a: two feeds are named 'a'"),
    ("[engine\ndepth = 3\n", "event.toml: TOML syntax"),
]


@pytest.mark.parametrize("text, message", BAD_CONFIGS)
def test_bad_config_file_ends_every_command_with_one_line(tmp_path, capsys, text, message):
    """Each bad file: exit 2, one stderr line naming the file or key, no store created, no traceback."""
    from livemon.cli import main

    path = tmp_path / "event.toml"
    path.write_text(text, encoding="utf-8")
    for command in ("status", "export", "serve"):
        code = main([command, "--config", str(path), "--store", str(tmp_path / "s.sqlite")])
        err = capsys.readouterr().err
        assert code == 2, (command, err)
        assert err.count("\n") == 1 and message in err and "Traceback" not in err, (command, err)
    assert not (tmp_path / "s.sqlite").exists()


def test_non_utf8_config_file_is_one_line(tmp_path, capsys):
    from livemon.cli import main

    path = tmp_path / "latin1.toml"
    path.write_bytes('[[feeds]]\nname = "Gambit Café"\npath = "x.pgn"\n'.encode("latin-1"))
    assert main(["status", "--config", str(path), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err == f"livemon: config: {path}: not UTF-8 text (byte 0xe9 at offset 28)\n"


def test_more_engine_processes_than_cpus_is_a_warning(tmp_path, capsys):
    import os

    from livemon.cli import main

    path = tmp_path / "big.toml"
    path.write_text(f"[engine]\nprocesses = {(os.cpu_count() or 1) + 62}\n", encoding="utf-8")
    assert main(["status", "--config", str(path), "--store", str(tmp_path / "none.sqlite")]) == 1  # no store: exit 1
    err = capsys.readouterr().err
    assert f"engine.processes = {(os.cpu_count() or 1) + 62} is more than the {os.cpu_count()} CPUs" in err
    assert "warning" in err.splitlines()[0]
    assert load_config(path).warnings() and not Config().warnings()


# -- one broker: [broker], shared by the bus, MQTT out and the mqtt feeds ------------------------------------------


def test_one_broker_section_is_shared_and_a_section_may_change_its_user_or_its_broker():
    from livemon.io.broker import BrokerSettings

    cfg = load_config_text(
        '[broker]\nhost = "mq.example"\nport = 8883\nusername = "monitor"\npassword = "pw"\n'
        '[mqtt_out.broker]\nusername = "livemon"\npassword = "pw2"\n'
        '[[feeds]]\nname = "boards"\ntype = "mqtt"\ntopic = "club/+/moves"\n'
        '[[feeds]]\nname = "club"\ntype = "mqtt"\ntopic = "x/#"\nbroker = { host = "club.example" }\n')
    bus, out = BrokerSettings.of(cfg.bus), BrokerSettings.of(cfg.mqtt_out)
    boards, club = (BrokerSettings.of(f) for f in cfg.feeds)
    assert (bus.where, bus.username, bus.password) == ("mq.example:8883", "monitor", "pw")
    assert (out.where, out.username, out.password) == ("mq.example:8883", "livemon", "pw2")  # same broker, own user
    assert boards == BrokerSettings("mq.example", 8883, "monitor", "pw", max_backoff=60.0)
    assert (club.where, club.username, club.password) == ("club.example:1883", None, None)  # no credentials leak
    assert not cfg.warnings()


def test_the_older_flat_broker_keys_are_read_with_one_line_naming_the_new_keys(tmp_path, capsys):
    from livemon.cli import main
    from livemon.io.broker import BrokerSettings

    text = ('[bus]\nmode = "mqtt"\nhost = "10.0.0.5"\nport = 1884\nusername = "monitor"\n'
            '[mqtt_out]\nhost = "10.0.0.6"\n'
            '[[feeds]]\nname = "m"\ntype = "mqtt"\ntopic = "t/#"\nport = 1999\n')
    cfg = load_config_text(text)
    assert BrokerSettings.of(cfg.bus).where == "10.0.0.5:1884" and BrokerSettings.of(cfg.bus).username == "monitor"
    assert BrokerSettings.of(cfg.mqtt_out).where == "10.0.0.6:1883"
    assert BrokerSettings.of(cfg.feeds[0]).where == "localhost:1999"  # as the older release read them
    lines = cfg.warnings()
    assert len(lines) == 3
    assert lines[0].startswith("bus.host, bus.port, bus.username: deprecated, read as bus.broker.host, "
                               "bus.broker.port, bus.broker.username; move them to [broker]")
    assert lines[2].startswith("feeds.m.port: deprecated, read as feeds.m.broker.port")
    path = tmp_path / "old.toml"
    path.write_text(text, encoding="utf-8")
    main(["status", "--config", str(path), "--store", str(tmp_path / "none.sqlite")])
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "deprecated" in line]
    assert len(said) == 3 and all(line.startswith("livemon: config: warning: ") for line in said)
