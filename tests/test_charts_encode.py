"""posenc.charts builds each encoding channel directly instead of through Altair's ``from_dict`` (posenc/charts/__init__.py:
~4 ms a channel there, 0.06 ms built directly): the spec of every kind of encoding the charts use is the same both ways."""

from __future__ import annotations

import altair as alt
import pandas as pd
import pytest
from altair.utils import core

import posenc.charts as charts

FRAME = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0], "s": ["a", "b"], "learned": [True, False]})
PICK = alt.param(name="url_head", value=1, bind=alt.binding_radio(options=[1, 2], name="head"))
ENCODINGS = [
    {"x": "x:Q", "y": "y:Q"},
    {"x": "mean(x):Q", "y": alt.Y("y:Q", title="y"), "color": "s:N"},
    {"tooltip": ["s:N", "x:Q", alt.Tooltip("y:Q", format=".3f")], "detail": "s:N"},
    {"y": alt.value(4), "text": "s:N", "x": alt.value(0)},
    {"strokeWidth": alt.condition("datum.x == 1", alt.value(3.5), alt.value(2)), "x": "x:O"},
    {"opacity": alt.condition(alt.datum.learned, alt.value(1.0), alt.value(0.3)), "x": "x:Q"},
    {"opacity": alt.condition(PICK, alt.value(1.0), alt.value(0.2)), "x": "x:Q"},
    {"color": {"field": "s", "type": "nominal", "legend": None}, "x": {"field": "x", "type": "quantitative"}},
    {"x": alt.datum(1.5), "y": "y:Q"},
]


@pytest.mark.parametrize("encoding", ENCODINGS, ids=range(len(ENCODINGS)))
def test_an_encoding_built_directly_gives_altairs_spec(encoding, monkeypatch):
    assert core._ChannelCache._wrap_in_channel is charts._direct  # the fast path is in place
    fast = alt.Chart(FRAME).mark_line().encode(**encoding).add_params(PICK).to_dict(validate=True)
    monkeypatch.setattr(core._ChannelCache, "_wrap_in_channel", charts._SLOW_WRAP)
    slow = alt.Chart(FRAME).mark_line().encode(**encoding).add_params(PICK).to_dict(validate=True)
    assert fast == slow
