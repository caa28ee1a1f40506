"""A poll's messages reach the core in slices (Monitor._run_feed), not one event-loop turn each.

A real file feed reads a whole real event at once (every game of the London Chess Classic 2011) into
a real monitor (its store, the scripted UCI engine of tests/fake_uci.py): the moves are handled in far fewer loop turns than
there are moves, and the loop still turns many times meanwhile.
"""

from __future__ import annotations

import asyncio
import io

import chess.pgn

from livemon.app.monitor import TURN_BUDGET, Monitor
from livemon.config import load_config_text
from tests.conftest import real

LONDON = "london_chess_classic_2011_twic.pgn"


def plies(text: str) -> int:
    """Plies of the games a feed takes (a game with an illegal move gives a FeedError and no moves)."""
    n, f = 0, io.StringIO(text)
    while (game := chess.pgn.read_game(f)) is not None:
        if not game.errors:
            n += sum(1 for _ in game.mainline_moves())
    return n


async def test_a_whole_round_read_at_once_is_handled_in_slices(tmp_path, fake_engine):
    pgn = tmp_path / "round.pgn"
    pgn.write_text(real(LONDON).read_text())
    total = plies(pgn.read_text())
    cfg = load_config_text(
        f'[engine]\npath = "{fake_engine}"\ndepth = 1\n[store]\npath = "{tmp_path / "m.sqlite"}"\n'
        f'[[feeds]]\nname = "round"\ntype = "file"\npath = "{pgn}"\nfollow = false\n')
    monitor = Monitor(cfg)
    turns = 0  # loop turns while the moves come in

    async def ticker() -> None:
        nonlocal turns
        while monitor.counters.moves < total:
            await asyncio.sleep(0)
            if monitor.counters.moves > 0:
                turns += 1

    run = asyncio.create_task(monitor.run())
    try:
        await asyncio.wait_for(ticker(), 120)
    finally:
        monitor.stop()
        await asyncio.wait_for(run, 30)
        monitor.store.close()
    assert monitor.counters.moves == total > 3000
    assert turns < total / 4, f"{turns} loop turns for {total} moves: about one a move, not slices of {TURN_BUDGET} s"
    assert turns >= 5, f"{turns} loop turns for {total} moves: the feed held the loop"
