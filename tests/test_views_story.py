"""Views and chart builders of the story pages 1, 3, 4 and 5 (attention, index/length, single sine, sin+cos pair).

Every number is pinned against an independent oracle (the math module, a brute-force loop), a literal
from the article "Positional Embeddings: Why Attention Needs Order", or a relation.
"""

from __future__ import annotations

import itertools
import math

import altair as alt
import numpy as np
import pytest

import posenc
from posenc.charts.base import MAX_MARKS
from posenc.charts.story import (
    COLOR_FIELD,
    circle_chart,
    closest_curve_chart,
    growth_chart,
    index_values_chart,
    sine_chart,
    step_chart,
    token_heatmap,
)
from posenc.views.circle import circle_shown
from posenc.views.returns import returns_to_start
from posenc.views.story import (
    attention_view,
    circle_view,
    format_difference,
    format_tokens,
    index_length_view,
    raw_index_growth,
    sine_shown,
    single_sine_view,
)

DOG = "The dog bit the man."  # the article's two sentences
MAN = "The man bit the dog."


def spec(chart) -> dict:
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


def layers(d: dict) -> list[dict]:
    return d.get("layer", [d])


def marks(d: dict) -> list[str]:
    return [m["mark"]["type"] if isinstance(m["mark"], dict) else m["mark"] for m in layers(d)]


def rows(d: dict) -> int:
    return sum(len(v) for v in d.get("datasets", {}).values())


# ----------------------------------------------------------------------------- attention_view
def test_attention_without_positions_is_the_same_bag():
    v = attention_view(DOG, MAN, None, 16)
    assert v["tokens_a"] == ["the", "dog", "bit", "the", "man", "."]
    assert v["tokens_b"] == ["the", "man", "bit", "the", "dog", "."]
    assert v["labels_a"] == ["0 the", "1 dog", "2 bit", "3 the", "4 man", "5 ."]
    assert v["same_bag"] and v["only_a"] == [] and v["only_b"] == []
    # the article: "These two sentences contain the same tokens. Without some fix, a transformer literally cannot
    # tell them apart."  posenc sums with math.fsum, so the differences are exactly zero.
    assert v["max_diff_pooled"] == 0.0
    assert v["max_diff_permuted"] == 0.0
    assert v["max_diff_logits"] == 0.0
    table = v["perm_table"]
    assert table["token"].tolist() == v["tokens_a"]
    assert table["position in A"].tolist() == [0, 1, 2, 3, 4, 5]
    assert table["position in B"].tolist() == [0, 4, 2, 3, 1, 5]  # dog and man swap, everything else stays
    for _, r in table.iterrows():
        assert v["tokens_b"][r["position in B"]] == r["token"]
    assert len(v["heat_a"]) == len(v["heat_b"]) == 36
    assert np.all(v["diff"]["diff"].to_numpy() == 0.0)
    # "the set of attention scores is unchanged. Each score just moves to a different slot."
    assert sorted(v["heat_a"]["score"]) == sorted(v["heat_b"]["score"])
    assert v["masked"] == 0 and v["d_model"] == 16


def test_attention_heat_frames_are_the_core_logits():
    v = attention_view(DOG, MAN, "sinusoidal", 16)
    r = posenc.permutation_equivariance(DOG, MAN, scheme="sinusoidal", d_model=16)
    np.testing.assert_array_equal(v["heat_a"]["score"].to_numpy().reshape(6, 6), r["logits_a"])
    np.testing.assert_array_equal(v["heat_b"]["score"].to_numpy().reshape(6, 6), r["logits_b"])
    row = v["heat_b"].iloc[1 * 6 + 4]
    assert (row["query"], row["key"], row["qi"], row["ki"]) == ("1 man", "4 dog", 1, 4)
    assert v["vmax"] == pytest.approx(max(np.abs(r["logits_a"]).max(), np.abs(r["logits_b"]).max()))


