"""Views and charts of pages 11 (similarity matrices) and 12 (compare schemes), as plain functions.

Every number is checked against posenc called directly, a formula, or a literal with its source
(the article "Positional Encoding in Transformers" has the comparison table).
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

import posenc
import posenc.analysis.tables
from posenc.analysis.compare import RELATIVE_TOL
from posenc.charts.base import HEATMAP_CELLS, MAX_MARKS
from posenc.charts.compare import (
    MASKED,
    NO,
    YES,
    measured_dot_panels,
    measured_dots,
    offset_profiles,
    score_matrices,
    wishlist_table,
)
from posenc.lab.results import HOLDS, verdict_word
from posenc.registry import SCHEMES
from posenc.views import compare as v
from posenc.views import similarity as sim

# ----------------------------------------------------------------------------- helpers


def cosine(G: np.ndarray) -> np.ndarray:
    """Cosine similarity from a Gram matrix, written independently of the view."""
    nrm = np.sqrt(np.diag(G))
    return G / np.outer(nrm, nrm)


def at(frame: pd.DataFrame, i: int, j: int) -> float:
    row = frame[(frame["i"] == i) & (frame["j"] == j)]
    assert len(row) == 1, (i, j)
    return float(row["score"].iloc[0])


def offsets_at(r: dict, k: int) -> float:
    o = r["offsets"]
    return float(o.loc[o["offset"] == k, "score"].iloc[0])


# ----------------------------------------------------------------------------- page 11 views


def test_sinusoid_matrix_and_measured_translation_invariance():
    n, d = 64, 16
    r = sim.scheme_similarity("sinusoidal", n, d, "cosine", 0)
    assert (r["kind"], r["unit"], r["n"], r["d"], r["step"]) == ("additive", "cosine similarity", n, d, (1, 1))
    assert len(r["frame"]) == n * n
    S = posenc.position_scores("sinusoidal", n, d=d, metric="cosine")
    for i, j in [(0, 0), (3, 10), (63, 0), (20, 41)]:
        assert at(r["frame"], i, j) == pytest.approx(S[i, j], abs=1e-6)  # float32 frame
    # measured on the matrix built from the vectors, not the Toeplitz view (which is 0 by construction)
    E = posenc.encode("sinusoidal", np.arange(n), d)
    dense = cosine(E @ E.T)
    assert r["translation_invariance"] == pytest.approx(posenc.translation_invariance(dense), abs=1e-13)
    assert r["translation_invariance"] < RELATIVE_TOL and r["offset_only"]
    # every sinusoid row has norm sqrt(d/2) (Vaswani et al. 2017, arXiv:1706.03762 §3.5), so cosine = dot / (d/2): the profile at 0 is 1
    assert offsets_at(r, 0) == pytest.approx(1.0)
    prof = posenc.offset_profile("sinusoidal", np.array([-5.0, 7.0]), d=d, metric="cosine")
    assert (offsets_at(r, -5), offsets_at(r, 7)) == pytest.approx(tuple(prof))
    assert r["offset_method"] == "exact offset profile"


def test_sinusoid_dot_profile_matches_schemes_md():
    # Vaswani et al. 2017, arXiv:1706.03762 §3.5: the shift property: PE(p).PE(p+k) = sum cos(k w_i); for d = 8, k = 5 this is 3.15998251
    r = sim.scheme_similarity("sinusoidal", 16, 8, "dot", 0)
    assert r["unit"] == "dot product PE(i)·PE(j)"
    assert offsets_at(r, 5) == pytest.approx(3.15998251, abs=1e-8)
    assert at(r["frame"], 2, 7) == pytest.approx(3.15998251, abs=1e-6)


def test_learned_minilm_is_absolute_and_ignores_d():
    n = 96
    r = sim.scheme_similarity("learned_minilm", n, 64, "cosine", 0)
    assert r["d"] == 384  # the bundled table is 384 wide whatever the control says
    S = posenc.position_scores("learned_minilm", n, d=384, metric="cosine")
    assert r["translation_invariance"] == pytest.approx(posenc.translation_invariance(S), rel=1e-12)
    assert r["translation_invariance"] > 0.1 and not r["offset_only"]
    # off the offset-only path the offset chart is the mean over each diagonal (j - i = k)
    for k in (-40, 0, 3, 95):
        assert offsets_at(r, k) == pytest.approx(np.diagonal(S, k).mean(), abs=1e-12)
    assert r["offset_method"] == "mean over each diagonal"
    with pytest.raises(ValueError, match="max_len = 512"):
        sim.scheme_similarity("learned_minilm", 600, 64, "cosine", 0)


def test_rope_measured_on_dense_probe_scores():
    n, d = 80, 32
    r = sim.scheme_similarity("rope", n, d, "cosine", 0)  # metric applies to additive schemes only
    assert r["unit"] == "q·k score (all-ones probe)"
    D = posenc.dense_scores("rope", n, d=d)
    assert r["translation_invariance"] == pytest.approx(posenc.translation_invariance(D), abs=1e-13)
    assert r["translation_invariance"] < RELATIVE_TOL
    assert r["max"] == pytest.approx(d)  # all-ones probe: offset 0 gives q.q = d (posenc.probe_vector)
    assert offsets_at(r, 0) == pytest.approx(d)


def test_alibi_mask_slopes_and_bias_translation_invariance():
    n = 32
    r = sim.scheme_similarity("alibi", n, 64, "cosine", 0)
    # causal form masks j > i: n(n-1)/2 cells, NaN in the frame (ALiBi get_slopes (arXiv:2108.12409): -inf above the diagonal)
    assert r["frame"]["score"].isna().sum() == n * (n - 1) // 2
    assert r["masked_fraction"] == pytest.approx((n - 1) / (2 * n))
    # ALiBi get_slopes (arXiv:2108.12409): 8 heads give slopes 2^-1 .. 2^-8; head 0 -> -0.5 (i - j)
    assert r["min"] == pytest.approx(-0.5 * (n - 1))
    assert offsets_at(r, -10) == pytest.approx(-5.0)
    assert math.isnan(offsets_at(r, 4))  # a future key is masked
    last = sim.scheme_similarity("alibi", n, 64, "cosine", 7)
    assert offsets_at(last, -10) == pytest.approx(-10 / 256)
    assert r["translation_invariance"] == 0.0 == posenc.translation_invariance(posenc.bias("alibi", n, 8)[0])
    assert r["unit"] == "bias on the logit"


def test_t5_bucket_ids_match_schemes_md():
    r = sim.scheme_similarity("t5", 40, 64, "cosine", 0)
    assert r["unit"] == "T5 bucket id"
    # HF T5 bucket function, run, bidirectional 32/128: rel -5 -> 5, -1 -> 1, 0 -> 0, 1 -> 17, 7 -> 23, 20 -> 26, -31 -> 11
    for rel, bucket in [(-5, 5), (-1, 1), (0, 0), (1, 17), (7, 23), (20, 26), (-31, 11)]:
        assert offsets_at(r, rel) == bucket
    assert at(r["frame"], 0, 1) == 17  # j - i = 1
    assert r["translation_invariance"] == 0.0


def test_large_n_is_strided_exactly_and_bias_dense_over_cap_is_noted():
    n = 1000
    r = sim.scheme_similarity("raw_index", n, 8, "dot", 0)
    assert len(r["frame"]) <= HEATMAP_CELLS and r["step"] == (8, 8)
    S = posenc.position_scores("raw_index", n, d=8, metric="dot")
    assert at(r["frame"], 992, 8) == pytest.approx(S[992, 8], rel=1e-6)  # strided cells are exact values
    assert r["max"] == pytest.approx(999 * 999 * 8)  # the range is of the full matrix, not the strided one
    assert set(r["frame"]["i"].unique()) == set(range(0, n, 8))
    big = sim.scheme_similarity("alibi", 4096, 64, "cosine", 0)  # one dense head: n^2, not 8 n^2
    assert big["translation_invariance"] == 0.0 and big["ti_note"] == ""


def test_offset_grid():
    k, step = sim.offset_grid(10)
    assert step == 1 and list(k) == list(range(-9, 10))
    k, step = sim.offset_grid(4096)
    assert 0 in k and len(k) <= sim.MAX_OFFSETS + 1 and step == math.ceil(8191 / sim.MAX_OFFSETS)
    assert np.array_equal(k, -k[::-1]) and k.max() <= 4095


def test_diagonal_means_equal_profile_for_relative_scheme():
    n = 50
    D = posenc.dense_scores("sinusoidal", n, d=16)
    prof = posenc.offset_profile("sinusoidal", np.arange(-(n - 1), n), d=16)
    assert np.allclose(sim.diagonal_means(D), prof, atol=1e-12)


def test_unit_domains_and_panel_share_one_scale_per_unit():
    assert sim.unit_domain("cosine similarity", 0.2, 1.0) == ((-1.0, 1.0), "diverging")
    assert sim.unit_domain("q·k score (all-ones probe)", 21.0, 64.0) == ((-64.0, 64.0), "diverging")
    assert sim.unit_domain("bias on the logit", -63.5, 0.0) == ((-63.5, 0.0), "sequential")
    assert sim.unit_domain("bias on the logit", 0.0, 0.0) == ((-0.5, 0.5), "sequential")  # NoPE alone
    assert sim.unit_domain("bias on the logit", -0.3, 0.1) == ((-0.3, 0.3), "diverging")  # a signed bias (FIRE)
    rs = [sim.scheme_similarity(k, 48, 16, "cosine", 0) for k in ("sinusoidal", "rope", "rope_yarn", "t5")]
    panel = sim.similarity_panel(rs)
    top = max(max(abs(r["min"]), abs(r["max"])) for r in rs[1:3])
    doms = {p["scheme"]: p["domain"] for p in panel["panels"]}
    assert doms["RoPE"] == doms["RoPE + YaRN"] == (-top, top)  # one rotary scale
    assert doms["Sinusoidal"] == (-1.0, 1.0)
    assert doms["T5 relative buckets"] == (0.0, 29.0)  # HF T5 bucket function, run: rel +47 -> 16 + 13 (|rel| 46-63 -> 13)
    assert len(panel["frame"]) == 4 * 48 * 48 and set(panel["frame"]["scheme"]) == {r["label"] for r in rs} == set(panel["names"])
    # the charts name a scheme alone; its settings are said once, and ride in both frames (the CSV)
    assert panel["settings"] == ["Sinusoidal: d 16, base 10000", "RoPE: d 16, base 10000", "RoPE + YaRN: d 16, base 10000, s 4, L 2,048"]
    assert panel["drawn_at"] == "Drawn at n = 48; " + "; ".join(panel["settings"]) + "."
    assert dict(panel["offsets"].groupby("scheme")["settings"].first()) == {r["label"]: r["settings"] for r in rs}
    assert [r["name"] for r in rs] == [f"{r['label']} ({r['settings']})" if r["settings"] else r["label"] for r in rs]
    # two results of one label (an upload named like a scheme) keep their full names apart
    twin = dict(rs[0], name="Sinusoidal (d 32, base 10000)", settings="d 32, base 10000")
    assert sim.similarity_panel([rs[0], twin])["names"] == ["Sinusoidal (d 16, base 10000)", "Sinusoidal (d 32, base 10000)"]
    assert panel["units"] == ["cosine similarity", "q·k score (all-ones probe)", "T5 bucket id"]
    assert len(panel["offsets"]) == 4 * 95


def test_relative_count():
    rs = [sim.scheme_similarity(k, 32, 16, "cosine", 0) for k in ("sinusoidal", "raw_index", "learned_random")]
    out = sim.relative_count(rs)
    assert out["count"] == 1 and out["relative"] == ["Sinusoidal (d 16, base 10000)"]
    assert [name for name, _ in out["absolute"]] == ["Raw index", "Learned (untrained, random) (d 16)"]


def test_uploaded_table_path_agrees_with_the_registry_path():
    T = posenc.minilm_table()
    up = sim.table_similarity(T, 100, "cosine", name="MiniLM upload")
    reg = sim.scheme_similarity("learned_minilm", 100, 64, "cosine", 0)
    assert up["translation_invariance"] == pytest.approx(reg["translation_invariance"], rel=1e-9)
    assert np.allclose(up["frame"]["score"], reg["frame"]["score"], atol=1e-6)
    with pytest.raises(ValueError, match="512 rows"):
        sim.table_similarity(T, 513, "cosine", name="MiniLM upload")


# ----------------------------------------------------------------------------- page 12 views

PAGES = (("sinusoidal", "sinusoid"), ("rope", "rope"))


@pytest.fixture(scope="module")
def table():
    return v.comparison(512, 64, 8, 512, PAGES)


def test_comparison_columns_are_measure_scheme(table):
    frame = table["frame"]
    assert list(frame["key"]) == list(SCHEMES) and not table["errors"]
    for key in ("sinusoidal", "raw_index", "t5", "rope_yarn", "learned_minilm"):
        m = posenc.measure_scheme(key, n=512, d=64, n_heads=8, train_len=512)
        row = frame[frame["key"] == key].iloc[0]
        for col in ("bounded", "continuous", "relative", "defined_at_4L", "learned_parameters"):
            assert row[col] == m[col], (key, col)
        for col in ("closest_distance", "length_change", "translation_invariance", "max_abs_at_1e6"):
            assert row[col] == pytest.approx(m[col], nan_ok=True), (key, col)
        assert row["closest_pair"] == f"{m['closest_i']} & {m['closest_j']}"
    assert frame.loc[frame["key"] == "sinusoidal", "page"].item() == "sinusoid"
    assert frame.loc[frame["key"] == "t5", "page"].item() == ""  # not in the mapping given


def test_derived_marks(table):
    f = table["frame"]
    assert (f["wishlist"] == (f["bounded"] & f["continuous"] & f["relative"] & f["unique"])).all()
    assert ((f["learned_or_fixed"] == "learned") == (f["learned_parameters"] > 0)).all()
    assert (f["length_invariant"] == (f["length_change"] <= v.LENGTH_TOL)).all()
    assert table["wishlist_names"] == list(f.loc[f["wishlist"], "scheme"])
    # the sinusoid and RoPE tick all four; the raw index (unbounded), a learned table (a lookup), index / length
    # (a step of 1/L) and one sin+cos pair (collides across turns) do not
    assert {"Sinusoidal", "RoPE"} <= set(table["wishlist_names"])
    assert not {"Raw index", "Learned (MiniLM, trained)", "ALiBi", "NoPE (causal mask only)", "Index / length",
                "One sin+cos pair"} & set(table["wishlist_names"])


def test_seed_001_table_rows(table):
    f = table["frame"].set_index("key")
    # the article "Positional Encoding in Transformers": "Sinusoidal absolute | Fixed function | Yes, in principle | Original Transformer"
    assert f.loc["sinusoidal", "learned_or_fixed"] == "fixed" and f.loc["sinusoidal", "defined_at_4L"]
    assert "Transformer" in f.loc["sinusoidal", "models"]
    # "Learned absolute | Learned table | No | BERT, GPT-2"
    assert f.loc["learned_minilm", "learned_or_fixed"] == "learned" and not f.loc["learned_minilm", "defined_at_4L"]
    assert "BERT" in f.loc["learned_minilm", "models"] and "GPT-2" in f.loc["learned_minilm", "models"]
    # "Relative position bias | Learned, added to attention scores | Partially | T5, ALiBi": T5 learns one
    # scalar per bucket and head (32 x 8); ALiBi's slopes are fixed -- measured 0 learned parameters
    assert f.loc["t5", "learned_parameters"] == 32 * 8 and f.loc["t5", "enters"] == "attention logits"
    assert f.loc["alibi", "learned_parameters"] == 0 and f.loc["alibi", "enters"] == "attention logits"
    # "Rotary (RoPE) | Fixed rotation applied to Q/K | Good with scaling tricks | Llama, GPT-NeoX"
    assert f.loc["rope", "learned_or_fixed"] == "fixed" and f.loc["rope", "enters"] == "queries and keys"
    assert "Llama" in f.loc["rope", "models"] and "GPT-NeoX" in f.loc["rope", "models"]


def test_learned_rows_measured_on_their_512_rows():
    row = posenc.measure_scheme("learned_random", n=1024, d=16, n_heads=8, train_len=256)
    assert row["n_measured"] == 512
    assert row["closest_distance"] == posenc.measure_scheme("learned_random", n=512, d=16, train_len=256)["closest_distance"]
    assert posenc.measure_scheme("rope", n=1024, d=16, n_heads=8, train_len=256)["n_measured"] == 1024
    assert posenc.measure_scheme("learned_random", n=1024, d=16)["n_measured"] == 512


def test_upload_rows_agree_with_the_bundled_table(table):
    up = posenc.analysis.tables.measure_table(posenc.minilm_table(), name="Uploaded: minilm.npy", n=512, train_len=512)
    assert up["n_measured"] == 512
    merged = v.with_rows(table["frame"], [up], "learned")
    assert len(merged) == len(table["frame"]) + 1
    last, ref = merged.iloc[-1], merged[merged["key"] == "learned_minilm"].iloc[0]
    assert last["page"] == "learned" and last["scheme"] == "Uploaded: minilm.npy"
    # the same 512 x 384 table through posenc.analysis.tables: same closest pair and the same dot-matrix invariance
    assert last["closest_distance"] == pytest.approx(ref["closest_distance"])
    assert last["translation_invariance"] == pytest.approx(ref["translation_invariance"], rel=1e-9)
    assert v.with_rows(table["frame"], [], "learned") is table["frame"]


def verdict(v):
    """True, False, or None for "no verdict" (pandas may hold it as None or NaN)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v)


