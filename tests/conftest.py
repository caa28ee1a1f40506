"""Shared fixtures: the real games of shared/data/real and the real engine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("LIVEMON_REAL_DATA", REPO.parent / "shared" / "data" / "real"))
STOCKFISH = os.environ.get("LIVEMON_STOCKFISH", "/usr/games/stockfish")


def real(name: str) -> Path:
    """A file of ../shared/data/real (the tests' real games)."""
    path = REAL / name
    if not path.exists():
        pytest.fail(f"real test data missing: {path}")
    return path


@pytest.fixture
def stockfish() -> str:
    if not (os.path.exists(STOCKFISH) or shutil.which(STOCKFISH)):
        pytest.fail(f"Stockfish not found at {STOCKFISH} (apt-get install stockfish)")
    return STOCKFISH
