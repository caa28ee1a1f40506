"""The result of one game as probabilities: before it starts, and while it is played.

**Before the game** (:func:`pregame`), an ordered logit on the two ratings, both on today's FIDE scale
(:func:`livemon.rating.scale.to_current_scale` with the game's date, done by the caller)::

    s = k · ln10/400 · (R_white − R_black + H)          White's edge; H is White's advantage in Elo
    θ = softplus(c0 + c1·(R_mean − 2300)/400 + c2·|R_white − R_black|/400)
    P(White wins) = σ(s − θ),   P(Black wins) = σ(−s − θ),   P(draw) = the rest

θ is the draw zone: it widens with the level (c1 > 0: stronger players draw more) and the draw share
falls as the gap grows (|s| pushes one side's result past the zone; c2 moves that further).

**With TrueSkill Through Time skills** (:func:`ttt_result`), the TTT/TTT-D game model itself: performances
N(μ, β²) apart by more than the loser's draw margin ε decide the game (margins per player from a TTT-D fit,
else TTT's one margin).

**During the game** (:func:`ingame`), the same ordered logit with the pre-game edge fading as the game
goes on and the engine's evaluation taking over::

    e = clip(cp, ±1000)/100                              White's view, a mate counts as ±10
    s = s0 · exp(−ply/τ) + e · (a0 + a1·ply/100 + a2·(1 − material/78)) + kc · clock edge
    θ = softplus(c0 + c1·(R_mean − 2300)/400 + d1·min(ply, 120)/100 + d2·(1 − material/78))

``material`` is the pieces' value left on the board (pawn 1, knight and bishop 3, rook 5, queen 9; 78 at
the start); the clock edge is ``(t_white − t_black)/(t_white + t_black + 60 s)`` when both clocks are known.

The parameters are fitted on real rated games by maximum likelihood (``bench/forecast.py fit``) and shipped
in ``livemon/data/forecast.json``; :data:`DEFAULT` holds the same figures so the model works without it.

>>> w, d, l = pregame(2700, 2700)
>>> round(w + d + l, 12), w > l, d > 0.4
(1.0, True, True)
>>> pregame(2750, 2450)[0] > pregame(2600, 2600)[0]
True
>>> pregame(2700, 2700)[1] > pregame(1900, 1900)[1]   # the level's draw rate
True
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ForecastParams", "DEFAULT", "RAPID", "pregame", "pregame_arrays", "ingame", "ingame_arrays", "ttt_result",
    "material", "log_loss", "score_log_loss", "lichess_expected", "fit_pregame", "fit_ingame",
]

LN10_400 = math.log(10.0) / 400.0
MATERIAL_START = 78
MATE_E = 10.0
"""A mate (or any evaluation past ±1000 cp) counts as ten pawns."""

Float = NDArray[np.float64]


@dataclass(frozen=True)
class ForecastParams:
    """The fitted parameters of the game model (see the module's text for the formulas)."""

    k: float = 1.0
    white: float = 30.0
    """White's advantage in Elo."""
    c0: float = 0.0
    c1: float = 0.5
    c2: float = 0.0
    tau: float = 40.0
    """Plies over which the pre-game edge fades by a factor e."""
    a0: float = 1.0
    a1: float = 0.5
    a2: float = 0.5
    g0: float = 0.0
    g1: float = 0.5
    d1: float = 0.0
    d2: float = 0.0
    kc: float = 0.0
    """Weight of the clock edge (0 when no fit data had clocks)."""
    fitted_on: dict[str, Any] = field(default_factory=dict, compare=False)

    def pregame_vector(self) -> Float:
        return np.array([self.k, self.white, self.c0, self.c1, self.c2])

    def ingame_vector(self) -> Float:
        return np.array([self.tau, self.a0, self.a1, self.a2, self.g0, self.g1, self.d1, self.d2, self.kc])

    def to_json(self) -> str:
        """The parameters as JSON, each rounded to six decimals (as :data:`DEFAULT` holds them)."""
        data = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}
        return json.dumps(data, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ForecastParams:
        """The parameters of a JSON object (unknown keys refused, so a stale file is said, not guessed).

        >>> ForecastParams.from_mapping({"k": 0.9}).k
        0.9
        >>> ForecastParams.from_mapping({"kk": 1})
        Traceback (most recent call last):
        ...
        ValueError: forecast parameters: unknown key 'kk'
        """
        known = {f for f in cls.__dataclass_fields__}
        for key in data:
            if key not in known:
                raise ValueError(f"forecast parameters: unknown key {key!r}")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key == "fitted_on":
                kwargs[key] = dict(value)
            elif not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
                raise ValueError(f"forecast parameters: {key} must be a finite number, got {value!r}")
            else:
                kwargs[key] = float(value)
        return cls(**kwargs)


DEFAULT = ForecastParams(
    k=1.036349, white=39.094771, c0=0.52414, c1=0.621222, c2=-0.322548, tau=320.247112, a0=0.954112, a1=-0.599659,
    a2=1.769684, g0=0.871135, g1=0.57618, d1=-1.731174, d2=3.081252, kc=1.538543,
)
"""The fitted figures of ``livemon/data/forecast.json`` (``bench/forecast.py fit`` writes both)."""

RAPID = ForecastParams(
    k=0.759067, white=37.892262, c0=0.129044, c1=0.704547, c2=-0.153103,
    fitted_on={"pregame": "398 rated rapid games: Saint Louis Rapid 2022, ch-ROU Rapid 2022 (open, women)"},
)
"""The pre-game model of rapid games (a knockout's tiebreak, :mod:`livemon.rating.standings`): the same form
fitted on the calibration set's rapid events (``bench/forecast.py fit-rapid``). The rating edge counts for less
than in classical games (k 0.76) and the draw zone is narrower at the same level."""


def _softplus(x: Float) -> Float:
    return np.logaddexp(0.0, x)


def _sigmoid(x: Float) -> Float:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _probs(s: Float, theta: Float) -> Float:
    w = _sigmoid(s - theta)
    lo = _sigmoid(-s - theta)
    d = np.clip(1.0 - w - lo, 0.0, 1.0)
    return np.stack([w, d, lo], axis=-1)


def _pre_terms(rw: Float, rb: Float, p: ForecastParams) -> tuple[Float, Float]:
    diff = rw - rb
    s = p.k * LN10_400 * (diff + p.white)
    theta = _softplus(p.c0 + p.c1 * ((rw + rb) / 2.0 - 2300.0) / 400.0 + p.c2 * np.abs(diff) / 400.0)
    return s, theta


def pregame_arrays(white: ArrayLike, black: ArrayLike, params: ForecastParams = DEFAULT) -> Float:
    """(n, 3) win/draw/loss probabilities (White's view) of games between these ratings.

    >>> pregame_arrays([2800, 2000], [2000, 2800]).round(3).tolist()[0][0] > 0.9
    True
    """
    rw = np.asarray(white, dtype=np.float64)
    rb = np.asarray(black, dtype=np.float64)
    s, theta = _pre_terms(rw, rb, params)
    return _probs(s, theta)


def pregame(white: float, black: float, params: ForecastParams = DEFAULT) -> tuple[float, float, float]:
    """(P(White wins), P(draw), P(Black wins)) from the two ratings on today's scale."""
    w, d, lo = pregame_arrays([white], [black], params)[0]
    return float(w), float(d), float(lo)


_PIECE_VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9}


