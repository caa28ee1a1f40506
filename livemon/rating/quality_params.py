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
        "intercept": 2363.8502068043003,
        "weights": [
            -544.1986790493189,
            -116.25103879555941,
            -25.814522071040972,
            10.13951666131647,
            384.677650702235,
            -188.13788929354368,
            -500.5646914678935,
            -190.44140341991954,
            169.35295893571768,
            -98.26227007839522,
            -296.2708119073765,
            92.96727842746736,
            -319.8930937703277,
            -163.04166531219855,
            599.9128568242712,
            -848.1873271463086,
            10.932877348149322,
            -190.15004009387314,
            -261.86029597598764,
            -257.83753549592706
        ],
        "sigma_persist": 88.84553615018599,
        "sigma_day": 347.76628515339644,
        "sigma_move": 1367.5786830674092,
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
        "moves_per_game": 27.177978883861236,
        "pool": "FIDE classical",
        "fitted_on": "1348 games, 32 events, 591 player-events, 72076 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 109255.6305879884,
            "rho": 0.5908125937878878,
            "player_events": 272
        },
        "field_rho": {
            "moves": 0.0997,
            "moves+results": 0.2396
        },
        "field_scale": {
            "moves": 1.0173,
            "moves+results": 1.1511
        },
        "ratings": [
            2246.9079939668177,
            386.2143497635035
        ],
        "noise_level": [
            0.021513335200731572,
            -0.47,
            0.04999999999999999,
            -1.03
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1132.433190239375,
            "own": [
                -500.64867736898736,
                -158.887426379569,
                -21.082044168081765,
                7.762584666715528,
                167.41981564887266,
                -110.06040508895207,
                -253.50982317267247,
                -145.33699356539478,
                131.45534430128404,
                -226.11795603862245,
                95.98136828450518,
                319.28798048122434,
                -351.06705993028254,
                -590.6773267965152,
                463.6010141467227,
                -419.67689492337655,
                18.21582463134689,
                -158.76007195395428,
                31.8881827827524,
                -345.51987890289035
            ],
            "opponent": [
                233.53478287249956,
                79.88641175320204,
                9.245348020585348,
                -2.9843049640065695,
                21.275454190486276,
                11.707449820174268,
                8.484758492599894,
                47.33603113777089,
                -25.269863469205905,
                198.9453011537938,
                -344.4462318374197,
                -232.67727812047133,
                228.07067851352977,
                474.9167429123857,
                -372.9568817266144,
                58.14098807005889,
                -37.39388859663426,
                43.47354287600585,
                -112.78211382815662,
                294.9977489467354
            ],
            "opponent_elo": 0.5404504509069694,
            "sigma_persist": 65.1223580382823,
            "sigma_day": 268.85669603273374,
            "sigma_move": 1044.2255420918086,
            "sigma_move_opponent": 399.107318188716,
            "scale": 1.0061548601835966,
            "noise_level": [
                -0.04339523390796548,
                -0.6199999999999999,
                -0.08999999999999965,
                -0.9599999999999999
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
