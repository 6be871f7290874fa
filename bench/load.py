"""Section ``load``: a class of N sessions through nginx to 1 or 2 workers (``python -m deploy``'s cluster).

Each session is a ``bench.stclient.StSession`` (Streamlit's own websocket protocol, no browser): it opens
one of the pages in ``SCENARIOS`` with its own value of one control in the link, then moves that control
``moves`` times to further values of its own, waiting a random think time between moves.  All sessions
open at (nearly) the same moment, as when a teacher says "open the link now".  Measured per level:

* first render: page GET + websocket + the first full run, until ``script_finished``;
* control change to repaint: a new widget state sent until the rerun's ``script_finished`` (every element
  of the rerun, charts included, has arrived by then);
* errors: anything a student would see as broken (closed socket, time-out, an exception or error box on
  the page, the wrong page, a missing control);
* cross-talk: every run's metrics (label and value of every ``st.metric``) are compared, after the load,
  with a reference computed by a single quiet session on a fresh worker for the same page and value;
* RSS of every worker (and nginx), sampled every 0.5 s.

``validate`` runs a handful of real Chromium sessions and the same number of protocol sessions on the
same moves, so the protocol client's timings can be read against a browser's.  ``restart`` kills one of
two workers under load and records what each session saw.  Loopback only; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from dataclasses import dataclass

import psutil

from bench.stclient import ProtocolError, StSession
from deploy.cluster import Cluster

PORT = int(os.environ.get("POSENC_BENCH_PORT", "8740"))  # nginx; workers on PORT+1, PORT+2 (the bench's share: 8700-8799)
REF_PORT = PORT + 4  # the cross-talk reference: nginx, and its worker on REF_PORT+1


@dataclass(frozen=True)
class Scenario:
    page: str  # url path
    key: str  # URL key of the control this session moves
    start: float
    step: float
    fixed: tuple[tuple[str, str], ...] = ()  # other link values held for every session

    def value(self, k: int):
        v = self.start + k * self.step
        return int(v) if float(v).is_integer() else v


# Light and heavy pages, each with a numeric control whose value shows up in the page's metrics.
SCENARIOS = (
    Scenario("raw_index", "d", 10, 2, (("context", "2,048"),)),  # light: one growth curve
    Scenario("sinusoid", "n", 100, 3),  # heatmap, spectrum, closest pair among n positions
    Scenario("rope", "m", 1000, 7),  # rotations and the decay bound
    Scenario("relative_bias", "t5_num_buckets", 8, 2),  # T5 buckets and the ALiBi matrices
    # heavy: four score matrices, translation invariance; n <= 400 at 100 sessions, inside the learned
    # table's 512 rows (past them the page answers with an error box by design, for that one scheme)
    Scenario("similarity", "n", 64, 4),
    Scenario("context_extension", "train", 1024, 16),  # five RoPE scalings on the same axes
)


def plan(sessions: int, moves: int) -> list[tuple[Scenario, list]]:
    """Session i: page i mod len(SCENARIOS), values no other session uses (so any cross-talk shows)."""
    out = []
    for i in range(sessions):
        sc = SCENARIOS[i % len(SCENARIOS)]
        j = i // len(SCENARIOS)
        out.append((sc, [sc.value(j * (moves + 1) + t) for t in range(moves + 1)]))
    return out


class RssSampler:
    """Peak and last RSS of each process in ``procs`` ({name: pid-getter}), sampled in a thread."""

    def __init__(self, procs: dict, interval: float = 0.5):
        self.procs = procs
        self.interval = interval
        self.peak: dict[str, int] = {}
        self.samples: list[tuple[float, dict[str, int]]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.perf_counter()

    def sample(self) -> dict[str, int]:
        now: dict[str, int] = {}
        for name, get_pid in self.procs.items():
            try:
                p = psutil.Process(get_pid())
                now[name] = p.memory_info().rss + sum(c.memory_info().rss for c in p.children(recursive=True))
            except (psutil.Error, TypeError):
                continue
            self.peak[name] = max(self.peak.get(name, 0), now[name])
        self.samples.append((time.perf_counter() - self.t0, now))
        return now

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.sample()
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(timeout=5)
        self.sample()


def cluster_procs(c: Cluster) -> dict:
    procs = {f"worker{w.index}": (lambda w=w: w.pid) for w in c.nodes}
    procs["nginx"] = lambda: c.nginx.pid if c.nginx else None
    return procs


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _check_run(run, where: str) -> list[str]:
    """What a student would see as broken.  (An st.error box is the page's own answer to a setting, and is
    compared with the quiet reference like the metrics, not counted here.)"""
    problems = [f"{where}: exception {e}" for e in run.exceptions]
    if not run.metrics:
        problems.append(f"{where}: no metrics drawn")
    return problems


def _seen(run) -> list:
    """What a run showed that depends on the session's values: every metric and every error box."""
    return run.metrics + [("error box", e) for e in run.errors]


