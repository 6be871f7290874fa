"""Views and charts of the RoPE page (9) and the context-extension page (10), as plain functions.

Numbers are pinned against formulas, against posenc computed another way, and against literals
from Hugging Face's code (run) and the papers named per test.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from posenc.charts import rope as charts
from posenc.charts.base import MAX_MARKS
from posenc.io.modelconfig import EXAMPLE_CONFIGS
from posenc.registry import rope_scaling
from posenc.schemes.kinds import probe_vector
from posenc.schemes.rotary import (
    apply_rope,
    pair_permutation,
    rope_decay_bound,
    rope_offset_scores,
)
from posenc.schemes.scaling import default_inv_freq, llama3_bands, yarn_ramp
from posenc.views import extension as ext
from posenc.views import rope as views

LIMITS = (("d", 4, 512, 2), ("base", 2.0, 1e9, 0), ("train", 16, 1_048_576, 16), ("s", 1.0, 64.0, 0))


def spec(chart) -> dict:
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


def _without_data(sp: dict) -> dict:
    """The spec with its datasets and the layers' dataset names left out: what the browser builds a view from."""
    out = {k: v for k, v in sp.items() if k != "datasets"}
    out["layer"] = [{k: v for k, v in layer.items() if k != "data"} for layer in sp.get("layer", [])]
    return out


def marks(sp: dict) -> list[str]:
    layers = sp.get("layer", [sp])
    out = []
    for layer in layers:
        if "layer" in layer:
            out += marks(layer)
        else:
            m = layer["mark"]
            out.append(m if isinstance(m, str) else m["type"])
    return out


# ============================================================================ page 9

@pytest.mark.parametrize("layout", ["half_split", "interleaved"])
def test_rotation_scores_are_shift_invariant(layout):
    v = views.rotation_view(64, 10000.0, layout, "random", 3, 5, 5, 2, 100)
    q, k = probe_vector(64, "random", seed=3), probe_vector(64, "random", seed=4)
    inv = default_inv_freq(64, 10000.0)
    # the closed form q^T R_(n-m) k, a different code path from apply_rope + dot
    closed = rope_offset_scores([2 - 5], inv, q, k, layout=layout)[0]
    assert v["score"] == pytest.approx(closed, abs=1e-12)
    assert v["score_shifted"] == pytest.approx(closed, abs=1e-12)
    assert v["difference"] <= 1e-12 and v["shift_invariant"]
    assert v["angle"] == pytest.approx(v["angle_shifted"], abs=1e-12)
    assert v["theta"] == pytest.approx(10000.0 ** (-2 * 5 / 64), rel=1e-15) and v["wavelength"] == pytest.approx(2 * math.pi / v["theta"])
    a, b = v["channels"]
    assert (a, b) == ((5, 37) if layout == "half_split" else (10, 11))
    # rotations keep the pair's length: every q arrow has |(q_a, q_b)|, every k arrow |(k_a, k_b)|
    arrows = v["arrows"]
    r = np.hypot(arrows["x"], arrows["y"]).to_numpy()
    np.testing.assert_allclose(r[:2], math.hypot(q[a], q[b]), rtol=1e-12)
    np.testing.assert_allclose(r[2:], math.hypot(k[a], k[b]), rtol=1e-12)
    orb = v["orbits"]
    np.testing.assert_allclose(np.hypot(orb.x, orb.y)[orb.vector == "q"], math.hypot(q[a], q[b]), rtol=1e-12)
    # the angle from q to k in this pair is the initial angle plus (n - m) theta (wrapped)
    start = math.atan2(k[b], k[a]) - math.atan2(q[b], q[a])
    want = math.remainder(start + (2 - 5) * v["theta"], 2 * math.pi)
    assert v["angle"] == pytest.approx(want, abs=1e-12)
    assert list(arrows["position"]) == [5, 105, 2, 102]


