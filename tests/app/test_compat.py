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


BOTH_WAYS = """
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from posenc.charts.base import style
from posenc.charts.lab import gap_chart
from posenc.lab.results import load_shipped
from posenc.ui import compat
from posenc.views.lab import overview

ov = overview(load_shipped())
ch = style(gap_chart(ov["frame"], ov["names"]))
st.altair_chart(ch, width="stretch", key="a")
st.vega_lite_chart(spec=dict(compat.chart_spec(ch)), width="stretch", key="b")
"""


def test_chart_spec_sends_what_st_altair_chart_sends():
    at = AppTest.from_string(BOTH_WAYS, default_timeout=60)
    at.run()
    assert not at.exception
    a, b = (el.proto for el in at.get("vega_lite_chart"))
    assert a.spec == b.spec, "streamlit's Altair conversion changed: compat.chart_spec must follow"
    assert [(d.name, d.data.data) for d in a.datasets] == [(d.name, d.data.data) for d in b.datasets]
    assert a.theme == b.theme and a.use_container_width == b.use_container_width


def test_chart_spec_is_remembered_only_for_memo_charts():
    import altair as alt
    import pandas as pd

    from posenc.charts.base import style
    from posenc.charts.memo import memo

    frame = pd.DataFrame({"x": [1, 2, 3], "y": [3.0, 1.0, 2.0]})
    built = memo(lambda df: alt.Chart(df).mark_line().encode(x="x:Q", y="y:Q"))
    first, again = built(frame), built(frame.copy())
    assert first is again  # the same content: the same chart, and the same spec
    assert compat.chart_spec(first) is compat.chart_spec(again)
    assert isinstance(next(iter(compat.chart_spec(first)["datasets"].values())), bytes)  # Arrow bytes, as Streamlit sends
    plain = alt.Chart(frame).mark_line().encode(x="x:Q", y="y:Q")
    assert compat.chart_spec(plain) is not compat.chart_spec(plain)  # not made by memo: converted every time
    assert style(first) is style(again)


def test_streamlit_still_collects_all_garbage_after_a_run_unless_told_not_to():
    """Behaviour 4: the option exists, is on by default, and guards a full collection in the script runner."""
    import inspect

    from streamlit import config
    from streamlit.runtime.scriptrunner import script_runner

    option = ".".join(compat.POST_SCRIPT_GC)
    assert config._config_options_template[option].default_val is True
    source = inspect.getsource(script_runner.ScriptRunner)
    assert f'config.get_option("{option}")' in source and "gc.collect(2)" in source


def test_the_dashboard_turns_the_collection_after_every_run_off():
    import tomllib

    section, name = compat.POST_SCRIPT_GC
    with open(compat.CONFIG, "rb") as fh:
        assert tomllib.load(fh)[section][name] is False
    assert f"--{section}.{name}=false" in compat.runner_flags()


def test_streamlit_started_in_the_dashboards_folder_reads_that_setting(tmp_path):
    """The config file is read from the folder streamlit runs in (the dashboard's own for `streamlit run app.py`,
    deploy's workers and the e2e servers); started elsewhere, the default (a collection after every run) holds."""
    import subprocess
    import sys

    probe = [sys.executable, "-c", "from streamlit import config; print(config.get_option('runner.postScriptGC'))"]
    read = {where: subprocess.run(probe, cwd=where, capture_output=True, text=True, timeout=60).stdout.split()[-1]
            for where in (compat.CONFIG.parents[1], tmp_path)}
    assert read == {compat.CONFIG.parents[1]: "False", tmp_path: "True"}