def _worker(c: Cluster | None, s: StSession) -> str:
    """The worker a session's token reaches, from the proxy's access log (no response names it)."""
    return (c.worker_of(s.cookies.get("posenc_worker", "")) if c is not None else None) or "?"


async def _session(base: str, sid: int, sc: Scenario, values: list, think: tuple[float, float], rng: random.Random,
                   timeout: float, log: dict, cluster: Cluster | None = None) -> None:
    rec = {"sid": sid, "page": sc.page, "key": sc.key, "values": values, "runs": [], "errors": [], "moves_s": [],
           "first_render_s": None, "worker": ""}
    log[sid] = rec
    await asyncio.sleep(rng.uniform(0, 1.0))  # a room does not click in the same millisecond
    s = StSession(base, sc.page, {**dict(sc.fixed), sc.key: values[0]}, timeout=timeout)
    try:
        run = await s.open()
        rec["first_render_s"] = run.seconds
        rec["worker"] = _worker(cluster, s)
        rec["runs"].append((values[0], _seen(run)))
        rec["errors"] += _check_run(run, f"{sc.page} {sc.key}={values[0]}")
        for v in values[1:]:
            await asyncio.sleep(rng.uniform(*think))
            run = await s.move(sc.key, v)
            rec["moves_s"].append(run.seconds)
            rec["runs"].append((v, _seen(run)))
            rec["errors"] += _check_run(run, f"{sc.page} {sc.key}={v}")
    except (TimeoutError, ProtocolError, OSError) as exc:
        rec["errors"].append(f"{sc.page}: {type(exc).__name__}: {exc}")
    finally:
        await s.close()


async def _level(base: str, sessions: int, moves: int, think: tuple[float, float], seed: int, timeout: float,
                 cluster: Cluster | None = None) -> dict:
    log: dict = {}
    rng = random.Random(seed)
    tasks = [_session(base, i, sc, vals, think, random.Random(rng.random()), timeout, log, cluster)
             for i, (sc, vals) in enumerate(plan(sessions, moves))]
    await asyncio.gather(*tasks)
    return log


async def _reference(base: str, wanted: dict[str, set], timeout: float) -> dict:
    """One quiet session per page walks through every value the load used; {(page, value): metrics}."""
    out: dict = {}
    for sc in SCENARIOS:
        vals = sorted(wanted.get(sc.page, ()))
        if not vals:
            continue
        s = StSession(base, sc.page, {**dict(sc.fixed), sc.key: vals[0]}, timeout=timeout)
        try:
            run = await s.open()
            out[(sc.page, vals[0])] = _seen(run)
            for v in vals[1:]:
                run = await s.move(sc.key, v)
                out[(sc.page, v)] = _seen(run)
        finally:
            await s.close()
    return out


