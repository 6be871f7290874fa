"""What the page frame puts in the browser: shared CSS and two small scripts (st.html)."""

# Shared CSS (an st.html of style tags takes no space on the page).  On a phone the formulas
# shrink, and a formula or fixed-width chart wider than the screen scrolls inside its own box
# instead of being cut or widening the page.
CSS = """<style>
.katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; padding: 2px 4px; }
[data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
[class*="st-key-nobind_"] form.vega-bindings { display: none !important; }
/* a metric's label wraps instead of ending in "…": a long label (scheme and setting) is read whole on a phone */
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; height: auto !important; }
/* posenc.ui.frame.table: one Markdown table, set like st.table (14 px, plain headers at 70 % of the text colour),
   scrolling sideways in its own box when wider than the column (a phone) instead of being cut */
[class*="st-key-table_"] table { display: block; max-width: 100%; overflow-x: auto; font-size: 0.875rem; margin-bottom: 1rem; }
[class*="st-key-table_"] th { font-weight: 400; color: color-mix(in srgb, currentColor 70%, transparent); }
[class*="st-key-table_"] th, [class*="st-key-table_"] td { padding: 0.25rem 0.5rem; line-height: 1.5; }
/* a table with a height (keyed table_scroll_ and its key): its container scrolls both ways and the header stays on top, on the
   page's own background (--posenc-bg, read from the app by FIT_FORMULAS's script, so it follows the theme) */
[class*="st-key-table_scroll_"] { padding-top: 0; }  /* the header sticks to the box's top edge, not 15 px below it */
[class*="st-key-table_scroll_"] table { overflow: visible; }
[class*="st-key-table_scroll_"] thead th { position: sticky; top: 0; z-index: 1; background: var(--posenc-bg, transparent); }
@media (max-width: 640px) {
  .katex-display > .katex { font-size: 0.9em; }
  [data-testid="stMetricValue"] { font-size: 1.6rem; }
}
</style>"""

# A formula wider than its column scales down to fit (at least to 55 % of its size; past that it
# scrolls inside its own box): measured in the browser, re-run on resize, when a formula is drawn or
# redrawn, when a font arrives, and when a formula or its box changes size (a ResizeObserver: a
# scrollbar appearing narrows the column without a window resize; a late KaTeX font widens the formula
# without a DOM change).  All formulas are reset, then all measured, then all set: one layout for the
# page instead of one per formula; and the changes inside charts (thousands per redraw) do not refit.
FIT_FORMULAS = """<script>
(() => {
  if (window.__posencFit) return;
  window.__posencFit = true;
  let sizes = null;  // every formula and its box, watched: a font arriving or a column narrowing refits it
  // the theme's background as --posenc-bg, for a sticky table header (assets.CSS): read at every fit and twice a
  // second, since a theme switch (the system's or Streamlit's settings) may restyle the app without a new element
  const syncBg = () => {
    const app = document.querySelector("[data-testid='stApp']"), root = document.documentElement.style;
    const bg = app && getComputedStyle(app).backgroundColor;
    if (bg && root.getPropertyValue("--posenc-bg") !== bg) root.setProperty("--posenc-bg", bg);
  };
  setInterval(syncBg, 500);
  const fit = () => {
    syncBg();
    const found = [];
    for (const box of document.querySelectorAll(".katex-display")) {
      const tex = box.firstElementChild, column = box.closest("[data-testid='stMarkdown']");
      if (!tex || !column) continue;
      if (sizes) { sizes.observe(box); sizes.observe(tex); }
      tex.style.fontSize = "";
      found.push([tex, column]);
    }
    const plan = found.map(([tex, column]) => [tex, column.clientWidth - 12, tex.scrollWidth, parseFloat(getComputedStyle(tex).fontSize)]);
    for (const [tex, room, need, px] of plan) {
      if (need > room && room > 0) tex.style.fontSize = (px * Math.max(0.55, room / need)).toFixed(2) + "px";
    }
  };
  let queued = false;
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; fit(); }); } };
  const inChart = (node) => {
    const el = node && (node.nodeType === 1 ? node : node.parentElement);
    return !!(el && el.closest("[data-testid='stVegaLiteChart']"));
  };
  if (window.ResizeObserver) sizes = new ResizeObserver(later);
  new MutationObserver((records) => { if (records.some((r) => !inChart(r.target))) later(); })
    .observe(document.body, {childList: true, subtree: true});
  window.addEventListener("resize", later);
  // KaTeX's fonts arrive after the first layout and widen the formula without a DOM change: fit again then
  if (document.fonts) { document.fonts.addEventListener("loadingdone", later); document.fonts.ready.then(later); }
  later();
})();
</script>"""


# The address bar, minus Streamlit's embed options, is the link to the view: every control is bound to it.
LIVE_LINK = """<script>
(() => {
  const current = () => {
    const u = new URL(window.location.href);
    for (const k of [...u.searchParams.keys()]) { if (k.startsWith("embed")) u.searchParams.delete(k); }
    return u.toString().replace(/\\?$/, "");
  };
  const sync = () => document.querySelectorAll("code[data-posenc-link]").forEach((el) => {
    const link = current();
    if (el.textContent !== link) el.textContent = link;
  });
  sync();
  document.querySelectorAll("button[data-posenc-copy]").forEach((b) => {
    b.onclick = () => { if (navigator.clipboard) { navigator.clipboard.writeText(current()); b.textContent = "Copied"; } };
  });
  if (!window.__posencLink) { window.__posencLink = setInterval(sync, 300); }
})();
</script>"""


