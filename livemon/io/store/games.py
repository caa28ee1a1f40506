"""The games and their moves (tables ``games`` and ``moves``): everything a restart replays.

Every move is stored before it is analysed. A game and its moves are one repository: a take-back
deletes moves and reopens the game's result in one transaction, and a restart reads them together.
"""

from __future__ import annotations

from livemon.io.store.engine import Engine
from livemon.io.store.rows import row_of, stored_move, value_of
from livemon.live.messages import GameInfo, MoveEvent

TABLES = """
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    seq     INTEGER NOT NULL,          -- order first seen: fixes each player's history order
    info    TEXT NOT NULL,             -- JSON of messages.GameInfo
    result  TEXT NOT NULL DEFAULT '*'
);
CREATE TABLE IF NOT EXISTS moves (     -- every move is stored before it is analysed
    game_id    TEXT NOT NULL,
    ply        INTEGER NOT NULL,
    event      TEXT NOT NULL,          -- JSON of messages.MoveEvent
    PRIMARY KEY (game_id, ply)
) WITHOUT ROWID;
"""

Stored = tuple[GameInfo, str, list[MoveEvent]]
"""A stored game: its tags, its result and its moves by ply."""


class Games:
    """The games of one store.

    >>> games = Games(Engine(":memory:", schema=TABLES))
    >>> games.put(GameInfo("g1", "A", "B"))
    >>> games.put_move(MoveEvent("g1", 1, "e2e4", "e4", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"))
    >>> games.put_result("g1", "1-0")
    >>> [(info.game_id, result, [m.san for m in moves]) for info, result, moves in games.load()]
    [('g1', '1-0', ['e4'])]
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, info: GameInfo) -> None:
        """Record a game (or refresh its tags), keeping the order it was first seen in."""
        self.engine.write(((
            "INSERT INTO games (game_id, seq, info) VALUES (?, (SELECT COUNT(*) FROM games), ?) "
            "ON CONFLICT(game_id) DO UPDATE SET info = excluded.info",
            (info.game_id, row_of(info)),
        ),))

    def put_move(self, move: MoveEvent) -> None:
        """A move (a batch's moves go in together: :meth:`Engine.write_row`)."""
        self.engine.write_row("INSERT OR REPLACE INTO moves (game_id, ply, event) VALUES (?, ?, ?)",
                              (move.game_id, move.ply, row_of(move)))

    def put_result(self, game_id: str, result: str) -> None:
        self.engine.write((("UPDATE games SET result = ? WHERE game_id = ?", (result, game_id)),))

    def delete_moves(self, game_id: str, from_ply: int) -> None:
        """Take back the moves from ``from_ply`` on; the game is unfinished again."""
        self.engine.write((
            ("DELETE FROM moves WHERE game_id = ? AND ply >= ?", (game_id, from_ply)),
            ("UPDATE games SET result = '*' WHERE game_id = ?", (game_id,)),
        ))

    def delete(self, game_id: str) -> None:
        """Forget a game and its moves (withdrawn by its feed)."""
        self.engine.write((
            ("DELETE FROM moves WHERE game_id = ?", (game_id,)),
            ("DELETE FROM games WHERE game_id = ?", (game_id,)),
        ))

    def load(self) -> list[Stored]:
        """Every stored game in the order first seen: (info, result, moves by ply)."""
        self.engine.run_rows()
        db = self.engine.db
        moves: dict[str, list[MoveEvent]] = {}
        for game_id, text in db.execute("SELECT game_id, event FROM moves ORDER BY game_id, ply"):
            moves.setdefault(game_id, []).append(stored_move(value_of(MoveEvent, text)))
        return [
            (value_of(GameInfo, info), result, moves.get(game_id, []))
            for game_id, info, result in db.execute("SELECT game_id, info, result FROM games ORDER BY seq")
        ]