def test_marks_frame(table):
    marks = v.marks_frame(table["frame"])
    assert len(marks) == 7 * len(table["frame"])
    f = table["frame"].set_index("scheme")
    for _, m in marks.iterrows():
        col = {"bounded": "bounded", "continuous": "continuous", "relative": "relative", "unique": "unique",
               "length-invariant": "length_invariant", "defined at 4L": "defined_at_4L", "extrapolates (lab)": "extrapolates"}[m["property"]]
        assert verdict(m["ok"]) == verdict(f.loc[m["scheme"], col])
    lab = marks[marks["property"] == "extrapolates (lab)"].set_index("scheme")["ok"].map(verdict)
    # the shipped lab results: ✓ exactly where the first task's beyond-L fraction is within HOLDS of the uniform guess's
    # gap (the rule, not a list typed in); the learned table has no row past L, schemes the lab does not train no verdict
    first = v.lab_tasks()[0]
    holds = {s for s, x in f[f"beyond_L_{first}"].items() if x <= HOLDS}
    assert {s for s, ok in lab.items() if ok is True} == holds and holds
    assert lab["Learned (MiniLM, trained)"] is None and lab["Single sine"] is None
    # above the line: ✗, unless the scheme did not learn the task (the raw index, at 1,000 and at 4,000 steps): no mark
    assert all(lab[s] is False for s in f.index if f.loc[s, f"beyond_L_{first}"] > HOLDS
               and not f.loc[s, f"verdict_{first}"].startswith("no verdict: it did not learn"))
    assert lab["Raw index"] is None and "did not learn" in f.loc["Raw index", f"verdict_{first}"]
    assert f.loc["Single sine", f"verdict_{first}"] == "not trained in the lab"
    assert f.loc["Learned (MiniLM, trained)", f"verdict_{first}"].startswith("no verdict: the learned table has ")
    for s in f.index:
        x = f.loc[s, f"beyond_L_{first}"]
        if x == x and not f.loc[s, f"verdict_{first}"].startswith("no verdict: it did not learn"):  # a number: the
            # cell names the rule's word for it and the number to 1 decimal of a percent
            assert f.loc[s, f"verdict_{first}"].startswith(f"{verdict_word(x)} · ")
            assert f"{x:.1%} of" in f.loc[s, f"verdict_{first}"] or f"{x:.0%} of" in f.loc[s, f"verdict_{first}"]
    raw = marks[(marks["property"] == "extrapolates (lab)") & (marks["scheme"] == "Raw index")]["detail"].iloc[0]
    assert "4,000 steps" in raw, raw


