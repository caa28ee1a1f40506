"""Every reading command on every state a store can be in: one clear line or the figures, never a traceback.

A store is driven through the states a monitor leaves it in (positions waiting for the engine, a correction whose
new positions are not analysed yet, a game withdrawn), an empty one, and one written by the previous release (its
analyses table without the ``worker`` column, its status and game tags without the keys added since), and
``export`` (text and ``--json``), ``status`` (text and ``--json``), ``doctor``, ``analyse`` and ``report`` run on
each: for the two that take a PGN, the scripted engine of tests/fake_uci.py at depth 2 under Stockfish's name (the
profile of the store's analyses).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import chess
import chess.pgn
import pytest

from livemon.cli import main
from livemon.io.store import Store
from livemon.live.messages import GameInfo, MoveEvent
from livemon.live.rules import needs_search
from livemon.live.values import PositionAnalysis, position_key
from tests.conftest import real

PROFILE = "Stockfish 15.1 depth=2 multipv=4"
PGN = real("byrne_fischer_1956_pgnmentor.pgn")


def _moves() -> list[MoveEvent]:
    game = chess.pgn.read_game(PGN.open())
    assert game is not None
    board, out = game.board(), []
    for ply, move in enumerate(game.mainline_moves(), 1):
        out.append(MoveEvent("g1", ply, move.uci(), board.san(move), board.fen()))
        board.push(move)
    return out


def _analysis(board: chess.Board, salt: int = 0) -> PositionAnalysis:
    moves = sorted(board.legal_moves, key=chess.Move.uci)[:2]
    score = (hash(board.epd()) + salt) % 300 - 150
    return PositionAnalysis(score, tuple((m.uci(), score - 20 * k) for k, m in enumerate(moves)), 2, 100)


def _fill(store: Store, moves: list[MoveEvent], analysed: int, newest: int = 0) -> None:
    """A game of the monitor's: its tags, every move stored, the positions before ply ``analysed`` answered and the
    ``newest`` last ones (an engine behind answers newest first)."""
    store.games.put(GameInfo("g1", white="Byrne, Donald", black="Fischer, Robert James", white_elo=2400,
                            black_elo=2300, event="Rosenwald", round="8.3"))
    board = chess.Board()
    store.analyses.put(position_key(board), PROFILE, _analysis(board))
    for ev in moves:
        store.games.put_move(ev)
        board.push_uci(ev.uci)
        if ev.ply < analysed or ev.ply > len(moves) - newest:
            store.analyses.put(position_key(board), PROFILE, _analysis(board))
    store.status.put({"engine": {"base_profile": PROFILE, "searches": analysed}, "moves": len(moves)})


def _waiting(path: Path) -> None:
    with Store(path) as store:
        _fill(store, _moves()[:40], 25, newest=10)  # positions 25-30 waiting


def _correction_pending(path: Path) -> None:
    moves = _moves()[:40]
    with Store(path) as store:
        _fill(store, moves, 40)
        store.games.delete_moves("g1", 30)  # the feed corrected ply 30: another move, not analysed yet
        board = chess.Board(moves[29].fen_before)
        other = next(m for m in sorted(board.legal_moves, key=chess.Move.uci) if m.uci() != moves[29].uci)
        store.games.put_move(MoveEvent("g1", 30, other.uci(), board.san(other), board.fen()))


def _withdrawn(path: Path) -> None:
    with Store(path) as store:
        _fill(store, _moves()[:30], 31)
        store.games.put(GameInfo("g2", white="A", black="B"))
        store.games.put_move(MoveEvent("g2", 1, "e2e4", "e4", chess.STARTING_FEN))
        store.games.delete("g2")
        store.games.put_result("g1", "0-1")


def _empty(path: Path) -> None:
    Store(path).close()


def _previous_release(path: Path) -> None:
    with Store(path) as store:
        _fill(store, _moves()[:30], 20)
    db = sqlite3.connect(path)
    try:
        db.execute("ALTER TABLE analyses DROP COLUMN worker")
        db.execute("UPDATE games SET info = json_remove(info, '$.white_title', '$.black_title', '$.white_fed', "
                   "'$.black_fed')")
        db.execute("UPDATE moves SET event = json_remove(event, '$.start_eval_cp', '$.emt')")
        db.execute("UPDATE status SET status = ?", (json.dumps({"moves": 30, "engine": {"searches": 20}}),))
        db.commit()
    finally:
        db.close()


STATES = {"positions waiting": _waiting, "a correction pending": _correction_pending, "a game withdrawn": _withdrawn,
          "an empty store": _empty, "the previous release's store": _previous_release}


def _unanalysed(path: Path) -> int:
    """The positions of PGN's game that need a search and have no analysis of PROFILE in the store at ``path``."""
    game = chess.pgn.read_game(PGN.open())
    assert game is not None
    board = game.board()
    keys = {position_key(board)}
    for move in game.mainline_moves():
        board.push(move)
        if needs_search(board):
            keys.add(position_key(board))
    with Store(path) as store:
        return sum(store.analyses.get(key, PROFILE) is None for key in keys)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, (args, err)
    if code:  # one clear line: livemon's on stderr, or the doctor's verdict
        lines = [line for line in (err or out).splitlines() if line.strip() and not line.startswith("analysing")]
        assert lines and lines[-1].startswith(("livemon: ", "PROBLEM")), (args, out, err)
    return code, out, err


