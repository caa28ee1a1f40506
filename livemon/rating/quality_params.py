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
        "intercept": 2285.6033164174332,
        "weights": [
            -448.7873788126739,
            -118.58194194862017,
            -31.407028790088713,
            10.806086645912838,
            354.5916588578623,
            -180.79419896930656,
            -513.749539770358,
            -181.57958290995043,
            146.95270201135074,
            -44.80748919177256,
            -415.54282782872195,
            -583.5210223849692,
            -210.3026831436153,
            -20.87435196556428,
            477.8290190642331,
            -967.8121187096007,
            13.811513282812957,
            -188.2005017499202,
            -246.9562944977046,
            -353.6300003090909
        ],
        "sigma_persist": 108.31556820844831,
        "sigma_day": 329.4194961633964,
        "sigma_move": 1363.5092572606263,
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
        "moves_per_game": 26.78147268408551,
        "pool": "FIDE classical",
        "fitted_on": "2186 games, 32 events, 1040 player-events, 112750 positions (fit events, 2025 open); ratings on today's FIDE scale",
        "results": {
            "a": 0.0,
            "b": 127325.39818918734,
            "rho": 0.6221433052301,
            "player_events": 360
        },
        "field_rho": {
            "moves": 0.1055,
            "moves+results": 0.1519
        },
        "field_scale": {
            "moves": 1.0539,
            "moves+results": 1.1762
        },
        "ratings": [
            2195.0985748218527,
            344.15464267386886
        ],
        "noise_level": [
            0.00297394121939966,
            -0.5,
            0.04000000000000001,
            -1.4
        ],
        "level_bias": [
            0.0,
            0.0,
            0.0
        ],
        "joint": {
            "intercept": 1182.8378802181085,
            "own": [
                -466.9006126928693,
                -155.69333168068326,
                -23.65310230999204,
                8.445723851514988,
                236.51874387376373,
                -110.66664845869899,
                -317.43084860874734,
                -154.05750726757918,
                132.53866299308302,
                -111.71592781683863,
                155.63585564597358,
                -250.26893373000857,
                -241.21611180694595,
                -400.60256931352717,
                202.12316350733937,
                -510.7687192812846,
                12.637357860332985,
                -181.46111851673504,
                20.198080835143035,
                -464.25879399383643
            ],
            "opponent": [
                247.00308202029393,
                81.34123651786342,
                9.456435371605854,
                -3.3817810067260816,
                -40.948294893645716,
                7.960830993479407,
                30.61150944976239,
                58.61320467506434,
                -41.45386988714588,
                42.510636523688895,
                -393.96988007594047,
                -24.55333625752089,
                182.38303697640603,
                323.54587313429585,
                -329.1070560826204,
                56.51167249367838,
                -27.857082396389817,
                51.78619291243483,
                -120.09795255960043,
                393.94095374306517
            ],
            "opponent_elo": 0.5129283651736509,
            "sigma_persist": 79.11513670197836,
            "sigma_day": 253.53374848397524,
            "sigma_move": 1070.608641862536,
            "sigma_move_opponent": 390.1016648909508,
            "scale": 0.878801527619362,
            "noise_level": [
                -0.04001741600227468,
                -0.4800000000000002,
                -0.010000000000000009,
                -1.2499999999999998
            ]
        }
    }
}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
