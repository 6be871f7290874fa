"""The spine of every page: a headline at the top, computed at the current settings; a wrap-up at the bottom
(what this shows, what is still wrong or open, where the next page takes it); previous/next in the one order of
posenc/ui/pages.py (the landing page's map shows the same order); and the presenter view (``?present=1``).

``posenc.ui.frame.header`` reserves the headline's slot; ``headline`` (or ``wrap_up``, from its takeaway) fills it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import streamlit as st

from posenc.io import export
from posenc.io.handout import handout_html
from posenc.ui import md
from posenc.ui.assets import PRESENT_PARAM
from posenc.ui.pages import PAGE_BY_PATH, PAGES
from posenc.ui.quiz import revealed
from posenc.ui.state import FRAME as _FRAME

HEADLINE_ICON = ":material/flag:"  # the headline's box (tests find it by this icon)
EXPORTS = "_posenc_exports"  # session state: {chart key: what its export buttons need} (posenc.ui.frame.chart fills it)
HANDOUT = "_posenc_handout"  # session state: the handout builder of the page's last run
WRAP_UP_KEY = "posenc_wrap_up"  # the wrap-up's container (class st-key-posenc_wrap_up in the browser)


def presenting() -> bool:
    """True when the link asks for the presenter view (``?present=1``): no controls, no sidebar, large figures,
    the arrow keys step through the page's sections (posenc.ui.assets.PRESENT)."""
    try:
        return st.query_params.get(PRESENT_PARAM, "") in ("1", "true", "yes")
    except Exception:  # pragma: no cover
        return False


def headline(item) -> None:
    """The page's finding at the current settings, in one sentence, at the top of the page (under the intro).
    ``item`` is a text, or (text, quiz key): the sentence waits for that exercise's reveal."""
    frame = st.session_state.get(_FRAME)
    if frame is None or not item:
        return
    frame["lead"] = _claim(item)
    frame["headline"].info(frame["lead"], icon=HEADLINE_ICON)


# ----------------------------------------------------------------------------- the end of a page
def neighbours(path: str) -> tuple:
    """(previous, next) PageInfo of ``path`` in the dashboard's order (None at either end)."""
    i = [p.path for p in PAGES].index(path)
    return (PAGES[i - 1] if i > 0 else None), (PAGES[i + 1] if i + 1 < len(PAGES) else None)


def page_nav(path: str) -> None:
    """Links to the previous and the next page, in the order of posenc/ui/pages.py (the landing page's map)."""
    prev, nxt = neighbours(path)
    row = st.container(horizontal=True, horizontal_alignment="distribute", key="posenc_page_nav")
    if prev is not None:
        row.page_link(prev.path, label=f"Previous: {prev.title}", icon=":material/arrow_back:")
    if nxt is not None:
        row.page_link(nxt.path, label=f"Next: {nxt.title}", icon=":material/arrow_forward:")


def _claim(item) -> str:
    """A claim, or the note that stands in for it while the quiz whose answer it states is unrevealed."""
    if isinstance(item, (tuple, list)):
        text, quiz = item
        return text if revealed(quiz) else "*One more finding here states the exercise's answer: reveal it first.*"
    return str(item)


def wrap_up(path: str, takeaway: Mapping) -> None:
    """The closing box of every page: what it showed and what is still wrong or open -- claims the view
    computed at the current settings (``{"headline": ..., "shows": [...], "wrong": [...]}``; a claim given as
    (text, quiz key) waits for that quiz's reveal) -- then where the next page takes it, and the previous and
    next pages.  The headline (else the first thing shown) also fills the page's headline at the top, unless
    the page set one (``headline``)."""
    frame = st.session_state.get(_FRAME)
    if frame is not None and frame.get("lead") is None:
        headline(takeaway.get("headline") or (takeaway["shows"][0] if takeaway["shows"] else None))
    _, nxt = neighbours(path)
    with st.container(border=True, key=WRAP_UP_KEY):
        left, right = st.columns(2)
        left.markdown("**:material/check_circle: What this shows**\n\n" + "\n".join(f"- {_claim(x)}" for x in takeaway["shows"]))
        right.markdown("**:material/report: What is still wrong or open**\n\n"
                       + "\n".join(f"- {_claim(x)}" for x in takeaway["wrong"]))
        if nxt is not None:
            st.caption(f":material/arrow_forward: **Next, {md.escape(nxt.title)}:** {md.escape(nxt.summary, limit=None)}")
        _handout_button(path, takeaway)
    page_nav(path)


def _handout_button(path: str, takeaway: Mapping) -> None:
    """A "Handout" download: one printable page of its headline, its first figure (SVG) and its wrap-up, built on click
    from what this run drew (the figure's export; a weak reference, as the Export menus hold theirs)."""
    frame = st.session_state.get(_FRAME) or {}
    drawn = frame.get("charts") or []
    held = (st.session_state.get(EXPORTS) or {}).get(drawn[0]) if drawn else None
    ref = weakref.ref(held) if held is not None else None
    _, nxt = neighbours(path)
    texts = {"title": PAGE_BY_PATH[path].title, "headline": frame.get("lead") or "",
             "shows": [_claim(x) for x in takeaway["shows"]], "wrong": [_claim(x) for x in takeaway["wrong"]],
             "next_page": nxt.title if nxt is not None else None}

    def build() -> bytes:
        chart = ref() if ref is not None else None
        svg = export.chart_svg(chart.value[0]()).decode("utf-8") if chart is not None else None
        if svg is not None and svg.startswith("<?xml"):
            svg = svg[svg.index("?>") + 2:]
        return handout_html(svg=svg, **texts)

    st.session_state[HANDOUT] = build  # this run's handout (tests build it as the button would)
    st.download_button("Handout (one printable page)", data=build, file_name=f"{PAGE_BY_PATH[path].url_path}-handout.html",
                       mime="text/html", key=f"handout_{PAGE_BY_PATH[path].url_path}", on_click="ignore", icon=":material/print:")
