"""The SQLite store: the position cache and everything a restart must not lose.

- :mod:`~livemon.io.store.engine` — the writer engine: the connection, held writes retried in order
  (full, failing or locked disk), batches and transactions, the monitor's lock, checks, backups,
  background checkpoints. It knows no table.
- one repository per table (or per value spread over two): :mod:`~livemon.io.store.analyses` (the
  position cache), :mod:`~livemon.io.store.games` (games and their moves),
  :mod:`~livemon.io.store.alerts`, :mod:`~livemon.io.store.calibrations`, :mod:`~livemon.io.store.ttt`,
  :mod:`~livemon.io.store.status`; each module holds its tables' DDL and its SQL;
- :mod:`~livemon.io.store.rows` — the row codec (a game's tags, a move, an alert as JSON text);
- :mod:`~livemon.io.store.database` — :class:`Store` (an engine on livemon's schema and its
  repositories), how a monitor and a reader open one, and the runner's store port.
"""

from livemon.io.store.calibrations import SHIPPED_CALIBRATIONS, shipped_calibrations
from livemon.io.store.database import RunnerStore, Store, open_monitor_store, open_reader
from livemon.io.store.engine import Engine, StoreError, lock_holder, read_only_reason
from livemon.io.store.rows import row_of, value_of

__all__ = [
    "SHIPPED_CALIBRATIONS",
    "Engine",
    "RunnerStore",
    "Store",
    "StoreError",
    "lock_holder",
    "open_monitor_store",
    "open_reader",
    "read_only_reason",
    "row_of",
    "shipped_calibrations",
    "value_of",
]
