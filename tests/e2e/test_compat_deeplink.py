"""Deep links on a fresh server (posenc.ui.compat, behaviour 1), in a real browser.

A two-page app with a ``pages/`` folder and no workaround shows the upstream behaviour
(streamlit/streamlit#9624): the first session that opens a page URL runs that file without the
entrypoint.  If this test fails, Streamlit changed, and compat.ensure_routed may go.  The dashboard's
own deep links are checked routed in tests/e2e/test_browser.py.
"""

from __future__ import annotations

import pytest

from tools.liveserver import start_server, stop_server, wait_for_app

pytestmark = pytest.mark.e2e

APP = """
import streamlit as st
st.session_state["routed"] = True
page = st.navigation([st.Page("pages/home.py", url_path="home", default=True), st.Page("pages/other.py", url_path="other")])
page.run()
st.session_state.pop("routed", None)
"""
OTHER = """
import streamlit as st
st.write("OTHER " + ("routed" if st.session_state.get("routed") else "unrouted"))
"""


def test_a_fresh_server_runs_a_deep_linked_page_without_the_entrypoint(tmp_path, tab):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "pages" / "home.py").write_text("import streamlit as st\nst.write('HOME')\n")
    (tmp_path / "pages" / "other.py").write_text(OTHER)
    proc, url, _ = start_server(app=tmp_path / "app.py")
    try:
        page = tab
        page.goto(f"{url}/other")
        wait_for_app(page)
        page.wait_for_selector("text=OTHER")
        assert "OTHER unrouted" in page.inner_text("body"), "Streamlit now routes deep links through st.navigation"
    finally:
        stop_server(proc)
