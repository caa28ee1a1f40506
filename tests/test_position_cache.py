"""bench/position_cache.py: engine analyses exported from several stores and imported into another, exactly."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from livemon.io.store import Store
from livemon.live.values import PositionAnalysis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import position_cache  # noqa: E402

PROFILE = "Stockfish 15.1 depth=14 multipv=4"


def test_an_export_of_two_stores_imports_every_analysis_once_and_keeps_what_the_store_had(tmp_path: Path) -> None:
    a1 = PositionAnalysis(31, (("e2e4", 31), ("d2d4", 25)), 14, 90000)
    a2 = PositionAnalysis(-12, (("e7e5", 12), ("c7c5", 20)), 14, 80000)
    a3 = PositionAnalysis(3900, (("d8h4", 3900),), 14, 100)
    with Store(tmp_path / "a.sqlite") as s:
        s.analyses.put("pos1", PROFILE, a1)
        s.analyses.put("pos2", PROFILE, a2)
        s.analyses.put("pos2", "Stockfish 15.1 depth=12 multipv=4", a1)  # another profile: not exported
    with Store(tmp_path / "b.sqlite") as s:
        s.analyses.put("pos2", PROFILE, a2)
        s.analyses.put("pos3", PROFILE, a3)
    out = tmp_path / "x.jsonl.gz"
    n = position_cache.export([str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")], PROFILE, "test", out)
    assert n == 3
    with gzip.open(out, "rt") as f:
        assert json.loads(f.readline())["profile"] == PROFILE
    kept = PositionAnalysis(7, (("g1f3", 7),), 14, 5)
    with Store(tmp_path / "c.sqlite") as s:
        s.analyses.put("pos1", PROFILE, kept)
    assert position_cache.import_(out, str(tmp_path / "c.sqlite")) == (PROFILE, 3, 2)
    with Store(tmp_path / "c.sqlite") as s:
        assert s.analyses.get("pos1", PROFILE) == kept  # the store's own is kept
        assert s.analyses.get("pos2", PROFILE) == a2 and s.analyses.get("pos3", PROFILE) == a3
