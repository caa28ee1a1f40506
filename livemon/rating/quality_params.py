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
        "intercept": 2296.5493768457886,
        "weights": [
            -581.5046665927359,
            -199.74603225612313,
            -27.67525767965819,
            10.062932859900771,
            338.2448796068362,
            -158.8664196942704,
            -460.7326611920878,
            -178.74610037787411,
            166.30859994201973,
            -259.0455357371833,
            -513.4329975644317,
            418.89232460486807,
            -441.5601226136521,
            -519.918471357919,
            356.4936661246234,
            -531.6055105316291,
            15.405080244069781,
            -320.9294618807333,
            -125.50512996121391,
            -316.708548218971
        ],
        "sigma_persist": 133.0090443943299,
        "sigma_day": 397.05769291643355,
        "sigma_move": 1582.329293412822,
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
        "moves_per_game": 25.304304304304303,
        "pool": "FIDE classical",
        "fitted_on": "1021 games, 31 events, 547 player-events, 50558 positions (fit events, 2025 open)",
        "results": {
            "a": 0.0,
            "b": 147805.3561336233,
            "rho": 0.3891318571961229,
            "player_events": 208
        },
        "field_rho": {
            "moves": 0.0789,
            "moves+results": 0.3333
        },
        "ratings": [
            2062.942942942943,
            317.70151715367916
        ],
        "noise_level": [
            -0.07085144109322354,
            -0.54,
            -0.3399999999999998,
            -1.43
        ]
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
