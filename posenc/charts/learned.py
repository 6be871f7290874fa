"""Charts for the learned-table page.  DataFrame in, Altair chart out (no Streamlit).

``binned_heatmap`` draws a strided matrix on quantitative axes: each kept cell covers its
stride (x .. x + x_step), so the axes read in real positions and rules (a training length)
can be drawn at any coordinate.  charts/relative.py uses it too.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.base import DIVERGING, MAX_MARKS, OKABE_ITO
from posenc.charts.memo import memo
from posenc.charts.raster import RASTER_CELLS, frame_heatmap, palette_of

TABLE_ORDER = ["MiniLM (trained)", "sinusoid", "untrained random"]


def binned_heatmap(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    value: str,
    x_step: int,
    y_step: int,
    x_title: str,
    y_title: str,
    legend_title: str,
    scheme: str = DIVERGING,
    domain: Sequence[float] | None = None,
    clamp: bool = True,
    reverse_y: bool = True,
    title: str = "",
    height: int = 360,
    width: int | str = "container",
    value_format: str = ".4f",
) -> alt.Chart:
    """A rect heatmap on quantitative axes; cell (x, y) spans [x, x + x_step) x [y, y + y_step).

    ``domain`` fixes the colour scale; with ``clamp`` values outside it take the end colours.
    Rows with a NaN ``value`` are dropped by Vega (layer a mask on top to show them).  Above
    ``RASTER_CELLS`` cells the matrix is drawn as one image (charts/raster.py) with a coarse hover
    grid; its NaN cells are grey, and it clamps always.
    """
    if len(df) > MAX_MARKS:
        raise ValueError(f"heatmap has {len(df):,} cells, above the {MAX_MARKS:,}-mark ceiling; downsample first")
    if len(df) > RASTER_CELLS:
        vals = df[value].to_numpy(dtype=float)
        lo, hi = (float(domain[0]), float(domain[1])) if domain is not None else (float(np.nanmin(vals)), float(np.nanmax(vals)))
        if not hi > lo:
            lo, hi = lo - 0.5, hi + 0.5
        return frame_heatmap(df, x=x, y=y, value=value, x_step=x_step, y_step=y_step, domain=(lo, hi),
                             palette=palette_of(scheme), x_title=x_title, y_title=y_title, value_title=legend_title,
                             title=title, width=width, height=height, reverse_y=reverse_y, value_format=value_format,
                             legend=alt.Legend(type="gradient", gradientLength=220, gradientOpacity=1))
    x_max = float(df[x].max()) + x_step if len(df) else 1.0
    y_max = float(df[y].max()) + y_step if len(df) else 1.0
    color = alt.Color(
        f"{value}:Q",
        title=legend_title,
        scale=alt.Scale(scheme=scheme, domain=list(domain) if domain is not None else alt.Undefined, clamp=clamp),
        legend=alt.Legend(gradientLength=220),
    )
    return (
        alt.Chart(df, title=title or alt.Undefined, height=height, width=width)
        .transform_calculate(x_end=f"datum.{x} + {x_step}", y_end=f"datum.{y} + {y_step}")
        .mark_rect()
        .encode(
            x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(domain=[0, x_max], nice=False, zero=True)),
            x2="x_end:Q",
            y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(domain=[0, y_max], nice=False, zero=True, reverse=reverse_y)),
            y2="y_end:Q",
            color=color,
            tooltip=[
                alt.Tooltip(f"{y}:Q", title=y_title),
                alt.Tooltip(f"{x}:Q", title=x_title),
                alt.Tooltip(f"{value}:Q", title=legend_title, format=value_format),
            ],
        )
    )


@memo
def table_heatmap_chart(frame: pd.DataFrame, *, step: tuple[int, int], clip: float, title: str = "") -> alt.Chart:
    """Position (down) x channel (across) heatmap of a table, red -clip .. blue +clip."""
    return binned_heatmap(
        frame, x="channel", y="position", value="value", x_step=step[1], y_step=step[0],
        x_title="channel (embedding dimension)", y_title="position", legend_title="value",
        domain=(-clip, clip), title=title,
    )


@memo
def similarity_chart(frame: pd.DataFrame, *, step: int, title: str = "") -> alt.Chart:
    """Cosine similarity of position i (down) and position j (across), red -1 .. blue +1."""
    return binned_heatmap(
        frame, x="j", y="i", value="cosine", x_step=step, y_step=step,
        x_title="position j", y_title="position i", legend_title="cosine", domain=(-1.0, 1.0), title=title,
    )


def _order(frame: pd.DataFrame) -> list[str]:
    names = list(dict.fromkeys(frame["table"]))
    return [t for t in TABLE_ORDER if t in names] + [t for t in names if t not in TABLE_ORDER]


def _table_colour(order: list[str]) -> alt.Color:
    return alt.Color("table:N", title="table", scale=alt.Scale(range=OKABE_ITO, domain=order),
                     legend=alt.Legend(orient="top", columns=2, labelLimit=260))  # one row ran past the edge at 390 px


@memo
def norms_chart(frame: pd.DataFrame) -> alt.Chart:
    """Norm of each table's row against position, one line per table, log y."""
    if len(frame) > MAX_MARKS:
        raise ValueError(f"{len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling; downsample first")
    return (
        alt.Chart(frame, height=300, width="container")
        .mark_line(clip=True)
        .encode(
            x=alt.X("position:Q", title="position"),
            y=alt.Y("norm:Q", title="‖row‖ (log)", scale=alt.Scale(type="log")),
            color=_table_colour(_order(frame)),
            tooltip=[alt.Tooltip("table:N", title="table"), alt.Tooltip("position:Q", title="position"),
                     alt.Tooltip("norm:Q", title="‖row‖", format=".4f")],
        )
    )


@memo
def spectrum_chart(frame: pd.DataFrame) -> alt.Chart:
    """Share of each table's variation along positions per frequency, log-log (zero shares dropped)."""
    if len(frame) > MAX_MARKS:
        raise ValueError(f"{len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling; downsample first")
    f_min = float(frame["frequency"].min()) if len(frame) else 1e-3
    return (
        alt.Chart(frame, height=300, width="container")
        .transform_filter("datum.share > 0")
        .mark_line(clip=True)
        .encode(
            x=alt.X("frequency:Q", title=["frequency along positions", "(cycles per position, log)"],  # 390 px: two lines
                    scale=alt.Scale(type="log", domain=[f_min, 0.5], nice=False)),
            y=alt.Y("share:Q", title="share of variation (log)", scale=alt.Scale(type="log")),
            color=_table_colour(_order(frame)),
            tooltip=[
                alt.Tooltip("table:N", title="table"),
                alt.Tooltip("frequency:Q", title="cycles per position", format=".4f"),
                alt.Tooltip("wavelength:Q", title="wavelength (positions)", format=",.1f"),
                alt.Tooltip("share:Q", title="share", format=".3e"),
            ],
        )
    )


@memo
def vector_chart(frame: pd.DataFrame, *, title: str, color: str = OKABE_ITO[0]) -> alt.Chart:
    """The vector added at one position: value against channel."""
    return (
        alt.Chart(frame, title=title, height=220, width="container")
        .mark_line(color=color, point=False)
        .encode(
            x=alt.X("channel:Q", title="channel"),
            y=alt.Y("value:Q", title="value"),
            tooltip=[alt.Tooltip("channel:Q", title="channel"), alt.Tooltip("value:Q", title="value", format=".4f")],
        )
    )
