"""The interact benchmark's driver and report: a step forward and back visits what its docstring says it does; every first paint printed."""

from types import SimpleNamespace

import pytest

from bench import interact


def test_a_choice_goes_forward_then_back_to_where_it_came_from():
    page = SimpleNamespace(url="http://127.0.0.1:1/lab?scheme=rope")
    options = ["raw_index", "sinusoidal", "learned", "rope"]
    at = "rope"
    visited = []
    for r in range(4):  # forward (a new value), back (seen), forward (seen), back (seen)
        at = interact._choose(page, ("select", 7), at, options, back=bool(r % 2))
        visited.append(at)
    assert visited == ["raw_index", "rope", "raw_index", "rope"]  # three or more options: still only two values


def test_a_choice_of_two_alternates_and_one_of_one_cannot_move():
    page = SimpleNamespace(url="http://127.0.0.1:1/sinusoid")
    assert interact._choose(page, ("segmented", 0), "a", ["a", "b"], back=False) == "b"
    assert interact._choose(page, ("segmented", 0), "b", ["a", "b"], back=True) == "a"
    assert interact._choose(page, ("segmented", 1), "a", ["a"], back=False) is None


def test_back_without_a_forward_step_moves_forward():
    page = SimpleNamespace(url="http://127.0.0.1:1/rope")
    assert interact._choose(page, ("radio", 3), 0, [0, 1, 2], back=True) == 1  # nothing remembered: the first other


def test_paint_tries_prints_every_first_paint_and_nothing_for_older_results():
    from bench.report import paint_tries

    assert paint_tries({"first_paint_tries": [1.454, 1.6, 1.5249]}) == "1.45 / 1.60 / 1.52"
    assert paint_tries({"first_paint_s": 1.2}) == ""


def test_cold_tries_prints_every_cold_start_and_nothing_for_older_results():
    from bench.report import cold_tries

    tries = [{"server_to_first_paint_s": 2.514, "first_paint_s": 2.05}, {"server_to_first_paint_s": 3.0, "first_paint_s": 2.5}]
    assert cold_tries({"cold_tries": tries}) == "2.51 / 3.00"
    assert cold_tries({"cold_server_to_first_paint_s": 3.12}) == ""


def test_stolen_seconds_reads_the_steal_column_of_proc_stat():
    import os

    from bench.timing import stolen_seconds

    tck = os.sysconf("SC_CLK_TCK")
    line = f"cpu  10 0 5 100 0 0 0 {3 * tck} 0 0\ncpu0 5 0 2 50 0 0 0 {tck} 0 0\n"
    assert stolen_seconds(line) == 3.0  # the 8th number of the summed line, in seconds
    assert stolen_seconds("intr 1 2 3") is None and stolen_seconds("cpu 1 2") is None


def test_host_verdict_names_the_reading_that_made_a_host_busy():
    import pytest

    from bench.timing import IDLE_PROBE_S, IDLE_STEAL, host_verdict

    idle = host_verdict([0.089, 0.092, 0.088], 0.0001)
    assert idle == {"nearly_idle": True, "probe_median_s": 0.089, "probe_max_s": 0.092, "idle_bound_s": IDLE_PROBE_S, "why_not": ""}
    burst = host_verdict([0.092, 0.183, 0.09], 0.0001)  # one slow reading among idle ones: a burst, kept as the max
    assert burst["nearly_idle"] and burst["probe_max_s"] == 0.183
    busy = host_verdict([0.098, 0.15, 0.174, 0.12], 0.004)  # most readings slow (run Q of 2026-12-03 drifted so)
    assert not busy["nearly_idle"] and "0.135 s" in busy["why_not"] and "stolen" not in busy["why_not"]
    stolen = host_verdict([0.09], IDLE_STEAL * 3)
    assert not stolen["nearly_idle"] and "1.5%" in stolen["why_not"] and "probe" not in stolen["why_not"]
    assert host_verdict([IDLE_PROBE_S], None)["nearly_idle"]  # the bound itself is idle; unknown steal does not count
    with pytest.raises(ValueError, match="probes"):
        host_verdict([], 0.0)


