"""Relative, for real: shift every position of a real model by Delta; exact in float64, drifting in half precision."""

import streamlit as st

from posenc.charts import real_model as charts
from posenc.charts.base import style
from posenc.model import positions
from posenc.model.texts import ORDER_A
from posenc.ui import controls
from posenc.ui.cache import safe, safe_long
from posenc.ui.frame import chart, header, quiz, revealed, show_code, table, wrap_up
from posenc.views.real_model import MAX_SHIFT_TOKENS, missing_model, model_facts, shift_takeaway, shift_view
from posenc.views.takeaways import missing_model_takeaway

PATH = "pages/real_relative.py"

header(
    PATH,
    "RoPE's score depends only on the offset between two tokens, so moving every position by the same Δ should change "
    "nothing. On a real model: **look at the largest change of any logit as Δ grows to a million** — nothing in float64, "
    "then the rotation table in lower precision rounds the angle p·θ, whose error grows with p itself.",
)
st.latex(r"\langle R_{m+\Delta}\,q,\ R_{n+\Delta}\,k\rangle = \langle R_m\,q,\ R_n\,k\rangle")


def draw() -> None:
    facts = safe(model_facts)
    if facts is not None:
        st.caption(facts["caption"])
    c1, c2 = st.columns([3, 1])
    sentence = controls.text(f"text (at most {MAX_SHIFT_TOKENS} tokens)", "text", default=ORDER_A, max_chars=200, container=c1)
    threshold = controls.select_slider("KL of the exercise (nats)", "kl", [0.001, 0.01, 0.1], default=0.01, container=c2)
    view = safe_long(shift_view, sentence, threshold)
    if view is None:
        return
    m1, m2, m3 = st.columns(3)
    m1.metric("max |Δlogit| at Δ = 10⁵, float64", f"{view['f64_1e5']:.1e}", help="against Δ = 0, every position, every token")
    m2.metric("max |Δlogit| at Δ = 10⁶, float64", f"{view['f64_1e6']:.1e}")
    m3.metric("max |Δlogit| at Δ = 10⁵, float32 (transformers' path)", f"{view['f32_1e5']:.3f}")
    chart(style(charts.shift_chart(view["frame"], value="max |Δlogit|", y_title="max |Δlogit| (log)", precisions=("float64", "float32"))),
          key="real_relative_max", data=view["frame"], export_title=("Largest logit change, every position moved by Δ", *view["settings"]),
          caption=f"Largest change of any logit at any of the {view['n']} positions, against the float64 forward at Δ = 0. "
                  "q and k are float32 throughout, so float64's line is float32 rounding (about 10⁻⁴), flat in Δ.")
    quiz(view["quiz"])
    shown = tuple(charts.PRECISION_COLORS) if revealed("bf16_shift") else ("float64", "float32")
    chart(style(charts.shift_chart(view["frame"], value="mean KL", y_title="mean KL (nats, log)", precisions=shown)),
          key="real_relative_kl", data=view["frame"], export_title=("Mean KL, every position moved by Δ", *view["settings"]),
          caption="KL of the next-token distributions from the float64 ones at Δ = 0, averaged over the positions; bfloat16 "
                  "and float16 appear with the answer. float16 cannot hold a position past 65,504: no point there.")
    st.markdown("**Where the Precision page predicts it.** The first position at which some pair's cos or sin is off "
                "float64 by more than 10⁻³, for this model's frequencies (base 100,000, 32 pairs):")
    table(view["onset_table"], key="real_relative_onsets")
    st.page_link("pages/precision.py", label="Precision: the same rounding, pair by pair", icon=":material/speed:")
    show_code(shift_view, positions.rotation)
    wrap_up(PATH, shift_takeaway(view))


if (missing := missing_model()) is not None:
    st.info(missing, icon=":material/download:")
    wrap_up(PATH, missing_model_takeaway())
else:
    draw()
