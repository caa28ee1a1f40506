"""One root exception type; input is checked, never asserted (asserts vanish under python -O)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import livemon
from livemon.errors import LivemonError


def all_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(livemon.__path__, "livemon.") if not m.name.endswith("__main__")]


def test_every_exception_livemon_defines_derives_from_livemon_error():
    own = {}
    for name in all_modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith("livemon."):
                own[obj.__qualname__] = obj
    assert {"ConfigError", "EngineError", "BusMessageError", "ProtocolError", "InputError"} <= set(own)
    assert [n for n, cls in own.items() if not issubclass(cls, LivemonError)] == []


def test_malformed_bus_results_are_refused_under_python_O():
    """The checks of a worker's result (network input) were asserts: under -O a bad result passed."""
    code = (
        "from livemon.io.bus import AnalysisResult, BusMessageError\n"
        "bad = ['{\"key\":\"k\",\"profile\":\"p\",\"worker\":\"w\",\"analysis\":%s}' % a for a in (\n"
        "  '[1]', '{\"score\":1,\"candidates\":[[\"e2e4\",true]],\"depth\":1,\"nodes\":1}',\n"
        "  '{\"score\":1,\"candidates\":[],\"depth\":1,\"nodes\":1}',\n"
        "  '{\"score\":1.5,\"candidates\":[[\"e2e4\",1]],\"depth\":1,\"nodes\":1}')]\n"
        "n = 0\n"
        "for b in bad:\n"
        "    try: AnalysisResult.parse(b)\n"
        "    except BusMessageError: n += 1\n"
        "print(n)\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "4"


def test_an_uncaught_livemon_error_is_one_line_at_the_cli(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[engine]\nprocesses = "many"\n')
    out = subprocess.run([sys.executable, "-m", "livemon.cli", "export", "--config", str(bad)],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "processes" in out.stderr
