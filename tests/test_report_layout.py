"""The report's charts keep every label inside their drawing and the page, drawn by a real Chromium, at a wide and
a narrow window: a real round (its shipped depth-6 analyses in the store, so the scripted engine only names the
profile) with its leader's name made long."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from livemon.cli import main
from tests.conftest import cached_store, real
from tests.test_overlay import CDP, browser  # noqa: F401 - the fixture is used by name

ROUND = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
ANALYSES = "analyses_stockfish15.1_d6.jsonl.gz"
LONG = "Hernandez Hernandez de la Vega y Montalvo, Cristian Andres"  # 58 characters: past the widest name column

# each chart's labels against the drawing (its viewBox) and the drawing against the window
OVERFLOWS = """(() => {
  const out = [], name = (svg) => svg.id || svg.getAttribute('class');
  for (const svg of document.querySelectorAll('svg.fit')) {
    const box = svg.viewBox.baseVal;
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.x < -0.5 || b.x + b.width > box.width + 0.5)
        out.push(`${name(svg)}: "${t.textContent}" at ${b.x.toFixed(0)}-${(b.x + b.width).toFixed(0)} of ${box.width}`);
    }
    const r = svg.getBoundingClientRect();
    if (r.right > document.documentElement.clientWidth + 0.5)
      out.push(`${name(svg)}: ends at ${r.right.toFixed(0)} px in a ${document.documentElement.clientWidth} px window`);
  }
  return out;
})()"""


@pytest.fixture
def long_named_report(tmp_path: Path, fake_stockfish: str) -> Path:
    pgn = tmp_path / "round.pgn"
    pgn.write_text(real(ROUND).read_text(encoding="utf-8").replace("Hernandez, Cristian Andres", LONG),
                   encoding="utf-8")
    cached_store(tmp_path / "cache.sqlite", ANALYSES)
    (tmp_path / "config.toml").write_text(f'[engine]\npath = "{fake_stockfish}"\n')
    out = tmp_path / "event.html"
    assert main(["report", str(pgn), "--depth", "6", "--config", str(tmp_path / "config.toml"), "-o", str(out),
                 "--store", str(tmp_path / "cache.sqlite")]) == 0
    return out


async def test_every_chart_label_stays_in_its_chart_and_the_chart_in_the_window(
        browser: CDP, long_named_report: Path) -> None:  # noqa: F811 - the fixture
    html = long_named_report.read_text(encoding="utf-8")
    assert 'id="forecast-chart"' in html and 'id="performance-chart"' in html
    assert f"{LONG} " in html  # the legend names the long name whole (its chance beside it)
    # the estimate's row cuts it, whole in its tooltip
    assert re.search(f">{re.escape(LONG[:20])}[^<]*…<title>{re.escape(LONG)}</title>", html)
    for width in (1100, 700):
        await browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                           mobile=False)
        await browser.navigate(long_named_report.as_uri())
        assert await browser.js("document.querySelectorAll('svg.fit text').length") > 20
        assert await browser.js(OVERFLOWS) == [], width
