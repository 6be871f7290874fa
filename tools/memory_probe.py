"""Server memory under the load patterns of issue 15 (one Streamlit process, RSS sampled with psutil).

    python tools/memory_probe.py --port 8900 [--only exports,busting,burst,uploads,uploads_max,repeat,repeat_twice,heavy] [--app path/to/app.py]

Each scenario starts its own server on 127.0.0.1, drives it with Debian's Chromium, samples the
server's RSS every 50 ms, and prints (and writes to --out) before / peak / after figures in MB:

- exports: the four full-array .npy exports of the Similarity score matrices at n = 4096, clicked;
- busting: twenty heavy links with distinct legal settings (cache-busting), one after another;
- burst: the same twenty links opened at once;
- uploads: five distinct 6,100 x 4,096 float16 tables (just under the 50 MB cap), one session each,
  each selected so every analysis runs (issue 15; now refused: over 2^24 values);
- uploads_max: five of the largest tables the loader takes, 3,050 x 4,096 float32 (49.97 MB each);
- repeat: one legal URL opened twenty times (a fresh session each time), and again once the closed sessions' reconnect
  window (120 s) has passed;
- repeat_twice: twenty visits, the reconnect window, twenty more (does the second twenty reuse the first's memory?);
- heavy: the heaviest legal URL, cold then warm (seconds until the page is idle).

A measurement script, not a test: it takes minutes and its numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.browser import RssSampler  # noqa: E402
from tools.liveserver import launch_chromium, start_server, stop_server, wait_for_app  # noqa: E402

MB = 2**20
HEAVY = "/context_extension?d=512&base=1000000000&train=1048576&s=64&probe=random"
SIMILARITY = "/similarity?schemes=Sinusoidal&schemes=RoPE&schemes=ALiBi&schemes=T5+relative+buckets&n=4096&d=512"


def Sampler(pid: int, every: float = 0.05):  # noqa: N802 -- the bench's sampler (process tree RSS, peak in a thread)
    return RssSampler(pid, interval=every)


def _open(browser, url: str, *, settle: float = 0.5):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = ctx.new_page()
    page.goto(url, wait_until="commit")
    page.wait_for_timeout(300)
    wait_for_app(page, timeout_ms=180_000)
    page.wait_for_timeout(int(settle * 1000))
    wait_for_app(page, timeout_ms=180_000)
    return ctx, page


def _mb(x: int) -> float:
    return round(x / MB, 1)


def scenario_exports(browser, url, s: Sampler) -> dict:
    before = s.rss()
    ctx, page = _open(browser, url + SIMILARITY)
    loaded = s.rss()
    sizes = []
    chart_row = page.get_by_test_id("stPopover").filter(has_text="Export").first
    for name in ("scores_sinusoidal", "scores_rope", "scores_alibi", "scores_t5"):
        chart_row.click()
        button = page.get_by_role("button", name=name)
        if button.count() == 0:
            button = page.get_by_text(name, exact=False)
        with page.expect_download(timeout=180_000) as info:
            button.first.click()
        path = info.value.path()
        sizes.append(Path(path).stat().st_size)
        page.keyboard.press("Escape")
        page.wait_for_timeout(300)
    clicked = s.rss()
    time.sleep(5)
    later = s.rss()
    ctx.close()
    time.sleep(3)
    return {"before": _mb(before), "page_loaded": _mb(loaded), "after_clicks": _mb(clicked), "5s_later": _mb(later),
            "after_close": _mb(s.rss()), "peak": _mb(s.peak), "download_sizes_mb": [_mb(x) for x in sizes]}


def busting_links() -> list[str]:
    links = [f"/similarity?schemes=Sinusoidal&schemes=RoPE&schemes=ALiBi&schemes=T5+relative+buckets&n=4096&d={512 - 2 * i}"
             for i in range(8)]
    links += [f"/context_extension?d={512 - 2 * i}&base=1000000000&train=1048576&s=64&probe=random" for i in range(6)]
    links += [f"/learned?table=untrained+random&seed={i + 1}&n=2048&position=4096" for i in range(3)]
    links += [f"/sinusoid?d=1024&n=8192&k={i + 1}" for i in range(3)]
    return links


def scenario_busting(browser, url, s: Sampler) -> dict:
    before = s.rss()
    trace = []
    for link in busting_links():
        ctx, page = _open(browser, url + link)
        trace.append(_mb(s.rss()))
        ctx.close()
    time.sleep(3)
    return {"before": _mb(before), "after": _mb(s.rss()), "peak": _mb(s.peak), "trace": trace}


def scenario_burst(browser, url, s: Sampler) -> dict:
    """The twenty cache-busting links opened at once (twenty sessions), then closed."""
    before = s.rss()
    pages = []
    for link in busting_links():
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.goto(url + link, wait_until="commit")
        pages.append((ctx, page))
    for _, page in pages:
        page.wait_for_timeout(300)
        wait_for_app(page, timeout_ms=600_000)
    loaded = s.rss()
    for ctx, _ in pages:
        ctx.close()
    time.sleep(3)
    return {"before": _mb(before), "all_loaded": _mb(loaded), "after_close": _mb(s.rss()), "peak": _mb(s.peak)}


def _table_file(seed: int, shape=(6100, 4096), dtype=np.float16) -> Path:
    arr = np.random.default_rng(seed).normal(0, 0.02, size=shape).astype(dtype)
    buf = io.BytesIO()
    np.save(buf, arr)
    path = Path(tempfile.gettempdir()) / f"posenc_probe_{seed}.npy"
    path.write_bytes(buf.getvalue())
    return path


def scenario_uploads(browser, url, s: Sampler, shape=(6100, 4096), dtype=np.float16) -> dict:
    files = [_table_file(i, shape, dtype) for i in range(5)]
    before = s.rss()
    contexts, trace = [], []
    for f in files:
        ctx, page = _open(browser, url + "/learned")
        page.get_by_text("Bring your own table", exact=False).first.click()  # open the expander
        page.locator("input[type=file]").first.set_input_files(str(f))
        page.get_by_text("Loaded", exact=False).or_(page.get_by_test_id("stAlertContentError")).first.wait_for(timeout=180_000)
        wait_for_app(page, timeout_ms=180_000)
        if page.get_by_text("Loaded", exact=False).count():  # select the upload in the table control (a list once there are uploads)
            page.get_by_test_id("stSelectbox").first.click()
            page.get_by_role("option", name=f.name, exact=False).first.click()
            page.wait_for_timeout(500)
            wait_for_app(page, timeout_ms=180_000)
        trace.append(_mb(s.rss()))
        contexts.append(ctx)
    after = s.rss()
    for ctx in contexts:
        ctx.close()
    time.sleep(3)
    for f in files:
        f.unlink(missing_ok=True)
    return {"before": _mb(before), "after_five": _mb(after), "after_close": _mb(s.rss()), "peak": _mb(s.peak), "trace": trace}


def scenario_repeat(browser, url, s: Sampler) -> dict:
    link = url + SIMILARITY
    trace = []
    ctx, page = _open(browser, link)  # warm the caches first
    ctx.close()
    time.sleep(1)
    before = s.rss()
    for _ in range(20):
        ctx, page = _open(browser, link)
        ctx.close()
        trace.append(_mb(s.rss()))
    time.sleep(3)
    after = s.rss()
    # a closed tab's session is kept for reconnecting (server.disconnectedSessionTTL, 120 s): past that, one more
    # visit lets the server drop the twenty, and RSS shows what stayed
    time.sleep(125)
    ctx, page = _open(browser, link)
    ctx.close()
    time.sleep(3)
    return {"before": _mb(before), "after": _mb(after), "after_ttl": _mb(s.rss()), "peak": _mb(s.peak), "trace": trace}


def scenario_heavy(browser, url, s: Sampler) -> dict:
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        ctx, page = _open(browser, url + HEAVY, settle=0.2)
        times.append(round(time.perf_counter() - t0, 2))
        ctx.close()
    return {"url": HEAVY, "seconds_cold_then_warm": times, "peak": _mb(s.peak)}


def scenario_uploads_max(browser, url, s: Sampler) -> dict:
    """Five of the largest tables the loader takes in bytes: 3050 x 4096 float32 (49.97 MB each)."""
    return scenario_uploads(browser, url, s, shape=(3050, 4096), dtype=np.float32)


def scenario_repeat_twice(browser, url, s: Sampler) -> dict:
    """Twenty visits of one URL, the reconnect window, twenty more: the second twenty must reuse what the first freed."""
    link = url + SIMILARITY
    ctx, page = _open(browser, link)
    ctx.close()
    time.sleep(1)
    marks = {"before": _mb(s.rss())}
    for batch in ("first_twenty", "second_twenty"):
        for _ in range(20):
            ctx, page = _open(browser, link)
            ctx.close()
        time.sleep(3)
        marks[batch] = _mb(s.rss())
        if batch == "first_twenty":
            time.sleep(125)
    marks["peak"] = _mb(s.peak)
    return marks


SCENARIOS = {"exports": scenario_exports, "repeat_twice": scenario_repeat_twice, "busting": scenario_busting, "burst": scenario_burst,
             "uploads": scenario_uploads,
             "uploads_max": scenario_uploads_max,
             "repeat": scenario_repeat, "heavy": scenario_heavy}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8900)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--app", default=str(ROOT / "app.py"))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        for name in args.only.split(","):
            proc, url, _ = start_server(args.port, app=Path(args.app))
            try:
                ctx, page = _open(browser, url + "/home")  # import everything once
                ctx.close()
                time.sleep(1)
                with Sampler(proc.pid) as s:
                    results[name] = SCENARIOS[name](browser, url, s)
            except Exception as exc:  # report and go on with the next scenario
                results[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            finally:
                stop_server(proc)
            print(name, json.dumps(results[name]), flush=True)
        browser.close()
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
