"""After a control moves, what a person sees is what the link shows: every chart's pixels after one step
equal those of the page opened afresh at the new URL (a chart Streamlit's frontend updated rather than
rebuilt, or one left stale, would differ)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tools.liveserver import wait_for_app, wait_for_settled_charts

pytestmark = pytest.mark.e2e

TALL = {"width": 1400, "height": 6000}  # every chart on screen: Streamlit draws a chart once it is in view


def _changed(a: bytes, b: bytes) -> int:
    """Pixels whose colour differs by more than 32 levels in some channel (or all of them, if the sizes differ).

    Redrawing the same scene differs by antialiasing alone (measured: gradients by 1 level, a dashed rule's
    edge by up to 15); a value drawn elsewhere moves whole marks, at full contrast."""
    x, y = (np.asarray(Image.open(io.BytesIO(p)).convert("RGB"), dtype=np.int16) for p in (a, b))
    if x.shape != y.shape:
        return max(x.size, y.size)
    return int((np.abs(x - y).max(axis=2) > 32).sum())


def _settle(page, count: int = 1) -> list[bytes]:
    """Each chart's pixels once the script is idle, ``count`` charts have drawn and they have stopped changing."""
    wait_for_settled_charts(page, count=count)
    charts = page.locator("[data-testid='stVegaLiteChart']")
    return [charts.nth(i).screenshot(animations="disabled") for i in range(charts.count())]


# (page, number input's label): one step changes what several charts on the page draw
CASES = [("rope", "base b"), ("sinusoid", "base")]


@pytest.mark.parametrize("path, label", CASES, ids=[c[0] for c in CASES])
def test_a_chart_updated_in_place_is_the_chart_a_fresh_page_draws(live_server, tab, second_tab, path, label):
    page = tab
    page.set_viewport_size(TALL)
    page.goto(f"{live_server['url']}/{path}", wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=90_000)
    before = _settle(page)
    box = page.get_by_label(label, exact=True)
    link = page.url
    box.fill(str(int(float(box.input_value().replace(",", ""))) + 1000))
    box.press("Enter")
    page.wait_for_function("u => location.href !== u", arg=link, timeout=30_000)  # the link has the new value
    stepped = _settle(page, len(before))
    assert len(stepped) == len(before) >= 2
    assert sum(_changed(a, b) > 50 for a, b in zip(before, stepped)) >= 2  # the step changed what several charts draw
    fresh = second_tab  # a new document at the stepped link
    fresh.bring_to_front()
    fresh.set_viewport_size(TALL)
    fresh.goto(page.url, wait_until="domcontentloaded")
    drawn = _settle(fresh, len(stepped))
    differ = {i: n for i, (a, b) in enumerate(zip(stepped, drawn)) if (n := _changed(a, b)) > 4}
    assert len(drawn) == len(stepped) and not differ, f"{path}: charts (pixels) {differ} differ from a fresh page at {page.url}"
