"""Calibration of an engine profile: r̄_e and the map between Elo and c (docs/models.md §1, §2).

c is engine-profile specific (a deeper search makes every player look less
engine-like), so a profile needs its own map from a rating to the c expected
of a player of that rating, fitted on games of rated players. The map is used
both ways: Elo → c_r for fair-play screening (§3), c̄ → Elo to show the
apparent skill on the Elo scale. :class:`ProfileCalibration` bundles it with
the engine strength r̄_e of Algorithm 3, the two numbers a profile carries.

Two fits of the line c = a + b·Elo:

* :meth:`Calibration.fit` — least squares over per-player (Elo, c̄) pairs.
  Simple, but c̄ is a posterior mean under the uniform prior on [0, 10]: with
  few moves it is pulled towards the prior's middle and skewed, so the line
  is biased (usually flattened) and its residual spread mixes the players'
  real differences with their measurement noise.
* :meth:`Calibration.fit_decisions` — what livemon calibrates with: a
  hierarchical model fitted by maximum likelihood on every observed move.
  Player i (rating r_i) has a c_i ~ N(a + b·r_i, τ²); their moves follow
  E(c_i). The marginal likelihood of player i integrates c_i out (adaptive
  Gauss–Hermite quadrature around the mode of each player's posterior), so a
  player with 30 moves and one with 900 each count as much as their moves
  say, (a, b, τ) come out jointly, and the standard errors come from the
  Hessian of the log-likelihood. τ is the between-player spread of c at a
  given rating, net of measurement noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from livemon.rating.agent import K, Decision
from livemon.rating.gain import GainHistogram, engine_strength_terms
from livemon.rating.screening import screening_stats

_Z95 = 1.959963984540054
_GH_NODES = 16
_ELO_SCALE = 400.0  # the fit works on (Elo - mean)/400 for conditioning


@dataclass(frozen=True)
class Calibration:
    """Linear map between Elo and expected c for one engine profile: c_r = a + b·Elo.

    Fitted by :meth:`fit` (least squares on per-player c̄) or by
    :meth:`fit_decisions` (maximum likelihood on every move; ``method`` says
    which). ``n`` is the number of players, ``positions`` of moves used;
    ``elo_min``..``elo_max`` the fitted range (do not trust the map far
    outside it). ``cov_ab`` = (var a, cov(a, b), var b) of the fit. ``tau``
    is the sd of c between players of the same rating (maximum likelihood
    only); ``residual_sd`` is ``tau`` for that fit, the residual sd of c̄ for
    least squares; ``r2`` the share of the variance of c explained by Elo.

    ``z_scale`` / ``z_scale_loss``: the sd of the screening z-scores
    (:func:`livemon.rating.screening.screening_stats`, match and average loss)
    of the ``z_players`` calibration players who have enough positions, each
    scored against E(c_r) of their own rating. Under the model the z's of an
    honest player are N(0, 1) only if their c is exactly c_r; real players
    scatter around c_r (τ) and E(c) is only a model of human play, so on real
    players the z's are wider. Regan scales z by such an empirical factor so
    that a threshold keeps its nominal false-alert rate on real players;
    screening may divide z by ``z_scale``. Note the scatter's share grows with
    the number of positions (var z ≈ 1 + n·τ²·(mean ∂p0/∂c)²/(mean p0(1−p0))),
    so the factor belongs to event-sized samples like those it was measured on.

    >>> cal = Calibration.fit([(1500, 0.5), (2000, 1.0), (2500, 1.5)], profile="sf-d14")
    >>> round(cal.c_for_rating(2200), 6), round(cal.rating_for_c(0.75), 6)
    (1.2, 1750.0)
    >>> Calibration.from_dict(cal.to_dict()) == cal
    True
    """

    a: float
    b: float
    n: int
    elo_min: float
    elo_max: float
    r2: float
    residual_sd: float
    profile: str = ""
    method: str = "ols"
    positions: int = 0
    cov_ab: tuple[float, float, float] | None = None
    tau: float | None = None
    tau_se: float | None = None
    log_likelihood: float | None = None
    z_scale: float | None = None
    z_scale_loss: float | None = None
    z_players: int = 0
    book_moves: int | None = None  # the screening exclusions the fit was made with (None: not recorded)
    eval_bound: float | None = None
    tau_game: float | None = None  # sd of c of single games around the line (fit with one c per player-game)
    pool: str = "FIDE classical"  # the rating pool whose Elo the line maps to (the games' rating tags)

    @classmethod
    def fit(cls, pairs: Iterable[tuple[float, float]], profile: str = "") -> Calibration:
        """Least-squares fit of c̄ on Elo; ValueError with < 2 players or no Elo spread."""
        arr = np.asarray(list(pairs), dtype=float).reshape(-1, 2)
        if arr.shape[0] < 2:
            raise ValueError(f"Calibration.fit: need at least 2 rated players, got {arr.shape[0]}")
        elo, c = arr[:, 0], arr[:, 1]
        if not np.all(np.isfinite(arr)):
            raise ValueError("Calibration.fit: Elo and c must be finite")
        de = elo - elo.mean()
        sxx = float(de @ de)
        if sxx <= 0.0:
            raise ValueError("Calibration.fit: all players have the same Elo")
        b = float(de @ (c - c.mean())) / sxx
        a = float(c.mean()) - b * float(elo.mean())
        resid = c - (a + b * elo)
        sst = float(((c - c.mean()) ** 2).sum())
        r2 = 1.0 - float(resid @ resid) / sst if sst > 0 else 1.0
        n = arr.shape[0]
        dof = max(n - 2, 1)
        s2 = float(resid @ resid) / dof
        var_b = s2 / sxx
        mean = float(elo.mean())
        cov = (s2 / n + mean * mean * var_b, -mean * var_b, var_b)
        return cls(a, b, int(n), float(elo.min()), float(elo.max()), r2, math.sqrt(s2), profile,
                   method="ols", cov_ab=cov)

    @classmethod
    def fit_decisions(
        cls,
        players: Iterable[tuple[float, Sequence[Decision]]],
        profile: str = "",
        z_min_positions: int = 60,
    ) -> Calibration:
        """Maximum-likelihood fit of c_i ~ N(a + b·Elo_i, τ²) over every move of every rated player.

        ``players``: (Elo, decisions) per player, decisions already filtered
        (book moves, decided positions: see
        :func:`livemon.rating.screening.screening_exclusion`). Players without
        decisions are ignored. ``z_min_positions``: players with fewer
        positions are left out of ``z_scale`` (like screening's minimum).
        ValueError with fewer than 2 players, no Elo spread, or a bad Elo.

        >>> import numpy as np
        >>> from livemon.rating.agent import move_probabilities
        >>> rng = np.random.default_rng(1)
        >>> def player(elo):
        ...     c = -1.0 + 0.001 * elo
        ...     vs = [np.array([0.0, -0.2, -0.6, -1.5]) for _ in range(150)]
        ...     return elo, [Decision(tuple(v), int(rng.choice(4, p=move_probabilities(v, c)))) for v in vs]
        >>> cal = Calibration.fit_decisions([player(e) for e in range(1800, 2700, 30)])
        >>> abs(cal.b - 0.001) < 3 * math.sqrt(cal.cov_ab[2]), cal.n, cal.positions
        (True, 30, 4500)
        """
        elos: list[float] = []
        groups: list[list[Decision]] = []
        for elo, decisions in players:
            decisions = list(decisions)
            if not decisions:
                continue
            elo = float(elo)
            if not math.isfinite(elo):
                raise ValueError(f"Calibration.fit_decisions: Elo must be finite, got {elo!r}")
            elos.append(elo)
            groups.append(decisions)
        if len(elos) < 2:
            raise ValueError(f"Calibration.fit_decisions: need at least 2 rated players with moves, got {len(elos)}")
        elo_arr = np.asarray(elos)
        if float(elo_arr.max() - elo_arr.min()) <= 0.0:
            raise ValueError("Calibration.fit_decisions: all players have the same Elo")
        moves = _PackedMoves(groups)
        r0 = float(elo_arr.mean())
        x = (elo_arr - r0) / _ELO_SCALE
        model = _Marginal(moves, x)
        theta, loglik, cov = model.maximise()
        a0, b0, tau = theta
        ends = a0 + b0 * np.array([x.min(), x.max()])
        if not np.all((ends > -1.0) & (ends < 10.0)):  # the prior range of c is [0, 10]; humans are far inside
            raise ValueError("Calibration.fit_decisions: no proper maximum (c runs off to the edge: "
                             f"fitted c {ends[0]:.3g}..{ends[1]:.3g}); are the moves informative?")
        # back to c = a + b·Elo: a = a0 - b0·r0/s, b = b0/s
        jac = np.array([[1.0, -r0 / _ELO_SCALE], [0.0, 1.0 / _ELO_SCALE]])
        cov_ab = jac @ cov[:2, :2] @ jac.T
        a = float(a0 - b0 * r0 / _ELO_SCALE)
        b = float(b0 / _ELO_SCALE)
        tau_se = math.sqrt(cov[2, 2]) if cov.shape == (3, 3) and cov[2, 2] > 0 else None
        explained = b * b * float(elo_arr.var())
        r2 = float(explained / (explained + tau * tau)) if explained + tau * tau > 0 else 0.0
        cal = cls(a, b, len(elos), float(elo_arr.min()), float(elo_arr.max()), r2, float(tau), profile,
                  method="ml", positions=moves.n, cov_ab=(float(cov_ab[0, 0]), float(cov_ab[0, 1]), float(cov_ab[1, 1])),
                  tau=float(tau), tau_se=tau_se, log_likelihood=float(loglik))
        zm, zl = z_dispersion(zip(elos, groups), cal, z_min_positions)
        if zm is not None:
            cal = replace(cal, z_scale=zm[0], z_scale_loss=zl[0] if zl else None, z_players=zm[1])
        return cal

    # -- the map and its uncertainty ---------------------------------------------------------

    def c_for_rating(self, elo: float) -> float:
        """c_r expected of a player rated ``elo`` (not clipped to the prior range)."""
        return self.a + self.b * float(elo)

    def c_for_rating_se(self, elo: float) -> float | None:
        """Standard error of the fitted line at ``elo`` (None without a covariance).

        This is the uncertainty of c_r, the *mean* c at that rating; a single
        player's c scatters around it with sd ``tau`` on top.
        """
        if self.cov_ab is None:
            return None
        va, cab, vb = self.cov_ab
        e = float(elo)
        return math.sqrt(max(va + 2.0 * e * cab + e * e * vb, 0.0))

    def rating_for_c(self, c: float) -> float:
        """Elo whose expected c is ``c``; ValueError when the slope is 0."""
        if self.b == 0.0:
            raise ValueError("Calibration.rating_for_c: slope is 0, c does not determine Elo")
        return (float(c) - self.a) / self.b

    def rating_for_c_se(self, c: float) -> float | None:
        """Standard error of :meth:`rating_for_c` from the fit's (a, b) covariance (delta method)."""
        if self.cov_ab is None:
            return None
        r = self.rating_for_c(c)
        va, cab, vb = self.cov_ab
        # r = (c - a)/b: dr/da = -1/b, dr/db = -r/b
        var = (va + 2.0 * r * cab + r * r * vb) / (self.b * self.b)
        return math.sqrt(max(var, 0.0))

    def rating_interval(self, c: float, c_lo: float, c_hi: float) -> tuple[float, float]:
        """95% interval on the Elo scale of a player whose c has estimate ``c`` and 95% region [c_lo, c_hi].

        The region is mapped through the line (exact for a monotone map and an
        equal-tailed region), then each side is widened in quadrature by the
        line's own uncertainty at ``c`` (1.96·:meth:`rating_for_c_se`).

        >>> cal = Calibration(a=-1.0, b=0.001, n=50, elo_min=1800, elo_max=2600, r2=0.5, residual_sd=0.2,
        ...                   cov_ab=(0.0, 0.0, 0.0))
        >>> cal.rating_interval(1.2, 1.0, 1.5)
        (2000.0, 2500.0)
        """
        r, lo, hi = self.rating_for_c(c), self.rating_for_c(c_lo), self.rating_for_c(c_hi)
        lo, hi = min(lo, hi), max(lo, hi)
        se = self.rating_for_c_se(c) or 0.0
        w = _Z95 * se
        return r - math.hypot(r - lo, w), r + math.hypot(hi - r, w)

    def elo_scale(self, c: float, c_lo: float, c_hi: float) -> dict[str, Any] | None:
        """A c estimate on the Elo scale, as shown by ``analyse`` and the monitor; None if b <= 0.

        ``elo``: :meth:`rating_for_c`; ``cr95``: :meth:`rating_interval`;
        ``extrapolated``: the Elo lies outside the fitted range (then it is a
        straight-line guess, e.g. the 3000+ of a short flawless game).

        >>> cal = Calibration(a=-1.0, b=0.001, n=50, elo_min=1800, elo_max=2600, r2=0.5, residual_sd=0.2,
        ...                   cov_ab=(0.0, 0.0, 0.0))
        >>> cal.elo_scale(1.2, 1.0, 1.5)
        {'elo': 2200.0, 'cr95': [2000.0, 2500.0], 'extrapolated': False}
        """
        if not self.b > 0.0:
            return None
        lo, hi = self.rating_interval(c, c_lo, c_hi)
        elo = self.rating_for_c(c)
        return {"elo": elo, "cr95": [lo, hi], "extrapolated": not self.in_range(elo)}

    def in_range(self, elo: float) -> bool:
        """True when ``elo`` lies in the fitted rating range."""
        return self.elo_min <= float(elo) <= self.elo_max

    # -- storage -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        d = asdict(self)
        d["cov_ab"] = None if self.cov_ab is None else list(self.cov_ab)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Calibration:
        """Inverse of :meth:`to_dict` (older dicts without the newer keys read with their defaults)."""

        def opt(key: str) -> float | None:
            v = d.get(key)
            return None if v is None else float(v)

        cov = d.get("cov_ab")
        if cov is not None:
            if len(cov) != 3:
                raise ValueError(f"Calibration.from_dict: cov_ab needs 3 numbers, got {cov!r}")
            cov = (float(cov[0]), float(cov[1]), float(cov[2]))
        return cls(float(d["a"]), float(d["b"]), int(d["n"]), float(d["elo_min"]), float(d["elo_max"]),
                   float(d["r2"]), float(d["residual_sd"]), str(d.get("profile", "")),
                   method=str(d.get("method", "ols")), positions=int(d.get("positions", 0)), cov_ab=cov,
                   tau=opt("tau"), tau_se=opt("tau_se"), log_likelihood=opt("log_likelihood"),
                   z_scale=opt("z_scale"), z_scale_loss=opt("z_scale_loss"), z_players=int(d.get("z_players", 0)),
                   book_moves=None if d.get("book_moves") is None else int(d["book_moves"]), eval_bound=opt("eval_bound"),
                   tau_game=opt("tau_game"), pool=str(d.get("pool", "FIDE classical")))


# -- the likelihood ------------------------------------------------------------------------------


class _PackedMoves:
    """Every decision of every player in flat arrays: log distances (N, K) with a mask, played, player."""

    def __init__(self, groups: list[list[Decision]]):
        k = max(len(d.values) for g in groups for d in g)
        n = sum(len(g) for g in groups)
        self.a = np.zeros((n, k))
        self.mask = np.zeros((n, k), dtype=bool)
        self.played = np.zeros(n)
        self.player = np.zeros(n, dtype=np.intp)
        row = 0
        for i, g in enumerate(groups):
            for d in g:
                v = np.asarray(d.values)
                dist = np.log((v.max() - v + K) / K)
                self.a[row, : v.size] = dist
                self.mask[row, : v.size] = True
                self.played[row] = dist[d.played]
                self.player[row] = i
                row += 1
        self.n = n
        self.players = len(groups)
        self.a_max = self.a.max(axis=1)
        self.starts = np.concatenate(([0], np.cumsum([len(g) for g in groups])[:-1])).astype(np.intp)

    def derivatives(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per player: log-likelihood, its first and second derivative at c (one c per player, shape (P,))."""
        cn = c[self.player]
        e = np.where(self.mask, -self.a * cn[:, None], -np.inf)
        mx = e.max(axis=1)
        w = np.exp(e - mx[:, None])
        s = w.sum(axis=1)
        w /= s[:, None]
        ea = (w * self.a).sum(axis=1)
        ea2 = (w * self.a * self.a).sum(axis=1)
        ll = -cn * self.played - (mx + np.log(s))
        p = self.players
        return (np.bincount(self.player, ll, p), np.bincount(self.player, ea - self.played, p),
                np.bincount(self.player, ea * ea - ea2, p))

    def log_lik_nodes(self, c: np.ndarray) -> np.ndarray:
        """Per player log-likelihood at Q values each: c has shape (P, Q), result (P, Q)."""
        cn = c[self.player]  # (N, Q)
        # the largest exponent of a row: 0 (the best move, a = 0) for c >= 0, -c·max(a) for c < 0
        mx = np.where(cn < 0.0, -cn * self.a_max[:, None], 0.0)
        # one (N, K, Q) array, worked in place: exp(-a·c - mx), masked
        w = np.multiply(self.a[:, :, None], cn[:, None, :])
        np.negative(w, out=w)
        np.subtract(w, mx[:, None, :], out=w)
        np.exp(w, out=w)
        np.multiply(w, self.mask[:, :, None], out=w)
        lse = mx + np.log(w.sum(axis=1))
        ll = -cn * self.played[:, None] - lse
        return np.add.reduceat(ll, self.starts, axis=0)


class _Marginal:
    """log L(a0, b0, τ) = Σ_i log ∫ L_i(c) N(c; a0 + b0·x_i, τ²) dc, with its gradient."""

    def __init__(self, moves: _PackedMoves, x: np.ndarray):
        self.moves, self.x = moves, x
        self.nodes, self.weights = np.polynomial.hermite.hermgauss(_GH_NODES)
        self.mode = np.ones(moves.players)

    def _modes(self, mu: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
        """Mode of each player's log L_i(c) − (c − μ_i)²/2τ² by Newton (concave), and the curvature there."""
        m = self.mode.copy()
        inv = 1.0 / (tau * tau)
        for _ in range(60):
            _, d1, d2 = self.moves.derivatives(m)
            g1 = d1 - (m - mu) * inv
            g2 = d2 - inv
            step = -g1 / g2
            step = np.clip(step, -2.0, 2.0)
            m = m + step
            if float(np.abs(step).max()) < 1e-10:
                break
        _, _, d2 = self.moves.derivatives(m)
        self.mode = m
        return m, d2 - inv

    def value_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        a0, b0, tau = float(theta[0]), float(theta[1]), float(theta[2])
        mu = a0 + b0 * self.x
        m, g2 = self._modes(mu, tau)
        s = 1.0 / np.sqrt(-g2)
        c = m[:, None] + math.sqrt(2.0) * s[:, None] * self.nodes[None, :]
        ll = self.moves.log_lik_nodes(c)
        dev = c - mu[:, None]
        h = ll - dev * dev / (2.0 * tau * tau) + self.nodes[None, :] ** 2 + np.log(self.weights)[None, :]
        hmax = h.max(axis=1)
        post = np.exp(h - hmax[:, None])
        total = post.sum(axis=1)
        post /= total[:, None]
        log_m = hmax + np.log(total) + np.log(s / tau) - 0.5 * math.log(math.pi)
        e1 = (post * dev).sum(axis=1)
        e2 = (post * dev * dev).sum(axis=1)
        d_mu = e1 / (tau * tau)
        d_tau = e2 / tau**3 - 1.0 / tau
        grad = np.array([d_mu.sum(), (d_mu * self.x).sum(), d_tau.sum()])
        return float(log_m.sum()), grad

    def maximise(self) -> tuple[np.ndarray, float, np.ndarray]:
        """(a0, b0, τ) at the maximum, the log-likelihood there and the covariance from the Hessian."""
        # start: per-player maximum-likelihood c (clipped), then a least-squares line through them
        c_hat = np.ones(self.moves.players)
        for _ in range(50):
            _, d1, d2 = self.moves.derivatives(c_hat)
            c_hat = np.clip(c_hat - d1 / np.minimum(d2, -1e-6), 0.0, 10.0)
        slope, intercept = np.polyfit(self.x, c_hat, 1)
        resid = c_hat - (intercept + slope * self.x)
        tau0 = float(np.clip(resid.std() / 2.0, 0.05, 2.0))
        self.mode = c_hat.copy()

        def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = self.value_grad(theta)
            return -value, -grad

        tau_min = 1e-4
        import scipy.optimize  # here: scipy.optimize costs every process's start, and only the fit needs it
        res = scipy.optimize.minimize(objective, np.array([intercept, slope, tau0]), jac=True, method="L-BFGS-B",
                                      bounds=[(None, None), (None, None), (tau_min, 20.0)],
                                      options={"maxiter": 500, "ftol": 1e-13, "gtol": 1e-7})
        theta = res.x
        loglik, _ = self.value_grad(theta)
        boundary = theta[2] <= tau_min * 1.01
        free = 2 if boundary else 3
        hess = np.zeros((free, free))
        for j in range(free):
            step = 1e-5 * max(1.0, abs(theta[j]))
            if j == 2:
                step = min(step, 0.25 * theta[2])
            up, down = theta.copy(), theta.copy()
            up[j] += step
            down[j] -= step
            hess[:, j] = (self.value_grad(up)[1][:free] - self.value_grad(down)[1][:free]) / (2.0 * step)
        hess = 0.5 * (hess + hess.T)
        try:
            cov = np.linalg.inv(-hess)
        except np.linalg.LinAlgError as exc:
            raise ValueError("Calibration.fit_decisions: the likelihood is flat (singular Hessian)") from exc
        if not np.all(np.diag(cov) > 0):
            raise ValueError("Calibration.fit_decisions: no proper maximum (Hessian not negative definite)")
        return theta, loglik, cov


# -- helpers over players -----------------------------------------------------------------------


def pooled_c(decisions: Sequence[Decision]) -> tuple[float, float]:
    """Maximum-likelihood common c of a set of moves and its standard error (Fisher information).

    >>> best, worse = Decision((0.0, -0.5), played=0), Decision((0.0, -0.5), played=1)
    >>> c, se = pooled_c([best] * 24 + [worse] * 6)   # 6^-c = 6/24: c = log 4 / log 6
    >>> round(c, 4), round(math.log(4) / math.log(6), 4)
    (0.7737, 0.7737)
    """
    if not decisions:
        raise ValueError("pooled_c: no decisions")
    moves = _PackedMoves([list(decisions)])
    c = np.ones(1)
    for _ in range(100):
        _, d1, d2 = moves.derivatives(c)
        step = float(np.clip(-d1[0] / min(float(d2[0]), -1e-9), -2.0, 2.0))
        c = np.clip(c + step, -5.0, 50.0)
        if abs(step) < 1e-12:
            break
    _, _, d2 = moves.derivatives(c)
    info = -float(d2[0])
    return float(c[0]), (1.0 / math.sqrt(info) if info > 0 else math.inf)


def z_dispersion(
    players: Iterable[tuple[float, Sequence[Decision]]], cal: Calibration, min_positions: int = 60
) -> tuple[tuple[float, int] | None, tuple[float, int] | None]:
    """sd of the screening z (match, average loss) over players with ≥ ``min_positions``, each at their c_r.

    Returns ((sd, players), (sd, players)), or None for a statistic with fewer
    than 10 players with a finite z.
    """
    zm: list[float] = []
    zl: list[float] = []
    for elo, decisions in players:
        decisions = list(decisions)
        if len(decisions) < min_positions:
            continue
        st = screening_stats("", decisions, cal.c_for_rating(elo))
        if math.isfinite(st.z_match):
            zm.append(st.z_match)
        if math.isfinite(st.z_loss):
            zl.append(st.z_loss)

    def sd(zs: list[float]) -> tuple[float, int] | None:
        return (float(np.std(zs, ddof=1)), len(zs)) if len(zs) >= 10 else None

    return sd(zm), sd(zl)


def _match_terms(moves: _PackedMoves, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per player at c (one per player, clipped at 0 as screening clips c_r): observed top-move matches,
    expected matches Σ p0_t and its derivative Σ ∂p0_t/∂c."""
    cn = np.maximum(c, 0.0)[moves.player]
    w = np.where(moves.mask, np.exp(-moves.a * cn[:, None]), 0.0)
    s = w.sum(axis=1)
    top = ((moves.a == 0.0) & moves.mask).sum(axis=1)
    p0 = top / s
    dp0 = p0 * (w * moves.a).sum(axis=1) / s
    p = moves.players
    matched = (moves.played == 0.0).astype(float)
    return np.bincount(moves.player, matched, p), np.bincount(moves.player, p0, p), np.bincount(moves.player, dp0, p)


def _packed(players: Iterable[tuple[float, Sequence[Decision]]]) -> tuple[_PackedMoves, np.ndarray]:
    elos, groups = [], []
    for elo, decisions in players:
        decisions = list(decisions)
        if decisions:
            elos.append(float(elo))
            groups.append(decisions)
    if not groups:
        raise ValueError("no player with decisions")
    return _PackedMoves(groups), np.asarray(elos)


def match_shift(players: Iterable[tuple[float, Sequence[Decision]]], a: float, b: float) -> float:
    """δ such that E(a + b·Elo + δ) expects as many top-move matches as these players made.

    The one-parameter E(c) fitted by likelihood on every move (``a``, ``b``)
    under-predicts how often real players take the engine's first choice (the
    screening z of honest players has a positive mean, growing with √n); moving
    c_r by δ makes the match statistic's expectation right on the fit players
    (Regan fits his screening parameters on the match rate the same way).

    >>> from livemon.rating.agent import move_probabilities
    >>> rng = np.random.default_rng(3)
    >>> vs = [np.array([0.0, -0.2, -0.6]) for _ in range(3000)]
    >>> ds = [Decision(tuple(v), int(rng.choice(3, p=move_probabilities(v, 1.2)))) for v in vs]
    >>> round(match_shift([(2000.0, ds)], a=-1.0, b=0.001), 1)   # c_r 1.0, plays like 1.2
    0.2
    """
    import scipy.optimize

    moves, elo = _packed(players)
    base = a + b * elo
    observed = _match_terms(moves, base)[0].sum()

    def gap(d: float) -> float:
        return float(_match_terms(moves, base + d)[1].sum() - observed)

    lo, hi = -2.0, 2.0
    if gap(lo) > 0.0 or gap(hi) < 0.0:
        raise ValueError("match_shift: no shift within ±2 matches the observed top-move rate")
    return float(scipy.optimize.brentq(gap, lo, hi, xtol=1e-10))


def match_moment_line(players: Iterable[tuple[float, Sequence[Decision]]], a: float, b: float) -> tuple[float, float]:
    """The line (a, b) whose E(c_r) expects the observed top-move matches, in total and weighted by Elo.

    Solves Σ_i (M_i − Σ_t p0_t(a + b·r_i)) = 0 and Σ_i r_i·(M_i − …) = 0 by
    Newton's method from (``a``, ``b``): a line fitted to the match statistic
    itself (method of moments) rather than by likelihood over all moves.
    """
    moves, elo = _packed(players)
    r0 = float(elo.mean())
    x = (elo - r0) / _ELO_SCALE
    theta = np.array([a + b * r0, b * _ELO_SCALE])
    for _ in range(50):
        m, e, de = _match_terms(moves, theta[0] + theta[1] * x)
        g = np.array([(m - e).sum(), (x * (m - e)).sum()])
        jac = -np.array([[de.sum(), (de * x).sum()], [(de * x).sum(), (de * x * x).sum()]])
        step = np.linalg.solve(jac, -g)
        theta = theta + np.clip(step, -1.0, 1.0)
        if float(np.abs(step).max()) < 1e-10:
            break
    return float(theta[0] - theta[1] * r0 / _ELO_SCALE), float(theta[1] / _ELO_SCALE)


def engine_strength_fit(players: Iterable[tuple[float | None, GainHistogram]]) -> tuple[float, float | None, int] | None:
    """Algorithm 3's r̄_e = mean_i (r_i − d_i) with its standard error and the number of players used.

    Same rule as :func:`livemon.rating.gain.engine_strength` (unrated, empty
    and infinite-d players skipped); the se is sd/√n (None with one player).

    >>> h = GainHistogram.from_gains([0, -10, -25, 4])   # p = 0.375
    >>> r, se, n = engine_strength_fit([(2500.0, h), (2400.0, h)])
    >>> round(r, 3), round(se, 3), n
    (2540.125, 50.0, 2)
    """
    vals = engine_strength_terms(players)
    if not vals:
        return None
    se = float(np.std(vals, ddof=1)) / math.sqrt(len(vals)) if len(vals) > 1 else None
    return float(np.mean(vals)), se, len(vals)


@dataclass(frozen=True)
class ProfileCalibration:
    """What is known of one engine profile: r̄_e (Elo), the Elo ↔ c map, the performance map; any may be missing.

    ``c_map`` is fitted on the positions screening uses (book moves and decided
    positions left out): screening's c_r and c-Elo read it. ``performance`` is
    fitted on every non-forced move (book and decided positions carry rating
    signal too): the E(c) performance estimate (a diagnostic) reads it, and falls back to
    ``c_map`` when a profile has none.

    >>> pc = ProfileCalibration("sf d12", engine_strength=2950.0)
    >>> ProfileCalibration.from_dict(pc.to_dict()) == pc
    True
    """

    profile: str
    engine_strength: float | None = None
    c_map: Calibration | None = None
    performance: Calibration | None = None

    @property
    def performance_map(self) -> Calibration | None:
        """The calibration the performance estimate uses: its own, else the screening one."""
        return self.performance or self.c_map

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        d: dict[str, Any] = {"profile": self.profile, "engine_strength": self.engine_strength,
                             "c_map": None if self.c_map is None else self.c_map.to_dict()}
        if self.performance is not None:
            d["performance"] = self.performance.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProfileCalibration:
        """Inverse of :meth:`to_dict`."""
        c_map, perf = d.get("c_map"), d.get("performance")
        strength = d.get("engine_strength")
        return cls(str(d["profile"]), None if strength is None else float(strength),
                   None if c_map is None else Calibration.from_dict(c_map),
                   None if perf is None else Calibration.from_dict(perf))