def _summary(log: dict, sampler: RssSampler, seconds: float) -> dict:
    moves = [x for r in log.values() for x in r["moves_s"]]
    first = [r["first_render_s"] for r in log.values() if r["first_render_s"] is not None]
    errors = [e for r in log.values() for e in r["errors"]]
    by_page: dict[str, list[float]] = {}
    for r in log.values():
        by_page.setdefault(r["page"], []).extend(r["moves_s"])
    workers: dict[str, int] = {}
    for r in log.values():
        workers[r["worker"] or "?"] = workers.get(r["worker"] or "?", 0) + 1
    mb = 2**20
    return {
        "moves": len(moves),
        "move_p50_s": _pct(moves, 0.5), "move_p95_s": _pct(moves, 0.95), "move_max_s": max(moves, default=None),
        "first_render_p50_s": _pct(first, 0.5), "first_render_p95_s": _pct(first, 0.95),
        "first_render_max_s": max(first, default=None),
        "errors": len(errors), "error_samples": errors[:10],
        "sessions_per_worker": workers,
        "peak_rss_mb": {k: round(v / mb) for k, v in sampler.peak.items()},
        "move_p50_by_page_s": {p: _pct(v, 0.5) for p, v in by_page.items()},
        "move_p95_by_page_s": {p: _pct(v, 0.95) for p, v in by_page.items()},
        "wall_s": seconds,
    }


def load(levels=(10, 25, 50, 100), workers=(1, 2), moves: int = 4, think=(2.0, 6.0), seed: int = 15,
         timeout: float = 240.0, say=print) -> dict:
    """Every level on every worker count; then the cross-talk reference on a fresh worker."""
    results: dict = {"scenarios": [sc.__dict__ | {"fixed": dict(sc.fixed)} for sc in SCENARIOS],
                     "moves_per_session": moves, "think_s": list(think), "levels": []}
    logs = []
    client = psutil.Process()
    for w in workers:
        for n in levels:
            with Cluster(workers=w, port=PORT) as c, RssSampler(cluster_procs(c)) as sampler:
                cpu0 = client.cpu_times()
                t0 = time.perf_counter()
                log = asyncio.run(_level(c.url, n, moves, think, seed + n, timeout, c))
                wall = time.perf_counter() - t0
                cpu1 = client.cpu_times()
            row = {"workers": w, "sessions": n, **_summary(log, sampler, wall),
                   "client_cpu_s": round((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system), 1)}
            results["levels"].append(row)
            logs.append(row | {"log": log})
            say(f"  load: {w} worker(s), {n} sessions: p50 {row['move_p50_s']:.2f} s, p95 {row['move_p95_s']:.2f} s, "
                f"first render p50 {row['first_render_p50_s']:.1f} s, errors {row['errors']}, peak RSS {row['peak_rss_mb']}")
    # cross-talk: the same page and value, computed by one quiet session on a fresh worker
    wanted: dict[str, set] = {}
    for entry in logs:
        for r in entry["log"].values():
            for v, _ in r["runs"]:
                wanted.setdefault(r["page"], set()).add(v)
    t0 = time.perf_counter()
    with Cluster(workers=1, port=REF_PORT) as c:
        ref = asyncio.run(_reference(c.url, wanted, timeout))
    results["reference_s"] = time.perf_counter() - t0
    for entry, row in zip(logs, results["levels"]):
        mismatches = []
        checked = 0
        for r in entry["log"].values():
            for v, metrics in r["runs"]:
                checked += 1
                if ref.get((r["page"], v)) != metrics:
                    mismatches.append(f"session {r['sid']} {r['page']} {r['key']}={v}: saw {metrics[:2]}, "
                                      f"alone {(ref.get((r['page'], v)) or [])[:2]}")
        row["runs_checked"] = checked
        row["cross_talk"] = len(mismatches)
        row["cross_talk_samples"] = mismatches[:5]
    return results


# -- validation against a real browser ---------------------------------------------------------------------
VALIDATE = (("raw_index", "d", 40, "‖PE‖ there"), ("sinusoid", "n", 200, "max |PE| over all n × d"))
# What a browser step must change: the metrics and the page's headline (an alert, computed at the current settings).  The
# metrics alone are not enough: Raw index hides every d-dependent metric behind its exercise ("?" until revealed), so a
# step there changed no metric, and the room harness had called 10 of 20 live sliders dead (diagnosed 2026-12-05).
SEEN_JS = """() => [...document.querySelectorAll("[data-testid='stMetric'], [data-testid='stAlert']")].map(m => m.innerText).join('|')"""


