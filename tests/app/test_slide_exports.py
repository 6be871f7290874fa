"""Every chart of every page exports as a slide: PNG at least 1,600 px wide (landscape unless
the chart is square by nature) and SVG in which every axis title, legend title and legend entry
appears whole (nothing cut with "…") and no two axis labels run together.  And every text mark
on a chart reads in the light and the dark theme (contrast 3:1 against both backgrounds).

The charts are the very objects the pages' Export menus draw (recorded by wrapping ``frame._export_row``), so
this covers every chart a page draws at its defaults, plus the pages' other states listed in
EXTRA_STATES.  The download buttons call the same ``export.chart_png`` / ``export.chart_svg``.
"""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest
import vl_convert as vlc
from apphelpers import assert_clean, export_keys, open_page

import posenc.ui.frame as frame
from posenc.io import export
from posenc.ui.pages import PAGES

# a few non-default states whose charts differ in shape (long labels, many tokens, uploads...)
EXTRA_STATES = {
    "pages/attention_order.py": {"a": " ".join(f"w{i:02d}" for i in range(40)), "b": " ".join(f"w{i:02d}" for i in reversed(range(40)))},
    "pages/index_length.py": {"s3": "A much longer third sentence with many words in it", "p": "3"},
    "pages/sinusoid.py": {"d": "512", "n": "1000"},
}
SQUARE_SLACK = 1.15  # a chart square by nature (the circle, M_k) may be this much taller than wide


def _record(monkeypatch) -> list[tuple[str, object]]:
    """(key, chart) of every Export menu a run draws: a chart's own (frame.chart) or a grid's whole (frame.chart_grid)."""
    seen: list[tuple[str, object]] = []
    original = frame._export_row

    def recording(key, whole, *args, **kw):
        seen.append((key, whole()))
        return original(key, whole, *args, **kw)

    monkeypatch.setattr(frame, "_export_row", recording)
    return seen


def _texts(svg: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.DOTALL)]


def _whole(label: str, texts: list[str]) -> bool:
    """The label appears in one text, or -- a legend entry wrapped by rule at " · " (name, then its
    settings) -- every one of its lines appears."""
    return any(label in t for t in texts) or all(any(part in t for t in texts) for part in label.split(" · "))


def _dataset_values(spec: dict, field: str) -> list[str]:
    out: list[str] = []
    for rows in spec.get("datasets", {}).values():
        out += [str(r[field]) for r in rows if isinstance(r, dict) and r.get(field) is not None]
    return list(dict.fromkeys(out))


def expected_strings(spec) -> set[str]:
    """Axis and legend titles, and the entries of every categorical legend, of a (slide) spec."""
    want: set[str] = set()

    def walk(node, top):
        if isinstance(node, list):
            for x in node:
                walk(x, top)
            return
        if not isinstance(node, dict):
            return
        enc = node.get("encoding")
        if isinstance(enc, dict):
            for channel, e in enc.items():
                if not isinstance(e, dict):
                    continue
                for holder in (e, e.get("axis") or {}, e.get("legend") or {}):
                    t = holder.get("title") if isinstance(holder, dict) else None
                    if isinstance(t, str) and t.strip():
                        want.add(t)
                legend = e.get("legend", {})
                if channel in ("color", "shape", "strokeDash") and legend is not None and e.get("type") in ("nominal", "ordinal") \
                        and (legend or {}).get("type") != "gradient":
                    domain = (e.get("scale") or {}).get("domain")
                    labels = [str(v) for v in domain] if isinstance(domain, list) else (
                        _dataset_values(top, e["field"]) if isinstance(e.get("field"), str) else [])
                    want.update(x for x in labels if x.strip())
        for key, value in node.items():
            if key not in ("datasets", "data"):
                walk(value, top)

    walk(spec, spec)
    return want


def _axis_labels(scene) -> list[list[dict]]:
    """Visible label items of every axis in a vl-convert scenegraph."""
    axes = []

    def walk(node):
        if isinstance(node, list):
            for x in node:
                walk(x)
        elif isinstance(node, dict):
            if node.get("marktype") == "text" and node.get("role") == "axis-label":
                axes.append([it for it in node.get("items", []) if it.get("text") not in ("", None) and it.get("opacity", 1) > 0])
            for v in node.values():
                if isinstance(v, (dict, list)):
                    walk(v)

    walk(scene)
    return axes


_NARROW = set(".,:;'!|ilI1 ")


