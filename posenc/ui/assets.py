"""What the page frame puts in the browser: shared CSS and two small scripts (st.html)."""

# Shared CSS (an st.html of style tags takes no space on the page).  On a phone the formulas
# shrink, and a formula or fixed-width chart wider than the screen scrolls inside its own box
# instead of being cut or widening the page.
CSS = """<style>
.katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; padding: 2px 4px; }
[data-testid="stVegaLiteChart"] { max-width: 100%; overflow-x: auto; overflow-y: hidden; }
@media (max-width: 640px) {
  .katex-display > .katex { font-size: 0.9em; }
  [data-testid="stMetricValue"] { font-size: 1.6rem; }
}
</style>"""

# A formula wider than its column scales down to fit (at least to 55 % of its size; past that it
# scrolls inside its own box): measured in the browser, re-run on resize and on every redraw.
FIT_FORMULAS = """<script>
(() => {
  if (window.__posencFit) return;
  window.__posencFit = true;
  const fit = () => {
    for (const box of document.querySelectorAll(".katex-display")) {
      const tex = box.firstElementChild, column = box.closest("[data-testid='stMarkdown']");
      if (!tex || !column) continue;
      tex.style.fontSize = "";
      const room = column.clientWidth - 12, need = tex.scrollWidth, px = parseFloat(getComputedStyle(tex).fontSize);
      if (need > room && room > 0) tex.style.fontSize = (px * Math.max(0.55, room / need)).toFixed(2) + "px";
    }
  };
  let queued = false;
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; fit(); }); } };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true});
  window.addEventListener("resize", later);
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
