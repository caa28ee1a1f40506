"""The one runner: the core's position cache, its inbox, its steps and its one interpreter of effects.

No engine, no network: analyses are made up from the position (tests/test_live_core.analysis_of), the
ports are lists.
"""

from __future__ import annotations

import random

import chess
import pytest

from livemon.faces.web import codec
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse, Preview
from livemon.live.messages import Alert, GameInfo, GameResult, MoveEvent, Outgoing, PlayerEstimate, TTTRating
from livemon.live.runner import Answered, Ratings, Runner, Tick
from livemon.live.values import PositionAnalysis, position_key
from tests.test_live_core import INFO, OPENING, PROFILE, analysis_of, moves_of, random_game


class Cache:
    """A position cache of exactly ``profile`` (what the store holds), counting its lookups."""

    def __init__(self, boards: list[chess.Board], profile: str = PROFILE) -> None:
        self.held = {position_key(b): analysis_of(b) for b in boards}
        self.profile = profile
        self.asked = 0

    def __call__(self, board: chess.Board, key: str) -> tuple[PositionAnalysis, str] | None:
        self.asked += 1
        assert key == position_key(board)
        found = self.held.get(key)
        return None if found is None else (found, self.profile)


class Engine:
    """An engine port that keeps its requests until told to answer them."""

    def __init__(self) -> None:
        self.requests: list[Analyse] = []
        self.previews: list[Preview] = []

    def submit(self, request: Analyse) -> None:
        self.requests.append(request)

    def preview(self, request: Preview) -> None:
        self.previews.append(request)


