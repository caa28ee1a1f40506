"""The commentary app: a Textual face on the monitor's :class:`~livemon.faces.hub.Hub`.

It takes a snapshot of the hub when mounted, then a worker consumes its
subscription queue in batches, folds the messages into a
:class:`~livemon.faces.tui.model.LiveState` and sets only the widgets they changed;
the worker yields to Textual between batches, so input never waits for a
burst of updates. A subscriber that fell behind (``overflowed``) starts again
from a fresh snapshot. Alerts are subscribed to, and shown, only when the app
is started with arbiter rights.

Run it in the monitor's event loop::

    app = CommentaryApp(monitor.hub, arbiter=False)
    await app.run_async()     # returns when the user quits
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import DataTable, Footer, Header

from livemon.faces.hub import ARBITER_CHANNELS, PUBLIC_CHANNELS, Hub, Subscription, key_of
from livemon.live.messages import Message
from livemon.live.screener import table_chance
from livemon.rating.points import FIDE_POINTS
from livemon.faces.tui.help import HelpScreen
from livemon.faces.tui.model import RESEARCH_SORTS, SORTS, Change, LiveState, alert_key
from livemon.faces.tui.widgets import (
    AlertsTable,
    ForecastTable,
    forecast_cells,
    ScreeningTable,
    BoardList,
    GamePanel,
    MomentsTable,
    PlayerHistogram,
    PlayersTable,
    StatusLine,
    alert_cells,
    screening_cells,
    board_cells,
    moment_cells,
    player_cells,
)

log = logging.getLogger(__name__)

#: messages folded in before the screen is updated and Textual gets the loop back
BATCH = 200


class CommentaryApp(App[None]):
    """Live boards, the selected game, players and their gains, monitor status (and alerts)."""

    CSS_PATH = "commentary.tcss"
    TITLE = "livemon"
    SUB_TITLE = "live commentary"

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "keys_help", "Help", key_display="?"),
        Binding("s", "cycle_sort", "Sort players"),
        Binding("b", "focus('boards-table')", "Boards"),
        Binding("p", "focus('players-table')", "Players"),
        Binding("r", "toggle_research", "Research panel"),
    ]
    """``r``: the research panel, the papers' figures beside the audience's (c̄ ± σ: a player's apparent skill in
    the E(c) model of how often a player picks each engine line; TTT μ ± σ: the rating from results over time;
    the E(c) performance and Ferreira's perceived Elo in the player pane)."""

    selected_game: reactive[str | None] = reactive(None)
    selected_player: reactive[str | None] = reactive(None)
    sort: reactive[str] = reactive("estimate")
    research: reactive[bool] = reactive(False, init=False)

    def __init__(self, hub: Hub, arbiter: bool = False, queue_size: int = 1000) -> None:
        super().__init__()
        self.hub = hub
        self.arbiter = arbiter
        self.queue_size = queue_size
        self.state = LiveState()
        self.channels: tuple[str, ...] = PUBLIC_CHANNELS + (ARBITER_CHANNELS if arbiter else ())
        self._sub: Subscription | None = None
        self._seq = 0
        self.resyncs = 0  # how often the hub dropped us and we started from a snapshot
        if arbiter:
            self.sub_title = "live commentary · arbiter"
            self.bind("a", "focus('alerts-table')", description="Alerts")
            self.bind("z", "focus('screening-table')", description="Screening")

    # -- layout ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="top"):
            with Vertical(id="left-top"):
                with Vertical(id="boards"):
                    yield BoardList(id="boards-table")
                with Vertical(id="moments"):
                    yield MomentsTable(id="moments-table")
                with Vertical(id="forecast"):
                    yield ForecastTable(id="forecast-table")
                if self.arbiter:
                    with Vertical(id="alerts"):
                        yield AlertsTable(id="alerts-table")
                    with Vertical(id="screening"):
                        yield ScreeningTable(id="screening-table")
            yield GamePanel(id="game")
        with Horizontal(id="bottom"):
            with Vertical(id="players"):
                yield PlayersTable(id="players-table")
            yield PlayerHistogram(id="histogram")
        yield StatusLine()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#boards").border_title = "Boards · live first"
        self.query_one("#game").border_title = "Game"
        self.query_one("#moments").border_title = "Moments · blunders (??), turning points, lead changes"
        self.query_one("#histogram").border_title = "Player · gains vs the engine's best (cp)"
        self.query_one("#forecast").display = False  # shown with the first forecast
        self._show_sort()
        self._sub = self.hub.subscribe(self.channels, self.queue_size)
        self._resync()
        self.query_one("#boards-table").focus()
        self._consume()

    def on_unmount(self) -> None:
        if self._sub is not None:
            self.hub.unsubscribe(self._sub)

    # -- the hub --------------------------------------------------------------------------

    def _resync(self) -> None:
        """Start again from the hub's snapshot: on mount, and after our queue overflowed."""
        assert self._sub is not None  # noqa: S101 - invariant: subscribed on mount
        self.hub.resubscribe(self._sub)
        messages: list[Message] = []
        for channel in self.channels:
            self._seq, msgs = self.hub.snapshot(channel)
            messages += msgs
        self.state.reset(messages)
        self._show_everything()

    @work(exclusive=True, group="hub")
    async def _consume(self) -> None:
        """Fold the subscription queue into the screen, a batch at a time."""
        sub = self._sub
        assert sub is not None  # noqa: S101 - invariant: subscribed on mount
        while True:
            if sub.overflowed:
                self.resyncs += 1
                self._resync()
                self.notify("The screen fell behind the monitor and was refreshed from a snapshot.", timeout=4)
            batch = [await sub.queue.get()]
            while len(batch) < BATCH and not sub.queue.empty():
                batch.append(sub.queue.get_nowait())
            changes = set(self._fold(batch))
            if changes:
                self._show(changes)
            await asyncio.sleep(0)  # let key presses in between two batches

    def _fold(self, batch: Iterable[tuple[int, Message]]) -> Iterable[Change]:
        for seq, msg in batch:
            if seq <= self._seq:
                continue  # already in the snapshot
            self._seq = seq
            try:
                change = self.state.apply(msg)
            except Exception:  # a bad message must not stop the screen
                log.exception("cannot show message %r", msg)
                continue
            if change is not None:
                yield change

    # -- showing ------------------------------------------------------------------------------

    def _show_everything(self) -> None:
        self._show({("board", ""), ("player", ""), ("status", ""), ("alert", ""), ("screening", ""), ("moment", ""),
                    ("forecast", "")})

    def _show(self, changes: set[Change]) -> None:
        """Update the widgets the changes touch; each widget skips what it already shows."""
        kinds = {kind for kind, _ in changes}
        if "board" in kinds:
            boards = self.query_one(BoardList)
            boards.show([(b.game_id, board_cells(b)) for b in self.state.boards_ordered()])
            self.selected_game = boards.selected_key
            self._show_game()
        if "player" in kinds or "ttt" in kinds:
            self._show_players()
        if "status" in kinds:
            self.query_one(StatusLine).status = self.state.status
        if "moment" in kinds:
            self.query_one(MomentsTable).show([(key_of(m), moment_cells(m)) for m in self.state.moments_ordered()])
        if "forecast" in kinds:
            self._show_forecast()
        if "alert" in kinds and self.arbiter:
            alerts = self.state.alerts_ordered()
            self.query_one(AlertsTable).show([(alert_key(a), alert_cells(a)) for a in alerts])
            self.query_one("#alerts").border_title = f"Fair-play alerts · arbiters only · {len(alerts)}"
        if "screening" in kinds and self.arbiter:
            rows = self.state.screening_ordered()
            self.query_one(ScreeningTable).show([(key, screening_cells(r)) for key, r in rows])
            chance = table_chance(r for _, r in rows)["line"]  # what honest players raise at this size
            self.query_one("#screening").border_title = (f"Screening · arbiters only · {len(rows)} player-events"
                                                         + (f" · {chance}" if chance else "") + " (z to focus)")

    def _show_forecast(self) -> None:
        f = self.state.forecast_shown()
        box = self.query_one("#forecast")
        if f is None:
            box.display = False
            return
        box.display = True
        self.query_one(ForecastTable).show([(str(p["name"]), forecast_cells(p)) for p in f.players])
        box.border_title = (f"Forecast · {f.event} · {f.error}" if f.error else
                            f"Forecast · {f.event} · round {f.round} · {f.rounds_left} left · "
                            f"{f.games_in_progress} in progress · {f.simulations:,} simulations"
                            + ("" if f.points == FIDE_POINTS.label else f" · {f.points} scoring"))

    def _show_game(self) -> None:
        key = self.selected_game
        self.query_one(GamePanel).board = self.state.boards.get(key) if key else None

    def _show_players(self) -> None:
        table = self.query_one(PlayersTable)
        table.show([(p.name, player_cells(p, self.research)) for p in self.state.players_sorted(self.sort)])
        self.selected_player = table.selected_key
        self._show_player()

    def _show_player(self) -> None:
        name = self.selected_player
        self.query_one(PlayerHistogram).player = self.state.player(name) if name else None

    def _show_sort(self) -> None:
        panel = "research panel on (r to close)" if self.research else "r: research panel"
        self.query_one("#players").border_title = f"Players · by {SORTS[self.sort]} (s to change) · {panel}"

    # -- selection and keys --------------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#boards-table")
    def _board_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.selected_game = event.row_key.value

    @on(DataTable.RowHighlighted, "#players-table")
    def _player_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.selected_player = event.row_key.value

    def watch_selected_game(self) -> None:
        self._show_game()

    def watch_selected_player(self) -> None:
        self._show_player()

    def watch_sort(self) -> None:
        self._show_sort()
        self._show_players()

    def action_cycle_sort(self) -> None:
        keys = [k for k in SORTS if self.research or k not in RESEARCH_SORTS]
        self.sort = keys[(keys.index(self.sort) + 1) % len(keys)] if self.sort in keys else keys[0]

    def action_toggle_research(self) -> None:
        self.research = not self.research

    def watch_research(self, on: bool) -> None:
        self.query_one(PlayersTable).show_research(on)
        self.query_one(PlayerHistogram).research = on
        if not on and self.sort in RESEARCH_SORTS:
            self.sort = "estimate"  # (its watcher shows the players)
        else:
            self._show_sort()
            self._show_players()

    def action_keys_help(self) -> None:
        keys = [(b.key_display or b.key, b.description) for b in self.BINDINGS if isinstance(b, Binding)]
        if self.arbiter:
            keys += [("a", "Alerts"), ("z", "Screening")]
        self.push_screen(HelpScreen(keys))
