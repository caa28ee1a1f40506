"""The broadcast pages' layouts, measured in a real headless Chromium at 1920×1080: every text inside its panel and
inside the frame, none drawn over another, none cut (``scrollWidth`` ≤ ``clientWidth``), for the longest real names
(tests/data: "Bethencourt Hernandez, Alberto 2009", 35 characters), titles, federations, scores like 10½/13, mates,
ranges cut at the fitted range and missing values.

The pages are fed by a hub in this process (no engine: the figures are set), read through the Chrome DevTools
Protocol (a tab of tests/conftest.py's shared Chromium), and measured by tests/layout.py's ``LAYOUT_JS``: the boxes the
browser laid out, not a picture.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from urllib.parse import quote
from typing import Any

import pytest

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import WebServer
from livemon.live.messages import BoardState, Moment, PlayerEstimate
from tests.layout import LAYOUT_JS
from tests import test_web_pages
from tests.test_web_pages import Page

page = test_web_pages.page  # the 1920x1080 tab: one fixture, defined with the pages' tests

pytestmark = [pytest.mark.slow]


FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
LONG = "Bethencourt Hernandez, Alberto 2009"  # 35 characters: the longest name of tests/data's broadcasts
NAMES = [LONG, "Quintero Hernandez, Marcos Jesus", "Fernandez De La Hoz A., Carlos", "Vargas Tinoco, Celso Alejandro",
         "Delgado Armas, Francisco David", "Acosta Gonzalez, Juan Dionisio", "Meneses Gonzalez, Kevin Moises",
         "Vallejo Aleman, Ricardo Manuel", "Carlsen, Magnus", "So, Wesley", "Ding, Liren", "Giri, Anish"]
EVENT = "XVII Memorial Pedro Lezcano Montalvo 2025 Open A"
FEDS = ["ESP", "ENG", "NOR", "USA", "IND", "GER", "FRA", "NED", "NOR", "USA", "CHN", "NED"]
TITLES = ["WCM", "GM", "IM", "FM", "GM", "CM", "WGM", "IM", "GM", "GM", "GM", "GM"]


def evals(plies: int, mate_at_end: bool = False) -> tuple[int | None, ...]:
    out: list[int | None] = [20 + (i * 37) % 90 - 45 for i in range(plies + 1)]
    out[plies // 3] = None  # one position still awaited: a gap in the chart
    if mate_at_end:
        out[-1] = -3900
    return tuple(out)


def boards(hub: Hub, n: int = 6, round_: int = 13) -> None:
    for i in range(n):
        w, b = NAMES[(2 * i) % len(NAMES)], NAMES[(2 * i + 1) % len(NAMES)]
        mated = i == 1
        plies = 85 if not mated else 4
        hub.publish(BoardState(
            f"g{i + 1}", w, b, 2451 + i, 2398 - i, MATED if mated else FEN, plies, "Qh4#" if mated else "Nc6",
            "d8h4" if mated else "b8c6", -3900 if mated else (None if i == 2 else 35 - 20 * i),
            evals(plies, mated), 3599.0 if i != 3 else None, 5.2 if i == 0 else 1234.0,
            result="0-1" if mated else ("1/2-1/2" if i == 4 else "*"), event=EVENT, round=f"{round_}.{i + 1}",
            accuracy={"white": 94.1, "black": None if i == 0 else 88.8},
            white_title=TITLES[(2 * i) % 12], black_title=TITLES[(2 * i + 1) % 12],
            white_fed=FEDS[(2 * i) % 12], black_fed="" if i == 0 else FEDS[(2 * i + 1) % 12],
            moves=tuple(["e4", "e5", "Nf3", "Nc6"] * 30)[:plies]))


def players(hub: Hub, count: int = 12) -> None:
    for i, name in enumerate(NAMES[:count]):
        shown = i % 4 != 3
        hub.publish(PlayerEstimate(
            name, 2451 - 10 * i, 13, -5.0, 0.4, -60.0, None, accuracy=94.1 - i if i != 5 else None,
            classes={"inaccuracy": i, "mistake": 1, "blunder": 0},
            results={"score": 10.5 - i / 2, "games": 13, "tpr": 2702.0 - 9 * i, "rating_change": -0.04 if i == 2 else 12.4 - 3 * i},
            estimate={"elo": 2750.0 - 20 * i, "cr95": [2627.0, 3000.0], "sd": 90.0, "positions": 400, "games": 13,
                      "kind": "field", "label": "in this field (moves and results; the field 2395 ± 34, 11 other players)"},
            display={"show": True, "elo": 2750.0 - 20 * i, "cr95": [2627.0 - 20 * i, 2865.0], "open": "high"} if shown
            else {"show": False, "more_games": 2},
            moves_estimate={"elo": 2715.0 - 20 * i, "cr95": [2540.0, 2890.0], "sd": 88.0, "positions": 400, "games": 13,
                            "kind": "moves", "label": "FIDE classical, moves, Elo 1253-2865",
                            "display": {"show": shown, "elo": 2715.0 - 20 * i, "cr95": [2540.0, 2865.0], "open": "high"}}))


async def measured(page: Page, shot: str = "") -> dict[str, Any]:
    """The page's layout problems (none: ``[]``) and how many texts were measured; with ``LIVEMON_LAYOUT_PNG=<dir>``
    a picture of what was measured goes there as ``shot``."""
    await page.wait_for("document.body.dataset.seq === String(window.livemon.last)", True, timeout=10)
    await page.js("new Promise((r) => setTimeout(r, 250))")  # the page's next drawing (at most ~10 a second)
    result: dict[str, Any] = await page.js(LAYOUT_JS)
    if shot and os.environ.get("LIVEMON_LAYOUT_PNG"):
        await page.call("Emulation.setDefaultBackgroundColorOverride", color={"r": 46, "g": 64, "b": 54, "a": 1})
        png = base64.b64decode((await page.call("Page.captureScreenshot", format="png"))["data"])
        Path(os.environ["LIVEMON_LAYOUT_PNG"], shot).write_bytes(png)
    return result


@pytest.mark.parametrize("layout", ["bars", "board"])
async def test_overlay_game_layouts_hold_long_names(page: Page, layout: str) -> None:
    hub = Hub()
    boards(hub)
    players(hub)
    async with WebServer(hub, WebConfig(port=0)) as srv:
        for gid in ("g1", "g2", "g3", "g4"):  # a 35-character name, a mate on the board, no evaluation, no clock
            await page.open(f"{srv.url}/overlay?game={gid}&layout={layout}",
                            "document.getElementById('white-perf').textContent !== '—'")
            got = await measured(page, f"{layout}-{gid}.png")
            assert got["problems"] == [], (gid, got["problems"])
            assert got["texts"] >= 20
        await page.open(f"{srv.url}/overlay?game=g1&layout={layout}", "document.getElementById('white-perf').textContent !== '—'")
        t = "document.getElementById(%r).textContent"
        # a figure read from fewer moves than were played says so, and still fits (the fields as a monitor sends them)
        await page.js("(() => { const b = window.livemon.boards.get('g1'); b.moves_read ="
                      " {white: {played: 43, judged: 40, accuracy_read: 28}, black: {played: 42, judged: 42, accuracy_read: 42}};"
                      " window.livemon.onchange('test'); })()")
        await page.wait_for(t % "white-reads", "28 of 43 moves")
        got = await measured(page, f"{layout}-reads.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js(t % "white-name") == LONG  # whole: its font shrinks, the name is never cut
        size = await page.js("parseFloat(getComputedStyle(document.getElementById('white-name')).fontSize)")
        assert 18 <= size < (34 if layout == "bars" else 28)
        assert await page.js(t % "white-score") == "10½/13"
        assert await page.js(t % "white-range") == "2627–2865+"  # cut at the fitted range: marked, never an arrow
        assert await page.js(t % "black-acc") == "—"
        await page.open(f"{srv.url}/overlay?game=g2&layout={layout}", "document.getElementById('result').textContent !== ''")
        assert await page.js(t % "result") == "0-1" and await page.js(t % "eval-text") == "#"  # mate on the board
        await page.open(f"{srv.url}/overlay?game=g5&layout={layout}", "document.getElementById('result').textContent !== ''")
        assert await page.js(t % "result") == "½-½"
    assert page.errors == []


async def test_overlay_leaderboard_fits_its_rows_and_says_how_many_more(page: Page) -> None:
    hub = Hub()
    boards(hub)
    players(hub)
    async with WebServer(hub, WebConfig(port=0)) as srv:
        for rows, page_no, shown, more in ((8, 1, 8, "+4 more"), (12, 1, 12, ""), (5, 2, 5, "5 above · +2 more"), (5, 3, 2, "10 above")):
            await page.open(f"{srv.url}/overlay?layout=leaderboard&rows={rows}&page={page_no}",
                            f"document.querySelectorAll('#lb-rows tr').length === {shown}")
            got = await measured(page, f"leaderboard-{rows}-{page_no}.png")
            assert got["problems"] == [], (rows, got["problems"])
            assert await page.js("document.getElementById('lb-more').textContent") == more
            ranks = await page.js("[...document.querySelectorAll('#lb-rows td.rank')].map((td) => Number(td.textContent))")
            assert ranks == list(range((page_no - 1) * rows + 1, (page_no - 1) * rows + 1 + shown))
        # the event accuracy of a player read from fewer moves than played says so, and still fits
        inject = ("(() => { const p = window.livemon.players.get(%s); p.moves_read = {played: 41, judged: 41, accuracy_read: 28};"
                  " window.livemon.onchange('test'); })()" % json.dumps(LONG))
        await page.open(f"{srv.url}/overlay?layout=leaderboard", "document.querySelectorAll('#lb-rows tr').length === 8")
        await page.js(inject)
        await page.wait_for("document.querySelector('#lb-rows tr').cells[7].textContent", "94.128 of 41 moves")
        got = await measured(page, "leaderboard-reads.png")
        assert got["problems"] == [], got["problems"]
        heads = await page.js("[...document.querySelectorAll('#leaderboard th')].map((th) => th.textContent)")
        assert len(heads) <= 8 and "±" not in heads  # the columns a lower third carries
        box = await page.js("(() => { const r = document.getElementById('leaderboard').getBoundingClientRect();"
                            " return [r.top, r.bottom]; })()")
        assert box[1] <= 1080 - 30 and box[0] >= 1080 / 3  # in the lower part of the frame, above its safe margin
    assert page.errors == []


async def test_numbers_as_the_screens_write_them(page: Page) -> None:
    async with WebServer(Hub(), WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/overlay", "window.livemon")
        got = await page.js("""import('/static/livemon.js').then((L) => [
            L.fmtEval(-4), L.fmtEval(4), L.fmtEval(-5), L.fmtEval(3900, 3), L.fmtEval(-3900, -2), L.fmtEval(-3900),
            L.fmtEval(3900, null, true), L.fmtEval(null), L.fmtResult("1/2-1/2"), L.fmtResult("1-0"), L.fmtResult("*"),
            L.fmtRange([2627, 2865], "high"), L.fmtRange([1253, 1800], "low"), L.fmtRange([2000, 2100]),
            L.fmtSigned(0.04), L.fmtSigned(-3), L.flagOf("NOR"), L.flagOf("ENG").length > 2, L.flagOf("FID"),
            L.roundBoard({round: "5.12"}), L.roundBoard({round: "3"}), L.eventOf({event: "Round 1: A - B"}),
            L.reads({moves_read: {white: 28}, moves_played: {white: 41}}, "white"),
            L.reads({moves_read: 41, moves_played: 41}, "white"),
            L.reads({moves_read: {white: {played: 41, judged: 30, accuracy_read: 28}}}, "white"),
            L.reads({moves_read: {white: {played: 41, judged: 30, accuracy_read: 28}}}, "white", "judged"),
            L.reads({moves_read: {played: 41, judged: 41, accuracy_read: 41}}),
            L.reads({moves_read: {played: 41, judged: 39, accuracy_read: 38}})])""")
        assert got == ["0.0", "0.0", "−0.1", "#3", "#-2", "−#", "#", "—", "½-½", "1-0", "", "2627–2865+", "≤1253–1800",
                       "2000–2100", "0.0", "−3.0", "\U0001F1F3\U0001F1F4", True, "", {"round": "5", "board": 12},
                       {"round": "3", "board": None}, "", "28 of 41 moves", "", "28 of 41 moves", "30 of 41 moves", "",
                       "38 of 41 moves"]
    assert page.errors == []



async def test_win_chart_draws_its_guides(page: Page) -> None:
    """The win% chart's axes as guides: 25% and 75% across, one line every ten moves (a 40-move game: three), the 50%
    line dashed; a gap where a ply has no evaluation; the class dots on the curve."""
    async with WebServer(Hub(), WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/overlay", "window.livemon")
        got = await page.js("""import('/static/livemon.js').then((L) => {
            const el = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
            el.classList.add('chart');
            document.body.appendChild(el);
            const wins = Array.from({length: 81}, (_, i) => (i === 40 ? null : 50 + 30 * Math.sin(i / 9)));
            const classes = wins.map((_, i) => (i === 12 ? 'blunder' : null));
            L.winChart(el, wins, classes, {width: 800, height: 100});
            const ys = [...el.querySelectorAll('line.grid')].filter((l) => l.getAttribute('x1') === '0')
                .map((l) => Number(l.getAttribute('y1')));
            const xs = [...el.querySelectorAll('line.grid')].filter((l) => l.getAttribute('x1') !== '0')
                .map((l) => Number(l.getAttribute('x1')));
            const r = [ys, xs, el.dataset.guides, el.dataset.points, el.querySelectorAll('path.line').length,
                       el.querySelectorAll('circle.dot.blunder').length,
                       getComputedStyle(el.querySelector('line.grid')).stroke];
            el.remove();
            return r;
        })""")
    ys, xs, guides, points, lines, dots, stroke = got
    assert ys == [75, 25]  # 25% (low) and 75% (high) on a 100-high chart
    assert xs == [200, 400, 600]  # moves 10, 20, 30 of 40 on an 800-wide chart
    assert guides == "5" and points == "80" and lines == 2 and dots == 1  # the unevaluated ply splits the curve
    assert stroke != "none"  # the guides are styled by the page, not invisible
    assert page.errors == []


def two_events(hub: Hub) -> None:
    """18 boards of round 13 of the open (5 finished), round 12's boards of it all finished, 4 boards of another event."""
    boards(hub, 6)
    for i in range(6, 18):
        hub.publish(BoardState(f"g{i + 1}", NAMES[(2 * i) % 12] + " Jr", NAMES[(2 * i + 1) % 12] + " Sr", 2300, 2310, FEN, 4,
                               "Nc6", "b8c6", 12, evals(4), 600.0, 601.0, event=EVENT, round=f"13.{i + 1}",
                               white_fed=FEDS[i % 12], black_fed=FEDS[(i + 5) % 12], moves=("e4", "e5", "Nf3", "Nc6"),
                               moves_uci=("e2e4", "e7e5", "g1f3", "b8c6")))
    for i in range(3):
        hub.publish(BoardState(f"old{i + 1}", NAMES[i], NAMES[i + 3], 2300, 2310, FEN, 4, "Nc6", "b8c6", 12, evals(4),
                               result="1-0", event=EVENT, round=f"12.{i + 1}"))
    for i in range(4):
        hub.publish(BoardState(f"w{i + 1}", f"Women Player {i}, Anna", f"Women Player {i + 4}, Maria", 2200, 2210, FEN, 4,
                               "Nc6", "b8c6", 5, evals(4), event="Women's Championship 2025", round=f"4.{i + 1}"))
    players(hub)
    hub.publish(Moment("g1", 31, "Qxb7", ("blunder",), "blunder", 55.0, 20.0, "Rd1", LONG, NAMES[1], EVENT, "13.1"))
    hub.publish(Moment("g3", 40, "Rxe8+", ("lead_change",), None, 45.0, 62.5, None, NAMES[4], NAMES[5], EVENT, "13.3"))


