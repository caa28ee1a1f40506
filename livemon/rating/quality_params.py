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
        "intercept": 2351.6290744734806,
        "weights": [
            -600.9979509756853,
            -163.33262706393646,
            -22.96619327125161,
            9.526183385234667,
            284.8225655685973,
            -164.9066912916351,
            -580.3713695342343,
            -159.95203145487204,
            142.22909343932352,
            -287.80611926248,
            -103.92081732839384,
            822.1696131135686,
            -528.1548429314929,
            -580.5070537805719,
            361.0267459928308,
            -502.46476682385315,
            17.997138280349184,
            -367.86047333136145,
            -104.62443561049062,
            -268.25606650875096
        ],
        "sigma_persist": 80.88513679934228,
        "sigma_day": 355.6654173343002,
        "sigma_move": 1465.696218824527,
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
        "moves_per_game": 25.125293657008616,
        "pool": "FIDE classical",
        "fitted_on": "650 games, 31 events, 405 player-events, 32085 positions (fit events, 2025 open)",
        "results": {
            "a": 0.0,
            "b": 129467.75510303535,
            "rho": 0.2609152482111186,
            "player_events": 114
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
