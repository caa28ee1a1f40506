"""Final standings simulated from an event's current state: who can still win, and how likely.

The event so far (:class:`EventState`: players, ratings on today's scale, finished games, byes, games in
progress with their live probabilities, withdrawals) is played to its end many times at once, every
simulation a row of numpy arrays; each game's result is drawn from the game model
(:mod:`livemon.rating.forecast`). Points already scored are added to every simulation, so they are never
lost; a simulation is a legal completion of the event, so a player who cannot reach the leader's score
never comes first and one who has clinched always does, and the chances of first (shared first split
equally) sum to one in every simulation.

Formats:

* ``rr`` / ``drr``: the remaining games are the pairs not yet played once (twice); in a double round robin
  the second game has the first game's colours reversed; otherwise colours come from the Berger tables when
  the players' pairing numbers are known (:func:`berger`), and are taken as even (the mean of both
  colours' probabilities) when not.
* ``swiss``: the games in progress are played out first; each remaining round is then paired in every
  simulation by score groups, Dutch-like: players sorted by score then rating, each group made even by
  floating its last player down, top half against bottom half; nobody meets an opponent twice (met over the
  board or in the simulation's own rounds): a repeat exchanges opponents with the nearest pairing that mends
  it; the player with fewer Whites gets White, with as many the one who had Black last; an odd player out gets
  a bye worth ``bye_points``.
* ``ko``: matches of ``games_per_match`` games, then the tiebreak of ``ko_tiebreak``: ``rapid`` (two rapid games
  with the rapid game model, :data:`~livemon.rating.forecast.RAPID`, then an Armageddon game), ``armageddon``
  (one game, a draw counting as Black's win, colours by lot) or ``elo`` (won with the Elo expected score, no
  draws); winners of adjacent matches meet next.

Points (:class:`Points`): FIDE's 1, ½, 0 by default, or what the event gives a win, a draw and a loss (3, 1, 0 in
"football" scoring); a bye counts as the result it stands for (a bye of 1 as a win). The standings, the chances
and every score of the forecast are in the event's points.

Tiebreaks (``p_winner``): ``direct`` (game points among the tied), ``sb`` (Sonneborn-Berger: the opponents'
final points, in full for a win, half for a draw), ``buchholz`` (the opponents' final points); a tie they do not
break is shared equally (a playoff or lots).

>>> st = EventState(["A", "B", "C", "D"], [2700, 2600, 2500, 2400], "rr", rounds=3,
...                 results=[Result(0, 3, 1.0), Result(1, 2, 0.5)])
>>> f = simulate(st, 20000, seed=1)
>>> round(sum(p.p_first for p in f.players), 9), f.players[0].p_first > f.players[3].p_first
(1.0, True)

The same event in football scoring (3 for a win, 1 for a draw): A's win is 3 points, B's and C's draw 1 each.

>>> st.points = Points.parse("3-1-0")
>>> [p.score for p in simulate(st, 2000, seed=1).players]
[3.0, 1.0, 1.0, 0.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from livemon.errors import InputError
from livemon.rating.forecast import DEFAULT, RAPID, ForecastParams, pregame_arrays
from livemon.rating.points import FIDE_POINTS, Points

__all__ = [
    "infer_numbers", "StateError", "Result", "Points", "FIDE_POINTS", "EventState", "PlayerForecast", "Forecast",
    "simulate", "berger", "FORMATS", "TIEBREAKS", "KO_TIEBREAKS", "SimCache", "Sims", "reweigh"]

FORMATS = ("rr", "drr", "swiss", "ko")
TIEBREAKS = ("direct", "sb", "buchholz")
KO_TIEBREAKS = ("rapid", "armageddon", "elo")
Float = NDArray[np.float64]
Int = NDArray[np.int64]
GameModel = Callable[[Float, Float], Float]
"""(white ratings, black ratings) -> (n, 3) win/draw/loss probabilities."""


class StateError(InputError):
    """An event state the simulation cannot play on (unknown rounds or format, bad indices); one line."""


@dataclass(frozen=True)
class Result:
    """A finished game: White's and Black's player index and White's score (1, ½, 0)."""

    white: int
    black: int
    score: float
    round: int | None = None
    forfeit: bool = False
    """A game not played (a default): its points count, it gives no tiebreak points of play."""


@dataclass
class EventState:
    players: Sequence[str]
    ratings: Sequence[float]
    """On today's scale; an unrated player's stand-in rating is the caller's choice."""
    format: str
    rounds: int | None
    """Rounds of the whole event; None: unknown, and the forecast refuses to guess."""
    results: Sequence[Result] = ()
    byes: Sequence[tuple[int, float]] = ()
    """(player, points) of byes already given."""
    ongoing: Sequence[tuple[int, int, tuple[float, float, float]]] = ()
    """Games in progress: (white, black, (W, D, L) from the in-game model)."""
    withdrawn: frozenset[int] = frozenset()
    """Players who play no more games (their unplayed games are not played)."""
    numbers: Sequence[int] | None = None
    """Berger pairing numbers (1-based) per player, when known: round robin colours from the tables."""
    rounds_played: int | None = None
    """Swiss/knockout: rounds complete (default: the highest round of the results)."""
    tiebreaks: Sequence[str] = ()
    bye_points: float = 1.0
    games_per_match: int = 2
    bracket: Sequence[int] | None = None
    """Knockout: players still in, in bracket order (adjacent players meet in the current round, whose games
    are the results of rounds after ``rounds_played``)."""
    ko_tiebreak: str = "rapid"
    """Knockout: how a level match is decided (:data:`KO_TIEBREAKS`)."""
    points: Points = FIDE_POINTS
    """What a win, a draw and a loss give (a bye: what the result it stands for gives)."""


@dataclass
class PlayerForecast:
    name: str
    score: float
    p_first: float
    p_winner: float
    p_top3: float
    expected_score: float
    max_score: float
    """The score with every game left won."""
    distribution: dict[float, float]
    needs: float | None
    """The lowest final score that gives at least even chances of (shared) first; None if none reachable does."""


