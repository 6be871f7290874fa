"""Page 8 (T5 and ALiBi): bucket boundaries, slopes for any head count, the masked bias matrix."""

import json

import numpy as np
import pytest
from apphelpers import (
    _image_heatmaps,
    assert_clean,
    chart,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    reveal,
    tables,
)

import posenc

PAGE = "pages/relative_bias.py"
# HF T5 bucket function, run, bidirectional default 32 / 128: |rel| ranges of buckets 8..15
T5_LOG_RANGES = ["|rel| 8–11", "|rel| 12–15", "|rel| 16–22", "|rel| 23–31", "|rel| 32–45", "|rel| 46–63", "|rel| 64–90", "|rel| ≥ 91"]
# ALiBi get_slopes (arXiv:2108.12409): -log2(m) for 12 and 20 heads
NEG_LOG2_12 = [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]
NEG_LOG2_20 = [0.5 * k for k in range(1, 17)] + [0.25, 0.75, 1.25, 1.75]
CHARTS = ("t5_buckets", "t5_matrix", "alibi_slopes", "alibi_matrix")  # the keys of the page's charts


def _frames(at):
    """(T5 ranges table, ALiBi slopes table)."""
    return tables(at)["t5_buckets"], tables(at)["alibi_slopes"]


def _data(at, key, column):
    """The dataset of chart ``key`` that carries ``column`` (layered charts have several); for a
    heatmap drawn as an image, its every cell from the CSV export (``chart_frame`` checks the drawn values)."""
    if _image_heatmaps(chart(at, key)["spec"]) and column in (full := chart_frame(at, key)).columns:
        return full
    return next(d for d in chart(at, key)["data"].values() if column in d.columns)


def _head_title(at, head=None):
    """The lines of the ALiBi matrix's title for ``head`` (default: the head its in-chart control starts at).
    The title is one line-list per head, picked in the browser by the url_head parameter (charts.base.pick_text)."""
    spec = chart(at, "alibi_matrix")["spec"]
    start = next(p["value"] for p in spec["params"] if p["name"] == "url_head")
    table, tail = spec["title"]["text"]["expr"].rsplit("[", 1)
    assert tail == "url_head - 1]"
    return json.loads(table)[(start if head is None else head) - 1]


def _reveal(at, key):
    at.toggle(key=f"ex_{key}_reveal").set_value(True).run()
    return "\n".join(m.value for m in at.markdown if "Answer:" in m.value)


