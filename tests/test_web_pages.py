"""The broadcast pages in a real headless Chromium: the overlay's layouts and the commentator's page.

Most tests run against a real ``livemon serve`` (a subprocess: the scripted UCI engine of tests/fake_uci.py, the
real store, the web face; the docs' pictures: the real Stockfish, for real evaluations and estimates) fed
by a real event replayed as if live: the top four boards of round 1 of a 2025 open (lichess's broadcast PGN,
with ``[%clk]`` and titles, no evaluations: every position is searched by the engine). The pages are read through
the Chrome DevTools Protocol (tests/test_overlay.py's ``CDP``), with every uncaught exception, console error and
failed load collected: a page with any is a failure.

Set ``LIVEMON_DOCS_PNG=docs`` to write the README's 1920×1080 pictures (``overlay-bars.png``, ``overlay-board.png``,
``overlay-leaderboard.png``, ``commentator.png``, ``commentator-game.png``) there.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
import json
import math
import os
import re
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Iterator
from urllib.parse import quote

import chess
import chess.pgn
import httpx
import pytest
from websockets.asyncio.client import connect

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import WebServer
from livemon.live.messages import BoardState, PlayerEstimate
from livemon.live.pgn import split_games
from tests.conftest import REPO, STOCKFISH, free_port, real, write_fake_engine
from tests.layout import LAYOUT_JS
from tests.test_overlay import CDP

pytestmark = [pytest.mark.slow]
BOARDS = 4
PACE = 8 if os.environ.get("LIVEMON_DOCS_PNG") else 1  # the docs' slower replay: longer waits for the next moves


class Page(CDP):
    """CDP with the page's events kept: exceptions, console errors and failed loads are the page's errors."""

    def __init__(self, ws: Any) -> None:
        super().__init__(ws)
        self.errors: list[str] = []


    async def js(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _event(self, ev: dict[str, Any]) -> None:
        method, p = ev.get("method"), ev.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append(f"log: {p['entry']['text']} {p['entry'].get('url', '')}")

    async def open(self, url: str, ready: str) -> None:
        """Navigate, then wait until the JS expression ``ready`` is true (and no error came meanwhile)."""
        await self.navigate(url)
        await self.wait_for(f"(() => {{ try {{ return !!({ready}); }} catch (e) {{ return false; }} }})()", True, timeout=30)

    async def docs_wait(self, ready: str, timeout: float = 240) -> None:
        """For the docs' pictures only: wait (without failing) until ``ready``, e.g. performance figures on screen."""
        if os.environ.get("LIVEMON_DOCS_PNG"):
            with contextlib.suppress(AssertionError):
                await self.wait_for(f"(() => {{ try {{ return !!({ready}); }} catch (e) {{ return false; }} }})()", True, timeout)

    async def holds(self) -> None:
        """The page as drawn now keeps every text whole, inside its panel and the frame, none over another."""
        await self.wait_for("document.body.dataset.seq === String(window.livemon.last)", True, timeout=10)
        got = await self.js(LAYOUT_JS)
        assert got["problems"] == [] and got["texts"] > 5, got

    async def shot(self, name: str, tmp_path: Path, backdrop: dict[str, float] | None = None) -> bytes:
        """A 1920×1080 PNG of the page (the transparent overlay over ``backdrop`` for the docs' copy)."""
        await self.call("Emulation.setDefaultBackgroundColorOverride", color={"r": 0, "g": 0, "b": 0, "a": 0})
        png = base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])
        (tmp_path / name).write_bytes(png)
        width, height, _, color_type = struct.unpack(">IIBB", png[16:26])
        assert (width, height) == (1920, 1080)
        assert backdrop is None or color_type == 6  # RGBA: the overlay's background is see-through
        if os.environ.get("LIVEMON_DOCS_PNG"):
            if backdrop:
                await self.call("Emulation.setDefaultBackgroundColorOverride", color=backdrop)
            docs = base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])
            Path(os.environ["LIVEMON_DOCS_PNG"], name).write_bytes(docs)
        return png


@pytest.fixture
async def page(browser_tab: str) -> AsyncIterator[Page]:
    async with connect(browser_tab, max_size=None) as ws:
        p = Page(ws)
        for domain in ("Page", "Runtime", "Log"):
            await p.call(f"{domain}.enable")
        await p.call("Emulation.setDeviceMetricsOverride", width=1920, height=1080, deviceScaleFactor=1, mobile=False)
        yield p


