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
    renamed = {d.name: f"posenc_data_{i}" for i, d in enumerate(a.datasets)}  # behaviour 5: named by place
    spec_a = a.spec
    for old, new in renamed.items():
        spec_a = spec_a.replace(f'"{old}"', f'"{new}"')
    assert spec_a == b.spec, "streamlit's Altair conversion changed: compat.chart_spec must follow"
    assert [(renamed[d.name], d.data.data) for d in a.datasets] == [(d.name, d.data.data) for d in b.datasets]
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


SWAP_DATA = """
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
from posenc.ui import compat
w = st.slider("w", 1, 9, 1)
t = np.arange(50)
line = alt.Chart(pd.DataFrame({"t": t, "y": np.sin(w * t / 10)})).mark_line().encode(x="t:Q", y="y:Q")
rule = alt.Chart(pd.DataFrame({"y": [0.5 * w / 9]})).mark_rule().encode(y="y:Q")
st.altair_chart(alt.layer(line, rule), key="plain")
st.vega_lite_chart(spec=dict(compat.chart_spec(alt.layer(line, rule))), key="placed")
"""


def test_streamlit_names_a_dataset_by_its_bytes_and_chart_spec_by_its_place():
    """Behaviour 5: st.altair_chart's spec text changes with the data (the frontend then builds a new view);
    chart_spec's does not (the frontend swaps the data of the view it has), and the data still change."""
    at = AppTest.from_string(SWAP_DATA, default_timeout=60)
    at.run()
    before = [el.proto for el in at.get("vega_lite_chart")]
    at.slider[0].set_value(5).run()
    after = [el.proto for el in at.get("vega_lite_chart")]
    assert not at.exception
    assert before[0].spec != after[0].spec, "streamlit now keeps a chart's spec when its data change: behaviour 5 can go"
    assert before[1].spec == after[1].spec
    assert [d.name for d in after[1].datasets] == ["posenc_data_0", "posenc_data_1"]
    assert [d.data.data for d in before[1].datasets] != [d.data.data for d in after[1].datasets]
    assert '"posenc_data_0"' in after[1].spec and '"posenc_data_1"' in after[1].spec


def test_positional_names_leaves_a_spec_without_datasets_alone_and_renames_every_reference():
    spec = {"layer": [{"data": {"name": "a1b2"}, "mark": "line"}, {"data": {"name": "c3d4"}, "mark": "rule",
                                                                    "transform": [{"lookup": "k", "from": {"data": {"name": "a1b2"}}}]}],
            "datasets": {"a1b2": b"x", "c3d4": b"y"}}
    out = compat.positional_names(spec)
    assert out["datasets"] == {"posenc_data_0": b"x", "posenc_data_1": b"y"}
    assert out["layer"][0]["data"]["name"] == "posenc_data_0"
    assert out["layer"][1]["transform"][0]["from"]["data"]["name"] == "posenc_data_0"
    assert "a1b2" not in str(out) and "c3d4" not in str(out)
    plain = {"mark": "line", "data": {"values": [{"x": 1}]}}
    assert compat.positional_names(plain) is plain


def test_freeze_long_lived_freezes_only_after_a_new_import():
    """Behaviour 6: what the process holds goes to the collector's permanent generation when a run imported a
    module, and is then not walked by a full collection; without a new import nothing happens."""
    import gc
    import sys
    import types

    try:
        compat.freeze_long_lived()
        frozen = gc.get_freeze_count()
        # no new freeze: the count does not grow (it may shrink: a frozen object freed by another thread leaves it;
        # a CI run saw 506,572 -> 506,570 while an earlier test's distributed threads were still alive)
        assert compat.freeze_long_lived() is False and gc.get_freeze_count() <= frozen
        sys.modules["_posenc_probe_module"] = types.ModuleType("_posenc_probe_module")
        held = [[i] for i in range(2000)]  # 2,000 tracked objects made since the last freeze
        assert all(gc.is_tracked(x) for x in held[:3])
        before = gc.get_freeze_count()
        assert compat.freeze_long_lived() is True
        assert gc.get_freeze_count() >= before + len(held)
        assert not any(x is held[0] for x in gc.get_objects())  # a full collection no longer walks them
    finally:
        sys.modules.pop("_posenc_probe_module", None)
        gc.unfreeze()


def test_the_dashboard_freezes_after_a_run_that_imported_modules():
    import gc

    from apphelpers import open_page

    gc.unfreeze()
    compat._FROZEN_MODULES[0] = 0  # as in a fresh process: the first run has imported everything
    try:
        at = open_page("pages/raw_index.py")
        assert not at.exception
        assert gc.get_freeze_count() > 10_000  # the imported modules' objects (tens of thousands)
    finally:
        gc.unfreeze()


# -- behaviour 7: raw upload bytes (issue 41, S1) -----------------------------------------------------------------------
def _rec(file_id: str, size: int):
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    return UploadedFileRec(file_id=file_id, name=f"{file_id}.npy", type="application/octet-stream", data=bytes(size))


def _held(mgr, session: str) -> int:
    return sum(len(r.data) for r in mgr.file_storage.get(session, {}).values())


