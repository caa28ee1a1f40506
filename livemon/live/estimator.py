"""Per-player and per-game estimates from scored plies — sans I/O.

The same :class:`Estimator` serves the batch ``analyse`` command and the live
monitor, so that a replayed event and a batch run of its PGN give the same
numbers by construction. It is fed :class:`ScoredPly` records (a ply with the
evaluations before and after it, and the E(c) decision of the position before
it when a MultiPV analysis exists), can withdraw a game's plies after a
correction, and renders the ``analyse --json`` shape.

>>> est = Estimator()
>>> est.add_game(GameInfo("g", white="A", black="B", white_elo=2000, black_elo=2100))
>>> _ = est.add_ply(ScoredPly("g", 1, before=20, after=30))
>>> _ = est.add_ply(ScoredPly("g", 2, before=30, after=80))
>>> est.players["A"].histogram.mean, est.players["B"].histogram.mean
(10.0, -50.0)
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from livemon.live.audience import GameFigures, Positions, event_figures, event_moves, figures_of, player_results
from livemon.live.messages import GameInfo
from livemon.live.pgn import rating_date
from livemon.live.plies import PlyLog, ScoredPly
from livemon.live.shelf import Shelf
from livemon.rating.agent import CPosterior, CSummary, Decision
from livemon.rating.calibration import Calibration, ProfileCalibration
from livemon.rating.performance import Performance, PerformanceModel, PerformanceTally
from livemon.rating.quality import (
    Opponent,
    QualityEstimate,
    QualityModel,
    QualityStats,
    QualityTally,
    combine,
    field_estimate_from,
    results_performance,
    told_apart,
)
from livemon.rating.quality_params import model_for
from livemon.rating.points import FIDE_POINTS
from livemon.rating.gain import (
    GainHistogram,
    LiveRating,
    algorithm1,
    algorithm2_pairs,
    engine_strength,
    finite_or_none,
    perceived_ratings_from_histograms,
)


@functools.lru_cache(maxsize=4096)
def _day_of(date: str) -> datetime.date | None:
    """The day of a Date tag by :func:`~livemon.live.pgn.rating_date` (read once per tag, not once per player
    message)."""
    return rating_date({"Date": date})[0]


_FINAL = frozenset(("1-0", "0-1", "1/2-1/2"))


@dataclass(slots=True)
class GameState:
    info: GameInfo
    seq: int  # order in which games were first seen: fixes the order of a player's history
    plies: PlyLog = field(default_factory=PlyLog)
    """Its scored plies (:class:`~livemon.live.plies.PlyLog`: sealed into columns as it settles, archived once
    settled if the driver says so)."""
    result: str = "*"
    played: int = 0
    """Plies played (:meth:`Estimator.set_played`): the figures say how many of them they read."""

    @property
    def archive_key(self) -> str:
        """The key of this game's record in the archive (:meth:`Estimator.archive`)."""
        return f"plies {self.info.game_id}"

    def histogram(self, white: bool) -> GainHistogram:
        return GainHistogram.from_gains(
            p.gain for p in self.plies.values() if p.white_moved == white and p.gain is not None
        )

    @property
    def unscored_plies(self) -> list[int]:
        return sorted(p.ply for p in self.plies.values() if p.before is None)


@dataclass
class PlayerState:
    name: str
    elo: int | None = None
    histogram: GainHistogram = field(default_factory=GainHistogram)
    live: LiveRating = field(default_factory=LiveRating)
    posterior: CPosterior | None = None
    sides: dict[int, int] = field(default_factory=dict)
    """Game seq -> the player's side in it (ply % 2): their plies are the games' own records
    (:meth:`Estimator.plies_of`), not copied per player (memory per ply)."""
    observed: int = 0
    """Scored plies with an E(c) decision."""
    decisions: int = 0
    """Those of them that enter c (past ``skip_moves``)."""
    performance: PerformanceTally | None = None
    """The decisions the performance model counts, summed as they come (made when first asked)."""
    quality: QualityTally | None = None
    """The quality features of the moves the quality model counts, summed as they come (made when first asked)."""
    stamp: int = 0
    """The estimator's change count when ``histogram`` last changed (Algorithm 1 pairs are cached by it)."""


