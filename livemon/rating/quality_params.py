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
        "intercept": 2326.322229691884,
        "weights": [
            -473.6572700487915,
            -118.4294903539501,
            -29.164188072229273,
            10.620079341417203,
            352.54532884007045,
            -184.60510658963574,
            -512.05768143143,
            -187.45570254962763,
            152.4481887513616,
            -92.77807559960496,
            -117.22668968776745,
            -483.8862761163747,
            -199.2086464359631,
            -39.874153025107326,
            306.8637930584488,
            -955.4514332400912,
            15.495427552301125,
            -191.24156722688653,
            -261.74339931113326,
            -365.581159394145
        ],
        "sigma_persist": 101.64895873530315,
        "sigma_day": 338.66726027545695,
        "sigma_move": 1345.334491517957,
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
        "moves_per_game": 27.11571868870832,
        "pool": "FIDE classical",
        "fitted_on": "1831 games, 32 events, 813 player-events, 96776 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 127436.72368635885,
            "rho": 0.6224352833091085,
            "player_events": 344
        },
        "field_rho": {
            "moves": 0.1003,
            "moves+results": 0.1584
        },
        "field_scale": {
            "moves": 1.0555,
            "moves+results": 1.1471
        },
        "ratings": [
            2215.3642476884283,
            359.35530458530354
        ],
        "noise_level": [
            0.008122208661432892,
            -0.48,
            0.04000000000000001,
            -1.49
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1177.1366778819538,
            "own": [
                -477.50017692188896,
                -165.74684742339414,
                -25.51208015317805,
                8.807329873040098,
                173.06720188063485,
                -107.46984694365264,
                -286.0846371169523,
                -152.17066020141033,
                132.79440303396507,
                -106.31302264910336,
                209.87676918173048,
                -252.2890766295894,
                -234.29802226011174,
                -505.78679635921316,
                228.82469109425602,
                -562.6920784177331,
                13.876120428383485,
                -186.03652200339928,
                20.630658441816088,
                -409.8728936468699
            ],
            "opponent": [
                233.3754514355396,
                84.69372130693286,
                11.165041264233817,
                -3.504506297200406,
                31.42486787249094,
                5.570210344981924,
                31.298792240888822,
                50.1052397780971,
                -33.465627178838076,
                35.81095439902722,
                -399.3330471031529,
                6.800121547292689,
                165.70593450925887,
                436.2286172092074,
                -268.9305242886598,
                125.06319428232517,
                -32.02427052655865,
                54.39328878671437,
                -121.11485805683223,
                330.51353356923227
            ],
            "opponent_elo": 0.5103809995815392,
            "sigma_persist": 77.79907684110266,
            "sigma_day": 270.77213363117727,
            "sigma_move": 1066.085771284654,
            "sigma_move_opponent": 386.9140676796797,
            "scale": 0.8571846663951872,
            "noise_level": [
                -0.04897201223874328,
                -0.42000000000000004,
                -0.08999999999999965,
                -1.17
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
