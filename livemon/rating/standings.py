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
  floating its last player down, top half against bottom half; a pairing of two who already met swaps
  opponents with the next pairing when that mends it; the player with fewer Whites gets White; an odd
  player out gets a bye worth ``bye_points``. Meetings within a simulation's own rounds are not looked at.
* ``ko``: matches of ``games_per_match`` games, then a tiebreak won with the Elo expected score (no draws);
  winners of adjacent matches meet next.

Tiebreaks (``p_winner``): ``direct`` (points among the tied), ``sb`` (Sonneborn-Berger), ``buchholz``; a tie
they do not break is shared equally (a playoff or lots).

>>> st = EventState(["A", "B", "C", "D"], [2700, 2600, 2500, 2400], "rr", rounds=3,
...                 results=[Result(0, 3, 1.0), Result(1, 2, 0.5)])
>>> f = simulate(st, 20000, seed=1)
>>> round(sum(p.p_first for p in f.players), 9), f.players[0].p_first > f.players[3].p_first
(1.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from livemon.rating.forecast import DEFAULT, ForecastParams, pregame_arrays

__all__ = ["infer_numbers", "StateError", "Result", "EventState", "PlayerForecast", "Forecast", "simulate", "berger",
           "FORMATS", "TIEBREAKS"]

FORMATS = ("rr", "drr", "swiss", "ko")
TIEBREAKS = ("direct", "sb", "buchholz")
Float = NDArray[np.float64]
Int = NDArray[np.int64]
GameModel = Callable[[Float, Float], Float]
"""(white ratings, black ratings) -> (n, 3) win/draw/loss probabilities."""


class StateError(ValueError):
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


def _scores2(st: EventState) -> Int:
    """Points so far in half-points (exact ties)."""
    s = np.zeros(len(st.players), np.int64)
    for r in st.results:
        s[r.white] += round(2 * r.score)
        s[r.black] += 2 - round(2 * r.score)
    for p, pts in st.byes:
        s[p] += round(2 * pts)
    return s


def _draw(probs: Float, u: NDArray[np.float32]) -> NDArray[np.int8]:
    """White's half-points (2, 1, 0) of games drawn from (.., 3) probabilities with uniforms ``u``."""
    w = probs[..., 0].astype(np.float32)
    wd = (probs[..., 0] + probs[..., 1]).astype(np.float32)
    return ((u < wd).astype(np.int8) + (u < w).astype(np.int8))


@dataclass
class _Games:
    """Every game of every simulation: white, black (n, G) or (G,) and White's half-points (n, G)."""

    a: list[Int] = field(default_factory=list)
    b: list[Int] = field(default_factory=list)
    r: list[NDArray[np.int8]] = field(default_factory=list)

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


def _winners(final2: Int, games: _Games, tiebreaks: Sequence[str]) -> Float:
    """Per simulation the share of the title of each player under the tiebreaks (ties left split).

    Only the simulations with a tie for first are looked at again.
    """
    cand = final2 == final2.max(axis=1, keepdims=True)
    tied = np.flatnonzero(cand.sum(axis=1) > 1)
    if len(tied) and tiebreaks:
        sub = final2[tied]
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


def _shares(final2: Int, slots: int) -> Float:
    """Per simulation each player's share of the top ``slots`` places, ties split equally.

    A player above the ``slots``-th best score is in; one level with it shares the places left.
    """
    p = final2.shape[1]
    t = np.partition(final2, p - slots, axis=1)[:, p - slots: p - slots + 1]
    above = (final2 > t).sum(axis=1, keepdims=True)
    level = (final2 == t).sum(axis=1, keepdims=True)
    share: Float = np.where(final2 > t, 1.0, np.where(final2 == t, (slots - above) / level, 0.0))
    return share


def _rr(st: EventState, n: int, rng: np.random.Generator, model: GameModel,
        games: _Games) -> tuple[Int, int, Int]:
    """Final scores (half-points) of ``n`` simulations, the rounds left, and each player's games left."""
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
    u = rng.random((n, len(a_idx)), dtype=np.float32)
    r = _draw(probs, u)
    games.add(a_idx, b_idx, r)
    final2 = np.broadcast_to(_scores2(st), (n, p)).copy()
    if len(a_idx):  # fixed pairings: one product with the games' incidence (float32 is exact here)
        inc = np.zeros((len(a_idx), p), np.float32)
        inc[np.arange(len(a_idx)), a_idx] += 1
        inc[np.arange(len(a_idx)), b_idx] -= 1
        base = 2 * np.bincount(b_idx, minlength=p)
        final2 += (r.astype(np.float32) @ inc).round().astype(np.int64) + base
    per_round = max(1, (p - len(st.withdrawn)) // 2)
    left = np.bincount(a_idx, minlength=p) + np.bincount(b_idx, minlength=p)
    return final2, math.ceil(len(a_idx) / per_round), left


def _swiss(st: EventState, n: int, rng: np.random.Generator, model: GameModel, games: _Games,
           rounds_left: int) -> Int:
    p = len(st.players)
    ratings = np.asarray(st.ratings, np.float64)
    # every pairing's probabilities looked up in a table of all p² pairings when that is the smaller work
    tabled = p * p <= n * (p // 2) * max(rounds_left, 1)
    if tabled:
        table = model(np.repeat(ratings, p), np.tile(ratings, p))  # row white * p + black
        win_t = table[:, 0].astype(np.float32)
        windraw_t = (table[:, 0] + table[:, 1]).astype(np.float32)
    final2 = np.broadcast_to(_scores2(st), (n, p)).astype(np.int32)
    balance = np.zeros(p, np.int32)
    for res in st.results:
        if not res.forfeit:
            balance[res.white] += 1
            balance[res.black] -= 1
    bal = np.broadcast_to(balance, (n, p)).copy()
    active = np.array([i for i in range(p) if i not in st.withdrawn], np.int32)
    m = len(active)
    if m < 2:
        return final2.astype(np.int64)
    rank = np.argsort(np.argsort(-ratings[active], kind="stable"), kind="stable").astype(np.int32)  # 0 = highest
    rows = np.arange(n)[:, None]
    met_pairs = np.zeros((p, p), bool)  # who met whom over the board (not in a simulation's own rounds)
    for res in st.results:
        if not res.forfeit:
            met_pairs[res.white, res.black] = met_pairs[res.black, res.white] = True
    met = met_pairs.ravel() if met_pairs.any() else None
    if st.ongoing:  # the games of the round in progress, with their own probabilities
        wo = np.array([w for w, _, _ in st.ongoing], np.int64)
        bo = np.array([b for _, b, _ in st.ongoing], np.int64)
        r0 = _draw(np.asarray([q for _, _, q in st.ongoing], np.float64), rng.random((n, len(wo)), dtype=np.float32))
        games.add(wo, bo, r0)
        final2[:, wo] += r0
        final2[:, bo] += np.int8(2) - r0
        bal[:, wo] += 1
        bal[:, bo] -= 1
    for _ in range(rounds_left):
        key = rank - final2[:, active] * np.int32(m + 1)  # lower key = higher placed
        srt = active[np.argsort(key, axis=1, kind="stable")]
        if m % 2:  # the lowest placed gets the bye
            bye = srt[:, -1]
            final2[np.arange(n), bye] += round(2 * st.bye_points)
            srt = srt[:, :-1]
        k = srt.shape[1]
        s_sorted = np.take_along_axis(final2, srt, 1)
        starts = np.zeros((n, k), bool)
        starts[:, 0] = True
        starts[:, 1:] = s_sorted[:, 1:] != s_sorted[:, :-1]
        pos = np.arange(k, dtype=np.int32)
        even_start = np.zeros((n, k + 1), bool)
        rr, cc = np.nonzero(starts)
        even_start[rr, cc + (cc % 2)] = True  # an odd group floats its last player down
        even_start = even_start[:, :k]
        block_start = np.maximum.accumulate(np.where(even_start, pos, np.int32(0)), axis=1)
        nxt = np.where(even_start, pos, np.int32(k))
        nxt = np.concatenate([nxt[:, 1:], np.full((n, 1), k, np.int32)], axis=1)
        block_end = np.ascontiguousarray(np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1])
        half = (block_end - block_start) >> 1
        inner = pos - block_start
        top = inner < half
        partner_pos = np.where(top, pos + half, pos - half)
        a_pl = np.sort(np.where(top, pos, np.int32(k)), axis=1)[:, : k // 2]
        a_ids = np.take_along_axis(srt, a_pl, 1).astype(np.int64)
        b_ids = np.take_along_axis(srt, np.take_along_axis(partner_pos, a_pl, 1), 1).astype(np.int64)
        if met is not None:  # a pairing of two who met already: swap opponents with the next pairing if that mends it
            for parity in (0, 1):
                i = np.arange(parity, k // 2 - 1, 2)
                a0, a1, b0, b1 = a_ids[:, i], a_ids[:, i + 1], b_ids[:, i], b_ids[:, i + 1]
                swap = (met[a0 * p + b0] | met[a1 * p + b1]) & ~met[a0 * p + b1] & ~met[a1 * p + b0]
                b_ids[:, i], b_ids[:, i + 1] = np.where(swap, b1, b0), np.where(swap, b0, b1)
        ba_, bb_ = bal[rows, a_ids], bal[rows, b_ids]
        coin = rng.random((n, k // 2)) < 0.5
        a_white = (ba_ < bb_) | ((ba_ == bb_) & coin)
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
        final2[rows, white] += r
        final2[rows, black] += np.int8(2) - r
        bal[rows, white] += 1
        bal[rows, black] -= 1
    return final2.astype(np.int64)


def _ko(st: EventState, n: int, rng: np.random.Generator, model: GameModel) -> Float:
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
        for g in range(st.games_per_match):
            todo = played <= g
            a_white = (g % 2) == 0
            pw = model(np.where(a_white, ra, rb).ravel(), np.where(a_white, rb, ra).ravel()).reshape(*a.shape, 3)
            res = _draw(pw, rng.random(a.shape, dtype=np.float32)).astype(np.int64)
            got = res if a_white else 2 - res
            half_a += np.where(todo & valid, got, 0)
        total = 2 * st.games_per_match
        e = 1.0 / (1.0 + 10 ** (-(ra - rb) / 400.0))
        tb = rng.random(a.shape) < e
        a_wins = (half_a * 2 > total) | ((half_a * 2 == total) & tb) | ~valid
        alive = np.where(a_wins, a, b)
    win = np.zeros((n, p))
    win[np.arange(n), alive[:, 0]] = 1.0
    return win


def simulate(st: EventState, n: int = 100_000, seed: int | None = None, params: ForecastParams = DEFAULT,
             model: GameModel | None = None, chunk: int | None = None) -> Forecast:
    """The forecast of ``st`` from ``n`` simulations (in chunks of ``chunk``, by default sized to about a million
    player-rows: the arrays stay in memory already touched); raises ValueError on a state it cannot play on
    (unknown rounds, an unknown format)."""
    if st.format not in FORMATS:
        raise StateError(f"event format {st.format!r}: expected one of {', '.join(FORMATS)}")
    for tb in st.tiebreaks:
        if tb not in TIEBREAKS:
            raise StateError(f"tiebreak {tb!r}: expected one of {', '.join(TIEBREAKS)}")
    p = len(st.players)
    if p < 2:
        raise StateError("fewer than two players: nothing to forecast")
    if chunk is None:
        chunk = max(1000, min(25_000, 1_500_000 // p))
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
    now2 = _scores2(st)
    first = np.zeros(p)
    winner = np.zeros(p)
    top3 = np.zeros(p)
    total = np.zeros(p)
    most_left = 2 * (p - 1) if st.format in ("rr", "drr") else rounds_left + 2  # a game in progress, a bye
    size = int(now2.max()) + 2 * most_left + 2  # above any final score in half-points
    hist = np.zeros((p, size))
    cond_sum = np.zeros((p, size))
    left = np.zeros(p, np.int64)  # games (or byes) each player has left: the best final score
    todo = n
    while todo > 0:
        m = min(chunk, todo)
        todo -= m
        games = _Games()
        played = [r for r in st.results if not r.forfeit]  # finished games take part in the tiebreaks
        if played:
            games.add(np.array([r.white for r in played], np.int64), np.array([r.black for r in played], np.int64),
                      np.broadcast_to(np.array([round(2 * r.score) for r in played], np.int8), (m, len(played))))
        if st.format in ("rr", "drr"):
            final2, rounds_left, left = _rr(st, m, rng, game_model, games)
        elif st.format == "swiss":
            final2 = _swiss(st, m, rng, game_model, games, rounds_left)
            left = np.array([0 if i in st.withdrawn else rounds_left for i in range(p)], np.int64)
            for wo, bo, _ in st.ongoing:
                left[[wo, bo]] += 1
        else:
            ko_win = _ko(st, m, rng, game_model)
            first += ko_win.sum(axis=0)
            winner += ko_win.sum(axis=0)
            continue
        share = _shares(final2, 1)
        first += share.sum(axis=0)
        top3 += _shares(final2, min(3, p)).sum(axis=0)
        winner += (_winners(final2, games, st.tiebreaks) if st.tiebreaks else share).sum(axis=0)
        total += final2.sum(axis=0)
        cell = (np.arange(p) * size + final2).ravel()  # (player, final score) of every simulation
        hist += np.bincount(cell, minlength=p * size).reshape(p, size)
        cond_sum += np.bincount(cell, weights=share.ravel(), minlength=p * size).reshape(p, size)
    if st.format == "ko":
        players = [PlayerForecast(st.players[i], float(now2[i] / 2), first[i] / n, winner[i] / n, float("nan"),
                                  float("nan"), float("nan"), {}, None) for i in range(p)]
        return Forecast(players, n, rounds_left, notes)
    out = []
    for i in range(p):
        dist = {s / 2: float(c / n) for s, c in enumerate(hist[i]) if c}
        needs = None
        for s in range(int(now2[i]), hist.shape[1]):
            if hist[i, s] >= 20 and cond_sum[i, s] / hist[i, s] >= 0.5:
                needs = s / 2
                break
        out.append(PlayerForecast(st.players[i], float(now2[i] / 2), float(first[i] / n), float(winner[i] / n),
                                  float(top3[i] / n), float(total[i] / n / 2), float(now2[i] / 2 + left[i]), dist, needs))
    return Forecast(out, n, rounds_left, notes)
