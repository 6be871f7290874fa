"""Every chart on every page carries its export menu: PNG, SVG and CSV (plus .npy arrays)."""

import pytest
from apphelpers import charts, export_keys, shown_page

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
