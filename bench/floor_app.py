"""The floor: the smallest page that does what a dashboard step does, for ``python -m bench --only interact``.

One slider drives one metric and one line chart of ``ROWS`` points whose data changes with it
(drawn by ``st.altair_chart``, like every posenc chart).  Timed by the same driver, browser and
server settings as the dashboard's pages, its step is what Streamlit itself costs on this machine
for a rerun that redraws one chart: what is left of the 250 ms goal for a page's own work.
Not part of the dashboard (``app.py`` does not route to it).
"""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

ROWS = 500

x = st.slider("frequency", 0, 100, 50)
st.metric("frequency", x)
t = np.arange(ROWS)
frame = pd.DataFrame({"t": t, "y": np.sin(t * (0.01 + x * 1e-3))})
st.altair_chart(alt.Chart(frame, height=240).mark_line().encode(x="t:Q", y="y:Q"), key="floor_chart")
