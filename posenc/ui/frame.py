"""The frame every page shares: title and intro, charts with exports, "show the code",
"link to this view", exercises, and notes about URL parameters.

A page calls ``header`` first, then draws; app.py calls ``finish_run`` after the page so the link
(which needs every control's value) and the unknown-parameter note are always there.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from posenc.io import export
from posenc.io._limits import EXPORT_MAX_BYTES, export_plan, fit_export
from posenc.ui import compat, controls, md
from posenc.ui.cache import compute_slot
from posenc.ui.pages import HOME, PAGE_BY_PATH, sections

_FRAME = "_posenc_frame"
_EXPORTS = "_posenc_exports"  # session state: {chart key: what its export buttons need}, replaced every run


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
    info = PAGE_BY_PATH[path]
    top = st.container(horizontal=True, vertical_alignment="bottom")
    top.title(info.title, anchor=False)
    slot = top.empty()
    st.markdown(intro)
    st.session_state[_FRAME] = {"path": path, "slot": slot}


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
    return f"{root}/{info.url_path}" + (f"?{query}" if query else "")


def finish_run() -> None:
    """Fill the link slot and note URL parameters no control on this page knows."""
    frame = st.session_state.get(_FRAME)
    if frame is not None:
        try:
            base = st.context.url
        except Exception:  # pragma: no cover - no context outside a session
            base = None
        link = view_link(frame["path"], base)
        with frame["slot"].popover("Link to this view", icon=":material/link:"):
            st.caption("Copy this link to reopen the page with every control as it is now.")
            st.code(link, language=None, wrap_lines=True)
        st.session_state.pop(_FRAME, None)
    known = set(controls.bound_values())
    try:
        present = list(st.query_params.keys())
    except Exception:  # pragma: no cover
        present = []
    unknown = [k for k in present if k not in known and not k.startswith("embed")]
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
) -> None:
    """Draw an Altair chart, its caption, and an Export menu (PNG, SVG, CSV, .npy).

    PNG and SVG are rendered only when clicked (download_button with a callable).  ``arrays``
    maps a file name to an array, or to a zero-argument function that computes it -- then the
    full array (e.g. an (n, d) encoding the chart only samples) is built only when clicked.
    A single .npy export holds at most EXPORT_MAX_BYTES (32 MiB) -- the server keeps the file in
    memory until the browser has fetched it -- so a larger array is exported as float32, and beyond
    that with every k-th entry along each axis (``posenc.io._limits.fit_export``; the .npy header
    holds the shape).
    """
    st.altair_chart(ch, width=width, key=f"chart_{key}")
    row = st.container(horizontal=True, vertical_alignment="center")
    if caption:
        row.caption(caption)
    # The buttons' callables hold only a weak reference: the chart and its data live in this session's
    # state.  Streamlit keeps the download callables of a closed tab's session after it lets the
    # session go (streamlit 1.67), and a strong reference would keep every closed tab's chart data.
    ref = _hold(key, (ch, data, dict(arrays or {})))
    with row.popover("Export", icon=":material/download:"):
        st.download_button("PNG (for slides)", data=lambda: export.chart_png(_held(ref)[0]), file_name=f"{key}.png",
                           mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/image:")
        st.download_button("SVG (vector)", data=lambda: export.chart_svg(_held(ref)[0]), file_name=f"{key}.svg",
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


class _Held:
    """What one chart's export buttons need, owned by the session (the buttons keep a weak reference)."""

    __slots__ = ("value", "__weakref__")

    def __init__(self, value):
        self.value = value


def _hold(key: str, value) -> weakref.ref:
    held = _Held(value)
    st.session_state.setdefault(_EXPORTS, {})[key] = held
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


def show_code(*fns: Callable, label: str = "Show the code") -> None:
    """An expander with the source of the posenc functions that produced this page's numbers."""
    with st.expander(label, icon=":material/code:"):
        st.caption("The exact posenc source that computed the numbers and charts above.")
        for fn in fns:
            try:
                src = inspect.getsource(fn)
            except (OSError, TypeError):  # pragma: no cover - builtins have no source
                continue
            st.markdown(f"`{fn.__module__}.{fn.__qualname__}`")
            st.code(src, language="python")


def exercise(
    key: str,
    question: str,
    *,
    answer,
    explanation: str,
    options: list[str] | None = None,
    tolerance: float = 0.0,
    default=None,
) -> None:
    """A "predict, then reveal" question whose answer was computed by posenc.

    Numeric answers take a number input (correct within ``tolerance``); ``options`` gives a
    multiple choice instead.  The reveal toggle is not bound to the URL, so a shared link does
    not give the answer away.
    """
    with st.container(border=True):
        st.markdown(f":material/quiz: **Predict, then reveal.** {question}")
        if options is not None:
            guess = st.radio("Your prediction", options, index=None, key=f"ex_{key}_guess", horizontal=True)
        else:
            guess = st.number_input("Your prediction", value=default, key=f"ex_{key}_guess", placeholder="type a number")
        if st.toggle("Reveal the answer", key=f"ex_{key}_reveal"):
            if guess is None:
                verdict = ""
            elif options is not None:
                verdict = ":green[Right.] " if guess == answer else f":orange[Not quite] (you said {guess}). "
            else:
                ok = abs(float(guess) - float(answer)) <= tolerance
                verdict = ":green[Right.] " if ok else f":orange[Not quite] (you said {guess:g}). "
            shown = answer if isinstance(answer, str) else f"{answer:g}"
            st.markdown(f"{verdict}**Answer: {shown}.** {explanation}")
