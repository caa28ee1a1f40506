"""Pure text helpers for the commentary screen: numbers, clocks, bars and plots.

Kept apart from the widgets so that every figure the screen shows can be
checked without running an app, and so that ``None`` and infinities are
rendered the same way (as "—") everywhere.

>>> dash(None), dash(float("inf")), dash(2754.4)
('—', '—', '2754')
>>> clock(3725.0), clock(59.4), clock(None)
('1:02:05', '0:59', '—')
>>> eval_text(35), eval_text(-3900), eval_text(None)
('+0.35', '-M', '…')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from livemon.live.audience import more_games
from livemon.rating.evaluation import MATE_CP

DASH = "—"

#: gain histogram display: 25 cp bins centred on multiples of 25, tails clamped
GAIN_BIN = 25
GAIN_LO = -300
GAIN_HI = 100


def finite(x: float | None) -> bool:
    """True for a real, finite number (None, NaN and ±inf are "no value")."""
    return x is not None and math.isfinite(x)


def dash(x: float | None, fmt: str = "{:.0f}") -> str:
    """``fmt`` of ``x``, or "—" when there is no finite value."""
    return fmt.format(x) if finite(x) else DASH


def plus_minus(mu: float | None, sd: float | None, fmt: str = "{:.0f}", sep: str = " ± ") -> str:
    """``μ ± σ``, "—" without μ; σ is left out when unknown.

    >>> plus_minus(2790.4, 45.2), plus_minus(1.234, 0.3, "{:.2f}"), plus_minus(None, 3.0)
    ('2790 ± 45', '1.23 ± 0.30', '—')
    """
    if not finite(mu):
        return DASH
    return f"{fmt.format(mu)}{sep}{fmt.format(sd)}" if finite(sd) else fmt.format(mu)


def elo_range(rng: Sequence[float | None] | None) -> str:
    """A 95% interval as ``lo–hi``; an open end shows as "—".

    >>> elo_range((2601.2, 2907.0)), elo_range((2601.2, None)), elo_range(None)
    ('2601–2907', '2601–—', '—')
    """
    if not rng or len(rng) != 2 or not (finite(rng[0]) or finite(rng[1])):
        return DASH
    return f"{dash(rng[0])}–{dash(rng[1])}"


def clock(seconds: float | None) -> str:
    """A chess clock, ``h:mm:ss`` or ``m:ss``; "—" when unknown."""
    if not finite(seconds):
        return DASH
    s = max(0, int(seconds))  # type: ignore[arg-type]
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def eval_text(cp: int | None, mate: int | None = None) -> str:
    """White's-view evaluation in pawns, "…" while awaiting analysis; a mate as "#3" (White mates in 3) or
    "#-2" (Black mates in 2) when its distance ``mate`` (moves, White's view) is known, "#" once mate is on
    the board, else ±M.

    >>> eval_text(3900, 3), eval_text(-3900, -2), eval_text(3900, 0), eval_text(120, 3)
    ('#3', '#-2', '#', '+1.20')
    """
    if cp is None:
        return "…"
    if abs(cp) >= MATE_CP:
        if mate is not None:
            return f"#{mate}" if mate else "#"
        return "+M" if cp > 0 else "-M"
    return f"{cp / 100:+.2f}"


def white_share(cp: int | None, scale: int = 500) -> float:
    """White's part of an eval bar in [0, 1]: linear in cp, saturating at ±``scale``.

    >>> white_share(0), white_share(250), white_share(-9000), white_share(None)
    (0.5, 0.75, 0.0, 0.5)
    """
    if cp is None:
        return 0.5
    return 0.5 + max(-scale, min(scale, cp)) / (2 * scale)


def eval_bar(cp: int | None, width: int = 10) -> str:
    """A horizontal eval bar: "█" for White's share, "░" for Black's.

    >>> eval_bar(0, 10), eval_bar(500, 4), eval_bar(None, 4)
    ('█████░░░░░', '████', '····')
    """
    if cp is None:
        return "·" * width
    white = round(white_share(cp) * width)
    return "█" * white + "░" * (width - white)


def move_label(ply: int, san: str | None) -> str:
    """``12.Nf3`` after White's move, ``12…Bd6`` after Black's; "—" before any move.

    >>> move_label(1, "e4"), move_label(24, "Bd6"), move_label(0, None)
    ('1.e4', '12…Bd6', '—')
    """
    if ply <= 0 or not san:
        return DASH
    number = (ply + 1) // 2
    return f"{number}.{san}" if ply % 2 else f"{number}…{san}"


def ply_gains(evals: Sequence[int | None]) -> list[int | None]:
    """The mover's gain at each ply (cp, ≤ 0 is a loss) from White's-view evals.

    ``evals[0]`` is the start position, so the result has ``len(evals) - 1``
    entries; a gain is ``None`` where either evaluation is missing.

    >>> ply_gains([20, 30, 80, None, 60])
    [10, -50, None, None]
    """
    out: list[int | None] = []
    for i in range(1, len(evals)):
        before, after = evals[i - 1], evals[i]
        if before is None or after is None:
            out.append(None)
        else:
            out.append(after - before if i % 2 else before - after)
    return out


def bin_gains(histogram: Mapping[str, int] | Mapping[int, int] | None) -> list[tuple[int, int]]:
    """Coarse bins of a sparse ``{gain: count}``: (bin centre, count), tails clamped.

    Bins are 25 cp wide and centred on multiples of 25 (so a gain of 0 and the
    small inaccuracies around it share the middle bin), from −300 to +100;
    anything beyond either end is counted in the end bin.

    >>> b = dict(bin_gains({"0": 5, "-12": 1, "-13": 2, "-900": 1, "250": 1}))
    >>> b[0], b[-25], b[-300], b[100], len(b)
    (6, 2, 1, 1, 17)
    """
    lo, hi = GAIN_LO // GAIN_BIN, GAIN_HI // GAIN_BIN
    counts = [0] * (hi - lo + 1)
    for key, n in (histogram or {}).items():
        idx = (int(key) + GAIN_BIN // 2) // GAIN_BIN
        counts[min(hi, max(lo, idx)) - lo] += int(n)
    return [((lo + i) * GAIN_BIN, c) for i, c in enumerate(counts)]


def downsample(values: Sequence[float | None], width: int, worst: bool = False) -> list[float | None]:
    """At most ``width`` values: each column keeps the last value of its run (or the lowest).

    >>> downsample([1, 2, 3, 4, 5, 6], 3), downsample([1, -7, 3, 4], 2, worst=True)
    ([2, 4, 6], [-7, 3])
    """
    n = len(values)
    if width <= 0:
        return []
    if n <= width:
        return list(values)
    out: list[float | None] = []
    for col in range(width):
        chunk = [v for v in values[col * n // width : (col + 1) * n // width] if v is not None]
        out.append((min(chunk) if worst else chunk[-1]) if chunk else None)
    return out


def column_chart(values: Sequence[float | None], height: int, lo: float, hi: float, col_width: int = 1) -> list[str]:
    """Rows of a column chart of ``values`` clamped to [lo, hi], zero as the baseline.

    Positive values grow up from the zero line and negative ones down, at half
    a row's resolution ("▄"/"▀" tips); a missing value is an empty column. With
    ``lo = 0`` it is an ordinary histogram. Pure text so that it renders the
    same in a test, a screenshot and a terminal.

    >>> for row in column_chart([2, -2, 0.5, None], 4, -2, 2): print(repr(row))
    '█   '
    '█ ▄ '
    ' █  '
    ' █  '
    """
    if height <= 0 or hi <= lo:
        return []
    halves = 2 * height
    per_half = (hi - lo) / halves
    zero = round((0 - lo) / per_half) if lo < 0 else 0  # half-rows below the baseline
    grid = [[" "] * len(values) for _ in range(height)]
    for x, v in enumerate(values):
        if v is None:
            continue
        top = round((max(lo, min(hi, v)) - lo) / per_half)  # in half-rows from the bottom
        a, b = sorted((zero, top))
        if a == b and v != 0:
            b = a + 1 if v > 0 else a  # a tiny value still shows a sliver
            a = a if v > 0 else a - 1
        for h in range(max(a, 0), min(b, halves)):
            row = height - 1 - h // 2
            lower = h % 2 == 0
            cell = grid[row][x]
            if cell == "█" or (cell == "▄" and not lower) or (cell == "▀" and lower):
                grid[row][x] = "█"
            else:
                grid[row][x] = "▄" if lower else "▀"
    return ["".join(c * col_width for c in row) for row in grid]


def shown_estimate(perf: Mapping[str, object] | None, display: Mapping[str, object] | None,
                   more: str = "more games") -> tuple[str, str]:
    """An estimate and its 95% range as text, as the display rule allows
    (:func:`livemon.live.audience.estimate_display`, the one rule of every screen): the figure and its range (cut
    at the ratings the model was fitted on: an open low end reads "≤1409", an open high end "2865+", as the web pages
    write them, never "–>" that reads as an arrow) when shown, else a dash and "n more games"
    (a dash when more games cannot be told). Without a rule (a message of an older monitor), the figure as it is.

    >>> shown_estimate({"elo": 2793.0}, {"show": True, "elo": 2793.0, "cr95": [2300.0, 2865.0], "open": "high"})
    ('2793', '2300–2865+')
    >>> shown_estimate({"elo": 2793.0, "cr95": [2239.0, 3348.0]}, {"show": False, "more_games": 2})
    ('—', '2 more games')
    >>> shown_estimate({"elo": 2793.0}, {"show": False, "more_games": 1})
    ('—', '1 more game')
    >>> shown_estimate({"elo": 2793.0}, {"show": False, "more_games": None}), shown_estimate({}, None)
    (('—', '—'), ('—', '—'))
    """
    if display is None:
        perf = perf or {}
        elo, cr = perf.get("elo"), perf.get("cr95")
        prefix = "~" if perf.get("extrapolated") else ""
        return (prefix + dash(elo) if isinstance(elo, (int, float)) else DASH,
                elo_range(cr) if isinstance(cr, (list, tuple)) else DASH)
    if not display.get("show"):
        n = display.get("more_games")
        return DASH, (more_games(int(n), more) if isinstance(n, int) and n else DASH)
    cr = display.get("cr95")
    elo = display.get("elo")
    if not isinstance(cr, (list, tuple)) or len(cr) != 2:
        return dash(elo if isinstance(elo, (int, float)) else None), DASH
    opened = display.get("open")
    low = ("≤" if opened in ("low", "both") else "") + f"{cr[0]:.0f}"
    high = f"{cr[1]:.0f}" + ("+" if opened in ("high", "both") else "")
    return dash(elo if isinstance(elo, (int, float)) else None), f"{low}–{high}"
