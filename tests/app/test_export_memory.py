"""Exports built on click and not kept: the download buttons hold only a weak reference to a chart's data
(the session owns it, so a closed tab's data goes with its session), and a single .npy export is capped."""

from __future__ import annotations

import io

import numpy as np
from streamlit.testing.v1 import AppTest

from posenc.io._limits import EXPORT_MAX_BYTES

SCRIPT = """
import gc
import numpy as np
import streamlit as st
from posenc.ui import frame
big = np.ones((4096, 4096))  # 128 MiB as float64: over the cap
ref = frame._hold("k", (None, None, {"big": lambda: big, "small": np.arange(6.0)}))
blob = frame._npy(frame._held(ref)[2]["big"])
st.write(f"bytes={len(blob)}")
st.session_state["blob"] = blob
st.session_state.pop("_posenc_exports")  # the session lets the chart go (a page switch, or the session ends)
gc.collect()
try:
    frame._held(ref)
    st.write("alive")
except RuntimeError as exc:
    st.write(f"gone: {exc}")
"""


def test_export_callables_keep_no_chart_alive_and_cap_a_big_array():
    at = AppTest.from_string(SCRIPT, default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown]
    assert texts[1].startswith("gone: this view is no longer open"), texts
    arr = np.load(io.BytesIO(at.session_state["blob"]))
    assert arr.shape == (2048, 2048) and arr.dtype == np.float32 and arr.nbytes <= EXPORT_MAX_BYTES  # every 2nd row and column
    assert int(texts[0].split("=")[1]) == len(at.session_state["blob"]) < EXPORT_MAX_BYTES + 1024
