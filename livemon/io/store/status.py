"""The monitor's last status (table ``status``, one row), for ``livemon status`` from another process."""

from __future__ import annotations

import json
from typing import Any

from livemon.io.store.engine import Engine

TABLES = """
CREATE TABLE IF NOT EXISTS status (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    status TEXT NOT NULL               -- JSON of Monitor.status(), for `livemon status`
);
"""


class StatusRow:
    """The stored status of a store's monitor.

    >>> row = StatusRow(Engine(":memory:", schema=TABLES))
    >>> row.get() is None
    True
    >>> row.put({"moves": 3}); row.get()
    {'moves': 3}
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, status: dict[str, Any]) -> None:
        """Replace the stored status (while writes are held only the newest waits)."""
        self.engine.write(((
            "INSERT INTO status (id, status) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET status = excluded.status",
            (json.dumps(status),),
        ),), coalesce="status")

    def get(self) -> dict[str, Any] | None:
        row = self.engine.db.execute("SELECT status FROM status WHERE id = 1").fetchone()
        return None if row is None else dict(json.loads(row[0]))