@pytest.mark.parametrize("scheme", ["sinusoidal", "rope", "alibi", "learned_random", "raw_index", "t5"])
def test_attention_with_positions_comes_apart(scheme):
    v = attention_view(DOG, MAN, scheme, 16)
    r = posenc.permutation_equivariance(DOG, MAN, scheme=scheme, d_model=16)
    assert v["max_diff_pooled"] == r["max_diff_pooled"] > 0
    assert v["max_diff_permuted"] == r["max_diff_permuted"] > 0
    assert v["max_diff_logits"] == r["max_diff_logits"] > 0
    if math.isfinite(r["max_diff_logits"]):  # the drawn difference matrix has the core's maximum
        assert np.nanmax(np.abs(v["diff"]["diff"])) == pytest.approx(r["max_diff_logits"], abs=0)


def test_attention_nope_is_order_from_the_mask_only():
    v = attention_view(DOG, MAN, "nope", 16)
    assert v["masked"] == 15  # 6 * 5 / 2 future cells per sentence
    assert math.isinf(v["max_diff_logits"]) and format_difference(v["max_diff_logits"]) == "∞ (a mask moved)"
    assert v["max_diff_pooled"] > 0
    # wherever both sentences see the pair, NoPE's scores agree exactly: only the mask differs
    d = v["diff"]["diff"].to_numpy()
    assert np.all(d[np.isfinite(d)] == 0.0)
    assert v["heat_a"]["score"].isna().sum() == 15


def test_attention_minilm_runs_at_384():
    v = attention_view("a b", "b a", "learned_minilm", 16)
    assert v["d_model"] == 384 and v["max_diff_pooled"] > 0


def test_attention_different_bags_are_drawn_and_named():
    v = attention_view(DOG, "A cat bit the dog", None, 16)
    assert not v["same_bag"]
    assert v["only_a"] == [".", "man", "the"] and v["only_b"] == ["a", "cat"]
    assert v["diff"] is None and v["perm_table"] is None and v["max_diff_permuted"] is None
    assert len(v["heat_a"]) == 36 and len(v["heat_b"]) == 25


@pytest.mark.parametrize("a, b, msg", [
    (" ".join(["w"] * 65), "w", "sentence A: text must have at most 64 tokens, got 65"),
    ("x", "", "sentence B is empty"),
    ("   ", "x", "sentence A is empty"),
])
def test_attention_bad_sentences_raise_clear_messages(a, b, msg):
    with pytest.raises(ValueError, match=msg):
        attention_view(a, b, None, 16)


def test_attention_unknown_scheme_raises():
    with pytest.raises(ValueError, match="unknown scheme 'nonsense'"):
        attention_view(DOG, MAN, "nonsense", 16)


@pytest.mark.parametrize("x, text", [(0.0, "0.0 (exact)"), (math.inf, "∞ (a mask moved)"), (None, "n/a"), (0.21079, "0.211")])
def test_format_difference(x, text):
    assert format_difference(x) == text


def test_format_tokens():
    assert format_tokens([]) == "—"
    assert format_tokens(["a", "cat"]) == "a, cat"
    assert format_tokens(["x" * 30]) == "x" * 19 + "…"
    assert format_tokens([str(i) for i in range(10)]) == "0, 1, 2, 3, 4, 5, 6, 7 and 2 more"


# ----------------------------------------------------------------------------- index_length_view
def test_index_length_reproduces_the_seed():
    v = index_length_view(("Hello world", "Cat sat on table", "", ""), 1)
    s = v["summary"]
    # the article: "For length 2: 1/2, 2/2 ... For length 4: 1/4, 2/4, 3/4, 4/4"
    assert s["L"].tolist() == [2, 4]
    assert s["first"].tolist() == [0.5, 0.25]
    assert s["step"].tolist() == [0.5, 0.25]
    assert s["last"].tolist() == [1.0, 1.0]
    vals = v["values"]
    assert vals[vals["L"] == 2]["value"].tolist() == [1 / 2, 2 / 2]
    assert vals[vals["L"] == 4]["value"].tolist() == [1 / 4, 2 / 4, 3 / 4, 4 / 4]
    assert vals["t"].tolist() == [1, 2, 1, 2, 3, 4]  # one convention: t = 1 ... L, value t / L
    assert (vals["value"] == vals["t"] / vals["L"]).all()
    assert vals["token"].tolist() == ["hello", "world", "cat", "sat", "on", "table"]
    assert v["max_change"] == 0.25  # 1/2 - 1/4
    assert v["at_position"]["value"].tolist() == [0.5, 0.25] and v["missing"] == []
    assert v["quiz"]["answer"] == 1 / 100 and "prompt of 100 tokens" in v["quiz"]["question"]


