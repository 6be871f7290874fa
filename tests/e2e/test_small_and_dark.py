"""Every page at 390 px wide and in the dark theme, in Debian's Chromium: nothing is wider than the
screen (the page itself never scrolls sideways; a wide table or chart scrolls inside its own box),
every formula fits, text reads against its background, and the moving figures play in the browser.
Screenshots land in tests/artifacts/e2e/ (<page>-390.png, <page>-dark.png).

Frame rates are measured by ``python -m bench --only motion``, not asserted here.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posenc.ui.pages import HOME, PAGES
from tools.liveserver import motion_frame, wait_for_app

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
MOTION_PAGES = ("single_sine", "sincos_pair", "sinusoid", "rope")
# (RoPE's spinning pair no longer waits for an exercise: its section-1 exercise asks about rounding, not the shift)

# Elements whose right edge passes the viewport, unless a box between them and the page scrolls or
# clips sideways (a dataframe, a chart wider than the phone, a formula at its smallest size).
OVERFLOW = """() => {
  const W = window.innerWidth, main = document.querySelector("[data-testid='stMain']"), bad = [];
  const boxed = el => {
    for (let p = el.parentElement; p && p !== main; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden" || o === "clip") return true;
    }
    return false;
  };
  for (const el of main.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width && r.height && r.right > W + 1 && !boxed(el))
      bad.push(`${el.tagName}.${el.className}`.slice(0, 80) + ` right=${Math.round(r.right)}`);
  }
  const formulas = [...document.querySelectorAll(".katex-display")]
    .filter(k => k.scrollWidth > k.clientWidth + 1).map(k => k.textContent.slice(0, 40) + ` (${k.scrollWidth} > ${k.clientWidth})`);
  return {page: document.documentElement.scrollWidth, main: main.scrollWidth, client: main.clientWidth, bad: bad.slice(0, 8), formulas};
}"""

# Text whose colour is too close to the background behind it (WCAG contrast ratio under 3).
CONTRAST = """() => {
  const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = c => { const m = c.match(/[\\d.]+/g).map(Number);
                     return [0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]), m.length > 3 ? m[3] : 1]; };
  const bg = el => { for (let p = el; p; p = p.parentElement) { const c = getComputedStyle(p).backgroundColor; if (lum(c)[1] > 0.5) return c; }
                     return getComputedStyle(document.querySelector("[data-testid='stApp']")).backgroundColor; };
  const bad = [];
  for (const el of document.querySelectorAll("[data-testid='stMain'] *")) {
    const own = [...el.childNodes].filter(n => n.nodeType === 3 && n.textContent.trim()).map(n => n.textContent.trim()).join(" ");
    if (!own || el.closest("[data-testid='stSlider']")) continue;  // the value label floats above the thumb it sits in
    const s = getComputedStyle(el), r = el.getBoundingClientRect();
    if (s.visibility === "hidden" || s.display === "none" || !r.width || Number(s.opacity) < 0.5) continue;
    const [a, alpha] = lum(s.color), [b] = lum(bg(el));
    if (alpha < 0.5) continue;
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 3) bad.push(`${own.slice(0, 40)} (${ratio.toFixed(2)}: ${s.color} on ${bg(el)})`);
  }
  return bad.slice(0, 10);
}"""


def _where(info) -> str:
    return "" if info.path == HOME else info.url_path  # the landing page is served at "/" ("/home" is no page)


def _open(browser, url: str, *, viewport: dict, dark: bool):
    ctx = browser.new_context(viewport=viewport, color_scheme="dark" if dark else "light")
    page = ctx.new_page()
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_text("Link to this view").first.wait_for(timeout=60_000)
    wait_for_app(page)
    page.wait_for_timeout(800)  # charts and iframes settle
    page.evaluate("() => document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))")
    return ctx, page


def _full_screenshot(page, path, width: int) -> None:
    h = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(h) + 40, 16_000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)


FORMULAS_FIT = "() => [...document.querySelectorAll('.katex-display')].every(k => k.scrollWidth <= k.clientWidth + 1)"


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_page_at_390_px_and_in_the_dark_theme(info, live_server, browser, artifacts):
    ctx, page = _open(browser, f"{live_server['url']}/{_where(info)}", viewport=PHONE, dark=False)
    try:
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.get_by_text("Page not found").count() == 0
        try:  # under load a formula may be laid out once more after fonts.ready (it read 2 px wide once, 3 of 3 fine alone)
            page.wait_for_function(FORMULAS_FIT, timeout=5_000, polling=100)
        except PlaywrightTimeout:
            pass  # the assertion below names the formulas that still do not fit
        fit = page.evaluate(OVERFLOW)
        assert fit["page"] <= PHONE["width"] and fit["main"] <= fit["client"] + 1, fit
        assert not fit["bad"], fit["bad"]
        assert not fit["formulas"], fit["formulas"]
        _full_screenshot(page, artifacts / f"{info.url_path}-390.png", PHONE["width"])
        # the same page in the dark theme (the app follows the system setting) at desktop width
        page.emulate_media(color_scheme="dark")
        page.set_viewport_size({"width": 1400, "height": 1000})
        page.wait_for_timeout(800)
        bg = page.evaluate("() => getComputedStyle(document.querySelector(\"[data-testid='stApp']\")).backgroundColor")
        assert sum(int(x) for x in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3]) < 200, f"not the dark theme: {bg}"
        assert page.evaluate(CONTRAST) == []
        _full_screenshot(page, artifacts / f"{info.url_path}-dark.png", 1400)
    finally:
        ctx.close()


@pytest.mark.parametrize("path", MOTION_PAGES)
def test_moving_figures_play_in_the_browser(path, live_server, browser, artifacts):
    """Press play: frames advance with no script run on the server; scrub: the frame follows the slider."""
    ctx, page = _open(browser, f"{live_server['url']}/{path}", viewport={"width": 1400, "height": 1000}, dark=False)
    try:
        frame = motion_frame(page)
        total = frame.evaluate("() => window.posencMotion.frames")
        frame.locator("#play").click()
        page.wait_for_timeout(1500)
        state = frame.evaluate("() => window.posencMotion")
        assert state["playing"] and state["draws"] > 10, state
        assert page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").count() == 1  # no server round trip
        frame.locator("#play").click()  # pause
        frame.locator("#scrub").fill(str(total // 2))
        assert int(frame.evaluate("() => document.getElementById('scrub').value")) == total // 2
        assert frame.evaluate("() => document.getElementById('read').textContent")
        record = artifacts / "motion.json"
        seen = json.loads(record.read_text()) if record.exists() else {}
        seen[path] = {"fps_while_playing": round(state["fps"], 1), "frames": total}
        record.write_text(json.dumps(seen, indent=2))
    finally:
        ctx.close()
