"""Shared fixtures: the real games of tests/data and the real engine; a session-end check for leftover processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parent.parent
REAL = Path(__file__).resolve().parent / "data"  # copies of real games, see tests/data/SOURCES.md
STOCKFISH = os.environ.get("LIVEMON_STOCKFISH", "/usr/games/stockfish")


def real(name: str) -> Path:
    """A file of tests/data (the tests' real games, see its SOURCES.md)."""
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


# -- the suite leaves no process behind ---------------------------------------------------------------
#
# The pytest process makes itself a "child subreaper" (Linux prctl): a process that a test starts and
# that outlives its parent (a TTT worker of a killed monitor, a browser's helper) is re-parented to
# pytest instead of init, so it stays visible as a descendant. At the end of the session every
# descendant still alive is named, killed, and the session fails.

PR_SET_CHILD_SUBREAPER = 36


def stop_groups(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process's group (started with ``start_new_session``), then wait; SIGKILL a group still there
    after 20 s."""
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _set_subreaper() -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _proc_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (ppid, state, command line) of every process (from /proc)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (int(rest[1]), rest[0], cmd or stat[stat.index("(") + 1 : stat.rindex(")")])
    return table


def descendants(root: int | None = None) -> dict[int, tuple[str, str]]:
    """Every live or zombie descendant of ``root`` (default: this process): pid -> (state, command)."""
    root = os.getpid() if root is None else root
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = {}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out[pid] = table[pid][1:]
        todo.extend(children.get(pid, []))
    return out


def _reap_zombies() -> None:
    for pid, (state, _) in descendants().items():
        if state == "Z":
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _own_tracker() -> int | None:
    """multiprocessing's resource tracker of this very process: it ends with pytest, it is no leftover."""
    from multiprocessing import resource_tracker

    return getattr(resource_tracker._resource_tracker, "_pid", None)


def pytest_configure(config: pytest.Config) -> None:
    config._livemon_subreaper = _set_subreaper()  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not getattr(session.config, "_livemon_subreaper", False) or hasattr(session.config, "workerinput"):
        return
    deadline = time.monotonic() + 5  # processes being shut down at the end get a moment
    while True:
        _reap_zombies()
        alive = {pid: cmd for pid, (state, cmd) in descendants().items() if state != "Z" and pid != _own_tracker()}
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if not alive:
        return
    lines = [f"  pid {pid}: {cmd[:160]}" for pid, cmd in sorted(alive.items())]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = f"the test run left {len(alive)} process(es) alive (killed now):\n" + "\n".join(lines)
    if reporter is not None:
        reporter.write_sep("=", "leftover processes", red=True)
        reporter.write_line(message)
    else:
        print(message)
    for pid in alive:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    time.sleep(0.2)
    _reap_zombies()
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
