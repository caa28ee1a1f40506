"""Screening of honest over-the-board players: the strength model's fit, and z on events the fit never saw.

Data (no engine; every analysis is a committed export, read by ``bench/fit_quality.py``'s loader):
the calibration games of ``bench/calibration_data.py`` (``calibration_d12.jsonl.gz``, its five
``_extra`` exports and the held-back ones, ``_heldback2`` to ``_heldback4`` and the 2025 round robin's
``broadcast2025_rr_d12.jsonl.gz``) and the 2025 open's screened decisions, one rated player per event per unit
(a **player-event**), its screened positions (book moves, positions beyond ±3 and forced moves
left out), its results and its rating tag.

Split (``bench/calibration_split.py``, by event, fixed before any analysis): **held back** — its four
held-back sets (``FIRST_TEST_EVENTS``, ``HELD_BACK_2``, ``HELD_BACK_3`` and ``HELD_BACK_2025``, a 2025
round robin whose PGN is in ``tests/data``) — never enter a fit; every other classical event is **fit**
data (the rapid files A03, A14 are in neither). Figures on the fit events are **leave one event out**:
for each fit event the line is fitted on the others and the event's players are scored with it.

Every rating (the player's tag, the opponents') is put on today's FIDE scale with its game's date
(:func:`livemon.rating.scale.to_current_scale`): the calibration games are of 2020-2022, before the
compression of 1 March 2024; the open is of April 2025, the round robin of February 2025.

Rapid (``calibration_rapid_d12.jsonl.gz``, ``_extra`` and ``_extra2``, when present): the rapid events' games
(``bench/calibration_split.py plan-rapid``: players under 1800; ``plan-rapid2``: whole player-events of every
level of the Romanian championships; ``plan-rapid3``: Saint Louis Rapid 2022), in neither part of the classical
fit. Their players are read with the line fitted on every fit event
(``rapid, read with the classical line``), then with the line's ``rapid`` offset (:func:`rapid_report`), fitted on
the players of ``RAPID_FIT_EVENTS`` (ch-ROU Rapid 2022) alone and measured on the other rapid events, held back.

The model (:mod:`livemon.rating.screening`): the tag's prior on today's strength
(:func:`tag_prior`: the rating's own noise for its K, a K = 40 rating's lag behind an improving
player, juniors by the event's name), moved by the event's **field lag** (:func:`field_lag`: what the
event's other finished games say of how far its likely K = 40 players stand above their tags), the
player's results blended in (:func:`results_strength`; every finished game of the event in the files, as a
screener watching the event sees them, not only the analysed sample),
c = a + b·strength + g·(opponents − strength) + h·max(0, 1800 − strength) (opponents: the mean rating of the
player's opponents in the event's finished games), plus ``era`` for an event played before FIDE's scale change of
1 March 2024, with the players' own scatter tau, and z of the top-move matches against that strength with the
total variance (:func:`widened_z`, through ∂c/∂strength = b − g, less h below 1800). (a, b, tau, g, era, h) are
fitted on the fit events so that the honest players' z's have mean 0 (in each era), no trend with strength (above
and below 1800) nor with the opponents' gap, variance 1 (player-events of 20+ positions); a line fitted on events
of one era (the 2025 open left out) has no era term.
The field lag's prior sd is fitted on the fit events' finished games alone (:func:`fit_field_lag_sd`, reported
beside the shipped ``FIELD_LAG_SD``). Three readings side by
side: the calibration's screening map (tags as read, z / z_scale); **previous**, the strength model with the
field lag's prior sd 150 and no opponents term; the shipped one; each of the two changes alone; and the shipped
one with the field lag moving the prior as a fraction k40 of it (**lag as a fraction**: variance (k40·lag_sd)²)
instead of as the two-part mixture (:func:`~livemon.rating.screening.moved_by_field`); the shipped one with
**no era term** (one line for every event), and **straight**, without the bend below 1800.

Measures (z of the match statistic, the mid-p tail of its exact Poisson-binomial distribution, widened): mean, sd, notices
(z ≥ 2.5) and alerts (z ≥ 4; with the new model an alert also needs z ≥ 4 against the tag alone)
with the number expected by chance, by band of today's rating (< 1800, 1800-2200, 2200+: under 1800 is
where the prior gives K = 40 the greater chance; the data holds no birth years or rated-game counts), for
the players of junior events, and for those whose event results read 200+ above their tag (3+ games).

Usage::

    python bench/screening_honest.py [--games DIR] [--cache FILE] [--write] [--json]
    python bench/screening_honest.py --power
    python bench/screening_honest.py --cache FILE --field-step 10   # how far z moves per 10 points of strength

``--games``: the calibration collection's folder (default ``$LIVEMON_CALIBRATION_GAMES``; the games are
not in the repository, their analyses are). ``--write`` writes the fitted line into
``livemon/rating/screening_params.py``; ``--power`` simulates engine users against the shipped line
(:func:`power`): the price in power of not accusing improving players.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import pickle
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import calibration_split as cs  # noqa: E402

from livemon.live.pgn import game_date  # noqa: E402
from livemon.rating.agent import K, Decision  # noqa: E402
from livemon.rating.scale import COMPRESSION_DATE, to_current_scale  # noqa: E402
from livemon.rating.screening import (  # noqa: E402
    FIELD_LAG_SD,
    FieldGame,
    KNEE,
    PoissonBinomial,
    StrengthPrior,
    expected_by_chance,
    field_game,
    field_lag,
    field_lag_without,
    junior_event,
    results_strength,
    tag_prior,
    tail_z,
)

PROFILE = "Stockfish 15.1 depth=12 multipv=4"
BOOK_MOVES, EVAL_BOUND = 8, 3.0
BANDS = ((0, 1800, "<1800"), (1800, 2200, "1800-2200"), (2200, 9999, "2200+"))
MIN_FIT_POSITIONS = 20
PARAMS = REPO / "livemon" / "rating" / "screening_params.py"
NOTICE_Z, ALERT_Z = 2.5, 4.0


@dataclass
class PlayerEvent:
    """One rated player in one event: what screening reads."""

    event: str
    player: str
    part: str
    tag_read: float  # the tag as printed (the mean over the event's games)
    tag: float  # on today's scale
    games: list[tuple[float, float]]  # (opponent's rating on today's scale, points)
    decisions: list[Decision] = field(default_factory=list)
    year: int | None = None  # the year of its first game (None: undated)
    before: bool = False  # played before FIDE's scale change of 1 March 2024 (the line's era term)


def _date(text: str) -> datetime.date | None:
    parts = text.split(".")
    if len(parts) != 3 or not parts[0].isdigit():
        return None
    return datetime.date(int(parts[0]), int(parts[1]) if parts[1].isdigit() else 1,
                         int(parts[2]) if parts[2].isdigit() else 1)


def load(rapid_only: bool = False) -> list[PlayerEvent]:
    """Every rated player-event of the exports (the calibration games' and the open's; the rapid championships'
    when their export is there), or only the rapid ones."""
    import calibration_data as cd
    import fit_quality as fq

    cd.RATINGS = "published"  # the tags as printed: put on today's scale below, with each game's date
    sides = [] if rapid_only else fq.all_sides()
    sides += fq.calibration_sides(RAPID)
    outside = dict(events_outside())  # PGN -> event: the exports of events outside the collection
    skip = ("open#", *(f"{pgn.name}#" for pgn in outside))
    dates = {f"{n}#{i}": h.get("Date", "?")
             for n, i, _, h, _ in cs.read_all(files={s.game.split("#")[0] for s in sides if not s.game.startswith(skip)})}
    for pgn in outside:  # a broadcast's games may carry UTCDate alone
        dates |= {f"{pgn.name}#{i}": game_date(h) for i, h in enumerate(_tags(pgn), 1)}
    merged: dict[tuple[str, str], list[fq.Side]] = defaultdict(list)
    for s in sides:
        if s.elo is not None:
            merged[(s.event, s.player)].append(s)
    out = []
    for (event, player), ss in merged.items():
        date = _date(dates.get(ss[0].game, "2025.04.20" if ss[0].game.startswith("open#") else "?"))
        read = float(np.mean([s.elo for s in ss]))
        games = [(float(to_current_scale(int(s.opponent_elo), date)), float(s.points)) for s in ss
                 if s.opponent_elo is not None and s.points is not None]
        out.append(PlayerEvent(event, player, ss[0].part, read, float(to_current_scale(int(round(read)), date)),
                               games, [d for s in ss for _, d in s.decisions], date.year if date else None,
                               date is not None and date < COMPRESSION_DATE))
    return out


class Packed:
    """Every screened position of the player-events, for sums at one c per player-event."""

    def __init__(self, units: list[PlayerEvent]):
        rows = [(i, d) for i, u in enumerate(units) for d in u.decisions]
        width = max(len(d.values) for _, d in rows)
        self.dist = np.full((len(rows), width), np.inf)
        self.matched = np.zeros(len(rows))
        self.owner = np.array([i for i, _ in rows], dtype=np.intp)
        for r, (_, d) in enumerate(rows):
            v = np.asarray(d.values)
            self.dist[r, : v.size] = np.log((v.max() - v + K) / K)
            self.matched[r] = float(v[d.played] == v.max())
        self.tops = (self.dist == 0.0).sum(axis=1)
        self.n = len(units)

    def p0(self, c: np.ndarray) -> np.ndarray:
        return self.tops / np.exp(-self.dist * np.maximum(c[self.owner], 0.0)[:, None]).sum(axis=1)

    def sums(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per player-event: observed matches, expected, sampling variance, Σ ∂p0/∂c."""
        cn = np.maximum(c[self.owner], 0.0)
        w = np.exp(-self.dist * cn[:, None])
        total = w.sum(axis=1)
        p = self.tops / total
        a_mean = np.where(np.isfinite(self.dist), np.nan_to_num(self.dist, posinf=0.0) * w, 0.0).sum(axis=1) / total
        f = self.n
        return (np.bincount(self.owner, self.matched, f), np.bincount(self.owner, p, f),
                np.bincount(self.owner, p * (1 - p), f), np.bincount(self.owner, p * a_mean, f))

    def exact_z(self, c: np.ndarray, only: np.ndarray | None = None) -> np.ndarray:
        """Per player-event: the mid-p tail of the matches' exact distribution as a z (what the screener reads); with ``only`` (a mask
        of player-events), those alone (0 for the rest)."""
        p = self.p0(c)
        out = np.zeros(self.n)
        bounds = np.searchsorted(self.owner, np.arange(self.n + 1))  # rows are in player-event order
        for i in range(self.n) if only is None else np.flatnonzero(only):
            mine = slice(bounds[i], bounds[i + 1])
            if bounds[i] == bounds[i + 1]:
                continue
            pb = PoissonBinomial(p[mine])
            z = tail_z(pb.mid_tail(int(self.matched[mine].sum())))
            out[i] = z if math.isfinite(z) else 40.0
        return out


