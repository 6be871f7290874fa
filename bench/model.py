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
    return {"goals": GOALS, "runs": rows}