@dataclass
class Forecast:
    players: list[PlayerForecast]
    simulations: int
    rounds_left: int
    notes: list[str] = field(default_factory=list)
    sims: Sims | None = None
    """Every simulation, when kept (:func:`reweigh`)."""
    ess: float | None = None
    """The simulations' worth once weighed (effective sample size), when they are weighed."""


def berger(n: int) -> list[list[tuple[int, int]]]:
    """FIDE's Berger tables: per round, (White, Black) pairing numbers; with n odd, number n+1 is the bye.

    >>> berger(4)
    [[(1, 4), (2, 3)], [(4, 3), (1, 2)], [(2, 4), (3, 1)]]
    >>> berger(6)[1]
    [(6, 4), (5, 3), (1, 2)]
    """
    m = n + (n % 2)
    half = m // 2
    pairs = [(i, m + 1 - i) for i in range(1, half + 1)]
    out = []
    for r in range(1, m):
        rnd = []
        for a, b in pairs:
            if m in (a, b):
                other = a if b == m else b
                rnd.append((m, other) if r % 2 == 0 else (other, m))
            else:
                rnd.append((a, b))
        out.append(rnd)

        def shift(x: int) -> int:
            return x if x == m else (x - 1 + half) % (m - 1) + 1
        pairs = [(shift(a), shift(b)) for a, b in rnd]
    return out


def infer_numbers(n: int, games: Sequence[tuple[int, int, int, int]]) -> list[int] | None:
    """Berger pairing numbers of ``n`` players (indices 0..n-1) from games ``(round, board, white, black)``.

    Round 1's boards give the numbers (board b: the b-th pairing of the table's first round); every game
    of the event must then be the table's pairing with the table's colours (a double round robin's second
    half reversed). None when the games do not fit.

    >>> table = berger(4)
    >>> games = [(r + 1, b + 1, w - 1, bl - 1) for r, rnd in enumerate(table) for b, (w, bl) in enumerate(rnd)]
    >>> infer_numbers(4, games)
    [1, 2, 3, 4]
    >>> infer_numbers(4, [(1, 1, 0, 3), (2, 1, 0, 3)]) is None
    True
    """
    table = berger(n)
    m = n + n % 2
    first = [g for g in games if g[0] == 1]
    if not first:
        return None
    for offset in ((0, 1) if n % 2 else (0,)):
        numbers: dict[int, int] = {}
        ok = True
        for _, board, w, b in first:
            k = board - 1 + offset
            if not 0 <= k < m // 2 or (n % 2 and m in table[0][k]):
                ok = False
                break
            numbers[w], numbers[b] = table[0][k]
        if not ok or len(set(numbers.values())) != len(numbers):
            continue
        missing = [i for i in range(n) if i not in numbers]
        free = [x for x in range(1, n + 1) if x not in numbers.values()]
        if len(missing) != len(free) or len(missing) > 1:
            continue
        numbers.update(zip(missing, free))
        fits = True
        for rnd, _, w, b in games:
            leg, r = divmod(rnd - 1, m - 1)
            if leg > 1 or (numbers[w], numbers[b]) not in (
                    set(table[r]) if leg == 0 else {(y, x) for x, y in table[r]}):
                fits = False
                break
        if fits:
            return [numbers[i] for i in range(n)]
    return None


def _scores(st: EventState) -> Int:
    """Points so far in units of the event's :attr:`Points.step` (exact ties)."""
    unit = st.points.units
    s = np.zeros(len(st.players), np.int64)
    for r in st.results:
        s[r.white] += unit[round(2 * r.score)]
        s[r.black] += unit[2 - round(2 * r.score)]
    for p, pts in st.byes:
        s[p] += unit[round(2 * pts)]
    return s


def _draw(probs: Float, u: NDArray[np.float32]) -> NDArray[np.int8]:
    """White's result codes (2 a win, 1 a draw, 0 a loss: White's game half-points) of games drawn from (.., 3)
    probabilities with uniforms ``u``."""
    w = probs[..., 0].astype(np.float32)
    wd = (probs[..., 0] + probs[..., 1]).astype(np.float32)
    return ((u < wd).astype(np.int8) + (u < w).astype(np.int8))


@dataclass
class _Games:
    """Every game of every simulation: white, black (n, G) or (G,) and White's result codes (n, G) (:func:`_draw`)."""

    a: list[Int] = field(default_factory=list)
    b: list[Int] = field(default_factory=list)
    r: list[NDArray[np.int8]] = field(default_factory=list)
    ongoing: NDArray[np.int8] | None = None
    """White's result codes of the games in progress, (n, len(st.ongoing)), in their order."""

    def add(self, a: Int, b: Int, r: NDArray[np.int8]) -> None:
        self.a.append(a)
        self.b.append(b)
        self.r.append(r)


def _scatter(n: int, p: int, idx: Int, weights: Float) -> Float:
    """Sum ``weights`` (n, k) into (n, p) at player indices ``idx`` ((n, k) or (k,))."""
    if idx.ndim == 1 and p <= 64:  # few players: one product with the incidence matrix
        inc = np.zeros((len(idx), p))
        inc[np.arange(len(idx)), idx] = 1.0
        out: Float = np.asarray(weights, np.float64) @ inc
        return out
    idx = np.broadcast_to(idx, weights.shape)
    flat = (np.arange(n)[:, None] * p + idx).ravel()
    summed: Float = np.bincount(flat, weights=weights.ravel(), minlength=n * p).astype(np.float64)
    return summed.reshape(n, p)


