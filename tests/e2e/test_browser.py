"""Every page in a real browser, one tab per page: it renders without an exception and draws its charts; at 390 px wide
nothing is wider than the screen and every formula fits, and in the dark theme text reads against its background
(browserchecks.py); a control moved, a chart changes and the link records it; and no request leaves its own server
(no CDN fonts, no hub downloads, no icon service: every request is recorded, and one that leaves the loopback server,
other than a data:/blob: URL, fails the test with its URL).  Screenshots land in tests/artifacts/e2e/ (<page>.png,
<page>-390.png, <page>-dark.png, <page>-moved.png).

The desktop view is the test process's tab (tests/e2e/conftest.py: one browser context per process, whose cache keeps
Streamlit's scripts compiled); the dark view is that tab switched to the dark theme; the 390 px view is the second tab
loaded at that width (browserchecks.check_phone says why not the first tab narrowed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from apphelpers import open_page  # noqa: E402
from browserchecks import check_dark, check_phone, where  # noqa: E402

from posenc.ui.pages import PAGES  # noqa: E402
from tools.liveserver import wait_after_input, wait_for_app, wait_for_charts  # noqa: E402

pytestmark = pytest.mark.e2e
LOCAL = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")


def _expected_charts(path: str) -> int:
    """How many charts AppTest sees on the page at default settings, its lazy boxes closed as a new visit finds them
    (the browser must draw them)."""
    return len(open_page(path).get("vega_lite_chart"))


def _chart_pixels(page) -> list[bytes]:
    charts = page.locator("[data-testid='stVegaLiteChart']")
    shown = [charts.nth(i) for i in range(charts.count()) if charts.nth(i).is_visible()]  # not those in a closed expander
    return [c.screenshot() for c in shown[:6]]


def nudge(thumb) -> None:
    """One keyboard step on a slider (a react-aria range input): right, or left at its maximum."""
    at_max = thumb.evaluate("e => Number(e.value) >= Number(e.max)")
    thumb.focus()
    thumb.press("ArrowLeft" if at_max else "ArrowRight")


def _edit_second_sentence(page) -> bool:
    box = page.locator("[data-testid='stTextInput'] input").nth(1)
    box.fill("Cat sat on the big table")
    box.press("Enter")
    return True


# Pages whose first slider-like control changes numbers but no chart get a chart-changing action.
ACTIONS = {"pages/index_length.py": _edit_second_sentence}
# Pages whose first control changes what the page says, not (necessarily) a figure: the claims' settings, the
# real model's exercise threshold and passage length (its figures wait for a forward pass of several seconds).
TEXT_CHANGES = {"pages/claims.py", "pages/real_relative.py", "pages/real_extension.py"}


def _move_a_control(page) -> bool:
    """Nudge the first slider (or select slider); else step up the first number input; else pick
    another option of the first segmented control.  Returns False when the page has none."""
    thumbs = page.locator("[data-testid='stSlider'] input[type='range']")
    if thumbs.count():
        nudge(thumbs.first)
        return True
    steps = page.locator("[data-testid='stNumberInputStepUp']")
    if steps.count():
        steps.first.scroll_into_view_if_needed()
        steps.first.click()
        return True
    groups = page.locator("[data-testid='stButtonGroup']")
    if groups.count():
        buttons = groups.first.locator("button")
        if buttons.count() > 1:
            buttons.nth(1).click()
            return True
    return False


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_page_in_browser(info, live_server, tab, second_tab, artifacts):
    expected = _expected_charts(info.path)
    page = tab
    outside: list[str] = []
    record = lambda r: outside.append(r.url) if not r.url.startswith(LOCAL) else None  # noqa: E731
    page.on("request", record)
    try:
        page.goto(f"{live_server['url']}/{where(info)}", wait_until="domcontentloaded")
        # routed by app.py (a fresh server's first run may be the legacy pages/ run, which
        # frame.ensure_router turns into a rerun): the sections and the link slot are there
        page.wait_for_selector("[data-testid='stNavSectionHeader']", timeout=60_000)
        page.get_by_text("Link to this view").first.wait_for(timeout=60_000)
        wait_for_app(page)
        wait_for_charts(page, expected)
        page.screenshot(path=str(artifacts / f"{info.url_path}.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.get_by_text("Page not found").count() == 0
        drawn = page.locator("[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg.marks").count()
        assert drawn >= expected
        check_phone(second_tab, page.url, artifacts / f"{info.url_path}-390.png")
        page.bring_to_front()
        check_dark(page, artifacts / f"{info.url_path}-dark.png")
        page.set_viewport_size({"width": 1400, "height": 1000})
        if info.path == "pages/home.py":
            page.locator("[data-testid='stPageLink']").nth(len(PAGES) - 2).wait_for(timeout=60_000)
            assert page.locator("[data-testid='stPageLink']").count() >= len(PAGES) - 1
            assert outside == []
            return
        before_url, before_pixels = page.url, _chart_pixels(page)
        before_text = page.locator("[data-testid='stMain']").inner_text()
        action = ACTIONS.get(info.path, _move_a_control)
        assert action(page), f"{info.path} has no slider, number input or segmented control to move"
        wait_after_input(page)
        wait_for_charts(page, expected)
        page.wait_for_timeout(500)
        assert page.locator("[data-testid='stException']").count() == 0
        query = parse_qs(urlsplit(page.url).query)
        assert page.url != before_url and query, f"the URL did not record the change: {page.url}"
        if info.path in TEXT_CHANGES:
            assert page.locator("[data-testid='stMain']").inner_text() != before_text, "nothing changed after moving a control"
        elif expected:
            assert _chart_pixels(page) != before_pixels, "no chart changed after moving a control"
        page.screenshot(path=str(artifacts / f"{info.url_path}-moved.png"), full_page=True)
        assert outside == [], "requests that left the server"
    finally:
        page.remove_listener("request", record)


def test_link_reopens_the_same_view(live_server, tab):
    tab.goto(f"{live_server['url']}/raw_index?d=7&context=2%2C048", wait_until="domcontentloaded")
    wait_for_app(tab)
    metric = tab.get_by_test_id("stMetric").filter(has_text="max |value| at position")
    assert "2,047" in metric.get_by_test_id("stMetricValue").inner_text()
    assert tab.locator("[data-testid='stException']").count() == 0
