"""The lab's views and charts as plain functions, on the shipped run."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest

from posenc.charts import base
from posenc.charts import lab as charts
from posenc.lab.evaluate import attention, eval_sequences, mass_on_context
from posenc.lab.experiment import LabConfig
from posenc.lab.positions import DEFAULT_SCHEMES, LAB, LAB_SCHEMES, NAMES, untrainable
from posenc.lab.results import load_shipped, spread
from posenc.views import lab as views

RUN = load_shipped()


def test_overview_numbers_are_the_results():
    ov = views.overview(RUN)
    res = RUN["results"]
    assert ov["floor"] == res["floor"] and ov["n_models"] == res["config"]["n_seeds"] * len(res["runs"])
    rope = ov["frame"][(ov["frame"]["scheme"] == "RoPE") & (ov["frame"]["length"] == 128)].iloc[0]
    sp = spread([r["mean"]["128"]["gap"] for r in res["runs"]["rope"].values()])
    assert rope["gap"] == sp["mean"] and rope["lo"] == sp["min"] and rope["hi"] == sp["max"]
    learned = ov["frame"][ov["frame"]["scheme"] == "Learned table"]
    assert list(learned["length"]) == [32]  # no row past L
    assert ov["table"].iloc[2]["2L = 64"] == "no row past L"
    assert list(ov["table"]["scheme"]) == [NAMES[s] for s in res["runs"]]
    assert ov["keys"] == [LAB[s].key for s in res["runs"]] and ov["randomize"] == 0


def test_overview_carries_the_follow_up_run_dashed_in_the_gap_chart():
    ov = views.overview(RUN)
    more = ov["longer"]
    again = ["Raw index", "RoPE + randomized"]  # what did not learn at 1,000 steps
    assert more["steps"] == RUN["longer"]["config"]["steps"] and more["names"] == again
    assert more["n_models"] == 2 * RUN["longer"]["config"]["n_seeds"] and list(more["table"]["scheme"]) == again
    f = ov["frame"]
    assert set(f["budget"]) == {"1,000 steps", "4,000 steps"}
    late = f[(f["budget"] == "4,000 steps")]
    want = spread([r["mean"]["128"]["gap"] for r in RUN["longer"]["runs"]["raw_index"].values()])
    assert list(late["scheme"].astype(str).unique()) == again
    assert late[late["length"] == 128]["gap"].iloc[0] == want["mean"]
    spec = charts.gap_chart(f, ov["names"]).to_dict()
    assert spec["layer"][1]["encoding"]["strokeDash"]["scale"]["domain"] == ["1,000 steps", "4,000 steps"]
    # a run without a follow-up (a custom run) has none, and its chart draws no dashes
    plain = views.overview({"results": RUN["results"], "weights": RUN["weights"]})
    assert plain["longer"] is None and set(plain["frame"]["budget"]) == {"1,000 steps"}
    assert "strokeDash" not in charts.gap_chart(plain["frame"], plain["names"]).to_dict()["layer"][1]["encoding"]


def test_by_position_and_extensions():
    pv = views.by_position(RUN)
    f = pv["frame"]
    assert f[f.scheme == "RoPE"]["position"].max() == 255 and f[f.scheme == "Learned table"]["position"].max() == 31
    ext = views.extensions(RUN)
    rows = 1 + len(next(iter(RUN["results"]["runs"]["rope"].values()))["extensions"])  # plain RoPE + each row
    assert set(ext["frame"]["length"]) == {128, 256} and len(ext["frame"]) == 2 * rows and rows == 8  # 5 at test time, 2 fine-tunes
    assert ext["best"][128] in ext["methods"]


def test_attention_view_is_downsampled_and_its_mass_sums_the_context():
    av = views.attention_view(RUN, "rope", 0, 0, 8)
    assert set(av["maps"]) == {"L = 32", "8L = 256"}
    big = av["maps"]["8L = 256"]
    assert len(big) <= 16_384 and av["steps"]["8L = 256"] == (2, 2)
    assert set(av["mass"]["head"]) == {f"head {h}" for h in range(1, 5)}
    assert av["mass"]["mass"].between(0, 1 + 1e-12).all()
    learned = views.attention_view(RUN, "learned", 1, 0, 4)
    assert list(learned["maps"]) == ["L = 32"] and "no row" in learned["note"]


def test_mass_on_context_counts_offsets_0_to_k_minus_1():
    n = 5
    attn = np.zeros((1, n, n))
    attn[0, np.arange(n), np.maximum(np.arange(n) - 1, 0)] = 1.0  # previous-token head
    np.testing.assert_array_equal(mass_on_context(attn, 2)[0], np.ones(n))
    np.testing.assert_array_equal(mass_on_context(attn, 1)[0], [1, 0, 0, 0, 0])


@pytest.mark.parametrize("builder", ["gap", "position", "extension", "attention", "mass"])
def test_charts_build(builder):
    ov = views.overview(RUN)
    with alt.data_transformers.disable_max_rows():
        if builder == "gap":
            spec = charts.gap_chart(ov["frame"], ov["names"]).to_dict()
        elif builder == "position":
            pv = views.by_position(RUN)
            spec = charts.position_chart(pv["frame"], pv["names"], train_len=32).to_dict()
        elif builder == "extension":
            ext = views.extensions(RUN)
            spec = charts.extension_chart(ext["frame"], ext["methods"]).to_dict()
        else:
            av = views.attention_view(RUN, "alibi", 0, 0, 4)
            spec = (charts.attention_map(av["maps"]["4L = 128"], title="t") if builder == "attention"
                    else charts.mass_chart(av["mass"], train_len=32, order=2)).to_dict()
    assert "$schema" in spec


def test_attention_stack_holds_every_layer_and_head_of_the_seed_run():
    st = views.attention_stack(RUN, "rope", 4)
    assert (st["layers"], st["heads"]) == (2, 4)
    for frame in st["maps"].values():
        assert set(zip(frame["layer"], frame["head"])) == {(lay, h) for lay in (1, 2) for h in (1, 2, 3, 4)}
    for layer in (0, 1):
        cfg = LabConfig.from_dict(RUN["results"]["config"])
        seqs = eval_sequences(cfg.source(), views.ATTENTION_SEQS, 128)
        A = attention(RUN["weights"]["rope"], "rope", cfg.source(), cfg.model(), seqs, train_len=32, layer=layer)
        mass = mass_on_context(A, cfg.order)
        for head in range(4):
            got = st["maps"]["4L = 128"]
            cell = got[(got["layer"] == layer + 1) & (got["head"] == head + 1) & (got["query"] == 100) & (got["key"] == 99)]
            assert abs(float(cell["weight"].iloc[0]) - A[head, 100, 99]) < 1e-6  # float32 frame
            before, after = st["mass_summary"][layer][head]
            assert abs(before - mass[head, :32].mean()) < 1e-12 and abs(after - mass[head, 32:].mean()) < 1e-12
            one = views.attention_view(RUN, "rope", layer, head, 4)
            assert (one["mass_L"], one["mass_far"]) == (before, after)
    learned = views.attention_stack(RUN, "learned", 4)
    assert list(learned["maps"]) == ["L = 32"] and all(np.isnan(a) for row in learned["mass_summary"] for _, a in row)


@pytest.mark.parametrize("scheme", ["rope_randomized", "kerple"])  # a positions sample per 16 sequences; a trained bias
def test_attention_maps_in_passes_of_four_equal_one_pass_of_sixteen(monkeypatch, scheme):
    """``attention_layers`` runs its passes on ATTENTION_BATCH sequences (fresh 34 MB arrays per pass at 8L cost a live
    server 0.6 s a call): the same maps as one pass of 16, the randomized scheme's positions sample included."""
    from posenc.lab import evaluate

    cfg = LabConfig.from_dict(RUN["results"]["config"])
    seqs = eval_sequences(cfg.source(), views.ATTENTION_SEQS, 256)
    maps = {}
    for batch in (16, evaluate.ATTENTION_BATCH):
        monkeypatch.setattr(evaluate, "ATTENTION_BATCH", batch)
        maps[batch] = evaluate.attention_layers(RUN["weights"][scheme], scheme, cfg.source(), cfg.model(), seqs, train_len=32,
                                                randomize=cfg.random)
    assert evaluate.ATTENTION_BATCH < 16 and maps[16].shape == (2, 4, 256, 256)
    np.testing.assert_allclose(maps[evaluate.ATTENTION_BATCH], maps[16], rtol=0, atol=1e-14)


