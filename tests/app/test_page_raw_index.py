"""Page 2 (attempt 1, raw index): its numbers, its chart, a control, and bad URLs."""

import math

from apphelpers import assert_clean, chart_frame, charts, metrics, open_page, reveal, text_of

PAGE = "pages/raw_index.py"


def test_defaults_show_the_seed_million():
    at = open_page(PAGE)
    assert_clean(at)
    m = metrics(at)
    # the article: "If your context length is one million ... values like 10^6 in the residual stream"
    assert m["max |value| at position 999,999"] == "999,999"
    # ratio = t * sqrt(d) / (0.02 * sqrt(d)) = 50 t: the exercise's answer, so "?" until revealed
    assert m["ratio ‖PE‖ / ‖e‖"] == "?" and "Answer:" not in text_of(at)
    # the issue: the answer could be worked out from "8e+06" (‖PE‖) and "0.16" (‖e‖): both wait for the reveal too
    assert m["‖PE‖ there"] == "?" and m["token embedding ‖e‖ at init"] == "?"
    assert "8e+06" not in text_of(at) and "0.16" not in text_of(at)
    m = metrics(reveal(at, "raw_ratio"))
    assert m["ratio ‖PE‖ / ‖e‖"] == f"{50 * 999_999:,.4g}"
    assert m["‖PE‖ there"] == f"{999_999 * 8:,.4g}" == "8e+06" and m["token embedding ‖e‖ at init"] == "0.16"
    assert "‖PE‖ = 7,999,992" in text_of(at)  # the wrap-up's claim that states both norms shows with the answer
    assert "**Answer: 5e+07.**" in text_of(at)
    assert "raw_index_growth" in charts(at)
    df = chart_frame(at, "raw_index_growth")
    raw = df[df["series"].str.startswith("raw index")]
    assert math.isclose(raw["norm"].max(), 1e6 * math.sqrt(64), rel_tol=1e-6)


def test_control_changes_the_numbers():
    at = open_page(PAGE)
    at.slider(key="d").set_value(16).run()
    assert_clean(at)
    assert metrics(reveal(at, "raw_ratio"))["token embedding ‖e‖ at init"] == f"{0.02 * 4:.4g}"
    at.select_slider(key="context").set_value(2048).run()
    assert metrics(at)["max |value| at position 2,047"] == "2,047"


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"d": "7", "context": "2,048"})
    assert_clean(at)
    assert metrics(reveal(at, "raw_ratio"))["‖PE‖ there"] == f"{2047 * math.sqrt(7):,.4g}"
    assert not at.warning
    bad = open_page(PAGE, {"d": "5000", "context": "nan"})
    assert_clean(bad)
    notes = [w.value for w in bad.warning]
    assert any("`d`" in n and "1 to 1024" in n for n in notes), notes
    assert any("`context`" in n for n in notes), notes
    assert metrics(reveal(bad, "raw_ratio"))["token embedding ‖e‖ at init"] == f"{0.02 * 8:.4g}"  # default d = 64


def test_the_exercise_at_context_128_is_hidden_until_revealed_and_reset_by_a_control():
    """The issue: at context 128 the metric right above the question read "6,350", the answer."""
    at = open_page(PAGE, {"context": "128"})
    assert "6,350" not in str(metrics(at)) and "6,350" not in text_of(at)
    reveal(at, "raw_ratio")
    assert metrics(at)["ratio ‖PE‖ / ‖e‖"] == "6,350" and "**Answer: 6350.**" in text_of(at)
    at.slider(key="d").set_value(32).run()
    assert at.toggle(key="ex_raw_ratio_reveal").value is False
    assert metrics(at)["ratio ‖PE‖ / ‖e‖"] == "?" and "Answer:" not in text_of(at)