def _winners(final_u: Int, games: _Games, tiebreaks: Sequence[str]) -> Float:
    """Per simulation the share of the title of each player under the tiebreaks (ties left split).

    Only the simulations with a tie for first are looked at again.
    """
    cand = final_u == final_u.max(axis=1, keepdims=True)
    tied = np.flatnonzero(cand.sum(axis=1) > 1)
    if len(tied) and tiebreaks:
        sub = final_u[tied]
        c = cand[tied]
        n, p = sub.shape
        for tb in tiebreaks:
            vals = np.zeros((n, p))
            for a, b, r in zip(games.a, games.b, games.r):
                rf = r[tied].astype(np.float64)
                if a.ndim == 1:
                    sa, sb, ca, cb = sub[:, a], sub[:, b], c[:, a], c[:, b]
                else:
                    a, b = a[tied], b[tied]
                    sa, sb = np.take_along_axis(sub, a, 1), np.take_along_axis(sub, b, 1)
                    ca, cb = np.take_along_axis(c, a, 1), np.take_along_axis(c, b, 1)
                if tb == "direct":
                    both = ca & cb
                    vals += _scatter(n, p, a, rf * both) + _scatter(n, p, b, (2 - rf) * both)
                elif tb == "sb":
                    vals += _scatter(n, p, a, rf * sb) + _scatter(n, p, b, (2 - rf) * sa)
                else:  # buchholz
                    vals += _scatter(n, p, a, sb.astype(np.float64)) + _scatter(n, p, b, sa.astype(np.float64))
            v = np.where(c, vals, -np.inf)
            c &= v >= v.max(axis=1, keepdims=True) - 1e-9
        cand[tied] = c
    share: Float = cand / cand.sum(axis=1, keepdims=True)
    return share


def _shares(final_u: Int, slots: int) -> Float:
    """Per simulation each player's share of the top ``slots`` places, ties split equally.

    A player above the ``slots``-th best score is in; one level with it shares the places left.
    """
    p = final_u.shape[1]
    t = final_u.max(axis=1, keepdims=True) if slots == 1 else np.partition(final_u, p - slots, axis=1)[:, p - slots: p - slots + 1]
    above = (final_u > t).sum(axis=1, keepdims=True)
    level = (final_u == t).sum(axis=1, keepdims=True)
    share: Float = np.where(final_u > t, 1.0, np.where(final_u == t, (slots - above) / level, 0.0))
    return share


def _rr_games(st: EventState, model: GameModel) -> tuple[Int, Int, Float]:
    """A round robin's games left (White, Black) with their probabilities, the games in progress last."""
    p = len(st.players)
    legs = 2 if st.format == "drr" else 1
    ratings = np.asarray(st.ratings, np.float64)
    met: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for res in st.results:
        met.setdefault((min(res.white, res.black), max(res.white, res.black)), []).append((res.white, res.black))
    for w, b, _ in st.ongoing:
        met.setdefault((min(w, b), max(w, b)), []).append((w, b))
    colour: dict[tuple[int, int], tuple[int, int]] = {}
    if st.numbers is not None:
        index = {num: i for i, num in enumerate(st.numbers)}
        for rnd in berger(p):
            for x, y in rnd:
                if x in index and y in index:
                    colour[(min(index[x], index[y]), max(index[x], index[y]))] = (index[x], index[y])
    wa: list[int] = []
    ba: list[int] = []
    neutral: list[bool] = []
    for i in range(p):
        for j in range(i + 1, p):
            if i in st.withdrawn or j in st.withdrawn:
                continue
            done = met.get((i, j), [])
            for leg in range(len(done), legs):
                if done:
                    w, b = done[-1][1], done[-1][0]  # reversed colours of the last game
                    neutral.append(False)
                elif (i, j) in colour:
                    w, b = colour[(i, j)]
                    if leg == 1:
                        w, b = b, w
                    neutral.append(False)
                else:
                    w, b = (i, j)
                    neutral.append(legs == 1)
                wa.append(w)
                ba.append(b)
                done = [*done, (w, b)]
    a_idx = np.asarray(wa, np.int64)
    b_idx = np.asarray(ba, np.int64)
    probs = model(ratings[a_idx], ratings[b_idx]) if len(a_idx) else np.zeros((0, 3))
    nm = np.asarray(neutral, bool)
    if nm.any():  # colours unknown: the mean of both colours (White's view of player a)
        rev = model(ratings[b_idx[nm]], ratings[a_idx[nm]])
        probs[nm] = (probs[nm] + rev[:, ::-1]) / 2
    if st.ongoing:
        a_idx = np.concatenate([a_idx, [w for w, _, _ in st.ongoing]]).astype(np.int64)
        b_idx = np.concatenate([b_idx, [b for _, b, _ in st.ongoing]]).astype(np.int64)
        probs = np.concatenate([probs, np.asarray([q for _, _, q in st.ongoing], np.float64).reshape(-1, 3)])
    return a_idx, b_idx, probs


