"""`livemon report PGN... -o event.html` end to end: real games, the page parsed back (and drawn by headless
Chromium when it is installed). The real Stockfish's depth-6 analyses of these games are shipped
(tests/data/analyses_stockfish15.1_d6.jsonl.gz) and put in the store first: the subject is the page made of them.
The engine is the scripted one (tests/fake_uci.py) under Stockfish's name, so that the profile is the shipped
analyses' one; it is asked for no position."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from livemon.cli import main
from livemon.io.store import Store
from tests.conftest import cached_store, real, write_fake_engine

ROUND = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
ANALYSES = "analyses_stockfish15.1_d6.jsonl.gz"  # Stockfish 15.1 at depth 6, MultiPV 4: ROUND and Byrne–Fischer


class Page(HTMLParser):
    """What a reader of the page sees: the leaderboard's rows, each game's summary, chart and moments."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.leaderboard: list[list[str]] = []
        self.games: list[dict] = []
        self.external: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._summary: list[str] | None = None
        self._table = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.stack.append((tag, a))
        for key in ("src", "href"):
            if key in a:
                self.external.append(a[key])
        if tag == "table":
            self._table = a.get("id") or a.get("class", "")
        elif tag == "details":
            self.games.append({"id": a["id"], "summary": "", "win_points": 0, "segments": 0, "moment_dots": 0,
                               "moments": [], "kinds": []})
        elif tag == "summary":
            self._summary = []
        elif tag == "polyline" and "win" in a.get("class", ""):
            self.games[-1]["win_points"] += len(a["points"].split())
            self.games[-1]["segments"] += 1
        elif tag == "circle" and a.get("class") == "moment":
            self.games[-1]["moment_dots"] += 1
        elif tag == "tr" and self._table in ("leaderboard", "moments"):
            self._row = []
        elif tag in ("td",) and self._row is not None:
            self._cell = []
        elif tag == "span" and "chip" in a.get("class", "") and self.games:
            self.games[-1]["kinds"].append(a["class"].split()[-1])

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                (self.leaderboard if self._table == "leaderboard" else self.games[-1]["moments"]).append(self._row)
            self._row = None
        elif tag == "summary" and self._summary is not None:
            self.games[-1]["summary"] = "".join(self._summary)
            self._summary = None
        elif tag == "table":
            self._table = ""

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._summary is not None:
            self._summary.append(data)


def engine_config(folder: Path) -> str:
    """A config.toml in ``folder`` whose engine is the scripted one answering as "Stockfish 15.1": its path."""
    cfg = folder / "engine.toml"
    cfg.write_text(f'[engine]\npath = "{write_fake_engine(folder, "Stockfish 15.1")}"\n')
    return str(cfg)


def analyses(store: Path) -> int:
    with Store(store, create=False) as s:
        return s.analyses.count()


def report(tmp_path: Path, *args: str) -> tuple[int, str, Page | None]:
    """``livemon report`` on the store in ``tmp_path`` with the scripted "Stockfish 15.1"; it searches nothing."""
    out = tmp_path / "event.html"
    before = analyses(tmp_path / "cache.sqlite")
    code = main(["report", *args, "-o", str(out), "--store", str(tmp_path / "cache.sqlite"),
                 "--config", engine_config(tmp_path)])
    assert analyses(tmp_path / "cache.sqlite") == before  # every position from the shipped analyses
    if code != 0:
        return code, "", None
    text = out.read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    return code, text, page


@pytest.fixture(scope="module")
def round_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, Page | None]:
    """The round's report at depth 6, made once for the tests that read it: (its folder, exit code, HTML, page)."""
    folder = tmp_path_factory.mktemp("round")
    cached_store(folder / "cache.sqlite", ANALYSES)
    return (folder, *report(folder, str(real(ROUND)), "--depth", "6", "--title", "BBDDNRR 2025"))


