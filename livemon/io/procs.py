"""Where livemon's worker processes come from: the TTT fit and the forecaster.

On Linux every worker is forked from one *process server* (multiprocessing's ``forkserver``), started once
per monitor and kept until the monitor ends. The server imports, once, numpy, the fits' compiled numba
kernels (:mod:`livemon.io.warm`) and the modules of the workers' targets; a worker then starts in a few
milliseconds of CPU instead of a fresh interpreter's second (importing numpy and numba, loading each kernel
from numba's cache), which is what a restarted worker, a restarted monitor and a test suite that starts
many monitors pay. Elsewhere workers are spawned (a fresh interpreter each).

The server is started from a thread of its own with Ctrl-C and SIGTERM blocked (:func:`start`): its first
fork waits for the imports (about a second, seconds on a cold numba cache), which the event loop must not,
and the server and every worker forked from it inherit the blocked signals, so a signal sent to the whole
process group (a terminal, systemd, ``kill -- -pgid``) stops the monitor, which stops its workers, and
never kills a fit or a forecast under it. The server ends when the monitor does (it watches a pipe only the
monitor holds), and the workers with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import multiprocessing.context
import signal
import threading
from multiprocessing import resource_tracker
from typing import Callable, Iterator, TypeVar, Union

T = TypeVar("T")
Context = Union[multiprocessing.context.ForkServerContext, multiprocessing.context.SpawnContext]

WARM = "livemon.io.warm"
"""The module the server imports first: numpy and the compiled kernels."""

_lock = threading.Lock()
_preload: list[str] = [WARM]


def context(*modules: str) -> Context:
    """The context a worker whose target lives in ``modules`` starts from; the server imports them once.

    Call it where the worker's owner is made, before any worker starts: modules named after the server
    started are imported by each worker itself, as a spawned one would.

    >>> context("livemon.io.tttjob").get_start_method() in ("forkserver", "spawn")
    True
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():  # pragma: no cover - not POSIX
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    with _lock:
        for name in modules:
            if name not in _preload:
                _preload.append(name)
        ctx.set_forkserver_preload(list(_preload))
    return ctx


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back in this thread meanwhile: a process started now inherits the mask (see
    the module docstring). The process gets any such signal as soon as the mask is restored."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def start_blocking(starter: Callable[[], T]) -> T:
    """Call ``starter`` (which starts a worker) with the signals blocked, in this thread."""
    # multiprocessing's resource tracker, started first: starting it unblocks both signals in the calling
    # thread, which would then start the server deaf to nothing
    resource_tracker.ensure_running()
    with signals_blocked():
        return starter()


async def start(starter: Callable[[], T]) -> T:
    """Call ``starter`` (which starts a worker) in a thread, off the loop, with the signals blocked."""
    return await asyncio.to_thread(start_blocking, starter)
