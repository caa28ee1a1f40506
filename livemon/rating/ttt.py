"""TrueSkill Through Time (TTT) and TTT with per-player draw margins (TTT-D).

The model of docs/models.md §4 (Dangauthier, Herbrich, Minka, Graepel, NIPS 2007): each
player has a skill per time step, linked along the player's history by a
Gaussian drift whose variance grows with the elapsed time; a game compares two
performances ``N(skill, β²)``; a draw margin turns the difference into win,
draw or loss.  Inference is expectation propagation (EP) with one Gaussian
message per game and player, compiled with numba and swept over the time
steps forward and backward until no posterior mean or sd moves by more than
the tolerance.  Pure: no files, no printing; progress goes to a callback.

Choices the papers leave open, written down here:

* **Time steps.** Games with the same step value form one batch (as in the
  ``trueskillthroughtime`` package); the drift variance between a player's
  consecutive steps is ``τ²·(t' − t)``.
* **The slow common shift.** Game factors see only skill differences within
  a time step, so the level of each step is pinned only by first-step priors
  and drifts, and plain sweeps crawl along these modes (the package stops 0.1
  off after 30 sweeps).  The energy along "shift every skill of step b by
  f_b" is quadratic with a fixed sparse Hessian (priors plus drift
  precisions), and its gradient is exactly zero at the EP fixed point (every
  game exerts equal and opposite forces on its two players).  After each
  sweep the Newton step f is applied to the game messages and the chains are
  re-propagated; at the fixed point f = 0, so the fixed point is unchanged
  (``accelerate=False`` gives plain sweeps; tests check both agree).
* **Log-evidence** is the package's: the sum over games of the log
  probability of the observed result under the game's cavity (posterior
  without that game's own message) at the fixed point.
* **Refresh.** :func:`refresh` with games at or after the last time step
  (a running event) extends the fit's structure in place of rebuilding it and
  sweeps only what moves: a node is visited when a neighbour's drift message
  to it changed, a game when a posterior it reads moved by more than the
  tolerance since it last read it, with the common-shift step between such
  sweeps (bench/ttt.py --refresh: 1/74 of a cold fit's sweeps at 1M games,
  posteriors within 2e-6 of it at tolerance 1e-6).  Other refreshes (earlier
  dates, TTT-D) continue full sweeps from the previous messages.
* **TTT-D.** ``a`` beats ``b`` iff ``p_a − p_b > ε_b``; a draw is
  ``−ε_a ≤ p_a − p_b ≤ ε_b``.  A win is one half-space factor on
  ``(s_a, s_b, ε_b)``; a draw is *one* site on ``(s_a, s_b, ε_a, ε_b)`` whose
  moments are those of a bivariate Gaussian orthant (Genz's bivariate normal
  and Tallis' moments), so that with ``ζ0, ζ → 0`` and ``ν0 = ε`` it is exactly
  TTT's two-sided truncation.  Positivity of each ``ε_i^t`` is an EP site
  ``I(ε > 0)``.  Where the orthant probability underflows (results that are
  impossible by hundreds of sds) the draw update is skipped.

Example — three players, one result per day::

    >>> games = make_games(["a", "b", "a"], ["b", "c", "c"], [0, 1, 2], [1.0, 0.5, 1.0])
    >>> result = fit(games, TTTParams(p_draw=0.25))
    >>> result.converged
    True
    >>> curves = result.curves()
    >>> curves["a"][-1]["mu"] > curves["c"][-1]["mu"]
    True
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np
from numba import njit

from livemon.rating.ttt_params import TIME_UNITS, TTTParams, draw_margin

_DEFAULT_PARAMS = TTTParams()

__all__ = [
    "TIME_UNITS",
    "TTTParams",
    "GameData",
    "TTTFit",
    "draw_margin",
    "time_steps",
    "make_games",
    "fit",
    "refresh",
    "search_parameters",
    "win_moments",
    "draw_moments",
]


Priors = Mapping[Any, tuple[float, float]]
"""Player label → (mu, sigma) of the prior at their first time step (any hashable label; Any: Mapping's key is invariant)."""

ProgressCallback = Callable[[int, float], None]
"""Called after every sweep with (sweeps so far, largest change of that sweep)."""

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

# ---------------------------------------------------------------------------
# Truncated Gaussian moments, stable in log space
# ---------------------------------------------------------------------------


@njit(cache=True)
def _mills_tail(x: float) -> float:
    """K(x) with Q(x)/φ(x) = 1/(x + K(x)) for x ≥ 5 (continued fraction, no cancellation)."""
    k = 0.0
    for n in range(80, 0, -1):
        k = n / (x + k)
    return k


@njit(cache=True)
def _log_ndtr(t: float) -> float:
    """log Φ(t) for any t without underflow."""
    if t > 0.0:
        return math.log1p(-0.5 * math.erfc(t / _SQRT2))
    if t > -5.0:
        return math.log(0.5 * math.erfc(-t / _SQRT2))
    x = -t
    return -0.5 * x * x - _LOG_SQRT_2PI - math.log(x + _mills_tail(x))


@njit(cache=True)
def _win(t: float) -> tuple[float, float, float]:
    """(v, w, log Z) of N(0,1) truncated to x > −t: mean v, variance 1 − w, mass Z = Φ(t)."""
    if t >= -5.0:
        if t > 38.0:
            return 0.0, 0.0, 0.0
        cdf = 0.5 * math.erfc(-t / _SQRT2)
        v = math.exp(-0.5 * t * t - _LOG_SQRT_2PI) / cdf
        w = v * (v + t)
        return v, min(max(w, 0.0), 1.0), _log_ndtr(t)
    x = -t
    k = _mills_tail(x)
    v = x + k
    w = v * k
    return v, min(max(w, 0.0), 1.0), -0.5 * x * x - _LOG_SQRT_2PI - math.log(x + k)


@njit(cache=True)
def _draw(lo: float, hi: float) -> tuple[float, float, float]:
    """(v, w, log Z) of N(0,1) truncated to [lo, hi]: mean v, variance 1 − w, mass Z."""
    sign = 1.0
    if lo + hi < 0.0:
        lo, hi = -hi, -lo
        sign = -1.0
    if hi <= lo:
        return 0.0, 1.0, -math.inf
    if lo <= 0.0:
        z = 0.5 * (math.erf(hi / _SQRT2) - math.erf(lo / _SQRT2))
        log_z = math.log(z)
        phi_lo = math.exp(-0.5 * lo * lo - _LOG_SQRT_2PI)
        phi_hi = math.exp(-0.5 * hi * hi - _LOG_SQRT_2PI)
        v = (phi_lo - phi_hi) / z
        u = (lo * phi_lo - hi * phi_hi) / z
    else:
        log_q_lo = _log_ndtr(-lo)
        log_q_hi = _log_ndtr(-hi)
        log_z = log_q_lo + math.log(-math.expm1(log_q_hi - log_q_lo))
        log_phi_lo = -0.5 * lo * lo - _LOG_SQRT_2PI
        ratio = math.exp(-0.5 * (hi - lo) * (hi + lo))  # φ(hi)/φ(lo)
        scale = math.exp(log_phi_lo - log_z)
        v = scale * (-math.expm1(-0.5 * (hi - lo) * (hi + lo)))
        u = scale * (lo - hi * ratio)
    var = 1.0 + u - v * v
    var = min(max(var, 0.0), 1.0)
    return sign * v, 1.0 - var, log_z


# Gauss-Legendre nodes/weights on [-1, 1] (half sets) for Genz's bivariate normal.
_GL_W = (
    np.array([0.1713244923791705, 0.3607615730481384, 0.4679139345726904]),
    np.array([0.04717533638651177, 0.1069393259953183, 0.1600783285433464,
              0.2031674267230659, 0.2334925365383547, 0.2491470458134029]),
    np.array([0.01761400713915212, 0.04060142980038694, 0.06267204833410906,
              0.08327674157670475, 0.1019301198172404, 0.1181945319615184,
              0.1316886384491766, 0.1420961093183821, 0.1491729864726037,
              0.1527533871307259]),
)
_GL_X = (
    np.array([0.9324695142031522, 0.6612093864662647, 0.2386191860831970]),
    np.array([0.9815606342467191, 0.9041172563704750, 0.7699026741943050,
              0.5873179542866171, 0.3678314989981802, 0.1252334085114692]),
    np.array([0.9931285991850949, 0.9639719272779138, 0.9122344282513259,
              0.8391169718222188, 0.7463319064601508, 0.6360536807265150,
              0.5108670019508271, 0.3737060887154196, 0.2277858511416451,
              0.07652652113349733]),
)
_GL_W6, _GL_W12, _GL_W20 = _GL_W
_GL_X6, _GL_X12, _GL_X20 = _GL_X


@njit(cache=True)
def _phid(x: float) -> float:
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True)
def _bvnu(h: float, k: float, r: float) -> float:
    """P(X > h, Y > k) for a standard bivariate normal with correlation r (Genz's BVNU)."""
    if r == 0.0:
        return _phid(-h) * _phid(-k)
    two_pi = 2.0 * math.pi
    hk = h * k
    bvn = 0.0
    ar = abs(r)
    if ar < 0.3:
        ws, xs = _GL_W6, _GL_X6
    elif ar < 0.75:
        ws, xs = _GL_W12, _GL_X12
    else:
        ws, xs = _GL_W20, _GL_X20
    n = ws.shape[0]
    if ar < 0.925:
        hs = (h * h + k * k) / 2.0
        asr = math.asin(r) / 2.0
        for i in range(n):
            for sgn in (-1.0, 1.0):
                sn = math.sin(asr * (1.0 + sgn * xs[i]))
                bvn += ws[i] * math.exp((sn * hk - hs) / (1.0 - sn * sn))
        bvn = bvn * asr / two_pi + _phid(-h) * _phid(-k)
    else:
        if r < 0.0:
            k = -k
            hk = -hk
        if ar < 1.0:
            as_ = (1.0 - r) * (1.0 + r)
            a = math.sqrt(as_)
            bs = (h - k) ** 2
            asr = -(bs / as_ + hk) / 2.0
            c = (4.0 - hk) / 8.0
            d = (12.0 - hk) / 80.0
            if asr > -100.0:
                bvn = a * math.exp(asr) * (1.0 - c * (bs - as_) * (1.0 - d * bs) / 3.0 + c * d * as_ * as_)
            if hk > -100.0:
                b = math.sqrt(bs)
                sp = math.sqrt(two_pi) * _phid(-b / a)
                bvn = bvn - math.exp(-hk / 2.0) * sp * b * (1.0 - c * bs * (1.0 - d * bs) / 3.0)
            a = a / 2.0
            acc = 0.0
            for i in range(n):
                for sgn in (-1.0, 1.0):
                    xx = (a * (1.0 + sgn * xs[i])) ** 2
                    asr_i = -(bs / xx + hk) / 2.0
                    if asr_i > -100.0:
                        sp = 1.0 + c * xx * (1.0 + 5.0 * d * xx)
                        rs = math.sqrt(1.0 - xx)
                        ep = math.exp(-(hk / 2.0) * xx / (1.0 + rs) ** 2) / rs
                        acc += ws[i] * math.exp(asr_i) * (sp - ep)
            bvn = (a * acc - bvn) / two_pi
        if r > 0.0:
            bvn = bvn + _phid(-max(h, k))
        elif h >= k:
            bvn = -bvn
        else:
            if h < 0.0:
                low = _phid(k) - _phid(h)
            else:
                low = _phid(-h) - _phid(-k)
            bvn = low - bvn
    return min(max(bvn, 0.0), 1.0)