class Estimator:
    """Running estimates of every player and game; see the module docstring."""

    c_map: Calibration | None = None
    """The profile's Elo ↔ c map, set by the caller when known: reports then show c̄ on the Elo scale
    and the E(c) performance estimate, a diagnostic (:mod:`livemon.rating.performance`)."""
    profile: str = ""
    """The engine profile of the analyses fed in (labels the performance estimate)."""
    perf_map: Calibration | None = None
    """The calibration of the performance estimate (fitted on every non-forced move); None: ``c_map``."""
    event_name: str = ""
    """``[event] name``: every game is of that one event (its field is every player followed); empty: each game's
    Event tag names its event (:meth:`event_keys`)."""

    def use_calibration(self, profile: str, calibration: ProfileCalibration | None) -> None:
        """Read estimates through ``calibration``, the calibration of exactly ``profile`` (or none)."""
        self.profile = profile
        self.c_map = None if calibration is None else calibration.c_map
        self.perf_map = None if calibration is None else calibration.performance

    def __init__(self, skip_moves: int = 0, c_min: float = 0.0, c_max: float = 10.0):
        self.skip_moves = skip_moves
        self.c_min, self.c_max = c_min, c_max
        self.games: dict[str, GameState] = {}
        self.players: dict[str, PlayerState] = {}
        self._by_seq: dict[int, GameState] = {}
        self._changes = 0  # bumped by every change that may move Algorithms 2 and 3
        self._tags = 0  # bumped by every game registered or re-tagged (the field's ratings may change)
        self._cached: dict[object, tuple[int, Any]] = {}  # Algorithms 2 and 3 as of a change count
        self._pairs: dict[tuple[str, str], tuple[int, int, float]] = {}  # d_ij with both players' stamps
        self.k_factor = 20.0
        """FIDE's K for a player rated below 2400 (:func:`livemon.rating.fide.k_factor`; ``[results] k_factor``)."""
        self.scoring = FIDE_POINTS
        """What a win, a draw and a loss give in the event's standings (``[event] points``): a player's ``results``
        carry their ``points`` where it is not FIDE's 1-½-0."""
        self._positions: dict[str, Positions] = {}  # the audience's figures (:meth:`figures`) are made of these
        self._figures: dict[str, GameFigures] = {}
        self._first: dict[str, int] = {}
        """Per game, the plies whose move was the engine's first choice (never judged: :mod:`livemon.live.audience`),
        as the bits of an int (bit k: ply k): a few bytes a game, kept for finished games too."""
        self._first_plies: dict[str, tuple[int, ...]] = {}  # the same in ply order, made when asked (a board message)
        self._games_of: dict[str, dict[str, None]] = {}
        self._results: dict[str, tuple[object, dict[str, Any]]] = {}
        """Per player, FIDE's figures (:meth:`audience`) and what they were made of: a ply leaves them as they are."""

    # -- input ------------------------------------------------------------------

    def add_game(self, info: GameInfo) -> None:
        """Register a game (again: its tags are refreshed, its plies kept)."""
        self._changes += 1
        self._tags += 1
        state = self.games.get(info.game_id)
        if state is None:
            state = self.games[info.game_id] = GameState(info, len(self.games))
            self._by_seq[state.seq] = state
        else:
            self._unlist(state.info)
            state.info = info
        for name in (info.white, info.black):
            self._games_of.setdefault(name, {})[info.game_id] = None
        for name, elo in ((info.white, info.white_elo), (info.black, info.black_elo)):
            player = self._player(name)
            if elo is not None:
                player.elo = elo

    def _player(self, name: str) -> PlayerState:
        player = self.players.get(name)
        if player is None:
            player = self.players[name] = PlayerState(name)
        return player

    def mover(self, game_id: str, ply: int) -> PlayerState:
        info = self.games[game_id].info
        return self._player(info.white if ply % 2 == 1 else info.black)

    def uses_decision(self, ply: int) -> bool:
        """False for the first ``skip_moves`` moves of each side (left out of c)."""
        return (ply + 1) // 2 > self.skip_moves

    def add_ply(self, sp: ScoredPly, first_choice: bool = False) -> PlayerState:
        """Add one scored ply (replacing a ply of the same number); returns the mover. ``first_choice``: the move
        was the engine's first choice in the position before it (or the only legal move): never judged."""
        game_id, ply = sp.game_id, sp.ply
        game = self.games[game_id]
        plies = game.plies
        if ply in plies:
            self.rollback(game_id, ply)
        if first_choice:
            self._first[game_id] = self._first.get(game_id, 0) | (1 << ply)
            kept = self._first_plies.pop(game_id, None)
            if kept is not None and (not kept or kept[-1] < ply):  # the newest ply: the tuple grows by one
                self._first_plies[game_id] = (*kept, ply)
        plies.add(sp)
        self._scored(sp)
        if first_choice:
            self._positions[game_id].unclassed(ply)
        player = self.mover(game_id, ply)
        player.sides[game.seq] = ply % 2
        self._changes += 1
        g = sp.gain
        if g is not None:
            player.histogram.add(g)
            player.live.add(g)
            player.stamp = self._changes
        decision = sp.decision
        if decision is not None:
            player.observed += 1
            if player.performance is not None:
                player.performance.add(game.seq, decision, ply)
            if player.quality is not None:
                player.quality.add(game.seq, decision, ply)
            if self.uses_decision(ply):
                if player.posterior is None:
                    player.posterior = CPosterior(self.c_min, self.c_max,
                                                  source=lambda: self._posterior_decisions(player))
                player.posterior.add(decision)
                player.decisions += 1
        return player

    def plies_of(self, player: PlayerState) -> list[tuple[tuple[int, int], ScoredPly]]:
        """The player's scored plies in game order, each with its key (game seq, ply)."""
        out: list[tuple[tuple[int, int], ScoredPly]] = []
        for seq in sorted(player.sides):
            game = self._by_seq.get(seq)
            if game is None:
                continue
            out.extend(((seq, ply), sp) for ply, sp in game.plies.side(player.sides[seq]))
        return out

    def _decisions_of(self, player: PlayerState) -> Iterator[tuple[int, Decision, int]]:
        """The player's E(c) decisions in game order as ``(game seq, decision, ply)`` (read without their
        plies' other fields: the c posterior's re-grids and the performance tally's first sum read them all)."""
        for seq in sorted(player.sides):
            game = self._by_seq.get(seq)
            if game is not None:
                yield from ((seq, decision, ply) for ply, decision in game.plies.decisions(player.sides[seq]))

    def _posterior_decisions(self, player: PlayerState) -> Iterable[Decision]:
        """The decisions that enter the player's c posterior (past ``skip_moves``), in game order."""
        return (decision for _, decision, ply in self._decisions_of(player) if self.uses_decision(ply))

    def history(self, player: PlayerState) -> list[float | None]:
        """Algorithm 4's rating difference after each of the player's moves, in order."""
        running = LiveRating()
        out: list[float | None] = []
        for _, sp in self.plies_of(player):
            g = sp.gain
            if g is not None:
                running.add(g)
                out.append(finite_or_none(running.rating_diff))
        return out

    def c_summary(self, player: PlayerState) -> CSummary | None:
        """The c posterior rebuilt from the player's decisions in game order.

        Rebuilding (rather than reading the live posterior) makes the figure
        independent of the order in which moves arrived, so live equals batch.
        """
        if not player.decisions:
            return None
        posterior = CPosterior(self.c_min, self.c_max)
        for key, sp in self.plies_of(player):
            if sp.decision is not None and self.uses_decision(key[1]):
                posterior.add(sp.decision)
        return posterior.summary()

    def rollback(self, game_id: str, from_ply: int) -> None:
        """Withdraw every ply of a game from ``from_ply`` on (a corrected game)."""
        game = self.games[game_id]
        self._changes += 1
        self._figures.pop(game_id, None)
        if game_id in self._positions:
            self._positions[game_id].truncate(from_ply)
        first = self._first.get(game_id)
        if first:
            self._first[game_id] = first & ((1 << max(from_ply, 0)) - 1)
            self._first_plies.pop(game_id, None)
        for sp in game.plies.truncate(from_ply):
            ply = sp.ply
            player = self.mover(game_id, ply)
            g = sp.gain
            if g is not None:
                player.histogram.remove(g)
                player.live.remove(g)
                player.stamp = self._changes
            if sp.decision is not None:
                player.observed -= 1
                if player.performance is not None:
                    player.performance.remove(game.seq, sp.decision, ply)
                if player.quality is not None:
                    player.quality.remove(game.seq, sp.decision, ply)
                if self.uses_decision(ply):
                    player.decisions -= 1
                    if player.posterior is not None:
                        player.posterior.remove(sp.decision)
        game.result = "*"  # a corrected game is not finished as recorded; the feed re-sends it

    def remove_game(self, game_id: str) -> list[str]:
        """Forget a game (withdrawn by its feed): its plies, and its players when no other game has them.

        Returns the players forgotten.
        """
        if game_id not in self.games:
            return []
        self.rollback(game_id, 1)
        self._changes += 1
        self._tags += 1
        state = self.games.pop(game_id)
        self._by_seq.pop(state.seq, None)
        self._positions.pop(game_id, None)
        self._figures.pop(game_id, None)
        self._first.pop(game_id, None)
        self._first_plies.pop(game_id, None)
        self._unlist(state.info)
        state.plies.discard()  # off the archive
        info = state.info
        names = {g.info.white for g in self.games.values()} | {g.info.black for g in self.games.values()}
        gone = [n for n in dict.fromkeys((info.white, info.black)) if n not in names]
        for name in gone:
            self.players.pop(name, None)
            self._results.pop(name, None)
        return gone

    def set_result(self, game_id: str, result: str) -> None:
        self.games[game_id].result = result
        self._figures.pop(game_id, None)  # a finished game shows the accuracy of all its moves, however few

    def set_played(self, game_id: str, plies: int) -> None:
        """The plies played in a game so far (the driver's count: the figures read those valued)."""
        state = self.games.get(game_id)
        if state is not None and state.played != plies:
            state.played = plies
            self._figures.pop(game_id, None)

    # -- what the audience sees: accuracy, move classes, results (livemon.live.audience) ---------

    def _scored(self, sp: ScoredPly) -> None:
        positions = self._positions.get(sp.game_id)
        if positions is None:
            positions = self._positions[sp.game_id] = Positions()
        if sp.before is not None:
            positions.set(sp.ply - 1, sp.before)
        positions.set(sp.ply, sp.after)
        self._figures.pop(sp.game_id, None)

    def _unlist(self, info: GameInfo) -> None:
        for name in (info.white, info.black):
            games = self._games_of.get(name)
            if games is not None:
                games.pop(info.game_id, None)
                if not games:
                    del self._games_of[name]

    def evals(self, game_id: str) -> list[int | None]:
        """The value of each position of a game as scored so far (index 0 = the start; None: awaited)."""
        positions = self._positions.get(game_id)
        return [] if positions is None else positions.evals()

    def judge(self, game_id: str) -> Positions:
        """The judge of a game's scored plies (:class:`~livemon.rating.accuracy.GameJudge`: each ply's accuracy and
        class as judged when it was scored; an empty one, which judges what it is asked, before the first)."""
        return self._positions.get(game_id) or Positions()

    def figures(self, game_id: str) -> GameFigures:
        """A game's accuracy and move classes per side (made again only after the game changed)."""
        found = self._figures.get(game_id)
        if found is None:
            positions = self._positions.get(game_id)
            found = figures_of(positions if positions is not None else Positions())
            state = self.games.get(game_id)
            if state is not None:
                played = max(state.played, len(state.plies))
                found = found.withheld(((played + 1) // 2, played // 2), state.result in _FINAL)
            self._figures[game_id] = found
        return found

    def is_first_choice(self, game_id: str, ply: int) -> bool:
        """Whether a ply's move was the engine's first choice."""
        return bool((self._first.get(game_id, 0) >> ply) & 1)

    def first_choice(self, game_id: str) -> frozenset[int]:
        """The plies of a game whose move was the engine's first choice (never judged)."""
        return frozenset(self.first_choice_plies(game_id))

    def first_choice_plies(self, game_id: str) -> tuple[int, ...]:
        """:meth:`first_choice` in ply order (a board message carries it; made again only after it changed)."""
        found = self._first_plies.get(game_id)
        if found is None:
            mask, out = self._first.get(game_id, 0), []
            while mask:
                low = mask & -mask
                out.append(low.bit_length() - 1)
                mask ^= low
            found = tuple(out)
            if game_id in self.games:
                self._first_plies[game_id] = found
        return found

    def audience(self, name: str) -> dict[str, Any]:
        """A player's event ``accuracy``, ``classes`` and FIDE ``results`` (``livemon.live.audience``)."""
        player = self.players.get(name)
        elo = player.elo if player is not None else None
        mine, every, results = [], [], []
        played: datetime.date | None = None
        for game_id in self._games_of.get(name, ()):
            state = self.games[game_id]
            info = state.info
            white = info.white == name
            figures = self.figures(game_id)
            every.append((figures, white))
            if game_id in self._positions:
                mine.append((figures, white))
            # FIDE's figures on the tags as published, by the rules of the event's (latest) date
            tag = info.white_published if white else info.black_published
            elo = tag if tag is not None else elo
            results.append((white, state.result, info.black_published if white else info.white_published))
            day = _day_of(info.date)
            if day is not None and (played is None or day > played):
                played = day
        accuracy, classes = event_figures(mine)
        key = (elo, tuple(results), self.k_factor, played, self.scoring)  # what the figures are made of: made again on a change
        kept = self._results.get(name)
        if kept is None or kept[0] != key:
            kept = self._results[name] = (key, player_results(elo, results, default_k=self.k_factor, event_date=played,
                                                              scoring=self.scoring))
        return {"accuracy": accuracy, "classes": classes, "moves_read": event_moves(every), "results": dict(kept[1])}

    def pack(self, game_id: str, through: int | None = None) -> PlyLog | None:
        """Seal a settled game's plies into columns (:meth:`PlyLog.seal`); returns its log (None: no such game).

        ``through``: a live game's plies through that ply only (they are all scored: the caller knows),
        the newer ones kept as objects; returns the log then only when a ply was sealed anew.
        Every figure stays the same; a correction opens the sealed plies again.
        """
        game = self.games.get(game_id)
        if game is None:
            return None
        if through is None and game_id in self._positions:  # finished: its figures stay, what extends them goes
            self._positions[game_id].settle()
            self._first_plies.pop(game_id, None)
        sealed = game.plies.seal(through)
        return game.plies if sealed or through is None else None

    def archive(self, game_id: str, shelf: Shelf) -> bool:
        """Archive a game's sealed plies on ``shelf`` (the core's archive); whether they moved (not when the
        game is not sealed whole)."""
        game = self.games.get(game_id)
        return game is not None and game.plies.archive(shelf, game.archive_key)

    # -- output -------------------------------------------------------------------

    def rated_players(self) -> list[PlayerState]:
        return [p for p in self.players.values() if p.elo is not None and p.histogram.n]

    def _as_of_now(self, key: object) -> tuple[bool, Any]:
        """(True, value) when ``key`` was computed since the last change."""
        hit = self._cached.get(key)
        return (True, hit[1]) if hit is not None and hit[0] == self._changes else (False, None)

    def engine_strength(self) -> float | None:
        """Algorithm 3 over the rated players seen so far (not computed again until something changes)."""
        known, value = self._as_of_now("algorithm 3")
        if not known:
            value = engine_strength((float(p.elo), p.histogram) for p in self.rated_players() if p.elo is not None)
            self._cached["algorithm 3"] = (self._changes, value)
        return value  # type: ignore[no-any-return]

    def met_pairs(self) -> set[tuple[str, str]]:
        return {(g.info.white, g.info.black) for g in self.games.values() if g.plies}

    def perceived_ratings(self, all_pairs: bool = False) -> dict[str, float] | None:
        """Algorithm 2 over the rated players, when at least three have ratings.

        Not solved again until something changes (a ply, a rollback, a game's tags); a pair's d_ij
        (Algorithm 1) is kept until either player's histogram changes. Returns a new dict each time.
        """
        key = ("algorithm 2", all_pairs)
        known, value = self._as_of_now(key)
        if not known:
            value = self._perceived_ratings(all_pairs)
            self._cached[key] = (self._changes, value)
        return None if value is None else dict(value)

    def _algorithm2_input(self, all_pairs: bool) -> tuple[dict[str, GainHistogram], dict[str, float],
                                                          list[tuple[str, str]] | None] | None:
        """Algorithm 2's histograms, ratings and met pairs (None: fewer than three rated players)."""
        rated = self.rated_players()
        if len(rated) < 3:
            return None
        names = {p.name for p in rated}
        met = None if all_pairs else [(a, b) for a, b in self.met_pairs() if a in names and b in names]
        return {p.name: p.histogram for p in rated}, {p.name: float(p.elo) for p in rated}, met  # type: ignore[arg-type]

    def _difference(self, i: str, j: str) -> float:
        """d_ij by Algorithm 1, kept until either player's histogram changes."""
        si, sj = self.players[i].stamp, self.players[j].stamp
        kept = self._pairs.get((i, j))
        if kept is not None and kept[0] == si and kept[1] == sj:
            return kept[2]
        d = algorithm1(self.players[i].histogram, self.players[j].histogram)[1]
        self._pairs[(i, j)] = (si, sj, d)
        return d

    def stale_pairs(self, all_pairs: bool = False) -> list[tuple[str, str]]:
        """The pairs Algorithm 2 would read whose d_ij is not kept for the players' histograms now: a driver
        may refresh them in small batches (:meth:`refresh_pairs`) before :meth:`perceived_ratings`, which
        then only solves (at 250 boards, Algorithm 1 on every pair that moved took 10-30 ms in one go)."""
        if self._as_of_now(("algorithm 2", all_pairs))[0]:
            return []
        given = self._algorithm2_input(all_pairs)
        if given is None:
            return []
        pairs = algorithm2_pairs(given[0], given[2])
        stamps = {name: p.stamp for name, p in self.players.items()}
        return [(i, j) for i, j in pairs
                if (kept := self._pairs.get((i, j))) is None or kept[0] != stamps[i] or kept[1] != stamps[j]]

    def refresh_pairs(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Work out and keep d_ij for ``pairs`` (players no longer known are skipped)."""
        for i, j in pairs:
            if i in self.players and j in self.players:
                self._difference(i, j)

    def _perceived_ratings(self, all_pairs: bool) -> dict[str, float] | None:
        given = self._algorithm2_input(all_pairs)
        if given is None:
            return None
        hists, ratings, met = given
        return perceived_ratings_from_histograms(hists, ratings, met, self._difference)

    def game_report(self, game: GameState) -> dict[str, Any]:
        white, black = game.histogram(True), game.histogram(False)
        p = d = None
        if white.n and black.n:
            p, d = algorithm1(white, black)
        out: dict[str, Any] = {
            "white": game.info.white,
            "black": game.info.black,
            "result": game.result,
            "plies": len(game.plies),
            "white_expected_score": p,
            "white_rating_diff": finite_or_none(d) if d is not None else None,
            "accuracy": self.figures(game.info.game_id).to_accuracy(),
            "moves_read": self.figures(game.info.game_id).to_moves(),
        }
        if game.unscored_plies:
            out["unscored_plies"] = game.unscored_plies
        w, b = self.players.get(game.info.white), self.players.get(game.info.black)
        if w is not None and b is not None:
            out["told_apart"] = told_apart(self.quality(w), self.quality(b))
        return out

    def performance(self, player: PlayerState) -> Performance:
        """The E(c) performance estimate (a diagnostic): the player's performance Elo with its 95% interval, or why none.

        It rests on the player's moves that the profile's calibration was fitted
        on (book moves and decided positions left out, forced moves never count),
        over as many games as they come from. Kept up to date move by move
        (:class:`~livemon.rating.performance.PerformanceTally`): the same figures as
        :meth:`PerformanceModel.estimate` over all the player's moves, bit for bit.
        """
        model = self._performance_model()
        if isinstance(model, str):
            return Performance.unavailable(model, player.observed, self.profile)
        tally = player.performance
        if tally is None or tally.model is not model:  # first asked, or another calibration
            tally = player.performance = PerformanceTally(model, lambda: self._decisions_of(player))
        return tally.estimate()

    def _performance_model(self) -> PerformanceModel | str:
        """The model of the current calibration (rebuilt when it changes), or the reason there is none."""
        cal = self.perf_map or self.c_map
        cached = self.__dict__.get("_perf")
        if cached is not None and cached[0] is cal:
            return cached[1]  # type: ignore[no-any-return]
        model: PerformanceModel | str
        if cal is None:
            model = f"uncalibrated: no calibration of the engine profile {self.profile or '(unknown)'}"
        else:
            try:
                model = PerformanceModel.from_calibration(cal)
            except ValueError:
                model = "uncalibrated: the profile's calibration has no maximum-likelihood fit (run livemon calibrate)"
        self.__dict__["_perf"] = (cal, model)
        return model

    # -- the multi-feature estimate (livemon.rating.quality) --------------------------

    def _quality_model(self) -> QualityModel | str:
        """The fitted quality model of exactly this profile, or the reason there is none."""
        cached = self.__dict__.get("_quality")
        if cached is not None and cached[0] == self.profile:
            return cached[1]  # type: ignore[no-any-return]
        model: QualityModel | str | None = model_for(self.profile) if self.profile else None
        if model is None:
            model = f"uncalibrated: no quality model of the engine profile {self.profile or '(unknown)'}"
        self.__dict__["_quality"] = (self.profile, model)
        return model

    def quality(self, player: PlayerState) -> QualityEstimate:
        """The estimate from the player's move quality alone, with its 95% interval and games to ±150.

        Kept up to date move by move (:class:`~livemon.rating.quality.QualityTally`: integer sums of the
        moves' features, the same in any order, so live equals batch).
        """
        model = self._quality_model()
        if isinstance(model, str):
            games = sum(1 for seq in player.sides if seq in self._by_seq)  # a withdrawn game's seq may linger
            return QualityEstimate(None, None, None, player.observed, games, "moves", reason=model)
        return model.estimate(self.quality_stats(player, model))

    def _tally(self, player: PlayerState, model: QualityModel) -> QualityTally:
        tally = player.quality
        if tally is None or tally.model is not model:
            tally = player.quality = QualityTally.of(model, self._decisions_of(player))
        return tally

    def players_of(self, sp: ScoredPly, mover: PlayerState) -> list[PlayerState]:
        """Whose estimates the scored ply ``sp`` moves: the mover's, and the opponent's when the ply enters the
        quality model's counted moves and the mover is rated (the opponent's games read the mover's moves then:
        :meth:`quality_stats`)."""
        game = self.games.get(sp.game_id)
        model = self._quality_model()
        if (game is None or isinstance(model, str) or model.joint is None or mover.elo is None
                or sp.decision is None or not model.counts(sp.decision, sp.ply)):
            return [mover]
        other = self._opponent(game, mover)
        return [mover] if other is None else [mover, other]

    def _opponent(self, game: GameState, player: PlayerState) -> PlayerState | None:
        """The player's opponent in ``game`` (None: not known, or the player against themselves)."""
        other = self.players.get(game.info.black if player.sides.get(game.seq) == 1 else game.info.white)
        return None if other is player else other

    def quality_stats(self, player: PlayerState, model: QualityModel) -> QualityStats:
        """The player's quality statistics, each game with its rated opponent's moves there (what the joint reading
        of :attr:`~livemon.rating.quality.QualityModel.joint` reads): one function of the games' moves and
        the players' ratings, so live equals batch."""
        def opponent(seq: Hashable) -> Opponent | None:
            game = self._by_seq.get(seq) if isinstance(seq, int) else None
            if game is None:
                return None
            other = self._opponent(game, player)
            if other is None or other.elo is None:
                return None
            theirs = self._tally(other, model).game(seq)
            return None if theirs is None else (*theirs, float(other.elo))

        return self._tally(player, model).stats(opponent if model.joint is not None else None)

    def event_keys(self) -> dict[str, str]:
        """Each game's event, as the web page and the live forecast group games: its Event tag; one unnamed event
        ("") for the games whose tag names none ("?", or a lichess broadcast's chapter name "Round 1: A - B", one a
        game); every game of one event when ``event_name`` is set or when each game has an Event tag of its own."""
        if self.event_name:
            return {gid: self.event_name for gid in self.games}
        tags = {gid: g.info.event for gid, g in self.games.items()}
        if len(tags) > 1 and len(set(tags.values())) == len(tags):
            return dict.fromkeys(tags, "all games")
        return {gid: _event_of(tag) for gid, tag in tags.items()}

    def _rosters(self) -> tuple[dict[str, str], dict[str, tuple[int, int, int]], dict[str, dict[str, None]]]:
        """Each game's event, each event's rated players' (count, sum, sum of squares) and its players; kept until a
        game's tags change."""
        known = self.__dict__.get("_roster")
        stamp = (self._tags, len(self.games), self.event_name)
        if known is None or known[0] != stamp:
            events = self.event_keys()
            players: dict[str, dict[str, None]] = {}
            for gid, event in events.items():
                info = self.games[gid].info
                players.setdefault(event, {}).update(dict.fromkeys((info.white, info.black)))
            sums = {}
            for event, names in players.items():
                rated = [elo for elo in (self.players[n].elo for n in names if n in self.players) if elo is not None]
                sums[event] = (len(rated), sum(rated), sum(r * r for r in rated))
            known = self.__dict__["_roster"] = (stamp, events, sums, players)
        return known[1], known[2], known[3]

    def field_of(self, player: PlayerState) -> list[str]:
        """The events whose players make the player's field: those of the player's games, in name order."""
        events = self._rosters()[0]
        return sorted({events[gid] for gid in self._games_of.get(player.name, ()) if gid in events})

    def field_prior(self, player: PlayerState) -> tuple[int, float, float]:
        """Count, mean and variance (ddof 1) of the OTHER rated players of the player's event: the field estimate's
        prior, never the player's own rating. A player of two events reads the players of both, each once. The
        events' integer sums are kept until a game's tags change."""
        _, sums, players = self._rosters()
        mine = self.field_of(player)
        if len(mine) == 1:
            n, s, ss = sums[mine[0]]
            if player.elo is not None:
                n, s, ss = n - 1, s - player.elo, ss - player.elo * player.elo
        else:
            names = {n for event in mine for n in players[event]} - {player.name}
            rated = [elo for elo in (self.players[n].elo for n in names if n in self.players) if elo is not None]
            n, s, ss = len(rated), sum(rated), sum(r * r for r in rated)
        if n < 2:
            return n, float(s / n) if n else 0.0, 0.0
        mean = s / n
        return n, mean, max((ss - n * mean * mean) / (n - 1), 0.0)

    def field_quality(self, player: PlayerState, moves: QualityEstimate | None = None,
                      results: QualityEstimate | None = None, stats: QualityStats | None = None) -> QualityEstimate:
        """"In this field": the player's moves and results with the other players' ratings as the prior (labelled);
        ``stats``: the player's :meth:`quality_stats`, when already made."""
        model = self._quality_model()
        moves = moves or self.quality(player)
        if isinstance(model, str) or player.quality is None:
            return QualityEstimate(None, None, None, moves.positions, moves.games, "field", reason=moves.reason)
        return field_estimate_from(model, moves, stats or self.quality_stats(player, model), *self.field_prior(player),
                                   results or self.results_quality(player))

    def results_of(self, player: PlayerState) -> list[tuple[float, float]]:
        """(opponent's rating, points) of the player's finished games against a rated opponent, in the order played."""
        out = []
        for seq in sorted(player.sides):
            game = self._by_seq.get(seq)
            if game is None or game.result not in ("1-0", "0-1", "1/2-1/2"):
                continue
            white = player.sides[seq] == 1
            opponent = self.players.get(game.info.black if white else game.info.white)
            if opponent is not None and opponent.elo is not None:
                points = 0.5 if game.result == "1/2-1/2" else float((game.result == "1-0") == white)
                out.append((float(opponent.elo), points))
        return out

    def results_quality(self, player: PlayerState) -> QualityEstimate:
        """FIDE's performance from results (mean opponent rating + dp(p)), labelled, beside the moves estimate."""
        model = self._quality_model()
        return results_performance(self.results_of(player), None if isinstance(model, str) else model)

    def combined_quality(self, player: PlayerState, moves: QualityEstimate | None = None,
                         results: QualityEstimate | None = None) -> QualityEstimate:
        """Moves and results combined by their measured variances and error correlation (labelled)."""
        model = self._quality_model()
        moves = moves or self.quality(player)
        if isinstance(model, str) or player.quality is None:
            return QualityEstimate(None, None, None, moves.positions, moves.games, "moves+results", reason=moves.reason)
        return combine(model, moves, results or self.results_quality(player))

    def estimates(self, player: PlayerState) -> dict[str, dict[str, Any]]:
        """The ``estimate`` (the headline), ``moves_estimate``, ``field_estimate``, ``results_estimate`` and
        ``combined_estimate`` blocks of a player's figures.

        The headline is the estimate "in this field" (the moves and results with the other players' ratings as
        the prior: the smallest errors and honest intervals on events the fit never saw) once there is one, and
        the moves alone until then (a field of fewer than two other rated players: a match, an unrated field);
        its ``kind`` says which."""
        model = self._quality_model()
        stats = None if isinstance(model, str) else self.quality_stats(player, model)  # made once for both blocks
        moves = self.quality(player) if stats is None or isinstance(model, str) else model.estimate(stats)
        results = self.results_quality(player)
        field = self.field_quality(player, moves, results, stats)
        moves_block, field_block = moves.to_dict(), field.to_dict()
        return {"estimate": dict(field_block if field.elo is not None else moves_block),
                "moves_estimate": moves_block, "field_estimate": field_block,
                "results_estimate": results.to_dict(),
                "combined_estimate": self.combined_quality(player, moves, results).to_dict()}

    def report(self, all_pairs: bool = False) -> dict[str, Any]:
        """The ``games`` and ``event`` blocks of ``analyse --json`` (its ``players`` are the core's values,
        :meth:`livemon.live.core.LiveCore.player_estimates`)."""
        return {
            "games": [self.game_report(g) for g in sorted(self.games.values(), key=lambda g: g.seq)],
            "event": {"perceived_ratings": self.perceived_ratings(all_pairs) or {}},
        }



_CHAPTER = re.compile(r"^Round\s+[\d.]+\s*:", re.IGNORECASE)


def _event_of(tag: str) -> str:
    """A game's event for its field: its Event tag, "" when it names none (a lichess chapter name names the game).

    >>> _event_of("4th Prague Masters 2022"), _event_of("Round 1: Malka, Samuel - Hernandez, Cristian Andres")
    ('4th Prague Masters 2022', '')
    >>> _event_of(" ? ")
    ''
    """
    tag = tag.strip()
    return "" if tag in ("", "?") or _CHAPTER.match(tag) else tag
