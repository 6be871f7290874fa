"""The landing page: the wishlist marks are the measurements, and every page is linked."""

from apphelpers import assert_clean, open_page

import posenc
from posenc.ui.pages import PAGES

PAGE = "pages/home.py"


def test_marks_are_derived_from_measurements():
    at = open_page(PAGE)
    assert_clean(at)
    table = at.dataframe[0].value
    for key in ("raw_index", "sinusoidal", "rope", "alibi", "learned_minilm"):
        row = posenc.measure_scheme(key, n=512, d=64, n_heads=8, train_len=512)
        shown = table[table["scheme"] == row["name"]].iloc[0]
        assert (bool(shown["bounded"]), bool(shown["continuous"]), bool(shown["relative"])) == (
            row["bounded"], row["continuous"], row["relative"]), key
    # the article's verdicts, measured: raw index explodes, the sinusoid ticks all three
    raw = table[table["scheme"] == "Raw index"].iloc[0]
    assert not raw["bounded"] and raw["max |value| at 10⁶"] == 1e6
    sin = table[table["scheme"] == "Sinusoidal"].iloc[0]
    assert sin["bounded"] and sin["continuous"] and sin["relative"]
    caption = " ".join(c.value for c in at.caption)
    assert "Sinusoidal" in caption and "RoPE" in caption and "Raw index" not in caption.split("here:")[1]


def test_every_page_is_linked():
    at = open_page(PAGE)
    linked = {link.proto.page for link in at.get("page_link")}  # the url path of each target
    assert linked == {p.url_path for p in PAGES if p.path != PAGE}
