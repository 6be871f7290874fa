"""The lab's Train section in a real browser: a setting that leaves the figures above as they are reruns that section
alone (the server logs a section run, not a page run), a training reruns the page, whose figures then show it, and
Cancel stops a training."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from posenc.lab.positions import NAMES
from posenc.ui.runclock import read_runs
from tools.liveserver import wait_after_input, wait_for_app

pytestmark = pytest.mark.e2e

TINY = f"V=2&k=1&L=8&seeds=1&steps=250&schemes={quote(NAMES['nope'])}"  # one scheme, one seed: ~2 s of training here


def _runs_since(log, offset: int) -> list[tuple[str, str]]:
    """(kind, what) of every run the server logged after byte ``offset`` ("run lab", "section pages/lab.py:...")."""
    return [(kind, what) for kind, what, _, _ in read_runs(log, offset)[0]]


def test_a_setting_reruns_the_train_section_alone_and_a_training_the_page(live_server, tab):
    page, log = tab, live_server["run_log"]
    page.goto(f"{live_server['url']}/lab?{TINY}", wait_until="domcontentloaded")
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("has not been trained on this server yet").wait_for(timeout=60_000)  # the figures show the shipped run
    wait_for_app(page, timeout_ms=60_000)  # the run is over: a click now is not lost in it (its charts may still draw)

    seeds = main.locator("[data-testid='stNumberInput']").filter(has_text="seeds").first
    offset = log.stat().st_size
    seeds.locator("[data-testid='stNumberInputStepUp']").click()
    wait_after_input(page)
    assert "seeds=2" in page.url
    assert _runs_since(log, offset) == [("section", "pages/lab.py:custom_section")]  # not the page: nothing above changed
    assert "has not been trained on this server yet" in main.inner_text()

    seeds.locator("[data-testid='stNumberInputStepDown']").click()
    wait_after_input(page)
    offset = log.stat().st_size
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("Results of this custom run").first.wait_for(timeout=120_000)
    wait_after_input(page)
    runs = _runs_since(log, offset)
    assert ("section", "pages/lab.py:custom_section") in runs and ("run", "lab") in runs  # trained there, then drawn whole
    assert "has not been trained on this server yet" not in main.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0


def test_cancel_stops_a_training_started_from_the_section(live_server, tab):
    """Streamlit lets no section's rerun interrupt a run in progress, so the training runs in the page's run, where
    Cancel (a rerun of the page) stops it."""
    page = tab
    long = TINY.replace("steps=250", "steps=4000").replace("seeds=1", "seeds=3")  # ~1 min of training here: it is running
    page.goto(f"{live_server['url']}/lab?{long}", wait_until="domcontentloaded")
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("has not been trained on this server yet").wait_for(timeout=60_000)
    wait_for_app(page, timeout_ms=60_000)
    page.get_by_role("button", name="Train", exact=True).click()
    page.locator("[data-testid='stProgress']").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Cancel", exact=True).click()
    main.get_by_text("The last run was stopped before it finished").wait_for(timeout=20_000)
    wait_for_app(page, timeout_ms=20_000)
    assert page.locator("[data-testid='stProgress']").count() == 0
    assert "has not been trained on this server yet" in main.inner_text()  # nothing was kept
    assert page.locator("[data-testid='stException']").count() == 0
