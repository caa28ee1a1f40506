"""Limits the rating models share, in a module that imports nothing heavy (no numpy, no scipy), so that
the message and display code can use them without loading the models.

>>> MIN_POSITIONS
5
"""

from __future__ import annotations

__all__ = ["MIN_POSITIONS"]

MIN_POSITIONS = 5
"""Fewest counted positions of a player from which a moves estimate (the quality model's or the
calibrated performance's) is given; with fewer, the estimate's reason says how many are needed."""