@dataclasses.dataclass
class Served:
    url: str
    pgn: Path
    games: list[chess.pgn.Game]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``livemon serve`` replaying round 1's top boards of a real broadcast, 150 (the docs' pictures: 10) times real time."""
    tmp = tmp_path_factory.mktemp("served")
    chunks = [c for c, _ in split_games(real("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn").read_text())][:BOARDS]
    pgn = tmp / "round1.pgn"
    # lichess's broadcast export names each game's chapter in its Event tag; the event is the study's name
    event = "XVII Memorial Pedro Lezcano Montalvo 2025"  # tests/data/SOURCES.md
    pgn.write_text("\n".join(re.sub(r'\[Event "[^"]*"\]', f'[Event "{event}"]', c) for c in chunks))
    port = free_port()
    cfg = tmp / "config.toml"
    # depth 6 for the checks; the docs' pictures want the shipped calibration's profile (performance figures shown)
    depth, speed, wait = (12, 10, 20) if os.environ.get("LIVEMON_DOCS_PNG") else (6, 150, 0.4)
    engine = STOCKFISH if os.environ.get("LIVEMON_DOCS_PNG") else write_fake_engine(tmp)
    cfg.write_text(
        f'[engine]\npath = "{engine}"\ndepth = {depth}\n[store]\npath = "{tmp / "live.sqlite"}"\n'
        f'[monitor]\nstatus_seconds = 0.5\n[web]\nport = {port}\n'
        f'[[feeds]]\nname = "replay"\ntype = "replay"\npath = "{pgn}"\nspeed = {speed}\nmax_delay = {wait}\n')
    log = open(tmp / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "livemon.cli", "serve", "--config", str(cfg)],
                            cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"livemon serve did not come up: {(tmp / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.1)
        with open(pgn) as f:
            games = [g for g in iter(lambda: chess.pgn.read_game(f), None)]
        yield Served(url, pgn, games)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def position(game: chess.pgn.Game, ply: int) -> chess.Board:
    board = game.board()
    for move in list(game.mainline_moves())[:ply]:
        board.push(move)
    return board


PIECES_JS = """[...document.querySelectorAll(%s)].filter((p) => p.cgKey && !p.classList.contains('fading'))
  .map((p) => p.cgKey + ' ' + p.cgPiece).sort()"""


def pieces_of(board: chess.Board) -> list[str]:
    return sorted(f"{chess.square_name(sq)} {'white' if p.color else 'black'} {chess.piece_name(p.piece_type)}"
                  for sq, p in board.piece_map().items())


async def shown_position(page: Page, selector: str, game_id_js: str, served: Served) -> tuple[list[str], list[str]]:
    """The pieces chessground drew and those of the real game at the ply the page shows (read at one instant)."""
    pieces, expected = [], ["nothing read"]
    for _ in range(100):
        got = await page.js(f"""(() => {{ const b = window.livemon.boards.get({game_id_js});
            return b ? [b.white, b.black, b.ply, document.querySelector({json.dumps(selector)}).dataset.fen,
                        {PIECES_JS % json.dumps(selector + ' piece')}] : null; }})()""")
        if got and got[3] and got[3].split(" ")[0] == chess.Board(got[3]).board_fen():
            white, black, ply, fen, pieces = got
            game = next(g for g in served.games if g.headers["White"] == white and g.headers["Black"] == black)
            real_board = position(game, ply)
            expected = pieces_of(real_board)
            if real_board.board_fen() == chess.Board(fen).board_fen() and pieces == expected:
                break
        await asyncio.sleep(0.1)  # an animation in flight: the next read
    return pieces, expected


async def test_overlay_layouts_on_a_live_replay(page: Page, served: Served, tmp_path: Path) -> None:
    first = served.games[0].headers
    # layout=bars, following the first live board
    await page.open(f"{served.url}/overlay", "window.livemon && window.livemon.game && window.livemon.boards.size")
    await page.wait_for("document.getElementById('white-name').textContent !== '—'", True, timeout=20)
    name = await page.js("document.getElementById('white-name').textContent")
    assert name in {g.headers["White"] for g in served.games}
    assert await page.js("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert await page.js("document.body.className") == "layout-bars"
    # the eval bar and the chart move as the moves come
    before = await page.js("[document.getElementById('evalbar').dataset.white, document.getElementById('chart').dataset.points,"
                           " window.livemon.boards.get(window.livemon.game).ply]")
    await page.wait_for(f"window.livemon.boards.get(window.livemon.game).ply > {before[2] + 4}", True, timeout=30 * PACE)
    await page.wait_for(f"Number(document.getElementById('chart').dataset.points) > {int(before[1] or 0) + 2}", True, timeout=30 * PACE)
    evals = await page.js("window.livemon.boards.get(window.livemon.game).evals")
    assert evals and len(evals) >= int(before[1] or 0) + 2  # the chart reads the game:<id> channel's evaluations
    for _ in range(100):  # the bar as drawn for the state held (the page draws a burst at most ~10 times a second)
        drawn, bar, text, cp = await page.js(
            "[document.body.dataset.seq === String(window.livemon.last), document.getElementById('evalbar').dataset.white,"
            " document.getElementById('eval-text').textContent, window.livemon.boards.get(window.livemon.game).eval_cp]")
        if drawn:
            break
        await asyncio.sleep(0.02)
    if cp is None:
        assert text == "—" and bar == "50.0"  # no evaluation: a dash, never a number
    else:
        assert abs(float(bar) - (50 + 50 * (2 / (1 + math.exp(-0.00368208 * max(-1000, min(1000, cp)))) - 1))) < 0.06
    # the clock of the side to move ticks between moves
    clocks, live = await page.js("[[...document.querySelectorAll('.clock.running')].map((e) => e.id),"
                                 " window.livemon.boards.get(window.livemon.game).result === '*']")
    assert len(clocks) == (1 if live else 0), clocks  # a finished game's clocks stand still
    t0 = await page.js(f"document.getElementById({clocks[0]!r}).textContent") if clocks else None
    assert not live or (t0 and ":" in t0)
    await page.docs_wait("['white-perf', 'black-perf'].every((id) => document.getElementById(id).textContent !== '—')"
                         " && window.livemon.boards.get(window.livemon.game).result === '*'"
                         " && window.livemon.boards.get(window.livemon.game).ply >= 30"
                         " && window.livemon.boards.get(window.livemon.game).eval_cp !== null", timeout=900)
    await page.holds()
    await page.shot("overlay-bars.png", tmp_path, backdrop={"r": 46, "g": 64, "b": 54, "a": 1})

    # layout=board for one game: chessground draws the real game's position at the ply shown
    gid = await page.js("[...window.livemon.boards.keys()].find((id) => window.livemon.boards.get(id).white === %s)"
                        % json.dumps(first["White"]))
    await page.open(f"{served.url}/overlay?game={quote(gid, safe='')}&layout=board",
                    "document.querySelectorAll('#cgboard piece').length > 0")
    drawn, expected = await shown_position(page, "#cgboard", json.dumps(gid), served)
    assert drawn == expected and len(drawn) >= 3
    assert await page.js("document.getElementById('white-name').textContent") == first["White"]
    await page.docs_wait(f"window.livemon.boards.get({json.dumps(gid)}).eval_cp !== null")
    await page.holds()
    await page.shot("overlay-board.png", tmp_path, backdrop={"r": 46, "g": 64, "b": 54, "a": 1})

    # layout=leaderboard: the players with estimates, ranked
    await page.open(f"{served.url}/overlay?layout=leaderboard", "document.querySelectorAll('#lb-rows tr').length >= 4")
    rows = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => r.dataset.name)")
    everyone = {g.headers[s] for g in served.games for s in ("White", "Black")}
    assert set(rows) <= everyone and len(rows) == len(set(rows)) >= 4
    shown = await page.js("[...document.querySelectorAll('#lb-rows td.perf')].map((td) => td.textContent)")
    assert all(s == "—" or s[:4].isdigit() for s in shown)  # an Elo with its range, or "—": never 0
    await page.docs_wait("[...document.querySelectorAll('#lb-rows td.perf')].filter((td) => td.textContent !== '—').length >= 6")
    await page.holds()
    await page.shot("overlay-leaderboard.png", tmp_path, backdrop={"r": 46, "g": 64, "b": 54, "a": 1})
    assert page.errors == []


async def test_commentator_page_on_a_live_replay(page: Page, served: Served, tmp_path: Path) -> None:
    await page.open(f"{served.url}/commentator", f"document.querySelectorAll('#boards .card').length === {BOARDS}")
    cards = await page.js("[...document.querySelectorAll('#boards .card')].map((c) => c.dataset.game)")
    assert len(cards) == BOARDS
    # every mini board draws its game's real position
    for gid in cards:
        sel = f".card[data-game={json.dumps(gid)}] .mini"
        drawn, expected = await shown_position(page, sel, json.dumps(gid), served)
        assert drawn == expected
    await page.wait_for("document.querySelectorAll('#lb-rows tr[data-name]').length >= 6", True, timeout=30)
    names = await page.js("[...document.querySelectorAll('#lb-rows tr[data-name]')].map((r) => r.dataset.name)")
    assert set(names) <= {g.headers[s] for g in served.games for s in ("White", "Black")}
    # the moments channel is newer than the protocol's first version: asked for, and a refusal is no error
    state = await page.js("document.getElementById('moments').dataset.state")
    refused = await page.js("window.livemon.refused.has('moments')")
    assert state == ("refused" if refused else "ok")
    await page.docs_wait("[...window.livemon.boards.values()].filter((b) => b.eval_cp !== null).length >= 3")
    await page.holds()
    await page.shot("commentator.png", tmp_path)

    # a click on a board: that game in detail, its chart and move list growing with the moves
    live_id = await page.js("[...window.livemon.boards.values()].filter((b) => b.result === '*').map((b) => b.game_id)[0] || null")
    gid = live_id or cards[0]
    await page.js(f"[...document.querySelectorAll('#boards .card')].find((c) => c.dataset.game === {json.dumps(gid)}).click()")
    await page.wait_for("document.body.classList.contains('detail')", True)
    await page.wait_for("document.querySelectorAll('#d-board piece').length > 0", True)
    drawn, expected = await shown_position(page, "#d-board", json.dumps(gid), served)
    assert drawn == expected
    await page.wait_for("Number(document.getElementById('d-chart').dataset.points) > 0", True, timeout=30)
    if live_id:
        ply = await page.js(f"window.livemon.boards.get({json.dumps(gid)}).ply")
        await page.wait_for(f"window.livemon.boards.get({json.dumps(gid)}).ply > {ply + 2}", True, timeout=40 * PACE)
        # the moves seen since the page opened, each in the list (once the page has drawn the newest: it draws
        # at most ~10 times a second, so a move may arrive between a drawing and this check)
        seen_js = f"window.livemon.boards.get({json.dumps(gid)})._sans.filter(Boolean).length"
        await page.wait_for(f"document.querySelectorAll('#d-moves .mv').length >= {seen_js}", True, timeout=10)
        seen = await page.js(seen_js)
        assert seen >= 3
        white = await page.js(f"window.livemon.boards.get({json.dumps(gid)}).white")
        game = next(g for g in served.games if g.headers["White"] == white)
        sans = [n.san() for n in game.mainline()]
        # the newest move's ply and text read at once (a move may be drawn between two reads)
        last, text = await page.js("(() => { const m = document.querySelector('#d-moves .mv.last'); "
                                   "return [m.dataset.ply, m.textContent]; })()")
        assert text.startswith(sans[int(last) - 1]), (last, text)
    await page.docs_wait(f"window.livemon.boards.get({json.dumps(gid)}).eval_cp !== null")
    # a page opened mid-game: every move so far, the real game's, from 1.
    await page.open(f"{served.url}/commentator#game={quote(gid, safe='')}",
                    f"(window.livemon.boards.get({json.dumps(gid)}) || {{}}).moves && document.querySelectorAll('#d-moves .mv').length > 0")
    await page.wait_for(f"document.querySelectorAll('#d-moves .mv').length === window.livemon.boards.get({json.dumps(gid)}).ply",
                        True, timeout=10)
    listed, white = await page.js(f"""[[...document.querySelectorAll('#d-moves .mv')].map((m) => m.textContent.replace(/[?!]+$/, '')),
        window.livemon.boards.get({json.dumps(gid)}).white]""")
    game = next(g for g in served.games if g.headers["White"] == white)
    assert listed == [n.san() for n in game.mainline()][:len(listed)] and len(listed) >= 1
    assert await page.js("document.querySelectorAll('#d-moves .unseen').length") == 0
    await page.holds()
    # the game's whole move list came with it (game:<id>'s snapshot): every ply so far, from the first
    count = await page.js(f"window.livemon.boards.get({json.dumps(gid)}).moves.length")
    assert count >= 1 and await page.js("document.querySelector('#d-moves .mv').dataset.ply") == "1"
    await page.shot("commentator-game.png", tmp_path)
    assert page.errors == []


# -- the fields the pages read when the monitor sends them; "—" when it does not -----------------------------


FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


async def test_fields_when_present_and_dashes_when_not(page: Page) -> None:
    hub = Hub()
    hub.publish(BoardState("g1", "Carlsen, Magnus", "Caruana, Fabiano", 2830, 2795, FEN, 4, "Nc6", "b8c6", None,
                           (20, 30, 100, None, None), 3500.0, 3550.0, event="Norway Chess", round="3",
                           accuracy={"white": 93.4, "black": None}, white_title="GM", white_fed="NOR"))
    hub.publish(PlayerEstimate("Carlsen, Magnus", 2830, 2, -5.0, 0.4, -60.0, None, accuracy=91.34,
                           classes={"inaccuracy": 1, "mistake": 0, "blunder": 0},
                           results={"score": 2.5, "games": 3, "tpr": 2901.0, "rating_change": 4.2},
                           # the headline is the estimate under its display rules, the moves alone beside it; the
                           # E(c) performance (set far off here) is a diagnostic no page shows
                           performance={"elo": 2111.0, "cr95": [1400.0, 2800.0], "positions": 40, "profile": "p", "calibration": "c"},
                           estimate={"elo": 2850.0, "cr95": [2400.0, 3300.0], "sd": 230.0, "positions": 40, "games": 3,
                                     "kind": "field", "label": "in this field (moves; the field 2790 ± 40, 5 other players)"},
                           display={"show": True, "elo": 2850.0, "cr95": [2400.0, 2864.0], "open": "high"},
                           moves_estimate={"elo": 2815.0, "cr95": [2440.0, 3190.0], "sd": 190.0, "positions": 40,
                                           "games": 3, "kind": "moves", "label": "FIDE classical, moves, Elo 1253-2864",
                                           "display": {"show": True, "elo": 2815.0, "cr95": [2440.0, 2864.0], "open": "high"}}))
    hub.publish(PlayerEstimate("Caruana, Fabiano", 2795, 2, -9.0, 0.3, -90.0, None,  # an interval too wide to show
                               performance={"elo": 2790.0, "cr95": [2400.0, 3000.0], "positions": 30, "profile": "p",
                                            "calibration": "c"},
                               estimate={"elo": None, "cr95": None, "sd": 480.0, "positions": 30, "games": 1, "kind": "moves",
                                         "reason": "30 positions: the 95% interval (±941) would be wider than the rating "
                                                   "range fitted on (1253-2864)"},
                               display={"show": False, "more_games": 4},
                               moves_estimate={"elo": None, "cr95": None, "sd": 480.0, "positions": 30, "games": 1,
                                               "kind": "moves", "reason": "30 positions: too few",
                                               "display": {"show": False, "more_games": 4}}))
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/overlay?game=g1", "document.getElementById('white-perf').textContent === '2850'")
        t = "document.getElementById(%r).textContent"
        assert await page.js(t % "white-title") == "GM" and await page.js(t % "white-fed") == "NOR"
        assert await page.js(t % "black-title") == "" and await page.js(t % "white-acc") == "93.4"
        assert await page.js(t % "black-acc") == "—"  # a missing accuracy: never 0 or 100
        assert await page.js(t % "black-perf") == "—" and await page.js(t % "white-score") == "2½/3"
        assert await page.js(t % "black-range") == "4 more games"  # the display rules: no figure, how long until one
        assert await page.js(t % "white-range") == "2400–2864+"  # never past the rating range fitted on: cut there, marked
        assert await page.js(t % "white-alone") == "2815" and await page.js(t % "black-alone") == "—"
        assert "wider than the rating range" in await page.js("document.getElementById('black-perf').title")
        assert await page.js(t % "eval-text") == "—"  # no evaluation yet: a dash and a half, grey bar
        assert await page.js("document.getElementById('evalbar').className") == "evalbar horizontal unknown"
        assert await page.js("document.querySelectorAll('#chart .dot.inaccuracy').length") == 1  # the board's own class
        # the clocks tick ten times a second, but their text is set only when it changes: a stopped clock is not
        # touched, a running one once a second (each change costs the page a layout and a paint)
        await page.js("""window.__changes = {}; for (const id of ['white-clock', 'black-clock']) {
            window.__changes[id] = 0; new MutationObserver((m) => { window.__changes[id] += m.length; })
              .observe(document.getElementById(id), {childList: true, characterData: true, subtree: true}); }""")
        clock = await page.js(t % "white-clock")
        await asyncio.sleep(1.2)
        assert await page.js(t % "white-clock") != clock and clock.startswith("58:")  # White to move: it ticks
        assert await page.js(t % "black-clock") == "59:10"
        changes = await page.js("window.__changes")
        assert changes["black-clock"] == 0 and 1 <= changes["white-clock"] <= 4, changes

        await page.open(f"{srv.url}/overlay?layout=leaderboard", "document.querySelectorAll('#lb-rows tr').length === 2")
        cells = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => [...r.cells].map((c) => c.textContent))")
        assert cells[0][1] == "GMCarlsen, MagnusNOR"
        assert cells[0][3:8] == ["2½/3", "2901", "28502400–2864+", "2815", "91.3"]
        assert cells[1][3:8] == ["—"] * 5  # Caruana: no results, no estimate (a reason), none from the moves, no accuracy

        # the numbers module: lichess's win% curve, clamped; move classes from the drop in winning chances
        got = await page.js("""import('/static/livemon.js').then((L) => [L.winPct(0), L.winPct(100), L.winPct(-300),
            L.winPct(5000) === L.winPct(1000), L.winPct(null), L.moveClasses({}, [50, 50, 56, 56, 67, 50, 50])])""")
        def lichess(cp: int) -> float:
            return 50 + 50 * (2 / (1 + math.exp(-0.00368208 * cp)) - 1)
        assert got[0] == 50 and got[3] is True and got[4] is None
        assert abs(got[1] - lichess(100)) < 1e-9 and abs(got[2] - lichess(-300)) < 1e-9 and 59.0 < got[1] < 59.2
        assert got[5] == [None, None, "inaccuracy", None, "mistake", "blunder", None]  # Black's drop: White's rise
        assert await page.js("import('/static/livemon.js').then((L) => [L.moreGames(1), L.moreGames(4)])") == [
            "1 more game", "4 more games"]
        await page.open(f"{srv.url}/commentator#game=g1",
                        "document.querySelectorAll('#d-board piece:not(.fading):not(.ghost)').length === 32")
        assert await page.js("document.getElementById('d-white-acc').textContent") == "93.4"
        assert "est. 2850" in await page.js("document.querySelector('#d-white .perf').textContent")
        assert "moves only 2815" in await page.js("document.querySelector('#d-white .alone').textContent")
        lb = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => [...r.cells].map((c) => c.textContent))")
        assert lb[0][5:8] == ["+4.2", "28502400–2864+", "2815"] and lb[1][6:8] == ["—", "—"]
        assert await page.js("document.getElementById('d-black-acc').textContent") == "—"
    assert page.errors == []


async def test_static_files_are_the_packaged_ones_only() -> None:
    """The pages' files come from the package (chessground vendored, nothing from another site); no path
    outside what it ships is served."""
    async with WebServer(Hub(), WebConfig(port=0)) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        js = await http.get("/static/vendor/chessground/chessground.min.js")
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
        assert b"export{" in js.content  # the ES module the pages import
        for css in ("base", "brown", "cburnett"):
            r = await http.get(f"/static/vendor/chessground/chessground.{css}.css")
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/css") and b"cg-" in r.content
        licence = await http.get("/static/vendor/chessground/LICENSE")
        assert licence.status_code == 200 and b"GNU GENERAL PUBLIC LICENSE" in licence.content
        for page in ("/commentator", "/overlay", "/static/livemon.js"):
            body = (await http.get(page)).text
            assert "http://" not in body.replace("http://www.w3.org/2000/svg", "") and "https://" not in body  # no CDN
        for bad in ("/static/../server.py", "/static/%2e%2e/server.py", "/static/", "/static/vendor", "/static/nope.js"):
            assert (await http.get(bad)).status_code == 404, bad
        index = (await http.get("/")).text
        assert 'href="/commentator"' in index
