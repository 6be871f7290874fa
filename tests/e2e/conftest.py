"""A live server and a headless Chromium for the end-to-end tests (loopback only, bounded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.liveserver import chromium_path, launch_chromium, start_server, stop_server

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "e2e"


def _require_browser():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright is not installed (pip install -r requirements-dev.txt)")
    if chromium_path() is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium); .ci/run installs it")


@pytest.fixture(scope="session")
def live_server():
    _require_browser()
    proc, url, _ = start_server()
    yield {"url": url, "pid": proc.pid}
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
