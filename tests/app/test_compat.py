"""The Streamlit behaviours posenc.ui.compat works around, reproduced against the installed Streamlit.

Each test fails loudly when Streamlit's behaviour changes: then the workaround in posenc/ui/compat.py
(and this test) can go, or must follow.  The deep-link behaviour needs a live server: see
tests/e2e/test_compat_deeplink.py.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from posenc.ui import compat

BOUND_NUMBER = """
import streamlit as st
st.number_input("d", 1, 64, 8, key="d", bind="query-params")
"""

GUARDED_NUMBER = """
import streamlit as st
from posenc.ui import compat
raw = st.query_params.get_all("d")
value = st.number_input("d", 1, 64, 8, key="d", bind=compat.number_binding("d", raw))
st.write(f"value={value}")
"""


def test_tested_streamlit_version():
    assert compat.streamlit_version() == compat.TESTED, (
        f"posenc.ui.compat was written against streamlit {compat.TESTED}; this is {st.__version__}: re-check "
        "both behaviours in its docstring (tests/app/test_compat.py, tests/e2e/test_compat_deeplink.py)")


@pytest.mark.parametrize("raw", ["inf", "1e400", "-inf"])
def test_streamlit_still_raises_on_a_non_finite_bound_int(raw):
    at = AppTest.from_string(BOUND_NUMBER, default_timeout=30)
    at.query_params["d"] = raw
    at.run()
    # (the message itself is redacted by client.showErrorDetails; the log shows OverflowError from int(inf))
    assert at.exception, ("Streamlit no longer fails on a non-finite link value for a bound int widget: "
                          "compat.number_binding may be unnecessary now")


@pytest.mark.parametrize("raw", ["inf", "1e400", "nan", "-inf", "12abc"])
def test_the_guard_falls_back_to_the_default(raw):
    at = AppTest.from_string(GUARDED_NUMBER, default_timeout=30)
    at.query_params["d"] = raw
    at.run()
    assert not at.exception
    assert at.markdown[0].value == "value=8"


def test_a_finite_link_value_is_still_bound():
    at = AppTest.from_string(GUARDED_NUMBER, default_timeout=30)
    at.query_params["d"] = "12"
    at.run()
    assert not at.exception and at.markdown[0].value == "value=12"


def test_finite_number():
    assert compat.finite_number([]) and compat.finite_number(["3"]) and compat.finite_number(["-2.5e3"])
    assert not any(compat.finite_number(r) for r in (["inf"], ["nan"], ["1e400"], ["x"], ["1", "2"]))