def test_the_idle_bound_is_the_cpus_own():
    """A core slower than the one the goals were first measured on reads "busy" on the probe with nothing else running
    (an Intel Xeon at 2.1 GHz, 2026-12-05: 0.169-0.225 s idle against the EPYC's 0.076-0.092 s): each CPU is held to
    its own idle bound, and a CPU never measured idle to the smallest one."""
    from bench.timing import IDLE_BOUNDS, IDLE_PROBE_S, cpu_model, host_verdict, idle_bound

    assert cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: sse\n") == "AMD EPYC 7B13"
    assert cpu_model("processor\t: 0\n") == ""
    assert idle_bound("AMD EPYC 7B13") == IDLE_PROBE_S
    xeon = "Intel(R) Xeon(R) Processor"
    assert idle_bound(xeon) > 0.225  # above every idle reading measured on it
    assert idle_bound("Some Other CPU") == min(b for _, _, b in IDLE_BOUNDS) == IDLE_PROBE_S
    readings = [0.184, 0.171, 0.216, 0.19]  # idle on the Xeon, busy by the EPYC's bound
    assert host_verdict(readings, 0.0, bound=idle_bound(xeon), cpu=xeon)["nearly_idle"]
    epyc = host_verdict(readings, 0.0, bound=idle_bound("AMD EPYC 7B13"), cpu="AMD EPYC 7B13")
    assert not epyc["nearly_idle"] and "(idle on AMD EPYC 7B13: at most 0.095 s)" in epyc["why_not"]
    said = interact.verdict({"g": False}, {"nearly_idle": True, "cpu": xeon, "busy_pages": ["RoPE"]})
    assert said == f"missed g, on a nearly idle host ({xeon}) (busy while timing: RoPE)"


def test_a_part_of_one_model_name_has_its_own_idle_bound():
    """The "AMD EPYC" of family 25, model 1 read 0.151-0.186 s idle (2026-12-07), the name's bound 0.095 s: it is held to
    a bound of its own, matched on family and model, and model 17 or an unknown part of the name keeps the name's."""
    from bench.timing import IDLE_BOUNDS, IDLE_PROBE_S, host_verdict, idle_bound

    model_1 = "family 25, model 1, stepping 1, 2445 MHz"
    assert 0.186 < idle_bound("AMD EPYC", model_1) == {p[:2]: p[2] for p in IDLE_BOUNDS}[("AMD EPYC", "family 25, model 1,")] < 0.287
    assert idle_bound("AMD EPYC", "family 25, model 17, stepping 1, 2596 MHz") == IDLE_PROBE_S  # not "model 1" by its prefix
    assert idle_bound("AMD EPYC", "") == idle_bound("AMD EPYC") == IDLE_PROBE_S
    assert idle_bound("Intel(R) Xeon(R) Processor", "family 25, model 1, stepping 1") == 0.23  # the family names no other maker's part
    readings = [0.154, 0.161, 0.177, 0.165]
    assert host_verdict(readings, 0.0, bound=idle_bound("AMD EPYC", model_1), cpu="AMD EPYC")["nearly_idle"]
    assert not host_verdict([*readings, 0.29, 0.288, 0.29, 0.29], 0.0, bound=idle_bound("AMD EPYC", model_1), cpu="AMD EPYC")["nearly_idle"]


def test_the_report_tells_two_cpus_of_one_name_apart():
    """Two machines both named "AMD EPYC" idle at different probe readings (0.076-0.092 s and 0.12-0.14 s): the run
    records family, model, stepping and clock beside the name."""
    from bench.timing import cpu_identity

    info = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\n"
            "stepping\t: 1\ncpu MHz\t\t: 2596.146\n\nprocessor\t: 1\ncpu family\t: 99\n")
    assert cpu_identity(info) == "family 25, model 17, stepping 1, 2596 MHz"  # the first processor's block
    assert cpu_identity("processor\t: 0\nmodel name\t: X\ncpu MHz\t: n/a\n") == ""
    assert cpu_identity("") == ""


def test_verdict_says_a_busy_run_is_not_a_test_of_the_goals():
    goals = {"first_paint_within_1_5_s": True, "cold_within_3_s": False}
    assert interact.verdict(goals, {"nearly_idle": True}) == "missed cold_within_3_s, on a nearly idle host"
    busy = interact.verdict({k: True for k in goals}, {"nearly_idle": False, "why_not": "the CPU probe's median reading was 0.170 s"})
    assert busy.startswith("all 2 goals met, on a busy host (the CPU probe's median reading was 0.170 s)")


def test_wait_for_idle_waits_out_a_burst_and_gives_up_after_its_limit():
    from bench.timing import wait_for_idle

    readings, slept = iter([0.17, 0.15, 0.09]), []
    assert wait_for_idle(60, 5, probe=lambda: next(readings), sleep=slept.append) == (0.09, 10.0)
    assert slept == [5, 5]
    slept.clear()
    assert wait_for_idle(12, 5, probe=lambda: 0.2, sleep=slept.append) == (0.2, 10.0)  # busy throughout: stops waiting
    assert wait_for_idle(60, 5, probe=lambda: 0.08, sleep=slept.append) == (0.08, 0.0)
    slept.clear()
    assert wait_for_idle(0, 5, probe=lambda: 0.13, sleep=slept.append) == (0.13, 0.0) and slept == []  # --interact-max-wait 0


def test_the_longest_wait_for_a_calm_host_is_a_checked_option(capsys):
    from bench.__main__ import main

    for bad in ("-1", "601", "nan"):
        with pytest.raises(SystemExit) as stop:
            main(["--only", "interact", "--interact-max-wait", bad])
        assert stop.value.code == 2
    assert "--interact-max-wait must be between 0 and 600 seconds" in capsys.readouterr().err


