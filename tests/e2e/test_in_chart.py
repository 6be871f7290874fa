"""In-chart controls (posenc.charts.base.url_param), in a real browser: the lab's layer and head buttons
repaint every chart that shows them without a message to the server, write themselves into the address
bar, tell the server once the hand stops, and a reload (the link) reopens the same view."""

from __future__ import annotations

import pytest

from tools.liveserver import wait_for_app

pytestmark = pytest.mark.e2e

TITLES = "() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] .role-title-text')].map(e => e.textContent)"


def _why_titles(page) -> list[str]:
    return [t for t in page.evaluate(TITLES) if "layer" in t]


def _wait_for_charts(page, count: int = 3) -> None:
    """Until the lab's three layer/head charts have drawn their titles (Vega draws after the page is idle)."""
    page.wait_for_function(f"() => ({TITLES})().filter(t => t.includes('layer')).length >= {count}", timeout=60_000)


@pytest.fixture
def sent(tab) -> list:
    """Every websocket frame ``tab`` sends during the test; the listener leaves the shared tab after it, pass or fail."""
    frames: list = []
    listen = lambda ws: ws.on("framesent", lambda payload: frames.append(payload))  # noqa: E731
    tab.on("websocket", listen)
    yield frames
    tab.remove_listener("websocket", listen)


def test_layer_and_head_repaint_in_the_browser_and_reach_the_link(live_server, tab, sent):
    page = tab
    page.goto(f"{live_server['url']}/lab", wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=90_000)
    page.get_by_text("The attention maps at L and past it").click()  # the box computes them only once opened
    page.locator("input[name='url_head']").first.wait_for(state="attached", timeout=60_000)
    _wait_for_charts(page)
    assert _why_titles(page) == ["RoPE, layer 1, head 1, L = 32", "RoPE, layer 1, head 1, 4L = 128",
                                 "head 1 of layer 1: 0.35 before L, 0.04 after"]
    visible = page.locator("form.vega-bindings:visible")
    assert visible.count() == 1  # one set of buttons; the other charts' copies are hidden and kept in step

    before = len(sent)
    visible.locator("input[name='url_head'][value='3']").check()
    visible.locator("input[name='url_layer'][value='2']").check()
    page.wait_for_function("() => [...document.querySelectorAll('.role-title-text')].filter(e => "
                           "e.textContent.includes('layer 2, head 3')).length === 2", timeout=5_000)
    assert len(sent) == before  # repainted with no message to the server
    assert "head 3 of layer 2:" in _why_titles(page)[2]
    assert "head=3" in page.url and "layer=2" in page.url
    assert page.evaluate("() => [...document.querySelectorAll('input[name=url_head]:checked')].map(e => e.value)") == ["3"] * 3

    page.wait_for_timeout(1_500)  # the hand has stopped: the page tells the server (one rerun from the address bar)
    wait_for_app(page, timeout_ms=60_000)
    _wait_for_charts(page)
    assert len(sent) > before
    assert all("layer 2, head 3" in t or "head 3 of layer 2" in t for t in _why_titles(page))

    page.reload(wait_until="domcontentloaded")  # the link reopens the same view
    wait_for_app(page, timeout_ms=90_000)
    page.locator("input[name='url_head']").first.wait_for(state="attached", timeout=60_000)
    _wait_for_charts(page)
    assert _why_titles(page)[0] == "RoPE, layer 2, head 3, L = 32"
    assert page.locator("[data-testid='stException']").count() == 0


def _alibi_title(page) -> list[str]:
    """The lines of the ALiBi matrix's title (Vega draws each line as a tspan)."""
    return page.evaluate("() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] .role-title-text')]"
                         ".filter(e => e.textContent.startsWith('head ')).flatMap(e => [...e.querySelectorAll('tspan')]"
                         ".map(t => t.textContent))")


def test_alibi_head_slider_rescales_one_picture_in_the_browser(live_server, tab, sent):
    """T5 and ALiBi: every head's bias is its slope times -|i - j|, so the head slider under the matrix repaints
    the title, the legend and the hover values in the browser; the hover value is -m·(i - j) of the cell."""
    page = tab
    page.goto(f"{live_server['url']}/relative_bias", wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=90_000)
    # until the exercise's reveal head 9 (the one it asks about) is not offered, so the heads are a select, not a range
    slider = page.locator("[name='url_head']").first
    slider.wait_for(state="attached", timeout=60_000)
    page.wait_for_function(f"() => ({TITLES})().some(t => t.startsWith('head 1 of 12'))", timeout=60_000)
    assert _alibi_title(page) == ["head 1 of 12: slope m = 0.5", "bias at distance L = 128: -64", "bias at distance 4L − 1 = 511: -255.5"]

    before = len(sent)
    if slider.evaluate("e => e.tagName") == "SELECT":
        slider.select_option("4")
    else:
        slider.focus()
        for _ in range(3):
            slider.press("ArrowRight")
    page.wait_for_function(f"() => ({TITLES})().some(t => t.startsWith('head 4 of 12'))", timeout=5_000)
    assert len(sent) == before  # repainted with no message to the server
    assert _alibi_title(page)[:2] == ["head 4 of 12: slope m = 0.0625", "bias at distance L = 128: -8"] and "head=4" in page.url
    legend = page.evaluate("() => [...document.querySelectorAll('[data-testid=stVegaLiteChart] .role-legend-label text')]"
                           ".map(e => e.textContent)")
    assert "−30" in legend and "−200" not in legend  # the legend of head 4 (m = 1/16) ends at -511/16 = -31.9, not at -255.5

    # the ALiBi matrix, found by what it draws (its title), not by its place among the page's charts
    chart = page.locator("[data-testid='stVegaLiteChart']").filter(has=page.locator(".role-title-text", has_text="head 4 of 12"))
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    page.mouse.move(box["x"] + 150, box["y"] + box["height"] * 0.55)  # the lower left: a query well after its key
    tip = page.locator("#vg-tooltip-element")
    tip.wait_for(state="visible", timeout=5_000)
    lines = tip.inner_text().split()
    i, j = int(lines[lines.index("i") + 1]), int(lines[lines.index("j") + 1])
    assert i > j and float(lines[-1].replace("−", "-")) == -0.0625 * (i - j)

    page.wait_for_timeout(1_500)  # the hand has stopped: the page tells the server (one rerun from the address bar)
    wait_for_app(page, timeout_ms=60_000)
    page.wait_for_function(f"() => ({TITLES})().some(t => t.startsWith('head 4 of 12'))", timeout=60_000)
    assert len(sent) > before and slider.input_value() == "4"
    assert page.locator("[data-testid='stException']").count() == 0