def test_rotation_rejects_bad_arguments():
    with pytest.raises(ValueError, match="pair"):
        views.rotation_view(64, 10000.0, "half_split", "random", 0, 32, 5, 2, 100)
    with pytest.raises(ValueError, match="head_dim"):
        views.rotation_view(63, 10000.0, "half_split", "random", 0, 0, 5, 2, 100)
    with pytest.raises(ValueError, match="layout"):
        views.rotation_view(64, 10000.0, "diagonal", "random", 0, 0, 5, 2, 100)
    with pytest.raises(ValueError, match="probe"):
        views.rotation_view(64, 10000.0, "half_split", "gaussian", 0, 0, 5, 2, 100)


def test_shift_rounding_is_the_score_change_of_each_shift_and_grows_with_the_position():
    v = views.shift_rounding_view(64, 10000.0, "half_split", "random", 3, 5, 2)
    q, k = probe_vector(64, "random", seed=3), probe_vector(64, "random", seed=4)
    inv = default_inv_freq(64, 10000.0)
    base = rope_offset_scores([2 - 5], inv, q, k)[0]  # the exact score (closed form), which no shift changes
    frame = v["frame"]
    assert list(frame["shift"]) == [10**j for j in range(8)]
    # each decade's RMS from apply_rope at the 16 shifts, one at a time.  At s = 1 the change is itself summation-order
    # rounding (~1e-15), so a different dot product agrees only in size; at 10^7 the angle's rounding (~1e-10) dominates
    for j, rel in ((0, 0.5), (7, 1e-4)):
        s = 10**j + np.arange(16)
        got = [float(apply_rope(q[None], [5 + x], inv)[0] @ apply_rope(k[None], [2 + x], inv)[0]) for x in s]
        want = math.sqrt(np.mean((np.array(got) - v["score"]) ** 2))
        assert frame["rms"].iloc[j] == pytest.approx(want, rel=rel)
    assert v["score"] == pytest.approx(base, abs=1e-12)
    assert v["last"] <= 1e-6 * abs(base)  # still rounding, not a change of the score
    assert v["grows"] and v["ratio"] >= 1e4 and v["last"] > 100 * v["first"]


@pytest.mark.parametrize("probe", ["random", "ones"])
def test_shift_rounding_cancels_when_query_and_key_share_a_position_and_starts_large_far_out(probe):
    # m = n: q and k turn by the same rounded angle, so their relative angle is exactly 0 at every shift
    assert not views.shift_rounding_view(64, 10000.0, "interleaved", probe, 0, 7, 7)["grows"]
    far = views.shift_rounding_view(64, 10000.0, "half_split", probe, 0, 10**7, 2)  # a large m: large from the start
    near = views.shift_rounding_view(64, 10000.0, "half_split", probe, 0, 5, 2)
    assert far["first"] > 100 * near["first"] and not far["grows"]
    with pytest.raises(ValueError, match="m"):
        views.shift_rounding_view(64, 10000.0, "half_split", probe, 0, -1, 2)


# RoFormer, arXiv:2104.09864 §3.4.3: the relative upper bound for d = 128, computed from its definition
SCHEMES_BOUND_D128 = {0: 32.5, 1: 31.538, 2: 28.956, 5: 20.845, 10: 17.954, 20: 15.242, 50: 12.629, 100: 10.227,
                      200: 7.245, 500: 6.190, 1000: 4.471, 2000: 5.047, 5000: 7.596}


