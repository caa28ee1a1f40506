"""The live TTT job: priors at every refresh, bad games skipped, a worker that dies with its parent."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path

import chess.pgn
import pytest

from livemon.config import TTTConfig
from livemon.io.tttjob import TTTJob
from livemon.live.finished import FinishedGames
from livemon.live.messages import GameInfo
from livemon.live.pgn import game_info, split_games


def london_2011() -> list[tuple[GameInfo, str]]:
    """The bundled London Chess Classic 2011 in file order (round by round), with results."""
    text = resources.files("livemon").joinpath("data/london_2011.pgn").read_text(encoding="utf-8")
    out = []
    for i, (chunk, _) in enumerate(split_games(text)):
        headers = chess.pgn.read_headers(io.StringIO(chunk))
        assert headers is not None  # the tags are what counts
        out.append((game_info(headers, f"g{i}"), headers["Result"]))
    return out


def test_replayed_event_keeps_every_players_rating_tag_prior():
    """Refresh after every finished game, as the monitor does: a player first seen in a late
    game keeps a rating near their tag (live, before the fix: Aronian 2802 shown as 1093 ± 719)."""
    games = london_2011()
    tags = {}
    for info, _ in games:
        tags.setdefault(info.white, info.white_elo)
        tags.setdefault(info.black, info.black_elo)
    first_game = {}
    for i, (info, _) in enumerate(games):
        first_game.setdefault(info.white, i)
        first_game.setdefault(info.black, i)
    late = max(first_game, key=first_game.get)
    assert first_game[late] > 0  # the player with the round-1 bye

    cfg = TTTConfig()
    job = TTTJob(cfg)
    finished = FinishedGames()
    try:
        for n, (info, result) in enumerate(games, 1):
            finished.set(info, result)
            asyncio.run(job.refresh(finished))
            ratings = dict(job.latest)
            if n == first_game[late] + 1:  # the refresh right after their first game
                r = ratings[late]
                assert abs(r.elo - tags[late]) < 300 and r.elo_sigma < 200, r
        cold = TTTJob(cfg)
        try:
            fresh = {r.name: r for r in asyncio.run(cold.refresh(FinishedGames(games)))}
        finally:
            cold.close()
    finally:
        job.close()
    assert set(ratings) == set(tags)
    for name, r in ratings.items():
        assert r.elo_sigma < 200, r  # tighter than the rating-tag prior (elo_sigma 1 β = 200 Elo)
        assert abs(r.elo - tags[name]) < 400, r
        assert r.elo == pytest.approx(fresh[name].elo, abs=0.5)  # live equals a cold fit of the event
        assert r.elo_sigma == pytest.approx(fresh[name].elo_sigma, abs=0.5)


def test_games_without_two_named_players_are_skipped_with_one_line(caplog):
    games = [
        (GameInfo("a", white="Kasparov", black="Karpov", date="1985.09.03"), "1-0"),
        (GameInfo("b", white="?", black="?", date="1985.09.03"), "1-0"),
        (GameInfo("c", white="", black="", date="1985.09.04"), "1/2-1/2"),
        (GameInfo("d", white="Karpov", black="Karpov", date="1985.09.04"), "0-1"),
        (GameInfo("e", white="Karpov", black="Kasparov", date="1985.09.05"), "1/2-1/2"),
    ]
    job = TTTJob(TTTConfig())
    finished = FinishedGames(games)
    try:
        with caplog.at_level(logging.WARNING, logger="livemon.io.tttjob"):
            first = {r.name: r for r in asyncio.run(job.refresh(finished))}
            again = asyncio.run(job.refresh(finished))
    finally:
        job.close()
    assert set(first) == set(job.latest) == {"Kasparov", "Karpov"}
    assert again == []  # the same games: nothing sent, nothing moved
    assert first["Kasparov"].games == 2
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and all("skipped" in line for line in lines)  # one line per game, not per refresh
    assert not any(r.exc_info for r in caplog.records)


def test_stored_fit_is_read_back_and_bad_state_is_one_line(caplog):
    games = london_2011()
    job = TTTJob(TTTConfig())
    try:
        asyncio.run(job.refresh(FinishedGames(games[:20])))
        state = asyncio.run(job.state_bytes())
    finally:
        job.close()
    restarted = TTTJob(TTTConfig())
    try:
        assert restarted.restore(state)
        ratings = asyncio.run(restarted.refresh(FinishedGames(games[:21])))  # the restarted core's list
        assert restarted.games == 21 and len(ratings) == 9  # continued: every player reported once
        with caplog.at_level(logging.WARNING, logger="livemon.io.tttjob"):
            assert not restarted.restore(b"not a pickle")
        assert len(caplog.records) == 1 and "fits afresh" in caplog.records[0].getMessage()
    finally:
        restarted.close()


def _groups(copies: int) -> list[tuple[GameInfo, str]]:
    """London 2011 played by ``copies`` separate groups of players (a big open's unconnected sections),
    round by round: group k's names end in ``/k``."""
    games = london_2011()
    out = []
    for info, result in games:
        for k in range(copies):
            out.append((dataclasses.replace(info, game_id=f"{info.game_id}/{k}", white=f"{info.white}/{k}",
                                            black=f"{info.black}/{k}"), result))
    return out


def _sent(job: TTTJob, monkeypatch) -> list[tuple[int, int]]:
    """Record (start, games) of every batch the job sends to its worker."""
    sent: list[tuple[int, int]] = []
    send = job._send

    async def recording(batch, seed):
        sent.append((batch.start, len(batch.white)))
        return await send(batch, seed)

    monkeypatch.setattr(job, "_send", recording)
    return sent


def test_a_refresh_sends_the_new_games_and_returns_the_players_they_moved(monkeypatch):
    """The worker keeps the fit; a game just finished is all that travels, and the players
    returned are those it moved (its own section's), while every rating stays that of a cold fit."""
    games = _groups(6)
    job = TTTJob(TTTConfig())
    sent = _sent(job, monkeypatch)
    finished = FinishedGames(games[:120])
    try:
        first = asyncio.run(job.refresh(finished))
        assert len(first) == len(job.latest) == 54 and sent == [(0, 120)]
        for n in range(121, len(games) + 1):
            finished.set(*games[n - 1])
            moved = asyncio.run(job.refresh(finished))
            new = games[n - 1][0]
            section = new.white.rsplit("/", 1)[1]
            assert {new.white, new.black} <= {r.name for r in moved}
            assert all(r.name.endswith("/" + section) for r in moved), (new.game_id, [r.name for r in moved])
        assert sent[1:] == [(n, 1) for n in range(120, len(games))]
        cold = TTTJob(TTTConfig())
        try:
            asyncio.run(cold.refresh(FinishedGames(games)))
        finally:
            cold.close()
    finally:
        job.close()
    assert set(job.latest) == set(cold.latest)
    for name, r in job.latest.items():
        c = cold.latest[name]
        assert abs(r.elo - c.elo) < 0.5 and abs(r.elo_sigma - c.elo_sigma) < 0.5, (r, c)
        assert r.games == c.games


def test_a_corrected_result_or_a_new_worker_sends_the_whole_list(monkeypatch):
    games = london_2011()
    job = TTTJob(TTTConfig())
    sent = _sent(job, monkeypatch)
    finished = FinishedGames(games[:30])
    try:
        asyncio.run(job.refresh(finished))
        info, result = games[10]
        finished.set(info, "0-1" if result != "0-1" else "1-0")  # corrected: a revision
        asyncio.run(job.refresh(finished))
        job.close()  # the worker is gone: the next one has no fit, the whole list again
        finished.set(*games[30])
        asyncio.run(job.refresh(finished))
        again = asyncio.run(job.refresh(FinishedGames(finished)))  # another list (equal): sent whole, all reported
        assert len(again) == len(job.latest) == 9
        assert sent == [(0, 30), (0, 30), (30, 1), (0, 31), (0, 31)]
        cold = TTTJob(TTTConfig())
        try:
            asyncio.run(cold.refresh(FinishedGames(finished)))
        finally:
            cold.close()
    finally:
        job.close()
    for name, r in job.latest.items():
        assert r.elo == pytest.approx(cold.latest[name].elo, abs=0.5)


def test_a_failed_refresh_is_sent_again_and_counts_each_game_once(monkeypatch):
    games = london_2011()
    job = TTTJob(TTTConfig())
    send = job._send
    calls = []

    async def failing_once(batch, seed):
        calls.append(batch.start)
        if len(calls) == 2:
            raise OSError("the worker went away")
        return await send(batch, seed)

    monkeypatch.setattr(job, "_send", failing_once)
    finished = FinishedGames(games[:10])
    try:
        asyncio.run(job.refresh(finished))
        finished.set(*games[10])
        finished.set(*games[11])
        with pytest.raises(OSError):
            asyncio.run(job.refresh(finished))
        asyncio.run(job.refresh(finished))
    finally:
        job.close()
    assert calls == [0, 10, 10]
    counts: dict[str, int] = {}
    for info, _ in games[:12]:
        counts[info.white] = counts.get(info.white, 0) + 1
        counts[info.black] = counts.get(info.black, 0) + 1
    assert {n: r.games for n, r in job.latest.items()} == counts


def test_a_worker_killed_from_outside_is_one_line_and_the_next_refresh_starts_another(caplog):
    games = london_2011()
    job = TTTJob(TTTConfig())
    finished = FinishedGames(games[:10])
    try:
        asyncio.run(job.refresh(finished))
        for pid in job.worker_pids():
            os.kill(pid, signal.SIGKILL)
        finished.set(*games[10])
        with caplog.at_level(logging.WARNING, logger="livemon.io.tttjob"):
            assert asyncio.run(job.refresh(finished)) == []  # no exception: one line, nothing moved
        lines = [r for r in caplog.records if r.name == "livemon.io.tttjob"]
        assert len(lines) == 1 and "worker process died" in lines[0].getMessage() and lines[0].exc_info is None
        moved = asyncio.run(job.refresh(finished))  # a new worker, sent the whole list
        assert {r.name for r in moved} == {n for info, _ in games[:11] for n in (info.white, info.black)}
    finally:
        job.close()


def test_a_worker_signalled_while_it_starts_survives():
    """SIGTERM to the monitor's process group (systemd, ``kill -- -pgid``) can reach the worker before it has
    set itself to ignore it: it starts with the signal blocked (livemon.io.procs), so the refresh still gets its answer."""
    games = london_2011()
    job = TTTJob(TTTConfig())

    async def signalled_at_spawn() -> list:
        refresh = asyncio.ensure_future(job.refresh(FinishedGames(games[:10])))
        while not job.worker_pids():
            await asyncio.sleep(0.0005)
        for pid in job.worker_pids():  # the worker is still starting (a fresh interpreter importing numpy)
            os.kill(pid, signal.SIGTERM)
        return await refresh

    try:
        assert len(asyncio.run(signalled_at_spawn())) == 9
    finally:
        job.close()


def test_two_refreshes_at_once_count_each_game_once():
    """The monitor's TTT loop and its last refresh at the end of a run may overlap."""
    games = london_2011()
    job = TTTJob(TTTConfig())
    finished = FinishedGames(games[:10])

    async def overlapping():
        await job.refresh(finished)
        finished.set(*games[10])
        finished.set(*games[11])
        first = asyncio.ensure_future(job.refresh(finished))
        await asyncio.sleep(0)  # the first has taken the lock and read 12 games
        finished.set(*games[12])
        finished.set(*games[13])
        await asyncio.gather(first, job.refresh(finished))

    try:
        asyncio.run(overlapping())
    finally:
        job.close()
    counts: dict[str, int] = {}
    for info, _ in games[:14]:
        counts[info.white] = counts.get(info.white, 0) + 1
        counts[info.black] = counts.get(info.black, 0) + 1
    assert {n: r.games for n, r in job.latest.items()} == counts


PARENT = textwrap.dedent("""
    import asyncio, sys, time
    from livemon.config import TTTConfig
    from livemon.io.tttjob import TTTJob
    from livemon.live.finished import FinishedGames
    from livemon.live.messages import GameInfo

    if __name__ == "__main__":
        job = TTTJob(TTTConfig(), pdeathsig=sys.argv[1] == "1")
        asyncio.run(job.refresh(FinishedGames([(GameInfo("a", white="A", black="B", date="2024.01.01"), "1-0")])))
        print(*job.worker_pids(), flush=True)
        time.sleep(120)
""")


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie waiting for a reaper is dead


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("pdeathsig", [True, False], ids=["prctl", "pipe only"])
def test_worker_dies_with_its_parent(tmp_path, pdeathsig):
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), "1" if pdeathsig else "0"],
                              stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        line = parent.stdout.readline()
        pids = [int(x) for x in line.split()]
        assert len(pids) == 1 and _alive(pids[0])
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5.0
        while _alive(pids[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pids[0]), "TTT worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_the_cores_list_is_followed_by_its_new_games_alone_until_a_revision(monkeypatch):
    """A refresh of the core's finished games (appended as games finish) looks at the games after
    those it took, not at every finished game on the event loop; a corrected result is a revision of the
    list and sends it whole; the ratings equal a cold fit's."""
    games = london_2011()
    finished = FinishedGames()
    job = TTTJob(TTTConfig())
    sent = _sent(job, monkeypatch)
    looked: list[int] = []
    usable = job._usable

    def counting(given):
        looked.append(len(given))
        return usable(given)

    monkeypatch.setattr(job, "_usable", counting)
    try:
        for info, result in games[:30]:
            finished.set(info, result)
        asyncio.run(job.refresh(finished))
        for info, result in games[30:33]:
            finished.set(info, result)
            asyncio.run(job.refresh(finished))
        assert asyncio.run(job.refresh(finished)) == []  # nothing new: nothing sent
        assert looked == [30, 1, 1, 1, 0] and sent == [(0, 30), (30, 1), (31, 1), (32, 1)]
        info, result = games[5]
        finished.set(info, "0-1" if result != "0-1" else "1-0")  # corrected: the whole list again
        asyncio.run(job.refresh(finished))
        finished.drop(games[7][0].game_id)  # withdrawn: the whole list again
        asyncio.run(job.refresh(finished))
        assert looked[5:] == [33, 32] and sent[4:] == [(0, 33), (0, 32)]
        cold = TTTJob(TTTConfig())
        try:
            asyncio.run(cold.refresh(FinishedGames(finished)))
        finally:
            cold.close()
    finally:
        job.close()
    assert job.latest.keys() == cold.latest.keys()
    for name, r in job.latest.items():
        assert r.elo == pytest.approx(cold.latest[name].elo, abs=0.5) and r.games == cold.latest[name].games


def test_games_that_finish_while_the_worker_fits_are_sent_with_the_next_refresh(monkeypatch):
    """The core's list grows during a refresh (the loop runs while the worker fits): what the refresh took is
    what the list held when it read it (a first try counted the games added meanwhile as sent)."""
    games = london_2011()
    finished = FinishedGames()
    job = TTTJob(TTTConfig())
    send = job._send
    sent = []

    async def finishing_meanwhile(batch, seed):
        sent.append((batch.start, len(batch.white)))
        if len(finished) < 12:
            info, result = games[len(finished)]
            finished.set(info, result)  # another game finishes while the worker fits
        return await send(batch, seed)

    monkeypatch.setattr(job, "_send", finishing_meanwhile)
    try:
        for info, result in games[:10]:
            finished.set(info, result)
        asyncio.run(job.refresh(finished))  # takes 10; an 11th finishes meanwhile
        asyncio.run(job.refresh(finished))  # takes the 11th; a 12th finishes meanwhile
        asyncio.run(job.refresh(finished))
    finally:
        job.close()
    assert sent == [(0, 10), (10, 1), (11, 1)] and job.games == 12
    counts: dict[str, int] = {}
    for info, _ in games[:12]:
        counts[info.white] = counts.get(info.white, 0) + 1
        counts[info.black] = counts.get(info.black, 0) + 1
    assert {n: r.games for n, r in job.latest.items()} == counts