async def test_overlay_leaderboard_of_one_event_when_several_are_followed(page: Page) -> None:
    hub = Hub()
    two_events(hub)
    hub.publish(PlayerEstimate("Women Player 0, Anna", 2200, 4, -5.0, 0.4, -60.0, None,
                               results={"score": 3.5, "games": 4, "tpr": 2390.0, "rating_change": 9.1}))
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/overlay?layout=leaderboard", "document.querySelectorAll('#lb-rows tr').length === 8")
        assert await page.js("document.getElementById('lb-event').textContent") == EVENT + " · Round 13 live"
        names = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => r.dataset.name)")
        assert "Women Player 0, Anna" not in names and names[0] == LONG
        women = "Women's Championship 2025"
        await page.open(f"{srv.url}/overlay?layout=leaderboard&event={quote(women)}",
                        "document.querySelectorAll('#lb-rows tr').length === 1")
        assert await page.js("document.getElementById('lb-event').textContent") == women + " · Round 4 live"
        assert await page.js("document.getElementById('lb-more').textContent") == ""
        got = await measured(page)
        assert got["problems"] == [], got["problems"]
    assert page.errors == []


async def test_commentator_page_holds_a_real_round(page: Page) -> None:
    hub = Hub()
    two_events(hub)
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/commentator", "document.querySelectorAll('#boards .card').length === 18")
        got = await measured(page, "commentator-18.png")
        assert got["problems"] == [], got["problems"]
        # one event shown (the one with the most live boards), its live round, its boards by board number
        assert await page.js("[...document.getElementById('event-select').options].map((o) => o.value)") == \
            ["Women's Championship 2025", EVENT]
        assert await page.js("document.getElementById('event-select').value") == EVENT
        assert await page.js("document.getElementById('round-select').value") == "13"
        assert await page.js("[...document.getElementById('round-select').options].map((o) => o.value)") == ["13", "12"]
        ids = await page.js("[...document.querySelectorAll('#boards .card')].map((c) => c.dataset.game)")
        assert ids == [f"g{i}" for i in range(1, 19)]  # board 2 before board 10 (not "g10" before "g2")
        lb = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => r.dataset.name)")
        assert "Women Player 0, Anna" not in lb and LONG in lb
        assert "rating change" in await page.js("document.querySelector('#lb thead').textContent")
        await page.js("(() => { const p = window.livemon.players.get(%s); p.moves_read = {played: 41, judged: 41, accuracy_read: 28};"
                      " window.livemon.onchange('test'); })()" % json.dumps(LONG))
        await page.wait_for("document.querySelector('#lb-rows td.acc').textContent", "94.128 of 41 moves")
        got = await measured(page)
        assert got["problems"] == [], got["problems"]
        moments = await page.js("[...document.querySelectorAll('#moment-list li')].map((li) => li.textContent)")
        assert len(moments) == 2 and any("lead change" in m for m in moments) and any(LONG in m for m in moments)
        evs = await page.js("[...document.querySelectorAll('#boards .card .ev')].map((e) => e.textContent)")
        assert "−0.0" not in evs and "#" in evs and "+#" not in evs
        res = await page.js("[...document.querySelectorAll('#boards .card .res')].map((e) => e.textContent)")
        assert "½-½" in res and "1/2-1/2" not in res
        # the other event: its own boards and leaderboard
        await page.js("(() => { const s = document.getElementById('event-select'); s.value = \"Women's Championship 2025\";"
                      " s.dispatchEvent(new Event('change')); })()")
        await page.wait_for("document.querySelectorAll('#boards .card').length", 4)
        await page.wait_for("document.querySelectorAll('#lb-rows tr[data-name]').length", 0)  # no estimates published there
        got = await measured(page, "commentator-women.png")
        assert got["problems"] == [], got["problems"]
        # round 12: all finished
        await page.open(f"{srv.url}/commentator#round=12", "document.querySelectorAll('#boards .card').length === 3")
    assert page.errors == []