def test_decay_view_matches_the_reference_table():
    v = views.decay_view(128, 10000.0, "ones", 0, 5000)
    table = v["table"].set_index("distance")
    for dist, want in SCHEMES_BOUND_D128.items():
        assert table.loc[dist, "bound"] == pytest.approx(want, abs=5e-4), dist
    assert v["bound0"] == 32.5 == np.mean(np.arange(1, 65))
    assert v["score0"] == 128.0  # ones probe: |q|^2 = d
    # not monotone: the bound rises from 1000 to 2000 and from 2000 to 5000 (RoFormer, arXiv:2104.09864 §3.4.3, the bound computed)
    assert [(d1, d2) for d1, _, d2, _ in v["rises"]] == [(1000, 2000), (2000, 5000)]
    f = v["frame"]
    assert v["step"] == 1 and v["n_points"] == 5001 and len(f) == 2 * 5001
    bound = f[f.series == f.series.cat.categories[1]]
    np.testing.assert_allclose(bound["value"], rope_decay_bound(np.arange(5001), 128), rtol=1e-6)
    np.testing.assert_allclose(bound["relative"], bound["value"] / 32.5, rtol=1e-6)
    score = f[f.series == f.series.cat.categories[0]]
    theta = default_inv_freq(128)
    np.testing.assert_allclose(score["value"].iloc[:50], 2 * np.cos(np.outer(np.arange(50), theta)).sum(1), rtol=1e-5, atol=1e-4)
    assert v["first_rise"] is not None and v["first_rise"] < 100  # it oscillates early


def test_decay_view_downsamples_long_ranges():
    v = views.decay_view(512, 10000.0, "random", 0, 50_000)
    assert v["step"] > 1 and v["n_points"] <= views.MAX_CURVE_POINTS + 1
    assert len(v["frame"]) <= MAX_MARKS and v["frame"]["distance"].max() == 50_000
    assert v["bound0"] == pytest.approx(np.mean(np.arange(1, 257)))


def test_layout_view_one_permutation_apart():
    v = views.layout_view(128, 10000.0, "random", 0, 12345)
    assert v["rotate_maxdiff"] <= 1e-12 and v["score_maxdiff"] <= 1e-12  # the brief: <= 1e-12
    assert v["unpermuted_maxdiff"] > 1.0  # without the permutation the two layouts disagree
    sym = views.layout_view(128, 10000.0, "ones", 0, 7)  # all-ones is permutation-symmetric
    assert sym["unpermuted_maxdiff"] <= 1e-12
    pairs = v["pairs"]
    assert len(pairs) == 64 and pairs.loc[3, "half_split"] == "3, 67" and pairs.loc[3, "interleaved"] == "6, 7"
    np.testing.assert_array_equal(pairs["theta"], default_inv_freq(128))
    f = v["frame"]
    assert len(f) == 3 * 256 and set(f.columns) == {"offset", "score", "series"}


def test_layout_identity_on_the_reference_vector():
    # HF transformers apply_rotary_pos_emb and GPT-J rotate_every_two, run: x = [1..8], d = 8, base 1e4, position 3 (values from running HF)
    x = np.arange(1.0, 9.0)
    inv = default_inv_freq(8)
    neox = apply_rope(x[None], [3], inv, layout="half_split")[0]
    gptj = apply_rope(x[None], [3], inv, layout="interleaved")[0]
    np.testing.assert_allclose(neox[:2], [-1.69559252, 0.13755167], atol=1e-7)
    np.testing.assert_allclose(gptj[:2], [-1.27223253, -1.83886504], atol=1e-7)
    P = pair_permutation(8)
    np.testing.assert_array_equal(gptj, apply_rope(x[P][None], [3], inv, layout="half_split")[0][np.argsort(P)])


# ============================================================================ page 10

def test_target_length():
    assert ext.target_length(8192, 8.0) == 65536
    with pytest.raises(ValueError, match="cap"):
        ext.target_length(1_048_576, 128.0)
    with pytest.raises(ValueError, match="factor"):
        ext.target_length(8192, 0.5)


@pytest.mark.parametrize(
    "d, base, train, s, low, high",
    [(16, 10000.0, 2048, 4.0, 2, 6), (128, 10000.0, 4096, 4.0, 20, 46)],  # HF transformers modeling_rope_utils, _compute_yarn_parameters, run
)
def test_extension_detail_yarn_reference(d, base, train, s, low, high):
    v = ext.extension_detail(d, base, train, s)
    assert (v["yarn_low"], v["yarn_high"]) == (low, high)
    assert v["yarn_attention"] == pytest.approx(1.1386294361, abs=1e-10) == v["yarn_mscale"]
    ramp = yarn_ramp(d, base, rope_scaling("rope_yarn", base=base, factor=s, original_max_position_embeddings=train))
    assert (ramp["low"], ramp["high"]) == (low, high)  # the range the page prints is the ramp's own
    ramp = ramp["ramp"]
    assert np.all(ramp[: low + 1] == 0) and np.all(ramp[high:] == 1) and np.all(np.diff(ramp) >= 0)
    if d == 16:
        assert v["yarn_low_exact"] == pytest.approx(2.0160, abs=5e-5) and v["yarn_high_exact"] == pytest.approx(5.0263, abs=5e-5)