# ----------------------------------------------------------------------------- charts


def spec(ch) -> dict:
    with alt.data_transformers.disable_max_rows():
        return ch.to_dict()


def test_score_matrices_chart():
    rs = [sim.scheme_similarity(k, 40, 16, "cosine", 0) for k in ("sinusoidal", "rope", "alibi")]
    panel = sim.similarity_panel(rs)
    d = spec(score_matrices(panel["frame"], panel["panels"]))
    assert len(d["concat"]) == 3 and d["columns"] == 2
    assert d["resolve"]["scale"]["color"] == "independent"
    schemes = []
    for sub, p in zip(d["concat"], panel["panels"]):
        valid, masked = sub["layer"]
        assert valid["mark"]["type"] == "rect" and masked["mark"]["color"] == MASKED
        assert valid["encoding"]["stroke"]["scale"] == valid["encoding"]["color"]["scale"]  # seams hidden, same colours
        assert valid["encoding"]["x"]["field"] == "j" and valid["encoding"]["y"]["field"] == "i"
        assert valid["encoding"]["y"]["scale"]["reverse"] is True
        assert valid["encoding"]["x"]["title"] and valid["encoding"]["y"]["title"] and valid["encoding"]["tooltip"]
        scale = valid["encoding"]["color"]["scale"]
        assert scale["domain"] == list(p["domain"])
        schemes.append(scale["scheme"])
    assert schemes == ["redblue", "redblue", "viridis"]  # diverging, diverging, sequential (biases)
    rows = sum(len(ds) for ds in d["datasets"].values())
    assert rows == 3 * 40 * 40 <= MAX_MARKS