def test_head_charts_filter_on_their_parameters_and_title_follows_them():
    from posenc.charts.base import url_param

    st = views.attention_stack(RUN, "alibi", 4)
    layer, head = url_param("layer", "layer", [1, 2], 2), url_param("head", "head", [1, 2, 3, 4], 3)
    with alt.data_transformers.disable_max_rows():
        for label, frame in st["maps"].items():
            spec = charts.head_attention_maps(frame, name="ALiBi", label=label, layer=layer, head=head).to_dict()
            assert {p["name"]: p["value"] for p in spec["params"]} == {"url_layer": 2, "url_head": 3}
            text = json.dumps(spec)
            assert "datum['layer'] == url_layer && datum['head'] == url_head" in text and f', {label}' in text
        mass = charts.head_mass_chart(st["mass"], st["mass_summary"], layer=layer, head=head, train_len=32, order=2).to_dict()
    title = mass["title"]["text"]["expr"]
    table = json.loads(title[title.index("[["):title.index("[url_layer")])
    b, a = st["mass_summary"][1][2]
    assert table[1][2] == f"{b:.2f} before L, {a:.2f} after"  # head 3 of layer 2, picked by [url_layer - 1][url_head - 1]


def test_scheme_colours_come_from_the_registry_and_differ_within_a_chart():
    """Every lab scheme is drawn in its registry entry's colour (charts.base.SCHEME_COLORS); the default run's all
    differ, and a scheme whose colour is taken in the same chart (the naive schemes of a custom run) gets a spare."""
    from posenc.charts.base import SCHEME_COLORS

    keys = list(dict.fromkeys(LAB[s].key for s in DEFAULT_SCHEMES))  # a variant of a registry entry shares its key
    assert charts.scheme_colors(keys) == [SCHEME_COLORS[k] for k in keys] and len(set(charts.scheme_colors(keys))) == len(keys)
    every = [LAB[s].key for s in LAB_SCHEMES]
    colours = charts.scheme_colors(every)
    assert len(set(colours)) == len(every)
    assert sum(c == SCHEME_COLORS[k] for c, k in zip(colours, every)) >= len(every) - 3
    ov = views.overview(RUN)
    with alt.data_transformers.disable_max_rows():
        spec = charts.gap_chart(ov["frame"], ov["names"]).to_dict()
    scale = spec["layer"][1]["encoding"]["color"]["scale"]
    # each line its registry entry's colour, a second scheme of one entry (T5 scaled) a spare one
    assert scale["domain"] == ov["names"] and scale["range"] == charts.scheme_colors(ov["keys"])
    firsts = {k: i for i, k in reversed(list(enumerate(ov["keys"])))}
    assert all(scale["range"][i] == SCHEME_COLORS[k] for k, i in firsts.items()) and len(set(scale["range"])) == len(ov["keys"])
    with pytest.raises(ValueError, match="'key' column"):
        charts.gap_chart(ov["frame"].drop(columns="key"), ov["names"])


