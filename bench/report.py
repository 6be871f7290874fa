"""`python -m bench.report`: the "Serving a class" tables of docs/serving.md and the
browser-timing table of docs/performance.md (section 8), from bench/results.json.

Run after `python -m bench --only load,memory,soak` (or `--only interact`); paste the output over the
tables in docs/serving.md and docs/performance.md.
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().with_name("results.json")


def _s(x) -> str:
    if x is None:
        return "—"
    return f"{x:.2f} s" if x < 10 else f"{x:.0f} s"


def load_table(res: dict) -> str:
    lines = [("| workers | sessions | control change → repaint, p50 | p95 | first render, p50 | p95 | errors | "
              "cross-talk (runs checked) | peak RSS per worker | sessions per worker |"),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["levels"]:
        rss = " / ".join(f"{v:,} MB" for k, v in sorted(r["peak_rss_mb"].items()) if k.startswith("worker"))
        split = " / ".join(str(v) for _, v in sorted(r["sessions_per_worker"].items()))
        lines.append(f"| {r['workers']} | {r['sessions']} | {_s(r['move_p50_s'])} | {_s(r['move_p95_s'])} | "
                     f"{_s(r['first_render_p50_s'])} | {_s(r['first_render_p95_s'])} | {r['errors']} | "
                     f"{r['cross_talk']} ({r['runs_checked']}) | {rss} | {split} |")
    return "\n".join(lines)


def page_table(res: dict) -> str:
    pages = list(res["levels"][0]["move_p50_by_page_s"])
    head = "| workers | sessions | " + " | ".join(pages) + " |"
    lines = [head, "|---|---|" + "---|" * len(pages)]
    for r in res["levels"]:
        cells = [f"{_s(r['move_p50_by_page_s'].get(p))} / {_s(r['move_p95_by_page_s'].get(p))}" for p in pages]
        lines.append(f"| {r['workers']} | {r['sessions']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paint_tries(page: dict) -> str:
    """A page's first paints of ``--only interact``, in the order taken ("1.45 / 1.61 / 1.52"); "" for results
    saved before they were kept."""
    return " / ".join(f"{t:.2f}" for t in page.get("first_paint_tries", []))


def cold_tries(res: dict) -> str:
    """The cold starts of ``--only interact`` in the order taken (server launch to first painted page: "2.51 / 2.38
    / 2.44"); "" for results saved when one cold start was timed."""
    return " / ".join(f"{t['server_to_first_paint_s']:.2f}" for t in res.get("cold_tries", []))


def interact_table(res: dict) -> str:
    """Per page: first paint, then the median over its controls of a step to a new value (the goals' figure) and the
    server's run within it (``median_new_server_s``: the rest is the browser's), the worst control on new values, the
    repeats to values already computed, all tries together, and the driver's median time before each input (left out
    of the steps)."""
    lines = ["| page | first paint (its tries) | controls | step to a new value, median (server's run) | worst new step | "
             "worst box opened (judged apart) | repeated step | step, median (all tries) | driver lead |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in res["pages"]:
        worst = (f"{_s(p['worst_new_step_s'])} ({p['worst_new_control']})" if p.get("worst_new_step_s") is not None
                 else f"{_s(p['worst_step_s'])} ({p['worst_control']}, all tries)" if p.get("worst_step_s") is not None else "—")
        new = p.get("median_new_step_s", p.get("median_first_step_s"))  # results saved before new values were timed
        tries = paint_tries(p)
        server = f" ({_s(p['median_new_server_s'])})" if p.get("median_new_server_s") is not None else ""  # runs since 2026-12-06
        box = f"{_s(p['worst_box_open_s'])} ({p['worst_box']})" if p.get("worst_box_open_s") is not None else "—"  # since 2026-12-06
        lines.append(f"| {p['page']} | {_s(p['first_paint_s'])}{f' ({tries})' if tries else ''} | {p['controls']} | {_s(new)}{server} | "
                     f"{worst} | {box} | {_s(p.get('median_repeat_step_s'))} | {_s(p['median_step_s'])} | {_s(p.get('driver_lead_s'))} |")
    return "\n".join(lines)


def runs_side_by_side(runs: list[dict]) -> str:
    """Whole ``--only interact`` runs beside each other (``--interact-runs 2``): per page its first paint, median new
    step and worst new step in each run, then the cold start, the host and the verdict of each."""
    head = " | ".join(f"run {i + 1}: paint / new median / worst new" for i in range(len(runs)))
    lines = [f"| page | {head} |", "|---|" + "---|" * len(runs)]
    for title in [p["page"] for p in runs[0].get("pages", [])]:
        cells = []
        for r in runs:
            p = next((q for q in r.get("pages", []) if q["page"] == title), None)
            cells.append("—" if p is None else f"{_s(p['first_paint_s'])} / {_s(p.get('median_new_step_s'))} / "
                                               f"{_s(p.get('worst_new_step_s'))} ({p.get('worst_new_control') or '—'})")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    for label, key in (("median new step over pages", "median_new_step_over_pages_s"), ("worst new step", "worst_new_step_s"),
                       ("worst first paint", "worst_first_paint_s"), ("cold start", "cold_server_to_first_paint_s"),
                       ("worst box opened (judged apart)", "worst_box_open_s")):
        lines.append(f"| {label} | " + " | ".join(_s(r.get(key)) for r in runs) + " |")
    lines.append("| host | " + " | ".join(
        f"probe median {_s((r.get('host') or {}).get('probe_median_s'))}, waited {_s((r.get('host') or {}).get('waited_s'))} s, "
        f"{'nearly idle' if (r.get('host') or {}).get('nearly_idle') else 'busy'}" for r in runs) + " |")
    lines.append("| verdict | " + " | ".join(str(r.get("verdict")) for r in runs) + " |")
    return "Interact runs side by side (seconds)\n\n" + "\n".join(lines)


def main() -> int:
    r = json.loads(RESULTS.read_text())
    print(f"{r['machine']['date']}; commits: " + ", ".join(f"{k} {r[k].get('commit', '?')[:7]}"
                                                      for k in ("load", "memory", "soak") if k in r) + "\n")
    if "load" in r:
        print(load_table(r["load"]), "\n")
        print(page_table(r["load"]), "\n")
        print("validate:", json.dumps(r["load"].get("validate")), "\n")
        print("restart:", json.dumps(r["load"].get("restart")), "\n")
    if "interact" in r:
        print(interact_table(r["interact"]), "\n")
        cold = cold_tries(r["interact"])
        print("cold:", r["interact"].get("cold_server_to_first_paint_s"), f"(tries: {cold})" if cold else "",
              "floor:", json.dumps(r["interact"].get("floor")),
              "goals:", json.dumps(r["interact"].get("goals")), "host:", json.dumps(r["interact"].get("host")))
        ahead = r["interact"].get("ahead")
        print("values ahead (posenc/ui/ahead.py):", "not recorded (before 2026-12-07)" if ahead is None else ("on" if ahead else "off"))
        print("verdict:", r["interact"].get("verdict", "(not kept by this run)"), "\n")
    for k in ("memory", "soak"):
        if k in r:
            print(k, json.dumps({a: b for a, b in r[k].items() if a != "series_mb"}, indent=1), "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
