"""The run state the page frame, its sections and its exercises share, at the bottom of their imports.

``posenc.ui.quiz`` (exercises) imports only this module; ``posenc.ui.frame`` (the page frame) imports
quiz and this; ``posenc.ui.section`` imports quiz and this.  Nothing here imports another part of
posenc.ui, so the three import one another in one direction (``tests/test_import_graph.py``).
"""

from __future__ import annotations

import streamlit as st

FRAME = "_posenc_frame"  # session state: the page frame of the full run that is drawing (absent in a fragment's own rerun)
SECTIONS = "_posenc_sections"  # {section name: [exercise keys drawn in it]}, filled on full runs
IN_SECTION = "_posenc_in_section"  # the name of the section that is drawing


def full_run_frame() -> dict | None:
    """The page frame's state while a full run draws (None in a fragment's own rerun)."""
    return st.session_state.get(FRAME)


def in_section() -> bool:
    """True while a section draws (its fragment holds everything it draws)."""
    return st.session_state.get(IN_SECTION) is not None


def note_exercise(key: str) -> None:
    """quiz.exercise calls this: remember that exercise ``key`` is drawn in the current section."""
    name = st.session_state.get(IN_SECTION)
    if name is not None:
        st.session_state.setdefault(SECTIONS, {}).setdefault(name, []).append(key)