def test_not_trained_lists_every_registry_scheme_the_lab_leaves_out_by_name():
    rows = views.not_trained()
    assert len(rows) == len(untrainable()) and all(name and len(why) > 20 for name, why in rows)
    assert any("MiniLM" in name and "384" in why for name, why in rows)


# ----------------------------------------------------------------------------- issue 37: bands, labels, ETA, extensions
def test_bands_view_numbers_are_the_band_gaps_with_bootstrap_intervals():
    from posenc.lab.results import band_gaps, bootstrap_interval, uniform_band_gaps

    bv = views.bands_view(RUN)
    f = bv["frame"]
    assert bv["band_labels"] == ["[0, L)", "[L, 2L)", "[2L, 4L)", "[4L, 8L)"] and set(f["run"]) == {"shipped"}
    for s in ("rope", "alibi"):
        for i, per in enumerate(band_gaps(RUN["results"], s).values()):
            row = f[(f["scheme"] == NAMES[s]) & (f["band"] == i)].iloc[0]
            assert row["gap"] == pytest.approx(np.mean(per), abs=1e-15) and (row["lo"], row["hi"]) == bootstrap_interval(per)
    cfg = RUN["results"]["config"]
    from posenc.lab.positions import unseen_share

    for _, row in f[f["band"] == 3].iterrows():  # B's out-of-distribution share at 8L, in the tooltip
        s = next(k for k, name in NAMES.items() if name == row["scheme"])
        assert row["unseen"] == unseen_share(s, 8 * cfg["train_len"], train_len=cfg["train_len"], d_model=cfg["d_model"],
                                             n_heads=cfg["n_heads"])
    assert (f[f["band"] == 0]["unseen"] == 0).all()  # nothing is unseen within the training length
    assert list(f[f["scheme"] == NAMES["learned"]]["band"]) == [0]  # the learned table: no band past L, so no end label
    assert NAMES["learned"] not in set(bv["labels"]["label"])
    assert list(bv["uniform"]["gap"]) == list(uniform_band_gaps(RUN["results"]).values())
    lab = np.log10(np.sort(bv["labels"]["y"].to_numpy()))
    decades = np.log10(bv["domain"][1] / bv["domain"][0])
    assert np.diff(lab).min() >= decades * views.LABEL_PX / views.BAND_PLOT_PX * (1 - 1e-9)  # no two labels overlap
    assert bv["domain"][0] <= f["lo"].min() and bv["domain"][1] >= max(f["hi"].max(), bv["labels"]["y"].max())
    # a custom run is drawn over the shipped bands, never replacing them
    both = views.bands_view(RUN, {"results": RUN["results"]})
    assert (both["frame"]["run"] == "custom").sum() == (both["frame"]["run"] == "shipped").sum() == len(f)
    assert "RoPE (your run)" in set(both["labels"]["label"]) and "RoPE" in set(both["labels"]["label"])


