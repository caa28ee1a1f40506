"""Shared fixtures: the real games of shared/data/real and the real engine."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

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


# -- a real mosquitto broker, started by the test (shared by the MQTT tests) --------------------------

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """A mosquitto process on 127.0.0.1:``port``; :meth:`stop` and :meth:`start` again on the same port."""

    def __init__(self, tmp_path: Path, port: int | None = None, acl: str | None = None, listener: str = "") -> None:
        if not Path(MOSQUITTO).exists():
            pytest.fail(f"mosquitto not found at {MOSQUITTO} (apt-get install mosquitto)")
        self.port = port or free_port()
        self.conf = tmp_path / f"mosquitto-{self.port}.conf"
        text = f"listener {self.port} 127.0.0.1\n{listener}allow_anonymous true\npersistence false\n"  # listener: e.g. TLS lines
        if acl is not None:
            (tmp_path / "acl").write_text(acl)
            text += f"acl_file {tmp_path / 'acl'}\n"
        self.conf.write_text(text + "user root\n")  # as root it would drop to a user that cannot read tmp_path
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "Broker":
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                pytest.fail(f"mosquitto did not start on port {self.port}: {err}")
            time.sleep(0.02)

    def stop(self, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill() if kill else self.proc.terminate()
            self.proc.wait(10)
        self.proc = None


@contextlib.contextmanager
def mosquitto(tmp_path: Path, port: int | None = None, acl: str | None = None, listener: str = "") -> Iterator[Broker]:
    """A running :class:`Broker` for the block."""
    broker = Broker(tmp_path, port, acl, listener).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    """A real mosquitto on a free port, anonymous, no persistence."""
    with mosquitto(tmp_path) as b:
        yield b
