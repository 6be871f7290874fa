"""posenc.charts.template: a chart built once per setting with each call's rows swapped in is the chart its builder
builds from those rows -- the same Vega-Lite spec, datasets (Arrow bytes) included -- for every templated builder."""

from __future__ import annotations

from functools import partial

import pytest

from posenc.charts import base, memo, template
from posenc.charts import extension as ext
from posenc.ui import compat
from posenc.views.measure import bands_view, fidelity_view, long_range_view
from posenc.views.precision import precision_view


@pytest.fixture(autouse=True)
def _no_remembered_charts():
    # a chart the memo kept from an earlier test on this worker was made before this test's template.clear(), so the
    # template no longer knows it: every test here builds its charts afresh
    memo.clear()
    yield


SETTINGS = [(128, 500000.0, 8192, 4.0), (130, 10000.0, 4096, 8.0), (64, 1e6, 2048, 32.0)]


def _same(fast, direct) -> None:
    a, b = compat.chart_spec(fast), compat.chart_spec(direct)
    assert a == b
    # the templated chart's spec came from its template's, converted once, with the rows' Arrow bytes swapped in
    assert compat._swapped(fast) is not None and compat._swapped(direct) is None
    # styled through the template (charts.base.style) as styled directly
    assert compat.chart_spec(base.style(fast)) == compat.chart_spec(base._style(direct))


def _cases():
    for d, theta, train, s in SETTINGS:
        b = bands_view(d, theta, train, s, "", "controls")
        f = fidelity_view(d, theta, train, s, "", "controls", 64)
        lr = long_range_view(d, theta, train, s, "", "controls", 0.5)
        ends = partial(ext.line_ends, log_y=False)
        yield (ext._ratio_chart, (b["frame"], ext.line_ends(b["frame"], "wavelength", "ratio", plot_px=340, log_y=True),
                                  ext._mark(b["trained"], f"L = {b['trained']:,}"), tuple(b["names"])), {"height": 340})
        yield (ext._fidelity_chart, (f["frame"], ends(f["frame"], "distance", "max", plot_px=300), tuple(f["names"])), {"height": 300})
        yield (ext._percentile_chart, (lr["logits"], None, ends(lr["logits"], "distance", "p50", plot_px=320), tuple(lr["names"])),
               {"x": "distance", "x_title": "D", "y_title": "logit", "baseline": None, "height": 320})
        yield (ext._percentile_chart, (lr["entropy"], lr["entropy"].drop_duplicates("length"),
                                       ends(lr["entropy"], "length", "p50", plot_px=320), tuple(lr["names"])),
               {"x": "length", "x_title": "n", "y_title": "H", "baseline": "uniform", "height": 320})


@pytest.mark.parametrize("repeat", [0, 1])
def test_every_templated_extension_chart_is_the_chart_its_builder_builds(repeat):
    if repeat == 0:
        template.clear()
    for fn, args, kwargs in _cases():  # the first setting builds each template, the later ones swap rows into it
        _same(fn(*args, **kwargs), fn.__wrapped__(*args, **kwargs))


def test_the_precision_chart_too():
    template.clear()
    for d, theta in [(128, 500000.0), (64, 10000.0), (256, 1e6)]:
        v = precision_view(d, theta)
        for frame, x in ((v["cos"], "position"), (v["score"], "distance")):
            args = (frame, tuple(dict.fromkeys(frame["mode"])))
            kwargs = {"x": x, "x_title": "x", "y_title": "y", "tol": 1e-3, "height": 320}
            _same(ext._precision_chart(*args, **kwargs), ext._precision_chart.__wrapped__(*args, **kwargs))


def test_a_template_is_never_changed_by_a_swap():
    template.clear()
    (fn, args, kwargs), *_ = list(_cases())[:1]
    first = compat.chart_spec(fn(*args, **kwargs))
    fn(args[0].iloc[:5].copy(), *args[1:], **kwargs)  # other rows swapped in
    assert compat.chart_spec(fn(*args, **kwargs)) == first


def test_every_templated_sinusoid_chart_is_the_chart_its_builder_builds():
    from posenc.charts import sinusoid as sc
    from posenc.views.clock import clock_view
    from posenc.views.sinusoid import spectrum_view
    from posenc.views.why_base import why_base_view

    template.clear()
    for d, theta, n in [(128, 10000.0, 128), (64, 500.0, 300), (130, 12345.0, 2048)]:
        sp = spectrum_view(d, theta, n, "interleaved")
        frame, marks = sp["frame"], sp["marks"]
        last = float(frame["pair"].max())
        args = (frame, marks, marks[marks["side"] == "left"], marks[marks["side"] != "left"].assign(last_pair=last))
        _same(sc._spectrum_chart(*args, height=340), sc._spectrum_chart.__wrapped__(*args, height=340))
        wb = why_base_view(n, d, theta, "interleaved")
        kw = {"order": tuple(wb["line_series"]), "height": 320}
        length = sc.pd.DataFrame({"wavelength": [float(n)], "label": [f"n = {n:,}"]})
        _same(sc._bases_chart(wb["lines"], length, **kw), sc._bases_chart.__wrapped__(wb["lines"], length, **kw))
        # and through the public builder, the length's rule as it was drawn before it became rows (n is in no template)
        _same(sc.bases_chart(wb["lines"], n=n, order=wb["line_series"]),
              _direct(lambda wb=wb, n=n: sc.bases_chart(wb["lines"], n=n, order=wb["line_series"])))
        kw = {"order": tuple(wb["dot_series"]), "height": 320}
        _same(sc._dot_chart(wb["dots"], **kw), sc._dot_chart.__wrapped__(wb["dots"], **kw))
    for p in (100, 101, 5000):
        ck = clock_view(p)
        args = (ck["frame"].assign(x0=0.0, y0=0.0), ck["dial"], tuple(ck["frame"]["hand"]))
        _same(sc._clock_chart(*args, size=300), sc._clock_chart.__wrapped__(*args, size=300))


