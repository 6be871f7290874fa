"""Helpers for AppTest page tests: open a page, read its charts, metrics and numbers."""

from __future__ import annotations

import ast
import builtins
import io
import json
import re
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def open_page(path: str, query: dict | None = None, timeout: float = 60, opened: tuple[str, ...] = ()) -> AppTest:
    """Run app.py routed to ``path`` (e.g. "pages/sinusoid.py") with ``query`` seeded and the boxes keyed ``opened``
    open (``posenc.ui.section.when_open``: what such a box holds is drawn only while it is open).

    Streamlit 1.67's AppTest accepts switch_page before the first run, so the landing page is
    not run first (that halves the cost of the hypothesis-driven link tests)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.switch_page(path)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key in opened:
        at.session_state[key] = True
    return at.run()


_SHOWN: dict[tuple, AppTest] = {}


def shown_page(path: str, query: dict | None = None) -> AppTest:
    """The page ``open_page(path, query)`` draws with its lazy boxes open (``lazy_boxes``), run once per process and
    shared by every test that only reads it (no None shown, plain words, chart keys, export menus, the boundary sweep's
    first run, the link sweeps' keys): a caller reads its elements and never sets a widget or reruns it -- a test that
    does takes a page of its own from ``open_page``.  Each xdist worker keeps its own copy; tests/conftest.py sends every
    test of one page to one worker, so a page at one setting is drawn once per run instead of once per sweep."""
    key = (path, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in (query or {}).items())))
    if key not in _SHOWN:
        at = open_page(path, query, timeout=180)
        if boxes := lazy_boxes(at):  # what the page draws once its boxes are open, so that every sweep reads it too
            for box in boxes:
                at.session_state[box] = True
            at.run()
        _SHOWN[key] = at
    return _SHOWN[key]


def lazy_boxes(at: AppTest) -> list[str]:
    """The keys of the page's closed boxes that compute only while open (``posenc.ui.section.when_open``: the lab's
    attention maps, RoPE's variants and pair table), its code panels ("code_...", tests/app/test_show_code.py) left
    out.  Streamlit gives such an expander an id ending in its key; a plain expander has none."""
    keys = [e.proto.id.split("-", 2)[2] for e in at.expander if e.proto.id and not e.proto.expanded]
    return [k for k in keys if not k.startswith("code_")]


def assert_clean(at: AppTest) -> None:
    """No exception element and no st.error on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _chart_key(spec: dict) -> tuple[str, str]:
    """(chart key, export key) of a chart drawn by posenc.ui.frame: ``frame.chart(..., key=k)`` draws chart ``k``
    (its Export menu is ``k``), panel ``i`` of ``frame.chart_grid(..., key=k)`` is chart ``f"{k}_{i}"`` (the grid's one
    Export menu is ``k``).  frame puts the key in the spec's ``usermeta`` (Streamlit sends no key for a chart)."""
    meta = spec.get("usermeta") or {}
    key = meta.get("posenc_key")
    assert isinstance(key, str) and key, f"a chart drawn without posenc.ui.frame's key: usermeta {meta!r}"
    panel = meta.get("posenc_panel")
    return (key if panel is None else f"{key}_{panel}"), key


def charts(at: AppTest) -> dict[str, dict]:
    """Every Vega-Lite chart on the page, by its key (``_chart_key``), in page order:
    {key: {"spec": dict, "data": {name: DataFrame}, "rows": int, "export": the key of its Export menu}}.
    Two charts with one key fail here.  Tests find a chart by key, never by its place on the page."""
    out: dict[str, dict] = {}
    for el in at.get("vega_lite_chart"):
        proto = el.proto
        spec = json.loads(proto.spec)
        data = {}
        for ds in proto.datasets:
            table = pa.ipc.open_stream(io.BytesIO(ds.data.data)).read_all()
            data[ds.name] = table.to_pandas()
        key, export = _chart_key(spec)
        assert key not in out, f"two charts with the key {key!r}"
        out[key] = {"spec": spec, "data": data, "rows": sum(len(d) for d in data.values()), "export": export}
    return out


def chart(at: AppTest, key: str) -> dict:
    """Chart ``key`` of the page (as ``charts`` gives it); a missing key fails naming the keys the page drew."""
    drawn = charts(at)
    assert key in drawn, f"no chart {key!r} on the page; drawn: {list(drawn)}"
    return drawn[key]


def _elements(at: AppTest):
    """(delta path, element) of every element of the page, in page order."""
    def walk(node, path):
        children = getattr(node, "children", None)
        if isinstance(children, dict) and children:
            for i in sorted(children):
                yield from walk(children[i], (*path, i))
        else:
            yield path, node

    yield from walk(at._tree, ())


def chart_places(at: AppTest) -> dict[str, tuple[int, ...]]:
    """{chart key: where the chart sits in the page's element tree (its delta path)}.  A chart that moves to another
    place between two runs is built again from scratch by the browser, so a control should not move charts it does
    not change."""
    return {_chart_key(json.loads(node.proto.spec))[0]: path
            for path, node in _elements(at) if getattr(node, "type", None) == "vega_lite_chart"}


def export_keys(at: AppTest) -> dict[str, str]:
    """{chart key: the key of the Export menu that serves it}: the first menu after the chart in the page (a chart's
    own, or the one under a grid of panels, posenc.ui.frame.chart_grid), in the charts' order."""
    keys: dict[str, str] = {}
    pending: list[str] = []
    for _, node in _elements(at):
        kind = getattr(node, "type", None)
        if kind == "vega_lite_chart":
            pending.append(_chart_key(json.loads(node.proto.spec))[0])
        elif kind == "download_button" and str(getattr(node, "key", "")).startswith("csv_"):
            keys.update(dict.fromkeys(pending, node.key[len("csv_"):]))
            pending = []
    return keys


def _image_heatmaps(spec: dict) -> list[dict]:
    """Every layer spec of ``spec`` (recursively) that draws a heatmap as an image (posenc.charts.raster)."""
    found = []
    for key in ("layer", "concat", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            if key == "layer" and (sub.get("mark") or {}).get("type") == "image":
                found.append(spec)
                break
            found += _image_heatmaps(sub)
    return found


def chart_frame(at: AppTest, key: str) -> pd.DataFrame:
    """The data of chart ``key`` (all its datasets concatenated).  A heatmap drawn as an image
    sends only a coarse hover grid of its values: then the chart's CSV export is returned, after
    checking that every value drawn in the hover grid is the export's value at that cell."""
    c = chart(at, key)
    images = _image_heatmaps(c["spec"])
    if images:
        data = exported(at, c["export"])[1]
        for layer in images:
            drawn, hover = drawn_cells(c, layer), layer["layer"][1]["encoding"]
            x, y, v = hover["x"]["field"], hover["y"]["field"], hover["tooltip"][-1]["field"]  # the value: the last tooltip
            if v not in drawn.columns:  # the browser computes the value from a field sent (raster's factor): check that field
                calc = next(t["calculate"] for t in layer["layer"][1].get("transform", []) if t.get("as") == v)
                v = re.fullmatch(r"datum\['(\w+)'\] \* \(.+\)", calc).group(1)
            # a stack of images (one per layer and head, picked in the browser) carries its integer fields in both
            on = [y, x] + [f for f in drawn.columns if f in data.columns and f not in (y, x, v) and drawn[f].dtype.kind in "iu"]
            both = drawn[[*on, v]].dropna().merge(data[[*on, v]], on=on, how="left", suffixes=("_drawn", ""))
            close = (both[f"{v}_drawn"] - both[v]).abs() <= 1e-5 * np.maximum(1.0, both[v].abs())
            assert close.groupby([both[f] for f in on]).any().all(), "a hover value is not the exported value at its cell"
        return data
    frames = list(c["data"].values())
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def metrics(at: AppTest) -> dict[str, str]:
    """{label: value string} of every st.metric."""
    return {m.label: m.value for m in at.metric}


def text_of(at: AppTest) -> str:
    """All markdown, captions, info/success/warning texts of the page, joined."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [x.value for x in at.info] + [x.value for x in at.success] + [x.value for x in at.warning]
    return "\n".join(parts)


def payload_bytes(at: AppTest) -> int:
    """Bytes of every chart spec and dataset plus dataframes on the page (what the browser gets)."""
    total = 0
    for el in at.get("vega_lite_chart"):
        total += len(el.proto.spec) + sum(len(ds.data.data) for ds in el.proto.datasets)
    for df in [*at.dataframe, *at.table]:  # st.dataframe and st.table send the same Arrow proto
        total += len(df.proto.arrow_data.data) if hasattr(df.proto, "arrow_data") else 0
    return total + sum(len(s.encode()) for s in tables(at, source=True).values())  # Markdown tables


MISSING = ("?", "—")  # what posenc.ui.frame.table prints for a missing value (its ``missing``): NaN in a column of numbers
_NUMBER = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d*)?([eE][-+]?\d+)?|[-+]?\.\d+([eE][-+]?\d+)?|[-+]?inf|nan")
_PIPE = re.compile(r"(?<!\\)\|")  # a cell boundary: a pipe not escaped by a backslash
_LINK = re.compile(r"(?<!\\)\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)")  # a Markdown link (its text stays): "[text](/lab)"
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash escape of ASCII punctuation (CommonMark 2.4)


def markdown_table(text: str) -> pd.DataFrame:
    """A GFM table (posenc.ui.frame.table's Markdown) as the text its cells show: escapes resolved, a link as its
    text, without the invisible word joiners of ``md.escape``; a column whose every cell is a plain number ("3",
    "-0.5", "1e-06", "2,048", with ``MISSING`` marks as NaN) as numbers, all others as text."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    assert len(lines) >= 2 and set(lines[1]) <= set("|-: "), f"not a Markdown table: {text[:200]!r}"

    def cells(line: str) -> list[str]:
        parts = _PIPE.split(line.strip()[1:-1])
        return [_ESCAPED.sub(r"\1", _LINK.sub(r"\1", p.strip())).replace("\u2060", "") for p in parts]

    frame = pd.DataFrame([cells(ln) for ln in lines[2:]], columns=cells(lines[0]))
    for i, col in enumerate(frame.columns):
        values = frame.iloc[:, i]
        missing = values.isin(MISSING)
        if (~missing).any() and all(_NUMBER.fullmatch(v) for v in values[~missing]):
            values = values.mask(missing).str.replace(",", "")  # "2,048": a thousands separator (format ",")
            whole = not missing.any() and all(re.fullmatch(r"[-+]?\d+", v) for v in values)
            frame[col] = values.astype(int) if whole else pd.to_numeric(values)
    return frame


def _blocks(node, path=()):
    """(path, node) of every block and element under ``node``, in page order."""
    yield path, node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for i in sorted(children):
            yield from _blocks(children[i], (*path, i))


def tables(at: AppTest, source: bool = False) -> dict:
    """Every table posenc.ui.frame.table drew, by its key (the container ``table_<key>``, or ``table_scroll_<key>``
    for one that scrolls), in page order, as the browser shows it (``markdown_table``), or with ``source`` its
    Markdown.  Tests find a table by key, never by its place on the page; two tables with one key fail here."""
    out: dict = {}
    for _, node in _blocks(at._tree):
        key = getattr(node, "key", None)
        if isinstance(key, str) and key.startswith("table_") and type(node).__name__ == "Block":
            inner = [n for _, n in _blocks(node) if type(n).__name__ != "Block"]
            assert len(inner) == 1 and type(inner[0]).__name__ == "Markdown", f"table {key!r} holds {inner}"
            name = key.removeprefix("table_").removeprefix("scroll_")
            assert name not in out, f"two tables with the key {name!r}"
            out[name] = inner[0].value if source else markdown_table(inner[0].value)
    return out


def shown_frames(at: AppTest) -> list[pd.DataFrame]:
    """Every table the page shows, as data: each st.dataframe's and st.table's, then each Markdown table drawn by
    posenc.ui.frame.table (``markdown_table``): where a test looks for a number or a word in any table."""
    return [el.value for el in [*at.dataframe, *at.table]] + [markdown_table(s) for s in tables(at, source=True).values()]


def table(at: AppTest, key: str) -> pd.DataFrame:
    """Table ``key`` of the page (``tables``); a missing key fails naming the keys the page drew."""
    drawn = tables(at)
    assert key in drawn, f"no table {key!r} on the page; drawn: {list(drawn)}"
    return drawn[key]


def reveal(at: AppTest, key: str) -> AppTest:
    """Turn exercise ``key``'s reveal toggle on and rerun."""
    at.toggle(key=f"ex_{key}_reveal").set_value(True).run()
    return at


def exported(at: AppTest, key: str):
    """(chart, CSV data, arrays) the Export menu of chart ``key`` serves (posenc.ui.frame.chart)."""
    from posenc.ui.frame import _EXPORTS

    return at.session_state[_EXPORTS][key].value


def drawn_cells(chart: dict, sub: dict) -> pd.DataFrame:
    """The cells with values the browser gets for one heatmap (sub-)spec of ``chart``: its rect data,
    or, for a heatmap drawn as an image (posenc.charts.raster), the hover grid's exact values."""
    layers = sub.get("layer", [sub])
    if any((ly.get("mark") or {}).get("type") == "image" for ly in layers):
        hover = next(ly for ly in layers if (ly.get("mark") or {}).get("type") == "rect")
        return chart["data"][hover["data"]["name"]]
    name = sub.get("data", {}).get("name") or next(ly["data"]["name"] for ly in layers if "data" in ly)
    return chart["data"][name]


def one_parse_at_a_time(monkeypatch) -> None:
    """Tests that run AppTests in several threads at once: each run parses its script (Streamlit's magic calls
    ast.parse), and concurrent parses in CPython 3.11 can raise "SystemError: AST constructor recursion depth
    mismatch" (seen once in a CI run).  Parsing and compiling are taken one at a time for the test."""
    parsing = threading.RLock()
    real_parse, real_compile = ast.parse, builtins.compile

    def one_parse(*a, **k):
        with parsing:
            return real_parse(*a, **k)

    def one_compile(*a, **k):
        with parsing:
            return real_compile(*a, **k)

    monkeypatch.setattr(ast, "parse", one_parse)
    monkeypatch.setattr(builtins, "compile", one_compile)