# In-chart controls (posenc.charts.base.url_param: a Vega-Lite parameter url_<key> bound to radio buttons):
# a choice repaints in the browser at once.  This script then (1) sets the same parameter in every other
# chart of the page (a page shows one set of buttons; the other charts' copies are hidden by CSS), (2) writes
# <key>=<value> into the address bar (the link to the view), (3) when the hand has stopped for 0.9 s, has
# Streamlit rerun the page from the address bar, as on a history step, so the server (exports, the next
# rerun's charts) knows the choice; and (4) gives a chart redrawn from an older spec the choice back.
CLIENT_PARAMS = """<script>
(() => {
  if (window.__posencClient) return;
  const S = window.__posencClient = {path: location.pathname, values: {}, timer: null, quiet: false};
  const PREFIX = "url_";
  const values = () => { if (S.path !== location.pathname) { S.path = location.pathname; S.values = {}; } return S.values; };
  const inputsOf = (name) => document.querySelectorAll('.vega-bind input[name="' + name + '"], .vega-bind select[name="' + name + '"]');
  const valueOf = (name) => { for (const el of inputsOf(name)) { if (el.type !== "radio" || el.checked) return String(el.value); } return null; };
  const apply = (name, v) => {
    for (const el of inputsOf(name)) {
      const radio = el.type === "radio";
      if (radio ? (el.checked || String(el.value) !== v) : String(el.value) === v) continue;
      if (radio) el.checked = true; else el.value = v;
      S.quiet = true;
      try { el.dispatchEvent(new Event(radio ? "change" : "input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); }
      finally { S.quiet = false; }
    }
  };
  const chosen = (ev) => {
    const el = ev.target;
    if (S.quiet || !el || !el.name || !el.name.startsWith(PREFIX) || !el.closest || !el.closest(".vega-bind")) return;
    if (el.type === "radio" && !el.checked) return;
    const v = String(el.value), key = el.name.slice(PREFIX.length);
    values()[key] = v;
    apply(el.name, v);
    const u = new URL(location.href);
    if (u.searchParams.get(key) !== v) { u.searchParams.set(key, v); history.replaceState(history.state, "", u); }
    clearTimeout(S.timer);
    S.timer = setTimeout(() => window.dispatchEvent(new PopStateEvent("popstate", {state: history.state})), 900);
  };
  document.addEventListener("change", chosen, true);
  document.addEventListener("input", chosen, true);
  let queued = false;
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      for (const [key, v] of Object.entries(values())) { if (valueOf(PREFIX + key) !== null && valueOf(PREFIX + key) !== v) apply(PREFIX + key, v); }
    });
  }).observe(document.body, {childList: true, subtree: true});
})();
</script>"""


# The presenter view (a link with ?present=1, posenc.ui.frame.presenting): for a room.  No sidebar, no
# controls, no exports, no code; larger text and figures; the arrow keys (and Page Up / Page Down, a clicker's
# keys) step through the page's sections: the title, each subheader, the wrap-up.  The current stop is marked
# data-posenc-stop="current" (the e2e test reads it) and scrolled to the top of the screen.
PRESENT_PARAM = "present"
PRESENT = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stSlider"], [data-testid="stSelectSlider"],
[data-testid="stSelectbox"], [data-testid="stMultiSelect"], [data-testid="stRadio"], [data-testid="stNumberInput"],
[data-testid="stTextArea"], [data-testid="stTextInput"], [data-testid="stFileUploader"], [data-testid="stCheckbox"],
[data-testid="stButtonGroup"], [data-testid="stExpander"], [data-testid="stPopover"], [data-testid="stDownloadButton"],
[class*="st-key-posenc_page_nav"], form.vega-bindings { display: none !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important; padding: 1.5rem 3rem 90vh !important; font-size: 1.2rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.25rem; }
[data-testid="stVegaLiteChart"] { zoom: 1.3; }
[data-posenc-stop="current"] { outline: 3px solid rgba(0, 114, 178, 0.6); outline-offset: 6px; border-radius: 4px; }
</style>
<script>
(() => {
  const P = window.__posencPresent = window.__posencPresent || {index: 0, path: null};
  if (P.bound) return;
  P.bound = true;
  const stops = () => [...document.querySelectorAll("h1, h2, h3, [class*='st-key-posenc_wrap_up']")]
    .filter((el) => el.offsetParent !== null && !el.closest("[data-testid='stExpander'], [data-testid='stSidebar']"));
  const go = (i) => {
    const all = stops();
    if (!all.length) return;
    if (P.path !== location.pathname) { P.path = location.pathname; P.index = 0; }
    P.index = Math.max(0, Math.min(all.length - 1, i));
    all.forEach((el, j) => { if (j === P.index) el.setAttribute("data-posenc-stop", "current"); else el.removeAttribute("data-posenc-stop"); });
    all[P.index].scrollIntoView({block: "start"});
  };
  P.go = go;
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName))) return;
    if (P.path !== location.pathname) { P.path = location.pathname; P.index = 0; }
    const step = {ArrowRight: 1, ArrowDown: 1, PageDown: 1, " ": 1, ArrowLeft: -1, ArrowUp: -1, PageUp: -1}[ev.key];
    if (step === undefined) return;
    ev.preventDefault();
    go(P.index + step);
  }, true);
})();
</script>"""
