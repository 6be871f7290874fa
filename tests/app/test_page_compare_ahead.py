"""Compare's table one step ahead (posenc/ui/ahead.py): after the page's run, its table at the next n is computed in the
background, and a step of n onto it draws the table without measuring a scheme again."""

import time

from apphelpers import open_page

import posenc.views.compare as compare_views
from posenc.ui import ahead

NAME = "posenc.views.compare:comparison"


def _done_at(n: int, d: int = 64) -> bool:
    return any(c[0] == NAME and c[1][:4] == (n, d, 8, 512) for c in ahead.done())


def test_a_step_of_n_finds_the_table_computed_ahead(monkeypatch, ahead_on):
    at = open_page("pages/compare.py", timeout=180)
    assert not at.exception
    t0 = time.monotonic()
    while not _done_at(1024):  # n's option after 512, first of the calls ahead (nothing moved yet: every control onward)
        assert time.monotonic() - t0 < 120, f"Compare at n = 1,024 was not computed ahead: {[c[1][:4] for c in ahead.done()]}"
        time.sleep(0.05)
    measured = []
    real = compare_views.measure_schemes
    monkeypatch.setattr(compare_views, "measure_schemes", lambda *a, **k: measured.append(k) or real(*a, **k))
    at.session_state["n"] = 1024
    at.run()
    assert not at.exception
    assert not [k for k in measured if k.get("n") == 1024], "the step measured the schemes again"
    assert at.dataframe[0].value["n_measured"].max() == 1024  # the table drawn is n = 1,024's


def test_a_step_onto_the_table_being_computed_ahead_waits_for_it_and_no_longer(ahead_on):
    """The worker pauses between Compare's schemes while a run draws; the run of a step onto the very table it computes
    waits for that table, so the worker goes on (were it to pause, the two would wait for each other)."""
    at = open_page("pages/compare.py", {"d": "70"}, timeout=180)  # a width no other test measures: every table is new
    t0 = time.monotonic()
    while not ((c := ahead._current[0]) and c[0] == NAME and c[1][:4] == (1024, 70, 8, 512)):
        assert time.monotonic() - t0 < 120 and not _done_at(1024, 70), "the table at n = 1,024 was never seen in progress"
        time.sleep(0.002)
    at.session_state["n"] = 1024
    at.run(timeout=120)  # AppTest raises on a run that does not end within the timeout
    assert not at.exception
    assert at.dataframe[0].value["n_measured"].max() == 1024
