"""Who will win, on the broadcast pages: the commentator's forecast panel and the overlay's ``layout=forecast`` lower
third, measured in a real headless Chromium at 1920×1080 (tests/layout.py's ``LAYOUT_JS``: every text inside its
panel and the frame, none cut, none over another) with the longest real names of tests/data, a 14-player field and
a forecast that is an error; and the panel fed the real forecast job's messages through the real server.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from livemon.app.forecast_live import LiveForecast
from livemon.config import EventConfig, WebConfig
from livemon.faces.hub import Hub
from livemon.faces.web import WebServer
from livemon.live.core import LiveCore
from livemon.live.messages import BoardState, EventForecast
from tests.conftest import real
from tests.test_forecast_live import _feed
from tests.test_web_layout import EVENT, FEN, LONG, NAMES, evals, measured, two_events
from tests import test_web_pages
from tests.test_web_pages import Page

page = test_web_pages.page  # the 1920x1080 tab: one fixture, defined with the pages' tests

pytestmark = [pytest.mark.slow]

FIELD = NAMES + ["Matos Espino, Carlos Silverio", "Sanchez Gonzalez, Diego 2012"]  # 14 real names, the longest 35
ERROR = "the number of rounds of this swiss is not known (12 seen): set [event] rounds in the monitor's config"  # the job's line


def field_forecast(chances: list[float], start: list[float | None] | None = None, error: str | None = None,
                   event: str = EVENT) -> EventForecast:
    """A forecast of the 14-player field after 12 of 13 rounds with these chances of first (most likely first)."""
    rows = tuple({
        "name": name, "score": 9.5 - i / 2, "p_first": p, "p_first_round_start": (start or chances)[i],
        "p_winner": p, "p_top3": min(1.0, 3 * p), "expected_score": 10.24 - i / 2, "max_score": 10.5 - i / 2,
        "needs": 10.0 - i / 2 if p >= 0.005 else None,
    } for i, (name, p) in enumerate(zip(FIELD, chances)))
    notes = ("format guessed: rr (14 players, 12 rounds seen); [event] format in the monitor's config sets it",
             "colours of the games to come: from the Berger tables (pairing numbers read from round 1's boards)")
    if error:  # as the live job sends it: nothing simulated, no players
        return EventForecast(event, "swiss", None, 0, 13, 0, 0, (), (), error)
    return EventForecast(event, "rr", 13, 1, 13, 20000, 4, rows, notes, error)


# nine contenders (one under 1%, one nearly certain of nothing), five out of the running
SPREAD = [0.41, 0.22, 0.12, 0.09, 0.07, 0.05, 0.03, 0.006, 0.004, 0.0, 0.0, 0.0, 0.0, 0.0]
SPREAD_START = [0.29, 0.27, 0.12, 0.10, 0.07, 0.07, 0.04, 0.02, 0.01, 0.01, 0.0, 0.0, 0.0, 0.0]
EVEN = [0.16, 0.12, 0.11, 0.09, 0.08, 0.07, 0.07, 0.06, 0.06, 0.05, 0.05, 0.04, 0.03, 0.01]  # 14 contenders



T = "document.getElementById(%r).textContent"
CELLS = "[...document.querySelectorAll('%s tr')].map((r) => [...r.cells].map((c) => c.textContent))"


async def test_commentator_forecast_panel_holds_fourteen_long_names_and_an_error(page: Page) -> None:
    hub = Hub()
    two_events(hub)
    async with WebServer(hub, WebConfig(port=0)) as srv:
        # before any forecast: no panel (the page is laid out as without it)
        await page.open(f"{srv.url}/commentator", "document.querySelectorAll('#boards .card').length === 18")
        assert await page.js("document.getElementById('forecast').hidden") is True
        hub.publish(field_forecast(SPREAD, SPREAD_START))
        await page.wait_for("document.querySelectorAll('#fc-rows tr').length", 8)
        got = await measured(page, "commentator-forecast.png")
        assert got["problems"] == [], got["problems"]
        rows = await page.js(CELLS % "#fc-rows")
        assert [r[1] for r in rows][:2] == [LONG, NAMES[1]]  # most likely first, the 35-character name whole
        assert rows[0][2:] == ["9½", "41%", "+12", "100%", "10.2", "10"]
        assert rows[1][3:5] == ["22%", "−5"] and rows[2][4] == "±0"
        assert rows[7][3:5] == ["1%", "−1"]  # 0.6%: shown as 1%, a contender
        assert await page.js(T % "fc-others") == "6 others: under 1% each, <1% together"
        assert await page.js(T % "fc-line") == "round 13 · 1 round left · 4 games in progress · 20,000 simulations"
        assert "format guessed" in await page.js(T % "fc-notes")
        assert await page.js("document.getElementById('forecast').dataset.event") == EVENT
        # 14 contenders: the longest table, scrolled in its panel
        hub.publish(field_forecast(EVEN))
        await page.wait_for("document.querySelectorAll('#fc-rows tr').length", 14)
        got = await measured(page, "commentator-forecast-14.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js(T % "fc-others") == ""
        assert await page.js("[...document.querySelectorAll('#fc-rows td.chg')].every((td) => td.textContent === '±0')")
        # the forecast is an error: said plainly, in one line, no table
        hub.publish(field_forecast([], error=ERROR))
        await page.wait_for(T % "fc-error", ERROR)
        got = await measured(page, "commentator-forecast-error.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js("document.getElementById('fc-table').hidden") is True
        assert await page.js(T % "fc-line") == "round 13" and await page.js(T % "fc-notes") == ""
        # another event shown: not this event's forecast
        await page.js("(() => { const s = document.getElementById('event-select'); s.value = \"Women's Championship 2025\";"
                      " s.dispatchEvent(new Event('change')); })()")
        await page.wait_for("document.getElementById('forecast').hidden", True)
    assert page.errors == []


async def test_overlay_forecast_lower_third_fits_its_rows_and_says_how_many_more(page: Page) -> None:
    hub = Hub()
    two_events(hub)
    hub.publish(field_forecast(SPREAD, SPREAD_START))
    hub.publish(field_forecast([0.7, 0.3] + [0.0] * 12, event="Women's Championship 2025"))
    async with WebServer(hub, WebConfig(port=0)) as srv:
        for rows, shown, more in ((5, 5, "+9 more · 9% together"), (None, 5, "+9 more · 9% together"),
                                  (12, 8, "+6 more · <1% together"), (1, 1, "+13 more · 59% together")):
            arg = "" if rows is None else f"&rows={rows}"
            await page.open(f"{srv.url}/overlay?layout=forecast{arg}", f"document.querySelectorAll('#fc-rows tr').length === {shown}")
            got = await measured(page, f"forecast-{rows}.png")
            assert got["problems"] == [], (rows, got["problems"])
            assert await page.js(T % "fc-more") == more
        names = await page.js("[...document.querySelectorAll('#fc-rows tr')].map((r) => r.dataset.name)")
        assert names == [LONG]
        assert (await page.js(T % "fc-event")).startswith(EVENT + " · round 13")  # the event with the most boards
        # every player a contender: 12 rows, the rest said
        hub.publish(field_forecast(EVEN))
        await page.open(f"{srv.url}/overlay?layout=forecast&rows=12", "document.querySelectorAll('#fc-rows tr').length === 12")
        got = await measured(page, "forecast-12-even.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js(T % "fc-more") == "+2 more · 4% together"
        rows = await page.js(CELLS % "#fc-rows")
        assert rows[0][1:3] == [LONG, "9½"] and rows[0][4:] == ["16%", "±0"]
        box = await page.js("(() => { const r = document.getElementById('forecast').getBoundingClientRect();"
                            " return [r.top, r.bottom]; })()")
        assert box[1] <= 1080 - 30 and box[0] >= 1080 / 3  # in the lower part of the frame, above its safe margin
        women = "Women's Championship 2025"
        await page.open(f"{srv.url}/overlay?layout=forecast&event={quote(women)}", "document.querySelectorAll('#fc-rows tr').length === 2")
        assert await page.js(T % "fc-more") == "+12 more · out of the running"
        # an error: one line in the lower third, no table
        hub.publish(field_forecast([], error=ERROR))
        await page.open(f"{srv.url}/overlay?layout=forecast", f"document.getElementById('fc-error').textContent === {ERROR!r}")
        got = await measured(page, "forecast-error.png")
        assert got["problems"] == [], got["problems"]
        assert await page.js("getComputedStyle(document.getElementById('fc-table')).display") == "none"
        assert await page.js(T % "fc-more") == ""
        assert await page.js(T % "fc-event") == EVENT + " · round 13"
    assert page.errors == []


def london_boards(hub: Hub, round_: int) -> None:
    for i, (w, b) in enumerate((("Carlsen,M", "Nakamura,H"), ("Kramnik,V", "Anand,V"))):
        hub.publish(BoardState(f"r{round_}b{i}", w, b, 2826, 2758, FEN, 4, "Nc6", "b8c6", 12, evals(4),
                               event="3rd London Chess Classic", round=f"{round_}.{i + 1}"))


def chance_cells(msg: EventForecast) -> list[list[str]]:
    """What the panel should show of a forecast, written here as the page's rules say (whole percent, "<1%",
    percentage points since the round began)."""
    def half_up(x: float) -> int:  # JavaScript's Math.round
        return math.floor(x + 0.5)

    def pct(p: float) -> str:
        r = half_up(p * 100)
        return "0%" if p <= 0 else "100%" if p >= 1 else "<1%" if r < 1 else ">99%" if r > 99 else f"{r}%"

    def pts(p: float, s: float) -> str:
        d = half_up((p - s) * 100)
        return f"+{d}" if d > 0 else f"−{-d}" if d < 0 else "±0"
    players = sorted(msg.players, key=lambda p: -p["p_first"])
    return [[p["name"], pct(p["p_first"]), pts(p["p_first"], p["p_first_round_start"])] for p in players if p["p_first"] >= 0.005]


async def test_the_panel_reads_the_live_forecast_through_the_server(page: Page) -> None:
    """The monitor's forecast job on London 2011 (round 6 in progress, then finished), its messages through the
    WebSocket server: the snapshot, then a patch of the same event."""
    from livemon.app.monitor import bundled_event

    hub = Hub()
    london_boards(hub, 6)
    job = LiveForecast(bundled_event(EventConfig()), hub, simulations=5000)  # the demo's field, titles listed
    during = LiveCore()
    _feed(during, real("london_chess_classic_2011_twic.pgn"), 6, live_round=6, cut_ply=20)
    (first,) = await job.once(during)
    assert first.error is None and first.round == 6 and first.games_in_progress > 0
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/commentator", "document.querySelectorAll('#fc-rows tr').length > 0")
        got = await measured(page)
        assert got["problems"] == [], got["problems"]
        cells = await page.js("[...document.querySelectorAll('#fc-rows tr')].map((r) => [r.dataset.name,"
                              " r.querySelector('.first b').textContent, r.querySelector('.chg').textContent])")
        assert cells == chance_cells(first)
        assert all(c[2] == "±0" for c in cells)  # the round's first forecast
        # every contender's title: a board's, or the listed player's where they have no board this round
        on_boards = await page.js("[...document.querySelectorAll('#boards .card')].length")
        badges = await page.js("[...document.querySelectorAll('#fc-rows tr')].map((r) => r.querySelector('.title')?.textContent)")
        assert on_boards < len(cells) and badges == ["GM"] * len(cells), (on_boards, badges)
        assert 1000 <= first.simulations <= 5000  # the job stops once the chances are known to a point
        assert f"{first.simulations:,} simulations" in await page.js(T % "fc-line")
        after = LiveCore()
        _feed(after, real("london_chess_classic_2011_twic.pgn"), 6)  # round 6 finished
        (second,) = await job.once(after)
        assert second.games_in_progress == 0 and second.round == 6
        want = chance_cells(second)
        assert any(c[2] != "±0" for c in want)  # the results moved the chances
        await page.wait_for("[...document.querySelectorAll('#fc-rows tr')].map((r) => [r.dataset.name,"
                            " r.querySelector('.first b').textContent, r.querySelector('.chg').textContent])", want)
        assert await page.js("window.livemon.patches") > 0  # the second came as a patch of the first
        got = await measured(page, "commentator-forecast-london.png")
        assert got["problems"] == [], got["problems"]
        # a round robin of nine: the panel as tall as its rows and notes, nothing to scroll to; the moments below
        assert await page.js("(() => { const f = document.getElementById('forecast'); return f.scrollHeight <= f.clientHeight + 1; })()")
        assert await page.js("document.getElementById('moments').getBoundingClientRect().height") >= 140
        await page.open(f"{srv.url}/overlay?layout=forecast&rows=3", "document.querySelectorAll('#fc-rows tr').length > 0")
        shown: Any = await page.js("[...document.querySelectorAll('#fc-rows tr')].map((r) => [r.dataset.name,"
                                   " r.querySelector('.pct').textContent, r.querySelector('.chg').textContent])")
        assert shown == want[:3]
        got = await measured(page)
        assert got["problems"] == [], got["problems"]
    assert page.errors == []


def test_names_here_are_real_and_long() -> None:
    text = "".join(Path(p).read_text(encoding="utf-8") for p in (real("broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"),
                                                              real("broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn")))
    assert all(f'"{n}"' in text for n in FIELD[:8] + FIELD[12:]) and len(LONG) >= 35 and len(set(FIELD)) == 14


async def test_the_standings_count_a_listed_player_who_rests_this_round(page: Page) -> None:
    """London 2011 after round 1: nine players listed (the demo's field), eight in its games, Short resting. The
    commentator's leaderboard and the overlay's lower third stand all nine, Short from the forecast (his listed
    title and rating, no game yet); the eight from their player messages."""
    import chess.pgn

    from livemon.app.monitor import bundled_event
    from livemon.live.messages import PlayerEstimate

    core = LiveCore()
    _feed(core, real("london_chess_classic_2011_twic.pgn"), 1)
    field = bundled_event(EventConfig())
    (msg,) = await LiveForecast(field, Hub(), simulations=1000).once(core)
    hub = Hub()
    hub.publish(msg)
    played: dict[str, float] = {}
    with real("london_chess_classic_2011_twic.pgn").open(encoding="utf-8") as pgn:
        while (h := chess.pgn.read_headers(pgn)) is not None:
            if h["Round"].split(".")[0] == "1":
                w = {"1-0": 1.0, "0-1": 0.0}.get(h["Result"], 0.5)
                played |= {h["White"]: w, h["Black"]: 1.0 - w}
                hub.publish(BoardState(f"r1b{len(played)}", h["White"], h["Black"], int(h["WhiteElo"]),
                                       int(h["BlackElo"]), FEN, 60, result=h["Result"], event=msg.event, round=h["Round"],
                                       white_title="GM", black_title="GM"))
    for name, score in played.items():
        hub.publish(PlayerEstimate(name, None, 30, None, None, None, None,
                                   results={"score": score, "games": 1, "tpr": None, "rating_change": None}))
    resting = next(p for p in field.players if p.name not in played)
    assert len(played) == 8 and resting.name == "Short,N" and resting.rating > 2600
    async with WebServer(hub, WebConfig(port=0)) as srv:
        await page.open(f"{srv.url}/commentator", "document.querySelectorAll('#lb-rows tr').length === 9")
        rows = await page.js(CELLS % "#lb-rows")
        short = next(r for r in rows if "Short,N" in r[1])
        assert short[1] == "GMShort,N" and short[2] == str(resting.rating) and short[3] == "—"  # no game yet
        assert rows.index(short) >= sum(1 for s in played.values() if s > 0)  # below every player who scored
        await page.open(f"{srv.url}/overlay?layout=leaderboard&rows=12",
                        "document.querySelectorAll('#lb-rows tr').length === 9")
        names = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => r.dataset.name)")
        assert sorted(names) == sorted([*played, "Short,N"])
        got = await measured(page)
        assert got["problems"] == [], got["problems"]
    assert page.errors == []


async def test_the_standings_of_an_event_in_football_scoring_are_its_points(page: Page) -> None:
    """London 2011 after two rounds, scored 3-1-0 (``[event] points``): the forecast says so on both pages, and the
    commentator's leaderboard ranks every player by the event's points (3 a win, 1 a draw), the game score in the
    cell's title; Short, resting in round 1, has his round-2 points too. Without a forecast (the live forecast off,
    or a Swiss whose rounds are unknown) the leaderboard ranks by the same points, which the core's player messages
    carry in their ``results``."""
    import chess.pgn

    from livemon.app.monitor import bundled_event
    from livemon.rating.points import Points

    core = LiveCore(points=Points.parse("3-1-0"))
    _feed(core, real("london_chess_classic_2011_twic.pgn"), 2)
    field = bundled_event(EventConfig(points="3-1-0"))
    (msg,) = await LiveForecast(field, Hub(), simulations=1000).once(core)
    assert msg.points == "3-1-0"
    games: dict[str, list[float]] = {}
    boards = []
    with real("london_chess_classic_2011_twic.pgn").open(encoding="utf-8") as pgn:
        while (h := chess.pgn.read_headers(pgn)) is not None:
            if int(h["Round"].split(".")[0]) <= 2:
                w = {"1-0": 1.0, "0-1": 0.0}.get(h["Result"], 0.5)
                games.setdefault(h["White"], []).append(w)
                games.setdefault(h["Black"], []).append(1.0 - w)
                boards.append(BoardState(f"r{h['Round']}", h["White"], h["Black"], int(h["WhiteElo"]),
                                         int(h["BlackElo"]), FEN, 60, result=h["Result"], event=msg.event,
                                         round=h["Round"]))
    points = {name: sum({1.0: 3, 0.5: 1, 0.0: 0}[g] for g in got) for name, got in games.items()}
    assert len(points) == 9 and len(set(points.values())) > 3
    players = [core.player_estimate(p) for p in core.estimator.players.values()]
    assert {p.name: (p.results or {}).get("points") for p in players} == points  # the core's own figure
    for forecast in (msg, None):
        hub = Hub()
        for m in ([forecast] if forecast else []) + boards + players:
            hub.publish(m)
        async with WebServer(hub, WebConfig(port=0)) as srv:
            await page.open(f"{srv.url}/commentator", "document.querySelectorAll('#lb-rows tr').length === 9")
            rows = await page.js(CELLS % "#lb-rows")
            titles = await page.js("[...document.querySelectorAll('#lb-rows tr')].map((r) => r.cells[3].title)")
            shown = [(r[1].removeprefix("GM"), r[3]) for r in rows]
            assert [s for _, s in shown] == [f"{points[n]} pts" for n, _ in shown]  # each player's points, "pts" after
            assert [points[n] for n, _ in shown] == sorted(points.values(), reverse=True)  # ranked by them
            assert all(t.endswith(f"/{len(games[n])} in games") for (n, _), t in zip(shown, titles))
            if forecast is None:
                assert await page.js("document.getElementById('forecast').hidden") is True
            else:
                assert "3-1-0 scoring" in await page.js(T % "fc-line")
                await page.open(f"{srv.url}/overlay?layout=forecast", "document.querySelectorAll('#fc-rows tr').length > 0")
                assert "3-1-0 scoring" in await page.js(T % "fc-event")
                got = await measured(page)
                assert got["problems"] == [], got["problems"]
            assert page.errors == []
            await page.navigate("about:blank")  # before this server stops: the page would try to reconnect to it