def _chromium_sessions(base: str, sessions: int, moves: int) -> list[float]:
    """``sessions`` Chromium contexts, each pressing ArrowRight on its slider ``moves`` times."""
    from playwright.sync_api import sync_playwright

    from tools.liveserver import launch_chromium, wait_for_app

    times: list[float] = []
    with sync_playwright() as p:
        b = launch_chromium(p)
        try:
            pages = []
            for i in range(sessions):
                page, key, v0, _ = VALIDATE[i % len(VALIDATE)]
                ctx = b.new_context(viewport={"width": 1400, "height": 1000})
                ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                          else route.abort())  # nothing leaves loopback (the icon font is not fetched)
                pg = ctx.new_page()
                pg.goto(f"{base}/{page}?{key}={v0 + 10 * i}", wait_until="commit")
                pages.append((pg, key))
            for pg, _ in pages:
                wait_for_app(pg, timeout_ms=180_000)
            for _ in range(moves):
                for pg, key in pages:
                    # the slider bound to `key`: the label's slider input (first range input in the row)
                    idx = 1 if key == "d" else 0
                    thumb = pg.locator("[data-testid='stSlider'] input[type='range']").nth(idx)
                    before = pg.evaluate(SEEN_JS)
                    thumb.focus()
                    t0 = time.perf_counter()
                    thumb.press("ArrowRight")
                    pg.wait_for_function(
                        f"""before => {{ const app = document.querySelector("[data-testid='stApp']");
                            return ({SEEN_JS})() !== before && app.dataset.testScriptState === 'notRunning'; }}""",
                        arg=before, timeout=120_000)
                    times.append(time.perf_counter() - t0)
                    pg.wait_for_timeout(300)
        finally:
            b.close()
    return times


async def _protocol_sessions(base: str, sessions: int, moves: int) -> list[float]:
    times: list[float] = []

    async def one(i):
        page, key, v0, _ = VALIDATE[i % len(VALIDATE)]
        s = StSession(base, page, {key: v0 + 10 * i})
        try:
            await s.open()
            v = v0 + 10 * i
            for _ in range(moves):
                v += 1
                times.append((await s.move(key, v)).seconds)
                await asyncio.sleep(0.3)
        finally:
            await s.close()

    await asyncio.gather(*(one(i) for i in range(sessions)))
    return times


def validate(sessions: int = 4, moves: int = 5) -> dict:
    from tools.liveserver import chromium_path

    if chromium_path() is None:
        return {"skipped": "no Chromium on this machine"}
    out = {"sessions": sessions, "moves": moves, "pages": [v[0] for v in VALIDATE]}
    with Cluster(workers=1, port=PORT) as c:
        asyncio.run(_protocol_sessions(c.url, 1, 1))  # warm the worker's imports
        chrome = _chromium_sessions(c.url, sessions, moves)
        proto = asyncio.run(_protocol_sessions(c.url, sessions, moves))
    out |= {"chromium_p50_s": _pct(chrome, 0.5), "chromium_p95_s": _pct(chrome, 0.95),
            "protocol_p50_s": _pct(proto, 0.5), "protocol_p95_s": _pct(proto, 0.95),
            "chromium_minus_protocol_p50_s": _pct(chrome, 0.5) - _pct(proto, 0.5)}
    return out