def test_big_score_matrices_are_images_with_the_same_scales():
    from posenc.charts.compare import PANELS_HOVER_CELLS
    from posenc.charts.raster import PALETTES, RASTER_CELLS, legend_range, palette_of
    rs = [sim.scheme_similarity(k, 128, 16, "cosine", 0) for k in ("sinusoidal", "alibi")]
    panel = sim.similarity_panel(rs)
    assert all(len(panel["frame"][panel["frame"]["scheme"] == p["scheme"]]) > RASTER_CELLS for p in panel["panels"])
    d = spec(score_matrices(panel["frame"], panel["panels"]))
    for sub, p in zip(d["concat"], panel["panels"]):
        image, hover, pins = sub["layer"]  # each unit's one panel here: its legend under it
        assert image["mark"]["type"] == "image" and sub["layer"][0]["title"]["text"] == p["scheme"]
        assert legend_range(sub, d["datasets"]) == tuple(p["domain"])
        assert pins["encoding"]["color"]["scale"]["range"] == list(PALETTES[palette_of(p["palette"])])
        assert len(d["datasets"][hover["data"]["name"]]) <= PANELS_HOVER_CELLS // len(panel["panels"])


def test_offset_profiles_chart():
    rs = [sim.scheme_similarity(k, 30, 16, "cosine", 0) for k in ("sinusoidal", "learned_random", "t5")]
    panel = sim.similarity_panel(rs)
    d = spec(offset_profiles(panel["offsets"], [r["name"] for r in rs]))
    assert len(d["vconcat"]) == 2  # cosine similarity, T5 bucket id
    for sub in d["vconcat"]:
        assert sub["mark"]["type"] == "line"
        assert sub["encoding"]["x"]["field"] == "offset" and sub["encoding"]["y"]["title"]
        assert sub["encoding"]["color"]["scale"]["domain"] == [r["name"] for r in rs]
    assert sum(len(ds) for ds in d["datasets"].values()) == 3 * 59
    assert [sub["title"] for sub in d["vconcat"]] == list(dict.fromkeys(panel["offsets"]["unit"]))  # several: each titled
    one = panel["offsets"][panel["offsets"]["unit"] == panel["offsets"]["unit"].iloc[0]]
    alone = spec(offset_profiles(one, [r["name"] for r in rs]))["vconcat"]
    assert len(alone) == 1 and "title" not in alone[0] and alone[0]["encoding"]["y"]["title"] == one["unit"].iloc[0]


