"""posenc dashboard: a router over the pages listed in posenc/ui/pages.py.

Run with:  streamlit run app.py

`streamlit run` reads this file twice.  It first imports it as a module, finds ``app`` (an ``st.App``: Streamlit's own
server, with our lifespan) and serves it; the lifespan imports what the first page needs while the browser loads
(``deploy.warm.lifespan``, issue 42).  Then every session's run executes it as a script (``__name__ == "__main__"``):
the router below.
"""

from deploy.warm import lifespan, warm_for  # stdlib only: before anything imports posenc

if __name__ != "__main__":  # imported by `streamlit run` (or an ASGI server): the server, not a run
    import streamlit as st

    app = st.App(__file__, lifespan=lifespan)
else:
    # What this script and then its page can import, once per process under one lock: concurrent first runs cannot
    # deadlock (issue 41, R2).  Only what is opened is imported, so a plain `streamlit run` paints its first page without
    # importing every page first (issue 42); deploy workers import everything before their health check (deploy/worker.py).
    warm_for("app.py")

    import streamlit as st

    from posenc import blas
    from posenc.ui import ahead, compat, controls, frame, runclock
    from posenc.ui.pages import HOME, PAGES

    blas.hold()  # one BLAS thread for this process, before any page computes (posenc/blas.py)

    page = st.navigation(frame.navigation(), position="sidebar", expanded=True)  # sets the page config first
    st.sidebar.caption("posenc: every number on these pages is computed by the `posenc` library, live.")
    controls.begin_run(page.url_path)
    compat.mark_routed(True)
    warm_for(*(p.path for p in PAGES if p.url_path == page.url_path or (p.path == HOME and not page.url_path)))  # its closure
    with runclock.timed("run", page.url_path or "home"), ahead.drawing():  # the server's share of a step, when the benchmark asks
        page.run()
    ahead.note_values()
    ahead.release()  # the values a hand is about to reach, computed while nothing else runs (posenc/ui/ahead.py)
    compat.mark_routed(False)
    frame.finish_run()
    compat.freeze_long_lived()  # a run that imported modules: later full collections skip them (compat, behaviour 6)