def _width(item: dict) -> float:
    """Estimated width of a label in px (Helvetica-like metrics: narrow marks 0.3 em, others 0.58 em)."""
    return item.get("fontSize", 11) * sum(0.3 if c in _NARROW else 0.58 for c in str(item["text"]))


def _overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of neighbouring labels drawn on top of each other (estimated widths)."""
    bad = []
    flat = [it for it in labels if not it.get("angle")]
    horizontal = len({round(it.get("y", 0)) for it in flat}) == 1 and len(flat) > 1
    vertical = len({round(it.get("x", 0)) for it in flat}) == 1 and len(flat) > 1
    if horizontal:
        items = sorted(flat, key=lambda it: it["x"])
        for a, b in zip(items, items[1:]):
            if b["x"] - a["x"] < 0.5 * (_width(a) + _width(b)) + 2:  # at least 2 px between two labels
                bad.append((a["text"], b["text"]))
    elif vertical:
        items = sorted(flat, key=lambda it: it["y"])
        for a, b in zip(items, items[1:]):
            if b["y"] - a["y"] < 0.8 * a.get("fontSize", 11):
                bad.append((a["text"], b["text"]))
    return bad


LIGHT_BG, DARK_BG = "#FFFFFF", "#0E1117"  # the export and the light theme; Streamlit's dark theme


def _luminance(colour: str) -> float:
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = _luminance(a), _luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def unreadable_text(spec) -> list[str]:
    """Text marks drawn on the chart background whose colour does not read in both themes: no
    colour at all (Vega's default is black, black on the dark theme) or contrast under 3 against
    white or the dark background.  Text on coloured cells (a layer with a rect) is exempt."""
    bad = []

    def colour_of(node):
        mark = node.get("mark")
        if isinstance(mark, dict):
            for k in ("color", "fill"):
                if isinstance(mark.get(k), str):
                    return mark[k]
        enc = node.get("encoding", {}).get("color", {})
        return enc.get("value") if isinstance(enc, dict) and isinstance(enc.get("value"), str) else None

    def walk(node, on_cells):
        if isinstance(node, list):
            for x in node:
                walk(x, on_cells)
            return
        if not isinstance(node, dict):
            return
        layer = node.get("layer")
        cells = on_cells or (isinstance(layer, list) and any(
            (x.get("mark") == "rect" or (isinstance(x.get("mark"), dict) and x["mark"].get("type") == "rect")) for x in layer))
        mark = node.get("mark")
        if (mark == "text" or (isinstance(mark, dict) and mark.get("type") == "text")) and not on_cells:
            c = colour_of(node)
            if c is None:
                bad.append("a text mark with no colour (black on the dark theme)")
            elif c.startswith("#") and min(contrast(c, LIGHT_BG), contrast(c, DARK_BG)) < 3:
                bad.append(f"text in {c}: {contrast(c, LIGHT_BG):.2f} on white, {contrast(c, DARK_BG):.2f} on dark")
        for k, v in node.items():
            if k not in ("datasets", "data"):
                walk(v, cells)

    walk(spec, False)
    return bad


def _cases():
    for info in PAGES:
        yield pytest.param(info.path, None, id=info.url_path)
        if info.path in EXTRA_STATES:
            yield pytest.param(info.path, EXTRA_STATES[info.path], id=f"{info.url_path}-extra")


@pytest.mark.parametrize(("path", "query"), list(_cases()))
def test_every_chart_exports_whole(monkeypatch, path, query):
    seen = _record(monkeypatch)
    at = open_page(path, query)
    assert_clean(at)
    served = export_keys(at)
    assert len(served) == len(at.get("vega_lite_chart")), "every chart has an Export menu (frame.chart, frame.chart_grid)"
    assert [key for key, _ in seen] == list(dict.fromkeys(served.values()))
    for key, ch in seen:
        assert not unreadable_text(export.chart_spec(ch)), (key, unreadable_text(export.chart_spec(ch)))
        spec = export.slide_spec(ch)
        svg = vlc.vegalite_to_svg(spec)
        texts = _texts(svg)
        assert set(re.findall(r'font-family="([^"]*)"', svg)) <= {export.SLIDE_FONT}, key  # the font its layout measured
        cut = [t for t in texts if t.rstrip().endswith("…")]  # Vega cuts a text at its limit with a trailing "…"
        assert not cut, (key, cut)
        missing = sorted(s for s in expected_strings(spec) if not _whole(s, texts))
        assert not missing, (key, missing)
        for labels in _axis_labels(vlc.vegalite_to_scenegraph(spec)):
            assert not _overlapping(labels), (key, _overlapping(labels)[:5])
        # the PNG is this SVG rasterised at export.png_scale (test_export.py checks chart_png itself)
        sw, sh = (float(x) for x in re.search(r'<svg[^>]*\swidth="([0-9.]+)"[^>]*\sheight="([0-9.]+)"', svg).groups())
        scale = export.png_scale(sw)
        w, h = int(sw * scale), int(sh * scale)
        assert scale >= 2 and w >= export.MIN_PNG_WIDTH, (key, w, h)
        assert h <= SQUARE_SLACK * w, (key, "portrait", w, h)


def test_slide_spec_lifts_every_limit_and_replaces_container_widths():
    import altair as alt

    df = pd.DataFrame({"x": [0, 1], "y": [0, 1], "c": ["a label much longer than any default legend limit allows", "b"]})
    ch = alt.hconcat(
        alt.Chart(df, width="container").mark_line().encode(x="x:Q", y="y:Q", color=alt.Color("c:N", legend=alt.Legend(labelLimit=40))),
        alt.Chart(df, width="container").mark_point().encode(x=alt.X("x:Q", axis=alt.Axis(labelLimit=10, titleLimit=5)), y="y:Q"),
    )
    spec = export.slide_spec(ch)
    assert "container" not in str(spec)
    assert [p["width"] for p in spec["hconcat"]] == [export._concat_width(2)] * 2
    assert spec["hconcat"][0]["encoding"]["color"]["legend"]["labelLimit"] == 0
    assert spec["hconcat"][1]["encoding"]["x"]["axis"] == {"labelLimit": 0, "titleLimit": 0}
    texts = _texts(export.chart_svg(ch).decode())
    assert "a label much longer than any default legend limit allows" in texts


def test_the_svg_names_the_font_its_text_was_measured_with():
    """vl-convert lays text out with Liberation Sans whatever the host has: a legend sized for it is as wide in
    SLIDE_FONT as under Vega's default font and as in Liberation Sans named.  (A Debian or Ubuntu viewer's "sans-serif"
    is DejaVu Sans, wider: an SVG naming "sans-serif" drew 17 of the 63 charts the pages export at their defaults past
    their edge there.)"""
    import altair as alt

    df = pd.DataFrame({"x": [0, 1], "y": [0, 1], "c": ["float32 → bfloat16 and a long legend label", "b"]})
    ch = alt.Chart(df).mark_point().encode(x="x:Q", y="y:Q", color="c:N")

    def width(font: str | None) -> float:
        spec = ch.to_dict() if font is None else ch.configure(font=font).to_dict()
        return float(re.search(r'<svg[^>]*\swidth="([0-9.]+)"', vlc.vegalite_to_svg(spec)).group(1))

    assert width(export.SLIDE_FONT) == width(None) == width("Liberation Sans")
    svg = export.chart_svg(ch).decode()
    assert set(re.findall(r'font-family="([^"]*)"', svg)) == {export.SLIDE_FONT}


def test_png_scale_reaches_the_slide_width():
    assert export.png_scale(400) == pytest.approx(4.0, abs=0.01)  # a 400 px square chart is drawn 4x, 1,600 px wide
    assert export.png_scale(1200) == 2.0  # wide enough at the usual 2x


def test_an_uploaded_table_with_a_long_name_exports_whole(monkeypatch):
    """The issue: on Learned tables an uploaded table's legend read "gpt2_m…" in the export."""
    import io

    import numpy as np

    name = "gpt2_medium_position_embeddings_wpe.npy"
    buf = io.BytesIO()
    np.save(buf, np.cumsum(np.random.default_rng(0).normal(size=(300, 32)), axis=0).astype(np.float32))
    seen = _record(monkeypatch)
    at = open_page("pages/learned.py")
    at.file_uploader(key="upload").set_value((name, buf.getvalue(), "application/octet-stream")).run()
    picker = at.selectbox(key="table")  # uploads turn the picker into a list; the label ends in the content hash
    picker.set_value("upload:" + next(o for o in picker.options if o.startswith(name))).run()
    assert not at.exception
    drawn = seen[-len(at.get("vega_lite_chart")):]
    assert any(name in str(export.chart_spec(ch)) for _, ch in drawn)
    for key, ch in drawn:
        texts = _texts(export.chart_svg(ch).decode())
        assert not [t for t in texts if t.rstrip().endswith("…")], key
        if name in str(export.chart_spec(ch)):
            assert any(name in t for t in texts), (key, [t for t in texts if "gpt2" in t])
