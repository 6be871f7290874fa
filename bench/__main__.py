"""`python -m bench [--only encoding,scores,collisions,pages,browser,interact,motion,lab]`: run, print, save results.

The serving sections take longer and run only when named:
`python -m bench --only load,memory,soak` (about 40 minutes with the default 2-minute soak;
`--soak-minutes 60` for the hour of docs/serving.md).  `load` includes the Chromium validation and the worker
restart; `--load-levels 10,25` and `--load-workers 1` shorten it.
"""

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
from bench.timing import MAX_WAIT_S  # noqa: E402

SECTIONS = ("encoding", "scores", "collisions", "pages", "browser", "interact", "motion", "lab", "model")
SERVING = ("load", "memory", "soak", "room", "security")  # minutes each: only with --only
RESULTS = ROOT / "bench" / "results.json"


def machine() -> dict:
    from bench.timing import cpu_identity, cpu_model  # the name the host verdict's idle bound is looked up by

    cpu = cpu_model() or platform.processor() or ""
    mem = None
    try:
        import psutil

        mem = round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:
        pass
    import scipy
    import streamlit

    return {
        "cpu": cpu, "cpu_identity": cpu_identity(), "cores": os.cpu_count(), "memory_gib": mem, "python": platform.python_version(),
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
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="comma-separated sections: " + ", ".join(SECTIONS + SERVING) + " (default: all but the serving ones)")
    ap.add_argument("--load-levels", default="10,25,50,100", help="load: concurrent sessions per level")
    ap.add_argument("--load-workers", default="1,2", help="load: worker counts")
    ap.add_argument("--load-moves", type=int, default=4, help="load: control moves per session")
    ap.add_argument("--soak-minutes", type=float, default=2.0, help="soak: duration (the figure in docs/serving.md: 60)")
    ap.add_argument("--soak-sessions", type=int, default=1, help="soak: sessions that stay open")
    ap.add_argument("--room-sessions", type=int, default=60, help="room: protocol-level sessions (issue 41: 60)")
    ap.add_argument("--room-browsers", type=int, default=10, help="room: Chromium sessions beside them (issue 41: 10)")
    ap.add_argument("--room-seconds", type=float, default=90.0, help="room: how long they move controls")
    ap.add_argument("--security-puts", type=int, default=12, help="security: raw upload PUTs of 45 MB (issue 41: 12)")
    ap.add_argument("--no-security-tests", action="store_true", help="security: skip running the issue's tests")
    ap.add_argument("--interact-pages", default="", help="interact: only pages whose file, url path or title contains "
                    "one of these comma-separated words (default: every page)")
    ap.add_argument("--interact-runs", type=int, default=1, help="interact: whole runs in a row (the goals hold on two "
                    "runs in a row: 2), each saved and printed, then side by side")
    ap.add_argument("--interact-max-wait", type=float, default=MAX_WAIT_S, help="interact: seconds to wait for the host to calm "
                    "before each page (0: time at once; the verdict still reads the probe, so no run passes as idle by waiting less)")
    args = ap.parse_args(argv)
    if not 0 <= args.interact_max_wait <= 600:
        ap.error(f"--interact-max-wait must be between 0 and 600 seconds, got {args.interact_max_wait:g}")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS + SERVING)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}  # earlier sections (max_query)
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
        results["collisions_small"] = numeric.small_pairs()
        out.append(table("3b. Closest pair up to 4,096 rows: the default (Gram identity in blocks) vs the KD-tree",
                         results["collisions_small"], ["points", "n", "k", "path", "default_s", "kdtree_s", "speedup",
                                                       "agrees_with_brute"]))
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
    if "interact" in only:
        from bench.interact import interact
        from bench.report import cold_tries, paint_tries, runs_side_by_side

        wanted = [w for w in args.interact_pages.split(",") if w.strip()] or None
        runs = []
        for n in range(max(1, args.interact_runs)):
            results["interact"] = interact(pages=wanted, max_wait_s=args.interact_max_wait)
            runs.append(results["interact"])
            kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}  # each run kept as soon as it ends
            RESULTS.write_text(json.dumps({**kept, "interact": results["interact"]}, indent=1, default=float))
            flat = [{**{k: r[k] for k in ("page", "first_paint_s")},
                     "first_paints_s": paint_tries(r),
                     **{k: r.get(k) for k in ("controls", "median_new_step_s", "median_new_server_s", "worst_new_step_s",
                                              "worst_new_server_s", "worst_new_control", "median_repeat_step_s",
                                              "new_steps_timed", "driver_lead_s", "page_wall_s")}}
                    for r in results["interact"]["pages"]]
            name = f" (run {n + 1} of {args.interact_runs})" if args.interact_runs > 1 else ""
            out.append(table(f"8. What a person feels{name}: first paint, then each control's steps to new values and its "
                             "repeats (headless Chromium, medians)", flat, list(flat[0]) if flat else []))
            summary = {k: v for k, v in results["interact"].items() if k not in ("pages", "floor", "cold_tries")}
            if results["interact"].get("cold_tries"):  # every cold start, beside their median
                summary["cold_tries_s"] = cold_tries(results["interact"])
            for k, v in results["interact"].get("floor", {}).items():
                if k != "tries":  # the floor page (bench/floor_app.py): Streamlit's own cost for a one-chart step
                    summary[f"floor_{k}"] = v
            out.append(table(f"8b. Cold server, the floor (one slider, one chart) and the goals{name}", [summary], list(summary)))
        if len(runs) > 1:
            results["interact_runs"] = [{k: v for k, v in r.items() if k != "pages"} | {"pages": [
                {k: v for k, v in pg.items() if k != "steps"} for pg in r.get("pages", [])]} for r in runs]
            out.append(runs_side_by_side(runs))
    if "motion" in only:
        from bench.motion import motion

        results["motion"] = motion()
        out.append(table("9. Moving figures (frames per second while playing) and a slider step, headless Chromium",
                         results["motion"], list(results["motion"][0])))
    if "lab" in only:
        from bench.lab import lab

        results["lab"] = {**lab(), "machine": results["machine"]}  # its own date: other sections may be older
        lab_load = results["lab"]["load_average"]
        out.append(table(f"7. Lab: ms per training step, 1 and 2 threads (load average {lab_load['start']} -> {lab_load['end']})",
                         results["lab"]["steps"], list(results["lab"]["steps"][0])))
        out.append(table("7a. Lab: one scheme x seed 0 at the defaults, training (2 threads) + evaluation at L .. 8L (goal <= 5 s)",
                         results["lab"]["budget"], ["scheme", "train_wall_s", "train_cpu_s", "ms_per_step_wall", "eval_wall_s",
                                                    "eval_cpu_s", "extensions_cpu_s", "train_eval_wall_s", "goal_met"]))
        out.append(table("7a'. Lab: RoPE's test-time extensions (dynamic NTK: per-position evaluation)", results["lab"]["extensions"],
                         list(results["lab"]["extensions"][0])))
        out.append(table("7a''. Lab: the whole shipped experiment, estimated from CPU seconds (goal <= 30 min)", [results["lab"]["full"]],
                         list(results["lab"]["full"])))
        out.append(table("7e. Lab: one forward + backward by batch size B, one thread (B = 320: 10 seeds' batches)",
                         results["lab"]["batches"], list(results["lab"]["batches"][0])))
        out.append(table("7f. Lab: the shipped experiment's recorded CPU seconds on 2 processes (goal <= 30 min)",
                         [results["lab"]["shipped"]], list(results["lab"]["shipped"])))
        out.append(table("7b. Lab: one forward + backward step, hand-written vs autograd", results["lab"]["autograd"],
                         list(results["lab"]["autograd"][0])))
        out.append(table("7c. Lab: a 1e-15 nudge of the initial weights, after a full default training run",
                         results["lab"]["sensitivity"], list(results["lab"]["sensitivity"][0])))
    if "model" in only:
        from bench.model import model

        results["model"] = {**model(), "machine": results["machine"]}
        runs = results["model"].get("runs", [])
        out.append(table("10. The real model (SmolLM2-135M, posenc.model): load, forward at 128 and 512 tokens, RSS; goals "
                         + ", ".join(f"{k} <= {v:g}" for k, v in results["model"].get("goals", {}).items()),
                         runs or [results["model"]], list(runs[0]) if runs else ["skipped"]))
        web = results["model"].get("browser", {})
        if web.get("pages"):  # each page in Chromium: first paint cold and cached, a step to a new value, worker RSS
            cols = [c for c in web["pages"][0] if c not in ("steps", "cached_tries")]
            out.append(table("10b. The real-model pages in Chromium: first paint (cold, cached; goal cached <= "
                             f"{web['goals']['first_paint_cached_s']:g} s), one step of each control to a new value, "
                             "a typed text", web["pages"], cols))
            out.append(table("10c. A worker's RSS before and after the real-model pages (goal +"
                             f"{results['model']['goals']['rss_model_after_mb']:g} MB)", [web],
                             [k for k in web if k not in ("pages", "goals")]))
    if {"load", "memory", "soak", "room", "security"} & set(only):
        import subprocess

        results["serving_commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                                   text=True, check=False).stdout.strip()
    if "load" in only:
        from bench import load

        levels = tuple(int(x) for x in args.load_levels.split(","))
        workers = tuple(int(x) for x in args.load_workers.split(","))
        res = load.load(levels=levels, workers=workers, moves=args.load_moves)
        res["validate"] = load.validate()
        print(f"  validate: {res['validate']}", flush=True)
        res["restart"] = load.restart()
        print(f"  restart: {res['restart']}", flush=True)
        results["load"] = res | {"commit": results["serving_commit"]}
        rows = [{k: r[k] for k in ("workers", "sessions", "move_p50_s", "move_p95_s", "first_render_p50_s",
                                   "first_render_p95_s", "errors", "cross_talk", "runs_checked")}
                | {"peak_rss_mb": r["peak_rss_mb"], "sessions_per_worker": r["sessions_per_worker"]}
                for r in res["levels"]]
        out.append(table("Load: control change to repaint through nginx (protocol client)", rows, list(rows[0])))
        out.append(table("Load: protocol client vs Chromium", [res["validate"]], list(res["validate"])))
        out.append(table("Load: one of two workers killed under load", [res["restart"]], list(res["restart"])))
    if "room" in only:
        from bench.load import room

        results["room"] = r = room(protocol=args.room_sessions, browsers=args.room_browsers, seconds=args.room_seconds)
        r["commit"] = results["serving_commit"]
        out.append(table("Room: protocol sessions and Chromium sessions at once on 2 workers, a burst and a worker kill",
                         [r], [k for k in r if not isinstance(r[k], (list, dict))]))
    if "security" in only:
        from bench.security import security

        results["security"] = sec = security(puts=args.security_puts, run_tests=not args.no_security_tests)
        sec["commit"] = results["serving_commit"]
        up = sec["raw_uploads"]
        out.append(table("Security: raw upload PUTs to one session (S1)", [
            {"where": "at the worker", "puts": up["puts"], "mb": up["mb"], **{k: v for k, v in up["direct"].items()
                                                                             if k != "statuses"}},
            {"where": "through nginx", "puts": up["puts"], "refused_429": up["through_nginx"]["refused_429"],
             "manager_mb_after": up["through_nginx"]["manager_mb_after"]}],
            ["where", "puts", "mb", "seconds", "manager_mb_after", "rss_start_mb", "rss_peak_mb", "rss_after_mb",
             "refused_429"]))
        if "tests" in sec:
            out.append(table("Security: issue 41's attacks replayed as tests", [{"file": f, **v} for f, v in sec["tests"].items()],
                             ["file", "passed", "failed", "xfailed", "skipped", "seconds"]))
    if "memory" in only:
        from bench.memory import memory

        results["memory"] = mem = memory()
        mem["commit"] = results["serving_commit"]
        rows = [{"part": k} | {c: v for c, v in mem[k].items() if not isinstance(v, (list, dict))}
                for k in mem if isinstance(mem[k], dict)]
        out.append(table("Memory: one worker under cache-busting, a repeated link, exports and uploads", rows,
                         sorted({c for r in rows for c in r}, key=lambda c: (c != "part", c))))
    if "soak" in only:
        from bench.soak import soak

        results["soak"] = s = soak(minutes=args.soak_minutes, sessions=args.soak_sessions)
        s["commit"] = results["serving_commit"]
        out.append(table("Soak: sessions kept open and moving controls", [s],
                         [k for k in s if k not in ("series_mb", "error_samples")]))
    # merge into the file as it is now: a long soak may run beside another bench run
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    extra = ("interact_runs",) if "interact" in only and results.get("interact_runs") else ()
    saved.update({k: v for k, v in results.items() if k in ("machine", "serving_commit", *only, *extra)})
    RESULTS.write_text(json.dumps(saved, indent=1, default=float))
    m = results["machine"]
    ident = f" ({m['cpu_identity']})" if m.get("cpu_identity") else ""
    print(f"# posenc benchmark — {m['date']}\nmachine: {m['cpu']}{ident}, {m['cores']} cores, {m['memory_gib']} GiB; "
          f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, streamlit {m['streamlit']}")
    print("\n".join(out))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