def test_spread_labels():
    np.testing.assert_allclose(base.spread_labels([1.0, 100.0], gap=0.5), [1.0, 100.0])  # far apart: unmoved
    y = base.spread_labels([1.0, 1.0], gap=0.2)  # two equal: 0.1 decade below and above
    np.testing.assert_allclose(np.log10(y), [-0.1, 0.1])
    y = base.spread_labels([10.0, 1.0, 1.0, 1.0], gap=0.1)  # three equal at 1, one far: the three centred, order kept
    np.testing.assert_allclose(np.log10(y), [1.0, -0.1, 0.0, 0.1])
    with pytest.raises(ValueError, match="values"):
        base.spread_labels([0.0, 1.0])
    with pytest.raises(ValueError, match="gap"):
        base.spread_labels([1.0], gap=0)
    # a two-line label needs 1.5 gaps to a one-line neighbour (half its own height plus half the neighbour's)
    np.testing.assert_allclose(np.log10(base.spread_labels([1.0, 1.0], gap=0.2, lines=[1, 2])), [-0.15, 0.15])
    np.testing.assert_allclose(base.spread_labels([2.0, 5.0], gap=1.0, log=False), [2.0, 5.0])  # linear: 3 units apart, unmoved
    np.testing.assert_allclose(base.spread_labels([2.0, 2.5], gap=1.0, log=False), [1.75, 2.75])