@dataclass
class Strengths:
    """Each player-event's strength: from the tag alone, and with the event's results."""

    prior_mean: np.ndarray
    prior_var: np.ndarray
    post_mean: np.ndarray
    post_var: np.ndarray
    k40: np.ndarray
    junior: np.ndarray


RAPID = [REPO / "bench" / "data" / f"calibration_rapid_d12{x}.jsonl.gz" for x in ("", "_extra", "_extra2")]
"""The rapid championships' exports (part ``rapid``): ``cs.RAPID_FIT_EVENTS`` fit the line's rapid offset, the
other rapid events are held back from it."""
_TAG = __import__("re").compile(r'^\[(\w+) "(.*)"\]\s*$')
POINTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass
class EventGame:
    """One finished game of an event with both sides rated: what the screener's results see of it."""

    white: str  # the player key (FIDE id, else the name)
    black: str
    white_today: float
    black_today: float
    points: float  # White's
    played: datetime.date | None = None  # the game's date


def events_outside() -> list[tuple[Path, str]]:
    """(PGN, event) of the held-back exports of events outside the collection (``calibration_data.export-event``)."""
    import calibration_data as cd
    import fit_quality as fq

    return [source for path in (fq.HELD_BACK_2025,) if path.exists() and (source := cd.event_export(path))]


