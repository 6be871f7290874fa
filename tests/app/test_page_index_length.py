"""Page 3 (attempt 2, index / length): the article's 1/2 and 1/4, the shrinking step, one indexing
convention (t = 1 ... L), a position past a sentence's end, controls, URLs, payload."""

from apphelpers import (
    assert_clean,
    chart,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    reveal,
    tables,
    text_of,
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
    assert m["change of token 1 across the lengths"] == f"{dep['max_change']:.4g}"
    assert {"index_values", "index_steps"} <= set(charts(at))
    values = chart_frame(at, "index_values")
    assert values["token"].tolist() == ["hello", "world", "cat", "sat", "on", "table"]
    assert values["t"].tolist() == [1, 2, 1, 2, 3, 4]  # counted from 1, as the formula and the article
    assert values["value"].tolist() == [1 / 2, 2 / 2, 1 / 4, 2 / 4, 3 / 4, 4 / 4]
    spec = chart(at, "index_values")["spec"]
    assert "token t (1 = the first token)" in str(spec) and "t / L" in str(spec) and "0-based" not in str(spec)
    steps = chart(at, "index_steps")["data"]
    curve = next(d for d in steps.values() if list(d.columns) == ["L", "step"])
    assert curve["L"].tolist() == list(range(2, 65))
    assert all(abs(s - 1 / L) < 1e-15 for L, s in zip(curve["L"], curve["step"]))  # step = 1/L
    table = tables(at)["index_length_sentences"]
    assert table["step 1/L"].tolist() == [0.5, 0.25] and table["words"].tolist() == ["Hello world", "Cat sat on table"]
    assert "t = 1, \\ldots, L" in at.latex[0].value
    assert payload_bytes(at) <= 1_000_000


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.text_input(key="s3").input("one two three four five six seven eight").run()
    assert_clean(at)
    m = metrics(at)
    assert m["first token of sentence 3 (L = 8)"] == "0.125"
    assert m["change of token 1 across the lengths"] == "0.375"  # 1/2 - 1/8
    at.number_input(key="p").set_value(2).run()
    assert_clean(at)
    assert metrics(at)["change of token 2 across the lengths"] == f"{2 / 2 - 2 / 8:.4g}"


def test_a_token_past_a_sentence_keeps_every_chart_and_says_so_for_that_sentence_only():
    at = open_page(PAGE)
    at.number_input(key="p").set_value(3).run()  # "Hello world" has 2 tokens
    assert_clean(at)
    assert {"index_values", "index_steps"} <= set(charts(at)) and len(chart_frame(at, "index_values")) == 6  # every sentence still drawn
    notes = text_of(at)
    assert "sentence 1 (L = 2) has fewer than 3 tokens" in notes and "sentence 2 (L = 4) has fewer" not in notes
    assert metrics(at)["change of token 3 across the lengths"] == "—"  # only one sentence has a token 3
    table = tables(at)["index_length_sentences"]
    assert table["chosen token t = 3: t/L"].isna().tolist() == [True, False]
    at.text_input(key="s3").input("a b c d e f").run()
    assert metrics(at)["change of token 3 across the lengths"] == f"{3 / 4 - 3 / 6:.4g}"


def test_the_exercise_asks_about_a_prompt_no_sentence_can_be():
    at = open_page(PAGE, {"p": "5", "s1": "a b c d e f g"})
    q = text_of(at)
    assert "In a prompt of 100 tokens, what value does token t = 5 get?" in q
    assert "0.05" not in q and "Answer:" not in q
    assert "**Answer: 0.05.**" in text_of(reveal(at, "index_t"))


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"s1": "a b c", "s2": "", "s4": "a b c d e f", "p": "3"})
    assert_clean(at)
    assert not at.warning
    m = metrics(at)
    assert m["first token of sentence 4 (L = 6)"] == f"{1 / 6:.4g}"
    assert m["change of token 3 across the lengths"] == "0.5"  # 3/3 - 3/6
    bad = open_page(PAGE, {"p": "99", "s1": "x" * 400})
    assert not bad.exception and not bad.error
    notes = [w.value for w in bad.warning]
    assert any("`p`" in n and "1 to 64" in n for n in notes), notes
    assert any("`s1`" in n for n in notes), notes
    # Streamlit cuts an over-long text value to max_chars (300 here, one token) and the note says so
    assert bad.text_input(key="s1").value == "x" * 300
    assert metrics(bad)["first token of sentence 1 (L = 1)"] == "1"
    assert metrics(bad)["change of token 1 across the lengths"] == "0.75"  # p fell back to 1: 1/1 - 1/4


def test_payload_at_the_largest_settings():
    long = " ".join(f"t{i}" for i in range(64))  # 64 tokens in every box
    at = open_page(PAGE, {"s1": long, "s2": long, "s3": long, "s4": long, "p": "64"})
    assert_clean(at)
    assert not at.warning  # every value of the link was taken
    assert metrics(at)["change of token 64 across the lengths"] == "0"
    assert payload_bytes(at) <= 2_000_000


def test_the_summary_is_a_static_table_that_prints_typed_words_as_text():
    """frame.table: the sentences table is one Markdown table (drawn with the rest of a rerun), so typed words are
    escaped and print as themselves -- no link, no emphasis, no cell boundary -- and numbers keep their format."""
    from mdcheck import rendered_links

    at = open_page(PAGE, {"s3": "+plus *bold* [x](http://evil.example)", "p": "3"})
    assert_clean(at)
    assert not at.dataframe and not at.table and list(tables(at)) == ["index_length_sentences"]
    source = tables(at, source=True)["index_length_sentences"]
    row = source.splitlines()[2 + 2]  # header, delimiter, then the third sentence
    assert "| +plus \\*bold\\* \\[x\\]" in row and not rendered_links(source)
    shown = tables(at)["index_length_sentences"]
    assert shown["words"].tolist()[2].startswith("+plus *bold* [x]")  # as typed
    assert shown["token 1: 1/L"].tolist()[:2] == [0.5, 0.25] and "| 0.5 |" in source  # format .4g
    assert shown["chosen token t = 3: t/L"].isna().tolist()[0] and "| — |" in source.splitlines()[2]  # no token 3
