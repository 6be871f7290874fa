"""A control that changes a chart's numbers, not its shape, sends the same spec with new data.

Streamlit's browser side keeps a chart's Vega view when only its datasets changed (the datasets are named by
place, ``posenc.ui.compat.positional_names``) and builds a new view when the spec text changed -- a view costs
0.05-0.15 s per chart on a 2-core machine (docs/performance.md, section 8).  So no spec may carry a setting that a page's
control moves: a legend entry naming d, a literal domain computed from the data.  Each case opens a page at its
defaults and at one changed setting and compares every chart's spec text."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, shown_page

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches

CASES = [
    ("pages/rope.py", {"d": "130"}), ("pages/rope.py", {"base": "500"}), ("pages/rope.py", {"probe": "ones"}),
    ("pages/rope.py", {"layout": "interleaved"}), ("pages/rope.py", {"pair": "5", "m": "50", "shift": "7"}),
    ("pages/rope.py", {"maxdist": "20000"}),
    ("pages/context_extension.py", {"d": "64"}), ("pages/context_extension.py", {"base": "10000"}),
    ("pages/context_extension.py", {"train": "4096", "s": "8"}), ("pages/context_extension.py", {"w": "128", "rho": "0.75"}),
    # a loaded model is a layer of its own, labelled at its end (no legend entry): loading one only adds rows
    ("pages/context_extension.py", {"model": "Llama 3.1 8B"}), ("pages/context_extension.py", {"model": "DeepSeek-V3", "at": "model"}),
    # the heatmap draws every column up to d = 512 (posenc.views.sinusoid.HEATMAP_MAX_COLS); past that it draws kept
    # pairs side by side under labels naming them: another spec
    ("pages/sinusoid.py", {"d": "130"}), ("pages/sinusoid.py", {"d": "512"}), ("pages/sinusoid.py", {"n": "200"}),
    # the chosen base is the series "your base" (posenc.views.why_base.YOUR_BASE), on the list of bases or not
    ("pages/sinusoid.py", {"base": "10001"}), ("pages/sinusoid.py", {"base": "100", "layout": "interleaved"}),
    # the token heatmaps' colour range rides in their data (posenc.charts.story.token_heatmap) and the scheme's name
    # is in the caption above them, not in their titles
    ("pages/attention_order.py", {"d": "64"}), ("pages/attention_order.py", {"scheme": "RoPE"}),
    ("pages/attention_order.py", {"scheme": "NoPE (causal mask only)", "d": "4"}),
    # the sine's x range is its data's (0 ... n-1); the rows' titles say "at this position", the metric above names it
    ("pages/single_sine.py", {"n": "100"}), ("pages/learned.py", {"position": "600"}),
    # the panels and the offsets' legend name a scheme alone (the caption says its settings and the stride), and an
    # image panel's legend takes its range from two pins in its data (posenc.charts.raster.legend_pins); the score
    # (cosine or dot) is another unit, named in the titles: another spec
    ("pages/similarity.py", {"d": "66"}), ("pages/similarity.py", {"d": "512"}),
    ("pages/similarity.py", {"head": "8"}), ("pages/similarity.py", {"n": "129"}), ("pages/similarity.py", {"n": "512"}),
]


def _specs(path: str, query: dict | None = None) -> list[str]:
    at = shown_page(path, query)  # read only, its lazy boxes open: the charts they hold keep their specs too
    assert_clean(at)
    return [el.proto.spec for el in at.get("vega_lite_chart")]


@pytest.mark.parametrize(("path", "query"), CASES, ids=[f"{p.split('/')[1][:-3]}-{'-'.join(q)}" for p, q in CASES])
def test_a_new_setting_sends_the_same_specs(path, query):
    base, moved = _specs(path), _specs(path, query)
    assert len(base) == len(moved) > 0
    changed = [i for i, (a, b) in enumerate(zip(base, moved)) if a != b]
    assert not changed, f"charts {changed} of {path} change their spec when {query} changes"