def _tags(path: Path) -> list[dict[str, str]]:
    """The tags of each game of a PGN file (read line by line: fast)."""
    heads: list[dict[str, str]] = [{}]
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _TAG.match(line)
        if m:
            if m.group(1) == "Event" and heads[-1].get("Event") is not None:
                heads.append({})
            heads[-1][m.group(1)] = m.group(2)
    return heads


def event_games(folder: Path | None = None) -> dict[str, list[EventGame]]:
    """Every finished game with both tags of every event in the calibration files and the 2025 open's PGN, the
    tags on today's scale by each game's date: what a screener watching the event would have seen finish
    (every game, analysed here or not)."""
    import fit_quality as fq

    from livemon.live.pgn import rating_date

    out: dict[str, list[EventGame]] = defaultdict(list)
    outside = dict(events_outside())
    files = sorted((folder or cs.calibration_games()).glob("A*.pgn")) + [fq.OPEN_PGN, *outside]
    for path in files:
        for h in _tags(path):
            pts, we, be = POINTS.get(h.get("Result", "")), h.get("WhiteElo", ""), h.get("BlackElo", "")
            if pts is None or not we.isdigit() or not be.isdigit() or int(we) <= 0 or int(be) <= 0:
                continue
            event = {fq.OPEN_PGN: fq.OPEN_EVENT, **outside}.get(path, h.get("Event", ""))
            played = rating_date(h)[0] if path != fq.OPEN_PGN else datetime.date(2025, 4, 20)
            white, black = ((h.get("White", ""), h.get("Black", "")) if path == fq.OPEN_PGN else
                            (cs.player_key(h, "White"), cs.player_key(h, "Black")))
            out[event].append(EventGame(white, black, float(to_current_scale(int(we), played)),
                                        float(to_current_scale(int(be), played)), pts, played))
    return out


def with_event_results(units: list[PlayerEvent], games: dict[str, list[EventGame]]) -> list[list[tuple[float, float]]]:
    """Each player-event's results over every finished game of its event in the files (the analysed ones are a
    sample): (opponent's rating today, points)."""
    out = []
    for u in units:
        rows = [(g.black_today, g.points) if g.white == u.player else (g.white_today, 1.0 - g.points)
                for g in games.get(u.event, ()) if u.player in (g.white, g.black)]
        out.append(rows if len(rows) >= len(u.games) else u.games)
    return out


def field_evidence(games: dict[str, list[EventGame]]) -> dict[str, list]:
    """Each event's finished games as field-lag evidence (:func:`~livemon.rating.screening.field_game`)."""
    out: dict[str, list] = {}
    for event, gs in games.items():
        junior = junior_event(event)
        out[event] = [f for g in gs if (f := field_game(g.white_today, g.black_today, g.points, junior)) is not None]
    return out


def fit_field_lag_sd(games: dict[str, list[EventGame]], events: set[str]) -> tuple[float, dict[float, float]]:
    """The prior sd of the field lag that makes the ``events``' finished games likeliest, each event's lag
    integrated out on a grid (type-II maximum likelihood; results only, no move): (the sd, log-likelihood by sd)."""
    grid = np.arange(-2000.0, 2500.0, 5.0)
    lls = []
    for event, ev in field_evidence(games).items():
        if event not in events or not ev:
            continue
        d, diff, pts = (np.array([f[i] for f in ev]) for i in range(3))
        e = 1.0 / (1.0 + 10.0 ** ((diff[None, :] - d[None, :] * grid[:, None]) / 400.0))
        lls.append((pts * np.log(e) + (1.0 - pts) * np.log(1.0 - e)).sum(axis=1))

    def marginal(sd: float) -> float:
        prior = -0.5 * (grid / sd) ** 2 - math.log(sd)
        return float(sum(np.logaddexp.reduce(ll + prior) for ll in lls))

    table = {sd: marginal(sd) for sd in (50.0, 100.0, 150.0, 200.0, 250.0, 300.0, 350.0, 400.0, 450.0, 500.0, 600.0)}
    best = scipy.optimize.minimize_scalar(lambda x: -marginal(x), bounds=(25.0, 1000.0), method="bounded")
    return float(best.x), table


def event_lags(games: dict[str, list[EventGame]], sd: float = FIELD_LAG_SD
               ) -> tuple[dict[str, tuple[float, float]], dict[tuple[str, str], list[FieldGame]]]:
    """Each event's field lag and its information (:func:`~livemon.rating.screening.field_lag`: every finished game of
    the event), and each (event, player)'s own games as its evidence (to leave out with
    :func:`~livemon.rating.screening.field_lag_without`)."""
    per_event: dict[str, tuple[float, float]] = {}
    own: dict[tuple[str, str], list[FieldGame]] = defaultdict(list)
    for event, gs in games.items():
        junior = junior_event(event)
        evidence = []
        for g in gs:
            f = field_game(g.white_today, g.black_today, g.points, junior)
            if f is None:
                continue
            evidence.append(f)
            own[(event, g.white)].append(f)
            own[(event, g.black)].append((-f[0], -f[1], 1.0 - f[2]))
        per_event[event] = field_lag(evidence, sd=sd)
    return per_event, own


