"""Judgements and moments as an annotator gives them, live as in batch.

- the engine's first choice (the first line of the pinned profile's search of the position before the move) is never
  an inaccuracy, mistake or blunder, nor a blunder moment, whatever the next position's search says; accuracy stays
  lichess's formula over the successive values;
- a ply's moments are decided once every position up to it is valued, in ply order: an engine that answers out of
  order and late gives the moments of the finished game, each published once and never taken back.
"""

from __future__ import annotations

import json
import random

import chess

from livemon.faces.web import codec
from livemon.live.audience import LEAD_MARGIN
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse, Effect, Publish
from livemon.live.messages import BoardState, GameInfo, GameResult, Moment, MomentRemoved
from livemon.live.values import PositionAnalysis
from livemon.rating.accuracy import INITIAL_CP, win_percent
from tests.test_live_core import analysis_of, moves_of

PROFILE = "Fake 1.0 depth=8 multipv=3"


def ply_of(board: chess.Board) -> int:
    """The plies played to reach ``board`` from the start (its FEN's move counters)."""
    return 2 * (board.fullmove_number - 1) + (board.turn == chess.BLACK)


def random_game(seed: int, plies: int) -> list[str]:
    rng, board, out = random.Random(seed), chess.Board(), []
    while len(out) < plies and not board.is_game_over():
        move = rng.choice(sorted(board.legal_moves, key=chess.Move.uci))
        out.append(move.uci())
        board.push(move)
    return out


def swinging(board: chess.Board) -> PositionAnalysis:
    """A made-up MultiPV analysis of the position alone, with swings big enough for lead changes and blunders."""
    return analysis_of(board, spread=600, step=40)


class Engine:
    """An in-memory engine port: it holds the requests and answers those it is told to, in any order."""

    def __init__(self, core: LiveCore, analyse=swinging) -> None:
        self.core, self.analyse = core, analyse
        self.pending: list[Analyse] = []
        self.published: list[object] = []

    def apply(self, effects: list[Effect]) -> None:
        for e in effects:
            if isinstance(e, Analyse):
                self.pending.append(e)
            elif isinstance(e, Publish):
                self.published.append(e.message)

    def feed(self, *msgs: object) -> None:
        for m in msgs:
            self.apply(self.core.handle(m))  # type: ignore[arg-type]

    def answer(self, requests: list[Analyse]) -> None:
        for r in requests:
            self.pending.remove(r)
            self.apply(self.core.analysed(r, self.analyse(r.board), PROFILE))

    def answer_all(self) -> None:
        while self.pending:
            self.answer(list(self.pending))


INFO = GameInfo("a", white="White A", black="Black B", event="Open", round="3.7")


