"""The sans-I/O live core without an engine or a network: events in, effects out.

Analyses are made up deterministically from the position (as tests/fake_uci.py
does), so every test can compare the core's estimates with a batch of the
same moves scored in order.
"""

from __future__ import annotations

import dataclasses
import random
import sys
import zlib
from dataclasses import dataclass, field

import chess
import pytest

import livemon.live.core as core_module
from livemon.faces.web import codec
from livemon.live.core import LiveCore, engine_strength
from livemon.live.effects import (
    Analyse,
    DeleteGame,
    DeleteMoves,
    Effect,
    Log,
    Preview,
    Publish,
    RefreshTTT,
    StoreGame,
    StoreMove,
    StoreResult,
)
from livemon.live.estimator import Estimator
from livemon.live.messages import (
    BoardRemoved,
    BoardState,
    FeedError,
    GameInfo,
    GameResult,
    GameRollback,
    GameWithdrawn,
    MoveEvent,
    PlayerEstimate,
    PlayerRemoved,
    ScreeningNumbers,
    ScreeningRemoved,
    TTTRating,
)
from livemon.live.lifecycle import GameState
from livemon.live.shelf import Shelf
from livemon.live.values import COMMENTS_PROFILE, PositionAnalysis, position_key

PROFILE = "Fake 1.0 depth=8 multipv=3"
QUICK = "Fake 1.0 depth=4 multipv=3"
OPENING = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5"]


def analysis_of(board: chess.Board, salt: str = "", spread: int = 30, step: int = 9) -> PositionAnalysis:
    """A made-up MultiPV analysis that depends on the position alone (and ``salt``: another profile): a best
    score within ±``spread`` cp, each further candidate ``step`` cp worse."""
    epd = board.epd()  # once: writing it costs more than the rest
    score = zlib.crc32(f"{salt}{epd}".encode()) % (2 * spread + 1) - spread
    sign = 1 if board.turn == chess.WHITE else -1
    moves = sorted(board.legal_moves, key=lambda m: zlib.crc32(f"{salt}{epd} {m.uci()}".encode()))[:3]
    candidates = tuple((m.uci(), score - sign * step * k) for k, m in enumerate(moves))
    return PositionAnalysis(score, candidates, 8, 1000)


def moves_of(game_id: str, ucis: list[str], start: int = 1) -> list[MoveEvent]:
    board = chess.Board()
    out = []
    for ply, uci in enumerate(ucis, 1):
        move = chess.Move.from_uci(uci)
        if ply >= start:
            out.append(MoveEvent(game_id, ply, uci, board.san(move), board.fen()))
        board.push(move)
    return out


@dataclass
class Driver:
    """Applies effects like the monitor, synchronously: a dict store, a list hub, analyses on demand."""

    core: LiveCore
    pending: list[Analyse] = field(default_factory=list)
    previews: list[Preview] = field(default_factory=list)
    published: list[object] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    games: dict[str, GameInfo] = field(default_factory=dict)
    moves: dict[tuple[str, int], MoveEvent] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    ttt_wanted: int = 0

    def apply(self, effects: list[Effect]) -> None:
        for e in effects:
            if isinstance(e, Analyse):
                self.pending.append(e)
            elif isinstance(e, Preview):
                self.previews.append(e)
            elif isinstance(e, Publish):
                self.published.append(e.message)
            elif isinstance(e, StoreGame):
                self.games[e.info.game_id] = e.info
            elif isinstance(e, StoreMove):
                self.moves[(e.move.game_id, e.move.ply)] = e.move
            elif isinstance(e, DeleteMoves):
                for k in [k for k in self.moves if k[0] == e.game_id and k[1] >= e.from_ply]:
                    del self.moves[k]
                self.results.pop(e.game_id, None)  # as Store.delete_moves: the result is reset
            elif isinstance(e, DeleteGame):
                self.games.pop(e.game_id, None)
                self.results.pop(e.game_id, None)
                for k in [k for k in self.moves if k[0] == e.game_id]:
                    del self.moves[k]
            elif isinstance(e, StoreResult):
                self.results[e.game_id] = e.result
            elif isinstance(e, RefreshTTT):
                self.ttt_wanted += 1
            elif isinstance(e, Log):
                self.logs.append(e.text)

    def feed(self, *msgs: object) -> None:
        for m in msgs:
            self.apply(self.core.handle(m))  # type: ignore[arg-type]

    def answer(self, order: str = "fifo", seed: int = 0) -> int:
        """Answer every pending analysis (in ``order``: fifo, newest first as the pool, or shuffled)."""
        n = 0
        while self.pending:
            batch, self.pending = self.pending, []
            if order == "priority":
                batch.sort(key=lambda r: r.priority)
            elif order == "shuffle":
                random.Random(seed).shuffle(batch)
            for r in batch:
                # under the comments profile (no engine) the answers stand for the positions without a comment
                profile = None if self.core.profile == COMMENTS_PROFILE else PROFILE
                self.apply(self.core.analysed(r, analysis_of(r.board), profile))
                n += 1
        return n

    def tick(self) -> None:
        """The timer, and the work it leaves (a runner does it a unit a step)."""
        self.apply(self.core.tick())
        self.apply(self.core.work())

    def stored(self) -> list[tuple[GameInfo, str, list[MoveEvent]]]:
        return [(info, self.results.get(gid, "*"), [self.moves[k] for k in sorted(self.moves) if k[0] == gid])
                for gid, info in self.games.items()]


def new_core(**kw: object) -> LiveCore:
    return LiveCore(profile=PROFILE, **kw)  # type: ignore[arg-type]


def report_of(core: LiveCore) -> dict:
    """The core's games and event blocks and every player's value as analyse --json and the players channel carry
    it (the web codec's JSON: a posterior updated in another order differs in its last bits, not on the wire)."""
    return {**core.estimator.report(), "players": [codec.report_entry(p) for p in core.player_estimates()]}


def batch_report(games: dict[str, tuple[GameInfo, list[str], str]], tick: bool = False) -> dict:
    """What the same games give when fed in order and answered at once (the reference); ``tick``: then the
    timer's figures (Algorithm 3's engine strength, Algorithm 2), as a live core's after its timer."""
    d = Driver(new_core())
    for gid, (info, ucis, result) in games.items():
        d.feed(info, *moves_of(gid, ucis))
        d.answer()
        if result != "*":
            d.feed(GameResult(gid, result, len(ucis)))
    if tick:
        d.tick()
    return report_of(d.core)


INFO = GameInfo("g1", white="White A", black="Black B", white_elo=2400, black_elo=2300, event="Test")


def test_moves_are_stored_before_analysis_and_scored_when_answered():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:4]))
    assert len(d.moves) == 4 and d.games["g1"] == INFO
    assert [r.index for r in d.pending] == [0, 1, 2, 3, 4]  # each position once; the start with ply 1
    assert [r.priority for r in d.pending] == sorted((r.priority for r in d.pending), reverse=True)  # newest first
    assert d.core.estimator.games["g1"].plies == {}
    d.answer()
    assert sorted(d.core.estimator.games["g1"].plies) == [1, 2, 3, 4]
    estimates = [m for m in d.published if isinstance(m, PlayerEstimate)]
    assert {e.name for e in estimates} == {"White A", "Black B"} and len(estimates) == 4
    board = [m for m in d.published if isinstance(m, BoardState)][-1]
    assert board.ply == 4 and None not in board.evals and board.evals[-1] == analysis_of(chess.Board(board.fen)).score


@pytest.mark.parametrize("order", ["priority", "shuffle"])
def test_analyses_in_any_order_give_the_batch_figures(order):
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING))
    d.answer(order, seed=3)
    assert report_of(d.core) == batch_report({"g1": (INFO, OPENING, "*")})


def test_duplicates_are_dropped_and_counted():
    d = Driver(new_core())
    moves = moves_of("g1", OPENING[:6])
    d.feed(INFO, *moves)
    d.answer()
    before = len(d.published)
    d.feed(*moves[2:])  # a feed restart re-sends what is stored
    assert d.core.counters.duplicates == 4 and len(d.published) == before and not d.pending
    assert d.core.counters.moves == 6


