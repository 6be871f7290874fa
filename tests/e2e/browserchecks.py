"""What the browser tests check on a page at 390 px wide and in the dark theme (tests/e2e/test_browser.py), shared with
tests/e2e/test_real_model_pages.py and tests/e2e/test_motion.py: nothing is wider than the screen (the page itself
never scrolls sideways; a wide table scrolls inside its own box, and at a page's defaults no chart needs to), every
formula fits, and text reads against its background.
"""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from posenc.ui.pages import HOME
from tools.liveserver import wait_for_app

PHONE = {"width": 390, "height": 844}

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
  const lum = c => { const m = c.match(/[\\d.]+/g).map(Number);  // rgb(a) in 0..255, or color(srgb r g b / a) in 0..1
                     const k = c.startsWith("color(") ? 255 : 1;
                     return [0.2126 * f(k * m[0]) + 0.7152 * f(k * m[1]) + 0.0722 * f(k * m[2]), m.length > 3 ? m[3] : 1]; };
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


def where(info) -> str:
    return "" if info.path == HOME else info.url_path  # the landing page is served at "/" ("/home" is no page)


def load(page, url: str) -> None:
    """``url`` in ``page``, once the app has drawn it, its charts and iframes have settled and its fonts have loaded."""
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_text("Link to this view").first.wait_for(timeout=60_000)
    wait_for_app(page)
    page.wait_for_timeout(800)  # charts and iframes settle
    settle(page)


def settle(page) -> None:
    """The fonts loaded and two frames painted since."""
    page.evaluate("() => document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))))")


def full_screenshot(page, path, width: int) -> None:
    h = page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(h) + 40, 16_000)})
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), full_page=True)


# posenc.ui.frame.table's Markdown tables as assets.CSS sets them (a style the sanitizer of st.html dropped -- a "<" in
# a CSS comment did, 2026-12-06 -- leaves bold headers and a header that scrolls away): plain headers, and a scrolling
# table's header sticky on the page's own background, whatever the theme.
TABLES = """() => {
  const bad = [], app = getComputedStyle(document.querySelector("[data-testid='stApp']")).backgroundColor;
  for (const th of document.querySelectorAll("[class*='st-key-table_'] th")) {
    const s = getComputedStyle(th), box = th.closest("[class*='st-key-table_']");
    if (s.fontWeight !== "400") bad.push(box.className.match(/st-key-\\S+/)[0] + ": header weight " + s.fontWeight);
    if (box.className.includes("st-key-table_scroll_") && (s.position !== "sticky" || s.backgroundColor !== app))
      bad.push(box.className.match(/st-key-\\S+/)[0] + ": header " + s.position + " on " + s.backgroundColor + ", page " + app);
  }
  return [...new Set(bad)];
}"""
FORMULAS_FIT = "() => [...document.querySelectorAll('.katex-display')].every(k => k.scrollWidth <= k.clientWidth + 1)"

# Text of a chart (Vega draws SVG here) that runs past the chart's edge, where the browser cuts it: an end label, a tilted
# axis label, an axis title longer than the plot, a legend wider than a phone (seven charts on five pages did,
# 2026-12-06).  4 px of slack: a glyph's box includes the font's ascent, so a tick label at the very top pokes out 2-3 px
# and is not cut.
CHART_TEXT_CUT = """() => {
  const out = [];
  for (const c of document.querySelectorAll("[data-testid='stVegaLiteChart']")) {
    const svg = c.querySelector("svg");
    if (!svg) continue;
    const R = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (!r.width || !t.textContent.trim()) continue;
      if (r.left < R.left - 4 || r.right > R.right + 4 || r.top < R.top - 4 || r.bottom > R.bottom + 4)
        out.push(`"${t.textContent.slice(0, 40)}": x ${Math.round(r.left - R.left)}..${Math.round(r.right - R.left)} of ${Math.round(R.width)}, `
                 + `y ${Math.round(r.top - R.top)}..${Math.round(r.bottom - R.top)} of ${Math.round(R.height)}`);
    }
  }
  return out;
}"""


# A chart wider than its column on a phone scrolls inside its own box (assets.CSS), and what it hides is found only by
# swiping: the sinusoid's two M_k matrices ran 10 px past 358, hiding the legend's "−1.0" (2026-12-07).
CHART_SCROLLS = """() => {
  let heading = "the page's top";
  const out = [];
  for (const el of document.querySelectorAll("[data-testid='stMain'] h2, [data-testid='stMain'] h3, [data-testid='stVegaLiteChart']")) {
    if (el.tagName !== "DIV") { heading = el.textContent.trim().slice(0, 60); continue; }
    if (el.scrollWidth > el.clientWidth + 1) out.push(`a chart under "${heading}" (${el.scrollWidth} > ${el.clientWidth})`);
  }
  return out;
}"""


def chart_text_cut(page) -> list[str]:
    """CHART_TEXT_CUT once the charts have settled: a chart laid out again (fit to its column) is given 5 s to stop."""
    try:
        page.wait_for_function(f"() => ({CHART_TEXT_CUT})().length === 0", timeout=5_000, polling=200)
    except PlaywrightTimeout:
        pass  # the caller's assertion names what is still cut
    return page.evaluate(CHART_TEXT_CUT)




def check_phone(page, url: str, shot) -> None:
    """Load ``url`` in ``page`` at 390 px wide and check that nothing is wider than the screen and every formula fits; a
    full-page screenshot goes to ``shot``.  The page is loaded at that width: a tab narrowed after its page opened is not
    the same (the landing page's wishlist grid kept a width that no longer fit, 2026-12-05)."""
    page.bring_to_front()  # tests/e2e/conftest.py: only the front tab runs as one a person looks at
    page.set_viewport_size(PHONE)
    load(page, url)
    assert page.locator("[data-testid='stException']").count() == 0
    try:  # under load a formula may be laid out once more after fonts.ready (it read 2 px wide once, 3 of 3 fine alone)
        page.wait_for_function(FORMULAS_FIT, timeout=5_000, polling=100)
    except PlaywrightTimeout:
        pass  # the assertion below names the formulas that still do not fit
    fit = page.evaluate(OVERFLOW)
    assert fit["page"] <= PHONE["width"] and fit["main"] <= fit["client"] + 1, fit
    assert not fit["bad"], fit["bad"]
    assert not fit["formulas"], fit["formulas"]
    assert not (cut := chart_text_cut(page)), cut
    assert not (wide := page.evaluate(CHART_SCROLLS)), wide
    full_screenshot(page, shot, PHONE["width"])


def check_dark(page, shot) -> None:
    """The page in the dark theme (the app follows the system setting) at desktop width: the dark background, text
    at 3:1 or more against what is behind it; a full-page screenshot goes to ``shot``."""
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.wait_for_timeout(800)
    bg = page.evaluate("() => getComputedStyle(document.querySelector(\"[data-testid='stApp']\")).backgroundColor")
    assert sum(int(x) for x in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3]) < 200, f"not the dark theme: {bg}"
    assert page.evaluate(CONTRAST) == []
    assert page.evaluate(TABLES) == []
    assert not (cut := chart_text_cut(page)), cut
    full_screenshot(page, shot, 1400)
