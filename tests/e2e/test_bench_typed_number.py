"""The interact benchmark steps an empty number input the way a person does: it types a number and presses Enter
(an exercise's "Your prediction" has no value, so its step buttons do nothing until it holds one), and the step is
timed from that Enter.  Before, the benchmark called these 14 inputs "cannot move" and timed none of them."""

from __future__ import annotations

import pytest

from bench import interact

pytestmark = pytest.mark.e2e


def test_an_empty_prediction_is_typed_then_stepped_and_timed(live_server, tab):
    interact._TYPED.clear(), interact._FORWARD.clear()
    interact.first_paint(tab, f"{live_server['url']}/raw_index")  # as the benchmark opens a page: settled
    found = [c for c in interact.controls(tab) if c[0] == "number" and c[1] == "Your prediction"]
    assert found, interact.controls(tab)
    kind, _, i = found[0]
    assert interact.value_of(tab, kind, i) == ""
    t = interact.step_time(tab, kind, i)  # typed: 1, Enter
    assert t is not None and 0 < t < 30
    assert interact.LEADS[-1] >= 0  # timed from the Enter, not from before the driver found the input
    first = interact.value_of(tab, kind, i)
    assert first and float(first) == 1.0
    assert interact.step_time(tab, kind, i) is not None  # holding a number now: its step button
    second = interact.value_of(tab, kind, i)
    assert float(second) > float(first)
    assert interact.step_time(tab, kind, i, back=True) is not None and interact.value_of(tab, kind, i) == first