def test_a_gap_is_logged_and_dropped_until_the_missing_ply_comes():
    d = Driver(new_core())
    moves = moves_of("g1", OPENING[:6])
    d.feed(INFO, *moves[:2], moves[3])  # ply 3 missing
    assert d.core.counters.gaps == 1 and ("g1", 4) not in d.moves
    assert any("ply 4 arrived after ply 2" in line for line in d.logs)
    d.feed(*moves[2:])  # the feed re-sends in order
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, OPENING[:6], "*")})


@pytest.mark.parametrize("bad, reason", [
    ({"uci": "e2e5"}, "illegal move e2e5"),
    ({"uci": "zz"}, "bad move 'zz'"),
    ({"uci": "a1a1"}, "bad move 'a1a1'"),
    ({"uci": "e1g1"}, "illegal move e1g1"),
])
def test_illegal_or_garbled_moves_are_one_line_and_nothing_else(bad, reason):
    d = Driver(new_core())
    moves = moves_of("g1", OPENING[:2])
    d.feed(INFO, *moves)
    wrong = dataclasses.replace(moves_of("g1", OPENING[:3])[2], **bad)
    d.feed(wrong)
    assert d.core.counters.illegal == 1 and ("g1", 3) not in d.moves
    assert [line for line in d.logs if reason in line] == [f"game g1: {reason} at ply 3; ignored"]
    d.feed(moves_of("g1", OPENING[:3])[2])  # the right move is taken afterwards
    assert ("g1", 3) in d.moves


def test_a_bad_fen_on_a_new_game_is_one_line():
    d = Driver(new_core())
    d.feed(MoveEvent("g9", 1, "e2e4", "e4", "not a fen"))
    assert d.core.counters.illegal == 1 and not d.moves
    assert len(d.logs) == 1 and "bad FEN" in d.logs[0]


def test_a_correction_rolls_back_estimates_store_and_board():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:8]))
    d.answer()
    d.feed(GameResult("g1", "1-0", 8))
    corrected = OPENING[:5] + ["g8f6", "e1g1", "f6e4"]
    d.feed(*moves_of("g1", corrected, start=6))  # ply 6 differs: the game rolls back to it
    assert d.core.counters.rollbacks == 1
    assert [k[1] for k in sorted(d.moves)] == list(range(1, 9))
    assert d.moves[("g1", 6)].uci == "g8f6"
    # a corrected finished game keeps its result: the feed does not send it again
    assert d.core.results["g1"] == d.results["g1"] == "1-0" and d.core.estimator.games["g1"].result == "1-0"
    assert [m for m in d.published if isinstance(m, BoardState)][-1].result == "1-0"
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, corrected, "1-0")})


@pytest.mark.parametrize("at", [1, 2, 9, 30, 39])
def test_a_live_game_keeps_a_few_positions_and_a_correction_rebuilds_the_one_it_goes_on_from(at):
    """A live game kept a board and an analysis per ply until it finished (tens of MB a minute at
    1,000 boards). Now only positions next to an unscored ply and the newest are kept; a correction at any
    ply rebuilds its position (and asks the cache for its analysis again) and gives the batch's figures."""
    ucis = random_game(7, 40)
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", ucis))
    d.answer()
    game = d.core.games["g1"]
    assert not game.life.released and len(game.boards) == 41
    assert sum(b is not None for b in game.boards) <= 2 and len(game.analyses) <= 2
    assert report_of(d.core) == batch_report({"g1": (INFO, ucis, "*")})
    board = chess.Board()
    for u in ucis[:at - 1]:
        board.push_uci(u)
    other = next(m.uci() for m in board.legal_moves if m.uci() != ucis[at - 1])
    board.push_uci(other)
    rest = [other] + [m.uci() for m in list(board.legal_moves)[:1]]  # a different line from ply ``at`` on
    corrected = ucis[:at - 1] + rest
    d.feed(*moves_of("g1", corrected, start=at))
    assert d.core.counters.rollbacks == 1
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, corrected, "*")})
    final = chess.Board()
    for u in corrected:
        final.push_uci(u)
    assert game.plies == len(corrected) and game.fen == final.fen()


def test_an_explicit_rollback_and_a_late_answer_for_a_withdrawn_position():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:6]))
    late = [r for r in d.pending if r.index == 6]
    d.pending = [r for r in d.pending if r.index != 6]
    d.answer()
    d.feed(GameRollback("g1", 5))
    assert ("g1", 5) not in d.moves and ("g1", 4) in d.moves
    d.apply(d.core.analysed(late[0], analysis_of(late[0].board), PROFILE))  # came back after the rollback
    assert sorted(d.core.estimator.games["g1"].plies) == [1, 2, 3, 4]
    d.feed(*moves_of("g1", OPENING[:6], start=5))
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, OPENING[:6], "*")})


def test_results_are_stored_published_and_ask_for_a_ttt_refresh():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:4]), GameResult("g1", "1/2-1/2", 4), GameResult("nope", "1-0", 0))
    assert d.results == {"g1": "1/2-1/2"} and d.ttt_wanted == 1  # a result of an unknown game is dropped
    assert [m for m in d.published if isinstance(m, BoardState)][-1].result == "1/2-1/2"
    assert list(d.core.finished) == [(INFO, "1/2-1/2")]
    d.apply(d.core.ttt_ratings([TTTRating("White A", 0.5, 0.9, 2500.0, 180.0, 1)]))
    assert d.core.owed  # the rating and its player's estimate: owed work
    d.apply(d.core.work())
    assert not d.core.owed
    last = [m for m in d.published if isinstance(m, PlayerEstimate) and m.name == "White A"][-1]
    assert last.ttt_mu == 2500.0 and d.core.counters.ttt_refreshes == 1


def test_feed_errors_are_counted_and_logged():
    d = Driver(new_core())
    d.feed(FeedError("f", "HTTP 500"))
    assert d.core.counters.feed_errors == 1 and d.logs == ["feed f: HTTP 500"]


def test_resume_from_persisted_state_persists_nothing_and_ends_equal():
    first = Driver(new_core())
    other = GameInfo("g2", white="C", black="White A", white_elo=2200, black_elo=2400, event="Test")
    first.feed(INFO, other, *moves_of("g1", OPENING[:7]), *moves_of("g2", OPENING[:5]), GameResult("g2", "0-1", 5))
    cache = {position_key(r.board): analysis_of(r.board) for r in first.pending[:9]}  # analysed before the kill
    # a restart: a new core from what the store holds, the cache answering what was analysed
    second = Driver(new_core())
    effects = second.core.resume(first.stored())
    assert not [e for e in effects if isinstance(e, (StoreGame, StoreMove, StoreResult, DeleteMoves))]
    assert not [e for e in effects if isinstance(e, Preview)]
    second.apply(effects)
    asked = {position_key(r.board) for r in second.pending}
    assert cache.keys() <= asked  # the same positions are asked again: the pool's cache answers them
    second.answer()
    first.answer()
    assert report_of(second.core) == report_of(first.core)
    assert second.core.results == {"g2": "0-1"} and second.core.counters.moves == 12


def test_an_analysis_of_another_profile_never_reaches_the_estimator():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:4]))
    for r in d.pending:
        d.apply(d.core.analysed(r, analysis_of(r.board, salt="quick"), QUICK))
    assert d.core.estimator.games["g1"].plies == {} and d.core.counters.foreign_profile == 5
    assert all("refused" in line for line in d.logs)
    d.answer()  # the pinned profile's answers
    assert report_of(d.core) == batch_report({"g1": (INFO, OPENING[:4], "*")})


def test_a_preview_feeds_the_eval_bar_only():
    d = Driver(new_core(previews=True))
    d.feed(INFO, *moves_of("g1", OPENING[:3]))
    assert [p.index for p in d.previews] == [1, 2, 3]
    newest = d.previews[-1]
    d.apply(d.core.previewed(d.previews[0], analysis_of(d.previews[0].board, "q")))  # stale: not the newest
    quick = analysis_of(newest.board, "q")
    d.apply(d.core.previewed(newest, quick))
    board = [m for m in d.published if isinstance(m, BoardState)][-1]
    assert board.eval_cp == quick.score and board.evals[:-1] == (None,) * 3
    assert d.core.estimator.games["g1"].plies == {}  # no estimate from a preview
    d.answer()
    board = [m for m in d.published if isinstance(m, BoardState)][-1]
    assert board.eval_cp == analysis_of(newest.board).score  # the pinned profile's value replaces it
    assert report_of(d.core) == batch_report({"g1": (INFO, OPENING[:3], "*")})


