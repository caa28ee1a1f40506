"""Each ply's audience figures are made once, when its values come, and kept: a board message is built from
what changed, and the kept figures are always those made again from scratch.

- :class:`~livemon.live.audience.BoardFigures` (a board message's ``win_percents``, ``move_accuracy`` and
  ``move_classes``) equals :func:`~livemon.live.audience.ply_figures` of the same values after any sequence of
  values coming, changing, corrections and previews;
- :class:`~livemon.rating.accuracy.GameJudge` with the engine's first choices marked as they come gives the game
  figures of the values judged again whole, those plies' classes left out;
- a long live game costs O(1) judgements per move over all its board messages, never a whole game judged again.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import livemon.live.audience as audience
import livemon.rating.accuracy as accuracy
from livemon.live.audience import BoardFigures, figures_of, ply_figures
from livemon.faces.web import codec
from livemon.live.core import LiveCore
from livemon.live.messages import BoardState, GameInfo
from livemon.rating.accuracy import CLASSES, GameJudge, judge
from tests.test_live_core import moves_of
from tests.test_moments import PROFILE, Engine, random_game

VALUE = st.one_of(st.integers(-1200, 1200), st.sampled_from([3900, -3900, 3899, -3899]))  # mates, and just short
CP = st.one_of(st.none(), VALUE)
OPS = st.lists(st.tuples(st.sampled_from(["append", "set", "truncate", "first", "unfirst"]), CP,
                         st.integers(0, 10**6)), min_size=1, max_size=60)


def rounded(evals: list[int | None], first: tuple[int, ...]) -> tuple[tuple, tuple, tuple]:
    wins, accs, classes = ply_figures(evals, first)
    return (tuple(None if w is None else round(w, 1) for w in wins),
            tuple(None if a is None else round(a, 1) for a in accs), tuple(classes))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_board_figures_equal_the_figures_made_again_after_any_changes(ops) -> None:
    kept = BoardFigures()
    evals: list[int | None] = [15]
    first: set[int] = set()
    for op, cp, at in ops:
        if op == "append":
            evals.append(cp)
        elif op == "set":
            evals[at % len(evals)] = cp
        elif op == "truncate" and len(evals) > 1:  # a correction: back to a ply, the later ones gone
            cut = 1 + at % (len(evals) - 1)
            del evals[cut:]
            first = {p for p in first if p < cut}
        elif op == "first" and len(evals) > 1:
            first.add(1 + at % (len(evals) - 1))
        elif op == "unfirst" and first:
            first.discard(sorted(first)[at % len(first)])
        fc = tuple(sorted(first))
        assert kept.of(tuple(evals), fc) == rounded(evals, fc), (op, evals, fc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
@example([("append", 20, 1), ("append", 300, 1), ("set", -300, 4)])  # plies 1-2 judged, then position 1 changed
def test_board_figures_read_from_the_games_judge_equal_the_figures_made_again(ops) -> None:
    """A ply the judge judged from the board's values is read from it, any other judged again: the judge here
    follows the values only after some changes, so it lags, holds values the board no longer has or lacks some."""
    game_judge = GameJudge()
    kept = BoardFigures(game_judge)
    evals: list[int | None] = [15]
    for op, cp, at in ops:
        if op in ("append", "first"):
            evals.append(cp)
        elif op == "set":
            evals[at % len(evals)] = cp
        elif len(evals) > 1:
            del evals[1 + at % (len(evals) - 1):]
        if at % 2:  # the judge told of the values now (as the estimator is, ply by ply, as they are scored)
            game_judge.truncate(len(evals))
            for j, v in enumerate(evals):
                if v is not None:
                    game_judge.set(j, v)
        assert kept.of(tuple(evals), ()) == rounded(evals, ()), (op, evals)


def reference(evals: list[int | None], first: set[int]) -> tuple:
    """A game's figures judged again whole, the first choices' classes left out (audience's rule)."""
    j = judge(evals)
    counts = [[0, 0, 0], [0, 0, 0]]
    seen = [0, 0]
    for i, acc in enumerate(j.accuracy):
        if acc is None:
            continue
        seen[i % 2] += 1
        if j.classes[i] is not None and i + 1 not in first:
            counts[i % 2][CLASSES.index(j.classes[i])] += 1
    assert j.game is not None
    prefix = len(j.game.moves)
    return (j.game.white, j.game.black, tuple(counts[0]), tuple(counts[1]), tuple(seen),
            ((prefix + 1) // 2, prefix // 2))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 80), VALUE, st.booleans(),
                          st.integers(0, 50)), min_size=1, max_size=80))
