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
        "intercept": 2348.0326825779566,
        "weights": [
            -458.0398035357254,
            -119.04438950913502,
            -28.70477625371164,
            10.355148795510388,
            357.2203942120371,
            -190.8812362450974,
            -523.333285217472,
            -183.72367861766068,
            148.18335623937665,
            -71.6797108536368,
            -118.64786757216196,
            -601.7180012001361,
            -198.6456394221793,
            -43.05169806790937,
            228.80404915564694,
            -919.8039753957938,
            11.283149956066577,
            -196.0937691754186,
            -253.73343260500337,
            -376.5519743059798
        ],
        "sigma_persist": 104.18624419512767,
        "sigma_day": 329.8690988470898,
        "sigma_move": 1352.7240508785053,
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
        "moves_per_game": 26.971703011422637,
        "pool": "FIDE classical",
        "fitted_on": "1987 games, 32 events, 922 player-events, 103895 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 125818.87070887843,
            "rho": 0.6262055733865504,
            "player_events": 350
        },
        "field_rho": {
            "moves": 0.1,
            "moves+results": 0.1621
        },
        "field_scale": {
            "moves": 1.0529,
            "moves+results": 1.1588
        },
        "ratings": [
            2205.2515576323985,
            352.3872094579739
        ],
        "noise_level": [
            0.010014679216181707,
            -0.49,
            0.04999999999999999,
            -1.42
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1150.9472640719598,
            "own": [
                -471.36059223472773,
                -162.31166348023675,
                -24.244920678905263,
                8.5543519894518,
                198.79636077071328,
                -115.07298782511693,
                -301.8220080732852,
                -153.1258504329735,
                134.32627306688264,
                -53.53786902742673,
                197.09666544895893,
                -305.4055581744047,
                -236.56230743571354,
                -441.1590704938423,
                217.93449123143876,
                -517.3244831147094,
                12.647581885398468,
                -194.183740833225,
                19.059241851714322,
                -440.238940734404
            ],
            "opponent": [
                246.23607148947667,
                85.98034504228912,
                10.42667749292768,
                -3.5552548602444234,
                7.457613391346469,
                12.254106852914207,
                34.56493554762125,
                57.50227843369557,
                -43.668073107905556,
                5.530411756222352,
                -384.83840330890246,
                15.139546693430848,
                179.37372264992592,
                375.49784853285087,
                -329.4484832856284,
                98.88548362036683,
                -30.687418356143265,
                56.71261628279046,
                -116.24173235160862,
                361.6736627989344
            ],
            "opponent_elo": 0.5251649688489566,
            "sigma_persist": 78.05305930983961,
            "sigma_day": 256.16416357341103,
            "sigma_move": 1059.6739693184898,
            "sigma_move_opponent": 395.6025045487936,
            "scale": 0.8665712982416154,
            "noise_level": [
                -0.044750915373645145,
                -0.39000000000000024,
                -0.049999999999999656,
                -1.21
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
