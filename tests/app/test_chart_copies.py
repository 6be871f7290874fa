"""posenc.charts.copies: every chart of the pages with the most varied charts (layers with in-chart parameters, images,
concatenations, templates) has the same spec and data built with posenc's copies and with Altair's."""

from __future__ import annotations

import pandas as pd
import pytest
import streamlit as st
from apphelpers import charts, open_page

from posenc.charts import copies, memo, template
from posenc.ui import compat


def _page_charts(path: str) -> dict:
    """{chart key: (spec, {dataset: frame})} of ``path`` drawn afresh: no chart or view remembered from before."""
    st.cache_data.clear()
    memo.clear()
    template.clear()
    compat._SPECS.clear()
    compat._BASES.clear()
    return {key: (c["spec"], dict(sorted(c["data"].items()))) for key, c in charts(open_page(path)).items()}


@pytest.mark.parametrize("path", ["pages/lab.py", "pages/relative_bias.py", "pages/similarity.py", "pages/sinusoid.py",
                                  "pages/context_extension.py"])
def test_every_chart_of_a_page_is_the_same_with_altairs_copies(path):
    assert copies.installed()
    fast = _page_charts(path)
    try:
        copies.install(False)
        slow = _page_charts(path)
    finally:
        copies.install(True)
        memo.clear()
        template.clear()
    assert list(fast) == list(slow) and fast
    for key, (spec, data) in fast.items():
        assert spec == slow[key][0], key
        assert list(data) == list(slow[key][1]), key
        for name, frame in data.items():
            pd.testing.assert_frame_equal(frame, slow[key][1][name])