def test_extension_detail_llama3_bands():
    v = ext.extension_detail(128, 500000.0, 8192, 8.0)
    assert v["band_counts"] == (29, 6, 29)  # Meta llama-models apply_scaling == HF _compute_llama3_parameters, run
    assert v["band_limits"] == (2048.0, 8192.0)
    bands = llama3_bands(128, 500000.0, rope_scaling("rope_llama3", base=500000.0, factor=8.0, original_max_position_embeddings=8192))
    assert bands[[0, 28, 29, 34, 35, 63]].tolist() == [0, 0, 1, 1, 2, 2]  # kept, smoothed, divided: in order of wavelength


def test_model_view():
    v = ext.model_view(EXAMPLE_CONFIGS["Qwen2.5 7B + YaRN"], LIMITS)
    assert v["fits"] and v["controls"] == {"d": 128, "base": 1e6, "train": 32768, "s": 4.0}
    table = dict(zip(v["table"]["field"], v["table"]["value"]))
    assert table["attention factor"] == f"{0.1 * math.log(4) + 1:.10g}"
    assert table["factor × trained length"] == "131,072" and table["served length"] == "32,768"
    assert table["logit scale"] == f"{(0.1 * math.log(4) + 1) ** 2:.10g}"
    wide = ext.model_view('{"head_dim": 1024, "rope_theta": 1e4, "max_position_embeddings": 4096}', LIMITS)
    assert not wide["fits"] and "d = 1024" in wide["problems"][0]
    odd = ext.model_view('{"head_dim": 64, "rope_theta": 1e4, "max_position_embeddings": 4095}', LIMITS)
    assert not odd["fits"] and "grid" in odd["problems"][0]
    with pytest.raises(ValueError, match="not valid JSON"):
        ext.model_view("{oops", LIMITS)


# ============================================================================ charts

def test_rotation_chart():
    v = views.rotation_view(128, 10000.0, "half_split", "random", 0, 0, 5, 2, 100)
    sp = spec(charts.rotation_chart(v["arrows"], v["orbits"], radius=v["radius"]))
    assert marks(sp) == ["line", "rule", "point", "point"]
    rule = sp["layer"][1]["encoding"]
    assert rule["x2"]["field"] == "x" and rule["y2"]["field"] == "y" and "strokeDash" in rule
    assert sp["width"] == sp["height"]  # equal aspect: rotations look like rotations
    # the square comes from the data: invisible corners at +-1.15 r, beyond every arrow and orbit
    corners = sp["datasets"][sp["layer"][3]["data"]["name"]]
    r = 1.15 * v["radius"]
    assert [c["x"] for c in corners] == [c["y"] for c in corners] == pytest.approx([-r, r])
    assert sp["layer"][3]["mark"]["opacity"] == 0
    for frame in (v["orbits"], v["arrows"]):
        assert frame[["x", "y"]].abs().to_numpy().max() <= v["radius"] * (1 + 1e-9)
    assert all("domain" not in layer["encoding"][axis].get("scale", {}) for layer in sp["layer"] for axis in ("x", "y"))
    # so another d (another radius) changes the data only: the browser swaps it into the chart it built
    w = views.rotation_view(64, 500.0, "half_split", "random", 3, 1, 5, 2, 100)
    assert w["radius"] != v["radius"]
    other = spec(charts.rotation_chart(w["arrows"], w["orbits"], radius=w["radius"]))
    assert _without_data(other) == _without_data(sp)