def test_busy_pages_are_those_with_a_slow_probe_before_or_after():
    pages = [{"page": "a", "cpu_probe_s": 0.08}, {"page": "b", "cpu_probe_s": 0.09}, {"page": "c", "cpu_probe_s": 0.085}]
    assert interact.busy_pages(pages, 0.107) == ["c"]  # run R of 2026-12-03: the host turned busy during the last page
    pages[1]["cpu_probe_s"] = 0.15
    assert interact.busy_pages(pages, 0.09) == ["a", "b"]  # "a" ended on a busy host, "b" began on one
    said = interact.verdict({"g": True}, {"nearly_idle": True, "busy_pages": ["Extrapolation lab"]})
    assert said == "all 1 goals met, on a nearly idle host (busy while timing: Extrapolation lab)"


def test_a_run_with_many_pages_timed_on_a_busy_host_is_not_nearly_idle():
    from bench.timing import host_verdict

    t = host_verdict([0.0949] * 17, 0.003, busy=8, timed=15)  # run T of 2026-12-03: a median just under the bound
    assert not t["nearly_idle"] and "8 of 15 pages" in t["why_not"] and "at most 3" in t["why_not"]
    assert host_verdict([0.081] * 17, 0.0006, busy=2, timed=15)["nearly_idle"]  # run R: the lab and Compare


def test_the_run_clock_writes_a_line_per_run_only_when_asked(tmp_path, monkeypatch):
    from posenc.ui import runclock

    log = tmp_path / "runs.log"
    monkeypatch.delenv(runclock.ENV, raising=False)
    with runclock.timed("run", "rope"):
        pass
    assert not log.exists()  # off by default: a served page writes nothing
    monkeypatch.setenv(runclock.ENV, str(log))
    with runclock.timed("run", "rope"):
        sum(range(10_000))
    with pytest.raises(RuntimeError), runclock.timed("section", "pages/lab.py:why section"):
        raise RuntimeError("a run that ends early (st.rerun, st.stop) is logged as far as it went")
    lines = [line.split() for line in log.read_text().splitlines()]
    assert [(kind, what) for kind, what, *_ in lines] == [("run", "rope"), ("section", "pages/lab.py:why_section")]
    assert all(float(wall) >= 0 and float(cpu) >= 0 for *_, wall, cpu in lines)


def test_a_steps_server_seconds_are_the_runs_logged_after_it_began(tmp_path):
    from bench.interact import server_seconds

    log = tmp_path / "runs.log"
    assert server_seconds(log, 0) == (0.0, 0)  # no server has run yet
    log.write_text("run home 0.5000 0.4000\n")
    offset = log.stat().st_size
    with open(log, "a") as f:
        f.write("run rope 0.2500 0.2000\nsection pages/rope.py:s 0.1250 0.1000\nrun rope 0.3")  # the last: being written
    total, end = server_seconds(log, offset)
    assert total == 0.375 and end == log.stat().st_size - len("run rope 0.3")
    assert server_seconds(log, end) == (0.0, end)  # the half line waits for its end


def test_a_fragment_logs_its_own_rerun_and_nothing_inside_the_pages_run(tmp_path, monkeypatch):
    from posenc.ui import runclock

    log = tmp_path / "runs.log"
    monkeypatch.setenv(runclock.ENV, str(log))
    monkeypatch.setattr(runclock, "full_run_frame", lambda: {"page": "pages/lab.py"})  # the page's full run draws it
    with runclock.own_rerun("section", "pages/lab.py:why"):
        pass
    assert not log.exists()  # app.py times the whole run
    monkeypatch.setattr(runclock, "full_run_frame", lambda: None)  # the fragment reruns alone
    with runclock.own_rerun("section", "pages/lab.py:why"):
        pass
    assert [line.split()[:2] for line in log.read_text().splitlines()] == [["section", "pages/lab.py:why"]]


def test_box_openings_are_reported_apart_from_the_goals():
    """An expander's step is timed and reported, not judged against the step goals (its own opening transition reads
    about 0.5 s with nothing computed); the controls it holds are judged like any other."""
    rows = [{"control": "slider: d", "median_s": 0.2, "new_s": 0.2},
            {"control": "expander: The attention maps", "median_s": 0.6, "new_s": 0.8},
            {"control": "slider: long length", "median_s": 0.3, "new_s": 0.4},  # inside the box: judged
            {"control": "expander: Show the code", "median_s": 0.5, "new_s": None},
            {"control": "toggle: x", "median_s": None, "error": "cannot move"}]
    timed, boxes = interact.judged(rows)
    assert [r["control"] for r in timed] == ["slider: d", "slider: long length"]
    assert [r["control"] for r in boxes] == ["expander: The attention maps"]
