"""The overlay page in a real headless Chromium, read through the Chrome DevTools Protocol.

Chromium is started with ``--remote-debugging-port=0``; the test talks CDP over
a WebSocket (the ``websockets`` client), reads the page's DOM with
``Runtime.evaluate`` after publishing to the hub, and saves a screenshot.
The pictures in docs/ come from tests/test_web_pages.py (a real ``livemon serve`` on a replayed event).
"""

from __future__ import annotations

import asyncio
import contextlib
import base64
import itertools
import json
import struct
import time
from pathlib import Path
from typing import Any, AsyncIterator

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from livemon.config import WebConfig
from livemon.faces.hub import Hub
from livemon.rating.performance import Performance
from livemon.live.messages import BoardState, PlayerEstimate
from livemon.faces.web import WebServer
from tests.conftest import CHROMIUM_FLAGS, chromium_path, chromium_process  # noqa: F401 - other tests import them from here

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


class CDP:
    """Just enough of the Chrome DevTools Protocol: numbered calls on one page target."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        rid = next(self.ids)
        await self.ws.send(json.dumps({"id": rid, "method": method, "params": params}))
        while True:
            reply = json.loads(await asyncio.wait_for(self.ws.recv(), 20))
            if reply.get("id") == rid:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _event(self, reply: dict[str, Any]) -> None:
        """An event (a message without the call's id) that came while waiting for an answer: ignored here."""

    async def js(self, expression: str) -> Any:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    async def navigate(self, url: str) -> None:
        """Go to ``url`` and return once the new document is loaded: the old one is marked first, so nothing read
        afterwards can be read from the page being left (it stays on screen until the new one commits). A new
        ``#fragment`` stays in the document and returns at once."""
        await self.js("window.__livemon_left = true")
        if "loaderId" not in await self.call("Page.navigate", url=url):  # within the document (a new #fragment)
            await self.js("delete window.__livemon_left")
            return
        t0 = time.monotonic()
        while time.monotonic() - t0 < 30:
            with contextlib.suppress(RuntimeError):  # the old document's context gone mid-call
                if await self.js("!window.__livemon_left && document.readyState === 'complete'") is True:
                    return
            await asyncio.sleep(0.02)
        raise AssertionError(f"{url} not loaded within 30 s")

    async def wait_for(self, expression: str, expected: Any, timeout: float = 10.0) -> float:
        """Poll ``expression`` until it equals ``expected``; returns the seconds it took."""
        t0 = time.monotonic()
        value = None
        while time.monotonic() - t0 < timeout:
            value = await self.js(expression)
            if value == expected:
                return time.monotonic() - t0
            await asyncio.sleep(0.02)
        raise AssertionError(f"{expression} = {value!r}, expected {expected!r} within {timeout} s")


@contextlib.asynccontextmanager
async def devtools_page(profile: Path) -> AsyncIterator[str]:
    """A headless Chromium of its own with its own ``profile`` folder: the DevTools WebSocket URL of its page.
    (The ``browser_tab`` fixture of tests/conftest.py shares one Chromium between the tests of a process.)"""
    with chromium_process(profile) as port:
        async with httpx.AsyncClient() as http:
            targets = (await http.get(f"http://127.0.0.1:{port}/json/list")).json()
        yield next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"]


@pytest.fixture
async def browser(browser_tab: str) -> AsyncIterator[CDP]:
    async with connect(browser_tab, max_size=None) as ws:
        yield CDP(ws)


def text(element_id: str) -> str:
    return f"document.getElementById({element_id!r}).textContent"


def board(game_id: str, white: str, black: str, ply: int, cp: int | None) -> BoardState:
    return BoardState(game_id, white, black, 2751, 2688, FEN, ply, "Nc6", "b8c6", cp, event="Tata Steel", round="5")


def estimate(name: str, elo: float, lo: float, hi: float) -> PlayerEstimate:
    """The headline performance is shown; Ferreira's perceived Elo (a diagnostic, set far off here) is not."""
    perf = Performance(elo, (lo, hi), 180, "Stockfish 15.1 depth=12 multipv=4", "FIDE classical, 201 players, Elo 1409-2719")
    return PlayerEstimate(name, 2700, 24, -9.5, 0.3, -150.0, elo - 700, perceived_elo_range=(lo - 700, hi - 700),
                          performance=perf.to_dict())


async def test_overlay_shows_published_updates(browser: CDP, tmp_path: Path) -> None:
    hub = Hub()
    hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 4, 20))
    hub.publish(board("g2", "Giri, Anish", "So, Wesley", 4, 35))
    for name, elo in [("Carlsen, Magnus", 2790.0), ("Nepomniachtchi, Ian", 2701.0),
                      ("Giri, Anish", 2712.3), ("So, Wesley", 2655.0)]:
        hub.publish(estimate(name, elo, elo - 80, elo + 80))
    srv = WebServer(hub, WebConfig(port=0))
    await srv.start()
    try:
        await browser.call("Page.enable")
        await browser.call("Emulation.setDeviceMetricsOverride", width=1920, height=1080, deviceScaleFactor=1, mobile=False)
        await browser.navigate(f"{srv.url}/overlay?game=g2")
        await browser.wait_for(text("white-name"), "Giri, Anish")
        await browser.wait_for(text("white-perf"), "2712")  # its players' channels asked for once the board is known
        assert await browser.js("window.livemon.subscribed") == ["game:g2", "player:Giri, Anish", "player:So, Wesley"]
        assert await browser.js(text("white-range")) == "2632–2792"
        assert await browser.js(text("black-name")) == "So, Wesley"
        assert await browser.js(text("eval-text")) == "+0.3"
        assert await browser.js("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
        assert await browser.js("getComputedStyle(document.documentElement).backgroundColor") == "rgba(0, 0, 0, 0)"

        # A new estimate and a new board position: the page shows the new numbers.
        hub.publish(estimate("Giri, Anish", 2801.4, 2750.2, 2852.6))
        g2_seq = hub.publish(board("g2", "Giri, Anish", "So, Wesley", 5, -250))
        hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 9, 400))  # another board: ignored
        took = await browser.wait_for(text("white-perf"), "2801")
        assert took < 2.0
        await browser.wait_for(text("eval-text"), "−2.5")
        assert await browser.js(text("white-range")) == "2750–2853"
        assert await browser.js(text("last-move")) == "3. Nc6"
        fill = await browser.js("parseFloat(document.getElementById('eval-fill').style.width)")
        assert 25 < fill < 35  # Black is better: White's share of the bar (win%, lichess's curve) well under half
        assert await browser.js("Number(document.body.dataset.seq)") == g2_seq == hub.seq - 1  # g1 never came
        hub.publish(estimate("Carlsen, Magnus", 2500.0, 2400.0, 2600.0))  # another board's player: never sent
        later = hub.publish(board("g2", "Giri, Anish", "So, Wesley", 5, -250))  # frames come in seq order
        await browser.wait_for("Number(document.body.dataset.seq)", later)
        assert await browser.js("[...window.livemon.players.keys()].sort()") == ["Giri, Anish", "So, Wesley"]

        await browser.call("Emulation.setDefaultBackgroundColorOverride", color={"r": 0, "g": 0, "b": 0, "a": 0})
        png = base64.b64decode((await browser.call("Page.captureScreenshot", format="png"))["data"])
        (tmp_path / "overlay.png").write_bytes(png)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
        width, height, depth, color_type = struct.unpack(">IIBB", png[16:26])
        assert (width, height) == (1920, 1080) and color_type == 6  # RGBA: the background is see-through
        # The server goes away and comes back on the same port: the page reconnects by itself.
        port = srv.port
        await srv.close()
        await browser.wait_for("window.livemon.connected", False)
        hub.publish(estimate("Giri, Anish", 2650.0, 2600.0, 2700.0))
        srv = WebServer(hub, WebConfig(port=port))
        await srv.start()
        assert await browser.wait_for(text("white-perf"), "2650", timeout=15) < 5.0

        # Without ?game the page follows the first board (by game id), not the latest updated (g2).
        await browser.navigate(f"{srv.url}/overlay")
        await browser.wait_for(text("white-name"), "Carlsen, Magnus")
        assert await browser.js(text("eval-text")) == "+4.0"
        await browser.wait_for(text("white-perf"), "2500")  # the board it follows names the players it reads
    finally:
        await srv.close()


