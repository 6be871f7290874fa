"""posenc.charts.base.style: a line or an area carries no ARIA description per point (Vega labels its one SVG path with
its first point's, and the browser formats one for every point on every draw); points and guides keep theirs."""

from __future__ import annotations

import re

import altair as alt
import pandas as pd
import vl_convert as vlc

from posenc.charts.base import _style

FRAME = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [4.0, 5.0, 6.0]})


def _svg(chart) -> str:
    return vlc.vegalite_to_svg(chart.to_dict())


def test_a_line_was_labelled_with_its_first_point_only():
    svg = _svg(alt.Chart(FRAME).mark_line().encode(x="x:Q", y="y:Q"))  # Vega-Lite's default: the reason for the setting
    assert re.findall(r'<path aria-label="([^"]*)"', svg) == ["x: 1; y: 4"]


def test_styled_lines_and_areas_have_no_description_and_points_and_axes_keep_theirs():
    base = alt.Chart(FRAME).encode(x="x:Q", y="y:Q")
    for chart in (_style(alt.layer(base.mark_line(), base.mark_area(opacity=0.2), base.mark_point())),
                  _style(alt.layer(base.mark_line(), base.mark_point()).configure_view(stroke=None))):  # a builder's own config
        spec = chart.to_dict()
        assert spec["config"]["line"] == {"aria": False} and spec["config"]["area"] == {"aria": False}
        vega = vlc.vegalite_to_vega(spec)
        marks = {m["type"]: m for m in vega["marks"] if m["type"] != "group"}
        assert "description" not in marks["line"]["encode"]["update"]
        assert "description" in marks["symbol"]["encode"]["update"]  # a point is its own element: it keeps its label
        labels = re.findall(r'aria-label="([^"]*)"', _svg(chart))
        assert labels[:2] == ["X-axis titled 'x' for a linear scale with values from 1.0 to 3.0",
                              "Y-axis titled 'y' for a linear scale with values from 0 to 6"]
        assert labels[2:] == ["x: 1; y: 4", "x: 2; y: 5", "x: 3; y: 6"]  # the three points; the line and the area none
