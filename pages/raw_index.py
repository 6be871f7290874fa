"""Attempt 1: add the raw index.  Unique, but unbounded."""

from functools import partial

import streamlit as st

from posenc.analysis.geometry import growth, token_embedding_norm
from posenc.charts.base import style
from posenc.charts.story import growth_chart
from posenc.ui import controls
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, quiz, quiz_value, show_code, wrap_up
from posenc.views.reference import check_raw_index, raw_index_reference
from posenc.views.story import raw_index_growth

PATH = "pages/raw_index.py"
CONTEXTS = [16, 128, 512, 2048, 8192, 32768, 131072, 1_000_000]

header(
    PATH,
    "The simplest fix: add the position itself to every channel of the token embedding. Each position "
    "is different, but the values grow without limit. **Look at the gap** between the blue line (the "
    "encoding) and the green one (the token embedding it is added to).",
)
st.latex(r"e'_t = e_t + t\,\mathbf{1},\qquad \lVert t\,\mathbf{1} \rVert = t\sqrt{d}")

c1, c2 = st.columns(2)
context = controls.select_slider("context length", "context", CONTEXTS, default=1_000_000,
                                 format_func=lambda v: f"{v:,}", container=c1)
d_model = controls.slider("d_model", "d", default=64, lo=1, hi=1024, container=c2)

view = safe(raw_index_growth, context, d_model)
if view is not None:
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"max |value| at position {view['context'] - 1:,}", f"{view['pe_max']:,.0f}")
    m2.metric("‖PE‖ there", quiz_value("raw_ratio", f"{view['pe_norm']:,.4g}"), help="its quotient by ‖e‖ is the exercise's answer")
    m3.metric("token embedding ‖e‖ at init", quiz_value("raw_ratio", f"{view['token_norm']:.4g}"),
              help="0.02·√d: GPT-2 / BERT initialise every entry as N(0, 0.02²)")
    m4.metric("ratio ‖PE‖ / ‖e‖", quiz_value("raw_ratio", f"{view['ratio']:,.4g}"), help="the exercise below asks for it")
    chart(
        style(growth_chart(view["frame"], context=view["context"])),
        key="raw_index_growth",
        data=view["frame"],
        caption=(
            f"Dashed: the last position of the context, {view['context'] - 1:,}. A trained MiniLM token row has median norm "
            f"{view['minilm_token_norm']:.3f}, still tiny beside the encoding. The sinusoid stays at √(d/2) = {view['sinusoid_norm']:.3g}."
        ),
    )
    quiz(view["quiz"])

show_code(raw_index_growth, growth, token_embedding_norm, reference=raw_index_reference,
          check=partial(safe, check_raw_index, view["positions"], d_model) if view is not None else None)
if view is not None:
    wrap_up(PATH, view["takeaway"])
