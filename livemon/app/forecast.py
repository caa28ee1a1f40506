"""``livemon forecast``: an event's games so far (PGN) made into its state, simulated to the end, and reported.

The state (:class:`livemon.rating.standings.EventState`) is read from the games' tags: players by FIDE id
(else name), ratings on today's FIDE scale by each game's date, results, rounds; a game without moves but with
a result is a forfeit (its points count, it is no game of play); a game still going (``*``) is played out with
the in-game model on its last ``[%eval]`` (and ``[%clk]``) when it has one, the pre-game model otherwise. A
player without a rating plays with today's rating floor as a stand-in, said once. The format and the number of
rounds are taken from the command line, then the config's ``[event]``, then guessed from the games, and the
guess is said; a Swiss (or knockout) whose number of rounds is not known is refused in one line.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import chess
import chess.engine

from livemon.config import EventConfig, EventPlayer
from livemon.errors import LivemonError
from livemon.live.messages import GameInfo
from livemon.live.names import matches
from livemon.live.pgn import fide_id, rating_date, scaled_ratings, split_games, white_score
from livemon.live.tracker import BadSnapshot, Snapshot, parse_chunk
from livemon.rating.forecast import DEFAULT, ForecastParams, ingame_arrays, material, pregame_arrays
from livemon.rating.scale import FLOOR_AFTER, to_current_scale
from livemon.rating.standings import FIDE_POINTS, EventState, Forecast, Result, StateError, infer_numbers, simulate

_BYE = re.compile(r"^\(?\s*(bye|BYE|Bye)\s*\)?$")
PARAMS_FILE = Path(__file__).resolve().parent.parent / "data" / "forecast.json"


class ForecastError(LivemonError):
    """The event cannot be forecast as given; the message is the command's one line."""


@dataclasses.dataclass
class ReadEvent:
    state: EventState
    name: str
    format_source: str
    rounds_source: str
    notes: list[str]
    index: dict[str, int] = dataclasses.field(default_factory=dict)
    """Each player's index in the state, by the key the games name them by (FIDE id, else name)."""
    listed: dict[str, EventPlayer] = dataclasses.field(default_factory=dict)
    """The listed player (``[[event.players]]``) each player of the state is, by the state's name: matched once,
    here, by FIDE id or by name however spelled."""