def test_axis_span_is_the_axis_vega_lite_draws():
    from posenc.charts.base import axis_span

    assert axis_span(0.005, 1.2, log=True) == 4.0  # drawn 0.001 .. 10: whole decades
    assert axis_span(0.0155, 1.0, log=True) == 2.0  # 0.01 .. 1
    assert axis_span(1.0, 7.0, log=False) == 8.75  # from 0, with a quarter more for rounding and other layers
    assert axis_span(-2.0, 10.0, log=False) == 15.0


def test_end_heights_space_names_end_px_apart_on_the_drawn_axis():
    """Two lines ending at one value: their names END_PX px apart on the axis the band widens (charts.base.end_heights,
    shared by the Context extension and lab charts)."""
    rows = pd.DataFrame({"y": [1.0, 7.0, 7.0], "lo": [0.5, 6.0, 6.0], "hi": [1.5, 8.0, 8.0]})
    last = rows.iloc[1:].reset_index(drop=True)
    h = base.end_heights(last, rows, "y", ("lo", "hi"), plot_px=200, log_y=False)
    span = base.axis_span(0.5, 8.0, log=False)  # the band's 0.5 .. 8, not the lines' 1 .. 7
    np.testing.assert_allclose(np.diff(h), span * base.END_PX / 200) and np.testing.assert_allclose(h.mean(), 7.0)
    logh = base.end_heights(last, rows, "y", plot_px=100, log_y=True)  # no band: the lines' own 1 .. 7, one decade
    np.testing.assert_allclose(np.diff(np.log10(logh)), base.END_PX / 100)
    nothing = rows.assign(y=np.nan, lo=np.nan, hi=np.nan)
    assert np.isnan(base.end_heights(nothing.iloc[1:], nothing, "y", ("lo", "hi"), plot_px=200, log_y=True)).all()


def test_long_end_labels_wrap_at_the_space_nearest_their_middle():
    assert base.wrap_label("T5 buckets scaled to L") == "T5 buckets\nscaled to L"
    assert base.wrap_label("RoPE + randomized") == "RoPE + randomized"  # 17 characters: one line
    assert base.wrap_label("x" * 30) == "x" * 30  # no space: as is
    labels = views.bands_view(RUN)["labels"]
    assert (labels["text"].str.replace("\n", " ") == labels["label"]).all()


def test_eta_text():
    assert views.eta_text(0.0, 5.0) == "estimating the time left"
    assert views.eta_text(0.25, 10.0) == "about 30 s left"  # 10 s for a quarter: 30 s for the rest
    assert views.eta_text(0.5, 100.0) == "about 1 min 40 s left"
    assert views.eta_text(1.0, 100.0) == "about 0 s left"
    with pytest.raises(ValueError, match="done"):
        views.eta_text(1.5, 1.0)
    with pytest.raises(ValueError, match="elapsed"):
        views.eta_text(0.5, -1.0)


def test_extension_table_names_each_rows_paper():
    from posenc.lab.positions import EXTENSIONS
    from posenc.registry import get_scheme

    t = views.extension_table(RUN)
    exts = list(next(iter(RUN["results"]["runs"]["rope"].values()))["extensions"])
    assert len(t) == 1 + len(exts) and t.iloc[0]["paper"] == get_scheme("rope").paper
    for i, e in enumerate(exts, 1):
        assert (t.iloc[i]["method"], t.iloc[i]["paper"]) == views.extension_source(e)
        if e in EXTENSIONS:
            assert t.iloc[i]["paper"] == get_scheme(EXTENSIONS[e]).paper
    assert views.extension_source("pi_ft")[1].startswith("Chen et al., Position Interpolation")
    with pytest.raises(ValueError, match="extension"):
        views.extension_source("nope")
    # a fine-tuned row evaluated at 4L only says so at 8L
    res = json.loads(json.dumps(RUN["results"]))
    for r in res["runs"]["rope"].values():
        r["extensions"]["pi_ft"] = {"128": {"gap": 0.05}}
    t = views.extension_table({"results": res})
    row = t[t["method"] == "PI + fine-tuning at 4L"].iloc[0]
    assert row["gap at 4L"] == "0.050 (0.050–0.050)" and row["gap at 8L"] == "not evaluated"


