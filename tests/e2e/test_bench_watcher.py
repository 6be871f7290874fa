"""The interact benchmark's watcher counts what is painted: a DOM change, a draw on a data grid's canvas; and not a
canvas's fallback content, which a browser that draws canvases never paints (the data grid keeps its accessibility
table there and rebuilds it 200 ms after drawing its cells)."""

from __future__ import annotations

import pytest

from bench.interact import POLL_MS, WATCHER

pytestmark = pytest.mark.e2e

PAGE = """<div data-testid="stMain">
  <p id="text">before</p>
  <div data-testid="stDataFrame"><canvas id="grid" width="120" height="40"><table><tr><td id="cell">0.27</td></tr></table></canvas></div>
</div>"""


def _last(page) -> float:
    return page.evaluate("() => window.__posenc_last")


def test_the_watcher_counts_paints_not_a_canvas_fallback(shared_context):
    page = shared_context.new_page()
    try:
        page.set_content(PAGE)
        page.evaluate(WATCHER)
        page.wait_for_timeout(3 * POLL_MS)
        start = _last(page)

        page.evaluate("() => { document.getElementById('cell').firstChild.data = '0.62'; }")  # fallback content only
        page.wait_for_timeout(3 * POLL_MS)
        assert _last(page) == start

        before = page.evaluate("() => performance.now()")
        drew = page.evaluate("() => { document.getElementById('grid').getContext('2d').fillText('0.62', 4, 20); return performance.now(); }")
        page.wait_for_timeout(3 * POLL_MS)  # read on the watcher's next poll, dated at the draw, not at the poll
        assert before <= _last(page) <= drew

        page.wait_for_timeout(3 * POLL_MS)
        assert _last(page) <= drew  # a drawn canvas counts once per draw, not on every poll after

        edited = page.evaluate("() => { document.getElementById('text').textContent = 'after'; return performance.now(); }")
        page.wait_for_timeout(POLL_MS)
        assert _last(page) >= edited - 1
    finally:
        page.close()
