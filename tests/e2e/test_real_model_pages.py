"""The "Inside a real model" pages in Debian's Chromium on a typed text (issue 38's done-when): each page takes a
German sentence typed into its first text box (the extension page: a passage of one's own; the box found by its URL
key, not by its place: a run under load once filled sentence B, whose box was found first), reruns with no
exception or error, stays within a 390 px screen, and shows its computed numbers -- the float64 shift below 1e-3.
Screenshots land in tests/artifacts/e2e/ (<page>-typed-390.png)."""

from __future__ import annotations

from urllib.parse import unquote_plus

import pytest
from browserchecks import OVERFLOW, PHONE

import posenc.model as pm
from tools.liveserver import wait_for_app

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(not pm.available(), reason=f"the bundled model is not installed: {pm.INSTALL}")]

TYPED = "Der Hund biss den Mann."
PASSAGE = "Der Hund biss den Mann. Der Mann lief davon, und der Hund bellte hinter ihm her, bis die Nachbarn aus den Fenstern sahen."
PAGES = {  # url path: the link's query, the box's URL key, the text typed, a metric label that must show a number after the rerun
    "real_order": ("", "a", TYPED, "after A, top next token (RoPE)"),
    "real_heads": ("", "text", TYPED, None),
    "real_relative": ("", "text", TYPED, "max |Δlogit| at Δ = 10⁵, float64"),
    "real_extension": ("?passage=your%20text", "yours", PASSAGE, "perplexity with plain RoPE"),
}


def _metric(page, label: str) -> str:
    box = page.locator("[data-testid='stMetric']").filter(has_text=label).first
    return box.locator("[data-testid='stMetricValue']").inner_text().strip()


@pytest.mark.parametrize("name", list(PAGES))
def test_a_typed_text_at_390_px(name, live_server, tab, artifacts):
    query, key, typed, label = PAGES[name]
    page = tab
    page.set_viewport_size({**PHONE, "height": 2400})  # before the page loads: it is laid out at 390 px
    page.goto(f"{live_server['url']}/{name}{query}", wait_until="domcontentloaded")
    page.get_by_text("Link to this view").first.wait_for(timeout=180_000)
    wait_for_app(page, timeout_ms=180_000)
    box = page.locator(f"[data-testid='stMain'] .st-key-{key} [data-testid='stTextInput'] input")
    box.fill(typed)
    box.press("Enter")
    page.wait_for_url(lambda url: f"{key}=Der Hund" in unquote_plus(url), timeout=30_000)  # the box is bound to the link
    wait_for_app(page, timeout_ms=180_000)
    page.wait_for_timeout(800)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert box.input_value() == typed
    fit = page.evaluate(OVERFLOW)
    assert fit["page"] <= PHONE["width"] and not fit["bad"], fit
    if label is not None:
        value = _metric(page, label)
        assert value and value != "?"
        if name == "real_relative":
            assert float(value) < 1e-3
    page.screenshot(path=str(artifacts / f"{name}-typed-390.png"), full_page=True)
