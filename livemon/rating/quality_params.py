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
        "intercept": 2361.953431164945,
        "weights": [
            -534.5976238727507,
            -118.24348296489788,
            -25.887607340837473,
            10.103207324665883,
            384.9692739826255,
            -189.8111004222047,
            -513.3506909369428,
            -190.04460618855867,
            163.1496201218109,
            -99.3280089529665,
            -303.279177657731,
            58.321464200981275,
            -295.5116322927429,
            -169.2839309683886,
            578.570005215816,
            -837.8562698740925,
            13.237336185297785,
            -191.5458060159092,
            -265.0092476171081,
            -275.44164838619855
        ],
        "sigma_persist": 87.329541616245,
        "sigma_day": 345.10653633844436,
        "sigma_move": 1361.6445968416417,
        "elo_min": 1409.0,
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
        "moves_per_game": 27.215843023255815,
        "pool": "FIDE classical",
        "fitted_on": "1398 games, 32 events, 622 player-events, 74898 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 118725.1561086037,
            "rho": 0.5873458221616494,
            "player_events": 280
        },
        "field_rho": {
            "moves": 0.1001,
            "moves+results": 0.2331
        },
        "field_scale": {
            "moves": 1.0577,
            "moves+results": 1.1348
        },
        "ratings": [
            2240.3408430232557,
            381.6344127037739
        ],
        "noise_level": [
            0.018432650749970685,
            -0.45999999999999996,
            0.04000000000000001,
            -1.02
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1145.1340135414525,
            "own": [
                -488.6210291877132,
                -160.65440045618942,
                -21.172728047252534,
                7.747461639013174,
                165.77393463803156,
                -114.15040891987982,
                -291.37757029720433,
                -144.01521332800922,
                127.44248528786554,
                -203.5592514489239,
                72.29662393282734,
                301.0316281266396,
                -322.6529497540312,
                -597.2530114623399,
                441.0717121889723,
                -419.08790793278496,
                18.91987281173328,
                -164.77910164210175,
                29.639387501693683,
                -347.8743821752718
            ],
            "opponent": [
                222.79174636152814,
                82.97557916307538,
                9.221497751313962,
                -2.975065083337824,
                29.012672416645785,
                14.815639437228908,
                44.761880679615025,
                45.27244712768424,
                -23.21565750504128,
                180.67887887634663,
                -336.8769135333997,
                -242.3011840649765,
                201.4613582929274,
                491.2877713420311,
                -363.38985643565,
                54.14788893896621,
                -38.05109920448274,
                43.563782683914106,
                -114.76378563718652,
                286.2802597532294
            ],
            "opponent_elo": 0.5366815161051468,
            "sigma_persist": 65.34913221077555,
            "sigma_day": 268.37987046258075,
            "sigma_move": 1044.1954253329193,
            "sigma_move_opponent": 393.33010996756286,
            "scale": 0.8787758588790893,
            "noise_level": [
                -0.04472681029341969,
                -0.51,
                -0.07999999999999965,
                -0.97
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
