"""Section ``soak``: sessions that stay open and keep moving controls; does the worker's memory settle?

``sessions`` protocol sessions (default 1) stay connected for ``minutes`` (default 2; the figure in
docs/serving.md is an hour: ``python -m bench --only soak --soak-minutes 60``).  Each walks the load test's pages in turn on
one websocket (a page switch is a sidebar click: same session), moving that page's control through a
bounded cycle of values, as a student exploring the same few settings again and again.  The worker's RSS
is sampled every few seconds.  "Settled" is the median RSS over the second tenth of the run (after the
caches have filled once); "final" the median over the last tenth.  Reports; asserts nothing.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time

from bench.load import SCENARIOS, RssSampler, cluster_procs
from bench.stclient import ProtocolError, StSession
from deploy.cluster import Cluster

MB = 2**20


async def _walker(base: str, i: int, stop_at: float, cycle: int, moves_per_page: int, think, stats: dict) -> None:
    rng = random.Random(100 + i)
    sc = SCENARIOS[i % len(SCENARIOS)]
    s = StSession(base, sc.page, {**dict(sc.fixed), sc.key: sc.value(0)}, timeout=180)
    k = 0
    try:
        await s.open()
        page_i = i
        while time.perf_counter() < stop_at:
            for _ in range(moves_per_page):
                if time.perf_counter() >= stop_at:
                    break
                await asyncio.sleep(rng.uniform(*think))
                k += 1
                run = await s.move(sc.key, sc.value(k % cycle))
                stats["moves"] += 1
                stats["times"].append(run.seconds)
                if run.exceptions or run.errors or not run.metrics:
                    stats["errors"].append(f"{sc.page} {sc.key}: {run.exceptions or run.errors or 'no metrics'}")
            page_i += 1
            sc = SCENARIOS[page_i % len(SCENARIOS)]
            await s.navigate(sc.page, {**dict(sc.fixed), sc.key: sc.value(k % cycle)})
            stats["page_switches"] += 1
    except (TimeoutError, ProtocolError, OSError) as exc:
        stats["errors"].append(f"{type(exc).__name__}: {exc}")
    finally:
        stats["session_ids"].add(s.session_id)
        await s.close()


def soak(minutes: float = 2.0, sessions: int = 1, cycle: int = 12, moves_per_page: int = 6, think=(1.0, 4.0),
         interval: float = 5.0, port: int = 8760, say=print) -> dict:
    stats: dict = {"moves": 0, "page_switches": 0, "times": [], "errors": [], "session_ids": set()}
    with Cluster(workers=1, port=port) as c, RssSampler(cluster_procs(c), interval=interval) as rss:
        stop_at = time.perf_counter() + minutes * 60

        async def main():
            await asyncio.gather(*(_walker(c.url, i, stop_at, cycle, moves_per_page, think, stats)
                                   for i in range(sessions)))

        asyncio.run(main())
    series = [(round(t, 1), round(v.get("worker0", 0) / MB, 1)) for t, v in rss.samples if v.get("worker0")]
    n = len(series)
    settled = statistics.median(v for _, v in series[n // 10: max(n // 5, n // 10 + 1)])
    final = statistics.median(v for _, v in series[-max(n // 10, 1):])
    out = {
        "minutes": minutes, "sessions": sessions, "moves": stats["moves"], "page_switches": stats["page_switches"],
        "move_p50_s": statistics.median(stats["times"]) if stats["times"] else None,
        "errors": len(stats["errors"]), "error_samples": stats["errors"][:5],
        "sessions_kept": len(stats["session_ids"]) == sessions,
        "rss_start_mb": series[0][1], "rss_settled_mb": settled, "rss_final_mb": final,
        "rss_peak_mb": round(rss.peak.get("worker0", 0) / MB, 1),
        "growth_after_settling": (final - settled) / settled, "series_mb": series[:: max(1, n // 120)],
    }
    say(f"  soak: {minutes:g} min, {out['moves']} moves, RSS settled {settled:.0f} MB -> final {final:.0f} MB "
        f"({out['growth_after_settling']:+.1%}), errors {out['errors']}")
    return out
