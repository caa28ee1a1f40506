"""The sans-I/O domain of the monitor: games, scoring, estimates, screening, messages (no sockets, no files)."""
