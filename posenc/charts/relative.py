"""Charts for the T5 / ALiBi page.  DataFrame in, Altair chart out (no Streamlit)."""

from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.base import MAX_MARKS, OKABE_ITO, SEQUENTIAL, pick_text
from posenc.charts.learned import binned_heatmap
from posenc.charts.memo import memo
from posenc.charts.raster import HOVER_CELLS, MASKED, RASTER_CELLS, frame_heatmap

KINDS = ["exact", "log-spaced", "last (everything further)"]
MASK_GREY = MASKED  # the grey the image heatmaps draw masked cells in
MASK_LABEL = "masked: −∞ (key after query)"


@memo
def bucket_function_chart(segments: pd.DataFrame, *, max_exact: int, max_distance: int, bidirectional: bool) -> alt.LayerChart:
    """T5 bucket id against rel = j - i (symlog x): one bar per bucket over the rel range it covers.

    Dashed rules mark where the exact buckets end (|rel| = max_exact) and max_distance.
    """
    if len(segments) > MAX_MARKS:
        raise ValueError(f"{len(segments):,} segments, above the {MAX_MARKS:,}-mark ceiling")
    far = float(max(segments["x_hi"].abs().max(), segments["x_lo"].abs().max())) if len(segments) else 1.0
    powers = [2**k for k in range(0, 40) if 2**k <= far]
    if len(powers) > 6:  # keep about six ticks a side, always including the largest
        powers = powers[::-1][:: max(1, len(powers) // 6)][::-1]
    ticks = [-p for p in reversed(powers)] + [0] + powers
    # two title lines and a legend of one column: at 390 px a single line of either ran past the chart's edge
    x = alt.X("x_lo:Q", title=["relative position rel = j − i", "(key − query; symmetric log scale)"],
              scale=alt.Scale(type="symlog", constant=1, domain=[-far, far], nice=False),
              axis=alt.Axis(values=ticks, format="d"))
    top = int(segments["bucket"].max()) if len(segments) else 1
    bars = (
        alt.Chart(segments)
        .mark_rule(strokeWidth=7, strokeCap="butt")
        .encode(
            x=x,
            x2="x_hi:Q",
            y=alt.Y("bucket:Q", title="bucket id", scale=alt.Scale(domain=[0, top], nice=False)),
            color=alt.Color("kind:N", title="bucket", scale=alt.Scale(domain=KINDS, range=OKABE_ITO[:3]),
                            legend=alt.Legend(orient="top", direction="vertical", labelLimit=300)),
            tooltip=[
                alt.Tooltip("bucket:Q", title="bucket"),
                alt.Tooltip("covers:N", title="covers"),
                alt.Tooltip("side:N", title="side"),
                alt.Tooltip("kind:N", title="kind"),
            ],
        )
    )
    rules = pd.DataFrame({"rel": [-max_exact, -max_distance, max_exact, max_distance],
                          "what": ["exact buckets end", "max_distance"] * 2})
    if not bidirectional:  # causal: every future key shares bucket 0, nothing to mark there
        rules = rules[rules["rel"] < 0]
    lines = alt.Chart(rules).mark_rule(strokeDash=[4, 4], color="gray").encode(
        x="rel:Q", tooltip=[alt.Tooltip("what:N", title=""), alt.Tooltip("rel:Q", title="rel")]
    )
    return alt.layer(bars, lines).properties(height=380, width="container")  # the legend, one column, takes ~60 px of it


@memo
def bucket_matrix_chart(frame: pd.DataFrame, *, step: int, num_buckets: int) -> alt.Chart:
    """Bucket id of every (query i, key j) pair, viridis over 0 .. num_buckets - 1."""
    return binned_heatmap(
        frame, x="j", y="i", value="bucket", x_step=step, y_step=step, x_title="key position j",
        y_title="query position i", legend_title="bucket id", scheme=SEQUENTIAL, domain=(0, num_buckets - 1),
        value_format="d",
    )


@memo
def slopes_chart(frame: pd.DataFrame) -> alt.Chart:
    """ALiBi slope m of every head (bars), coloured by where the slope comes from."""
    if len(frame) > MAX_MARKS:
        raise ValueError(f"{len(frame):,} heads, above the {MAX_MARKS:,}-mark ceiling")
    groups = list(dict.fromkeys(frame["group"]))
    return (
        alt.Chart(frame, height=260, width="container")
        .mark_bar()
        .encode(
            x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0)),
            y=alt.Y("slope:Q", title="slope m"),
            color=alt.Color("group:N", title="slope from", scale=alt.Scale(domain=groups, range=OKABE_ITO[: len(groups)]),
                            legend=alt.Legend(orient="top", direction="vertical", labelLimit=400)),  # a row ran past 390 px
            tooltip=[
                alt.Tooltip("head:O", title="head"),
                alt.Tooltip("slope:Q", title="m", format=".6g"),
                alt.Tooltip("neg_log2:Q", title="−log2 m", format=".4g"),
                alt.Tooltip("group:N", title="from"),
            ],
        )
    )