def material(fen: str) -> int:
    """The pieces' value on the board of a FEN (both sides, kings not counted).

    >>> material("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    78
    >>> material("8/8/4k3/8/8/3K4/4P3/8 w - - 0 1")
    1
    """
    board = fen.split(" ", 1)[0]
    return sum(_PIECE_VALUES.get(ch.lower(), 0) for ch in board)


def _eval_pawns(cp: Float) -> Float:
    return np.clip(cp, -1000.0, 1000.0) / 100.0


def ingame_arrays(white: ArrayLike, black: ArrayLike, cp: ArrayLike, ply: ArrayLike, mat: ArrayLike,
                  clock_edge: ArrayLike | None = None, params: ForecastParams = DEFAULT) -> Float:
    """(n, 3) win/draw/loss probabilities during games: ratings, evaluation (White's cp), ply, material.

    ``clock_edge`` is ``(t_w − t_b)/(t_w + t_b + 60)`` per position, 0 where the clocks are unknown.

    >>> p = ingame_arrays([2500, 2500], [2500, 2500], [0, 300], [0, 60], [78, 40])
    >>> bool(p[1, 0] > 0.6 and abs(p.sum(axis=1) - 1).max() < 1e-12)
    True
    """
    rw = np.asarray(white, dtype=np.float64)
    rb = np.asarray(black, dtype=np.float64)
    e = _eval_pawns(np.asarray(cp, dtype=np.float64))
    t = np.asarray(ply, dtype=np.float64)
    lack = 1.0 - np.asarray(mat, dtype=np.float64) / MATERIAL_START
    clk = np.zeros_like(t) if clock_edge is None else np.asarray(clock_edge, dtype=np.float64)
    p = params
    s0, _ = _pre_terms(rw, rb, p)
    s = s0 * np.exp(-t / max(p.tau, 1e-6)) + e * (p.a0 + p.a1 * t / 100.0 + p.a2 * lack) + p.kc * clk
    theta = _softplus(p.g0 + p.g1 * ((rw + rb) / 2.0 - 2300.0) / 400.0 + p.d1 * np.minimum(t, 120.0) / 100.0
                      + p.d2 * lack)
    return _probs(s, theta)


