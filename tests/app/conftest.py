"""AppTest fixtures shared by the page tests: fresh caches, page opener."""

from __future__ import annotations

import pytest
import streamlit as st

from posenc.ui import cache
from posenc.views import similarity


@pytest.fixture(autouse=True)
def _fresh_caches(request):
    # st.cache_data is shared between AppTest instances in one process (streamlit#9139): every test starts with empty
    # caches, except a ``warm_caches`` test right after another (tests/conftest.py: page sweeps that patch nothing).
    warm = request.node.get_closest_marker("warm_caches") is not None
    if not (warm and getattr(request.session, "posenc_warm_before", False)):
        st.cache_data.clear()
        st.cache_resource.clear()
        cache.KEPT.clear()  # the long jobs' results (posenc.ui.cache.long_job), kept beside st.cache_data
        similarity._VIEWS.clear()  # scheme_similarity's results (RoPE's xPos and p-RoPE sections share one)
    yield
