"""Charts for page 6, "The sinusoid".  DataFrame in, Altair chart out (no Streamlit).

Colours: the PE heatmap and M_k use the diverging red-blue scale fixed to (-1, 1) (the article's
-1 red .. +1 blue); categories use Okabe-Ito.
"""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.base import DIVERGING, FIT_X, MAX_MARKS, NEUTRAL_TEXT, OKABE_ITO, heatmap
from posenc.charts.memo import memo
from posenc.charts.raster import RASTER_CELLS, VIRIDIS, frame_heatmap
from posenc.charts.template import templated

TURN_COLOURS = {"yes": OKABE_ITO[3], "no": OKABE_ITO[0]}  # vermillion = repeats within n, blue = does not


@memo
def pe_heatmap(frame: pd.DataFrame, *, height: int = 440) -> alt.Chart:
    """Position (down) x depth (across) heatmap of PE values, red -1 .. blue +1.

    ``frame``: position, depth, value, column (a label naming sin/cos, pair and wavelength).
    """
    tips = [
        alt.Tooltip("position:O", title="position p"),
        alt.Tooltip("depth:O", title="depth (column)"),
        alt.Tooltip("column:N", title="column is"),
        alt.Tooltip("value:Q", title="PE value", format=".4f"),
    ]
    if len(frame) > RASTER_CELLS:  # one image; the kept columns side by side, each labelled with its depth
        depths = np.unique(frame["depth"].to_numpy())
        gaps = np.diff(depths)
        even = gaps.size == 0 or bool(np.all(gaps == gaps[0]))
        x_kw = (dict(x="depth") if even  # evenly kept: real depths on the axis
                else dict(x="slot", x_labels=[str(v) for v in depths]))  # sin/cos pairs kept: side by side, labelled
        return frame_heatmap(frame.assign(slot=np.searchsorted(depths, frame["depth"].to_numpy())), **x_kw, y="position", value="value",
                             domain=(-1.0, 1.0), palette="diverging", x_title="depth: column of the PE vector",
                             y_title="position p in the sequence", value_title="PE value", width="container", height=height,
                             legend=alt.Legend(type="gradient", gradientLength=220, gradientOpacity=1),
                             hover_fields=[alt.Tooltip("depth:Q", title="depth (column)")] * (not even)
                             + [alt.Tooltip("column:N", title="column is")])
    return heatmap(frame, x="depth", y="position", value="value", x_title="depth: column of the PE vector",
                   y_title="position p in the sequence", domain=(-1.0, 1.0), scheme=DIVERGING,
                   legend_title="PE value", height=height, tooltip=tips)


X_PAIR = "frequency pair i (columns 2i, 2i+1)"


@memo
def spectrum_chart(frame: pd.DataFrame, marks: pd.DataFrame, *, height: int = 340, last: float | None = None) -> alt.LayerChart:
    """Wavelength of each pair on a log axis, coloured by whether it turns fully within n.

    ``frame``: pair, columns, omega, wavelength, full_turn ("yes"/"no").  ``marks``: label,
    wavelength, side (horizontal reference lines: 2π, the limit 2π·base, the chosen length n; the
    label sits at the left or right end, away from the dots).  ``last``: the last pair's index, where the right-hand
    labels end (default: the frame's last; a frame without its slowest pair keeps them in place).
    """
    if len(frame) > MAX_MARKS:
        raise ValueError(f"spectrum has {len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling")
    if last is None:
        last = float(frame["pair"].max()) if len(frame) else 0.0
    return _spectrum_chart(frame, marks, marks[marks["side"] == "left"], marks[marks["side"] != "left"].assign(last_pair=last),
                           height=height)


@templated("frame", "marks", "left", "right")  # built once per setting; a new value swaps its rows in (charts.template)
def _spectrum_chart(frame: pd.DataFrame, marks: pd.DataFrame, left: pd.DataFrame, right: pd.DataFrame, *,
                    height: int) -> alt.LayerChart:
    y = alt.Y("wavelength:Q", title="wavelength in positions (log)", scale=alt.Scale(type="log"))
    points = alt.Chart(frame, height=height, width="container").mark_circle(size=36, opacity=0.9).encode(
        x=alt.X("pair:Q", title=X_PAIR, scale=alt.Scale(zero=True)),
        y=y,
        color=alt.Color("full_turn:N", title="completes a full turn within n",
                        scale=alt.Scale(domain=list(TURN_COLOURS), range=list(TURN_COLOURS.values())),
                        legend=alt.Legend(orient="bottom", direction="horizontal")),
        tooltip=[
            alt.Tooltip("pair:Q", title="pair i"),
            alt.Tooltip("columns:N", title="columns (sin, cos)"),
            alt.Tooltip("omega:Q", title="ω_i (radians per position)", format=".6g"),
            alt.Tooltip("wavelength:Q", title="wavelength 2π/ω_i", format=",.2f"),
            alt.Tooltip("full_turn:N", title="full turn within n"),
        ],
    )
    rules = alt.Chart(marks).mark_rule(strokeDash=[5, 4], color="gray").encode(
        y=alt.Y("wavelength:Q"),
        tooltip=[alt.Tooltip("label:N", title="line"), alt.Tooltip("wavelength:Q", title="wavelength", format=",.2f")],
    )
    left = alt.Chart(left).mark_text(align="left", dx=4, dy=-7, fontSize=13, color=NEUTRAL_TEXT).encode(
        x=alt.datum(0.0), y=alt.Y("wavelength:Q"), text="label:N")
    # the last pair's place as data, not as a literal: the spec stays the same when d changes (posenc.ui.compat, behaviour 5)
    right = alt.Chart(right).mark_text(
        align="right", dx=-4, dy=-7, fontSize=13, color=NEUTRAL_TEXT).encode(
        x=alt.X("last_pair:Q", title=X_PAIR), y=alt.Y("wavelength:Q"), text="label:N")
    return alt.layer(points, rules, left, right).properties(autosize=FIT_X)


