"""The help screen: the keys, listed from the app's own bindings so it cannot go stale."""

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


class HelpScreen(ModalScreen[None]):
    """A modal list of the keys; any of escape, ? or q closes it."""

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", key_display="?"),
        Binding("q", "close", "Close"),
    ]

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        rows = list(BUILTIN_KEYS) + self.keys
        width = max(len(k) for k, _ in rows)
        lines = [f"{k:>{width}}  {what}" for k, what in rows]
        with Vertical(id="help-box"):
            yield Static("livemon — keys", id="help-title")
            yield Static("\n".join(lines), id="help-keys")
            yield Static("escape, ? or q to close", id="help-hint")

    def action_close(self) -> None:
        self.dismiss(None)