def field_lags(units: list[PlayerEvent], games: dict[str, list[EventGame]], sd: float = FIELD_LAG_SD) -> np.ndarray:
    """Each player-event's field lag and its sd (:func:`~livemon.rating.screening.field_lag_without`; rows), as
    the screener reads them: what the event's finished games say of how far its likely K = 40 players stand
    above their tags, the player's own games left out; (0, 0) for a tag that is no likely K = 40 one."""
    per_event, own = event_lags(games, sd)
    out = []
    for u in units:
        k40 = tag_prior(u.tag, junior=junior_event(u.event)).k40
        lag = (field_lag_without(*per_event[u.event], own[(u.event, u.player)], sd) if u.event in per_event and k40 > 0.0
               else (0.0, 0.0))
        out.append(lag)
    return np.array(out).reshape(-1, 2)


def strengths(units: list[PlayerEvent], results: list[list[tuple[float, float]]] | None = None,
              lags: np.ndarray | None = None, mixture: bool = True) -> Strengths:
    """Each player-event's strength: the tag's prior (moved by the field lag when given) and its results (every
    finished game of the event when given, else the analysed ones). ``mixture`` False: the lag moves the prior as
    a fraction k40 of it (variance (k40·lag_sd)², no term for which part the tag is in), for comparison with the
    shipped :func:`~livemon.rating.screening.moved_by_field`."""
    results = results if results is not None else [u.games for u in units]
    lags = lags if lags is not None else np.zeros((len(units), 2))
    tags = [tag_prior(u.tag, junior=junior_event(u.event)) for u in units]  # z_tag: the tag alone
    pri = [tag_prior(u.tag, junior=junior_event(u.event), lag=float(lag), lag_sd=float(sd)) if mixture else
           StrengthPrior(t.mean + t.k40 * float(lag), math.hypot(t.sd, t.k40 * float(sd)), t.k40)
           for u, t, (lag, sd) in zip(units, tags, lags)]
    post = [results_strength(p.mean, p.sd, r) for p, r in zip(pri, results)]
    return Strengths(np.array([p.mean for p in tags]), np.array([p.sd ** 2 for p in tags]),
                     np.array([m for m, _ in post]), np.array([s ** 2 for _, s in post]),
                     np.array([p.k40 for p in pri]), np.array([junior_event(u.event) for u in units]))


def z_of(pk: Packed, a: float, b: float, tau: float, mean: np.ndarray, var: np.ndarray,
         exact: bool = False, g: float = 0.0, gap: np.ndarray | None = None, only: np.ndarray | None = None,
         era: float = 0.0, before: np.ndarray | None = None, h: float = 0.0) -> np.ndarray:
    """Each player-event's z at c = a + era·before + b·mean + g·gap + h·max(0, KNEE − mean) (gap: the opponents'
    mean less the strength; before: played before 1 March 2024), widened by the strength's variance through
    ∂c/∂strength (b − g, less h below the knee) and by tau."""
    gap = np.zeros(pk.n) if gap is None else gap
    below = np.maximum(KNEE - mean, 0.0)
    c = a + b * mean + g * gap + h * below + (0.0 if before is None else era * before)
    m, e, v, d = pk.sums(c)
    slope = b - g - h * (below > 0.0)
    widen = np.sqrt(v / (v + d * d * (slope ** 2 * var + tau * tau)))
    base = pk.exact_z(c, only) if exact else (m - e) / np.sqrt(v)
    return base * widen


Line = tuple[float, float, float, float, float, float]
"""(a, b, tau, g, era, h) of :class:`~livemon.rating.screening.ScreeningLine`."""


def fit_line(pk: Packed, sel: np.ndarray, mean: np.ndarray, var: np.ndarray, gap: np.ndarray | None = None,
             before: np.ndarray | None = None, hinge: bool = False) -> Line:
    """(a, b, tau, g, era, h) giving the selected players' z's mean 0, no trend with strength, variance 1 and, with
    ``gap`` (the opponents' mean less the strength), no trend with the gap (g = 0 without it); with ``before``
    (played before 1 March 2024) and players of both eras selected, mean 0 in each era (era = 0 otherwise: a
    selection of one era cannot tell it); with ``hinge``, no trend with the strength below :data:`KNEE` either
    (h = 0 otherwise)."""
    r0 = float(mean[sel].mean())
    below = np.maximum(KNEE - mean[sel], 0.0)
    eras = before is not None and 0 < int(before[sel].sum()) < int(sel.sum())
    pre = before[sel] if eras and before is not None else None

    def eqs(th: np.ndarray) -> list[float]:
        g = th[3] / 1000.0 if gap is not None else 0.0
        era = th[4 if gap is not None else 3] if eras else 0.0
        h = th[-1] / 1000.0 if hinge else 0.0
        z = z_of(pk, th[0], th[1] / 1000.0, abs(th[2]), mean, var, g=g, gap=gap, era=era, before=before, h=h)[sel]
        out = [float(z.mean()), float((z * (mean[sel] - r0) / 400.0).mean()), float(z.var() - 1.0)]
        if gap is not None:
            out.append(float((z * gap[sel] / 400.0).mean()))
        if pre is not None:
            out.append(float(z[pre].mean()))
        if hinge:
            out.append(float((z * below / 400.0).mean()))
        return out

    th = scipy.optimize.fsolve(eqs, [-0.5, 0.58, 0.05] + ([0.0] if gap is not None else []) + ([0.0] if eras else [])
                               + ([0.0] if hinge else []))
    return (float(th[0]), float(th[1] / 1000.0), abs(float(th[2])), float(th[3] / 1000.0) if gap is not None else 0.0,
            float(th[4 if gap is not None else 3]) if eras else 0.0, float(th[-1] / 1000.0) if hinge else 0.0)


