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
        ("[ttt]\np_draw = 0.0", "ttt.p_draw: must be in (0, 1), got 0.0"),
        ("[ttt]\ntau = nan", "ttt.tau: must be a finite number, not negative, got nan"),
        ("[ttt]\nbeta = inf", "ttt.beta: must be a finite positive number, got inf"),
        ("[ttt]\nmax_iterations = 0", "ttt.max_sweeps: must be at least 1, got 0"),
        ("[ttt]\nbeat = 1.0", "ttt.beat: unknown key"),
        ("[ttt]\nbeta = 'big'", "ttt.beta: expected float, got 'big'"),
        ("[screening]\nmin_ttt_games = -1", "screening.min_ttt_games: must not be negative"),
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