def test_index_length_step_curve_is_one_over_L():
    v = index_length_view(("Hello world",), 1)
    st = v["steps"]
    assert st["L"].tolist() == list(range(2, 65))
    np.testing.assert_allclose(st["step"], 1 / st["L"], rtol=0, atol=1e-15)
    assert st["step"].is_monotonic_decreasing


def test_index_length_slots_positions_and_errors():
    v = index_length_view(("", "a b c", "", "a b c d e f"), 3)
    assert v["summary"]["slot"].tolist() == [2, 4]
    assert v["summary"]["sentence"].tolist() == ["sentence 2 (L = 3)", "sentence 4 (L = 6)"]  # short by rule, no "…"
    assert v["summary"]["text"].tolist() == ["a b c", "a b c d e f"]
    assert v["max_change"] == pytest.approx(3 / 3 - 3 / 6)
    one = index_length_view(("word",), 1)
    assert one["summary"]["step"].isna().all() and one["max_change"] is None
    # a token past the end of one sentence: that sentence is named, every other number stays
    past = index_length_view(("a b c", "a b c d"), 4)
    assert past["missing"] == ["sentence 1 (L = 3)"] and past["max_change"] is None
    assert past["at_position"]["L"].tolist() == [4] and len(past["values"]) == 7
    with pytest.raises(ValueError, match="position must be"):
        index_length_view(("a b c",), 0)  # t counts from 1
    with pytest.raises(ValueError, match="type at least one sentence"):
        index_length_view(("", " "), 1)
    with pytest.raises(ValueError, match="at most 4 sentences"):
        index_length_view(("a",) * 5, 1)
    with pytest.raises(ValueError, match="sentence 2: text must have at most 64 tokens"):
        index_length_view(("a", "b " * 70), 1)


@pytest.mark.parametrize("t", [1, 2, 5, 64])
def test_index_length_quiz_and_takeaway_at_every_position(t):
    long = " ".join(f"w{i}" for i in range(64))
    v = index_length_view(("Hello world", long), t)
    q = v["quiz"]
    assert q["answer"] == pytest.approx(t / 100) and q["tolerance"] == 5e-4
    assert str(t) in q["question"] and f"{t}/100" in q["explanation"]
    wrong = " ".join(v["takeaway"]["wrong"])
    assert "1/2 = 0.5" in wrong and "1/64" in wrong  # the step is set by L: not continuous


# ----------------------------------------------------------------------------- single_sine_view
def test_single_sine_seed_identity_and_first_return():
    v = single_sine_view(1.0, 64, 0.01)
    ident = v["identity"]
    # the article: "if position 5 gets the value sin(5), then position 5 + 2 pi gets exactly the same number"
    assert ident["t1"] == 5 + 2 * math.pi
    assert round(ident["v0"], 8) == round(ident["v1"], 8) == -0.95892427
    assert ident["v0"] == math.sin(5) and ident["diff"] < 1e-15
    # the issue: first return of omega = 1 within 0.01 of position 0 is 22, sin 22 = -0.00885
    fr = v["first_return"]
    assert fr["position"] == 22 and round(fr["value"], 5) == -0.00885
    assert all(abs(math.sin(p)) > 0.01 for p in range(1, 22))  # oracle: nothing earlier
    assert v["period"] == 2 * math.pi


