"""The commentary screen's widgets: each shows one part of :class:`~livemon.faces.tui.model.LiveState`.

Widgets never read the hub or a file; the app hands them messages by setting
their reactive attributes, and Textual repaints a widget only when one of its
own attributes changed. Layout and colours live in ``commentary.tcss``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import chess
from rich.text import Text
from textual.app import RenderResult
from textual.containers import Horizontal, Vertical
from textual.coordinate import Coordinate
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import DataTable, Static

from livemon.live.messages import Alert, BoardState, Moment, MonitorStatus, ScreeningNumbers
from livemon.faces.tui import format as fmt
from livemon.faces.tui.model import PlayerRow
from livemon.rating.timecontrol import mark

Cells = tuple[str | Text, ...]


class LiveTable(DataTable[str | Text]):
    """A row-cursor table kept in step with a list of keyed rows.

    :meth:`show` rewrites only the cells whose text changed; the rows are
    rebuilt only when their order changed (a new game, a re-sort), and then the
    cursor stays on the same key so the reader's selection does not jump.
    """

    def __init__(self, columns: Sequence[tuple[str, str, int | None]], row_height: int = 1, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self._columns = list(columns)
        self._row_height = row_height
        self._order: list[str] = []
        self._cells: dict[str, Cells] = {}

    def on_mount(self) -> None:
        for key, label, width in self._columns:
            self.add_column(label, key=key, width=width)

    def set_columns(self, columns: Sequence[tuple[str, str, int | None]]) -> None:
        """Show ``columns`` instead (the rows go: the next :meth:`show` fills them again)."""
        self._columns = list(columns)
        with self.prevent(DataTable.RowHighlighted):
            self.clear(columns=True)
            for key, label, width in self._columns:
                self.add_column(label, key=key, width=width)
        self._order, self._cells = [], {}

    @property
    def selected_key(self) -> str | None:
        """The key of the row under the cursor, None when the table is empty."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(Coordinate(self.cursor_row, 0)).row_key.value

    @property
    def order(self) -> list[str]:
        return list(self._order)

    def _scroll_to_cursor(self) -> None:
        """After a rebuild the new rows are laid out only on refresh; then bring the cursor into view."""
        if self.row_count:
            self.move_cursor(row=self.cursor_row, scroll=True)

    def show(self, rows: Sequence[tuple[str, Cells]]) -> None:
        keys = [k for k, _ in rows]
        with self.prevent(DataTable.RowHighlighted):
            if keys != self._order:
                selected = self.selected_key
                self.clear()
                for key, cells in rows:
                    self.add_row(*cells, key=key, height=self._row_height)
                if selected in keys:
                    self.move_cursor(row=keys.index(selected))
                    self.call_after_refresh(self._scroll_to_cursor)
            else:
                for key, cells in rows:
                    old = self._cells.get(key, ())
                    for i, (col, value) in enumerate(zip(self._columns, cells)):
                        if i >= len(old) or old[i] != value:
                            self.update_cell(key, col[0], value)
        self._order = keys
        self._cells = dict(rows)


# -- boards ------------------------------------------------------------------------


