"""The landing page: the wishlist marks are the measurements of Compare schemes, and every page is linked."""

from apphelpers import assert_clean, chart_frame, open_page, tables, text_of

import posenc
from posenc.ui.frame import view_link
from posenc.ui.pages import PAGES, address
from posenc.views.home import MARKS, STORY

PAGE = "pages/home.py"


def test_marks_are_the_compare_rules():
    at = open_page(PAGE)
    assert_clean(at)
    marks = chart_frame(at, "home_wishlist")  # one row per (scheme, property)
    assert len(marks) == len(STORY) * len(MARKS)
    table = marks.pivot(index="scheme", columns="property", values="ok")
    for key in STORY:
        row = posenc.measure_scheme(key, n=512, d=64, n_heads=8, train_len=512)
        assert tuple(bool(table.loc[row["name"], m]) for m in MARKS) == tuple(row[m] for m in MARKS), key
    # the story's verdicts, measured: the raw index explodes, index / length is a step of 1/L, one sin+cos
    # pair collides across turns, the sinusoid ticks every box
    assert not table.loc["Raw index", "bounded"]
    assert not table.loc["Index / length", "continuous"]
    assert not table.loc["One sin+cos pair", "unique"] and table.loc["One sin+cos pair", "relative"]
    assert table.loc["Sinusoidal"].all() and table.loc["RoPE"].all()
    # the number behind each mark is in the tooltip (no raw columns on the page, no "None")
    detail = marks.set_index(["scheme", "property"])["detail"]
    assert "max |value| between positions 10⁵ and 10⁶: 1e+06" in detail[("Raw index", "bounded")]
    assert "slope changes with the prompt length" in detail[("Index / length", "continuous")]
    assert "no value past its last row" in detail[("Learned (MiniLM, trained)", "bounded")]
    assert not at.dataframe and not at.table and not tables(at)
    caption = text_of(at)
    assert "Ticking all four: Sinusoidal, RoPE." in caption


def test_every_page_is_linked_and_the_link_reopens_the_landing_page():
    at = open_page(PAGE)
    linked = {link.proto.page for link in at.get("page_link")}  # the url path of each target
    assert linked == {p.url_path for p in PAGES if p.path != PAGE}
    assert view_link(PAGE) == "/"  # served at "/": "/home" would open "Page not found"
    assert view_link(PAGE, "http://example.org:8501/home?x=1") == "http://example.org:8501/"
    # what the benchmark opens too (bench.interact, bench.browser): until 2026-12-06 it timed "Start here" at /home,
    # under Streamlit's "Page not found" dialog
    assert [address(p) for p in PAGES] == ["", *(p.url_path for p in PAGES[1:])] and PAGES[0].path == PAGE