YOUR_BASE_COLOR = OKABE_ITO[3]  # vermillion: apart from every viridis hue of the fixed bases
# Lines on viridis, without its two ends: its dark purple vanishes on the dark theme's background (contrast 1.3:1) and
# its yellow on white (1.3:1); 0.3 .. 0.7 of the way (#355f8d .. #44bf70) keeps at least 2.3:1 on both (2.9 on dark,
# 2.35 on white).
LINE_VIRIDIS = (0.3, 0.7)


def _viridis(t: float) -> str:
    """The colour at ``t`` in [0, 1] along viridis (linear between its 11 stops, as Vega interpolates them)."""
    rgb = np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in VIRIDIS], dtype=float)  # (11, 3)
    x = np.linspace(0.0, 1.0, len(VIRIDIS))
    return "#" + "".join(f"{round(float(np.interp(t, x, rgb[:, c]))):02x}" for c in range(3))


def _base_colour(order: list[str]) -> alt.Color:
    """The series in ``order`` (field ``series``): the fixed bases on viridis (10 dark .. 10^8 light), then, last, the
    chosen base's own series in vermillion; one legend entry each, the same for every chosen base."""
    fixed = len(order) - 1
    stops = [_viridis(LINE_VIRIDIS[0] + (LINE_VIRIDIS[1] - LINE_VIRIDIS[0]) * i / max(fixed - 1, 1)) for i in range(fixed)]
    return alt.Color("series:N", title="base", sort=list(order), scale=alt.Scale(domain=list(order), range=[*stops, YOUR_BASE_COLOR]),
                     legend=alt.Legend(orient="bottom", columns=3, symbolType="stroke"))


@memo
def bases_chart(frame: pd.DataFrame, *, n: int, order: list[str], height: int = 320) -> alt.LayerChart:
    """Wavelength against pair index for every base (log y), with the chosen length n marked.

    ``frame``: series, base (label), chosen, pair, wavelength.  ``order``: the series in legend order, the chosen
    base's last (drawn thicker).
    """
    if len(frame) > MAX_MARKS:
        raise ValueError(f"wavelength chart has {len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling")
    length = pd.DataFrame({"wavelength": [float(n)], "label": [f"n = {n:,}"]})  # rows: a new n swaps them into the template
    return _bases_chart(frame, length, order=tuple(order), height=height)


@templated("frame", "length")
def _bases_chart(frame: pd.DataFrame, length: pd.DataFrame, *, order: tuple, height: int) -> alt.LayerChart:
    order = list(order)
    base_lines = alt.Chart(frame, height=height, width="container").mark_line().encode(
        x=alt.X("pair:Q", title="frequency pair i"),
        y=alt.Y("wavelength:Q", title="wavelength in positions (log)", scale=alt.Scale(type="log")),
        color=_base_colour(order), strokeWidth=alt.condition("datum.chosen", alt.value(3.5), alt.value(2)),
        tooltip=[alt.Tooltip("base:N"), alt.Tooltip("pair:Q", title="pair i"),
                 alt.Tooltip("wavelength:Q", title="wavelength", format=",.2f")])
    rule = alt.Chart(length).mark_rule(
        strokeDash=[5, 4], color="gray").encode(
        y="wavelength:Q", tooltip=[alt.Tooltip("label:N", title="chosen length")])
    return alt.layer(base_lines, rule).properties(autosize=FIT_X)


@memo
def dot_chart(frame: pd.DataFrame, *, order: list[str], height: int = 320) -> alt.LayerChart:
    """PE(p)·PE(p+k) / (d/2) against the offset k, one line per base; the chosen base drawn
    thicker, a dashed line at one half.  ``frame``: series, base, chosen, k, dot; ``order`` as for ``bases_chart``."""
    if len(frame) > MAX_MARKS:
        raise ValueError(f"dot-product chart has {len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling")
    return _dot_chart(frame, order=tuple(order), height=height)


