"""posenc.charts.copies: Altair's copies made without rebuilding each object.  A copy is Altair's copy (the same spec),
independent of its original where Altair's is (tests/app/test_chart_copies.py builds whole pages both ways)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest

from posenc.charts import copies

FRAME = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [3.0, 4.0, 1.0], "s": ["a", "b", "a"]})
HEAD = alt.param(name="url_head", value=1, bind=alt.binding_radio(options=[1, 2], name="head"))


def _layered() -> alt.LayerChart:
    base = alt.Chart(FRAME).encode(x=alt.X("x:Q", axis=alt.Axis(title="x", values=[1, 2, 3])), y="y:Q")
    hover = alt.selection_point(on="pointerover", fields=["s"], empty=False)
    line = base.mark_line(strokeWidth=1.6).encode(color=alt.Color("s:N", scale=alt.Scale(domain=["a", "b"]))).add_params(HEAD)
    pts = base.mark_point(size=16).encode(opacity=alt.when(hover).then(alt.value(1.0)).otherwise(alt.value(0.3))).add_params(hover)
    text = alt.Chart(FRAME).mark_text(dx=4).encode(x="x:Q", y="y:Q", text="s:N").transform_filter(alt.datum.x > 1)
    return alt.layer(line, pts, text, height=200).properties(width=300).resolve_scale(color="independent")


def _both(make):
    """``make()`` and its spec with posenc's copies, then with Altair's."""
    try:
        built = [make()]
        fast = built[0].to_dict(validate=True)
        copies.install(False)
        built.append(make())
        slow = built[1].to_dict(validate=True)
    finally:
        copies.install(True)
    return fast, slow


def test_copies_are_installed_and_charts_are_altairs():
    assert copies.installed()
    fast, slow = _both(_layered)
    assert fast == slow
    fast, slow = _both(lambda: alt.hconcat(_layered(), alt.Chart(FRAME).mark_bar().encode(x="s:N", y="sum(y):Q")).configure_view(stroke=None))
    assert fast == slow


@pytest.mark.parametrize("deep", [True, False, ["layer"]])
def test_a_copy_is_altairs_copy(deep):
    chart = _layered()
    ours = chart.copy(deep=deep)
    try:
        copies.install(False)
        theirs = chart.copy(deep=deep)
    finally:
        copies.install(True)
    assert type(ours) is type(theirs) and ours.to_dict() == theirs.to_dict() == chart.to_dict()


def test_a_deep_copy_is_independent_of_its_original():
    chart = _layered()
    before = chart.to_dict()
    twin = chart.copy()
    twin.layer[0].mark.strokeWidth = 9
    twin.layer[0].encoding.x._get("axis").values.append(4)
    twin.layer.append(alt.Chart(FRAME).mark_rule().encode(y="y:Q"))
    assert chart.to_dict() == before
    shallow = chart.copy(deep=False)
    shallow.width = 10
    shallow["height"] = 20
    assert chart.to_dict() == before and shallow.to_dict()["width"] == 10


def test_a_class_that_builds_its_own_copy_keeps_altairs():
    cond = alt.when(alt.datum.x > 1).then(alt.value(1)).otherwise(alt.value(0))
    assert not copies._plain(type(alt.when(alt.datum.x > 1).then(alt.value(1))))
    chart = alt.Chart(FRAME).mark_point().encode(x="x:Q", opacity=cond)
    assert chart.copy().to_dict() == chart.to_dict()
