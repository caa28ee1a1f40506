"""The Textual commentary screen (``python -m livemon.faces.tui`` shows it on a demo hub)."""

from livemon.faces.tui.app import CommentaryApp
from livemon.faces.tui.demo import demo, demo_hub

__all__ = ["CommentaryApp", "demo", "demo_hub"]
