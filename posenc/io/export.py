"""Bytes for downloads: charts as PNG/SVG (vl-convert), tables as CSV, arrays as .npy.

Pure functions (no Streamlit), so the export formats are tested directly.  vl-convert renders
Vega-Lite with Vega's own engine in Rust: no browser, no Node, no network.
"""

from __future__ import annotations

import io

import altair as alt
import numpy as np
import pandas as pd


def chart_spec(chart: alt.TopLevelMixin) -> dict:
    """The Vega-Lite spec of an Altair chart with its data inlined (no 5000-row cap)."""
    with alt.data_transformers.disable_max_rows():
        return chart.to_dict()


def chart_png(chart: alt.TopLevelMixin, *, scale: float = 2.0) -> bytes:
    """A PNG of the chart at ``scale`` x its size (2 = crisp on slides)."""
    import vl_convert as vlc

    return vlc.vegalite_to_png(chart_spec(chart), scale=scale)


def chart_svg(chart: alt.TopLevelMixin) -> bytes:
    """An SVG of the chart (UTF-8 bytes)."""
    import vl_convert as vlc

    return vlc.vegalite_to_svg(chart_spec(chart)).encode("utf-8")


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
