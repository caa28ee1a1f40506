"""livemon: a streaming live-game chess rating monitor.

Layers (see ``docs/ARCHITECTURE.md``):

* :mod:`livemon.rating` — pure rating models, numbers in and numbers out, no I/O;
* adapters at the edges — :mod:`livemon.live.pgn`, :mod:`livemon.io.engine`, :mod:`livemon.io.store`, ...;
* :mod:`livemon.cli` — the one entry point.
"""

__version__ = "0.1.0"
