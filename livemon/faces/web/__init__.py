"""The web face: a WebSocket server, an OBS overlay page and a JSON snapshot, all on one port.

See :mod:`livemon.faces.web.server` and docs/websocket.md.
"""

from livemon.faces.web.server import PROTOCOL_VERSION, WebServer, serve_web

__all__ = ["PROTOCOL_VERSION", "WebServer", "serve_web"]
