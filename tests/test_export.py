"""Exports for slides: every chart as PNG and SVG (vl-convert), its data as CSV, arrays as .npy."""

import io

import numpy as np
import pandas as pd
import pytest

from posenc.charts.base import heatmap, matrix_frame, style
from posenc.charts.story import growth_chart
from posenc.io import export
from posenc.views.story import raw_index_growth


@pytest.fixture(scope="module")
def chart_and_data():
    view = raw_index_growth(2048, 64)
    return style(growth_chart(view["frame"], context=2048)), view["frame"]


def _size(png: bytes) -> tuple[int, int]:
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_png_is_a_real_png_at_twice_the_slide_size(chart_and_data):
    ch, _ = chart_and_data
    png = export.chart_png(ch, scale=2.0)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    svg = export.chart_svg(ch).decode()
    w, h = (float(x) for x in __import__("re").search(r'width="([0-9.]+)" height="([0-9.]+)"', svg).groups())
    assert w >= export.SLIDE_WIDTH  # a "container" chart is drawn at the slide width, not 0 px
    width, height = _size(png)
    assert abs(width - 2 * w) <= 1 and abs(height - 2 * h) <= 1
    three = _size(export.chart_png(ch, scale=3.0))
    assert abs(three[0] - 3 * w) <= 1
    assert _size(export.chart_png(ch, scale=1.0))[0] >= export.MIN_PNG_WIDTH  # never under 1,600 px


def test_svg_is_a_vector_drawing_with_the_axis_titles(chart_and_data):
    ch, _ = chart_and_data
    svg = export.chart_svg(ch).decode("utf-8")
    assert svg.lstrip().startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "position t (log)" in svg and "vector norm (log)" in svg


def test_csv_round_trips_the_chart_data(chart_and_data):
    _, frame = chart_and_data
    back = pd.read_csv(io.BytesIO(export.frame_csv(frame)))
    assert list(back.columns) == list(frame.columns)
    np.testing.assert_allclose(back["norm"].to_numpy(), frame["norm"].to_numpy(), rtol=1e-12)


def test_npy_round_trips_without_pickle():
    arr = np.arange(12.0).reshape(3, 4)
    back = np.load(io.BytesIO(export.array_npy(arr)), allow_pickle=False)
    assert back.dtype == arr.dtype and np.array_equal(back, arr)
    with pytest.raises(ValueError, match="numeric"):
        export.array_npy(np.array([object()], dtype=object))


def test_large_heatmap_exports_without_the_5000_row_cap():
    M = np.random.default_rng(0).uniform(-1, 1, size=(128, 128))  # 16,384 rows > Altair's 5,000
    frame = matrix_frame(M, np.arange(128), np.arange(128), row="p", col="j", value="v")
    ch = heatmap(frame, x="j", y="p", value="v", x_title="depth", y_title="position", domain=(-1, 1))
    spec = export.chart_spec(ch)
    assert sum(len(d) for d in spec["datasets"].values()) == 128 * 128
    assert export.chart_png(ch)[:4] == b"\x89PNG"


def test_lazy_array_exports_are_the_full_arrays():
    """The .npy buttons behind the sinusoid, similarity, learned and ALiBi charts hand out the
    whole array the chart samples, computed on click."""
    import posenc
    from posenc.views.learned import builtin_table
    from posenc.views.similarity import full_scores
    from posenc.views.sinusoid import full_encoding

    pe = np.load(io.BytesIO(export.array_npy(full_encoding(300, 64, 10000.0, "interleaved"))))
    assert pe.shape == (300, 64) and np.array_equal(pe, posenc.sinusoidal(np.arange(300), 64))
    S = full_scores("rope", 200, 64, "cosine", 0)
    assert S.shape == (200, 200) and S.flags.writeable
    np.testing.assert_allclose(S, posenc.dense_scores("rope", 200, d=64), atol=1e-9)
    assert np.array_equal(builtin_table("minilm", 0), posenc.minilm_table())
    A = posenc.dense_scores("alibi", 64, n_heads=12, head=8, causal=True)
    np.testing.assert_array_equal(A, posenc.alibi_bias(64, 12, causal=True)[8])


def test_the_slide_png_is_the_slide_svg_rasterised():
    """What the every-chart export test relies on: chart_png is chart_svg at png_scale(svg width)."""
    import re

    from posenc.charts.story import circle_chart
    from posenc.views.circle import circle_view

    v = circle_view(1.0, 40, 100, 0.1)
    ch = style(circle_chart(v["points"], v["outline"], size=300))  # square, narrower than a slide
    svg = export.chart_svg(ch).decode()
    w, h = (float(x) for x in re.search(r'<svg[^>]*\swidth="([0-9.]+)"[^>]*\sheight="([0-9.]+)"', svg).groups())
    png = export.chart_png(ch)
    scale = export.png_scale(w)
    assert scale > 2 and abs(_size(png)[0] - w * scale) <= 1 and abs(_size(png)[1] - h * scale) <= 1
    assert _size(png)[0] >= export.MIN_PNG_WIDTH


def test_charts_build_without_altairs_per_object_validation_and_exports_still_validate():
    """posenc.charts turns Altair's debug mode off (no schema validation as each object is built); an invalid chart
    is then caught where every chart is validated whole: its export."""
    import altair as alt
    from altair.utils import schemapi

    import posenc.charts  # noqa: F401

    assert schemapi.DEBUG_MODE is False
    bad = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_line().encode(x=alt.X("x", scale=alt.Scale(type="nope")))
    with pytest.raises(alt.utils.schemapi.SchemaValidationError):
        export.chart_spec(bad)
