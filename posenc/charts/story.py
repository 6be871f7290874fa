"""Charts for the story pages (1-6).  DataFrame in, Altair chart out."""

from __future__ import annotations

import math

import altair as alt
import pandas as pd

from posenc.charts.base import DIVERGING, FIT_X, MAX_MARKS, NEUTRAL_TEXT, OKABE_ITO, SEQUENTIAL, lines, room_right
from posenc.charts.memo import memo


@memo
def growth_chart(frame: pd.DataFrame, *, context: int) -> alt.LayerChart:
    """Encoding norm against position on log-log axes, with the chosen context marked."""
    base = lines(frame, x="position", y="norm", color="series", color_title="curve", x_title="position t (log)",
                 y_title="vector norm (log)", log_x=True, log_y=True, height=360, tooltip_format=",.4g")
    # the legend under the plot: three long labels beside it would squeeze the plot on a phone
    base = base.encode(color=alt.Color("series:N", title="curve", scale=alt.Scale(range=OKABE_ITO),
                                       legend=alt.Legend(orient="bottom", direction="vertical")))
    rule = alt.Chart(pd.DataFrame({"position": [max(context - 1, 1)]})).mark_rule(strokeDash=[4, 4], color="gray").encode(
        x="position:Q", tooltip=[alt.Tooltip("position:Q", title="last position of the context", format=",")]
    )
    return alt.layer(base, rule)


# ----------------------------------------------------------------------------- page 1: attention needs order
@memo
def token_heatmap(frame: pd.DataFrame, *, value: str = "score", vmax: float, title: str, legend_title: str,
                  size: int | None = None) -> alt.LayerChart:
    """Rect heatmap of a token x token matrix (columns query, key, qi, ki, value), tokens in sentence order.

    The colour scale is diverging red-blue, symmetric on [-vmax, vmax] (0 = white; a value beyond it takes the end
    colour); NaN cells (masked logits) are not drawn, so they show as blank.  The range travels with the data, not
    in the spec: the cells are coloured by ``COLOR_FIELD`` (the value clipped to [-vmax, vmax]) and a layer of two
    invisible cells at -vmax and +vmax, under the first cell, pins the scale's ends.  So a new width d or scheme,
    which moves vmax, sends the same spec with new data, and the browser keeps the chart's view
    (docs/performance.md, section 8).
    """
    if len(frame) > MAX_MARKS:
        raise ValueError(f"heatmap has {len(frame):,} cells, above the {MAX_MARKS:,}-mark ceiling")
    order_q = frame.sort_values("qi")["query"].drop_duplicates().tolist()
    order_k = frame.sort_values("ki")["key"].drop_duplicates().tolist()
    vmax = float(vmax) if vmax and math.isfinite(vmax) and vmax > 0 else 1.0
    angle = -45 if len(order_k) <= 24 else -90
    few = len(order_k) <= 24  # every token label stays (the ones that differ, "4 man" / "1 man", are the point)
    size = size or min(max(260, 8 * len(order_q)), 520)  # height: 260 px for a sentence, 512 px for 64 tokens
    x = alt.X("key:O", sort=order_k, title="key token j (attended to)",
              axis=alt.Axis(labelAngle=angle, labelLimit=90, labelOverlap=not few, labelFontSize=12 if few else 9))
    y = alt.Y("query:O", sort=order_q, title="query token i",
              axis=alt.Axis(labelLimit=90, labelOverlap=not few, labelFontSize=12 if few else 9))
    color = alt.Color(f"{COLOR_FIELD}:Q", title=legend_title, scale=alt.Scale(scheme=DIVERGING))
    cells = frame.assign(**{COLOR_FIELD: frame[value].clip(-vmax, vmax)})
    pins = pd.DataFrame({"query": order_q[:1] * 2, "key": order_k[:1] * 2, COLOR_FIELD: [-vmax, vmax]})
    return alt.layer(
        alt.Chart(pins).mark_rect(opacity=0).encode(x=x, y=y, color=color),
        alt.Chart(cells).mark_rect(stroke="white", strokeWidth=0.5 if len(order_k) <= 24 else 0).encode(
            x=x, y=y, color=color,
            tooltip=[alt.Tooltip("query:N", title="query"), alt.Tooltip("key:N", title="key"),
                     alt.Tooltip(f"{value}:Q", title=legend_title, format=".6f")],
        ),
        # fit-x: the width follows the column, the height is the plot's own (labels and titles come on top)
        title=title, width="container", height=size, autosize=FIT_X,
    )


