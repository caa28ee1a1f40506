"""Bench: fair-play screening — false-alert rate, power, real players.

Three tables, all through :mod:`livemon.rating.screening`:

1. **False-alert rate.** Players who play exactly as E(c_r) predicts for their
   rating r (c_r from the shipped calibration of the default profile, else a
   stand-in line, said in the output) are screened like real players: each
   simulated player-event is 9 game-sides (one player's moves in one game)
   drawn at random from a pool of REAL analysed positions — the 504-game open,
   from ``bench/data/open2025_decisions.jsonl.gz`` or an analysed store — or,
   without either, from positions of a documented model (:func:`model_pool`);
   the output says which. Positions are left out by the library's
   :func:`~livemon.rating.screening.screening_exclusion` with the default
   ``[screening]`` config (forced moves never become decisions). For every
   threshold z the table gives the nominal rate 1 − Φ(z), the observed rate
   with its exact (Clopper–Pearson) 95% interval, and the number of simulated
   player-events, for the match and the average-loss statistic, after 1, 3 and
   9 games, pooled over the ratings and then per rating. Two columns: the raw
   tail P(z ≥ threshold), and "flagged" = the same with ``min_positions``
   applied (a player with fewer screened positions is never flagged). A third
   statistic, "match-exact", is computed by the bench only (not the library):
   the exact Poisson-binomial tail P(M ≥ m_obs) of the number of matches,
   reported as z = Φ⁻¹(1 − P) — what an exact screening would give (per
   game-side match distributions by DP, an event's by a product of FFTs;
   checked against a direct DP). A fourth, "screener", is match-exact divided
   by the calibration's z_scale: what ``livemon.live.screener`` raises levels on.
1b. **Honest players who are not exactly E(c_r)** (when the calibration has τ,
   the sd of players' own c around a + b·Elo, or with ``--tau``): each player's
   c is drawn from N(c_r, τ²) and screened against E(c_r), as a real honest
   player is. The library's z then over-flags, more as n grows (its variance
   leaves out the scatter); shown with z / z_scale (the calibration's
   empirical factor, when present) and with a bench-computed "match+tau" z whose
   variance adds τ²(Σ ∂p0/∂c)² — the random-effect term.
2. **Power.** Engine-assisted players: at each position the engine's best move
   with probability q, else a move drawn from E(c_r). Fraction flagged at the
   default notice and alert thresholds (the screener's z, then the library's
   normal z_match; min_positions applied) after 1, 3 and 9 games; 2b: the same for match+tau (when τ is known).
3. **Real players** (``--real FILE``, default the export when present): every
   rated player of the open screened at the default thresholds with the
   shipped calibration; notices/alerts listed with their numbers and the five
   moves that raised z most, and the distribution of z over the real players
   (a well-calibrated z has mean ≈ 0 and sd ≈ 1 over honest players; if the
   calibration was fitted on these same games, that is a check of fit, not an
   independent test).

Speed: the per-position quantities of E(c_r) (p0_t, loss mean and variance,
the cumulative move distribution sorted by loss) are computed once per c_r
with numpy over the padded candidate table; a simulated move is then one
uniform draw and four comparisons, and the expected sums of a player-event are
sums of per-game-side totals. The vectorised z is checked against
:func:`~livemon.rating.screening.screening_stats` on a sample of simulated
player-events at every rating before any table is printed (the bench stops if
they disagree — e.g. when the library's z changes definition).

Why this lives in bench/ and not in livemon/rating/: it is a measurement tool
(random players over a pool of positions), not a model the product uses; the
test ``tests/test_fairplay_sim.py`` imports this file by path.

    .venv/bin/python bench/fairplay.py [--events 200000] [--power-events 20000] [--seed 1]
        [--pool bench/data/open2025_decisions.jsonl.gz | --pool STORE.sqlite --pgn OPEN.pgn | --pool model]
        [--real FILE [--pgn OPEN.pgn]] [--only false|power|real] [--calibration calibrations.json]
        [--tau T] [--scattered-events N] [--no-exact]

(A store is opened read-only; while it is still being analysed only its
complete games are used.)
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sqlite3
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout, no install needed

from livemon.config import Config, ScreeningConfig  # noqa: E402
from livemon.rating.agent import Decision, move_probabilities  # noqa: E402
from livemon.rating.calibration import Calibration  # noqa: E402
from livemon.rating.screening import position_expectation, screening_exclusion, screening_stats  # noqa: E402
from livemon.rating.screening import tag_prior, widened_z  # noqa: E402
from livemon.rating.screening_params import SHIPPED  # noqa: E402

EXPORT = ROOT / "bench" / "data" / "open2025_decisions.jsonl.gz"
OPEN_PGN = ROOT / "tests" / "data" / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
STAND_IN = Calibration(a=-0.4, b=0.0005, n=0, elo_min=1800.0, elo_max=2800.0, r2=0.0, residual_sd=0.0,
                       profile="stand-in: c = -0.4 + 0.0005*Elo")
"""Used only without a shipped calibration: c 0.5 at 1800, 1.0 at 2800 (the size of the c̄ of the
README's depth-10 example: Ding 2788 → 1.24, Nepomniachtchi 2795 → 0.80)."""
THRESHOLDS = (2.0, 2.5, 3.0, 4.0, 5.0)
RATINGS = (1800, 2000, 2200, 2400, 2600)
POWER_RATINGS = (1800, 2200, 2600)
POWER_Q = (0.0, 0.2, 0.5, 1.0)
GAMES = (1, 3, 9)


# -- positions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One screened position of a real player (the decisions export's line)."""

    player: str
    elo: float | None
    game: int
    ply: int
    decision: Decision


def screened(records: Iterable[Record], cfg: ScreeningConfig) -> list[Record]:
    """The records the library's exclusion rule keeps (book moves, decided positions)."""
    return [r for r in records if screening_exclusion(r.decision, r.ply, cfg.book_moves, cfg.eval_bound) is None]


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    raise KeyError(f"none of {keys} in {sorted(d)}")


def load_export(path: str | Path) -> list[Record]:
    """Records of the decisions export (gzipped JSON lines; one bad line is reported and skipped)."""
    out: list[Record] = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                if "format" in d:  # the header line of bench/export_decisions.py
                    continue
                elo = _first(d, "elo", "Elo", "rating")
                out.append(Record(str(_first(d, "player", "name")), None if elo in (None, "") else float(elo),
                                  int(_first(d, "game", "game_index")), int(d["ply"]),
                                  Decision(tuple(_first(d, "values", "candidates")), int(_first(d, "played", "played_index")))))
            except (ValueError, KeyError, TypeError) as exc:
                print(f"fairplay: {path}:{lineno}: skipped ({exc})", file=sys.stderr)
    return out


def records_from_store(store_path: str | Path, pgn_path: str | Path, profile: str | None = None,
                       complete_only: bool = True) -> tuple[list[Record], str]:
    """Records of the games of ``pgn_path`` from the analyses in a livemon store (opened read-only).

    The decision of a ply is built exactly as ``analyse`` builds it
    (:func:`livemon.live.analysis.decision_for`). With ``complete_only``, games with
    a position missing from the store (an analysis still running) are left out
    whole, so that every game-side is complete; else their missing plies are.
    Returns the records and a description (profile used — the store's profile
    with most analyses unless given — and games kept).
    """
    import chess

    from livemon.live.analysis import decision_for, position_value
    from livemon.live.rules import needs_search
    from livemon.app.batch import read_files
    from livemon.io.engine import PositionAnalysis, position_key

    db = sqlite3.connect(f"file:{Path(store_path).resolve()}?mode=ro", uri=True)
    try:
        if profile is None:
            row = db.execute("SELECT profile, COUNT(*) c FROM analyses GROUP BY profile ORDER BY c DESC LIMIT 1").fetchone()
            if row is None:
                raise ValueError(f"{store_path}: no analyses")
            profile = str(row[0])
        analyses = {pos: PositionAnalysis.from_json(text) for pos, text in
                    db.execute("SELECT position, candidates FROM analyses WHERE profile = ?", (profile,))}
    finally:
        db.close()
    out: list[Record] = []
    games = read_files([str(pgn_path)], lambda line: print(f"fairplay: {line}", file=sys.stderr))
    kept = 0
    for index, game in enumerate(games):
        if complete_only and any(needs_search(b) and position_key(b) not in analyses for b in game.boards):
            continue
        kept += 1
        info = game.info
        for ply, move in enumerate(game.moves, start=1):
            before, after = game.boards[ply - 1], game.boards[ply]
            a_before = analyses.get(position_key(before))
            after_cp = position_value(after, analyses.get(position_key(after)))
            decision = decision_for(before, move, a_before, after_cp)
            if decision is None:
                continue
            white = before.turn == chess.WHITE
            name = info.white if white else info.black
            rated = info.white_elo if white else info.black_elo
            elo = None if rated is None else float(rated)
            out.append(Record(name, elo, index, ply, decision))
    return out, f"{profile}; {kept} of {len(games)} games{' (complete ones)' if complete_only else ''}"


def load_records(path: str | Path, pgn: str | Path = OPEN_PGN) -> tuple[list[Record], str]:
    """Records from the decisions export (.jsonl[.gz]) or from a store (.sqlite) plus the PGN; and a description."""
    p = Path(path)
    if p.suffix in (".sqlite", ".db", ".sqlite3"):
        records, what = records_from_store(p, pgn)
        return records, f"store {p} ({what}) + {Path(pgn).name}"
    header: dict[str, Any] = {}
    with (gzip.open if p.suffix == ".gz" else open)(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        first = json.loads(fh.readline() or "{}")
        if "format" in first:
            header = first
    what = ", ".join(f"{k} {header[k]}" for k in ("profile", "games") if k in header)
    return load_export(p), f"export {p}" + (f" ({what})" if what else "")


@dataclass
class PositionPool:
    """Candidate values of screened positions, padded, grouped in game-sides.

    ``values[t, :k[t]]`` are the candidates of position t (pawns, mover's view;
    padding is NaN). Game-side u is the positions ``starts[u] .. starts[u+1]``.
    """

    values: np.ndarray  # (T, K) float, NaN padded
    k: np.ndarray  # (T,) candidates per position
    starts: np.ndarray  # (U+1,) offsets of the game-sides
    source: str

    @property
    def positions(self) -> int:
        return int(self.values.shape[0])

    @property
    def sides(self) -> int:
        return int(self.starts.size - 1)

    def decision(self, t: int, played: int) -> Decision:
        return Decision(tuple(float(v) for v in self.values[t, : self.k[t]]), int(played))


def pool_from_records(records: Sequence[Record], source: str) -> PositionPool:
    """Group records by (game, player) in game order; every screened position becomes a pool position."""
    by_side: dict[tuple[int, str], list[Record]] = {}
    for r in records:
        by_side.setdefault((r.game, r.player), []).append(r)
    rows: list[tuple[float, ...]] = []
    starts = [0]
    for key in sorted(by_side):
        for r in sorted(by_side[key], key=lambda r: r.ply):
            rows.append(r.decision.values)
        starts.append(len(rows))
    return _pool(rows, np.asarray(starts), source)


def _pool(rows: Sequence[Sequence[float]], starts: np.ndarray, source: str) -> PositionPool:
    width = max(len(r) for r in rows)
    values = np.full((len(rows), width), np.nan)
    k = np.empty(len(rows), dtype=np.int64)
    for t, r in enumerate(rows):
        values[t, : len(r)] = r
        k[t] = len(r)
    return PositionPool(values, k, starts.astype(np.int64), source)


def model_pool(rng: np.random.Generator, sides: int = 4000) -> PositionPool:
    """Positions of a documented model, used when no real positions are at hand.

    Game-side length 20–45 positions (uniform). A position has 4 MultiPV
    candidates; the best value is N(0, 1) pawns (decided positions beyond ±3 are
    excluded later, as for real ones); the gaps between consecutive candidates
    are 0 with probability 0.15 (equal-valued moves: a "match" is any top-valued
    move) else exponential with mean 0.25 pawns; with probability 0.1 a fifth
    move (a played move outside the MultiPV) is appended 0.3–3 pawns below the
    fourth. Roughly the shape of depth-12 MultiPV-4 lines in club games.
    """
    lengths = rng.integers(20, 46, size=sides)
    t = int(lengths.sum())
    best = rng.normal(0.0, 1.0, t)
    gaps = np.where(rng.random((t, 3)) < 0.15, 0.0, rng.exponential(0.25, (t, 3)))
    values = np.full((t, 5), np.nan)
    values[:, 0] = best
    values[:, 1:4] = best[:, None] - np.cumsum(gaps, axis=1)
    fifth = rng.random(t) < 0.1
    values[fifth, 4] = values[fifth, 3] - rng.uniform(0.3, 3.0, int(fifth.sum()))
    values = np.round(values, 2)  # centipawns, like the engine
    keep = np.abs(values[:, 0]) <= ScreeningConfig().eval_bound  # the default "decided" exclusion
    side_of = np.repeat(np.arange(sides), lengths)[keep]
    counts = np.bincount(side_of, minlength=sides)
    counts = counts[counts > 0]
    starts = np.concatenate([[0], np.cumsum(counts)])
    rows = [tuple(v[~np.isnan(v)]) for v in values[keep]]
    return _pool(rows, starts, f"model positions (documented in model_pool: {sides} game-sides, seed-dependent)")


# -- E(c) at one c, once --------------------------------------------------------------------------


@dataclass
class PoolAtC:
    """E(c_r) on every pool position: what a simulated move needs, computed once per c_r."""

    c: float
    p0: np.ndarray  # (T,) P(top-valued move)
    p0_draw: np.ndarray  # (T,) the same as the cumulative the draw compares with (no rounding mismatch)
    cum: np.ndarray  # (T, K-1) cumulative P over candidates sorted by loss (1.0 beyond the last)
    step: np.ndarray  # (T, K-1) loss increments between consecutive sorted candidates
    order: np.ndarray  # (T, K) original candidate index of each sorted one
    side_sums: np.ndarray  # (U, 7): positions, Σp0, Σp0(1−p0), Σμ, Σσ², Σ∂p0/∂c, Σ∂μ/∂c per game-side


def at_c(pool: PositionPool, c: float) -> PoolAtC:
    """Vectorised E(c) over the padded candidate table (same formula as :func:`move_probabilities`)."""
    v = pool.values
    vmax = np.nanmax(v, axis=1)
    loss = vmax[:, None] - v  # NaN in padding
    w = np.where(np.isnan(loss), 0.0, np.power(np.nan_to_num(loss, nan=1.0) + 0.1, -c))
    p = w / w.sum(axis=1, keepdims=True)
    order = np.argsort(np.nan_to_num(loss, nan=np.inf), axis=1, kind="stable")
    loss_s = np.take_along_axis(np.nan_to_num(loss, nan=0.0), order, axis=1)
    p_s = np.take_along_axis(p, order, axis=1)
    cum = np.cumsum(p_s, axis=1)[:, :-1]
    valid_next = np.take_along_axis(~np.isnan(loss), order, axis=1)[:, 1:]
    cum = np.where(valid_next, cum, 2.0)  # a padded slot can never be drawn
    step = np.where(valid_next, np.diff(loss_s, axis=1), 0.0)
    top = np.where(np.isnan(loss), False, loss == 0.0)
    p0 = (p * top).sum(axis=1)
    lz = np.nan_to_num(loss, nan=0.0)
    mu = (p * lz).sum(axis=1)
    var = np.maximum((p * lz * lz).sum(axis=1) - mu * mu, 0.0)
    ntop = top.sum(axis=1)
    p0_draw = np.take_along_axis(np.concatenate([cum, np.full((v.shape[0], 1), 2.0)], axis=1), (ntop - 1)[:, None], axis=1)[:, 0]
    # derivatives in c (for the scatter of players' c around c_r): dp_i/dc = p_i (E_p[log(l+K)] − log(l_i+K))
    logd = np.where(np.isnan(loss), 0.0, np.log(lz + 0.1))
    mean_log = (p * logd).sum(axis=1)
    dp0 = p0 * (mean_log - math.log(0.1))
    dmu = mu * mean_log - (p * lz * logd).sum(axis=1)
    per_pos = np.stack([np.ones_like(p0), p0, p0 * (1.0 - p0), mu, var, dp0, dmu], axis=1)
    side_sums = np.add.reduceat(per_pos, pool.starts[:-1], axis=0)
    return PoolAtC(float(c), p0, p0_draw, cum, step, order, side_sums)


def side_match_pmfs(pool: PositionPool, p0: np.ndarray) -> np.ndarray:
    """Exact distribution of each game-side's number of top-move matches (Poisson-binomial, one DP step per ply).

    >>> pool = _pool([(0.0, -1.0)] * 3, np.array([0, 1, 3]), "doc")
    >>> side_match_pmfs(pool, np.array([0.5, 0.5, 0.5])).round(3).tolist()
    [[0.5, 0.5, 0.0], [0.25, 0.5, 0.25]]
    """
    lengths = np.diff(pool.starts)
    width = int(lengths.max()) + 1
    pmf = np.zeros((lengths.size, width))
    pmf[:, 0] = 1.0
    for j in range(width - 1):
        p = np.where(j < lengths, p0[np.minimum(pool.starts[:-1] + j, p0.size - 1)], 0.0)[:, None]
        nxt = pmf * (1.0 - p)
        nxt[:, 1:] += pmf[:, :-1] * p
        pmf = nxt
    return pmf


@dataclass
class MatchSpectra:
    """Fourier transforms of the game-sides' match distributions: an event's is their product."""

    nfft: int
    spectra: np.ndarray  # (U, nfft // 2 + 1)


def match_spectra(pool: PositionPool, e: PoolAtC, games: int = max(GAMES)) -> MatchSpectra:
    pmf = side_match_pmfs(pool, e.p0)
    nfft = 1 << int(math.ceil(math.log2(games * (pmf.shape[1] - 1) + 1)))
    return MatchSpectra(nfft, np.fft.rfft(pmf, n=nfft, axis=1))


def exact_match_z(spec: MatchSpectra, sides: np.ndarray, matches: np.ndarray, checkpoints: Sequence[int]) -> np.ndarray:
    """z = Φ⁻¹(1 − p), p = P(M > m_obs) + ½·P(M = m_obs) (the screener's mid-p tail) with M the exact
    Poisson-binomial number of matches of each event.

    ``sides`` (B, G): the game-sides of each event; ``matches`` (B, C): matches
    observed at each checkpoint (games played). The distribution of a sum of
    independent sides is the convolution of theirs, done as a product of FFTs.
    """
    prod = np.ones((sides.shape[0], spec.spectra.shape[1]), dtype=complex)
    out = np.empty(matches.shape)
    col = 0
    for g in range(max(checkpoints)):
        prod *= spec.spectra[sides[:, g]]
        if g + 1 in checkpoints:
            pmf = np.clip(np.fft.irfft(prod, n=spec.nfft, axis=1), 0.0, None)
            tail = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
            m = np.minimum(np.rint(matches[:, col]).astype(np.int64), spec.nfft - 1)[:, None]
            p = (np.take_along_axis(tail, m, axis=1) - 0.5 * np.take_along_axis(pmf, m, axis=1))[:, 0]
            out[:, col] = sps.norm.isf(np.clip(p, 1e-300, 1.0))
            col += 1
    return out


# -- simulation --------------------------------------------------------------------------------


@dataclass
class EventSums:
    """Screening sums of simulated player-events after each checkpoint (axis 1: games)."""

    n: np.ndarray  # (B, G) positions
    matches: np.ndarray
    p0: np.ndarray
    p0_var: np.ndarray
    loss: np.ndarray
    loss_mean: np.ndarray
    loss_var: np.ndarray
    dp0: np.ndarray  # Σ ∂p0/∂c
    dmu: np.ndarray  # Σ ∂μ/∂c
    z_exact: np.ndarray | None = None  # exact Poisson-binomial tail of matches, as a z (bench-computed)

    def z_match_tau(self, tau: float) -> np.ndarray:
        """Match z with the scatter of honest players' c around c_r in the variance (bench-computed).

        Var(M) = Σ p0(1 − p0) + τ² (Σ ∂p0/∂c)²: to first order, a player's own
        c ~ N(c_r, τ²) shifts every p0 together, a variance that grows as n².
        """
        return _z(self.matches - self.p0, np.sqrt(self.p0_var + (tau * self.dp0) ** 2))

    def z_loss_tau(self, tau: float) -> np.ndarray:
        """Average-loss z with the same random-effect term: Var = Σσ² + τ² (Σ ∂μ/∂c)²."""
        return _z(self.loss_mean - self.loss, np.sqrt(self.loss_var + (tau * self.dmu) ** 2))

    def z_match(self) -> np.ndarray:
        return _z(self.matches - self.p0, np.sqrt(self.p0_var))

    def z_loss(self) -> np.ndarray:
        # (loss_e − loss_o) / (sqrt(Σσ²)/n) = (Σμ − Σloss) / sqrt(Σσ²), as stats_from_sums
        return _z((self.loss_mean - self.loss) / np.maximum(self.n, 1), np.sqrt(self.loss_var) / np.maximum(self.n, 1))


def _z(diff: np.ndarray, sd: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        z = diff / sd
    return np.where(sd > 0, z, np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))


@dataclass
class Detail:
    """Per-position draws of a simulated chunk, for the check against the library."""

    sides: np.ndarray  # (B, G) game-side of each game
    positions: np.ndarray  # flat positions in event, game, ply order
    played: np.ndarray  # original candidate index played


def simulate_chunk(pool: PositionPool, e: PoolAtC, events: int, games: int, rng: np.random.Generator,
                   q: float = 0.0, checkpoints: Sequence[int] = GAMES, detail: bool = False,
                   spectra: MatchSpectra | None = None, expect: PoolAtC | None = None) -> tuple[EventSums, Detail | None]:
    """``events`` players of ``games`` random game-sides each; moves from E(c) (engine's best w.p. q).

    Moves are drawn from ``e``; the screening compares them with ``expect``
    (default ``e``): a player whose own c differs from the c_r of their rating.
    """
    sides = rng.integers(0, pool.sides, size=(events, games))
    flat = sides.ravel()
    lengths = pool.starts[flat + 1] - pool.starts[flat]
    seg = np.repeat(np.arange(flat.size), lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.arange(int(lengths.sum())) - np.repeat(offsets - pool.starts[flat], lengths)
    u = rng.random(pos.size)
    above = u[:, None] >= e.cum[pos]  # (P, K-1)
    matched = u < e.p0_draw[pos]
    loss = (above * e.step[pos]).sum(axis=1)
    assisted = None
    if q > 0.0:
        assisted = rng.random(pos.size) < q
        matched = matched | assisted
        loss = np.where(assisted, 0.0, loss)
    nseg = flat.size
    m = np.bincount(seg, weights=matched, minlength=nseg).reshape(events, games)
    lo = np.bincount(seg, weights=loss, minlength=nseg).reshape(events, games)
    ss = (e if expect is None else expect).side_sums[sides]  # (B, G, 5)
    cps = [g - 1 for g in checkpoints if g <= games]

    def cum(a: np.ndarray) -> np.ndarray:
        return np.cumsum(a, axis=1)[:, cps]

    sums = EventSums(cum(ss[..., 0]), cum(m), cum(ss[..., 1]), cum(ss[..., 2]), cum(lo), cum(ss[..., 3]), cum(ss[..., 4]),
                     cum(ss[..., 5]), cum(ss[..., 6]))
    if spectra is not None:
        sums.z_exact = exact_match_z(spectra, sides, sums.matches, [c + 1 for c in cps])
    info = None
    if detail:
        idx = above.sum(axis=1)
        if assisted is not None:
            idx = np.where(assisted, 0, idx)
        info = Detail(sides, pos, e.order[pos, idx])
    return sums, info


@dataclass
class ZScores:
    """What the tables need of simulated player-events: positions and both z, per checkpoint (axis 1)."""

    n: np.ndarray  # (B, G) screened positions
    z_match: np.ndarray
    z_loss: np.ndarray
    z_exact: np.ndarray | None = None
    z_match_tau: np.ndarray | None = None
    z_loss_tau: np.ndarray | None = None
    z_screener: np.ndarray | None = None  # the shipped screener's z: the mid-p tail, widened (when simulated so)

    def z(self, statistic: str) -> np.ndarray:
        """The z for ``statistic``: match, loss or max (as alert_check), match-exact, match+tau, loss+tau,
        screener (what livemon.live.screener raises levels on: with the shipped line, match-exact widened by the
        strength's sd and tau, :data:`SCREENER_WIDEN`; with a calibration's own map, match-exact / its z_scale)."""
        if statistic == "screener":
            if self.z_screener is not None:
                return self.z_screener
            assert self.z_exact is not None, statistic
            return self.z_exact / SCREENER_Z_SCALE[0]
        extra = {"match-exact": self.z_exact, "match+tau": self.z_match_tau, "loss+tau": self.z_loss_tau}
        if statistic in extra:
            z = extra[statistic]
            assert z is not None, statistic
            return z
        if statistic == "match":
            return self.z_match
        if statistic == "loss":
            return self.z_loss
        return np.maximum(self.z_match, self.z_loss)


def simulate(pool: PositionPool, e: PoolAtC, events: int, rng: np.random.Generator, q: float = 0.0,
             games: int = max(GAMES), checkpoints: Sequence[int] = GAMES, chunk: int = 4000,
             spectra: MatchSpectra | None = None, expect: PoolAtC | None = None, tau: float | None = None,
             widen: float | None = None) -> ZScores:
    """:func:`simulate_chunk` in chunks of ``chunk`` player-events (bounded memory); the z of each.

    With ``spectra`` (see :func:`match_spectra`, made at the c of ``expect``) also
    the mid-p-tail z of the matches.
    """
    parts: list[ZScores] = []
    done = 0
    while done < events:
        b = min(chunk, events - done)
        sums = simulate_chunk(pool, e, b, games, rng, q, checkpoints, spectra=spectra, expect=expect)[0]
        z_screener = None
        if widen is not None and sums.z_exact is not None:  # widened_z: z·√(V / (V + (Σ∂p0/∂c)²·(b²·sd² + tau²)))
            z_screener = sums.z_exact * np.sqrt(sums.p0_var / (sums.p0_var + sums.dp0 ** 2 * widen))
        parts.append(ZScores(sums.n.astype(np.int32), sums.z_match(), sums.z_loss(), sums.z_exact,
                             None if tau is None else sums.z_match_tau(tau), None if tau is None else sums.z_loss_tau(tau),
                             z_screener))
        done += b
    return concat_z(parts)


def concat_z(parts: Sequence[ZScores]) -> ZScores:
    """One ZScores of many (optional fields kept when every part has them)."""
    def cat(name: str) -> np.ndarray | None:
        arrays = [getattr(p, name) for p in parts]
        return None if any(a is None for a in arrays) else np.concatenate(arrays)

    return ZScores(*(cat(f) for f in ZScores.__dataclass_fields__))  # type: ignore[arg-type]


def simulate_scattered(pool: PositionPool, e_r: PoolAtC, tau: float, events: int, rng: np.random.Generator,
                       grid: int = 21, spectra: MatchSpectra | None = None) -> ZScores:
    """Honest players whose own c is N(c_r, τ²) (the calibration's scatter), screened against E(c_r).

    The normal is discretised at ``grid`` equal-probability quantiles, each
    given the same share of the events.
    """
    parts = []
    for k in range(grid):
        c_i = max(e_r.c + tau * float(sps.norm.ppf((k + 0.5) / grid)), 0.0)  # the c prior's floor
        share = events // grid + (1 if k < events % grid else 0)
        parts.append(simulate(pool, at_c(pool, c_i), share, rng, spectra=spectra, expect=e_r, tau=tau,
                              widen=SCREENER_WIDEN.get(e_r.c)))
    return concat_z(parts)


def check_against_library(pool: PositionPool, e: PoolAtC, rng: np.random.Generator, events: int = 40,
                          q: float = 0.0, games: int = 3, spectra: MatchSpectra | None = None) -> float:
    """Largest |z_vectorised − z_library| over simulated player-events; AssertionError if they disagree.

    Rebuilds each event's :class:`Decision` list with the simulated played moves
    and screens it with :func:`screening_stats` (the library's position_expectation
    and stats_from_sums), at every checkpoint. With ``spectra``, also the exact
    tail z against a direct Poisson-binomial DP over the library's p0 of each position.
    """
    sums, info = simulate_chunk(pool, e, events, games, rng, q, checkpoints=range(1, games + 1), detail=True,
                                spectra=spectra)
    assert info is not None
    worst = 0.0
    cursor = 0
    for b in range(events):
        decisions: list[Decision] = []
        for g in range(games):
            s = int(info.sides[b, g])
            for _ in range(int(pool.starts[s + 1] - pool.starts[s])):
                decisions.append(pool.decision(int(info.positions[cursor]), int(info.played[cursor])))
                cursor += 1
            st = screening_stats("sim", decisions, e.c)
            zm, zl = float(sums.z_match()[b, g]), float(sums.z_loss()[b, g])
            if st.positions != int(sums.n[b, g]) or st.matches_observed != int(round(float(sums.matches[b, g]))):
                raise AssertionError(f"check: counts differ from the library ({st.positions}, {st.matches_observed}) vs "
                                     f"({sums.n[b, g]}, {sums.matches[b, g]})")
            for lib, vec, name in ((st.z_match, zm, "z_match"), (st.z_loss, zl, "z_loss")):
                if math.isinf(lib) or math.isinf(vec):
                    if lib != vec:
                        raise AssertionError(f"check: {name} library {lib} vs vectorised {vec}")
                    continue
                diff = abs(lib - vec)
                if diff > 1e-7 * max(1.0, abs(lib)):
                    raise AssertionError(f"check: {name} library {lib!r} vs vectorised {vec!r} (c={e.c}); "
                                         "the library's z has changed definition — adapt EventSums")
                worst = max(worst, diff)
            if sums.z_exact is not None:
                p0s = [position_expectation(d, e.c).p0 for d in decisions]
                pmf = np.zeros(len(p0s) + 1)
                pmf[0] = 1.0
                for p in p0s:
                    pmf[1:] = pmf[1:] * (1.0 - p) + pmf[:-1] * p
                    pmf[0] *= 1.0 - p
                tail = float(pmf[st.matches_observed + 1:].sum()) + 0.5 * float(pmf[st.matches_observed])
                direct = float(sps.norm.isf(max(tail, 1e-300)))
                got = float(sums.z_exact[b, g])
                if tail > 1e-9 and not abs(direct - got) < 1e-5:  # FFT noise ~1e-15 in p: exact enough below z = 6
                    raise AssertionError(f"check: mid-p-tail z by FFT {got!r} vs direct DP {direct!r}")
    return worst


# -- calibration -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CalInfo:
    """The calibration used: the Elo → c map, and what else the calibration file carries (τ, z scales)."""

    cal: Calibration
    text: str
    tau: float | None = None
    z_scale: float | None = None
    z_scale_loss: float | None = None
    shipped: bool = False  # the shipped screening line (livemon.rating.screening_params) and its strength model


def shipped_line_info() -> CalInfo:
    """The shipped screening line as the screener reads it for the default profile: c_r = a + b·strength at a
    settled tag's strength (:func:`~livemon.rating.screening.tag_prior`), z widened by the strength's sd and tau."""
    cal = Calibration(a=SHIPPED.a, b=SHIPPED.b, n=0, elo_min=1400.0, elo_max=2850.0, r2=0.0, residual_sd=SHIPPED.tau,
                      profile=SHIPPED.profile)
    return CalInfo(cal, f"the shipped screening line of {SHIPPED.profile!r} (livemon/rating/screening_params.py): "
                        f"c = {SHIPPED.a:.4f} + {SHIPPED.b:.6f}*strength, tau {SHIPPED.tau:.4f}, strength from the tag "
                        "(tag_prior; the simulated players' results are not read: strength = tag, sd the tag's)",
                   tau=SHIPPED.tau, shipped=True)


def default_calibration(profile: str | None = None, path: str | Path | None = None) -> CalInfo:
    """The calibration of the default profile (or ``profile``) from ``path``, else :data:`STAND_IN`.

    ``path``: a calibrations JSON ({profile: {"c_map": {...}, ...}}), default the
    shipped ``livemon/data/calibrations.json``. τ and the z scales are read from the
    raw entry, so a file written by a newer Calibration works here too.
    """
    from livemon.io.store import SHIPPED_CALIBRATIONS

    file = Path(path) if path else SHIPPED_CALIBRATIONS
    try:
        table = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        table = {}
    cfg = Config().engine
    suffix = f"depth={cfg.depth} multipv={cfg.multipv}" if cfg.nodes is None else f"nodes={cfg.nodes} multipv={cfg.multipv}"
    names = [profile] if profile else [n for n in table if n.endswith(suffix)]
    scfg = Config().screening
    if path is None and SHIPPED.profile in names and (scfg.book_moves, scfg.eval_bound) == (
            SHIPPED.book_moves, SHIPPED.eval_bound) and (table.get(SHIPPED.profile) or {}).get("c_map"):
        return shipped_line_info()  # what livemon.live.screener reads for this profile
    for name in names:
        raw = (table.get(name) or {}).get("c_map")
        if raw:
            cm = Calibration.from_dict(raw)
            extra = {k: (None if raw.get(k) is None else float(raw[k])) for k in ("tau", "z_scale", "z_scale_loss")}
            text = (f"calibration of {name!r} from {file}: c = {cm.a:.4f} + {cm.b:.6f}*Elo (n={cm.n} players, "
                    f"Elo {cm.elo_min:.0f}-{cm.elo_max:.0f})" + "".join(f", {k} {v:.4f}" for k, v in extra.items() if v is not None))
            return CalInfo(cm, text, **extra)
    return CalInfo(STAND_IN, f"NO calibration of the default profile in {file}: {STAND_IN.profile} (a stand-in, not a fit)")


# -- tables ------------------------------------------------------------------------------------


def nominal(z: float) -> float:
    return float(sps.norm.sf(z))


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial confidence interval of k successes out of n."""
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(sps.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(sps.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def _rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n)
    return f"{k / n:9.2e} [{lo:8.2e}, {hi:8.2e}]"


SCREENER_Z_SCALE = [1.0]
"""The calibration's z_scale, set by main(): livemon.live.screener divides the mid-p-tail z_match by it (a
calibration's own map; the shipped line widens instead, :data:`SCREENER_WIDEN`)."""
SCREENER_WIDEN: dict[float, float] = {}
"""c_r -> b²·sd² + tau² of the shipped line at that rating (set by main()): livemon.live.screener widens the
mid-p-tail z_match by it (:func:`~livemon.rating.screening.widened_z`)."""

STAT_NAMES = {
    "screener": "screener (what livemon.live.screener raises on: the mid-p tail of the matches as z, widened by the "
                "strength's sd and tau with the shipped line, else divided by the calibration's z_scale)",
    "match": "match (library z, normal approximation of the matches)",
    "loss": "loss (library z of the average loss)",
    "match-exact": "match-exact (bench-computed: exact Poisson-binomial tail P(M >= m) of the matches, as z; not the library's)",
    "match+tau": "match+tau (bench-computed: Var(M) = sum p0(1-p0) + tau^2 (sum dp0/dc)^2, the players' scatter in c included)",
    "loss+tau": "loss+tau (bench-computed: Var = sum var + tau^2 (sum dmu/dc)^2)",
}


def false_alert_tables(per_rating: dict[int, ZScores], scfg: ScreeningConfig, thresholds: Sequence[float]) -> str:
    """Pooled table per (games, statistic), then a per-rating breakdown."""
    lines: list[str] = []
    ratings = sorted(per_rating)
    stats_shown = ("match", "loss") + (("match-exact", "screener") if per_rating[ratings[0]].z_exact is not None else ())
    for gi, games in enumerate(GAMES):
        npos = np.concatenate([per_rating[r].n[:, gi] for r in ratings])
        enough = npos >= scfg.min_positions
        lines.append(f"\n-- after {games} game{'s' if games > 1 else ''}: positions per player-event mean {npos.mean():.1f} "
                     f"(min {npos.min():.0f}, max {npos.max():.0f}); {enough.mean():.1%} have >= min_positions={scfg.min_positions}")
        for stat in stats_shown:
            z = np.concatenate([per_rating[r].z(stat)[:, gi] for r in ratings])
            n = z.size
            lines.append(f"   statistic {STAT_NAMES[stat]}, pooled over ratings {', '.join(map(str, ratings))}")
            lines.append(f"   {'z >=':>6} {'nominal':>9}  {'observed P(z>=t) [95% CI]':>31}  {'obs/nom':>7}  "
                         f"{'flagged (>= min_pos) [95% CI]':>31}  {'events':>8}")
            for t in thresholds:
                k = int(np.count_nonzero(z >= t))
                kf = int(np.count_nonzero((z >= t) & enough))
                tag = "  notice" if t == scfg.notice_z else ("  alert" if t == scfg.alert_z else "")
                lines.append(f"   {t:6.1f} {nominal(t):9.2e}  {_rate(k, n):>31}  {k / n / nominal(t):7.2f}  "
                             f"{_rate(kf, n):>31}  {n:8d}{tag}")
        lines.append(f"   per rating (observed P(z >= t); events per rating {per_rating[ratings[0]].n.shape[0]}):")
        lines.append("   " + f"{'stat':<12}{'rating':>7}{'c_r':>7}" + "".join(f"{'z>=' + str(t):>10}" for t in thresholds))
        lines.append("   " + f"{'':<12}{'nominal':>14}" + "".join(f"{nominal(t):10.2e}" for t in thresholds))
        for stat in stats_shown:
            for r in ratings:
                s = per_rating[r]
                z = s.z(stat)[:, gi]
                lines.append("   " + f"{stat:<12}{r:>7}{_C_OF[r]:7.3f}" + "".join(f"{np.mean(z >= t):10.2e}" for t in thresholds))
    return "\n".join(lines)


_C_OF: dict[int, float] = {}


def scattered_table(per_rating: dict[int, ZScores], scfg: ScreeningConfig, thresholds: Sequence[float],
                    scales: dict[str, float | None]) -> str:
    """Pooled false-alert rates of the scattered honest players: raw z, and z divided by the calibration's z_scale."""
    lines: list[str] = []
    ratings = sorted(per_rating)
    first = per_rating[ratings[0]]
    stats_shown = (("match", "loss") + (("match-exact",) if first.z_exact is not None else ())
                   + (("match+tau", "loss+tau") if first.z_match_tau is not None else ()))
    for gi, games in enumerate(GAMES):
        enough = np.concatenate([per_rating[r].n[:, gi] >= scfg.min_positions for r in ratings])
        lines.append(f"\n-- after {games} game{'s' if games > 1 else ''} (flagged: min_positions={scfg.min_positions} applied; "
                     f"{enough.mean():.1%} of the events have enough positions)")
        for stat in stats_shown:
            z = np.concatenate([per_rating[r].z(stat)[:, gi] for r in ratings])
            n = z.size
            scale = scales.get(stat)
            lines.append(f"   statistic {STAT_NAMES[stat]}: sd of z {np.std(z[np.isfinite(z)]):.3f}"
                         + (f"; divided by z_scale {scale:.3f}" if scale else "; no z_scale in the calibration"))
            lines.append(f"   {'z >=':>6} {'nominal':>9}  {'flagged, raw z [95% CI]':>31}  {'obs/nom':>7}  "
                         + (f"{'flagged, z / z_scale [95% CI]':>31}  {'obs/nom':>7}  " if scale else "") + f"{'events':>8}")
            for t in thresholds:
                k = int(np.count_nonzero((z >= t) & enough))
                row = f"   {t:6.1f} {nominal(t):9.2e}  {_rate(k, n):>31}  {k / n / nominal(t):7.2f}  "
                if scale:
                    ks = int(np.count_nonzero((z / scale >= t) & enough))
                    row += f"{_rate(ks, n):>31}  {ks / n / nominal(t):7.2f}  "
                lines.append(row + f"{n:8d}")
    return "\n".join(lines)


def power_table(results: dict[tuple[int, float], ZScores], scfg: ScreeningConfig, statistic: str | None = None) -> str:
    """Fraction flagged (default statistic unless given, min_positions applied) per rating, q and games."""
    statistic = statistic or scfg.statistic
    name = f"{statistic} (default)" if statistic == scfg.statistic else STAT_NAMES.get(statistic, statistic)
    lines = [f"   statistic {name}; notice z >= {scfg.notice_z}, alert z >= {scfg.alert_z}, "
             f"min_positions {scfg.min_positions}; raw = z >= notice without min_positions",
             "   " + f"{'rating':>6} {'c_r':>6} {'q':>5} {'events':>7}" +
             "".join(f"  {g} game{'s' if g > 1 else ' '}: notice  alert   raw" for g in GAMES)]
    any_s = next(iter(results.values()))
    lines.insert(1, "   share of player-events with >= min_positions (caps every 'notice'/'alert' column): "
                 + ", ".join(f"{g} game{'s' if g > 1 else ''} {np.mean(any_s.n[:, gi] >= scfg.min_positions):.1%}"
                             for gi, g in enumerate(GAMES)))
    for (r, q), s in sorted(results.items()):
        cells = []
        for gi in range(len(GAMES)):
            z = s.z(statistic)[:, gi]
            ok = s.n[:, gi] >= scfg.min_positions
            cells.append(f"  {'':>8}{np.mean((z >= scfg.notice_z) & ok):7.1%} {np.mean((z >= scfg.alert_z) & ok):6.1%} "
                         f"{np.mean(z >= scfg.notice_z):6.1%}")
        lines.append("   " + f"{r:>6} {_C_OF[r]:6.3f} {q:5.2f} {s.n.shape[0]:7d}" + "".join(cells))
    return "\n".join(lines)


def exact_tail_z(p0s: Sequence[float], matches: int) -> float:
    """z = Φ⁻¹(1 − p), p = P(M > matches) + ½·P(M = matches) (the screener's mid-p tail), for M Poisson-binomial
    over ``p0s`` (direct DP).

    >>> round(exact_tail_z([0.5] * 10, 10), 3)  # p = 2^-11
    3.297
    """
    pmf = np.zeros(len(p0s) + 1)
    pmf[0] = 1.0
    for p in p0s:
        pmf[1:] = pmf[1:] * (1.0 - p) + pmf[:-1] * p
        pmf[0] *= 1.0 - p
    return float(sps.norm.isf(max(float(pmf[matches + 1:].sum()) + 0.5 * float(pmf[matches]), 1e-300)))


def match_slope(decision: Decision, c: float) -> float:
    """∂p0/∂c of one position under E(c): p0 (E_p[log(loss + K)] − log K).

    >>> round(match_slope(Decision((0.0, -0.9), 0), 0.0), 4)  # p0 = 1/2; E log = (log .1 + log 1)/2
    0.5756
    """
    v = np.asarray(decision.values, dtype=float)
    loss = v.max() - v
    p = move_probabilities(v, float(c))
    p0 = float(p[loss == 0.0].sum())
    return p0 * (float(p @ np.log(loss + 0.1)) - math.log(0.1))


@dataclass
class RealPlayer:
    """One real player's screening at the default thresholds."""

    player: str
    elo: float
    c_r: float
    games: int
    stats: Any  # ScreeningStats
    z_exact: float  # exact Poisson-binomial tail of the matches, as z (bench-computed)
    z_tau: float  # match z with the scatter term τ² (Σ ∂p0/∂c)² in the variance (nan without τ)
    notice: Any  # True when raised, else None
    alert: Any
    records: list[Record]
    level_z: float = math.nan  # the z the levels are raised on (screener's)


def real_report(records: Sequence[Record], cal: Calibration, scfg: ScreeningConfig,
                tau: float | None = None, z_scale: float | None = None, shipped: bool = False) -> tuple[str, dict[str, Any]]:
    """Screen every rated player of ``records`` at the default thresholds; text and figures.

    ``shipped``: as livemon.live.screener does with the shipped line: c_r at the tag's strength
    (:func:`~livemon.rating.screening.tag_prior`; the export holds no results), the mid-p tail widened by the
    strength's sd and tau; otherwise c_r from ``cal`` and z / ``z_scale`` (a calibration's own map).

    Players without an Elo are not screened (no c_r) and counted. Each notice or
    alert is listed with its numbers and the five moves that raised z_match most
    ((matched − p0_t) / sd: a top move played where E(c_r) expected few).
    """
    kept = screened(records, scfg)
    by_player: dict[str, list[Record]] = {}
    for r in kept:
        by_player.setdefault(r.player, []).append(r)
    unrated = sorted(p for p, rs in by_player.items() if rs[0].elo is None)
    rows: list[RealPlayer] = []
    for player, rs in by_player.items():
        elo = rs[0].elo
        if elo is None:
            continue
        rs.sort(key=lambda r: (r.game, r.ply))
        prior = tag_prior(float(elo))
        c_r = SHIPPED.c_for(prior.mean) if shipped else cal.c_for_rating(elo)
        st = screening_stats(player, (r.decision for r in rs), c_r)
        z_x = exact_tail_z([position_expectation(r.decision, c_r).p0 for r in rs], st.matches_observed)
        z_t = math.nan
        if tau:
            slope = sum(match_slope(r.decision, c_r) for r in rs)
            z_t = (st.matches_observed - st.matches_expected) / math.sqrt(st.matches_sd ** 2 + (tau * slope) ** 2)
        # levels as livemon.live.screener raises them: mid-p-tail z_match / z_scale (statistic "match")
        z_lvl = z_x / (z_scale or 1.0) if scfg.statistic == "match" else _zof(st, scfg.statistic) / (z_scale or 1.0)
        if shipped and scfg.statistic == "match":  # widened by the strength's sd and tau (the shipped screener)
            dsum = sum(position_expectation(r.decision, c_r).dp0 for r in rs)
            z_lvl = widened_z(z_x, st.matches_sd ** 2, dsum, SHIPPED.slope_at(prior.mean), prior.sd ** 2,
                               SHIPPED.tau)
        enough = st.positions >= scfg.min_positions
        notice = True if enough and z_lvl >= scfg.notice_z else None
        alert = True if enough and z_lvl >= scfg.alert_z else None
        rows.append(RealPlayer(player, elo, c_r, len({r.game for r in rs}), st, z_x, z_t, notice, alert, rs, z_lvl))
    outside = sum(not cal.elo_min <= row.elo <= cal.elo_max for row in rows)
    out: list[str] = [f"   {len(records)} positions, {len(kept)} screened after exclusions "
                      f"(book_moves={scfg.book_moves}, eval_bound={scfg.eval_bound}); {len(rows)} rated players "
                      f"({outside} outside the calibration's Elo range {cal.elo_min:.0f}-{cal.elo_max:.0f}), "
                      f"{len(unrated)} without Elo (not screened)"]
    figures: dict[str, Any] = {"players": len(rows), "unrated": len(unrated), "positions": len(kept)}
    eligible = [row for row in rows if row.stats.positions >= scfg.min_positions]
    out.append("   distribution of z over the real players (honest players: mean ~0, sd ~1 when z is calibrated):")
    for group, members in ((f">= min_positions={scfg.min_positions}", eligible), ("all rated", rows)):
        for stat in ("match", "loss", "match-exact") + (("match+tau",) if tau else ()):
            z = np.array([{"match": row.stats.z_match, "loss": row.stats.z_loss, "match-exact": row.z_exact,
                           "match+tau": row.z_tau}[stat] for row in members], dtype=float)
            z = z[np.isfinite(z)]
            if z.size < 2:
                continue
            qs = np.quantile(z, [0.05, 0.25, 0.5, 0.75, 0.95])
            f = {"n": int(z.size), "mean": float(z.mean()), "sd": float(z.std(ddof=1)), "quantiles": [float(x) for x in qs],
                 "max": float(z.max()), "ge_2_5": int((z >= 2.5).sum()), "ge_4": int((z >= 4.0).sum()),
                 "le_-2_5": int((z <= -2.5).sum())}
            figures[stat if members is eligible else f"{stat} all"] = f
            out.append(f"   {group:<22} z_{stat:<11} n {f['n']:3d}  mean {f['mean']:+.3f}  sd {f['sd']:.3f}  q05/25/50/75/95 "
                       + " ".join(f"{x:+.2f}" for x in qs) + f"  max {f['max']:+.2f}  >=2.5: {f['ge_2_5']} "
                       f"(N(0,1): {z.size * nominal(2.5):.1f})  >=4: {f['ge_4']} ({z.size * nominal(4):.3f})  <=-2.5: {f['le_-2_5']}")
    flagged = [row for row in rows if row.notice is not None]
    figures["notices"] = len(flagged)
    figures["alerts"] = sum(row.alert is not None for row in rows)
    how = ("mid-p-tail z_match widened by the strength's sd and tau, shipped line" if shipped
           else f"mid-p-tail z_match / z_scale {z_scale or 1.0:.3f}")
    lz = np.array([row.level_z for row in eligible], dtype=float)
    if lz.size > 1:
        figures["screener"] = {"n": int(lz.size), "mean": float(lz.mean()), "sd": float(lz.std(ddof=1))}
        out.append(f"   the screener's z (>= {scfg.min_positions} positions): n {lz.size}, mean {lz.mean():+.3f}, "
                   f"sd {lz.std(ddof=1):.3f}")
    out.append(f"   levels as livemon.live.screener raises them ({how}, "
               f">= {scfg.min_positions} positions): notices (>= {scfg.notice_z}) {len(flagged)}; "
               f"alerts (>= {scfg.alert_z}) {figures['alerts']}")
    zn = np.array([_zof(row.stats, scfg.statistic) for row in eligible])
    figures["normal_unscaled"] = {"notices": int((zn >= scfg.notice_z).sum()), "alerts": int((zn >= scfg.alert_z).sum())}
    out.append(f"   (with the library's normal-approximation z_{scfg.statistic}, unscaled: notices "
               f"{figures['normal_unscaled']['notices']}, alerts {figures['normal_unscaled']['alerts']})")
    head = (f"   {'player':<30}{'elo':>5}{'c_r':>7}{'games':>6}{'pos':>5}{'MM obs':>7}{'MM exp':>7}{'z_m':>7}{'z_x':>7}{'z_t':>7}"
            f"{'loss obs':>9}{'loss exp':>9}{'z_l':>7}{'z_lvl':>7}{'ROI':>6}  level")
    rank = sorted(rows, key=lambda row: -row.level_z)
    for row in rank:
        if row.notice is None:
            continue
        out.append(head)
        out.append(_row(row, scfg))
        out.append("      moves that raised z_match most (game, ply, candidate values, played, p0, matched, loss):")
        sd = row.stats.matches_sd or 1.0
        contrib = []
        for r in row.records:
            e = position_expectation(r.decision, row.c_r)
            contrib.append(((float(e.matched) - e.p0) / sd, r, e))
        contrib.sort(key=lambda x: -x[0])
        for dz, r, e in contrib[:5]:
            out.append(f"        game {r.game:4d} ply {r.ply:3d}  {list(r.decision.values)} played #{r.decision.played}  "
                       f"p0 {e.p0:.3f}  {'match' if e.matched else 'no match'}  loss {e.loss:.2f}  (+{dz:.3f} z)")
    out.append(f"   top 8 players by z_lvl (for context; z_m = library normal z, z_x = mid-p-tail z of the matches, "
               f"z_t = match z with the tau term{'' if tau else ': no tau'}, z_lvl = the screener's z, ROI = 50 + 5 z_lvl):")
    out.append(head)
    for row in rank[:8]:
        out.append(_row(row, scfg))
    return "\n".join(out), figures


def _zof(st: Any, statistic: str) -> float:
    return st.z_match if statistic == "match" else st.z_loss if statistic == "loss" else max(st.z_match, st.z_loss)


def _row(row: RealPlayer, scfg: ScreeningConfig) -> str:
    st = row.stats
    level = "ALERT" if row.alert else "notice" if row.notice else ("" if st.positions >= scfg.min_positions else "(< min pos)")
    z = row.level_z
    return (f"   {row.player[:29]:<30}{row.elo:5.0f}{row.c_r:7.3f}{row.games:6d}{st.positions:5d}{st.matches_observed:7d}"
            f"{st.matches_expected:7.1f}{st.z_match:+7.2f}{row.z_exact:+7.2f}{row.z_tau:+7.2f}{st.loss_observed:9.3f}{st.loss_expected:9.3f}"
            f"{st.z_loss:+7.2f}{z:+7.2f}{50 + 5 * z:6.1f}  {level}")


# -- main --------------------------------------------------------------------------------------


def build_pool(spec: str | None, pgn: str, rng: np.random.Generator, scfg: ScreeningConfig) -> PositionPool:
    """The simulation pool: the export when present (or the given file/store), else the model."""
    path = Path(spec) if spec and spec != "model" else (EXPORT if spec is None and EXPORT.exists() else None)
    if path is None:
        return model_pool(rng)
    records, source = load_records(path, pgn)
    kept = screened(records, scfg)
    return pool_from_records(kept, f"REAL positions: {source}, {len(kept)} screened positions")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=200_000, help="simulated player-events per rating (false alerts)")
    ap.add_argument("--power-events", type=int, default=20_000, help="player-events per (rating, q) for power")
    ap.add_argument("--ratings", type=lambda s: [int(x) for x in s.split(",")], default=list(RATINGS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool", help="positions to simulate on: decisions export (.jsonl.gz), store (.sqlite, with --pgn) "
                                   "or 'model'; default: bench/data/open2025_decisions.jsonl.gz when present, else model")
    ap.add_argument("--pgn", default=str(OPEN_PGN), help="PGN of the games of a store given to --pool/--real")
    ap.add_argument("--real", help="screen the real players of this export or store (table 3); "
                                   "default: bench/data/open2025_decisions.jsonl.gz when present")
    ap.add_argument("--profile", help="calibration profile (default: the default engine profile)")
    ap.add_argument("--calibration", help="calibrations JSON to read (default: the shipped livemon/data/calibrations.json)")
    ap.add_argument("--only", choices=("false", "power", "real"), action="append")
    ap.add_argument("--no-exact", action="store_true", help="skip the exact Poisson-binomial tail of the matches")
    ap.add_argument("--tau", type=float, help="sd of honest players' own c around c_r for table 1b "
                                              "(default: the calibration's tau; 0 skips table 1b)")
    ap.add_argument("--scattered-events", type=int, default=105_000, help="player-events per rating for table 1b")
    args = ap.parse_args(argv)
    only = set(args.only or ("false", "power", "real"))
    rng = np.random.default_rng(args.seed)
    scfg = Config().screening
    info = default_calibration(args.profile, args.calibration)
    cal = info.cal
    print(f"calibration: {info.text}")
    tau = args.tau if args.tau is not None else info.tau
    SCREENER_Z_SCALE[0] = info.z_scale or 1.0
    print(f"screening defaults: notice z >= {scfg.notice_z}, alert z >= {scfg.alert_z}, min_positions {scfg.min_positions}, "
          f"statistic {scfg.statistic}, book_moves {scfg.book_moves}, eval_bound {scfg.eval_bound}; seed {args.seed}")

    if only & {"false", "power"}:
        t0 = time.perf_counter()
        pool = build_pool(args.pool, args.pgn, rng, scfg)
        print(f"pool: {pool.source}; {pool.positions} positions in {pool.sides} game-sides "
              f"({pool.positions / pool.sides:.1f} per side) [{time.perf_counter() - t0:.1f} s]")
        ratings = sorted(set(args.ratings) | (set(POWER_RATINGS) if "power" in only else set()))
        table: dict[int, PoolAtC] = {}
        spectra: dict[int, MatchSpectra | None] = {}
        for r in ratings:
            prior = tag_prior(float(r))
            _C_OF[r] = cal.c_for_rating(r) if not info.shipped else SHIPPED.c_for(prior.mean)
            if info.shipped:
                SCREENER_WIDEN[_C_OF[r]] = SHIPPED.slope_at(prior.mean) ** 2 * prior.sd ** 2 + SHIPPED.tau ** 2
            table[r] = at_c(pool, _C_OF[r])
            spectra[r] = None if args.no_exact else match_spectra(pool, table[r])
            outside = "" if cal.elo_min <= r <= cal.elo_max else " (outside the fitted Elo range: extrapolated)"
            worst = check_against_library(pool, table[r], rng, spectra=spectra[r])
            worst_q = check_against_library(pool, table[r], rng, events=10, q=0.5, spectra=spectra[r])
            print(f"rating {r}: c_r = {_C_OF[r]:.4f}{outside}; vectorised z == library screening_stats "
                  f"(max |diff| {max(worst, worst_q):.1e} over 50 player-events x 3 checkpoints)")

    if "false" in only:
        t0 = time.perf_counter()
        per_rating = {r: simulate(pool, table[r], args.events, rng, spectra=spectra[r],
                                  widen=SCREENER_WIDEN.get(_C_OF[r])) for r in args.ratings}
        total = args.events * len(args.ratings)
        print(f"\n== 1. False-alert rate: honest players simulated from E(c_r), {args.events} player-events per rating, "
              f"{total} pooled [{time.perf_counter() - t0:.1f} s] ==")
        print(false_alert_tables(per_rating, scfg, THRESHOLDS))
        _small_n_note(per_rating, scfg)
        if tau:
            t0 = time.perf_counter()
            scattered = {r: simulate_scattered(pool, table[r], float(tau), args.scattered_events, rng, spectra=spectra[r])
                         for r in args.ratings}
            scales = {"match": info.z_scale, "loss": info.z_scale_loss, "match-exact": info.z_scale}
            print(f"\n== 1b. Honest players who are not exactly E(c_r): own c ~ N(c_r, tau^2), tau = {tau:.4f} "
                  f"({'given' if args.tau is not None else 'the calibration' + chr(39) + 's'}), screened against E(c_r); "
                  f"{args.scattered_events} player-events per rating, pooled over {len(args.ratings)} ratings "
                  f"[{time.perf_counter() - t0:.1f} s] ==")
            print(scattered_table(scattered, scfg, THRESHOLDS, scales))
        else:
            print("\n== 1b. skipped: the calibration has no tau (scatter of players' c around c_r); give --tau ==")

    if "power" in only:
        t0 = time.perf_counter()
        results = {(r, q): simulate(pool, table[r], args.power_events, rng, q=q, tau=tau or None, spectra=spectra[r],
                                    widen=SCREENER_WIDEN.get(_C_OF[r]))
                   for r in POWER_RATINGS for q in POWER_Q}
        print(f"\n== 2. Power: engine's best move with probability q, else E(c_r); {args.power_events} player-events "
              f"per row [{time.perf_counter() - t0:.1f} s] ==")
        if not args.no_exact:
            print(power_table(results, scfg, "screener"))
            print("   (the same players, library normal-approximation z_match:)")
        print(power_table(results, scfg))
        if tau:
            print(f"\n== 2b. The same players screened with match+tau (tau = {tau:.4f}): the power an honest false-alert "
                  "rate leaves ==")
            print(power_table(results, scfg, "match+tau"))

    if "real" in only:
        if not args.real and EXPORT.exists():
            args.real = str(EXPORT)
        if not args.real:
            print("\n== 3. Real players: skipped (give --real EXPORT.jsonl.gz or --real STORE.sqlite [--pgn PGN]) ==")
        else:
            t0 = time.perf_counter()
            records, source = load_records(args.real, args.pgn)
            text, _ = real_report(records, cal, scfg, tau, info.z_scale, shipped=info.shipped)
            print(f"\n== 3. Real players: {source} [{time.perf_counter() - t0:.1f} s] ==")
            print(text)
    return 0


def _small_n_note(per_rating: dict[int, ZScores], scfg: ScreeningConfig) -> None:
    """Say plainly whether the normal approximation's tail is far above nominal at the alert threshold."""
    notes = 0
    for gi, games in enumerate(GAMES):
        for stat in ("match", "loss"):  # the library's statistics
            z = np.concatenate([s.z(stat)[:, gi] for s in per_rating.values()])
            k, n = int(np.count_nonzero(z >= scfg.alert_z)), z.size
            lo, _ = clopper_pearson(k, n)
            if lo > 2 * nominal(scfg.alert_z):
                print(f"NOTE: after {games} game(s) the {stat} z (normal approximation) exceeds {scfg.alert_z} "
                      f"{k / n / nominal(scfg.alert_z):.1f}x as often as nominal (95% CI lower bound {lo:.2e} vs "
                      f"{nominal(scfg.alert_z):.2e}): an exact tail would be needed there")
                notes += 1
    if not notes:
        print(f"NOTE: at the alert threshold z = {scfg.alert_z} the library's match and loss z are not significantly "
              f"above twice the nominal rate after 1, 3 or 9 games (95% CI lower bound below {2 * nominal(scfg.alert_z):.2e}): "
              "the normal approximation does not over-alert on players who are exactly E(c_r)")


if __name__ == "__main__":
    raise SystemExit(main())
