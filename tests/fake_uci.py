"""A tiny scripted UCI engine for the pool tests: the real protocol over stdin/stdout.

Run as ``python tests/fake_uci.py`` (the tests write a one-line wrapper that is
the engine path). It answers ``uci``, ``isready``, ``setoption``,
``ucinewgame``, ``position fen … [moves …]``, ``go depth N | nodes N``,
``stop`` and ``quit``. A search answers ``info depth … multipv k score cp …
pv <move>`` for the first ``MultiPV`` legal moves, the scores derived from the
FEN alone (so equal positions get equal answers), then ``bestmove``.

Behaviours, from environment variables (read at start, so every process of a
pool behaves alike):

- ``FAKE_UCI_LOG``: append ``<pid> go <depth|nodes> <fen>`` per search start,
  so a test counts searches across processes, including killed ones;
- ``FAKE_UCI_DELAY``: seconds each search takes (default 0);
- ``FAKE_UCI_CRASH_EVERY``: exit (code 3) on every N-th search of this process;
- ``FAKE_UCI_HANG_FEN``: never answer a search whose FEN contains this text;
- ``FAKE_UCI_HANG_ONCE``: a file path; the first search (of any process) that
  creates it hangs, later ones answer normally;
- ``FAKE_UCI_DEPTH_SCORES``: add the search depth (or nodes / 1000) to every
  score, so that analyses of two limits differ and a mix of them shows;
- ``FAKE_UCI_HANG_START``: a file path; while that file exists, a process
  never answers ``uci`` (an engine that hangs while starting);
- ``FAKE_UCI_HANG_NEWGAME``: once ``ucinewgame`` came, never answer ``isready``
  (an engine that hangs between two searches, before ``go``);
- ``FAKE_UCI_BESTMOVE``: send this as the ``bestmove`` (e.g. an illegal ``a1a8``);
- ``FAKE_UCI_SCORE``: send this in place of every ``cp N`` score (``cp 999999999999``, ``mate 0``);
- ``FAKE_UCI_PV``: send this as every line's ``pv``;
- ``FAKE_UCI_BAD_ONCE``: a file path; the three above apply only to the first search (of any
  process) that creates it, later searches answer normally;
- ``FAKE_UCI_STDERR``: write this many 100-byte lines to stderr per search (``FAKE_UCI_STDERR_NONL``:
  the same bytes without a newline);
- ``FAKE_UCI_FORK``: start a child that sleeps holding stdout and stderr (so a death of the engine
  does not close its pipes);
- ``FAKE_UCI_NAME``: the ``id name`` to give (default ``FakeUCI 1.0``), for a test about a profile's
  name (a shipped calibration's, say) rather than about the engine;
- ``FAKE_UCI_ITERATIONS``: first send this many earlier iterations' lines (depths 1, 2, …, each line's
  score off by the depths left, a two-move pv, a ``currmove`` line between iterations), as a real engine
  deepens; the last iteration's lines are the answer, as without them. With ``FAKE_UCI_LIE_EARLY`` the
  three lies above go to the earlier iterations' lines only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import zlib

import chess

LOG = os.environ.get("FAKE_UCI_LOG")
DELAY = float(os.environ.get("FAKE_UCI_DELAY", "0"))
CRASH_EVERY = int(os.environ.get("FAKE_UCI_CRASH_EVERY", "0"))
HANG_FEN = os.environ.get("FAKE_UCI_HANG_FEN")
HANG_ONCE = os.environ.get("FAKE_UCI_HANG_ONCE")
DEPTH_SCORES = bool(os.environ.get("FAKE_UCI_DEPTH_SCORES"))
HANG_START = os.environ.get("FAKE_UCI_HANG_START")
HANG_NEWGAME = bool(os.environ.get("FAKE_UCI_HANG_NEWGAME"))
BESTMOVE = os.environ.get("FAKE_UCI_BESTMOVE")
SCORE = os.environ.get("FAKE_UCI_SCORE")
PV = os.environ.get("FAKE_UCI_PV")
BAD_ONCE = os.environ.get("FAKE_UCI_BAD_ONCE")
STDERR = int(os.environ.get("FAKE_UCI_STDERR", "0"))
STDERR_NONL = bool(os.environ.get("FAKE_UCI_STDERR_NONL"))
FORK = bool(os.environ.get("FAKE_UCI_FORK"))
NAME = os.environ.get("FAKE_UCI_NAME", "FakeUCI 1.0")
ITERATIONS = int(os.environ.get("FAKE_UCI_ITERATIONS", "0"))
LIE_EARLY = bool(os.environ.get("FAKE_UCI_LIE_EARLY"))


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def score_of(epd: str, move: chess.Move) -> int:
    """A deterministic score (White's view, cp) of ``move`` in the position ``epd`` (``board.epd()``)."""
    return zlib.crc32(f"{epd} {move.uci()}".encode()) % 401 - 200


def should_hang(fen: str) -> bool:
    if HANG_FEN and HANG_FEN in fen:
        return True
    if HANG_ONCE:
        try:
            os.close(os.open(HANG_ONCE, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return True
        except FileExistsError:
            return False
    return False


def bad_now() -> bool:
    """Whether this search misbehaves (FAKE_UCI_BESTMOVE / _SCORE / _PV): always, or only once with BAD_ONCE."""
    if not BAD_ONCE:
        return True
    try:
        os.close(os.open(BAD_ONCE, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def search(board: chess.Board, limit: str, multipv: int, stop: threading.Event) -> None:
    fen = board.fen()
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()} go {limit} {fen}\n")
    if should_hang(fen):
        while True:  # hung: ignores stop, answers nothing
            time.sleep(3600)
    stop.wait(DELAY)
    kind, value = limit.split()
    depth = int(value) if kind == "depth" else 5
    nodes = int(value) if kind == "nodes" else 1000 * depth
    shift = (depth if kind == "depth" else nodes // 1000) if DEPTH_SCORES else 0
    epd = board.epd()  # once a search: writing it is most of a search's time
    lines = sorted(((score_of(epd, m) + shift, m) for m in board.legal_moves), key=lambda sm: sm[0], reverse=board.turn)
    if STDERR:
        sys.stderr.write(("x" * 100 if STDERR_NONL else "x" * 99 + "\n") * STDERR)
        sys.stderr.flush()
    bad = (BESTMOVE or SCORE or PV) and bad_now()
    for early in range(1, ITERATIONS + 1):
        lie = bad and LIE_EARLY
        for k, (cp, move) in enumerate(lines[:multipv], start=1):
            board.push(move)
            reply = next(iter(board.legal_moves), None)
            board.pop()
            off = cp + 7 * (ITERATIONS + 1 - early)  # White's view, off by the depths left
            score = SCORE if lie and SCORE else f"cp {off if board.turn == chess.WHITE else -off}"
            pv = PV if lie and PV else " ".join(m.uci() for m in (move, reply) if m is not None)  # no reply: one move
            say(f"info depth {early} seldepth {early + 2} multipv {k} score {score} nodes {early * 100} pv {pv}")
        if lines:
            say(f"info depth {early + 1} currmove {lines[-1][1].uci()} currmovenumber {len(lines)}")
    bad = bad and not LIE_EARLY
    for k, (cp, move) in enumerate(lines[:multipv], start=1):
        mover_cp = cp if board.turn == chess.WHITE else -cp  # UCI scores are from the mover's view
        score = SCORE if bad and SCORE else f"cp {mover_cp}"
        pv = PV if bad and PV else move.uci()
        say(f"info depth {depth} seldepth {depth} multipv {k} score {score} nodes {nodes} pv {pv}")
    best = BESTMOVE if bad and BESTMOVE else (lines[0][1].uci() if lines else "0000")
    say(f"bestmove {best}")


def main() -> None:
    if FORK and os.fork() == 0:  # the child keeps the inherited stdout and stderr open
        time.sleep(3600)
        os._exit(0)
    board = chess.Board()
    multipv = 1
    searches = 0
    stop = threading.Event()
    worker: threading.Thread | None = None
    new_game = False
    for raw in sys.stdin:
        tokens = raw.split()
        if not tokens:
            continue
        cmd = tokens[0]
        if cmd == "uci":
            while HANG_START and os.path.exists(HANG_START):  # hung while starting: no answer at all
                time.sleep(0.05)
            say(f"id name {NAME}")
            say("id author livemon tests")
            say("option name MultiPV type spin default 1 min 1 max 500")
            say("option name Threads type spin default 1 min 1 max 64")
            say("option name Hash type spin default 16 min 1 max 1024")
            say("uciok")
        elif cmd == "isready":
            if not (HANG_NEWGAME and new_game):
                say("readyok")
        elif cmd == "ucinewgame":
            new_game = True
        elif cmd == "setoption" and len(tokens) >= 5 and tokens[2] == "MultiPV":
            multipv = int(tokens[4])
        elif cmd == "position":
            if tokens[1] == "startpos":
                board, rest = chess.Board(), tokens[2:]
            else:
                end = tokens.index("moves") if "moves" in tokens else len(tokens)
                board, rest = chess.Board(" ".join(tokens[2:end])), tokens[end:]
            for uci in rest[1:]:
                board.push_uci(uci)
        elif cmd == "go":
            searches += 1
            if CRASH_EVERY and searches % CRASH_EVERY == 0:
                os._exit(3)
            limit = " ".join(tokens[1:3]) if len(tokens) >= 3 else "depth 1"
            stop = threading.Event()
            worker = threading.Thread(target=search, args=(board.copy(), limit, multipv, stop), daemon=True)
            worker.start()
        elif cmd == "stop":
            stop.set()
        elif cmd == "quit":
            break
    os._exit(0)


if __name__ == "__main__":
    main()
