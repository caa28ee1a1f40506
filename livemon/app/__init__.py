"""The wiring: the live monitor (the one place that starts tasks), batch analysis, export and the engine worker service."""
