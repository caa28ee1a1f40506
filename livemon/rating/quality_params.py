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
        "intercept": 2361.9534311649463,
        "weights": [
            -534.5976238727509,
            -118.24348296489843,
            -25.887607340837437,
            10.103207324665867,
            384.96927398262557,
            -189.8111004222048,
            -513.3506909369428,
            -190.04460618855876,
            163.14962012181047,
            -99.32800895296728,
            -303.27917765773054,
            58.321464200980984,
            -295.5116322927428,
            -169.2839309683878,
            578.5700052158161,
            -837.8562698740935,
            13.237336185297726,
            -191.54580601590916,
            -265.0092476171082,
            -275.4416483861985
        ],
        "sigma_persist": 87.3295416162451,
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
            "rho": 0.5870016363038376,
            "player_events": 280
        },
        "field_rho": {
            "moves": 0.1002,
            "moves+results": 0.2307
        },
        "field_scale": {
            "moves": 1.0222,
            "moves+results": 1.1435
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
            "intercept": 1145.1340135414584,
            "own": [
                -488.6210291877126,
                -160.65440045618854,
                -21.172728047252598,
                7.747461639013157,
                165.7739346380309,
                -114.15040891988001,
                -291.37757029720456,
                -144.01521332800868,
                127.44248528786652,
                -203.55925144892632,
                72.29662393282747,
                301.0316281266403,
                -322.65294975403276,
                -597.253011462337,
                441.0717121889705,
                -419.08790793278445,
                18.919872811733374,
                -164.77910164210192,
                29.639387501693687,
                -347.8743821752722
            ],
            "opponent": [
                222.79174636152734,
                82.9755791630749,
                9.221497751313995,
                -2.9750650833378565,
                29.01267241664597,
                14.81563943722887,
                44.76188067961481,
                45.27244712768417,
                -23.21565750504172,
                180.67887887634708,
                -336.8769135334005,
                -242.30118406497698,
                201.46135829292757,
                491.28777134202954,
                -363.3898564356499,
                54.14788893896597,
                -38.05109920448271,
                43.56378268391406,
                -114.76378563718656,
                286.2802597532306
            ],
            "opponent_elo": 0.5366815161051466,
            "sigma_persist": 65.34913221077554,
            "sigma_day": 268.3798704625808,
            "sigma_move": 1044.1954253329193,
            "sigma_move_opponent": 393.3301099675631,
            "scale": 1.003275407385081,
            "noise_level": [
                -0.04472681029341975,
                -0.6099999999999999,
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
