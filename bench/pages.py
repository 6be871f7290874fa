"""Section 4: every page at default controls and at the largest settings its controls allow.

Script run time is AppTest's (median of 5 warm reruns); bytes are the serialized size of every
element the page sends (chart specs and Arrow datasets included); marks are the rows of the
largest chart dataset.  The largest settings are read off the page's own widgets: every slider
and number input at its maximum, every select slider at its last option, every multiselect
filled to its limit.
"""

from __future__ import annotations

import io
import statistics
import time
from pathlib import Path

import pyarrow as pa
import streamlit as st
from streamlit.testing.v1 import AppTest

from posenc.ui.pages import PAGES

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def payload(at: AppTest) -> dict:
    """Bytes of every element proto (what goes over the websocket) and the largest chart."""
    total, charts, max_rows = 0, 0, 0
    for root in (at.main, at.sidebar):
        for node in _walk(root):
            proto = getattr(node, "proto", None)
            if proto is not None and hasattr(proto, "ByteSize") and not getattr(node, "children", None):
                total += proto.ByteSize()
    for el in at.get("vega_lite_chart"):
        charts += 1
        rows = 0
        for ds in el.proto.datasets:
            rows += pa.ipc.open_stream(io.BytesIO(ds.data.data)).read_all().num_rows
        max_rows = max(max_rows, rows)
    return {"bytes": total, "charts": charts, "max_chart_rows": max_rows}


def _open(path: str, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    if path != "pages/home.py":
        at.switch_page(path)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def _num(v) -> str:
    """A number as a link value: integers in plain digits (a bound int control rejects "1e+07")."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:g}" if isinstance(v, float) else str(v)


def _max_query(at: AppTest) -> dict:
    """URL values that put every slider/number/select-slider/multiselect at its largest setting."""
    q: dict = {}
    for s in at.slider:
        if s.key and not isinstance(s.value, tuple):
            q[s.key] = _num(s.max) if isinstance(s.value, int) else (f"{s.max:g}" if isinstance(s.max, float) else str(s.max))
    for s in at.number_input:
        if s.key and s.max is not None and not s.key.startswith("ex_"):
            q[s.key] = _num(s.max) if isinstance(s.value, int) else (f"{s.max:g}" if isinstance(s.max, float) else str(s.max))
    for s in at.select_slider:
        if s.key:
            q[s.key] = s.options[-1]
    for m in at.multiselect:
        if m.key:
            limit = m.proto.max_selections or len(m.options)
            q[m.key] = list(m.options[:limit])
    return q


def _timed_runs(at: AppTest, repeats: int = 5) -> float:
    at.run()  # warm: caches filled
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def pages() -> list[dict]:
    rows = []
    for info in PAGES:
        st.cache_data.clear()
        t0 = time.perf_counter()
        at = _open(info.path)
        cold = time.perf_counter() - t0
        row = {"page": info.path, "title": info.title, "cold_s": cold, "exception": [e.value for e in at.exception]}
        row["default_run_s"] = _timed_runs(at)
        row["default"] = payload(at)
        q = _max_query(at)
        row["max_query"] = q
        at_max = _open(info.path, q)
        row["max_exception"] = [e.value for e in at_max.exception]
        row["max_errors"] = [e.value for e in at_max.error]
        row["max_run_s"] = _timed_runs(at_max, repeats=3)
        row["max"] = payload(at_max)
        row["goal_met"] = bool(
            not row["exception"] and not row["max_exception"]
            and row["default"]["bytes"] <= 1_000_000 and row["max"]["bytes"] <= 2_000_000
            and row["default"]["max_chart_rows"] <= 65_536 and row["max"]["max_chart_rows"] <= 65_536
            and row["default_run_s"] <= 0.5
        )
        rows.append(row)
    return rows
