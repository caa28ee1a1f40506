"""A game's life: the one transition table, and every event a state does not accept refused in one clear line."""

from __future__ import annotations

import itertools

import pytest

from livemon.errors import LivemonError
from livemon.live.lifecycle import TRANSITIONS, GameEvent, GameLife, GameState, LifecycleError


def test_the_table_takes_a_game_from_live_to_archived_and_back_through_reopened():
    life = GameLife()
    path = [GameEvent.RESULT, GameEvent.SETTLE, GameEvent.ARCHIVE, GameEvent.REOPEN, GameEvent.UNFINISH,
            GameEvent.RESULT, GameEvent.SETTLE]
    assert [life.send(e) for e in path] == [GameState.FINISHED, GameState.SETTLED, GameState.ARCHIVED,
                                            GameState.REOPENED, GameState.REOPENED, GameState.REOPENED,
                                            GameState.SETTLED]


@pytest.mark.parametrize(("state", "event"), [
    (s, e) for s, e in itertools.product(GameState, GameEvent) if (s, e) not in TRANSITIONS])
def test_an_event_the_state_does_not_accept_raises_one_line_naming_both(state, event):
    life = GameLife(state)
    assert not life.can(event)
    with pytest.raises(LifecycleError) as info:
        life.send(event)
    assert isinstance(info.value, LivemonError) and life.state is state  # nothing moved
    message = str(info.value)
    assert "\n" not in message and state.value in message and event.value in message


def test_every_state_is_reachable_from_live_and_released_means_settled_or_archived():
    reached, frontier = {GameState.LIVE}, [GameState.LIVE]
    while frontier:
        s = frontier.pop()
        for (a, _), b in TRANSITIONS.items():
            if a is s and b not in reached:
                reached.add(b)
                frontier.append(b)
    assert reached == set(GameState)
    assert {s for s in GameState if GameLife(s).released} == {GameState.SETTLED, GameState.ARCHIVED}


def test_the_architecture_documents_the_table_as_it_is():
    """docs/ARCHITECTURE.md's table of a game's life is :data:`TRANSITIONS`, cell for cell."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")
            and line.split("|")[1].strip() in {s.value for s in GameState}]
    events = [GameEvent.RESULT, GameEvent.UNFINISH, GameEvent.SETTLE, GameEvent.ARCHIVE, GameEvent.REOPEN]
    documented = {(GameState(cells[0].strip()), e): GameState(cell.strip())
                  for cells in rows for e, cell in zip(events, cells[1:]) if cell.strip()}
    assert len(rows) == len(GameState) and documented == TRANSITIONS