def test_game_figures_with_first_choices_equal_the_game_judged_again_after_random_corrections(steps) -> None:
    g = GameJudge()
    known: dict[int, int] = {}
    first: set[int] = set()
    for j, cp, is_first, cut in steps:
        if cut == 0 and known:  # a correction from some ply on
            back = 1 + j % max(max(known), 1)
            g.truncate(back)
            known = {k: v for k, v in known.items() if k < back}
            first = {p for p in first if p < back}
            continue
        g.set(j, cp)
        known[j] = cp
        if is_first and j >= 1:
            g.unclassed(j)
            first.add(j)
        evals = [known.get(k) for k in range(max(known) + 1)]
        f = figures_of(g)
        white, black, wc, bc, judged, read = reference(evals, first)
        assert (f.white_classes, f.black_classes, f.judged, f.read) == (wc, bc, judged, read)
        for mine, theirs in ((f.white, white), (f.black, black)):
            assert (mine is None) == (theirs is None)
            if mine is not None:
                assert mine == pytest.approx(theirs, abs=1e-9)


def test_a_long_games_board_messages_cost_o1_judgements_per_move(monkeypatch) -> None:
    """300 plies, each answered as it comes: every ply is judged once, when it is scored (its board messages and its
    moment read the game's judge; none judges it again), the game is never judged again whole, and the last message
    carries the figures made from scratch."""
    calls = {"ply": 0, "whole": 0, "again": 0}
    one, whole, again = audience.ply_judgement, audience.judge, accuracy.ply_judgement

    def counted_again(*a):  # type: ignore[no-untyped-def]
        calls["again"] += 1
        return again(*a)

    def counted_one(*a):  # type: ignore[no-untyped-def]
        calls["ply"] += 1
        return one(*a)

    def counted_whole(*a, **k):  # type: ignore[no-untyped-def]
        calls["whole"] += 1
        return whole(*a, **k)

    ucis = random_game(7, 300)
    core = LiveCore(profile=PROFILE)
    eng = Engine(core)
    eng.feed(GameInfo("long", white="W", black="B"))
    monkeypatch.setattr(audience, "ply_judgement", counted_one)
    monkeypatch.setattr(audience, "judge", counted_whole)
    monkeypatch.setattr(accuracy, "ply_judgement", counted_again)  # a judge asked of values it did not judge
    for ev in moves_of("long", ucis):
        seen = len(eng.published)
        eng.feed(ev)
        eng.answer_all()
        for m in eng.published[seen:]:  # encoded as the faces send it
            if isinstance(m, BoardState):
                codec.to_json(m)
    boards = [m for m in eng.published if isinstance(m, BoardState)]
    plies = len(ucis)
    assert plies > 150 and len(boards) >= plies
    assert calls["whole"] == 0
    assert calls["ply"] == calls["again"] == 0, (calls, plies)
    monkeypatch.setattr(audience, "ply_judgement", one)
    monkeypatch.setattr(audience, "judge", whole)
    last = boards[-1]
    again = BoardState(**{f: getattr(last, f) for f in ("game_id", "white", "black", "white_elo", "black_elo", "fen",
                                                        "ply", "evals", "eval_preview", "first_choice")})
    assert (last.win_percents, last.move_accuracy, last.move_classes) == (
        again.win_percents, again.move_accuracy, again.move_classes)
    assert len(last.move_accuracy) == plies and any(c is not None for c in last.move_classes)
    assert last.move_classes == rounded(list(last.evals), last.first_choice)[2]


def test_a_boards_move_lists_and_figures_stay_those_of_its_moves_through_corrections() -> None:
    """A game corrected several times (moves taken back and played otherwise, some answered late): each board message
    lists the game's moves as they stand and carries the figures made from scratch of its values."""
    import random

    import chess

    from tests.test_live_core import random_game as game_from

    rng = random.Random(45)
    core = LiveCore(profile=PROFILE)
    eng = Engine(core)
    eng.feed(GameInfo("c", white="W", black="B"))
    ucis = game_from(1, 40)
    played = 0
    for step in range(120):
        if played and rng.random() < 0.08:  # a correction: from some ply on, another line
            back = rng.randint(max(1, played - 12), played)
            ucis = game_from(step + 100, back, ucis[:back - 1])
            ucis = game_from(step + 200, back + rng.randint(0, 6), ucis)
            eng.feed(*moves_of("c", ucis, start=back))
            played = len(ucis)
        elif played < len(ucis):
            eng.feed(*moves_of("c", ucis[:played + 1], start=played + 1))
            played += 1
        else:
            ucis = game_from(step, played + 5, ucis)
        if rng.random() < 0.7:
            eng.answer_all()
        board = core.board_state("c")
        assert board.moves_uci == tuple(ucis[:played]), step
        replay = chess.Board()
        sans = []
        for u in ucis[:played]:
            move = chess.Move.from_uci(u)
            sans.append(replay.san(move))
            replay.push(move)
        assert board.moves == tuple(sans), step
        again = BoardState(**{f: getattr(board, f) for f in ("game_id", "white", "black", "white_elo", "black_elo",
                                                             "fen", "ply", "evals", "eval_preview", "first_choice")})
        assert (board.win_percents, board.move_accuracy, board.move_classes) == (
            again.win_percents, again.move_accuracy, again.move_classes), step
    assert core.counters.rollbacks >= 5 and played > 30