@templated("frame")
def _dot_chart(frame: pd.DataFrame, *, order: tuple, height: int) -> alt.LayerChart:
    order = list(order)
    curves = alt.Chart(frame, height=height, width="container").mark_line(clip=True).encode(
        x=alt.X("k:Q", title="offset k = distance between the two positions"),
        y=alt.Y("dot:Q", title="PE(p)·PE(p+k) / (d/2)", scale=alt.Scale(domain=[-0.4, 1.0], nice=False)),
        color=_base_colour(order),
        strokeWidth=alt.condition("datum.chosen", alt.value(3.5), alt.value(1.4)),
        tooltip=[alt.Tooltip("base:N"), alt.Tooltip("k:Q", title="offset k"),
                 alt.Tooltip("dot:Q", title="PE·PE(k) / (d/2)", format=".4f")])
    half = alt.Chart(pd.DataFrame({"dot": [0.5]})).mark_rule(strokeDash=[5, 4], color="gray").encode(
        y="dot:Q", tooltip=[alt.Tooltip("dot:Q", title="half of the value at k = 0")])
    return alt.layer(curves, half).properties(autosize=FIT_X)


@memo
def shift_chart(frame: pd.DataFrame, *, size: int = 224) -> alt.Chart:
    """One M_k matrix (the frame holds one ``matrix`` value), red -1 .. blue +1, square.

    ``frame``: row, col, value, matrix (the panel title).
    """
    tips = [
        alt.Tooltip("matrix:N", title="matrix"),
        alt.Tooltip("row:O", title="row"),
        alt.Tooltip("col:O", title="column"),
        alt.Tooltip("value:Q", title="entry", format=".6f"),
    ]
    title = str(frame["matrix"].iloc[0]) if len(frame) else ""
    cell = heatmap(frame, x="col", y="row", value="value", x_title="column (input PE(p))", y_title="row (output PE(p+k))",
                   domain=(-1.0, 1.0), scheme=DIVERGING, legend_title="entry", height=size, width=size, tooltip=tips, title=title)
    return cell.encode(color=alt.Color("value:Q", title="entry", scale=alt.Scale(scheme=DIVERGING, domain=[-1.0, 1.0]),
                                       legend=alt.Legend(orient="right", gradientLength=size - 40))).properties(
        autosize=alt.AutoSizeParams(type="pad"))  # width and height are the matrix itself: square, whatever the legend takes


@memo
def clock_chart(frame: pd.DataFrame, dial: pd.DataFrame, *, size: int = 300) -> alt.LayerChart:
    """A clock face (the unit circle) with one hand per (sin, cos) pair: a rule from the centre to (x, y), its name
    at the tip.  ``frame``: (hand, pair, columns, wavelength, angle_deg, turns, sin, cos, x, y); ``dial``: (x, y, order)."""
    return _clock_chart(frame.assign(x0=0.0, y0=0.0), dial, tuple(frame["hand"]), size=size)


@templated("hands", "dial")
def _clock_chart(hands: pd.DataFrame, dial: pd.DataFrame, order: tuple, *, size: int) -> alt.LayerChart:
    scale = alt.Scale(domain=[-1.25, 1.25], nice=False)
    x = alt.X("x:Q", scale=scale, title="sin (even column)", axis=alt.Axis(grid=False, values=[-1, 0, 1]))
    y = alt.Y("y:Q", scale=scale, title="cos (odd column)", axis=alt.Axis(grid=False, values=[-1, 0, 1]))
    face = alt.Chart(dial).mark_line(color=NEUTRAL_TEXT).encode(x=x, y=y, order="order:Q")
    colour = alt.Color("hand:N", sort=list(order), scale=alt.Scale(range=OKABE_ITO[:3]), title="hand",
                       legend=alt.Legend(orient="bottom", columns=1))  # one entry a line: never cut at 300 px
    tips = [alt.Tooltip("hand:N"), alt.Tooltip("pair:Q"), alt.Tooltip("columns:N"),
            alt.Tooltip("wavelength:Q", format=",.2f", title="wavelength (positions)"),
            alt.Tooltip("turns:Q", format=",.4f", title="turns so far"), alt.Tooltip("angle_deg:Q", format=".1f", title="angle (°)"),
            alt.Tooltip("sin:Q", format=".4f"), alt.Tooltip("cos:Q", format=".4f")]
    rule = alt.Chart(hands).mark_rule(strokeWidth=5, strokeCap="round").encode(
        x=x, y=y, x2="x0:Q", y2="y0:Q", color=colour, tooltip=tips)
    tip = alt.Chart(hands).mark_circle(size=90).encode(x=x, y=y, color=colour, tooltip=tips)
    return alt.layer(face, rule, tip).properties(width=size, height=size, autosize=alt.AutoSizeParams(type="pad"))  # square: a circle