def test_engine_failure_leaves_the_position_unvalued_and_is_counted():
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:2]))
    failed = next(r for r in d.pending if r.index == 2)
    d.pending.remove(failed)
    d.apply(d.core.analysed(failed, None, error="engine died"))
    d.answer()
    assert d.core.counters.failed_positions == 1 and "position 2 not analysed: engine died" in d.logs[0]
    assert sorted(d.core.estimator.games["g1"].plies) == [1]


def test_engine_strength_precedence_is_one_rule():
    est = Estimator()
    est.add_game(GameInfo("g", white="A", black="B", white_elo=2000, black_elo=2100))
    assert engine_strength(2900.0, 3000.0, est) == (2900.0, "given")
    assert engine_strength(None, 3000.0, est) == (3000.0, "calibration")
    assert engine_strength(None, None, est) == (None, "none")  # no rated player has moved yet
    core = new_core(calibrated_strength=3000.0)
    assert (core.strength, core.strength_source) == (3000.0, "calibration")
    d = Driver(core)
    d.feed(INFO, *moves_of("g1", OPENING[:4]))
    d.answer()
    d.tick()
    assert core.strength == 3000.0  # a calibrated strength is not replaced by Algorithm 3
    free = Driver(new_core())
    free.feed(INFO, *moves_of("g1", OPENING[:4]))
    free.answer()
    free.tick()
    assert free.core.strength_source == "algorithm 3" and free.core.strength == free.core.estimator.engine_strength()
    refreshed = {m.name: m for m in free.published if isinstance(m, PlayerEstimate)}
    shown = [m.perceived_elo for m in refreshed.values()]
    assert any(x is not None for x in shown)  # the tick republished the estimates with the new strength


def test_a_chess960_game_keeps_every_ply_castling_included():
    """A Chess960 start is read in Chess960 mode; no ply is dropped."""
    start = "1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w KQkq - 0 1"
    board = chess.Board(start, chess960=True)
    events = []
    for ply, san in enumerate(["O-O", "O-O", "e4", "e5", "Rfe1", "Rfe8"], 1):
        move = board.parse_san(san)
        events.append(MoveEvent("c960", ply, move.uci(), san, board.fen()))  # as a feed sends it
        board.push(move)
    assert not chess.Board(start).is_legal(chess.Move.from_uci("g1h1"))  # read as standard chess: refused
    d = Driver(new_core())
    d.feed(GameInfo("c960", white="A", black="B"), *events)
    asked = [r.board for r in d.pending]
    assert all(b.chess960 for b in asked)  # the engine is asked in Chess960 mode (UCI_Chess960)
    d.answer()
    assert d.core.counters.illegal == 0 and d.core.counters.gaps == 0 and not d.logs
    plies = d.core.estimator.games["c960"].plies
    assert sorted(plies) == [1, 2, 3, 4, 5, 6] and plies[1].san == "O-O" and plies[2].uci == "g8h8"
    assert [m for m in d.published if isinstance(m, BoardState)][-1].fen == board.fen()


def test_a_withdrawn_game_leaves_no_phantom_plies_or_players():
    """A renamed player re-listed under a new game id; the old game is withdrawn."""
    d = Driver(new_core())
    other = GameInfo("g2", white="White A", black="C", white_elo=2400, black_elo=2200, event="Test")
    renamed = GameInfo("g1-renamed", white="White A", black="Black Bee", white_elo=2400, black_elo=2300, event="Test")
    d.feed(INFO, other, *moves_of("g1", OPENING[:6]), *moves_of("g2", OPENING[:4]), GameResult("g1", "1-0", 6))
    d.feed(renamed, *moves_of("g1-renamed", OPENING[:6]), GameResult("g1-renamed", "1-0", 6))
    d.answer()
    assert d.core.estimator.players["White A"].histogram.n == 3 + 2 + 3  # counted twice: the phantom
    d.apply(d.core.withdraw("g1", "not in the round any more"))
    assert "g1" not in d.games and not [k for k in d.moves if k[0] == "g1"]  # the store forgets it
    assert "Black B" not in d.core.estimator.players  # the old name played nowhere else
    assert d.core.estimator.players["White A"].histogram.n == 3 + 2  # once per real move
    assert list(d.core.finished) == [(renamed, "1-0")] and d.ttt_wanted == 3
    assert d.core.counters.withdrawn == 1 and "game g1 withdrawn: not in the round any more" in d.logs
    assert [m for m in d.published if isinstance(m, PlayerEstimate)][-1].name == "White A"
    reference = batch_report({"g2": (other, OPENING[:4], "*"), "g1-renamed": (renamed, OPENING[:6], "1-0")})
    report = report_of(d.core)
    assert report["players"] == reference["players"] and len(report["games"]) == 2
    assert d.core.withdraw("g1") == []  # once


def test_the_store_forgets_a_withdrawn_game_so_a_restart_has_no_phantom():
    from livemon.io.store import Store

    core = new_core()
    with Store(":memory:") as store:
        def apply(effects: list[Effect]) -> None:
            for e in effects:
                if isinstance(e, StoreGame):
                    store.games.put(e.info)
                elif isinstance(e, StoreMove):
                    store.games.put_move(e.move)
                elif isinstance(e, DeleteGame):
                    store.games.delete(e.game_id)

        for m in (INFO, *moves_of("g1", OPENING[:4]), GameInfo("g2", white="C", black="D"), *moves_of("g2", OPENING[:2])):
            apply(core.handle(m))
        apply(core.withdraw("g1"))
        assert [(info.game_id, len(moves)) for info, _, moves in store.games.load()] == [("g2", 2)]


def test_a_feed_withdrawal_tells_every_face_what_went():
    """GameWithdrawn from a feed -> withdraw: the board, the player left with no game and their screening row
    are removed (one message each); a player still playing elsewhere is re-published; nothing else."""
    from livemon.config import ScreeningConfig
    from livemon.live.screener import Screener
    from tests.test_screener import CAL

    d = Driver(new_core(screener=Screener(ScreeningConfig(book_moves=0, min_positions=1), CAL)))
    other = GameInfo("g2", white="White A", black="C", white_elo=2400, black_elo=2200, event="Test")
    d.feed(INFO, other, *moves_of("g1", OPENING[:8]), *moves_of("g2", OPENING[:4]))
    d.answer()
    rows = {(m.player, m.event) for m in d.published if isinstance(m, ScreeningNumbers)}
    assert ("Black B", "Test") in rows
    d.published.clear()
    d.feed(GameWithdrawn("g1", "no longer listed (3 whole reads in a row, over 10 s)", "hall"))
    assert d.logs[-1] == "game g1 withdrawn: feed hall: no longer listed (3 whole reads in a row, over 10 s)"
    reason = "feed hall: no longer listed (3 whole reads in a row, over 10 s)"
    removed = [m for m in d.published if isinstance(m, (BoardRemoved, PlayerRemoved, ScreeningRemoved))]
    assert removed == [BoardRemoved("g1", reason), ScreeningRemoved("Black B", "Test", reason),
                       PlayerRemoved("Black B", reason)]
    assert [m.name for m in d.published if isinstance(m, PlayerEstimate)] == ["White A"]
    assert [m.moves for m in d.published if isinstance(m, PlayerEstimate)] == [2]  # g2's 2; g1's 4 are gone
    assert [(m.player, m.positions) for m in d.published if isinstance(m, ScreeningNumbers)] == [
        ("White A", d.core.screener.numbers(("White A", "Test")).positions)]  # type: ignore[union-attr]
    assert "g1" not in d.games and d.core.counters.withdrawn == 1
    d.published.clear()
    d.feed(GameWithdrawn("g1", "again", "hall"), GameWithdrawn("nope", "never seen", "hall"))
    assert d.published == [] and d.core.counters.withdrawn == 1


