"""Start the dashboard on a loopback port and drive it with Debian's Chromium.

Shared by the end-to-end tests (tests/e2e) and the benchmark (python -m bench).  Everything
stays on 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--no-sandbox", "--headless", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]


def chromium_path() -> str | None:
    """Path of a usable Chromium binary, or None."""
    for p in CHROMIUM_CANDIDATES:
        if os.path.exists(p) and os.access(p, os.X_OK):
            return p
    found = shutil.which("chromium")
    return found


def free_port() -> int:
    """A free loopback port; within POSENC_PORTS ("8800-8849") when that is set (a shared machine's own range)."""
    span = os.environ.get("POSENC_PORTS", "")
    if span:
        lo, _, hi = span.partition("-")
        for port in range(int(lo), int(hi or lo) + 1):
            with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
        raise RuntimeError(f"no free port in POSENC_PORTS={span}")
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(url: str, timeout: float = 2.0) -> bool:
    """True when /_stcore/health answers with the body "ok" (any unknown path also answers 200)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as resp:
            return resp.read().decode().strip() == "ok"
    except Exception:
        return False


def start_server(port: int | None = None, *, timeout: float = 90.0, extra_args: tuple[str, ...] = (),
                 app: Path = ROOT / "app.py", env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str, float]:
    """Launch ``streamlit run app.py`` on 127.0.0.1 (``env``: variables added to this process's environment for the
    server alone); return (process, base url, seconds to healthy)."""
    port = port or free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra_args,
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=Path(app).parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                            env={**os.environ, **env} if env else None)
    url = f"http://127.0.0.1:{port}"
    deadline = t0 + timeout
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"streamlit exited with code {proc.returncode}: {err[-2000:]}")
        if health(url):
            return proc, url, time.perf_counter() - t0
        time.sleep(0.05)  # a cold start is timed from here (bench.interact): poll finely
    stop_server(proc)
    raise RuntimeError(f"streamlit did not become healthy on {url} within {timeout:.0f} s")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


BROWSER_SETTLE_S = 1.0  # idle time after launching Chromium, before a cold server is started and timed


def idle_tab(browser, width: int = 1400, height: int = 1000):
    """A new tab of ``browser``, returned once the browser is idle: a person's browser is running when the server
    starts, so a cold start is timed from after this returns -- Chromium's own start (its processes, ~1 s of CPU on
    2 cores) and the tab's creation are over, and the tab's HTTP cache is still empty (a first visit)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto("about:blank")
    time.sleep(BROWSER_SETTLE_S)
    return page


def launch_chromium(playwright):
    """A headless Chromium from Debian's package (Playwright cannot download one here)."""
    path = chromium_path()
    if path is None:
        raise RuntimeError("no Chromium found (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)


def wait_for_app(page, timeout_ms: float = 60_000) -> None:
    """Wait until the app is connected and no script run is in progress (Streamlit's e2e idiom)."""
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout_ms)
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout_ms)


def wait_after_input(page, timeout_ms: float = 60_000) -> None:
    """A control was just moved: give its rerun 300 ms to start, then wait until no run is in progress."""
    page.wait_for_timeout(300)
    wait_for_app(page, timeout_ms=timeout_ms)


def wait_for_charts(page, count: int, timeout_ms: float = 60_000) -> None:
    """Wait until at least ``count`` Vega-Lite charts have drawn a canvas or an svg."""
    if count <= 0:
        return
    page.wait_for_function(
        """n => document.querySelectorAll("[data-testid='stVegaLiteChart'] canvas, [data-testid='stVegaLiteChart'] svg.marks").length >= n""",
        arg=count,
        timeout=timeout_ms,
    )


CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid=stVegaLiteChart]')].map(el => {
  const c = el.querySelector('canvas'), s = el.querySelector('svg.marks');
  return c ? c.toDataURL() : (s ? s.outerHTML.length + ':' + s.querySelectorAll('*').length : '');
})"""


def wait_for_settled_charts(page, timeout_s: float = 24.0, *, count: int = 1, quiet: int = 3) -> None:
    """Wait until the app is idle, at least ``count`` charts have drawn, and ``quiet`` reads of what every chart
    draws, 400 ms apart, agree (Streamlit draws a chart once it is on screen: give the page a viewport tall
    enough).  # NOTE: charts mount one by one after the script is idle, and on a loaded CI machine two of
    six were measured to mount more than 400 ms after the others; hence three agreeing reads, not two."""
    wait_for_app(page)
    wait_for_charts(page, count)
    reads: list = []
    for _ in range(int(timeout_s / 0.4)):
        page.wait_for_timeout(400)
        now = page.evaluate(CHARTS_DRAWN)
        reads = (reads + [now])[-quiet:]
        if len(reads) == quiet and all(r == now for r in reads) and all(now):
            return
    raise AssertionError(f"the charts kept changing for {timeout_s:g} s")


def motion_frame(page, timeout_s: float = 30.0):
    """The iframe of a page's moving figure (posenc.ui.motion), once its script has started."""
    for _ in range(int(timeout_s * 4)):
        for f in page.frames:
            try:
                if f.evaluate("() => typeof window.posencMotion === 'object'"):
                    return f
            except Exception:  # a frame that is still loading
                pass
        page.wait_for_timeout(250)
    raise RuntimeError("no moving figure started on the page")
