"""Sections 5-6: cold start to first render in headless Chromium; server memory."""

from __future__ import annotations

import threading
import time
from urllib.parse import urlencode

import psutil
from playwright.sync_api import sync_playwright

from posenc.ui.pages import PAGES, address
from tools.liveserver import chromium_path, idle_tab, launch_chromium, start_server, stop_server, wait_for_app


class RssSampler:
    """Samples a process tree's RSS every ``interval`` seconds in a background thread."""

    def __init__(self, pid: int, interval: float = 0.2):
        self.proc = psutil.Process(pid)
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        total = self.proc.memory_info().rss
        for child in self.proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self):
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.rss())
            except psutil.Error:
                return
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)


def _url(base: str, path: str, query: dict) -> str:
    info = next(p for p in PAGES if p.path == path)
    pairs = []
    for k, v in query.items():
        for item in v if isinstance(v, list) else [v]:
            pairs.append((k, item))
    return f"{base}/{address(info)}" + (f"?{urlencode(pairs)}" if pairs else "")


def browser(max_queries: dict[str, dict], reruns: int = 50) -> dict:
    if chromium_path() is None:
        return {"skipped": "no Chromium on this machine"}
    out: dict = {}
    with sync_playwright() as p:
        browser_ = launch_chromium(p)
        page = idle_tab(browser_)  # as in bench.interact: the server's cold start, not the browser's
        t0 = time.perf_counter()
        proc, base, healthy = start_server()
        try:
            page.goto(base + "/", wait_until="domcontentloaded")
            wait_for_app(page)
            page.wait_for_selector("[data-testid='stDataFrame'], [data-testid='stVegaLiteChart']", timeout=60_000)
            out["cold_start_healthy_s"] = healthy
            out["cold_start_first_render_s"] = time.perf_counter() - t0
            with RssSampler(proc.pid) as sampler:
                out["rss_after_start_mb"] = sampler.rss() / 2**20
                for info in PAGES:
                    page.goto(_url(base, info.path, max_queries.get(info.path, {})), wait_until="domcontentloaded")
                    wait_for_app(page, timeout_ms=120_000)
                out["rss_after_all_pages_max_mb"] = sampler.rss() / 2**20
                # 50 reruns in the same session: nudge the first slider of the sinusoid page
                page.goto(_url(base, "pages/sinusoid.py", {}), wait_until="domcontentloaded")
                wait_for_app(page)
                before = sampler.rss()
                thumb = page.locator("[data-testid='stSlider'] input[type='range']").first
                for i in range(reruns):
                    thumb.focus()
                    thumb.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
                    page.wait_for_timeout(150)
                    wait_for_app(page)
                after = sampler.rss()
                out["reruns"] = reruns
                out["rss_before_reruns_mb"] = before / 2**20
                out["rss_after_reruns_mb"] = after / 2**20
                out["rss_growth_over_reruns"] = (after - before) / before
                out["peak_rss_mb"] = sampler.peak / 2**20
            out["goal_met"] = bool(out["peak_rss_mb"] <= 600 and out["rss_growth_over_reruns"] < 0.10)
        finally:
            stop_server(proc)
            browser_.close()
    return out
