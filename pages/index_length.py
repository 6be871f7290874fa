"""Attempt 2: divide the index by the prompt length.  Bounded, but the same position changes with L."""

from functools import partial

import streamlit as st

from posenc.analysis.geometry import length_dependence
from posenc.charts.base import style
from posenc.charts.story import index_values_chart, step_chart
from posenc.schemes.naive import index_over_length
from posenc.ui import controls, md
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, quiz, show_code, table, wrap_up
from posenc.views.reference import check_index_length, index_length_reference
from posenc.views.story import MAX_SENTENCES, index_length_view

PATH = "pages/index_length.py"
DEFAULTS = ("Hello world", "Cat sat on table", "", "")

header(
    PATH,
    "Normalise the index by the length of the prompt: every value now sits in (0, 1]. But the value of a "
    "position depends on how long the prompt is. **Look at the first token** of each sentence: it gets "
    "1/L, a different number in every prompt, and the step between neighbours, 1/L, shrinks as prompts grow.",
)
st.latex(r"p_t = \frac{t}{L},\qquad t = 1, \ldots, L")
st.caption("Tokens are counted from 1, as the article does (“for length 2: 1/2, 2/2”), everywhere on this page.")

cols = st.columns(MAX_SENTENCES)
sentences = tuple(
    controls.text(f"sentence {k + 1}", f"s{k + 1}", default=DEFAULTS[k], max_chars=300, container=cols[k],
                  help="leave empty to drop it; at most 64 tokens")
    for k in range(MAX_SENTENCES)
)
position = controls.number("token t to compare (1 = the first)", "p", default=1, lo=1, hi=64, step=1, container=st.columns(4)[0],
                           help="which token to follow across the sentences")

view = safe(index_length_view, sentences, position)
if view is not None:
    summary, t = view["summary"], view["position"]
    metric_cols = st.columns(len(summary) + 1)
    for col, row in zip(metric_cols, summary.itertuples()):
        col.metric(f"first token of {row.sentence}", f"{row.first:.4g}", help=f"“{md.escape(row.text)}”: token 1 gets 1/{row.L}")
    change = "—" if view["max_change"] is None else f"{view['max_change']:.4g}"
    metric_cols[-1].metric(f"change of token {t} across the lengths", change,
                           help="largest minus smallest value of token t over the sentences that have it")
    for name in view["missing"]:
        st.caption(f":material/info: {name} has fewer than {t} tokens, so it has no token {t}: it is left out of that "
                   "comparison only.")
    left, right = st.columns([3, 2])
    with left:
        chart(style(index_values_chart(view["values"])), key="index_values", data=view["values"],
              caption="The same token t gets a different value in each sentence; only the last token is always 1.")
    with right:
        chart(style(step_chart(view["steps"], summary)), key="index_steps", data=view["steps"],
              caption="Step between neighbouring tokens, 1/L, for L = 2 … 64; dots mark your sentences.")
    table(summary.drop(columns=["slot"]), key="index_length_sentences",
          labels={"text": "words", "first": "token 1: 1/L", "step": "step 1/L", "last": "token L: L/L",
                  "at_position": f"chosen token t = {t}: t/L"},
          formats={"first": ".4g", "step": ".4g", "last": ".4g", "at_position": ".4g"}, missing="—")
    st.markdown(
        "So the model cannot learn *what position 1 looks like*: it looks different in every prompt. Worse, "
        "the signal is still a discrete step dressed up as a float, it is absolute, and the distance between "
        "two tokens (a multiple of 1/L) means something different in every prompt."
    )
    quiz(view["quiz"])

show_code(index_length_view, index_over_length, length_dependence, reference=index_length_reference,
          check=partial(safe, check_index_length, view["lengths"]) if view is not None else None)
if view is not None:
    wrap_up(PATH, view["takeaway"])
