"""Page 1 (attention needs order): the article's dog/man proof, a scheme that breaks it, bad input, URLs, payload."""

import numpy as np
from apphelpers import (
    assert_clean,
    chart,
    charts,
    metrics,
    open_page,
    payload_bytes,
    reveal,
    tables,
    text_of,
)

import posenc

PAGE = "pages/attention_order.py"
DOG = "The dog bit the man."  # the article "Positional Embeddings: Why Attention Needs Order": "The dog bit the man. / The man bit the dog."
MAN = "The man bit the dog."
NO = " (no positions)"
WITH = " (with positions)"
# the keys of the six heatmaps: sentence A, sentence B and their difference, without positions ("bag") and with them
MAPS = ("bag_a", "bag_b", "bag_diff", "pos_a", "pos_b", "pos_diff")


def fmt(x: float) -> str:
    return f"{x:.3g}"


def cells(at, key: str):
    """The cells of token heatmap ``key``: the data of its second layer (the first holds the two invisible pins
    of the colour range, posenc.charts.story.token_heatmap)."""
    c = chart(at, key)
    pins, drawn = (layer["data"]["name"] for layer in c["spec"]["layer"])
    assert len(c["data"][pins]) == 2
    return c["data"][drawn]


def test_defaults_show_the_seed_proof():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    # permutation equivariance, exact: posenc's attention sums with math.fsum
    assert m["max |pooled A − pooled B|" + NO] == "0.0 (exact)"
    assert m["max |out B − P·out A|" + NO] == "0.0 (exact)"
    assert m["max |scores B − P·scores A·Pᵀ|" + NO] == "0.0 (exact)"
    table = tables(at)["attention_permutation"]
    assert table["token"].tolist() == ["the", "dog", "bit", "the", "man", "."]
    assert table["position in B"].tolist() == [0, 4, 2, 3, 1, 5]  # dog <-> man
    # five heatmaps: A, B, difference without positions; A, B with the sinusoid (their difference answers the
    # exercise, so it waits for the reveal)
    assert set(MAPS) - {"pos_diff"} <= set(charts(at)) and "pos_diff" not in charts(at)
    r0 = posenc.permutation_equivariance(DOG, MAN, d_model=16)
    a = cells(at, "bag_a")
    assert {"query", "key", "score"} <= set(a.columns) and len(a) == 36
    np.testing.assert_allclose(a["score"].to_numpy().reshape(6, 6), r0["logits_a"], rtol=1e-6)  # float32 on the wire
    assert a["query"].iloc[6] == "1 dog" and cells(at, "bag_b")["query"].iloc[6] == "1 man"
    assert (cells(at, "bag_diff")["diff"] == 0).all()
    # with the default scheme (the sinusoid) the sentences come apart -- the exercise asks whether, so the
    # numbers that answer it wait for the reveal
    r = posenc.permutation_equivariance(DOG, MAN, scheme="sinusoidal", d_model=16)
    assert r["max_diff_pooled"] > 0
    assert {m[k + WITH] for k in ("max |pooled A − pooled B|", "max |out B − P·out A|", "max |scores B − P·scores A·Pᵀ|")} == {"?"}
    assert fmt(r["max_diff_pooled"]) not in text_of(at)
    m = metrics(reveal(at, "pooled"))
    assert "**Answer: no, it is positive.**" in text_of(at)
    assert m["max |pooled A − pooled B|" + WITH] == fmt(r["max_diff_pooled"])
    assert m["max |out B − P·out A|" + WITH] == fmt(r["max_diff_permuted"])
    assert m["max |scores B − P·scores A·Pᵀ|" + WITH] == fmt(r["max_diff_logits"])
    assert np.nanmax(np.abs(cells(at, "pos_diff")["diff"])) > 0
    assert at.expander  # show the code
    assert payload_bytes(at) <= 1_000_000


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.selectbox(key="scheme").set_value("nope").run()
    assert_clean(at)
    m = metrics(reveal(at, "pooled"))
    r = posenc.permutation_equivariance(DOG, MAN, scheme="nope", d_model=16)
    assert m["max |pooled A − pooled B|" + WITH] == fmt(r["max_diff_pooled"])
    assert m["max |scores B − P·scores A·Pᵀ|" + WITH] == "∞ (a mask moved)"
    assert any("causal mask" in i.value for i in at.info)  # NoPE is the control
    assert cells(at, "pos_a")["score"].isna().sum() == 15  # masked future cells
    at.select_slider(key="d").set_value(32).run()
    assert metrics(at)["max |pooled A − pooled B|" + WITH] == "?"  # a control moved: the reveal is off again
    r32 = posenc.permutation_equivariance(DOG, MAN, scheme="nope", d_model=32)
    assert metrics(reveal(at, "pooled"))["max |pooled A − pooled B|" + WITH] == fmt(r32["max_diff_pooled"]) != fmt(r["max_diff_pooled"])
    assert metrics(at)["max |pooled A − pooled B|" + NO] == "0.0 (exact)"


def test_different_bags_are_named_and_still_drawn():
    at = open_page(PAGE)
    at.text_input(key="b").input("A cat bit the dog").run()
    assert not at.exception and not at.error
    notes = [w.value for w in at.warning]
    assert any("not the same bag of tokens" in n and "a, cat" in n for n in notes), notes
    drawn = set(charts(at))
    assert {"bag_a", "bag_b", "pos_a", "pos_b"} <= drawn  # both matrices, with and without positions
    assert not {"bag_diff", "pos_diff"} & drawn  # no difference maps
    assert metrics(at)["max |out B − P·out A|" + NO] == "n/a"
    assert len(cells(at, "bag_b")) == 25


def test_too_long_input_is_a_message_not_a_crash():
    at = open_page(PAGE)
    at.text_input(key="a").input(" ".join(["word"] * 70)).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["sentence A: text must have at most 64 tokens, got 70"]
    assert not set(MAPS) & set(charts(at)) and at.expander  # no heatmap; the rest of the page (show the code) still renders


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"scheme": "ALiBi", "d": "8", "a": "b a c", "b": "c b a"})
    assert_clean(at)
    assert not at.warning
    r = posenc.permutation_equivariance("b a c", "c b a", scheme="alibi", d_model=8)
    assert metrics(reveal(at, "pooled"))["max |pooled A − pooled B|" + WITH] == fmt(r["max_diff_pooled"])
    bad = open_page(PAGE, {"scheme": "bogus", "d": "7", "a": "x" * 500})
    assert not bad.exception and not bad.error
    notes = [w.value for w in bad.warning]
    assert any("`scheme`" in n for n in notes), notes
    assert any("`d`" in n and "one of 4, 8, 16, 32, 64" in n for n in notes), notes
    assert any("`a`" in n and "at most 400 characters" in n for n in notes), notes
    assert "Sinusoidal enters at the input embedding" in text_of(bad)  # fell back to the default scheme


def test_payload_at_the_largest_settings():
    words = [f"w{i:03d}x" for i in range(64)]  # 64 distinct 5-character tokens: the longest sentence the box takes
    at = open_page(PAGE, {"a": " ".join(words), "b": " ".join(reversed(words)), "d": "64"})
    assert_clean(at)
    assert not at.warning  # every value of the link was taken
    assert metrics(at)["max |pooled A − pooled B|" + NO] == "0.0 (exact)"
    assert all(c["rows"] <= 2 + 64 * 64 for c in charts(at).values())
    assert payload_bytes(at) <= 2_000_000
