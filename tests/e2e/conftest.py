"""A live server and a headless Chromium for the end-to-end tests (loopback only, bounded), and the tabs they open pages in.

A page opened in a fresh browser context costs Chromium about 1.4 CPU s more than in a context that has loaded the app
before, and a new tab about 1 CPU s more than the next address in an open tab (measured 2026-12-05 on this 2-core host,
three rounds each, the server's figures already computed: raw_index 4.0 / 2.7 / 1.6 CPU s, rope 5.4 / 3.9 / 3.0): a
fresh context starts with an empty HTTP cache, so Streamlit's scripts are fetched and compiled again, and a new tab
starts a renderer.  So the tests that need no browser state of their own (no second user, no upload) open their pages
in two tabs of one context per test process (``tab``, ``second_tab``), each test starting with a new document: its
``goto`` replaces whatever the test before left.  Tests that are several users, or that must not share a cache with
another test, still take a context of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from posenc.ui.runclock import ENV as RUN_LOG
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
def live_server(tmp_path_factory):
    """The shared server; it logs each run of a page or a section (posenc.ui.runclock) to ``run_log``."""
    _require_browser()
    run_log = tmp_path_factory.mktemp("runclock") / "runs.log"
    proc, url, _ = start_server(env={RUN_LOG: str(run_log)})
    yield {"url": url, "pid": proc.pid, "run_log": run_log}
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


DESKTOP = {"width": 1400, "height": 1000}


@pytest.fixture(scope="session")
def shared_context(browser):
    """The browser context of this test process's ``tab`` and ``second_tab``."""
    ctx = browser.new_context(viewport=DESKTOP, color_scheme="light")
    yield ctx
    ctx.close()


_TABS: dict = {}  # name -> the open tab of shared_context


def _reused(ctx, name: str, *, front: bool):
    """The open tab ``name`` of ``ctx`` (opened if it is not), back in the light theme at 1400 x 1000, and brought to
    the front if ``front``.  Only the front tab of a context runs like a tab a person looks at: in the other one a
    moving figure drew 1 frame in 1.5 s instead of 93 and the dark theme was not applied (both tabs said "visible")."""
    page = _TABS.get(name)
    if page is None or page.is_closed():
        page = _TABS[name] = ctx.new_page()
    elif page.url != "about:blank":
        # leave the last test's page first: set back to light and 1400 px with it still open, the tab drew that page
        # again for nothing (about 1 CPU s of Chromium per test, measured on the sinusoid, RoPE and Similarity, 2026-12-07)
        page.goto("about:blank")
    page.emulate_media(color_scheme="light")
    page.set_viewport_size(DESKTOP)
    if front:
        page.bring_to_front()
    return page


@pytest.fixture
def tab(shared_context):
    """A tab for the test, in front, at 1400 x 1000 in the light theme; the test's first ``goto`` gives it a new
    document."""
    return _reused(shared_context, "first", front=True)


@pytest.fixture
def second_tab(shared_context):
    """A second tab of the same context, for a test that compares two documents or views one at another width; the
    test brings it to the front (``bring_to_front``) before it loads a page in it, and ``tab`` back after."""
    return _reused(shared_context, "second", front=False)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
