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
        "intercept": 2280.061236448402,
        "weights": [
            -588.1379342896143,
            -194.82452178208945,
            -27.994149898111708,
            10.368421789685984,
            279.4526790489363,
            -155.4795670954447,
            -469.157546686802,
            -178.90620289612767,
            157.4007480505817,
            -288.7373033122037,
            -488.98253922367206,
            628.4098908636842,
            -483.93839467353956,
            -531.0766365671338,
            516.3777862396938,
            -552.8584452123687,
            25.608666352987953,
            -323.2563639716241,
            -138.06560818216624,
            -255.42985014892298
        ],
        "sigma_persist": 143.87961053772582,
        "sigma_day": 409.3832189079656,
        "sigma_move": 1594.4254955441247,
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
        "moves_per_game": 24.700236966824644,
        "pool": "FIDE classical",
        "fitted_on": "866 games, 31 events, 495 player-events, 41694 positions (fit events, 2025 open)",
        "results": {
            "a": 0.0,
            "b": 169857.90823092678,
            "rho": 0.35654458473753275,
            "player_events": 155
        },
        "field_table": {
            "beta": [
                -0.039915695151523385,
                -0.0004338626301357506,
                0.14208758076730657,
                0.7229652777188347,
                1.113355037577146,
                1.2870477811756669,
                1.3750349709349492,
                1.4855016629206181,
                1.6063740350626639
            ],
            "lambda": [
                1.4213910961957938,
                1.2523311375266615,
                1.0390115501329331,
                0.9459467967068741,
                0.7458945132323002,
                0.578415104122959,
                0.4752305219362654,
                0.39207778237809665,
                0.31591203328640627
            ]
        },
        "ratings": [
            2044.3530805687203,
            329.1683434352307
        ],
        "noise_level": [
            -0.07386245259724232,
            -0.49,
            -0.31999999999999984,
            -1.19
        ]
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
