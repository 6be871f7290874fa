"""What an extension costs at short range: PI, NTK-aware, YaRN and Llama 3 on a real model, within its trained length."""

import streamlit as st

from posenc.charts import real_model as charts
from posenc.charts.base import style
from posenc.model.texts import PASSAGES
from posenc.ui import controls
from posenc.ui.cache import safe, safe_long
from posenc.ui.frame import chart, header, quiz, quiz_table, revealed, show_code, table, wrap_up
from posenc.views.real_model import MAX_PASSAGE_TOKENS, PASSAGE_CHOICES, YOUR_DEFAULT, YOURS, extension_view, missing_model, model_facts
from posenc.views.takeaways import missing_model_takeaway

PATH = "pages/real_extension.py"

header(
    PATH,
    "A context extension changes the rotation frequencies so that positions past the trained length look familiar. The "
    "engineer's question is what it does to text the model already handles. Here each method runs at factor 2, 4 and 8, "
    "without fine-tuning, on a passage well inside SmolLM2's 8,192 trained tokens: **look at how far each dot rises above "
    "plain RoPE's dashed line** — the price of the extension where nothing needed extending.",
)


def draw() -> None:
    facts = safe(model_facts)
    if facts is not None:
        st.caption(facts["caption"])
    c1, c2 = st.columns([2, 1])
    passage = controls.choice("passage", "passage", list(PASSAGE_CHOICES), default="lighthouse", container=c1,
                              format_func=lambda k: PASSAGES.get(k, "your text"), style="selectbox")
    n = controls.slider("tokens of the passage", "n", default=128, lo=16, hi=MAX_PASSAGE_TOKENS, step=16, container=c2)
    yours = controls.text("your passage", "yours", default=YOUR_DEFAULT, max_chars=4000) if passage == YOURS else ""
    view = safe_long(extension_view, passage, yours, n)
    if view is None:
        return
    st.metric(f"perplexity with plain RoPE ({view['n']} tokens)", f"{view['base']:.3f}")
    quiz(view["quiz"])
    factors = (2, 4, 8) if revealed("ext_worst") else (2, 4)
    chart(style(charts.extension_bars(view["frame"], base=view["base"], factors=factors)), key="real_extension_bars",
          data=view["frame"], export_title=("Perplexity with each context extension, no fine-tuning", *view["settings"]),
          caption="Perplexity on the passage with every layer's rotation replaced by the method's (its "
          "attention factor included), the file's base 100,000 and trained length 8,192; the dashed line is plain RoPE, and "
          "on the log axis a stem's length is the ratio to it. "
          "Factor 8 appears with the answer.")
    eight = [(i, "perplexity") for i in range(len(view["frame"])) if int(view["frame"]["factor"].iloc[i]) == 8]
    table(quiz_table("ext_worst", view["frame"].drop(columns="key"), eight + [(i, "change %") for i, _ in eight]),
          key="real_extension_worst", formats={"perplexity": ".3f", "change %": "+.1f"})
    st.page_link("pages/context_extension.py", label="Context extension, frequency by frequency",
                 icon=":material/open_in_full:")
    show_code(extension_view)
    wrap_up(PATH, view["takeaway"])


if (missing := missing_model()) is not None:
    st.info(missing, icon=":material/download:")
    wrap_up(PATH, missing_model_takeaway())
else:
    draw()