def test_wishlist_and_dot_charts(table):
    marks = v.marks_frame(table["frame"])
    d = spec(wishlist_table(marks))
    cells, text = d["layer"]
    assert cells["mark"]["type"] == "rect" and text["mark"]["type"] == "text"
    assert cells["encoding"]["color"]["scale"]["range"] == [YES, NO, MASKED]
    assert sum(len(ds) for ds in d["datasets"].values()) == len(marks)
    dots = spec(measured_dots(table["frame"]))
    left, right = dots["hconcat"]
    assert left["mark"]["type"] == right["mark"]["type"] == "circle"
    assert left["encoding"]["x"]["field"] == "translation_invariance" and right["encoding"]["x"]["field"] == "closest_distance"
    # the page's panels are the export's, each with its own scheme names (stacked on a phone, each needs them)
    panels = [spec(p) for p in measured_dot_panels(table["frame"])]
    assert [p["encoding"]["x"]["field"] for p in panels] == ["translation_invariance", "closest_distance"]
    assert all(p["encoding"]["y"]["axis"]["labelLimit"] == 260 for p in panels) and right["encoding"]["y"]["axis"] is None


def test_the_dots_at_zero_and_at_the_top_sit_clear_of_the_axis_and_the_edge(table):
    """Drawn (Vega's scenegraph of the export), every dot lies wholly inside its panel, none centred on the axis line
    or cut by the plot's edge, and no tick is negative (each panel's measure is >= 0): at n = 512 most schemes sit at
    0 on the left and the raw index at the right panel's top, and the "0.0" tick label crowded the dots at 0
    (2026-12-07)."""
    import vl_convert as vlc

    from posenc.io import export
    from tests.scenegraph import nodes

    scene = vlc.vegalite_to_scenegraph(export.chart_spec(measured_dots(table["frame"])))
    symbols = lambda g: nodes(g, lambda d: d.get("marktype") == "symbol")  # noqa: E731
    panels = [g for g in nodes(scene, lambda d: d.get("role") == "scope") if symbols(g)]
    assert len(panels) == 2
    for panel in panels:
        width = panel["items"][0]["width"]
        dots = [d for s in symbols(panel) for d in s["items"]]
        radius = math.sqrt(dots[0]["size"] / math.pi)
        xs = [d["x"] for d in dots]
        assert min(xs) - radius >= 1 and max(xs) + radius <= width - 1, (min(xs), max(xs), width, radius)
    ticks = [t["text"] for a in nodes(scene, lambda d: d.get("role") == "axis-label") for t in a.get("items", [])]
    assert ticks and not [t for t in ticks if str(t).startswith(("-", "−"))], ticks


