"""posenc.ui.ahead: the values one step of a control reaches are computed after the run, in the order a hand reaches
them, only while nothing else runs; a step onto one of them finds it in the cache."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from posenc import _threads
from posenc.schemes import sinusoidal as sinusoidal_module
from posenc.ui import ahead, cache

NAME = "posenc.schemes.sinusoidal:sinusoidal"


def _script():
    import streamlit as st

    from posenc.schemes.sinusoidal import sinusoidal
    from posenc.ui import ahead, controls
    from posenc.ui.cache import safe

    controls.begin_run("pages/ahead_test.py")
    d = controls.select_slider("d", "d", [8, 16, 32], default=16)
    n = controls.slider("n", "n", default=10, lo=2, hi=12)
    base = controls.number("base", "base", default=100.0, lo=10.0, hi=1000.0, step=0.5)
    st.session_state["steps"] = {k: controls.step_values(k) for k in ("d", "n", "base", "absent")}
    with ahead.drawing():
        safe(sinusoidal, n, d, base=base, ahead={"n": 0, "d": 1, "base": "base"})
    st.session_state["planned"] = [(c[1], dict(c[2])["base"]) for c in ahead.planned()]
    ahead.note_values()
    ahead.release()
    controls.end_run()  # what app.py's frame does: the next run's previous values


def _wait(call: tuple, timeout: float = 30.0) -> None:
    t0 = time.monotonic()
    while call not in ahead.done():
        assert time.monotonic() - t0 < timeout, f"{call} was not computed ahead within {timeout} s"
        time.sleep(0.02)


def _key(n: int, d: int, base: float) -> tuple:
    return (NAME, (n, d), (("base", base),))


@pytest.fixture
def counted(monkeypatch, ahead_on):
    """Calls of posenc.schemes.sinusoidal.sinusoid by their (n, d, base), in whichever thread they run."""
    calls, real = [], sinusoidal_module.sinusoidal

    def wrapper(positions, d_model, *, base=10000.0, layout="interleaved"):
        calls.append((positions, d_model, base))
        return real(positions, d_model, base=base, layout=layout)

    wrapper.__module__, wrapper.__qualname__ = real.__module__, real.__qualname__
    monkeypatch.setattr(sinusoidal_module, "sinusoidal", wrapper)
    cache._call.clear()
    yield calls
    cache._call.clear()


def test_step_values_are_one_step_of_each_control(counted):
    at = AppTest.from_function(_script).run()
    assert not at.exception
    steps = at.session_state["steps"]
    assert steps["d"] == ([32], [8])  # the neighbouring options
    assert steps["n"] == ([11], [9])  # one step of an int slider (step 1)
    assert steps["base"] == ([100.5], [99.5])  # the number input's own step
    assert steps["absent"] == ([], [])
    at.session_state["n"] = 12
    at.run()
    assert at.session_state["steps"]["n"] == ([], [11])  # at its top a slider has no step up


def test_calls_ahead_come_in_the_order_a_hand_reaches_them(counted):
    at = AppTest.from_function(_script).run()
    # nothing moved yet: every control onward, in the call's order, then every one back
    assert at.session_state["planned"] == [((11, 16), 100.0), ((10, 32), 100.0), ((10, 16), 100.5),
                                           ((9, 16), 100.0), ((10, 8), 100.0), ((10, 16), 99.5)]
    at.session_state["n"] = 9  # the hand moves n down: on down first, then back up, then the others
    at.run()
    assert at.session_state["planned"][:3] == [((8, 16), 100.0), ((10, 16), 100.0), ((9, 32), 100.0)]
    at.session_state["d"] = 32  # then d up: d has no option above 32, so its way back comes first
    at.run()
    assert at.session_state["planned"][:2] == [((9, 16), 100.0), ((10, 32), 100.0)]  # n, not moved last, onward


def test_a_step_onto_a_value_computed_ahead_is_a_cache_hit(counted):
    at = AppTest.from_function(_script).run()
    assert counted == [(10, 16, 100.0)]
    _wait(_key(11, 16, 100.0))
    _wait(_key(10, 16, 99.5))  # the last of the six
    assert (11, 16, 100.0) in counted and len(counted) == 7
    at.session_state["n"] = 11
    at.run()
    assert not at.exception
    assert counted.count((11, 16, 100.0)) == 1, "the step recomputed a value computed ahead"


def test_nothing_starts_while_a_page_draws(counted):
    call = _key(7, 8, 50.0)
    with ahead.drawing():
        ahead.enqueue([call])
        time.sleep(0.3)
        assert call not in ahead.done() and (7, 8, 50.0) not in counted
    _wait(call)
    assert (7, 8, 50.0) in counted


def test_nothing_starts_while_a_computation_holds_a_slot(counted):
    call = _key(6, 8, 50.0)
    with cache.compute_slot():
        ahead.enqueue([call])
        time.sleep(0.3)
        assert call not in ahead.done()
    _wait(call)


def test_a_call_that_raises_is_dropped_and_the_worker_goes_on(counted):
    bad, good = _key(5, 7, 50.0), _key(5, 8, 50.0)  # an odd width raises ValueError
    ahead.enqueue([bad, good])
    _wait(good)
    assert bad in ahead.done()


def test_the_worker_keeps_its_work_to_itself(counted):
    seen = []
    worker = threading.Thread(target=lambda: seen.extend(_threads.pmap(lambda _: threading.current_thread().name, range(4))),
                              name=ahead.THREAD)
    worker.start()
    worker.join()
    assert seen == [ahead.THREAD] * 4  # pmap lends none of its items to the pool's threads, which the steps use


def test_the_queue_keeps_the_newest(counted):
    with ahead.drawing():  # held, so that nothing is taken from the queue meanwhile
        ahead.enqueue([_key(3, 8, float(b)) for b in range(10, 10 + ahead.MAX_PENDING)])
        ahead.enqueue([_key(3, 8, 1.0), _key(3, 8, 2.0)])
        pending = list(ahead._pending)
    assert pending[:2] == [_key(3, 8, 1.0), _key(3, 8, 2.0)]
    assert len(pending) == ahead.MAX_PENDING and _key(3, 8, float(10 + ahead.MAX_PENDING - 1)) not in pending


def test_off_plans_nothing(counted, monkeypatch):
    monkeypatch.setenv(ahead.ENV, "0")
    at = AppTest.from_function(_script).run()
    assert not at.exception and at.session_state["planned"] == []


def test_a_call_of_many_items_waits_between_them_while_a_page_draws(counted):
    """posenc._threads.pmap, run inline in the worker, waits before each item while a run draws (at most one item of a
    call in progress overlaps a step)."""
    started = []

    def item(x):
        started.append(x)
        return x

    box = {}

    def work():
        _threads.pause_between_items(ahead._wait_idle)
        try:
            box["out"] = _threads.pmap(item, range(3))
        finally:
            _threads.pause_between_items(None)

    with ahead.drawing():
        worker = threading.Thread(target=work, name=ahead.THREAD)
        worker.start()
        time.sleep(0.3)
        assert started == []  # waits before its first item
    worker.join(10)
    assert box["out"] == [0, 1, 2] and started == [0, 1, 2]


def test_a_run_that_asks_for_the_call_in_progress_does_not_wait_on_a_paused_worker(counted):
    """The worker pauses between items while a run draws; a run asking the cache for that very call waits for it, so
    the pause ends (without this the two would wait for each other for ever)."""
    call = ("posenc.test:call", (1,), ())
    state = {"started": threading.Event(), "out": None}

    def work():
        _threads.pause_between_items(ahead._wait_idle)
        ahead._current[0] = call
        try:
            state["out"] = _threads.pmap(lambda x: state["started"].set() or x, range(2))
        finally:
            ahead._current[0] = None
            _threads.pause_between_items(None)

    with ahead.drawing():
        worker = threading.Thread(target=work, name=ahead.THREAD)
        worker.start()
        time.sleep(0.3)
        assert not state["started"].is_set()  # paused: a run draws
        with ahead.wanted(call):  # the run asks for the call the worker holds
            worker.join(10)
        assert state["out"] == [0, 1]


def test_turned_off_the_worker_leaves_what_is_queued(counted, monkeypatch):
    call = _key(9, 8, 50.0)
    monkeypatch.setenv(ahead.ENV, "0")
    ahead.enqueue([call])
    time.sleep(0.3 + ahead.GRACE_S)
    assert call not in ahead.done() and (9, 8, 50.0) not in counted
    monkeypatch.setenv(ahead.ENV, "1")
    _wait(call)
