"""The interact benchmark's driver and report: a step forward and back visits what its docstring says it does; every first paint printed."""

from types import SimpleNamespace

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
