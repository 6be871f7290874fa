"""Landing page: the wishlist, a measured verdict per scheme, and a map of every page."""

import pandas as pd
import streamlit as st

from posenc.analysis.compare import comparison_table
from posenc.ui.cache import cached
from posenc.ui.frame import header, show_code
from posenc.ui.pages import sections

PATH = "pages/home.py"
STORY = ("raw_index", "index_over_length", "single_sine", "sincos_pair", "sinusoidal", "learned_minilm", "t5", "alibi", "rope")

header(
    PATH,
    "Attention compares tokens by content, so on its own it cannot tell *the dog bit the man* from "
    "*the man bit the dog*. This dashboard walks from that problem through every naive fix to the "
    "encodings real models use, and **computes every number it shows** with the `posenc` library.",
)

st.subheader("The wishlist", anchor=False)
c1, c2, c3 = st.columns(3)
c1.markdown("**1 · Bounded**  \nValues stay in a stable range, at position 10 and at position 10⁶.")
c2.markdown("**2 · Continuous**  \nSmooth in the position, so gradients and fractional positions make sense.")
c3.markdown("**3 · Relative**  \nThe score between two tokens can depend on *how far apart* they are.")

rows = cached(comparison_table, STORY, n=512, d=64, n_heads=8, train_len=512)
table = pd.DataFrame(
    {
        "scheme": [r["name"] for r in rows],
        "bounded": [r["bounded"] for r in rows],
        "continuous": [r["continuous"] for r in rows],
        "relative": [r["relative"] for r in rows],
        "max |value| at 10⁶": [r["max_abs_at_1e6"] for r in rows],
        "closest pair at n = 512": [r["closest_distance"] for r in rows],
        "translation invariance": [r["translation_invariance"] for r in rows],
    }
)
st.dataframe(
    table,
    hide_index=True,
    column_config={
        "bounded": st.column_config.CheckboxColumn(help="max |value| stops growing between 10⁵ and 10⁶"),
        "continuous": st.column_config.CheckboxColumn(help="defined between integer positions, with a finite slope"),
        "relative": st.column_config.CheckboxColumn(help="the score depends only on the offset, and varies with it"),
        "max |value| at 10⁶": st.column_config.NumberColumn(format="%.4g", help="NaN: the scheme is undefined there"),
        "closest pair at n = 512": st.column_config.NumberColumn(
            format="%.3g", help="distance between the two most similar positions; 0 = a collision"),
        "translation invariance": st.column_config.NumberColumn(format="%.3g", help="0 = the score depends only on the offset"),
    },
)
all_three = [r["name"] for r in rows if r["bounded"] and r["continuous"] and r["relative"]]
st.caption(
    "Each mark is derived from a measurement at length 512, d = 64 (see *Compare schemes* for the "
    f"numbers and the rules), never typed in. Ticking all three here: {', '.join(all_three) or 'none'}."
)

st.subheader("The pages", anchor=False)
for section, pages in sections().items():
    if not section:
        continue
    st.markdown(f"**{section}**")
    for p in pages:
        st.page_link(p.path, label=f"{p.title} — {p.summary}", icon=p.icon)

show_code(comparison_table)
