"""The HTTP side of the web face's port: pages, static files, the JSON snapshot and the health check.

Served through websockets' ``process_request`` hook (:class:`~livemon.faces.web.server.WebServer`):
``/`` (an index of the games with their overlay links), ``/overlay`` (the OBS page),
``/commentator`` (every board, the leaderboard, one game in detail), ``/static/…`` (the pages'
script and the vendored chessground board, read once at start: a request can name only these, no
path is ever joined from a URL), ``/api/snapshot`` (every public channel as JSON) and ``/healthz``.
Every answer is built from the hub's latest state; nothing here holds a socket.
"""

from __future__ import annotations

import html
import http
import json
from importlib import resources
from typing import Any, Callable
from urllib.parse import quote, urlsplit

from websockets.datastructures import Headers
from websockets.http11 import Response

from livemon import __version__
from livemon.faces.hub import PUBLIC_CHANNELS, Hub
from livemon.faces.web import codec
from livemon.faces.web.protocol import PROTOCOL_VERSION

STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".md": "text/plain; charset=utf-8", "LICENSE": "text/plain; charset=utf-8"}

__all__ = ["Pages", "origin_ok"]


def static_files() -> dict[str, tuple[bytes, str]]:
    """Every file under ``static/`` (the vendored chessground included) by its URL path, read once."""
    files: dict[str, tuple[bytes, str]] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
                continue
            kind = next((t for ext, t in STATIC_TYPES.items() if child.name.endswith(ext)), None)
            if kind is not None:
                files[f"/static/{prefix}{child.name}"] = (child.read_bytes(), kind)

    walk(resources.files("livemon.faces.web").joinpath("static"), "")
    return files


def http_response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers([
        ("Content-Type", content_type), ("Content-Length", str(len(body))),
        ("Cache-Control", "no-store"), ("Connection", "close"),
    ])
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def origin_ok(allowed: list[str] | None, origin: str | None, host: str | None) -> bool:
    """May a WebSocket from ``origin`` open? Browsers send Origin; other clients may not (and could forge it anyway).

    >>> origin_ok(["https://ok.example"], "https://evil.example", "127.0.0.1:8765")
    False
    >>> origin_ok(["https://ok.example"], "http://127.0.0.1:8765", "127.0.0.1:8765")  # our own page
    True
    """
    if allowed is None or origin is None or origin in allowed:
        return True
    return urlsplit(origin).netloc == (host or "")  # same-origin: our own overlay page


class Pages:
    """The HTTP answers for one hub. ``health``: the store's health (``/healthz`` is 503 while it says not ok);
    ``live``: the server's own figures for ``/healthz`` (clients, counters, ``latency``)."""

    def __init__(self, hub: Hub, health: Callable[[], dict[str, Any]] | None,
                 live: Callable[[], dict[str, Any]]) -> None:
        self.hub = hub
        self.health = health
        self.live = live
        self._overlay = resources.files("livemon.faces.web").joinpath("static/overlay.html").read_bytes()
        self._static = static_files()  # "/static/<path>" -> (body, content type): only what the package ships

    def respond(self, path: str) -> Response:
        """The answer to a GET of ``path`` (without its query); 404 for anything not served."""
        if path in ("/", "/index.html"):
            return http_response(200, self.index_page().encode(), "text/html; charset=utf-8")
        if path in ("/overlay", "/overlay/"):
            return http_response(200, self._overlay, "text/html; charset=utf-8")
        if path in ("/commentator", "/commentator/"):
            path = "/static/commentator.html"
        if path in self._static:
            return http_response(200, *self._static[path])
        if path == "/api/snapshot":
            return http_response(200, json.dumps(self.public_snapshot(), separators=(",", ":")).encode(), "application/json")
        if path == "/healthz":
            store = self.health() if self.health is not None else None
            ok = store is None or bool(store.get("ok", True))
            live = self.live()
            latency = live.pop("latency", None)
            body: dict[str, Any] = {"ok": ok, "protocol": PROTOCOL_VERSION, "seq": self.hub.seq, **live}
            if store is not None:
                body["store"] = store
            body["latency"] = latency
            return http_response(200 if ok else 503, json.dumps(body).encode(), "application/json")
        return http_response(404, b"not found\n", "text/plain; charset=utf-8")

    def index_page(self) -> str:
        """``/``: every game, live ones first, each with its overlay link (the id URL-encoded)."""
        _, boards = self.hub.snapshot("games")
        live = [b for b in boards if getattr(b, "result", "*") == "*"]
        done = [b for b in boards if getattr(b, "result", "*") != "*"]
        rows = []
        for b in live + done[::-1]:
            gid = getattr(b, "game_id", "?")
            link = f"/overlay?game={quote(gid, safe='')}"
            who = f"{getattr(b, 'white', '?')} – {getattr(b, 'black', '?')}"
            state = "live" if b in live else getattr(b, "result", "")
            event = " · ".join(x for x in (getattr(b, "event", "?"), f"R{getattr(b, 'round', '?')}") if x not in ("?", "R?"))
            rows.append(f'<tr><td>{html.escape(state)}</td><td><a href="{html.escape(link)}">{html.escape(who)}</a></td>'
                        f'<td>{html.escape(event)}</td><td>{getattr(b, "ply", 0)}</td><td><code>{html.escape(gid)}</code></td></tr>')
        body = "\n".join(rows) or '<tr><td colspan="5">no games yet</td></tr>'
        return (
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>livemon</title>"
            "<style>body{font:15px/1.4 sans-serif;margin:2em}td,th{padding:.2em .8em;text-align:left}"
            "tr:nth-child(even){background:#f3f3f3}</style></head><body>"
            f"<h1>livemon {html.escape(__version__)}</h1>"
            "<p><a href=\"/commentator\">/commentator</a>: every board, the leaderboard and one game in detail. "
            "<a href=\"/overlay\">/overlay</a> follows a live game (the first live board, else the latest); "
            "a game's link follows that game. Also: <a href=\"/api/snapshot\">/api/snapshot</a>, "
            "<a href=\"/healthz\">/healthz</a>, WebSocket <code>/ws</code> (docs/websocket.md).</p>"
            "<table><tr><th></th><th>game (overlay link)</th><th>event</th><th>plies</th><th>id</th></tr>"
            f"{body}</table></body></html>\n"
        )

    def public_snapshot(self) -> dict[str, Any]:
        """Every public channel's latest messages (the body of ``/api/snapshot``)."""
        channels = {}
        for channel in PUBLIC_CHANNELS:
            _, msgs = self.hub.snapshot(channel)
            channels[channel] = [codec.main_dict(m) for m in msgs]  # main channels: a board without its evals
        return {"protocol": PROTOCOL_VERSION, "seq": self.hub.seq, "channels": channels}