def test_a_finished_game_releases_its_positions_and_a_later_correction_still_gives_the_batch_result():
    """Once finished and scored, a game keeps no boards, analyses or FENs of its moves;
    a correction rebuilds them from the moves (the cache answers the one analysis needed) and ends as a batch."""
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:10]))
    d.answer()
    game = d.core.games["g1"]
    assert len(game.boards) == 11 and game.analyses and game.life.state is GameState.LIVE  # no result yet: all kept
    d.feed(GameResult("g1", "1-0", 10))
    assert game.life.state is GameState.SETTLED and game.boards == [] and game.analyses == {} and game.rules == []
    assert all(m.fen_before == "" for m in game.moves) and len(game.evals) == 11
    board = [m for m in d.published if isinstance(m, BoardState)][-1]
    assert board.ply == 10 and board.fen == d.core.board_state("g1").fen and board.result == "1-0"
    before = report_of(d.core)
    d.feed(*moves_of("g1", OPENING[:10]))  # the feed re-sends the finished game: duplicates, nothing rebuilt
    assert game.life.released and d.core.counters.duplicates == 10
    assert report_of(d.core) == before
    corrected = OPENING[:6] + ["b5c6", "d7c6", "e1g1", "f7f6"]
    d.feed(*moves_of("g1", corrected, start=7))
    assert game.life.state is GameState.REOPENED and len(game.boards) == 11
    assert [r.index for r in d.pending][0] == 6  # the position the game goes on from, asked again
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, corrected, "1-0")})
    assert game.life.state is GameState.REOPENED  # a reopened game settles again at the timer
    d.tick()
    assert game.life.state is GameState.SETTLED and report_of(d.core) == batch_report({"g1": (INFO, corrected, "1-0")}, tick=True)


def test_coalesced_updates_go_out_once_per_player_and_board_and_equal_the_others():
    """coalesce=True holds the estimates of a burst until flush(): one message per player and board, the same
    figures as a core that publishes after every ply."""
    eager, held = Driver(new_core()), Driver(new_core(coalesce=True))
    for d in (eager, held):
        d.feed(INFO, *moves_of("g1", OPENING))
        d.answer()
    players = [m for m in held.published if isinstance(m, PlayerEstimate)]
    assert players == [] and held.core.held
    held.apply(held.core.flush())
    flushed = [m for m in held.published if isinstance(m, PlayerEstimate)]
    assert sorted(m.name for m in flushed) == sorted({INFO.white, INFO.black}) and not held.core.held
    last = {m.name: m for m in eager.published if isinstance(m, PlayerEstimate)}
    for m in flushed:  # the live c posterior re-grids when summarised, so its figures agree to rounding only
        c_fields = ("c_mean", "c_sd", "c_cr95", "c_elo", "c_elo_cr95")
        other = last[m.name]
        assert {k: v for k, v in vars(m).items() if k not in c_fields} == \
            {k: v for k, v in vars(other).items() if k not in c_fields}
        assert m.c_mean == pytest.approx(other.c_mean, abs=1e-4) and m.c_sd == pytest.approx(other.c_sd, abs=1e-4)
    assert held.core.board_state("g1") == eager.core.board_state("g1")
    assert report_of(held.core) == report_of(eager.core)


def random_game(seed: int, plies: int, start: list[str] | None = None) -> list[str]:
    """A reproducible game of random legal moves (shorter if it ends), from the moves ``start`` if given."""
    rng, board, out = random.Random(seed), chess.Board(), list(start or ())
    for uci in out:
        board.push_uci(uci)
    while len(out) < plies and not board.is_game_over():
        move = rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        out.append(move.uci())
        board.push(move)
    return out


def four_games_of_40_plies(d: Driver) -> tuple[list[GameInfo], dict[str, list[str]]]:
    """Four rated games (60 plies each known) fed up to ply 40 and answered; their infos and every move."""
    infos = [GameInfo(f"g{i}", white=f"W{i}", black=f"B{i}", white_elo=2000 + 100 * i, black_elo=2050 + 100 * i,
                      event="Test") for i in range(4)]
    games = {info.game_id: random_game(i, 60) for i, info in enumerate(infos)}
    d.feed(*infos, *(m for g, ucis in games.items() for m in moves_of(g, ucis[:40])))
    d.answer()
    return infos, games


def test_the_algorithm2_timer_republishes_only_players_whose_shown_figure_moved():
    """Algorithm 2 is one solve over the event: after a move in one game, the timer re-publishes the players
    whose event figure moved by a shown Elo point (a tick re-sent every estimate to every client).
    With r̄_e fixed (given or calibrated); under Algorithm 3 every perceived Elo moves with it."""
    d = Driver(new_core(given_strength=2500.0))
    infos, games = four_games_of_40_plies(d)
    d.tick()
    before = dict(d.core.event_perceived)
    assert len(before) == 8
    d.published.clear()
    d.tick()
    assert d.published == []  # nothing moved: nothing re-sent
    d.feed(*moves_of("g0", games["g0"][:60], start=41))
    d.answer()
    d.published.clear()
    d.tick()
    after = d.core.event_perceived
    moved = {n for n in after if round(after[n]) != round(before[n])}
    assert moved and len(moved) < len(after)  # some moved, not all
    assert {m.name for m in d.published if isinstance(m, PlayerEstimate)} == moved


def test_the_timers_work_is_owed_and_done_a_unit_at_a_time_each_estimate_built_when_its_unit_comes(monkeypatch):
    """tick() leaves its work owed (:meth:`LiveCore.work`): WORK_PAIRS pairs' d_ij a unit, then the solve, then
    WORK_PLAYERS estimates a unit, each built from the state of its moment (the runner runs other events between
    units; 2,000 estimates took ~100 ms at once). The estimates are those of the whole work done at once."""
    import livemon.live.core as core_module

    monkeypatch.setattr(core_module, "WORK_PAIRS", 2)
    d = Driver(new_core())  # no r̄_e given: Algorithm 3 moves, so every player is re-published
    infos = [GameInfo(f"g{i}", white=f"W{i}", black=f"B{i}", white_elo=2000 + 50 * i, black_elo=2020 + 50 * i,
                      event="Test") for i in range(6)]
    d.feed(*infos, *(m for i, info in enumerate(infos) for m in moves_of(info.game_id, random_game(i, 30))))
    d.answer()
    reference = Driver(new_core())
    reference.feed(*infos, *(m for i, info in enumerate(infos) for m in moves_of(info.game_id, random_game(i, 30))))
    reference.answer()
    assert reference.core.tick() == [] and reference.core.owed
    whole = [e.message for e in reference.core.work() if isinstance(e, Publish)]
    assert not reference.core.owed
    assert len(d.core.estimator.stale_pairs()) == 6  # every pair's d_ij to work out (six games, six pairs)
    assert d.core.tick() == []
    assert [d.core.work(1) for _ in range(3)] == [[], [], []]  # Algorithm 1, two pairs a unit, before the solve
    assert d.core.estimator.stale_pairs() == [] and d.core.event_perceived == {}
    assert d.core.work(1) == [] and d.core.event_perceived  # the solve
    first = d.core.work(1)
    assert len(first) == 5 and all(isinstance(e, Publish) for e in first)
    d.feed(*moves_of("g0", random_game(0, 31), start=31))  # a move between units: a later estimate sees it
    d.answer()
    rest = [e.message for e in d.core.work()]
    assert not d.core.owed
    names = [e.message.name for e in first] + [m.name for m in rest]
    assert names == sorted(m.name for m in whole) and len(names) == 12  # sorted: B0-B5 go first, W0 in unit 2
    ref = {m.name: m for m in whole}
    assert first[0].message == ref["B0"]  # built before the move: as the reference
    w0 = next(m for m in rest if m.name == "W0")
    assert w0.moves == ref["W0"].moves + 1  # built after White's 31st ply: it counts it


