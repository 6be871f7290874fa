"""What each page sends to vega-embed: heatmaps (images, or rect cells) drawn by the hybrid renderer (posenc.charts.raster.RENDERER), every other
chart with Streamlit's own choice (no renderer named)."""

from __future__ import annotations

import json

import pytest

from posenc.charts.raster import RENDERER, holds_heatmap
from posenc.ui.pages import PAGES
from tests.app.apphelpers import assert_clean, shown_page

HEATMAPS_AT_DEFAULTS = {"pages/attention_order.py", "pages/sinusoid.py", "pages/learned.py", "pages/relative_bias.py",
                        "pages/similarity.py", "pages/lab.py", "pages/real_heads.py", "pages/rope.py"}


@pytest.mark.parametrize("path", [p.path for p in PAGES])
def test_heatmaps_go_out_to_the_hybrid_renderer(path):
    at = shown_page(path)  # its lazy boxes open: the lab's maps and RoPE's matrices are heatmaps
    assert_clean(at)
    specs = [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]
    named = [(spec.get("usermeta") or {}).get("embedOptions", {}).get("renderer") for spec in specs]
    assert named == [RENDERER if holds_heatmap(spec) else None for spec in specs]
    assert (RENDERER in named) == (path in HEATMAPS_AT_DEFAULTS)
