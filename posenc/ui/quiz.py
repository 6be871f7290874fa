"""Exercises ("predict, then reveal") and the numbers on a page that would give their answer away.

An exercise's answer is computed by posenc; its reveal toggle is not bound to the URL (a shared link
does not give the answer away) and turns off whenever a bound control of the page changes
(``_reset_quizzes``, called by the page frame and by sections).  ``posenc.ui.frame`` re-exports the
public functions, which is where pages import them from.  This module sits below the frame and the
sections: it imports neither (what all three share lives in ``posenc.ui.state``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import streamlit as st

from posenc.ui import runclock
from posenc.ui.state import full_run_frame as _full_run_frame
from posenc.ui.state import in_section, note_exercise

_QUIZ = "_posenc_quiz"  # {"page", "controls": {key: widget state}, "quizzes": [keys]} of the previous run
HIDDEN = "?"


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
    return text if quiz_holds(key) else HIDDEN


def quiz_holds(key: str) -> bool:
    """True once exercise ``key`` is revealed: until then the page holds back something that names its answer or bounds
    it, and no single field says which (a pair that returns to position 0).  Declared (``_shown_elsewhere``), so a reveal
    redraws the page with it; ``quiz_value`` is this for one printed value."""
    _shown_elsewhere(key)
    return revealed(key)


FIGURES = "_posenc_quiz_figures"  # {exercise key: [(chart key, field), ...]}: the figures that draw its answer


def quiz_figure(key: str, chart: str, field: str) -> bool:
    """True once exercise ``key`` is revealed: the figure ``chart`` (its chart key) draws the answer in its data
    column ``field``, so the page draws it only then (or draws it without that value until then).  The declaration
    is kept (``FIGURES``) for tests/app/test_quizzes.py, which checks that before the reveal no drawn figure holds the
    answer in that field."""
    _shown_elsewhere(key)
    figures = st.session_state.setdefault(FIGURES, {}).setdefault(key, [])
    if (chart, field) not in figures:
        figures.append((chart, field))
    return revealed(key)


TABLES = "_posenc_quiz_tables"  # {exercise key: [column, ...]}: table columns that hold its answer in some row


def quiz_column(key: str, column: str) -> bool:
    """True once exercise ``key`` is revealed: the table column headed ``column`` (as displayed) holds the answer in
    some row (a bucket id, a slope), so until then the page leaves that row out or blanks its cell (``quiz_table``).  The
    declaration (``TABLES``) tells tests/app/test_quizzes.py to look for the answer in that column of every table
    drawn before the reveal, a small integer included (the generic search skips those: "22" may be a position)."""
    _shown_elsewhere(key)
    columns = st.session_state.setdefault(TABLES, {}).setdefault(key, [])
    if column not in columns:
        columns.append(column)
    return revealed(key)


def quiz_table(key: str, table: pd.DataFrame, cells: list[tuple[int, str]]) -> pd.DataFrame:
    """``table`` with the (row position, column) ``cells`` that hold exercise ``key``'s answer
    hidden until it is revealed: "?" in a text column, an empty cell in a number column (which
    keeps its number format).  The table is copied."""
    _shown_elsewhere(key)
    if revealed(key) or not cells:
        return table
    return _with_cells(table, cells, lambda column: np.nan if pd.api.types.is_numeric_dtype(column) else HIDDEN)


def quiz_drop(key: str, table: pd.DataFrame, column: str) -> pd.DataFrame:
    """``table`` without ``column`` until exercise ``key`` is revealed: for a column from which any row gives the answer
    (RoPE's bounds: each over its bound / bound(0) is bound(0)), so blanking one cell (``quiz_table``) is not enough.
    Declared as ``quiz_column``, so tests/app/test_quizzes.py searches it."""
    return table if quiz_column(key, column) else table.drop(columns=column)


def _with_cells(table: pd.DataFrame, cells: list[tuple[int, str]], fill) -> pd.DataFrame:
    """A copy of ``table`` with each (row position, column) cell set to ``fill(column)``: NaN keeps a number column
    numeric (float64), any other value makes the column hold objects."""
    out = table.copy()
    for row, col in cells:
        value = fill(out[col])
        out[col] = out[col].astype(np.float64 if isinstance(value, float) and value != value else object)
        out.iloc[row, out.columns.get_loc(col)] = value
    return out


def asked_above(table: pd.DataFrame, cells: list[tuple[int, str]], text: str) -> pd.DataFrame:
    """``table`` with the (row position, column) ``cells`` that hold an exercise's answer replaced by ``text`` (where
    the answer is asked and shown), revealed or not: for a table outside the section that holds the exercise, which
    a reveal does not redraw (``quiz_table`` would keep its "?" after the answer shows above).  The table is copied."""
    return _with_cells(table, cells, lambda column: text)


def quiz(spec: Mapping) -> None:
    """``exercise`` from a view's quiz dict {"key", "question", "answer", "explanation", "tolerance"
    or "options"}."""
    exercise(spec["key"], spec["question"], answer=spec["answer"], explanation=spec["explanation"],
             options=spec.get("options"), tolerance=spec.get("tolerance", 0.0))


def ask_first(spec: Mapping | None) -> bool:
    """A ``quiz`` asked before the figures (``spec["figures"]``: (chart key, field)) and table columns
    (``spec["columns"]``) that carry its answer, declared here (``quiz_figure``, ``quiz_column``) so
    tests/app/test_quizzes.py searches them; True once it is revealed (the page then draws them whole), and
    True without drawing anything when ``spec`` is None (nothing to ask)."""
    if spec is None:
        return True
    key = spec["key"]
    for chart, field in spec.get("figures", ()):
        quiz_figure(key, chart, field)
    for column in spec.get("columns", ()):
        quiz_column(key, column)
    _shown_elsewhere(key)  # its answer shows elsewhere on the page: the exercise is drawn with it, a reveal redraws both
    quiz(spec)
    return revealed(key)


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
    frame = _full_run_frame()
    if frame is not None:
        frame["quizzes"].append(key)
    note_exercise(key)
    args = (key, question, answer, explanation, options, tolerance, default)
    if in_section() or key in st.session_state.get(_ELSEWHERE, ()):
        _exercise(*args)
    else:
        _exercise_alone(*args)


@st.fragment
def _exercise_alone(key: str, *args) -> None:
    with runclock.own_rerun("exercise", key):
        if _full_run_frame() is None and key in st.session_state.get(_ELSEWHERE, ()):
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
