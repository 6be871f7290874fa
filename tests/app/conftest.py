"""AppTest fixtures shared by the page tests: fresh caches, page opener."""

from __future__ import annotations

import pytest
import streamlit as st


@pytest.fixture(autouse=True)
def _fresh_caches():
    # st.cache_data is shared between AppTest instances in one process (streamlit#9139).
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
