"""The multi-feature headline estimate: its data, its leave-one-event-out measure, and its shipped fit.

Data (no engine; every analysis is a committed export):

* the calibration games of ``bench/calibration_data.py`` (``calibration_d12.jsonl.gz`` and, when
  present, every ``calibration_d12_extra*.jsonl.gz``: the further
  rounds of analysis, same profile, fit events only; ``calibration_d12_heldback2.jsonl.gz`` and
  ``calibration_d12_heldback3.jsonl.gz``: the second and third held-back sets, ``calibration_d12_heldback4.jsonl.gz``:
  the held-back open's other games, ``broadcast2025_rr_d12.jsonl.gz``: a 2025 round robin, never fitted);
* the 2025 open's screened decisions (``open2025_decisions.jsonl.gz``, all nine rounds; its
  results from its PGN in ``tests/data``).

A **game sample** is one rated player's counted moves in one game (the positions screening
uses: the first 8 moves of each side, positions beyond ±3 and forced moves left out — the
only positions the open's export holds), with the player-event, the opponent's rating and
the points scored.

``loeo(...)`` fits on every event but one and estimates the one left out, for every event
in turn: what ``bench/validity.py`` reports. ``main`` fits the shipped model on the fit
events (the held-back events of ``bench/calibration_split.py`` never enter it) and writes it
into ``livemon/rating/quality_params.py``.

Usage::

    python bench/fit_quality.py            # fit and write livemon/rating/quality_params.py
    python bench/fit_quality.py --dry-run  # print the fit only
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess.pgn
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration_data import DEFAULT, PROFILE, RATINGS, load  # noqa: E402

from livemon.rating.agent import Decision  # noqa: E402
from livemon.rating.quality import (  # noqa: E402
    FEATURES,
    FIXED,
    GameSample,
    QualityModel,
    QualityStats,
    combine,
    field_estimate,
    field_prior_var,
    fit_field_rho,
    fit_quality_model,
    move_features,
    results_performance,
)
from livemon.rating.screening import screening_exclusion  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
EXTRAS = tuple(sorted((REPO / "bench" / "data").glob("calibration_d12_extra*.jsonl.gz")))
"""The further rounds of analysis of the fit events (``_extra``, ``_extra2``, …): every one in ``bench/data``."""
HELD_BACK_2 = REPO / "bench" / "data" / "calibration_d12_heldback2.jsonl.gz"
"""The second held-back set's analyses (``bench/calibration_split.py plan-heldback``): part ``test`` only."""
HELD_BACK_3 = REPO / "bench" / "data" / "calibration_d12_heldback3.jsonl.gz"
"""The third held-back set's analyses (``bench/calibration_split.py plan-heldback3``): part ``test`` only."""
HELD_BACK_4 = REPO / "bench" / "data" / "calibration_d12_heldback4.jsonl.gz"
"""The held-back open's games its first plan left out (``bench/calibration_split.py plan-guwahati``): part ``test``."""
HELD_BACK_2025 = REPO / "bench" / "data" / "broadcast2025_rr_d12.jsonl.gz"
"""The 2025 round robin's analyses (``calibration_split.HELD_BACK_2025``; its header names its PGN, in ``tests/data``,
and the event: ``calibration_data.event_export``): part ``test``."""
OPEN_DECISIONS = REPO / "bench" / "data" / "open2025_decisions.jsonl.gz"
OPEN_PGN = REPO / "tests" / "data" / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
OPEN_EVENT = "XVII Memorial Pedro Lezcano Montalvo 2025"
PARAMS = REPO / "livemon" / "rating" / "quality_params.py"
BOOK_MOVES, EVAL_BOUND = 8, 3.0
POINTS = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


