"""What a chart draws: walks of a Vega scenegraph (``vl_convert.vegalite_to_scenegraph``), for tests that check a chart
to the pixel."""

from __future__ import annotations

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
