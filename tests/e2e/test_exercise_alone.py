"""Exercises rerun alone (frame.exercise outside a section is its own fragment), in a real browser:
revealing Learned tables' row question redraws only the exercise; Context extension's YaRN question, whose answer the page
also shows in a metric outside any section, redraws the page so that metric follows; and the sinusoid's "longest
wavelength" question, which sits in a section with the metric that shows its answer, redraws that section (the
"why 10000" table further down points to the exercise instead of hiding a number it would not redraw)."""

from __future__ import annotations

import pytest

from tools.liveserver import wait_after_input, wait_for_app, wait_for_settled_charts

pytestmark = pytest.mark.e2e

MUTATIONS = """() => { window.__charts = 0;
  document.querySelectorAll("[data-testid='stVegaLiteChart']").forEach(el => new MutationObserver(l => { window.__charts += l.length; })
    .observe(el, {subtree: true, childList: true, attributes: true})); }"""


def _open(page, url):
    """The page once every chart has drawn and stopped changing (a chart still drawing would count as redrawn)."""
    page.set_viewport_size({"width": 1400, "height": 6000})
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=90_000)
    wait_for_settled_charts(page)
    return page


def _reveal(page, question: str) -> None:
    box = page.get_by_text(question).locator("xpath=ancestor::div[@data-testid='stVerticalBlock'][1]")
    box.get_by_text("Reveal the answer").click()
    wait_after_input(page)
    page.wait_for_timeout(800)


def test_an_exercise_whose_answer_shows_nowhere_else_reruns_alone(live_server, tab):
    page = _open(tab, f"{live_server['url']}/learned")  # its answer is in no metric, table or figure of the page
    page.evaluate(MUTATIONS)
    metrics = page.locator("[data-testid='stMetricValue']").all_inner_texts()
    _reveal(page, "row 1 is compared with rows 2, 3, 4")
    assert page.get_by_text("Answer: ").count() >= 1
    assert page.evaluate("() => window.__charts") == 0  # no chart redrawn
    assert page.locator("[data-testid='stMetricValue']").all_inner_texts() == metrics
    assert page.locator("[data-testid='stException']").count() == 0


def _metric(page, label: str) -> str:
    return page.locator("[data-testid='stMetric']").filter(has_text=label).locator("[data-testid='stMetricValue']").inner_text()


def test_an_exercise_whose_answer_the_page_also_shows_redraws_the_page(live_server, tab):
    page = _open(tab, f"{live_server['url']}/context_extension")
    assert _metric(page, "YaRN attention factor") == "?"
    _reveal(page, "what is the attention factor that multiplies cos and sin")
    shown = _metric(page, "YaRN attention factor")
    assert shown != "?" and shown.startswith("1.13")  # 0.1 ln 4 + 1 = 1.138629 (HF's YaRN at s = 4)
    assert page.locator("[data-testid='stException']").count() == 0


def test_an_exercise_in_a_section_redraws_its_section(live_server, tab):
    page = _open(tab, f"{live_server['url']}/sinusoid")
    assert _metric(page, "longest wavelength") == "?"
    pointer = page.get_by_text("the exercise above", exact=True)  # the "why 10000" table's cell for the chosen base
    assert pointer.count() == 1
    _reveal(page, "how many positions does the slowest pair need")
    shown = _metric(page, "longest wavelength")
    assert shown != "?" and any(ch.isdigit() for ch in shown)
    assert pointer.count() == 1
    assert page.locator("[data-testid='stException']").count() == 0
