"""Values computed ahead in a real server (posenc/ui/ahead.py; the suite's own servers run without them): after a page
with calls ahead has drawn and gone quiet, the server goes on computing (its CPU time grows, as an idle server's does
not), a step onto those values draws the page, and the server's log holds no traceback and no Streamlit warning of a
thread without a session."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from posenc.ui import ahead
from tools.liveserver import start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("on", [False, True], ids=["off", "on"])
def test_a_server_computes_ahead_once_the_page_is_drawn_and_logs_nothing(browser, on):
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc (not Linux)")
    proc, url, _ = start_server(env={ahead.ENV: "1" if on else "0"})
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{url}/compare", wait_until="domcontentloaded")
        wait_for_app(page, timeout_ms=120_000)
        time.sleep(ahead.GRACE_S + 0.2)
        before = _cpu_seconds(proc.pid)
        time.sleep(3)  # Compare's eight tables ahead take several CPU seconds on two cores; an idle server, a few ms
        spent = _cpu_seconds(proc.pid) - before
        assert (spent > 0.5) if on else (spent < 0.3), f"the server spent {spent:.2f} CPU s after the page went quiet"
        page.goto(f"{url}/compare?n=1024&d=66", wait_until="domcontentloaded")  # two of the values computed ahead
        wait_for_app(page, timeout_ms=120_000)
        page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
        assert page.locator("[data-testid='stException']").count() == 0
        page.close()
    finally:
        stop_server(proc)
    log = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    assert "Traceback" not in log and "missing ScriptRunContext" not in log, log[-3000:]