def _name(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def board_cells(b: BoardState) -> Cells:
    """A two-line row: White over Black, with ratings and clocks (or the result)."""
    players = Text(f"{_name(b.white, 22):<22} {fmt.dash(b.white_elo):>4}\n{_name(b.black, 22):<22} {fmt.dash(b.black_elo):>4}")
    if b.result != "*":
        w, _, bl = b.result.partition("-")
        half = {"1/2": "½"}
        state = Text(f"{half.get(w, w):>7}\n{half.get(bl, bl):>7}", style="bold")
    else:
        white_to_move = b.ply % 2 == 0
        state = Text()
        state.append(f"{fmt.clock(b.white_clock):>7}", style="bold" if white_to_move else "dim")
        state.append("\n")
        state.append(f"{fmt.clock(b.black_clock):>7}", style="dim" if white_to_move else "bold")
    bar = Text(fmt.eval_bar(b.eval_cp, 10), style="white on grey23")
    bar.append("\n")
    bar.append(f"{fmt.eval_text(b.eval_cp, b.eval_mate):>10}")
    move = Text(f"{fmt.move_label(b.ply, b.last_move_san)}\nply {b.ply}")
    return (players, state, bar, move)


class BoardList(LiveTable):
    """Every board, live ones first: players, ratings, clocks or result, eval bar, last move."""

    def __init__(self, **kwargs: Any) -> None:
        cols = [("players", "Players", 27), ("clock", "Clock", 7), ("eval", "Eval", 10), ("move", "Last", 9)]
        super().__init__(cols, row_height=2, **kwargs)


# -- the selected game ---------------------------------------------------------------

# A printed diagram's look: outlined White pieces and solid Black ones, both drawn in
# black on light squares, so the two sides differ by shape (also in a plain-text capture).
LIGHT, DARK = "#f0d9b5", "#c39b6e"
LIGHT_HI, DARK_HI = "#e2e27a", "#c5c255"


def board_text(fen: str, last_uci: str | None = None) -> Text:
    """The position with White at the bottom, unicode pieces on coloured squares."""
    board = chess.Board(fen)
    marked: set[int] = set()
    if last_uci:
        try:
            move = chess.Move.from_uci(last_uci)
            marked = {move.from_square, move.to_square}
        except ValueError:
            pass
    text = Text()
    for rank in range(7, -1, -1):
        text.append(f"{rank + 1} ", style="dim")
        for file in range(8):
            sq = chess.square(file, rank)
            light = (rank + file) % 2 == 1
            bg = (LIGHT_HI if light else DARK_HI) if sq in marked else (LIGHT if light else DARK)
            piece = board.piece_at(sq)
            glyph = piece.unicode_symbol() if piece else " "
            text.append(f" {glyph} ", style=f"#000000 on {bg}")
        text.append("\n")
    text.append("   a  b  c  d  e  f  g  h", style="dim")
    return text


class BoardView(Widget):
    """The selected game's position."""

    fen: reactive[str] = reactive(chess.STARTING_FEN)
    last_uci: reactive[str | None] = reactive(None)

    def render(self) -> RenderResult:
        return board_text(self.fen, self.last_uci)


class GameInfo(Widget):
    """Beside the board: move, evaluation, clocks or result, each side's accuracy and its inaccuracies,
    mistakes and blunders (i/m/b)."""

    board: reactive[BoardState | None] = reactive(None)

    def render(self) -> RenderResult:
        b = self.board
        if b is None:
            return ""
        to_move = "White" if b.ply % 2 == 0 else "Black"
        acc, classes = b.accuracy or {}, b.classes or {}
        lines = [
            f"after {fmt.move_label(b.ply, b.last_move_san)}",
            f"ply {b.ply}",
            f"eval {fmt.eval_text(b.eval_cp, b.eval_mate)}",
            fmt.eval_bar(b.eval_cp, 10),
            f"W {fmt.clock(b.white_clock)}",
            f"B {fmt.clock(b.black_clock)}",
            f"result {b.result}" if b.result != "*" else f"{to_move} to move",
            f"acc W {fmt.dash(acc.get('white'), '{:.1f}')}",
            f"    B {fmt.dash(acc.get('black'), '{:.1f}')}",
            f"i/m/b W {_classes(classes.get('white'))}",
            f"      B {_classes(classes.get('black'))}",
        ]
        return "\n".join(lines)


class SeriesPlot(Widget):
    """A titled column chart of one series (one column per ply, downsampled to fit)."""

    values: reactive[tuple[float | None, ...]] = reactive(tuple)

    def __init__(self, title: str, lo: float, hi: float, worst: bool = False, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.title, self.lo, self.hi, self.worst = title, lo, hi, worst

    def render(self) -> RenderResult:
        width, height = self.size.width, self.size.height - 1
        text = Text(self.title, style="dim")
        cols = fmt.downsample(self.values, width, worst=self.worst)
        for row in fmt.column_chart(cols, height, self.lo, self.hi):
            text.append("\n" + row)
        return text


class GamePanel(Vertical):
    """The selected game: title, board, information and the eval and gain plots."""

    board: reactive[BoardState | None] = reactive(None)

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(id="game-title")
        with Horizontal(id="game-main"):
            yield BoardView(id="board")
            yield GameInfo(id="game-info")
        yield SeriesPlot("evaluation, White's view (±5 pawns)", -500, 500, id="eval-plot")
        yield SeriesPlot("gain per move (−3 … +1 pawn)", -300, 100, worst=True, id="gain-plot")

    def watch_board(self, b: BoardState | None) -> None:
        title = self.query_one("#game-title", Static)
        if b is None:
            title.update("no game selected")
            return
        title.update(f"♔ {_name(b.white, 30)} {fmt.dash(b.white_elo)}\n♚ {_name(b.black, 30)} {fmt.dash(b.black_elo)}")
        self.border_title = f"Game · round {b.round}"
        self.border_subtitle = b.event
        view = self.query_one(BoardView)
        view.fen, view.last_uci = b.fen, b.last_move_uci
        self.query_one(GameInfo).board = b
        evals = tuple(None if e is None else float(e) for e in b.evals)
        self.query_one("#eval-plot", SeriesPlot).values = evals
        gains = fmt.ply_gains(b.evals)
        self.query_one("#gain-plot", SeriesPlot).values = tuple(None if g is None else float(g) for g in gains)


# -- players ---------------------------------------------------------------------------


def _classes(counts: dict[str, int] | None) -> str:
    """``inaccuracies/mistakes/blunders``, or a dash before any move was judged."""
    if not counts:
        return fmt.DASH
    return f"{counts.get('inaccuracy', 0)}/{counts.get('mistake', 0)}/{counts.get('blunder', 0)}"


def performance_cells(perf: dict[str, Any], display: dict[str, Any] | None) -> tuple[str, str]:
    """An estimate and its range as the display rules allow (:func:`~livemon.faces.tui.format.shown_estimate`,
    as ``analyse`` prints them; "n more g." in the narrow column)."""
    return fmt.shown_estimate(perf, display, more="more g.")


def _results(r: dict[str, Any] | None) -> tuple[str, str, str]:
    """Score/games (the event's points where it scores otherwise than 1-½-0: ``[event] points``), TPR and rating
    change from results, or dashes.

    >>> _results({"score": 1.5, "games": 2, "tpr": 2893, "rating_change": 5.0})
    ('1.5/2', '2893', '+5.0')
    >>> _results({"score": 1.5, "games": 2, "points": 4.0, "tpr": None, "rating_change": None})[0]
    '4 pts'
    """
    if not r or not r.get("games"):
        return fmt.DASH, fmt.DASH, fmt.DASH
    score = f"{r['points']:g} pts" if r.get("points") is not None else f"{r['score']:g}/{r['games']}"
    change = r.get("rating_change")
    return score, fmt.dash(r.get("tpr")), (fmt.DASH if change is None else f"{change:+.1f}")


def player_cells(p: PlayerRow, research: bool = False) -> Cells:
    """A player's row: the audience's figures (rating, estimate and its 95% range as the display rule allows, in
    the moves alone, accuracy, inaccuracies/mistakes/blunders, score, TPR, rating change); with ``research``, then the
    research figures (apparent skill c̄ ± σ, the TTT rating from results μ ± σ, moves analysed)."""
    e, t = p.estimate, p.ttt
    shown, rng = performance_cells(p.headline or {}, p.display)
    alone = p.alone or {}
    moves_only, _ = performance_cells(alone, alone.get("display"))
    score, tpr, change = _results(e.results if e else None)
    cells: Cells = (
        _name(p.name, 18),
        fmt.dash(p.elo),
        shown,
        rng,
        moves_only,
        fmt.dash(e.accuracy if e else None, "{:.1f}"),
        _classes(e.classes if e else None),
        score,
        tpr,
        change,
    )
    if not research:
        return cells
    return cells + (
        fmt.plus_minus(e.c_mean if e else None, e.c_sd if e else None, "{:.2f}", sep="±"),
        fmt.plus_minus(t.elo if t else None, t.elo_sigma if t else None, sep="±"),
        str(p.moves) if e else fmt.DASH,
    )


AUDIENCE_COLUMNS: list[tuple[str, str, int | None]] = [
    ("name", "Player", 18),
    ("elo", "Elo", 4),
    ("estimate", "Est.", 5),
    ("range", "95% range", 11),
    ("alone", "Moves", 5),
    ("accuracy", "Acc.", 5),
    ("classes", "?!/?/??", 7),
    ("score", "Score", 5),
    ("tpr", "TPR", 4),
    ("change", "Rtg +/-", 7),
]
"""The players table by default: what a commentator quotes."""

RESEARCH_COLUMNS: list[tuple[str, str, int | None]] = [
    ("c", "c̄ ± σ", 9),
    ("ttt", "TTT μ±σ", 8),
    ("moves", "Analysed", 8),
]
"""Added by the research panel (``r``): c̄ ± σ, the player's apparent skill in the E(c) model (higher = closer to
the engine's choices); TTT μ ± σ, the rating from results over time (TrueSkill Through Time) on the Elo scale;
the moves analysed."""


class PlayersTable(LiveTable):
    """Players: the estimate with its 95% range and the same from the moves alone, accuracy, classes, results
    (score, TPR, rating change); the research panel (``r``) adds c̄ ± σ, TTT μ ± σ and the moves analysed.

    The E(c) performance and Ferreira's perceived Elo (diagnostics, not the headline) are in the player pane,
    with the research panel.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(AUDIENCE_COLUMNS, **kwargs)
        self.research = False

    def show_research(self, on: bool) -> None:
        """The research columns on or off."""
        if on != self.research:
            self.research = on
            self.set_columns(AUDIENCE_COLUMNS + (RESEARCH_COLUMNS if on else []))


# -- moments ---------------------------------------------------------------------------


_KIND_LABEL = {"blunder": "??", "turning_point": "turn", "lead_change": "lead"}


def moment_cells(m: Moment) -> Cells:
    """Board, move, what it was, White's win% before → after, the engine's move."""
    kinds = " ".join(_KIND_LABEL.get(k, k) for k in m.kinds)
    return (
        f"{m.round} {_name(m.white.split(',')[0], 8)}-{_name(m.black.split(',')[0], 8)}",
        fmt.move_label(m.ply, m.move_san),
        kinds,
        f"{m.win_before:.0f}→{m.win_after:.0f}",
        m.best_move_san or fmt.DASH,
    )


class MomentsTable(LiveTable):
    """The round's blunders, turning points and lead changes, newest first (read, not browsed: it takes no
    focus, so tab goes from the boards to the players as before)."""

    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        cols = [("game", "Game", 22), ("move", "Move", 9), ("kind", "What", 10), ("win", "W win%", 7),
                ("best", "Best", 7)]
        super().__init__(cols, **kwargs)


def forecast_cells(row: dict[str, Any]) -> Cells:
    """Player, points, chance of first and its change since the round began, of the top three, what they need."""
    def pct(x: float | None) -> str:
        return fmt.DASH if x is None else f"{100 * x:.1f}%"
    first, start = row.get("p_first"), row.get("p_first_round_start")
    delta = fmt.DASH if first is None or start is None else f"{100 * (first - start):+.1f}"
    needs = row.get("needs")
    return (
        _name(str(row.get("name", "?")), 22),
        f"{row.get('score', 0):g}",
        pct(first),
        delta,
        pct(row.get("p_top3")),
        fmt.DASH if needs is None else f"{needs:g}",
    )


class ForecastTable(LiveTable):
    """Who can still win: the chance of first of each player and its change since the round began (read, not
    browsed: it takes no focus)."""

    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        cols = [("name", "Player", 22), ("score", "Pts", 5), ("first", "First", 7), ("delta", "± round", 8),
                ("top3", "Top 3", 7), ("needs", "Needs", 6)]
        super().__init__(cols, **kwargs)


class PlayerHistogram(Widget):
    """The selected player's figures and gains (centipawns per move against the engine's best: 0 = the engine's own
    choice) in 25 cp bins over [−300, +100] (tails clamped); the research panel (``r``) adds the papers' diagnostics."""

    player: reactive[PlayerRow | None] = reactive(None)
    research: reactive[bool] = reactive(False)

    def render(self) -> RenderResult:
        p = self.player
        if p is None:
            return "no player selected"
        e = p.estimate
        text = Text(_name(p.name, 30), style="bold")
        if e is None or not e.gain_histogram:
            text.append("\nno analysed moves yet")
            return text
        head = p.headline or {}
        shown, rng = performance_cells(head, p.display)
        why = (head.get("reason") or (p.display or {}).get("reason")
               or f"{head.get('positions', 0)} positions · {head.get('label') or head.get('calibration') or '—'}")
        text.append(f"\nestimate {shown} ({rng}) · {why}")
        alone = p.alone or {}
        if alone and head.get("kind") != "moves":  # the headline is in this field: the moves alone beside it
            a_shown, a_rng = performance_cells(alone, alone.get("display"))
            text.append(f"\nfrom the moves alone {a_shown} ({a_rng}) · {alone.get('reason') or alone.get('label') or ''}")
        for key, name in (("results_estimate", "results (FIDE)"), ("combined_estimate", "moves + results")):
            b = getattr(e, key) or {}
            if b:
                text.append(f"\n{name} {fmt.dash(b.get('elo'))} ({fmt.elo_range(b.get('cr95'))})", style="dim")
        if self.research:
            perf = e.performance or {}
            text.append(f"\nresearch: E(c) performance {fmt.dash(perf.get('elo'))} ({fmt.elo_range(perf.get('cr95'))}) "
                        "· the rating of the E(c) model's player who would choose these moves", style="dim")
            text.append(f"\nresearch (Ferreira): perceived {fmt.dash(e.perceived_elo)} · p(eng) "
                        f"{fmt.dash(e.expected_score_vs_engine, '{:.3f}')} · c̄ "
                        f"{fmt.plus_minus(e.c_mean, e.c_sd, '{:.2f}', sep='±')} — from the sign of each gain only",
                        style="dim")
        text.append(f"\n{e.moves} moves · mean gain {fmt.dash(e.mean_gain, '{:+.1f}')} cp · √ scale", style="dim")
        bins = fmt.bin_gains(e.gain_histogram)
        peak = math.sqrt(max(c for _, c in bins) or 1)
        height = max(1, self.size.height - 3)
        for row in fmt.column_chart([math.sqrt(c) for _, c in bins], height, 0, peak, col_width=2):
            text.append("\n" + row)
        # the axis: labels under the bins of −300, −200, −100, 0, +100 (each bin is 2 cells)
        axis = [" "] * (2 * len(bins) + 4)
        for i, (centre, _) in enumerate(bins):
            if centre % 100 == 0:
                label = f"{centre:+d}" if centre else "0"
                for j, ch in enumerate(label):
                    if 2 * i + j < len(axis):
                        axis[2 * i + j] = ch
        text.append("\n" + "".join(axis).rstrip(), style="dim")
        return text


