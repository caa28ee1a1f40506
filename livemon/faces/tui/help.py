"""The help screen: the keys, listed from the app's own bindings so it cannot go stale, and what each column means
in plain words (the audience's figures, then the research panel's)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

#: keys Textual handles itself, listed so the reader knows about them
BUILTIN_KEYS: tuple[tuple[str, str], ...] = (
    ("tab / shift+tab", "next / previous pane"),
    ("↑ ↓ PgUp PgDn", "move the selection in the pane"),
)


GLOSSARY = (
    "Est. (95% range): the estimate, how strong the player is playing in this event (the quality of the moves and"
    " the results, the other players' ratings as the starting point); shown once its range is narrow enough, until"
    " then \"n more g.\" (games)",
    "Moves: the rating of players who make moves of this quality, from the moves alone (to compare events)",
    "Acc.: lichess's accuracy (0-100) · ?!/?/??: inaccuracies, mistakes, blunders",
    "Score · TPR (FIDE's tournament performance rating) · Rtg +/-: the FIDE rating change",
    "research panel (r): c̄ ± σ, the apparent skill in the E(c) model (how often a player of skill c picks each"
    " engine line; higher = closer to the engine) · TTT μ ± σ, the rating from results over time (TrueSkill Through"
    " Time) · Analysed: the moves read · E(c) performance, perceived Elo, p(eng): the papers' diagnostics from each"
    " move's gain (centipawns won against the engine's best move), not ratings to quote",
)
"""The columns in plain words, shown under the keys."""


class HelpScreen(ModalScreen[None]):
    """A modal list of the keys; any of escape, ? or q closes it."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", key_display="?"),
        Binding("q", "close", "Close"),
    ]

    def __init__(self, keys: list[tuple[str, str]], glossary: tuple[str, ...] = GLOSSARY) -> None:
        super().__init__()
        self.keys = keys
        self.glossary = glossary

    def compose(self) -> ComposeResult:
        rows = list(BUILTIN_KEYS) + self.keys
        width = max(len(k) for k, _ in rows)
        lines = [f"{k:>{width}}  {what}" for k, what in rows]
        with Vertical(id="help-box"):
            yield Static("livemon — keys", id="help-title")
            yield Static("\n".join(lines), id="help-keys")
            if self.glossary:
                yield Static("\n".join(self.glossary), id="help-glossary")
            yield Static("escape, ? or q to close", id="help-hint")

    def action_close(self) -> None:
        self.dismiss(None)