def test_report_of_a_round_matches_analyse(capsys, round_report) -> None:
    folder, code, text, page = round_report
    assert code == 0 and page is not None
    capsys.readouterr()
    assert main(["analyse", "--json", str(real(ROUND)), "--depth", "6", "--store", str(folder / "cache.sqlite"),
                 "--config", engine_config(folder)]) == 0
    analysed = json.loads(capsys.readouterr().out)

    # self-contained: nothing fetched, no script, one file
    assert page.external == [] and "<script" not in text and "<title>BBDDNRR 2025</title>" in text
    # the leaderboard: every player once, by score, with analyse's figures
    players = {p["name"]: p for p in analysed["players"]}
    assert sorted(row[1] for row in page.leaderboard) == sorted(players)
    scores = [float(row[3].split("/")[0]) for row in page.leaderboard]
    assert scores == sorted(scores, reverse=True)
    for row in page.leaderboard:
        p = players[row[1]]
        assert row[3] == f"{p['results']['score']:g}/{p['results']['games']}"
        assert row[4] == str(p["results"]["tpr"])
        assert row[5] == f"{p['results']['rating_change']:+.1f}"
        assert row[8] == f"{p['accuracy']:.1f}"
        assert row[9] == "/".join(str(p["classes"][k]) for k in ("inaccuracy", "mistake", "blunder"))
        # the games are searched at depth 6 (their [%eval]s carry no MultiPV), a profile with no fitted quality
        # model: no estimate (nor from the moves alone), never a made-up one
        assert row[6] == row[7] == "—" and p["estimate"]["elo"] is None
    # each game: its accuracy, a win% chart with a point per position, its moments as dots and rows
    assert len(page.games) == len(analysed["games"]) == 45
    total_moments = 0
    for game, entry in zip(page.games, analysed["games"]):
        acc = entry["accuracy"]
        assert f"accuracy {acc['white']:.1f} / {acc['black']:.1f}" in game["summary"]
        assert game["segments"] == 1 and game["win_points"] == entry["plies"] + 1
        moments = [] if game["moments"] and "No blunder" in game["moments"][0][0] else game["moments"]
        assert game["moment_dots"] == len(moments)
        for row in moments:
            assert row[4] not in ("", "—")  # the engine's best move, searched whatever [%eval]s the game has
            if "blunder" in row[1]:
                assert row[2] == "blunder"
        total_moments += len(moments)
    assert total_moments > 20 and "turning_point" in sum((g["kinds"] for g in page.games), [])
    blunders = sum(int(p["classes"]["blunder"]) for p in analysed["players"])
    assert sum(k == "blunder" for g in page.games for k in g["kinds"]) == blunders


def test_report_names_the_engines_best_move(capsys, tmp_path: Path) -> None:
    """Byrne–Fischer 1956 analysed by Stockfish: every moment names the engine's best move (a SAN)."""
    cached_store(tmp_path / "cache.sqlite", ANALYSES)
    code, _, page = report(tmp_path, str(real("byrne_fischer_1956_pgnmentor.pgn")), "--depth", "6")
    assert code == 0 and page is not None
    (game,) = page.games
    assert game["moments"] and game["moment_dots"] == len(game["moments"])
    for row in game["moments"]:
        assert row[4] != "—" and row[4][0] in "KQRBNOabcdefgh"
    assert "Byrne" in game["summary"] and "0-1" in game["summary"]
    board = page.leaderboard
    assert {row[1] for row in board} == {"Donald Byrne", "Robert James Fischer"} or len(board) == 2


def test_report_bad_input_is_one_line(capsys, tmp_path: Path) -> None:
    code = main(["report", str(real("byrne_fischer_1956_pgnmentor.pgn")), "-o", str(tmp_path / "no" / "x.html")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no such directory" in err
    empty = tmp_path / "empty.pgn"
    empty.write_text("not a game\n", encoding="utf-8")
    code = main(["report", str(empty), "-o", str(tmp_path / "x.html"), "--store", str(tmp_path / "c.sqlite")])
    err = capsys.readouterr().err
    assert code == 1 and "no game" in err and "Traceback" not in err
    assert not (tmp_path / "x.html").exists()


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium not installed")
def test_report_draws_in_headless_chromium(tmp_path: Path, round_report) -> None:
    folder, code, _, _ = round_report
    assert code == 0
    shot = tmp_path / "report.png"
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                           "--window-size=1200,1400", (folder / "event.html").as_uri()],
                          capture_output=True, timeout=120)
    assert shot.exists(), done.stderr.decode(errors="replace")[-500:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a drawn page, not a blank one


def test_report_of_an_event_in_football_scoring_ranks_by_its_points(tmp_path: Path) -> None:
    """The round at 3-1-0 (``[event] points``): the leaderboard ranks by 3 a win and 1 a draw of its games (each
    player's ``results.points``, the figure the faces receive), each score cell the event's points with the game
    score in its title; the forecast's line says how it scores."""
    import chess.pgn

    cached_store(tmp_path / "cache.sqlite", ANALYSES)
    cfg = tmp_path / "engine.toml"
    engine_config(tmp_path)
    cfg.write_text(cfg.read_text() + '\n[event]\npoints = "3-1-0"\n')
    points: dict[str, int] = {}
    with real(ROUND).open(encoding="utf-8") as pgn:
        while (h := chess.pgn.read_headers(pgn)) is not None:
            w, b = {"1-0": (3, 0), "0-1": (0, 3), "1/2-1/2": (1, 1)}.get(h["Result"], (0, 0))
            points[h["White"]] = points.get(h["White"], 0) + w
            points[h["Black"]] = points.get(h["Black"], 0) + b
    out = tmp_path / "event.html"
    assert main(["report", str(real(ROUND)), "--depth", "6", "-o", str(out), "--store", str(tmp_path / "cache.sqlite"),
                 "--config", str(cfg)]) == 0
    page = Page()
    page.feed(text := out.read_text(encoding="utf-8"))
    shown = [(row[1], row[3]) for row in page.leaderboard]
    assert len(shown) == len(points) and all(cell == f"{points[name]} pts" for name, cell in shown)
    assert [points[name] for name, _ in shown] == sorted(points.values(), reverse=True)
    assert "scored 3-1-0" in text and " in games" in text
