import pytest

from livemon.config import Config, ConfigError, load_config, load_config_text
from tests.conftest import REPO


def test_shipped_config_equals_defaults():
    assert load_config(REPO / "config.toml") == Config()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[engine]\ndepth = 0", "engine.depth: must be at least 1, got 0"),
        ("[engine]\nmultipv = 'four'", "engine.multipv: expected int, got 'four'"),
        ("[engine]\ndepht = 3", "engine.depht: unknown key"),
        ("[ttt]\ntime_unit = 'fortnight'", "ttt.time_unit"),
        ("[engine\n", "config.toml"),
    ],
)
def test_bad_values_name_the_key(text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config_text(text)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="nope.toml"):
        load_config(tmp_path / "nope.toml")
