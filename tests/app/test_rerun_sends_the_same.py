"""A rerun that changes nothing sends every table and chart byte for byte as before.

Streamlit's browser side redraws an element whose message changed; a table whose pandas Styler drew a
random uuid each run (pandas' default) was redrawn, every cell renamed, on every step of any control of
its page (docs/performance.md, section 8).  Each page is run three times with the same controls and every table's and
chart's proto of the last two runs compared (the first run computes its views; the later ones read them from the
cache, whose unpickled frames can be laid out in other Arrow buffers of the same values: learned tables' summary)."""

from __future__ import annotations

import pytest

from posenc.ui.pages import PAGES
from tests.app.apphelpers import assert_clean, open_page

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches


@pytest.mark.parametrize("path", [p.path for p in PAGES])
def test_an_unchanged_rerun_sends_identical_tables_and_charts(path):
    at = open_page(path).run()
    assert_clean(at)
    first = {kind: [el.proto.SerializeToString() for el in at.get(kind)] for kind in ("table", "vega_lite_chart")}
    at.run()
    again = {kind: [el.proto.SerializeToString() for el in at.get(kind)] for kind in ("table", "vega_lite_chart")}
    for kind in first:
        changed = [i for i, (a, b) in enumerate(zip(first[kind], again[kind])) if a != b]
        assert len(first[kind]) == len(again[kind]) and not changed, f"{kind} {changed} of {path} changed on an unchanged rerun"
