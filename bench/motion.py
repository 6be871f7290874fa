"""Section 7: the moving figures and a slider step, in headless Chromium.

For each page with a moving figure: press play, let it run 3 s, read the frame rate the figure
measures itself (requestAnimationFrame draws per second; goal >= 30).  For a slider step: nudge the
first slider of the page and time until Streamlit's script run has finished and the charts drew.
"""

from __future__ import annotations

import statistics
import time

from playwright.sync_api import sync_playwright

from tools.liveserver import chromium_path, launch_chromium, motion_frame, start_server, stop_server, wait_for_app, wait_for_charts

PAGES = ("single_sine", "sincos_pair", "sinusoid", "rope")
FPS_GOAL = 30.0
PLAY_SECONDS = 3.0
STEPS = 5


def _open(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_text("Link to this view").first.wait_for(timeout=60_000)
    wait_for_app(page)
    wait_for_charts(page, page.locator("[data-testid='stVegaLiteChart']").count())
    page.wait_for_timeout(1500)  # every chart drawn: the figure plays on an idle page


def _slider_step_s(page) -> float:
    """Median seconds from a keyboard step on the first slider to the end of the rerun (charts drawn)."""
    thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
    charts = page.locator("[data-testid='stVegaLiteChart']").count()
    times = []
    for i in range(STEPS):
        thumb.focus()
        t0 = time.perf_counter()
        thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        page.wait_for_timeout(50)  # the rerun starts after the widget's debounce
        wait_for_app(page)
        wait_for_charts(page, charts)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def motion() -> list[dict]:
    if chromium_path() is None:
        return [{"skipped": "no Chromium on this machine"}]
    rows = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        proc, base, _ = start_server()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for name in PAGES:
                _open(page, f"{base}/{name}")
                frame = motion_frame(page)
                frame.locator("#play").click()
                page.wait_for_timeout(PLAY_SECONDS * 1000)
                state = frame.evaluate("() => window.posencMotion")
                frame.locator("#play").click()
                rows.append({"page": name, "frames": state["frames"], "fps_last_second": round(state["fps"], 1),
                             "fps_mean": round(state["mean_fps"], 1), "draws": state["draws"],
                             "slider_step_s": round(_slider_step_s(page), 3), "goal_met": state["mean_fps"] >= FPS_GOAL})
        finally:
            stop_server(proc)
            browser.close()
    return rows