def test_an_estimate_a_flush_publishes_is_not_owed_again_and_a_ttt_refresh_owes_rating_and_estimate():
    """A player whose estimate the flush publishes after the timer's solve is not published again by the owed
    work (the flush's is as new); a TTT rating is owed with its player's estimate, published once each, and a
    player withdrawn before their unit is skipped."""
    d = Driver(new_core(coalesce=True))
    infos = [GameInfo(f"g{i}", white=f"W{i}", black=f"B{i}", white_elo=2000 + 50 * i, black_elo=2020 + 50 * i,
                      event="Test") for i in range(4)]
    d.feed(*infos, *(m for i, info in enumerate(infos) for m in moves_of(info.game_id, random_game(i, 20))))
    d.answer()
    d.apply(d.core.flush())
    d.apply(d.core.tick())
    while d.core.event_perceived == {}:  # the pairs, then the solve
        d.apply(d.core.work(1))
    d.published.clear()
    d.feed(*moves_of("g0", random_game(0, 21), start=21))  # W0 moves: its estimate held for the flush
    d.answer()
    d.apply(d.core.flush())
    d.apply(d.core.work())
    names = [m.name for m in d.published if isinstance(m, PlayerEstimate)]
    assert names.count("W0") == 1 and sorted(set(names)) == sorted(names)  # W0 by the flush, none twice
    assert len(names) == 8  # every player: Algorithm 3's strength moved every perceived Elo
    d.published.clear()
    ratings = [TTTRating(name, 0.1, 0.9, 2100.0, 150.0, 3) for name in ("W1", "B1", "W2")]
    assert d.core.ttt_ratings(ratings) == [] and d.core.ttt["W1"] == ratings[0]  # kept at once
    d.feed(GameWithdrawn("g2", "a wrong pairing"))  # W2 goes before its unit comes
    d.published.clear()
    d.apply(d.core.work())
    assert [(type(m).__name__, m.name) for m in d.published] == [
        ("TTTRating", "W1"), ("PlayerEstimate", "W1"), ("TTTRating", "B1"), ("PlayerEstimate", "B1")]
    assert not d.core.owed


class _NoWalk(dict):
    """A results dict that fails the test if anything walks it."""

    def __iter__(self):
        raise AssertionError("walked every result")

    def items(self):
        raise AssertionError("walked every result")

    def keys(self):
        raise AssertionError("walked every result")

    def values(self):
        raise AssertionError("walked every result")


def test_the_timer_settles_only_games_corrected_since_they_settled():
    """A tick looks at the games reopened or rolled back since they settled, not every result."""
    d = Driver(new_core())
    games = {f"g{i}": random_game(10 + i, 30) for i in range(4)}
    for gid, ucis in games.items():
        d.feed(GameInfo(gid, white=f"W {gid}", black=f"B {gid}", event="Test"), *moves_of(gid, ucis))
        d.answer()
        d.feed(GameResult(gid, "1-0", len(ucis)))
    assert all(g.life.released for g in d.core.games.values()) and not d.core._recompact
    d.feed(GameRollback("g2", 21))  # cut back to ply 20
    assert list(d.core._recompact) == ["g2"] and d.core.games["g2"].life.state is GameState.REOPENED
    d.core._results = _NoWalk(d.core._results)  # noqa: SLF001 - the test is that tick walks no result
    d.tick()  # finished and every ply scored: settled again, without walking the results
    assert d.core.games["g2"].life.released and not d.core._recompact
    d.tick()
    assert report_of(d.core)["games"][2]["plies"] == 20


def test_algorithm2_and_3_are_not_solved_again_until_something_changes(monkeypatch):
    """The timer's Algorithm 2 (and 3) are cached by the estimator's change count; a pair's d_ij by its players'
    histograms. The figures equal a fresh estimator's over the same plies, bit for bit."""
    import livemon.live.estimator as est_mod

    calls: list[int] = []
    real = est_mod.algorithm1

    def counted(x, y):
        calls.append(1)
        return real(x, y)

    monkeypatch.setattr(est_mod, "algorithm1", counted)
    d = Driver(new_core())  # neither given nor calibrated: Algorithm 3 too
    infos, games = four_games_of_40_plies(d)
    d.tick()
    assert len(calls) == 4 and d.core.strength_source == "algorithm 3"
    first = dict(d.core.event_perceived)
    d.tick()
    assert len(calls) == 4 and d.core.event_perceived == first  # nothing changed: nothing solved
    d.feed(*moves_of("g0", games["g0"][:60], start=41))
    d.answer()
    d.tick()
    assert len(calls) == 5  # only the pair whose histograms moved
    fresh = Estimator()
    for info in infos:
        fresh.add_game(info)
    for info in infos:
        for ply in sorted(d.core.estimator.games[info.game_id].plies):
            fresh.add_ply(d.core.estimator.games[info.game_id].plies[ply])
    monkeypatch.setattr(est_mod, "algorithm1", real)
    assert d.core.event_perceived == fresh.perceived_ratings()
    assert d.core.strength == fresh.engine_strength()


def _calibrated_core(eval_bound: float = 3.0, archive: Shelf | None = None) -> LiveCore:
    from livemon.config import ScreeningConfig
    from livemon.live.screener import Screener
    from livemon.rating.calibration import Calibration, ProfileCalibration

    perf = Calibration(a=-0.5, b=0.0005, n=200, elo_min=1400, elo_max=2800, r2=0.6, residual_sd=0.07, method="ml",
                       profile=PROFILE, cov_ab=(1e-4, -4e-8, 2e-11), tau=0.07, tau_game=0.15, book_moves=0,
                       eval_bound=3.0)
    c_map = Calibration(a=-1.0, b=0.001, n=30, elo_min=1800, elo_max=2800, r2=0.6, residual_sd=0.2, profile=PROFILE)
    core = new_core(screener=Screener(ScreeningConfig(min_positions=5, book_moves=0, eval_bound=eval_bound),
                                      ProfileCalibration(PROFILE, 3000.0, c_map), profile=PROFILE), archive=archive)
    core.estimator.c_map, core.estimator.perf_map = c_map, perf
    return core