class Store:
    """The store port as a log of calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def put_game(self, info: GameInfo) -> None:
        self.calls.append(("game", info.game_id))

    def put_move(self, move: MoveEvent) -> None:
        self.calls.append(("move", move.ply))

    def put_result(self, game_id: str, result: str) -> None:
        self.calls.append(("result", result))

    def delete_moves(self, game_id: str, from_ply: int) -> None:
        self.calls.append(("delete moves", from_ply))

    def delete_game(self, game_id: str) -> None:
        self.calls.append(("delete game", game_id))

    def put_alert(self, alert: Alert, level: str, raised_at: float) -> bool:
        self.calls.append(("alert", level))
        return True


def boards_of(ucis: list[str]) -> list[chess.Board]:
    board, out = chess.Board(), [chess.Board()]
    for uci in ucis:
        board.push_uci(uci)
        out.append(board.copy(stack=False))
    return out


def runner_of(cache: Cache | None, coalesce: bool = True) -> tuple[Runner, Engine, Store, list[Outgoing]]:
    core = LiveCore(profile=PROFILE, coalesce=coalesce)
    core.configure(PROFILE, cache=cache)
    engine, store, published = Engine(), Store(), []
    runner = Runner(core, engine=engine, store=store, publish=published.append, clock=lambda: 0.0)
    return runner, engine, store, published


def test_a_cached_position_is_scored_inside_the_event_that_needed_it_and_only_a_miss_is_asked_for():
    cache = Cache(boards_of(OPENING[:4])[:4])  # the positions before plies 1-4; not the one after ply 4
    runner, engine, store, _ = runner_of(cache)
    runner.put_all([INFO, *moves_of("g1", OPENING[:4])])
    assert runner.step() == 5
    assert sorted(runner.core.estimator.games["g1"].plies) == [1, 2, 3]  # scored before any answer came
    assert [r.index for r in engine.requests] == [4]  # the one position the cache lacks
    assert engine.requests[0].key == position_key(engine.requests[0].board)  # the lookup's key, for the engine's request
    assert store.calls == [("game", "g1"), ("move", 1), ("move", 2), ("move", 3), ("move", 4)]
    runner.put(Answered(engine.requests[0], analysis_of(engine.requests[0].board), PROFILE))
    runner.step()
    assert sorted(runner.core.estimator.games["g1"].plies) == [1, 2, 3, 4]


def test_the_cache_of_another_profile_is_a_miss():
    cache = Cache(boards_of(OPENING[:2]), profile="Other 1.0 depth=2 multipv=3")
    runner, engine, _, _ = runner_of(cache)
    runner.put_all([INFO, *moves_of("g1", OPENING[:2])])
    runner.run_until_idle()
    assert cache.asked == 3 and [r.index for r in engine.requests] == [0, 1, 2]
    assert runner.core.estimator.games["g1"].plies == {}


def test_live_with_a_cache_equals_live_answered_one_by_one():
    """The same game through a runner whose cache holds every position and one whose engine answers each
    request: the same estimates (the cache changes when, never what)."""
    moves = moves_of("g1", OPENING)
    cached, _, _, _ = runner_of(Cache(boards_of(OPENING)))
    cached.put_all([INFO, *moves, GameResult("g1", "1-0", plies=len(moves))])
    cached.run_until_idle()
    asked, engine, _, _ = runner_of(None)
    asked.put_all([INFO, *moves, GameResult("g1", "1-0", plies=len(moves))])
    asked.run_until_idle()
    assert len(engine.requests) == len(OPENING) + 1
    for r in reversed(engine.requests):  # newest first, as the engine queue answers
        asked.put(Answered(r, analysis_of(r.board), PROFILE))
    asked.run_until_idle()
    assert cached.core.estimator.report(None) == asked.core.estimator.report(None)


def test_a_step_flushes_once_one_estimate_per_player_however_many_plies_it_scored():
    runner, engine, _, published = runner_of(None)
    runner.put_all([INFO, *moves_of("g1", OPENING[:8])])
    runner.step()
    published.clear()
    for r in engine.requests:
        runner.put(Answered(r, analysis_of(r.board), PROFILE))
    assert runner.step() == 9  # nine answers, one step
    estimates = [m.name for m in published if isinstance(m, PlayerEstimate)]
    assert sorted(estimates) == sorted({INFO.white, INFO.black})


def test_a_ticks_work_is_done_a_unit_a_step_and_the_next_events_wait_behind_it():
    runner, engine, _, published = runner_of(Cache(boards_of(OPENING)), coalesce=False)
    players = [GameInfo(f"g{k}", white=f"W{k}", black=f"B{k}", white_elo=2400, black_elo=2300) for k in range(3)]
    for info in players:
        runner.put(info)
        runner.put_all(moves_of(info.game_id, OPENING))
    runner.run_until_idle()
    published.clear()
    runner.put(Tick())
    runner.put(GameResult("g0", "1-0", plies=len(OPENING)))
    assert runner.step(max_events=1) == 1 and runner.busy and runner.core.owed  # the tick; its work waits
    assert runner.step(max_events=1) == 1 and "g0" not in runner.core.results  # a unit of it, not the result
    units = 2 + runner.run_until_idle()
    assert units >= 5  # the tick, its pairs, the solve, six estimates, then the result
    assert not runner.busy and runner.core.results["g0"] == "1-0"
    assert {m.name for m in published if isinstance(m, PlayerEstimate)} == {p.white for p in players} | {
        p.black for p in players}


def test_a_unit_of_owed_work_that_fails_is_said_once_and_the_work_goes_on_unless_strict():
    said: list[tuple[int, str]] = []
    runner, _, _, published = runner_of(Cache(boards_of(OPENING)))
    runner.strict, runner.log = False, lambda level, text: said.append((level, text))
    runner.put_all([INFO, *moves_of("g1", OPENING)])
    runner.run_until_idle()
    core = runner.core
    built = core.player_estimate
    core.player_estimate = lambda p, **kw: (_ for _ in ()).throw(RuntimeError("a bug")) if p.name == INFO.white \
        else built(p, **kw)  # type: ignore[method-assign]
    published.clear()
    runner.put(Ratings((TTTRating(INFO.white, 0.1, 0.9, 2450.0, 150.0, 3), TTTRating(INFO.black, 0.1, 0.9, 2350.0, 150.0, 3))))
    runner.run_until_idle()
    assert len(said) == 1 and "could not handle a unit of the work a tick or a TTT refresh left" in said[0][1]
    assert not core.owed and not runner.busy


def test_an_event_that_fails_is_said_once_and_the_next_goes_on_unless_strict():
    said: list[tuple[int, str]] = []
    core = LiveCore(profile=PROFILE)
    runner = Runner(core, log=lambda level, text: said.append((level, text)), strict=False)
    bad = Answered(Analyse("g1", 0, chess.Board(), 0.0), analysis_of(chess.Board()), PROFILE)
    core.analysed = None  # type: ignore[assignment,method-assign]  # a bug in the core
    runner.put(bad)
    runner.put(INFO)
    runner.run_until_idle()
    assert len(said) == 1 and "could not handle the answer for game g1 position 0" in said[0][1]
    assert "g1" in runner.core.games  # the next event went on


async def test_the_monitors_feed_waits_while_the_inbox_is_full_and_every_message_is_handled(tmp_path, monkeypatch):
    import livemon.app.monitor as monitor_module
    from livemon.config import Config

    monkeypatch.setattr(monitor_module, "INBOX_HIGH", 4)
    cfg = Config()
    cfg.store.path = str(tmp_path / "s.sqlite")
    monitor = monitor_module.Monitor(cfg)
    monitor.runner.apply(monitor.core.configure(PROFILE, cache=Cache(boards_of(OPENING))))  # no engine needed
    inbox: list[int] = []

    async def feed():  # a feed as fast as a replay at full speed
        for m in [INFO, *moves_of("g1", OPENING)]:
            inbox.append(len(monitor.runner.inbox))
            yield m

    try:
        await monitor._run_feed(feed())  # type: ignore[arg-type]
        await monitor.drain()
    finally:
        monitor.store.close()
    assert max(inbox) <= 4 and monitor.core.counters.moves == len(OPENING)
    assert sorted(monitor.estimator.games["g1"].plies) == list(range(1, len(OPENING) + 1))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_the_players_channels_c_posterior_is_analyses_whatever_order_the_answers_come_in(seed):
    """Two games sharing a player, their engine answers handed to the runner in a shuffled order, a step (and a
    flush: the posterior read) after each: the last ``players`` message of each player carries the c figures
    ``analyse --json`` reports for the same games (its posterior rebuilt in game order)."""
    games = {"g1": (INFO, OPENING), "g2": (GameInfo("g2", white=INFO.black, black="Third C", white_elo=2300,
                                                   black_elo=2200, event="Test"), random_game(seed, 40))}
    runner, engine, _, published = runner_of(None)
    for gid, (info, ucis) in games.items():
        runner.put_all([info, *moves_of(gid, ucis)])
    runner.run_until_idle()
    answers = list(engine.requests)
    random.Random(seed).shuffle(answers)
    for r in answers:
        runner.put(Answered(r, analysis_of(r.board), PROFILE))
        runner.step()
    last = {m.name: m for m in published if isinstance(m, PlayerEstimate)}

    reference = LiveCore(profile=PROFILE)  # analyse's: each game fed in order, its answers in order
    reference.configure(PROFILE)
    asked = Engine()
    in_order = Runner(reference, engine=asked)
    for gid, (info, ucis) in games.items():
        in_order.put_all([info, *moves_of(gid, ucis)])
        in_order.run_until_idle()
        for r in sorted(asked.requests, key=lambda r: r.index):
            in_order.put(Answered(r, analysis_of(r.board), PROFILE))
        asked.requests.clear()
        in_order.run_until_idle()
    reported = {p.name: p for p in reference.player_estimates()}

    assert sorted(last) == sorted(reported) == sorted({INFO.white, INFO.black, "Third C"})
    assert all(p.c_mean is not None for p in reported.values())
    for name, live in last.items():
        assert codec.report_entry(live) == codec.report_entry(reported[name]), name  # the wire's figures, all of them
        # read on the grid the decisions call for, whatever grids they passed through: the last bits of a sum apart
        assert live.c_mean == pytest.approx(reported[name].c_mean, abs=1e-12)
        assert live.c_sd == pytest.approx(reported[name].c_sd, abs=1e-12)
        assert live.c_cr95 == pytest.approx(reported[name].c_cr95, abs=1e-12)
