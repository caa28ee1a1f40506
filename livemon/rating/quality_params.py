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
        "intercept": 2371.773279031647,
        "weights": [
            -584.0444954621928,
            -133.79666419406047,
            -27.123074851637906,
            10.662929456733533,
            396.69760009189275,
            -198.76234764291323,
            -527.2846140732056,
            -203.14120682167894,
            183.52302130089555,
            -96.72448006070978,
            -297.08003184100636,
            346.6326532195483,
            -341.47870391062105,
            -179.46153618757282,
            590.4713455099496,
            -813.5967483851986,
            8.626600454264324,
            -202.24881998080664,
            -275.8625614693317,
            -274.6326401506994
        ],
        "sigma_persist": 76.5943363188336,
        "sigma_day": 386.9578438678112,
        "sigma_move": 1465.4794902728725,
        "elo_min": 1253.0,
        "elo_max": 2865.0,
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
        "moves_per_game": 27.177978883861236,
        "pool": "FIDE classical",
        "fitted_on": "1348 games, 32 events, 591 player-events, 72076 positions (fit events, 2025 open)",
        "results": {
            "a": 0.0,
            "b": 124138.20529912286,
            "rho": 0.5209143450621893,
            "player_events": 272
        },
        "field_rho": {
            "moves": 0.0506,
            "moves+results": 0.2702
        },
        "field_scale": {
            "moves": 1.0265,
            "moves+results": 1.1184
        },
        "ratings": [
            2232.59766214178,
            405.86693133624743
        ],
        "noise_level": [
            -0.025238243180464453,
            -0.53,
            -0.4399999999999999,
            -1.78
        ],
        "opponent_rho": 0.5651404467681318
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
