"""``livemon report``'s page: one self-contained HTML file (inline CSS and SVG, no script, no server).

For a commentator preparing a show: the leaderboard (score, FIDE TPR and rating change, the estimate under the
display rules and the same from the moves alone, accuracy, inaccuracies/mistakes/blunders),
a chart of each player's estimate with its interval, and each game's win% chart, accuracy and moments. Every
figure is from :func:`livemon.app.report.event_report`'s data; nothing is fetched when the page is
opened (it works from a file, offline).

>>> page = render_html({"title": "T", "profile": "p", "calibrated": None, "max_interval_width": 1000.0,
...                     "players": [], "games": []})
>>> page.startswith("<!DOCTYPE html>") and "<title>T</title>" in page and "http" not in page.split("<body")[1]
True
"""

from __future__ import annotations

from html import escape
from typing import Any

from livemon.live.audience import more_games
from livemon.rating.points import FIDE_POINTS

__all__ = ["render_html"]

DASH = "—"
_CSS = """
:root{--bg:#fbfaf7;--fg:#1d232a;--muted:#6b7280;--line:#d9d6cf;--white:#f4f1ea;--black:#2b2f36;
--blunder:#c0392b;--mistake:#e67e22;--inacc:#d4ac0d;--accent:#2563eb}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
background:var(--bg);color:var(--fg)}main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 10px;border-bottom:2px solid var(--line);
padding-bottom:4px}.muted{color:var(--muted)}table{border-collapse:collapse;width:100%}
th,td{padding:5px 8px;text-align:right;border-bottom:1px solid var(--line);white-space:nowrap}
th{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
td.l,th.l{text-align:left}tr:hover td{background:#f1eee7}.num{font-variant-numeric:tabular-nums}
.b{color:var(--blunder);font-weight:600}.m{color:var(--mistake);font-weight:600}.i{color:var(--inacc);font-weight:600}
details{border:1px solid var(--line);border-radius:8px;margin:10px 0;background:#fff}
summary{cursor:pointer;padding:10px 14px;font-weight:600}summary span{font-weight:400}
.game{padding:0 14px 12px}.chip{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;
background:#eef2ff;color:#3730a3;margin-right:4px}.chip.blunder{background:#fdecea;color:var(--blunder)}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}svg.fit{max-width:100%;height:auto}
"""

_CHAR = 6.8  # px: a wide character of the charts' 11 px text (DejaVu Sans, system-ui's fallback, is ~6.6 at most)


def _text_width(text: str) -> float:
    """Room for ``text`` in the charts' font: what a label's column or a legend is sized by."""
    return len(text) * _CHAR


def _f(x: float | None, fmt: str = "{:.0f}") -> str:
    return DASH if x is None else fmt.format(x)


def _classes(c: dict[str, int] | None) -> str:
    if not c:
        return DASH
    return (f'<span class="i">{c["inaccuracy"]}</span>/<span class="m">{c["mistake"]}</span>/'
            f'<span class="b">{c["blunder"]}</span>')


def _performance_cell(p: dict[str, Any], key: str = "estimate") -> str:
    """The estimate ``key`` names as its display rules allow (the headline's are ``display``, another block's its own)."""
    d = (p.get("display") if key == "estimate" else (p.get(key) or {}).get("display")) or {}
    if d.get("show"):
        lo, hi = d["cr95"]
        opened = d.get("open")
        low = ("&lt;" if opened in ("low", "both") else "") + f"{lo:.0f}"
        high = ("&gt;" if opened in ("high", "both") else "") + f"{hi:.0f}"
        return f'<b>{d["elo"]:.0f}</b> <span class="muted">{low}–{high}</span>'
    more = d.get("more_games")
    why = escape(str(d.get("reason") or (p.get(key) or {}).get("reason") or ""))
    text = more_games(more) if more else DASH
    return f'<span class="muted" title="{why}">{text}</span>'


