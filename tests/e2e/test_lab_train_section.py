"""The lab's Train section in a real browser: a setting that leaves the figures above as they are reruns that section
alone (the server logs a section run, not a page run), and a training reruns the page, whose figures then show it."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from posenc.lab.positions import NAMES
from tools.liveserver import wait_for_app

pytestmark = pytest.mark.e2e

TINY = f"V=2&k=1&L=8&seeds=1&steps=250&schemes={quote(NAMES['nope'])}"  # one scheme, one seed: ~2 s of training here


def _settled(page):
    page.wait_for_timeout(300)
    wait_for_app(page, timeout_ms=60_000)


def _runs_since(log, offset: int) -> list[tuple[str, str]]:
    """(kind, what) of every run the server logged after byte ``offset`` ("run lab", "section pages/lab.py:...")."""
    return [tuple(line.split()[:2]) for line in log.read_text(encoding="utf-8")[offset:].splitlines() if line.strip()]


def test_a_setting_reruns_the_train_section_alone_and_a_training_the_page(live_server, tab):
    page, log = tab, live_server["run_log"]
    page.goto(f"{live_server['url']}/lab?{TINY}", wait_until="domcontentloaded")
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("has not been trained on this server yet").wait_for(timeout=60_000)  # the figures show the shipped run
    wait_for_app(page, timeout_ms=60_000)  # the run is over: a click now is not lost in it (its charts may still draw)

    seeds = main.locator("[data-testid='stNumberInput']").filter(has_text="seeds").first
    offset = log.stat().st_size
    seeds.locator("[data-testid='stNumberInputStepUp']").click()
    _settled(page)
    assert "seeds=2" in page.url
    assert _runs_since(log, offset) == [("section", "pages/lab.py:custom_section")]  # not the page: nothing above changed
    assert "has not been trained on this server yet" in main.inner_text()

    seeds.locator("[data-testid='stNumberInputStepDown']").click()
    _settled(page)
    offset = log.stat().st_size
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results of this custom run").first.wait_for(timeout=120_000)
    _settled(page)
    runs = _runs_since(log, offset)
    assert ("section", "pages/lab.py:custom_section") in runs and ("run", "lab") in runs  # trained there, then drawn whole
    assert "has not been trained on this server yet" not in main.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0
