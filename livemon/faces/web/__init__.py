"""The web face: a WebSocket server, an OBS overlay page and a JSON snapshot, all on one port.

By role: :mod:`~livemon.faces.web.fanout` (clients, groups, cursors, rounds: the fan-out without I/O),
:mod:`~livemon.faces.web.auth` (the arbiter token, guess and snapshot limits), :mod:`~livemon.faces.web.pages`
(HTTP), :mod:`~livemon.faces.web.protocol` (the frames) and :mod:`~livemon.faces.web.server` (the asyncio
shell that moves bytes between the sockets and the fan-out). The protocol: docs/websocket.md.
"""

from livemon.faces.web.server import PROTOCOL_VERSION, WebServer, serve_web

__all__ = ["PROTOCOL_VERSION", "WebServer", "serve_web"]