def test_band_chart_labels_lines_and_dashes_ropes_variants():
    bv = views.bands_view(RUN, {"results": RUN["results"]})
    with alt.data_transformers.disable_max_rows():
        spec = charts.band_chart(bv).to_dict()
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks.count("text") == 2 and "line" in marks  # the end labels, and "uniform guess"
    line = next(la for la in spec["layer"] if la["mark"]["type"] == "line" and "strokeDash" in la["encoding"])
    dash = dict(zip(line["encoding"]["strokeDash"]["scale"]["domain"], line["encoding"]["strokeDash"]["scale"]["range"]))
    assert dash["rope"] == [1, 0] and dash["xpos"] == charts.VARIANT_DASH["xpos"] != dash["rope"]
    assert "legend" in line["encoding"]["color"] and line["encoding"]["color"]["legend"] is None  # labelled at the ends


# ----------------------------------------------------------------------------- issue 37: the Markov order sweep
def _order_results(order: int, past: dict[str, float], at_L: dict[str, float], *, L: int = 4, n: int = 32) -> dict:
    """A hand-made results dict (the fields the sweep reads): the Bayes loss log V - u_t, each scheme's gap at L from
    ``at_L`` and past L ``past[s]`` x the uniform guess's gap at the same position; "learned" stops at L."""
    uniform = float(np.log(8))
    bayes = [uniform - (0.3 + 0.01 * t + 0.05 * order) for t in range(n)]
    runs = {}
    for s in past:
        curve = [at_L[s]] * L + [past[s] * (uniform - bayes[t]) for t in range(L, n)]
        runs[s] = {"0": {"gap_by_position": curve, "mean": {str(L): {"gap": at_L[s]}}}}
    runs["learned"] = {"0": {"gap_by_position": [at_L["alibi"]] * L, "mean": {str(L): {"gap": at_L["alibi"]}}}}
    return {"config": {"train_len": L, "order": order, "task": "markov"}, "floor": 1.5 - 0.01 * order, "uniform": uniform,
            "bayes_by_position": bayes, "runs": runs, "undefined": {"learned": "no row for position 4"}}


def _orders() -> dict:
    """ALiBi holds at every order, NoPE only at k = 1 and 2 (and did not learn at k = 4), RoPE at none."""
    good = {"alibi": 0.01, "nope": 0.01, "rope": 0.01, "learned": 0.01}
    out = {}
    for k in (1, 2, 3, 4):
        past = {"alibi": 0.02 * k, "nope": 0.04 * k, "rope": 0.5 + k}
        out[str(k)] = _order_results(k, past, {**good, "nope": 0.5} if k == 4 else good)
    return {"format": 3, "task": "markov", "orders": out}


