"""Charts for page 6, "The sinusoid".  DataFrame in, Altair chart out (no Streamlit).

Colours: the PE heatmap and M_k use the diverging red-blue scale fixed to (-1, 1) (the article's
-1 red .. +1 blue); categories use Okabe-Ito.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from posenc.charts.base import DIVERGING, MAX_MARKS, OKABE_ITO, heatmap, lines

TURN_COLOURS = {"yes": OKABE_ITO[3], "no": OKABE_ITO[0]}  # vermillion = repeats within n, blue = does not


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
    return heatmap(frame, x="depth", y="position", value="value", x_title="depth: column of the PE vector",
                   y_title="position p in the sequence", domain=(-1.0, 1.0), scheme=DIVERGING,
                   legend_title="PE value", height=height, tooltip=tips)


def spectrum_chart(frame: pd.DataFrame, marks: pd.DataFrame, *, height: int = 340) -> alt.LayerChart:
    """Wavelength of each pair on a log axis, coloured by whether it turns fully within n.

    ``frame``: pair, columns, omega, wavelength, full_turn ("yes"/"no").  ``marks``: label,
    wavelength, side (horizontal reference lines: 2π, the limit 2π·base, the chosen length n; the
    label sits at the left or right end, away from the dots).
    """
    if len(frame) > MAX_MARKS:
        raise ValueError(f"spectrum has {len(frame):,} points, above the {MAX_MARKS:,}-mark ceiling")
    y = alt.Y("wavelength:Q", title="wavelength in positions (log)", scale=alt.Scale(type="log"))
    points = alt.Chart(frame, height=height, width="container").mark_circle(size=36, opacity=0.9).encode(
        x=alt.X("pair:Q", title="frequency pair i (columns 2i, 2i+1 in the paper's layout)", scale=alt.Scale(zero=True)),
        y=y,
        color=alt.Color("full_turn:N", title="completes a full turn within n",
                        scale=alt.Scale(domain=list(TURN_COLOURS), range=list(TURN_COLOURS.values()))),
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
    last = float(frame["pair"].max()) if len(frame) else 0.0
    left = alt.Chart(marks[marks["side"] == "left"]).mark_text(align="left", dx=4, dy=-7, fontSize=13, color="#444").encode(
        x=alt.datum(0.0), y=alt.Y("wavelength:Q"), text="label:N")
    right = alt.Chart(marks[marks["side"] != "left"]).mark_text(align="right", dx=-4, dy=-7, fontSize=13, color="#444").encode(
        x=alt.datum(last), y=alt.Y("wavelength:Q"), text="label:N")
    return alt.layer(points, rules, left, right)


def bases_chart(frame: pd.DataFrame, *, n: int, order: list[str], height: int = 320) -> alt.LayerChart:
    """Wavelength against pair index for several bases (log y), with the chosen length n marked.

    ``frame``: base (label), pair, wavelength.  ``order``: the base labels in legend order.
    """
    base_lines = lines(frame, x="pair", y="wavelength", color="base", color_title="base", x_title="frequency pair i",
                       y_title="wavelength in positions (log)", log_y=True, height=height, domain=order,
                       tooltip_format=",.2f")
    rule = alt.Chart(pd.DataFrame({"wavelength": [float(n)], "label": [f"n = {n:,}"]})).mark_rule(
        strokeDash=[5, 4], color="gray").encode(
        y="wavelength:Q", tooltip=[alt.Tooltip("label:N", title="chosen length")])
    return alt.layer(base_lines, rule)


def shift_chart(frame: pd.DataFrame, *, size: int = 300) -> alt.FacetChart:
    """M_k fitted and in closed form, side by side, red -1 .. blue +1.

    ``frame``: row, col, value, matrix (the panel title).
    """
    tips = [
        alt.Tooltip("matrix:N", title="matrix"),
        alt.Tooltip("row:O", title="row"),
        alt.Tooltip("col:O", title="column"),
        alt.Tooltip("value:Q", title="entry", format=".6f"),
    ]
    cell = heatmap(frame, x="col", y="row", value="value", x_title="column (input PE(p))", y_title="row (output PE(p+k))",
                   domain=(-1.0, 1.0), scheme=DIVERGING, legend_title="entry", height=size, width=size, tooltip=tips)
    return cell.facet(column=alt.Column("matrix:N", title=None, sort=sorted(frame["matrix"].unique(), reverse=True)))
