"""Attempt 2: divide the index by the prompt length.  Bounded, but the same position changes with L."""

import streamlit as st

from posenc.analysis.geometry import length_dependence
from posenc.charts.base import style
from posenc.charts.story import index_values_chart, step_chart
from posenc.schemes.naive import index_over_length
from posenc.ui import controls, md
from posenc.ui.cache import safe
from posenc.ui.frame import chart, exercise, header, show_code
from posenc.views.story import MAX_SENTENCES, index_length_view

PATH = "pages/index_length.py"
DEFAULTS = ("Hello world", "Cat sat on table", "", "")

header(
    PATH,
    "Normalise the index by the length of the prompt: every value now sits in (0, 1]. But the value of a "
    "position depends on how long the prompt is. **Look at the first token** of each sentence: it gets "
    "1/L, a different number in every prompt, and the step between neighbours, 1/L, shrinks as prompts grow.",
)
st.latex(r"p_t = \frac{t}{L},\quad t = 1, \ldots, L"
         r"\qquad\text{(counting tokens from 1, as the article does: the first token gets } 1/L\text{)}")

cols = st.columns(MAX_SENTENCES)
sentences = tuple(
    controls.text(f"sentence {k + 1}", f"s{k + 1}", default=DEFAULTS[k], max_chars=300, container=cols[k],
                  help="leave empty to drop it; at most 64 tokens")
    for k in range(MAX_SENTENCES)
)
first = safe(index_length_view, sentences, 0)  # how long the shortest sentence is bounds the position
shortest = first["shortest"] if first is not None else 64
position = controls.number("position to compare (0-based)", "p", default=0, lo=0, hi=min(63, shortest - 1), step=1,
                           container=st.columns(4)[0], help="which token to follow across the sentences (0 = the first token)",
                           why=f"the shortest sentence has {shortest} token(s)")

view = safe(index_length_view, sentences, position) if first is not None else None
if view is not None:
    summary = view["summary"]
    metric_cols = st.columns(len(summary) + 1)
    for col, row in zip(metric_cols, summary.itertuples()):
        col.metric(f"first token of sentence {row.slot} (L = {row.L})", f"{row.first:.4g}",
                   help=f"{md.escape(row.sentence)}: value of token 1 is 1/{row.L}")
    metric_cols[-1].metric(f"change of position {view['position']} across the lengths",
                           f"{view['max_change']:.4g}", help="posenc.geometry.length_dependence: max − min over the sentences")
    left, right = st.columns([3, 2])
    with left:
        chart(style(index_values_chart(view["values"])), key="index_values", data=view["values"],
              caption="The same token index gets a different value in each sentence; only the last token is always 1.")
    with right:
        chart(style(step_chart(view["steps"], summary)), key="index_steps", data=view["steps"],
              caption="Step between neighbouring tokens, 1/L, for L = 2 … 64; dots mark your sentences.")
    st.dataframe(summary.drop(columns="slot").rename(columns={"first": "first token 1/L", "step": "step 1/L", "last": "last token L/L"}),
                 hide_index=True, column_config={"sentence": st.column_config.TextColumn(width="large")})
    st.markdown(
        "So the model cannot learn *what position 1 looks like*: it looks different in every prompt. Worse, "
        "the signal is still a discrete step dressed up as a float, it is absolute, and the distance between "
        "two tokens (a multiple of 1/L) means something different in every prompt."
    )
    ex = view["exercise"]
    exercise("first64", f"In a prompt of {ex['L']} tokens, what value does the first token get?",
             answer=ex["value"], tolerance=5e-4,
             explanation=f"1/{ex['L']} = {ex['value']:.6g}, while in “{md.escape(summary['sentence'].iloc[0])}” the same first token "
             f"gets {summary['first'].iloc[0]:.4g}. The model never sees one fixed value for “the first token”.")

show_code(index_length_view, index_over_length, length_dependence)