def test_single_sine_pairs_match_a_brute_force_oracle():
    omega, n, eps = 1.0, 64, 0.01
    v = single_sine_view(omega, n, eps)
    oracle = {(i, j) for i, j in itertools.combinations(range(n), 2) if abs(math.sin(omega * i) - math.sin(omega * j)) <= eps}
    assert set(zip(v["pairs"]["i"], v["pairs"]["j"])) == oracle
    assert v["n_pairs"] == len(oracle) == len(v["pairs"]) == 29
    assert v["pairs"]["distance"].is_monotonic_increasing and (v["pairs"]["distance"] <= eps).all()
    best = min(oracle, key=lambda p: abs(math.sin(p[0]) - math.sin(p[1])))
    assert (v["closest"]["i"], v["closest"]["j"]) == best == (11, 55)
    assert v["closest"]["distance"] == pytest.approx(abs(math.sin(11) - math.sin(55)), abs=1e-15)
    pts = v["points"]
    np.testing.assert_allclose(pts["value"], [math.sin(t) for t in range(n)], atol=1e-15)
    partners = {t: sum(t in p for p in oracle) for t in range(n)}
    assert pts["partners"].tolist() == [partners[t] for t in range(n)]
    assert (pts["status"] == "within ε of another position").sum() == sum(1 for c in partners.values() if c)
    np.testing.assert_allclose(v["curve"]["value"], np.sin(v["curve"]["x"]), atol=1e-15)
    assert len(v["curve"]) == 63 * 8 + 1


def test_single_sine_follows_omega_and_rejects_bad_input():
    v = single_sine_view(0.5, 32, 0.05)
    assert v["identity"]["t1"] == pytest.approx(5 + 4 * math.pi)
    assert v["identity"]["v1"] == pytest.approx(math.sin(2.5), abs=1e-14)
    with pytest.raises(ValueError, match="omega"):
        single_sine_view(0.0, 32, 0.01)
    with pytest.raises(ValueError, match="n must be an integer"):
        single_sine_view(1.0, 1, 0.01)


# ----------------------------------------------------------------------------- circle_view
def chord(omega: float, t: int, s: int) -> float:
    """Distance between two points of the unit circle at angles omega t and omega s."""
    return 2 * abs(math.sin(omega * (t - s) / 2))


def test_circle_points_and_first_turn():
    v = circle_view(1.0, 64, 1000, 0.1)
    pts = v["points"]
    np.testing.assert_allclose(pts["x"], [math.cos(t) for t in range(64)], atol=1e-15)
    np.testing.assert_allclose(pts["y"], [math.sin(t) for t in range(64)], atol=1e-15)
    assert pts["turn"].tolist() == [math.floor(t / (2 * math.pi)) for t in range(64)]
    assert v["per_turn"] == 7  # positions 0..6 have t < 2 pi
    tc = v["turn_closest"]
    assert (tc["i"], tc["j"]) == (0, 6) and tc["distance"] == pytest.approx(chord(1.0, 0, 6), abs=1e-12)
    # within the first turn every pair is a distinct point
    assert min(chord(1.0, t, s) for t, s in itertools.combinations(range(7), 2)) == pytest.approx(tc["distance"], abs=1e-12)


def test_circle_closest_pairs_match_the_chord_formula():
    v = circle_view(1.0, 64, 1000, 0.1)
    oracle = min(chord(1.0, t, s) for t, s in itertools.combinations(range(64), 2))
    assert v["closest"]["distance"] == pytest.approx(oracle, abs=1e-12)
    assert chord(1.0, v["closest"]["i"], v["closest"]["j"]) == pytest.approx(oracle, abs=1e-12)
    within = sum(1 for t, s in itertools.combinations(range(64), 2) if chord(1.0, t, s) <= 0.1)
    assert v["closest"]["pairs_within_eps"] == within == 20
    sine = sum(1 for t, s in itertools.combinations(range(64), 2) if abs(math.sin(t) - math.sin(s)) <= 0.1)
    assert v["sine_pairs"] == sine == 180  # the article: with sine alone "collisions are common"
    curve = v["curve"]
    assert curve["n"].iloc[0] == 2 and curve["n"].iloc[-1] == 1000 and len(curve) <= 60
    assert curve["distance"].is_monotonic_decreasing  # a longer context can only bring a closer pair
    for n_, d_ in zip(curve["n"][:12], curve["distance"][:12]):
        assert d_ == pytest.approx(min(chord(1.0, t, s) for t, s in itertools.combinations(range(int(n_)), 2)), abs=1e-12)
    assert curve.set_index("n")["distance"][2] == pytest.approx(2 * math.sin(0.5))