def _direct(build):
    """What ``build`` draws built directly: no template, and not the chart ``memo`` remembered from the templated call."""
    memo.clear()
    template.ENABLED[0] = False
    try:
        return build()
    finally:
        template.ENABLED[0] = True


def test_image_heatmaps_too():
    """``raster.image_stack`` (Similarity's matrices, T5 and ALiBi, the lab's maps): images, hover grid and legend
    pins swapped into one template per setting."""
    import numpy as np

    from posenc.charts import raster

    template.clear()
    rng = np.random.default_rng(0)
    for n in (64, 65, 100, 128):
        for kw in ({}, {"x_labels": [f"c{i}" for i in range(n)], "legend": False},
                   {"factor": "2", "fields": ("head",), "where": "datum.head == 1"}):
            fields = kw.get("fields", ())
            stack = {tuple(range(len(fields))) or (): rng.standard_normal((n, n))} if not fields else \
                {(1,): rng.standard_normal((n, n)), (2,): rng.standard_normal((n, n))}
            args = dict(domain=(-3.0, 3.0), x_title="j", y_title="i", value_title="v", **kw)
            fast = raster.image_stack(stack, **args)
            _same(fast, _direct(lambda stack=stack, args=args: raster.image_stack(stack, **args)))


def test_the_rope_charts_too():
    from posenc.charts import rope as rc
    from posenc.views import rope as rv

    template.clear()
    for d, theta in [(128, 10000.0), (64, 500000.0), (130, 12000.0)]:
        rot = rv.rotation_view(d, theta, "half_split", "random", 0, 0, 5, 2, 100)
        dec = rv.decay_view(d, theta, "random", 0, 5000)
        lay = rv.layout_view(d, theta, "random", 0, 5)
        for build in (lambda rot=rot: rc.rotation_chart(rot["arrows"], rot["orbits"], radius=rot["radius"]),
                      lambda dec=dec: rc.decay_chart(dec["frame"]), lambda lay=lay: rc.layout_chart(lay["frame"])):
            _same(build(), _direct(build))


def test_a_loaded_model_swaps_its_rows_into_the_methods_template():
    """The model's name is data (its own layer draws and labels its rows): each public builder gives its template the
    methods' names only, so a second model builds no new template, and each chart is the one built directly with the
    model's name among the names."""
    from posenc.charts import memo
    from posenc.io.modelconfig import EXAMPLE_CONFIGS

    template.clear()
    memo.clear()  # a chart remembered by an earlier test on this worker would never reach its template
    made = []
    for model in ("Llama 3.1 8B", "Qwen2.5 7B + YaRN"):
        config = EXAMPLE_CONFIGS[model]
        b = bands_view(128, 500000.0, 8192, 4.0, config, "controls")
        f = fidelity_view(128, 500000.0, 8192, 4.0, config, "controls", 64)
        lr = long_range_view(128, 500000.0, 8192, 4.0, config, "controls", 0.5)
        assert any(name.startswith(base.MODEL_PREFIX) for name in f["names"]), f["names"]
        ends = partial(ext.line_ends, log_y=False)
        entropy = lr["entropy"]
        pairs = [  # (through the public builder, built directly from the full names, the model's included)
            (ext.ratio_chart(b["frame"], b["names"], trained=b["trained"]),
             ext._ratio_chart.__wrapped__(b["frame"], ext.line_ends(b["frame"], "wavelength", "ratio", plot_px=340, log_y=True),
                                          ext._mark(b["trained"], f"L = {b['trained']:,}"), tuple(b["names"]), height=340)),
            (ext.fidelity_chart(f["frame"], f["names"]),
             ext._fidelity_chart.__wrapped__(f["frame"], ends(f["frame"], "distance", "max", plot_px=300), tuple(f["names"]), height=300)),
            (ext.percentile_chart(entropy, lr["names"], x="length", x_title="n", y_title="H", baseline="uniform"),
             ext._percentile_chart.__wrapped__(entropy, entropy.drop_duplicates("length"), ends(entropy, "length", "p50", plot_px=320),
                                               tuple(lr["names"]), x="length", x_title="n", y_title="H", baseline="uniform",
                                               height=320)),
        ]
        for fast, direct in pairs:
            _same(fast, direct)
        made.append(len(template._TEMPLATES))
    assert made[0] == made[1] == 3  # the second model reused all three


def test_a_swapped_spec_keeps_a_frame_with_a_multiindex_apart():
    """The empty frames are told apart by index names, one per index level (a MultiIndex takes a list of them)."""
    import altair as alt
    import pandas as pd

    @template.templated("frame", "other")
    def build(frame, other):
        return alt.layer(alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q"), alt.Chart(other).mark_point().encode(x="x:Q", y="y:Q"))

    template.clear()
    for k in (1, 2):
        index = pd.MultiIndex.from_tuples([(0, i) for i in range(3)])
        frame = pd.DataFrame({"x": [0.0, 1.0, 2.0], "y": [k, 2.0 * k, 3.0]}, index=index)
        other = pd.DataFrame({"x": [0.5], "y": [float(k)]})
        fast = build(frame, other)
        assert compat._swapped(fast) is not None
        assert compat.chart_spec(fast) == compat.chart_spec(build.__wrapped__(frame, other))