def load_params() -> ForecastParams:
    """The shipped game model (``livemon/data/forecast.json``); the built-in figures when it is missing."""
    import json

    try:
        return ForecastParams.from_mapping(json.loads(PARAMS_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return DEFAULT


def _round(text: str) -> int | None:
    head = text.split(".", 1)[0].strip()
    return int(head) if head.isdigit() else None


def _board(text: str) -> int | None:
    parts = text.strip().split(".")
    return int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else None


@dataclasses.dataclass
class GameRecord:
    """One game of the event as the forecast reads it (from a PGN or from the live monitor)."""

    event: str
    round: str
    date: datetime.date | None
    white: str
    black: str
    white_key: str
    black_key: str
    white_elo: int | None
    black_elo: int | None
    score: float | None
    """White's score; None: the game is not finished."""
    forfeit: bool = False
    eval_cp: int | None = None
    """A game in progress: its last evaluation (White's cp), at ``ply``, with ``material`` left."""
    ply: int = 0
    material: int = 78
    clocks: tuple[float, float] | None = None


def record_of_info(info: GameInfo, result: str | None, plies: int) -> GameRecord:
    """A game the monitor (or a batch read) knows by its tags, its result and its number of plies."""
    played = rating_date({"Date": info.date})[0]
    score = white_score(result)
    return GameRecord(info.event, info.round, played, info.white, info.black, info.white_fide_id or info.white,
                      info.black_fide_id or info.black,
                      _today(info.white_elo, info.white_tag, played), _today(info.black_elo, info.black_tag, played),
                      score, forfeit=score is not None and plies == 0)


def _today(elo: int | None, tag: int | None, played: datetime.date | None) -> int | None:
    """A GameInfo's rating on today's scale: as it comes when the reader kept the printed tag beside it
    (:func:`livemon.live.pgn.game_info` converted it already), else converted here by the game's date.

    >>> _today(1640, 1400, datetime.date(2023, 5, 1)), _today(1400, None, datetime.date(2023, 5, 1))
    (1640, 1640)
    """
    if elo is None:
        return None
    return elo if tag is not None else to_current_scale(elo, played)


def pgn_record(game: Snapshot) -> GameRecord:
    """A game of a PGN as the reader gives it (:func:`livemon.live.tracker.parse_chunk`): its tags, result, and
    for a game in progress its last ``[%eval]`` (a mate as python-chess scores it at 3900) and both clocks."""
    h = game.headers
    played = rating_date(h)[0]
    names = {c: h.get(c, "?").strip() or "?" for c in ("White", "Black")}
    score = white_score(h.get("Result"))
    rec = GameRecord(h.get("Event", "?"), h.get("Round", "?"), played, names["White"], names["Black"],
                     fide_id(h.get("WhiteFideId")) or names["White"], fide_id(h.get("BlackFideId")) or names["Black"],
                     *scaled_ratings(h)[0], score,
                     forfeit=score is not None and not game.plies)
    if score is None:  # in progress: its last [%eval] and both clocks
        board = chess.Board(game.fen, chess960=game.chess960) if game.fen else chess.Board()
        clocks: list[float | None] = [None, None]
        for ply, p in enumerate(game.plies, 1):
            clocks[0 if board.turn == chess.WHITE else 1] = p.clock
            board.push(chess.Move.from_uci(p.uci))
            if p.eval_cp is not None:
                rec.eval_cp = (chess.engine.Mate(p.eval_mate).score(mate_score=3900)
                               if p.eval_mate else p.eval_cp)
                rec.ply, rec.material = ply, material(board.fen())
        if clocks[0] is not None and clocks[1] is not None:
            rec.clocks = (float(clocks[0]), float(clocks[1]))
    return rec


def read_event(paths: list[str], event: EventConfig, fmt: str | None, rounds: int | None,
               report: Callable[[str], None], params: ForecastParams) -> ReadEvent:
    """The event's state from its PGN files; raises :class:`ForecastError` with the one line to say."""
    records: list[GameRecord] = []
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ForecastError(f"{path}: cannot read ({exc.strerror})") from None
        for index, (chunk, _) in enumerate(split_games(text), start=1):
            label = f"{Path(path).name} game {index}"
            game = parse_chunk(chunk, True, write_from=sys.maxsize)  # no move's SAN and FEN written: not read here
            if game is None:
                continue
            if isinstance(game, BadSnapshot):
                report(f"skipped {label}: {game.error}")
                continue
            if game.note is not None:
                report(f"{label}: {game.note}")
            rec = pgn_record(game)
            if rec.white_key == rec.black_key:
                report(f"skipped {label}: a player against themself")
                continue
            records.append(rec)
    return state_of(records, event, fmt, rounds, params, Path(paths[0]).stem if paths else "?")


def _ongoing(live: list[tuple[int, int, GameRecord]], ratings: Sequence[float],
             params: ForecastParams) -> list[tuple[int, int, tuple[float, float, float]]]:
    """The games in progress valued at once: the in-game model where a game has an evaluation (with both clocks
    when known), else the pre-game one."""
    if not live:
        return []
    rw = [ratings[w] for w, _, _ in live]
    rb = [ratings[b] for _, b, _ in live]
    pre = pregame_arrays(rw, rb, params)
    evald = [i for i, (_, _, rec) in enumerate(live) if rec.eval_cp is not None]
    if evald:
        recs = [live[i][2] for i in evald]
        edge = [0.0 if r.clocks is None else (r.clocks[0] - r.clocks[1]) / (r.clocks[0] + r.clocks[1] + 60.0)
                for r in recs]
        pre[evald] = ingame_arrays([rw[i] for i in evald], [rb[i] for i in evald], [r.eval_cp or 0 for r in recs],
                                   [r.ply for r in recs], [r.material for r in recs], edge, params)
    return [(w, b, (q[0], q[1], q[2])) for (w, b, _), q in zip(live, pre.tolist())]


def refresh_ongoing(read: ReadEvent, pending: list[GameRecord], params: ForecastParams) -> ReadEvent | None:
    """``read`` (a :func:`state_of` of the same finished games and the same games in progress) with the games in
    progress valued anew from ``pending``, their newest records in the same order: the live forecast's path when
    only evaluations moved. None when a game brings a player ``read`` does not know (build the state again)."""
    live: list[tuple[int, int, GameRecord]] = []
    busy: set[int] = set()
    for rec in pending:
        if _BYE.match(rec.white) or _BYE.match(rec.black):
            continue
        w, b = read.index.get(rec.white_key), read.index.get(rec.black_key)
        if w is None or b is None:
            return None
        if w == b or w in busy or b in busy:
            continue
        busy |= {w, b}
        live.append((w, b, rec))
    ongoing = [g for g in _ongoing(live, read.state.ratings, params)
               if g[0] not in read.state.withdrawn and g[1] not in read.state.withdrawn]
    state = dataclasses.replace(read.state, ongoing=ongoing if read.state.format != "ko" else [])
    return dataclasses.replace(read, state=state)


SET_BY = {"command": ("give --format or [event] format to set it", "give --rounds N or [event] rounds"),
          "config": ("[event] format in the monitor's config sets it", "set [event] rounds in the monitor's config")}
"""How the reader of a forecast's note sets the format and the rounds: ``livemon forecast``'s user (its options or
the config), the live forecast's (the monitor's config; its pages show the note to the commentators)."""


def state_of(records: list[GameRecord], event: EventConfig, fmt: str | None, rounds: int | None,
             params: ForecastParams, fallback_name: str, set_by: str = "command") -> ReadEvent:
    """The event's state from its games; raises :class:`ForecastError` with the one line to say (``set_by``: the
    key of :data:`SET_BY` that says how the format and the rounds are set)."""
    set_format, set_rounds = SET_BY[set_by]
    keys: dict[str, int] = {}
    names: list[str] = []
    ratings: list[int | None] = []
    results: list[Result] = []
    byes: list[tuple[int, float]] = []
    ongoing: list[tuple[int, int, tuple[float, float, float]]] = []
    events: dict[str, int] = {}
    rounds_seen: set[int] = set()
    pending: list[tuple[int, int, GameRecord]] = []
    boards: list[tuple[int, int, int, int]] = []  # (round, board, white, black) of every game with both tagged

    def player(key: str, name: str, elo: int | None) -> int:
        if key not in keys:
            keys[key] = len(names)
            names.append(name)
            ratings.append(None)
        i = keys[key]
        if elo is not None:
            ratings[i] = elo
        return i

    for rec in records:
        events[rec.event] = events.get(rec.event, 0) + 1
        rnd = _round(rec.round)
        if rnd is not None:
            rounds_seen.add(rnd)
        if _BYE.match(rec.white) or _BYE.match(rec.black):
            if rec.score is not None:
                if _BYE.match(rec.white):
                    byes.append((player(rec.black_key, rec.black, rec.black_elo), 1.0 - rec.score))
                else:
                    byes.append((player(rec.white_key, rec.white, rec.white_elo), rec.score))
            continue
        w = player(rec.white_key, rec.white, rec.white_elo)
        b = player(rec.black_key, rec.black, rec.black_elo)
        if w == b:
            continue
        board = _board(rec.round)
        if rnd is not None and board is not None:
            boards.append((rnd, board, w, b))
        if rec.score is None:
            pending.append((w, b, rec))
        else:
            results.append(Result(w, b, rec.score, rnd, forfeit=rec.forfeit))
    spelled: list[str] = []  # what the listed names were read as
    listed_at: dict[int, EventPlayer] = {}
    for listed in event.players:  # the field as its organisers list it: a player yet to play is in it too
        at = keys.get(listed.fide_id) if listed.fide_id else None  # by FIDE id, else by the name the games give
        if at is None:
            found = matches(listed.name, names)
            if len(found) == 1:
                at = found[0]
                if names[at] != listed.name:
                    spelled.append(f"listed {listed.name!r} is {names[at]!r} of the games")
            elif found:
                spelled.append(f"listed {listed.name!r} can be any of {', '.join(repr(names[i]) for i in found)}: "
                               "counted apart (give its FIDE id or the games' spelling)")
        if at is None:
            at = player(listed.fide_id or listed.name, listed.name, listed.rating or None)
        elif ratings[at] is None and listed.rating:
            ratings[at] = listed.rating
        listed_at[at] = listed
    if len(names) < 2:
        raise ForecastError("no games with two players: nothing to forecast")
    notes: list[str] = spelled
    unrated = [names[i] for i, r in enumerate(ratings) if r is None]
    if unrated:
        notes.append(f"{len(unrated)} player(s) without a rating play as {FLOOR_AFTER} (today's floor): "
                     + ", ".join(unrated[:5]) + (" ..." if len(unrated) > 5 else ""))
    full = [float(FLOOR_AFTER if r is None else r) for r in ratings]
    busy: set[int] = set()  # a player in two games at once (a round's pairing and a stale game): the first kept
    live: list[tuple[int, int, GameRecord]] = []
    for w, b, rec in pending:
        if w in busy or b in busy:
            continue
        busy |= {w, b}
        live.append((w, b, rec))
    ongoing = _ongoing(live, full, params)

    n = len(names)
    met: dict[tuple[int, int], int] = {}
    for r in results:
        k = (min(r.white, r.black), max(r.white, r.black))
        met[k] = met.get(k, 0) + 1
    fmt_source = "given"
    if fmt is None and event.format:
        fmt, fmt_source = event.format, "config"
    if fmt is None:
        fmt_source = "guessed"
        most = max(met.values(), default=0)
        per_round = max(1, n // 2)
        if n == 2:
            fmt = "drr"
        elif most >= 2 and n <= 24:  # a pair met twice in a field a double round robin plays in (an open: a rematch)
            fmt = "drr"
        elif n <= 24 and len(rounds_seen) <= n and len(results) + len(ongoing) <= n * (n - 1) // 2:
            fmt = "rr" if len(rounds_seen) * per_round * 2 >= len(results) else "swiss"
        else:
            fmt = "swiss"
        seen = f"{len(rounds_seen)} round{'' if len(rounds_seen) == 1 else 's'} seen"
        notes.append(f"format guessed: {fmt} ({n} players, {seen}"
                     f"{', a pair met twice' if most >= 2 else ''}); {set_format}")
    rounds_source = "given"
    if rounds is None and event.rounds:
        rounds, rounds_source = event.rounds, "config"
    if rounds is None:
        if fmt in ("rr", "drr"):
            rounds_source = "by the format"
            rounds = (n - 1 + n % 2) * (2 if fmt == "drr" else 1)
        else:
            raise ForecastError(f"the number of rounds of this {fmt} is not known ({max(rounds_seen, default=0)} "
                                f"seen): {set_rounds}")
    full_rr = (n - 1 + n % 2) * (2 if fmt == "drr" else 1)
    if fmt in ("rr", "drr") and rounds != full_rr:  # the rounds set and the players seen disagree: said, not guessed
        notes.append(f"{rounds} rounds set for a {'double ' if fmt == 'drr' else ''}round robin of the {n} players "
                     f"seen, which plays {full_rr}: every pair yet to meet is played"
                     + ("; a player yet to play is not counted (list the field, [[event.players]])"
                        if rounds > full_rr else ""))
    rounds_played = max(rounds_seen, default=0)
    if fmt == "swiss" and ongoing:
        rounds_played = max(rounds_played, 1)
    bracket = None
    if fmt == "ko":
        last = max(rounds_seen, default=0)
        order: list[int] = []
        for r in results:
            if r.round == last:
                order += [p for p in (r.white, r.black) if p not in order]
        for w, b, _ in ongoing:
            order += [p for p in (w, b) if p not in order]
        bracket = order
        rounds_played = last - 1
    numbers = None
    if fmt in ("rr", "drr"):
        numbers = infer_numbers(n, boards)
        notes.append("colours of the games to come: from the Berger tables (pairing numbers read from round 1's boards)"
                     if numbers is not None else
                     "colours of the games to come: unknown (the games do not follow the Berger tables by their "
                     "Round tags), each taken as even")
    name = max(events, key=lambda e: events[e]) if events else "?"
    if events.get(name, 0) < 2:  # every game its own Event tag (a lichess broadcast): the file names the event
        name = fallback_name
    gone: set[int] = set()
    for who in event.withdrawn:  # by FIDE id where the games key players by one, else by name, however spelled
        found = [keys[who]] if who.isdigit() and who in keys else matches(who, names)
        if len(found) == 1:
            gone.update(found)
        elif found:
            notes.append(f"withdrawn: {who!r} can be any of {', '.join(repr(names[i]) for i in found)}: none taken "
                         "as withdrawn (give the FIDE id or the games' spelling)")
        else:
            notes.append(f"withdrawn: no player named {who!r} in the games")
    if gone:
        notes.append(f"withdrawn: {', '.join(names[i] for i in sorted(gone))} (their games to come are not played)")
        ongoing = [g for g in ongoing if g[0] not in gone and g[1] not in gone]
    state = EventState(names, full, fmt, rounds, results, byes, ongoing if fmt != "ko" else [], frozenset(gone),
                       numbers, rounds_played, list(event.tiebreaks), event.bye_points, event.ko_games, bracket,
                       event.ko_tiebreak, event.scoring)
    if fmt == "swiss" and rounds_played >= rounds and not ongoing:
        notes.append(f"all {rounds} rounds are played: the standings are final")
    return ReadEvent(state, name, fmt_source, rounds_source, notes, dict(keys),
                     {names[i]: listed for i, listed in listed_at.items()})


def _clean(x: float) -> float | None:
    return None if isinstance(x, float) and math.isnan(x) else round(x, 6)


def forecast_json(read: ReadEvent, f: Forecast) -> dict[str, Any]:
    st = read.state
    players = sorted(f.players, key=lambda p: (-p.p_winner, -p.p_first, -p.score, p.name))
    return {
        "event": read.name,
        "format": st.format,
        "format_source": read.format_source,
        "rounds": st.rounds,
        "rounds_source": read.rounds_source,
        "rounds_left": f.rounds_left,
        "games_in_progress": len(st.ongoing),
        "simulations": f.simulations,
        "tiebreaks": list(st.tiebreaks),
        "points": st.points.label,
        "players": [{
            "name": p.name, "score": p.score, "p_first": _clean(p.p_first), "p_winner": _clean(p.p_winner),
            "p_top3": _clean(p.p_top3), "expected_score": _clean(p.expected_score), "max_score": _clean(p.max_score),
            "needs": p.needs, "distribution": {f"{k:g}": round(v, 6) for k, v in p.distribution.items()},
        } for p in players],
        "notes": read.notes + f.notes,
    }


def forecast_event(paths: list[str], event: EventConfig, fmt: str | None, rounds: int | None,
                   simulations: int | None, seed: int | None, report: Callable[[str], None]) -> dict[str, Any]:
    """The ``livemon forecast --json`` object of the games of ``paths``."""
    params = load_params()
    read = read_event(paths, event, fmt, rounds, report, params)
    n = simulations or event.simulations
    if read.state.format == "swiss" and simulations is None:
        n = min(n, 20_000)  # a Swiss is paired in every simulation: 20,000 keep it to seconds
    try:
        f = simulate(read.state, n, seed=seed, params=params)
    except StateError as exc:
        raise ForecastError(str(exc)) from None
    return forecast_json(read, f)


def forecast_text(data: dict[str, Any]) -> str:
    """The forecast as a table, most likely winner first."""
    lines = [f"{data['event']}: {data['format']} ({data['format_source']}), {data['rounds']} rounds "
             f"({data['rounds_source']}), {data['rounds_left']} left, {data['games_in_progress']} games in progress; "
             + (f"{data['simulations']:,} simulations" if data["simulations"] else "decided: exact, nothing simulated")
             + ("" if data["points"] == FIDE_POINTS.label else f"; {data['points']} scoring (win-draw-loss)")]
    tb = bool(data["tiebreaks"])
    head = f"{'player':<28} {'score':>5} {'max':>5} {'exp':>5} {'first':>6}" + (f" {'winner':>6}" if tb else "") + \
        f" {'top 3':>6}  needs"
    lines.append(head)
    for p in data["players"]:
        def pct(x: float | None) -> str:
            return "   -  " if x is None else f"{100 * x:5.1f}%"
        needs = "-" if p["needs"] is None else f"{p['needs']:g}"
        row = f"{p['name'][:28]:<28} {p['score']:>5g} {p['max_score'] or 0:>5g} {p['expected_score'] or 0:>5.2f} " \
              f"{pct(p['p_first'])}" + (f" {pct(p['p_winner'])}" if tb else "") + f" {pct(p['p_top3'])}  {needs}"
        lines.append(row)
    lines += [f"note: {n}" for n in data["notes"]]
    return "\n".join(lines)


def chances_by_round(games: list[GameRecord], event: EventConfig, seed: int | None = 0) -> dict[str, Any]:
    """Each player's chance of first before round 1 and after each round played (the report's chart).

    ``{"note": why}`` when the games cannot be forecast (a Swiss of unknown length, fewer than two players), so
    the page can say it.
    """
    records = [r for r in games if r.white_key != r.black_key and r.score is not None]
    params = load_params()
    try:
        full = state_of(records, event, event.format or None, event.rounds or None, params, "?")
    except ForecastError as exc:
        return {"note": str(exc)}
    played = sorted({rnd for r in records if (rnd := _round(r.round)) is not None})
    if not played:
        return {"note": "the games carry no round numbers"}
    names = list(full.state.players)
    series: dict[str, list[float]] = {n: [] for n in names}
    sims = max(1000, min(5000, 1_000_000 // max(len(names), 1)))
    rounds = [0, *played]
    for upto in rounds:
        kept = [r for r in records if (_round(r.round) or 0) <= upto]
        # every player of the event from the start: their first games add them, the ratings are all known
        read = state_of(kept, event, full.state.format, full.state.rounds, params, "?") if len(kept) else None
        if read is None:
            st = dataclasses.replace(full.state, results=[], byes=[], ongoing=[], rounds_played=0)
        else:
            st = read.state
            missing = [n for n in names if n not in st.players]
            if missing:  # players yet to play: in from the start
                st = dataclasses.replace(st, players=[*st.players, *missing],
                                         ratings=[*st.ratings, *(full.state.ratings[names.index(n)] for n in missing)])
        try:
            f = simulate(st, sims, seed=seed, params=params)
        except StateError as exc:
            return {"note": str(exc)}
        got = {p.name: p.p_first for p in f.players}
        for n in names:
            series[n].append(round(got.get(n, 0.0), 4))
    return {"format": full.state.format, "rounds": rounds, "simulations": sims, "points": full.state.points.label,
            "players": series, "notes": full.notes}
