"""Landing page: the wishlist, a measured verdict per scheme, and a map of every page."""

import streamlit as st

from posenc.analysis.compare import measure_scheme
from posenc.charts.base import style
from posenc.charts.story import wishlist_chart
from posenc.ui.cache import safe
from posenc.ui.frame import chart, header, show_code, wrap_up
from posenc.ui.pages import PAGE_BY_PATH, sections
from posenc.views.home import wishlist_view
from posenc.views.takeaways import home_takeaway

PATH = "pages/home.py"

header(
    PATH,
    "Attention compares tokens by content, so on its own it cannot tell *the dog bit the man* from "
    "*the man bit the dog*. This dashboard walks from that problem through every naive fix to the "
    "encodings real models use, and **computes every number it shows** with the `posenc` library.",
)

st.subheader("The wishlist", anchor=False)
st.markdown("The article “Positional Embeddings: Why Attention Needs Order” asks three things of a position signal, "
            "and every attempt in it is also tested on a fourth:")
c1, c2 = st.columns(2)
c1.markdown("**1 · Bounded**  \nValues stay in a stable range, at position 10 and at position 10⁶.\n\n"
            "**2 · Continuous**  \nOne smooth function of the position, the same in every prompt.")
c2.markdown("**3 · Relative**  \nThe score between two tokens can depend on *how far apart* they are.\n\n"
            "**4 · Unique**  \nNo two positions look alike: distant ones never come closer than neighbours.")

view = safe(wishlist_view)
if view is not None:
    chart(style(wishlist_chart(view["marks"])), key="home_wishlist", data=view["marks"],
          caption="Each mark is measured, never typed in: hover a cell for the number behind it. "
                  f"Ticking all four: {', '.join(view['all']) or 'none'}. The rules and every number are in Compare schemes.")
    st.page_link(PAGE_BY_PATH["pages/compare.py"].path, label="The rules and the numbers: Compare schemes",
                 icon=":material/table_view:")

st.subheader("The pages", anchor=False)
for section, pages in sections().items():
    if not section:
        continue
    st.markdown(f"**{section}**")
    for p in pages:
        st.page_link(p.path, label=p.title, icon=p.icon)  # a link's label does not wrap: at 390 px "title — summary" was cut
        st.caption(p.summary)

show_code(wishlist_view, measure_scheme)
if view is not None:
    wrap_up(PATH, home_takeaway(view))
