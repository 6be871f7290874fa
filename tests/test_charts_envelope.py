"""posenc.charts.base.envelope: the rows a line needs to look the same ``columns`` wide."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posenc.charts.base import LINE_COLUMNS, envelope
from posenc.charts.rope import decay_chart
from posenc.views.rope import decay_view


def _columns(x, lo, hi, columns):
    return np.minimum(((x - lo) / ((hi - lo) / columns)).astype(int), columns - 1)


def test_every_column_keeps_its_extremes_and_nothing_is_invented():
    x = np.arange(20_001)
    frame = pd.DataFrame({"x": np.r_[x, x], "y": np.r_[np.cos(x * 1.0) * np.exp(-x / 5e3), np.sin(x / 700.0)],
                          "s": ["fast"] * x.size + ["slow"] * x.size})
    out = envelope(frame, "x", "y", by="s", columns=500)
    assert len(out) <= 2 * (2 * 500 + 2) and len(out) < len(frame) / 10
    assert out.index.isin(frame.index).all() and (out.values == frame.loc[out.index].values).all()  # real rows
    for name, g in frame.groupby("s"):
        kept = out[out["s"] == name]
        assert kept["x"].is_monotonic_increasing
        assert kept["x"].iloc[0] == g["x"].iloc[0] and kept["x"].iloc[-1] == g["x"].iloc[-1]  # the ends
        ca, cb = _columns(g["x"].to_numpy(), 0, 20_000, 500), _columns(kept["x"].to_numpy(), 0, 20_000, 500)
        full = pd.Series(g["y"].to_numpy()).groupby(ca)
        part = pd.Series(kept["y"].to_numpy()).groupby(cb)
        assert (full.min() == part.min()).all() and (full.max() == part.max()).all()  # the band in every column


def test_a_short_series_is_kept_whole_and_bad_columns_are_refused():
    frame = pd.DataFrame({"x": np.arange(100), "y": np.random.default_rng(0).normal(size=100)})
    assert envelope(frame, "x", "y", columns=50) is frame
    assert envelope(frame.iloc[:0], "x", "y").empty
    with pytest.raises(ValueError, match="columns"):
        envelope(frame, "x", "y", columns=0)


def test_the_rope_decay_chart_sends_the_envelope_and_the_view_keeps_every_distance():
    view = decay_view(128, 10_000.0, "random", 0, 5_000)
    assert len(view["frame"]) == 2 * 5_001  # the view (and the CSV export) keep every distance
    spec = decay_chart(view["frame"]).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert 2 * LINE_COLUMNS < len(rows) <= 2 * (2 * LINE_COLUMNS + 2)


@pytest.mark.parametrize("width", [None, 330])  # the export (a slide's 800 px), a phone's column
def test_the_decay_chart_labels_every_tick_of_its_distance_axis(width):
    """Vega's default ticks (one per 40 px) lost every other label from "1,000" on, where the labels widen: the export read
    0, 200, …, 1,000, 1,400, 1,800.  A tick per ~90 px keeps each one labelled, evenly spaced."""
    from posenc.charts.base import style
    from posenc.io.export import chart_svg
    from tests.scenegraph import shown_texts

    view = decay_view(128, 10_000.0, "random", 0, 5_000)
    ch = style(decay_chart(view["frame"]))
    svg = chart_svg(ch if width is None else ch.properties(width=width)).decode()
    ticks = [int(t.replace(",", "")) for t in shown_texts(svg, "role-axis-label")]  # x's labels; Vega hides an overlap at 0
    steps = np.diff(ticks)
    assert len(ticks) >= 3 and ticks[0] == 0 and (steps == steps[0]).all(), ticks


def test_log_ticks_label_a_short_log_axis_across_its_span():
    """A 50-200 axis (What an extension costs): Vega labelled 50 … 100 and nothing above; ``log_ticks`` labels the span
    at 1, 1.5, 2, 3, 5 and 7 of each decade, within it only."""
    from posenc.charts.base import log_ticks

    assert log_ticks(49.8, 197.8) == [50.0, 70.0, 100.0, 150.0]
    assert log_ticks(0.9, 12.0) == [1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0]
    assert log_ticks(54.0, 58.0) == []  # nothing in the span: the caller picks its own label
    with pytest.raises(ValueError, match="lo and hi"):
        log_ticks(0.0, 10.0)