# -- a worker restarted under load, and a room: a burst of protocol sessions and browsers, then a kill ----------------
async def _restart(c: Cluster, sessions: int, seconds: float, kill_at: float, timeout: float,
                   think: tuple[float, float] = (0.5, 1.5)) -> dict:
    recs: dict = {}
    killed: dict = {}
    stop_at = time.perf_counter() + seconds

    async def one(i):
        sc, vals = plan(sessions, 400)[i]
        rec = {"page": sc.page, "worker": "", "moves": 0, "errors": [], "reconnects": [], "values_restored": None,
               "first_render_s": None, "moves_s": [], "runs": []}
        recs[i] = rec
        s = StSession(c.url, sc.page, {**dict(sc.fixed), sc.key: vals[0]}, timeout=timeout)
        seen = {}
        try:
            t_open = time.perf_counter()
            while True:  # every session at (nearly) the same moment: the burst
                try:
                    run = await s.open()
                    break
                except (ProtocolError, OSError) as exc:
                    # a socket dropped inside the first render (the kill lands in the burst's queue): like the
                    # browser, open the same link again; counted apart, not as an error a visitor sees
                    if time.perf_counter() - t_open > timeout:
                        raise
                    rec["errors"].append(f"reconnect: in the first render: {str(exc)[:80]}")
                    rec["first_render_reconnects"] = rec.get("first_render_reconnects", 0) + 1
                    await s.close()
                    await asyncio.sleep(1.0)
                    s = StSession(c.url, sc.page, {**dict(sc.fixed), sc.key: vals[0]}, timeout=timeout, cookies=s.cookies)
            # a session that reopened waited from its first try: that is the first render its visitor saw
            rec["first_render_s"] = time.perf_counter() - t_open if rec.get("first_render_reconnects") else run.seconds
            seen[vals[0]] = _seen(run)
            rec["runs"].append((vals[0], seen[vals[0]]))
            rec["errors"] += _check_run(run, f"{sc.page} {sc.key}={vals[0]}")
            rec["worker"] = _worker(c, s)
            k = 1
            while time.perf_counter() < stop_at:
                await asyncio.sleep(random.uniform(*think))
                try:
                    run = await s.move(sc.key, vals[k])
                    seen[vals[k]] = _seen(run)
                    rec["runs"].append((vals[k], seen[vals[k]]))
                    rec["moves_s"].append(run.seconds)
                    rec["errors"] += _check_run(run, f"{sc.page} {sc.key}={vals[k]}")
                    rec["moves"] += 1
                    k += 1
                except ProtocolError as exc:
                    # what the browser does when its socket drops: reconnect to the same URL (and cookie)
                    t0 = time.perf_counter()
                    rec["errors"].append(str(exc)[:100])
                    await s.close()
                    s = StSession(c.url, sc.page, {**dict(sc.fixed), sc.key: vals[k - 1]}, timeout=timeout,
                                  cookies=s.cookies)
                    while True:
                        try:
                            await s.open()
                            break
                        except (ProtocolError, OSError) as exc2:
                            if time.perf_counter() - t0 > timeout:
                                raise
                            rec["errors"].append(f"reconnect: {str(exc2)[:80]}")
                            await asyncio.sleep(1.0)
                    rec["reconnects"].append({"seconds": time.perf_counter() - t0, "to": _worker(c, s),
                                              "after_kill_s": t0 - killed.get("t", t0)})
                    # the new session reran the page from the link: the same view as before the kill?
                    rec["values_restored"] = _seen(s.last) == seen.get(vals[k - 1])
        except (TimeoutError, ProtocolError, OSError) as exc:
            rec["errors"].append(f"{sc.page}: {type(exc).__name__}: {exc}"[:200])
        finally:
            await s.close()

    async def killer():
        if kill_at is None:
            return
        await asyncio.sleep(kill_at)
        killed["t"] = time.perf_counter()
        killed["worker"] = c.nodes[0].addr
        c.kill_worker(0)  # SIGKILL; the launcher's supervisor starts it again

    await asyncio.gather(killer(), *(one(i) for i in range(sessions)))
    return {"recs": recs, "killed": killed}


def _kill_summary(recs: dict, killed: dict, restarts: list[int], sessions: int) -> dict:
    victim = killed.get("worker", "")
    on_victim = [r for r in recs.values() if r["worker"] == victim]
    others = [r for r in recs.values() if r["worker"] != victim]
    rec_s = [x["seconds"] for r in on_victim for x in r["reconnects"]]
    return {
        "sessions": sessions, "killed_worker": victim, "worker_restarts": restarts,
        "sessions_on_killed_worker": len(on_victim), "sessions_on_other_worker": len(others),
        "other_worker_errors": sum(len(r["errors"]) for r in others),
        "other_worker_moves": sum(r["moves"] for r in others),
        "killed_worker_sessions_reconnected": sum(1 for r in on_victim if r["reconnects"]),
        "reconnect_p50_s": _pct(rec_s, 0.5), "reconnect_max_s": max(rec_s, default=None),
        "reconnected_to": sorted({x["to"] for r in on_victim for x in r["reconnects"]}),
        "values_restored_from_link": all(r["values_restored"] for r in on_victim if r["reconnects"]),
        "killed_worker_moves_after": sum(r["moves"] for r in on_victim),
    }


