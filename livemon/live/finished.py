"""The event's finished games in the order they finished: what the TTT fit is made of.

A game that finishes is appended. Anything else (a result corrected, a game's
players renamed, a finished game withdrawn or no longer finished) is a
*revision*: :attr:`FinishedGames.revision` counts them. So whoever follows the
list (the TTT job, :mod:`livemon.io.tttjob`) and has taken its first ``n``
games at revision ``r`` needs only the games after them while the revision is
still ``r``, without comparing the list with what it sent (which would cost
every finished game on the event loop at every refresh).

>>> from livemon.live.messages import GameInfo
>>> finished = FinishedGames()
>>> finished.set(GameInfo("g1", white="A", black="B"), "1-0")
>>> finished.set(GameInfo("g2", white="C", black="D"), "1/2-1/2")
>>> len(finished), finished.revision, finished[-1][1]
(2, 0, '1/2-1/2')
>>> finished.set(GameInfo("g1", white="A", black="B"), "1-0")  # the same again: nothing changes
>>> finished.set(GameInfo("g1", white="A", black="B"), "0-1")  # corrected
>>> finished.revision, [r for _, r in finished]
(1, ['0-1', '1/2-1/2'])
>>> finished.drop("g1"); finished.drop("g9")  # withdrawn; never finished: nothing
>>> finished.revision, [i.game_id for i, _ in finished]
(2, ['g2'])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import overload

from livemon.live.messages import GameInfo


class FinishedGames(Sequence[tuple[GameInfo, str]]):
    """``(info, result)`` of each finished game, in the order they finished; see the module docstring."""

    __slots__ = ("_games", "_at", "revision")

    def __init__(self, games: Iterable[tuple[GameInfo, str]] = ()) -> None:
        """``games``: ``(info, result)`` finished in this order (a game repeated: its last result)."""
        self._games: list[tuple[GameInfo, str]] = []
        self._at: dict[str, int] = {}  # game id -> its index in _games
        self.revision = 0
        """Changes other than a game appended, so far."""
        for info, result in games:
            self.set(info, result)
        self.revision = 0

    def set(self, info: GameInfo, result: str) -> None:
        """Game ``info.game_id`` is finished with ``result`` (appended, or a revision when it was already)."""
        i = self._at.get(info.game_id)
        if i is None:
            self._at[info.game_id] = len(self._games)
            self._games.append((info, result))
        elif self._games[i] != (info, result):
            self._games[i] = (info, result)
            self.revision += 1

    def drop(self, game_id: str) -> None:
        """Game ``game_id`` is no longer finished (withdrawn, or its result taken back): a revision."""
        i = self._at.pop(game_id, None)
        if i is None:
            return
        del self._games[i]
        for info, _ in self._games[i:]:  # O(games after it): rare
            self._at[info.game_id] -= 1
        self.revision += 1

    def __len__(self) -> int:
        return len(self._games)

    @overload
    def __getitem__(self, index: int) -> tuple[GameInfo, str]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[GameInfo, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[GameInfo, str] | list[tuple[GameInfo, str]]:
        return self._games[index]