@memo
def alibi_heads_chart(frame: pd.DataFrame, *, slopes, head: alt.Parameter, step: int, n: int, train_len: int,
                      titles) -> alt.LayerChart:
    """ALiBi bias of the head the ``head`` parameter picks (``charts.base.url_param``), in the browser.

    Every head's bias is its slope times one matrix, -|i - j| (``frame["distance"]``, NaN where masked), so the
    picture is the same for every head: one image of -|i - j| on viridis over -(n - 1) .. 0, whose hover values
    and legend are multiplied by ``slopes[head - 1]`` in the browser (``raster.image_stack``'s ``factor``).
    Masked cells are grey (one grey cell carries the legend entry, when some are masked); the training length
    is dashed; the title is ``titles[head - 1]``."""
    if len(slopes) < 1 or min(slopes) <= 0:
        raise ValueError("slopes must hold one positive slope per head")
    slope = alt.param(name="alibi_slope", expr=f"{json.dumps([float(m) for m in slopes])}[{head.name} - 1]")
    factor = slope.name
    heat = frame_heatmap(
        frame, x="j", y="i", value="distance", x_step=step, y_step=step, domain=(-(n - 1.0), 0.0), palette="sequential",
        x_title="key position j", y_title="query position i", value_title="bias", width="container", height=420,
        value_format=".4g", factor=factor, hover_cells=len(frame) if len(frame) <= RASTER_CELLS else HOVER_CELLS,
        legend=alt.Legend(type="gradient", gradientLength=220, gradientOpacity=1))
    masked = frame[~np.isfinite(frame["distance"].to_numpy(dtype=float))].head(1)
    mask = (
        alt.Chart(masked)
        .transform_calculate(x_end=f"datum.j + {step}", y_end=f"datum.i + {step}", cell=f"'{MASK_LABEL}'")
        .mark_rect()
        .encode(
            x="j:Q", x2="x_end:Q", y="i:Q", y2="y_end:Q",
            color=alt.Color("cell:N", title="", scale=alt.Scale(domain=[MASK_LABEL], range=[MASK_GREY]),
                            legend=alt.Legend(orient="bottom", labelLimit=400)),
            tooltip=[alt.Tooltip("i:Q", title="query position i"), alt.Tooltip("j:Q", title="key position j"),
                     alt.Tooltip("cell:N", title="bias")],
        )
    )
    marks = pd.DataFrame({"at": [train_len], "what": [f"training length L = {train_len}"]})
    # the training length as black dashes on a white halo: black alone vanishes on viridis' dark purple (the far
    # past) and on the dark theme's background, white alone on its yellow (the diagonal) and on the masked grey
    rules = []
    for axis in ("x", "y"):
        line = alt.Chart(marks).encode(**{axis: "at:Q"})
        rules += [line.mark_rule(color="white", strokeWidth=4, opacity=0.9),
                  line.mark_rule(strokeDash=[6, 4], color="black", strokeWidth=2).encode(tooltip=[alt.Tooltip("what:N", title="")])]
    layers = [heat, mask, *rules] if len(masked) else [heat, *rules]  # no mask, no legend entry
    return (alt.layer(*layers, title=alt.Title(alt.expr(pick_text(list(titles), head)), anchor="start"))
            .resolve_scale(color="independent").add_params(head, slope).properties(height=420, width="container"))