def test_defaults_show_reference_buckets_and_slopes():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(reveal(reveal(at, "t5_rel"), "alibi_slope"))  # the log-spaced buckets and head 9 wait for the reveals
    assert m["exact buckets per side"] == "8" and m["log-spaced buckets per side"] == "8"
    assert m["last bucket starts at |rel| ="] == "91" and m["bucket ids used"] == "31 of 32"  # bucket 16 is never produced
    ranges, slopes = _frames(at)
    past = ranges[ranges["side"].str.startswith("past")].set_index("bucket")
    assert [past.loc[b, "covers"] for b in range(8)] == [f"|rel| = {d}" for d in range(8)]
    assert [past.loc[b, "covers"] for b in range(8, 16)] == T5_LOG_RANGES
    assert np.allclose(slopes["−log2 m"], NEG_LOG2_12)
    # ALiBi head 1 of 12: m = 2^-1; n = 4 x 128
    assert _head_title(at) == ["head 1 of 12: slope m = 0.5", "bias at distance L = 128: -64", f"bias at distance 4L − 1 = 511: {-0.5 * 511:.4g}"]
    assert [_head_title(at, h)[0] for h in (2, 9)] == ["head 2 of 12: slope m = 0.25", f"head 9 of 12: slope m = {2 ** -0.5:.6g}"]
    assert set(CHARTS) <= set(charts(at))
    buckets, matrix, bars = _data(at, "t5_buckets", "kind"), _data(at, "t5_matrix", "bucket"), _data(at, "alibi_slopes", "slope")
    bias, rules = _data(at, "alibi_matrix", "bias"), _data(at, "alibi_matrix", "at")
    assert rules["at"].tolist() == [128]  # the training length is marked
    assert set(buckets["kind"]) == {"exact", "log-spaced", "last (everything further)"}
    grid = matrix.pivot(index="i", columns="j", values="bucket").to_numpy()
    assert np.array_equal(grid, posenc.t5_bucket_matrix(128))
    assert bars["head"].tolist() == list(range(1, 13))
    B = posenc.alibi_bias(512, 12, causal=True)[0][::4, ::4]
    grid = bias.pivot(index="i", columns="j", values="bias").to_numpy()
    assert np.array_equal(np.isnan(grid), np.isneginf(B))  # -inf travels as NaN and is drawn as the grey mask
    assert np.allclose(grid[np.isfinite(B)], B[np.isfinite(B)], atol=1e-4)
    assert "**Answer: 10.**" in _reveal(at, "t5_rel")  # HF T5 bucket function, run: rel -20 -> 10
    assert "**Answer: 0.70711.**" in _reveal(at, "alibi_slope")  # Press et al., arXiv:2108.12409 get_slopes: head 9 of 12 = 2^-0.5


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.toggle(key="t5_bidirectional").set_value(False).run()
    assert_clean(at)
    m = metrics(at)
    # HF T5 bucket function, run causal: 0-15 exact, ..., >= 113 -> 31
    assert m["exact buckets per side"] == "16" and m["last bucket starts at |rel| ="] == "113"
    assert m["bucket ids used"] == "32 of 32"
    grid = chart_frame(reveal(at, "t5_rel"), "t5_matrix").pivot(index="i", columns="j", values="bucket").to_numpy()
    assert np.array_equal(grid, posenc.t5_bucket_matrix(128, bidirectional=False))
    assert "**Answer: 17.**" in _reveal(at, "t5_rel")  # causal row of HF's bucket table: rel -20 -> 17

    at.slider(key="heads").set_value(8).run()
    at.query_params["head"] = "4"  # the head is picked in the browser; the address bar brings it to the server
    at.run()
    at.toggle(key="causal").set_value(False).run()
    assert_clean(at)
    # head 4 of 8 is the one the exercise asks about: not offered (the link's choice noted) until the reveal
    assert _head_title(at)[0] == "head 1 of 8: slope m = 0.5" and any("`head`" in w.value for w in at.warning)
    _, slopes = _frames(reveal(at, "alibi_slope"))
    assert np.allclose(slopes["−log2 m"], range(1, 9))
    m = metrics(at)
    assert _head_title(at)[0] == "head 4 of 8: slope m = 0.0625" and m["cells masked (−∞)"] == "0.0%"
    assert not _data(at, "alibi_matrix", "bias")["bias"].isna().any()


def test_an_impossible_bucket_setting_is_never_offered():
    # 256 buckets map |rel| < 64 one-to-one, so max_distance must exceed 64 (the registry's lo_from):
    # the control offers only such values, and a link asking for 64 is noted
    at = open_page(PAGE, {"t5_num_buckets": "256", "t5_max_distance": "64"})
    assert_clean(at)
    assert min(at.select_slider(key="t5_max_distance").options, key=float) == "100"
    assert any("`t5_max_distance`" in w.value for w in at.warning)
    assert metrics(at)["exact buckets per side"] == "64" and set(CHARTS) <= set(charts(at))


