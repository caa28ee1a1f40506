"""The estimates from move quality: many per-move features, fitted Elo → features and inverted.

Each counted move of a player gives a vector of quality features (:func:`move_features`:
capped centipawn loss, win-probability loss, lichess-style move accuracy, top-1 match,
rank of the played move, E(c) log-distance and likelihood, blunder rates, Regan-style
scaled loss, position difficulty, |eval|). A fit on real rated games
(:func:`fit_quality_model`) regresses each feature's per-game mean on Elo
(``x̄ = α + β·Elo + e``) and inverts the regression by generalised least squares:

    Elo^ = argmin_r (x̄ − α − β r)ᵀ Σ⁻¹ (x̄ − α − β r) = βᵀΣ⁻¹(x̄ − α) / βᵀΣ⁻¹β,

Σ the residual covariance of one game's features. Because the regression goes from
Elo to features (not the other way), the estimate is unbiased at every rating where
the lines hold: a club player is not pulled up to the middle, nor a grandmaster down.
It is linear in the features, so it is the **mean over the player's moves of a
per-move score** ``u = c₀ + W·f``: a player's sufficient statistics are the sums of
their features and their number of moves and games, updated in O(1) per move
(:class:`QualityTally`, in fixed point, so that live and batch agree bit for bit).

The 95% interval comes from the noise measured on the fit's games, in three parts
(:meth:`QualityModel.variance`): a persistent part per player-event σ_p (a player's
level in an event against their rating: it never averages away), a day-to-day part per
game σ_d (averages over k games) and the sampling noise of moves σ_m (averages over n
moves): Var = σ_p² + σ_d²/k + σ_m²/n, each part scaled by the player's level (a club player's games
are noisier than a grandmaster's: :attr:`QualityModel.noise_level`). The interval holds every rating
whose players' moves would read within 1.96 of their own noise of the estimate
(:meth:`QualityModel.interval`), so it reaches further toward the noisier levels.

A game has two sides, and both say something of each player: a quiet game makes both sides' moves
look better than their ratings, a wild one worse, and a strong opponent's hard positions make a
player's moves look weaker. So where the opponent is rated, a game is read **jointly**
(:class:`JointWeights`): each side's per-game feature means are regressed on both players' ratings
(x̄_A = α + β·r_A + δ·r_B, and the same for B), the 2 × 20 features' residual covariance holds what
the two sides share, and the GLS inversion for r_A given r_B reads both sides' features. It stays an
Elo → features inversion (nothing is regressed on the error), unbiased where the lines hold, and
linear in the two sides' feature sums.

Beside it, labelled: the **field estimate** (:func:`field_estimate`, empirical Bayes: the moves and
the results with the other players' ratings of the event as the prior, never the player's own; the
headline a monitor shows wherever the event has two other rated players),
the **results performance** (:func:`results_performance`, FIDE's mean opponent
rating + dp(p)), and their combination (:func:`combine`); with each, how many more
games until the interval is ±150 (:meth:`QualityModel.games_to`) and whether two
players can be told apart yet (:func:`told_apart`).

>>> from livemon.rating.quality_params import model_for
>>> model = model_for("Stockfish 15.1 depth=12 multipv=4")
>>> tally = QualityTally(model)
>>> good = [Decision((0.3, 0.2, 0.1, -0.2), 0) for _ in range(40)]
>>> bad = [Decision((0.3, 0.2, 0.1, -2.0), 3) for _ in range(40)]
>>> for i, d in enumerate(good):
...     _ = tally.add("g1", d, 30 + 2 * i)
>>> good_stats = tally.stats()
>>> bad_stats = QualityTally.of(model, [("g1", d, 30 + 2 * i) for i, d in enumerate(bad)]).stats()
>>> model.score(good_stats) > model.score(bad_stats), good_stats.positions, good_stats.games
(True, 40, 1)
>>> print(model.estimate(bad_stats).reason)  # one weak game: the interval is still wider than the ratings fitted
40 positions: the 95% interval (±...) would be wider than the rating range fitted on (...)
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from livemon.rating.agent import K as _K
from livemon.rating.agent import Decision
from livemon.rating import fide
from livemon.rating.limits import MIN_POSITIONS as MIN_POSITIONS  # "as": importable from here too
from livemon.rating.screening import screening_exclusion

_Z95 = 1.959963984540054
TARGET_HALF_WIDTH = 150.0
"""The ± of an interval a commentator can quote: :meth:`QualityModel.games_to` counts the games to reach it."""
FIXED = 2.0**32
"""Fixed point of the feature sums (units of 2⁻³²): integer sums are exact in any order."""
RESULTS_MIN_GAMES = 5
"""A results performance has an interval from this many games (its noise was measured on such events)."""

FEATURES = (
    "loss_cap1", "loss_cap3", "win_loss", "accuracy", "top1", "rank", "outside_top4", "log_distance",
    "ec_loglik", "inaccuracy", "mistake", "blunder", "loss_ge_half", "loss_ge_1", "loss_ge_2",
    "scaled_loss", "good_moves", "gap", "abs_eval", "expected_loss",
)
"""The per-move features, in the order of :func:`move_features`."""

_EC_C = 0.7  # the c at which the E(c) likelihood feature is read (a ~2000 player on the default profile)


def win_percent(pawns: float) -> float:
    """Lichess's win percentage of an evaluation (mover's view, pawns), 0-100.

    >>> win_percent(0.0), round(win_percent(3.0), 1)
    (50.0, 75.1)
    """
    return 50.0 + 50.0 * (2.0 / (1.0 + math.exp(-0.368208 * pawns)) - 1.0)


def _signed_log(x: float) -> float:
    return math.copysign(math.log1p(abs(x)), x)


def move_features(d: Decision) -> tuple[float, ...]:
    """The quality features of one decision (:data:`FEATURES`), from its candidate values (pawns, mover's view).

    >>> f = dict(zip(FEATURES, move_features(Decision((0.5, 0.2, -1.5), 2))))
    >>> f["loss_cap1"], f["loss_cap3"], f["top1"], f["rank"], f["mistake"], round(f["accuracy"], 1)
    (1.0, 2.0, 0.0, 2.0, 0.0, 43.8)
    """
    values = d.values
    best = max(values)
    vp = values[d.played]
    loss = max(best - vp, 0.0)
    wl = max(win_percent(best) - win_percent(vp), 0.0)
    acc = min(max(103.1668 * math.exp(-0.04354 * wl) - 3.1669, 0.0), 100.0)
    rank = sum(1 for v in values if v > vp)
    a = [math.log((best - v + _K) / _K) for v in values]
    e = [-x * _EC_C for x in a]
    mx = max(e)
    lse = mx + math.log(sum(math.exp(x - mx) for x in e))
    p = [math.exp(x - lse) for x in e]
    others = sorted((v for i, v in enumerate(values) if v != best or i != values.index(best)), reverse=True)
    gap = min(best - others[0], 2.0) if others else 2.0
    return (
        min(loss, 1.0), min(loss, 3.0), wl, acc, 1.0 if loss == 0.0 else 0.0, float(min(rank, 4)),
        1.0 if d.played >= 4 else 0.0, a[d.played], e[d.played] - lse,
        1.0 if wl >= 10.0 else 0.0, 1.0 if wl >= 20.0 else 0.0, 1.0 if wl >= 30.0 else 0.0,
        1.0 if loss >= 0.5 else 0.0, 1.0 if loss >= 1.0 else 0.0, 1.0 if loss >= 2.0 else 0.0,
        min(abs(_signed_log(best) - _signed_log(vp)), 3.0),
        float(sum(1 for v in values if v >= best - 0.3) - 1), gap, min(abs(best), 3.0),
        sum(pi * min(best - v, 3.0) for pi, v in zip(p, values)),
    )


def fixed_features(d: Decision) -> tuple[int, ...]:
    """:func:`move_features` in fixed point (:data:`FIXED`): what a tally sums."""
    return tuple(int(round(x * FIXED)) for x in move_features(d))


Opponent = tuple[tuple[int, ...], int, float]
"""An opponent in one game: their feature sums (fixed point) and counted moves there, and their rating."""


@dataclass(frozen=True)
class QualityStats:
    """A player's sufficient statistics: feature sums (fixed point), moves counted, games they come from.

    ``per_game``: each game's feature sums and moves, in a canonical order (sorted): what the games'
    weights of :meth:`QualityModel.score` need; empty: the moves are weighed alike.
    ``opponents``: beside each of ``per_game``, the opponent's feature sums and moves in that game and
    the opponent's rating (None: unrated, or no counted move yet); empty: none known.
    """

    sums: tuple[int, ...]
    positions: int
    games: int
    per_game: tuple[tuple[tuple[int, ...], int], ...] = ()
    opponents: tuple[Opponent | None, ...] = ()

    def means(self) -> np.ndarray:
        """The mean of each feature over the counted moves."""
        return np.array(self.sums, dtype=float) / (FIXED * max(self.positions, 1))


class QualityTally:
    """One player's counted moves summed as they come: O(features) per move added or removed, exact (integers)."""

    def __init__(self, model: QualityModel) -> None:
        self.model = model
        self._sums = [0] * len(FEATURES)
        self._n = 0
        self._games: dict[Hashable, int] = {}
        self._game_sums: dict[Hashable, list[int]] = {}

    @classmethod
    def of(cls, model: QualityModel, moves: Iterable[tuple[Hashable, Decision, int]]) -> QualityTally:
        """A tally of ``(game, decision, ply)`` moves."""
        t = cls(model)
        for game, d, ply in moves:
            t.add(game, d, ply)
        return t

    def add(self, game: Hashable, decision: Decision, ply: int) -> bool:
        """A move entered the player's record; True when the model counts it."""
        if not self.model.counts(decision, ply):
            return False
        own = self._game_sums.setdefault(game, [0] * len(FEATURES))
        for i, x in enumerate(fixed_features(decision)):
            self._sums[i] += x
            own[i] += x
        self._n += 1
        self._games[game] = self._games.get(game, 0) + 1
        return True

    def remove(self, game: Hashable, decision: Decision, ply: int) -> None:
        """A move left the record (a corrected game); nothing when it was not counted."""
        if not self.model.counts(decision, ply):
            return
        own = self._game_sums[game]
        for i, x in enumerate(fixed_features(decision)):
            self._sums[i] -= x
            own[i] -= x
        self._n -= 1
        left = self._games[game] - 1
        if left:
            self._games[game] = left
        else:
            del self._games[game]
            del self._game_sums[game]

    def game(self, game: Hashable) -> tuple[tuple[int, ...], int] | None:
        """The feature sums and counted moves of one game (None: no counted move in it)."""
        n = self._games.get(game)
        return None if n is None else (tuple(self._game_sums[game]), n)

    def stats(self, opponents: Callable[[Hashable], Opponent | None] | None = None) -> QualityStats:
        """The sufficient statistics now; ``opponents``: each game's opponent (:class:`QualityStats`), if known."""
        rows = sorted((((tuple(self._game_sums[g]), n), None if opponents is None else opponents(g))
                       for g, n in self._games.items()), key=lambda r: (r[0], r[1] or ()))
        per_game = tuple(own for own, _ in rows)
        opp = tuple(o for _, o in rows) if opponents is not None and any(o is not None for _, o in rows) else ()
        return QualityStats(tuple(self._sums), self._n, len(self._games), per_game, opp)


@dataclass(frozen=True)
class QualityEstimate:
    """An Elo estimate with its 95% interval (or the reason there is none) and how far it is from ±150.

    ``sd`` is the estimate's noise (at ``level``): what a combination with other evidence weighs; ``cr95`` is
    ±1.96·sd around it, except for the moves estimate, whose interval holds every rating whose players' moves read
    within 1.96 of their own noise (:meth:`QualityModel.interval`); ``games_to_150`` the further games
    (at the player's moves per game) until the interval is ±150, 0 when it is already,
    None when more games will not get there (``note`` says why); ``kind`` names the
    estimate (``moves``, ``field``, ``results``, ``moves+results``). ``point``: the measured point also where
    ``elo`` is not shown (its interval too wide): what a combination with other evidence weighs, never a screen;
    ``level``: the level its noise was read at (:meth:`QualityModel.level`).

    >>> QualityEstimate(None, None, None, 3, 1, "moves", reason="3 positions: at least 5 needed").to_dict()["reason"]
    '3 positions: at least 5 needed'
    """

    elo: float | None
    cr95: tuple[float, float] | None
    sd: float | None
    positions: int
    games: int
    kind: str
    games_to_150: int | None = None
    reason: str | None = None
    note: str | None = None
    extrapolated: bool = False
    label: str = ""
    point: float | None = None
    level: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``estimate`` / ``field_estimate`` / ``results_estimate`` / ``combined_estimate``."""
        d: dict[str, Any] = {
            "elo": None if self.elo is None else round(self.elo, 1),
            "cr95": None if self.cr95 is None else [round(self.cr95[0], 1), round(self.cr95[1], 1)],
            "sd": None if self.sd is None else round(self.sd, 1),
            "positions": self.positions, "games": self.games, "kind": self.kind,
            "games_to_150": self.games_to_150,
        }
        for key in ("reason", "note"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.extrapolated:
            d["extrapolated"] = True
        if self.label:
            d["label"] = self.label
        return d


@dataclass(frozen=True)
class JointWeights:
    """A game read from both sides (:attr:`QualityModel.joint`): the GLS inversion for the player's rating of both
    sides' feature means, each side's lines on both ratings, the opponent's rating known.

    Score = ``intercept`` + ``own``·x̄ + ``opponent``·x̄_opp + ``opponent_elo``·r_opp (x̄ the feature means of the
    game's counted moves); its noise around the rating: σ_p (``sigma_persist``, a player's level in the event)
    and per game σ_d² + σ_m²/n + σ_m,opp²/n_opp (the day, the player's moves, the opponent's moves), measured
    out of fold like the single side's and scaled by level by ``noise_level`` (as :attr:`QualityModel.noise_level`,
    fitted on this reading's own out-of-fold errors, its games' slope then set by coverage, :func:`fit_quality_model`;
    None: the single side's). ``scale``: the factor on one game's parts (σ_d, σ_m, σ_m,opp) with which the
    reading's own out-of-fold single games' 95% intervals, among those narrow enough to be shown, cover 95% of the
    ratings: one game's error is not normal (most games read closer than their variance says, a few far off), so
    1.96 of its sd covers more than it says. The mean of k games' errors is nearer a normal, its departure 1/k of
    one game's (as its excess kurtosis), so k games' parts carry the factor √(1 + (scale² − 1)/k) (:meth:`factor`):
    the narrowing fitted on single games, fading over an event.

    >>> j = JointWeights(2000.0, (100.0,) + (0.0,) * (len(FEATURES) - 1), (-50.0,) + (0.0,) * (len(FEATURES) - 1),
    ...                  0.1, 80.0, 300.0, 1400.0, 600.0)
    >>> one = lambda x, n: ((int(x * n * FIXED),) + (0,) * (len(FEATURES) - 1), n)
    >>> j.score(*one(1.0, 30), (*one(1.0, 30), 2000.0))  # 2000 + 100 - 50 + 200
    2250.0
    >>> round(math.sqrt(j.game_variance(30, 30)))
    409
    >>> narrowed = JointWeights.from_dict({**j.to_dict(), "scale": 0.9})
    >>> round(math.sqrt(narrowed.game_variance(30, 30))), round(narrowed.factor(1), 2), round(narrowed.factor(9), 3)
    (368, 0.9, 0.989)
    """

    intercept: float
    own: tuple[float, ...]
    opponent: tuple[float, ...]
    opponent_elo: float
    sigma_persist: float
    sigma_day: float
    sigma_move: float
    sigma_move_opponent: float
    scale: float = 1.0
    noise_level: tuple[float, float, float, float] | None = None

    def score(self, sums: Sequence[int], n: int, opponent: Opponent) -> float:
        """One game's score (Elo) from the player's ``sums`` of ``n`` counted moves and the ``opponent``'s."""
        theirs, m, elo = opponent
        return (self.intercept + float(sum(map(operator.mul, self.own, sums))) / (FIXED * n)
                + float(sum(map(operator.mul, self.opponent, theirs))) / (FIXED * m) + self.opponent_elo * elo)

    def factor(self, games: int = 1) -> float:
        """The factor on the games' parts of ``games`` games read jointly: √(1 + (scale² − 1)/k) (:attr:`scale`)."""
        return math.sqrt(max(1.0 + (self.scale**2 - 1.0) / max(games, 1), 0.0))

    def game_variance(self, n: int, m: int, games: int = 1) -> float:
        """A game's noise (Elo², before the level's scale): the day, ``n`` of the player's moves, ``m`` of theirs;
        ``games``: of a player's so many games (:meth:`factor`)."""
        return self.factor(games) ** 2 * (self.sigma_day**2 + self.sigma_move**2 / max(n, 1)
                                          + self.sigma_move_opponent**2 / max(m, 1))

    def to_dict(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "own": list(self.own), "opponent": list(self.opponent),
                "opponent_elo": self.opponent_elo, "sigma_persist": self.sigma_persist, "sigma_day": self.sigma_day,
                "sigma_move": self.sigma_move, "sigma_move_opponent": self.sigma_move_opponent, "scale": self.scale,
                "noise_level": None if self.noise_level is None else list(self.noise_level)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JointWeights:
        return cls(float(d["intercept"]), tuple(float(w) for w in d["own"]), tuple(float(w) for w in d["opponent"]),
                   float(d["opponent_elo"]), float(d["sigma_persist"]), float(d["sigma_day"]), float(d["sigma_move"]),
                   float(d["sigma_move_opponent"]), float(d.get("scale", 1.0)),
                   None if d.get("noise_level") is None
                   else tuple(float(x) for x in d["noise_level"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class QualityModel:
    """A fitted quality model of one engine profile: per-move score weights and the measured noise.

    ``weights`` and ``intercept`` give the per-move score u = intercept + weights·f (Elo);
    ``sigma_persist``, ``sigma_day``, ``sigma_move`` the noise parts (Elo); ``elo_min``-``elo_max``
    the ratings fitted on; ``book_moves``/``eval_bound`` the positions it counts (as screening's).
    """

    profile: str
    intercept: float
    weights: tuple[float, ...]
    sigma_persist: float
    sigma_day: float
    sigma_move: float
    elo_min: float
    elo_max: float
    book_moves: int = 8
    eval_bound: float = 3.0
    features: tuple[str, ...] = FEATURES
    moves_per_game: float = 30.0
    pool: str = "FIDE classical"
    fitted_on: str = ""
    results: dict[str, float] = field(default_factory=dict)
    """Noise of the results performance around the rating (``a`` + ``b``/k, Elo²) and its error
    correlation with the moves estimate (``rho``): what :func:`combine` weighs with."""
    field_rho: dict[str, float] = field(default_factory=dict)
    """The correlation of the field prior's error with the evidence's, per kind of evidence (``moves``,
    ``moves+results``: :func:`fit_field_rho`): what :func:`field_estimate` weighs with."""
    field_scale: dict[str, float] = field(default_factory=dict)
    """The factor (≥ 1) on the field estimate's sd per kind of evidence: the root mean square of its errors
    in sd on the fit's players (:func:`fit_field_rho`), so that its intervals are as wide as its errors."""
    joint: JointWeights | None = None
    """How a game against a rated opponent is read, from both sides' moves (:class:`JointWeights`); None: from
    the player's moves alone."""
    ratings: tuple[float, float] = (0.0, 0.0)
    """Mean and sd of the ratings fitted on: where :meth:`level` expects a player to be before their moves say."""
    noise_level: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """How the noise grows or shrinks with the player's level, x = (Elo − 2000)/1000: the sd of a game's parts
    (σ_d, σ_m) is scaled by exp(b + a·x), the persistent part's (σ_p) by exp(b_p + a_p·x), (b, a, b_p, a_p)
    fitted by maximum likelihood on out-of-fold errors (:meth:`noise_scale`). A club player's games are
    noisier than a grandmaster's, and their rating a looser guide to their level in an event: one pooled
    noise would be too narrow for the one and too wide for the other."""
    level_bias: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """The estimate's mean error by level, c₀ + c₁·x + c₂·x² (Elo, x = (level − 2000)/1000), fitted on the out-of-fold
    errors of the fit's player-events (:func:`fit_quality_model`, ``level_bias``) and taken off the point
    (:meth:`score`): where the features' lines on Elo are not straight, the inversion reads some levels high."""

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES) or self.features != FEATURES:
            raise ValueError("QualityModel: the weights do not match this livemon's features")

    def noise_scale(self, elo: float | None, persistent: bool = False, joint: bool = False) -> float:
        """The factor on the sd of a game's noise (or of the ``persistent`` part) at a level of ``elo``
        (clamped to the ratings fitted on); 1 without one. ``joint``: of games read from both sides
        (:attr:`JointWeights.noise_level` where the joint reading has its own).

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 200.0, 1000.0, 1400, 2800,
        ...                  noise_level=(0.0, -0.5, 0.0, -1.0))
        >>> round(m.noise_scale(1500), 2), m.noise_scale(2000), round(m.noise_scale(2600), 2), m.noise_scale(None)
        (1.28, 1.0, 0.74, 1.0)
        >>> round(m.noise_scale(1500, persistent=True), 2)
        1.65
        """
        if elo is None:
            return 1.0
        level = self.joint.noise_level if joint and self.joint is not None else None
        b, a, bp, ap = self.noise_level if level is None else level
        r = (min(max(elo, self.elo_min), self.elo_max) - 2000.0) / 1000.0
        return math.exp(bp + ap * r) if persistent else math.exp(b + a * r)

    def level(self, stats: QualityStats, elo: float) -> float:
        """The level whose noise an estimate ``elo`` of these moves has (:meth:`noise_scale`): the expected rating
        given the estimate, E[r | elo] = m + ρ·(elo − m), ρ = s²/(s² + Var) with the ratings' mean m and sd s.

        The point estimate stays unshrunk; only the noise it is read at is. After one game (ρ ≈ 0.3) a lucky
        game of a club player does not earn a grandmaster's narrow interval; over an event ρ nears 1.

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 400.0, 1600.0, 1400, 2800, ratings=(2000.0, 300.0))
        >>> one, nine = QualityStats((0,) * len(FEATURES), 25, 1), QualityStats((0,) * len(FEATURES), 225, 9)
        >>> round(m.level(one, 2600.0)), round(m.level(nine, 2600.0))
        (2149, 2418)
        """
        return self._level_of(stats, self._game_weights(stats), elo)

    def counts(self, decision: Decision, ply: int) -> bool:
        """Whether a (non-forced) move enters the estimate: the positions the model was fitted on."""
        return screening_exclusion(decision, ply, self.book_moves, self.eval_bound) is None

    def _game_mean(self, sums: Sequence[int], n: int) -> float:
        return self.intercept + float(sum(map(operator.mul, self.weights, sums))) / (FIXED * n)

    def _game_weights(self, stats: QualityStats) -> list[tuple[float, float, bool]] | None:
        """(weight, score, read jointly) of each game: weights 1/(σ_d² + σ_m²/n), the inverse of a game's noise;
        against a rated opponent with counted moves, the joint score and its noise (:class:`JointWeights`)."""
        if not stats.per_game or (self.sigma_day <= 0 and self.sigma_move <= 0):
            return None
        out = []
        j = self.joint
        k = sum(1 for _, n in stats.per_game if n > 0)
        for i, (sums, n) in enumerate(stats.per_game):
            if n <= 0:
                continue
            opp = stats.opponents[i] if stats.opponents else None
            if j is not None and opp is not None and opp[1] > 0:
                out.append((1.0 / j.game_variance(n, opp[1], k), j.score(sums, n, opp), True))
            else:
                out.append((1.0 / (self.sigma_day**2 + self.sigma_move**2 / n), self._game_mean(sums, n), False))
        return out or None

    def _persist(self, weighted: list[tuple[float, float, bool]] | None) -> float:
        """σ_p of these games: the joint reading's when every game is read jointly."""
        if self.joint is not None and weighted and all(joint for _, _, joint in weighted):
            return self.joint.sigma_persist
        return self.sigma_persist

    def _score_of(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None) -> float:
        if weighted is not None:
            total = sum(w for w, _, _ in weighted)
            return sum(w * m for w, m, _ in weighted) / total
        n = FIXED * max(stats.positions, 1)
        return self.intercept + sum(w * (s / n) for w, s in zip(self.weights, stats.sums))

    def _variance_of(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None,
                     elo: float | None) -> float:
        return self._variance_at(stats, weighted)(elo)

    def _variance_at(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None
                     ) -> Callable[[float | None], float]:
        """:meth:`_variance_of` of these games as a function of the level: σ_p² and the noise scaled to the level
        (:meth:`noise_scale`, the same arithmetic), what does not depend on the level (the games' total weight, the
        joint reading's parameters) made once, as an interval asks it at ~80 levels."""
        if weighted is None:
            return lambda elo: self.variance(stats.positions, stats.games, elo)
        joint = self.joint is not None and all(j for _, _, j in weighted)
        persist, total = self._persist(weighted), sum(w for w, _, _ in weighted)
        level = self.joint.noise_level if joint and self.joint is not None else None
        b, a, bp, ap = self.noise_level if level is None else level  # as :meth:`noise_scale` reads them
        lo, hi = self.elo_min, self.elo_max

        def variance(elo: float | None) -> float:
            if elo is None:  # :meth:`noise_scale`'s 1 without a level
                return persist ** 2 + 1.0 / total
            r = (min(max(elo, lo), hi) - 2000.0) / 1000.0
            return (persist * math.exp(bp + ap * r)) ** 2 + math.exp(b + a * r) ** 2 / total

        return variance

    def _level_of(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None, elo: float) -> float:
        mean, sd = self.ratings
        if sd <= 0:
            return elo
        rho = sd**2 / (sd**2 + self._variance_of(stats, weighted, None))
        return mean + rho * (elo - mean)

    def interval(self, stats: QualityStats, elo: float | None = None) -> tuple[float, float]:
        """The 95% interval of the estimate ``elo`` of these moves (default: :meth:`score`): every rating r whose
        players' moves read within ±1.96·sd(r) of it, sd(r) the noise at a level of r (:meth:`variance_of`).

        The noise by level is measured against the players' ratings, so this set covers 95% of the players of every
        rating (the test "could a player rated r read this?" inverted), not only on average over the levels: an end
        reaches as far as the noise at that end says. Below the pool's middle, where the noise is wider, it reaches
        further down than up; a lucky game of a club player still reaches down to the club player.

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 400.0, 1600.0, 1400, 2800,
        ...                  noise_level=(0.0, -0.5, 0.0, -0.5))
        >>> one = QualityStats((0,) * len(FEATURES), 25, 1)
        >>> lo, hi = m.interval(one, 2000.0)
        >>> round(2000.0 - lo), round(hi - 2000.0)  # further down than up: the noise is wider below
        (1381, 715)
        >>> sd = lambda r: math.sqrt(m.variance_of(one, r))
        >>> abs(2000.0 - lo - _Z95 * sd(lo)) < 1e-6, abs(hi - 2000.0 - _Z95 * sd(hi)) < 1e-6  # each end at its own noise
        (True, True)
        """
        weighted = self._game_weights(stats)
        return self._interval_of(stats, weighted, self._score_of(stats, weighted) if elo is None else elo)

    def _interval_of(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None,
                     elo: float) -> tuple[float, float]:
        variance = self._variance_at(stats, weighted)

        def sd(r: float) -> float:
            return math.sqrt(variance(r))

        # the noise is constant beyond the ratings fitted on and largest at one of their ends: past that far, every
        # rating's players read closer than this; each end by bisection on |elo − r| − 1.96·sd(r)
        reach = _Z95 * max(sd(self.elo_min), sd(self.elo_max)) + 1.0
        ends = []
        for sign in (-1.0, 1.0):
            near, far = 0.0, reach  # distances from elo: inside at near, outside at far
            for _ in range(40):
                mid = (near + far) / 2.0
                near, far = (mid, far) if mid <= _Z95 * sd(elo + sign * mid) else (near, mid)
            ends.append(elo + sign * (near + far) / 2.0)
        return ends[0], ends[1]

    def score(self, stats: QualityStats) -> float:
        """The point estimate (Elo): the games' mean per-move scores weighed by the inverse of each game's
        noise, σ_d² + σ_m²/n (a game of few counted moves says less, but no game counts for more than its
        day); without the games' sums, the mean per-move score of the counted moves.

        >>> m = QualityModel("p", 2000.0, (1000.0,) + (0.0,) * (len(FEATURES) - 1), 100.0, 400.0, 1700.0, 1250, 2850)
        >>> one = lambda x, n: ((int(x * n * FIXED),) + (0,) * (len(FEATURES) - 1), n)  # n moves scoring 2000 + 1000x
        >>> games = QualityStats(tuple(a + b for a, b in zip(one(0.5, 40)[0], one(-0.5, 10)[0])), 50, 2,
        ...                      tuple(sorted([one(0.5, 40), one(-0.5, 10)])))
        >>> round(m.score(games)), round(m.score(QualityStats(games.sums, 50, 2)))  # by game's noise; by move
        (2159, 2300)
        >>> round(math.sqrt(m.variance_of(games))), round(math.sqrt(m.variance(50, 2)))
        (404, 384)
        """
        weighted = self._game_weights(stats)
        return self._debiased(stats, weighted, self._score_of(stats, weighted))

    def bias_at(self, level: float) -> float:
        """The estimate's mean error at ``level`` (:attr:`level_bias`, clamped to the ratings fitted on).

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 200.0, 1000.0, 1400, 2800,
        ...                  level_bias=(30.0, 0.0, -100.0))
        >>> m.bias_at(2000.0), m.bias_at(2500.0), m.bias_at(3500.0) == m.bias_at(2800.0)
        (30.0, 5.0, True)
        """
        c0, c1, c2 = self.level_bias
        x = (min(max(level, self.elo_min), self.elo_max) - 2000.0) / 1000.0
        return c0 + c1 * x + c2 * x * x

    def _debiased(self, stats: QualityStats, weighted: list[tuple[float, float, bool]] | None, elo: float) -> float:
        if self.level_bias == (0.0, 0.0, 0.0):
            return elo
        return elo - self.bias_at(self._level_of(stats, weighted, elo))

    def variance_of(self, stats: QualityStats, elo: float | None = None) -> float:
        """Var of :meth:`score` around the rating (Elo²): σ_p² + 1/Σ of the games' weights (or :meth:`variance`),
        at the level of ``elo`` (:meth:`noise_scale`; None: pooled over levels)."""
        return self._variance_of(stats, self._game_weights(stats), elo)

    def variance(self, positions: int, games: int, elo: float | None = None, joint: bool = False) -> float:
        """Var of the estimate around the rating for ``positions`` moves over ``games`` games (Elo²),
        at the level of ``elo`` (:meth:`noise_scale`; None: pooled over levels); ``joint``: every game read
        jointly, against a rated opponent of as many moves (:class:`JointWeights`).

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 200.0, 1000.0, 1400, 2800)
        >>> round(math.sqrt(m.variance(30, 1))), round(math.sqrt(m.variance(270, 9)))
        (289, 135)
        """
        k, n = max(games, 1), max(positions, 1)
        j = self.joint if joint else None
        persist = self.sigma_persist if j is None else j.sigma_persist
        per_games = (self.sigma_day**2 / k + self.sigma_move**2 / n if j is None
                     else j.factor(k) ** 2 * (j.sigma_day**2 / k + (j.sigma_move**2 + j.sigma_move_opponent**2) / n))
        return (persist * self.noise_scale(elo, True, joint)) ** 2 + per_games * self.noise_scale(elo, False, joint) ** 2

    def games_to(self, positions: int, games: int, half_width: float = TARGET_HALF_WIDTH, elo: float | None = None,
                 shown: Callable[[float, int], float] | None = None) -> int | None:
        """Further games (at the player's moves per game) until the 95% interval is ±``half_width``.

        0: it is already; None: never (the persistent spread alone is wider, or after 500 games).
        ``elo``: the level whose noise it is (:meth:`noise_scale`); ``shown``: the variance of the interval
        shown from the moves' variance after so many further games, when it is not the moves' own
        (:func:`field_estimate`'s, with the results and the field). Further games are read as
        against rated opponents (:attr:`joint`), as a round's games usually are.

        >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 50.0, 200.0, 1000.0, 1400, 2800)
        >>> m.games_to(30, 1), m.games_to(3000, 100)
        (21, 0)
        >>> QualityModel("p", 0.0, (0.0,) * len(FEATURES), 80.0, 200.0, 1000.0, 1400, 2800).games_to(30, 1) is None
        True
        """
        per_game = positions / games if games and positions else self.moves_per_game
        target = (half_width / _Z95) ** 2
        j = self.joint
        persist = (self.sigma_persist if j is None else j.sigma_persist) * self.noise_scale(elo, True, j is not None)
        if shown is None and persist**2 >= target:
            return None
        k2 = self.noise_scale(elo, False, j is not None) ** 2
        day, move = ((self.sigma_day**2, self.sigma_move**2) if j is None
                     else (j.sigma_day**2, j.sigma_move**2 + j.sigma_move_opponent**2))

        def there(extra: int) -> bool:  # the variance falls with every further game (as :meth:`variance`)
            f2 = 1.0 if j is None else j.factor(games + extra) ** 2
            v = persist**2 + k2 * f2 * (day / (games + extra) + move / max(int(round(positions + extra * per_game)), 1))
            return (v if shown is None else shown(v, extra)) <= target

        if not there(500):
            return None
        lo, hi = -1, 500  # not there at lo (or lo = -1), there at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if there(mid):
                hi = mid
            else:
                lo = mid
        return hi

    @property
    def label(self) -> str:
        """How the estimate is labelled: the rating pool and the fit's extent."""
        return f"{self.pool}, moves, Elo {self.elo_min:.0f}-{self.elo_max:.0f}"

    def estimate(self, stats: QualityStats) -> QualityEstimate:
        """The moves-only estimate with its interval, or the reason there is none.

        No interval wider than the rating range fitted on is shown: the reason says how wide it is.
        """
        n, k = stats.positions, max(stats.games, 1)
        if n < MIN_POSITIONS:
            return QualityEstimate(None, None, None, n, stats.games, "moves",
                                   reason=f"{n} positions: at least {MIN_POSITIONS} needed", label=self.label)
        weighted = self._game_weights(stats)  # once: the point, the level and the interval all read them
        elo = self._debiased(stats, weighted, self._score_of(stats, weighted))
        level = self._level_of(stats, weighted, elo)
        sd = math.sqrt(self._variance_of(stats, weighted, level))
        lo, hi = self._interval_of(stats, weighted, elo)
        to150 = self.games_to(n, k, elo=level)
        note = None if to150 is not None else (
            f"moves alone cannot narrow it below ±{_Z95 * self.sigma_persist * self.noise_scale(level, True):.0f}: a player's "
            "level in one event differs from their rating by that much")
        if hi - lo > self.elo_max - self.elo_min:
            return QualityEstimate(None, None, sd, n, stats.games, "moves", to150,
                                   reason=f"{n} positions: the 95% interval (±{(hi - lo) / 2:.0f}) would be wider than the "
                                          f"rating range fitted on ({self.elo_min:.0f}-{self.elo_max:.0f})",
                                   note=note, label=self.label, point=elo, level=level)
        return QualityEstimate(elo, (lo, hi), sd, n, stats.games, "moves", to150, None, note,
                               not self.elo_min <= elo <= self.elo_max, self.label, elo, level)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (what ``bench/fit_quality.py`` writes into :mod:`livemon.rating.quality_params`)."""
        return {"profile": self.profile, "intercept": self.intercept, "weights": list(self.weights),
                "sigma_persist": self.sigma_persist, "sigma_day": self.sigma_day, "sigma_move": self.sigma_move,
                "elo_min": self.elo_min, "elo_max": self.elo_max, "book_moves": self.book_moves,
                "eval_bound": self.eval_bound, "features": list(self.features), "moves_per_game": self.moves_per_game,
                "pool": self.pool, "fitted_on": self.fitted_on, "results": dict(self.results),
                "field_rho": dict(self.field_rho), "field_scale": dict(self.field_scale), "ratings": list(self.ratings),
                "noise_level": list(self.noise_level), "level_bias": list(self.level_bias),
                "joint": None if self.joint is None else self.joint.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QualityModel:
        """Inverse of :meth:`to_dict` (ValueError when its features are not this livemon's)."""
        return cls(str(d["profile"]), float(d["intercept"]), tuple(float(w) for w in d["weights"]),
                   float(d["sigma_persist"]), float(d["sigma_day"]), float(d["sigma_move"]),
                   float(d["elo_min"]), float(d["elo_max"]), int(d["book_moves"]), float(d["eval_bound"]),
                   tuple(d["features"]), float(d.get("moves_per_game", 30.0)), str(d.get("pool", "FIDE classical")),
                   str(d.get("fitted_on", "")), {k: float(v) for k, v in d.get("results", {}).items()},
                   {k: float(v) for k, v in d.get("field_rho", {}).items()},
                   {k: float(v) for k, v in d.get("field_scale", {}).items()},
                   None if not d.get("joint") else JointWeights.from_dict(d["joint"]),
                   tuple(float(x) for x in d.get("ratings", (0.0, 0.0))),  # type: ignore[arg-type]
                   tuple(float(x) for x in d.get("noise_level", (0.0,) * 4)),  # type: ignore[arg-type]
                   tuple(float(x) for x in d.get("level_bias", (0.0,) * 3)))  # type: ignore[arg-type]


def _pair(v1: float, v2: float, rho: float) -> tuple[float, float]:
    """(weight of the first, variance) of the best linear mix of two estimates of one rating whose errors have the
    variances ``v1``, ``v2`` and the correlation ``rho``: what :func:`combine` and :func:`field_estimate` weigh with.

    >>> _pair(100.0, 100.0, 0.0), _pair(100.0, 300.0, 0.0)
    ((0.5, 50.0), (0.75, 75.0))
    >>> lam, var = _pair(100.0, 100.0, 0.5); lam, round(var, 6)  # correlated errors average away less
    (0.5, 75.0)
    """
    c = rho * math.sqrt(v1 * v2)
    den = v1 + v2 - 2 * c
    lam = min(max((v2 - c) / den, 0.0), 1.0) if den > 0 else 1.0
    return lam, max(lam**2 * v1 + (1 - lam) ** 2 * v2 + 2 * lam * (1 - lam) * c, 1.0)


def field_prior_var(n: int, var: float) -> float:
    """The variance of the field's prior for one more player of a field of ``n`` others whose ratings have the
    sample variance ``var``: the predictive spread of a new draw, var·(1 + 1/n), widened by Student's t with
    n − 1 degrees of freedom over the normal's 1.96 (a round robin's nine others say little about the spread
    of the players that could have joined them), never under 25².

    >>> round(field_prior_var(9, 35.0**2) ** 0.5, 1), round(field_prior_var(140, 160.0**2) ** 0.5, 1)
    (43.3, 162.0)
    """
    nu = max(n - 1, 1)
    t = _Z95 + (_Z95**3 + _Z95) / (4 * nu) + (5 * _Z95**5 + 16 * _Z95**3 + 3 * _Z95) / (96 * nu**2)  # Cornish-Fisher
    return max(var * (1 + 1 / max(n, 1)) * (t / _Z95) ** 2, 25.0**2)


def fit_field_rho(rows: Sequence[tuple[str, float, float, float, float, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Per kind of evidence, the correlation between the field prior's error and the evidence's, and the scale
    of the field estimate's sd: ``(field_rho, field_scale)`` of :class:`QualityModel`.

    ``rows``: (kind — ``moves`` or ``moves+results`` —, the player's rating, the mean of the OTHER players'
    ratings and the prior's sd (:func:`field_prior_var`), the evidence's estimate and sd). Each error is
    standardised by its own sd; the correlation is taken about zero (both are meant to be unbiased). The moves and
    results of a player above the field's mean tend to read low, of one below it high: their error leans
    with the prior's, and weighing the two as if independent narrowed the field estimate's intervals
    below their coverage on the events left out. The scale is the root mean square of the field estimate's
    errors in its sd on these rows, never below 1: even with the correlation its intervals were narrower
    than its errors (9–11% per player-event). A kind with fewer than 20 rows gets ρ 0 and scale 1.

    >>> leaning = [("moves+results", 2000.0 + d, 2000.0, 100.0, 2000.0 + d / 2, 100.0) for d in (-100.0, 100.0)]
    >>> not_leaning = [("moves+results", 2000.0 + d, 2000.0, 100.0, 2000.0 + 1.5 * d, 100.0) for d in (-100.0, 100.0)]
    >>> fit_field_rho((leaning * 3 + not_leaning) * 3)
    ({'moves+results': 0.5}, {'moves+results': 1.0})
    """
    rho: dict[str, float] = {}
    scale: dict[str, float] = {}
    for kind in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == kind and r[3] > 0 and r[5] > 0]
        rho[kind], scale[kind] = 0.0, 1.0
        if len(mine) < 20:
            continue
        a = np.array([(mu - elo) / sd for _, elo, mu, sd, _, _ in mine])
        b = np.array([(est - elo) / est_sd for _, elo, _, _, est, est_sd in mine])
        den = math.sqrt(float((a * a).mean() * (b * b).mean()))
        rho[kind] = round(float((a * b).mean()) / den, 4) if den > 0 else 0.0
        z = []
        for _, elo, mu, sd, est, est_sd in mine:
            lam, var = _pair(est_sd**2, sd**2, rho[kind])
            z.append((lam * est + (1 - lam) * mu - elo) / math.sqrt(var))
        scale[kind] = round(max(math.sqrt(float(np.mean(np.square(z)))), 1.0), 4)
    return rho, scale


def field_estimate(model: QualityModel, moves: QualityEstimate, stats: QualityStats, field_ratings: Sequence[float],
                   results: QualityEstimate | None = None) -> QualityEstimate:
    """"In this field": what the player's moves and results say, with the event's field as the prior (empirical Bayes).

    The prior is the OTHER players' ratings of the event (never the player's own): their mean and spread.
    The evidence is the moves estimate, combined with the results performance once there is one
    (:func:`combine`); the two are weighed by their variances and the measured correlation of their errors
    (:attr:`QualityModel.field_rho`), the interval widened by the measured scale of its errors
    (:attr:`QualityModel.field_scale`). It is the sharpest number for "how strong is this player playing among
    these players", and the headline wherever there is one; it is pulled toward the field's mean, so the moves
    estimate (no prior) is the one to compare players of different events. Needs two other rated players.

    >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 200.0, 1000.0, 1400, 2800)
    >>> s = QualityStats((0,) * len(FEATURES), 270, 9)
    >>> e = QualityEstimate(2600.0, (2300.0, 2900.0), 150.0, 270, 9, "moves")
    >>> f = field_estimate(m, e, s, [2400.0 + 12.5 * i for i in range(9)])
    >>> 2450 < f.elo < 2600, f.kind, f.sd < 50, f.label
    (True, 'field', True, 'in this field (moves; the field 2450 ± 34, 9 other players)')
    """
    ratings = [float(r) for r in field_ratings]
    n = len(ratings)
    mu = sum(ratings) / n if n else 0.0
    var = sum((r - mu) ** 2 for r in ratings) / (n - 1) if n > 1 else 0.0
    return field_estimate_from(model, moves, stats, n, mu, var, results)


def field_estimate_from(model: QualityModel, moves: QualityEstimate, stats: QualityStats, n: int, mu: float,
                        var: float, results: QualityEstimate | None = None) -> QualityEstimate:
    """:func:`field_estimate` from the field's count, mean and variance (ddof 1) of the other players' ratings."""
    if n < 2:
        return QualityEstimate(None, None, None, moves.positions, moves.games, "field",
                               reason="the field needs two other rated players", label="in this field")
    if moves.sd is None or stats.positions < MIN_POSITIONS:
        return QualityEstimate(None, None, None, moves.positions, moves.games, "field",
                               reason=moves.reason or "no moves estimate", label="in this field")
    point = moves.elo if moves.elo is not None else moves.point  # an interval too wide to show: the point weighs
    if point is None:
        return QualityEstimate(None, None, None, moves.positions, moves.games, "field",
                               reason=moves.reason or "no moves estimate", label="in this field")
    kind, elo, ev_sd = "moves", point, moves.sd
    moves = QualityEstimate(point, None, ev_sd, moves.positions, moves.games, "moves", point=point,
                            level=moves.level)
    if results is not None and results.elo is not None:
        both = combine(model, moves, results)
        if both.elo is not None and both.sd is not None:
            kind, elo, ev_sd = both.kind, both.elo, both.sd
    prior_var = field_prior_var(n, var)
    lam, post_var = _pair(ev_sd**2, prior_var, model.field_rho.get(kind, 0.0))
    post = lam * elo + (1 - lam) * mu
    sd = math.sqrt(post_var) * model.field_scale.get(kind, 1.0)
    k = results.games if results is not None and results.elo is not None else 0

    def shown(moves_var: float, extra: int) -> float:  # the field's variance after ``extra`` further games
        if k + extra >= 1 and "b" in model.results:
            vr = model.results["a"] + model.results["b"] / (k + extra)
            both_var = _pair(moves_var, vr, model.results["rho"])[1]
            return _pair(both_var, prior_var, model.field_rho.get("moves+results", 0.0))[1] * scale2["moves+results"]
        return _pair(moves_var, prior_var, model.field_rho.get("moves", 0.0))[1] * scale2["moves"]

    scale2 = {of: model.field_scale.get(of, 1.0) ** 2 for of in ("moves", "moves+results")}

    level = moves.level if moves.level is not None else model.level(stats, point)
    to150 = model.games_to(stats.positions, max(stats.games, 1), elo=level, shown=shown)
    what = "moves and results" if kind != "moves" else "moves"
    return QualityEstimate(post, (post - _Z95 * sd, post + _Z95 * sd), sd, moves.positions, moves.games, "field",
                           to150, label=f"in this field ({what}; the field {mu:.0f} ± {math.sqrt(max(var, 0.0)):.0f}, "
                                        f"{n} other players)")


def fide_dp(p: float) -> float:
    """FIDE's rating difference dp of a score fraction (:func:`livemon.rating.fide.dp`, table 8.1a), as a float.

    >>> fide_dp(0.5), fide_dp(0.75), fide_dp(0.25), fide_dp(1.0)
    (0.0, 193.0, -193.0, 800.0)
    """
    return float(fide.dp(min(max(p, 0.0), 1.0)))


def results_performance(games: Sequence[tuple[float, float]], model: QualityModel | None = None) -> QualityEstimate:
    """FIDE's performance rating from results: mean opponent rating + dp(p), ``games`` = (opponent rating, points).

    With a model whose fit measured the results' noise, an interval (sd² = a + b/k) and games to ±150.

    >>> e = results_performance([(2400.0, 1.0), (2500.0, 0.5), (2600.0, 0.0)])
    >>> e.elo, e.games, e.kind, e.cr95
    (2500.0, 3, 'results', None)
    """
    if not games:
        return QualityEstimate(None, None, None, 0, 0, "results", reason="no finished game against a rated opponent",
                               label="FIDE performance (results)")
    k = len(games)
    elo = sum(r for r, _ in games) / k + fide_dp(sum(p for _, p in games) / k)
    sd = to150 = None
    cr = None
    note = None
    if k < RESULTS_MIN_GAMES:
        note = f"{k} games: no interval before {RESULTS_MIN_GAMES} (its noise was measured on events of 5+ games)"
    elif model is not None and "a" in model.results:
        var = max(model.results["a"] + model.results["b"] / k, 1.0)
        sd = math.sqrt(var)
        cr = (elo - _Z95 * sd, elo + _Z95 * sd)
        target = (TARGET_HALF_WIDTH / _Z95) ** 2
        a, b = model.results["a"], model.results["b"]
        to150 = None if a >= target else max(math.ceil(b / (target - a) - 1e-9) - k, 0)
    return QualityEstimate(elo, cr, sd, 0, k, "results", to150, note=note, label="FIDE performance (results)")


def combine(model: QualityModel, moves: QualityEstimate, results: QualityEstimate) -> QualityEstimate:
    """Moves and results together: the two estimates weighed by their measured variances and error correlation.

    Sharper than either early in an event, as sharp as results alone by its end (``bench/validity.py``,
    "early in the event"); ``elo`` may come from a moves estimate whose own interval is not shown.

    >>> m = QualityModel("p", 0.0, (0.0,) * len(FEATURES), 100.0, 200.0, 1000.0, 1400, 2800,
    ...                  results={"a": 10000.0, "b": 200000.0, "rho": 0.3})
    >>> mv = QualityEstimate(2500.0, (2200.0, 2800.0), 150.0, 270, 9, "moves")
    >>> rs = QualityEstimate(2300.0, (2000.0, 2600.0), 180.0, 0, 9, "results")
    >>> c = combine(m, mv, rs)
    >>> 2300 < c.elo < 2500, c.sd < 150, c.kind
    (True, True, 'moves+results')
    >>> combine(m, mv, QualityEstimate(None, None, None, 0, 0, "results", reason="no finished game")).reason
    'no finished game'

    """
    point = moves.elo if moves.elo is not None else moves.point
    if point is None or moves.sd is None or results.elo is None or "b" not in model.results:
        return QualityEstimate(None, None, None, moves.positions, moves.games, "moves+results",
                               reason=moves.reason or results.reason or "no results noise fitted",
                               label="moves and results")
    vm = moves.sd**2
    # the results' variance b/k also before the results' own interval is shown (5 games): on the player-events
    # of 7+ games left out in turn it covered 92-96% after 1-4 games
    vr = results.sd**2 if results.sd is not None else model.results["a"] + model.results["b"] / max(results.games, 1)
    lam, var = _pair(vm, vr, model.results["rho"])
    elo = lam * point + (1 - lam) * results.elo
    sd = math.sqrt(var)
    return QualityEstimate(elo, (elo - _Z95 * sd, elo + _Z95 * sd), sd, moves.positions, moves.games, "moves+results",
                           label=f"moves and results ({lam:.0%} moves)")


def told_apart(a: QualityEstimate, b: QualityEstimate) -> dict[str, Any]:
    """Whether two players' estimates can be told apart yet: the difference, its 95% interval, and a yes/no.

    >>> x = QualityEstimate(2700.0, (2500.0, 2900.0), 100.0, 200, 7, "moves")
    >>> y = QualityEstimate(2300.0, (2100.0, 2500.0), 100.0, 200, 7, "moves")
    >>> told_apart(x, y)["apart"], told_apart(x, x)["apart"]
    (True, False)
    """
    if a.elo is None or b.elo is None or a.sd is None or b.sd is None:
        return {"apart": None, "difference": None, "cr95": None, "reason": a.reason or b.reason or "no estimate"}
    d = a.elo - b.elo
    sd = math.hypot(a.sd, b.sd)
    lo, hi = d - _Z95 * sd, d + _Z95 * sd
    return {"apart": bool(lo > 0 or hi < 0), "difference": round(d, 1), "cr95": [round(lo, 1), round(hi, 1)],
            "p_first_stronger": round(0.5 * math.erfc(-d / (sd * math.sqrt(2))), 4)}


@dataclass
class GameSample:
    """One rated player's counted moves in one game, for :func:`fit_quality_model`: the per-move features.

    ``event``: what the noise's folds group by (:func:`fit_quality_model`), the player-event when None;
    ``game``: the game it is one side of (two samples with the same ``game`` are opponents), None: unknown.
    """

    elo: float
    player_event: Hashable
    features: np.ndarray  # (moves, len(FEATURES))
    event: Hashable = None
    game: Hashable = None


def _within(u: np.ndarray) -> tuple[float, int]:
    """The sum of squares of per-move scores about their game's mean, and its degrees of freedom."""
    return (float(((u - u.mean()) ** 2).sum()), len(u) - 1) if len(u) > 1 else (0.0, 0)


def _persistent(groups: dict[Hashable, list[float]]) -> float:
    """σ_p²: the mean product of the errors of two different games of one player-event."""
    num = den = 0.0
    for es in groups.values():
        k = len(es)
        if k > 1:
            num += sum(es) ** 2 - sum(e * e for e in es)
            den += k * (k - 1)
    return max(num / den, 0.0) if den else 0.0


def _pooled_noise(samples: Sequence[GameSample], scores: Sequence[tuple[float, np.ndarray]]) -> tuple[float, float, float]:
    """(σ_p, σ_d, σ_m) of the per-move score over games (Elo): see the module docstring.

    ``scores[i]`` = (intercept, weights) that score ``samples[i]`` (the fit of a fold that left it out).
    """
    within, dof, d2, inv_n = 0.0, 0, [], []
    groups: dict[Hashable, list[float]] = {}
    for s, (intercept, w) in zip(samples, scores):
        u = intercept + s.features @ w
        ss, df = _within(u)
        within, dof = within + ss, dof + df
        e = float(u.mean()) - s.elo
        d2.append(e * e)
        inv_n.append(1.0 / len(u))
        groups.setdefault(s.player_event, []).append(e)
    sm2 = within / max(dof, 1)
    sp2 = _persistent(groups)
    sd2 = max(float(np.mean(d2)) - sp2 - sm2 * float(np.mean(inv_n)), 0.0)
    return math.sqrt(sp2), math.sqrt(sd2), math.sqrt(sm2)


def _opponents(samples: Sequence[GameSample]) -> list[int | None]:
    """Each sample's opponent: the other sample of its ``game`` (None: unknown, or not one other)."""
    sides: dict[Hashable, list[int]] = {}
    for i, s in enumerate(samples):
        if s.game is not None and len(s.features):
            sides.setdefault(s.game, []).append(i)
    out: list[int | None] = [None] * len(samples)
    for pair in sides.values():
        if len(pair) == 2:
            out[pair[0]], out[pair[1]] = pair[1], pair[0]
    return out


def _level_noise(samples: Sequence[GameSample], scores: Sequence[tuple[float, np.ndarray]],
                 parts: tuple[float, float, float]) -> tuple[float, float, float, float]:
    """(b, a, b_p, a_p) of :attr:`QualityModel.noise_level`, by maximum likelihood (normal) on the out-of-fold
    errors, x = (Elo − 2000)/1000: first each game's error against its pooled sd √(σ_p² + σ_d² + σ_m²/n)
    scaled by exp(b + a·x); then each player-event's weighted mean error against σ_p·exp(b_p + a_p·x) and its
    games' part, so that the persistent part (how far a player's level in an event is from their rating)
    finds its own slope."""
    sp, sdd, sm = parts
    rows = []
    for s, (intercept, w) in zip(samples, scores):
        n = len(s.features)
        if n:
            rows.append((s.player_event, s.elo, intercept + float((s.features @ w).mean()) - s.elo, sdd**2 + sm**2 / n))
    return _noise_by_level(rows, sp)


def _joint_level_noise(samples: Sequence[GameSample], pairs: Sequence[int | None], scores: Sequence[Joint | None],
                       noise: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    """:attr:`JointWeights.noise_level`: as :func:`_level_noise`, on the joint reading's own out-of-fold errors
    (its games' part σ_d² + σ_m²/n + σ_m,opp²/m)."""
    sp, sdd, sm, smo = noise
    rows = []
    for i, k in enumerate(pairs):
        sc = scores[i]
        if k is None or sc is None:
            continue
        c, own, opp, slope = sc
        s, o = samples[i], samples[k]
        e = c + float((s.features @ np.array(own)).mean()) + float((o.features @ np.array(opp)).mean()) + slope * o.elo
        rows.append((s.player_event, s.elo, e - s.elo, sdd**2 + sm**2 / len(s.features) + smo**2 / len(o.features)))
    return _noise_by_level(rows, sp)


def _noise_by_level(rows: Sequence[tuple[Hashable, float, float, float]], sp: float) -> tuple[float, float, float, float]:
    """(b, a, b_p, a_p) from (player-event, rating, error, the game's variance) of out-of-fold games and σ_p."""
    x: list[float] = []
    z2: list[float] = []
    groups: dict[Hashable, list[float]] = {}
    for pe, elo, e, game_var in rows:
        x.append((elo - 2000.0) / 1000.0)
        z2.append(e * e / (sp**2 + game_var))
        g = groups.setdefault(pe, [0.0, 0.0, 0.0])  # Σw·e, Σw, x
        wt = 1.0 / game_var
        g[0] += wt * e
        g[1] += wt
        g[2] = x[-1]
    if len(x) < 10 or np.ptp(x) == 0:
        return 0.0, 0.0, 0.0, 0.0
    xa, za = np.array(x), np.array(z2)

    def profile(a: float) -> tuple[float, float]:  # the best b at slope a, and the -2 log likelihood there
        b2 = math.log(float(np.mean(za * np.exp(-2.0 * a * xa))))
        return b2 / 2.0, float(np.sum(b2 + 2.0 * a * xa + za * np.exp(-2.0 * a * xa - b2)))

    grid = np.linspace(-2.0, 2.0, 401)
    a = float(grid[int(np.argmin([profile(float(g))[1] for g in grid]))])
    b = profile(a)[0]
    if sp <= 0:
        return b, a, b, a
    ge = np.array([g[0] / g[1] for g in groups.values()])
    gx = np.array([g[2] for g in groups.values()])
    vg = np.exp(2.0 * (b + a * gx)) / np.array([g[1] for g in groups.values()])

    def best(bs: np.ndarray, as_: np.ndarray) -> tuple[float, float]:
        bp, ap = np.meshgrid(bs, as_, indexing="ij")
        v = sp**2 * np.exp(2.0 * (bp[..., None] + ap[..., None] * gx)) + vg
        nll = (np.log(v) + ge**2 / v).sum(axis=-1)
        i, j = np.unravel_index(int(np.argmin(nll)), nll.shape)
        return float(bp[i, j]), float(ap[i, j])

    bp, ap = best(np.linspace(-3.0, 2.0, 51), np.linspace(-3.0, 3.0, 61))  # coarse, then within a step of it
    bp, ap = best(np.linspace(bp - 0.1, bp + 0.1, 21), np.linspace(ap - 0.1, ap + 0.1, 21))
    return b, a, bp, ap


def _fit_weights(samples: Sequence[GameSample], keep: np.ndarray, ridge: float,
                 by_event: int, means: np.ndarray | None = None) -> tuple[float, np.ndarray, float, float]:
    """(intercept, weights, lowest and highest rating) of the OLS lines Elo → features, inverted by GLS.

    ``means``: each sample's mean features, when known (the folds of the noise reuse them).
    """
    x = np.array([s.features.mean(axis=0) for s in samples]) if means is None else means
    r = np.array([s.elo for s in samples], dtype=float)
    if by_event:  # the line and the weights from player-events of at least ``by_event`` games, moves pooled
        pe: dict[Hashable, list[GameSample]] = {}
        for s in samples:
            pe.setdefault(s.player_event, []).append(s)
        pooled = [(float(np.mean([g.elo for g in gs])), np.concatenate([g.features for g in gs]))
                  for gs in pe.values() if len(gs) >= by_event]
        if len(pooled) >= 30:
            x = np.array([f.mean(axis=0) for _, f in pooled])
            r = np.array([e for e, _ in pooled])
    x = x[:, keep]
    center = float(r.mean())
    t = (r - center) / 1000.0
    mean, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    z = (x - mean) / sd
    design = np.column_stack([np.ones_like(t), t])
    coef, *_ = np.linalg.lstsq(design, z, rcond=None)
    alpha, beta = coef[0], coef[1]
    resid = z - design @ coef
    cov = np.cov(resid, rowvar=False) if resid.shape[1] > 1 else np.atleast_2d(resid.var())
    cov = cov + ridge * np.diag(np.diag(cov))
    prec_beta = np.linalg.solve(cov, beta)
    wz = prec_beta / float(beta @ prec_beta)  # t^ = wz · (z - alpha)
    w = np.zeros(len(keep))
    w[keep] = 1000.0 * wz / sd
    intercept = center - 1000.0 * float(wz @ (alpha + mean / sd))
    return intercept, w, float(r.min()), float(r.max())


Joint = tuple[float, tuple[float, ...], tuple[float, ...], float]
"""(intercept, own weights, opponent's weights, weight of the opponent's rating) of :class:`JointWeights`."""


def _fit_joint(samples: Sequence[GameSample], pairs: Sequence[int | None], keep: np.ndarray, ridge: float,
               means: np.ndarray) -> Joint | None:
    """The joint reading's weights: each side's per-game feature means on both ratings (OLS, every game from
    both sides), inverted for the player's rating by GLS with the 2 × features residual covariance, the
    opponent's rating known. None with fewer than 20 such sides."""
    rows = [(i, j) for i, j in enumerate(pairs) if j is not None]
    if len(rows) < 20:
        return None
    ia, ib = np.array([i for i, _ in rows]), np.array([j for _, j in rows])
    r = np.array([s.elo for s in samples], dtype=float)
    x = means[:, keep]
    center = float(r[ia].mean())
    mean, sd = x[ia].mean(axis=0), x[ia].std(axis=0)
    sd[sd == 0] = 1.0
    z = (x - mean) / sd
    t = (r - center) / 1000.0
    design = np.column_stack([np.ones(len(ia)), t[ia], t[ib]])
    coef, *_ = np.linalg.lstsq(design, z[ia], rcond=None)
    alpha, beta, delta = coef
    res = z[ia] - design @ coef  # row k: side ia[k]'s residual; its opponent's is the row of ib[k] as a side
    row_of = {int(i): k for k, i in enumerate(ia)}
    res_opp = res[[row_of[int(j)] for j in ib]]
    both = np.hstack([res, res_opp])
    cov = np.cov(both, rowvar=False)
    cov = cov + ridge * np.diag(np.diag(cov))
    b = np.concatenate([beta, delta])  # how the player's rating enters their features and the opponent's
    prec_b = np.linalg.solve(cov, b)
    wz = prec_b / float(b @ prec_b)  # t^ = wz · (z_own − α − δ t_opp ; z_opp − α − β t_opp)
    wa, wb = wz[: len(beta)], wz[len(beta):]
    own, opp = np.zeros(len(keep)), np.zeros(len(keep))
    own[keep], opp[keep] = 1000.0 * wa / sd, 1000.0 * wb / sd
    slope = -float(wa @ delta + wb @ beta)  # per unit of t_opp, in t
    intercept = center - 1000.0 * float((wa + wb) @ (alpha + mean / sd)) - slope * center
    return intercept, tuple(float(v) for v in own), tuple(float(v) for v in opp), slope


def _joint_noise(samples: Sequence[GameSample], pairs: Sequence[int | None],
                 scores: Sequence[Joint | None]) -> tuple[float, float, float, float] | None:
    """(σ_p, σ_d, σ_m, σ_m,opp) of the joint reading on the out-of-fold scores of the games with both sides (as
    :func:`_pooled_noise`: σ_m from the spread of each side's per-move part within a game, σ_p from two games of
    one player-event, σ_d the rest)."""
    own_ss = opp_ss = 0.0
    own_df = opp_df = 0
    d2, moves = [], []
    groups: dict[Hashable, list[float]] = {}
    for i, j in enumerate(pairs):
        sc = scores[i]
        if j is None or sc is None:
            continue
        c, own, opp, slope = sc
        a, b = samples[i].features @ np.array(own), samples[j].features @ np.array(opp)
        ss, df = _within(a)
        own_ss, own_df = own_ss + ss, own_df + df
        ss, df = _within(b)
        opp_ss, opp_df = opp_ss + ss, opp_df + df
        e = c + float(a.mean()) + float(b.mean()) + slope * samples[j].elo - samples[i].elo
        d2.append(e * e)
        moves.append((len(a), len(b)))
        groups.setdefault(samples[i].player_event, []).append(e)
    if len(d2) < 10:
        return None
    sm2, smo2 = own_ss / max(own_df, 1), opp_ss / max(opp_df, 1)
    sp2 = _persistent(groups)
    sd2 = max(float(np.mean(d2)) - sp2 - float(np.mean([sm2 / n + smo2 / m for n, m in moves])), 0.0)
    return math.sqrt(sp2), math.sqrt(sd2), math.sqrt(sm2), math.sqrt(smo2)


def _joint_scale(model: QualityModel, samples: Sequence[GameSample], pairs: Sequence[int | None],
                 scores: Sequence[Joint | None], target: float = 0.95,
                 read_at: Callable[[float, float, float, float, float], float] | None = None) -> float:
    """A factor on a game's parts with which the joint reading's single-game 95% intervals, as
    :meth:`QualityModel.estimate` makes them (:meth:`QualityModel.interval`: they cover a rating r when the error is
    within 1.96·sd(r)), cover ``target`` of **every** out-of-fold game's rating, shown or not; 1 with fewer than 50
    such games. The fit's own (:attr:`JointWeights.scale`) is :func:`_joint_calibration`'s, on the intervals shown;
    this one is the alternatives' of ``bench/quality_alternatives.py``. ``read_at(error, persistent variance, game
    variance, rating, factor)``: the level whose noise an interval reads instead of the rating's (an alternative
    reading, measured by ``bench/quality_alternatives.py``)."""
    j = model.joint
    if j is None:
        return 1.0
    rows = []  # (error, persistent variance, the game's variance before the factor, rating)
    for i, k in enumerate(pairs):
        sc = scores[i]
        if k is None or sc is None:
            continue
        c, own, opp, slope = sc
        n, m = len(samples[i].features), len(samples[k].features)
        e = (c + float((samples[i].features @ np.array(own)).mean()) + float((samples[k].features @ np.array(opp)).mean())
             + slope * samples[k].elo - samples[i].elo)
        rows.append((e, j.sigma_persist**2, j.sigma_day**2 + j.sigma_move**2 / n + j.sigma_move_opponent**2 / m,
                     samples[i].elo))
    if len(rows) < 50:
        return 1.0

    def coverage(f: float) -> float:  # the interval covers the rating r when the error is within 1.96·sd(r)
        hit = 0
        for e, p, g, elo in rows:
            at = elo if read_at is None else read_at(e, p, g, elo, f)
            var = p * model.noise_scale(at, True, True) ** 2 + f * f * g * model.noise_scale(at, False, True) ** 2
            hit += abs(e) <= _Z95 * math.sqrt(var)
        return hit / len(rows)

    lo, hi = 0.3, 3.0
    if coverage(lo) >= target or coverage(hi) < target:
        return lo if coverage(lo) >= target else hi
    for _ in range(30):  # coverage grows with the factor
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if coverage(mid) >= target else (mid, hi)
    return hi


_BANDS = (1800.0, 2200.0, 2500.0)
"""The bands of rating whose single games' coverage the games' slope by level evens (:func:`_joint_calibration`)."""


def _joint_rows(model: QualityModel, samples: Sequence[GameSample], pairs: Sequence[int | None],
                scores: Sequence[Joint | None], min_positions: int = MIN_POSITIONS) -> np.ndarray:
    """(error, persistent variance, the game's variance before its factor, rating) of each out-of-fold game read
    jointly with at least ``min_positions`` counted moves (:data:`MIN_POSITIONS`: what an estimate needs), one row
    each."""
    j = model.joint
    rows: list[tuple[float, float, float, float]] = []
    for i, k in enumerate(pairs if j is not None else ()):
        sc = scores[i]
        n = len(samples[i].features)
        if j is None or k is None or sc is None or n < max(min_positions, 1):
            continue
        c, own, opp, slope = sc
        m = len(samples[k].features)
        e = (c + float((samples[i].features @ np.array(own)).mean()) + float((samples[k].features @ np.array(opp)).mean())
             + slope * samples[k].elo - samples[i].elo)
        rows.append((e, j.sigma_persist**2, j.sigma_day**2 + j.sigma_move**2 / n + j.sigma_move_opponent**2 / m,
                     samples[i].elo))
    return np.array(rows, dtype=float).reshape(-1, 4)


def _shown_covered(model: QualityModel, rows: np.ndarray, factor: float,
                   level: tuple[float, float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Whether each single game of ``rows`` (:func:`_joint_rows`) would show its interval (no wider than the
    ratings fitted on) and whether it covers the rating, with ``factor`` on the games' parts and the noise by
    ``level`` (b, a, b_p, a_p): :meth:`QualityModel.interval` for all the games at once."""
    e, p, g, elo = rows.T
    b, a, bp, ap = level

    def sd(r: np.ndarray) -> np.ndarray:
        x = (np.clip(r, model.elo_min, model.elo_max) - 2000.0) / 1000.0
        out: np.ndarray = np.sqrt(p * np.exp(2.0 * (bp + ap * x)) + factor**2 * g * np.exp(2.0 * (b + a * x)))
        return out

    est = elo + e
    reach = _Z95 * np.maximum(sd(np.full_like(est, model.elo_min)), sd(np.full_like(est, model.elo_max))) + 1.0
    ends = []
    for sign in (-1.0, 1.0):
        near, far = np.zeros_like(est), reach.copy()
        for _ in range(40):
            mid = (near + far) / 2.0
            inside = mid <= _Z95 * sd(est + sign * mid)
            near, far = np.where(inside, mid, near), np.where(inside, far, mid)
        ends.append(est + sign * (near + far) / 2.0)
    return ends[1] - ends[0] <= model.elo_max - model.elo_min, (ends[0] <= elo) & (elo <= ends[1])


def _joint_calibration(model: QualityModel, samples: Sequence[GameSample], pairs: Sequence[int | None],
                       scores: Sequence[Joint | None], target: float = 0.95) -> JointWeights:
    """The joint reading with its games' slope by level and :attr:`JointWeights.scale` set on coverage of its
    out-of-fold single games (:meth:`QualityModel.interval`), unchanged with fewer than 50 of them.

    The maximum-likelihood slope fits the games' variance by level, not their coverage (too narrow for club players,
    too wide above); so first the slope (its own noise by level only, :attr:`JointWeights.noise_level`, in steps of
    0.1 within ±0.4 of the likelihood's) with which every game's interval, the factor fitted for it, covers alike
    in the four bands (<1800, 1800–2200, 2200–2500, 2500+: the least sum over the bands of games × (coverage −
    95%)²). Then the factor with which the intervals **shown** (no wider than the ratings fitted on) cover
    ``target``: what the user sees. The games left without one are the weak readings of strong players and the
    strong readings of weak ones, so a factor fitted on every game leaves those shown covering more than 95%."""
    j = model.joint
    if j is None:
        raise ValueError("_joint_calibration: the model has no joint reading")
    rows = _joint_rows(model, samples, pairs, scores)
    if len(rows) < 50:
        return j
    level = j.noise_level
    elo = rows[:, 3]
    bands = np.digitize(elo, _BANDS)

    def fitted(lv: tuple[float, float, float, float], shown_only: bool) -> float:
        def coverage(f: float) -> float:
            shown, covered = _shown_covered(model, rows, f, lv if level is not None else model.noise_level)
            mask = shown if shown_only else np.ones_like(shown)
            return float(covered[mask].mean()) if mask.any() else 1.0

        lo, hi = 0.3, 3.0
        for _ in range(25):  # coverage grows with the factor
            mid = (lo + hi) / 2.0
            lo, hi = (lo, mid) if coverage(mid) >= target else (mid, hi)
        return hi

    if level is not None:
        best: tuple[float, tuple[float, float, float, float]] | None = None
        for c in np.arange(-0.4, 0.41, 0.1):
            lv = (level[0], level[1] + float(c), level[2], level[3])
            _, covered = _shown_covered(model, rows, fitted(lv, False), lv)
            dev = sum(float((bands == i).sum()) * (float(covered[bands == i].mean()) - target) ** 2
                      for i in range(len(_BANDS) + 1) if (bands == i).any())
            if best is None or dev < best[0]:
                best = (dev, lv)
        level = level if best is None else best[1]
    return dataclasses.replace(j, scale=fitted(level if level is not None else model.noise_level, True),
                               noise_level=level)


def _level_bias(samples: Sequence[GameSample], pairs: Sequence[int | None], scores: Sequence[tuple[float, np.ndarray]],
                joint_scores: Sequence[Joint | None], parts: tuple[float, float, float],
                joint_noise: tuple[float, float, float, float] | None) -> tuple[float, float, float]:
    """:attr:`QualityModel.level_bias`: the weighted least-squares quadratic in x = (Elo − 2000)/1000 of the fit's
    player-events' out-of-fold errors (each game read as :meth:`QualityModel.score` reads it: jointly against a rated
    opponent, each weighed by the inverse of its noise; each player-event by the inverse of its variance)."""
    sp, sdd, sm = parts
    groups: dict[Hashable, list[float]] = {}  # Σe/v, Σ1/v, Σelo, games
    for i, s in enumerate(samples):
        n = len(s.features)
        if n == 0:
            continue
        j, js = pairs[i], joint_scores[i]
        if j is not None and js is not None and joint_noise is not None:
            c, own, opp, slope = js
            m = len(samples[j].features)
            e = (c + float((s.features @ np.array(own)).mean()) + float((samples[j].features @ np.array(opp)).mean())
                 + slope * samples[j].elo - s.elo)
            v = joint_noise[1] ** 2 + joint_noise[2] ** 2 / n + joint_noise[3] ** 2 / max(m, 1)
            persist = joint_noise[0]
        else:
            ic, w = scores[i]
            e, v, persist = ic + float((s.features @ w).mean()) - s.elo, sdd**2 + sm**2 / n, sp
        g = groups.setdefault(s.player_event, [0.0, 0.0, 0.0, 0.0, persist])
        g[0] += e / v
        g[1] += 1.0 / v
        g[2] += s.elo
        g[3] += 1.0
    if len(groups) < 30:
        return 0.0, 0.0, 0.0
    errs = np.array([g[0] / g[1] for g in groups.values()])
    x = np.array([(g[2] / g[3] - 2000.0) / 1000.0 for g in groups.values()])
    wt = np.array([1.0 / (g[4] ** 2 + 1.0 / g[1]) for g in groups.values()])
    design = np.column_stack([np.ones_like(x), x, x * x]) * np.sqrt(wt)[:, None]
    coef = np.linalg.lstsq(design, errs * np.sqrt(wt), rcond=None)[0]
    return float(coef[0]), float(coef[1]), float(coef[2])


def fit_quality_model(samples: Sequence[GameSample], profile: str, use: Sequence[str] = FEATURES,
                      ridge: float = 0.5, book_moves: int = 8, eval_bound: float = 3.0,
                      fitted_on: str = "", by_event: int = 0, noise_folds: int | None = None,
                      by_level: bool = True, opponents: bool = True, calibrate_joint: bool = True,
                      level_bias: bool = False, joint_level: bool = False) -> QualityModel:
    """Fit Elo → mean features per game (OLS per feature), invert by GLS; measure the noise parts.

    ``use``: the features that enter (the others get weight 0); ``ridge``: the share of
    each feature's own variance added to the residual covariance's diagonal (it keeps the
    inversion stable with correlated features). ValueError with fewer than 10 games.

    The noise (σ_p, σ_d, σ_m) is measured **out of fold**: each event's games (``GameSample.event``)
    are scored by a fit on the other events (``noise_folds`` None; or the events dealt into that
    many folds; 0 or 1: in sample), so that the interval also holds the error of the fitted lines
    themselves at a player's rating and an event's own shift (in sample, σ_p came out at half of
    what unseen events show). ``by_level``: also fit how the noise scales with the player's level
    (:attr:`QualityModel.noise_level`; False: one pooled noise). ``opponents``: also fit the joint reading of a
    game's two sides (:attr:`QualityModel.joint`, from the samples' ``game``); ``calibrate_joint``: and its games' slope by
    level and the factor on one game's noise with which its out-of-fold single-game intervals shown cover 95%
    (:func:`_joint_calibration`, :attr:`JointWeights.scale`);
    ``level_bias``: and the out-of-fold errors' trend by level, taken off the point (:attr:`QualityModel.level_bias`);
    ``joint_level``: the joint reading's noise by level fitted on its own out-of-fold errors
    (:attr:`JointWeights.noise_level`; False: the single side's).

    >>> rng = np.random.default_rng(1)
    >>> games = []
    >>> for i in range(300):
    ...     elo = 1400 + 5 * i
    ...     f = rng.normal(0, 1, (30, len(FEATURES))) + (elo - 2000) / 1000
    ...     games.append(GameSample(elo, i // 3, f))
    >>> m = fit_quality_model(games, "sim")
    >>> abs(m.score(QualityStats(tuple(int(30 * FIXED) for _ in FEATURES), 30, 1)) - 3000) < 100
    True
    >>> m.sigma_persist >= fit_quality_model(games, "sim", noise_folds=0).sigma_persist
    True
    """
    if len(samples) < 10:
        raise ValueError("fit_quality_model: fewer than 10 games")
    keep = np.array([name in use for name in FEATURES])
    means = np.array([s.features.mean(axis=0) for s in samples])
    intercept, w, lo, hi = _fit_weights(samples, keep, ridge, by_event, means)
    scores: list[tuple[float, np.ndarray]] = [(intercept, w)] * len(samples)
    pairs = _opponents(samples) if opponents else [None] * len(samples)
    paired = any(j is not None for j in pairs)
    joint = _fit_joint(samples, pairs, keep, ridge, means) if paired else None
    joint_scores: list[Joint | None] = [joint] * len(samples)
    groups = [s.player_event if s.event is None else s.event for s in samples]
    size: dict[Hashable, int] = {}
    for g in groups:
        size[g] = size.get(g, 0) + 1
    folds = len(size) if noise_folds is None else noise_folds
    if folds > 1 and len(size) >= folds:
        # deal the groups, largest first, round the folds: each fold a share of the big events and of the small
        order = sorted(size, key=lambda g: (-size[g], str(g)))
        fold = {g: i % folds for i, g in enumerate(order)}
        which = np.array([fold[g] for g in groups])
        for f in range(folds):
            out = np.flatnonzero(which != f)
            if len(out) < 10:
                continue
            ic, wf, _, _ = _fit_weights([samples[int(i)] for i in out], keep, ridge, by_event, means[out])
            # the joint lines from the training games whose both sides are in the training fold
            kept = set(out.tolist())
            jf = _fit_joint(samples, [j if i in kept and j in kept else None for i, j in enumerate(pairs)],
                            keep, ridge, means) if paired else None
            for i in np.flatnonzero(which == f):
                scores[i] = (ic, wf)
                joint_scores[i] = jf
    sp, sdd, sm = _pooled_noise(samples, scores)
    level = _level_noise(samples, scores, (sp, sdd, sm)) if by_level else (0.0, 0.0, 0.0, 0.0)
    moves = float(np.mean([len(s.features) for s in samples]))
    elos = np.array([s.elo for s in samples], dtype=float)
    noise = _joint_noise(samples, pairs, joint_scores) if joint is not None else None
    model = QualityModel(profile, intercept, tuple(float(v) for v in w), sp, sdd, sm, lo, hi,
                         book_moves, eval_bound, FEATURES, moves, fitted_on=fitted_on, noise_level=level,
                         joint=None if joint is None or noise is None else JointWeights(*joint, *noise),
                         ratings=(float(elos.mean()), float(elos.std())) if by_level else (0.0, 0.0))
    if level_bias:
        model = dataclasses.replace(model, level_bias=_level_bias(samples, pairs, scores, joint_scores, (sp, sdd, sm),
                                                                  noise if model.joint is not None else None))
    if model.joint is not None and noise is not None and joint_level and by_level:
        model = dataclasses.replace(model, joint=dataclasses.replace(
            model.joint, noise_level=_joint_level_noise(samples, pairs, joint_scores, noise)))
    if model.joint is None or not calibrate_joint:
        return model
    return dataclasses.replace(model, joint=_joint_calibration(model, samples, pairs, joint_scores))