def test_circle_first_return_and_labels():
    v = circle_view(1.0, 64, 100, 0.1)
    fr = v["first_return"]
    oracle = next(p for p in range(1, 1000) if chord(1.0, p, 0) <= 0.1)
    assert fr["position"] == oracle == 44 and fr["distance"] == pytest.approx(chord(1.0, 44, 0), abs=1e-12)
    assert fr["turns"] == pytest.approx(44 / (2 * math.pi))
    labelled = v["labelled"]
    assert set(range(7)) <= set(labelled) and {v["closest"]["i"], v["closest"]["j"]} <= set(labelled)
    lab = v["points"].set_index("t")["label"]
    assert lab[1] == "1" and lab[10] == ""
    i, j = v["closest"]["i"], v["closest"]["j"]
    assert lab[i] == f"{i} & {j}" and lab[j] == ""  # nearly the same point: one label
    slow = circle_view(0.05, 200, 100, 0.1)
    pair = {slow["closest"]["i"], slow["closest"]["j"]}
    assert slow["per_turn"] == 126
    assert set(slow["labelled"]) == set(range(0, 126, 8)) | pair  # 16 strided labels of the first turn + the pair


def test_a_return_to_the_start_is_a_pair_with_position_0_past_where_it_left():
    fr = {"position": 22, "left_at": 3, "distance": 0.01}
    assert returns_to_start(0, 22, fr) and returns_to_start(0, 44, fr)  # the answer, and a bound on it
    assert not returns_to_start(0, 21, fr) and not returns_to_start(5, 22, fr) and not returns_to_start(0, 22, None)
    np.testing.assert_array_equal(returns_to_start(np.array([0, 0, 1]), np.array([2, 30, 30]), fr), [False, True, False])
    assert not returns_to_start(np.array([0]), np.array([30]), None).any()


@pytest.mark.parametrize(("omega", "n", "eps"), [(8.31, 32, 0.01), (1.0, 32, 0.05), (1.0, 64, 0.01), (0.05, 8, 0.001)])
def test_single_sine_names_no_return_to_the_start_before_the_reveal(omega, n, eps):
    """(8.31, 32, 0.01): the closest pair is (0, the answer 31); (1.0, 32, 0.05): (0, 22) is among the 20 closest."""
    v = single_sine_view(omega, n, eps)
    before, after = sine_shown(v, False), sine_shown(v, True)
    back = returns_to_start(v["pairs"]["i"].to_numpy(), v["pairs"]["j"].to_numpy(), v["first_return"])
    assert not returns_to_start(before["pairs"]["i"].to_numpy(), before["pairs"]["j"].to_numpy(), v["first_return"]).any()
    assert before["pairs"].equals(v["pairs"][~back].head(20).reset_index(drop=True))  # the closest of the rest, in order
    assert after["pairs"].equals(v["pairs"].head(20).reset_index(drop=True)) and not after["held"]
    assert after["ring"] == (v["closest"]["i"], v["closest"]["j"])
    assert before["held"] == bool(back[:20].any() or returns_to_start(v["closest"]["i"], v["closest"]["j"], v["first_return"]))
    if before["ring"] is not None:
        assert not returns_to_start(*before["ring"], v["first_return"])
    answer = f"0, {v['first_return']['position']}" if v["first_return"] else None
    assert answer is None or answer not in before["sentence"]
    if omega == 8.31:
        assert before["ring"] is None and before["sentence"].startswith("No dashed link yet") and "(0, 31)" in after["sentence"]


