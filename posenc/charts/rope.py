"""Charts for the RoPE page (9).  DataFrame in, Altair out (the context-extension charts are in posenc.charts.extension)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posenc.charts.base import BASELINE_GREY, MAX_MARKS, OKABE_ITO, envelope
from posenc.charts.memo import memo
from posenc.charts.template import templated

QK_COLORS = {"q": OKABE_ITO[0], "k": OKABE_ITO[3]}


def _check(df: pd.DataFrame, what: str) -> None:
    if len(df) > MAX_MARKS:
        raise ValueError(f"{what} has {len(df):,} rows, above the {MAX_MARKS:,}-mark ceiling; downsample first")


@memo
def rotation_chart(arrows: pd.DataFrame, orbits: pd.DataFrame, *, radius: float, size: int = 320) -> alt.LayerChart:
    """The chosen 2-D pair: q and k as arrows from the origin, unshifted (solid) and shifted (dashed).

    The square [-1.15 r, 1.15 r]² comes from the data -- two invisible corner points -- not from a literal
    domain, so the spec is the same for every radius: a new d, base or probe swaps the data of the
    chart the browser already built instead of making it build a new one."""
    r = 1.15 * max(radius, 1e-12)
    return _rotation_chart(orbits, arrows.assign(x0=0.0, y0=0.0), pd.DataFrame({"x": [-r, r], "y": [-r, r]}), size=size)


@templated("orbits", "data", "corners")  # built once per setting; a new value swaps its rows in (posenc.charts.template)
def _rotation_chart(orbits: pd.DataFrame, data: pd.DataFrame, corners: pd.DataFrame, *, size: int) -> alt.LayerChart:
    dom = alt.Scale(nice=False, zero=False)
    color = alt.Color("vector:N", title="vector", scale=alt.Scale(domain=list(QK_COLORS), range=list(QK_COLORS.values())),
                      legend=alt.Legend(orient="bottom"))  # legends below keep the plot square in a half-width column
    orbit = alt.Chart(orbits).mark_line(opacity=0.35, strokeWidth=1.5).encode(
        x=alt.X("x:Q", scale=dom, title="first channel of the pair"),
        y=alt.Y("y:Q", scale=dom, title="second channel of the pair"),
        color=color, detail="vector:N", order="step:Q",
    )
    tips = [alt.Tooltip("vector:N"), alt.Tooltip("placement:N"), alt.Tooltip("position:Q", format=","),
            alt.Tooltip("x:Q", format=".4f"), alt.Tooltip("y:Q", format=".4f")]
    # the placement legend's symbols in grey: the default (black) vanished on the dark theme's background
    grey = {"symbolFillColor": BASELINE_GREY, "symbolStrokeColor": BASELINE_GREY}
    dash = alt.StrokeDash("placement:N", title="", scale=alt.Scale(domain=["at (m, n)", "shifted by s"], range=[[1, 0], [6, 4]]),
                          legend=alt.Legend(orient="bottom", **grey))
    shaft = alt.Chart(data).mark_rule(strokeWidth=3).encode(
        x=alt.X("x0:Q", scale=dom), y=alt.Y("y0:Q", scale=dom), x2="x:Q", y2="y:Q", color=color, strokeDash=dash, tooltip=tips,
    )
    head = alt.Chart(data).mark_point(filled=True, size=110).encode(
        x=alt.X("x:Q", scale=dom), y=alt.Y("y:Q", scale=dom), color=color,
        shape=alt.Shape("placement:N", title="", scale=alt.Scale(domain=["at (m, n)", "shifted by s"], range=["circle", "triangle-up"]),
                        legend=alt.Legend(orient="bottom", **grey)),
        tooltip=tips,
    )
    corners = alt.Chart(corners).mark_point(opacity=0).encode(
        x=alt.X("x:Q", scale=dom), y=alt.Y("y:Q", scale=dom))
    # autosize "pad": width and height are the plot itself, so a circle stays a circle
    return alt.layer(orbit, shaft, head, corners).properties(width=size, height=size, autosize=alt.AutoSizeParams(type="pad"))


@memo
def rounding_chart(frame: pd.DataFrame, *, height: int = 260) -> alt.Chart:
    """RMS |score change| against the shift of both tokens, both axes logarithmic (zeros are left out)."""
    frame = frame[frame["rms"] > 0]
    return alt.Chart(frame, height=height, width="container").mark_line(point=True, color=OKABE_ITO[0]).encode(
        x=alt.X("shift:Q", scale=alt.Scale(type="log"), title="shift s of both tokens (positions)",
                axis=alt.Axis(format="~e", values=[10**j for j in range(8)])),
        y=alt.Y("rms:Q", scale=alt.Scale(type="log"), title="|score change| (RMS of 16 shifts)", axis=alt.Axis(format="~e")),
        tooltip=[alt.Tooltip("shift:Q", format=","), alt.Tooltip("rms:Q", title="RMS |change|", format=".2e"),
                 alt.Tooltip("largest:Q", title="largest |change|", format=".2e")],
    )


@memo
def decay_chart(frame: pd.DataFrame, *, height: int = 340) -> alt.Chart:
    """Probe score and RoFormer bound, each relative to its value at distance 0, against distance (the raw values in
    the tooltip when ``frame`` has them: column "value").

    The lines are drawn through their envelope (``base.envelope``: each series' smallest and largest value
    in every ~2-pixel column), 10,002 rows at the page's defaults -> at most ~1,600."""
    _check(frame, "decay chart")
    frame = envelope(frame, "distance", "relative", by="series")
    series = list(frame["series"].cat.categories) if hasattr(frame["series"], "cat") else sorted(frame["series"].unique())
    return _decay_chart(frame, tuple(series), height=height)