async def test_commentator_game_opened_mid_game_lists_every_move(page: Page) -> None:
    hub = Hub()
    two_events(hub)
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/commentator#game=g1", "document.querySelectorAll('#d-moves .mv').length === 85")
        got = await measured(page, "commentator-game.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js("document.querySelectorAll('#d-moves .unseen').length") == 0
        assert await page.js("document.querySelector('#d-moves .mv').textContent") == "e4"
        assert await page.js("[...document.querySelectorAll('#d-yaxis span')].map((s) => s.textContent)") == ["100%", "50%", "0%"]
        assert len(await page.js("[...document.querySelectorAll('#d-xaxis span')].map((s) => s.textContent)")) >= 4
        assert await page.js("document.getElementById('d-white-reads')") is None  # no moves_read sent: nothing said
        await page.js("(() => { const b = window.livemon.boards.get('g1'); b.moves_read ="
                      " {white: {played: 43, judged: 40, accuracy_read: 28}, black: {played: 42, judged: 42, accuracy_read: 42}};"
                      " window.livemon.onchange('test'); })()")
        await page.wait_for("(document.getElementById('d-white-reads') || {}).textContent", "· 28 of 43 moves")
        got = await measured(page, "commentator-game-reads.png")
        assert got["problems"] == [], got["problems"]
        # stepping: the board is drawn at that ply, the move marked; End follows the game again
        await page.open(f"{srv.url}/commentator#game=g18", "document.querySelectorAll('#d-moves .mv').length === 4")
        g = await page.js("window.livemon.boards.get('g18').moves_uci")  # sent with the game (game:<id>), not on games
        assert g == ["e2e4", "e7e5", "g1f3", "b8c6"]
        for key, ply in (("ArrowLeft", 3), ("ArrowLeft", 2), ("Home", 0), ("ArrowRight", 1)):
            await page.call("Input.dispatchKeyEvent", type="keyDown", key=key, code=key)
            await page.wait_for("document.getElementById('d-board').dataset.ply", str(ply))
        fen = await page.js("document.getElementById('d-board').dataset.fen")
        assert fen.split(" ")[0] == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
        assert await page.js("document.querySelector('#d-moves .mv.cur').dataset.ply") == "1"
        await page.call("Input.dispatchKeyEvent", type="keyDown", key="End", code="End")
        await page.wait_for("document.getElementById('d-board').dataset.ply", "4")
        assert (await page.js("document.getElementById('d-board').dataset.fen")).split(" ")[0] == FEN.split(" ")[0]
    assert page.errors == []
