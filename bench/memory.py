"""Section ``memory``: what one worker's RSS does under the links and files a public server gets.

Reports (asserts nothing; the byte budgets are tracked in issue 15):

* cache-busting: ``links`` distinct heavy legal links (the Similarity page at d = 512 and n near its
  maximum, each n different), one fresh session each, one after another;
* the same heavy link opened ``links`` times (fresh sessions): does repeating one URL grow memory?
* exports: every full-array ``.npy`` download of the Similarity score matrices clicked in one session
  (the download buttons' data is a callable: the client asks for the deferred file over the websocket
  and fetches the media URL the worker answers with, as the browser does);
* uploads: ``uploads`` distinct 6,100 x 4,096 float16 ``.npy`` tables uploaded on the Learned tables page
  in one Chromium session (Playwright's ``set_input_files``; they go through ``/_stcore/upload_file``);
* raw uploads (issue 41, S1): twelve 45 MB files PUT by one session straight to Streamlit's upload endpoint, with
  no page asking for them (``bench.security.raw_uploads``).

Each part starts a fresh single worker behind nginx, so the parts do not inherit each other's caches.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.load import PORT, RssSampler, cluster_procs
from bench.stclient import ProtocolError, StSession
from deploy.cluster import Cluster

MB = 2**20
HEAVY = ("similarity", {"d": 512})  # default schemes; n varies


def _mb(x: int | None) -> float | None:
    return None if x is None else round(x / MB)


async def _open_close(base: str, page: str, query: dict, timeout: float) -> float:
    s = StSession(base, page, query, timeout=timeout)
    try:
        return (await s.open()).seconds
    finally:
        await s.close()


def _links(distinct: bool, links: int, timeout: float) -> dict:
    page, fixed = HEAVY
    with Cluster(workers=1, port=PORT) as c, RssSampler(cluster_procs(c)) as rss:
        start = rss.sample()["worker0"]
        times, after = [], []
        for i in range(links):
            n = 4096 - 8 * i if distinct else 4096
            times.append(asyncio.run(_open_close(c.url, page, {**fixed, "n": n}, timeout)))
            after.append(rss.sample()["worker0"])
        peak = rss.peak["worker0"]
    return {"links": links, "distinct": distinct, "url": f"/{page}?d=512&n=" + ("4096-8i" if distinct else "4096"),
            "rss_start_mb": _mb(start), "rss_after_first_mb": _mb(after[0]), "rss_after_last_mb": _mb(after[-1]),
            "rss_peak_mb": _mb(peak), "first_s": times[0], "median_s": float(np.median(times)),
            "rss_after_each_mb": [_mb(x) for x in after]}


async def _exports(base: str, timeout: float, rss: RssSampler) -> dict:
    page, fixed = HEAVY
    s = StSession(base, page, {**fixed, "n": 4096}, timeout=timeout)
    out: dict = {"files": []}
    try:
        run = await s.open()
        out["rss_before_mb"] = _mb(rss.sample()["worker0"])
        for label, fid in run.downloads.items():
            if ".npy" not in label:
                continue
            t0 = time.perf_counter()
            try:
                size, error = await s.download(fid), None
            except ProtocolError as exc:  # the page's own callable failed: what the viewer gets is an error
                size, error = 0, str(exc)
            out["files"].append({"button": label, "bytes": size, "seconds": round(time.perf_counter() - t0, 2),
                                 "rss_after_mb": _mb(rss.sample()["worker0"]), "error": error})
    finally:
        await s.close()
    return out


def exports(timeout: float = 300.0) -> dict:
    with Cluster(workers=1, port=PORT) as c, RssSampler(cluster_procs(c)) as rss:
        out = asyncio.run(_exports(c.url, timeout, rss))
        out["rss_start_mb"] = _mb(rss.samples[0][1].get("worker0"))
        time.sleep(2)
        out["rss_end_mb"] = _mb(rss.sample()["worker0"])
        out["rss_peak_mb"] = _mb(rss.peak["worker0"])
    return out


def uploads(count: int = 5, rows: int = 4096, cols: int = 4096, timeout_ms: float = 240_000) -> dict:
    from playwright.sync_api import sync_playwright

    from tools.liveserver import chromium_path, launch_chromium, wait_for_app

    if chromium_path() is None:
        return {"skipped": "no Chromium on this machine"}
    out: dict = {"count": count, "shape": [rows, cols], "dtype": "float16", "files": []}
    with tempfile.TemporaryDirectory(prefix="posenc-uploads-") as tmp:
        paths = []
        rng = np.random.default_rng(15)
        for i in range(count):
            p = Path(tmp) / f"table{i}.npy"
            np.save(p, rng.standard_normal((rows, cols), dtype=np.float32).astype(np.float16))
            paths.append(p)
        out["file_mb"] = round(paths[0].stat().st_size / MB, 1)
        with Cluster(workers=1, port=PORT) as c, RssSampler(cluster_procs(c)) as rss, sync_playwright() as pw:
            b = launch_chromium(pw)
            try:
                ctx = b.new_context(viewport={"width": 1400, "height": 1000})
                ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(c.url) else r.abort())
                page = ctx.new_page()
                page.goto(f"{c.url}/learned", wait_until="domcontentloaded")
                wait_for_app(page, timeout_ms=timeout_ms)
                out["rss_start_mb"] = _mb(rss.sample()["worker0"])
                page.get_by_text("Bring your own table", exact=False).first.click()  # the uploader sits in an expander
                for p in paths:
                    t0 = time.perf_counter()
                    page.locator("[data-testid='stFileUploader'] input[type='file']").first.set_input_files(str(p))
                    page.wait_for_function(
                        "name => document.body.innerText.includes(name)", arg=p.name, timeout=timeout_ms)
                    page.wait_for_timeout(500)
                    wait_for_app(page, timeout_ms=timeout_ms)
                    refused = page.locator("[data-testid='stAlertContentError']").filter(has_text=p.name).count() > 0
                    out["files"].append({"file": p.name, "seconds": round(time.perf_counter() - t0, 1),
                                         "rss_after_mb": _mb(rss.sample()["worker0"]), "accepted": not refused})
                out["rss_end_mb"] = _mb(rss.sample()["worker0"])
                out["rss_peak_mb"] = _mb(rss.peak["worker0"])
                out["page_errors"] = page.locator("[data-testid='stException']").count()
            finally:
                b.close()
    return out


def memory(links: int = 20, say=print) -> dict:
    out = {}
    out["cache_busting"] = _links(True, links, 300.0)
    say(f"  memory: {links} distinct heavy links: RSS {out['cache_busting']['rss_start_mb']} -> "
        f"{out['cache_busting']['rss_after_last_mb']} MB, peak {out['cache_busting']['rss_peak_mb']} MB")
    out["repeated_url"] = _links(False, links, 300.0)
    say(f"  memory: one heavy link x{links}: RSS after first {out['repeated_url']['rss_after_first_mb']} -> "
        f"after last {out['repeated_url']['rss_after_last_mb']} MB")
    out["exports"] = exports()
    say(f"  memory: {len(out['exports']['files'])} .npy exports: RSS {out['exports']['rss_before_mb']} -> "
        f"peak {out['exports']['rss_peak_mb']} MB")
    out["uploads"] = uploads()
    say(f"  memory: uploads: RSS {out['uploads'].get('rss_start_mb')} -> {out['uploads'].get('rss_end_mb')} MB, "
        f"peak {out['uploads'].get('rss_peak_mb')} MB")
    from bench.security import raw_uploads

    out["raw_uploads"] = raw_uploads(say=say)
    return out