# -- status and alerts --------------------------------------------------------------------


def status_text(s: MonitorStatus | None) -> str:
    """One line: feeds and their state, the engines' backlog and lag (how long the oldest position waiting for
    them has waited: the figures are that far behind the boards)."""
    if s is None:
        return "waiting for the monitor…"
    feeds = ", ".join(
        f"{f.get('name', '?')} {f.get('state', '?')}" + (f" ({f['errors']} errors)" if f.get("errors") else "") for f in s.feeds
    )
    engine = f"{s.engines}× {s.engine_profile}" if s.engine_profile else f"{s.engines} engines"
    return (
        f"feeds: {feeds or fmt.DASH} │ engine: {engine}, backlog {s.backlog}, lag {s.engine_lag_seconds:.0f} s │ "
        f"{s.games} games, {s.moves} moves"
    )


class StatusLine(Widget):
    """The monitor's health: feeds, engine backlog and lag."""

    status: reactive[MonitorStatus | None] = reactive(None)

    def render(self) -> RenderResult:
        return status_text(self.status)


def alert_cells(a: Alert) -> Cells:
    return (_name(a.player, 18), _name(a.event, 20), str(a.positions), f"{a.z:+.2f}", f"{a.roi:.1f}", f"{a.threshold:.1f}")


def screening_cells(r: ScreeningNumbers) -> Cells:
    z = "—" if r.z is None else f"{r.z:+.2f}"
    roi = "—" if r.roi is None else f"{r.roi:.1f}"
    versus = "—" if r.strength is None or r.strength_sd is None else f"{r.strength:.0f}±{r.strength_sd:.0f}"
    if r.strength is not None:
        versus += mark(r.time_control)  # r: against rapid play; b: blitz, read against rapid play
    ipr = "—" if r.ipr is None else f"{r.ipr:.0f}"
    lo, hi = r.ipr_cr95 if r.ipr_cr95 is not None else (None, None)
    interval = "—" if r.ipr is None else f"{'…' if lo is None else f'{lo:.0f}'}–{'…' if hi is None else f'{hi:.0f}'}"
    opponents = "—" if r.opponents is None else f"{r.opponents:.0f}"
    return (_name(r.player, 18), _name(r.event, 14), str(r.positions), f"{r.matches_observed}/{r.matches_expected:.0f}",
            versus, opponents, z, ipr, interval, roi, r.level or "")