def test_order_sweep_rows_follow_the_rule_and_the_files_orders(tmp_path, monkeypatch):
    from posenc.lab import results
    from posenc.lab.results import HOLDS, VERDICTS, beyond_fraction

    data = _orders()
    f = views.order_sweep(data)
    assert len(f) == 4 * 4 and sorted(f["order"].unique()) == [1, 2, 3, 4]
    for _, r in f.iterrows():  # each row is the library's verdict of that scheme at that order
        res = data["orders"][str(r["order"])]
        lab = next(s for s in res["runs"] if NAMES[s] == r["scheme"])
        want = beyond_fraction(res, lab)
        assert r["verdict"] == want["verdict"] if want["verdict"] else pd.isna(r["verdict"])
        assert r["fraction"] == want["fraction"] or np.isnan(want["fraction"])
        assert r["floor"] == res["floor"]
    by = {(r["scheme"], r["order"]): r for _, r in f.iterrows()}
    for k in (1, 2, 3, 4):  # made so: ALiBi below NoPE below RoPE past L at every order
        assert by["ALiBi", k]["fraction"] < by["NoPE", k]["fraction"] < by["RoPE", k]["fraction"]
        assert by["ALiBi", k]["verdict"] == VERDICTS[0] and by["RoPE", k]["verdict"] != VERDICTS[0]
        assert pd.isna(by["Learned table", k]["verdict"]) and np.isnan(by["Learned table", k]["fraction"])
    assert [by["NoPE", k]["fraction"] <= HOLDS for k in (1, 2, 3, 4)] == [True, True, False, False]
    assert [by["NoPE", k]["learned"] for k in (1, 2, 3, 4)] == [True, True, True, False]
    # from the package's data: an empty frame without the file, the same rows with it
    monkeypatch.setattr(results, "DATA", tmp_path)
    assert views.order_sweep().empty
    (tmp_path / views.ORDERS_FILE).write_text(json.dumps(data))
    assert views.order_sweep().equals(f)
    with pytest.raises(ValueError, match="data must be"):
        views.order_sweep({"orders": None})


def test_order_view_sentence_and_chart():
    from posenc.lab.results import HOLDS

    v = views.order_view(views.order_sweep(_orders()))
    assert "Learned table" not in set(v["frame"]["scheme"]) and v["orders"] == [1, 2, 3, 4]
    s = v["sentence"]
    assert "ALiBi holds at every order" in s and "NoPE holds only at k = 1, 2" in s and "RoPE at none" in s
    assert "One seed per order, so no interval" in s
    assert set(v["labels"]["order"]) == {4} and set(v["labels"]["scheme"]) == {"ALiBi", "NoPE", "RoPE"}
    lo, hi = v["domain"]
    assert lo <= min(HOLDS, v["frame"]["fraction"].min()) and hi >= max(1.0, v["frame"]["fraction"].max())
    y = np.sort(np.log10(v["labels"]["y"].to_numpy()))
    assert np.all(np.diff(y) >= np.log10(hi / lo) * views.LABEL_PX / views.BAND_PLOT_PX - 1e-9)  # no two labels overlap
    spec = charts.order_chart(v).to_dict()
    datasets = list(spec["datasets"].values())
    lines = next(d for d in datasets if {"uniform guess", f"holds (≤ {HOLDS:.0%})"} <= {r.get("label") for r in d})
    assert sorted(r["fraction"] for r in lines) == [HOLDS, 1.0]
    assert spec["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
    with pytest.raises(ValueError, match="frame must"):
        views.order_view(views.order_sweep({"orders": {}}))


def test_order_sweep_reads_what_run_experiment_writes():
    """A tiny sweep in the shipped format (orders 1 and 2, 30 steps, 8 evaluation sequences): one row per scheme and
    order, each order's own floor, a finite positive fraction past L."""
    from posenc.lab.experiment import run_experiment

    orders = {str(k): run_experiment(LabConfig.for_task("markov", order=k, n_seeds=1, steps=30, n_eval=8,
                                                        schemes=("alibi", "nope")))[0] for k in (1, 2)}
    f = views.order_sweep({"format": 3, "task": "markov", "orders": orders})
    assert sorted(zip(f["scheme"], f["order"])) == [("ALiBi", 1), ("ALiBi", 2), ("NoPE", 1), ("NoPE", 2)]
    assert f.groupby("order")["floor"].nunique().eq(1).all() and f["floor"].nunique() == 2
    assert (f["fraction"] > 0).all() and f["verdict"].notna().all()
    assert (f["floor"] < f["uniform"]).all()