def test_the_circle_names_no_return_to_the_start_before_the_reveal():
    v = circle_view(0.12, 64, 10_000, 0.1)  # the closest pair is (0, 52), the answer: once labelled "0 & 52"
    assert (v["closest"]["i"], v["closest"]["j"]) == (0, v["first_return"]["position"]) == (0, 52)
    before, after = circle_shown(v, False), circle_shown(v, True)
    assert "0 & 52" in set(after["points"]["label"]) and "0 & 52" not in set(before["points"]["label"])
    # 52 is also the first turn's last strided label: "52" printed beside "0" gave the answer away as well
    assert 52 in v["turn_labels"] and before["held"]
    assert before["labelled"] == [p for p in v["turn_labels"] if p != 52] and "52" not in set(before["points"]["label"])
    assert "52" not in set(after["points"]["label"]) and 52 in after["labelled"]  # after the reveal: "0 & 52" on position 0
    assert "wait for the reveal" in before["label_note"] and after["label_note"] == ""
    curve = before["curve"]
    assert curve.loc[curve["i"].isna(), "n"].min() > 52 and not ((curve["i"] == 0) & (curve["j"] >= 52)).fillna(False).any()
    assert curve["i"].notna().sum() > 0  # the lengths before the first return keep their pairs
    assert set(curve.loc[curve["i"].isna(), "pair"]) == {"named once the exercise is revealed"}
    assert (curve.loc[curve["i"].notna(), "pair"] == [f"{i} and {j}" for i, j in curve[curve["i"].notna()][["i", "j"]].values]).all()
    np.testing.assert_array_equal(curve["distance"], v["curve"]["distance"])  # the line itself is unchanged
    assert after["curve"].equals(v["curve"]) and not after["held"]


@pytest.mark.parametrize(("omega", "n", "eps"), [(0.12, 64, 0.1), (0.5, 40, 0.3), (1.0, 32, 0.05), (0.05, 400, 0.2), (2.0, 16, 0.5)])
def test_no_circle_label_falls_on_or_past_the_first_return_before_the_reveal(omega, n, eps):
    """Whatever the setting, until the reveal no position at or past the first return is labelled (bar 0 itself)."""
    v = circle_view(omega, n, 10_000, eps)
    before = circle_shown(v, False)
    if v["first_return"] is not None:
        fr = v["first_return"]["position"]
        assert all(p == 0 or p < fr for p in before["labelled"]), (before["labelled"], fr)
        assert not any(lbl and lbl != "0" and int(lbl.split(" & ")[-1]) >= fr for lbl in before["points"]["label"])


# ----------------------------------------------------------------------------- chart builders
def test_token_heatmap_spec():
    v = attention_view(DOG, MAN, None, 16)
    d = spec(token_heatmap(v["heat_a"], vmax=v["vmax"], title="A", legend_title="score"))
    assert marks(d) == ["rect", "rect"] and rows(d) == 2 + 36  # the two pins, then the cells
    pins, cells = d["layer"]
    assert pins["mark"]["opacity"] == 0 and "tooltip" not in pins["encoding"]
    enc = cells["encoding"]
    assert enc["x"]["sort"] == v["labels_a"] and enc["y"]["sort"] == v["labels_a"]
    assert enc["x"]["title"] and enc["y"]["title"] and enc["tooltip"]
    assert enc["color"] == pins["encoding"]["color"]  # one colour scale for both layers
    assert enc["color"]["field"] == COLOR_FIELD and enc["color"]["scale"] == {"scheme": "redblue"}  # no literal domain
    long = attention_view(" ".join(f"w{i}" for i in range(64)), "w0", None, 4)
    d = spec(token_heatmap(long["heat_a"], vmax=long["vmax"], title="A", legend_title="score"))
    assert rows(d) == 2 + 64 * 64 <= MAX_MARKS and d["height"] == 512
    assert d["layer"][1]["encoding"]["x"]["axis"]["labelAngle"] == -90


def test_token_heatmap_range_travels_with_the_data():
    """The colour range [-vmax, vmax] is in the data (two invisible pins; the cells' colour clipped to it), so a new
    width d -- a new vmax -- sends the same spec: the browser keeps the chart's view and swaps its data."""
    views = [attention_view(DOG, MAN, "rope", d) for d in (8, 32)]
    assert views[0]["vmax"] != views[1]["vmax"]
    specs = []
    for v in views:
        d = spec(token_heatmap(v["heat_a"], vmax=v["vmax"], title="A", legend_title="score"))
        (pins, cells), datasets = d["layer"], d.pop("datasets")
        specs.append(d)
        pin_rows, cell_rows = datasets[pins["data"]["name"]], datasets[cells["data"]["name"]]
        assert [r[COLOR_FIELD] for r in pin_rows] == [-v["vmax"], v["vmax"]]
        assert {(r["query"], r["key"]) for r in pin_rows} == {(v["labels_a"][0], v["labels_a"][0])}  # under the first cell
        assert all(-v["vmax"] <= r[COLOR_FIELD] <= v["vmax"] for r in cell_rows)
        assert [r[COLOR_FIELD] for r in cell_rows] == [r["score"] for r in cell_rows]  # nothing beyond the range here
    for d in specs:
        for layer in d["layer"]:
            layer.pop("data")
    assert specs[0] == specs[1]
    diff = attention_view(DOG, MAN, "rope", 8)["diff"].assign(diff=lambda f: f["diff"] * 1e3)
    d = spec(token_heatmap(diff, value="diff", vmax=2.0, title="B - A", legend_title="difference"))
    colours = [r[COLOR_FIELD] for r in d["datasets"][d["layer"][1]["data"]["name"]]]
    assert max(colours) == 2.0 and min(colours) == -2.0  # a value beyond the range takes the end colour


