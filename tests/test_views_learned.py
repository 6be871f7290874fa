"""Views and charts of the learned-table page, and posenc.spectrum, as plain functions."""

import math

import altair as alt
import numpy as np
import pytest

import posenc
from posenc.analysis.spectrum import (
    low_frequency_share,
    median_frequency,
    position_spectrum,
)
from posenc.charts.base import HEATMAP_CELLS, MAX_MARKS
from posenc.charts.learned import (
    norms_chart,
    similarity_chart,
    spectrum_chart,
    table_heatmap_chart,
    vector_chart,
)
from posenc.charts.raster import RASTER_CELLS, REDBLUE, legend_range
from posenc.schemes.learned import minilm_table, random_table
from posenc.views.learned import (
    MAX_SERIES_POINTS,
    SOURCES,
    builtin_table,
    contrast_view,
    expected_random_abs_cosine,
    learned_row_at,
    learned_view,
    provenance,
    row_at,
    sinusoid_at,
    summary_row,
    table_series,
    table_view,
    with_upload,
)

# Vaswani et al. 2017, arXiv:1706.03762 §3.5: ||PE(p)|| = sqrt(d / 2) for every p (even d); d = 384 -> sqrt(192)
SINUSOID_NORM_384 = math.sqrt(192)
# posenc/data/minilm_position_embeddings.json reference_scalars (float32 checkpoint, float64 norms)
MINILM_MEDIAN_POSITION_NORM = 0.478485376906587


@pytest.fixture(scope="module")
def minilm():
    return learned_view("minilm", 0, 512)


# ----------------------------------------------------------------------------- posenc.spectrum

