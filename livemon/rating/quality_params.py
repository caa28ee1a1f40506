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
        "intercept": 2359.701216483632,
        "weights": [
            -531.1364201946856,
            -136.75515014433563,
            -27.39950134399768,
            10.332173784939108,
            340.80472905840566,
            -188.1321540137377,
            -534.4093617293662,
            -185.51871470298812,
            163.31250563846996,
            -152.77000927335874,
            -365.50389155139857,
            -86.42753602344749,
            -269.0930235153335,
            -183.77512915125905,
            447.9026405452562,
            -779.5350670521088,
            13.97371314701691,
            -185.98631099986312,
            -261.796964527618,
            -260.1138713428907
        ],
        "sigma_persist": 85.76722796536822,
        "sigma_day": 340.258991390543,
        "sigma_move": 1352.6576481230697,
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
        "moves_per_game": 27.31933842239186,
        "pool": "FIDE classical",
        "fitted_on": "1594 games, 32 events, 646 player-events, 85892 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 119145.17722651025,
            "rho": 0.61663271387815,
            "player_events": 336
        },
        "field_rho": {
            "moves": 0.0917,
            "moves+results": 0.2122
        },
        "field_scale": {
            "moves": 1.0555,
            "moves+results": 1.1211
        },
        "ratings": [
            2248.2986641221373,
            363.09636500261695
        ],
        "noise_level": [
            0.03094904071973122,
            -0.48,
            0.06000000000000008,
            -1.2899999999999998
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1144.9412682920813,
            "own": [
                -470.0545875398873,
                -174.26950266602083,
                -22.867672097870543,
                7.918729031855474,
                139.7200883047821,
                -119.42255433035871,
                -334.6865562018838,
                -139.708291710144,
                127.08576627048407,
                -250.37880929986648,
                28.39007574465901,
                117.45200946316405,
                -283.233702728776,
                -582.4913470143185,
                301.17359185588555,
                -397.57857948759096,
                21.08379829106272,
                -174.49685610170627,
                24.77435390978269,
                -362.98277440363654
            ],
            "opponent": [
                199.0460543076862,
                87.20123860486859,
                10.102933996035318,
                -2.9089122909184226,
                35.70678777320259,
                20.842100196936734,
                69.87453511168675,
                41.809244836369366,
                -23.44967142098339,
                171.01729995813375,
                -320.26233260151344,
                -97.43062755901991,
                172.85877979707348,
                470.4752906269268,
                -287.76006305877434,
                64.16856186188042,
                -37.22346107839073,
                61.413280721958756,
                -113.32260031120977,
                329.0954182225367
            ],
            "opponent_elo": 0.5292507402321094,
            "sigma_persist": 70.37745215229498,
            "sigma_day": 274.22886708858044,
            "sigma_move": 1053.9619852567969,
            "sigma_move_opponent": 402.0803546746216,
            "scale": 0.8598295927047728,
            "noise_level": [
                -0.034326296589950185,
                -0.56,
                -0.08999999999999965,
                -1.02
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
