"""Attention needs order: without positions, two orderings of one bag of tokens are the same input."""

from functools import partial

import streamlit as st

from posenc.analysis.attention import attend, match_permutation, permutation_equivariance
from posenc.charts.base import style
from posenc.charts.story import recurrence_chart, token_heatmap
from posenc.registry import SCHEMES
from posenc.ui import controls
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, quiz, quiz_value, show_code, table, wrap_up
from posenc.ui.quiz import quiz_figure
from posenc.views.attention import attention_story, attention_view, format_difference, format_tokens
from posenc.views.reference import attention_reference, check_attention
from posenc.views.story import recurrence_view

PATH = "pages/attention_order.py"

header(
    PATH,
    "Self-attention compares tokens by content only. Shuffle the tokens and every score just moves to "
    "another cell: the two heatmaps below hold **the same numbers in different places**, and the sentence "
    "summaries (mean of the outputs) are identical to the last bit. Then add a positional scheme and "
    "watch the two sentences come apart.",
)
st.latex(r"A = \mathrm{softmax}\!\Big(\tfrac{(XW_q)(XW_k)^\top}{\sqrt d}\Big)")
st.latex(r"\mathrm{Attn}(PX) = P\,\mathrm{Attn}(X)\ \text{ for every permutation } P")

c1, c2, c3 = st.columns([3, 3, 2])
sentence_a = controls.text("sentence A", "a", default="The dog bit the man.", max_chars=400, container=c1)
sentence_b = controls.text("sentence B", "b", default="The man bit the dog.", max_chars=400, container=c2)
d_model = controls.select_slider("model width d", "d", [4, 8, 16, 32, 64], default=16, container=c3,
                                 help="width of the token embeddings and of Wq, Wk, Wv (random, the same every time)")


def pair(view, key: str, what: str, named: str = "", answers: str | None = None):
    """A and B side by side; below them, on the left, B minus A re-ordered. Returns the slot to its right.
    ``named`` (the scheme's name) titles the exports only: in the drawn title it would make a new scheme a new spec.
    ``answers``: the exercise the difference heatmap answers (drawn once it is revealed)."""
    for col, side in zip(st.columns(2), ("a", "b")):
        with col:
            frame = view[f"heat_{side}"]
            title = f"sentence {side.upper()} {what}"
            chart(style(token_heatmap(frame, vmax=view["vmax"], title=title, legend_title="score")),
                  key=f"{key}_{side}", data=frame, export_title=(f"sentence {side.upper()} + {named}",) if named else (),
                  caption="Scores q_i·k_j/√d" + ("; blank cells are masked (−∞) by the causal mask." if view["masked"] else "."))
    if view["diff"] is None:
        return None
    left, right = st.columns(2)
    if answers is not None and not quiz_figure(answers, f"{key}_diff", "diff"):
        left.caption(":material/visibility_off: The heatmap of B minus A re-ordered answers the exercise beside it "
                     "(below it on a phone): it is drawn when you reveal the answer.")
        return right
    with left:
        chart(style(token_heatmap(view["diff"], value="diff", vmax=view["vmax"], legend_title="difference",
                                  title="B minus A re-ordered into B's order")),
              key=f"{key}_diff", data=view["diff"], export_title=(f"B minus A re-ordered into B's order ({named})",) if named else (),
              caption="White = 0: the same score, moved to another cell"
              + ("; blank = masked in one of the two sentences." if view["masked"] else "."))
    return right


st.subheader("Without positions: a bag of tokens")
base = safe(attention_view, sentence_a, sentence_b, None, d_model)
if base is not None:
    if not base["same_bag"]:
        st.warning(
            f"These are not the same bag of tokens (only in A: {format_tokens(base['only_a'])}; only in B: "
            f"{format_tokens(base['only_b'])}), so no permutation maps one onto the other. Both score "
            "matrices are drawn; type a reordering of sentence A to see the proof.", icon=":material/info:")
    m1, m2, m3 = st.columns(3)
    m1.metric("max |pooled A − pooled B| (no positions)", format_difference(base["max_diff_pooled"]),
              help="mean of the attention outputs over the tokens: the sentence summary")
    m2.metric("max |out B − P·out A| (no positions)", format_difference(base["max_diff_permuted"]),
              help="each output row of B against the row of the same token in A")
    m3.metric("max |scores B − P·scores A·Pᵀ| (no positions)", format_difference(base["max_diff_logits"]))
    slot = pair(base, "bag", "(no positions)")
    if slot is not None:
        with slot:
            table(base["perm_table"], key="attention_permutation")
        slot.markdown(
            "**The permutation.** Each token of A sits somewhere in B; re-ordering A's rows and columns by this "
            "table gives B's matrix exactly (the heatmap on the left is B minus that re-ordering). This tiny attention "
            "adds its numbers in the same order whatever the token order, so the differences are exactly 0.0, not 1e-17.")

st.subheader("The contrast: a recurrence reads in order")
st.markdown("An RNN walks through the tokens one after another, so order is baked into its computation. The same token "
            "embeddings, no positions anywhere, one tanh recurrence (random weights, the same every time):")
st.latex(r"h_t = \tanh(W h_{t-1} + U x_t),\qquad h_0 = 0")
rnn = safe(recurrence_view, sentence_a, sentence_b, d_model) if base is not None else None
if rnn is not None:
    st.markdown(rnn["words"])
    chart(style(recurrence_chart(rnn["frame"])), key="order_recurrence", data=rnn["frame"],
          caption="How far apart the two hidden states are after each step: 0 while both sentences have read the same "
                  "tokens, then apart, and still apart at the end although the bag of tokens is the same.")

st.subheader("With positions: the sentences come apart")
scheme = controls.choice("positional scheme", "scheme", list(SCHEMES), default="sinusoidal", style="selectbox",
                         format_func=lambda k: SCHEMES[k].name, container=st.columns(3)[0])
view = safe(attention_view, sentence_a, sentence_b, scheme, d_model) if base is not None else None
story = safe(attention_story, sentence_a, sentence_b, scheme, d_model) if base is not None else None
if view is not None and story is not None:
    s1, s2, s3 = st.columns(3)
    s1.metric("max |pooled A − pooled B| (with positions)", quiz_value("pooled", format_difference(view["max_diff_pooled"])))
    s2.metric("max |out B − P·out A| (with positions)", quiz_value("pooled", format_difference(view["max_diff_permuted"])))
    s3.metric("max |scores B − P·scores A·Pᵀ| (with positions)", quiz_value("pooled", format_difference(view["max_diff_logits"])))
    st.caption(f"{SCHEMES[scheme].name} enters at the {SCHEMES[scheme].enters}, with the default parameters its own page "
               f"starts from; model width {view['d_model']}" + (" (the trained MiniLM table fixes it)." if view["d_model"] != d_model else "."))
    if SCHEMES[scheme].mask_only:
        st.info(f"{SCHEMES[scheme].name} is the control: it adds no positional signal at all. The only thing that tells the two orders "
                "apart is the causal mask (each token sees only itself and the tokens before it), so the sentences "
                "come apart through what each token is *not allowed* to see.", icon=":material/science:")
    slot = pair(view, "pos", "with positions", named=SCHEMES[scheme].name, answers="pooled" if story["quiz"] is not None else None)
    if story["quiz"] is not None:
        with slot:
            quiz(story["quiz"])

show_code(attention_view, recurrence_view, permutation_equivariance, match_permutation, attend, reference=attention_reference,
          check=partial(safe, check_attention, sentence_a, d_model) if base is not None else None)
if story is not None:
    wrap_up(PATH, story["takeaway"])
