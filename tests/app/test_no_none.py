"""Issue 40, item 5: no raw "None" on any page -- a missing value is written "—" (with a tooltip saying why).

Every page at its defaults: no text, metric, table cell or table header shows the word None (Python's missing value
printed as it is).  Exercise explanations hidden until a reveal are not on the page, so they are not searched.
"""

from __future__ import annotations

import re

import pytest
from apphelpers import assert_clean, shown_page
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from posenc.ui.pages import PAGES

pytestmark = pytest.mark.warm_caches  # tests/conftest.py: runs after another page sweep reuse its caches
NONE = re.compile(r"\bNone\b(?!\s+of\b)")  # Python's None; "None of these schemes ..." is a sentence


def shown_texts(at) -> list[str]:
    """Every text a reader sees: Markdown, captions, alerts, metrics (label, value, tooltip), tables (cells, headers)."""
    out = [x.value for kind in (at.markdown, at.caption, at.info, at.warning, at.success, at.error) for x in kind]
    for m in at.metric:
        out += [m.label, m.value, m.proto.help]
    for t in [*at.table, *at.dataframe]:
        out += [str(c) for c in t.value.columns]
        out += [str(v) for v in _cells(t) if v is None or isinstance(v, str)]
    return [s for s in out if s]


def _cells(t) -> list:
    """What a table shows in its cells: the Styler's display values where it sent them (frame.table's "missing" text),
    else the data, without its missing cells where the grid draws a placeholder of its own (st.dataframe placeholder=)."""
    arrow = getattr(t.proto, "arrow_data", None) or t.proto
    shown = getattr(getattr(arrow, "styler", None), "display_values", b"")
    if shown:
        return list(convert_arrow_bytes_to_pandas_df(shown).astype(object).to_numpy().ravel())
    cells = list(t.value.astype(object).to_numpy().ravel())
    if getattr(t.proto, "placeholder", "") not in ("", "None"):
        cells = [v for v in cells if not (v is None or (isinstance(v, float) and v != v))]
    return cells


def nones(at) -> list[str]:
    return [s[:160] for s in shown_texts(at) if NONE.search(s)]


@pytest.mark.parametrize("info", PAGES, ids=[p.url_path for p in PAGES])
def test_no_page_shows_none(info):
    at = shown_page(info.path)
    assert_clean(at)
    assert nones(at) == [], f"{info.path} shows None: {nones(at)}"