def test_line_charts():
    dec = views.decay_view(128, 10000.0, "ones", 0, 1000)
    sp = spec(charts.decay_chart(dec["frame"]))
    assert sp["mark"]["type"] == "line" and sp["encoding"]["x"]["field"] == "distance" and sp["encoding"]["y"]["field"] == "relative"
    assert sp["encoding"]["x"]["title"] and sp["encoding"]["y"]["title"] and sp["encoding"]["tooltip"]
    lay = views.layout_view(64, 10000.0, "random", 0, 5)
    sp = spec(charts.layout_chart(lay["frame"]))
    assert sp["encoding"]["strokeDash"]["scale"]["range"][1] == [6, 4]
    # the offset axis ends at the last offset drawn (it ran on to 260 past 255: a stretch of plot with no line)
    from posenc.io.export import chart_svg
    from tests.scenegraph import shown_texts

    lay = views.layout_view(128, 10000.0, "random", 0, 5)
    svg = chart_svg(charts.layout_chart(lay["frame"])).decode()
    ticks = [int(t.replace(",", "")) for t in shown_texts(svg, "role-axis-label")]
    assert ticks and max(ticks) <= lay["frame"]["offset"].max() < 260, ticks
    with pytest.raises(ValueError, match="ceiling"):
        charts.decay_chart(pd.DataFrame({"distance": np.arange(MAX_MARKS + 1), "relative": 0.0, "value": 0.0,
                                         "series": pd.Categorical(["a"] * (MAX_MARKS + 1))}))


# ============================================================================ every allowed control value works

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_D = st.integers(2, 256).map(lambda h: 2 * h)  # the pages' head_dim options: even, 4 .. 512
_BASE = st.floats(2.0, 1e9)  # the base number input's range


@settings(max_examples=40, deadline=None)
@given(d=_D, base=_BASE, train=st.integers(16, 1_048_576), s=st.floats(1.0, 64.0))
def test_extension_views_work_for_every_control_value(d, base, train, s):
    from posenc.views import measure

    det = ext.extension_detail(d, base, train, s)
    # HF clamps low at 0 and high at d - 1 separately, so for tiny d and base low can pass high (d=4, base 2)
    assert sum(det["band_counts"]) == d // 2 and det["yarn_low"] >= 0 and det["yarn_high"] <= d - 1
    ramp = yarn_ramp(d, base, rope_scaling("rope_yarn", base=base, factor=s, original_max_position_embeddings=train))["ramp"]
    assert np.all((ramp >= 0) & (ramp <= 1)) and np.all(np.diff(ramp) >= 0)
    e = measure.entries(d, base, train, s)  # the Context extension page's methods: each drawn, or left out saying why
    names = [m["name"] for m in e["methods"]]
    assert names[0] == "RoPE" and set(names[1:]) | set(e["skipped"]) == {name for _, name in measure.CLASSICS}
    assert {"PI (linear)", "YaRN", "Llama 3"} <= set(names)  # never left out
    assert all(np.all(np.isfinite(m["inv"])) for m in e["methods"])


@settings(max_examples=40, deadline=None)
@given(d=_D, base=_BASE, data=st.data(), m=st.integers(0, 10_000_000), n=st.integers(0, 10_000_000),
       shift=st.integers(0, 10_000_000), layout=st.sampled_from(["half_split", "interleaved"]), probe=st.sampled_from(views.PROBES))
def test_rope_views_work_for_every_control_value(d, base, data, m, n, shift, layout, probe):
    pair = data.draw(st.integers(0, d // 2 - 1))
    v = views.rotation_view(d, base, layout, probe, 0, pair, m, n, shift)
    # float64 angles at positions up to 2e7: the shifted score agrees to ~1e-8 relative
    assert v["difference"] <= 1e-6 * max(1.0, float(np.abs(probe_vector(d, probe)).sum()) ** 2)
    lay = views.layout_view(d, base, probe, 0, m)
    assert lay["rotate_maxdiff"] <= 1e-12 and lay["score_maxdiff"] <= 1e-9
