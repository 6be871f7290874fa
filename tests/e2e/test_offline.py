"""The app makes no request beyond its own server: no CDN fonts, no hub downloads, no icon service.

Every page is opened in Chromium with every request recorded; anything that leaves the loopback
server (or a data:/blob: URL) fails the test with the URL.
"""

from __future__ import annotations

import pytest

from posenc.ui.pages import PAGES
from tools.liveserver import wait_for_app, wait_for_charts

pytestmark = pytest.mark.e2e

LOCAL = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")


def test_no_page_requests_anything_outside_the_server(live_server, browser):
    outside: list[str] = []
    page = browser.new_page()
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(LOCAL) else None)
    for info in PAGES:
        page.goto(f"{live_server['url']}/{info.url_path}")
        wait_for_app(page, timeout_ms=120_000)
        wait_for_charts(page, 1, timeout_ms=60_000) if page.locator("[data-testid='stVegaLiteChart']").count() else None
        page.wait_for_timeout(500)
    page.close()
    assert outside == []