def test_the_engines_first_choice_is_never_judged_however_the_next_search_values_it():
    """1. e4 was the engine's first line from the start (+0.20), and the search after it says -4.00: a drop that is
    a blunder by lichess's thresholds. Played as the first choice it has no class and makes no blunder moment; the
    same drop by a move the engine did not choose first is a blunder. Accuracy is the same in both (lichess's
    formula over the successive values)."""
    values = {0: 20, 1: -400, 2: -380, 3: -390, 4: -385}

    def analysis(first: str):
        def one(board: chess.Board) -> PositionAnalysis:
            j = ply_of(board)
            best = first if j == 0 else next(iter(sorted(board.legal_moves, key=chess.Move.uci))).uci()
            return PositionAnalysis(values[j], ((best, values[j]), ("a2a3", values[j] - 30)), 8, 1000)
        return one

    runs = {}
    for first in ("e2e4", "d2d4"):
        core = LiveCore(profile=PROFILE)
        eng = Engine(core, analysis(first))
        eng.feed(INFO, *moves_of("a", ["e2e4", "e7e5", "g1f3", "b8c6"]))
        eng.answer_all()
        runs[first] = core, eng
    chosen, other = runs["e2e4"][0], runs["d2d4"][0]
    assert chosen.estimator.figures("a").white_classes == (0, 0, 0)
    assert other.estimator.figures("a").white_classes == (0, 0, 1)
    assert chosen.estimator.figures("a").white == other.estimator.figures("a").white  # accuracy unchanged
    board = chosen.board_state("a")
    assert board.first_choice[:1] == (1,)
    assert json.loads(codec.to_json(board))["move_classes"][0] is None
    assert json.loads(codec.to_json(other.board_state("a")))["move_classes"][0] == "blunder"
    assert chosen.estimator.audience("White A")["classes"]["blunder"] == 0
    assert [m.kinds for m in chosen.moments("a") if m.ply == 1] == []
    (blunder,) = [m for m in other.moments("a") if m.ply == 1]
    assert blunder.kinds == ("blunder",) and blunder.move_class == blunder.judgement == "blunder"
    assert blunder.best_move_san == "d4" and blunder.mover == "White A"
    assert blunder.mover_win_before == win_percent(INITIAL_CP) and blunder.mover_win_after == win_percent(-400)
    assert (blunder.round, blunder.board, blunder.white, blunder.black) == ("3.7", 7, "White A", "Black B")
    # a Black mover's win% is Black's: the chart's White win% is kept beside it
    core = LiveCore(profile=PROFILE)
    eng = Engine(core, lambda b: PositionAnalysis({0: 20, 1: 30, 2: 500}.get(ply_of(b), 480),
                                                  (("h2h3" if b.turn else "h7h6", 40), ("a2a3", 0)), 8, 1000))
    eng.feed(INFO, *moves_of("a", ["e2e4", "e7e5", "g1f3"]))
    eng.answer_all()
    (black,) = [m for m in core.moments("a") if m.ply == 2]
    assert black.mover == "Black B" and black.mover_win_before > black.mover_win_after
    assert black.win_before < black.win_after and black.judgement == "blunder"


def _leader(win: float) -> int:
    return 1 if win >= 50 + LEAD_MARGIN else -1 if win <= 50 - LEAD_MARGIN else 0