def test_charts_refuse_too_many_marks():
    big = pd.DataFrame({"i": np.zeros(MAX_MARKS + 1, dtype=np.int16), "j": 0, "score": 0.0, "scheme": "x"})
    with pytest.raises(ValueError, match="ceiling"):
        score_matrices(big, [])


def test_settings_text_names_what_each_scheme_is_drawn_at_from_its_parameter_specs():
    """The settings line (Similarity's caption, export titles and CSV column) reads each parameter's ``brief``, in the
    scheme's parameter order; the values are the scheme's defaults unless given."""
    assert sim.settings_text("rope_llama3", 64) == "d 64, base 500000, s 8, L 8,192"
    assert sim.settings_text("rope_longrope", 64, (("factor", 16.0),)) == "d 64, base 10000, s 16, L 4,096"
    assert sim.settings_text("single_sine", 7) == "d 7, ω 1"
    assert sim.settings_text("alibi", 64) == sim.settings_text("t5", 64) == ""  # no width, no setting drawn
    assert sim.settings_label("sinusoidal", 66, (("base", 500.0),)) == "Sinusoidal (d 66, base 500)"


def test_verdict_text_in_words():
    row = {"verdict": "holds", "fraction": 0.017, "lo": 0.015, "hi": 0.019, "span": "[L, 8L)", "reason": None}
    assert v.verdict_text(row) == "holds · 1.7% of a uniform guess's gap (95 %: 1.5%–1.9%)"
    ext = row | {"verdict": "worse than a uniform guess", "fraction": 1.047, "lo": 0.978, "hi": 1.128,
                 "span": "[0, 8L) (whole sequence)"}
    assert v.verdict_text(ext) == ("worse than a uniform guess · 105% of a uniform guess's gap over [0, 8L) (whole "
                                   "sequence) (95 %: 98%–113%)")
    assert v.verdict_text({"verdict": None, "reason": "no row past L"}) == "no verdict: no row past L"
    assert v.verdict_text(None) == "not trained in the lab"