@pytest.mark.parametrize("shelved", [False, True], ids=["in memory", "shelved"])
def test_finished_games_kept_compactly_publish_the_numbers_of_a_scratch_run(shelved):
    """The per-ply records a finished game leaves (kept compactly: shared strings, no
    copies; or on a shelf out of memory, as the monitor keeps them) give exactly the estimates, performance and
    screening figures of the same games scored from scratch, before and after a correction of a finished game."""
    from livemon.io.shelfdb import ShelfDB

    shelf = Shelf(ShelfDB()) if shelved else None
    names = ["W0", "B0", "W1", "B1"]
    infos = [GameInfo(f"g{i}", white=names[2 * (i // 2) + i % 2], black=names[2 * (i // 2) + 1 - i % 2],
                      white_elo=2400 - 50 * (i % 2), black_elo=2350 + 50 * (i % 2), event="Test") for i in range(4)]
    games = {info.game_id: random_game(20 + i, 70) for i, info in enumerate(infos)}
    live = Driver(_calibrated_core(archive=shelf))  # settled games archived there, as the monitor does
    for info in infos:  # game by game, each finished: compacted as it ends
        live.feed(info, *moves_of(info.game_id, games[info.game_id]))
        live.answer("shuffle", seed=len(info.game_id))
        live.feed(GameResult(info.game_id, "1/2-1/2", len(games[info.game_id])))
    assert all(g.life.state is (GameState.ARCHIVED if shelved else GameState.SETTLED) and not g.pending
               for g in live.core.games.values())
    kept = live.core.games["g1"].moves
    assert all(m.game_id == "g1" and m.fen_before == "" for m in kept)
    assert shelved or all(m.game_id is live.core.games["g1"].game_id for m in kept)  # one string, not one a move
    # the scored plies packed (no object per ply), in the estimator and, the same record, in the screener
    packs = [g.plies for g in live.core.estimator.games.values()]
    assert all(p.sealed and p.archived == shelved and len(p) == 70 for p in packs)
    assert shelf is None or len(shelf) == 8  # each game's plies and its moves with their evaluations
    if shelf is not None:
        assert all(g.moves.archived and not g.evals for g in live.core.games.values())
    track = live.core.screener.tracks[("W0", "Test")]  # type: ignore[union-attr]
    assert not track.used and not track.p0 and len(track.packed) == 2
    assert not any(t.excluded for t in live.core.screener.tracks.values())  # type: ignore[union-attr]
    logs = {seq: g.plies for g in live.core.estimator.games.values() for seq in [g.seq]}
    assert all(len(rec.used) == len(rec.p0) > 20 and rec.plies is logs[seq]  # the estimator's log, not a copy
               for seq, rec in track.packed.items())

    def scratch(ucis: dict[str, list[str]]) -> Driver:
        d = Driver(_calibrated_core())
        d.feed(*infos, *(m for info in infos for m in moves_of(info.game_id, ucis[info.game_id])))
        d.answer()
        d.feed(*(GameResult(info.game_id, "1/2-1/2", len(ucis[info.game_id])) for info in infos))
        d.tick()
        return d

    def same(a: Driver, b: Driver) -> None:
        assert report_of(a.core) == report_of(b.core)
        for name in names:
            pa, pb = (d.core.player_estimate(d.core.estimator.players[name]) for d in (a, b))
            assert pa.performance == pb.performance and pa.performance["elo"] is not None
            assert (pa.moves, pa.gain_histogram, pa.perceived_elo) == (pb.moves, pb.gain_histogram, pb.perceived_elo)
            assert a.core.screener.numbers((name, "Test")) == b.core.screener.numbers((name, "Test"))  # type: ignore[union-attr]

    live.tick()
    same(live, scratch(games))
    corrected = dict(games, g2=games["g2"][:30])
    live.feed(GameRollback("g2", 31))
    live.answer()
    live.tick()
    assert live.core.games["g2"].life.released and live.core.games["g2"].plies == 30
    same(live, scratch(corrected))
    if shelf is not None:  # read back for the correction and the checks, and the corrected game shelved again
        assert shelf.reads > 0 and len(shelf) == 8
        assert live.core.estimator.games["g2"].plies.archived
        board = live.core.board_state("g2")  # the board of a shelved game: its evaluations read back
        assert board.ply == 30 and len(board.evals) == 31 and board.evals == scratch(corrected).core.board_state("g2").evals
        live.apply(live.core.withdraw("g3"))  # a withdrawn game leaves nothing on the shelf
        assert len(shelf) == 6


def test_live_games_pack_their_settled_plies_and_give_the_numbers_of_a_run_that_never_packed(monkeypatch):
    """A live game's settled plies are packed a chunk at a time, in the estimator and the screener
    (as objects they were ~500 bytes a ply until the game finished): every estimate, performance and screening
    figure is that of a run that never packed, before and after corrections in the newest plies (nothing
    unpacked) and in the packed ones (the game unpacked, then packed again as it goes on)."""
    from livemon.live.screener import _PLY_MASK

    names = ["W0", "B0", "W1", "B1"]
    infos = [GameInfo(f"g{i}", white=names[2 * (i // 2) + i % 2], black=names[2 * (i // 2) + 1 - i % 2],
                      white_elo=2400 - 50 * (i % 2), black_elo=2350 + 50 * (i % 2), event="Test") for i in range(4)]
    games = {info.game_id: random_game(40 + i, 70) for i, info in enumerate(infos)}

    def run(pack: bool, *steps: tuple[object, ...]) -> Driver:
        monkeypatch.setattr(core_module, "PACK_CHUNK", 16 if pack else 10**9)
        d = Driver(_calibrated_core(eval_bound=0.2))  # a third of the positions left out as decided
        d.feed(*infos)
        moves = [moves_of(info.game_id, games[info.game_id]) for info in infos]
        for ply in range(0, 70, 3):  # the boards move on together, the engine answering a few moves behind
            d.feed(*(m for game in moves for m in game[ply:ply + 3]))
            d.answer("shuffle", seed=ply)
        for msgs in steps:
            d.feed(*msgs)
            d.answer("shuffle")
        d.tick()
        return d

    def same(a: Driver, b: Driver) -> None:
        assert report_of(a.core) == report_of(b.core)
        for gid in games:
            assert a.core.board_state(gid) == b.core.board_state(gid)
            assert list(a.core.games[gid].moves) == list(b.core.games[gid].moves)
        for name in names:
            pa, pb = (d.core.player_estimate(d.core.estimator.players[name]) for d in (a, b))
            assert pa.performance == pb.performance and pa.performance["elo"] is not None
            assert (pa.moves, pa.gain_histogram, pa.perceived_elo) == (pb.moves, pb.gain_histogram, pb.perceived_elo)
            screener_a, screener_b = a.core.screener, b.core.screener
            assert screener_a.numbers((name, "Test")) == screener_b.numbers((name, "Test"))  # type: ignore[union-attr]
            assert screener_a.top_moves((name, "Test")) == screener_b.top_moves((name, "Test"))  # type: ignore[union-attr]
            # the decisions read alone (posterior re-grids, the performance tally's first sum) are the plies' own
            est_a, est_b = a.core.estimator, b.core.estimator
            from_plies = [(key[0], sp.decision, key[1]) for key, sp in est_b.plies_of(est_b.players[name])
                          if sp.decision is not None]
            assert len(from_plies) > 20
            assert list(est_a._decisions_of(est_a.players[name])) == from_plies == list(est_b._decisions_of(est_b.players[name]))

    other_last = next(m for m in random_game(5, 70, games["g1"][:69])[69:] + random_game(6, 70, games["g1"][:69])[69:]
                      if m != games["g1"][69])
    longer = random_game(99, 50, games["g2"][:19])
    # a correction of the last move (no unpacking), one of ply 20 (unpacked) then 30 more plies (packed again)
    steps = ((GameRollback("g1", 70), *moves_of("g1", [*games["g1"][:69], other_last], 70)),
             (GameRollback("g2", 20), *moves_of("g2", longer, 20)))
    before, after = run(False), run(False, *steps)
    live = run(True)
    for gid in games:
        plies = live.core.estimator.games[gid].plies
        assert 70 - 8 - 16 < plies.sealed_through <= 70 - 8 and len(plies) == 70 and not plies.sealed
        moves = live.core.games[gid].moves  # the moves too: packed through the same ply
        assert moves.sealed_through == plies.sealed_through and len(moves) == 70
    cut = live.core.estimator.games["g0"].plies.sealed_through
    track = live.core.screener.tracks[("W0", "Test")]  # type: ignore[union-attr]
    assert len(track.packed) == 2 and track.used and all(k & _PLY_MASK > cut for k in track.used if k >> 20 == 0)
    tracks = live.core.screener.tracks.values()  # type: ignore[union-attr]
    assert all(len(t.excluded) + sum(len(rec.excluded) for rec in t.packed.values()) == sum(t.reasons.values())
               for t in tracks) and sum(len(rec.excluded) for t in tracks for rec in t.packed.values()) > 8
    same(live, before)
    for msgs in steps:
        live.feed(*msgs)
        live.answer("shuffle")
    live.tick()
    assert live.core.estimator.games["g1"].plies.sealed_through > 0  # the last ply corrected: nothing unpacked
    assert live.core.games["g1"].moves.sealed_through > 0 and live.core.games["g2"].moves.sealed_through > 0
    g2 = live.core.estimator.games["g2"].plies  # unpacked by the correction at ply 20, packed again as it went on
    assert g2.sealed_through > 20 and len(g2) == 50 and g2[25].uci == longer[24]
    same(live, after)


def test_board_messages_share_their_evaluations_ints():
    """Every board message holds its game's evaluations, and the hub keeps thousands of
    them; an evaluation above 256 cp was an int object of its own in each. They are one object per value."""
    d = Driver(new_core())
    for g in ("g1", "g2"):
        d.feed(GameInfo(g, white=f"W{g}", black=f"B{g}"), *moves_of(g, random_game(5, 40)))
    while d.pending:  # each answer's score an int made apart (as each analysis read from the store is)
        r = d.pending.pop()
        made = analysis_of(r.board)
        d.apply(d.core.analysed(r, dataclasses.replace(made, score=int(str(made.score + 1000))), PROFILE))
    a, b = d.core.board_state("g1").evals, d.core.board_state("g2").evals
    assert a == b and len(a) == 41 and all(v is not None and v > 256 for v in a)  # the same moves, big evals
    assert all(x is y for x, y in zip(a, b))  # not equal ints: the same objects


def test_fast_fen_and_its_castling_lookup_equal_python_chess_on_random_games():
    """fast_epd's castling field is looked up by what it depends on: the same text as
    python-chess on random standard and Chess960 games, castling rights lost by king and rook moves included."""
    from livemon.live.values import fast_epd, fast_fen

    rng, seen = random.Random(1), 0
    for g in range(120):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if g % 3 == 0 else chess.Board()
        for _ in range(rng.randint(0, 120)):
            moves = sorted(board.legal_moves, key=chess.Move.uci)
            if not moves:
                break
            board.push(rng.choice(moves))
            assert fast_epd(board) == board.epd() and fast_fen(board) == board.fen()
            seen += board.castling_rights != 0
    assert seen > 1000  # positions with castling rights were looked up, not only the "-" shortcut


def test_pushed_boards_equal_python_chess_copy_and_push_attribute_for_attribute():
    """pushed(board, move) is board.copy(stack=False) with the move pushed, every attribute and the stack's state
    alike, on random standard and Chess960 games (castling, promotions, en-passant captures, kings' moves) and on
    boards whose FEN gives castling rights without their rooks (python-chess cleans them on the first push)."""
    from livemon.live.values import pushed

    def state(board: chess.Board) -> dict[str, object]:
        return {**vars(board), "_stack": [vars(s) for s in board._stack]}

    rng, seen = random.Random(2), set()
    for g in range(150):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if g % 3 == 0 else chess.Board()
        if g % 5 == 1:
            board = chess.Board("r3k3/8/8/8/8/8/8/4K2R w KQkq - 0 1")  # rights on a1 and h8, with no rook there
        for _ in range(rng.randint(1, 160)):
            moves = sorted(board.legal_moves, key=chess.Move.uci)
            if not moves:
                break
            move = rng.choice(moves)
            expected = board.copy(stack=False)
            expected.push(move)
            seen.add((board.is_castling(move), bool(move.promotion), board.is_en_passant(move)))
            board = pushed(board, move)
            assert state(board) == state(expected)
    assert {(True, False, False), (False, True, False), (False, False, True)} <= seen


def test_position_facts_and_needs_search_agree_with_the_rules_on_random_games():
    """The shortcuts of position_facts (no legal-move count past 2; no insufficient-material or variant check while
    a pawn, rook or queen is on a standard board) change nothing: terminal value, forced and needs_search equal
    python-chess's outcome on random games played down to mates, stalemates and bare kings."""
    from livemon.live.rules import is_forced, needs_search, position_facts
    from livemon.rating.evaluation import terminal_cp

    rng, terminal, draws = random.Random(2), 0, 0
    for _ in range(60):
        board = chess.Board()
        while True:
            position = board.copy(stack=False)
            rule, forced = position_facts(position)
            assert rule == terminal_cp(position) and forced == is_forced(position)
            assert needs_search(position) == (rule is None)
            terminal += rule is not None
            draws += rule == 0
            moves = sorted(board.legal_moves, key=chess.Move.uci)
            if not moves or board.is_game_over():
                break
            captures = [m for m in moves if board.is_capture(m)]  # captures first: games reach bare kings
            board.push(rng.choice(captures if captures and rng.random() < 0.7 else moves))
    assert terminal >= 50 and draws >= 10


def test_two_sure_moves_never_claims_two_legal_moves_that_are_not_there():
    """position_facts' shortcut (unpinned pawns' pushes, knights' and sliders' moves, out of check) says "two
    legal moves or more" only when python-chess finds them, on random standard and Chess960 games (pins, checks,
    promotions), and answers for most positions."""
    import itertools

    from livemon.live.rules import _out_of_check, _two_sure_moves

    rng, sure, seen = random.Random(7), 0, 0
    for g in range(120):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if g % 3 == 0 else chess.Board()
        for _ in range(rng.randint(20, 200)):
            two = len(list(itertools.islice(board.legal_moves, 2))) == 2
            pins = _out_of_check(board)  # None in check: no claim, as position_facts reads it
            claim = pins is not None and _two_sure_moves(board, *pins)
            assert two or not claim, board.fen()
            sure, seen = sure + claim, seen + 1
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
    assert sure > 0.8 * seen


def test_a_live_games_legality_check_is_python_chess_on_random_games():
    """LiveGame.legal (the newest position's king and pins kept from when it was added) says what board.is_legal
    says of every pseudo-legal move and of moves from every square to every square (promotions to any piece
    among them), on random standard and Chess960 games (checks, pins, en passant, castling, promotions)."""
    from livemon.live.analysis import LiveGame

    rng, checked = random.Random(11), 0
    for g in range(40):
        start = chess.Board.from_chess960_pos(rng.randrange(960)) if g % 4 == 0 else chess.Board()
        game, board = LiveGame(f"g{g}"), start.copy()
        for ply in range(1, rng.randint(30, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            game.add_move(MoveEvent(game.game_id, ply, move.uci(), board.san(move), board.fen()))
            board.push(move)
            newest = game.board(-1)
            tries = list(newest.pseudo_legal_moves) + [chess.Move(rng.randrange(64), rng.randrange(64))
                                                       for _ in range(40)] + [
                chess.Move(rng.randrange(64), rng.randrange(64), rng.randrange(1, 7)) for _ in range(10)]
            for m in tries:
                assert game.legal(newest, m) == newest.is_legal(m), (newest.fen(), m)
                checked += 1
    assert checked > 50_000


def _with_evals(moves: list[MoveEvent], which: set[int]) -> list[MoveEvent]:
    """``moves`` with a made-up [%eval] on the plies in ``which``."""
    return [dataclasses.replace(m, eval_cp=(m.ply * 7) % 40 - 20) if m.ply in which else m for m in moves]


def comments_core() -> LiveCore:
    return LiveCore(profile=COMMENTS_PROFILE)


def test_under_an_engine_profile_every_position_is_searched_whatever_comments_a_game_carries():
    """The ratings need the engine's MultiPV: a game with an [%eval] on every ply is searched at every position,
    and every figure is that of the same game without comments; the newest comment stands in on the eval bar
    (as a preview) while its position waits for the engine."""
    all_plies = set(range(1, len(OPENING) + 1))
    d = Driver(new_core())
    commented = _with_evals(moves_of("g1", OPENING), all_plies)
    d.feed(INFO, *commented)
    assert sorted(r.index for r in d.pending) == list(range(0, len(OPENING) + 1))
    board = d.core.board_state("g1")
    assert board.eval_preview and board.eval_cp == commented[-1].eval_cp and board.evals[:-1] == (None,) * len(OPENING)
    d.answer()
    plain = Driver(new_core())
    plain.feed(INFO, *moves_of("g1", OPENING))
    plain.answer()
    assert report_of(d.core) == report_of(plain.core)
    assert d.core.board_state("g1") == plain.core.board_state("g1") and not d.core.board_state("g1").eval_preview
    assert d.core.player_estimate(d.core.estimator.players["White A"]) == \
        plain.core.player_estimate(plain.core.estimator.players["White A"])
    # with eval-bar previews on, a move whose [%eval] stands in asks for no quick search
    quick = Driver(new_core(previews=True))
    quick.feed(INFO, *commented[:2], *moves_of("g1", OPENING[:4])[2:])
    assert [p.index for p in quick.previews] == [3, 4]


def test_without_an_engine_a_game_is_valued_from_its_comments_only_while_every_ply_has_one():
    """The one rule for [%eval]s without an engine (the comments profile): the first ply without one switches the
    game to the engine, and the plies scored from comments are scored again, so the figures are those of the same
    game with no comments."""
    all_plies = set(range(1, len(OPENING) + 1))
    d = Driver(comments_core())
    d.feed(INFO, *_with_evals(moves_of("g1", OPENING[:6]), all_plies))
    assert [r.index for r in d.pending] == [0]  # commented: only the start position needs the engine
    d.answer()
    assert sorted(d.core.estimator.games["g1"].plies) == list(range(1, 7))
    commented = report_of(d.core)
    d.feed(*_with_evals(moves_of("g1", OPENING, start=7), all_plies - {8}))  # ply 8 has none
    assert sorted(r.index for r in d.pending) == list(range(0, len(OPENING) + 1))  # every position, once
    d.answer()
    reference = Driver(comments_core())
    reference.feed(INFO, *moves_of("g1", OPENING))
    reference.answer()
    assert report_of(d.core) == report_of(reference.core)
    assert report_of(d.core) != commented
    # a correction that takes the ply without a comment away brings the comments back
    d.feed(GameRollback("g1", 8), *_with_evals(moves_of("g1", OPENING[:7], start=8), all_plies))
    d.answer()
    again = Driver(comments_core())
    again.feed(INFO, *_with_evals(moves_of("g1", OPENING[:7]), all_plies))
    again.answer()
    assert report_of(d.core) == report_of(again.core)


def test_the_start_evaluation_values_the_start_position_of_a_commented_game():
    d = Driver(comments_core())
    first, *rest = _with_evals(moves_of("g1", OPENING[:4]), {1, 2, 3, 4})
    d.feed(INFO, dataclasses.replace(first, start_eval_cp=15), *rest)
    assert not d.pending and sorted(d.core.estimator.games["g1"].plies) == [1, 2, 3, 4]
    assert d.core.estimator.games["g1"].plies[1].before == 15


def test_an_answer_counts_only_for_the_position_it_was_asked_for():
    """Requests carry a token (game, position, epoch): after a correction an answer for a position it
    replaced is dropped, while an answer for a position it kept (its board rebuilt or not) still scores."""
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", OPENING[:6]))
    asked = {r.index: r for r in d.pending}
    d.pending = []
    corrected = OPENING[:4] + ["f1c4", "g8f6"]
    d.feed(*moves_of("g1", corrected, start=5))  # plies 5-6 replaced: positions 5 and 6 are new ones
    stale = asked[6]
    assert stale.board.fen() != d.core.games["g1"].board(6).fen()
    d.apply(d.core.analysed(stale, analysis_of(stale.board), PROFILE))
    assert 6 not in d.core.games["g1"].analyses  # the old position 6's analysis is not the new one's
    for j in (0, 1, 2, 3, 4):  # answers to positions the correction kept, asked before it, still count
        d.apply(d.core.analysed(asked[j], analysis_of(asked[j].board), PROFILE))
    d.answer()
    assert report_of(d.core) == batch_report({"g1": (INFO, corrected, "*")})
    assert sorted(d.core.estimator.games["g1"].plies) == [1, 2, 3, 4, 5, 6]


def test_the_settings_come_in_as_one_event():
    core = LiveCore()
    assert core.configure(PROFILE, None, given_strength=None, calibrated_strength=2950.0, previews=True) == []
    assert (core.profile, core.strength, core.strength_source, core.previews) == (PROFILE, 2950.0, "calibration", True)
    assert core.estimator.profile == PROFILE
    core.configure(PROFILE, None, given_strength=3100.0, calibrated_strength=2950.0)
    assert (core.strength, core.strength_source, core.previews) == (3100.0, "given", False)


def test_forgotten_analyses_are_replaced_and_every_figure_is_that_of_a_run_that_never_had_them():
    """A worker found lying: the core forgets the analyses it gave (by position key), rolls back every ply that
    used one (finished and packed games, a live one, the screening), and once the positions are answered
    anew every estimate, screening row and board equals that of a run that only ever had the true answers."""
    names = ["W0", "B0", "W1", "B1"]
    infos = [GameInfo(f"g{i}", white=names[2 * (i // 2) + i % 2], black=names[2 * (i // 2) + 1 - i % 2],
                      white_elo=2400 - 50 * (i % 2), black_elo=2350 + 50 * (i % 2), event="Test") for i in range(4)]
    games = {info.game_id: random_game(40 + i, 60) for i, info in enumerate(infos)}

    def run(liar: bool) -> tuple[Driver, set[str]]:
        d = Driver(_calibrated_core())
        lies: set[str] = set()
        for n, info in enumerate(infos):
            d.feed(info, *moves_of(info.game_id, games[info.game_id]))
            while d.pending:
                batch, d.pending = d.pending, []
                for k, r in enumerate(batch):
                    if liar and k % 5 == 2:  # a well-formed lie: a legal move, far from the true score
                        lies.add(position_key(r.board))
                        move = next(iter(r.board.legal_moves)).uci()
                        d.apply(d.core.analysed(r, PositionAnalysis(900, ((move, 900),), 8, 1000), PROFILE))
                    else:
                        d.apply(d.core.analysed(r, analysis_of(r.board), PROFILE))
            if n < 3:  # the last game goes on
                d.feed(GameResult(info.game_id, "1-0", len(games[info.game_id])))
        d.tick()
        return d, lies

    honest, _ = run(False)
    lied, lies = run(True)
    assert lies and report_of(lied.core) != report_of(honest.core)  # the lies counted
    assert lied.core.games["g0"].life.released  # a finished game packed: forget reaches it too
    lied.logs.clear()
    lied.apply(lied.core.forget(lies, "worker liar quarantined"))
    assert lied.pending and {position_key(r.board) for r in lied.pending} >= lies
    assert sum("scored again: worker liar quarantined" in line for line in lied.logs) == 1
    lied.answer()
    lied.tick()
    assert lied.core.counters.rescored > 0
    assert report_of(lied.core) == report_of(honest.core)
    for name in names:
        a, b = (d.core.player_estimate(d.core.estimator.players[name]) for d in (lied, honest))
        c_fields = ("c_mean", "c_sd", "c_cr95", "c_elo", "c_elo_cr95")  # the running posterior: sums in another order
        assert dataclasses.replace(a, **{k: None for k in c_fields}) == dataclasses.replace(b, **{k: None for k in c_fields})
        assert a.c_mean == pytest.approx(b.c_mean, abs=1e-6) and a.c_sd == pytest.approx(b.c_sd, abs=1e-6)
        assert lied.core.screener.numbers((name, "Test")) == honest.core.screener.numbers((name, "Test"))  # type: ignore[union-attr]
    for gid in games:
        assert lied.core.board_state(gid) == honest.core.board_state(gid)
        assert lied.core.games[gid].life.released == honest.core.games[gid].life.released
    assert lied.core.forget(set()) == [] and lied.core.forget({"8/8/8/8/8/8/8/8 w - -"}) == []


def test_a_finished_commented_game_keeps_its_result_when_a_ply_without_a_comment_switches_it_to_the_engine():
    """A ply after the result that carries no [%eval] revalues the whole game from the engine: the plies are
    scored again, and the game stays finished in every figure, as the same game valued by the engine
    throughout does."""
    runs = {}
    for commented in (True, False):
        d = Driver(comments_core())
        evals = set(range(1, 7)) if commented else set()
        moves = _with_evals(moves_of("g1", OPENING[:7]), evals)
        d.feed(INFO, *moves[:6], GameResult("g1", "1-0", 6))
        d.answer()
        d.feed(moves[6])  # no [%eval]: the commented game switches to the engine
        d.answer()
        assert d.core.board_state("g1").result == "1-0" and not d.pending
        runs[commented] = report_of(d.core), d.core.player_estimate(d.core.estimator.players["White A"])
    assert runs[True][0]["games"][0]["result"] == "1-0"
    assert runs[True] == runs[False]


def test_a_ply_republishes_the_opponent_whose_estimate_reads_its_moves(monkeypatch):
    """Each game's headline score reads the opponent's moves there (the quality model's control): a ply moves
    both players' estimates, so both go out, and what the faces last got is each player's estimate now."""
    from livemon.rating.quality_params import model_for

    shipped = "Stockfish 15.1 depth=12 multipv=4"
    model = model_for(shipped)
    assert model is not None and model.joint is not None
    monkeypatch.setattr(sys.modules[__name__], "PROFILE", shipped)
    d = Driver(new_core())
    d.feed(INFO, *moves_of("g1", random_game(7, 60)))
    d.answer()
    sent = [m for m in d.published if isinstance(m, PlayerEstimate)]
    # each ply: the mover; and the opponent when the ply is one the model counts (not the first 8 moves of a side,
    # not a forced move, not past ±3)
    plies = d.core.estimator.games["g1"].plies
    counted = [model.counts(plies[p].decision, p) for p in sorted(plies)]  # type: ignore[arg-type]
    expected = [n for p, c in zip(sorted(plies), counted) for n in (["White A", "Black B"] if p % 2 else
                                                                     ["Black B", "White A"])[: 1 + c]]
    assert [m.name for m in sent] == expected and 10 < sum(counted) < len(counted) == 60
    players = d.core.estimator.players
    assert players["White A"].elo and players["Black B"].elo  # both rated: each corrects the other's games
    last = {m.name: m for m in sent}
    assert last["Black B"].estimate["positions"] > 5 and last["White A"].estimate["positions"] > 5
    for name, m in last.items():
        assert m == d.core.player_estimate(players[name])