@dataclass
class Side:
    """One player's counted moves in one game, and what a results performance needs."""

    event: str
    player: str
    game: str
    elo: float | None
    opponent_elo: float | None
    points: float | None
    part: str  # "fit" or "test"
    features: np.ndarray  # (moves, features)
    decisions: list[tuple[int, Decision]] = field(default_factory=list)  # (ply, decision) of the counted moves
    all_moves: list[tuple[int, Decision]] = field(default_factory=list)  # every non-forced move (the open: counted only)
    gains: list[int] = field(default_factory=list)  # Ferreira's gains (cp; none for the open's export)
    opponent: Side | None = field(default=None, repr=False, compare=False)  # the other side of the game

    def sums(self) -> tuple[int, ...]:
        """The counted moves' feature sums in fixed point (what a tally holds)."""
        return tuple(int(v) for v in np.round(self.features * FIXED).sum(axis=0).astype(np.int64))

    def as_opponent(self) -> tuple[tuple[int, ...], int, float] | None:
        """What the other side's estimate reads of this side (:class:`~livemon.rating.quality.QualityStats`)."""
        return None if self.elo is None or not len(self.features) else (self.sums(), len(self.features), self.elo)


def _features(moves: list[tuple[int, Decision]]) -> np.ndarray:
    rows = [move_features(d) for _, d in moves]
    # through the fixed point of a tally, so that the bench reads exactly what livemon sums
    return np.round(np.array(rows, dtype=float).reshape(-1, len(FEATURES)) * FIXED) / FIXED


def calibration_sides(paths: Sequence[Path], book_moves: int = BOOK_MOVES, eval_bound: float = EVAL_BOUND) -> list[Side]:
    out: list[Side] = []
    seen: set[tuple[str, int]] = set()
    for path in paths:
        if not path.exists():
            continue
        for g in load(path):
            if (g.file, g.index) in seen or len(g.plies) < 20:
                continue
            seen.add((g.file, g.index))
            pts = POINTS.get(g.result)
            for white in (True, False):
                key, elo = g.player(white)
                _, opp = g.player(not white)
                moves = [(sp.ply, sp.decision) for sp in g.plies
                         if sp.white_moved == white and sp.decision is not None and not sp.forced
                         and screening_exclusion(sp.decision, sp.ply, book_moves, eval_bound) is None]
                every = [(sp.ply, sp.decision) for sp in g.plies
                         if sp.white_moved == white and sp.decision is not None and not sp.forced]
                gains = [sp.gain for sp in g.plies if sp.white_moved == white and sp.gain is not None]
                out.append(Side(g.event, key, f"{g.file}#{g.index}", None if elo is None else float(elo),
                                None if opp is None else float(opp), None if pts is None else pts[0 if white else 1],
                                g.part, _features(moves), moves, every, gains))
    return out


