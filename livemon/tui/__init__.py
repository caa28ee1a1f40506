"""The Textual commentary screen (``python -m livemon.tui`` shows it on a demo hub)."""

from livemon.tui.app import CommentaryApp
from livemon.tui.demo import demo, demo_hub

__all__ = ["CommentaryApp", "demo", "demo_hub"]