def test_one_head_fixes_the_head_shown():
    at = open_page(PAGE, {"heads": "1", "head": "3"})  # heads = 1 is the control's own minimum
    assert_clean(at)
    assert "alibi_matrix" not in charts(at)  # its one head is the one the exercise asks about: drawn once revealed
    spec = chart(reveal(at, "alibi_slope"), "alibi_matrix")["spec"]
    assert next(p for p in spec["params"] if p["name"] == "url_head")["bind"]["options"] == [1]  # one button: head 1
    assert any("`head`" in w.value for w in at.warning)  # the link's head = 3 does not exist
    assert _head_title(at)[0] == "head 1 of 1: slope m = 0.00390625"  # 2^-8: one head takes the last slope


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"heads": "20", "head": "18", "train_len": "256", "causal": "false", "t5_max_distance": "20",
                          "t5_num_buckets": "8", "t5_n": "64"})
    assert_clean(at)
    assert not at.warning
    _, slopes = _frames(reveal(at, "alibi_slope"))
    assert np.allclose(slopes["−log2 m"], NEG_LOG2_20)
    m = metrics(at)
    assert _head_title(at)[0] == f"head 18 of 20: slope m = {2 ** -0.75:.6g}"  # head 17 is the exercise's (2^-0.25)
    assert _head_title(at)[2] == f"bias at distance 4L − 1 = 1023: {-(2 ** -0.75) * 1023:.4g}"
    assert m["last bucket starts at |rel| ="] == str(next(d for d in range(100) if posenc.t5_bucket(-d, num_buckets=8, max_distance=20) == 3))
    bad = open_page(PAGE, {"heads": "inf", "t5_num_buckets": "abc", "train_len": "100", "causal": "maybe"})
    assert_clean(bad)
    notes = "\n".join(w.value for w in bad.warning)
    for key in ("`heads`", "`t5_num_buckets`", "`train_len`", "`causal`"):
        assert key in notes, notes
    assert metrics(bad)["bucket ids used"] == "31 of 32"


def test_answers_wait_for_their_reveal():
    """The issue: the bucket table listed the bucket of −20 above the question, and head 9's bar was drawn above
    "slope of head 9?".  Before the reveals: no table row, bar or matrix cell holds a bucket of |rel| ≥ 8 (the answer,
    10, is one; a blank row would be counted), and head 9 has no bar, no table cell and no button under the matrix."""
    at = open_page(PAGE)
    ranges, slopes = _frames(at)
    assert ranges["bucket"].tolist() == list(range(8)) + list(range(17, 24))  # the exact buckets of both sides (16 unused)
    assert ranges["covers"].tolist() == [f"|rel| = {d}" for d in range(8)] + [f"|rel| = {d}" for d in range(1, 8)]
    bars, matrix = _data(at, "t5_buckets", "kind"), chart_frame(at, "t5_matrix")
    assert sorted(bars["bucket"].dropna().astype(int)) == sorted(ranges["bucket"]) and len(bars) == 31  # every bar keeps its place
    grid = matrix.pivot(index="i", columns="j", values="bucket").to_numpy()
    full = posenc.t5_bucket_matrix(128).astype(float)
    near = np.abs(np.subtract.outer(np.arange(128), np.arange(128))) < 8
    assert np.array_equal(grid[near], full[near]) and np.isnan(grid[~near]).all()
    assert 10 not in set(matrix["bucket"].dropna()) and 10 not in set(ranges["bucket"])
    assert np.isnan(slopes.loc[8, "m"]) and np.isnan(slopes.loc[8, "−log2 m"]) and not slopes.drop(index=8)["m"].isna().any()
    assert np.isnan(_data(at, "alibi_slopes", "slope").set_index("head").loc[9, "slope"])
    options = next(p for p in chart(at, "alibi_matrix")["spec"]["params"] if p["name"] == "url_head")["bind"]["options"]
    assert options == [h for h in range(1, 13) if h != 9]
    assert _head_title(at, 9)[0] == "head 9 of 12: slope m = ?"
    reveal(reveal(at, "t5_rel"), "alibi_slope")
    ranges, slopes = _frames(at)
    assert ranges.set_index("bucket").loc[10, "covers"] == "|rel| 16–22" and slopes.loc[8, "m"] == pytest.approx(2 ** -0.5, abs=5e-7)
    assert np.array_equal(chart_frame(at, "t5_matrix").pivot(index="i", columns="j", values="bucket").to_numpy(), full)


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"t5_n": "2048", "t5_num_buckets": "256", "t5_max_distance": "100000", "heads": "128",
                           "head": "128", "train_len": "1024"})
    assert_clean(big)
    assert set(CHARTS) <= set(charts(big))
    assert payload_bytes(big) <= 2_000_000, payload_bytes(big)
