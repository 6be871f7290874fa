"""Two Streamlit behaviours the dashboard works around, in one place, with public API only.

Tested with streamlit 1.67 (``TESTED``); ``tests/app/test_compat.py`` reproduces each behaviour
against the installed Streamlit and fails loudly when it changes, so a fixed upstream bug shows
up as a test to delete rather than a silent workaround.

1. **Deep links on a fresh server.**  A ``pages/`` folder next to the entrypoint puts a fresh
   Streamlit process in its legacy multipage mode until some run calls ``st.navigation``; the
   first session that opens a page URL directly therefore runs that page file alone, without
   app.py's router (no sections, no wide layout).  Upstream: streamlit/streamlit#9624.  Fix: app.py
   marks the runs it routes; a page that finds no mark calls ``st.navigation`` itself (which ends
   the legacy mode) and reruns, so app.py routes from then on.
2. **A non-finite link value for a bound number widget** (``?d=inf``, ``?d=1e400``) makes
   Streamlit's URL seeding raise ``OverflowError`` (``int(float("inf"))``) instead of falling back
   to the default, because the seeding catches only ValueError, TypeError and IndexError (binding
   arrived in streamlit/streamlit#13979).  Fix: the control reads the raw value first; when it is
   not a finite number, it builds the widget unbound for this run and deletes the parameter from
   the URL (``del st.query_params[key]``), so the next run binds as usual.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import streamlit as st

TESTED = (1, 67)
_ROUTED = "_posenc_routed"


def streamlit_version() -> tuple[int, int]:
    major, minor, *_ = st.__version__.split(".")
    return int(major), int(minor)


def mark_routed(routed: bool) -> None:
    """app.py: True before it runs the chosen page, False after."""
    if routed:
        st.session_state[_ROUTED] = True
    else:
        st.session_state.pop(_ROUTED, None)


def ensure_routed(navigation: Callable[[], dict]) -> None:
    """In a page: if app.py did not route this run, end the legacy mode and rerun (behaviour 1)."""
    if st.session_state.get(_ROUTED):
        return
    st.navigation(navigation(), position="hidden")  # public API; it switches the legacy mode off
    st.rerun()


def finite_number(raw: list[str]) -> bool:
    """True when a link carried one value that parses as a finite number (or nothing at all)."""
    if not raw:
        return True
    try:
        return len(raw) == 1 and math.isfinite(float(raw[0]))
    except (TypeError, ValueError, OverflowError):
        return False


def number_binding(key: str, raw: list[str]) -> str | None:
    """The ``bind`` argument for a number widget whose link value is ``raw`` (behaviour 2)."""
    if finite_number(raw):
        return "query-params"
    try:
        del st.query_params[key]
    except (KeyError, st.errors.StreamlitAPIException):  # already bound in this session: the URL keeps it
        pass
    return None
