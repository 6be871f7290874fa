"""Issue 40, item 6: the presenter view (a link with ?present=1) on every page, in Chromium.

No sidebar, no controls, no export menus; the figures drawn larger; the headline shown; the arrow keys step through
the page's sections (the title, each subheader, the wrap-up), each brought to the top of the screen; and the link
parameter is not reported as one the page ignores.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posenc.ui.pages import HOME, PAGES
from tools.liveserver import wait_for_app

CONTROLS = ("stSlider", "stSelectSlider", "stSelectbox", "stMultiSelect", "stRadio", "stNumberInput", "stTextArea",
            "stFileUploader", "stPopover", "stExpander", "stSidebar")
VISIBLE = "(ids) => ids.flatMap((id) => [...document.querySelectorAll(`[data-testid='${id}']`)]).filter((el) => el.offsetParent !== null).length"
STOP = """() => { const el = document.querySelector("[data-posenc-stop='current']");
  return el ? {index: window.__posencPresent.index, top: el.getBoundingClientRect().top, tag: el.tagName,
               text: el.textContent.slice(0, 60)} : null; }"""


def _where(info) -> str:
    return "" if info.path == HOME else info.url_path


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_presenter_view(info, live_server, tab, artifacts):
    page = tab
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{live_server['url']}/{_where(info)}?present=1", wait_until="domcontentloaded")
    page.get_by_text("Link to this view").first.wait_for(state="attached", timeout=60_000)
    wait_for_app(page)
    page.wait_for_timeout(800)
    assert page.locator("[data-testid='stException']").count() == 0
    try:  # the view's style is an st.html element, drawn once its script chunk has loaded: on a loaded machine
        # that came after the 800 ms above (one CI run, 2026-12-05: 5 controls still shown on the single sine)
        page.wait_for_function(f"() => ({VISIBLE})({list(CONTROLS)!r}) === 0", timeout=15_000, polling=100)
    except PlaywrightTimeout:
        pass  # the assertion below says how many are still shown
    assert page.evaluate(VISIBLE, list(CONTROLS)) == 0, "controls or the sidebar are still shown"
    assert page.get_by_text("Ignored link parameter").count() == 0
    charts = page.locator("[data-testid='stVegaLiteChart']")
    if charts.count():
        assert charts.first.evaluate("(el) => getComputedStyle(el).zoom") == "1.3"
    page.mouse.click(700, 5)  # the page, not a widget, has the focus
    page.keyboard.press("ArrowRight")
    first = page.evaluate(STOP)
    page.keyboard.press("ArrowRight")
    page.wait_for_timeout(300)
    second = page.evaluate(STOP)
    assert first is not None and second is not None
    assert second["index"] == min(2, second["index"]) and second["index"] >= 1, (first, second)
    assert -5 <= second["top"] < 200, second  # the section is brought to the top of the screen
    page.keyboard.press("ArrowLeft")
    back = page.evaluate(STOP)
    assert back["index"] == second["index"] - 1, (second, back)
    page.keyboard.press("End")
    for _ in range(40):  # to the last stop: the wrap-up
        page.keyboard.press("ArrowDown")
    last = page.evaluate(STOP)
    assert "What this shows" in last["text"], last
    page.keyboard.press("Home")
    page.screenshot(path=str(artifacts / f"{info.url_path}-present.png"))
