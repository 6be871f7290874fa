"""The interact benchmark steps expanders and then what they hold: a box that computes only while open
(``posenc.ui.section.when_open``, RoPE's variants) hides its controls until it is opened, so the benchmark opens it --
a step, timed from the click on its summary -- and then times every control it holds, which a page's first scan could
not see."""

from __future__ import annotations

import pytest

from bench import interact

pytestmark = pytest.mark.e2e

BOX = "Measured: p, the pairs that turn, and the score against the offset"


def test_a_closed_box_is_a_step_and_its_controls_are_timed_once_it_is_open(live_server, tab):
    interact._SEEN.clear(), interact._FORWARD.clear()
    interact.first_paint(tab, f"{live_server['url']}/rope?d=64")
    found = interact.controls(tab)
    boxes = [c for c in found if c[0] == "expander" and BOX.startswith(c[1])]  # a label is kept to 60 characters
    assert boxes, found
    assert not any(c[1].startswith("p (") for c in found)  # the box is closed: its input is not on the page yet
    assert not interact.controls(tab, inside=True)  # nothing inside an expander is visible yet
    kind, label, i = boxes[0]
    assert interact.value_of(tab, kind, i) == "closed"
    row = interact.control_steps(tab, kind, label, i, new_steps=1, repeats=0)  # one new value: open
    assert row["new_tries"] and 0 < row["new_s"] < 30 and interact.value_of(tab, kind, i) == "open"
    inside = interact.controls(tab, inside=True)
    p = ("number", "p (share of pairs that rotate)")
    assert [c[:2] for c in inside] == [p]  # the other boxes are still closed
    assert interact._where(tab, *inside[0]) == (*p, BOX)
    assert interact.step_time(tab, "number", inside[0][2]) is not None  # and it steps like any number input


def test_a_box_stays_open_while_a_control_inside_leaves_its_default(live_server, tab):
    """A control inside a box that leaves its default writes its key to the address bar, the key a link uses to open
    the box. The box reads the address once per session: when it read it every run, its new ``expanded`` made
    Streamlit draw it anew, closed, at the step that wrote the key (the benchmark found it at RoPE's range N)."""
    interact._SEEN.clear(), interact._FORWARD.clear()
    interact.first_paint(tab, f"{live_server['url']}/rope?d=64")
    box = next(c for c in interact.controls(tab) if c[0] == "expander" and c[1].startswith("Measured: the range N"))
    assert interact.step_time(tab, *box[::2]) is not None and interact.value_of(tab, *box[::2]) == "open"
    n = next(c for c in interact.controls(tab, inside=True) if c[1] == "range N")
    for _ in range(3):  # 2048 -> 8192 (its key enters the address bar) -> back -> ...
        assert interact.step_time(tab, "slider", n[2]) is not None
        assert interact.value_of(tab, *box[::2]) == "open", tab.url
    assert "rand_N=" in tab.url
