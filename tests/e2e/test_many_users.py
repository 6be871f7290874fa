"""Ten concurrent browser sessions on one server, each with its own settings: each must see its
own numbers (no cross-talk through caches or module state).  Loopback only, bounded in time."""

from __future__ import annotations

import json
import re
import urllib.request

import psutil
import pytest

from tools.liveserver import wait_for_app

pytestmark = pytest.mark.e2e
SESSIONS = 10


def _metric(page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has_text=label)
    return box.get_by_test_id("stMetricValue").inner_text(timeout=60_000)


def _active_sessions(url: str) -> float | None:
    try:
        text = urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=5).read().decode()
    except Exception:
        return None
    values = [float(m) for m in re.findall(r"^active_sessions\S*\s+([0-9.eE+-]+)", text, flags=re.M)]
    return sum(values) if values else None


def test_ten_sessions_see_their_own_numbers(live_server, browser, record_property, artifacts):
    server = psutil.Process(live_server["pid"])
    rss_before = server.memory_info().rss
    contexts, pages = [], []
    widths = [3 + 7 * i for i in range(SESSIONS)]  # a different d_model per session
    try:
        for d in widths:
            ctx = browser.new_context(viewport={"width": 1200, "height": 900})
            page = ctx.new_page()
            page.goto(f"{live_server['url']}/raw_index?context=2%2C048&d={d}", wait_until="commit")
            contexts.append(ctx)
            pages.append(page)
        for page in pages:
            wait_for_app(page, timeout_ms=120_000)
        active = _active_sessions(live_server["url"])
        # each session's own view: its d_model slider at its d (the metric "‖PE‖ there", 2047·√d, that this read before
        # waits for the raw index exercise's reveal now), and the metrics drawn
        for d, page in zip(widths, pages):
            assert _metric(page, "max |value| at position") == "2,047"
            assert page.locator("[data-testid='stSlider'] input[type='range']").nth(1).input_value() == str(d), d
        # every session moves its own d slider one step at (nearly) the same time
        for page in pages:
            thumb = page.locator("[data-testid='stSlider'] input[type='range']").nth(1)  # d_model
            thumb.focus()
            thumb.press("ArrowRight")
        for d, page in zip(widths, pages):
            page.wait_for_timeout(200)
            wait_for_app(page, timeout_ms=120_000)
            page.wait_for_function("d => new URL(location.href).searchParams.get('d') === d", arg=str(d + 1),
                                   timeout=60_000)  # the server wrote the session's own new value into its link
            assert page.locator("[data-testid='stException']").count() == 0
        rss_after = server.memory_info().rss
        figures = {"sessions": SESSIONS, "active_sessions_metric": active,
                   "rss_before_mb": round(rss_before / 2**20, 1), "rss_after_mb": round(rss_after / 2**20, 1)}
        for k, v in figures.items():
            record_property(k, v)
        (artifacts.parent / "many_users.json").write_text(json.dumps(figures, indent=1))
        if active is not None:
            assert active >= SESSIONS
        assert rss_after < 1.5 * 2**30, f"server RSS {rss_after / 2**20:.0f} MB with {SESSIONS} sessions"
    finally:
        for ctx in contexts:
            ctx.close()