def open_sides(path: Path = OPEN_DECISIONS, pgn: Path = OPEN_PGN) -> list[Side]:
    """The open's game-sides from its decisions export (screened already) and the PGN's tags."""
    if not path.exists() or not pgn.exists():
        return []
    tags: list[chess.pgn.Headers] = []
    with open(pgn, encoding="utf-8") as f:
        while (h := chess.pgn.read_headers(f)) is not None:
            tags.append(h)
    moves: dict[tuple[int, str], list[tuple[int, Decision]]] = defaultdict(list)
    elos: dict[str, float] = {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        next(f)
        for line in f:
            r = json.loads(line)
            moves[(r["game"], r["player"])].append((int(r["ply"]), Decision(tuple(r["values"]), int(r["played"]))))
            if r.get("elo"):
                elos[r["player"]] = float(r["elo"])
    out = []
    for (game, player), ms in sorted(moves.items()):
        h = tags[game - 1]
        white = h.get("White") == player
        opp_elo = h.get("BlackElo" if white else "WhiteElo", "")
        pts = POINTS.get(h.get("Result", "*"))
        out.append(Side(OPEN_EVENT, player, f"open#{game}", elos.get(player),
                        float(opp_elo) if opp_elo.isdigit() and int(opp_elo) > 0 else None,
                        None if pts is None else pts[0 if white else 1], "fit", _features(ms), ms, ms))
    return out


def all_sides(export: Path = DEFAULT, with_open: bool = True) -> list[Side]:
    """Every analysed game's sides, each linked to the other side of its game."""
    paths = [export] + ([p for p in (*EXTRAS, HELD_BACK_2, HELD_BACK_3, HELD_BACK_4, HELD_BACK_2025) if p.exists()]
                        if export == DEFAULT else [])
    out = calibration_sides(paths) + (open_sides() if with_open else [])
    games: dict[tuple[str, str], list[Side]] = defaultdict(list)
    for s in out:
        games[(s.event, s.game)].append(s)
    for pair in games.values():
        if len(pair) == 2:
            pair[0].opponent, pair[1].opponent = pair[1], pair[0]
    return out


def samples(sides: Sequence[Side]) -> list[GameSample]:
    return [GameSample(s.elo, (s.event, s.player), s.features, s.event, (s.event, s.game))
            for s in sides if s.elo is not None and len(s.features)]


@dataclass
class Unit:
    """What an estimator sees of one player over some games (one game, or a whole event)."""

    event: str
    player: str
    elo: float | None
    sides: list[Side]

    @property
    def games(self) -> int:
        return len(self.sides)

    def stats(self, opponents: bool = True) -> QualityStats:
        """The unit's statistics as livemon's tally makes them; ``opponents``: with each game's other side."""
        feats = np.concatenate([s.features for s in self.sides]) if self.sides else np.zeros((0, len(FEATURES)))
        sums = tuple(int(v) for v in np.round(feats * FIXED).sum(axis=0).astype(np.int64)) if len(feats) else (0,) * len(FEATURES)
        rows = sorted((((s.sums(), len(s.features)), s.opponent.as_opponent() if opponents and s.opponent else None)
                       for s in self.sides if len(s.features)), key=lambda r: (r[0], r[1] or ()))
        opp = tuple(o for _, o in rows) if any(o is not None for _, o in rows) else ()
        return QualityStats(sums, len(feats), len(rows), tuple(own for own, _ in rows), opp)

    def results(self) -> list[tuple[float, float]]:
        return [(s.opponent_elo, s.points) for s in self.sides if s.opponent_elo is not None and s.points is not None]


def units(sides: Sequence[Side], per: str, min_games: int = 1) -> list[Unit]:
    if per == "game":
        return [Unit(s.event, s.player, s.elo, [s]) for s in sides]
    merged: dict[tuple[str, str], Unit] = {}
    for s in sides:
        merged.setdefault((s.event, s.player), Unit(s.event, s.player, s.elo, [])).sides.append(s)
    return [u for u in merged.values() if u.games >= min_games]


def field_of(sides: Sequence[Side]) -> dict[str, dict[str, float]]:
    """Each event's players' ratings (by player): the field a field estimate's prior is made from."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for s in sides:
        if s.elo is not None:
            out[s.event][s.player] = s.elo
    return out


JOINT_LEVEL = True
"""Whether the joint reading's noise by level is fitted on its own out-of-fold errors (``joint_level`` of
:func:`~livemon.rating.quality.fit_quality_model`; else it borrows the single side's; ``bench/quality_alternatives.py``)."""

LEVEL_BIAS = False
"""Whether the shipped fit takes the out-of-fold errors' trend by level off the point (``level_bias`` of
:func:`~livemon.rating.quality.fit_quality_model`; measured leave one event out in ``docs/calibration.md``)."""


def fit(sides: Sequence[Side], use: Sequence[str] = FEATURES, ridge: float = 0.5, fitted_on: str = "",
        by_event: int = 0, level_bias: bool | None = None) -> QualityModel:
    """The model on these sides, with the results' noise and correlation measured on their player-events."""
    model = fit_quality_model(samples(sides), PROFILE, use, ridge, BOOK_MOVES, EVAL_BOUND, fitted_on, by_event,
                              level_bias=LEVEL_BIAS if level_bias is None else level_bias, joint_level=JOINT_LEVEL)
    # results performance around the rating: sd² = b/k, b the mean of k·error² over player-events of 5+ games
    # (shorter ones are the Olympiad's and the leagues': few, and not what a results performance is quoted for);
    # and the correlation of its error with the moves estimate's
    rows = []
    for u in units(sides, "event"):
        res = u.results()
        st = u.stats()
        if u.elo is None or len(res) < 5 or st.positions < 5:
            continue
        r = results_performance(res).elo
        assert r is not None
        rows.append((len(res), r - u.elo, model.score(st) - u.elo))
    if len(rows) >= 20:
        k = np.array([x[0] for x in rows], dtype=float)
        er, em = np.array([x[1] for x in rows]), np.array([x[2] for x in rows])
        model = QualityModel(**{**model.__dict__, "results": {
            "a": 0.0, "b": float(np.mean(k * er**2)), "rho": float(np.corrcoef(em, er)[0, 1]), "player_events": len(rows)}})
    rho, scale = fit_field_rho(field_rows(model, sides))
    return QualityModel(**{**model.__dict__, "field_rho": rho, "field_scale": scale})


def field_rows(model: QualityModel, sides: Sequence[Side]) -> list[tuple[str, float, float, float, float, float]]:
    """What :func:`~livemon.rating.quality.fit_field_rho` fits on: (kind, rating, mean of the other players' ratings,
    the field prior's sd, estimate, sd) of the moves estimate of every rated player-game (what a field estimate has before a
    result) and of the moves and results combined over every player-event of 5+ games (as the results' noise)."""
    fields = field_of(sides)
    out = []
    for per, kind, min_games in (("game", "moves", 1), ("event", "moves+results", 5)):
        for u in units(sides, per, min_games):
            others = [r for p, r in fields.get(u.event, {}).items() if p != u.player]
            st = u.stats()
            if u.elo is None or len(others) < 2 or st.positions < 5:
                continue
            e = model.estimate(st)
            if e.sd is None or e.point is None:
                continue
            e = type(e)(e.point, None, e.sd, e.positions, e.games, "moves", point=e.point)
            if kind == "moves+results":
                e = combine(model, e, results_performance(u.results(), model))
                if e.elo is None or e.sd is None:
                    continue
            assert e.elo is not None and e.sd is not None
            prior_sd = float(np.sqrt(field_prior_var(len(others), float(np.var(others, ddof=1)))))
            out.append((kind, u.elo, float(np.mean(others)), prior_sd, e.elo, e.sd))
    return out


Estimator = Callable[[Unit], tuple[float, tuple[float, float] | None] | None]


Moved = Callable[[str, str, float], float]
"""(event, player, rating) → the rating as the player's estimate reads it (``bench/validity.py --field-lag``)."""


def estimators(model: QualityModel, fields: dict[str, dict[str, float]], mean_elo: float,
               moved: Moved | None = None) -> dict[str, Estimator]:
    """The new estimators of a unit, all from ``model`` (fitted without the unit's event); ``moved``: the other
    players' and the opponents' ratings as the field estimate reads them (default: their tags)."""
    def read(u: Unit, rating: float) -> float:
        return rating if moved is None else moved(u.event, u.player, rating)

    def moves(u: Unit) -> tuple[float, tuple[float, float] | None] | None:
        st = u.stats()
        if st.positions < 5:
            return None
        e = model.estimate(st)
        if e.elo is None:  # interval wider than the fitted range: the point is still measured, without interval
            return None if e.point is None else (e.point, None)
        return (e.elo, e.cr95)

    def in_field(u: Unit) -> tuple[float, tuple[float, float] | None] | None:
        st = u.stats()
        if st.positions < 5:
            return None
        others = [read(u, r) for p, r in fields.get(u.event, {}).items() if p != u.player]
        results = [(read(u, opponent), points) for opponent, points in u.results()]
        f = field_estimate(model, model.estimate(st), st, others, results_performance(results, model))
        return None if f.elo is None or f.cr95 is None else (f.elo, f.cr95)

    def results(u: Unit) -> tuple[float, tuple[float, float] | None] | None:
        r = results_performance(u.results(), model)
        return None if r.elo is None else (r.elo, r.cr95)

    def both(u: Unit) -> tuple[float, tuple[float, float] | None] | None:
        st = u.stats()
        if st.positions < 5:
            return None
        c = combine(model, model.estimate(st), results_performance(u.results(), model))
        return None if c.elo is None or c.cr95 is None else (c.elo, c.cr95)

    def headline(u: Unit) -> tuple[float, tuple[float, float] | None] | None:
        """What the monitor shows as the estimate: in this field where there is one, else the moves alone."""
        return in_field(u) or moves(u)

    return {"headline": headline, "quality": moves, "quality_field": in_field, "results": results,
            "moves+results": both, "mean": lambda u: (mean_elo, None)}


def loeo(sides: Sequence[Side], make: Callable[[Sequence[Side]], dict[str, Estimator]],
         events: Sequence[str] | None = None, min_games: int = 5) -> dict[str, list[tuple[str, Unit, dict[str, object]]]]:
    """Every event left out in turn: ``{"game": [...], "event": [...]}`` of (event, unit, {estimator: estimate})."""
    by_event: dict[str, list[Side]] = defaultdict(list)
    for s in sides:
        by_event[s.event].append(s)
    out: dict[str, list[tuple[str, Unit, dict[str, object]]]] = {"game": [], "event": []}
    for ev in sorted(events if events is not None else by_event):
        train = [s for s in sides if s.event != ev]
        ests = make(train)
        test = by_event[ev]
        for per, mg in (("game", 1), ("event", min_games)):
            for u in units(test, per, mg):
                if u.elo is None:
                    continue  # estimated, never counted against a rating
                out[per].append((ev, u, {k: f(u) for k, f in ests.items()}))
    return out


def write_params(model: QualityModel, path: Path = PARAMS) -> None:
    text = f'''"""The fitted quality models (``bench/fit_quality.py`` writes this file): one per engine profile.

A profile without an entry has no quality estimate: :func:`model_for` returns None and the
estimate says why; another profile's model is never used.

>>> model_for("no such profile") is None
True
>>> model_for({model.profile!r}).profile
{model.profile!r}
"""

from __future__ import annotations

from typing import Any

from livemon.rating.quality import QualityModel

MODELS: dict[str, dict[str, Any]] = {json.dumps({model.profile: model.to_dict()}, indent=4)}


def model_for(profile: str) -> QualityModel | None:
    """The fitted model of exactly ``profile``, or None."""
    d = MODELS.get(profile)
    return None if d is None else QualityModel.from_dict(d)
'''
    path.write_text(text.replace(": NaN", ": float('nan')"), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    sides = all_sides()
    fit_sides = [s for s in sides if s.part == "fit"]
    events = sorted({s.event for s in fit_sides})
    n_pe = len({(s.event, s.player) for s in fit_sides if s.elo is not None})
    what = (f"{len({s.game for s in fit_sides})} games, {len(events)} events, {n_pe} player-events, "
            f"{sum(len(s.features) for s in fit_sides if s.elo is not None)} positions (fit events, 2025 open); "
            + ("ratings on today's FIDE scale" if RATINGS == "today" else "ratings as published"))
    model = fit(fit_sides, fitted_on=what)
    print(what)
    print(f"sigma persist {model.sigma_persist:.0f}, day {model.sigma_day:.0f}, move {model.sigma_move:.0f}; "
          f"results {model.results}")
    print("noise scale by level (games' parts / persistent part): " + ", ".join(
        f"{r}: {model.noise_scale(r):.2f}/{model.noise_scale(r, True):.2f}" for r in (1500, 1800, 2000, 2200, 2500, 2800)))
    print(f"field prior's error correlation with the evidence's: {model.field_rho}; the field's sd scaled by "
          f"{model.field_scale}")
    j = model.joint
    if j is not None:
        print(f"a game read from both sides: sigma persist {j.sigma_persist:.0f}, day {j.sigma_day:.0f}, move "
              f"{j.sigma_move:.0f}, the opponent's moves {j.sigma_move_opponent:.0f}; per Elo of the opponent's "
              f"rating {j.opponent_elo:+.3f}; one game's parts scaled by {j.scale:.3f} (its single games' "
              f"intervals shown cover 95% out of fold), nine games' by {j.factor(9):.3f}")
        print("  its noise scale by level (games' parts / persistent part): " + ", ".join(
            f"{r}: {model.noise_scale(r, joint=True):.2f}/{model.noise_scale(r, True, True):.2f}"
            for r in (1500, 1800, 2000, 2200, 2500, 2800)))
    if model.level_bias != (0.0, 0.0, 0.0):
        print("the out-of-fold errors' trend by level taken off: " + ", ".join(
            f"{r}: {model.bias_at(r):+.0f}" for r in (1500, 1800, 2000, 2200, 2500, 2800)))
    for name, w in zip(FEATURES, model.weights):
        print(f"  {name:<14} {w:+10.1f}")
    if not args.dry_run:
        write_params(model)
        print(f"-> {PARAMS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
