"""Every page in a real browser: renders without an exception, draws its charts, reacts to a
control, and writes the control into the URL.  Screenshots land in tests/artifacts/e2e/."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from apphelpers import open_page  # noqa: E402

from posenc.ui.pages import PAGES  # noqa: E402
from tools.liveserver import wait_for_app, wait_for_charts  # noqa: E402

pytestmark = pytest.mark.e2e


def _expected_charts(path: str) -> int:
    """How many charts AppTest sees on the page at default settings (the browser must draw them)."""
    return len(open_page(path).get("vega_lite_chart"))


def _chart_pixels(page) -> list[bytes]:
    charts = page.locator("[data-testid='stVegaLiteChart']")
    return [charts.nth(i).screenshot() for i in range(min(charts.count(), 6))]


def _move_a_control(page) -> bool:
    """Nudge the first slider (or select slider); else pick another option of the first
    segmented control.  Returns False when the page has neither."""
    thumbs = page.locator("[data-testid='stSlider'] [role='slider']")
    if thumbs.count():
        thumb = thumbs.first
        thumb.scroll_into_view_if_needed()
        thumb.focus()
        thumb.press("ArrowRight")
        return True
    groups = page.locator("[data-testid='stButtonGroup']")
    if groups.count():
        buttons = groups.first.locator("button")
        if buttons.count() > 1:
            buttons.nth(1).click()
            return True
    return False


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_page_in_browser(info, live_server, browser, artifacts):
    expected = _expected_charts(info.path)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{live_server['url']}/{info.url_path}", wait_until="domcontentloaded")
        wait_for_app(page)
        wait_for_charts(page, expected)
        page.screenshot(path=str(artifacts / f"{info.url_path}.png"), full_page=True)
        assert page.locator("[data-testid='stException']").count() == 0
        drawn = page.locator("[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg.marks").count()
        assert drawn >= expected
        if info.path == "pages/home.py":
            assert page.locator("[data-testid='stPageLink']").count() >= len(PAGES) - 1
            return
        before_url, before_pixels = page.url, _chart_pixels(page)
        assert _move_a_control(page), f"{info.path} has no slider or segmented control to move"
        page.wait_for_timeout(300)
        wait_for_app(page)
        wait_for_charts(page, expected)
        page.wait_for_timeout(500)
        assert page.locator("[data-testid='stException']").count() == 0
        query = parse_qs(urlsplit(page.url).query)
        assert page.url != before_url and query, f"the URL did not record the change: {page.url}"
        if expected:
            assert _chart_pixels(page) != before_pixels, "no chart changed after moving a control"
        page.screenshot(path=str(artifacts / f"{info.url_path}-moved.png"), full_page=True)
    finally:
        page.close()


def test_link_reopens_the_same_view(live_server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{live_server['url']}/raw_index?d=7&context=2%2C048", wait_until="domcontentloaded")
        wait_for_app(page)
        metric = page.get_by_test_id("stMetric").filter(has_text="max |value| at position")
        assert "2,047" in metric.get_by_test_id("stMetricValue").inner_text()
        assert page.locator("[data-testid='stException']").count() == 0
    finally:
        page.close()