def restart(sessions: int = 20, seconds: float = 40.0, kill_at: float = 12.0, timeout: float = 120.0) -> dict:
    with Cluster(workers=2, port=PORT) as c:
        out = asyncio.run(_restart(c, sessions, seconds, kill_at, timeout))
        restarts = [w.restarts for w in c.nodes]
    return _kill_summary(out["recs"], out["killed"], restarts, sessions)


# the page's state when a step fails: connection and script state (Streamlit's data-test attributes), the sliders' values
STATE_JS = """() => { const app = document.querySelector("[data-testid='stApp']");
  return {connection: app && app.getAttribute("data-test-connection-state"), script: app && app.getAttribute("data-test-script-state"),
          sliders: [...document.querySelectorAll("[data-testid='stSlider'] input[type='range']")].map(t => t.value).join(","),
          focused: document.activeElement && document.activeElement.outerHTML.slice(0, 80)}; }"""


def _browsers(base: str, count: int, seconds: float, out: dict, timeout_ms: float = 180_000) -> None:
    """``count`` Chromium sessions opened at once (a burst), each moving its slider until ``seconds`` have passed:
    first paint (navigation to the first metric), each step, every HTTP answer >= 500, and dead widgets (a slider
    that moved nothing even after the page reconnected)."""
    from playwright.sync_api import sync_playwright

    from tools.liveserver import chromium_path, launch_chromium, wait_for_app

    out.update(first_paint_s=[], steps_s=[], http_5xx=[], dead_widgets=0, no_paint=0, exceptions=0, browsers=count)
    if chromium_path() is None:
        out["skipped"] = "no Chromium on this machine"
        return
    metrics_js = SEEN_JS
    with sync_playwright() as p:
        b = launch_chromium(p)
        try:
            pages, t0 = [], time.perf_counter()
            for i in range(count):
                page_path, key, v0, _ = VALIDATE[i % len(VALIDATE)]
                ctx = b.new_context(viewport={"width": 1400, "height": 1000})
                ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
                pg = ctx.new_page()
                pg.on("response", lambda r: out["http_5xx"].append(f"{r.status} {r.url[-60:]}") if r.status >= 500 else None)
                pg.goto(f"{base}/{page_path}?{key}={v0 + 10 * i}", wait_until="commit")
                pages.append((pg, key))
            alive = []
            for pg, key in pages:
                try:
                    pg.wait_for_function(f"() => ({metrics_js})().length > 0", timeout=timeout_ms)
                    out["first_paint_s"].append(time.perf_counter() - t0)  # from the burst: all opened together
                    alive.append((pg, key))
                except Exception:  # noqa: BLE001 - a page that never painted is what is measured
                    out["no_paint"] += 1
            deadline = time.perf_counter() + seconds
            while alive and time.perf_counter() < deadline:
                for pg, key in list(alive):
                    thumb = pg.locator("[data-testid='stSlider'] input[type='range']").nth(1 if key == "d" else 0)
                    for attempt in (1, 2):
                        try:  # a person presses once the page has finished its run (a press mid-run is queued, not lost)
                            wait_for_app(pg, timeout_ms=timeout_ms)
                        except Exception:  # noqa: BLE001 - still running or reconnecting: pressed anyway, and recorded
                            pass
                        before, state = pg.evaluate(metrics_js), pg.evaluate(STATE_JS)
                        try:
                            thumb.focus(timeout=30_000)
                            s0 = time.perf_counter()
                            thumb.press("ArrowRight")
                            pg.wait_for_function(f"b => ({metrics_js})() !== b && ({metrics_js})().length > 0",
                                                 arg=before, timeout=60_000)
                            out["steps_s"].append(time.perf_counter() - s0)
                            break
                        except Exception as exc:  # noqa: BLE001 - a reconnect (the kill) may swallow one key press
                            if attempt == 2:
                                out["dead_widgets"] += 1
                                # what the page was doing: a slow run and a dead widget look alike to the wait above
                                out.setdefault("dead_details", []).append(
                                    {"url": pg.url[-60:], "before": state, "after": pg.evaluate(STATE_JS),
                                     "metrics_changed": pg.evaluate(metrics_js) != before, "error": str(exc)[:120]})
                                alive.remove((pg, key))
                    pg.wait_for_timeout(300)
            out["exceptions"] = sum(pg.locator("[data-testid='stException']").count() for pg, _ in pages)
        finally:
            b.close()