class ScreeningTable(LiveTable):
    """Every screened player in every event with the current z (arbiters only), highest first."""

    def __init__(self, **kwargs: Any) -> None:
        # vs: today's strength (the rating on today's scale and the event's results) ± sd, what z is against
        # (r: at rapid play, b: blitz, read against rapid play);
        # Opp.: the mean rating of the player's opponents, which the expectation is read against;
        # IPR: the strength the moves read, and its 95% interval (…: an end the line cannot reach)
        cols = [("player", "Player", 18), ("event", "Event", 14), ("n", "Pos.", 5), ("mm", "MM o/e", 7),
                ("vs", "vs", 9), ("opp", "Opp.", 5), ("z", "z", 6), ("ipr", "IPR", 5), ("ipr95", "IPR 95%", 9), ("roi", "ROI", 5),
                ("level", "Level", 6)]
        super().__init__(cols, **kwargs)


class AlertsTable(LiveTable):
    """Fair-play screening alerts, strongest first (arbiters only)."""

    def __init__(self, **kwargs: Any) -> None:
        cols = [("player", "Player", 18), ("event", "Event", 20), ("n", "Pos.", 5), ("z", "z", 6), ("roi", "ROI", 5), ("thr", "z ≥", 4)]
        super().__init__(cols, **kwargs)
