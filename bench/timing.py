"""Small timing helpers: median of repeated runs with perf_counter."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds over ``repeats`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def stolen_seconds(stat_text: str | None = None) -> float | None:
    """CPU time the hypervisor gave to other guests ("steal", the 8th number of /proc/stat's ``cpu`` line), summed over
    all cores, in seconds; None where /proc/stat is missing (not Linux).  Two readings bracket a run: their difference
    over (wall time x cores) is the share of this machine's CPU that was not ours -- on a shared host a browser's
    timings grow with it, while nothing on the machine itself was busy."""
    if stat_text is None:
        try:
            with open("/proc/stat", encoding="ascii") as fh:
                stat_text = fh.readline()
        except OSError:
            return None
    fields = stat_text.split("\n", 1)[0].split()
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def cpu_probe(loops: int = 3_000_000, repeats: int = 3) -> float:
    """Seconds a fixed pure-Python loop takes (median of ``repeats``): the speed of one core as the benchmark found it,
    read before and after a browser section so that its figures can be compared across days on a shared host (the
    readings are in docs/performance.md and docs/testing.md)."""
    def loop() -> int:
        s = 0
        for i in range(loops):
            s += i * i
        return s

    return median_time(loop, repeats=repeats, warmup=0)


def _cpuinfo() -> str:
    """/proc/cpuinfo's text ("" where there is none: not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def cpu_model(cpuinfo: str | None = None) -> str:
    """The CPU's model name as /proc/cpuinfo gives it (its first ``model name`` line); "" where it is not known."""
    cpuinfo = _cpuinfo() if cpuinfo is None else cpuinfo
    for line in cpuinfo.splitlines():
        if line.startswith("model name") and ":" in line:
            return line.split(":", 1)[1].strip()
    return ""


def cpu_identity(cpuinfo: str | None = None) -> str:
    """The CPU as /proc/cpuinfo tells one part from another under the same model name: "family 25, model 17, stepping 1,
    2596 MHz" ("" where it is not known).  Two machines both named "AMD EPYC" read 0.076-0.092 s (2026-12-03) and
    0.12-0.23 s (2026-12-06, family 25 model 17 at 2596 MHz, moving within minutes) on ``cpu_probe`` with nothing else
    running; the report records this beside the name so that runs on the two can be told apart."""
    cpuinfo = _cpuinfo() if cpuinfo is None else cpuinfo
    first = cpuinfo.split("\n\n", 1)[0]  # the first processor's block
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    parts = [f"{name} {fields[key]}" for key, name in (("cpu family", "family"), ("model", "model"), ("stepping", "stepping"))
             if fields.get(key)]
    try:
        parts.append(f"{float(fields['cpu MHz']):.0f} MHz")
    except (KeyError, ValueError):
        pass
    return ", ".join(parts)


def idle_bound(cpu: str | None = None, identity: str | None = None) -> float:
    """The ``cpu_probe`` reading at or below which a host with this CPU (default: this machine's name and identity) is
    nearly idle: the bound of the first IDLE_BOUNDS entry whose name the model name starts with and whose part the
    family and model ``identity`` (``cpu_identity``) starts with ("" for any part), else the smallest bound (a CPU never
    measured idle is held to the fastest one's)."""
    if cpu is None:
        cpu = cpu_model()
        identity = cpu_identity() if identity is None else identity
    part = f"{identity or ''},"  # "family 25, model 1," is not a prefix of "family 25, model 17, ..."
    return next((b for name, prefix, b in IDLE_BOUNDS if cpu.startswith(name) and part.startswith(prefix)),
                min(b for _, _, b in IDLE_BOUNDS))


# The goals of ``--only interact`` are stated for a 2-core machine "nearly idle".  On the first such machine (AMD EPYC,
# the sessions of 2026-12-02 and -03) ``cpu_probe`` read 0.076-0.092 s when nothing else ran (runs O and R) and
# 0.095-0.20 s when other guests took the CPU, sometimes for a few seconds only.  A run whose readings (before, between
# the pages, after) have a median of at most its CPU's bound, with at most IDLE_STEAL of the CPU stolen over it, had a
# "nearly idle" host: one slow reading is a burst, most of them slow is a busy host.  The EPYC bound was 0.10 s until
# run S (2026-12-03 11:54): its median read 0.0986 s while every page, the ones no change touched too, took 1.3-1.5x
# run R's time.
IDLE_PROBE_S = 0.095
# Machines of the same kind come with other CPUs, and the probe reads one core's speed, so a slower core reads "busy"
# with nothing else running.  From 2026-12-02 on, sessions also ran on "Intel(R) Xeon(R) Processor" (2.1 GHz, 2
# cores): 2026-12-05 22:58 UTC, just booted, load 0.2, nothing else running, 25 readings in a row read 0.169-0.225 s
# (median 0.184 s) with 0.0 % of the CPU stolen; the runs of 2026-12-04 and -05 read 0.154-0.21 s between their
# pages and 0.28-0.32 s in bursts.  Each CPU's bound sits just above its idle readings.  The goals stay the same
# seconds on every CPU: a slower core makes them harder to meet, never easier.  A CPU not listed gets the smallest
# bound, and the verdict names it.
# One model name also covers several parts: "AMD EPYC" of family 25, model 1 (2,445 MHz) read 0.151-0.186 s in 22 of 25
# readings on 2026-12-07, 08:20-08:30 UTC, with nothing else running in the machine (load 0.8), 0.0 % of the CPU
# stolen, and three bursts at 0.29 s; such a part is listed by its family and model (``cpu_identity``) before its name.
# (model name prefix, family-and-model prefix or "" for any part, bound), the first match wins
IDLE_BOUNDS = (("AMD EPYC", "family 25, model 1,", 0.19), ("AMD EPYC", "", IDLE_PROBE_S), ("Intel(R) Xeon(R) Processor", "", 0.23))
IDLE_STEAL = 0.005
MAX_BUSY_SHARE = 4  # at most a quarter of the pages timed next to a slow probe (run T: 8 of 15 at a median of 0.0949 s)


MAX_WAIT_SHARE = 0.05  # at most this share of a run spent waiting for the host to calm (``wait_for_idle``)


def host_verdict(probes: list[float], steal_fraction: float | None, busy: int = 0, timed: int = 0,
                 waited_s: float = 0.0, wall_s: float = 0.0, bound: float = IDLE_PROBE_S, cpu: str = "") -> dict:
    """Whether a run's host was nearly idle: the median of its ``cpu_probe`` readings at most ``bound`` (its CPU's,
    ``idle_bound``; the CPU is named in the reasons when given) and the stolen share at most IDLE_STEAL (unknown steal
    does not disqualify), and the run's own waits for the host to calm (``waited_s`` of ``wall_s``; readings taken
    after a wait look idle by construction) at most MAX_WAIT_SHARE of it.  Keeps the median and the slowest reading
    and says which test failed, so that a run on a busy host is read as what it is: not a test of the goals."""
    if not probes:
        raise ValueError("probes: at least one cpu_probe reading is needed")
    typical, slowest = statistics.median(probes), max(probes)
    on = f" on {cpu}" if cpu else ""
    reasons = []
    if typical > bound:
        reasons.append(f"the CPU probe's median reading was {typical:.3f} s (idle{on}: at most {bound:.3f} s)")
    if timed and busy > timed // MAX_BUSY_SHARE:  # a median under the bound, yet many pages timed next to a slow probe
        reasons.append(f"{busy} of {timed} pages were timed next to a probe above {bound:.3f} s "
                       f"(idle: at most {timed // MAX_BUSY_SHARE})")
    if wall_s > 0 and waited_s > MAX_WAIT_SHARE * wall_s:
        reasons.append(f"the run waited {waited_s:.0f} s of {wall_s:.0f} s for the host to calm "
                       f"(idle: at most {MAX_WAIT_SHARE:.0%})")
    if steal_fraction is not None and steal_fraction > IDLE_STEAL:
        reasons.append(f"{steal_fraction:.1%} of the CPU was stolen (idle: at most {IDLE_STEAL:.1%})")
    return {"nearly_idle": not reasons, "probe_median_s": round(typical, 4), "probe_max_s": round(slowest, 4),
            "idle_bound_s": bound, "why_not": "; ".join(reasons)}


MAX_WAIT_S = 60.0  # the longest wait for the host to calm before a page (``python -m bench --interact-max-wait``)


def wait_for_idle(max_wait_s: float = MAX_WAIT_S, every_s: float = 5.0, probe: Callable[[], float] | None = None,
                  sleep: Callable[[float], None] = time.sleep, bound: float = IDLE_PROBE_S) -> tuple[float, float]:
    """Probe the host; while the reading is above ``bound`` (its CPU's idle bound), wait ``every_s`` and probe again, for at most
    ``max_wait_s``.  Returns (the last reading, seconds waited): the benchmark waits out a burst of other guests
    before a page instead of timing it, and says how long it waited and whether the host calmed."""
    probe = probe or cpu_probe
    reading, waited = probe(), 0.0
    while reading > bound and waited + every_s <= max_wait_s:
        sleep(every_s)
        waited += every_s
        reading = probe()
    return reading, waited
