"""A mate's distance ("#3", "#-2") from the engine or the source's ``[%eval #n]`` to the board message and the TUI.

The distance is for display only: every figure reads the centipawn value (mates at ±3900).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import chess
import pytest

from livemon.config import EngineConfig
from livemon.faces.web import codec
from livemon.faces.tui.format import eval_text
from livemon.io.bus import AnalysisResult
from livemon.io.engine import EngineProfile, UciEngine
from livemon.io.resultcheck import check_analysis
from livemon.io.store import Store
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse, Effect, Publish
from livemon.live.messages import BoardState, GameInfo, MoveEvent
from livemon.live.tracker import GameTracker
from livemon.live.values import PositionAnalysis
from livemon.rating.evaluation import MATE_CP
from tests.test_live_core import moves_of

SCHOLAR = ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6"]  # White mates in 1 (Qxf7#)
FOOL = ["f2f3", "e7e5", "g2g4"]  # Black mates in 1 (Qh4#)
LONGER = ["e2e4", "e7e5", "f1c4", "f8c5", "d1h5", "g8f6", "h5f7", "e8f7", "c4f7"]  # no mate: a plain position


def boards(effects: list[Effect]) -> list[BoardState]:
    return [e.message for e in effects if isinstance(e, Publish) and isinstance(e.message, BoardState)]


async def played_with(path: str, ucis: list[str]) -> tuple[BoardState, list[PositionAnalysis]]:
    """``ucis`` fed to a live core, every position searched by the engine at ``path`` (depth 8)."""
    engine = await UciEngine.open(EngineConfig(path=path, depth=8, multipv=2))
    try:
        core = LiveCore(profile=engine.profile.name)
        effects = core.handle(GameInfo("g", "A", "B"))
        for ev in moves_of("g", ucis):
            effects += core.handle(ev)
        answers, pending = [], [e for e in effects if isinstance(e, Analyse)]
        while pending:
            request = pending.pop()
            analysis = await engine.analyse(request.board)
            answers.append(analysis)
            more = core.analysed(request, analysis, engine.profile.name)
            pending += [e for e in more if isinstance(e, Analyse)]
        return core.board_state("g"), answers
    finally:
        await engine.close()


@pytest.mark.parametrize(("ucis", "mate"), [(SCHOLAR, 1), (FOOL, -1)])
def test_a_real_stockfish_mate_in_n_reaches_the_board_message_as_n(stockfish: str, ucis: list[str], mate: int) -> None:
    board, answers = asyncio.run(played_with(stockfish, ucis))
    assert board.eval_mate == mate
    assert board.eval_cp == (MATE_CP if mate > 0 else -MATE_CP)  # the value every figure reads is unchanged
    assert not board.eval_preview
    assert [a.mate for a in answers if a.mate is not None] == [mate]  # only the newest position is a mate
    assert '"eval_mate":%d' % mate in codec.main_json(board)
    assert eval_text(board.eval_cp, board.eval_mate) == f"#{mate}"


def test_mate_on_the_board_is_zero_and_no_mate_is_none(fake_engine: str) -> None:
    """A mate on the board is scored by rule (no search); an engine's centipawn answer carries no distance."""
    mated, answers = asyncio.run(played_with(fake_engine, SCHOLAR + ["h5f7"]))
    assert len(answers) == len(SCHOLAR) + 1  # the start and every position after it but the mate on the board
    assert (mated.eval_cp, mated.eval_mate) == (MATE_CP, 0)  # a finished mate: "#" (the result says who)
    assert eval_text(mated.eval_cp, mated.eval_mate) == "#"
    plain, _ = asyncio.run(played_with(fake_engine, LONGER[:4]))
    assert plain.eval_mate is None and plain.eval_cp is not None and abs(plain.eval_cp) < MATE_CP


