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
from posenc.ui.assets import CLIENT_PARAMS as _CLIENT_PARAMS
from posenc.ui.assets import CSS as _CSS
from posenc.ui.assets import FIT_FORMULAS as _FIT_FORMULAS
from posenc.ui.assets import LIVE_LINK as _LIVE_LINK
from posenc.ui.cache import compute_slot
from posenc.ui.pages import HOME, PAGE_BY_PATH, PAGES, sections

_FRAME = "_posenc_frame"
_EXPORTS = "_posenc_exports"  # session state: {chart key: what its export buttons need}, replaced every run
_QUIZ = "_posenc_quiz"  # {"page", "controls": {key: widget state}, "quizzes": [keys]} of the previous run
HIDDEN = "?"

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
    st.session_state[_FRAME] = {"path": path, "slot": slot, "quizzes": []}


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
    where = "" if path == HOME else info.url_path  # the landing page is served at "/" only
    return f"{root}/{where}" + (f"?{query}" if query else "")


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
    bindings: bool = True,
) -> None:
    """Draw an Altair chart, its caption, and an Export menu (PNG, SVG, CSV, .npy).

    PNG and SVG are rendered only when clicked (download_button with a callable).  ``arrays``
    maps a file name to an array, or to a zero-argument function that computes it -- then the
    full array (e.g. an (n, d) encoding the chart only samples) is built only when clicked.
    A single .npy export holds at most EXPORT_MAX_BYTES (32 MiB) -- the server keeps the file in
    memory until the browser has fetched it -- so a larger array is exported as float32, and beyond
    that with every k-th entry along each axis (``posenc.io._limits.fit_export``; the .npy header
    holds the shape).  ``bindings=False`` hides the chart's in-chart controls (``charts.base.url_param``)
    when another chart of the page shows the same ones.
    """
    # what st.altair_chart sends, converted once per chart built (compat.chart_spec); the other charts' copies of
    # in-chart controls are hidden by CSS and kept in step by CLIENT_PARAMS
    box = st if bindings else st.container(key=f"nobind_{key}")
    box.vega_lite_chart(spec=dict(compat.chart_spec(ch)), width=width, key=f"chart_{key}")
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


def show_code(*fns: Callable, reference: Callable | None = None, check: Mapping | None = None,
              label: str = "Show the code") -> None:
    """An expander with the code behind the page.

    With ``reference`` (a short numpy function written for reading), the first tab shows it and
    ``check`` -- a dict {"what", "settings", "max_diff", "ok"} computed live at the current
    settings -- says whether posenc's fast version equals it; the posenc functions ``fns`` that
    produced the page's numbers sit one click further, in the second tab.  Without a reference
    the expander shows ``fns`` directly.

    The content is drawn only while the expander is open (Streamlit's lazy expander: opening it reruns
    the page, or the section it sits in).  Drawn closed, its syntax highlighting took 0.1-0.35 s of
    every first paint in the browser (RoPE 1.84 -> 1.64 s, the sinusoid 1.81 -> 1.49 s; README,
    Performance 8).
    """
    name = "_".join([label, *(getattr(f, "__name__", "f") for f in fns[:1])])
    box = st.expander(label, icon=":material/code:", key=f"code_{name}", on_change="rerun")
    if not box.open:
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
            if check is not None:
                icon = ":material/check_circle:" if check["ok"] else ":material/error:"
                verdict = ":green[equal]" if check["ok"] else ":red[different]"
                st.markdown(f"{icon} **Checked live** at {check['settings']}: {check['what']} — {verdict}, "
                            f"largest difference {check['max_diff']:.1e}.")
        with full:
            st.caption("The posenc source that computed the numbers and charts above.")
            _internals(fns)


# ----------------------------------------------------------------------------- exercises
def _reveal_key(key: str) -> str:
    return f"ex_{key}_reveal"


def _control_state(bound: Mapping) -> dict:
    """The widget state of every bound control (what the next run compares against)."""
    return {k: st.session_state.get(k) for k in bound}


def _reset_quizzes(path: str, only: list[str] | None = None) -> None:
    """Turn the page's reveals off (``only``: those of these exercises) when a bound control changed
    since the previous run; set before their toggles exist in this run."""
    last = st.session_state.get(_QUIZ)
    if not last or last["page"] != path:
        return
    if {k: st.session_state.get(k) for k in last["controls"]} == last["controls"]:
        return
    for q in last["quizzes"] if only is None else only:
        st.session_state[_reveal_key(q)] = False
        st.session_state[f"ex_{q}_guess"] = None


def revealed(key: str) -> bool:
    """True once the reader has revealed exercise ``key`` (and no control changed since)."""
    return bool(st.session_state.get(_reveal_key(key), False))


_ELSEWHERE = "_posenc_quiz_elsewhere"  # exercise keys whose answer a full run also showed outside the exercise


def _shown_elsewhere(key: str) -> None:
    st.session_state.setdefault(_ELSEWHERE, set()).add(key)


