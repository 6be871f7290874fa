"""Exercises rerun alone (frame.exercise outside a section is its own fragment), in a real browser:
revealing RoPE's shift question redraws only the exercise, and the sinusoid's "longest wavelength" question,
whose answer the page also shows in a metric and a table, redraws the page so that metric follows."""

from __future__ import annotations

import pytest

from tools.liveserver import wait_for_app, wait_for_settled_charts

pytestmark = pytest.mark.e2e

MUTATIONS = """() => { window.__charts = 0;
  document.querySelectorAll("[data-testid='stVegaLiteChart']").forEach(el => new MutationObserver(l => { window.__charts += l.length; })
    .observe(el, {subtree: true, childList: true, attributes: true})); }"""


def _open(browser, url):
    """The page once every chart has drawn and stopped changing (a chart still drawing would count as redrawn)."""
    page = browser.new_page(viewport={"width": 1400, "height": 6000})
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page, timeout_ms=90_000)
    wait_for_settled_charts(page)
    return page


def _reveal(page, question: str) -> None:
    box = page.get_by_text(question).locator("xpath=ancestor::div[@data-testid='stVerticalBlock'][1]")
    box.get_by_text("Reveal the answer").click()
    page.wait_for_timeout(300)
    wait_for_app(page)
    page.wait_for_timeout(800)


def test_an_exercise_whose_answer_shows_nowhere_else_reruns_alone(live_server, browser):
    page = _open(browser, f"{live_server['url']}/rope")
    page.evaluate(MUTATIONS)
    metrics = page.locator("[data-testid='stMetricValue']").all_inner_texts()
    _reveal(page, "does the score between positions")
    assert page.get_by_text("Answer: ").count() >= 1
    assert page.evaluate("() => window.__charts") == 0  # no chart redrawn
    assert page.locator("[data-testid='stMetricValue']").all_inner_texts() == metrics
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()


def test_an_exercise_whose_answer_the_page_also_shows_redraws_the_page(live_server, browser):
    page = _open(browser, f"{live_server['url']}/sinusoid")

    def longest() -> str:
        return page.locator("[data-testid='stMetric']").filter(has_text="longest wavelength") \
            .locator("[data-testid='stMetricValue']").inner_text()

    assert longest() == "?"
    _reveal(page, "how many positions does the slowest pair need")
    assert longest() != "?" and any(ch.isdigit() for ch in longest())
    assert page.locator("[data-testid='stException']").count() == 0
    page.close()
