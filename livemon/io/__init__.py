"""Adapters to the outside world: feeds, the UCI engine and its pool, the SQLite store, the MQTT bus, the TTT worker process."""