async def test_overlay_renders_a_batched_burst(browser: CDP) -> None:
    """The page asks for ``deltas`` frames: a burst published at once arrives in few frames, and the page
    shows the burst's final state (the boards and estimates superseded in between were conflated)."""
    hub = Hub()
    hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 4, 20))
    srv = WebServer(hub, WebConfig(port=0))
    await srv.start()
    try:
        await browser.navigate(f"{srv.url}/overlay?game=g1")
        await browser.wait_for(text("white-name"), "Carlsen, Magnus")
        assert await browser.js("window.livemon.batches") == 0
        for i in range(60):  # one loop turn: 120 messages queued before the page's sender runs
            hub.publish(estimate("Carlsen, Magnus", 2700.0 + i, 2650.0 + i, 2750.0 + i))
            hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 5 + i, 10 * i))
        await browser.wait_for("Number(document.body.dataset.seq)", hub.seq)
        assert await browser.js(text("white-perf")) == "2759"
        assert await browser.js(text("eval-text")) == "+5.9"
        batches = await browser.js("window.livemon.batches")
        assert 1 <= batches < 10, batches
        assert srv.batch_stats["frames"] == batches and srv.batch_stats["messages"] == 120
        assert srv.batch_stats["conflated"] >= 100  # superseded estimates and boards never went out
        # it asked for patches: a move then an evaluation of the board, each what changed, merged into the board shown
        patches = await browser.js("window.livemon.patches")
        assert patches >= 1, patches  # the burst's last board and estimate: patches on those before it
        hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 65, 0))
        hub.publish(board("g1", "Carlsen, Magnus", "Nepomniachtchi, Ian", 65, -120))
        await browser.wait_for("Number(document.body.dataset.seq)", hub.seq)
        assert await browser.js("window.livemon.patches") >= patches + 1
        assert await browser.js(text("eval-text")) == "−1.2"
        assert await browser.js(text("white-name")) == "Carlsen, Magnus"  # a field no patch carried: still held
    finally:
        await srv.close()