COLOR_FIELD = "colour"  # token_heatmap's colour: the value clipped to the shared range


# ----------------------------------------------------------------------------- page 3: index / length
@memo
def index_values_chart(values: pd.DataFrame, *, max_token_labels: int = 32) -> alt.LayerChart:
    """Value t / L against the token t = 1 ... L, one line per sentence; tokens written next to the points
    when there are at most ``max_token_labels`` of them."""
    names = values["sentence"].drop_duplicates().tolist()
    color = alt.Color("sentence:N", title="sentence", scale=alt.Scale(domain=names, range=OKABE_ITO[: max(len(names), 1)]),
                      legend=alt.Legend(orient="bottom", columns=2))
    base = alt.Chart(values, height=280, width="container").encode(
        x=alt.X("t:Q", title="token t (1 = the first token)", axis=alt.Axis(tickMinStep=1, format="d"),
                scale=alt.Scale(domainMin=1, nice=False)),
        y=alt.Y("value:Q", title="encoding value t / L", scale=alt.Scale(domain=[0, 1.05])),
        color=color,
        tooltip=[alt.Tooltip("sentence:N"), alt.Tooltip("t:Q", title="token t"), alt.Tooltip("token:N"),
                 alt.Tooltip("value:Q", title="t / L", format=".4f")],
    )
    layers = [base.mark_line(point=alt.OverlayMarkDef(size=90, filled=True))]
    if len(values) <= max_token_labels:
        layers.append(base.mark_text(dy=-14, fontSize=13, color=NEUTRAL_TEXT).encode(text="token:N"))
    return alt.layer(*layers).properties(autosize=FIT_X)


@memo
def step_chart(steps: pd.DataFrame, summary: pd.DataFrame) -> alt.LayerChart:
    """The step between neighbours, 1/L, against the prompt length L, with each sentence marked."""
    line = alt.Chart(steps, height=280, width="container").mark_line(color="gray").encode(
        x=alt.X("L:Q", title="prompt length L (tokens)"),
        y=alt.Y("step:Q", title="step between neighbours 1 / L", scale=alt.Scale(domain=[0, 0.55])),
        tooltip=[alt.Tooltip("L:Q", title="L"), alt.Tooltip("step:Q", title="1 / L", format=".4f")],
    )
    marked = summary.dropna(subset=["step"])
    names = summary["sentence"].tolist()
    dots = alt.Chart(marked).mark_point(size=160, filled=True).encode(
        x="L:Q", y="step:Q",
        color=alt.Color("sentence:N", scale=alt.Scale(domain=names, range=OKABE_ITO[: max(len(names), 1)]), legend=None),
        tooltip=[alt.Tooltip("sentence:N"), alt.Tooltip("L:Q"), alt.Tooltip("step:Q", title="1 / L", format=".4f")],
    )
    return alt.layer(line, dots).properties(autosize=FIT_X)


# ----------------------------------------------------------------------------- page 4: a single sine
COLLIDES = "within ε of another position"
ALONE = "no other position within ε"