def room(protocol: int = 60, browsers: int = 10, seconds: float = 90.0, kill_at: float | None = 30.0,
         think: tuple[float, float] = (2.0, 6.0), timeout: float = 240.0, say=print) -> dict:
    """Issue 41's room on ``deploy --workers 2``: ``protocol`` protocol-level sessions and ``browsers`` Chromium
    sessions all opened at once (the burst), moving controls for ``seconds``, one worker SIGKILLed at ``kill_at``;
    then the cross-talk check against a quiet reference worker."""
    chrome: dict = {}
    with Cluster(workers=2, port=PORT) as c, RssSampler(cluster_procs(c)) as sampler:
        t = threading.Thread(target=_browsers, args=(c.url, browsers, seconds, chrome), daemon=True)
        t.start()
        out = asyncio.run(_restart(c, protocol, seconds, kill_at, timeout, think=think))
        t.join(timeout=seconds + 900)
        restarts = [w.restarts for w in c.nodes]
        access = (c.run_dir / "access.log").read_text(errors="replace") if c.run_dir else ""
    recs = out["recs"]
    moves = [x for r in recs.values() for x in r["moves_s"]]
    first = [r["first_render_s"] for r in recs.values() if r["first_render_s"] is not None]
    wanted: dict[str, set] = {}
    for r in recs.values():
        for v, _ in r["runs"]:
            wanted.setdefault(r["page"], set()).add(v)
    with Cluster(workers=1, port=REF_PORT) as ref_cluster:
        ref = asyncio.run(_reference(ref_cluster.url, wanted, timeout))
    cross = [f"{r['page']}={v}" for r in recs.values() for v, seen in r["runs"] if ref.get((r["page"], v)) != seen]
    errors = [e for r in recs.values() for e in r["errors"] if not e.startswith(("websocket closed", "reconnect"))]
    row = {"protocol_sessions": protocol, "browsers": browsers, "seconds": seconds, "kill_at_s": kill_at,
           "protocol_first_render_p50_s": _pct(first, 0.5), "protocol_first_render_p95_s": _pct(first, 0.95),
           "protocol_move_p50_s": _pct(moves, 0.5), "protocol_move_p95_s": _pct(moves, 0.95), "protocol_moves": len(moves),
           "protocol_errors": len(errors), "protocol_error_samples": errors[:5],
           "protocol_first_render_reconnects": sum(r.get("first_render_reconnects", 0) for r in recs.values()),
           "cross_talk": len(cross), "runs_checked": sum(len(r["runs"]) for r in recs.values()),
           "browser_first_paint_p50_s": _pct(chrome.get("first_paint_s", []), 0.5),
           "browser_first_paint_p95_s": _pct(chrome.get("first_paint_s", []), 0.95),
           "browser_step_p50_s": _pct(chrome.get("steps_s", []), 0.5),
           "browser_step_p95_s": _pct(chrome.get("steps_s", []), 0.95), "browser_steps": len(chrome.get("steps_s", [])),
           "browser_http_5xx": len(chrome.get("http_5xx", [])), "browser_dead_widgets": chrome.get("dead_widgets"),
           "browser_dead_details": chrome.get("dead_details", [])[:5],
           "browser_no_paint": chrome.get("no_paint"), "browser_exceptions": chrome.get("exceptions"),
           "proxy_502": access.count('" 502 '), "proxy_429": access.count('" 429 '),
           "peak_rss_mb": {k: round(v / 2**20) for k, v in sampler.peak.items()},
           **({"kill": _kill_summary(recs, out["killed"], restarts, protocol)} if kill_at is not None else {})}
    say(f"  room: {protocol} protocol + {browsers} Chromium sessions: move p50 {row['protocol_move_p50_s']}, "
        f"browser step p50 {row['browser_step_p50_s']}, errors {row['protocol_errors']}, 5xx {row['browser_http_5xx']}, "
        f"dead widgets {row['browser_dead_widgets']}, cross-talk {row['cross_talk']}")
    return row