def opponents_gap(units: list[PlayerEvent], results: list[list[tuple[float, float]]], mean: np.ndarray) -> np.ndarray:
    """Each player-event's opponents' mean rating (today's scale, the event's finished games) less its strength;
    0 without a rated opponent."""
    opp = np.array([np.mean([o for o, _ in r]) if r else np.nan for r in results])
    return np.where(np.isfinite(opp), opp - mean, 0.0)


def figures(z: np.ndarray, sel: np.ndarray, alert_ok: np.ndarray | None = None) -> dict[str, object]:
    zz = z[sel]
    if not len(zz):
        return {"n": 0}
    alerts = (zz >= ALERT_Z) & (alert_ok[sel] if alert_ok is not None else True)
    return {"n": int(len(zz)), "mean": float(zz.mean()), "sd": float(zz.std(ddof=1)) if len(zz) > 1 else None,
            "notices": int((zz >= NOTICE_Z).sum()), "alerts": int(alerts.sum()),
            "notices_by_chance": expected_by_chance(len(zz), NOTICE_Z),
            "alerts_by_chance": expected_by_chance(len(zz), ALERT_Z)}


LAGGED = "field lag moved the prior 80+ up"
HELD_BACK_SETS = {"held-back set 1 (4 events)": cs.FIRST_TEST_EVENTS, "held-back set 2 (6 round robins)": cs.HELD_BACK_2,
                  "held-back set 3 (team ch., juniors)": cs.HELD_BACK_3,
                  "held-back 2025 round robin": cs.HELD_BACK_2025}
"""The held-back sets of ``bench/calibration_split.py``, each a row of the held-back tables."""


def groups(units: list[PlayerEvent], st: Strengths, results: list[list[tuple[float, float]]],
           lags: np.ndarray | None = None) -> dict[str, np.ndarray]:
    tag = np.array([u.tag for u in units])
    tpr_gap = np.array([(np.mean([o for o, _ in r]) + 400.0 * (2 * np.mean([p for _, p in r]) - 1)
                         - u.tag) if len(r) >= 3 else -np.inf for u, r in zip(units, results)])
    out = {name: (tag >= lo) & (tag < hi) for lo, hi, name in BANDS}
    out["junior event"] = st.junior
    out["likely K = 40 (chance >= 0.5)"] = st.k40 >= 0.5
    out["results 200+ above the tag (3+ games)"] = tpr_gap >= 200.0
    if lags is not None:  # the players of a lagging field: how far their prior moved (k40 times the lag)
        out[LAGGED] = st.k40 * lags[:, 0] >= 80.0
    event = np.array([u.event for u in units])
    held = np.array([u.part == "test" for u in units])  # (a set's events may hold a few fit games' players)
    for name, events in HELD_BACK_SETS.items():  # empty outside the held-back part: not printed there
        out[name] = held & np.isin(event, list(events))
    out["all"] = np.ones(len(units), dtype=bool)
    return out


def power(seed: int = 9, players: int = 120, above: float = 0.0) -> list[tuple[int, float, float, float]]:
    """Simulated engine users: (tag, q, share alerted, share noticed) with the shipped line and strength model.

    Each takes the engine's best move with probability q, else moves as E(c) at their (settled) tag, over
    9 games of 30 screened positions (2-5 candidates, losses exponential with mean 0.5 pawn), against opponents
    rated ``above`` points above the tag (0: equals; a winner paired up in a Swiss meets stronger ones), scoring
    6/9 against them (5/9 at q = 0.1): the screener's z (mid-p tail, widened) and z_tag, as the screener reads
    them.
    """
    from livemon.rating.agent import move_probabilities
    from livemon.rating.screening import position_expectation, widened_z
    from livemon.rating.screening_params import SHIPPED as line

    rng = np.random.default_rng(seed)
    out = []
    for tag in (1600, 2000, 2400):
        opp = float(tag) + above
        for q in (0.1, 0.2, 0.35):
            alerted = noticed = 0
            for _ in range(players):
                prior = tag_prior(float(tag))
                decisions = []
                for _ in range(270):
                    k = int(rng.integers(2, 6))
                    v = tuple(np.concatenate(([0.0], -np.sort(rng.exponential(0.5, k - 1)))).round(2))
                    played = 0 if rng.random() < q else int(rng.choice(k, p=move_probabilities(v, line.c_for(tag, opp))))
                    decisions.append(Decision(v, played))
                wins = 6 if q >= 0.2 else 5
                mu, sd = results_strength(prior.mean, prior.sd, [(opp, 1.0)] * wins + [(opp, 0.0)] * (9 - wins))
                es = [position_expectation(d, line.c_for(mu, opp)) for d in decisions]
                matches = sum(d.values[d.played] == max(d.values) for d in decisions)
                z_exact = tail_z(PoissonBinomial(e.p0 for e in es).mid_tail(matches))
                var = sum(e.p0 * (1 - e.p0) for e in es)
                dsum = sum(e.dp0 for e in es)
                z = widened_z(40.0 if math.isinf(z_exact) else z_exact, var, dsum, line.slope_at(mu), sd * sd, line.tau)
                shift = dsum * (line.c_for(prior.mean, opp) - line.c_for(mu, opp))
                z_tag = (matches - sum(e.p0 for e in es) - shift) / math.sqrt(
                    var + dsum * dsum * (line.slope_at(prior.mean) ** 2 * prior.sd ** 2 + line.tau ** 2))
                alerted += z >= ALERT_Z and z_tag >= ALERT_Z
                noticed += z >= NOTICE_Z
            out.append((tag, q, alerted / players, noticed / players))
    return out


