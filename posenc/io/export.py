"""Bytes for downloads: charts as PNG/SVG (vl-convert), tables as CSV, arrays as .npy.

Pure functions (no Streamlit), so the export formats are tested directly.  vl-convert renders
Vega-Lite with Vega's own engine in Rust: no browser, no Node, no network.

Charts are drawn for a page ("container" width, labels cut to fit a column); ``slide_spec`` turns
any of them into a slide in one place: a container width becomes the slide width (800 px, split
between side-by-side panels), and no axis label, axis title, legend label or legend title is
cut short ("…"): every limit is lifted.  The PNG is rendered at 2x or more, so it is at least
1,600 px wide.

Text is set in ``SLIDE_FONT``.  vl-convert lays text out with the Liberation Sans it carries (whatever the host has), and
an SVG names its font: named "sans-serif", a viewer whose sans-serif is wider (DejaVu Sans, the default on Debian and
Ubuntu desktops) drew every label past where the layout ended -- legend titles and end labels past the SVG's edge (17
of the 63 charts the pages export at their defaults, 2026-12-06).  Liberation Sans, Arial and Helvetica share their widths.
"""

from __future__ import annotations

import copy
import io
import re

import altair as alt
import numpy as np
import pandas as pd


def chart_spec(chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of an Altair chart with its data inlined (no 5000-row cap)."""
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


SLIDE_WIDTH = 800  # px: the plot width a "container" chart gets on a slide
MIN_PNG_WIDTH = 1600  # px: every PNG is at least this wide (a 16:9 slide at 1600 x 900)
SLIDE_FONT = "Liberation Sans, Arial, Helvetica, sans-serif"  # the widths vl-convert measures with (see the docstring)
_LIMITS = ("labelLimit", "titleLimit")  # Vega cuts text longer than these with "…"; 0 = no limit
_PANEL_SPACING = 24
SLIDE_COLUMNS = 4  # panels of a wrapped concat per slide row


def _concat_width(n: int) -> int:
    return max(200, (SLIDE_WIDTH - _PANEL_SPACING * (n - 1)) // max(n, 1))


def _to_slide(node, width: int) -> None:
    """In place: "container" widths -> ``width`` (split across hconcat panels), limits lifted."""
    if isinstance(node, list):
        for item in node:
            _to_slide(item, width)
        return
    if not isinstance(node, dict):
        return
    if node.get("width") == "container":
        node["width"] = width
    for key in _LIMITS:
        if key in node:
            node[key] = 0
    for key, value in list(node.items()):
        if key in ("datasets", "data", "values"):
            continue
        if key == "concat" and isinstance(value, list):
            node["columns"] = min(len(value), SLIDE_COLUMNS)  # a grid of panels becomes a landscape row
            _to_slide(value, _concat_width(node["columns"]))
        elif key == "hconcat" and isinstance(value, list):
            _to_slide(value, _concat_width(len(value)))
        else:
            _to_slide(value, width)


def _legends_beside(node) -> None:
    """In place: every legend under (or over) the plot goes to its right (for a square chart)."""
    if isinstance(node, list):
        for item in node:
            _legends_beside(item)
    elif isinstance(node, dict):
        legend = node.get("legend")
        if isinstance(legend, dict) and legend.get("orient") in ("bottom", "top"):
            legend.update(orient="right", direction="vertical")
        for key, value in node.items():
            if key not in ("datasets", "data"):
                _legends_beside(value)


def _set_height(node, height: int) -> None:
    """In place: every numeric height above ``height`` becomes ``height``."""
    if isinstance(node, list):
        for item in node:
            _set_height(item, height)
    elif isinstance(node, dict):
        if isinstance(node.get("height"), (int, float)) and node["height"] > height:
            node["height"] = height
        for key, value in node.items():
            if key not in ("datasets", "data", "config"):
                _set_height(value, height)


def _square(spec: dict) -> bool:
    """A plot as tall as it is wide (its own size, or the size its layers share)."""
    sizes = [spec] + [layer for layer in spec.get("layer", ()) if isinstance(layer, dict)]
    return any(isinstance(s.get("width"), (int, float)) and s.get("width") == s.get("height") for s in sizes)


def slide_spec(chart: alt.TopLevelMixin | dict) -> dict:
    """The chart's Vega-Lite spec (data inlined) made whole for a slide: see the module docstring.
    A square chart (the circle, a matrix) whose legend sits under it on a phone gets it beside it,
    so the slide stays landscape."""
    spec = copy.deepcopy(chart) if isinstance(chart, dict) else chart_spec(chart)
    plot_height = spec.get("usermeta", {}).get("plot_height")
    if plot_height:  # a chart that made room for a long legend under it (for a phone): legend beside, plot height back
        _legends_beside(spec)
        _set_height(spec, int(plot_height))
    elif _square(spec) or (len(spec.get("concat", ())) == 1 and _square(spec["concat"][0])):  # a lone square panel too
        _legends_beside(spec)
    _to_slide(spec, SLIDE_WIDTH)
    config = spec.setdefault("config", {})
    for part in ("axis", "legend", "header"):
        config.setdefault(part, {}).update({"labelLimit": 0, "titleLimit": 0})
    config.setdefault("title", {}).setdefault("limit", 0)
    config.setdefault("background", "white")
    config["font"] = SLIDE_FONT
    return spec


def _svg_width(svg: str) -> float:
    m = re.search(r'<svg[^>]*\swidth="([0-9.]+)', svg)
    return float(m.group(1)) if m else float(SLIDE_WIDTH)


def chart_svg(chart: alt.TopLevelMixin | dict) -> bytes:
    """An SVG of the chart, made whole for a slide (UTF-8 bytes)."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(slide_spec(chart)).encode("utf-8")


def png_scale(svg_width: float, scale: float = 2.0) -> float:
    """``scale``, raised so that a drawing ``svg_width`` px wide becomes at least MIN_PNG_WIDTH px."""
    return max(scale, (MIN_PNG_WIDTH + 0.5) / max(svg_width, 1.0))  # + 0.5: the rasteriser rounds down


def chart_png(chart: alt.TopLevelMixin | dict, *, scale: float = 2.0) -> bytes:
    """A PNG of the slide drawing at ``scale`` x its size (2 = crisp on slides), or more if that
    would be under MIN_PNG_WIDTH px wide (a small square chart is scaled up, not re-laid out)."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(slide_spec(chart))
    return vlc.svg_to_png(svg, scale=png_scale(_svg_width(svg), scale))


def frame_csv(df: pd.DataFrame) -> bytes:
    """The chart's data as CSV (UTF-8, no index)."""
    return df.to_csv(index=False).encode("utf-8")


def array_npy(arr) -> bytes:
    """An array as a .npy file (never pickled: object arrays are refused)."""
    a = np.asarray(arr)
    if a.dtype == object:
        raise ValueError("only numeric arrays can be exported as .npy")
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()