def test_scheme_similarity_is_computed_once_per_setting_and_each_caller_gets_its_own_copy(monkeypatch):
    """RoPE's xPos and p-RoPE sections ask for the same RoPE matrix: kept (posenc.views.similarity._VIEWS)."""
    import posenc.views.similarity as vs

    calls = []
    real = vs._scheme_similarity
    monkeypatch.setattr(vs, "_scheme_similarity", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(vs, "_VIEWS", vs.Kept(vs.KEPT_VIEWS))
    first = vs.scheme_similarity("rope", 96, 32, "dot", 0)
    first["offsets"]["score"] = 0.0  # a caller that edits its copy changes nothing kept
    again = vs.scheme_similarity("rope", 96, 32, "dot", 0)
    fresh = real("rope", 96, 32, "dot", 0, vs.HEATMAP_CELLS, ())
    assert len(calls) == 1
    pd.testing.assert_frame_equal(again["offsets"], fresh["offsets"])
    pd.testing.assert_frame_equal(again["frame"], fresh["frame"])
    with pytest.raises(ValueError):  # a float length is refused, not answered from the integer one's result
        vs.scheme_similarity("rope", 96.5, 32, "dot", 0)
    vs.scheme_similarity("rope", 96, 32, "dot", 0, params=[("base", 500.0)])  # a list cannot key: computed as given
    assert len(calls) == 3


def test_kept_bounds_by_count_by_bytes_or_both_and_drops_the_least_recently_used():
    from posenc._kept import Kept

    by_count = Kept(2)
    for k in "abc":
        by_count.put(k, k)
    assert len(by_count) == 2 and by_count.get("a") is None
    by_bytes = Kept(max_bytes=10)  # no count bound: the long jobs' pickled results
    for k in "abcd":
        by_bytes.put(k, b"xxx")
    by_bytes.get("b")  # used: kept over c
    by_bytes.put("e", b"xxx")
    assert len(by_bytes) == 3 and by_bytes.get("b") == b"xxx" and by_bytes.get("c") is None
    huge = Kept(max_bytes=1)
    huge.put("big", b"too large")
    assert huge.get("big") == b"too large"  # one entry always stays


def test_offset_profiles_draw_the_widest_line_first_so_both_show():
    """RoPE against xPos (d = 128, n = 1,024): past offset +500 xPos swings from −50 to +120 around RoPE's 0–50.  Vega-Lite
    draws a line's series in the order of their rows, so the widest goes first; in the exported picture both colours
    keep a share of the pixels (drawn the other way, RoPE's blue kept 7,237 pixels to xPos's 42,914)."""
    import io

    from PIL import Image

    from posenc.charts.base import OKABE_ITO, style
    from posenc.charts.compare import offset_profiles
    from posenc.io.export import chart_png
    from posenc.views.rope import xpos_view

    xp = xpos_view(128, 1024)
    ch = offset_profiles(xp["offsets"], xp["names"])
    (rows,) = [ds for ds in ch.to_dict()["datasets"].values()]
    assert [r["scheme"] for r in rows][:1] == ["xPos"] and [r["scheme"] for r in rows][-1:] == ["RoPE"]
    img = np.asarray(Image.open(io.BytesIO(chart_png(style(ch)))).convert("RGB")).astype(int)
    shown = {name: int((np.abs(img - np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)])).sum(axis=2) < 60).sum())
             for name, c in zip(xp["names"], OKABE_ITO)}  # RoPE blue, xPos orange: the domain's first two colours
    assert min(shown.values()) > 0.4 * max(shown.values()), shown
