"""Views and charts of the T5 / ALiBi page, as plain functions."""

import math

import altair as alt
import numpy as np
import pytest

import posenc
from posenc.charts.base import HEATMAP_CELLS, MAX_MARKS, url_param
from posenc.charts.raster import LEVEL, MASKED, RASTER_CELLS, VIRIDIS, legend_range
from posenc.charts.relative import (
    MASK_GREY,
    alibi_heads_chart,
    bucket_function_chart,
    bucket_matrix_chart,
    slopes_chart,
)
from posenc.views.relative import (
    alibi_heads_view,
    alibi_matrix_view,
    alibi_slopes_view,
    t5_distance_choices,
    t5_view,
)

# HF T5 bucket function, run, "Bucket boundaries (bidirectional)": |rel| range -> bucket
# (negative rel uses b, positive rel 16 + b; None = no upper end)
T5_BIDIRECTIONAL = [(d, d, d) for d in range(8)] + [
    (8, 11, 8), (12, 15, 9), (16, 22, 10), (23, 31, 11), (32, 45, 12), (46, 63, 13), (64, 90, 14), (91, None, 15)]
# HF T5 bucket function, run, "Bucket boundaries (causal, past side)"
T5_CAUSAL = [(d, d, d) for d in range(16)] + [
    (16, 18, 16), (19, 20, 17), (21, 23, 18), (24, 26, 19), (27, 30, 20), (31, 34, 21), (35, 39, 22), (40, 45, 23),
    (46, 51, 24), (52, 58, 25), (59, 66, 26), (67, 76, 27), (77, 86, 28), (87, 98, 29), (99, 112, 30), (113, None, 31)]
# ALiBi get_slopes (arXiv:2108.12409) table of -log2(m) for n heads
ALIBI_NEG_LOG2 = {
    1: [8], 3: [4, 8, 2], 5: [2, 4, 6, 8, 1], 7: [2, 4, 6, 8, 1, 3, 5], 8: [1, 2, 3, 4, 5, 6, 7, 8],
    12: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5], 16: [0.5 * k for k in range(1, 17)],
    20: [0.5 * k for k in range(1, 17)] + [0.25, 0.75, 1.25, 1.75],
}


def _triples(ranges, side_prefix):
    part = ranges[ranges["side"].str.startswith(side_prefix)]
    return [(int(r.dist_lo), None if math.isnan(r.dist_hi) else int(r.dist_hi), int(r.bucket)) for r in part.itertuples()]


def test_t5_default_boundaries_are_the_reference():
    v = t5_view(True, 32, 128, 128)
    assert _triples(v["ranges"], "past") == T5_BIDIRECTIONAL
    future = [(lo, hi, b + 16) for lo, hi, b in T5_BIDIRECTIONAL if lo > 0]
    assert _triples(v["ranges"], "future") == future
    assert v["max_exact"] == 8 and v["half"] == 16 and v["last_start"] == 91
    assert v["unused"] == [16] and v["buckets_used"] == 31  # rel = 0 maps to bucket 0, so bucket 16 is never produced
    assert v["exercise_rel"] == -20 and v["exercise_bucket"] == 10  # HF T5 bucket function, run table: rel -20 -> 10
    assert list(v["ranges"].loc[v["ranges"]["bucket"] == 15, "covers"]) == ["|rel| ≥ 91"]
    assert set(v["ranges"]["kind"]) == {"exact", "log-spaced", "last (everything further)"}
    r = v["ranges"].set_index("bucket")
    assert (r.loc[8, "rel_lo"], r.loc[8, "rel_hi"]) == (-11, -8) and (r.loc[24, "rel_lo"], r.loc[24, "rel_hi"]) == (8, 11)
    assert r.loc[15, "rel_lo"] == -v["display_max"] == -256  # the open bucket is drawn to 2 x max_distance


def test_t5_causal_boundaries_are_the_reference():
    v = t5_view(False, 32, 128, 64)
    assert _triples(v["ranges"], "past") == T5_CAUSAL
    assert not v["ranges"]["side"].str.startswith("future").any()
    assert v["max_exact"] == 16 and v["last_start"] == 113 and v["unused"] == []
    assert v["exercise_bucket"] == 17  # HF T5 bucket function, run table, causal row: rel -20 -> 17


