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
        "sigma_persist": 103.65989838972835,
        "sigma_day": 381.21655635415226,
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
            "rho": 0.6101526886141749,
            "player_events": 272
        },
        "field_rho": {
            "moves": 0.1067,
            "moves+results": 0.3059
        },
        "field_scale": {
            "moves": 1.0,
            "moves+results": 1.1066
        },
        "ratings": [
            2232.59766214178,
            405.86693133624743
        ],
        "noise_level": [
            0.004905060664399283,
            -0.49,
            -0.07999999999999965,
            -1.22
        ],
        "joint": {
            "intercept": 1202.5149236051075,
            "own": [
                -545.3808332590145,
                -175.06908980156976,
                -23.140924929625296,
                8.473321902434282,
                172.73158469102333,
                -125.0784201911508,
                -265.82786748437695,
                -158.77086756754406,
                141.94916865208882,
                -253.6998432900701,
                80.69793666525852,
                525.0449891393506,
                -361.2112817500753,
                -643.6019441594152,
                509.953683594835,
                -435.78979481281493,
                17.37067202469813,
                -178.83156838947147,
                32.19872292757092,
                -384.49600758636296
            ],
            "opponent": [
                244.53404096665577,
                82.26096983005976,
                10.15093501495801,
                -3.1727089073369545,
                37.26006555878661,
                17.643361845604836,
                -8.12697777151942,
                48.62814429392532,
                -21.246398271223185,
                239.2126375079455,
                -346.5610018679447,
                -275.06952793319437,
                215.2070721581447,
                523.2496092105036,
                -438.2745262367935,
                70.3162883284552,
                -39.600939577207384,
                50.920706664435215,
                -124.30970921040074,
                329.94297134145086
            ],
            "opponent_elo": 0.5126438154648734,
            "sigma_persist": 72.74801073040969,
            "sigma_day": 307.7552524242563,
            "sigma_move": 1164.290310932873,
            "sigma_move_opponent": 423.5034642561571
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
