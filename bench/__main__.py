"""`python -m bench [--only encoding,scores,collisions,pages,browser,motion]`: run, print, save results."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import numeric  # noqa: E402

SECTIONS = ("encoding", "scores", "collisions", "pages", "browser", "motion")
RESULTS = ROOT / "bench" / "results.json"


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        import psutil

        mem = round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:
        pass
    import scipy
    import streamlit

    return {
        "cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem, "python": platform.python_version(),
        "platform": platform.platform(), "numpy": np.__version__, "scipy": scipy.__version__,
        "streamlit": streamlit.__version__, "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def table(title: str, rows: list[dict], cols: list[str]) -> str:
    lines = [f"\n## {title}", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c, "")) for c in cols) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["machine"] = machine()
    out = []
    if "encoding" in only:
        results["encoding"] = numeric.encoding()
        out.append(table("1. Encoding: posenc.sinusoidal vs the function in 'Positional Encoding in Transformers' "
                         "and bare np.sin + np.cos", results["encoding"],
                         ["n", "d", "posenc_s", "seed_reference_s", "bare_sin_cos_s", "speedup_vs_seed", "ratio_to_bare",
                          "max_abs_diff_vs_seed", "goal_met"]))
    if "scores" in only:
        results["scores"] = numeric.score_matrices()
        out.append(table("2. Score matrices (n = 4096, d = 128): offset profile vs dense product", results["scores"],
                         ["scheme", "profile_view_s", "profile_materialised_s", "dense_s", "speedup_view",
                          "speedup_materialised", "max_abs_diff", "goal_met"]))
    if "collisions" in only:
        results["collisions"] = numeric.collisions()
        out.append(table("3. Collisions: closest pair over 10^6 positions; KD-tree vs brute force at 20,000", results["collisions"],
                         ["scheme", "d", "method", "closest_distance", "pair", "seconds_1e6", "collisions_20k_s",
                          "kdtree_20k_s", "brute_20k_s", "speedup_vs_brute", "kdtree_speedup_vs_brute", "agrees_with_brute"]))
    if "pages" in only:
        from bench.pages import pages

        rows = pages()
        results["pages"] = rows
        flat = [{"page": r["page"], "default_run_s": r["default_run_s"], "default_kB": r["default"]["bytes"] / 1000,
                 "default_max_marks": r["default"]["max_chart_rows"], "max_run_s": r["max_run_s"], "max_kB": r["max"]["bytes"] / 1000,
                 "max_max_marks": r["max"]["max_chart_rows"], "errors_at_max": len(r["max_errors"]) + len(r["max_exception"]),
                 "goal_met": r["goal_met"]} for r in rows]
        out.append(table("4. Pages at defaults and at the largest settings (AppTest, median of 5)", flat, list(flat[0])))
    if "browser" in only:
        from bench.browser import browser

        max_q = {r["page"]: r["max_query"] for r in results.get("pages", [])}
        results["browser"] = browser(max_q)
        out.append(table("5-6. Cold start and server memory (real server, headless Chromium)", [results["browser"]], list(results["browser"])))
    if "motion" in only:
        from bench.motion import motion

        results["motion"] = motion()
        out.append(table("7. Moving figures (frames per second while playing) and a slider step, headless Chromium",
                         results["motion"], list(results["motion"][0])))
    RESULTS.write_text(json.dumps(results, indent=1, default=float))
    m = results["machine"]
    print(f"# posenc benchmark — {m['date']}\nmachine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; "
          f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, streamlit {m['streamlit']}")
    print("\n".join(out))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
