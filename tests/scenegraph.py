"""What a chart draws: walks of a Vega scenegraph (``vl_convert.vegalite_to_scenegraph``), for tests that check a chart
to the pixel, and the text Vega keeps in an exported SVG (``shown_texts``)."""

from __future__ import annotations

import re
from collections.abc import Callable


def nodes(node, test: Callable[[dict], bool]) -> list[dict]:
    """Every dict of the scenegraph for which ``test`` holds, depth first."""
    found = []
    if isinstance(node, dict):
        if test(node):
            found.append(node)
        for value in node.values():
            found += nodes(value, test)
    elif isinstance(node, list):
        for value in node:
            found += nodes(value, test)
    return found


def marks(node, marktype: str) -> list[dict]:
    """Every item of the scenegraph drawn with ``marktype``."""
    return [item for mark in nodes(node, lambda d: d.get("marktype") == marktype) for item in mark.get("items", [])]


def shown_texts(svg: str, role: str) -> list[str]:
    """The texts Vega keeps visible in the first mark group of ``role`` (``role-axis-label``: the first axis drawn, x;
    ``role-legend-label``) of an exported SVG (``posenc.io.export.chart_svg``): a label hidden for overlapping another
    is drawn with opacity 0."""
    part = svg[svg.index(role):]
    return re.findall(r'opacity="1">([^<]+)</text>', part[:part.index("</g>")])