@pytest.mark.parametrize("bidirectional,nb,md", [(True, 8, 20), (True, 64, 500), (False, 10, 37), (True, 256, 100_000)])
def test_t5_ranges_agree_with_the_bucket_function(bidirectional, nb, md):
    v = t5_view(bidirectional, nb, md, 32)
    rel = np.arange(-3 * md, 3 * md + 1)
    b = posenc.t5_bucket(rel, bidirectional=bidirectional, num_buckets=nb, max_distance=md)
    table = v["ranges"]
    for r, bucket in zip(rel[:: max(1, md // 50)], b[:: max(1, md // 50)]):
        if not bidirectional and r > 0:
            assert bucket == 0
            continue
        rows = table[(table["dist_lo"] <= abs(r)) & ((table["dist_hi"] >= abs(r)) | table["dist_hi"].isna())
                     & (table["side"].str.startswith("future") == (r > 0))]
        assert list(rows["bucket"]) == [bucket], (r, bucket)
    assert sorted(set(b.tolist()) | set(v["unused"])) == list(range(nb))


def test_t5_non_default_example():
    # HF T5 bucket function, run: num_buckets = 8, max_distance = 20, bidirectional, rel = -30..30 step 3
    v = t5_view(True, 8, 20, 64)
    rel = np.arange(-30, 31, 3)
    expect = [3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 0, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7]
    ranges = v["ranges"]
    got = []
    for r in rel:
        side = ranges["side"].str.startswith("future") == (r > 0)
        row = ranges[side & (ranges["dist_lo"] <= abs(r)) & ((ranges["dist_hi"] >= abs(r)) | ranges["dist_hi"].isna())]
        got.append(int(row["bucket"].iloc[0]))
    assert got == expect


def test_t5_matrix_is_the_bucket_matrix():
    v = t5_view(True, 32, 128, 5)
    grid = v["matrix"].pivot(index="i", columns="j", values="bucket").to_numpy()
    # HF T5 bucket function, run, 5x5 bidirectional matrix
    assert grid.tolist() == [[0, 17, 18, 19, 20], [1, 0, 17, 18, 19], [2, 1, 0, 17, 18], [3, 2, 1, 0, 17], [4, 3, 2, 1, 0]]
    big = t5_view(True, 32, 128, 2048)
    s = big["step"]
    assert len(big["matrix"]) <= HEATMAP_CELLS and s == 16
    M = posenc.t5_bucket_matrix(2048)
    grid = big["matrix"].pivot(index="i", columns="j", values="bucket").to_numpy()
    assert np.array_equal(grid, M[::s, ::s])


def test_t5_distance_choices_span_the_registry_range():
    spec = {p.name: p for p in posenc.get_scheme("t5").params}["max_distance"]
    choices = t5_distance_choices()
    assert choices[0] == spec.lo == 4 and choices[-1] == spec.hi == 100_000
    assert {20, 128} <= set(choices) and choices == sorted(set(choices))


def test_t5_invalid_combination_names_the_range():
    with pytest.raises(ValueError, match=r"max_distance must be an integer in \[65,"):
        t5_view(True, 256, 10, 64)
    with pytest.raises(ValueError, match="n must be"):
        t5_view(True, 32, 128, 4096)


@pytest.mark.parametrize("H", sorted(ALIBI_NEG_LOG2))
def test_alibi_slopes_are_the_reference(H):
    v = alibi_slopes_view(H)
    f = v["frame"]
    assert f["head"].tolist() == list(range(1, H + 1))
    assert np.allclose(f["neg_log2"], ALIBI_NEG_LOG2[H])
    assert np.allclose(f["slope"], posenc.alibi_slopes(H))
    c = 1 << (H.bit_length() - 1)
    assert v["power"] == c and v["extra"] == H - c
    assert (f["group"] == f["group"].iloc[0]).sum() == c


def test_alibi_exercise():
    v = alibi_slopes_view(12)
    # Press et al., arXiv:2108.12409 get_slopes: n = 12 appends 2^-0.5 = 0.70711 as head 9
    assert v["exercise_head"] == 9 and v["exercise_slope"] == pytest.approx(0.70711, abs=5e-6)
    assert v["exercise_neg_log2"] == pytest.approx(0.5)
    assert alibi_slopes_view(8)["exercise_head"] == 4 and alibi_slopes_view(1)["exercise_head"] == 1


def test_alibi_matrix_is_the_bias_of_one_head():
    v = alibi_matrix_view(12, 3, 32, True)
    assert v["n"] == 128 and v["step"] == 1 and v["head"] == 3
    B = posenc.alibi_bias(128, 12, causal=True)[2]
    grid = v["frame"].pivot(index="i", columns="j", values="bias").to_numpy()
    assert np.array_equal(np.isnan(grid), np.isneginf(B))
    finite = np.isfinite(B)
    assert np.allclose(grid[finite], B[finite], atol=1e-5)
    assert v["slope"] == 2**-3 and v["bias_at_train"] == -(2**-3) * 32 and v["bias_far"] == -(2**-3) * 127
    assert v["masked_share"] == pytest.approx(np.isneginf(B).mean())
    sym = alibi_matrix_view(12, 3, 32, False)
    grid = sym["frame"].pivot(index="i", columns="j", values="bias").to_numpy()
    assert not np.isnan(grid).any() and np.allclose(grid, posenc.alibi_bias(128, 12, causal=False)[2], atol=1e-5)
    assert sym["masked_share"] == 0.0


def test_alibi_paper_example_row():
    # ALiBi get_slopes (arXiv:2108.12409): m = 1/16, L = 4: row 3 = [-0.1875, -0.125, -0.0625, 0]
    v = alibi_matrix_view(8, 4, 1, True)  # head 4 of 8 has m = 2^-4; n = 4 x 1
    row = v["frame"][v["frame"]["i"] == 3].sort_values("j")["bias"].tolist()
    assert row == [-0.1875, -0.125, -0.0625, 0.0]


def test_alibi_largest_settings_stay_small_and_exact():
    v = alibi_matrix_view(128, 128, 1024, True)
    assert v["n"] == 4096 and len(v["frame"]) <= HEATMAP_CELLS
    s = v["step"]
    m = posenc.alibi_slopes(128)[127]
    f = v["frame"].dropna()
    assert np.allclose(f["bias"], -m * (f["i"] - f["j"]), rtol=1e-6)
    assert (v["frame"]["bias"].isna() == (v["frame"]["j"] > v["frame"]["i"])).all()
    assert s == 32
    with pytest.raises(ValueError, match="head"):
        alibi_matrix_view(8, 9, 16, True)


def _spec(ch):
    with alt.data_transformers.disable_max_rows():
        return ch.to_dict()


def test_t5_charts():
    v = t5_view(True, 32, 128, 128)
    d = _spec(bucket_function_chart(v["segments"], max_exact=8, max_distance=128, bidirectional=True))
    bars, rules = d["layer"]
    assert bars["mark"]["type"] == "rule" and bars["encoding"]["x2"]["field"] == "x_hi"
    assert bars["encoding"]["x"]["scale"]["type"] == "symlog" and bars["encoding"]["y"]["field"] == "bucket"
    assert 0 in bars["encoding"]["x"]["axis"]["values"] and 128 in bars["encoding"]["x"]["axis"]["values"]
    rule_data = d["datasets"][rules["data"]["name"]]
    assert sorted(r["rel"] for r in rule_data) == [-128, -8, 8, 128]
    causal = t5_view(False, 32, 128, 128)
    d = _spec(bucket_function_chart(causal["segments"], max_exact=16, max_distance=128, bidirectional=False))
    assert sorted(r["rel"] for r in d["datasets"][d["layer"][1]["data"]["name"]]) == [-128, -16]
    d = _spec(bucket_matrix_chart(v["matrix"], step=v["step"], num_buckets=32))
    image, hover, pins = d["layer"]  # drawn as one image: the legend on a layer of its own
    assert image["mark"]["type"] == "image" and len(v["matrix"]) > RASTER_CELLS
    scale = pins["encoding"]["color"]["scale"]
    assert legend_range(d) == (0, 31) and scale["range"] == list(VIRIDIS) and scale["clamp"]
    assert len(v["matrix"]) <= MAX_MARKS


def test_alibi_charts():
    f = alibi_slopes_view(12)["frame"]
    d = _spec(slopes_chart(f))
    assert d["mark"]["type"] == "bar" and d["encoding"]["y"]["field"] == "slope"
    assert {t["field"] for t in d["encoding"]["tooltip"]} >= {"slope", "neg_log2"}
    v = alibi_heads_view(12, 1, 128, True)
    head = url_param("head", "head shown", range(1, 13), 1)
    titles = [[f"head {h}"] for h in range(1, 13)]
    d = _spec(alibi_heads_chart(v["frame"], slopes=v["slopes"], head=head, step=v["step"], n=v["n"], train_len=128, titles=titles))
    heat, mask, vhalo, vrule, hhalo, hrule = d["layer"]
    # each training-length rule is black dashes on a white halo (readable on viridis' dark and light ends, both themes)
    for halo, rule in ((vhalo, vrule), (hhalo, hrule)):
        assert halo["mark"]["color"] == "white" and halo["mark"]["strokeWidth"] > rule["mark"]["strokeWidth"]
        assert rule["mark"]["color"] == "black" and rule["mark"]["strokeDash"] and "tooltip" in rule["encoding"]
    assert d["resolve"] == {"scale": {"color": "independent"}}
    image, hover, pins = heat["layer"]
    assert image["mark"]["type"] == "image"
    params = {p["name"]: p for p in d["params"]}
    assert params["url_head"]["bind"]["input"] == "range" and params["alibi_slope"]["expr"] == f"{v['slopes']}[url_head - 1]"
    assert pins["transform"] == [{"calculate": f"datum[{LEVEL!r}] * (alibi_slope)", "as": f"{LEVEL}_scaled"}]
    assert legend_range(heat, d["datasets"]) == (-511.0, 0.0)  # -(n - 1) .. 0, times the slope in the browser
    assert d["title"]["text"] == {"expr": '[["head 1"], ["head 2"], ["head 3"], ["head 4"], ["head 5"], ["head 6"], ["head 7"], '
                                          '["head 8"], ["head 9"], ["head 10"], ["head 11"], ["head 12"]][url_head - 1]'}
    assert mask["encoding"]["color"]["scale"]["range"] == [MASK_GREY]  # -inf drawn grey, not as a colour value
    assert MASK_GREY == MASKED and len(d["datasets"][mask["data"]["name"]]) == 1  # one grey cell carries the legend entry
    rule_rows = d["datasets"][vrule["data"]["name"]]
    assert rule_rows[0]["at"] == 128 and vrule["encoding"]["x"]["field"] == "at" and hrule["encoding"]["y"]["field"] == "at"
    sym = alibi_heads_view(12, 1, 128, False)
    d = _spec(alibi_heads_chart(sym["frame"], slopes=sym["slopes"], head=head, step=sym["step"], n=sym["n"], train_len=128, titles=titles))
    assert len(d["layer"]) == 5 and MASK_GREY not in str(d)  # symmetric: nothing masked, no mask legend
    with pytest.raises(ValueError, match="slopes"):
        alibi_heads_chart(sym["frame"], slopes=[], head=head, step=sym["step"], n=sym["n"], train_len=128, titles=titles)


def test_every_head_is_its_slope_times_one_matrix():
    """alibi_heads_view: head h's bias is m_h x distance, the distance -|i - j| (NaN where masked) the browser
    scales; against posenc.alibi_bias for every head, and the per-head numbers against their formulas."""
    v = alibi_heads_view(12, 3, 32, True)
    B = posenc.alibi_bias(128, 12, causal=True)
    f = v["frame"]
    dist = f.pivot(index="i", columns="j", values="distance").to_numpy()
    for h in range(12):
        scaled = v["slopes"][h] * dist
        assert np.array_equal(np.isnan(scaled), np.isneginf(B[h]))
        assert np.array_equal(scaled[np.isfinite(B[h])], B[h][np.isfinite(B[h])])  # exact: one product, as posenc computes it
    assert np.array_equal(f["bias"].to_numpy(), alibi_matrix_view(12, 3, 32, True)["frame"]["bias"].to_numpy(), equal_nan=True)
    heads = v["heads"]
    assert heads["head"].tolist() == list(range(1, 13)) and np.array_equal(heads["slope"], posenc.alibi_slopes(12))
    assert np.array_equal(heads["bias_at_train"], -posenc.alibi_slopes(12) * 32)
    assert np.array_equal(heads["bias_far"], -posenc.alibi_slopes(12) * 127)


def test_t5_bucket_chart_fits_a_phone():
    """At 390 px the chart is ~300 px wide: the legend is one column (its longest label, "last (everything further)",
    ran past the edge in a row) and the x title is two lines of at most 40 characters (~6 px each at 11 px)."""
    v = t5_view(True, 32, 128, 128)
    bars = _spec(bucket_function_chart(v["segments"], max_exact=8, max_distance=128, bidirectional=True))["layer"][0]
    legend = bars["encoding"]["color"]["legend"]
    assert legend["direction"] == "vertical" and legend["orient"] == "top"
    title = bars["encoding"]["x"]["title"]
    assert isinstance(title, list) and all(len(line) <= 40 for line in title) and "symmetric log scale" in title[1]
