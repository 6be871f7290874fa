"""Page 6 (the sinusoid): its views against independent formulas and literal values, and its charts."""

import math

import altair as alt
import numpy as np
import pytest

import posenc
from posenc.analysis.geometry import collisions
from posenc.charts.base import MAX_MARKS
from posenc.charts.raster import RASTER_CELLS, REDBLUE, legend_range
from posenc.charts.sinusoid import bases_chart, dot_chart, pe_heatmap, shift_chart, spectrum_chart
from posenc.views import sinusoid as v
from posenc.views import why_base as wbv


def paper_pe(p: float, j: int, d: int, base: float = 10000.0) -> float:
    """Independent oracle, the paper's formula column by column (arXiv:1706.03762 §3.5)."""
    angle = p / base ** (2 * (j // 2) / d)
    return math.sin(angle) if j % 2 == 0 else math.cos(angle)


def to_dict(chart):
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


# ----------------------------------------------------------------------------- heatmap


def test_heatmap_default_is_every_value_exact():
    hm = v.heatmap_view(128, 128, 10000.0, "interleaved")
    df = hm["frame"]
    assert len(df) == 128 * 128 == hm["cells"] == hm["total"]
    assert (hm["row_step"], hm["pair_step"], hm["aliased_pairs"]) == (1, 1, 0)
    assert "All 128 × 128 values" in hm["caption"]
    for p, j in [(0, 0), (0, 1), (1, 0), (1, 1), (37, 5), (127, 126), (127, 127), (100, 64)]:
        got = df[(df.position == p) & (df.depth == j)]["value"].item()
        assert got == pytest.approx(paper_pe(p, j, 128), abs=1e-7)  # float32 in the frame
    # position 0 is [0, 1, 0, 1, ...] (Vaswani et al. 2017, arXiv:1706.03762 §3.5)
    row0 = df[df.position == 0].sort_values("depth")["value"].to_numpy()
    assert np.array_equal(row0, np.tile([0.0, 1.0], 64))
    # bounded, and ||PE(p)|| = sqrt(d/2) at every p (Vaswani et al. 2017, arXiv:1706.03762 §3.5: 16 at d = 512)
    assert hm["max_abs"] <= 1.0
    assert hm["norm_min"] == pytest.approx(8.0, abs=1e-12) and hm["norm_max"] == pytest.approx(8.0, abs=1e-12)
    assert v.heatmap_view(16, 512, 10000.0, "interleaved")["norm_max"] == pytest.approx(16.0, abs=1e-12)


def test_heatmap_downsampling_keeps_whole_pairs_and_says_so():
    hm = v.heatmap_view(4096, 1024, 10000.0, "interleaved")
    assert hm["cells"] <= v.HEATMAP_IMAGE_CELLS and len(hm["frame"]) == hm["cells"]
    assert hm["total"] == 4096 * 1024
    cols = set(hm["cols"].tolist())
    assert all((c ^ 1) in cols for c in cols), "every kept sin column keeps its cos partner"
    assert hm["pair_step"] == 2 and hm["row_step"] == 32  # 512 of 1,024 columns (every other pair) x 128 of 4,096 rows
    assert hm["rows"][1] - hm["rows"][0] == 32
    wl = 2 * math.pi * 10000.0 ** (2 * np.arange(512) / 1024)
    assert hm["aliased_pairs"] == int(np.sum(wl < 64))
    assert "Downsampled to 65,536 of 4,194,304 cells" in hm["caption"] and "aliased" in hm["caption"]
    r, c = 5, 7
    assert hm["shown"][r, c] == pytest.approx(paper_pe(hm["rows"][r], hm["cols"][c], 1024), abs=1e-12)


def test_concatenated_layout_permutes_columns():
    a = v.heatmap_view(64, 16, 10000.0, "interleaved")["shown"]
    b = v.heatmap_view(64, 16, 10000.0, "concatenated")["shown"]
    assert not np.allclose(a, b)
    assert np.array_equal(b, a[:, [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15]])
    df = v.heatmap_view(64, 16, 10000.0, "concatenated")["frame"]
    assert df[(df.position == 3) & (df.depth == 9)]["column"].item().startswith("cos, pair 1")


def test_odd_or_out_of_range_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="d_model must be even"):
        v.heatmap_view(16, 7, 10000.0, "interleaved")
    with pytest.raises(ValueError, match="n must be an integer in"):
        v.heatmap_view(5000, 8, 10000.0, "interleaved")
    with pytest.raises(ValueError, match="layout must be one of"):
        v.heatmap_view(16, 8, 10000.0, "diagonal")
    with pytest.raises(ValueError, match="d must be even"):
        v.shift_view(3, 9, 10000.0)


# ----------------------------------------------------------------------------- spectrum


def test_spectrum_literal_longest_wavelength():
    sp = v.spectrum_view(512, 10000.0, 128)
    # Vaswani et al. 2017, arXiv:1706.03762 §3.5: "For d=512 the longest wavelength is 60611.48, not 62831.85."
    assert round(sp["longest"], 2) == 60611.48
    assert round(sp["limit"], 2) == 62831.85
    assert sp["shortest"] == pytest.approx(2 * math.pi, rel=1e-15)
    assert sp["pairs"] == 256 and len(sp["frame"]) == 256


@pytest.mark.parametrize("d,base,n", [(128, 10000.0, 128), (64, 100.0, 4096), (2, 5.0, 7), (1024, 1e9, 4096)])
def test_spectrum_matches_the_formula(d, base, n):
    sp = v.spectrum_view(d, base, n)
    wl = 2 * math.pi * base ** (2 * np.arange(d // 2) / d)  # lambda_i = 2 pi b^(2i/d)
    assert np.allclose(sp["frame"]["wavelength"], wl, rtol=1e-12)
    assert sp["longest"] == pytest.approx(2 * math.pi * base ** ((d - 2) / d), rel=1e-12)
    assert sp["full_turns"] == int(np.sum(wl <= n))
    assert (sp["frame"]["full_turn"] == "yes").sum() == sp["full_turns"]
    assert f"{sp['full_turns']} of {d // 2} pairs turn fully within n = {n:,}" in sp["caption"]
    assert sp["marks"]["wavelength"].tolist() == pytest.approx([2 * math.pi, 2 * math.pi * base, n])


def test_lengths_fit_a_metric_tile():
    assert v.fmt_length(60611.47716626106) == "60,611.48"
    assert v.fmt_length(2 * math.pi * 1e9) == "6.2832e+09"


def test_base_changes_the_spectrum():
    a, b = v.spectrum_view(128, 10000.0, 128), v.spectrum_view(128, 1000.0, 128)
    assert b["longest"] < a["longest"] and b["full_turns"] > a["full_turns"]


# ----------------------------------------------------------------------------- Hello World


def test_hello_world_reproduces_the_seed():
    we = v.worked_example("Hello World", v.SEED_EMBEDDINGS)
    f = we["frame"]
    # the article "What are Positional Embeddings?" ("Hello World" to the Rescue), Steps 2-3, printed at 3 decimals
    assert f["word"].tolist() == ["Hello", "World"]
    assert f["+ position vector PE(pos)"].tolist() == ["[0.000, 1.000, 0.000, 1.000]", "[0.841, 0.540, 0.010, 1.000]"]
    assert f["word embedding"].tolist() == ["[0.100, 0.200, 0.300, 0.400]", "[0.500, 0.600, 0.700, 0.800]"]
    assert f["= sum"].tolist() == ["[0.100, 1.200, 0.300, 1.400]", "[1.341, 1.140, 0.710, 1.800]"]
    # HF DistilBERT, run: at d=4, pos=1: [0.84147098, 0.54030231, 0.00999983, 0.99995000]
    assert we["pe"][1] == pytest.approx([0.84147098, 0.54030231, 0.00999983, 0.99995000], abs=1e-8)
    assert we["pe_1_2"] == pytest.approx(math.sin(0.01), abs=1e-15)
    assert np.allclose(we["sum"], we["emb"] + we["pe"])
    full = we["full"]
    assert len(full) == 8 and full["sum"].iloc[7] == pytest.approx(0.8 + math.cos(0.01), abs=1e-15)
    assert we["zero_words"] == 0


def test_more_words_blank_and_formats():
    we = v.worked_example("the  cat sat", ("1 2 3 4", "[0.5, 0.5, 0.5, 0.5]"))
    assert we["frame"]["position"].tolist() == [0, 1, 2]
    assert we["emb"][0].tolist() == [1, 2, 3, 4] and we["emb"][1].tolist() == [0.5] * 4
    assert we["emb"][2].tolist() == [0.0] * 4 and we["zero_words"] == 1
    assert we["frame"]["embedding from"].tolist() == ["typed", "typed", "blank → zero"]
    assert we["sum"][2] == pytest.approx([math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)], abs=1e-15)
    assert we["frame"]["= sum"][2] == "[0.909, -0.416, 0.020, 1.000]"
    assert v.default_embedding(0) == v.SEED_EMBEDDINGS[0] and v.default_embedding(5) == ""


@pytest.mark.parametrize("text,embs,match", [
    ("Hello", ("0.1, 0.2",), "needs 4 comma-separated numbers, got 2"),
    ("Hello", ("0.1, x, 0.3, 0.4",), "“x” is not a number"),
    ("Hello", ("0.1, 0.2, nan, 0.4",), "must be a finite number"),
    ("Hello World", ("", "1e400, 0, 0, 0"), "embedding of “World” \\(position 1\\)"),
    ("   ", (), "at least one word"),
    (" ".join(["w"] * 13), (), "at most 12 words, got 13"),
])
def test_malformed_worked_example_input_is_a_clear_error(text, embs, match):
    with pytest.raises(ValueError, match=match):
        v.worked_example(text, embs)


# ----------------------------------------------------------------------------- shift operator


def test_shift_operator_fit_and_closed_form():
    sh = v.shift_view(7, 8, 10000.0)
    assert sh["residual"] < 1e-10  # Vaswani et al. 2017, arXiv:1706.03762 §3.5: the relative-shift property, verified for d=8, k=7
    assert sh["orthogonality"] < 1e-10 and sh["off_block"] < 1e-10 and sh["max_diff"] < 1e-10
    w = 10000.0 ** (-2 * np.arange(4) / 8)
    for i, wi in enumerate(w):
        c, s = math.cos(7 * wi), math.sin(7 * wi)
        assert sh["closed"][2 * i:2 * i + 2, 2 * i:2 * i + 2] == pytest.approx(np.array([[c, s], [-s, c]]), abs=1e-15)
    pe = np.array([[paper_pe(p, j, 8) for j in range(8)] for p in (3.0, 10.0)])
    nxt = np.array([[paper_pe(p + 7, j, 8) for j in range(8)] for p in (3.0, 10.0)])
    assert np.allclose(pe @ sh["closed"].T, nxt, atol=1e-12)
    assert len(sh["frame"]) == 2 * 8 * 8 and set(sh["frame"]["matrix"]) == {
        "M_k fitted by least squares", "M_k closed form (block rotations)"}
    assert "below 1e-10" in sh["caption"]


@pytest.mark.parametrize("k,d", [(0, 4), (1, 64), (4096, 64), (100, 16)])
def test_shift_residual_small_across_the_page_range(k, d):
    sh = v.shift_view(k, d, 10000.0)
    assert sh["residual"] < 1e-10 and sh["max_diff"] < 1e-8


# ----------------------------------------------------------------------------- uniqueness


def test_closest_pair_is_collisions_and_exact():
    for n, d, base, layout in [(128, 128, 10000.0, "interleaved"), (512, 8, 10000.0, "concatenated"), (300, 4, 100.0, "interleaved"),
                               (512, 8, 100.0, "interleaved"), (1000, 6, 1e6, "interleaved")]:
        cp = wbv.closest_pair_sinusoid(n, d, base, layout)
        c = collisions("sinusoidal", n, d, base=base, layout=layout)
        assert cp["method"].startswith("the offset relation")
        assert (cp["distance"], cp["i"], cp["j"]) == (c["distance"], c["i"], c["j"])
        # the pair it names really is that far apart (the paper's formula, written out)
        a = np.array([paper_pe(cp["i"], j, d, base) for j in range(d)])
        b = np.array([paper_pe(cp["j"], j, d, base) for j in range(d)])
        assert np.linalg.norm(a - b) == pytest.approx(cp["distance"], abs=1e-9)
    # and against brute force over every pair at a small size
    from scipy.spatial.distance import pdist
    pe = np.array([[paper_pe(p, j, 8, 10000.0) for j in range(8)] for p in range(300)])
    assert wbv.closest_pair_sinusoid(300, 8, 10000.0, "interleaved")["distance"] == pytest.approx(pdist(pe).min(), abs=1e-12)


def test_closest_pair_ignores_the_layout():
    a = wbv.closest_pair_sinusoid(512, 8, 10000.0, "interleaved")
    b = wbv.closest_pair_sinusoid(512, 8, 10000.0, "concatenated")
    assert a["distance"] == pytest.approx(b["distance"], abs=1e-12) and a["offset"] == b["offset"] == 63


def test_why_base_table():
    wb = wbv.why_base_view(512, 8, 10000.0, "interleaved")
    t = wb["table"]
    assert t["base"].tolist() == ["10", "100", "1,000", "10,000 (chosen)", "100,000", "10⁶", "10⁷", "10⁸"] == wb["bases"]
    assert wb["chosen_row"] == 3
    for b, r in zip(wbv.WHY_BASES, wb["rows"]):
        assert r["longest"] == pytest.approx(2 * math.pi * b ** (6 / 8), rel=1e-12)
        assert r["shortest"] == pytest.approx(2 * math.pi, rel=1e-12)
        w = b ** (-2 * np.arange(4) / 8)  # the four frequencies, computed here
        assert r["full_turns"] == int(np.sum(2 * np.pi / w <= 512)) and r["frozen"] == int(np.sum(w * 511 < 1))
        # ||PE(p+k) - PE(p)||^2 = d - 2 sum cos(k w): neighbours and the closest offset >= 2, by brute force
        dist = np.sqrt(8 - 2 * np.cos(np.arange(512)[:, None] * w).sum(axis=1))
        assert r["neighbour"] == pytest.approx(dist[1], rel=1e-9)
        assert r["far"] == pytest.approx(dist[2:].min(), rel=1e-9) and r["far_offset"] == 2 + int(np.argmin(dist[2:]))
        assert r["collides"] == (dist[2:].min() < dist[1])
        assert r["too_small"] == (r["full_turns"] == 4) and r["too_large"] == (r["frozen"] > 2)
    assert wb["closest"]["distance"] == pytest.approx(collisions("sinusoidal", 512, 8)["distance"], abs=1e-10)
    # the eight bases and the chosen 10,000 again as "your base", 4 pairs each, but no point at the wavelength exercise's
    # answer 2π·10000^(6/8) = 2π·1000: the slowest pair of both 10,000 lines, and 10⁶'s pair 2 (2π·10^(6·4/8))
    answer = 2 * math.pi * 1000
    assert len(wb["lines"]) == 9 * 4 - 3 and not np.isclose(wb["lines"]["wavelength"], answer, rtol=1e-9).any()
    assert wb["lines"].groupby("series").size().to_dict() == {**{s: 4 for s in wb["line_series"]}, "10,000": 3, "10⁶": 3, wbv.YOUR_BASE: 3}
    assert wb["line_series"] == ["10", "100", "1,000", "10,000", "100,000", "10⁶", "10⁷", "10⁸", wbv.YOUR_BASE]
    yours = wb["lines"][wb["lines"]["series"] == wbv.YOUR_BASE]
    assert set(yours["base"]) == {"10,000"} and yours["chosen"].all() and not wb["lines"]["chosen"].iloc[:30].any()
    np.testing.assert_array_equal(yours["wavelength"], wb["lines"][wb["lines"]["series"] == "10,000"]["wavelength"])
    five = wbv.why_base_view(128, 16, 500000.0, "interleaved")
    assert len(five["table"]) == 9 and five["bases"][5] == "500,000 (chosen)"
    # a base off the list is drawn once, as "your base"; the series (the charts' legend) are the same for every base
    assert five["line_series"] == wb["line_series"] and five["dot_series"] == wbv.why_base_view(128, 16, 10000.0, "interleaved")["dot_series"]
    assert len(five["lines"]) == 9 * 8 - 1 and set(five["lines"][five["lines"]["chosen"]]["base"]) == {"500,000"}  # its slowest pair left out


@pytest.mark.parametrize(("n", "d"), [(128, 128), (4096, 1024), (512, 64), (2, 2), (100, 8)])
def test_why_base_conclusion_follows_the_measurement(n, d):
    wb = wbv.why_base_view(n, d, 10000.0, "interleaved")
    text = wb["conclusion"]
    assert text.startswith(f"At n = {n:,} and d = {d}")
    for r in wb["rows"]:
        if r["too_small"]:
            assert r["label"] in text.split("too small")[0]
    if wb["too_large"]:
        assert "too large" in text
    longest = wb["table"].loc[wb["chosen_row"], wbv.LONGEST]
    assert longest not in text  # never quotes the exercise's answer
    assert wb["good"] == [r["label"] for r in wb["rows"] if wbv.verdict(r) == "fine"]


def test_why_base_names_both_failures_at_the_default():
    """At n = d = 128 a base of 10 turns every pair within the context and bases from 10^5 freeze over half
    of them; the chosen 10,000 is fine, and from 10^6 the dot product never even halves within 128 positions."""
    wb = wbv.why_base_view(128, 128, 10000.0, "interleaved")
    assert wb["too_small"] == ["10"] and wb["too_large"] == ["100,000", "10⁶", "10⁷", "10⁸"]
    assert wb["good"] == ["100", "1,000", "10,000"]
    never = [r["label"] for r in wb["rows"] if r["halves_at"] is None]
    assert never == ["10⁶", "10⁷", "10⁸"]
    dots = wb["dots"]
    assert set(dots["base"]) == {"10", "100", "1,000", "10,000", "10⁶", "10⁸"}
    assert wb["dot_series"] == ["10", "100", "1,000", "10,000", "10⁶", "10⁸", wbv.YOUR_BASE]
    chosen = dots[dots["chosen"]]
    assert set(chosen["series"]) == {wbv.YOUR_BASE} and dots["series"].iloc[-1] == wbv.YOUR_BASE  # drawn last, on top
    assert chosen["dot"].iloc[0] == pytest.approx(1.0) and len(chosen) == 128  # k = 0 .. n-1, divided by d/2


def test_sinusoid_story_claims_are_computed():
    story = wbv.sinusoid_story(128, 128, 10000.0, "interleaved")
    shows = " ".join(story["shows"])
    assert "max |PE| = 1.0000" in shows and "√(d/2) = 8.0000" in shows and "positions 0 and 1 (neighbours)" in shows
    assert "falls to half of its value at k = 0 by offset 46" in " ".join(story["wrong"])


def test_largest_settings_are_fast_paths():
    wb = wbv.why_base_view(4096, 1024, 1e9, "concatenated")
    assert wb["closest"]["method"].startswith("the offset relation")
    assert wb["closest"]["offset"] == 1 and len(wb["lines"]) <= MAX_MARKS


# ----------------------------------------------------------------------------- charts


def test_pe_heatmap_chart():
    small = v.heatmap_view(16, 8, 10000.0, "interleaved")  # a few cells: one rect each
    spec = to_dict(pe_heatmap(small["frame"]))
    assert spec["mark"]["type"] == "rect"
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["y"]["field"], enc["color"]["field"]) == ("depth", "position", "value")
    assert enc["color"]["scale"]["scheme"] == "redblue" and enc["color"]["scale"]["domain"] == [-1.0, 1.0]
    assert enc["x"]["title"] and enc["y"]["title"] and len(enc["tooltip"]) == 4
    assert sum(len(d) for d in spec["datasets"].values()) == small["cells"] == 16 * 8
    hm = v.heatmap_view(4096, 1024, 10000.0, "interleaved")  # big: one image, kept sin/cos pairs side by side
    assert RASTER_CELLS < hm["cells"] <= v.HEATMAP_IMAGE_CELLS
    spec = to_dict(pe_heatmap(hm["frame"]))
    image, hover, pins = spec["layer"]
    assert image["mark"]["type"] == "image" and image["encoding"]["x"]["title"] and image["encoding"]["y"]["title"]
    labels = image["encoding"]["x"]["axis"]["labelExpr"]
    assert labels.startswith("isValid(['0','1','4','5',")  # slot k is labelled with the depth it shows (every other pair)
    enc = hover["encoding"]
    assert legend_range(spec) == (-1.0, 1.0) and pins["encoding"]["color"]["scale"]["range"] == list(REDBLUE)
    assert {t["field"] for t in enc["tooltip"]} == {"position", "depth", "column", "value"}
    grid = spec["datasets"][hover["data"]["name"]]
    for cell in grid:  # the hover values are PE itself at the cell's position and depth
        assert cell["value"] == pytest.approx(float(posenc.sinusoidal(np.array([cell["position"]]), 1024)[0, cell["depth"]]), abs=1e-6)
    even = to_dict(pe_heatmap(v.heatmap_view(128, 128, 10000.0, "interleaved")["frame"]))  # every column: real depths on x
    assert "axis" not in even["layer"][0]["encoding"]["x"] and even["layer"][1]["encoding"]["x"]["field"] == "depth"


def test_spectrum_chart_layers():
    sp = v.spectrum_view(512, 10000.0, 128)
    spec = to_dict(spectrum_chart(sp["frame"], sp["marks"]))
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks == ["circle", "rule", "text", "text"]
    pts = spec["layer"][0]["encoding"]
    assert pts["y"]["scale"]["type"] == "log" and pts["color"]["field"] == "full_turn"
    assert pts["color"]["scale"]["domain"] == ["yes", "no"]
    assert sum(len(d) for d in spec["datasets"].values()) <= 256 + 2 * 3




def test_bases_and_shift_charts():
    wb = wbv.why_base_view(128, 128, 10000.0, "interleaved")
    spec = to_dict(bases_chart(wb["lines"], n=128, order=wb["line_series"]))
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule"]
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    assert scale["domain"] == wb["line_series"] and len(set(scale["range"])) == 9 and scale["range"][-1] == "#D55E00"
    # viridis from 0.3 to 0.7, dark to light, then vermillion: its two ends vanish on one theme or the other
    assert scale["range"][0] == "#355f8d" and scale["range"][-2] == "#44bf70"
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
    spec = to_dict(dot_chart(wb["dots"], order=wb["dot_series"]))
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule"]
    assert spec["layer"][0]["encoding"]["x"]["field"] == "k" and spec["layer"][0]["encoding"]["y"]["field"] == "dot"
    sh = v.shift_view(7, 64, 10000.0)
    for name, part in sh["frame"].groupby("matrix", sort=False):
        spec = to_dict(shift_chart(part))
        assert spec["mark"]["type"] == "rect" and spec["title"] == name and spec["width"] == spec["height"]
        assert spec["encoding"]["color"]["scale"]["domain"] == [-1.0, 1.0]
        assert sum(len(d) for d in spec["datasets"].values()) == 64 * 64 <= MAX_MARKS