def ingame(white: float, black: float, cp: int, ply: int, mat: int = MATERIAL_START,
           clocks: tuple[float, float] | None = None, params: ForecastParams = DEFAULT) -> tuple[float, float, float]:
    """(P(White wins), P(draw), P(Black wins)) of a game in progress.

    >>> w, d, l = ingame(2400, 2400, 3900, 80, 20)   # White mates
    >>> w > 0.99
    True
    """
    edge = 0.0 if clocks is None else (clocks[0] - clocks[1]) / (clocks[0] + clocks[1] + 60.0)
    w, d, lo = ingame_arrays([white], [black], [cp], [ply], [mat], [edge], params)[0]
    return float(w), float(d), float(lo)


def ttt_result(mu_white: float, sigma_white: float, mu_black: float, sigma_black: float, beta: float,
               margin_white: float, margin_black: float, white_advantage: float = 0.0) -> tuple[float, float, float]:
    """TTT/TTT-D's own game model: White wins iff ``p_w − p_b > ε_black``, draws iff ``−ε_w ≤ p_w − p_b ≤ ε_b``.

    ``white_advantage`` is in skill units (β ≈ 200 Elo). With TTT's single margin pass it twice.

    >>> w, d, l = ttt_result(0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.5)
    >>> round(w, 4) == round(l, 4) and round(w + d + l, 12)
    1.0
    """
    c = math.sqrt(2.0 * beta * beta + sigma_white ** 2 + sigma_black ** 2)
    diff = mu_white - mu_black + white_advantage
    win = 0.5 * math.erfc(-(diff - margin_black) / c / math.sqrt(2.0))
    loss = 0.5 * math.erfc((diff + margin_white) / c / math.sqrt(2.0))
    return win, max(0.0, 1.0 - win - loss), loss


def _outcome_index(results: ArrayLike) -> NDArray[np.int64]:
    r = np.asarray(results, dtype=np.float64)
    return np.where(r == 1.0, 0, np.where(r == 0.5, 1, 2)).astype(np.int64)


def log_loss(probs: Float, results: ArrayLike) -> float:
    """Mean negative log-likelihood (nats) of White's results (1, ½, 0) under (n, 3) probabilities.

    >>> round(log_loss(np.array([[0.5, 0.25, 0.25]]), [1.0]), 4)
    0.6931
    """
    idx = _outcome_index(results)
    p = np.clip(probs[np.arange(len(idx)), idx], 1e-12, 1.0)
    return float(-np.mean(np.log(p)))


