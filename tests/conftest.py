"""Suite-wide scheduling: every test of one page goes to one xdist worker, and page sweeps keep warm caches.

``python -m pytest`` runs with ``--dist loadgroup`` (pyproject.toml): a test parametrized by a page (``info``, a
posenc.ui.pages.PageInfo, or ``path``, a page file) in one of the page sweeps below is put in the group of its page, so
the worker that draws the page at its defaults once (apphelpers.shown_page), and whose live server computed its
figures, serves every sweep of that page.  Groups are whole units of work; xdist hands out the largest first.

A test marked ``warm_caches`` keeps Streamlit's caches from the test before it when that test was marked too
(tests/app/conftest.py clears them otherwise): the sweeps below call no monkeypatched code, so what one of them cached
is what the next would compute.

Every new AppTest scans all installed distributions' metadata for Streamlit components (about 0.25 CPU s of a
0.27 s run of a small page, with the ~800 packages of this environment); a running server scans once.  The scan is
done once per test process here (``_scan_components_once``), as the server does.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

# One BLAS thread in every test process: the xdist workers, the servers and lab processes they start (they inherit
# the environment) and the pages they run.  Two workers on two cores, each with OpenBLAS's default of a thread per
# core, oversubscribe the cores, and OpenBLAS's waiting threads spin (posenc/model/threads.py measured a forward 3.8-10x
# slower so).  The boundary sweep, the lab's baseline equivalence and lab training, 2 workers, measured 2026-12-05:
# 146 s and 146 s with the default, 129 s with one thread.  Set OPENBLAS_NUM_THREADS to run the suite otherwise.
from posenc.blas import ONE_THREAD  # noqa: E402  (loads numpy: this process is limited below, at run time)

for _var, _one in ONE_THREAD.items():
    os.environ.setdefault(_var, _one)

# No values computed ahead (posenc/ui/ahead.py) in the test processes and the servers they start: its thread would take
# the idle CPU of a suite that has none to spare, after every page run of every test, for steps no test takes.  The
# tests of it turn it on (tests/test_ui_ahead.py, tests/app/test_page_compare_ahead.py, tests/e2e/test_ahead_server.py).
os.environ.setdefault("POSENC_AHEAD", "0")

# the page sweeps whose tests are grouped by page (file names under tests/app and tests/e2e)
GROUPED = {
    "test_boundaries.py", "test_chart_keys.py", "test_exports_on_pages.py", "test_hostile_urls.py", "test_no_none.py",
    "test_plain_words.py", "test_quizzes.py", "test_rerun_sends_the_same.py", "test_settings_swap_data.py",
    "test_show_code.py", "test_slide_exports.py", "test_browser.py", "test_presenter.py",
    "test_hostile_links.py",
}


def page_of(item: pytest.Item) -> str | None:
    """The page file (e.g. "pages/rope.py") a grouped test is parametrized by, else None."""
    if Path(str(item.fspath)).name not in GROUPED or not hasattr(item, "callspec"):
        return None
    params = item.callspec.params
    path = getattr(params.get("info"), "path", None) or params.get("path")
    return path if isinstance(path, str) and path.startswith("pages/") else None


def _scan_components_once() -> None:
    """Streamlit's scan for installed components (streamlit.components.v2.manifest_scanner), done once per process:
    each AppTest builds a component manager of its own, which scans again (streamlit 1.67, AppTest._run)."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:
        return
    scan = manifest_scanner.scan_component_manifests
    if getattr(scan, "posenc_once", False):
        return

    @functools.cache
    def found(max_workers):
        return tuple(scan(max_workers))

    @functools.wraps(scan)
    def once(max_workers=None):
        return list(found(max_workers))

    once.posenc_once = True
    manifest_scanner.scan_component_manifests = once


def pytest_configure(config: pytest.Config) -> None:
    _scan_components_once()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")  # numpy loaded before the variable


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups into the test ids (xdist/remote.py)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        page = page_of(item)
        if page is not None:
            item.add_marker(pytest.mark.xdist_group(Path(page).stem))


def pytest_runtest_teardown(item: pytest.Item) -> None:
    # read by tests/app/conftest.py's cache fixture: whether the test before the next one kept warm caches
    item.session.posenc_warm_before = item.get_closest_marker("warm_caches") is not None


@pytest.fixture
def ahead_on(monkeypatch):
    """Values computed ahead turned on for one test, in this process (posenc/ui/ahead.py), with none queued before it,
    and none left to compute after it: a call still running would add computations to the next test's counts."""
    import time

    from posenc.ui import ahead

    def drain() -> None:
        with ahead._cond:
            ahead._pending.clear()
        t0 = time.monotonic()
        while ahead._current[0] is not None and time.monotonic() - t0 < 120:
            time.sleep(0.01)

    monkeypatch.setenv(ahead.ENV, "1")
    drain()
    yield ahead
    drain()