def quiz_value(key: str, text: str) -> str:
    """``text`` once exercise ``key`` is revealed, else "?" (for a metric or cell that holds its answer)."""
    _shown_elsewhere(key)
    return text if revealed(key) else HIDDEN


def quiz_table(key: str, table: pd.DataFrame, cells: list[tuple[int, str]]) -> pd.DataFrame:
    """``table`` with the (row position, column) ``cells`` that hold exercise ``key``'s answer
    hidden until it is revealed: "?" in a text column, an empty cell in a number column (which
    keeps its number format).  The table is copied."""
    _shown_elsewhere(key)
    if revealed(key) or not cells:
        return table
    out = table.copy()
    for row, col in cells:
        j = out.columns.get_loc(col)
        if pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].astype(np.float64)
            out.iloc[row, j] = np.nan
        else:
            out[col] = out[col].astype(object)
            out.iloc[row, j] = HIDDEN
    return out


def quiz(spec: Mapping) -> None:
    """``exercise`` from a view's quiz dict {"key", "question", "answer", "explanation", "tolerance"
    or "options"}."""
    exercise(spec["key"], spec["question"], answer=spec["answer"], explanation=spec["explanation"],
             options=spec.get("options"), tolerance=spec.get("tolerance", 0.0))


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
    not give the answer away, and it turns off whenever a control of the page changes.  Numbers
    elsewhere on the page that give the answer away go through ``quiz_value(key, ...)``.

    Outside a section the exercise is a fragment of its own: typing a guess or revealing reruns and
    resends only the exercise (a whole-page rerun took 0.24-0.33 s in the browser on RoPE and the
    sinusoid, the exercise alone 0.16-0.18 s).  An exercise whose answer the page also shows
    (``quiz_value``, ``quiz_table``; known from earlier in this run or from an earlier run) is drawn as
    part of the page, so revealing it redraws those numbers too; the first time, when its fragment
    learns this only on the reader's click, it asks for a whole-page rerun.
    """
    frame = st.session_state.get(_FRAME)
    if frame is not None:
        frame["quizzes"].append(key)
    from posenc.ui.section import in_section, note_exercise  # section imports this module

    note_exercise(key)
    args = (key, question, answer, explanation, options, tolerance, default)
    if in_section() or key in st.session_state.get(_ELSEWHERE, ()):
        _exercise(*args)
    else:
        _exercise_alone(*args)


@st.fragment
def _exercise_alone(key: str, *args) -> None:
    if st.session_state.get(_FRAME) is None and key in st.session_state.get(_ELSEWHERE, ()):
        st.rerun()  # the exercise's own rerun, and its answer shows elsewhere on the page: redraw the page
    _exercise(key, *args)


def _exercise(key: str, question: str, answer, explanation: str, options, tolerance: float, default) -> None:
    with st.container(border=True):
        st.markdown(f":material/quiz: **Predict, then reveal.** {question}")
        if options is not None:
            guess = st.radio("Your prediction", options, index=None, key=f"ex_{key}_guess", horizontal=True)
        else:
            guess = st.number_input("Your prediction", value=default, key=f"ex_{key}_guess", placeholder="type a number")
        if st.toggle("Reveal the answer", key=_reveal_key(key)):
            if guess is None:
                verdict = ""
            elif options is not None:
                verdict = ":green[Right.] " if guess == answer else f":orange[Not quite] (you said {guess}). "
            else:
                ok = abs(float(guess) - float(answer)) <= tolerance
                verdict = ":green[Right.] " if ok else f":orange[Not quite] (you said {guess:g}). "
            shown = answer if isinstance(answer, str) else f"{answer:g}"
            st.markdown(f"{verdict}**Answer: {shown}.** {explanation}")
        else:
            st.caption("The numbers on this page that give the answer away show “?” until you reveal it.")


# ----------------------------------------------------------------------------- the end of a page
def neighbours(path: str) -> tuple:
    """(previous, next) PageInfo of ``path`` in the dashboard's order (None at either end)."""
    i = [p.path for p in PAGES].index(path)
    return (PAGES[i - 1] if i > 0 else None), (PAGES[i + 1] if i + 1 < len(PAGES) else None)


def page_nav(path: str) -> None:
    """Links to the previous and the next page."""
    prev, nxt = neighbours(path)
    row = st.container(horizontal=True, horizontal_alignment="distribute")
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
    """The closing box of a story page: what it showed and what is still wrong -- claims the view
    computed at the current settings (``{"shows": [...], "wrong": [...]}``; a claim given as (text,
    quiz key) waits for that quiz's reveal) -- then the previous and next pages."""
    with st.container(border=True):
        left, right = st.columns(2)
        left.markdown("**:material/check_circle: What this shows**\n\n" + "\n".join(f"- {_claim(x)}" for x in takeaway["shows"]))
        right.markdown("**:material/report: What is still wrong**\n\n" + "\n".join(f"- {_claim(x)}" for x in takeaway["wrong"]))
    page_nav(path)
