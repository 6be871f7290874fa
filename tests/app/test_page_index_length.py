"""Page 3 (attempt 2, index / length): the article's 1/2 and 1/4, the shrinking step, controls, URLs, payload."""

from apphelpers import (
    assert_clean,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
)

import posenc

PAGE = "pages/index_length.py"


def test_defaults_show_the_seed_numbers():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    # the article "Positional Embeddings: Why Attention Needs Order": "Hello world / Cat sat on table ... For length 2: 1/2, 2/2 ...
    # For length 4: 1/4, 2/4, 3/4, 4/4"
    assert m["first token of sentence 1 (L = 2)"] == "0.5"
    assert m["first token of sentence 2 (L = 4)"] == "0.25"
    dep = posenc.length_dependence("index_over_length", 0, [2, 4], 1)
    assert dep["max_change"] == 0.25
    assert m["change of position 0 across the lengths"] == f"{dep['max_change']:.4g}"
    assert len(charts(at)) == 2
    values = chart_frame(at, 0)
    assert values["token"].tolist() == ["hello", "world", "cat", "sat", "on", "table"]
    assert values["value"].tolist() == [1 / 2, 2 / 2, 1 / 4, 2 / 4, 3 / 4, 4 / 4]
    steps = charts(at)[1]["data"]
    curve = next(d for d in steps.values() if list(d.columns) == ["L", "step"])
    assert curve["L"].tolist() == list(range(2, 65))
    assert all(abs(s - 1 / L) < 1e-15 for L, s in zip(curve["L"], curve["step"]))  # step = 1/L
    table = at.dataframe[0].value
    assert table["step 1/L"].tolist() == [0.5, 0.25]
    assert payload_bytes(at) <= 1_000_000


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.text_input(key="s3").input("one two three four five six seven eight").run()
    assert_clean(at)
    m = metrics(at)
    assert m["first token of sentence 3 (L = 8)"] == "0.125"
    assert m["change of position 0 across the lengths"] == "0.375"  # 1/2 - 1/8
    at.number_input(key="p").set_value(1).run()
    assert_clean(at)
    assert metrics(at)["change of position 1 across the lengths"] == f"{2 / 2 - 2 / 8:.4g}"
    # "Hello world" has 2 tokens: the position control offers 0 and 1 only (the shortest sentence bounds it)
    assert at.number_input(key="p").max == 1


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"s1": "a b c", "s2": "", "s4": "a b c d e f", "p": "2"})
    assert_clean(at)
    assert not at.warning
    m = metrics(at)
    assert m["first token of sentence 4 (L = 6)"] == f"{1 / 6:.4g}"
    assert m["change of position 2 across the lengths"] == "0.5"  # 3/3 - 3/6
    bad = open_page(PAGE, {"p": "99", "s1": "x" * 400})
    assert not bad.exception and not bad.error
    notes = [w.value for w in bad.warning]
    assert any("`p`" in n and "only 0" in n for n in notes), notes  # one-token sentence: position 0 is the only one
    assert any("`s1`" in n for n in notes), notes
    # Streamlit cuts an over-long text value to max_chars (300 here, one token) and the note says so
    assert bad.text_input(key="s1").value == "x" * 300
    assert metrics(bad)["first token of sentence 1 (L = 1)"] == "1"
    assert metrics(bad)["change of position 0 across the lengths"] == "0.75"  # p fell back to 0: 1/1 - 1/4


def test_payload_at_the_largest_settings():
    long = " ".join(f"t{i}" for i in range(64))  # 64 tokens in every box
    at = open_page(PAGE, {"s1": long, "s2": long, "s3": long, "s4": long, "p": "63"})
    assert_clean(at)
    assert not at.warning  # every value of the link was taken
    assert metrics(at)["change of position 63 across the lengths"] == "0"
    assert payload_bytes(at) <= 2_000_000