@memo
def sine_chart(points: pd.DataFrame, curve: pd.DataFrame, pairs: pd.DataFrame, *, closest: tuple[int, int] | tuple[()]) -> alt.LayerChart:
    """sin(wt) as stems at integer t over the continuous curve; positions with a partner within eps
    in vermillion, links between the listed pairs, the pair ``closest`` ringed (none: ())."""
    # the x range is the data's own, 0 ... n-1 (the curve spans it): no literal, so a new n only swaps the data
    x = alt.X("t:Q", title="position t", axis=alt.Axis(tickMinStep=1, format="d"), scale=alt.Scale(nice=False, zero=False))
    y = alt.Y("value:Q", title="sin(ω t)", scale=alt.Scale(domain=[-1.1, 1.1]))
    wave = alt.Chart(curve).mark_line(color="#BBBBBB", strokeWidth=1.5).encode(
        x=alt.X("x:Q", title="position t"), y=alt.Y("value:Q", title="sin(ω t)", scale=alt.Scale(domain=[-1.1, 1.1])),
        tooltip=[alt.Tooltip("x:Q", title="t", format=".3f"), alt.Tooltip("value:Q", title="sin(ω t)", format=".6f")])
    colour = alt.Color("status:N", title="position", scale=alt.Scale(domain=[COLLIDES, ALONE], range=[OKABE_ITO[3], OKABE_ITO[0]]),
                       legend=alt.Legend(orient="top", direction="vertical"))
    base = alt.Chart(points).encode(x=x, color=colour)
    stems = base.mark_rule(strokeWidth=1.5, opacity=0.7).encode(y=y, y2=alt.datum(0))
    dots = base.mark_point(filled=True, size=50).encode(
        y=y, tooltip=[alt.Tooltip("t:Q", title="position"), alt.Tooltip("value:Q", title="sin(ω t)", format=".8f"),
                      alt.Tooltip("partners:Q", title="other positions within ε")])
    links = alt.Chart(pairs).mark_rule(color=OKABE_ITO[3], strokeDash=[3, 3], opacity=0.8).encode(
        x="i:Q", x2="j:Q", y="value_i:Q", y2="value_j:Q",
        tooltip=[alt.Tooltip("i:Q", title="position i"), alt.Tooltip("j:Q", title="position j"),
                 alt.Tooltip("distance:Q", title="|sin ωi − sin ωj|", format=".6f")])
    ring = alt.Chart(points[points["t"].isin(list(closest))]).mark_point(size=420, shape="circle", strokeWidth=2.5,
                                                                         color=NEUTRAL_TEXT).encode(
        x="t:Q", y="value:Q", tooltip=[alt.Tooltip("t:Q", title="closest pair: position"), alt.Tooltip("value:Q", format=".8f")])
    return alt.layer(wave, stems, links, dots, ring).properties(height=300, width="container", autosize=FIT_X)


# ----------------------------------------------------------------------------- page 5: one sin+cos pair
@memo
def circle_chart(points: pd.DataFrame, outline: pd.DataFrame, *, size: int = 440) -> alt.LayerChart:
    """Positions as points (cos wt, sin wt) on the unit circle, coloured by turn, some labelled."""
    sc = alt.Scale(domain=[-1.3, 1.3], nice=False)
    ticks = alt.Axis(values=[-1.0, -0.5, 0.0, 0.5, 1.0])
    ring = alt.Chart(outline).mark_line(color="#BBBBBB").encode(
        x=alt.X("x:Q", scale=sc, title="cos(ω t)  (horizontal)", axis=ticks),
        y=alt.Y("y:Q", scale=sc, title="sin(ω t)  (height)", axis=ticks), order="order:Q")
    turns = int(points["turn"].max()) if len(points) else 0
    dots = alt.Chart(points).mark_circle(size=70, opacity=0.9, stroke="black", strokeWidth=0.4).encode(
        x="x:Q", y="y:Q",
        color=alt.Color("turn:Q", title="turn", scale=alt.Scale(scheme=SEQUENTIAL, domain=[0, max(turns, 1)]),
                        # whole turns only: Vega's own gradient ticks put 0.5 between 0 and 1, which "d" printed as "1"
                        legend=alt.Legend(format="d", values=list(range(0, max(turns, 1) + 1, max(1, math.ceil(max(turns, 1) / 4)))),
                                          orient="bottom", direction="horizontal")),
        tooltip=[alt.Tooltip("t:Q", title="position"), alt.Tooltip("turn:Q", title="turn"),
                 alt.Tooltip("x:Q", title="cos(ω t)", format=".6f"), alt.Tooltip("y:Q", title="sin(ω t)", format=".6f")])
    labelled = points[points["label"] != ""].assign(lx=lambda d: d["x"] * 1.1, ly=lambda d: d["y"] * 1.1)
    # labels outside the circle, anchored away from it: left-aligned on the right side, right-aligned on the left;
    # autosize "pad": width and height are the plot itself, so the circle stays round whatever the legend takes
    texts = [
        alt.Chart(labelled[sel]).mark_text(fontSize=13, fontWeight="bold", align=align, dx=dx, color=NEUTRAL_TEXT).encode(
            x="lx:Q", y="ly:Q", text="label:N")
        for sel, align, dx in ((labelled["x"] > 0.3, "left", 2), (labelled["x"] < -0.3, "right", -2),
                               (labelled["x"].abs() <= 0.3, "center", 0))
    ]
    return alt.layer(ring, dots, *texts).properties(width=size, height=size, autosize=alt.AutoSizeParams(type="pad"))