def test_spectrum_of_a_pure_cosine_sits_in_one_bin():
    n = 256
    p = np.arange(n)
    T = np.stack([np.cos(2 * np.pi * 5 * p / n), np.sin(2 * np.pi * 5 * p / n + 0.3)], axis=1)  # (n, 2)
    s = position_spectrum(T)
    assert s["frequency"].shape == (n // 2,) and s["frequency"][0] == 1 / n and s["frequency"][-1] == 0.5
    assert np.argmax(s["share"]) == 4  # frequency 5 / n (bin k = 5, index 4: k = 0 is excluded)
    assert s["share"][4] == pytest.approx(1.0, abs=1e-12)
    assert median_frequency(s["frequency"], s["share"]) == 5 / n


@pytest.mark.parametrize("n", [64, 65])
def test_spectrum_obeys_parseval(n):
    T = np.random.default_rng(n).normal(size=(n, 7))
    s = position_spectrum(T)
    w = np.full(s["power"].size, 2.0)
    if n % 2 == 0:
        w[-1] = 1.0  # the Nyquist bin appears once
    assert np.sum(w * s["power"]) == pytest.approx(n * n * T.var(axis=0).mean(), rel=1e-12)
    assert s["share"].sum() == pytest.approx(1.0)


def test_white_noise_spreads_evenly_and_constants_have_no_spectrum():
    T = np.random.default_rng(3).normal(size=(512, 2000))
    s = position_spectrum(T)
    # flat: the share at f <= 1/32 is the fraction of bins there, 16 of 256
    assert low_frequency_share(s["frequency"], s["share"], max_frequency=1 / 32) == pytest.approx(16 / 256, rel=0.05)
    assert median_frequency(s["frequency"], s["share"]) == pytest.approx(0.25, abs=0.01)
    flat = position_spectrum(np.ones((10, 3)))
    assert not flat["share"].any() and math.isnan(median_frequency(flat["frequency"], flat["share"]))
    with pytest.raises(ValueError, match="table"):
        position_spectrum(np.ones(5))
    with pytest.raises(ValueError, match="max_frequency"):
        low_frequency_share(s["frequency"], s["share"], max_frequency=0.7)


def test_spectrum_is_chunk_independent():
    T = np.random.default_rng(0).normal(size=(40, 600))  # 600 channels: three channel blocks
    s = position_spectrum(T)
    X = np.fft.rfft(T - T.mean(axis=0), axis=0)
    assert np.allclose(s["power"], np.mean(np.abs(X[1:]) ** 2, axis=1))


# ----------------------------------------------------------------------------- the tables

def test_builtin_tables_are_the_library_tables():
    assert np.array_equal(builtin_table("minilm"), minilm_table())
    assert np.array_equal(builtin_table("sinusoid"), posenc.sinusoidal(np.arange(512), 384))
    assert np.array_equal(builtin_table("random", 5), random_table(512, 384, seed=5))
    with pytest.raises(ValueError, match="source"):
        builtin_table("gpt2")


def test_provenance_names_model_tensor_licence_and_dtype():
    p = provenance()
    # posenc/data/README.md
    assert p["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert p["tensor"] == "embeddings.position_embeddings.weight"
    assert p["shape"] == (512, 384) and p["licence"] == "Apache-2.0"
    assert p["stored_dtype"] == "float16" and p["checkpoint_dtype"] == "float32"


def test_minilm_view_numbers(minilm):
    T = minilm_table()
    assert minilm["shape"] == (512, 384)
    assert minilm["median_norm"] == pytest.approx(MINILM_MEDIAN_POSITION_NORM, abs=1e-3)
    assert minilm["max_abs"] == np.abs(T).max()
    assert abs(T[minilm["max_abs_at"]]) == minilm["max_abs"]
    assert minilm["clip"] == pytest.approx(np.percentile(np.abs(T), 99.5))
    # the similarity matrix is posenc.position_scores for the registered scheme, strided
    S = posenc.position_scores("learned_minilm", 512, d=384, metric="cosine")
    step = minilm["sim_step"]
    assert step == 4 and minilm["n_shown"] == 512
    got = minilm["similarity"].pivot(index="i", columns="j", values="cosine").to_numpy()
    assert np.allclose(got, S[::step, ::step], atol=1e-6)  # float32 in the frame
    off = ~np.eye(512, dtype=bool)
    assert minilm["mean_abs_offdiag"] == pytest.approx(np.abs(S[off]).mean())
    assert minilm["neighbour_cosine"] == pytest.approx(np.mean(np.diagonal(S, 1)))
    # first p > 1 with cos(P[1], P[p]) < 0.5
    hits = [p for p in range(2, 512) if S[1, p] < 0.5]
    assert minilm["first_below"] == hits[0] == 8
    assert minilm["cos_01"] == pytest.approx(S[0, 1])


def test_heatmap_is_strided_exact_values(minilm):
    T = minilm_table()
    f = minilm["heatmap"]
    sr, sc = minilm["heat_step"]
    assert len(f) <= HEATMAP_CELLS and (sr, sc) == (4, 3)
    assert set(f.columns) == {"position", "channel", "value"}
    grid = f.pivot(index="position", columns="channel", values="value").to_numpy()
    assert np.allclose(grid, T[::sr, ::sc], atol=1e-6)


def test_sinusoid_view_is_flat_in_norm_and_relative():
    v = learned_view("sinusoid", 0, 128)
    assert np.allclose(v["norms"]["norm"], SINUSOID_NORM_384)
    assert v["median_norm"] == pytest.approx(SINUSOID_NORM_384)
    S = posenc.position_scores("sinusoidal", 128, d=384, metric="cosine")
    got = v["similarity"].pivot(index="i", columns="j", values="cosine").to_numpy()
    assert v["sim_step"] == 1 and np.allclose(got, S, atol=1e-6)
    # cos(P[1], P[1 + k]) = (1/192) sum_i cos(k w_i): the first k below 0.5, by the formula
    w = posenc.sinusoid_frequencies(384)
    k = next(k for k in range(1, 600) if np.cos(k * w).sum() / 192 < 0.5)
    assert v["first_below"] == 1 + k


def test_random_table_similarity_is_noise():
    v = learned_view("random", 0, 512)
    assert v["median_norm"] == pytest.approx(0.02 * math.sqrt(384), rel=0.02)  # N(0, 0.02^2) per entry
    assert v["mean_abs_offdiag"] == pytest.approx(expected_random_abs_cosine(384), rel=0.03)
    assert abs(v["neighbour_cosine"]) < 0.01
    assert v["first_below"] == 2
    assert v["low_share"] == pytest.approx(16 / 256, rel=0.25)  # flat spectrum
    other = learned_view("random", 1, 512)
    assert other["median_norm"] != v["median_norm"]


def test_expected_abs_cosine_formula():
    assert expected_random_abs_cosine(1) == pytest.approx(1.0, rel=1e-12)  # on a line cos = +-1 always (an uploaded 1-column table)
    assert expected_random_abs_cosine(2) == pytest.approx(2 / math.pi)  # E|cos| of a uniform angle
    assert expected_random_abs_cosine(3) == pytest.approx(0.5)  # uniform on the sphere: |z| ~ U(0, 1)
    assert expected_random_abs_cosine(10**5) == pytest.approx(math.sqrt(2 / (math.pi * 10**5)), rel=1e-4)


def test_trained_table_is_smoother_than_noise_and_the_sinusoid_is_flat():
    c = contrast_view(0)
    s = c["summary"].set_index("table")
    assert list(s.index) == list(SOURCES.values())
    assert s.loc["MiniLM (trained)", "low_share"] > 5 * s.loc["untrained random", "low_share"]
    assert s.loc["MiniLM (trained)", "median_wavelength"] > 10 * s.loc["untrained random", "median_wavelength"]
    assert c["norms"].groupby("table").size().to_dict() == {t: 512 for t in SOURCES.values()}
    assert c["spectrum"].groupby("table").size().to_dict() == {t: 256 for t in SOURCES.values()}


def test_similarity_clamps_to_the_table_and_validates():
    T = np.random.default_rng(0).normal(size=(100, 16))
    v = table_view(T, 2048, name="mine")
    assert v["n_shown"] == 100 and v["n_requested"] == 2048 and v["shape"] == (100, 16)
    assert set(v["norms"]["table"]) == {"mine"}
    with pytest.raises(ValueError, match="table"):
        table_view(np.ones((1, 4)), 4)


def test_big_uploads_are_thinned_for_drawing_but_measured_in_full():
    tall = np.random.default_rng(0).normal(size=(70_000, 2))
    v = table_view(tall, 2048, name="tall")
    assert len(v["heatmap"]) <= HEATMAP_CELLS and len(v["similarity"]) <= HEATMAP_CELLS
    assert len(v["norms"]) <= MAX_SERIES_POINTS and v["norm_step"] == 18  # ceil(70000 / 4096)
    assert np.allclose(v["norms"]["norm"], np.linalg.norm(tall, axis=1)[::18])
    assert v["median_norm"] == pytest.approx(np.median(np.linalg.norm(tall, axis=1)))  # every row
    assert v["spectrum_thinned"] and len(v["spectrum"]) == v["spectrum_points"] <= MAX_SERIES_POINTS
    full = position_spectrum(tall)
    assert np.isin(v["spectrum"]["frequency"], full["frequency"]).all()
    assert v["spectrum"]["frequency"].iloc[0] == full["frequency"][0] and v["spectrum"]["frequency"].iloc[-1] == 0.5
    wide = np.random.default_rng(1).normal(size=(3, 20_000))
    r = row_at(wide, 2)
    assert len(r["frame"]) <= MAX_SERIES_POINTS and r["norm"] == pytest.approx(np.linalg.norm(wide[2]))
    assert len(sinusoid_at(7, 8192)["frame"]) == 4096
    for ch in (norms_chart(v["norms"]), spectrum_chart(v["spectrum"]), vector_chart(r["frame"], title="w")):
        _spec(ch)  # within the mark ceiling: no ValueError


def test_past_the_last_row():
    T = minilm_table()
    r = row_at(T, 511)
    assert r["defined"] and np.allclose(r["frame"]["value"], T[511]) and r["norm"] == pytest.approx(np.linalg.norm(T[511]))
    gone = row_at(T, 512)
    assert not gone["defined"] and gone["frame"] is None and math.isnan(gone["norm"])
    with pytest.raises(ValueError) as exc:
        posenc.learned_lookup(T, [512])
    assert gone["message"] == str(exc.value)
    assert "max_len = 512" in gone["message"]
    assert not learned_row_at("minilm", 0, 2048)["defined"]
    assert not learned_row_at("random", 3, 512)["defined"]
    # the sinusoid is a function: defined at 512 and beyond
    s = learned_row_at("sinusoid", 0, 512)
    assert s["defined"] and s["norm"] == pytest.approx(SINUSOID_NORM_384)
    assert np.allclose(s["frame"]["value"], posenc.sinusoidal([512], 384)[0])
    at = sinusoid_at(4096, 384)
    assert at["norm"] == pytest.approx(SINUSOID_NORM_384) and at["max_abs"] <= 1.0


def test_series_and_with_upload():
    T = np.random.default_rng(1).normal(size=(50, 4))
    s = table_series(T, "up")
    both = with_upload(contrast_view(0)["norms"], s["norms"])
    assert len(both) == 3 * 512 + 50 and "up" in set(both["table"])
    assert with_upload(s["norms"], None) is s["norms"]
    row = summary_row(s, "up")
    assert row.to_dict("records") == [{"table": "up", "median_norm": s["median_norm"], "median_wavelength": s["median_wavelength"],
                                       "low_share": s["low_share"], "neighbour_cosine": s["neighbour_cosine"]}]


# ----------------------------------------------------------------------------- charts

def _spec(ch):
    with alt.data_transformers.disable_max_rows():
        return ch.to_dict()


def test_heatmap_charts(minilm):
    d = _spec(table_heatmap_chart(minilm["heatmap"], step=minilm["heat_step"], clip=minilm["clip"]))
    image, hover, pins = d["layer"]  # more than RASTER_CELLS cells: one image, exact values on a hover grid
    assert image["mark"]["type"] == "image" and len(minilm["heatmap"]) > RASTER_CELLS
    enc = hover["encoding"]
    assert enc["x"]["field"] == "channel" and enc["y"]["field"] == "position" and enc["y"]["scale"]["reverse"]
    assert legend_range(d) == (-minilm["clip"], minilm["clip"]) and pins["encoding"]["color"]["scale"]["range"] == list(REDBLUE)
    assert image["encoding"]["x"]["title"] and image["encoding"]["y"]["title"] and enc["tooltip"]
    d = _spec(similarity_chart(minilm["similarity"], step=minilm["sim_step"]))
    assert legend_range(d) == (-1.0, 1.0)
    small = minilm["similarity"].head(64)  # a small matrix stays rect marks
    assert _spec(similarity_chart(small, step=minilm["sim_step"]))["mark"]["type"] == "rect"
    assert len(minilm["similarity"]) <= MAX_MARKS and len(minilm["heatmap"]) <= MAX_MARKS


def test_line_charts():
    c = contrast_view(0)
    d = _spec(norms_chart(c["norms"]))
    assert d["mark"]["type"] == "line" and d["encoding"]["y"]["scale"]["type"] == "log"
    assert d["encoding"]["color"]["scale"]["domain"] == list(SOURCES.values())
    d = _spec(spectrum_chart(c["spectrum"]))
    assert d["encoding"]["x"]["scale"]["type"] == "log" and d["encoding"]["y"]["scale"]["type"] == "log"
    assert {"filter": "datum.share > 0"} in d["transform"]
    d = _spec(vector_chart(sinusoid_at(512, 384)["frame"], title="t"))
    assert d["mark"]["type"] == "line" and d["encoding"]["x"]["field"] == "channel"