def test_a_stored_analysis_without_the_field_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    store = Store(path)
    store.analyses.put("p-new", "SF depth=8 multipv=2", PositionAnalysis(3900, (("d1f7", 3900),), 8, 50, mate=1))
    store.close()
    db = sqlite3.connect(path)  # a row as written before the distance was kept
    db.execute("INSERT INTO analyses (position, profile, score, candidates, worker) VALUES (?, ?, ?, ?, ?)",
               ("p-old", "SF depth=8 multipv=2", -3900, '{"score":-3900,"candidates":[["d8h4",-3900]],'
                                                      '"depth":8,"nodes":40}', None))
    db.commit()
    db.close()
    store = Store(path)
    try:
        old = store.analyses.get("p-old", "SF depth=8 multipv=2")
        new = store.analyses.get("p-new", "SF depth=8 multipv=2")
    finally:
        store.close()
    assert old == PositionAnalysis(-3900, (("d8h4", -3900),), 8, 40) and old.mate is None
    assert new is not None and new.mate == 1 and new.score == 3900


def test_the_distance_travels_over_the_bus_and_an_old_worker_answer_has_none() -> None:
    a = PositionAnalysis(-3900, (("d8h4", -3900),), 8, 40, mate=-1)
    assert AnalysisResult.parse(AnalysisResult("k", "p", "w", a).to_json()).analysis == a
    old = '{"key":"k","profile":"p","worker":"w","analysis":{"score":-3900,"candidates":[["d8h4",-3900]],' \
          '"depth":8,"nodes":40}}'
    parsed = AnalysisResult.parse(old).analysis
    assert parsed is not None and parsed.mate is None and parsed.score == -3900


def test_a_peer_result_whose_distance_contradicts_its_score_is_refused() -> None:
    board = chess.Board()
    for uci in FOOL:
        board.push_uci(uci)
    profile = EngineProfile("SF", 8, None, 2)
    good = PositionAnalysis(-MATE_CP, (("d8h4", -MATE_CP),), 8, 40, mate=-1)
    assert check_analysis(good, board, profile) is None
    assert check_analysis(PositionAnalysis(-MATE_CP, (("d8h4", -MATE_CP),), 8, 40, mate=2), board, profile) == \
        "mate 2 beside score -3900 (a mate in 2 is 3900)"
    assert check_analysis(PositionAnalysis(-MATE_CP, (("d8h4", -MATE_CP),), 8, 40, mate=0), board, profile) == \
        "mate 0 is not a distance of 1 to 500 moves"


PGN = """[Event "E"]
[Site "?"]
[White "A"]
[Black "B"]
[Result "*"]

1. f3 {[%eval -0.6]} e5 {[%eval -0.5]} 2. g4 {[%eval #-2]} *
"""


def test_a_source_eval_mate_stands_in_on_the_eval_bar_with_its_distance() -> None:
    messages = GameTracker("round.pgn").update_text(PGN, "round.pgn")
    moves = [m for m in messages if isinstance(m, MoveEvent)]
    assert [m.eval_mate for m in moves] == [None, None, -2] and moves[-1].eval_cp == -MATE_CP
    core = LiveCore(profile="Stockfish 15.1 depth=12 multipv=4")  # the engine values the game: none answered
    out: list[Effect] = []
    for m in messages:
        out += core.handle(m)  # type: ignore[arg-type]
    board = boards(out)[-1]
    assert board.eval_preview and (board.eval_cp, board.eval_mate) == (-MATE_CP, -2)
    assert eval_text(board.eval_cp, board.eval_mate) == "#-2"
    figures = core.estimator.figures(board.game_id) if board.game_id in core.estimator.games else None
    assert figures is None or figures.to_accuracy() == {"white": None, "black": None}  # a stand-in makes no figure


@pytest.mark.parametrize("append_only", [True, False])
def test_an_appended_eval_mate_reads_the_same_on_the_fast_path_and_the_full_parse(append_only: bool) -> None:
    tracker = GameTracker("round.pgn", append_only=append_only)
    tracker.update_text(PGN.replace(" 2. g4 {[%eval #-2]}", ""), "round.pgn")
    new = [m for m in tracker.update_text(PGN, "round.pgn") if isinstance(m, MoveEvent)]
    assert [(m.ply, m.eval_cp, m.eval_mate) for m in new] == [(3, -MATE_CP, -2)]


def test_the_tui_formats_a_mate_with_its_distance() -> None:
    assert [eval_text(MATE_CP, 3), eval_text(-MATE_CP, -2), eval_text(MATE_CP, 0)] == ["#3", "#-2", "#"]
    assert [eval_text(MATE_CP), eval_text(-MATE_CP), eval_text(35, None), eval_text(None, 2)] == \
        ["+M", "-M", "+0.35", "…"]
