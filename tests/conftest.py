"""Shared fixtures: the real games of tests/data and the real engine; a session-end check for leftover processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest
from hypothesis import settings

# Hypothesis's per-example deadline measures the machine, not the code: four test processes share two cores,
# so an example can take 300 ms once and 1 ms again. The properties are what these tests check.
settings.register_profile("livemon", deadline=None)
settings.load_profile("livemon")

REPO = Path(__file__).resolve().parent.parent
REAL = Path(__file__).resolve().parent / "data"  # copies of real games, see tests/data/SOURCES.md

# Bytecode written even where PYTHONDONTWRITEBYTECODE is set (as on some CI images): without it each test process
# compiles livemon and rewrites the asserts of every test module again at each collection (12.2 s of CPU a
# process at a load of 18, 4.4 s with them kept), and each process a test starts (serve, a worker, the fake
# engine) compiles livemon again. In __pycache__ folders, as Python does by default (git ignores them); for this process and the
# processes it starts (pytest-xdist's test processes and the tests' own).
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

STOCKFISH = os.environ.get("LIVEMON_STOCKFISH", "/usr/games/stockfish")


def real(name: str) -> Path:
    """A file of tests/data (the tests' real games, see its SOURCES.md)."""
    path = REAL / name
    if not path.exists():
        pytest.fail(f"real test data missing: {path}")
    return path


def cached_store(path: Path, *exports: str) -> str:
    """A store at ``path`` holding the engine analyses shipped in tests/data (``analyses_*.jsonl.gz``, written by
    ``bench/position_cache.py export``; SOURCES.md says from what): for a test whose subject is what is made of
    the analyses (a report, analyse's figures), not the search. They are keyed by profile (the engine's name,
    depth, MultiPV), so another engine finds none of them and searches: slower, the same assertions."""
    if str(REPO / "bench") not in sys.path:  # bench/ is scripts, not a package
        sys.path.insert(0, str(REPO / "bench"))
    from position_cache import import_

    for name in exports:
        import_(real(name), str(path))
    return str(path)


def copy_analyses(src: Path | str, dst: Path | str) -> int:
    """Every engine analysis of the store at ``src`` put in the store at ``dst`` (made if missing), as stored:
    for a batch run whose numbers must equal those of a live run, made of the analyses the live run's engine
    gave (searched once, by the live run). The analyses copied."""
    import sqlite3

    from livemon.io.store import Store

    with contextlib.closing(sqlite3.connect(f"file:{src}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT position, profile, score, candidates, worker FROM analyses").fetchall()
    with Store(dst) as store, store.engine.transaction():
        for row in rows:
            store.engine.write_row("INSERT OR IGNORE INTO analyses (position, profile, score, candidates, worker) "
                                   "VALUES (?, ?, ?, ?, ?)", row)
    return len(rows)


@pytest.fixture
def stockfish() -> str:
    """The real Stockfish's path, for a test whose subject is the engine (its lines, its mate scores, its speed, its
    best moves); it marks the test ``engine``. A test whose subject is not the engine asks :func:`fake_engine`."""
    if not (os.path.exists(STOCKFISH) or shutil.which(STOCKFISH)):
        pytest.fail(f"Stockfish not found at {STOCKFISH} (apt-get install stockfish)")
    return STOCKFISH


def write_fake_engine(folder: Path, name: str | None = None) -> str:
    """The scripted UCI engine of tests/fake_uci.py as an engine path (a one-line wrapper in ``folder``); with
    ``name``, it answers as that engine (``FAKE_UCI_NAME`` set by the wrapper: for a fixture wider than a test,
    which cannot use :func:`fake_stockfish`)."""
    wrapper = folder / "fake-engine"
    env = f"export FAKE_UCI_NAME={shlex.quote(name)}\n" if name else ""
    wrapper.write_text(f"#!/bin/sh\n{env}exec {sys.executable} {REPO / 'tests' / 'fake_uci.py'}\n")
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.fixture
def fake_engine(tmp_path: Path) -> str:
    """The scripted UCI engine of tests/fake_uci.py as an engine path: the real protocol over pipes, scores made
    from the position alone (deterministic), no search. For tests whose subject is not the engine."""
    return write_fake_engine(tmp_path)


@pytest.fixture
def fake_stockfish(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """:func:`fake_engine` answering as "Stockfish 15.1" (``FAKE_UCI_NAME``, inherited by the processes a test
    starts): for tests about profiles, stores and buses whose expected profile names are the real engine's."""
    monkeypatch.setenv("FAKE_UCI_NAME", "Stockfish 15.1")
    return write_fake_engine(tmp_path)


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


def clear_retained(port: int, timeout: float = 10.0) -> list[str]:
    """Empty every retained message on the broker at ``port``: the topics that held one.

    Subscribes to ``#``, then publishes a marker on a topic of its own: the broker sends the retained
    messages of a subscription before anything published after it, so the marker coming back means
    every retained message has been seen."""
    import paho.mqtt.client as paho

    marker = f"livemon-tests/clear/{os.getpid()}/{time.monotonic_ns()}"
    seen: list[str] = []
    done = threading.Event()

    def on_message(client: paho.Client, userdata: object, msg: paho.MQTTMessage) -> None:
        if msg.topic == marker:
            done.set()
        elif msg.retain and msg.payload:
            seen.append(msg.topic)

    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"livemon-tests-clear-{os.getpid()}")
    client.on_message = on_message
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        client.subscribe("#", qos=1)
        deadline = time.monotonic() + timeout
        while not done.is_set():
            client.publish(marker, b"x", qos=1)
            if done.wait(0.5) or time.monotonic() > deadline:
                break
        if not done.is_set():
            pytest.fail(f"the shared mosquitto on port {port} did not answer within {timeout} s")
        for name in seen:
            client.publish(name, b"", qos=1, retain=True).wait_for_publish(timeout)
    finally:
        client.disconnect()
        client.loop_stop()
    return seen


@pytest.fixture(scope="session")
def _shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """One mosquitto per test process (each xdist worker its own), behind the ``broker`` fixture."""
    with mosquitto(tmp_path_factory.mktemp("mosquitto")) as b:
        yield b


@pytest.fixture
def broker(_shared_broker: Broker) -> Iterator[Broker]:
    """A real mosquitto on a free port, anonymous, no persistence: shared by the tests of one process.

    Each test gets it running and empty of retained messages (a test may stop and restart it; it is started
    again after the test if it was left stopped). Clients keep no session across a disconnect (MQTT clean
    start), so nothing else of a test outlives it."""
    b = _shared_broker
    if b.proc is None or b.proc.poll() is not None:
        b.stop()
        b.start()
    clear_retained(b.port)
    yield b
    if b.proc is None or b.proc.poll() is not None:
        b.stop()
        b.start()


# -- tiers: a test's marks follow from the fixtures it uses ------------------------------------------
#
# ``-m "not engine and not browser"`` is the quick tier; ``pytest`` alone runs every test (README, "Tests").

TIER_OF_FIXTURE = {
    "stockfish": "engine",  # the real Stockfish
    "broker": "broker",  # a real mosquitto
    "browser": "browser",  # a real headless Chromium
    "chromium": "browser",
    "browser_tab": "browser",
}


def chromium_path() -> str:
    """The path of a headless-capable Chromium (``$LIVEMON_CHROMIUM`` first)."""
    for name in (os.environ.get("LIVEMON_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and (shutil.which(name) or os.path.exists(name)):
            return shutil.which(name) or name
    pytest.fail("Chromium not found: this test needs a headless browser (apt-get install chromium, "
                "or set LIVEMON_CHROMIUM to its path)")


@pytest.fixture
def chromium() -> str:
    """The Chromium executable, for a test that runs it itself."""
    return chromium_path()


# -- one headless Chromium per test process; each test a browser context of its own ------------------

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1920,1080", "--remote-debugging-port=0",
]


@contextlib.contextmanager
def chromium_process(profile: Path) -> Iterator[int]:
    """A headless Chromium with its own ``profile`` folder: its DevTools port."""
    proc = subprocess.Popen([chromium_path(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Chromium did not start its DevTools endpoint (exit code {proc.poll()})")
            time.sleep(0.05)
        yield int(port_file.read_text().split()[0])
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def _shared_chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with chromium_process(tmp_path_factory.mktemp("chromium") / "profile") as port:
        yield port


@pytest.fixture
async def browser_tab(_shared_chromium: int) -> AsyncIterator[str]:
    """A blank page in a browser context of its own (no cookies, storage or cache shared with another test)
    of the test process's Chromium: the page's DevTools WebSocket URL."""
    import itertools
    import json

    import httpx
    from websockets.asyncio.client import connect

    port = _shared_chromium
    async with httpx.AsyncClient() as http:
        url = (await http.get(f"http://127.0.0.1:{port}/json/version")).json()["webSocketDebuggerUrl"]
    ids = itertools.count(1)
    async with connect(url, max_size=None) as ws:

        async def call(method: str, **params: object) -> dict[str, object]:
            rid = next(ids)
            await ws.send(json.dumps({"id": rid, "method": method, "params": params}))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 20))
                if reply.get("id") == rid:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})

        context = (await call("Target.createBrowserContext", disposeOnDetach=True))["browserContextId"]
        target = (await call("Target.createTarget", url="about:blank", browserContextId=context, width=1920, height=1080))["targetId"]
        try:
            yield f"ws://127.0.0.1:{port}/devtools/page/{target}"
        finally:
            await call("Target.disposeBrowserContext", browserContextId=context)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two test processes per core. The tests spend about half their time waiting (on the
    processes they start, on sockets, on timers), so a core runs one test's work while another's waits."""
    return 2 * (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for mark in sorted({m for f, m in TIER_OF_FIXTURE.items() if f in used}):
            item.add_marker(mark)
    longest_files_first(config, items)


# -- the longest files first ----------------------------------------------------------------------------
#
# ``--dist loadfile`` hands a whole file to one test process, in the order collected (``--no-loadscope-reorder``;
# pytest-xdist's own order, the files with most tests first, leaves the few long tests of a small file for the
# end, when the other processes have nothing left to do). The longest files go first, so that the last files
# handed out are short ones. A file's length is the sum of its tests' seconds: each test's in its last run
# (pytest's cache, key SECONDS_KEY), or else estimated from the fixtures it uses (ESTIMATED_SECONDS, typical
# seconds of such a test on a 2-core machine; 0.5 for any other test).

SECONDS_KEY = "livemon/seconds-per-test"
ESTIMATED_SECONDS = {"slow": 15.0, "fake_engine": 8.0, "fake_stockfish": 8.0, "stockfish": 6.0, "broker": 4.0,
                     "browser_tab": 2.0, "browser": 2.0, "chromium": 2.0, "tmp_path": 1.0}


def _estimated_seconds(item: pytest.Item) -> float:
    if isinstance(item, pytest.DoctestItem):  # a module's examples: milliseconds
        return 0.05
    kinds = set(getattr(item, "fixturenames", ())) | {m.name for m in item.iter_markers()}
    return max([ESTIMATED_SECONDS[k] for k in kinds if k in ESTIMATED_SECONDS] + [0.5])


def longest_files_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Reorder ``items`` file by file, the longest file first (a file's own order kept)."""
    cache = getattr(config, "cache", None)  # none with -p no:cacheprovider
    measured: dict[str, float] = cache.get(SECONDS_KEY, {}) if cache is not None else {}
    length: dict[str, float] = {}
    for item in items:
        name = item.nodeid.split("::")[0]
        length[name] = length.get(name, 0.0) + measured.get(item.nodeid, _estimated_seconds(item))
    rank = {name: k for k, name in enumerate(sorted(length, key=lambda n: (-length[n], n)))}
    items.sort(key=lambda item: rank[item.nodeid.split("::")[0]])  # stable: a file's own order is kept


class FileSeconds:
    """Each test's seconds (setup, call and teardown), summed where the reports arrive (the xdist controller, or
    the one process) and kept in pytest's cache for :func:`longest_files_first` next time."""

    def __init__(self, cache: pytest.Cache) -> None:
        self.cache = cache
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        if self.seconds:
            old = self.cache.get(SECONDS_KEY, {})
            self.cache.set(SECONDS_KEY, {**old, **{k: round(v, 2) for k, v in self.seconds.items()}})


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


def helpers_of(pid: int, timeout: float = 30.0) -> list[int]:
    """The multiprocessing processes (TTT worker, forecast simulations, their resource tracker) ``pid`` has started,
    once it has started any: a monitor starts them as its first turns run, which can be after its first lines."""
    deadline = time.monotonic() + timeout
    while True:
        found = [child for child, (_, cmd) in descendants(pid).items() if "multiprocessing" in cmd]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def ended_with_parent(pids: list[int], timeout: float = 10.0) -> list[int]:
    """Those of ``pids`` (descendants of a process just killed, re-parented to this subreaper) still running after
    ``timeout`` s: a monitor's TTT worker asks the kernel to kill it with its parent, and multiprocessing's helpers
    end when their last user does; the zombies they leave are reaped here."""
    deadline = time.monotonic() + timeout
    while True:
        _reap_zombies()
        alive = [pid for pid in pids if descendants().get(pid, ("Z",))[0] != "Z"]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _own_helpers() -> set[int | None]:
    """multiprocessing's resource tracker and process server of this very process: they end with pytest, they
    are no leftovers."""
    from multiprocessing import forkserver, resource_tracker

    return {getattr(resource_tracker._resource_tracker, "_pid", None),
            getattr(forkserver._forkserver, "_forkserver_pid", None)}


MYPY_REPORT = "LIVEMON_TEST_MYPY"
"""A folder where the mypy that a whole run starts first leaves its report (``report``, then ``rc``)."""


def _start_mypy(config: pytest.Config) -> None:
    """A run of the whole suite starts mypy, the house rules' slowest check (~20 s of CPU without its cache, as on
    a fresh clone), before anything else: it runs beside the compile of TTT's kernels below, on the core that
    compile leaves idle, and ``test_mypy`` reads its report."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="livemon-mypy-"))
    os.environ[MYPY_REPORT] = str(folder)  # inherited by the test processes, started after this hook
    code = ("import os, pathlib, sys\n"
            "from mypy import api\n"  # mypy in this very process: stopping it stops mypy
            "out, err, rc = api.run([])\n"
            "d = pathlib.Path(sys.argv[1])\n"
            "(d / 'report').write_text(out + err)\n"
            "(d / 'rc.part').write_text(str(rc))\n"
            "os.replace(d / 'rc.part', d / 'rc')\n")
    config._livemon_mypy = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=REPO)  # type: ignore[attr-defined]


def _whole_suite(config: pytest.Config) -> bool:
    return (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
            and not config.option.markexpr and not config.option.collectonly)


def _rewrite_tests_once(config: pytest.Config) -> None:
    """The asserts of the test modules this run collects rewritten once, here, before the test processes start.

    pytest rewrites a test module's asserts as it imports it and keeps the result beside it (``__pycache__``,
    as Python does bytecode); on a fresh clone every test process collects every file and would rewrite all of
    them at the same time (~8.6 s of CPU each on a 2-core machine, the assert rewriter being slow on long
    asserts). A module already rewritten is left as it is; where pytest's rewriter is not the one this was
    written for, each process rewrites for itself, as pytest does."""
    import fnmatch

    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        patterns = [*config.getini("python_files"), "conftest.py"]
        files: set[Path] = set()
        for arg in config.args:
            path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
            found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
            files.update(f for f in found if any(fnmatch.fnmatch(f.name, pat) for pat in patterns))
        for fn in sorted(files):
            folder = rewrite.get_cache_dir(fn)
            pyc = folder / (fn.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(fn, pyc) is None and rewrite.try_makedirs(folder):
                source_hash, code = rewrite._rewrite_test(fn, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, OSError, SyntaxError):
        return


def pytest_configure(config: pytest.Config) -> None:
    config._livemon_subreaper = _set_subreaper()  # type: ignore[attr-defined]
    if getattr(config, "cache", None) is not None and not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileSeconds(config.cache), "livemon-file-seconds")
    if not hasattr(config, "workerinput"):
        if _whole_suite(config):
            _start_mypy(config)
        # TTT's kernels compiled once, before the test processes start: on a fresh clone each of them (and each
        # monitor a test starts) would otherwise compile them again at the same time (~17 s of CPU each). In a
        # process of their own, beside the rewriting of the tests' asserts (a no-op once they are in numba's cache)
        kernels = subprocess.Popen([sys.executable, "-c", "from livemon.rating.ttt import compile_kernels; compile_kernels()"],
                                   cwd=REPO)
        import compileall

        # livemon's bytecode written once, here, before the test processes and the processes they start all
        # compile it at the same time (on a fresh clone; a no-op once written)
        compileall.compile_dir(str(REPO / "livemon"), quiet=1)
        if getattr(config.option, "numprocesses", None):
            _rewrite_tests_once(config)
        if kernels.wait() != 0:
            pytest.exit("TTT's kernels did not compile (the lines above say why)", returncode=3)


@pytest.hookimpl(trylast=True)  # after pytest-xdist has stopped its workers: their leftovers are ours then
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workerinput"):
        return
    mypy = getattr(session.config, "_livemon_mypy", None)
    if mypy is not None:
        if mypy.poll() is None:  # the session ended first (stopped, or -x): mypy writes its cache files whole
            mypy.terminate()
            mypy.wait()
        shutil.rmtree(os.environ.pop(MYPY_REPORT), ignore_errors=True)
    if not getattr(session.config, "_livemon_subreaper", False):
        return
    deadline = time.monotonic() + 5  # processes being shut down at the end get a moment
    while True:
        _reap_zombies()
        alive = {pid: cmd for pid, (state, cmd) in descendants().items() if state != "Z" and pid not in _own_helpers()}
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