def win_moments(t: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(v, w, log Φ(t)) of a standard normal truncated to ``x > −t``, elementwise.

    The truncated mean is ``v`` and the variance ``1 − w``; finite for any t.

    >>> v, w, log_z = win_moments(np.array([-1e6, 0.0, 1e6]))
    >>> bool(np.all(np.isfinite(v)) and np.all((w >= 0) & (w <= 1)))
    True
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    out = np.empty((3, t.size))
    for i, x in enumerate(t.ravel()):
        out[:, i] = _win(float(x))
    return out[0], out[1], out[2]


def draw_moments(lo: np.ndarray | float, hi: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(v, w, log Z) of a standard normal truncated to ``[lo, hi]``, elementwise."""
    lo, hi = np.broadcast_arrays(np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float)))
    out = np.empty((3, lo.size))
    for i, (a, b) in enumerate(zip(lo.ravel(), hi.ravel())):
        out[:, i] = _draw(float(a), float(b))
    return out[0], out[1], out[2]


# ---------------------------------------------------------------------------
# EP kernels
# ---------------------------------------------------------------------------
# Node state S (skill), columns: fwd tau, fwd pi, bwd tau, bwd pi, lik tau, lik pi.
# Margin state E (TTT-D only), same six columns plus positivity-site tau, pi.
# Game messages G, columns: tau, pi to node a; tau, pi to node b; then the same
# for the margins of a and b (TTT-D).  Node a is the winner (or White in a draw).


@njit(cache=True)
def _post(S: np.ndarray, n: int) -> tuple[float, float]:
    return S[n, 0] + S[n, 2] + S[n, 4], S[n, 1] + S[n, 3] + S[n, 5]


@njit(cache=True)
def _post_margin(E: np.ndarray, n: int) -> tuple[float, float]:
    return E[n, 0] + E[n, 2] + E[n, 4] + E[n, 6], E[n, 1] + E[n, 3] + E[n, 5] + E[n, 7]


@njit(cache=True)
def _set_msg(S: np.ndarray, n: int, col: int, G: np.ndarray, g: int, gcol: int | np.int64, tau: float,
             pi: float) -> float:
    """Replace game g's message (G[g, gcol:gcol+2]) to node n, keeping the node's product in S[n, col:col+2]."""
    change = max(abs(tau - G[g, gcol]), abs(pi - G[g, gcol + 1]))
    S[n, col] += tau - G[g, gcol]
    S[n, col + 1] += pi - G[g, gcol + 1]
    G[g, gcol] = tau
    G[g, gcol + 1] = pi
    return change


@njit(cache=True)
def _skill_messages(S, G, g, na, nb, mu_a, var_a, mu_b, var_b, c, v, w):
    """Game g's messages to both skills after truncating d = s_a − s_b (total variance c) with moments (v, w).

    The one EP step of TTT's win and draw, and of TTT-D's win and its draw with known margins.
    """
    sc = math.sqrt(c)
    den_a = c - var_a * w
    den_b = c - var_b * w
    # np.int64 and np.bool_, not literals, where a kernel calls another with values that differ between its callers:
    # numba compiles the callee again for each literal value (compile_kernels: 23 s of CPU with literals, 16 without)
    # (col, 4 at every call, stays a literal)
    ch = _set_msg(S, na, 4, G, g, np.int64(0), w / den_a * mu_a + sc * v / den_a, w / den_a)
    return max(ch, _set_msg(S, nb, 4, G, g, np.int64(2), w / den_b * mu_b - sc * v / den_b, w / den_b))


@njit(cache=True)
def _update_game(g, na, nb, res, S, E, G, beta2, margin, is_d, apply):
    """One EP update of game g; returns (largest message change, log P(result | cavity))."""
    tau_a, pi_a = _post(S, na)
    tau_b, pi_b = _post(S, nb)
    pi_a -= G[g, 1]
    tau_a -= G[g, 0]
    pi_b -= G[g, 3]
    tau_b -= G[g, 2]
    var_a = 1.0 / pi_a
    var_b = 1.0 / pi_b
    mu_a = tau_a * var_a
    mu_b = tau_b * var_b
    v_d = var_a + var_b + beta2
    m_d = mu_a - mu_b
    if not is_d:
        sc = math.sqrt(v_d)
        if res == 1:
            v, w, log_z = _win((m_d - margin) / sc)
        else:
            v, w, log_z = _draw((-margin - m_d) / sc, (margin - m_d) / sc)
        if not apply:
            return 0.0, log_z
        return _skill_messages(S, G, g, na, nb, mu_a, var_a, mu_b, var_b, v_d, v, w), log_z
    # TTT-D: cavities of the two margins
    tea, pea = _post_margin(E, na)
    teb, peb = _post_margin(E, nb)
    pea -= G[g, 5]
    tea -= G[g, 4]
    peb -= G[g, 7]
    teb -= G[g, 6]
    var_ea = 1.0 / pea
    var_eb = 1.0 / peb
    mu_ea = tea * var_ea
    mu_eb = teb * var_eb
    if res == 1:
        c = v_d + var_eb
        sc = math.sqrt(c)
        v, w, log_z = _win((m_d - mu_eb) / sc)
        if not apply:
            return 0.0, log_z
        ch = _skill_messages(S, G, g, na, nb, mu_a, var_a, mu_b, var_b, c, v, w)
        den_e = c - var_eb * w
        ch = max(ch, _set_msg(E, nb, 4, G, g, np.int64(6), w / den_e * mu_eb - sc * v / den_e, w / den_e))
        return ch, log_z
    # draw: z1 = d + ε_a ≥ 0 and z2 = ε_b − d ≥ 0, one joint site
    s1 = v_d + var_ea
    s2 = v_d + var_eb
    det = v_d * (var_ea + var_eb) + var_ea * var_eb
    one_minus_r2 = det / (s1 * s2)
    if one_minus_r2 < 1e-9:
        # margins known: TTT's two-sided truncation on d, no information to the margins
        sc = math.sqrt(v_d)
        v, w, log_z = _draw((-mu_ea - m_d) / sc, (mu_eb - m_d) / sc)
        if not apply or not math.isfinite(log_z):
            return 0.0, log_z
        return _skill_messages(S, G, g, na, nb, mu_a, var_a, mu_b, var_b, v_d, v, w), log_z
    m1 = m_d + mu_ea
    m2 = mu_eb - m_d
    sd1 = math.sqrt(s1)
    sd2 = math.sqrt(s2)
    h = -m1 / sd1
    k = -m2 / sd2
    r = -v_d / (sd1 * sd2)
    prob = _bvnu(h, k, r)
    if prob < 1e-280:
        return 0.0, math.log(max(prob, 1e-300))
    log_z = math.log(prob)
    if not apply:
        return 0.0, log_z
    sr = math.sqrt(one_minus_r2)
    big_a = (k - r * h) / sr
    big_b = (h - r * k) / sr
    ph = math.exp(-0.5 * h * h - _LOG_SQRT_2PI)
    pk = math.exp(-0.5 * k * k - _LOG_SQRT_2PI)
    qa = _phid(-big_a)
    qb = _phid(-big_b)
    f = ph * math.exp(-0.5 * big_a * big_a - _LOG_SQRT_2PI)
    ex = (ph * qa + r * pk * qb) / prob
    ey = (pk * qb + r * ph * qa) / prob
    exx = 1.0 + (h * ph * qa + r * r * k * pk * qb + r * sr * f) / prob
    eyy = 1.0 + (k * pk * qb + r * r * h * ph * qa + r * sr * f) / prob
    exy = r + (r * h * ph * qa + r * k * pk * qb + sr * f) / prob
    # shift and shrinkage of (z1, z2) in original units
    dz1 = sd1 * ex
    dz2 = sd2 * ey
    dS11 = s1 * (1.0 - (exx - ex * ex))
    dS22 = s2 * (1.0 - (eyy - ey * ey))
    dS12 = sd1 * sd2 * (r - (exy - ex * ey))
    # inverse covariance of z: [[s2, v_d], [v_d, s1]] / det
    ch = 0.0
    for which in range(4):
        if which == 0:
            c1, c2, mu, var, tgt, col, gcol = var_a, -var_a, mu_a, var_a, 0, 4, 0
        elif which == 1:
            c1, c2, mu, var, tgt, col, gcol = -var_b, var_b, mu_b, var_b, 0, 4, 2
        elif which == 2:
            c1, c2, mu, var, tgt, col, gcol = var_ea, 0.0, mu_ea, var_ea, 1, 4, 4
        else:
            c1, c2, mu, var, tgt, col, gcol = 0.0, var_eb, mu_eb, var_eb, 1, 4, 6
        g1 = (s2 * c1 + v_d * c2) / det
        g2 = (v_d * c1 + s1 * c2) / det
        mean_new = mu + g1 * dz1 + g2 * dz2
        var_new = var - (g1 * g1 * dS11 + 2.0 * g1 * g2 * dS12 + g2 * g2 * dS22)
        if not (var_new > 0.0) or not math.isfinite(mean_new):
            continue
        pi_new = max(1.0 / var_new - 1.0 / var, 0.0)
        tau_new = mean_new / var_new - mu / var
        if tgt == 0:
            node = na if which == 0 else nb
            ch = max(ch, _set_msg(S, node, col, G, g, gcol, tau_new, pi_new))
        else:
            node = na if which == 2 else nb
            ch = max(ch, _set_msg(E, node, col, G, g, gcol, tau_new, pi_new))
    return ch, log_z


@njit(cache=True)
def _positivity(E: np.ndarray, n: int) -> None:
    """EP site I(ε > 0) on the margin of node n."""
    tau, pi = _post_margin(E, n)
    pi -= E[n, 7]
    tau -= E[n, 6]
    var = 1.0 / pi
    mu = tau * var
    sd = math.sqrt(var)
    v, w, _ = _win(mu / sd)
    w = min(w, 1.0 - 1e-12)
    den = var * (1.0 - w)
    E[n, 6] = w / den * mu + sd * v / den
    E[n, 7] = w / den


@njit(cache=True)
def _drift_msg(tau: float, pi: float, drift_var: float) -> tuple[float, float]:
    """Message (tau, pi) after adding drift variance to a Gaussian given by (tau, pi)."""
    if pi <= 0.0:
        return 0.0, 0.0
    var = 1.0 / pi + drift_var
    return tau / pi / var, 1.0 / var


@njit(cache=True)
def _forward_node(n, S, E, node_prev, node_player, node_elapsed, prior_tau, prior_pi, tau2, is_d, nu_tau, nu_pi, zeta2):
    p = node_prev[n]
    if p < 0:
        S[n, 0] = prior_tau[node_player[n]]
        S[n, 1] = prior_pi[node_player[n]]
        if is_d:
            E[n, 0] = nu_tau
            E[n, 1] = nu_pi
    else:
        S[n, 0], S[n, 1] = _drift_msg(S[p, 0] + S[p, 4], S[p, 1] + S[p, 5], tau2 * node_elapsed[n])
        if is_d:
            E[n, 0], E[n, 1] = _drift_msg(E[p, 0] + E[p, 4] + E[p, 6], E[p, 1] + E[p, 5] + E[p, 7], zeta2 * node_elapsed[n])


@njit(cache=True)
def _backward_node(n, S, E, node_next, node_elapsed, tau2, is_d, zeta2):
    q = node_next[n]
    if q < 0:
        S[n, 2] = 0.0
        S[n, 3] = 0.0
        if is_d:
            E[n, 2] = 0.0
            E[n, 3] = 0.0
    else:
        S[n, 2], S[n, 3] = _drift_msg(S[q, 2] + S[q, 4], S[q, 3] + S[q, 5], tau2 * node_elapsed[q])
        if is_d:
            E[n, 2], E[n, 3] = _drift_msg(E[q, 2] + E[q, 4] + E[q, 6], E[q, 3] + E[q, 5] + E[q, 7], zeta2 * node_elapsed[q])


@njit(cache=True)
def _batch_games(b, batch_node_start, batch_game_start, batch_repeat, game_na, game_nb, game_res,
                 S, E, G, beta2, margin, is_d, inner_passes, tolerance):
    """Update the games of batch b, repeating while players meet several times and messages move."""
    passes = inner_passes if batch_repeat[b] else 1
    updates = 0
    for _ in range(passes):
        if is_d:
            for n in range(batch_node_start[b], batch_node_start[b + 1]):
                _positivity(E, n)
        ch = 0.0
        for g in range(batch_game_start[b], batch_game_start[b + 1]):
            c, _ = _update_game(g, game_na[g], game_nb[g], game_res[g], S, E, G, beta2, margin, is_d, np.bool_(True))
            ch = max(ch, c)
        updates += batch_game_start[b + 1] - batch_game_start[b]
        if ch < tolerance:
            break
    return updates


@njit(cache=True)
def _recompute_products(S, E, G, game_na, game_nb, is_d):
    """Rebuild each node's product of game messages from scratch (no drift of rounding)."""
    S[:, 4] = 0.0
    S[:, 5] = 0.0
    if is_d:
        E[:, 4] = 0.0
        E[:, 5] = 0.0
    for g in range(G.shape[0]):
        S[game_na[g], 4] += G[g, 0]
        S[game_na[g], 5] += G[g, 1]
        S[game_nb[g], 4] += G[g, 2]
        S[game_nb[g], 5] += G[g, 3]
        if is_d:
            E[game_na[g], 4] += G[g, 4]
            E[game_na[g], 5] += G[g, 5]
            E[game_nb[g], 4] += G[g, 6]
            E[game_nb[g], 5] += G[g, 7]


@njit(cache=True)
def _snapshot(S, E, is_d, out):
    """Posterior means and sds of every node into out[n, 0:4] (skill mu, sd, margin mu, sd)."""
    for n in range(S.shape[0]):
        tau, pi = _post(S, n)
        out[n, 0] = tau / pi
        out[n, 1] = math.sqrt(1.0 / pi)
        if is_d:
            tau, pi = _post_margin(E, n)
            out[n, 2] = tau / pi
            out[n, 3] = math.sqrt(1.0 / pi)


@njit(cache=True)
def _ep_pass(S, E, G, batch_node_start, batch_game_start, batch_repeat, node_prev, node_next, node_player,
             node_elapsed, game_na, game_nb, game_res, prior_tau, prior_pi, beta2, tau2, margin, is_d,
             nu_tau, nu_pi, zeta2, inner_passes, tolerance, games, active, need_fwd, need_bwd, need_game,
             ref, head, link, logz):
    """One forward and one backward pass over the time steps: the one EP schedule of every fit and refresh.

    At each step (forward, then backward) the nodes' drift messages, then the
    step's games.  ``games`` False: drift messages only (exact chains for the
    current game messages).  ``active`` False: every node and game.  ``active``
    True (TTT, a refresh): only flagged ones — a node when a neighbour's drift
    message to it changed (passed on while it moves a posterior by more than a
    thousandth of the tolerance), a game when a posterior it reads moved more
    than the tolerance since it last read it (``ref``); flags set ahead of the
    pass are taken in the same pass.  Returns the number of game updates.
    """
    eps = 1e-3 * tolerance
    updates = 0
    nb = batch_node_start.shape[0] - 1
    for direction in range(2):
        for i in range(nb):
            b = i if direction == 0 else nb - 1 - i
            for n in range(batch_node_start[b], batch_node_start[b + 1]):
                tau0, pi0 = 0.0, 0.0
                if active:
                    flags = need_fwd if direction == 0 else need_bwd
                    if not flags[n]:
                        continue
                    flags[n] = False
                    tau0, pi0 = _post(S, n)
                if direction == 0:
                    _forward_node(n, S, E, node_prev, node_player, node_elapsed, prior_tau, prior_pi, tau2, is_d,
                                  nu_tau, nu_pi, zeta2)
                else:
                    _backward_node(n, S, E, node_next, node_elapsed, tau2, is_d, zeta2)
                if active and (pi0 <= 0.0 or _moved(S, n, tau0, pi0, eps)):
                    onward = node_next[n] if direction == 0 else node_prev[n]
                    if onward >= 0:
                        flags[onward] = True
                    _flag_games(n, np.int64(-1), S, ref, tolerance, head, link, game_na, need_game)
            if not games:
                continue
            if not active:
                updates += _batch_games(b, batch_node_start, batch_game_start, batch_repeat, game_na, game_nb,
                                        game_res, S, E, G, beta2, margin, is_d, inner_passes, tolerance * 0.1)
                continue
            for g in range(batch_game_start[b], batch_game_start[b + 1]):
                if need_game[g]:
                    need_game[g] = False
                    ch, lz = _update_game(g, game_na[g], game_nb[g], game_res[g], S, E, G, beta2, margin, np.bool_(False), np.bool_(True))
                    logz[g] = lz
                    updates += 1
                    if ch > 0.0:
                        _after_game(g, S, node_prev, node_next, game_na, game_nb, ref, tolerance, head, link,
                                    need_fwd, need_bwd, need_game)
    return updates


_NO_FLAGS = np.zeros(0, np.bool_)
_NO_REF = np.zeros((0, 2))
_NO_LINKS = np.zeros(0, np.int64)


def _chain_pass(S: np.ndarray, E: np.ndarray, st: "_Structure", prior_tau: np.ndarray, prior_pi: np.ndarray,
                tau2: float, is_d: bool, nu_tau: float, nu_pi: float, zeta2: float) -> None:
    """Exact forward and backward messages along every chain for the current game messages."""
    _ep_pass(S, E, np.zeros((0, 8)), st.batch_node_start, st.batch_game_start, st.batch_repeat, st.node_prev,
             st.node_next, st.node_player, st.node_elapsed, st.game_na, st.game_nb, st.game_res, prior_tau, prior_pi,
             1.0, tau2, 0.0, is_d, nu_tau, nu_pi, zeta2, 1, 1.0, False, False, _NO_FLAGS, _NO_FLAGS, _NO_FLAGS,
             _NO_REF, _NO_LINKS, _NO_LINKS.reshape(0, 2), np.zeros(0))


@njit(cache=True)
def _sweep(S, E, G, batch_node_start, batch_game_start, batch_repeat, node_prev, node_next, node_player,
           node_elapsed, game_na, game_nb, game_res, prior_tau, prior_pi, beta2, tau2, margin, is_d,
           nu_tau, nu_pi, zeta2, inner_passes, tolerance, before, after):
    """A full sweep (every node and game); returns the largest posterior change."""
    _recompute_products(S, E, G, game_na, game_nb, is_d)
    _snapshot(S, E, is_d, before)
    no_flags = np.zeros(0, np.bool_)
    _ep_pass(S, E, G, batch_node_start, batch_game_start, batch_repeat, node_prev, node_next, node_player,
             node_elapsed, game_na, game_nb, game_res, prior_tau, prior_pi, beta2, tau2, margin, is_d,
             nu_tau, nu_pi, zeta2, inner_passes, tolerance, np.bool_(True), np.bool_(False), no_flags, no_flags, no_flags,
             np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros((0, 2), np.int64), np.zeros(0))
    _snapshot(S, E, is_d, after)
    step = 0.0
    cols = 4 if is_d else 2
    for n in range(before.shape[0]):
        for j in range(cols):
            step = max(step, abs(after[n, j] - before[n, j]))
    return step


@njit(cache=True)
def _level_gradient(S, node_prev, node_player, node_batch, node_elapsed, prior_tau, prior_pi, tau2, grad):
    """Gradient of the energy along a shift of every skill of one time step, per step.

    Game factors do not feel such shifts (both players of a game share its
    step), so only first-step priors and drifts contribute; at the EP fixed
    point every component is exactly zero.
    """
    grad[:] = 0.0
    for n in range(S.shape[0]):
        tau, pi = _post(S, n)
        mu = tau / pi
        p = node_prev[n]
        if p < 0:
            p0 = prior_pi[node_player[n]]
            grad[node_batch[n]] += p0 * mu - prior_tau[node_player[n]]
        elif tau2 > 0.0:
            tp, pp = _post(S, p)
            force = (mu - tp / pp) / (tau2 * node_elapsed[n])
            grad[node_batch[n]] += force
            grad[node_batch[p]] -= force


@njit(cache=True)
def _shift_levels(G, game_batch, shift):
    """Shift every game message of step b by shift[b] (the chain pass then moves the skills)."""
    for g in range(G.shape[0]):
        c = shift[game_batch[g]]
        G[g, 0] += G[g, 1] * c
        G[g, 2] += G[g, 3] * c


@njit(cache=True)
def _log_evidence(S, E, G, game_na, game_nb, game_res, beta2, margin, is_d, out):
    total = 0.0
    for g in range(G.shape[0]):
        _, lz = _update_game(g, game_na[g], game_nb[g], game_res[g], S, E, G, beta2, margin, is_d, np.bool_(False))
        out[g] = lz
        total += lz
    return total


@njit(cache=True)
def _link_games(game_na, game_nb, n_nodes):
    """Per node, a linked list of its games: head[n] is the latest game, link[g, 0/1] the next one of g's node a/b."""
    head = np.full(n_nodes, -1, np.int64)
    link = np.full((game_na.shape[0], 2), -1, np.int64)
    for g in range(game_na.shape[0]):
        link[g, 0] = head[game_na[g]]
        head[game_na[g]] = g
        link[g, 1] = head[game_nb[g]]
        head[game_nb[g]] = g
    return head, link


@njit(cache=True)
def _moved(S, n, tau0, pi0, eps):
    """Did node n's posterior (now) move more than eps from the one given by (tau0, pi0)?"""
    tau, pi = _post(S, n)
    return abs(tau / pi - tau0 / pi0) > eps or abs(math.sqrt(1.0 / pi) - math.sqrt(1.0 / pi0)) > eps


@njit(cache=True)
def _flag_games(n, skip, S, ref, tolerance, head, link, game_na, need_game):
    """If node n's posterior moved more than the tolerance since its games last read it, flag them."""
    tau, pi = _post(S, n)
    mu = tau / pi
    sd = math.sqrt(1.0 / pi)
    if abs(mu - ref[n, 0]) <= tolerance and abs(sd - ref[n, 1]) <= tolerance:
        return
    ref[n, 0] = mu
    ref[n, 1] = sd
    g = head[n]
    while g >= 0:
        if g != skip:
            need_game[g] = True
        g = link[g, 0] if game_na[g] == n else link[g, 1]


@njit(cache=True)
def _flag_all(S, ref, tolerance, head, link, game_na, need_game):
    """Flag the games of every node whose posterior moved more than the tolerance from ``ref``."""
    for n in range(S.shape[0]):
        _flag_games(n, np.int64(-1), S, ref, tolerance, head, link, game_na, need_game)


@njit(cache=True)
def _after_game(g, S, node_prev, node_next, game_na, game_nb, ref, tolerance, head, link, need_fwd, need_bwd,
                need_game):
    """Game g's messages changed: its players' neighbours need drift messages, their other games may move."""
    for n in (game_na[g], game_nb[g]):
        q = node_next[n]
        if q >= 0:
            need_fwd[q] = True
        p = node_prev[n]
        if p >= 0:
            need_bwd[p] = True
        _flag_games(n, g, S, ref, tolerance, head, link, game_na, need_game)


@njit(cache=True)
def _active_sweep(S, G, batch_node_start, batch_game_start, batch_repeat, node_prev, node_next, node_player,
                  node_elapsed, game_na, game_nb, game_res, prior_tau, prior_pi, beta2, tau2, margin, tolerance, ref,
                  head, link, need_fwd, need_bwd, need_game, logz):
    """A sweep over the flagged nodes and games only (TTT); returns (game updates, flags left)."""
    E = np.zeros((1, 8))
    updates = _ep_pass(S, E, G, batch_node_start, batch_game_start, batch_repeat, node_prev, node_next,
                       node_player, node_elapsed, game_na, game_nb, game_res, prior_tau, prior_pi, beta2, tau2,
                       margin, np.bool_(False), 0.0, 1.0, 0.0, np.int64(1), tolerance, np.bool_(True), np.bool_(True),
                       need_fwd, need_bwd, need_game,
                       ref, head, link, logz)
    left = 0
    for n in range(need_fwd.shape[0]):
        left += need_fwd[n] + need_bwd[n]
    for g in range(need_game.shape[0]):
        left += need_game[g]
    return updates, left


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def _as_days(times: Sequence[Any] | np.ndarray) -> np.ndarray | None:
    """Days since 1970-01-01 (datetime64[D]) when the times are dates, else None."""
    arr = np.asarray(times)
    if np.issubdtype(arr.dtype, np.datetime64):
        return arr.astype("datetime64[D]")
    if arr.dtype.kind in "iufb":
        return None
    try:
        return np.array([_parse_date(t) for t in arr.ravel()], dtype="datetime64[D]")
    except (TypeError, ValueError):
        return None


def _parse_date(value: Any) -> np.datetime64:
    if isinstance(value, (datetime, date)):
        return np.datetime64(value, "D")
    text = str(value).strip().replace(".", "-").replace("/", "-")
    return np.datetime64(text[:10], "D")


def time_steps(times: Sequence[Any] | np.ndarray, unit: str = "round") -> np.ndarray:
    """Time step (float64) of each game: games with equal steps form one batch.

    Numbers are steps as given, whatever the unit.  Dates (datetime64, ``date``
    or ISO strings) become days, weeks (``days // 7``), months, years, or, for
    ``round``, the rank of the distinct date.

    >>> time_steps(["2024-01-31", "2024-02-01", "2025-01-01"], "month").tolist()
    [648.0, 649.0, 660.0]
    >>> time_steps([5, 5, 7], "week").tolist()
    [5.0, 5.0, 7.0]
    """
    if unit not in TIME_UNITS:
        raise ValueError(f"time unit must be one of {', '.join(TIME_UNITS)}, got {unit!r}")
    days = _as_days(times)
    if days is None:
        steps = np.asarray(times, dtype=np.float64)
        if not np.all(np.isfinite(steps)):
            raise ValueError("times must be finite numbers or dates")
        return steps
    if unit == "day":
        return days.astype(np.int64).astype(np.float64)
    if unit == "week":
        return np.floor_divide(days.astype(np.int64), 7).astype(np.float64)
    if unit == "month":
        return days.astype("datetime64[M]").astype(np.int64).astype(np.float64)
    if unit == "year":
        return days.astype("datetime64[Y]").astype(np.int64).astype(np.float64)
    return np.unique(days, return_inverse=True)[1].astype(np.float64)


@dataclass
class GameData:
    """Game results as arrays: who played whom, when (step), and White's score.

    ``labels`` holds the distinct player labels; ``white``/``black`` index it;
    ``score`` is 1, 0.5 or 0 for White; ``time`` keeps each game's time as given.
    """

    labels: np.ndarray
    white: np.ndarray
    black: np.ndarray
    step: np.ndarray
    score: np.ndarray
    time: np.ndarray

    def __len__(self) -> int:
        return int(self.white.shape[0])

    def concat(self, other: "GameData") -> "GameData":
        """All games of self followed by those of other, over the union of labels."""
        names = np.concatenate([self.labels[self.white], other.labels[other.white]])
        opps = np.concatenate([self.labels[self.black], other.labels[other.black]])
        labels, inv = np.unique(np.concatenate([names, opps]), return_inverse=True)
        n = names.shape[0]
        return GameData(labels, inv[:n], inv[n:], np.concatenate([self.step, other.step]),
                        np.concatenate([self.score, other.score]),
                        np.concatenate([np.asarray(self.time, object), np.asarray(other.time, object)]))


def make_games(player: Sequence[Hashable] | np.ndarray, opponent: Sequence[Hashable] | np.ndarray,
               time: Sequence[Any] | np.ndarray, result: Sequence[float] | np.ndarray,
               unit: str = "round") -> GameData:
    """Build :class:`GameData` from parallel arrays; ``result`` is the player's score (1, ½, 0).

    Games of a player against themselves are rejected.
    """
    player = np.asarray(player)
    opponent = np.asarray(opponent)
    score = np.asarray(result, dtype=np.float64)
    n = player.shape[0]
    if not (opponent.shape[0] == n == score.shape[0] == len(time)):
        raise ValueError("player, opponent, time and result must have the same length")
    if not np.all(np.isin(score, (0.0, 0.5, 1.0))):
        raise ValueError("results must be 1, 0.5 or 0")
    if n and np.any(player == opponent):
        raise ValueError("a player cannot play themselves")
    steps = time_steps(time, unit)
    labels, inv = np.unique(np.concatenate([player, opponent]), return_inverse=True)
    return GameData(labels, inv[:n].astype(np.int64), inv[n:].astype(np.int64), steps, score,
                    np.asarray(list(time) if not isinstance(time, np.ndarray) else time, dtype=object))


# ---------------------------------------------------------------------------
# Parameters and the fit
# ---------------------------------------------------------------------------


@dataclass
class _Structure:
    """Nodes (player, step) and games sorted by step, as the kernels want them."""

    order: np.ndarray  # sorted game position -> input game index
    game_na: np.ndarray
    game_nb: np.ndarray
    game_res: np.ndarray
    swapped: np.ndarray  # sorted game: node a is Black (Black won)
    node_player: np.ndarray
    node_step: np.ndarray
    node_prev: np.ndarray
    node_next: np.ndarray
    node_elapsed: np.ndarray
    batch_node_start: np.ndarray
    batch_game_start: np.ndarray
    batch_repeat: np.ndarray
    node_batch: np.ndarray
    game_batch: np.ndarray


def _build_structure(games: GameData) -> _Structure:
    n_players = max(int(games.labels.shape[0]), 1)
    step_values, batch = np.unique(games.step, return_inverse=True)
    order = np.argsort(batch, kind="stable")
    b = batch[order].astype(np.int64)
    white = games.white[order].astype(np.int64)
    black = games.black[order].astype(np.int64)
    score = games.score[order]
    swapped = score == 0.0
    pa = np.where(swapped, black, white)
    pb = np.where(swapped, white, black)
    keys = np.concatenate([b * n_players + pa, b * n_players + pb])
    node_keys, inv = np.unique(keys, return_inverse=True)
    n_games = b.shape[0]
    game_na = inv[:n_games].astype(np.int64)
    game_nb = inv[n_games:].astype(np.int64)
    node_batch = node_keys // n_players
    node_player = node_keys % n_players
    n_nodes = node_keys.shape[0]
    by_player = np.lexsort((node_batch, node_player))
    node_prev = np.full(n_nodes, -1, np.int64)
    node_next = np.full(n_nodes, -1, np.int64)
    same = node_player[by_player[1:]] == node_player[by_player[:-1]]
    node_prev[by_player[1:][same]] = by_player[:-1][same]
    node_next[by_player[:-1][same]] = by_player[1:][same]
    node_step = step_values[node_batch] if n_nodes else np.zeros(0)
    node_elapsed = np.zeros(n_nodes)
    has_prev = node_prev >= 0
    node_elapsed[has_prev] = node_step[has_prev] - node_step[node_prev[has_prev]]
    n_batches = step_values.shape[0]
    batch_node_start = np.searchsorted(node_batch, np.arange(n_batches + 1)).astype(np.int64)
    batch_game_start = np.searchsorted(b, np.arange(n_batches + 1)).astype(np.int64)
    batch_repeat = np.diff(batch_node_start) < 2 * np.diff(batch_game_start)
    return _Structure(order, game_na, game_nb, np.where(score == 0.5, 0, 1).astype(np.int64), swapped,
                      node_player.astype(np.int64), node_step, node_prev, node_next, node_elapsed,
                      batch_node_start, batch_game_start, batch_repeat, node_batch.astype(np.int64), b)


class _LevelSolver:
    """Newton step on the slow modes: one common shift of all skills per time step.

    Games only see differences within a step, so these shifts are pinned only
    by the first-step priors and the drifts; plain sweeps crawl along them
    (the package's 0.1 offset after 30 sweeps).  The energy along these shifts
    is quadratic with a fixed Hessian (prior precisions plus drift precisions
    between steps, a sparse SPD matrix over the time steps), factorised once;
    its gradient vanishes at the EP fixed point, so the step does too.
    """

    def __init__(self, st: "_Structure", prior_pi: np.ndarray, tau2: float) -> None:
        from scipy.sparse import coo_matrix
        from scipy.sparse.linalg import splu

        n_b = st.batch_node_start.shape[0] - 1
        first = st.node_prev < 0
        self.n_batches = n_b
        self.tau2 = tau2
        diag = np.bincount(st.node_batch[first], weights=prior_pi[st.node_player[first]], minlength=n_b)
        self.total_prior = float(diag.sum())
        self.grad = np.zeros(n_b)
        self.lu = None
        if tau2 > 0.0:
            n = np.nonzero(~first)[0]
            w = 1.0 / (tau2 * st.node_elapsed[n])
            # drift precisions summed per (step, previous step) pair: a small matrix however many nodes
            pair = st.node_batch[n] * n_b + st.node_batch[st.node_prev[n]]
            if n_b * n_b <= 1 << 22:
                dense = np.bincount(pair, weights=w, minlength=n_b * n_b)
                keys = np.nonzero(dense)[0]
                weight = dense[keys]
            else:
                keys, inv = np.unique(pair, return_inverse=True)
                weight = np.bincount(inv, weights=w, minlength=keys.shape[0])
            bn, bp = keys // n_b, keys % n_b
            rows = np.concatenate([np.arange(n_b), bn, bp, bn, bp])
            cols = np.concatenate([np.arange(n_b), bn, bp, bp, bn])
            vals = np.concatenate([diag, weight, weight, -weight, -weight])
            hessian = coo_matrix((vals, (rows, cols)), shape=(n_b, n_b)).tocsc()
            self.lu = splu(hessian)

    def step(self, S: np.ndarray, st: "_Structure", prior_tau: np.ndarray, prior_pi: np.ndarray,
             tau2: float) -> np.ndarray:
        _level_gradient(S, st.node_prev, st.node_player, st.node_batch, st.node_elapsed,
                        prior_tau, prior_pi, tau2, self.grad)
        if self.lu is None:  # no drift: one common shift
            return np.full(self.n_batches, -self.grad.sum() / self.total_prior)
        return -self.lu.solve(self.grad)


@dataclass
class _Solver:
    """The EP state in the kernels' order (games sorted by step), kept so a refresh continues without rebuilding."""

    st: _Structure
    S: np.ndarray
    G: np.ndarray
    E: np.ndarray
    prior_tau: np.ndarray
    prior_pi: np.ndarray
    logz: np.ndarray
    """log P(result | cavity) of each game, sorted order."""
    head: np.ndarray
    link: np.ndarray


@dataclass
class TTTFit:
    """A converged (or stopped) fit: posteriors per (player, step), evidence, and EP messages.

    Picklable; pass it to :func:`refresh` with new games to continue from its messages.
    """

    params: TTTParams
    games: GameData
    log_evidence: float
    sweeps: int
    converged: bool
    step: float
    node_player: np.ndarray
    node_step: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    nu: np.ndarray | None
    zeta: np.ndarray | None
    priors: dict[Hashable, tuple[float, float]] = field(default_factory=dict)
    solver: _Solver | None = field(default=None, repr=False)
    updates: int = 0
    """Game updates (EP steps on one game) this fit or refresh took; a sweep is two per game."""
    incremental: bool = False
    """True when :func:`refresh` swept only what the new games moved."""

    @property
    def game_messages(self) -> np.ndarray:
        """EP messages of each game in input order (tau, pi to White's and Black's skill, then margins)."""
        if self.solver is None:
            return np.zeros((len(self.games), 8))
        st, G = self.solver.st, self.solver.G
        out = np.zeros_like(G)
        a_cols = np.array([0, 1, 4, 5])
        b_cols = np.array([2, 3, 6, 7])
        sw = st.swapped
        out[st.order[~sw][:, None], a_cols] = G[~sw][:, a_cols]
        out[st.order[~sw][:, None], b_cols] = G[~sw][:, b_cols]
        out[st.order[sw][:, None], a_cols] = G[sw][:, b_cols]
        out[st.order[sw][:, None], b_cols] = G[sw][:, a_cols]
        return out

    @property
    def positivity(self) -> np.ndarray:
        """TTT-D: the positivity site (tau, pi) of each node's margin."""
        if self.solver is None or self.nu is None:
            return np.zeros((0, 2))
        return self.solver.E[:, 6:8]

    def curves(self) -> dict[Hashable, list[dict[str, Any]]]:
        """Per player label, the posterior at each of the player's time steps, in time order.

        ``t`` is the time as given for the first game of that step.
        """
        first_time = _first_time_of_step(self.games)
        out: dict[Hashable, list[dict[str, Any]]] = {}
        order = np.lexsort((self.node_step, self.node_player))
        labels = self.games.labels
        for n in order:
            point: dict[str, Any] = {"t": first_time[float(self.node_step[n])],
                                     "mu": float(self.mu[n]), "sigma": float(self.sigma[n])}
            if self.nu is not None and self.zeta is not None:
                point["nu"] = float(self.nu[n])
                point["zeta"] = float(self.zeta[n])
            out.setdefault(_plain(labels[self.node_player[n]]), []).append(point)
        return out

    def latest(self) -> dict[Hashable, tuple[float, float]]:
        """Per player label, (mu, sigma) at the player's last time step.

        >>> f = fit(make_games(["a"], ["b"], [0], [1.0]))
        >>> sorted(f.latest()) == ["a", "b"] and f.latest()["a"][0] > f.latest()["b"][0]
        True
        """
        last = np.full(self.games.labels.shape[0], -1, np.int64)
        order = np.lexsort((self.node_step, self.node_player))
        last[self.node_player[order]] = order  # the later step of a player overwrites the earlier
        labels = self.games.labels
        return {_plain(labels[p]): (float(self.mu[n]), float(self.sigma[n]))
                for p, n in enumerate(last.tolist()) if n >= 0}


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _first_time_of_step(games: GameData) -> dict[float, Any]:
    out: dict[float, Any] = {}
    for s, t in zip(games.step.tolist(), games.time.tolist()):
        out.setdefault(s, _plain(t))
    return out


def _prior_arrays(labels: np.ndarray, params: TTTParams,
                  priors: Priors) -> tuple[np.ndarray, np.ndarray]:
    """(tau, pi) of each label's first-step prior: ``priors`` where given, else N(mu0, sigma0²)."""
    n = labels.shape[0]
    mu = np.full(n, params.mu0)
    sd = np.full(n, params.sigma0)
    if priors:
        index = {_plain(name): i for i, name in enumerate(labels)}
        for name, (m, s) in priors.items():
            i = index.get(name)
            if i is not None:
                if not (s > 0 and math.isfinite(s) and math.isfinite(m)):
                    raise ValueError(f"prior of {name!r} must have a finite mean and a positive sd, got {(m, s)!r}")
                mu[i], sd[i] = m, s
    pi = sd ** -2.0
    return mu * pi, pi


def fit(games: GameData, params: TTTParams = _DEFAULT_PARAMS, *,
        priors: Priors | None = None,
        progress: ProgressCallback | None = None,
        warm: TTTFit | None = None) -> TTTFit:
    """Fit TTT or TTT-D by EP until the largest posterior change is below ``params.tolerance``.

    ``priors`` maps player labels to a (mu, sigma) prior for their first step
    (e.g. from rating tags); others get ``N(mu0, sigma0²)``.  ``warm`` is a fit
    on a prefix of these games (same labels order not needed): its game
    messages seed this one.
    """
    priors = dict(priors or {})
    st = _build_structure(games)
    is_d = params.model == "ttt-d"
    n_nodes = st.node_player.shape[0]
    n_games = len(games)
    S = np.zeros((n_nodes, 6))
    E = np.zeros((n_nodes if is_d else 1, 8))
    G = np.zeros((n_games, 8))
    if warm is not None:
        _seed_messages(G, E, st, games, warm, is_d)
    prior_tau, prior_pi = _prior_arrays(games.labels, params, priors)
    beta2 = 2.0 * params.beta ** 2
    tau2 = params.tau ** 2
    zeta2 = params.zeta ** 2
    nu_pi = params.zeta0 ** -2.0
    nu_tau = params.margin_prior_mean * nu_pi
    margin = params.margin
    before = np.zeros((n_nodes, 4))
    after = np.zeros((n_nodes, 4))
    _recompute_products(S, E, G, st.game_na, st.game_nb, is_d)
    _chain_pass(S, E, st, prior_tau, prior_pi, tau2, is_d, nu_tau, nu_pi, zeta2)
    level_solver = _LevelSolver(st, prior_pi, tau2) if params.accelerate and n_games else None
    sweeps = 0
    step = math.inf
    converged = n_games == 0
    while not converged and sweeps < params.max_sweeps:
        step = _sweep(S, E, G, st.batch_node_start, st.batch_game_start, st.batch_repeat, st.node_prev,
                      st.node_next, st.node_player, st.node_elapsed, st.game_na, st.game_nb, st.game_res,
                      prior_tau, prior_pi, beta2, tau2, margin, is_d, nu_tau, nu_pi, zeta2,
                      params.inner_passes, params.tolerance, before, after)
        sweeps += 1
        if level_solver is not None:
            shift = level_solver.step(S, st, prior_tau, prior_pi, tau2)
            _shift_levels(G, st.game_batch, shift)
            _recompute_products(S, E, G, st.game_na, st.game_nb, is_d)
            _chain_pass(S, E, st, prior_tau, prior_pi, tau2, is_d, nu_tau, nu_pi, zeta2)
            step = max(step, float(np.max(np.abs(shift))) if shift.size else 0.0)
        if progress is not None:
            progress(sweeps, step)
        converged = step < params.tolerance
    _recompute_products(S, E, G, st.game_na, st.game_nb, is_d)
    _snapshot(S, E, is_d, after)
    logz = np.zeros(n_games)
    log_ev = _log_evidence(S, E, G, st.game_na, st.game_nb, st.game_res, beta2, margin, is_d, logz)
    head, link = _link_games(st.game_na, st.game_nb, n_nodes)
    solver = _Solver(st, S, G, E, prior_tau, prior_pi, logz, head, link)
    return TTTFit(params, games, float(log_ev), sweeps, bool(converged), float(step),
                  st.node_player, st.node_step, after[:, 0].copy(), after[:, 1].copy(),
                  after[:, 2].copy() if is_d else None, after[:, 3].copy() if is_d else None,
                  priors, solver, updates=2 * n_games * sweeps)


def _seed_messages(G: np.ndarray, E: np.ndarray, st: _Structure, games: GameData, warm: TTTFit, is_d: bool) -> None:
    """Copy the warm fit's game messages (its games are the first ones here) into sorted order."""
    n_old = len(warm.games)
    if n_old > len(games):
        raise ValueError("the warm fit has more games than the new data")
    G_in = np.zeros((len(games), 8))
    G_in[:n_old] = warm.game_messages
    sw = st.swapped
    a_cols = np.array([0, 1, 4, 5])
    b_cols = np.array([2, 3, 6, 7])
    G[np.ix_(~sw, a_cols)] = G_in[st.order[~sw]][:, a_cols]
    G[np.ix_(~sw, b_cols)] = G_in[st.order[~sw]][:, b_cols]
    G[np.ix_(sw, a_cols)] = G_in[st.order[sw]][:, b_cols]
    G[np.ix_(sw, b_cols)] = G_in[st.order[sw]][:, a_cols]
    if not is_d:
        G[:, 4:] = 0.0
        return
    if warm.positivity.shape[0] and warm.nu is not None:
        old_names = warm.games.labels[warm.node_player]
        old_key = {(_plain(nm), float(s)): i for i, (nm, s) in enumerate(zip(old_names, warm.node_step))}
        new_names = games.labels[st.node_player]
        for n, (nm, s) in enumerate(zip(new_names, st.node_step)):
            i = old_key.get((_plain(nm), float(s)))
            if i is not None:
                E[n, 6:8] = warm.positivity[i]


def refresh(previous: TTTFit, new_games: GameData, *,
            priors: Priors | None = None,
            progress: ProgressCallback | None = None) -> TTTFit:
    """Add games to a fit and re-converge from its messages.

    ``priors`` (player label → (mu, sigma)) are merged over the previous fit's:
    every player, old or new, keeps or gets the prior given for them.  When
    the new games are not earlier than the previous fit's last time step (the
    live case) and the model is TTT, only what they move is swept
    (:func:`_refresh_incremental`); otherwise a full fit starts from the
    previous messages (a few sweeps, not a cold fit).
    """
    merged = dict(previous.priors)
    merged.update(priors or {})
    if len(new_games):
        result = _refresh_incremental(previous, new_games, merged)
        if result is not None:
            if progress is not None:
                progress(1, 0.0)
            return result
    games = previous.games.concat(new_games) if len(new_games) else previous.games
    return fit(games, previous.params, priors=merged, progress=progress, warm=previous)


def _refresh_incremental(previous: TTTFit, new_games: GameData,
                         priors: dict[Hashable, tuple[float, float]]) -> TTTFit | None:
    """The live refresh: new games at or after the last time step, TTT only; None when it does not apply.

    The structure is extended (new nodes and games appended in step order, so
    every array stays sorted; nothing is sorted again), then
    :func:`_active_sweep` sweeps only the new games and what their messages
    move by more than the tolerance, with the common-shift Newton step of
    :func:`fit` between sweeps.  When that grows past two sweeps' worth of
    game updates (a small history that the new games move everywhere), full
    sweeps continue from where it got (or start cold when a player already
    fitted got a new prior).  Game log-evidence terms are those of
    each game's last update (the others moved by less than the tolerance).
    """
    sv, params, old = previous.solver, previous.params, previous.games
    if sv is None or params.model != "ttt" or not len(old):
        return None
    last_step = float(sv.st.node_step.max()) if sv.st.node_step.size else -math.inf
    if float(new_games.step.min()) < last_step:
        return None
    index = {_plain(x): i for i, x in enumerate(old.labels.tolist())}
    extra: list[Any] = []

    def label_index(label: Any) -> int:
        label = _plain(label)
        i = index.get(label)
        if i is None:
            i = index[label] = len(index)
            extra.append(label)
        return i

    white = np.array([label_index(new_games.labels[i]) for i in new_games.white.tolist()], np.int64)
    black = np.array([label_index(new_games.labels[i]) for i in new_games.black.tolist()], np.int64)
    labels = old.labels
    if extra:
        added = np.asarray(extra)
        if added.dtype.kind != old.labels.dtype.kind:
            return None
        labels = np.concatenate([old.labels, added])
    games = GameData(labels, np.concatenate([old.white, white]), np.concatenate([old.black, black]),
                     np.concatenate([old.step, new_games.step]), np.concatenate([old.score, new_games.score]),
                     np.concatenate([np.asarray(old.time, object), np.asarray(new_games.time, object)]))
    prior_tau, prior_pi = _prior_arrays(labels, params, priors)
    n_old_players = old.labels.shape[0]
    changed = np.nonzero((prior_tau[:n_old_players] != sv.prior_tau) | (prior_pi[:n_old_players] != sv.prior_pi))[0]
    st, new_nodes, first_nodes = _extend_structure(sv.st, len(old), labels.shape[0], white, black,
                                                   new_games.step, new_games.score, changed)
    n_nodes, n_games = st.node_player.shape[0], len(games)
    n_old_nodes, n_old_games = sv.st.node_player.shape[0], len(old)
    S = np.concatenate([sv.S, np.zeros((n_nodes - n_old_nodes, 6))])
    G = np.concatenate([sv.G, np.zeros((n_games - n_old_games, 8))])
    logz = np.concatenate([sv.logz, np.zeros(n_games - n_old_games)])
    head = np.concatenate([sv.head, np.full(n_nodes - n_old_nodes, -1, np.int64)])
    link = np.concatenate([sv.link, np.full((n_games - n_old_games, 2), -1, np.int64)])
    for g in range(n_old_games, n_games):
        link[g, 0] = head[st.game_na[g]]
        head[st.game_na[g]] = g
        link[g, 1] = head[st.game_nb[g]]
        head[st.game_nb[g]] = g
    ref = np.concatenate([np.stack([previous.mu, previous.sigma], axis=1), np.full((n_nodes - n_old_nodes, 2), np.nan)])
    E = np.zeros((1, 8))
    beta2, tau2, tol = 2.0 * params.beta ** 2, params.tau ** 2, params.tolerance
    need_fwd = np.zeros(n_nodes, np.bool_)
    need_bwd = np.zeros(n_nodes, np.bool_)
    need_game = np.zeros(n_games, np.bool_)
    need_fwd[new_nodes] = True
    need_fwd[first_nodes] = True
    need_game[n_old_games:] = True
    budget = 4 * n_games  # two sweeps' worth of game updates: beyond, full sweeps are cheaper
    updates, sweeps, left, largest, settled = 0, 0, 0, 0.0, False
    level_solver = _LevelSolver(st, prior_pi, tau2) if params.accelerate else None
    while sweeps < params.max_sweeps:
        sweeps += 1
        done, left = _active_sweep(S, G, st.batch_node_start, st.batch_game_start, st.batch_repeat, st.node_prev,
                                   st.node_next, st.node_player, st.node_elapsed, st.game_na, st.game_nb, st.game_res, prior_tau,
                                   prior_pi, beta2, tau2, params.margin, tol, ref, head, link, need_fwd, need_bwd,
                                   need_game, logz)
        updates += done
        if updates > budget:
            break
        shift = level_solver.step(S, st, prior_tau, prior_pi, tau2) if level_solver is not None else np.zeros(0)
        largest = float(np.max(np.abs(shift))) if shift.size else 0.0
        if largest >= tol:  # the slow common shift of each time step, as in fit(): a Newton step
            _shift_levels(G, st.game_batch, shift)
            _recompute_products(S, E, G, st.game_na, st.game_nb, False)
            _chain_pass(S, E, st, prior_tau, prior_pi, tau2, False, 0.0, 1.0, 0.0)
            ref[:, 0] += shift[st.node_batch]
            _flag_all(S, ref, tol, head, link, st.game_na, need_game)
        elif left == 0:
            settled = True
            break
    solver = _Solver(st, S, G, E, prior_tau, prior_pi, logz, head, link)
    if not settled:  # the new games moved most of the history: full sweeps from here
        partial = TTTFit(params, games, 0.0, 0, False, math.inf, st.node_player, st.node_step, ref[:, 0], ref[:, 1],
                         None, None, dict(priors), solver)
        # a changed prior of a player already fitted moves everything far: a cold fit gets there faster
        # (60k games, one prior moved by 2 beta: 23 sweeps cold, 41 from the previous messages)
        out_fit = fit(games, params, priors=priors, warm=None if first_nodes.size else partial)
        out_fit.updates += updates
        return out_fit
    out = np.zeros((n_nodes, 4))
    _snapshot(S, E, False, out)
    return TTTFit(params, games, float(logz.sum()), sweeps, True, 0.0, st.node_player, st.node_step,
                  out[:, 0].copy(), out[:, 1].copy(), None, None, dict(priors), solver,
                  updates=int(updates), incremental=True)


def _extend_structure(st: _Structure, n_old_games: int, n_players: int, white: np.ndarray, black: np.ndarray,
                      step: np.ndarray, score: np.ndarray,
                      changed_players: np.ndarray) -> tuple[_Structure, np.ndarray, np.ndarray]:
    """Append games at or after the last step; returns (structure, new nodes, first nodes of ``changed_players``)."""
    n_old_nodes = st.node_player.shape[0]
    add_player: list[int] = []
    add_step: list[float] = []
    add_prev: list[int] = []
    add_batch: list[int] = []
    add_elapsed: list[float] = []
    next_updates: dict[int, int] = {}

    def batch_of(n: int) -> int:
        return int(st.node_batch[n]) if n < n_old_nodes else add_batch[n - n_old_nodes]

    def step_of(n: int) -> float:
        return float(st.node_step[n]) if n < n_old_nodes else add_step[n - n_old_nodes]

    last = np.full(n_players, -1, np.int64)
    ends = np.nonzero(st.node_next < 0)[0]
    last[st.node_player[ends]] = ends
    first = np.full(n_players, -1, np.int64)
    starts = np.nonzero(st.node_prev < 0)[0]
    first[st.node_player[starts]] = starts
    n_batches = st.batch_node_start.shape[0] - 1
    cur_step = float(st.node_step[-1]) if n_old_nodes else -math.inf
    batch = n_batches - 1
    order = np.argsort(step, kind="stable")
    game_na, game_nb, game_res, swapped, game_batch = [], [], [], [], []
    for k in order.tolist():
        s = float(step[k])
        if s > cur_step:
            batch, cur_step = batch + 1, s
        w, b, sc = int(white[k]), int(black[k]), float(score[k])
        sw = sc == 0.0
        pair = []
        for p in ((b, w) if sw else (w, b)):
            n = int(last[p])
            if n < 0 or batch_of(n) != batch:
                new = n_old_nodes + len(add_player)
                add_player.append(p)
                add_step.append(s)
                add_prev.append(n)
                add_batch.append(batch)
                add_elapsed.append(s - step_of(n) if n >= 0 else 0.0)
                if n >= 0:
                    next_updates[n] = new
                n = new
                last[p] = n
            pair.append(n)
        game_na.append(pair[0])
        game_nb.append(pair[1])
        game_res.append(0 if sc == 0.5 else 1)
        swapped.append(sw)
        game_batch.append(batch)
    n_nodes = n_old_nodes + len(add_player)
    nxt = np.concatenate([st.node_next, np.full(n_nodes - n_old_nodes, -1, np.int64)])
    for n, q in next_updates.items():
        nxt[n] = q
    nb_arr = np.concatenate([st.node_batch, np.asarray(add_batch, np.int64)])
    gb_arr = np.concatenate([st.game_batch, np.asarray(game_batch, np.int64)])
    n_b = batch + 1
    batch_node_start = np.searchsorted(nb_arr, np.arange(n_b + 1)).astype(np.int64)
    batch_game_start = np.searchsorted(gb_arr, np.arange(n_b + 1)).astype(np.int64)
    new_st = _Structure(
        order=np.concatenate([st.order, n_old_games + order]).astype(np.int64),
        game_na=np.concatenate([st.game_na, np.asarray(game_na, np.int64)]),
        game_nb=np.concatenate([st.game_nb, np.asarray(game_nb, np.int64)]),
        game_res=np.concatenate([st.game_res, np.asarray(game_res, np.int64)]),
        swapped=np.concatenate([st.swapped, np.asarray(swapped, bool)]),
        node_player=np.concatenate([st.node_player, np.asarray(add_player, np.int64)]),
        node_step=np.concatenate([st.node_step, np.asarray(add_step, float)]),
        node_prev=np.concatenate([st.node_prev, np.asarray(add_prev, np.int64)]), node_next=nxt,
        node_elapsed=np.concatenate([st.node_elapsed, np.asarray(add_elapsed, float)]),
        batch_node_start=batch_node_start, batch_game_start=batch_game_start,
        batch_repeat=np.diff(batch_node_start) < 2 * np.diff(batch_game_start),
        node_batch=nb_arr, game_batch=gb_arr)
    fresh = first[changed_players] if changed_players.size else np.zeros(0, np.int64)
    return new_st, np.arange(n_old_nodes, n_nodes, dtype=np.int64), fresh[fresh >= 0]


def search_parameters(games: GameData, params: TTTParams = _DEFAULT_PARAMS, *,
                      priors: Priors | None = None,
                      max_evaluations: int = 40,
                      progress: Callable[[TTTParams, float], None] | None = None) -> TTTFit:
    """The fit whose (β, τ) maximise the log-evidence (Nelder–Mead in log space).

    Each evaluation starts from the best fit so far, so most cost a few sweeps.
    ``progress`` receives every evaluated parameter set and its log-evidence.
    """
    from scipy.optimize import minimize

    best: dict[str, TTTFit] = {}

    def negative_evidence(x: np.ndarray) -> float:
        beta, tau = float(np.exp(x[0])), float(np.exp(x[1]))
        trial = dataclasses.replace(params, beta=beta, tau=tau)
        warm = best.get("fit")
        result = fit(games, trial, priors=priors, warm=warm)
        if progress is not None:
            progress(trial, result.log_evidence)
        if "fit" not in best or result.log_evidence > best["fit"].log_evidence:
            best["fit"] = result
        return -result.log_evidence

    x0 = np.log([params.beta, max(params.tau, 1e-4)])
    minimize(negative_evidence, x0, method="Nelder-Mead",
             options={"maxfev": max_evaluations, "xatol": 1e-3, "fatol": 1e-4,
                      "initial_simplex": np.array([x0, x0 + [0.3, 0.0], x0 + [0.0, 0.7]])})
    return best["fit"]



def compile_kernels() -> None:
    """Compile every jitted kernel of the fits (TTT, TTT-D, a live refresh) on a few games, or load them from
    numba's cache: a cold compile costs ~16 s of CPU on a slow 2-core machine, which a process that will fit pays
    once, early, and every process after it reads from the cache in well under a second.

    >>> compile_kernels()
    """
    games = make_games(["a", "b", "c", "a"], ["b", "c", "a", "c"], [0, 0, 1, 1], [1.0, 0.5, 0.0, 0.5])
    later = make_games(["b", "c"], ["a", "a"], [2, 2], [1.0, 0.5])
    for model in ("ttt", "ttt-d"):
        first = fit(games, TTTParams(model=model, max_sweeps=3))
        refresh(first, later)
