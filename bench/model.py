"""Section "model": the real model of the "Inside a real model" pages (posenc.model, SmolLM2-135M-Instruct).

- load: posenc.model.load() in a fresh process (read the GGUF, build the tokenizer, unpack the blocks);
- forward at 128 and 512 tokens (median of 3 wall and CPU seconds, after one warm-up; the 1-minute load average beside
  them, since the host is shared), with the BLAS library held to one thread
  (posenc.model.threads.BLAS_THREADS, what the app runs) and left at its default;
- RSS of a process that imported the dashboard's modules, before the model, after loading it and after the
  forwards, and the peak: goals 128 <= 0.5 s, 512 <= 2 s, the RSS the model holds <= +400 MB.

Each measurement runs in its own child process, so one's memory does not count in another's.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOALS = {"forward_128_s": 0.5, "forward_512_s": 2.0, "rss_model_after_mb": 400.0}  # RSS held with the model loaded and used

_CHILD = r"""
import json, resource, statistics, sys, time
import psutil
import numpy, pandas, altair, streamlit  # what a worker has imported before any page runs
import posenc, posenc.views.real_model
proc = psutil.Process()
out = {"rss_before_mb": proc.memory_info().rss / 2**20}
import posenc.model as pm
from posenc.model import threads
threads.BLAS_THREADS = None if sys.argv[1] == "default" else int(sys.argv[1])
t = time.perf_counter(); m = pm.load(); out["load_s"] = time.perf_counter() - t
out["rss_loaded_mb"] = proc.memory_info().rss / 2**20
out["rss_peak_load_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
text = open(sys.argv[2], encoding="utf-8").read() * 4
for n in (128, 512):
    ids = m.encode(text)[:n]
    m.logits(ids)
    times, cpu = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time(); m.logits(ids)
        times.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    out[f"forward_{n}_s"] = statistics.median(times)
    out[f"forward_{n}_cpu_s"] = statistics.median(cpu)  # CPU seconds: what the forward costs whatever else runs
out["load_avg_1min"] = __import__("os").getloadavg()[0]
out["rss_after_mb"] = proc.memory_info().rss / 2**20
out["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def _child(threads: str) -> dict:
    text = ROOT / "posenc" / "data" / "texts" / "alice.txt"
    done = subprocess.run([sys.executable, "-c", _CHILD, threads, str(text)], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def model() -> dict:
    import posenc.model as pm

    if not pm.available():
        return {"skipped": f"the bundled model is not installed: {pm.INSTALL}"}
    rows = []
    for threads in ("1", "default"):
        r = _child(threads)
        r["blas_threads"] = threads
        r["rss_model_peak_mb"] = r["rss_peak_mb"] - r["rss_before_mb"]  # the transient peak (the load: the file mapped while unpacked)
        r["rss_model_idle_mb"] = r["rss_loaded_mb"] - r["rss_before_mb"]
        r["rss_model_after_mb"] = r["rss_after_mb"] - r["rss_before_mb"]  # held once the forwards are done
        r["goals_met"] = {k: bool(r[k] <= v) for k, v in GOALS.items()}
        rows.append({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})
    return {"goals": GOALS, "runs": rows, "browser": pages_in_browser()}


# ---- the pages in the browser: first paint (cold and cached), a step of each control and a typed text, worker RSS ----
SECTION = "Inside a real model"
PAGE_GOALS = {"first_paint_cached_s": 1.5}  # issue 38, item 5: the pages' first paint at their defaults, cached
TYPED = {"pages/real_order.py": "Der Hund biss den Mann.", "pages/real_heads.py": "Der Hund biss den Mann. Der Hund biss",
         "pages/real_relative.py": "Der Hund biss den Mann."}  # a text no run has seen: every forward a cache miss


def _typed_step(page, text: str) -> float:
    """Seconds from Enter in the page's first text box (now holding ``text``) to the settled repaint."""
    from bench.interact import WATCHER, _settle

    box = page.locator("[data-testid='stMain'] [data-testid='stTextInput'] input").first
    box.scroll_into_view_if_needed()
    box.fill(text)
    page.evaluate(WATCHER)
    t0 = page.evaluate("() => { window.__posenc_input = null; return performance.now(); }")
    box.press("Enter")
    last = _settle(page, t0) + t0
    pressed = page.evaluate("() => window.__posenc_input")
    return max(last - (t0 if pressed is None else pressed), 0.0) / 1000


def pages_in_browser(repeats: int = 3, port: int | None = None) -> dict:
    """Each real-model page in headless Chromium on a new server: the cold first paint (the first visit; the first
    page's includes loading the model, once for the process), the cached first paint (median of ``repeats`` new
    sessions), one step of each control to a value no run has computed (``first_s`` of bench.interact), a typed text,
    and the worker's RSS before any real-model page and after all of them (the model loaded and used)."""
    import os
    import time

    import psutil
    from playwright.sync_api import sync_playwright

    from bench.interact import WIDGETS, controls, first_paint, step_time
    from posenc.ui.pages import PAGES
    from tools.liveserver import chromium_path, launch_chromium, start_server, stop_server

    if chromium_path() is None:
        return {"skipped": "no Chromium on this machine"}
    infos = [p for p in PAGES if p.section == SECTION]
    rows: list[dict] = []
    out: dict = {"goals": PAGE_GOALS, "load_avg_1min_start": round(os.getloadavg()[0], 2)}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        proc, base, _ = start_server(port)
        server = psutil.Process(proc.pid)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            first_paint(page, f"{base}/")  # the landing page: Streamlit's and posenc's own imports are done
            out["rss_worker_before_mb"] = round(server.memory_info().rss / 2**20, 1)
            for info in infos:
                url = f"{base}/{info.url_path}"
                cpu0 = sum(server.cpu_times()[:2])
                page = browser.new_page(viewport={"width": 1400, "height": 1000})  # a new tab: a first visit
                cold = first_paint(page, url)
                cold_cpu = sum(server.cpu_times()[:2]) - cpu0
                cpu0 = sum(server.cpu_times()[:2])
                paints = [first_paint(page, url) for _ in range(repeats)]
                cached_cpu = (sum(server.cpu_times()[:2]) - cpu0) / repeats  # the server's own work, whatever the load
                steps = []
                for kind, label, i in controls(page, kinds=WIDGETS):  # box openings: --only interact, reported apart
                    t = step_time(page, kind, i)
                    if t is not None:
                        steps.append({"control": f"{kind}: {label}", "first_s": round(t, 3)})
                typed = _typed_step(page, TYPED[info.path]) if info.path in TYPED else None
                worst = max(steps, key=lambda s: s["first_s"]) if steps else None
                rows.append({
                    "page": info.title, "first_paint_cold_s": round(cold, 3), "cold_server_cpu_s": round(cold_cpu, 2),
                    "first_paint_cached_s": round(statistics.median(paints), 3),
                    "cached_server_cpu_s": round(cached_cpu, 2), "cached_tries": [round(x, 3) for x in paints],
                    "controls": len(steps),
                    "median_new_step_s": round(statistics.median(s["first_s"] for s in steps), 3) if steps else None,
                    "worst_new_step_s": worst["first_s"] if worst else None, "worst_control": worst["control"] if worst else None,
                    "typed_text_s": None if typed is None else round(typed, 3),
                    "load_avg_1min": round(os.getloadavg()[0], 2), "steps": steps,
                })
                rows[-1]["goal_met"] = bool(rows[-1]["first_paint_cached_s"] <= PAGE_GOALS["first_paint_cached_s"])
                page.close()
            out["rss_worker_after_mb"] = round(server.memory_info().rss / 2**20, 1)
            out["rss_worker_model_mb"] = round(out["rss_worker_after_mb"] - out["rss_worker_before_mb"], 1)
            out["rss_worker_model_goal_met"] = bool(out["rss_worker_model_mb"] <= GOALS["rss_model_after_mb"])
        finally:
            stop_server(proc)
            browser.close()
    out["pages"] = rows
    out["all_goals_met"] = all(r["goal_met"] for r in rows) and out["rss_worker_model_goal_met"]
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return out
