"""Order, for real: a trained model tells "the dog bit the man" from "the man bit the dog" -- until its positions go."""

import streamlit as st

from posenc.charts import real_model as charts
from posenc.charts.base import style
from posenc.model import Model
from posenc.model.texts import ORDER_A, ORDER_B, PASSAGES
from posenc.ui import controls
from posenc.ui.cache import safe, safe_long
from posenc.ui.frame import chart, header, quiz, quiz_value, revealed, show_code, wrap_up
from posenc.views.real_model import (
    MAX_PASSAGE_TOKENS,
    PASSAGE_CHOICES,
    YOUR_DEFAULT,
    YOURS,
    missing_model,
    model_facts,
    order_takeaway,
    order_view,
    perplexity_view,
)
from posenc.views.takeaways import missing_model_takeaway

PATH = "pages/real_order.py"
ROPE, NOPE = "RoPE (the model's own)", "none (NoPE: causal mask only)"

header(
    PATH,
    "The first page showed that attention without positions cannot tell two orders of the same words apart. Here is a "
    "real language model, SmolLM2-135M, computed in numpy on this server: type two sentences with the same words in "
    "two orders and **look at how differently it continues them** — then take its positions away (no rotation in any "
    "layer) and see how much order survives through the causal mask alone.",
)


def passage_controls() -> tuple[str, str, int]:
    c1, c2 = st.columns([2, 1])
    passage = controls.choice("passage", "passage", list(PASSAGE_CHOICES), default="lighthouse", container=c1,
                              format_func=lambda k: PASSAGES.get(k, "your text"), style="selectbox")
    n = controls.slider("tokens of the passage", "n", default=128, lo=16, hi=MAX_PASSAGE_TOKENS, step=16, container=c2)
    yours = controls.text("your passage (with “your own text”)", "yours", default=YOUR_DEFAULT, max_chars=4000) if passage == YOURS else ""
    return passage, yours, n


def draw() -> None:
    facts = safe(model_facts)
    if facts is not None:
        st.caption(facts["caption"])
    c1, c2 = st.columns(2)
    a = controls.text("sentence A", "a", default=ORDER_A, max_chars=300, container=c1)
    b = controls.text("sentence B", "b", default=ORDER_B, max_chars=300, container=c2)
    order = safe_long(order_view, a, b)
    if order is None:
        return
    rope, nope = order["rope"], order["nope"]
    m1, m2, m3 = st.columns(3)
    m1.metric("after A, top next token (RoPE)", f"{rope['top_a']!r} {rope['p_a']:.3f}")
    m2.metric("after B, top next token (RoPE)", f"{rope['top_b']!r} {rope['p_b']:.3f}")
    m3.metric("KL(A‖B), RoPE", f"{rope['kl']:.3f} nats", help="how far apart the two next-token distributions are")
    chart(style(charts.next_token_bars(order["frame"], positions=ROPE, title="with the model's RoPE")), key="real_order_rope",
          data=order["frame"], export_title=("Next tokens after A and B, with the model's RoPE", *order["settings"]),
          caption="The likeliest next tokens after each sentence (the union of both top 6), probabilities "
          "from the model's own logits.")
    quiz(order["quiz"])
    n1, n2, n3 = st.columns(3)
    n1.metric("after A, top next token (no positions)", quiz_value("nope_order", f"{nope['top_a']!r} {nope['p_a']:.3f}"))
    n2.metric("after B, top next token (no positions)", quiz_value("nope_order", f"{nope['top_b']!r} {nope['p_b']:.3f}"))
    n3.metric("KL(A‖B), no positions", quiz_value("nope_order", f"{nope['kl']:.3f} nats"))
    if revealed("nope_order"):
        chart(style(charts.next_token_bars(order["frame"], positions=NOPE, title="positions removed")), key="real_order_nope",
              data=order["frame"], export_title=("Next tokens after A and B, positions removed", *order["settings"]),
              caption="The same two sentences with no rotation in any layer: only the causal mask "
              "(each token sees those before it) can still tell the orders apart.")

    st.subheader("How much the prediction degrades without positions")
    passage, yours, n = passage_controls()
    ppl = safe_long(perplexity_view, passage, yours, n)
    if ppl is None:
        return
    p1, p2 = st.columns(2)
    p1.metric(f"perplexity, RoPE ({ppl['n']} tokens)", f"{ppl['ppl']['RoPE']:.2f}")
    p2.metric("perplexity, no positions", quiz_value("nope_ppl", f"{ppl['ppl']['NoPE']:.2f}"))
    quiz(ppl["quiz"])
    series = ("RoPE", "NoPE") if revealed("nope_ppl") else ("RoPE",)
    chart(style(charts.running_loss(ppl["frame"], series=series)), key="real_order_loss", data=ppl["frame"],
          export_title=("Running mean loss, with and without positions" if len(series) > 1 else "Running mean loss with RoPE", *ppl["settings"]),
          caption="Mean next-token loss (−log p of each actual next token) up to each token; perplexity is e to the final "
          "mean. The line without positions appears with the answer above.")
    show_code(order_view, perplexity_view, Model.logits_many)
    wrap_up(PATH, order_takeaway(order, ppl))


if (missing := missing_model()) is not None:
    st.info(missing, icon=":material/download:")
    wrap_up(PATH, missing_model_takeaway())
else:
    draw()
