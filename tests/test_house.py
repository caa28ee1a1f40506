"""House rules, enforced by the README's pytest command: ruff, mypy and the import layers (config in pyproject.toml).

* ruff: pyflakes, pycodestyle, bugbear, async pitfalls, and no ``assert`` in
  livemon/ (S101: an input check must not vanish under ``python -O``; an
  internal invariant carries ``# noqa: S101`` and says why).
* mypy: strict on livemon/rating/ and livemon/live/, normal elsewhere.
* import-linter: commands → app → faces/io → live → rating; rating imports
  nothing else of livemon, live only rating; io never imports a face;
  livemon.config and livemon.errors anywhere.

Each check runs the tool as a user would, from the repository root, and fails
with the tool's own report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def tool(name: str) -> str:
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def test_ruff() -> None:
    out = run(sys.executable, "-m", "ruff", "check", "--no-cache", "livemon", "tests", "bench")
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.slow  # ~20 s on a fresh clone (no cache yet): handed out among the long files
def test_mypy() -> None:
    started = os.environ.get("LIVEMON_TEST_MYPY")  # a whole run starts mypy before anything else (conftest.py)
    if started:
        rc, deadline = Path(started) / "rc", time.monotonic() + 600
        while not rc.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert rc.exists(), "mypy, started by conftest.py, gave no report in 600 s"
        assert rc.read_text() == "0", (Path(started) / "report").read_text()
        return
    out = run(sys.executable, "-m", "mypy")  # files and per-package strictness from pyproject.toml
    assert out.returncode == 0, out.stdout + out.stderr


def test_import_layers() -> None:
    out = run(tool("lint-imports"), "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def test_the_layer_contract_catches_a_violation(tmp_path: Path) -> None:
    """The contracts are live: a rating module importing the live core breaks them."""
    broken = ROOT / "livemon" / "rating" / "_house_probe.py"
    broken.write_text('"""A probe for tests/test_house.py."""\n\nimport livemon.live.messages  # noqa: F401\n')
    try:
        out = run(tool("lint-imports"), "--no-cache")
    finally:
        broken.unlink()
    assert out.returncode != 0 and "livemon.rating._house_probe -> livemon.live.messages" in out.stdout
