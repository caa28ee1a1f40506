"""The fitted quality models (``bench/fit_quality.py`` writes this file): one per engine profile.

A profile without an entry has no quality estimate: :func:`model_for` returns None and the
estimate says why; another profile's model is never used.

>>> model_for("no such profile") is None
True
>>> model_for('Stockfish 15.1 depth=12 multipv=4').profile
'Stockfish 15.1 depth=12 multipv=4'
"""

from __future__ import annotations

from typing import Any

from livemon.rating.quality import QualityModel

MODELS: dict[str, dict[str, Any]] = {
    "Stockfish 15.1 depth=12 multipv=4": {
        "profile": "Stockfish 15.1 depth=12 multipv=4",
        "intercept": 2365.3776696592877,
        "weights": [
            -588.7936475578359,
            -177.11795787745478,
            -24.868888240090765,
            9.920239849714536,
            282.50011479727453,
            -163.74427534010866,
            -557.5946667075182,
            -169.87462312110097,
            151.71068462849465,
            -274.9661912901104,
            -457.67111197171664,
            648.1436741638132,
            -512.51565661727,
            -564.9386204406263,
            474.8028684251501,
            -553.9285946025379,
            4.996006150025876,
            -388.13190990040556,
            -104.72947347934925,
            -284.42409715557153
        ],
        "sigma_persist": 169.34319410509235,
        "sigma_day": 500.4231038349749,
        "sigma_move": 1828.8154596031036,
        "elo_min": 1253.0,
        "elo_max": 2864.0,
        "book_moves": 8,
        "eval_bound": 3.0,
        "features": [
            "loss_cap1",
            "loss_cap3",
            "win_loss",
            "accuracy",
            "top1",
            "rank",
            "outside_top4",
            "log_distance",
            "ec_loglik",
            "inaccuracy",
            "mistake",
            "blunder",
            "loss_ge_half",
            "loss_ge_1",
            "loss_ge_2",
            "scaled_loss",
            "good_moves",
            "gap",
            "abs_eval",
            "expected_loss"
        ],
        "moves_per_game": 25.177189409368637,
        "pool": "FIDE classical",
        "fitted_on": "751 games, 31 events, 435 player-events, 37086 positions (fit events, 2025 open)",
        "results": {
            "a": 0.0,
            "b": 157130.2233178054,
            "rho": 0.3074424042612562,
            "player_events": 138
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
