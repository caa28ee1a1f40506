"""The live forecast: the monitor's state simulated in a process of its own (else a thread) and published on the
hub's forecast channel."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import chess.pgn
import pytest

from livemon.app.forecast_live import LiveForecast, snapshot
from livemon.app.monitor import Monitor
from livemon.config import EventConfig, load_config_text
from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.live.core import LiveCore
from livemon.live.messages import EventForecast, GameResult
from livemon.live.pgn import split_games
from livemon.live.tracker import GameTracker, snapshot_of_game
from tests.conftest import real


def _feed(core: LiveCore, pgn: Path, rounds: int, live_round: int | None = None, cut_ply: int = 30) -> None:
    """The games of ``pgn`` up to ``rounds`` into the core as a feed sends them; those of ``live_round`` cut
    at ``cut_ply`` and left unfinished."""
    import io

    for i, (chunk, _) in enumerate(split_games(pgn.read_text(encoding="utf-8"))):
        headers = chess.pgn.read_headers(io.StringIO(chunk))  # a later round's moves are not read
        assert headers is not None
        rnd = int(headers["Round"].split(".")[0])
        if rnd > rounds:
            continue
        game = chess.pgn.read_game(io.StringIO(chunk))
        assert game is not None
        if rnd == live_round:
            node = game
            for _ in range(cut_ply):
                if not node.variations:
                    break
                node = node.variations[0]
            node.variations = []
            game.headers["Result"] = "*"
        for msg in GameTracker().update(snapshot_of_game(game), f"g{i}"):
            if live_round == rnd and isinstance(msg, GameResult):
                continue
            core.handle(msg)


async def test_a_round_in_progress_is_forecast_and_published() -> None:
    core = LiveCore()
    _feed(core, real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"), 5, live_round=5)
    records = snapshot(core)
    (event,) = records  # each game its own Event tag ("Round 1: A - B"): one event of all games
    assert event == "all games"
    assert sum(r.score is None for r in records[event]) == 5  # round 5 in progress
    assert any(r.eval_cp is not None for r in records[event] if r.score is None)  # valued from its [%eval]s
    hub = Hub()
    sub = hub.subscribe({"forecast"})
    job = LiveForecast(EventConfig(format="rr", rounds=9), hub, simulations=5000)
    (msg,) = await job.once(core)
    assert isinstance(msg, EventForecast) and msg.error is None
    assert msg.format == "rr" and msg.rounds == 9 and msg.round == 5 and msg.games_in_progress == 5
    assert sum(p["p_first"] for p in msg.players) == pytest.approx(1.0, abs=1e-3)
    assert all(p["p_first_round_start"] == p["p_first"] for p in msg.players)  # the round's first forecast
    _, got = sub.queue.get_nowait()
    assert got == msg and hub.snapshot("forecast")[1] == [msg]
    assert codec.from_json(codec.to_json(msg)) == msg  # the wire form (WebSocket, MQTT) round-trips
    # the round goes on: the change since the round began is kept
    _feed(core, real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"), 5)
    (later,) = await job.once(core)
    assert later.games_in_progress == 0
    start = {p["name"]: p["p_first_round_start"] for p in later.players}
    assert start == {p["name"]: p["p_first"] for p in msg.players}


async def test_only_what_moved_is_forecast_again_and_the_state_is_kept() -> None:
    rr = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn")
    core = LiveCore()
    _feed(core, rr, 5, live_round=5, cut_ply=30)
    job = LiveForecast(EventConfig(format="rr", rounds=9), Hub(), simulations=5000)
    (first,) = await job.once(core)
    assert (job.reads, job.simulated, job.weighed) == (1, 1, 0)
    live = [r for ev in job._events.values() for r in ev.records.values() if r.score is None]
    assert len(live) == 5 and all(r.clocks is not None and 0 < r.ply <= 30 for r in live)  # both [%clk]s, live
    assert await job.once(core) == [] and job.simulated == 1  # nothing moved: nothing simulated
    _feed(core, rr, 5, live_round=5, cut_ply=34)  # two more moves in every game of the round
    (later,) = await job.once(core)
    assert job.reads == 1 and job.simulated + job.weighed == 2  # the state kept: only the games in progress valued
    assert later.games_in_progress == 5 and later.players != first.players
    _feed(core, rr, 5)  # the round ends: results, the state read again
    (done,) = await job.once(core)
    assert job.reads == 2 and done.games_in_progress == 0
    assert sum(p["p_first"] for p in done.players) == pytest.approx(1.0, abs=1e-3)


async def test_a_swiss_without_rounds_is_one_line_not_a_guess() -> None:
    core = LiveCore()
    _feed(core, real("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"), 1)
    job = LiveForecast(EventConfig(format="swiss"), Hub(), simulations=500)
    msgs = await job.once(core)
    assert msgs and all(m.error and "number of rounds" in m.error and not m.players for m in msgs)
    assert all("[event] rounds in the monitor's config" in m.error and "--rounds" not in m.error for m in msgs)  # not a CLI


def test_live_seconds_is_checked() -> None:
    assert load_config_text("[event]\nlive_seconds = 0").event.live_seconds == 0
    with pytest.raises(ValueError, match="event.live_seconds"):
        load_config_text("[event]\nlive_seconds = -1")


async def test_the_monitor_publishes_forecasts_while_it_replays(tmp_path: Path, fake_engine: str) -> None:
    import multiprocessing

    def forecasters() -> set[object]:
        return {p for p in multiprocessing.active_children() if p.name == "livemon-forecast"}

    before = forecasters()  # other tests' jobs, in this process
    chunks = [c for c, _ in split_games(real("london_chess_classic_2011_twic.pgn").read_text())][:8]
    pgn = tmp_path / "london_r12.pgn"
    pgn.write_text("\n".join(chunks))
    cfg = load_config_text(
        f'[engine]\npath = "{fake_engine}"\ndepth = 3\nbacklog_high = 1000000\n[store]\npath = "{tmp_path / "live.sqlite"}"\n'
        f'[event]\nlive_seconds = 0.05\n[web]\nport = 0\n'
        f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = 0\nmax_delay = 0.05\n')
    monitor = Monitor(cfg)
    sub = monitor.hub.subscribe({"forecast"})
    await asyncio.wait_for(monitor.run(until_feeds_end=True), 120)
    seen = []
    while not sub.queue.empty():
        seen.append(sub.queue.get_nowait()[1])
    assert seen and monitor.forecast.forecasts >= 1
    assert monitor.forecast.worker_cpu > 0  # forecast in its process,
    assert monitor.forecast._worker is None and forecasters() <= before  # which stopped with the monitor
    last = seen[-1]
    assert isinstance(last, EventForecast) and last.event == "3rd London Chess Classic"
    assert last.format == "rr" and sum(p["p_first"] for p in last.players) == pytest.approx(1.0, abs=1e-3)


async def test_the_commentary_screen_shows_the_forecast_once_there_is_one() -> None:
    from livemon.faces.tui import CommentaryApp
    from livemon.faces.tui.widgets import ForecastTable

    hub = Hub()
    app = CommentaryApp(hub)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.query_one("#forecast").display is False  # nothing to show: the layout is as without it
        rows = ({"name": "Oro, Faustino", "score": 4.0, "p_first": 0.62, "p_first_round_start": 0.5, "p_winner": 0.62,
                 "p_top3": 0.95, "expected_score": 6.1, "max_score": 8.0, "needs": 6.0},
                {"name": "Malka, Samuel", "score": 3.0, "p_first": 0.38, "p_first_round_start": 0.5, "p_winner": 0.38,
                 "p_top3": 0.9, "expected_score": 5.2, "max_score": 7.0, "needs": 6.5})
        hub.publish(EventForecast("BBDDNRR 2025", "rr", 9, 4, 5, 20000, 2, rows))
        await pilot.pause(0.2)
        table = app.query_one(ForecastTable)
        assert app.query_one("#forecast").display is True and table.order == ["Oro, Faustino", "Malka, Samuel"]
        assert [str(table.get_cell("Oro, Faustino", c)) for c in ("first", "delta", "needs")] == ["62.0%", "+12.0", "6"]
        assert "round 5" in str(app.query_one("#forecast").border_title)


async def test_the_simulations_run_in_a_process_of_their_own_sent_only_what_changed() -> None:
    import multiprocessing
    import os

    rr = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn")
    jobs = {mode: LiveForecast(EventConfig(format="rr", rounds=9, name="BBDDNRR"), Hub(), simulations=5000,
                               process=mode) for mode in (True, False)}
    made: dict[bool, list[EventForecast]] = {True: [], False: []}
    for mode, job in jobs.items():
        core = LiveCore()
        _feed(core, rr, 5, live_round=5, cut_ply=30)
        made[mode] += await job.once(core)
        if mode:
            worker = job._worker
            assert worker is not None and worker.proc.pid != os.getpid() and worker.proc.is_alive()
        _feed(core, rr, 5, live_round=5, cut_ply=34)  # two more moves in every game: only those records are sent
        (ev,) = job._events.values()
        assert len(ev.dirty) == 0
        job.update(core)
        assert 0 < len(ev.dirty) <= 5 and ev.synced  # the next job is the games in progress that moved
        made[mode] += await job.once(core)
        _feed(core, rr, 5)  # the round ends
        made[mode] += await job.once(core)
    proc = jobs[True]._worker
    assert proc is not None and jobs[True].process and jobs[False]._worker is None
    # the same records, the same seed: the process forecasts what the thread does
    assert [m.players for m in made[True]] == [m.players for m in made[False]]
    assert (jobs[True].reads, jobs[True].simulated + jobs[True].weighed) == (2, 3)
    jobs[True].close()
    assert jobs[True]._worker is None and not proc.proc.is_alive() and proc.proc.exitcode == 0
    assert proc.proc not in multiprocessing.active_children()


async def test_the_process_ends_with_the_job_and_no_process_falls_back_to_a_thread(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import multiprocessing

    from livemon.app import forecast_live

    rr = real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn")
    core = LiveCore()
    _feed(core, rr, 5, live_round=5)
    job = LiveForecast(EventConfig(format="rr", rounds=9, live_seconds=0.05), Hub(), simulations=2000)
    task = asyncio.create_task(job.run(core))
    for _ in range(600):
        await asyncio.sleep(0.1)
        if job.forecasts:
            break
    worker = job._worker
    assert job.forecasts >= 1 and worker is not None and worker.proc.is_alive()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert job._worker is None and not worker.proc.is_alive()  # stopped with the job: no process left behind
    assert worker.proc not in multiprocessing.active_children()
    # a forecast given up while its process works on it: that process told to end, the next forecast a new one
    job = LiveForecast(EventConfig(format="rr", rounds=9), Hub(), simulations=2000)
    first = asyncio.create_task(job.once(core))
    while job._worker is None or job._worker.jobs == 0:
        await asyncio.sleep(0.01)
    given_up = job._worker
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    (msg,) = await job.once(core)
    assert msg.error is None and job._worker is not None and job._worker is not given_up
    job.close()
    assert not given_up.proc.is_alive() and job._worker is None

    def cannot(*_: object) -> None:
        raise OSError("no processes here")

    monkeypatch.setattr(forecast_live._Worker, "__init__", cannot)
    job = LiveForecast(EventConfig(format="rr", rounds=9), Hub(), simulations=2000)
    with caplog.at_level("WARNING", logger="livemon.app.forecast_live"):
        (msg,) = await job.once(core)
    assert msg.error is None and sum(p["p_first"] for p in msg.players) == pytest.approx(1.0, abs=1e-3)
    assert not job.process and job._worker is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert "no processes here" in line and "thread" in line


async def test_the_live_forecast_counts_a_listed_player_who_has_not_played_yet() -> None:
    """The monitor's forecast reads [[event.players]] as ``livemon forecast`` does: after London 2011's first round
    (eight players in its games, one resting) it forecasts nine players over 9 rounds; the players are keyed by
    their FIDE ids, as the command keys them, so a listed id finds its player whatever the spelling."""
    from livemon.app.monitor import bundled_event

    core = LiveCore()
    _feed(core, real("london_chess_classic_2011_twic.pgn"), 1)
    guessed, = await LiveForecast(EventConfig(), Hub(), simulations=500).once(core)
    assert len(guessed.players) == 8 and guessed.rounds == 7
    event = bundled_event(EventConfig())  # the demo's: the bundled replay is this event
    renamed = [type(p)("Carlsen, Magnus", p.rating, p.fide_id) if p.name == "Carlsen,M" else p for p in event.players]
    for cfg in (event, EventConfig(format="rr", players=renamed)):
        msg, = await LiveForecast(cfg, Hub(), simulations=500).once(core)
        names = {p["name"]: p for p in msg.players}
        assert len(names) == 9 and msg.rounds == 9 and msg.rounds_left == 8 and msg.error is None
        assert names["Short,N"]["score"] == 0 and names["Short,N"]["max_score"] == 8 and names["Carlsen,M"]["score"] == 1
    # the demo's field carries the tags' titles and federations, for the faces where no board of a player is
    assert names["Short,N"]["title"] == "GM" and "title" not in guessed.players[0]  # (the PGN has no Fed tags)
    # listed in full, without FIDE ids: each listed player is the games' one, its title on the games' name
    full = {n.split(",")[0]: n for n in ("Adams, Michael", "Anand, Viswanathan", "Aronian, Levon", "Carlsen, Magnus",
                                          "Howell, David", "Kramnik, Vladimir", "McShane, Luke", "Nakamura, Hikaru",
                                          "Short, Nigel")}
    spelled = [dataclasses.replace(p, name=full[p.name.split(",")[0]], fide_id="") for p in event.players]
    msg, = await LiveForecast(EventConfig(format="rr", players=spelled), Hub(), simulations=500).once(core)
    names = {p["name"]: p for p in msg.players}
    # the games' names, and the listed one for Short, who rests in round 1: nine
    assert sorted(names) == sorted([p.name for p in event.players if p.name != "Short,N"] + ["Short, Nigel"])
    assert names["Carlsen,M"]["title"] == "GM" and names["Short, Nigel"]["title"] == "GM" and msg.rounds == 9
