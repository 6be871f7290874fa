"""Sections that rerun alone: a page part whose controls drive only that part.

``@section(PATH)`` on a function that draws one part of a page (its controls, its views, its
charts) makes it a Streamlit fragment (``st.fragment``): moving one of its controls reruns and
resends only that part, not the whole page.  What the page frame does once per run is kept right
for a section's own rerun:

- the exercises inside the section turn their reveal off when one of the page's bound controls
  changed (``quiz._reset_quizzes``, limited to this section's exercises: the others are not
  redrawn), and the state the next full run compares against is brought up to date;
- the "Link to this view" box follows the address bar, which every bound control writes to
  (``frame._LIVE_LINK``).

A section may also wait in a box of its own (``section(path, box=(label, key))``): a lazy expander (``when_open``)
whose content runs only while it is open, so a first paint and every step of the page's own controls skip it; opening
or closing it reruns the section alone.  A link that sets one of its controls (``opens_with``) opens it.

Imports go one way: ``posenc.ui.state`` (what the frame, the sections and the exercises share) <- ``quiz``
<- ``frame``, and ``state``, ``quiz`` <- this module <- ``frame`` (which re-exports ``when_open`` to the pages).

A section receives what it needs from the rest of the page as arguments (a section's rerun
repeats the arguments of the page's last full run) and must not feed anything drawn outside it:
values it computes stay inside -- unless it reruns the whole page (``st.rerun``) on its own rerun
whenever what it feeds would change (the lab's Train section: a configuration trained here, or the
notice that it is not, changes the figures above it; any other setting reruns the section alone).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import nullcontext

import streamlit as st

from posenc.ui import ahead, controls, quiz, runclock
from posenc.ui.state import IN_SECTION as _IN_SECTION
from posenc.ui.state import SECTIONS as _SECTIONS
from posenc.ui.state import full_run_frame, in_section, note_exercise  # noqa: F401 (in_section, note_exercise: re-exported)


def section(path: str, *, box: tuple[str, str] | None = None, opens_with: Sequence[str] = ()) -> Callable[[Callable], Callable]:
    """Decorator: the function draws one section of page ``path`` and reruns alone (st.fragment).  With ``box``
    (label, key) it draws inside a box of its own that computes only while open (``when_open``, ``opens_with`` the URL
    keys of the controls inside): while the box is closed the function does not run, and returns None."""

    def wrap(fn: Callable) -> Callable:
        name = f"{path}:{fn.__qualname__}"

        @st.fragment
        @functools.wraps(fn)
        def run(*args, **kwargs):
            full_run = full_run_frame() is not None  # the page frame is open only during a full run
            quizzes = st.session_state.setdefault(_SECTIONS, {}).setdefault(name, [])
            if full_run:
                quizzes.clear()
            else:  # the frame's own reset, limited to the exercises this section redraws
                quiz._reset_quizzes(path, only=quizzes)
            st.session_state[_IN_SECTION] = name
            try:
                with runclock.own_rerun("section", name), (nullcontext() if full_run else ahead.drawing()):
                    if box is None:
                        return fn(*args, **kwargs)  # what the page's full run takes from it (a section's own rerun drops it)
                    if (opened := when_open(box[0], key=box[1], icon=":material/calculate:", opens_with=opens_with)) is None:
                        return None
                    with opened:
                        return fn(*args, **kwargs)
            finally:
                st.session_state.pop(_IN_SECTION, None)
                if not full_run:
                    ahead.note_values()
                    ahead.release()
                    last = st.session_state.get(quiz._QUIZ)
                    if last and last["page"] == path:
                        last["controls"] = quiz._control_state(controls.bound_values())

        return run

    return wrap


def when_open(label: str, *, key: str, icon: str | None = None, opens_with: Sequence[str] = ()):
    """An expander whose content is drawn only while it is open (Streamlit's lazy expander: opening or closing it
    reruns the page, or the section it sits in): the box to draw into, or None while it is closed.  For what a page
    keeps at hand but does not show by default -- drawn closed, it would cost every first paint and every step that
    changes it (RoPE's 64-row pair table: ~320 Markdown cells; the lab's attention maps, RoPE's variants).

    ``opens_with``: the URL keys of the controls inside; a link that sets one of them opens the box (until the reader
    closes it), so a shared view of what is inside reopens as it was.  Read once per session: the box's ``expanded``
    must not change between runs (a control inside that leaves its default writes its key to the address bar, and a
    new ``expanded`` made Streamlit draw the box anew, closed, under the reader's hand)."""
    linked = f"_posenc_linked_{key}"
    if linked not in st.session_state:
        try:
            st.session_state[linked] = any(k in st.query_params for k in opens_with)
        except Exception:  # pragma: no cover - no query string outside a script run
            st.session_state[linked] = False
    box = st.expander(label, expanded=st.session_state[linked], icon=icon, key=key, on_change="rerun")
    return box if box.open else None