@templated("frame")
def _decay_chart(frame: pd.DataFrame, series: tuple, *, height: int) -> alt.Chart:
    series = list(series)
    return alt.Chart(frame, height=height, width="container").mark_line(clip=True, strokeWidth=1.2).encode(
        # a tick per ~90 px: Vega's default (one per 40 px) dropped every other label from 1,000 on ("1,000" is wider)
        x=alt.X("distance:Q", title="relative distance n − m (positions)", axis=alt.Axis(tickCount=alt.ExprRef("ceil(width / 90)"))),
        y=alt.Y("relative:Q", title="value / value at distance 0"),
        color=alt.Color("series:N", title="", scale=alt.Scale(domain=series, range=[OKABE_ITO[0], OKABE_ITO[3]]),
                        legend=alt.Legend(orient="top", labelLimit=400, columns=1)),  # stacked: fits a phone
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("distance:Q", format=","), alt.Tooltip("relative:Q", title="relative", format=".4f"),
                 *([alt.Tooltip("value:Q", title="raw value", format=".4f")] if "value" in frame.columns else [])],
    )


@memo
def layout_chart(frame: pd.DataFrame, *, height: int = 300) -> alt.Chart:
    """Score against offset for the two pairings; the permuted one is dashed on top of half-split."""
    _check(frame, "layout chart")
    return _layout_chart(frame, tuple(frame["series"].cat.categories), height=height)


@templated("frame")
def _layout_chart(frame: pd.DataFrame, series: tuple, *, height: int) -> alt.Chart:
    series = list(series)
    return alt.Chart(frame, height=height, width="container").mark_line(strokeWidth=2).encode(
        x=alt.X("offset:Q", title="offset n − m (positions)", scale=alt.Scale(nice=False)),  # ends at the last offset, not at 260
        y=alt.Y("score:Q", title="score ⟨R_m q, R_n k⟩"),
        color=alt.Color("series:N", title="", scale=alt.Scale(domain=series, range=[OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[4]]),
                        legend=alt.Legend(orient="top", labelLimit=400, columns=1)),  # stacked: one row ran past 390 px
        strokeDash=alt.StrokeDash("series:N", title="", scale=alt.Scale(domain=series, range=[[1, 0], [6, 4], [1, 0]]), legend=None),
        order=alt.Order("series:N"),
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("offset:Q"), alt.Tooltip("score:Q", format=".6f")],
    )
