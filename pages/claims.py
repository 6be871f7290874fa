"""The claims ledger: every checkable claim of the three articles, measured at this page's settings."""

import pandas as pd
import streamlit as st

from posenc.analysis.attention import permutation_equivariance
from posenc.analysis.compare import measure_scheme
from posenc.analysis.geometry import shift_operator
from posenc.charts.base import style
from posenc.charts.claims import verdict_grid
from posenc.lab.results import beyond_fraction, task_verdicts
from posenc.schemes.sinusoidal import sinusoid_wavelengths
from posenc.ui import controls
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, headline, show_code, table, wrap_up
from posenc.ui.pages import PAGE_BY_PATH
from posenc.views.claims import ARTICLES, claims_ledger, lab_verdict

PATH = "pages/claims.py"
LENGTHS = [64, 128, 256, 512, 1024]
VERDICT = {"confirmed": ":material/check_circle:", "nuanced": ":material/change_history:",
           "contradicted": ":material/cancel:"}

header(
    PATH,
    "Every claim of the three articles (" + ", ".join(f"*{a}*" for a in ARTICLES) + ") that a measurement can "
    "check, quoted briefly with its source, the number measured here, and a verdict **in this setting**. "
    "**Look at the verdict column**: the structural claims hold exactly; the ones about training beyond the length "
    "seen are where a small trained model disagrees.",
)
c1, c2, c3 = st.columns(3)
n = controls.select_slider("sequence length n", "n", LENGTHS, default=512, container=c1)
d = controls.slider("d (d_model / head_dim)", "d", default=64, lo=8, hi=128, step=2, container=c2)
train_len = controls.select_slider("training length L", "L", LENGTHS, default=512, container=c3,
                                   help="For the length checks; the lab's own models were trained at their own L.")
view = safe(claims_ledger, n, d, train_len)
if view is not None:
    headline(view["headline"])
    f = view["frame"]  # four columns, so that a phone shows the verdict and its page without scrolling sideways
    frame = pd.DataFrame({"claim": f["claim"] + " (" + f["source"] + ")", "measured": f["measured"] + "; at " + f["setting"],
                          "verdict": f["verdict"] + " in this setting", "page": [f"/{PAGE_BY_PATH[p].url_path}" for p in f["page"]]})
    table(frame, key="claims", labels={"claim": "The article says (article)", "measured": "Measured here, and at what setting",
                         "verdict": "Verdict", "page": "Measured on"}, links={"page": "open ↗"})
    st.caption(f"The claims about training beyond the length seen are checked on {view['lab']}. {view['rule']}")
    chart(style(verdict_grid(view["frame"])), key="claims_verdicts", data=view["frame"],
          caption="One row per claim, in the column of its verdict (hover for the quote, the source and the number).")
    counts = view["counts"]
    st.markdown(" · ".join(f"{VERDICT[v]} **{counts[v]}** {v}" for v in VERDICT))
    st.caption("“Contradicted in this setting” means what it says: the lab trains tiny causal transformers on synthetic "
               "tasks for a few thousand steps, and the scaling tricks are applied at test time without the fine-tuning "
               "their papers use. The Extrapolation lab shows the runs; Compare schemes shows the article's table.")
    links = st.container(horizontal=True)
    for p in dict.fromkeys(view["frame"]["page"]):
        links.page_link(p, label=PAGE_BY_PATH[p].title, icon=PAGE_BY_PATH[p].icon)
show_code(claims_ledger, measure_scheme, permutation_equivariance, shift_operator, sinusoid_wavelengths, task_verdicts,
          beyond_fraction, lab_verdict)
if view is not None:
    wrap_up(PATH, view["takeaway"])
