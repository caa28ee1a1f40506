"""The last TTT fit (table ``ttt_state``, one row): a restart continues from it."""

from __future__ import annotations

from livemon.io.store.engine import Engine

TABLES = """
CREATE TABLE IF NOT EXISTS ttt_state (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    state  BLOB,                       -- pickled warm-start state of the last fit
    report TEXT                        -- JSON of the last posteriors
);
"""


class TttState:
    """The one stored TTT fit of a store: its warm-start state and its report.

    >>> ttt = TttState(Engine(":memory:", schema=TABLES))
    >>> ttt.get()
    (None, None)
    >>> ttt.put(b"state", "{}"); ttt.get()
    (b'state', '{}')
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, state: bytes | None, report: str) -> None:
        """Replace the stored fit (while writes are held only the newest waits)."""
        self.engine.write(((
            "INSERT INTO ttt_state (id, state, report) VALUES (1, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET state = excluded.state, report = excluded.report",
            (state, report),
        ),), coalesce="ttt")

    def get(self) -> tuple[bytes | None, str | None]:
        row = self.engine.db.execute("SELECT state, report FROM ttt_state WHERE id = 1").fetchone()
        return (row[0], row[1]) if row else (None, None)
