"""Fair-play screening per player per event, move by move — sans I/O (docs/models.md §3).

The :class:`Screener` sits beside the :class:`~livemon.live.estimator.Estimator`
and is fed the same :class:`~livemon.live.plies.ScoredPly` records, by the
live monitor as plies are scored and by ``analyse --screen`` over finished
games, so a replayed event and a batch run give the same numbers.

Per (player, event) it keeps every screened position with its E(c) decision,
and the numbers of :mod:`livemon.rating.screening` against E(c_r):

* **today's strength**: r = the player's rating tag in that event's games put
  on today's FIDE scale with the game's date (:func:`~livemon.rating.scale.to_current_scale`;
  a game without a date is read as on today's scale, and the row says so), else
  the TTT posterior mean with at least ``min_ttt_games`` games behind it
  (:meth:`Screener.set_fallback_ratings`), else none: the player's positions
  wait, unscored ("no rating"). r is a prior on today's strength
  (:func:`~livemon.rating.screening.tag_prior`: the rating's own noise for its
  K, and for a likely K = 40 rating — a junior event, :meth:`Screener.set_juniors`,
  or a low rating — the lag behind an improving player), moved by the event's
  **field lag** for a likely K = 40 tag (:func:`~livemon.rating.screening.field_lag`:
  how far the event's other finished games put its likely K = 40 players above
  their tags; :func:`~livemon.rating.screening.moved_by_field`: its mean by the
  chance of K = 40 times the lag, its variance by the two-part mixture's); the player's finished games against rated opponents
  (:meth:`Screener.set_result`) move it
  (:func:`~livemon.rating.screening.results_strength`): strength ± sd.
* **c_r** = the line's c at that strength against the mean rating of the
  player's opponents in the event (honest players match the engine more
  against stronger opponents), clipped at 0: the shipped line
  (:mod:`livemon.rating.screening_params`, fitted on today's scale with this
  strength model) for its profile and exclusions, else the calibration's c map.
  When the strength changes, every position of that player-event is re-scored at
  the new c_r (exact, not an adjustment).
* **exclusions**, counted by reason: ``forced`` (one legal move),
  ``book`` (the first ``book_moves`` moves of each side, or a position found
  in the Polyglot ``book``), ``decided`` (best value beyond ±``eval_bound``
  pawns: :func:`~livemon.rating.screening.screening_exclusion`, the rule the
  calibration uses too) and ``no_multipv`` (no E(c) decision: the ply was
  valued from a ``[%eval]`` comment or the engine gave up).
* **z_match** is the mid-p upper tail of the *exact* (Poisson-binomial)
  number of matches, p = P(M > observed) + ½·P(M = observed), turned into the
  equivalent normal z = Φ⁻¹(1 − p): the exact distribution keeps the tail's
  skew at 60 positions, where the normal approximation is poor, and the half
  point mass keeps a discrete count from reading low (P(M ≥ observed) gives
  honest players a mean z of −0.24 at 20 positions); ``z_match_normal`` is the plain
  (observed − expected)/sd. **z_loss** uses the normal approximation of the
  average loss. Each z is then widened for what the expectation does not know
  (:func:`~livemon.rating.screening.widened_z`): the strength's sd and the
  players' own scatter of c (the line's tau), through Σ ∂p0/∂c. **z_tag** is the
  match z against the tag alone (no results, first order in c). With a
  calibration's own c map (not the shipped line) there is no tau, and its
  dispersion factor ``z_scale`` (on the
  :class:`~livemon.rating.calibration.ProfileCalibration` or its ``c_map``;
  default 1.0) divides every z.
* **IPR**: Regan's intrinsic performance rating, the strength whose E(c)
  expects the matches played, with its 95% interval, to first order in c
  around the c compared at, read back on the line (:func:`first_order_ipr`; the exact solution is
  :func:`~livemon.rating.screening.intrinsic_rating`).
* **levels**: ``notice`` at z ≥ notice_z, ``alert`` at z ≥ alert_z (the z of
  the configured statistic) and z_tag ≥ alert_z too, only with ≥ min_positions
  positions. Each level
  is raised **once per player per event, ever**: a z that falls back and
  crosses again raises nothing new (the arbiters have the first alert and the
  screening table shows the current z); :meth:`Screener.mark_raised` restores
  what a store says was raised, so a restart raises nothing twice.

Without a calibration (no Elo → c map) for the engine profile the screener is
off (:attr:`Screener.enabled` False, :attr:`Screener.off_reason` says why) and
ignores everything.

>>> from livemon.config import ScreeningConfig
>>> from livemon.live.messages import GameInfo
>>> from livemon.rating.agent import Decision
>>> from livemon.rating.calibration import Calibration, ProfileCalibration
>>> cal = ProfileCalibration("sf", 3000.0, Calibration(a=-1.0, b=0.001, n=20, elo_min=1800, elo_max=2700, r2=0.5, residual_sd=0.2))
>>> scr = Screener(ScreeningConfig(min_positions=20, book_moves=0), cal)
>>> _ = scr.add_game(GameInfo("g", white="A", black="B", white_elo=2000, black_elo=2000, event="Open"))
>>> for ply in range(1, 81):
...     _ = scr.add_ply(ScoredPly("g", ply, 0, 0, Decision((0.0, -0.4, -1.0), played=0), uci="e2e4", san="e4"))
>>> row = scr.numbers(("A", "Open"))
>>> row.positions, round(row.strength), round(row.strength_sd), row.matches_observed  # a 2000 may be a K = 40 rating
(40, 2000, 41, 40)
>>> round(row.c_r, 3), round(row.matches_expected, 1)
(1.0, 31.0)
>>> round(row.z_match_normal, 2), round(row.z_match, 2), row.level  # the mid-p tail, widened by the strength's sd
(3.34, 4.05, 'notice')
>>> [a.level for a in scr.new_alerts(("A", "Open"))], scr.new_alerts(("A", "Open"))
(['notice'], [])
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from livemon.config import ScreeningConfig
from livemon.live.estimator import Estimator
from livemon.live.plies import PlyLog, ScoredPly
from livemon.live.messages import GameInfo, ScreeningNumbers
from livemon.live.pgn import rating_date
from livemon.rating.agent import Decision
from livemon.rating.calibration import ProfileCalibration
from livemon.rating.scale import FIRST_LIST, to_current_scale
from livemon.rating.timecontrol import CATEGORIES, Category, tag_reading
from livemon.rating.screening import (
    TTT_SD,
    PoissonBinomial,
    PositionExpectation,
    ScreeningLine,
    StrengthPrior,
    chance_line,
    expected_by_chance,
    FieldGame,
    field_game,
    field_lag,
    field_lag_without,
    junior_event,
    moved_by_field,
    position_expectation,
    exact,
    exact_sum,
    expectation_columns,
    EXACT_SCALE,
    results_strength,
    screening_exclusion,
    stats_from_sums,
    tag_prior,
    tail_z,
    widened_z,
)
from livemon.rating.screening_params import SHIPPED


PosKey = int
"""A position's game seq and ply in one int (:func:`_pos`): the order of a player's positions, as in the
estimator (an int, not a tuple: 24 bytes less a live ply; a game's plies below 2**20)."""
_PLY_BITS = 20


def _pos(seq: int, ply: int) -> PosKey:
    """The key of ply ``ply`` of the game seen ``seq``-th; keys sort as ``(seq, ply)`` do.

    >>> _pos(3, 41) > _pos(3, 40) and _pos(4, 1) > _pos(3, 999), _pos(3, 41) >> _PLY_BITS, _pos(3, 41) & _PLY_MASK
    (True, 3, 41)
    """
    return seq << _PLY_BITS | ply


_PLY_MASK = (1 << _PLY_BITS) - 1
TrackKey = tuple[str, str]
"""(player, event): the scope of screening and alerts."""
LEVELS = ("notice", "alert")
EXCLUSIONS = ("forced", "book", "decided", "no_multipv")
TOP_MOVES = 5
FIELD_STEP = 10.0
"""Points the field lag of a likely K = 40 player must move before their positions are re-scored at it (every
finished game of the event moves it a little; each re-score is all the player's positions). Moving a strength by
10 points moves z by at most 0.055 (0.029 on average) on the calibration set's likely K = 40 player-events, so no
row trails the exact lag by more; at a step of 2 the round bench's event (250 boards at 40×) spent about 30% of
the monitor's work re-scoring (docs/fairplay.md)."""


GamesContext = tuple[float | None, datetime.date | None, tuple[Category, str, str]]
"""(the opponents' mean rating, the first game's date, (time control, where read, note)): what a player-event's
games say of the play it is compared with (:meth:`Screener._games_context`)."""


def _games_context_of(track: _Track) -> GamesContext:
    return track.opponents, track.played, (track.time_control, track.time_control_source, track.time_control_note)


@functools.lru_cache(maxsize=1024)
def _day(date: str) -> datetime.date | None:
    """A game's Date tag read as :func:`~livemon.live.pgn.rating_date` reads it (kept: a player-event's every game's
    date is read again at each of its games)."""
    return rating_date({"Date": date})[0]


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class ScreeningAlert:
    """A level crossed for the first time, with the numbers it was raised on and the moves behind it."""

    level: str
    threshold: float
    numbers: ScreeningNumbers
    top_moves: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _PackedGame:
    """One game's positions of one track, packed (:meth:`Screener.pack`): a ply and a float or a byte each,
    not a dict entry and a tuple key (memory per ply). A correction unpacks it (:meth:`unpacked`).

    >>> from livemon.rating.agent import Decision
    >>> plies = PlyLog()
    >>> for p in range(1, 6):
    ...     plies.add(ScoredPly("g", p, 0, 0, Decision((0.0, -1.0), played=0)))
    >>> rec = _PackedGame.merged(None, plies, [1, 3], [0.5, 0.25], [(5, "forced")])
    >>> rec = _PackedGame.merged(rec, plies, [], [], [(2, "book")])
    >>> used, p0, excluded = rec.unpacked(0)
    >>> [k for k, _ in used], p0, excluded
    ([1, 3], [(1, 0.5), (3, 0.25)], [(5, 'forced'), (2, 'book')])
    """

    plies: PlyLog  # the game's scored plies (the estimator's log: nothing copied; read wherever they are kept)
    used: array[int]  # the plies used, in order
    p0: array[float]  # each one's P(a top move | c_r); empty without c_r
    excluded: array[int]  # the plies left out
    reasons: bytes  # each one's reason, its index in EXCLUSIONS

    @staticmethod
    def merged(old: _PackedGame | None, plies: PlyLog, used: list[int], p0: list[float] | None,
               left_out: list[tuple[int, str]]) -> _PackedGame:
        """``old`` (or nothing) and more of the game's positions, over the game's scored plies ``plies``
        (``p0`` None: the track's p0 are stale, the record's are made by its next recount)."""
        if old is None:
            return _PackedGame(plies, array("i", used), array("d", p0 or ()), array("i", (p for p, _ in left_out)),
                               bytes(EXCLUSIONS.index(r) for _, r in left_out))
        return _PackedGame(plies, old.used + array("i", used) if used else old.used,  # new arrays: no spare room
                           array("d") if p0 is None else old.p0 + array("d", p0) if p0 else old.p0,
                           old.excluded + array("i", (p for p, _ in left_out)) if left_out else old.excluded,
                           old.reasons + bytes(EXCLUSIONS.index(r) for _, r in left_out))

    def positions(self, seq: int) -> list[tuple[PosKey, ScoredPly]]:
        """The used positions' keys and scored plies (an archived game's read from its archive)."""
        return [(_pos(seq, ply), sp) for ply, sp in self.plies.items(self.used)] if self.used else []

    def unpacked(self, seq: int) -> tuple[list[tuple[PosKey, ScoredPly]], list[tuple[PosKey, float]],
                                          list[tuple[PosKey, str]]]:
        """The entries of ``used``, ``p0`` and ``excluded`` this record stands for."""
        return (self.positions(seq), [(_pos(seq, ply), p) for ply, p in zip(self.used, self.p0)],
                [(_pos(seq, ply), EXCLUSIONS[r]) for ply, r in zip(self.excluded, self.reasons)])


@dataclass
class _Track:
    """One player in one event."""

    player: str
    event: str
    used: dict[PosKey, ScoredPly] = field(default_factory=dict)  # the scored ply itself: nothing copied per position
    p0: dict[PosKey, float] = field(default_factory=dict)  # P(a top move | c_r) of each used position (when c_r)
    excluded: dict[PosKey, str] = field(default_factory=dict)
    rating: float | None = None  # on today's scale
    rating_source: str = "none"
    rating_read: float | None = None  # the tag as printed
    rating_scale: str = "today"
    prior: StrengthPrior | None = None  # what the rating says of today's strength
    strength: tuple[float, float] | None = None  # today's strength with the event's results: (mean, sd)
    strength_from: tuple[float, float, tuple[tuple[float, float], ...]] | None = None
    """The prior's mean and sd and the results ``strength`` is made of: a re-score with the same ones (a game added,
    a tag refreshed to the same rating) takes it as it is, not worked out again."""
    results: dict[str, tuple[float, float]] = field(default_factory=dict)  # game id -> (opponent today, points)
    c_r: float | None = None
    field_lag: float = 0.0  # the field lag in the prior (:func:`~livemon.rating.screening.field_lag`), weighted by k40
    opponents: float | None = None  # the mean rating (today's scale) of the rated opponents of its games
    played: datetime.date | None = None  # its first dated game's day: the line's era
    time_control: Category = "classical"  # the play it is compared with (:meth:`Screener._time_control`)
    time_control_source: str = "assumed"  # "setting", "tag" or "assumed" (no tag said)
    time_control_note: str = ""  # how a tag was read, when it could be read two ways
    dist: PoissonBinomial | None = None  # matches distribution, built in PosKey order
    dist_last: PosKey | None = None
    raised: set[str] = field(default_factory=set)
    sums: list[int] = field(default_factory=lambda: [0] * 8)
    """Exact sums over the used positions' expectations at c_r (fixed point, :func:`~livemon.rating.screening.exact`): matched, p0,
    p0(1-p0), loss, loss mean, loss var, ∂p0/∂c, ∂(loss mean)/∂c. The expectations themselves are not kept (memory per ply):
    :meth:`expectations` makes them again, the same floats, when a correction or an alert needs them."""
    reasons: dict[str, int] = field(default_factory=dict)  # excluded positions by reason
    packed: dict[int, _PackedGame] = field(default_factory=dict)
    """A game's packed positions (game seq -> record): a finished game's all, a live game's settled ones,
    kept out of ``used``, ``p0`` and ``excluded`` (memory per ply) until a correction unpacks them."""
    key: TrackKey = ("", "")  # (player, event): the one tuple every position of the track refers to
    stale: bool = False
    """c_r changed since ``sums`` and ``p0`` were counted: they are counted again, once, when next read
    (:meth:`fresh`), not at each change (a burst's results move a player's strength many times)."""

    def fresh(self) -> None:
        """``sums``, ``p0`` and the packed records' p0 at the current c_r (a recount if it changed since)."""
        if self.stale:
            self.recount()
            self.stale = False

    def count(self, e: PositionExpectation, sign: int) -> None:
        """Add (``sign`` 1) or withdraw (-1) a position's terms to the exact sums."""
        s = self.sums
        s[0] += sign * e.matched
        for i, x in enumerate((e.p0, e.p0 * (1.0 - e.p0), e.loss, e.loss_mean, e.loss_var, e.dp0, e.dloss), 1):
            s[i] += sign * exact(x)

    def decisions(self) -> Iterator[tuple[PosKey, Decision | None]]:
        """Every used position's decision, without making the packed ones' scored plies (a recount reads only
        these)."""
        for key, sp in self.used.items():
            yield key, sp.decision
        for seq, rec in self.packed.items():
            if rec.used:
                base = _pos(seq, 0)
                yield from ((base | ply, d) for ply, d in rec.plies.decisions_at(rec.used))

    def positions(self) -> Iterator[tuple[PosKey, ScoredPly]]:
        """Every used position with its scored ply: the live games' and the packed ones'."""
        yield from self.used.items()
        for seq, rec in self.packed.items():
            yield from rec.positions(seq)

    def position(self, key: PosKey) -> ScoredPly:
        sp = self.used.get(key)
        return sp if sp is not None else self.packed[key >> _PLY_BITS].plies[key & _PLY_MASK]

    def p0_in_order(self) -> tuple[list[float], PosKey | None]:
        """Every used position's P(a top move | c_r) (none without c_r), in position order, and the last one's key."""
        keys, p0 = list(self.p0), list(self.p0.values())
        for seq, rec in self.packed.items():
            base, n = _pos(seq, 0), min(len(rec.used), len(rec.p0))  # no p0 while the track is stale
            keys += [base | ply for ply in rec.used[:n]]
            p0 += rec.p0[:n]
        if not keys:
            return [], None
        order = sorted(range(len(keys)), key=keys.__getitem__)
        return [p0[i] for i in order], keys[order[-1]]

    @property
    def n_used(self) -> int:
        return len(self.used) + sum(len(rec.used) for rec in self.packed.values())

    @property
    def n_p0(self) -> int:
        return len(self.p0) + sum(len(rec.p0) for rec in self.packed.values())

    def expectations(self) -> dict[PosKey, PositionExpectation]:
        """What E(c_r) predicts for each used position (none without c_r)."""
        if self.c_r is None:
            return {}
        c_r = self.c_r
        return {k: position_expectation(d, c_r) for k, d in self.decisions()}  # type: ignore[arg-type]

    def recount(self) -> None:
        """Every position again at the current c_r (:meth:`fresh` calls it when due): their expectations made
        together (:func:`expectation_columns`, the same floats as one at a time), each sum exact as
        :meth:`count` makes it."""
        self.sums = [0] * 8
        items = list(self.decisions()) if self.c_r is not None else []
        if not items:
            self.p0 = {}
            for seq, rec in self.packed.items():
                self.packed[seq] = replace(rec, p0=array("d"))
            return
        cols = expectation_columns([d for _, d in items], self.c_r)  # type: ignore[misc, arg-type]
        p0 = cols.p0.tolist()
        used = len(self.used)  # the used positions come first, then each packed record's, in its order
        self.p0 = {k: p for (k, _), p in zip(items[:used], p0)}
        at = used
        for seq, rec in self.packed.items():
            n = len(rec.used)
            self.packed[seq] = replace(rec, p0=array("d", p0[at:at + n]))
            at += n
        if at != len(items):  # a packed record's position missing from its plies (the p0 would be misplaced)
            raise RuntimeError(f"screener recount: {len(items)} positions read for {at} held")
        self.sums = [int(cols.matched.sum()), *map(exact_sum, (
            cols.p0, cols.p0 * (1.0 - cols.p0), cols.loss, cols.loss_mean, cols.loss_var, cols.dp0, cols.dloss))]


def _rounded(total: int, terms: Callable[[], Iterable[float]]) -> float:
    """The float nearest an exact sum: ``math.fsum`` of the terms, bit for bit (int / int is correctly rounded;
    a zero sum asks fsum itself, for its sign)."""
    return total / EXACT_SCALE if total else math.fsum(terms())


def exclusion_mismatch(cfg: ScreeningConfig, c_map: Any) -> str:
    """Why the calibration's c_r and z_scale may not fit these exclusions ("" when they match or are unknown).

    c_r and z_scale depend on which positions were screened when they were
    fitted: with other ``book_moves`` or ``eval_bound`` the z's drift.
    """
    diffs = []
    for key in ("book_moves", "eval_bound"):
        fitted = getattr(c_map, key, None)
        if fitted is not None and float(fitted) != float(getattr(cfg, key)):
            diffs.append(f"{key} {getattr(cfg, key)} (calibrated with {fitted})")
    return "screening settings differ from the calibration's: " + ", ".join(diffs) if diffs else ""


def first_order_ipr(c_r: float, diff: float, var_matches: float, dsum: float, line: ScreeningLine,
                    opponents: float | None = None) -> tuple[float, tuple[float, float]] | None:
    """Regan's intrinsic performance rating to first order in c around c_r, the c the player was compared at: the c
    whose expected matches equal the observed (``diff`` = observed − expected at c_r, which move by Σ∂p0/∂c
    = ``dsum`` per unit of c), read back as a strength on the ``line`` (bend and all, against ``opponents``), and
    its 95% interval from the matches' sampling sd. O(1) a move, from the sums the screener keeps;
    :func:`~livemon.rating.screening.intrinsic_rating` solves it exactly over the positions.

    >>> line = ScreeningLine(-0.5, 0.0006, 0.05)
    >>> ipr, (lo, hi) = first_order_ipr(line.c_for(2000.0), 6.0, 36.0, 30.0, line)
    >>> round(ipr), round(lo), round(hi)
    (2333, 1680, 2987)
    >>> bent = ScreeningLine(-0.5, 0.0006, 0.05, h=0.0003)  # half the slope below 1800
    >>> round(first_order_ipr(bent.c_for(1700.0), 3.0, 36.0, 30.0, bent)[0])  # 0.1 of c: 0.03 to 1800, 117 beyond
    1917
    """
    if dsum <= 0.0 or var_matches < 0.0 or not line.rises:
        return None
    half = 1.959963984540054 * math.sqrt(var_matches)
    return (line.strength_for(c_r + diff / dsum, opponents),
            (line.strength_for(c_r + (diff - half) / dsum, opponents),
             line.strength_for(c_r + (diff + half) / dsum, opponents)))


def rating_today(info: GameInfo, white: bool) -> tuple[float, float, str] | None:
    """A side's rating on today's FIDE scale, as printed, and the scale it was put on ("today", or "as read"
    when the game has no date); None when unrated.

    A reader that already put the tags on today's scale keeps the printed tag beside them (``white_tag``,
    ``black_tag``) and says on which scale it read them (``rating_scale``): then the rating is taken as it comes,
    else it is put on today's scale here by the game's Date.

    >>> rating_today(GameInfo("g", white_elo=1400, date="2023.05.01"), True)
    (1640.0, 1400.0, 'today')
    >>> rating_today(GameInfo("g", white_elo=1400), True), rating_today(GameInfo("g"), False)
    ((1400.0, 1400.0, 'as read'), None)
    """
    elo = info.white_elo if white else info.black_elo
    if elo is None:
        return None
    tag = info.white_tag if white else info.black_tag
    if tag is not None:  # put on today's scale where the game was read (GameInfo.rating_scale), the tag kept beside
        return float(elo), float(tag), info.rating_scale
    played = rating_date({"Date": info.date})[0]
    if played is None or played < FIRST_LIST:  # no FIDE list of that day: read as on today's scale, and said
        return float(elo), float(elo), "as read"
    return float(to_current_scale(int(elo), played)), float(elo), "today"


def screening_line(cfg: ScreeningConfig, calibration: ProfileCalibration | None) -> ScreeningLine | None:
    """The line c = a + b·strength screening reads: the shipped one (fitted on today's scale with the strength
    model) for its profile and exclusions, else the calibration's own c map (its tags as read, no scatter:
    its ``z_scale`` stands for that), else none (screening off)."""
    c_map = None if calibration is None else calibration.c_map
    if c_map is None or calibration is None:
        return None
    if (calibration.profile == SHIPPED.profile and cfg.book_moves == SHIPPED.book_moves
            and cfg.eval_bound == SHIPPED.eval_bound):
        return SHIPPED
    return ScreeningLine(c_map.a, c_map.b, 0.0, calibration.profile, cfg.book_moves, cfg.eval_bound, scale="as read")


class Screener:
    """Screening of every player in every event; see the module docstring."""

    def __init__(
        self,
        cfg: ScreeningConfig,
        calibration: ProfileCalibration | None,
        in_book: Callable[[int], bool] | None = None,
        profile: str = "",
    ) -> None:
        self.cfg = cfg
        self.calibration = calibration
        self.in_book = in_book
        self.c_map = None if calibration is None else calibration.c_map
        self.enabled = self.c_map is not None
        name = profile or (calibration.profile if calibration is not None else "")
        self.off_reason = "" if self.enabled else f"no Elo-to-c calibration for engine profile {name!r}"
        scale = getattr(calibration, "z_scale", None) or getattr(self.c_map, "z_scale", None) or 1.0
        self.z_scale = float(scale)
        self.line = screening_line(cfg, calibration)
        if self.line is SHIPPED:  # its tau carries the players' own scatter that z_scale stood for
            self.z_scale = 1.0
        self.mismatch = exclusion_mismatch(cfg, self.c_map)
        self.tracks: dict[TrackKey, _Track] = {}
        self._games: dict[str, GameInfo] = {}
        self._points: dict[str, float] = {}  # game id -> White's points, for the games finished
        self._games_of: dict[TrackKey, set[str]] = {}  # a player-event -> its games' ids
        self._seq: dict[str, int] = {}
        self._where: dict[str, dict[int, TrackKey]] = {}  # game id -> ply -> its track (the track's own key)
        self._tags: dict[TrackKey, float] = {}  # on today's scale
        self._tags_read: dict[TrackKey, tuple[float, str]] = {}  # as printed, and the scale it was put on
        self._ids: dict[TrackKey, str] = {}  # the player's FIDE id, where a game's tags gave one
        self._juniors: set[str] = set(cfg.juniors)
        self._field: dict[str, tuple[float, float]] = {}  # event -> its field lag and information (field_lag)
        self._field_games: dict[str, dict[str, FieldGame]] = {}  # event -> game id -> the game as its evidence
        self._fallback: dict[str, float] = {}
        self._raised_before: dict[TrackKey, set[str]] = {}
        self._cut: dict[str, int] = {}  # game id -> its used positions through this ply are packed (:meth:`pack`)
        self._where_packed: dict[str, tuple[TrackKey, TrackKey, array[int]]] = {}  # such a game's packed plies:
        # (White's track, Black's track, the plies) instead of one entry a ply in ``_where``

    # -- input ------------------------------------------------------------------

    def event_of(self, info: GameInfo) -> str:
        """The event a game is screened in: its Event tag, or one event for all games (``scope = "all"``).

        Some exports name every game in the Event tag (lichess study chapters,
        "Round 1: A - B"), which would screen each game alone; ``scope = "all"``
        treats everything the monitor sees as one event.
        """
        return info.event if self.cfg.scope == "event" else self.cfg.event_name

    def add_game(self, info: GameInfo) -> list[TrackKey]:
        """Register a game (again: tags refreshed); returns tracks whose rating changed."""
        if info.game_id not in self._seq:
            self._seq[info.game_id] = len(self._seq)
        self._games[info.game_id] = info
        changed = []
        for name, white in ((info.white, True), (info.black, False)):
            key = (name, self.event_of(info))
            self._games_of.setdefault(key, set()).add(info.game_id)
            rating = rating_today(info, white)
            moved = False
            fide = info.white_fide_id if white else info.black_fide_id
            if fide and self._ids.get(key) != fide:
                self._ids[key] = fide
                moved = fide in self._juniors  # named a junior by their FIDE id: the tag is read anew
            if rating is not None:
                today, read, scale = rating
                if self._tags.get(key) != today:
                    self._tags[key] = today
                    self._tags_read[key] = (read, scale)
                    moved = True
            track = self.tracks.get(key)
            if track is None:
                continue
            now = self._games_context(key)  # a new game, an opponent's tag refreshed
            if (moved or now != _games_context_of(track)) and self._rerate(track, now):
                changed.append(key)
        return changed

    def set_result(self, game_id: str, result: str) -> list[TrackKey]:
        """A game's result (``*`` while it goes on): each side's event results, so today's strength, change;
        returns the tracks re-scored."""
        info = self._games.get(game_id)
        if info is None:
            return []
        points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(result)
        if points is None:
            self._points.pop(game_id, None)
        else:
            self._points[game_id] = points
        # the field's evidence first: the two players are re-rated with it, as a track made later would be
        white_today, black_today = rating_today(info, True), rating_today(info, False)
        game = None if points is None or white_today is None or black_today is None else field_game(
            white_today[0], black_today[0], points, junior_event(self.event_of(info)))
        field_moved = self._count_field(game_id, self.event_of(info), game)
        changed = []
        for name in (info.white, info.black):
            track = self.tracks.get((name, self.event_of(info)))
            if track is None:  # its first screened ply takes the result (:meth:`_take_results`)
                continue
            self._take_result(track, game_id, info)
            if self._rerate(track):
                changed.append(track.key)
        if field_moved:
            changed += self._refield(self.event_of(info), skip=set(changed))
        return changed

    def _take_result(self, track: _Track, game_id: str, info: GameInfo) -> None:
        """The track's result in one game: its points against the opponent's rating, or none (unfinished,
        unrated opponent)."""
        white = info.white == track.player
        points = self._points.get(game_id)
        opponent = rating_today(info, not white)
        if points is None or opponent is None:
            track.results.pop(game_id, None)
        else:
            track.results[game_id] = (opponent[0], points if white else 1.0 - points)

    def _take_results(self, track: _Track) -> None:
        """A new track's results in the event's games finished before it was screened, whatever the order in
        which results and scored plies arrived."""
        for game_id in sorted(self._games_of.get(track.key, ()), key=self._seq.__getitem__):
            info = self._games.get(game_id)
            if game_id in self._points and info is not None and self.event_of(info) == track.event:
                self._take_result(track, game_id, info)

    def _count_field(self, game_id: str, event: str, game: FieldGame | None) -> bool:
        """Put a game in its event's field-lag evidence (None: take it out); whether the evidence changed."""
        games = self._field_games.setdefault(event, {})
        if games.get(game_id) == game:
            return False
        if game is None:
            del games[game_id]
        else:
            games[game_id] = game
        lag, _ = self._field.get(event, (0.0, 0.0))
        self._field[event] = field_lag(list(games.values()), start=lag)
        return True

    def _refield(self, event: str, skip: set[TrackKey]) -> list[TrackKey]:
        """Re-score the event's likely K = 40 players whose field lag moved by FIELD_STEP or more."""
        out = []
        for key, track in self.tracks.items():
            if track.event != event or key in skip or track.prior is None or track.prior.k40 == 0.0:
                continue
            if abs(track.prior.k40 * self._lag_of(track)[0] - track.field_lag) >= FIELD_STEP and self._rerate(track):
                out.append(key)
        return out

    def _opponents(self, key: TrackKey) -> float | None:
        """The mean rating (today's scale) of the rated opponents of a player-event's games (None: none rated)."""
        ratings = []
        for game_id in self._games_of.get(key, ()):
            info = self._games[game_id]
            if self.event_of(info) == key[1]:
                opponent = rating_today(info, info.white != key[0])
                if opponent is not None:
                    ratings.append(opponent[0])
        return math.fsum(ratings) / len(ratings) if ratings else None

    def _played(self, key: TrackKey) -> datetime.date | None:
        """The date of a player-event's first dated game (None: none dated): the line's era
        (:meth:`~livemon.rating.screening.ScreeningLine.on`)."""
        dates = [_day(self._games[g].date) for g in self._games_of.get(key, ())]
        return min((d for d in dates if d is not None), default=None)

    def _games_context(self, key: TrackKey) -> GamesContext:
        """What a player-event's games say of the play it is compared with: the opponents' mean rating, the first
        game's date (the era) and the time control. Made where the games change (a game added, its tags refreshed,
        a game withdrawn), never on a re-score by results or the field lag."""
        return self._opponents(key), self._played(key), self._time_control(key)

    def _line(self, track: _Track) -> ScreeningLine | None:
        """The line a track is read on: in its event's era and at its time control (:meth:`ScreeningLine.on`)."""
        return None if self.line is None else self.line.on(track.played, track.time_control)

    def _time_control(self, key: TrackKey) -> tuple[Category, str, str]:
        """The time control a player-event is compared with, where it was read, and how a tag was read
        (:func:`~livemon.rating.timecontrol.tag_reading`): the setting, else the slowest its games' tags say
        (the cautious side), else classical."""
        if self.cfg.time_control != "auto":
            return cast(Category, self.cfg.time_control), "setting", ""
        read = [tag_reading(self._games[g].time_control) for g in sorted(self._games_of.get(key, ()))]
        known = [(c, note) for c, note in read if c is not None]
        if not known:
            return "classical", "assumed", ""
        category, note = min(known, key=lambda r: CATEGORIES.index(r[0]))
        return category, "tag", note

    def _lag_of(self, track: _Track) -> tuple[float, float]:
        """The field lag of the track's event and its sd, its own games left out; (0, 0) without evidence or
        for a tag that is no likely K = 40 one."""
        if track.prior is None or track.prior.k40 == 0.0 or track.rating_source != "tag" or track.event not in self._field:
            return 0.0, 0.0
        games = self._field_games.get(track.event, {})
        own = []
        for gid in track.results:
            g = games.get(gid)
            if g is not None:  # seen from this player's side
                white = self._games[gid].white == track.player
                own.append(g if white else (-g[0], -g[1], 1.0 - g[2]))
        return field_lag_without(*self._field[track.event], own)

    def set_juniors(self, players: Iterable[str]) -> list[TrackKey]:
        """Players known to be juniors (K = 40), by name as in the games or by FIDE id: their tags may trail them;
        returns the tracks re-scored."""
        self._juniors = set(players)
        return [k for k, t in self.tracks.items() if self._rerate(t)]

    def _junior(self, player: str, event: str) -> bool:
        """Whether a player's tag is read as a junior's: named (or their FIDE id given) in the juniors, or a junior
        event."""
        return (player in self._juniors or self._ids.get((player, event), "\0") in self._juniors
                or junior_event(event))

    def add_ply(self, sp: ScoredPly) -> TrackKey | None:
        """Screen one scored ply (replacing a ply of the same number); returns its track, None when off."""
        if not self.enabled:
            return None
        game_id, ply = sp.game_id, sp.ply
        self._unpack(game_id, ply)
        where = self._where.get(game_id)
        if where is None:
            where = self._where[game_id] = {}
        elif ply in where:
            self.rollback(game_id, ply)
        info = self._games.get(game_id)
        if info is None:
            self.add_game(GameInfo(game_id))
            info = self._games[game_id]
        track = self._track((info.white if ply % 2 == 1 else info.black, self.event_of(info)))
        key = _pos(self._seq[game_id], ply)
        where[ply] = track.key
        reason = self.exclusion(sp)
        if reason is not None:
            track.excluded[key] = reason
            track.reasons[reason] = track.reasons.get(reason, 0) + 1
            return track.key
        track.used[key] = sp
        if track.c_r is not None and not track.stale:  # a stale track counts it with the rest when read
            e = position_expectation(sp.decision, track.c_r)  # type: ignore[arg-type]
            track.p0[key] = e.p0
            track.count(e, 1)
            if track.dist is not None and (track.dist_last is None or key > track.dist_last):
                track.dist.add(e.p0)
                track.dist_last = key
            else:
                track.dist = None  # out of order: rebuilt in order when asked
        return track.key

    def exclusion(self, sp: ScoredPly) -> str | None:
        """Why a ply is left out (forced, book, decided, no_multipv), or None when it counts."""
        if sp.forced:
            return "forced"
        if sp.decision is None:
            return "no_multipv"
        reason = screening_exclusion(sp.decision, sp.ply, self.cfg.book_moves, self.cfg.eval_bound)
        if reason is None and self.in_book is not None and sp.zobrist is not None and self.in_book(sp.zobrist):
            reason = "book"
        return reason

    def rollback(self, game_id: str, from_ply: int) -> list[TrackKey]:
        """Withdraw every ply of a game from ``from_ply`` on (a corrected game); returns the tracks touched."""
        self._unpack(game_id, from_ply)
        seq = self._seq.get(game_id)
        touched: dict[TrackKey, None] = {}
        where = self._where.get(game_id, {})
        for ply in [p for p in where if p >= from_ply]:  # this game's plies only, in the order they came
            tkey = where.pop(ply)
            track = self.tracks[tkey]
            key = _pos(seq, ply)  # type: ignore[arg-type]
            reason = track.excluded.pop(key, None)
            if reason is not None:
                left = track.reasons[reason] - 1
                if left:
                    track.reasons[reason] = left
                else:
                    del track.reasons[reason]
            m = track.used.pop(key, None)
            if m is not None:
                if track.p0.pop(key, None) is not None and track.c_r is not None and not track.stale:
                    track.count(position_expectation(m.decision, track.c_r), -1)  # type: ignore[arg-type]
                track.dist = None
            touched[tkey] = None
        return list(touched)

    def pack(self, game_id: str, plies_packed: PlyLog, through: int | None = None) -> None:
        """A game's used positions kept as references into its scored plies (the estimator's log,
        :meth:`~Estimator.pack`), not one entry each: a finished game's all, a live game's ``through`` a ply
        (``plies_packed`` holds every scored ply through it). Every number stays the same, and a correction
        at or before the packed plies unpacks them (:meth:`rollback`, before the log withdraws its plies)."""
        seq, where = self._seq.get(game_id), self._where.get(game_id)
        if seq is None or not where:
            return
        moving = [ply for ply in where if through is None or ply <= through]
        if not moving:
            return
        by_track: dict[TrackKey, list[int]] = {}
        left_out: dict[TrackKey, list[tuple[int, str]]] = {}
        base, tracks = _pos(seq, 0), self.tracks  # ply p's key is base | p
        sides: list[TrackKey | None] = [None, None]  # the track of Black's plies, of White's
        mixed = False  # a side's plies in more than one track
        for ply in moving:
            tkey = where[ply]
            side = sides[ply & 1]
            if side is None:
                sides[ply & 1] = tkey
            elif side != tkey:
                mixed = True
            track = tracks[tkey]
            if base | ply in track.used:
                by_track.setdefault(tkey, []).append(ply)
            else:
                reason = track.excluded.pop(base | ply, None)
                if reason is not None:
                    left_out.setdefault(tkey, []).append((ply, reason))
        for tkey in {*where.values(), *self._where_packed.get(game_id, ())[:2]}:  # the game's tracks: the new record
            track = self.tracks[tkey]
            plies, out, old = sorted(by_track.get(tkey, ())), sorted(left_out.get(tkey, ())), track.packed.get(seq)
            if not plies and not out and old is None:
                continue
            used, p0s = track.used, track.p0
            for ply in plies:
                del used[base | ply]
            # a used position has its p0 exactly when the track has a c_r and is not stale
            p0: list[float] | None = None
            if track.stale:
                for ply in plies:
                    p0s.pop(base | ply, None)
            else:
                p0 = [p0s.pop(base | ply) for ply in plies] if track.c_r is not None else []
            track.packed[seq] = _PackedGame.merged(old, plies_packed, plies, p0, out)
        white, black, before = self._where_packed.get(game_id, (sides[1], sides[0], ()))
        if (white is not None and black is not None and not mixed  # the usual case: one track a side
                and sides[1] in (None, white) and sides[0] in (None, black)):
            self._where_packed[game_id] = (white, black, array("i", sorted([*before, *moving])))
            for ply in moving:
                del where[ply]
            if not where:
                del self._where[game_id]
        self._cut[game_id] = max(self._cut.get(game_id, 0), max(moving) if through is None else through)

    def _unpack(self, game_id: str, ply: int = 1) -> None:
        """Back to one entry per position (before a correction at or before ``ply`` of a packed game)."""
        if ply > self._cut.get(game_id, 0):
            return
        del self._cut[game_id]
        seq = self._seq[game_id]
        kept = self._where_packed.pop(game_id, None)
        if kept is not None:
            white, black, plies = kept
            self._where[game_id] = {**{p: white if p % 2 else black for p in plies}, **self._where.get(game_id, {})}
        for tkey in set(self._where.get(game_id, {}).values()):
            track = self.tracks[tkey]
            rec = track.packed.pop(seq, None)
            if rec is not None:
                used, p0, excluded = rec.unpacked(seq)
                track.used.update(used)
                track.p0.update(p0)
                track.excluded.update(excluded)

    def remove_game(self, game_id: str) -> list[TrackKey]:
        """Forget a game (withdrawn by its feed); returns the tracks that are left and were touched.

        A player-event with no other game is dropped altogether (no phantom row).
        """
        touched = self.rollback(game_id, 1)
        self._where.pop(game_id, None)
        for track in self.tracks.values():
            if track.results.pop(game_id, None) is not None:
                self._rerate(track)
        self._points.pop(game_id, None)
        for games_of in self._games_of.values():
            games_of.discard(game_id)
        touched += [t.key for t in self.tracks.values()  # the game's opponent leaves its players' opponents' mean
                    if (now := self._games_context(t.key)) != _games_context_of(t) and self._rerate(t, now)]
        for event, games in self._field_games.items():
            if game_id in games and self._count_field(game_id, event, None):
                self._refield(event, skip=set())
        info = self._games.pop(game_id, None)
        if info is None:
            return touched
        others = {(n, self.event_of(g)) for g in self._games.values() for n in (g.white, g.black)}
        for name in (info.white, info.black):
            key = (name, self.event_of(info))
            if key not in others:
                self.tracks.pop(key, None)
                self._tags.pop(key, None)
                self._tags_read.pop(key, None)
        return [k for k in dict.fromkeys(touched) if k in self.tracks]

    def set_fallback_ratings(self, ratings: Mapping[str, float],
                             games: Mapping[str, int] | None = None) -> list[TrackKey]:
        """New TTT posterior means (Elo scale) for players without a tag; returns the tracks re-scored.

        Only the players given change (a refresh passes those it moved).

        With ``games`` (each player's finished games behind the TTT rating), a
        rating counts only with at least ``min_ttt_games`` of them: with fewer
        the player stays (or becomes) unrated.
        """
        for name, value in ratings.items():
            if games is None or games.get(name, 0) >= self.cfg.min_ttt_games:
                self._fallback[name] = float(value)
            else:
                self._fallback.pop(name, None)
        return [k for k, t in self.tracks.items() if t.player in ratings and k not in self._tags and self._rerate(t)]

    def mark_raised(self, player: str, event: str, level: str) -> None:
        """A level already raised (read back from the store): never raised again."""
        self._raised_before.setdefault((player, event), set()).add(level)
        if (player, event) in self.tracks:
            self.tracks[(player, event)].raised.add(level)

    # -- tracks ---------------------------------------------------------------------

    def _track(self, key: TrackKey) -> _Track:
        track = self.tracks.get(key)
        if track is None:
            track = self.tracks[key] = _Track(*key)
            track.key = key
            track.raised |= self._raised_before.get(key, set())
            self._take_results(track)
            self._rerate(track, self._games_context(key))
        return track

    def _rerate(self, track: _Track, games: GamesContext | None = None) -> bool:
        """Take the track's current rating and results, and ``games``, what its games say (:meth:`_games_context`,
        given where they changed; else the track's own); re-score every position when c_r changed.

        The rating (a tag on today's scale, else a TTT mean) is a prior on today's strength
        (:func:`~livemon.rating.screening.tag_prior`), moved by the event's field lag for a likely K = 40 tag
        (:meth:`_lag_of`); the player's own finished games against rated opponents move it
        (:func:`~livemon.rating.screening.results_strength`); c_r is the line's c there, against the mean
        rating of the player's opponents in the event (:meth:`_opponents`).
        """
        key = (track.player, track.event)
        read, scale = self._tags_read.get(key, (None, "today"))
        if key in self._tags:
            rating, source = self._tags[key], "tag"
            prior: StrengthPrior | None = tag_prior(rating, junior=self._junior(track.player, track.event))
        elif track.player in self._fallback:
            rating, source, read = self._fallback[track.player], "ttt", None
            prior = StrengthPrior(rating, TTT_SD, 0.0)
        else:
            rating, source, prior, read = None, "none", None, None
        track.prior, track.rating_source = prior, source  # the tag alone (z_tag reads it)
        lag, lag_sd = self._lag_of(track)
        moved = None if prior is None else moved_by_field(prior, lag, lag_sd)  # the event's field trails its tags
        track.field_lag = 0.0 if prior is None else prior.k40 * lag
        strength, made_of = None, None
        if moved is not None:
            made_of = (moved.mean, moved.sd, tuple(track.results.values()))
            strength = track.strength if made_of == track.strength_from else results_strength(*made_of)
        if games is not None:
            track.opponents, track.played, (track.time_control, track.time_control_source, track.time_control_note) = games
        line = self._line(track)
        c_r = None if strength is None or line is None else line.c_for(strength[0], track.opponents)
        changed = c_r != track.c_r
        track.rating, track.c_r = rating, c_r
        track.rating_read, track.rating_scale, track.strength, track.strength_from = read, scale, strength, made_of
        if changed:
            track.stale = True  # counted again when next read (:meth:`_Track.fresh`)
            track.dist = None
        return changed

    def _distribution(self, track: _Track) -> PoissonBinomial:
        if track.dist is None:
            p0, track.dist_last = track.p0_in_order()
            track.dist = PoissonBinomial(p0)
        return track.dist

    # -- output -------------------------------------------------------------------------

    def keys(self) -> list[TrackKey]:
        return list(self.tracks)

    def numbers(self, key: TrackKey) -> ScreeningNumbers:
        """The screening numbers of one player in one event, now."""
        track = self.tracks.get(key) or _Track(*key)
        track.fresh()
        excluded = dict(sorted(track.reasons.items()))
        n = track.n_p0 if track.c_r is not None else 0
        # exact sums, kept as positions come and go (math.fsum of the terms, bit for bit, in O(1)):
        # the figures do not depend on the order positions came in
        s = track.sums if n else [0] * 8

        def terms(term: Callable[[PositionExpectation], float]) -> Callable[[], Iterable[float]]:
            return lambda: (term(e) for e in (track.expectations().values() if n else ()))

        st = stats_from_sums(
            track.player, n, s[0], _rounded(s[1], terms(lambda e: e.p0)),
            _rounded(s[2], terms(lambda e: e.p0 * (1.0 - e.p0))), _rounded(s[3], terms(lambda e: e.loss)),
            _rounded(s[4], terms(lambda e: e.loss_mean)), _rounded(s[5], terms(lambda e: e.loss_var)),
        )
        z_match = p_match = z_normal = z_loss = z_tag = None
        ipr = None
        line = self._line(track)
        if n and line is not None and track.strength is not None and track.prior is not None:
            p_match = self._distribution(track).mid_tail(st.matches_observed)
            z_exact = tail_z(p_match)
            if z_exact == math.inf:  # the tail underflowed: far beyond any threshold; keep a finite z
                z_exact = max(st.z_match, 40.0)
            # against today's strength known to its sd, for a player whose own c scatters by tau (delta method)
            var = track.strength[1] ** 2
            slope = line.slope_at(track.strength[0])
            dsum, dloss = _rounded(s[6], terms(lambda e: e.dp0)), _rounded(s[7], terms(lambda e: e.dloss))
            z_match = widened_z(z_exact, st.matches_sd ** 2, dsum, slope, var, line.tau) / self.z_scale
            z_normal = widened_z(st.z_match, st.matches_sd ** 2, dsum, slope, var, line.tau) / self.z_scale
            loss_var = (st.loss_sd * n) ** 2
            z_loss = widened_z(st.z_loss, loss_var, dloss, slope, var, line.tau) / self.z_scale
            z_tag = self._z_tag(track, st.matches_observed - st.matches_expected, st.matches_sd ** 2, dsum)
            ipr = (None if track.c_r is None else
                   first_order_ipr(track.c_r, st.matches_observed - st.matches_expected, st.matches_sd ** 2, dsum,
                                   line, track.opponents))
        z = self._statistic_z(z_match, z_loss)
        level = self._level(track.n_used if track.c_r is not None else 0, z, z_tag)
        return ScreeningNumbers(
            player=track.player, event=track.event, rating=track.rating, rating_source=track.rating_source,
            c_r=track.c_r, positions=track.n_used, excluded=excluded,
            matches_observed=st.matches_observed, matches_expected=st.matches_expected, matches_sd=st.matches_sd,
            z_match=_finite(z_match), p_match=p_match, z_match_normal=_finite(z_normal),
            loss_observed=st.loss_observed, loss_expected=st.loss_expected, loss_sd=st.loss_sd, z_loss=_finite(z_loss),
            statistic=self.cfg.statistic, z=_finite(z), roi=_finite(None if z is None else 50.0 + 5.0 * z),
            z_scale=self.z_scale, level=level,
            rating_read=track.rating_read, rating_scale=track.rating_scale,
            strength=None if track.strength is None else track.strength[0],
            strength_sd=None if track.strength is None else track.strength[1], results=len(track.results),
            k40=None if track.prior is None else track.prior.k40, z_tag=_finite(z_tag),
            ipr=None if ipr is None else _finite(ipr[0]),
            ipr_cr95=None if ipr is None else (_finite(ipr[1][0]), _finite(ipr[1][1])),
            field_lag=None if track.prior is None else track.field_lag,
            opponents=track.opponents,
            time_control=track.time_control, time_control_source=track.time_control_source,
            time_control_note=track.time_control_note,
            notice_z=self.cfg.notice_z, alert_z=self.cfg.alert_z, min_positions=self.cfg.min_positions,
        )

    def _z_tag(self, track: _Track, diff: float, var_matches: float, dsum: float) -> float | None:
        """z of the matches against the tag alone (its prior, no results), to first order in c: an alert must
        be high against both (is the player simply underrated? the results say)."""
        line, prior, strength = self._line(track), track.prior, track.strength
        if line is None or prior is None or strength is None or var_matches <= 0.0:
            return None
        opponents = track.opponents
        shift = dsum * (line.c_for(prior.mean, opponents) - line.c_for(strength[0], opponents))  # at the tag, less
        total = var_matches + dsum * dsum * (line.slope_at(prior.mean) ** 2 * prior.sd ** 2 + line.tau ** 2)
        return (diff - shift) / math.sqrt(total) / self.z_scale



    def _statistic_z(self, z_match: float | None, z_loss: float | None) -> float | None:
        if self.cfg.statistic == "match":
            return z_match
        if self.cfg.statistic == "loss":
            return z_loss
        known = [z for z in (z_match, z_loss) if z is not None]
        return max(known) if known else None

    def _thresholds(self) -> list[tuple[str, float]]:
        return [("notice", self.cfg.notice_z), ("alert", self.cfg.alert_z)]

    def _level(self, positions: int, z: float | None, z_tag: float | None = None) -> str | None:
        if z is None or positions < self.cfg.min_positions:
            return None
        reached = [name for name, threshold in self._thresholds() if self._reaches(name, threshold, z, z_tag)]
        return reached[-1] if reached else None

    @staticmethod
    def _reaches(name: str, threshold: float, z: float | None, z_tag: float | None) -> bool:
        """A notice at z ≥ its threshold; an alert needs z against the tag alone there too (not simply underrated)."""
        if z is None or z < threshold:
            return False
        return name != "alert" or z_tag is None or z_tag >= threshold

    def chance(self, rows: Iterable[ScreeningNumbers] | None = None) -> dict[str, Any]:
        """How many notices and alerts honest players would raise by chance in this table (:func:`table_chance`)."""
        return table_chance(self.table() if rows is None else rows, self.cfg.notice_z, self.cfg.alert_z,
                            self.cfg.min_positions)

    def table(self) -> list[ScreeningNumbers]:
        """Every player-event, strongest signal first (unscored last)."""
        rows = [self.numbers(k) for k in self.tracks]
        return sorted(rows, key=lambda r: (r.z is None, -(r.z or 0.0), r.event, r.player))

    def top_moves(self, key: TrackKey, k: int = TOP_MOVES) -> list[dict[str, Any]]:
        """The ``k`` positions that pushed the statistic's z up the most.

        A position's share of z_match is (matched − p0)/sd of the matches; of
        z_loss, (expected loss − loss)/sd of the summed loss (the z's are sums
        of these). For ``max`` the larger z's shares are used.
        """
        track = self.tracks.get(key)
        if track is not None:
            track.fresh()
        if track is None or not track.n_p0:
            return []
        es = track.expectations()
        use_loss = self.cfg.statistic == "loss"
        if self.cfg.statistic == "max":
            row = self.numbers(key)
            use_loss = (row.z_loss or -math.inf) > (row.z_match or -math.inf)
        if use_loss:
            sd = math.sqrt(math.fsum(e.loss_var for e in es.values()))
            share = {p: (e.loss_mean - e.loss) / sd if sd > 0 else 0.0 for p, e in es.items()}
        else:
            sd = math.sqrt(math.fsum(e.p0 * (1.0 - e.p0) for e in es.values()))
            share = {p: (e.matched - e.p0) / sd if sd > 0 else 0.0 for p, e in es.items()}
        out = []
        for p in sorted(share, key=lambda p: (-share[p], p))[:k]:
            m, e = track.position(p), es[p]
            out.append({
                "game_id": m.game_id, "ply": m.ply, "move": m.san or m.uci, "uci": m.uci,
                "p0": e.p0, "matched": e.matched, "loss": e.loss, "loss_expected": e.loss_mean,
                "share": share[p] / self.z_scale,
            })
        return out

    def new_alerts(self, key: TrackKey, numbers: ScreeningNumbers | None = None) -> list[ScreeningAlert]:
        """Levels this track reaches now and never raised before (marked raised on return).

        ``numbers``: this track's :meth:`numbers` if the caller has them already.
        """
        track = self.tracks.get(key)
        if track is None:
            return []
        row = numbers if numbers is not None else self.numbers(key)
        if row.level is None:
            return []
        out = []
        for name, threshold in self._thresholds():
            if name in track.raised or not self._reaches(name, threshold, row.z, row.z_tag):
                continue
            track.raised.add(name)
            out.append(ScreeningAlert(name, float(threshold), row, self.top_moves(key)))
        return out


def table_chance(rows: Iterable[ScreeningNumbers], notice_z: float | None = None, alert_z: float | None = None,
                 min_positions: int | None = None) -> dict[str, Any]:
    """How many notices and alerts honest players would raise by chance in a screening table: the players screened
    (a z, at least ``min_positions`` positions) times P(Z ≥ threshold), and the sentence. The thresholds default to
    the rows' own (a face that has only the rows); None without a row to read them from.

    >>> table_chance([], 2.5, 4.0, 60)["line"]
    '0 players screened: about 0 notices and 0 alerts expected by chance'
    """
    rows = list(rows)
    first = rows[0] if rows else None
    notice = notice_z if notice_z is not None else None if first is None else first.notice_z
    alert = alert_z if alert_z is not None else None if first is None else first.alert_z
    least = min_positions if min_positions is not None else 0 if first is None else first.min_positions
    if notice is None or alert is None:
        return {"players": 0, "notices": 0.0, "alerts": 0.0, "line": None}
    screened = sum(1 for r in rows if r.z is not None and r.positions >= least)
    return {"players": screened, "notices": expected_by_chance(screened, notice),
            "alerts": expected_by_chance(screened, alert),
            "line": chance_line(screened, notice, alert, shown=len(rows), min_positions=least)}


def screen_estimator(estimator: Estimator, screener: Screener) -> Screener:
    """Feed a finished batch (an estimator's games, in order) to ``screener``: ``analyse --screen``."""
    for game in sorted(estimator.games.values(), key=lambda g: g.seq):
        screener.add_game(game.info)
        for ply in sorted(game.plies):
            screener.add_ply(game.plies[ply])
        screener.set_result(game.info.game_id, game.result)
    return screener


def _fields(numbers: ScreeningNumbers) -> dict[str, Any]:
    """A row's numbers by name (its fields but ``ts``: when it was published is no number of it)."""
    d = dataclasses.asdict(numbers)
    del d["ts"]
    return d


def alert_details(alert: ScreeningAlert) -> dict[str, Any]:
    """The ``details`` of a :class:`~livemon.live.messages.Alert`: level, every number, the top moves."""
    numbers = {k: list(v) if isinstance(v, tuple) else v for k, v in _fields(alert.numbers).items()}  # as JSON
    return {"level": alert.level, "numbers": numbers, "top_moves": alert.top_moves}



def screening_report(screener: Screener) -> dict[str, Any]:
    """The ``screening`` block of ``analyse --json --screen``: settings and one row per player-event."""
    cfg = screener.cfg
    rows = []
    for numbers in screener.table():
        row = _fields(numbers)
        row["top_moves"] = screener.top_moves((numbers.player, numbers.event)) if numbers.level else []
        rows.append(row)
    line = screener.line
    return {
        "chance": screener.chance(),
        "line": None if line is None else {"a": line.a, "b": line.b, "g": line.g, "h": line.h, "knee": line.knee,
                                           "era": line.era, "rapid": line.rapid, "tau": line.tau, "scale": line.scale,
                                           "shipped": line is SHIPPED},
        "time_control": cfg.time_control,
        "enabled": screener.enabled,
        "reason": screener.off_reason or None,
        "statistic": cfg.statistic,
        "notice_z": cfg.notice_z,
        "alert_z": cfg.alert_z,
        "min_positions": cfg.min_positions,
        "z_scale": screener.z_scale,
        "players": rows,
    }
