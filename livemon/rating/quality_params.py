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
        "intercept": 2366.5403108370638,
        "weights": [
            -532.8072888078487,
            -123.45772485308943,
            -26.386348785205364,
            10.207338112769474,
            369.7308666292039,
            -189.1113222760957,
            -525.0955525330857,
            -192.75745637805906,
            161.49137658641877,
            -121.63328612255735,
            -362.168487109638,
            -5.10305576021395,
            -269.12840910329595,
            -156.10970609518793,
            551.6637603341708,
            -806.906186651972,
            14.783205421371106,
            -194.98792183110265,
            -262.8906715455783,
            -313.36850705894665
        ],
        "sigma_persist": 90.20987945051185,
        "sigma_day": 338.8916698539123,
        "sigma_move": 1356.7738225421774,
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
        "moves_per_game": 27.220258327668255,
        "pool": "FIDE classical",
        "fitted_on": "1493 games, 32 events, 642 player-events, 80082 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 118434.64307718158,
            "rho": 0.6097655610057124,
            "player_events": 307
        },
        "field_rho": {
            "moves": 0.1012,
            "moves+results": 0.2228
        },
        "field_scale": {
            "moves": 1.0538,
            "moves+results": 1.1275
        },
        "ratings": [
            2236.526172671652,
            371.0348058514141
        ],
        "noise_level": [
            0.02181141282520277,
            -0.45999999999999996,
            0.06000000000000008,
            -1.13
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1140.6050407600776,
            "own": [
                -467.5738171214521,
                -162.30509203482552,
                -21.510429183697074,
                7.74922781908677,
                159.21774942091744,
                -120.20269157341201,
                -331.3740949337681,
                -144.60363457337843,
                131.51816286887987,
                -230.70855439435417,
                46.28371663430914,
                230.7279366855806,
                -282.64520161387316,
                -547.8382311843351,
                361.45673497526633,
                -399.46768352706266,
                18.08890146719719,
                -164.27620977864464,
                27.633610098092923,
                -376.9177139307932
            ],
            "opponent": [
                203.5274456257997,
                83.6683257623795,
                9.46350435039646,
                -2.9476304090008987,
                30.168559774692213,
                21.454761631201613,
                72.04379678163356,
                45.20622318921486,
                -31.98074655994874,
                174.9511161127362,
                -343.9127724455186,
                -193.7941736804209,
                173.3905672528732,
                451.27641598437356,
                -288.4075853983342,
                53.450340824477486,
                -34.73516694259416,
                40.45490961805118,
                -114.07945455640979,
                302.8503931883511
            ],
            "opponent_elo": 0.5371603599630748,
            "sigma_persist": 68.9156209921551,
            "sigma_day": 267.1333406070285,
            "sigma_move": 1045.6166428094266,
            "sigma_move_opponent": 394.82537322671516,
            "scale": 0.8739082127809523,
            "noise_level": [
                -0.041125349657355516,
                -0.52,
                -0.06999999999999965,
                -1.05
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