def rapid_report(pk: Packed, units: list[PlayerEvent], every: list[list[tuple[float, float]]], st: Strengths,
                 line: Line, before: np.ndarray, n: np.ndarray) -> dict[str, object]:
    """The line's ``rapid`` offset, fitted so that the players of ``cs.RAPID_FIT_EVENTS`` (20+ positions) read z
    mean 0 against the shipped line shifted by it, and the rapid players' figures by band with and without it: the
    fit events' (in-sample for the one offset) and the held-back rapid events' (never fitted)."""
    event = np.array([u.event for u in units])
    rapid = np.array([u.part == "rapid" for u in units])
    fitted = rapid & np.isin(event, cs.RAPID_FIT_EVENTS)
    held = rapid & ~fitted
    gap = opponents_gap(units, every, st.post_mean)
    gap_tag = opponents_gap(units, every, st.prior_mean)
    a, b, tau, g, e, h = line

    def z(offset: float, mine: np.ndarray, tag: bool = False) -> np.ndarray:
        mean, var, gp = (st.prior_mean, st.prior_var, gap_tag) if tag else (st.post_mean, st.post_var, gap)
        out = np.full(pk.n, np.nan)
        out[mine] = z_of(pk, a + offset, b, tau, mean, var, True, g, gp, mine, e, before, h)[mine]
        return out

    sel = fitted & (n >= MIN_FIT_POSITIONS)
    offset = 0.0
    if sel.sum() >= 5:
        offset = float(scipy.optimize.brentq(lambda x: float(np.nanmean(z(x, sel)[sel])), -0.5, 0.5, xtol=1e-6))
    tags = np.array([u.tag for u in units])
    bands = {"all": np.ones(pk.n, bool), "<1800": tags < 1800, "1800-2200": (tags >= 1800) & (tags < 2200),
             "2200+": tags >= 2200}
    out: dict[str, object] = {"offset": offset, "fit_events": list(cs.RAPID_FIT_EVENTS),
                              "held_back": sorted(set(event[held]))}
    mine = rapid & (n >= 20)
    for name, o in (("without", 0.0), ("with", offset)):
        za, zt = z(o, mine), z(o, mine, tag=True)
        out[name] = {where: {band: figures(za, part_sel & bsel & mine, zt >= ALERT_Z) for band, bsel in bands.items()}
                     for where, part_sel in (("fit", fitted), ("held back", held))}
    return out


