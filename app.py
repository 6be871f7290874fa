"""posenc dashboard: a router over the pages listed in posenc/ui/pages.py.

Run with:  streamlit run app.py
"""

import streamlit as st

from posenc.ui import controls, frame
from posenc.ui.pages import sections

st.set_page_config(
    page_title="posenc · positional encodings, computed",
    page_icon=":material/graphic_eq:",
    layout="wide",
)

navigation = {
    section: [
        st.Page(p.path, title=p.title, icon=p.icon, url_path=p.url_path, default=(p.path == "pages/home.py"))
        for p in pages
    ]
    for section, pages in sections().items()
}
page = st.navigation(navigation, position="sidebar", expanded=True)
st.sidebar.caption("posenc: every number on these pages is computed by the `posenc` library, live.")
controls.begin_run(page.url_path)
page.run()
frame.finish_run()