@pytest.mark.parametrize("state", sorted(STATES))
def test_every_reading_command_on_every_state_of_a_store(capsys, tmp_path: Path, fake_stockfish: str, state: str) -> None:
    path = tmp_path / "store.sqlite"
    config = tmp_path / "engine.toml"
    config.write_text(f'[engine]\npath = "{fake_stockfish}"\n')
    STATES[state](path)
    store = str(path)
    for args in (("export", "--store", store), ("status", "--store", store), ("status", "--json", "--store", store),
                 ("doctor", "--store", store)):
        code, out, err = _run(capsys, *args)
        assert code in (0, 1), (args, code, err)
        assert out or err
    code, out, err = _run(capsys, "export", "--json", "--store", store)
    if state == "an empty store":
        assert code == 1 and "no moves yet" in err
    else:
        assert code == 0, err
        report = json.loads(out)
        (game,) = report["games"]
        played = {"positions waiting": 40, "a correction pending": 30, "a game withdrawn": 30,
                  "the previous release's store": 30}[state]
        assert game["plies"] <= played
        moves = game["moves_read"]
        assert moves["white"]["played"] + moves["black"]["played"] == played
        complete = state == "a game withdrawn"
        assert (moves["white"]["judged"] + moves["black"]["judged"] == played) == complete
        # moments are decided in play order: none past the first position still waiting for the engine
        decided = {"positions waiting": 24, "a correction pending": 29, "a game withdrawn": 30,
                   "the previous release's store": 19}[state]
        assert all(m["ply"] <= decided for m in game["moments"])
        assert moves["white"]["accuracy_read"] + moves["black"]["accuracy_read"] == decided
    missing = _unanalysed(path)
    code, out, err = _run(capsys, "analyse", "--json", str(PGN), "--depth", "2", "--store", store, "--config", str(config))
    assert code == 0 and len(json.loads(out)["games"]) == 1
    engine = json.loads(out)["engine"]
    # the store's analyses are read (the engine's profile is theirs), the rest searched: once each
    assert engine["profile"] == PROFILE and engine["analyses"] == missing > 0 and _unanalysed(path) == 0
    page = tmp_path / "event.html"
    code, out, err = _run(capsys, "report", str(PGN), "-o", str(page), "--depth", "2", "--store", store,
                          "--config", str(config))
    assert code == 0 and page.exists()


def test_a_store_that_is_not_there_is_one_line(capsys, tmp_path: Path) -> None:
    missing = str(tmp_path / "nothing.sqlite")
    for args in (("export", "--store", missing), ("export", "--json", "--store", missing),
                 ("status", "--store", missing), ("doctor", "--store", missing)):
        code, out, err = _run(capsys, *args)
        assert code != 0 and len((out + err).strip().splitlines()) == 1, (args, out, err)
