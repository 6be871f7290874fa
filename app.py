"""posenc dashboard: a router over the pages listed in posenc/ui/pages.py.

Run with:  streamlit run app.py
"""

from deploy.warm import warm  # stdlib only: before anything imports posenc

warm()  # every module a page imports, once per process under a lock: concurrent first runs cannot deadlock (R2)

import streamlit as st  # noqa: E402

from posenc.ui import compat, controls, frame  # noqa: E402

page = st.navigation(frame.navigation(), position="sidebar", expanded=True)  # sets the page config first
st.sidebar.caption("posenc: every number on these pages is computed by the `posenc` library, live.")
controls.begin_run(page.url_path)
compat.mark_routed(True)
page.run()
compat.mark_routed(False)
frame.finish_run()
compat.freeze_long_lived()  # a run that imported modules: later full collections skip them (compat, behaviour 6)