def score_log_loss(expected: ArrayLike, results: ArrayLike) -> float:
    """Cross-entropy of expected scores against results (a draw is half a win): a model without draws
    (lichess's win%) and one with them are compared on the same footing.

    >>> round(score_log_loss([0.5], [1.0]), 4)
    0.6931
    """
    e = np.clip(np.asarray(expected, dtype=np.float64), 1e-12, 1 - 1e-12)
    r = np.asarray(results, dtype=np.float64)
    return float(-np.mean(r * np.log(e) + (1 - r) * np.log(1 - e)))


def lichess_expected(cp: ArrayLike) -> Float:
    """lichess's win% as a fraction (White's view), cp capped at ±1000 (:mod:`livemon.rating.accuracy`'s curve).

    >>> round(float(lichess_expected([0])[0]), 3), float(lichess_expected([-100])[0]).__round__(4)
    (0.5, 0.409)
    """
    c = np.clip(np.asarray(cp, dtype=np.float64), -1000.0, 1000.0)
    return 1.0 / (1.0 + np.exp(-0.00368208 * c))


def _nll(probs: Float, idx: NDArray[np.int64]) -> float:
    p = np.clip(probs[np.arange(len(idx)), idx], 1e-12, 1.0)
    return float(-np.sum(np.log(p)))


def fit_pregame(white: Sequence[float], black: Sequence[float], results: Sequence[float],
                fixed_c2: float | None = None) -> ForecastParams:
    """Maximum-likelihood pre-game parameters on rated games (ratings on today's scale, White's results)."""
    from scipy.optimize import minimize

    rw, rb = np.asarray(white, float), np.asarray(black, float)
    idx = _outcome_index(results)

    def nll(x: Float) -> float:
        c2 = x[4] if fixed_c2 is None else fixed_c2
        p = ForecastParams(k=x[0], white=x[1], c0=x[2], c1=x[3], c2=c2)
        return _nll(pregame_arrays(rw, rb, p), idx)

    res = minimize(nll, np.array([1.0, 30.0, 0.5, 0.5, 0.0]), method="Nelder-Mead",
                   options={"maxiter": 4000, "xatol": 1e-5, "fatol": 1e-7})
    x = res.x
    return ForecastParams(k=float(x[0]), white=float(x[1]), c0=float(x[2]), c1=float(x[3]),
                          c2=float(x[4] if fixed_c2 is None else fixed_c2))


def fit_ingame(pre: ForecastParams, white: Sequence[float], black: Sequence[float], cp: Sequence[float],
               ply: Sequence[float], mat: Sequence[float], results: Sequence[float], weights: Sequence[float],
               clock_edge: Sequence[float] | None = None) -> ForecastParams:
    """Maximum-likelihood in-game parameters (the pre-game ones kept), positions weighted (each game once)."""
    from scipy.optimize import minimize

    rw, rb = np.asarray(white, float), np.asarray(black, float)
    idx = _outcome_index(results)
    wt = np.asarray(weights, float)
    clk = None if clock_edge is None else np.asarray(clock_edge, float)

    def make(x: Float) -> ForecastParams:
        return ForecastParams(k=pre.k, white=pre.white, c0=pre.c0, c1=pre.c1, c2=pre.c2, tau=abs(x[0]) + 1e-3,
                              a0=x[1], a1=x[2], a2=x[3], g0=x[4], g1=x[5], d1=x[6], d2=x[7],
                              kc=x[8] if clk is not None else 0.0)

    def nll(x: Float) -> float:
        probs = ingame_arrays(rw, rb, cp, ply, mat, clk, make(x))
        p = np.clip(probs[np.arange(len(idx)), idx], 1e-12, 1.0)
        return float(-np.sum(wt * np.log(p)))

    x0 = np.array([40.0, 1.0, 0.3, 0.5, pre.c0, pre.c1, 0.0, 0.0, 0.0])
    res = minimize(nll, x0, method="L-BFGS-B")
    return make(res.x)