def field_step_effect(pk: Packed, units: list[PlayerEvent], every: list[list[tuple[float, float]]], lags: np.ndarray,
                      step: float, min_positions: int = 20) -> str:
    """How far z moves (the shipped line) when each likely K = 40 player-event's strength moves by ``step`` points:
    an upper bound on how far a live row trails the exact field lag (the lag moves the prior by at most ``step``
    before a re-score, and the strength by no more than the prior)."""
    from livemon.rating.screening_params import SHIPPED as line

    st = strengths(units, every, lags)
    before = np.array([u.before for u in units])
    n = np.bincount(pk.owner, minlength=pk.n)
    sel = (st.k40 > 0.0) & (n >= min_positions)

    def z(mean: np.ndarray) -> np.ndarray:
        return z_of(pk, line.a, line.b, line.tau, mean, st.post_var, False, line.g, opponents_gap(units, every, mean),
                    None, line.era, before, line.h)

    dz = np.abs(z(st.post_mean + step * (st.k40 > 0.0)) - z(st.post_mean))[sel]
    return (f"strength moved {step:g} points, {int(sel.sum())} likely K = 40 player-events of {min_positions}+ "
            f"positions: |dz| mean {dz.mean():.3f}, p95 {np.quantile(dz, 0.95):.3f}, max {dz.max():.3f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=Path, default=None,
                   help="the calibration collection's folder (default $LIVEMON_CALIBRATION_GAMES)")
    p.add_argument("--cache", type=Path, default=None, help="keep the loaded player-events here (a pickle)")
    p.add_argument("--write", action="store_true", help="write livemon/rating/screening_params.py")
    p.add_argument("--json", action="store_true")
    p.add_argument("--power", action="store_true", help="only the simulated engine users (no data needed)")
    p.add_argument("--field-step", type=float, default=None, metavar="POINTS",
                   help="only how far z moves when a likely K = 40 player's strength moves by POINTS (the live "
                        "screener's FIELD_STEP: how far a row may trail the exact field lag), with the shipped line")
    args = p.parse_args(argv)
    import fit_quality as fq
    t0 = time.perf_counter()
    if args.power:
        for above in (0.0, 400.0):
            for tag, q, alerted, noticed in power(above=above):
                print(f"tag {tag}, opponents {above:+.0f}, engine's move with probability {q}: alerted {alerted:.0%}, "
                      f"noticed {noticed:.0%}")
        return 0
    if args.cache is not None and args.cache.exists():
        units = [PlayerEvent(**u) for u in pickle.loads(args.cache.read_bytes())]
    else:
        if args.games is not None:
            os.environ["LIVEMON_CALIBRATION_GAMES"] = str(args.games)
        units = load()
        if args.cache is not None:
            args.cache.write_bytes(pickle.dumps([u.__dict__ for u in units]))
    if RAPID[0].exists() and not any(u.part == "rapid" for u in units):
        units += load(rapid_only=True)
    units = [u for u in units if u.decisions]
    pk = Packed(units)
    n = np.bincount(pk.owner, minlength=pk.n)
    part = np.array([u.part for u in units])
    event = np.array([u.event for u in units])
    fit = part == "fit"
    games = event_games(args.games)
    every = with_event_results(units, games)
    if args.field_step is not None:
        print(field_step_effect(pk, units, every, field_lags(units, games), args.field_step))
        return 0
    fitted_sd, sd_table = fit_field_lag_sd(games, set(event[fit]))

    # before: the shipped map, tags as read, z / z_scale
    from livemon.rating.calibration import ProfileCalibration
    from livemon.io.store import SHIPPED_CALIBRATIONS

    shipped = ProfileCalibration.from_dict(json.loads(SHIPPED_CALIBRATIONS.read_text(encoding="utf-8"))[PROFILE])
    cal = shipped.c_map
    assert cal is not None
    read = np.array([u.tag_read for u in units])
    z_before = z_of(pk, cal.a, cal.b, 0.0, read, np.zeros(pk.n), exact=True) / (cal.z_scale or 1.0)

    # the strength model: leave one fit event out; the held-back events (and the rapid ones) with the fit on every
    # fit event
    trainable = n >= MIN_FIT_POSITIONS
    unseen = part != "fit"

    before = np.array([u.before for u in units])

    def screened(lag_sd: float, opponents: bool, mixture: bool = True, without: str | None = None, era: bool = True,
                 hinge: bool = False) -> tuple[np.ndarray, np.ndarray, Line, dict, Strengths, np.ndarray]:
        """z of every player-event under one reading; ``without``: an event no line is fitted on (scored
        like the held-back ones, with the line of every other fit event); ``era``: with the era term; ``hinge``:
        with the bend below :data:`KNEE`."""
        eras = before if era else None
        lags = field_lags(units, games, lag_sd)
        st = strengths(units, every, lags, mixture)
        gap = opponents_gap(units, every, st.post_mean) if opponents else None
        gap_tag = opponents_gap(units, every, st.prior_mean) if opponents else None
        z_after = np.full(pk.n, np.nan)
        z_tag = np.full(pk.n, np.nan)
        lines = {}

        def score(line: Line, mine: np.ndarray) -> None:
            a, b, tau, g, e, h = line
            z_after[mine] = z_of(pk, a, b, tau, st.post_mean, st.post_var, True, g, gap, mine, e, eras, h)[mine]
            z_tag[mine] = z_of(pk, a, b, tau, st.prior_mean, st.prior_var, True, g, gap_tag, mine, e, eras, h)[mine]

        fitted = fit & (event != without)
        for ev in sorted(set(event[fitted])):
            lines[ev] = fit_line(pk, fitted & trainable & (event != ev), st.post_mean, st.post_var, gap, eras, hinge)
            score(lines[ev], event == ev)
        whole = fit_line(pk, fitted & trainable, st.post_mean, st.post_var, gap, eras, hinge)
        score(whole, unseen | ~fitted)
        return z_after, z_tag, whole, lines, st, lags

    readings = {"previous": (150.0, False, True, None, False),
                "field lag sd fitted only": (FIELD_LAG_SD, False, True, None, False),
                "opponents term only": (150.0, True, True, None, False),
                "lag as a fraction": (FIELD_LAG_SD, True, False, None, False),
                "no era term": (FIELD_LAG_SD, True, True, None, False, True),
                "straight (no bend below 1800)": (FIELD_LAG_SD, True, True),
                "shipped": (FIELD_LAG_SD, True, True, None, True, True),
                "the line without the 2025 open": (FIELD_LAG_SD, True, True, fq.OPEN_EVENT, False, True)}
    results = {name: screened(*spec) for name, spec in readings.items()}
    z_now, z_tag_now = results["previous"][:2]
    z_after, z_tag, shipped_line, lines, st, lags = results["shipped"]
    alert_ok = z_tag >= ALERT_Z
    alert_ok_now = z_tag_now >= ALERT_Z
    test = part == "test"

    def span(i: int) -> list[float]:
        return [min(v[i] for v in lines.values()), max(v[i] for v in lines.values())]

    report: dict[str, object] = {"player_events": pk.n, "fit_events": len(set(event[fit])),
                                 "held_back": sorted(set(event[test])),
                                 "field_lag_sd": {"shipped": FIELD_LAG_SD, "fitted": fitted_sd,
                                                  "log_likelihood": sd_table},
                                 "line": dict(zip(("a", "b", "tau", "g", "era", "h"), shipped_line)),
                                 "loeo_lines": {k: span(i) for i, k in enumerate(("a", "b", "tau", "g", "era", "h"))}}
    gs = groups(units, st, every, lags)
    applied = st.post_mean * 0.0 + st.k40 * lags[:, 0]  # the lag each player's prior moved by
    report["field_lag"] = {ev: [float(applied[event == ev].min()), float(applied[event == ev].max())]
                           for ev in sorted(set(event)) if np.abs(applied[event == ev]).max() >= 1.0}
    report["alternatives"] = {
        name: {where: {band: figures(z, sel_part & gs[band] & (n >= 20), z_t >= ALERT_Z)
                       for band in ("all", "<1800", "1800-2200", "2200+", LAGGED)}
               for where, sel_part in (("fit events, left out one at a time", fit), ("held back", test),
                                       ("rapid, read with the classical line", part == "rapid"))}
        for name, (z, z_t, *_) in results.items()}
    for min_n in (60, 20):
        for where, sel_part in (("fit events, left out one at a time", fit), ("held back", test),
                                ("rapid, read with the classical line", part == "rapid")):
            if not sel_part.any():
                continue
            for name, g in gs.items():
                sel = sel_part & g & (n >= min_n)
                report.setdefault(f">= {min_n} positions", {}).setdefault(where, {})[name] = {  # type: ignore[union-attr]
                    "before": figures(z_before, sel), "now": figures(z_now, sel, alert_ok_now),
                    "after": figures(z_after, sel, alert_ok)}
    held_events = set(event[test])
    z_one_line = results["no era term"][0]
    report["by_event"] = {  # the shipped reading, 20+ positions: each event's players, held back or left out
        ev: {"where": "held back" if ev in held_events else "left out",
             **figures(z_after, mine := (event == ev) & (test if ev in held_events else fit) & (n >= 20), alert_ok),
             "mean_without_the_era": float(z_one_line[mine].mean()) if mine.any() else None}
        for ev in sorted(set(event[fit | test]))}
    year = np.array([u.year or 0 for u in units])
    # the era: each year's players, 20+ positions, read by a line that never saw their event and knows its era (a fit
    # event left out whose other fit events are of one era is read by a line without the era term: left out here)
    eraless = np.isin(event, [ev for ev, ln in lines.items() if ln[4] == 0.0])
    report["by_year"] = {
        int(y): figures(z_after, (year == y) & (fit | test) & (n >= 20) & ~eraless, alert_ok)
        for y in sorted(set(year[(fit | test) & ~eraless])) if y}
    report["read_without_the_era"] = sorted(set(event[eraless]))
    report["rapid"] = rapid_report(pk, units, every, st, shipped_line, before, n)
    report["seconds"], report["load"] = time.perf_counter() - t0, os.getloadavg()[0]
    if args.write:
        a, b, tau, g, era, h = shipped_line
        rapid = report["rapid"]["offset"]  # type: ignore[index]
        by_year = {y: (f["n"], round(f["mean"], 3)) for y, f in report["by_year"].items()}  # type: ignore[union-attr]
        PARAMS.write_text(
            '"""The screening line on today\'s FIDE scale, fitted by ``bench/screening_honest.py`` (do not edit).\n\n'
            f"Fitted on the honest player-events of the fit events ({int((fit & trainable).sum())} with "
            f"{MIN_FIT_POSITIONS}+ screened positions);\nthe held-back events of ``bench/calibration_split.py`` "
            'never entered it.\n"""\n\nfrom livemon.rating.screening import ScreeningLine\n\n'
            f"SHIPPED = ScreeningLine(a={a!r}, b={b!r}, tau={tau!r}, g={g!r},\n"
            f"                        era={era!r}, h={h!r}, knee={KNEE!r}, rapid={rapid!r},\n"
            f"                        profile={PROFILE!r}, book_moves={BOOK_MOVES}, eval_bound={EVAL_BOUND})\n\n"
            f"FIT_EVENTS = {report['fit_events']}\n"
            '"""The events the line was fitted on."""\n\n'
            f"BY_YEAR = {by_year!r}\n"
            '"""Year -> (honest player-events with 20+ screened positions, their mean z), each read by a line that never\n'
            'saw its event and knows its era (a fit event by the line fitted without it, a held-back one by the shipped\n'
            'line; a fit event whose other fit events are all of one era is left out: its line has no era term): the era\n'
            'that ``livemon analyse --screen`` puts under its table (:func:`livemon.rating.screening.era_line`)."""\n',
            encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    ln = report["line"]
    print(f"{pk.n} player-events; held back: {', '.join(report['held_back'])}")  # type: ignore[arg-type]
    print(f"line (fit events): c = {ln['a']:.4f} + {ln['b'] * 1000:.5f}/1000 * strength + "  # type: ignore[index]
          f"{ln['g'] * 1000:.5f}/1000 * (opponents - strength) + {ln['h'] * 1000:.5f}/1000 * max(0, {KNEE:.0f} - "  # type: ignore[index]
          f"strength) + {ln['era']:.4f} before 1 March 2024, tau {ln['tau']:.4f}")  # type: ignore[index]
    fl = report["field_lag_sd"]
    print(f"field lag prior sd: {fl['shipped']:.0f} shipped, {fl['fitted']:.0f} fitted on the fit events' games")  # type: ignore[index]
    for key in (">= 60 positions", ">= 20 positions"):
        for where, rows in report[key].items():  # type: ignore[union-attr]
            print(f"{key}, {where}: z mean / sd, notices (by chance), alerts — tag map -> previous (field lag "
                  "sd 150, no opponents term) -> shipped")
            for name, f in rows.items():
                b, w, a = f["before"], f["now"], f["after"]
                if not b["n"]:
                    continue

                def sd(x: dict) -> str:
                    return f"{x['sd']:.2f}" if x["sd"] is not None else "-"

                print(f"  {name:<38} n={b['n']:<4} {b['mean']:+.2f} / {sd(b)}, {b['notices']} ({b['notices_by_chance']:.1f}), "
                      f"{b['alerts']}  ->  {w['mean']:+.2f} / {sd(w)}, {w['notices']}, {w['alerts']}  ->  "
                      f"{a['mean']:+.2f} / {sd(a)}, {a['notices']}, {a['alerts']}")
    print(">= 20 positions, the alternatives: z mean / sd (n), notices, alerts: all | <1800 | 1800-2200 | 2200+ | "
          f"{LAGGED}")
    for name, parts in report["alternatives"].items():  # type: ignore[union-attr]
        for where, bands in parts.items():
            cells = [f"{f['mean']:+.2f} / {f['sd']:.2f} ({f['n']}), {f['notices']}, {f['alerts']}" if f["n"] > 1 else "-"
                     for f in bands.values()]
            print(f"  {name:<26} {where:<36} " + " | ".join(cells))
    print(">= 20 positions, shipped, each event (held back: the fit on every fit event; else left out): "
          "z mean / sd (n), notices, alerts; the mean with one line for both eras")
    for ev, f in report["by_event"].items():  # type: ignore[union-attr]
        if f["n"]:
            sd_text = f"{f['sd']:.2f}" if f["sd"] is not None else "-"
            print(f"  {ev + ' (' + f['where'] + ')':<56} {f['mean']:+.2f} / {sd_text} ({f['n']}), {f['notices']}, "
                  f"{f['alerts']}; {f['mean_without_the_era']:+.2f}")
    rp = report["rapid"]
    print(f"rapid: the line's offset {rp['offset']:+.4f}, fitted on {', '.join(rp['fit_events'])}; held back: "  # type: ignore[index]
          f"{', '.join(rp['held_back'])}. z mean / sd (n), notices, alerts: all | <1800 | 1800-2200 | 2200+")  # type: ignore[index]
    for name in ("without", "with"):
        for where, bands in rp[name].items():  # type: ignore[index]
            cells = [f"{f['mean']:+.2f} / {f['sd']:.2f} ({f['n']}), {f['notices']}, {f['alerts']}" if f["n"] > 1 else "-"
                     for f in bands.values()]
            print(f"  {name + ' the offset':<20} {where:<10} " + " | ".join(cells))
    print(f"({report['seconds']:.0f} s, load {report['load']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