@memo
def closest_curve_chart(curve: pd.DataFrame, *, n: int) -> alt.LayerChart:
    """Closest-pair distance against context length (log-log), the chosen n marked."""
    line = alt.Chart(curve, height=300, width="container").mark_line(point=True, interpolate="step-after").encode(
        x=alt.X("n:Q", title="context length n (positions 0 .. n−1, log)", scale=alt.Scale(type="log")),
        y=alt.Y("distance:Q", title="closest-pair distance (log)", scale=alt.Scale(type="log")),
        color=alt.value(OKABE_ITO[0]),
        tooltip=[alt.Tooltip("n:Q", title="n", format=","), alt.Tooltip("distance:Q", title="closest distance", format=".6f"),
                 alt.Tooltip("pair:N", title="closest pair")])
    rule = alt.Chart(pd.DataFrame({"n": [n]})).mark_rule(strokeDash=[4, 4], color="gray").encode(
        x="n:Q", tooltip=[alt.Tooltip("n:Q", title="positions on the circle chart", format=",")])
    return alt.layer(line, rule).properties(autosize=FIT_X)


# ----------------------------------------------------------------------------- the landing page
@memo
def wishlist_chart(marks: pd.DataFrame) -> alt.LayerChart:
    """The wishlist as a table of marks: one row per scheme, one column per measured property, a
    blue tick (yes) or a vermillion cross (no) on each cell, and the measurement behind the mark in
    the tooltip.  ``marks``: (scheme, property, ok, detail); fits the column it is drawn in."""
    if len(marks) > MAX_MARKS:
        raise ValueError(f"wishlist has {len(marks):,} marks, above the {MAX_MARKS:,}-mark ceiling")
    df = marks.assign(mark=marks["ok"].map({True: "✓ yes", False: "✗ no"}), glyph=marks["ok"].map({True: "✓", False: "✗"}))
    base = alt.Chart(df, height=alt.Step(30), width="container").encode(
        x=alt.X("property:N", sort=list(dict.fromkeys(df["property"])), title=None,
                axis=alt.Axis(orient="top", labelAngle=-30, labelAlign="left", labelOverlap=False, labelFontSize=13)),
        y=alt.Y("scheme:N", sort=list(dict.fromkeys(df["scheme"])), title=None, axis=alt.Axis(labelLimit=180, labelOverlap=False)),
        tooltip=[alt.Tooltip("scheme:N"), alt.Tooltip("property:N"), alt.Tooltip("mark:N", title="measured"),
                 alt.Tooltip("detail:N", title="the measurement")],
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("mark:N", title="measured", scale=alt.Scale(domain=["✓ yes", "✗ no"], range=[OKABE_ITO[0], OKABE_ITO[3]]),
                        legend=alt.Legend(orient="bottom", direction="horizontal")))
    text = base.mark_text(color="white", fontSize=16, fontWeight="bold").encode(text="glyph:N")
    # the last column's label, tilted up and to the right from its band's centre, runs past the plot ("uniqu" on a phone)
    return alt.layer(cells, text).properties(autosize=FIT_X, padding=room_right(40))


def recurrence_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """max |h_A(t) − h_B(t)| at each step of the recurrence, with both sentences' tokens in the tooltip."""
    base = alt.Chart(frame, height=240, width="container").encode(
        x=alt.X("step:O", title="step t (tokens read)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("gap:Q", title="max |h_A(t) − h_B(t)|"),
        tooltip=[alt.Tooltip("step:O"), alt.Tooltip("token_a:N", title="token of A"), alt.Tooltip("token_b:N", title="token of B"),
                 alt.Tooltip("gap:Q", format=".4g", title="max |h_A − h_B|")],
    )
    return alt.layer(base.mark_line(color=OKABE_ITO[0]), base.mark_point(filled=True, size=70, color=OKABE_ITO[0])).properties(
        autosize=FIT_X)