def _rr(st: EventState, n: int, rng: np.random.Generator, model: GameModel,
        games: _Games) -> tuple[Int, int, Int]:
    """Final scores (units of the event's points) of ``n`` simulations, the rounds left, and each player's games
    left."""
    p = len(st.players)
    a_idx, b_idx, probs = _rr_games(st, model)
    u = rng.random((n, len(a_idx)), dtype=np.float32)
    r = _draw(probs, u)
    games.add(a_idx, b_idx, r)
    if st.ongoing:
        games.ongoing = r[:, len(a_idx) - len(st.ongoing):]
    final_u = np.broadcast_to(_scores(st), (n, p)).copy()
    if len(a_idx):  # fixed pairings: products with the games' incidences (float32 is exact here)
        lut = np.asarray(st.points.units, np.float32)
        rows = np.arange(len(a_idx))
        inc_w = np.zeros((len(a_idx), p), np.float32)
        inc_w[rows, a_idx] = 1
        inc_b = np.zeros((len(a_idx), p), np.float32)
        inc_b[rows, b_idx] = 1
        final_u += (lut[r] @ inc_w + lut[2 - r] @ inc_b).round().astype(np.int64)
    per_round = max(1, (p - len(st.withdrawn)) // 2)
    left = np.bincount(a_idx, minlength=p) + np.bincount(b_idx, minlength=p)
    return final_u, math.ceil(len(a_idx) / per_round), left


class SimCache:
    """What a caller that forecasts the same event again and again keeps between calls (the live forecast): the
    game model's probabilities of every (White, Black) pairing of the field, computed once per set of ratings.

    >>> cache = SimCache()
    >>> w, wd = cache.pair_table(np.array([2700.0, 2500.0]), lambda a, b: pregame_arrays(a, b))
    >>> w.shape, bool(w[1] > w[2])      # row white * p + black: 2700 v 2500 against 2500 v 2700
    ((4,), True)
    """

    def __init__(self) -> None:
        self._key: bytes | None = None
        self._table: tuple[NDArray[np.float32], NDArray[np.float32]] | None = None
        self.builds = 0

    def pair_table(self, ratings: Float, model: GameModel) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        key = ratings.tobytes()
        if self._table is None or key != self._key:
            p = len(ratings)
            table = model(np.repeat(ratings, p), np.tile(ratings, p))  # row white * p + black
            self._table = (table[:, 0].astype(np.float32), (table[:, 0] + table[:, 1]).astype(np.float32))
            self._key = key
            self.builds += 1
        return self._table


def _swiss(st: EventState, n: int, rng: np.random.Generator, model: GameModel, games: _Games,
           rounds_left: int, cache: SimCache | None = None) -> Int:
    """Final scores (units of the event's points) of ``n`` simulations of a Swiss: each round paired Dutch-like in
    every simulation.

    Pairing: players sorted by score then rating; each score group made even by floating its last player down;
    the top half of a group meets its bottom half. Nobody meets the same opponent twice: neither one met over
    the board already nor one met in the simulation's own rounds (:func:`_mend`). Colours: the player with fewer
    Whites gets White; with as many, the one who had Black in the last round; then a coin.
    """
    p = len(st.players)
    ratings = np.asarray(st.ratings, np.float64)
    # every pairing's probabilities looked up in a table of all p² pairings when that is the smaller work (or kept)
    tabled = cache is not None and p <= 2500 or p * p <= n * (p // 2) * max(rounds_left, 1)  # 2,500: 50 MB
    if tabled:
        win_t, windraw_t = (cache or SimCache()).pair_table(ratings, model)
    final_u = np.broadcast_to(_scores(st), (n, p)).astype(np.int16)
    lut = np.asarray(st.points.units, np.int16)
    balance = np.zeros(p, np.int16)
    last_colour = np.zeros(p, np.int8)  # +1 White, -1 Black in the player's latest game over the board
    last_round = np.full(p, -1, np.int64)
    met_pairs = np.zeros((p, p), bool)  # who met whom over the board
    for i, res in enumerate(st.results):
        if not res.forfeit:
            balance[res.white] += 1
            balance[res.black] -= 1
            met_pairs[res.white, res.black] = met_pairs[res.black, res.white] = True
            order = (res.round or 0) * 1_000_000 + i
            for who, c in ((res.white, 1), (res.black, -1)):
                if order >= last_round[who]:
                    last_round[who], last_colour[who] = order, c
    bal = np.broadcast_to(balance, (n, p)).copy()
    last = np.broadcast_to(last_colour, (n, p)).copy()
    active = np.array([i for i in range(p) if i not in st.withdrawn], np.int32)
    m = len(active)
    if m < 2:
        return final_u.astype(np.int64)
    by_rating = active[np.argsort(-ratings[active], kind="stable")]  # highest rated first
    rows = np.arange(n)[:, None]
    met = met_pairs.ravel()
    opp = np.full((n, max(rounds_left, 1), p), -1, np.int16 if p < 32_000 else np.int32)  # own rounds' opponents
    if st.ongoing:  # the games of the round in progress, with their own probabilities
        wo = np.array([w for w, _, _ in st.ongoing], np.int64)
        bo = np.array([b for _, b, _ in st.ongoing], np.int64)
        r0 = _draw(np.asarray([q for _, _, q in st.ongoing], np.float64), rng.random((n, len(wo)), dtype=np.float32))
        games.add(wo, bo, r0)
        games.ongoing = r0
        final_u[:, wo] += lut[r0]
        final_u[:, bo] += lut[2 - r0]
        bal[:, wo] += 1
        bal[:, bo] -= 1
        last[:, wo], last[:, bo] = 1, -1
        met[wo * p + bo] = met[bo * p + wo] = True  # the same for every simulation: their own round is over
    k = m - (m % 2)
    pos = np.arange(k, dtype=np.int32)
    for rnd in range(rounds_left):
        # stable radix sort on the score alone keeps the rating order within a score
        srt = by_rating[np.argsort(-final_u[:, by_rating], axis=1, kind="stable")]
        if m % 2:  # the lowest placed gets the bye
            bye = srt[:, -1]
            final_u[np.arange(n), bye] += lut[round(2 * st.bye_points)]
            srt = srt[:, :-1]
        s_sorted = np.take_along_axis(final_u, srt, 1)
        starts = np.zeros((n, k), bool)
        starts[:, 0] = True
        starts[:, 1:] = s_sorted[:, 1:] != s_sorted[:, :-1]
        even_start = np.zeros((n, k + 1), bool)
        rr, cc = np.nonzero(starts)
        even_start[rr, cc + (cc % 2)] = True  # an odd group floats its last player down
        even_start = even_start[:, :k]
        block_start = np.maximum.accumulate(np.where(even_start, pos, np.int32(0)), axis=1)
        nxt = np.where(even_start, pos, np.int32(k))
        nxt = np.concatenate([nxt[:, 1:], np.full((n, 1), k, np.int32)], axis=1)
        block_end = np.ascontiguousarray(np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1])
        half = (block_end - block_start) >> 1
        top = (pos - block_start) < half
        a_pl = np.nonzero(top)[1].reshape(n, k // 2).astype(np.int32)  # every row has k/2 top places, in order
        b_pl = a_pl + np.take_along_axis(half, a_pl, 1)
        a_ids = np.take_along_axis(srt, a_pl, 1).astype(np.int64)
        b_ids = np.take_along_axis(srt, b_pl, 1).astype(np.int64)
        _mend(a_ids, b_ids, met, opp[:, :rnd], p)
        ba_, bb_ = bal[rows, a_ids], bal[rows, b_ids]
        la, lb = last[rows, a_ids], last[rows, b_ids]
        coin = rng.random((n, k // 2)) < 0.5
        a_white = (ba_ < bb_) | ((ba_ == bb_) & ((la < lb) | ((la == lb) & coin)))
        white = np.where(a_white, a_ids, b_ids)
        black = np.where(a_white, b_ids, a_ids)
        u = rng.random((n, k // 2), dtype=np.float32)
        if tabled:
            cell = white * p + black
            r = (u < windraw_t.take(cell)).astype(np.int8) + (u < win_t.take(cell)).astype(np.int8)
        else:
            r = _draw(model(ratings[white.ravel()], ratings[black.ravel()]).reshape(n, k // 2, 3), u)
        games.add(white, black, r)
        # a player is in at most one game of a round: plain fancy-index updates add correctly
        final_u[rows, white] += lut[r]
        final_u[rows, black] += lut[2 - r]
        bal[rows, white] += 1
        bal[rows, black] -= 1
        last[rows, white], last[rows, black] = 1, -1
        opp[rows, rnd, white], opp[rows, rnd, black] = black, white
    return final_u.astype(np.int64)


def _met(a: Int, b: Int, met: NDArray[np.bool_], opp: NDArray[np.int16] | NDArray[np.int32], p: int) -> NDArray[np.bool_]:
    """Whether each pairing ``a[s, j]``-``b[s, j]`` met already: over the board, or in simulation ``s``'s own rounds."""
    rows = np.arange(a.shape[0])[:, None]
    seen = met[a * p + b]
    for r in range(opp.shape[1]):
        seen |= opp[rows, r, a] == b
    out: NDArray[np.bool_] = seen
    return out


def _mend(a: Int, b: Int, met: NDArray[np.bool_], opp: NDArray[np.int16] | NDArray[np.int32], p: int) -> None:
    """Mend pairings of two who met already by exchanging opponents with the nearest pairing where neither new
    pairing is a repeat (in place): first every pair of neighbouring pairings at once, then one by one what is
    left, trying pairings further away. A repeat nothing mends stays (a tiny field late in the event)."""
    n, j = a.shape
    if j < 2:
        return
    bad = _met(a, b, met, opp, p)
    if not bad.any():
        return
    for parity in (0, 1, 0):  # neighbours, all simulations at once
        i = np.arange(parity, j - 1, 2)
        a0, a1, b0, b1 = a[:, i], a[:, i + 1], b[:, i], b[:, i + 1]
        want = bad[:, i] | bad[:, i + 1]
        if not want.any():
            continue
        ok = want & ~_met(a0, b1, met, opp, p) & ~_met(a1, b0, met, opp, p)
        b[:, i], b[:, i + 1] = np.where(ok, b1, b0), np.where(ok, b0, b1)
        bad[:, i] &= ~ok
        bad[:, i + 1] &= ~ok
    for s, x in zip(*np.nonzero(bad)):  # what is left, one by one
        if not _met(a[s:s + 1, x:x + 1], b[s:s + 1, x:x + 1], met, opp[s:s + 1], p)[0, 0]:
            continue  # mended by an earlier exchange
        for d in range(1, j):
            done = False
            for y in (x + d, x - d):
                if not 0 <= y < j:
                    continue
                pa = np.array([[a[s, x], a[s, y]]])
                pb = np.array([[b[s, y], b[s, x]]])
                if not _met(pa, pb, met, opp[s:s + 1], p).any():
                    b[s, x], b[s, y] = b[s, y], b[s, x]
                    done = True
                    break
            if done:
                break


def _match(count: int, half: Int, done: Int | None, probs_of: GameModel, ra: Float, rb: Float,
           valid: NDArray[np.bool_], rng: np.random.Generator) -> Int:
    """Player a's half-points after ``count`` games against b (a White in the first), added to ``half``; a game
    already played (``done`` of them per match) is not played again."""
    for g in range(count):
        a_white = (g % 2) == 0
        pw = probs_of(np.where(a_white, ra, rb).ravel(), np.where(a_white, rb, ra).ravel()).reshape(*ra.shape, 3)
        res = _draw(pw, rng.random(ra.shape, dtype=np.float32)).astype(np.int64)
        got = res if a_white else 2 - res
        todo = valid if done is None else valid & (done <= g)
        half = half + np.where(todo, got, 0)
    return half


def _ko(st: EventState, n: int, rng: np.random.Generator, model: GameModel, rapid: ForecastParams) -> Float:
    """Per simulation, 1 for the knockout's winner."""
    p = len(st.players)
    ratings = np.asarray(st.ratings, np.float64)
    bracket = list(st.bracket or [])
    if len(bracket) == 0:
        raise StateError("knockout: the players still in (their bracket order) are not known")
    # current match scores between bracket neighbours, from this round's results
    cur = st.rounds_played
    alive = np.broadcast_to(np.asarray(bracket, np.int64), (n, len(bracket))).copy()
    first = True
    while alive.shape[1] > 1:
        if alive.shape[1] % 2:
            alive = np.concatenate([alive, np.full((n, 1), -1)], axis=1)  # a bye: the last goes through
        a, b = alive[:, 0::2], alive[:, 1::2]
        half_a = np.zeros(a.shape, np.int64)
        played = np.zeros(a.shape, np.int64)
        if first:
            for j in range(a.shape[1]):
                x, y = int(a[0, j]), int(b[0, j])
                for r in st.results:
                    if {r.white, r.black} == {x, y} and (cur is None or r.round is None or r.round > cur):
                        half_a[:, j] += round(2 * r.score) if r.white == x else 2 - round(2 * r.score)
                        played[:, j] += 1
        first = False
        valid = b >= 0
        ra, rb = ratings[np.maximum(a, 0)], ratings[np.maximum(b, 0)]

        half_a = _match(st.games_per_match, half_a, played, model, ra, rb, valid, rng)
        total = 2 * st.games_per_match
        level = half_a * 2 == total
        if st.ko_tiebreak == "elo":
            e = 1.0 / (1.0 + 10 ** (-(ra - rb) / 400.0))
            tb = rng.random(a.shape) < e
        else:
            rapid_model: GameModel = lambda w, b: pregame_arrays(w, b, rapid)  # noqa: E731
            tb_half = np.full(a.shape, 2, np.int64)  # level: Armageddon
            if st.ko_tiebreak == "rapid":
                tb_half = _match(2, np.zeros(a.shape, np.int64), None, rapid_model, ra, rb, valid, rng)
            still = tb_half == 2
            # Armageddon: one game, a draw is Black's; White by lot
            a_white = rng.random(a.shape) < 0.5
            pw = rapid_model(np.where(a_white, ra, rb).ravel(), np.where(a_white, rb, ra).ravel()).reshape(*a.shape, 3)
            res = _draw(pw, rng.random(a.shape, dtype=np.float32))
            white_wins = res == 2
            arm_a = np.where(a_white, white_wins, ~white_wins)
            tb = (tb_half > 2) | (still & arm_a)
        a_wins = (half_a * 2 > total) | (level & tb) | ~valid
        alive = np.where(a_wins, a, b)
    win = np.zeros((n, p))
    win[np.arange(n), alive[:, 0]] = 1.0
    return win


def _decided(st: EventState, model: GameModel, rounds_left: int, now_u: Int) -> Forecast | None:
    """The forecast without simulating when the outcome is decided: no game is left (the standings are final), or
    the leader is out of everyone's reach (first is exact; for a round robin so are the expected scores and the
    score distributions, each player's games left being independent). None when it is not decided."""
    p = len(st.players)
    probs = np.zeros((0, 3))
    if st.format in ("rr", "drr"):
        a_idx, b_idx, probs = _rr_games(st, model)
        left = np.bincount(a_idx, minlength=p) + np.bincount(b_idx, minlength=p)
        per_round = max(1, (p - len(st.withdrawn)) // 2)
        rounds_left = math.ceil(len(a_idx) / per_round)
    elif st.format == "swiss":
        left = np.array([0 if i in st.withdrawn else rounds_left for i in range(p)], np.int64)
        for wo, bo, _ in st.ongoing:
            left[[wo, bo]] += 1
    else:
        return None
    step, (u_loss, u_draw, u_win) = st.points.step, st.points.units
    top_u = int(now_u.max())
    max_u = now_u + u_win * left
    leader = int(np.argmax(now_u))
    nothing_left = not left.any()
    clinched = nothing_left or bool(now_u[leader] > np.delete(max_u, leader).max())
    if not clinched:
        return None
    if nothing_left:  # the standings are final: the one completion, the tiebreaks on the games played
        games = _Games()
        played = [r for r in st.results if not r.forfeit]
        if played:
            games.add(np.array([r.white for r in played], np.int64), np.array([r.black for r in played], np.int64),
                      np.array([[round(2 * r.score) for r in played]], np.int8))
        final_u = now_u[None, :]
        first = _shares(final_u, 1)[0]
        winner = _winners(final_u, games, st.tiebreaks)[0] if st.tiebreaks else first
        top3 = _shares(final_u, min(3, p))[0]
        players = [PlayerForecast(st.players[i], now_u[i] * step, float(first[i]), float(winner[i]), float(top3[i]),
                                  now_u[i] * step, now_u[i] * step, {now_u[i] * step: 1.0},
                                  now_u[i] * step if now_u[i] == top_u else None) for i in range(p)]
        return Forecast(players, 0, 0, ["the event is decided: no game is left, the standings are final "
                                        "(exact, nothing simulated)"])
    # the leader has clinched first: exact chances of first; a round robin's scores by convolution
    dists: list[dict[float, float]] = []
    expected = np.full(p, math.nan)
    if st.format in ("rr", "drr"):
        expected = now_u * step
        conv: list[Float] = [np.zeros(1) + 1.0 for _ in range(p)]  # units gained: their distribution
        for a, b, q in zip(a_idx.tolist(), b_idx.tolist(), probs.tolist()):
            expected[a] += (q[0] * u_win + q[1] * u_draw + q[2] * u_loss) * step
            expected[b] += (q[2] * u_win + q[1] * u_draw + q[0] * u_loss) * step
            for who, (lose, draw, win) in ((a, (q[2], q[1], q[0])), (b, (q[0], q[1], q[2]))):
                kernel = np.zeros(u_win + 1)
                kernel[[u_loss, u_draw, u_win]] += (lose, draw, win)
                conv[who] = np.convolve(conv[who], kernel)
        dists = [{(now_u[i] + k) * step: float(c) for k, c in enumerate(conv[i]) if c > 0} for i in range(p)]
    else:
        dists = [{} for _ in range(p)]
    order = np.argsort(-now_u, kind="stable")
    top3 = np.full(p, math.nan)
    if p > 3 and now_u[order[2]] > max_u[order[3:]].max():  # the top three out of reach too
        top3 = np.isin(np.arange(p), order[:3]).astype(np.float64)
    elif p <= 3:
        top3 = np.ones(p)
    players = [PlayerForecast(st.players[i], now_u[i] * step, float(i == leader), float(i == leader), float(top3[i]),
                              float(expected[i]), float(max_u[i] * step), dists[i],
                              now_u[i] * step if i == leader else None) for i in range(p)]
    notes = [f"{st.players[leader]} has clinched first: nobody can reach {now_u[leader] * step:g} (exact, nothing "
             "simulated)" + ("" if st.format in ("rr", "drr") else "; expected scores not computed")
             + ("" if not np.isnan(top3).any() else "; top-3 chances not computed (the places behind are open)")]
    return Forecast(players, 0, rounds_left, notes)


def simulate(st: EventState, n: int = 100_000, seed: int | None = None, params: ForecastParams = DEFAULT,
             model: GameModel | None = None, chunk: int | None = None, *, se: float | None = None,
             cache: SimCache | None = None, exact: bool = True, tiebreak_params: ForecastParams = RAPID,
             keep: bool = False, progress: Callable[[Forecast], bool] | None = None) -> Forecast:
    """The forecast of ``st`` from at most ``n`` simulations (in chunks of ``chunk``, by default sized to about a
    million player-rows: the arrays stay in memory already touched); raises StateError on a state it cannot
    play on (unknown rounds, an unknown format).

    ``se``: stop early, after a whole chunk, once every player's chance of first has a standard error of at most
    ``se`` (``sqrt(p(1 − p)/n)``); ``Forecast.simulations`` says how many were run. ``cache``: what a caller
    forecasting the same event again keeps between calls. ``exact``: a decided outcome (no game left, or a
    leader out of reach) is answered exactly without simulating (:func:`_decided`), and said in a note.
    ``keep``: keep every simulation in ``Forecast.sims`` (not for a knockout), for :func:`reweigh`.
    ``progress``: called after every chunk but the last with the forecast so far (without ``sims``); when it
    returns False the simulation stops there, and the forecast of the chunks run is the answer (a caller that
    shows the first chunk at once and stops when its input moved on).
    """
    if st.format not in FORMATS:
        raise StateError(f"event format {st.format!r}: expected one of {', '.join(FORMATS)}")
    for tb in st.tiebreaks:
        if tb not in TIEBREAKS:
            raise StateError(f"tiebreak {tb!r}: expected one of {', '.join(TIEBREAKS)}")
    if st.ko_tiebreak not in KO_TIEBREAKS:
        raise StateError(f"knockout tiebreak {st.ko_tiebreak!r}: expected one of {', '.join(KO_TIEBREAKS)}")
    p = len(st.players)
    if p < 2:
        raise StateError("fewer than two players: nothing to forecast")
    if chunk is None:
        chunk = max(1000, min(25_000, 1_500_000 // p))
    if se is not None:
        chunk = max(250, min(chunk, n // 8))
    if len(st.ratings) != p:
        raise StateError("one rating per player is needed")
    for r in st.results:
        if not (0 <= r.white < p and 0 <= r.black < p) or r.score not in (0.0, 0.5, 1.0):
            raise StateError(f"a result out of range: {r}")
    game_model: GameModel = model or (lambda w, b: pregame_arrays(w, b, params))
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    rounds_left = 0
    if st.format in ("swiss", "ko"):
        if st.rounds is None and st.format == "swiss":
            raise StateError("the number of rounds is not known: give it (--rounds N or [event] rounds)")
        done = st.rounds_played if st.rounds_played is not None else max(
            (r.round or 0 for r in st.results), default=0)
        rounds_left = max(0, (st.rounds or 0) - done)
    now_u = _scores(st)
    if exact:
        decided = _decided(st, game_model, rounds_left, now_u)
        if decided is not None:
            return decided
    first = np.zeros(p)
    winner = np.zeros(p)
    top3 = np.zeros(p)
    total = np.zeros(p)
    most_left = 2 * (p - 1) if st.format in ("rr", "drr") else rounds_left + 2  # a game in progress, a bye
    size = int(now_u.max()) + max(st.points.units) * (most_left + 1)  # above any final score, in units
    hist = np.zeros((p, size))
    cond_sum = np.zeros((p, size))
    left = np.zeros(p, np.int64)  # games (or byes) each player has left: the best final score
    kept: list[tuple[NDArray[np.int8], NDArray[np.int16], NDArray[np.float32], NDArray[np.float32],
                     NDArray[np.float32]]] = []
    keep = keep and st.format != "ko" and bool(st.ongoing) and n * p <= 20_000_000
    target = st
    ran = 0
    while ran < n:
        m = min(chunk, n - ran)
        ran += m
        games = _Games()
        played = [r for r in st.results if not r.forfeit]  # finished games take part in the tiebreaks
        if played:
            games.add(np.array([r.white for r in played], np.int64), np.array([r.black for r in played], np.int64),
                      np.broadcast_to(np.array([round(2 * r.score) for r in played], np.int8), (m, len(played))))
        if st.format in ("rr", "drr"):
            final_u, rounds_left, left = _rr(target, m, rng, game_model, games)
        elif st.format == "swiss":
            final_u = _swiss(target, m, rng, game_model, games, rounds_left, cache)
            left = np.array([0 if i in st.withdrawn else rounds_left for i in range(p)], np.int64)
            for wo, bo, _ in st.ongoing:
                left[[wo, bo]] += 1
        else:
            ko_win = _ko(st, m, rng, game_model, tiebreak_params)
            first += ko_win.sum(axis=0)
            winner += ko_win.sum(axis=0)
            if se is not None and _settled(first, ran, se):
                break
            if progress is not None and ran < n and not progress(
                    _summary(st, ran, rounds_left, notes, now_u, left, first, winner, top3, total, hist, cond_sum)):
                break
            continue
        share = _shares(final_u, 1)
        share3 = _shares(final_u, min(3, p))
        title = _winners(final_u, games, st.tiebreaks) if st.tiebreaks else share
        if keep:
            assert games.ongoing is not None  # noqa: S101 - keep needs games in progress, and they were drawn
            kept.append((games.ongoing.astype(np.int8), final_u.astype(np.int16), share.astype(np.float32),
                         share3.astype(np.float32), title.astype(np.float32)))
        first += share.sum(axis=0)
        top3 += share3.sum(axis=0)
        winner += title.sum(axis=0)
        total += final_u.sum(axis=0)
        cell = (np.arange(p) * size + final_u).ravel()  # (player, final score) of every simulation
        hist += np.bincount(cell, minlength=p * size).reshape(p, size)
        sr, sp = np.nonzero(share)  # few players share first in a simulation: only theirs are counted
        cond_sum += np.bincount(sp * size + final_u[sr, sp], weights=share[sr, sp], minlength=p * size).reshape(p, size)
        if se is not None and _settled(first, ran, se):
            break
        if progress is not None and ran < n and not progress(
                _summary(st, ran, rounds_left, notes, now_u, left, first, winner, top3, total, hist, cond_sum)):
            break
    n = ran
    if keep:
        proposal = np.asarray([g[2] for g in st.ongoing], np.float64).reshape(-1, 3)
        outcomes, finals, firsts, threes, titles = (np.concatenate([k[j] for k in kept]) for j in range(5))
        sims = Sims([(w, b) for w, b, _ in st.ongoing], proposal, outcomes, finals, firsts, threes, titles,
                    now_u=now_u, left=left, rounds_left=rounds_left, size=size, names=list(st.players), notes=notes,
                    counts=hist)
        out_kept = reweigh(sims, st, min_ess=0.0)
        assert out_kept is not None  # noqa: S101 - min_ess 0 always answers
        return out_kept
    return _summary(st, n, rounds_left, notes, now_u, left, first, winner, top3, total, hist, cond_sum)


def _summary(st: EventState, n: int, rounds_left: int, notes: list[str], now_u: Int, left: Int, first: Float,
             winner: Float, top3: Float, total: Float, hist: Float, cond_sum: Float) -> Forecast:
    """The forecast of ``n`` simulations from their sums."""
    p = len(st.players)
    step, win = st.points.step, st.points.units[2]
    if st.format == "ko":
        players = [PlayerForecast(st.players[i], float(now_u[i] * step), first[i] / n, winner[i] / n, float("nan"),
                                  float("nan"), float("nan"), {}, None) for i in range(p)]
        return Forecast(players, n, rounds_left, list(notes))
    out = []
    for i in range(p):
        dist = {s * step: float(c / n) for s, c in enumerate(hist[i]) if c}
        needs = None
        for s in range(int(now_u[i]), hist.shape[1]):
            if hist[i, s] >= 20 and cond_sum[i, s] / hist[i, s] >= 0.5:
                needs = s * step
                break
        out.append(PlayerForecast(st.players[i], float(now_u[i] * step), float(first[i] / n), float(winner[i] / n),
                                  float(top3[i] / n), float(total[i] / n * step), float((now_u[i] + win * left[i]) * step),
                                  dist, needs))
    return Forecast(out, n, rounds_left, list(notes))


@dataclass
class Sims:
    """Every simulation of a forecast kept (``simulate(..., keep=True)``), so that new probabilities of the games in
    progress are a new forecast by weighing them again (:func:`reweigh`), without simulating."""

    pairs: list[tuple[int, int]]
    """The games in progress, (White, Black)."""
    proposal: Float
    """(G, 3): the probabilities their results were drawn from."""
    outcomes: NDArray[np.int8]
    """(n, G): White's result code in each (:func:`_draw`)."""
    final_u: NDArray[np.int16]
    """(n, p): every player's final score, in units of the event's points."""
    first: NDArray[np.float32]
    top3: NDArray[np.float32]
    winner: NDArray[np.float32]
    now_u: Int
    left: Int
    rounds_left: int
    size: int
    names: list[str]
    notes: list[str]
    counts: Float
    """(p, size): simulations with each final score of each player."""


def reweigh(sims: Sims, st: EventState, min_ess: float = 0.3) -> Forecast | None:
    """The forecast of ``st`` from the kept simulations ``sims`` of the same event whose games in progress have new
    probabilities (importance weights: each simulation weighs the new probability of its results of those games
    over the one they were drawn with). None when the games in progress are not the same ones, or when the
    weights leave fewer than ``min_ess`` of the simulations' worth (effective sample size): simulate again.

    >>> st = EventState(["A", "B", "C"], [2600, 2500, 2400], "rr", rounds=3, results=[Result(0, 2, 1.0), Result(2, 1, 0.0)],
    ...                 ongoing=[(0, 1, (0.4, 0.4, 0.2))])
    >>> f = simulate(st, 20000, seed=1, keep=True)
    >>> st.ongoing = [(0, 1, (0.9, 0.1, 0.0))]
    >>> g = reweigh(f.sims, st)
    >>> round(f.players[0].p_first, 2), round(g.players[0].p_first, 2), g.simulations
    (0.6, 0.95, 20000)
    """
    if [(w, b) for w, b, _ in st.ongoing] != sims.pairs:
        return None
    q = np.asarray([g[2] for g in st.ongoing], np.float64).reshape(-1, 3)
    with np.errstate(divide="ignore"):
        lq = np.log(q) - np.log(sims.proposal)  # (G, 3), column 0: White wins
    col = 2 - sims.outcomes.astype(np.int64)
    lw = lq[np.arange(len(sims.pairs))[None, :], col].sum(axis=1)
    top = lw.max()
    if not np.isfinite(top):
        return None
    w = np.exp(lw - top)
    total = float(w.sum())
    n = len(w)
    ess = total * total / float((w * w).sum())
    if ess < min_ess * n:
        return None
    p = len(sims.names)
    first = (w @ sims.first.astype(np.float64)) / total
    winner = (w @ sims.winner.astype(np.float64)) / total
    top3 = (w @ sims.top3.astype(np.float64)) / total
    step, win = st.points.step, st.points.units[2]
    expected = (w @ sims.final_u.astype(np.float64)) / total * step
    cell = (np.arange(p) * sims.size + sims.final_u).ravel()
    hist = np.bincount(cell, weights=np.repeat(w, p), minlength=p * sims.size).reshape(p, sims.size) / total
    cond = np.bincount(cell, weights=(w[:, None] * sims.first).ravel(), minlength=p * sims.size).reshape(p, sims.size)
    out = []
    for i in range(p):
        dist = {s * step: float(c) for s, c in enumerate(hist[i]) if c > 0}
        needs = None
        for s in range(int(sims.now_u[i]), sims.size):
            if sims.counts[i, s] >= 20 and hist[i, s] > 0 and cond[i, s] / (hist[i, s] * total) >= 0.5:
                needs = s * step
                break
        out.append(PlayerForecast(sims.names[i], float(sims.now_u[i] * step), float(first[i]), float(winner[i]),
                                  float(top3[i]), float(expected[i]), float((sims.now_u[i] + win * sims.left[i]) * step),
                                  dist, needs))
    return Forecast(out, n, sims.rounds_left, list(sims.notes), sims=sims, ess=ess)


def _settled(first: Float, ran: int, se: float) -> bool:
    """Whether every chance of first is known to a standard error of ``se`` after ``ran`` simulations."""
    q = first / ran
    return bool(np.sqrt(q * (1 - q) / ran).max() <= se)
