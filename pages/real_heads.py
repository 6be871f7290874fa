"""What the heads do with positions: a real model's 270 heads classified by where they look, and the rotation pairs
each kind of head puts its energy in (Barbero et al. 2024), with p-RoPE's cost."""

import streamlit as st

from posenc.charts import real_model as charts
from posenc.charts.base import style
from posenc.model import measure
from posenc.model.texts import INDUCTION, PASSAGES, text
from posenc.ui import controls
from posenc.ui.cache import safe, safe_long
from posenc.ui.frame import chart, header, quiz, quiz_table, revealed, show_code, table, wrap_up
from posenc.views.real_model import (
    MAX_PASSAGE_TOKENS,
    PASSAGE_CHOICES,
    YOUR_DEFAULT,
    YOURS,
    heads_takeaway,
    heads_view,
    missing_model,
    model_facts,
    prope_view,
)
from posenc.views.takeaways import missing_model_takeaway

PATH = "pages/real_heads.py"

header(
    PATH,
    "Each of the model's 30 layers has 9 attention heads. Measured on your text, most heads put their attention on a few "
    "fixed places — the previous token, the very first token (an *attention sink*, Xiao et al. 2023), the last few "
    "tokens — and a few look broadly. **Look at which rotation pairs each kind of head uses**: heads that track position "
    "lean on the fast pairs, as Barbero et al. (2024) found in Gemma.",
)


def draw() -> None:
    facts = safe(model_facts)
    if facts is not None:
        st.caption(facts["caption"])
    sentence = controls.text("text (at most 64 tokens)", "text", default=text(INDUCTION), max_chars=400)
    c1, c2 = st.columns(2)
    layer = controls.slider("layer", "layer", default=3, lo=0, hi=29, container=c1)
    head = controls.slider("head", "head", default=0, lo=0, hi=8, container=c2)
    view = safe_long(heads_view, sentence, layer, head)
    if view is None:
        return
    left, right = st.columns([3, 2])
    with left:
        chart(style(charts.attention_map(view["heat"], title=f"layer {layer}, head {head}: attention of each query token")),
              key="real_heads_maps", data=view["heat"],
              export_title=(f"Layer {layer}, head {head}: attention of each query token", *view["settings"]),
              caption=f"Attention probabilities of one head over {view['n']} tokens (row: the query token, column: the key it "
                      "reads; the empty upper triangle is the causal mask).")
    with right:
        chart(style(charts.head_kinds(view["heads"])), key="real_heads_kinds", data=view["heads"],
              export_title=("Every head, by where it looks", *view["settings"]),
              caption=f"Every head, by its measured shares on this text (a share of at least {measure.KIND_THRESHOLD:g}): "
                      + ", ".join(f"{v} {k}" for k, v in view["counts"].items()) + ".")
    st.markdown("**Which rotation pairs each kind uses.** For each head, the mean norm of each 2-D pair of its queries times "
                "that of its keys, as a share of the head's total: where its q·k score can come from.")
    chart(style(charts.kind_energy(view["per_kind"])), key="real_heads_energy", data=view["per_kind"],
          export_title=("Energy share per rotation pair, by kind of head", *view["settings"]),
          caption="Mean over the heads of each kind. Pair 0 turns by one radian per token; pair 31 by 1.4·10⁻⁵ (a wavelength "
                  "of 440,000 tokens): over a text it barely turns, so it carries meaning rather than position.")
    chart(style(charts.layer_energy(view["by_layer"])), key="real_heads_layers", data=view["by_layer"],
          export_title=("Energy share per rotation pair, layer by layer", *view["settings"]),
          caption="The same share per layer, averaged over the 9 heads.")

    st.subheader("p-RoPE: stop the slowest pairs from rotating")
    c1, c2 = st.columns([2, 1])
    passage = controls.choice("passage", "passage", list(PASSAGE_CHOICES), default="lighthouse", container=c1,
                              format_func=lambda k: PASSAGES.get(k, "your text"), style="selectbox")
    n = controls.slider("tokens of the passage", "n", default=128, lo=16, hi=MAX_PASSAGE_TOKENS, step=16, container=c2)
    yours = controls.text("your passage", "yours", default=YOUR_DEFAULT, max_chars=4000) if passage == YOURS else ""
    prope = safe_long(prope_view, passage, yours, n)
    if prope is None:
        return
    quiz(prope["quiz"])
    table(quiz_table("prope25", prope["frame"], prope["held"]), key="real_heads_prope",
          formats={"perplexity": ".3f", "change %": "+.2f"})
    if not revealed("prope25"):
        st.caption(prope["held_note"])
    if revealed("prope25"):
        chart(style(charts.prope_curve(prope["frame"])), key="real_heads_prope", data=prope["frame"],
              export_title=("Perplexity as the slowest pairs stop rotating", *prope["settings"]),
              caption=f"Perplexity on {prope['n']} tokens as the slowest pairs stop rotating, in every layer, without retraining.")
    show_code(heads_view, measure.head_scores, measure.pair_energy, prope_view)
    wrap_up(PATH, heads_takeaway(view, prope))


if (missing := missing_model()) is not None:
    st.info(missing, icon=":material/download:")
    wrap_up(PATH, missing_model_takeaway())
else:
    draw()
