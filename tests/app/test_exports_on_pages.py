"""Every chart on every page carries its export menu: PNG, SVG and CSV (plus .npy arrays)."""

import altair as alt
import pytest
from apphelpers import charts, export_keys, exported, shown_page

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_every_chart_has_png_svg_and_csv(info):
    at = shown_page(info.path)
    n_charts = len(at.get("vega_lite_chart"))
    served = export_keys(at)  # {chart key: the menu under it} (one menu under a grid of panels: frame.chart_grid)
    assert len(served) == n_charts
    assert served == {key: c["export"] for key, c in charts(at).items()}  # the menu under each chart is its own
    labels = [b.label for b in at.get("download_button")]
    for kind in ("PNG (for slides)", "SVG (vector)", "CSV (chart data)"):
        assert labels.count(kind) == len(set(served.values())), (info.path, kind, labels)
    if info.path != "pages/home.py":
        assert n_charts >= 1
    # every PNG and SVG says what it shows: the page's own title for it, or the page's title and its link's settings
    bound = at.session_state["_posenc_run"]["bound"]
    for key in served.values():
        with alt.data_transformers.disable_max_rows():  # as posenc.io.export does
            title = exported(at, key)[0]().to_dict().get("title") or {}
        assert title.get("text"), (info.path, key)
        if title["text"] == f"posenc · {info.title}" and bound:
            assert title["subtitle"][0].startswith("settings (as in the page's link): "), (info.path, key, title)
            assert all(len(line) <= 100 for line in title["subtitle"]), title


def test_a_settings_line_names_every_value_or_says_what_it_left_out():
    from posenc.ui.frame import _link_value

    assert _link_value(["64"]) == "64" and _link_value([]) == ""
    assert _link_value(["x" * 50]) == "x" * 39 + "… (50 characters)"
    many = ["Raw index", "Sinusoidal", "Learned table", "T5 buckets", "ALiBi", "RoPE", "NoPE", "FIRE"]
    assert _link_value(many) == "Raw index,Sinusoidal,Learned table,T5 buckets,ALiBi,RoPE and 2 more"
    assert _link_value(["y" * 70, "z"]) == "y" * 70 + " and 1 more"  # the first value is always shown


def test_an_export_title_from_outside_text_is_one_visible_line():
    """A typed text, a link value or an uploaded name reaches an export's title: its control and bidi characters show as
    escapes (``md.one_line``), so a right-to-left override cannot turn the rest of the line round."""
    from posenc.ui.frame import _titled

    chart = alt.Chart().mark_point()
    title = _titled(lambda: chart, ("posenc · \u202eRoPE", "a\nb", "c\u202ed"))().to_dict()["title"]
    assert title["text"] == "posenc · \\u202eRoPE" and title["subtitle"] == ["a\\x0ab", "c\\u202ed"]
    assert _titled(lambda: chart, ())() is chart  # no title given: the chart as it is

