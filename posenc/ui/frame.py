"""The frame every page shares: title and intro, charts with exports, "show the code",
"link to this view", exercises, the closing "what this shows" box with previous/next links,
and notes about URL parameters.

A page calls ``header`` first, then draws; app.py calls ``finish_run`` after the page so the link
(which needs every control's value) and the unknown-parameter note are always there.

Exercises ask before they tell: ``revealed(key)`` is False until the reader turns the exercise's
reveal toggle on, and ``quiz_value(key, text)`` shows "?" in place of a number that gives the
answer away.  When any bound control of the page changes, ``header`` turns every reveal of the
page off again (the answer of the new question has not been asked yet).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from posenc.charts import raster
from posenc.io import export
from posenc.io._limits import EXPORT_MAX_BYTES, export_plan, fit_export
from posenc.ui import compat, controls, md
from posenc.ui.assets import CLIENT_PARAMS as _CLIENT_PARAMS
from posenc.ui.assets import CSS as _CSS
from posenc.ui.assets import FIT_FORMULAS as _FIT_FORMULAS
from posenc.ui.assets import LIVE_LINK as _LIVE_LINK
from posenc.ui.assets import PRESENT as _PRESENT
from posenc.ui.assets import PRESENT_PARAM
from posenc.ui.cache import compute_slot
from posenc.ui.pages import HOME, PAGE_BY_PATH, address, sections
from posenc.ui.quiz import _QUIZ, HIDDEN, _control_state, _reset_quizzes, asked_above, exercise, quiz, quiz_table, quiz_value, revealed  # noqa: F401 (pages import these from here)
from posenc.ui.section import when_open
from posenc.ui.spine import EXPORTS, HEADLINE_ICON, WRAP_UP_KEY, headline, neighbours, page_nav, presenting, wrap_up  # noqa: F401 (pages import these from here)
from posenc.ui.state import FRAME as _FRAME

_EXPORTS = EXPORTS  # session state: {chart key: what its export buttons need}, replaced every run

FAVICON = Path(__file__).parent / "favicon.png"  # the sinusoid heatmap in miniature


def navigation() -> dict[str, list]:
    """The st.navigation sections of every page in posenc/ui/pages.py (app.py's router uses it).

    It sets the page config first, with a local favicon: the frontend takes the tab's icon from the
    page config if one arrived before the navigation, else from the page's Material icon -- which it
    fetches from fonts.gstatic.com, and the app makes no request beyond its own server.
    """
    st.set_page_config(page_title="posenc · positional encodings, computed", page_icon=str(FAVICON), layout="wide")
    return {
        section: [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=(p.path == HOME))
                  for p in pages]
        for section, pages in sections().items()
    }


def header(path: str, intro: str) -> None:
    """Title (from the page list) and a two-or-three-sentence intro; reserves the link slot."""
    compat.ensure_routed(navigation)
    _reset_quizzes(path)
    st.html(_CSS)
    st.html(_FIT_FORMULAS + _CLIENT_PARAMS, unsafe_allow_javascript=True)
    info = PAGE_BY_PATH[path]
    top = st.container(horizontal=True, vertical_alignment="bottom")
    top.title(info.title, anchor=False)
    slot = top.empty()
    st.markdown(intro)
    lead = st.empty()  # the headline: one sentence computed at the current settings (``headline``, or ``wrap_up``)
    if presenting():
        st.html(_PRESENT, unsafe_allow_javascript=True)
    st.session_state[_FRAME] = {"path": path, "slot": slot, "quizzes": [], "headline": lead, "lead": None}


def view_link(path: str, base_url: str | None = None) -> str:
    """The URL that reproduces the current view: page path plus every non-default control."""
    info = PAGE_BY_PATH[path]
    pairs: list[tuple[str, str]] = []
    for key, (value, default, url) in controls.bound_values().items():
        if value == default:
            continue
        pairs.extend((key, u) for u in url)
    query = urlencode(pairs)
    root = ""
    if base_url:
        parts = urlsplit(base_url)
        if parts.scheme and parts.netloc:
            root = f"{parts.scheme}://{parts.netloc}"
    return f"{root}/{address(info)}" + (f"?{query}" if query else "")


def finish_run() -> None:
    """Fill the link slot and note URL parameters no control on this page knows."""
    frame = st.session_state.get(_FRAME)
    if frame is not None:
        with frame["slot"].popover("Link to this view", icon=":material/link:"):
            st.caption("Copy this link to reopen the page with every control as it is now.")
            # The link is the address bar (every control is bound to it), written in by the browser as text
            # (textContent: a link value is never parsed as HTML or Markdown), and kept current after a
            # section's own rerun (st.fragment), which cannot redraw this box.  view_link is the same link,
            # built on the server (the landing page is "/", not "/home").
            st.html('<code data-posenc-link style="overflow-wrap:anywhere"></code><br>'
                    '<button type="button" data-posenc-copy style="margin-top:6px">Copy link</button>' + _LIVE_LINK,
                    unsafe_allow_javascript=True)
        st.session_state[_QUIZ] = {"page": frame["path"], "controls": _control_state(controls.bound_values()),
                                   "quizzes": list(frame["quizzes"])}
        st.session_state.pop(_FRAME, None)
    known = set(controls.bound_values())
    try:
        present = list(st.query_params.keys())
    except Exception:  # pragma: no cover
        present = []
    unknown = [k for k in present if k not in known and not k.startswith("embed") and k != PRESENT_PARAM]
    if unknown:
        shown = ", ".join(md.code(k, 30) for k in unknown[:8]) + (f" and {len(unknown) - 8} more" if len(unknown) > 8 else "")
        st.caption(f":material/info: Ignored link parameter(s) this page does not use: {shown}.")
    controls.end_run()


def chart(
    ch: alt.TopLevelMixin,
    *,
    key: str,
    data: pd.DataFrame,
    arrays: Mapping[str, np.ndarray | Callable[[], np.ndarray]] | None = None,
    caption: str | None = None,
    width: str | int = "stretch",
    bindings: bool = True,
    export_title: Sequence[str] = (),
) -> None:
    """Draw an Altair chart, its caption, and an Export menu (PNG, SVG, CSV, .npy).

    PNG and SVG are rendered only when clicked (download_button with a callable).  ``arrays``
    maps a file name to an array, or to a zero-argument function that computes it -- then the
    full array (e.g. an (n, d) encoding the chart only samples) is built only when clicked.
    A single .npy export holds at most EXPORT_MAX_BYTES (32 MiB) -- the server keeps the file in
    memory until the browser has fetched it -- so a larger array is exported as float32, and beyond
    that with every k-th entry along each axis (``posenc.io._limits.fit_export``; the .npy header
    holds the shape).  ``bindings=False`` hides the chart's in-chart controls (``charts.base.url_param``)
    when another chart of the page shows the same ones.  ``export_title`` (a title, then subtitle lines) titles the PNG
    and SVG: what the page says beside the chart (the settings it was measured at) and a slide must carry, kept out of
    the drawn spec so that a new setting only swaps the chart's data.  Without one, ``link_title()``: the page's title and
    its settings as its link carries them.
    """
    box = st if bindings else st.container(key=f"nobind_{key}")
    _draw(box, ch, key=key, width=width)
    _export_row(key, _titled(lambda: ch, export_title or link_title()), data, arrays, caption)


LINE = 100  # characters of a settings line under an export's title


def link_title() -> tuple[str, ...]:
    """An export's title when the page gives none: the page's title, then its controls as its link sets them (``key=value``,
    every control bound so far in this run; ``_link_value``), in lines of at most LINE characters."""
    info = PAGE_BY_PATH.get((st.session_state.get(_FRAME) or {}).get("path"))
    if info is None:
        return ()
    parts = [f"{k}={_link_value(url)}" for k, (_, _, url) in controls.bound_values().items()]
    lines: list[str] = []
    for part in (["settings (as in the page's link):"] + parts) if parts else []:
        if lines and len(lines[-1]) + 3 + len(part) <= LINE:
            lines[-1] += (" " if lines[-1].endswith(":") else " · ") + part
        else:
            lines.append(part)
    return (f"posenc · {info.title}", *lines)


def _link_value(url: list[str]) -> str:
    """A control's link value(s) for ``link_title``: a list's first values within 60 characters and how many more; a
    text past 40 characters cut there, saying how long it was."""
    if len(url) > 1:
        shown = [v for i, v in enumerate(url) if len(",".join(url[: i + 1])) <= 60] or url[:1]
        return ",".join(shown) + (f" and {len(url) - len(shown)} more" if len(url) > len(shown) else "")
    v = url[0] if url else ""
    return v if len(v) <= 40 else f"{v[:39]}… ({len(v):,} characters)"


def _titled(whole: Callable[[], alt.TopLevelMixin], export_title: Sequence[str]) -> Callable[[], alt.TopLevelMixin]:
    """``whole`` with ``export_title`` (a title, then subtitle lines) on top, if one is given; each line as one visible
    line (``md.one_line``): a typed text, a link value or an uploaded name may carry control or bidi characters."""
    title, *lines = (md.one_line(t, None) for t in export_title or ("",))
    return (lambda: whole().properties(title=alt.TitleParams(title, subtitle=lines, anchor="start"))) if title else whole


def chart_grid(
    parts: Sequence[alt.TopLevelMixin],
    *,
    whole: Callable[[], alt.TopLevelMixin],
    key: str,
    data: pd.DataFrame,
    arrays: Mapping[str, np.ndarray | Callable[[], np.ndarray]] | None = None,
    caption: str | None = None,
    columns: int = 2,
    width: str = "content",
    export_title: Sequence[str] = (),
) -> None:
    """Small multiples drawn as separate charts, ``columns`` side by side (one under the other on a phone), with one
    caption and one Export menu for them all: PNG and SVG of ``whole()`` (the panels as one chart, built only when
    clicked), CSV of ``data``, .npy of ``arrays`` (as in ``chart``); ``width`` as ``st.vega_lite_chart`` takes it
    ("stretch" for panels whose spec is as wide as its container).  A control that changes one panel's data then
    repaints that panel alone; the others are sent unchanged and stay as they are (docs/performance.md, section 8).
    ``export_title`` titles the PNG and SVG, as in ``chart``."""
    for start in range(0, len(parts), columns):
        for col, (i, part) in zip(st.columns(columns), enumerate(parts[start:start + columns], start)):
            _draw(col, part, key=key, panel=i, width=width)
    _export_row(key, _titled(whole, export_title or link_title()), data, arrays, caption)


def _draw(box, ch: alt.TopLevelMixin, *, key: str, width: str | int, panel: int | None = None) -> None:
    # what st.altair_chart sends, converted once per chart built (compat.chart_spec); the other charts' copies of
    # in-chart controls are hidden by CSS and kept in step by CLIENT_PARAMS
    spec = raster.with_renderer(dict(compat.chart_spec(ch)))
    # The chart's key travels in the spec (Streamlit sends an element's key only with selections on): page tests find
    # a chart by it (tests/app/apphelpers.charts).  Vega-Lite ignores usermeta; Streamlit reads only its embedOptions.
    mark = {"posenc_key": key} if panel is None else {"posenc_key": key, "posenc_panel": panel}
    spec = {**spec, "usermeta": {**(spec.get("usermeta") or {}), **mark}}
    box.vega_lite_chart(spec=spec, width=width, key=f"chart_{key}" if panel is None else f"chart_{key}_{panel}")


def _export_row(key: str, whole: Callable[[], alt.TopLevelMixin], data: pd.DataFrame,
                arrays: Mapping[str, np.ndarray | Callable[[], np.ndarray]] | None, caption: str | None) -> None:
    """The caption and the Export menu under a chart (``whole()``: the chart its PNG and SVG draw)."""
    row = st.container(horizontal=True, vertical_alignment="center")
    if caption:
        row.caption(caption)
    # The buttons' callables hold only a weak reference: the chart and its data live in this session's
    # state.  Streamlit keeps the download callables of a closed tab's session after it lets the
    # session go (streamlit 1.67), and a strong reference would keep every closed tab's chart data.
    ref = _hold(key, (whole, data, dict(arrays or {})))
    with row.popover("Export", icon=":material/download:"):
        st.download_button("PNG (for slides)", data=lambda: export.chart_png(_held(ref)[0]()), file_name=f"{key}.png",
                           mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/image:")
        st.download_button("SVG (vector)", data=lambda: export.chart_svg(_held(ref)[0]()), file_name=f"{key}.svg",
                           mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/polyline:")
        st.download_button("CSV (chart data)", data=lambda: export.frame_csv(_held(ref)[1]), file_name=f"{key}.csv",
                           mime="text/csv", key=f"csv_{key}", on_click="ignore", icon=":material/table:")
        for name, arr in (arrays or {}).items():
            label = f"{name}.npy" if callable(arr) else f"{name}.npy {tuple(np.shape(arr))}"
            if not callable(arr):
                note = export_plan(np.shape(arr), np.asarray(arr).dtype)[2]
                label += f" ({note.split(' (')[0]})" if note else ""
            st.download_button(label, data=lambda name=name: _npy(_held(ref)[2][name]),
                               file_name=f"{name}.npy", mime="application/octet-stream", key=f"npy_{key}_{name}",
                               on_click="ignore", icon=":material/data_array:")
        if arrays:
            st.caption(f"A .npy file holds at most {EXPORT_MAX_BYTES // 2**20} MiB: a larger array comes as float32, then "
                       "with every k-th row and column; its header gives the shape.")


def table(df: pd.DataFrame, *, key: str, formats: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
          height: int | None = None, missing: str = "?", links: Mapping[str, str] | None = None) -> None:
    """A small table that changes with the controls, drawn with the rest of a rerun, in a container keyed
    ``table_<key>`` (tests find it by that key): one Markdown table (a GFM table, numbers right-aligned).  Streamlit's
    st.table renders every cell as a Markdown element of its own (the sinusoid's page held 265): one table each cut the
    browser's work on a first paint there from 1.72-1.91 to 1.46-1.48 s (docs/performance.md, "Changed later on
    2026-12-06"); a data grid (``st.dataframe``) draws its cells on a canvas with the rest of the run, but rebuilds its
    accessibility table 200 ms later (glide-data-grid's debounce), so a screen reader hears the new values last.  With ``height``
    (px) a long table scrolls in a box of that height under a sticky header.  ``formats`` maps a column to a format
    spec (".4f", ",", ".6g"; else ``str``); ``labels`` renames columns for display; a missing value (NaN, None: an
    exercise's hidden cell) prints ``missing``.  Every cell is escaped (``md.escape``) and shows as its text; a header
    (the dashboard's own label) is only kept from starting a block (``md.block_safe``); ``links`` maps a column of the
    dashboard's own paths ("/lab") to the link text shown."""
    formats = dict(formats or {})
    labels = dict(labels or {})
    links = dict(links or {})

    def link(text: str):
        def fmt(v) -> str:
            path = str(v)
            if not path.startswith("/") or any(ch in path for ch in "()[] <>"):
                raise ValueError(f"links must be the dashboard's own paths, got {path!r}")
            return f"[{md.escape(text, limit=None)}]({path})"
        return fmt

    def shown(spec: str | None):
        def fmt(v) -> str:
            if v is None or (isinstance(v, float) and v != v):
                return missing
            return md.escape(format(v, spec) if spec else str(v), limit=None)
        return fmt

    # headers are the dashboard's own labels (never text from outside): Markdown, kept from starting a block ("+ PE")
    head = {c: md.block_safe(labels.get(c, c)) for c in df.columns}
    cells = {c: link(links[c]) if c in links else shown(formats.get(c)) for c in df.columns}
    # a scrolling table's box is the container (keyed table_scroll_<key>: assets.CSS lets its header stick there)
    with st.container(key=f"table_{'scroll_' if height is not None else ''}{key}", height=height or "content"):
        right = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) and c not in links
                 for c in df.columns]
        lines = [_row(head[c] for c in df.columns), "|" + "|".join("---:" if r else "---" for r in right) + "|"]
        lines += [_row(cells[c](v) for c, v in zip(df.columns, values)) for values in df.itertuples(index=False, name=None)]
        st.markdown("\n".join(lines))


def _row(cells) -> str:
    """One line of a GFM table: a pipe inside a cell is escaped (GFM's one table escape); an empty cell is kept."""
    return "| " + " | ".join(str(c).replace("|", "\\|") or " " for c in cells) + " |"


class _Held:
    """What one chart's export buttons need, owned by the session (the buttons keep a weak reference)."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, value):
        self.value = value


def _hold(key: str, value) -> weakref.ref:
    held = _Held(value)
    st.session_state.setdefault(_EXPORTS, {})[key] = held
    if (run := st.session_state.get(_FRAME)) is not None:
        run.setdefault("charts", []).append(key)  # drawn in this run, in order: the handout's figure is the first
    return weakref.ref(held)


def _held(ref: weakref.ref):
    held = ref()
    if held is None:  # the session (or this run of the page) is gone: nothing to export
        raise RuntimeError("this view is no longer open; reload the page to export it")
    return held.value


def _npy(arr) -> bytes:
    """The .npy bytes of ``arr`` (or of what ``arr()`` computes, in a computation slot): at most EXPORT_MAX_BYTES of data."""
    with compute_slot():
        return export.array_npy(fit_export(arr() if callable(arr) else arr)[0])


def _source(fn: Callable) -> str | None:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):  # pragma: no cover - builtins have no source
        return None


def _internals(fns: tuple[Callable, ...]) -> None:
    for fn in fns:
        src = _source(fn)
        if src is None:  # pragma: no cover
            continue
        st.markdown(f"`{fn.__module__}.{fn.__qualname__}`")
        st.code(src, language="python")


def show_code(*fns: Callable, reference: Callable | None = None, check: Mapping | Callable[[], Mapping | None] | None = None,
              label: str = "Show the code") -> None:
    """An expander with the code behind the page.

    With ``reference`` (a short numpy function written for reading), the first tab shows it and
    ``check`` -- a dict {"what", "settings", "max_diff", "ok"}, or a function returning it (called only
    while the panel is open, so a closed panel computes nothing), computed live at the current
    settings -- says whether posenc's fast version equals it; the posenc functions ``fns`` that
    produced the page's numbers sit one click further, in the second tab.  Without a reference
    the expander shows ``fns`` directly.

    The content is drawn only while the expander is open (Streamlit's lazy expander: opening it reruns
    the page, or the section it sits in).  Drawn closed, its syntax highlighting took 0.1-0.35 s of
    every first paint in the browser (RoPE 1.84 -> 1.64 s, the sinusoid 1.81 -> 1.49 s;
    docs/performance.md, section 8).
    """
    name = "_".join([label, *(getattr(f, "__name__", "f") for f in fns[:1])])
    box = when_open(label, key=f"code_{name}", icon=":material/code:")
    if box is None:
        return
    with box:
        if reference is None:
            st.caption("The exact posenc source that computed the numbers and charts above.")
            _internals(fns)
            return
        short, full = st.tabs(["The idea, in a few lines of numpy", f"posenc's own code ({len(fns)} functions)"])
        with short:
            st.caption("A reference implementation written to be read, not to be fast. posenc computes the same thing "
                       "faster (and checks its arguments); the check below runs both at the current settings.")
            st.code(_source(reference) or "", language="python")
            if callable(check):
                check = check()
            if check is not None:
                icon = ":material/check_circle:" if check["ok"] else ":material/error:"
                verdict = ":green[equal]" if check["ok"] else ":red[different]"
                st.markdown(f"{icon} **Checked live** at {check['settings']}: {check['what']} — {verdict}, "
                            f"largest difference {check['max_diff']:.1e}.")
        with full:
            st.caption("The posenc source that computed the numbers and charts above.")
            _internals(fns)
