"""Markdown injection, judged by the browser itself: crafted link values and an upload's file name
must never become a clickable link or an image the browser fetches, on any page.

Every key a page binds (and an unknown one) carries a crafted value -- a "Log in" link breaking out
of a code span, an image, an autolink, a bare URL, an e-mail address -- and the rendered DOM must hold
no <a> or <img> pointing at the crafted host.  tests/app/test_hostile_urls.py checks the same for
every page in AppTest with a Markdown oracle; this is the ground truth in Chromium.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "app"))
from apphelpers import shown_page  # noqa: E402

from posenc.ui.pages import PAGES  # noqa: E402
from tools.liveserver import wait_for_app  # noqa: E402

pytestmark = pytest.mark.e2e
HOST = "evil.example"
INJECTIONS = [
    f"x` [Log in](http://{HOST}/a) `",
    f"![p](http://{HOST}/p.png) y",
    f"<http://{HOST}/c> www.{HOST}",
    f"http://{HOST}/d me@{HOST}",
]
_FIND = f"""() => [
  ...[...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href")),
  ...[...document.querySelectorAll("img[src]")].map(i => i.getAttribute("src")),
].filter(u => u.includes("{HOST}") || u.startsWith("javascript:"))"""


def _keys(path: str) -> list[str]:
    at = shown_page(path)
    return sorted(at.session_state["_posenc_run"]["bound"]) if "_posenc_run" in at.session_state else []


def _hostile_url(base: str, info) -> str:
    query = {key: INJECTIONS[i % len(INJECTIONS)] for i, key in enumerate(_keys(info.path))}
    query[INJECTIONS[0]] = "1"  # an unknown key: the "ignored" caption quotes its name
    return f"{base}/{info.url_path}?{urlencode(query)}"


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_no_link_value_renders_a_link_or_an_image(info, live_server, tab, artifacts):
    page = tab
    page.goto(_hostile_url(live_server["url"], info), wait_until="commit")
    page.wait_for_timeout(300)
    wait_for_app(page, timeout_ms=120_000)
    assert page.locator("[data-testid='stException']").count() == 0
    found = page.evaluate(_FIND)
    if info.url_path in ("raw_index", "sinusoid", "index_length"):
        page.screenshot(path=str(artifacts / f"hostile_{info.url_path}.png"), full_page=True)
    assert not found, found


def test_an_upload_named_like_a_link_shows_its_name_as_text(live_server, tab, artifacts, tmp_path):
    import io

    import numpy as np

    name = f"[Log in](http://{HOST}) ![p](http://{HOST}/p.png).npy"
    buf = io.BytesIO()
    np.save(buf, np.random.default_rng(0).normal(size=(64, 16)))
    path = tmp_path / "table.npy"
    path.write_bytes(buf.getvalue())
    page = tab
    page.goto(f"{live_server['url']}/learned", wait_until="commit")
    wait_for_app(page, timeout_ms=120_000)
    page.get_by_text("Bring your own table", exact=False).first.click()
    page.locator("input[type=file]").first.set_input_files(files=[{"name": name, "mimeType": "application/octet-stream",
                                                                    "buffer": path.read_bytes()}])
    page.get_by_text("Loaded", exact=False).first.wait_for(timeout=120_000)
    wait_for_app(page, timeout_ms=120_000)
    # select the upload in the table list; a rerun that lands while the list is open closes it: open it again
    option = page.get_by_role("option", name="[Log in]", exact=False).first
    for _ in range(5):
        page.get_by_test_id("stSelectbox").first.click()
        try:
            option.wait_for(timeout=6_000)
            break
        except Exception:  # noqa: BLE001 -- the list closed before it showed the option
            page.keyboard.press("Escape")
            wait_for_app(page, timeout_ms=60_000)
    option.click()
    page.wait_for_timeout(500)
    wait_for_app(page, timeout_ms=120_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("64 × 16").count() >= 1
    page.screenshot(path=str(artifacts / "hostile_upload_name.png"), full_page=True)
    assert not page.evaluate(_FIND)