def test_index_charts_spec():
    v = index_length_view(("Hello world", "Cat sat on table"), 1)
    d = spec(index_values_chart(v["values"]))
    assert marks(d) == ["line", "text"] and rows(d) == 6
    assert d["layer"][0]["encoding"]["color"]["scale"]["range"] == ["#0072B2", "#E69F00"]
    big = index_length_view(tuple(" ".join(["a"] * 60) for _ in range(4)), 1)
    assert marks(spec(index_values_chart(big["values"]))) == ["line"]  # no token text for 240 points
    d = spec(step_chart(v["steps"], v["summary"]))
    assert marks(d) == ["line", "point"] and rows(d) == 63 + 2
    assert d["layer"][0]["encoding"]["y"]["title"] == "step between neighbours 1 / L"


def test_sine_chart_spec():
    v = single_sine_view(1.0, 512, 0.1)
    shown = v["pairs"].head(20)
    d = spec(sine_chart(v["points"], v["curve"], shown, closest=(v["closest"]["i"], v["closest"]["j"])))
    assert marks(d) == ["line", "rule", "rule", "point", "point"]
    assert all(len(ds) <= MAX_MARKS for ds in d["datasets"].values())
    assert sum(len(ds) for ds in d["datasets"].values()) < 8000
    stems = d["layer"][1]["encoding"]
    assert stems["y2"] == {"datum": 0} and stems["color"]["scale"]["range"] == ["#D55E00", "#0072B2"]
    assert d["layer"][3]["encoding"]["tooltip"]


def test_circle_charts_spec():
    v = circle_view(1.0, 2048, 100_000, 0.1)
    d = spec(circle_chart(v["points"], v["outline"], size=340))
    assert marks(d) == ["line", "circle", "text", "text", "text"]
    assert [lay["mark"]["align"] for lay in d["layer"][2:]] == ["left", "right", "center"]
    assert d["width"] == d["height"] == 340 and d["autosize"] == {"type": "pad"}
    assert d["layer"][1]["encoding"]["color"]["scale"]["scheme"] == "viridis"
    assert rows(d) < 3000
    d = spec(closest_curve_chart(v["curve"], n=2048))
    assert marks(d) == ["line", "rule"]
    assert d["layer"][0]["encoding"]["x"]["scale"] == {"type": "log"}


@pytest.mark.parametrize(("omega", "n", "turns"), [(0.12, 64, [0, 1]), (1.0, 32, [0, 1, 2, 3, 4]), (0.05, 400, [0, 1, 2, 3])])
def test_the_turn_legend_prints_whole_turns_once_each(omega, n, turns):
    """Vega's own gradient ticks put 0.5 between 0 and 1, and the legend's whole-number format printed it as "1": the
    legend read 0, 1, 1.  What the SVG export prints is each whole turn once."""
    from posenc.io.export import chart_svg
    from tests.scenegraph import shown_texts

    v = circle_view(omega, n, 4096, 0.1)
    svg = chart_svg(circle_chart(v["points"], v["outline"], size=280)).decode()
    assert sorted(int(t) for t in shown_texts(svg, "role-legend-label")) == turns


def test_raw_index_template_still_works():
    v = raw_index_growth(1_000_000, 64)
    assert v["pe_max"] == 999_999
    assert marks(spec(growth_chart(v["frame"], context=v["context"]))) == ["line", "rule"]
