"""The fair-play alerts (table ``alerts``, arbiters only): each level raised once per player per event."""

from __future__ import annotations

from livemon.io.store.engine import Engine
from livemon.io.store.rows import row_of, value_of
from livemon.live.messages import Alert

TABLES = """
CREATE TABLE IF NOT EXISTS alerts (    -- fair-play screening: each level raised once per player per event
    player TEXT NOT NULL,
    event  TEXT NOT NULL,
    level  TEXT NOT NULL,              -- notice or alert
    raised REAL NOT NULL,              -- unix time
    alert  TEXT NOT NULL,              -- JSON of messages.Alert (numbers raised on, top moves)
    PRIMARY KEY (player, event, level)
);
"""


class Alerts:
    """The raised alerts of one store.

    >>> alerts = Alerts(Engine(":memory:", schema=TABLES))
    >>> a = Alert("Cheater, C", "Open", 40, 3.9, 0.71, 3.0)
    >>> alerts.put(a, "alert", 1.0), alerts.put(a, "alert", 2.0), alerts.load() == [("alert", a)]
    (True, False, True)
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, alert: Alert, level: str, raised: float) -> bool:
        """Record a raised alert; False (nothing written) when that level was already raised.

        While writes are held (disk full) the alert counts as new: the held INSERT OR IGNORE keeps the first.
        """
        changed = self.engine.write_counted((
            "INSERT OR IGNORE INTO alerts (player, event, level, raised, alert) VALUES (?, ?, ?, ?, ?)",
            (alert.player, alert.event, level, raised, row_of(alert)),
        ))
        return changed is None or changed == 1

    def load(self) -> list[tuple[str, Alert]]:
        """Every raised alert, oldest first: (level, alert)."""
        return [
            (level, value_of(Alert, text))
            for level, text in self.engine.db.execute("SELECT level, alert FROM alerts ORDER BY raised, rowid")
        ]