def test_streamlit_keeps_every_raw_upload_of_a_session():
    """Streamlit's own add_file keeps whatever a session PUTs, for as long as the session lives."""
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager as Manager

    compat.guard_uploads()
    streamlit_add = getattr(Manager.add_file, "_posenc_original", Manager.add_file)
    mgr = Manager("/_stcore/upload_file")
    for i in range(12):
        streamlit_add(mgr, "s", _rec(f"f{i}", 2**20))
    assert _held(mgr, "s") == 12 * 2**20, ("Streamlit now bounds a session's raw uploads itself: "
                                            "compat.guard_uploads (behaviour 7) may be unnecessary")


def test_the_guard_bounds_raw_uploads_per_session_and_per_worker(monkeypatch):
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager as Manager

    compat.guard_uploads()
    monkeypatch.setattr(compat, "RAW_SESSION_BYTES", 3 * 2**20)
    monkeypatch.setattr(compat, "RAW_WORKER_BYTES", 4 * 2**20)
    mgr = Manager("/_stcore/upload_file")
    for i in range(12):  # issue 41: twelve PUTs from one session
        mgr.add_file("attacker", _rec(f"f{i}", 2**20))
        assert _held(mgr, "attacker") <= compat.RAW_SESSION_BYTES
    assert list(mgr.file_storage["attacker"]) == ["f9", "f10", "f11"]  # the newest kept
    mgr.add_file("student", _rec("table", 2**20))
    mgr.add_file("other", _rec("x", 2**20))  # the worker's budget: the oldest file of any session goes first
    assert mgr._total_bytes <= compat.RAW_WORKER_BYTES and mgr._total_bytes == sum(
        len(r.data) for files in mgr.file_storage.values() for r in files.values())
    assert "f9" not in mgr.file_storage["attacker"] and "table" in mgr.file_storage["student"]
    mgr.add_file("attacker", _rec("f11", 2**20))  # the same id again replaces, never duplicates
    assert list(mgr.file_storage["attacker"]).count("f11") == 1
    mgr.remove_session_files("attacker")  # Streamlit's own bookkeeping still adds up
    assert mgr._total_bytes == _held(mgr, "student") + _held(mgr, "other") and mgr._file_count == 2
    assert mgr.get_files("student", ["table"])[0].data == bytes(2**20)


RELEASE = """
import streamlit as st
from posenc.ui import compat
up = st.file_uploader("f", key="f")
st.write(f"held={compat.raw_upload_bytes()}")
if up is not None:
    compat.release_upload(up)
    st.write(f"after={compat.raw_upload_bytes()}")
"""


def test_release_upload_drops_the_raw_bytes_at_once():
    at = AppTest.from_string(RELEASE, default_timeout=30).run()
    at.file_uploader(key="f").set_value(("t.npy", bytes(5000), "application/octet-stream")).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["held=5000", "after=0"]


# -- behaviour 8: a link Streamlit drops whole (issue 41, R5) ----------------------------------------------------------
def test_streamlit_drops_a_link_with_more_than_1000_parameters():
    from streamlit.runtime.state import query_params as qp

    compat.guard_dropped_links()
    streamlit_sanitize = getattr(qp.sanitize_query_string, "_posenc_original", qp.sanitize_query_string)
    link = "&".join(f"k{i}=1" for i in range(1001))
    assert streamlit_sanitize(link) == "", "Streamlit now reads long links: compat behaviour 8 may be unnecessary"
    assert streamlit_sanitize("d=8") == "d=8"
    assert qp.sanitize_query_string(link) == f"{compat.LINK_DROPPED}=1001%2C{len(link)}"
    assert qp.sanitize_query_string("d=8") == "d=8"


def test_a_dropped_link_gets_a_visible_note():
    from apphelpers import open_page

    compat.guard_dropped_links()  # app.py installs it on a worker's first run (deploy/warm.py); here, whatever ran first
    query = {f"k{i}": "1" for i in range(1200)} | {"n": "128"}
    at = open_page("pages/sinusoid.py", query)
    assert not at.exception
    notes = [w.value for w in at.warning]
    assert any("1,201 parameters" in n and "at most 1,000 parameters" in n and "opened at its defaults" in n
               for n in notes), notes
    assert compat.LINK_DROPPED not in at.query_params  # taken out of the URL once noted
    at.run()
    assert not any("1,201 parameters" in w.value for w in at.warning)  # said once


# -- behaviour 9: the first element of a process walks the whole stack --------------------------------------------------
def test_streamlit_walks_the_stack_once_before_its_first_element(monkeypatch):
    import inspect

    from streamlit import delta_generator

    walks = []
    real = inspect.stack
    monkeypatch.setattr(inspect, "stack", lambda *a, **k: walks.append(1) or real(*a, **k))
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)
    delta_generator._maybe_print_use_warning()
    delta_generator._maybe_print_use_warning()
    assert walks == [1], "Streamlit no longer walks the stack before its first element: compat behaviour 9 may go"
    walks.clear()
    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)
    compat.skip_repl_check()
    delta_generator._maybe_print_use_warning()
    assert walks == []


def test_install_skips_the_stack_walk():
    from streamlit import delta_generator

    compat.install()
    assert delta_generator._use_warning_has_been_displayed is True