def _leaderboard(players: list[dict[str, Any]]) -> str:
    rows = []
    for rank, p in enumerate(players, start=1):
        r = p["results"]
        change = r.get("rating_change")
        tpr_title = escape(str(r.get("reason") or ""))
        score = (f'<td class="num" title="{r["score"]:g}/{r["games"]} in games">{r["points"]:g} pts</td>' if "points" in r
                 else f'<td class="num">{r["score"]:g}/{r["games"]}</td>')  # the event's points where it has its own
        rows.append(
            f'<tr><td class="num">{rank}</td><td class="l">{escape(p["name"])}</td><td class="num">{_f(p["elo"])}</td>'
            f'{score}<td class="num" title="{tpr_title}">{_f(r["tpr"])}</td>'
            f'<td class="num">{DASH if change is None else f"{change:+.1f}"}</td>'
            f'<td class="num">{_performance_cell(p)}</td><td class="num">{_performance_cell(p, "moves_estimate")}</td>'
            f'<td class="num">{_f(p["accuracy"], "{:.1f}")}</td><td class="num">{_classes(p["classes"])}</td></tr>')
    return ('<table id="leaderboard"><thead><tr><th>#</th><th class="l">Player</th><th>Rating</th><th>Score</th>'
            '<th>TPR</th><th>±Elo</th><th title="the moves and results, with the other players\' ratings as the prior">'
            'Estimate (95%)</th><th title="Elo from the quality of the moves alone, each game read against the '
            'opponent\'s play and rating">Moves only</th>'
            '<th>Accuracy</th><th>?!/?/??</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _performance_chart(players: list[dict[str, Any]], calibrated: tuple[float, float] | None) -> str:
    """One row per player: the shown estimate with its interval (cut at the fitted range), the TPR
    (◆) and the rating (|); a player whose figure is not shown yet says how many more games."""
    values: list[float] = []
    for p in players:
        d = p.get("display") or {}
        if d.get("show"):
            values += d["cr95"]
        for v in (p["results"].get("tpr"), p["elo"]):
            if v is not None:
                values.append(float(v))
    if not values:
        return '<p class="muted">No estimate yet.</p>'
    lo, hi = min(values) - 50, max(values) + 50
    if calibrated is not None:
        lo, hi = max(lo, calibrated[0] - 50), min(hi, calibrated[1] + 50)
    row = 24
    left = min(max(120.0, 16 + max(_text_width(p["name"]) for p in players)), 330.0)  # the longest name's room
    width = 950 - left
    height = row * len(players) + 30

    def x(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * width

    parts = [f'<svg id="performance-chart" class="fit" width="{left + width + 20:.0f}" height="{height}" '
             f'viewBox="0 0 {left + width + 20:.0f} {height}" role="img" aria-label="estimate with 95% interval">']
    step = 100 if hi - lo <= 1200 else 200
    tick = (int(lo) // step + 1) * step
    while tick < hi:
        parts.append(f'<line x1="{x(tick):.1f}" y1="0" x2="{x(tick):.1f}" y2="{height - 20}" stroke="#ece9e2"/>'
                     f'<text x="{x(tick):.1f}" y="{height - 6}" text-anchor="middle">{tick}</text>')
        tick += step
    room = int((left - 16) / _CHAR + 1e-9)  # characters: a name longer than the widest column is cut
    for i, p in enumerate(players):
        y = 16 + i * row
        d = p.get("display") or {}
        name = p["name"] if len(p["name"]) <= room else p["name"][: room - 1] + "…"
        parts.append(f'<text x="{left - 8:.0f}" y="{y + 4}" text-anchor="end" style="fill:#1d232a">{escape(name)}'
                     f'<title>{escape(p["name"])}</title></text>')  # the whole name in its tooltip
        if d.get("show"):
            a, b = d["cr95"]
            parts.append(f'<line class="interval" x1="{x(a):.1f}" y1="{y}" x2="{x(b):.1f}" y2="{y}" stroke="#2563eb" '
                         f'stroke-width="4" stroke-linecap="round" opacity=".45"><title>95%: {a:.0f}–{b:.0f}</title></line>'
                         f'<circle cx="{x(d["elo"]):.1f}" cy="{y}" r="5" fill="#2563eb"><title>estimate '
                         f'{d["elo"]:.0f}</title></circle>')
        else:
            more = d.get("more_games")
            note = more_games(more) if more else "no estimate yet"
            why = d.get("reason") or (p.get("estimate") or {}).get("reason") or ""
            parts.append(f'<text x="{left + 4}" y="{y + 4}">{escape(note)}<title>{escape(str(why))}</title></text>')
        tpr = p["results"].get("tpr")
        if tpr is not None:
            cx = x(tpr)
            parts.append(f'<path class="tpr" d="M{cx:.1f},{y - 6} l5,6 l-5,6 l-5,-6 z" fill="#16a34a"><title>TPR {tpr}</title></path>')
        if p["elo"] is not None:
            parts.append(f'<line x1="{x(p["elo"]):.1f}" y1="{y - 8}" x2="{x(p["elo"]):.1f}" y2="{y + 8}" stroke="#1d232a" '
                         f'stroke-width="2"><title>rating {p["elo"]}</title></line>')
    parts.append("</svg>")
    return "".join(parts)


def _win_chart(game: dict[str, Any]) -> str:
    """White's win% after each ply (0-100, 50 dashed), the moments as dots (blunders red)."""
    wins = game["win_percents"]
    n = max(len(wins) - 1, 1)
    w, h, pad = 980, 140, 6

    def px(j: int) -> float:
        return pad + j / n * (w - 2 * pad)

    def py(v: float) -> float:
        return pad + (100 - v) / 100 * (h - 2 * pad)

    segments: list[list[str]] = []
    current: list[str] = []
    for j, v in enumerate(wins):
        if v is None:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(f"{px(j):.1f},{py(v):.1f}")
    if current:
        segments.append(current)
    parts = [f'<svg class="win-chart fit" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
             f'aria-label="White win percentage by ply"><rect x="0" y="0" width="{w}" height="{h}" fill="#2b2f36"/>']
    for seg in segments:
        area = f"{seg[0].split(',')[0]},{py(0):.1f} " + " ".join(seg) + f" {seg[-1].split(',')[0]},{py(0):.1f}"
        parts.append(f'<polygon points="{area}" fill="#f4f1ea"/>')
        parts.append(f'<polyline class="win" points="{" ".join(seg)}" fill="none" stroke="#9ca3af" stroke-width="1"/>')
    parts.append(f'<line x1="0" y1="{py(50):.1f}" x2="{w}" y2="{py(50):.1f}" stroke="#2563eb" stroke-dasharray="4 4" opacity=".6"/>')
    for m in game["moments"]:
        v = wins[m["ply"]]
        if v is None:
            continue
        color = "#c0392b" if "blunder" in m["kinds"] else "#2563eb"
        label = f'{_move_label(m["ply"], m["move_san"])}: {", ".join(m["kinds"])}'
        parts.append(f'<circle class="moment" cx="{px(m["ply"]):.1f}" cy="{py(v):.1f}" r="4.5" fill="{color}" '
                     f'stroke="#fff"><title>{escape(label)}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


_LINE_COLOURS = ("#2563eb", "#c0392b", "#16a34a", "#d97706", "#7c3aed", "#0891b2")


def _forecast_chart(forecast: dict[str, Any] | None) -> str:
    """Each leading player's chance of first before round 1 and after each round (livemon forecast's model)."""
    if not forecast:
        return ""
    if "players" not in forecast:
        return f'<h2>Who will win</h2><p class="muted">No forecast: {escape(str(forecast.get("note", "")))}</p>'
    rounds: list[int] = forecast["rounds"]
    series: dict[str, list[float]] = forecast["players"]
    shown = sorted(series, key=lambda n: (-max(series[n]), n))[: len(_LINE_COLOURS)]
    labels = [f"{name} {100 * series[name][-1]:.0f}%" for name in shown]
    w, h, left, pad = 980, 220, 40, 14
    legend = 16 + max(_text_width(label) for label in labels)  # the legend's room, right of the last round
    n = max(len(rounds) - 1, 1)

    def px(j: int) -> float:
        return left + j / n * (w - left - legend)

    def py(v: float) -> float:
        return pad + (1 - v) * (h - 2 * pad)

    parts = [f'<svg id="forecast-chart" class="fit" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" '
             'aria-label="Chance of first place after each round">']
    for v in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{px(n):.1f}" y2="{py(v):.1f}" stroke="#ddd"/>'
                     f'<text x="4" y="{py(v) + 4:.1f}">{100 * v:.0f}%</text>')
    for j, r in enumerate(rounds):
        parts.append(f'<text x="{px(j) - 4:.1f}" y="{h - 1}">{r}</text>')
    for i, name in enumerate(shown):
        colour = _LINE_COLOURS[i]
        points = " ".join(f"{px(j):.1f},{py(v):.1f}" for j, v in enumerate(series[name]))
        parts.append(f'<polyline class="forecast" points="{points}" fill="none" stroke="{colour}" stroke-width="2">'
                     f'<title>{escape(name)}</title></polyline>')
        parts.append(f'<text x="{px(n) + 8:.1f}" y="{pad + 14 * i + 4}" style="fill:{colour}">'
                     f'{escape(labels[i])}</text>')
    parts.append("</svg>")
    return ('<h2>Who will win</h2><p class="muted">Chance of first place (a shared first split) before round 1 and '
            f'after each round, from the ratings and the results so far ({forecast["simulations"]:,} simulations of '
            f'the rest of the {escape(forecast["format"])} each'
            + (f', scored {escape(forecast["points"])}' if forecast.get("points", FIDE_POINTS.label) != FIDE_POINTS.label
               else "")
            + f'; the leading {len(shown)} players)</p>'
            + "".join(parts))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _move_label(ply: int, san: str) -> str:
    return f"{(ply + 1) // 2}{'.' if ply % 2 else '…'}{san}"


def _moments_table(game: dict[str, Any]) -> str:
    if not game["moments"]:
        return '<p class="muted">No blunder, turning point or lead change.</p>'
    rows = []
    for m in game["moments"]:
        chips = "".join(f'<span class="chip {k}">{k.replace("_", " ")}</span>' for k in m["kinds"])
        cls = m["move_class"]
        rows.append(f'<tr><td class="l num">{_move_label(m["ply"], escape(m["move_san"]))}</td><td class="l">{chips}</td>'
                    f'<td class="l {cls[0] if cls else ""}">{cls or m.get("judgement") or DASH}</td>'
                    f'<td class="num">{m["win_before"]:.0f}% → {m["win_after"]:.0f}%</td>'
                    f'<td class="l">{escape(m["best_move_san"] or DASH)}</td></tr>')
    return ('<table class="moments"><thead><tr><th class="l">Move</th><th class="l">Moment</th><th class="l">Class</th>'
            '<th>White win%</th><th class="l">Best</th></tr></thead>' f'<tbody>{"".join(rows)}</tbody></table>')


def _game(game: dict[str, Any]) -> str:
    acc = game["accuracy"]
    classes = game["classes"] or {}
    elo = lambda e: "" if e is None else f" ({e})"  # noqa: E731
    return (
        f'<details class="game-entry" id="game-{escape(str(game["game_id"]), quote=True)}"><summary>'
        f'{escape(str(game["round"]))} · {escape(game["white"])}{elo(game["white_elo"])} – '
        f'{escape(game["black"])}{elo(game["black_elo"])} <span>{escape(game["result"])} · accuracy '
        f'{_f(acc["white"], "{:.1f}")} / {_f(acc["black"], "{:.1f}")} · {_count(len(game["moments"]), "moment")}'
        '</span></summary>'
        f'<div class="game"><p class="muted">{game["plies"]} plies · ?!/?/?? White {_classes(classes.get("white"))}, '
        f'Black {_classes(classes.get("black"))}</p>{_win_chart(game)}{_moments_table(game)}</div></details>')


def render_html(data: dict[str, Any]) -> str:
    """The page of :func:`livemon.app.report.event_report`'s data."""
    title = escape(data["title"])
    games = "".join(_game(g) for g in data["games"])
    cal = data.get("calibrated")
    cal_text = (f"estimates shown only with a 95% interval at most {data['max_interval_width']:.0f} Elo wide, "
                + (f"cut at the rating range fitted on {cal[0]:.0f}–{cal[1]:.0f}" if cal
                   else "no quality model of this profile"))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<title>{title}</title><style>{_CSS}</style></head><body><main>'
        f'<h1>{title}</h1><p class="muted">{len(data["games"])} games · evaluations: {escape(data["profile"])} · '
        f'{escape(cal_text)}. Accuracy and ?!/?/?? as lichess computes them; TPR and ±Elo by FIDE\'s rules.</p>'
        f'<h2>Leaderboard</h2>{_leaderboard(data["players"])}'
        f'{_forecast_chart(data.get("forecast"))}'
        f'<h2>Estimate</h2><p class="muted">● estimate with its 95% interval: the quality of the moves and the results, '
        f'with the other players\' ratings as the prior ("how is she playing among these players") · ◆ TPR from results '
        f'· | rating. "Moves only": the quality of the moves alone, each game read against the opponent\'s play and '
        f'rating</p>{_performance_chart(data["players"], cal)}'
        f'<h2>Games</h2>{games}</main></body></html>\n')