def test_moments_are_decided_in_play_order_on_complete_values_whatever_order_and_time_the_engine_answers():
    """Live = batch for moments: one run answers every position at once after the games; the other answers a random
    part of what is waiting after each move, newest or oldest or shuffled, the rest late. Every moment of the finished
    games is published once, in ply order per game, never taken back, and equal to the batch run's; every lead change
    is a real change of leader on the game's final curve."""
    infos = [GameInfo(f"g{i}", white=f"W{i}", black=f"B{i}", event="Open", round=f"1.{i + 1}") for i in range(3)]
    games = {info.game_id: random_game(7 + i, 70) for i, info in enumerate(infos)}

    batch = Engine(LiveCore(profile=PROFILE))
    for info in infos:
        batch.feed(info, *moves_of(info.game_id, games[info.game_id]), GameResult(info.game_id, "1-0", 0))
    batch.answer_all()
    reference = {gid: batch.core.moments(gid) for gid in games}
    assert sum(len(m) for m in reference.values()) >= 10
    assert any("lead_change" in m.kinds for ms in reference.values() for m in ms)

    for seed in range(3):
        rng = random.Random(seed)
        live = Engine(LiveCore(profile=PROFILE))
        live.feed(*infos)
        streams = [(gid, m) for gid, ucis in games.items() for m in moves_of(gid, ucis)]
        streams.sort(key=lambda x: (x[1].ply, x[0]))  # the boards move in turn
        for _, move in streams:
            live.feed(move)
            waiting = list(live.pending)
            rng.shuffle(waiting)
            live.answer(waiting[: rng.randrange(len(waiting) + 1) // 2])  # some now, the rest late
        for info in infos:
            live.feed(GameResult(info.game_id, "1-0", 0))
        live.answer_all()
        published = [m for m in live.published if isinstance(m, Moment)]
        assert not any(isinstance(m, MomentRemoved) for m in live.published)
        for gid in games:
            mine = [m for m in published if m.game_id == gid]
            assert [m.ply for m in mine] == sorted({m.ply for m in mine})  # in play order, once each
            assert tuple(mine) == reference[gid] == live.core.moments(gid)
    for gid, moments in reference.items():
        evals = batch.core.board_state(gid).evals
        for m in moments:
            assert m.round == f"1.{int(gid[1:]) + 1}" and m.board == int(gid[1:]) + 1
            if "lead_change" not in m.kinds:
                continue
            now = _leader(m.win_after)
            earlier = [_leader(win_percent(cp)) for cp in evals[: m.ply] if cp is not None]
            last = next(side for side in reversed(earlier) if side)
            assert now and last == -now  # a real change of leader


def test_a_board_carries_the_first_choice_plies_on_its_game_channel_only():
    core = LiveCore(profile=PROFILE)
    eng = Engine(core)
    eng.feed(INFO, *moves_of("a", random_game(3, 20)))
    eng.answer_all()
    board = core.board_state("a")
    assert isinstance(board, BoardState) and board.first_choice == tuple(sorted(core.estimator.first_choice("a")))
    assert "first_choice" in json.loads(codec.to_json(board)) and "first_choice" not in codec.main_dict(board)


def test_provisional_figures_say_how_many_moves_they_read_and_accuracy_waits_for_enough():
    """A game's and a player's figures say how many of the moves played they read; a side's accuracy stays null until
    it reads MIN_ACCURACY_MOVES of its moves, or every move of a finished game."""
    from livemon.live.audience import MIN_ACCURACY_MOVES

    ucis = random_game(11, 2 * MIN_ACCURACY_MOVES + 6)
    core = LiveCore(profile=PROFILE)
    eng = Engine(core)
    eng.feed(INFO, *moves_of("a", ucis[:8]))
    eng.answer_all()
    board = core.board_state("a")
    assert board.moves_read == {"white": {"played": 4, "judged": 4, "accuracy_read": 4},
                                "black": {"played": 4, "judged": 4, "accuracy_read": 4}}
    assert board.accuracy == {"white": None, "black": None}  # 4 moves each: the opening, not yet a figure
    eng.feed(*moves_of("a", ucis)[8:])
    late = [r for r in eng.pending if r.index == 12]
    eng.answer([r for r in eng.pending if r.index != 12])  # one position still waiting: position 12
    board = core.board_state("a")
    played = len(ucis)
    assert board.moves_read["white"]["played"] == (played + 1) // 2 and board.moves_read["black"]["played"] == played // 2
    assert board.moves_read["white"]["accuracy_read"] == 6 and board.moves_read["black"]["accuracy_read"] == 5
    assert board.moves_read["white"]["judged"] == (played + 1) // 2 - 1  # ply 13 (White's) waits for position 12
    assert board.accuracy == {"white": None, "black": None}  # 6 and 5 moves read: not yet
    mover = core.player_estimate(core.estimator.players["White A"])
    assert mover.moves_read == {"played": (played + 1) // 2, "judged": (played + 1) // 2 - 1, "accuracy_read": 0}
    wire = json.loads(codec.to_json(board))
    assert wire["moves_read"]["black"]["accuracy_read"] == 5
    eng.answer(late)
    board = core.board_state("a")
    assert board.accuracy["white"] is not None and board.moves_read["white"]["accuracy_read"] == (played + 1) // 2
    assert core.player_estimate(core.estimator.players["White A"]).moves_read["accuracy_read"] == (played + 1) // 2
    # a finished game shows the accuracy of all its moves, however few
    short = LiveCore(profile=PROFILE)
    eng = Engine(short)
    eng.feed(INFO, *moves_of("a", ucis[:6]), GameResult("a", "1/2-1/2", 6))
    eng.answer_all()
    assert None not in short.board_state("a").accuracy.values()
    report = short.estimator.report()
    assert report["games"][0]["moves_read"]["white"] == {"played": 3, "judged": 3, "accuracy_read": 3}
    assert {p.name: p.moves_read["played"] for p in short.player_estimates()} == {"White A": 3, "Black B": 3}
