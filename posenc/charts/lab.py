"""Charts for the extrapolation lab.  DataFrame in, Altair out (no Streamlit)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.base import (
    FIT_X,
    MAX_MARKS,
    NEUTRAL_TEXT,
    OKABE_ITO,
    SCHEME_COLORS,
    SEQUENTIAL,
    end_heights,
    heatmap,
    named_ends,
    pick,
    pick_text,
    room_right,
    wrap_label,
)
from posenc.charts.memo import memo
from posenc.charts.raster import RASTER_CELLS, frame_heatmap

# A chart with its lines named at their ends fills its column, with 30 px on its right for the end of a long name
# (a phone cut "RoPE + randomized" and "T5 buckets scaled to L" at the chart's edge)
WITH_END_LABELS = {"width": "container", "autosize": FIT_X, "padding": room_right(30)}

# Paul Tol's muted and dark colours, for a second scheme whose registry colour is already drawn in the same chart (the
# naive schemes share theirs with later ones; T5 with its buckets scaled to L shares T5's).  The first ones read on white and
# on the dark theme alike (indigo #332288, first before, was dim on dark)
SPARE_COLORS = ("#6699CC", "#AA4466", "#117777", "#777711", "#88CCEE", "#DDCC77", "#332288", "#661100")


def scheme_colors(keys: Sequence[str]) -> list[str]:
    """The colour of each scheme, by the registry entry it stands for (``charts.base.SCHEME_COLORS``); a colour a
    scheme earlier in ``keys`` already has goes to the first spare colour no scheme drawn here has."""
    out: list[str] = []
    taken = {SCHEME_COLORS[k] for k in keys}
    spare = iter(c for c in SPARE_COLORS if c not in taken)
    for key in keys:
        color = SCHEME_COLORS[key]
        out.append(color if color not in out else next(spare))
    return out


def _scheme_scale(frame: pd.DataFrame, names: Sequence[str]) -> alt.Scale:
    """Colour by scheme: each name's registry entry is the frame's "key" column on that scheme's rows."""
    if "key" not in frame:
        raise ValueError("the frame needs a 'key' column: the registry entry each scheme stands for (its colour)")
    key = dict(zip(frame["scheme"].astype(str), frame["key"].astype(str)))
    missing = [n for n in names if n not in key]
    if missing:
        raise ValueError(f"no rows, so no registry key, for {missing}")
    return alt.Scale(domain=list(names), range=scheme_colors([key[n] for n in names]))


def _check(df: pd.DataFrame, what: str) -> None:
    if len(df) > MAX_MARKS:
        raise ValueError(f"{what} has {len(df):,} rows, above the {MAX_MARKS:,}-mark ceiling; downsample first")


def _rule(at: float, label: str) -> alt.LayerChart:
    df = pd.DataFrame({"at": [float(at)], "label": [label]})
    rule = alt.Chart(df).mark_rule(strokeDash=[5, 4], color="#777777").encode(x="at:Q", tooltip=["label:N", "at:Q"])
    text = alt.Chart(df).mark_text(align="left", dx=4, baseline="top", fontSize=12, color="#777777").encode(
        x="at:Q", y=alt.value(4), text="label:N")
    return alt.layer(rule, text)




def end_labels(frame: pd.DataFrame, scale: alt.Scale, x: str, xs: alt.X, y: str, ys: alt.Scale, *, height: int,
               log_y: bool) -> alt.LayerChart:
    """Each scheme named beside the right end of its line (``charts.base.named_ends``), instead of a legend of a dozen colours to
    match: the lines that reach the last x (a line that stops earlier, such as the learned table's at L, keeps its
    tooltip), the first budget's (solid) line where a follow-up run is dashed beside it, heights spread END_PX px apart
    over the plot's ``height`` (``charts.base.end_heights``)."""
    rows = frame[frame[y].notna() & ((frame[y] > 0) if log_y else True)]
    if "budget" in rows and len(rows):
        rows = rows[rows["budget"] == rows["budget"].iloc[0]]
    keep = ["scheme", x, y, *[c for c in ("budget", "key") if c in rows]]  # a reader of the chart's data finds each row whole
    last = rows[rows[x] == rows[x].max()].drop_duplicates("scheme")[keep].reset_index(drop=True)
    lines = np.array([1 + wrap_label(t).count("\n") for t in last["scheme"].astype(str)])
    last["label_y"] = end_heights(last, rows, y, ("lo", "hi"), plot_px=height, log_y=log_y, lines=lines)
    last["scheme"] = last["scheme"].astype(str)
    last["text"] = [wrap_label(t) for t in last["scheme"]]  # a long name on two lines: at 390 px the room is ~100 px
    return named_ends(last, xs, y, alt.Y(f"{y}:Q", scale=ys), alt.Color("scheme:N", scale=scale, legend=None), "text")


@memo
def gap_chart(frame: pd.DataFrame, names: Sequence[str], *, height: int = 340) -> alt.LayerChart:
    """Mean gap (loss - floor) against evaluation length, one line per scheme (in the colour of the registry entry it
    stands for, the frame's "key"), min-max band over seeds.

    A frame with a "budget" column of more than one value (the follow-up run of schemes trained longer)
    dashes each budget differently, first budget solid.
    """
    _check(frame, "gap chart")
    scale = _scheme_scale(frame, names)
    color = alt.Color("scheme:N", scale=scale, legend=None)  # named at the lines' ends (end_labels)
    lengths = sorted(frame["length"].unique().tolist())
    x = alt.X("length:Q", title="evaluation length (tokens; trained at the first)",  # room right of the last length for the names
              scale=alt.Scale(type="log", base=2, domain=[lengths[0] / 2**0.15, lengths[-1] * 2**1.6], nice=False),
              axis=alt.Axis(values=lengths))
    ys = alt.Scale(type="log")
    y = alt.Y("gap:Q", title="loss − floor (nats, log scale)", scale=ys)
    names_at_end = end_labels(frame, scale, "length", x, "gap", ys, height=height, log_y=True)
    tips = [alt.Tooltip("scheme:N"), alt.Tooltip("length:Q", format=","), alt.Tooltip("gap:Q", title="mean gap", format=".4f"),
            alt.Tooltip("lo:Q", title="min over seeds", format=".4f"), alt.Tooltip("hi:Q", title="max over seeds", format=".4f")]
    base = alt.Chart(frame, height=height)
    band = base.mark_area(opacity=0.15).encode(x=x, y=alt.Y("lo:Q", scale=alt.Scale(type="log")), y2="hi:Q",
                                              fill=alt.Fill("scheme:N", legend=None, scale=scale))
    budgets = list(dict.fromkeys(frame["budget"])) if "budget" in frame else []
    if len(budgets) < 2:
        return alt.layer(band, base.mark_line(point=True).encode(x=x, y=y, color=color, tooltip=tips), names_at_end).resolve_scale(
            fill="independent").properties(**WITH_END_LABELS)
    # two budgets: dashed by budget (a line mark alone, so the dash legend draws lines), the points on their own layer
    tips.append(alt.Tooltip("budget:N", title="training"))
    dash = alt.StrokeDash("budget:N", title="training", scale=alt.Scale(domain=budgets, range=[[1, 0], [6, 3]]),
                          legend=alt.Legend(orient="top", direction="horizontal", symbolStrokeWidth=2))
    line = base.mark_line().encode(x=x, y=y, color=color, strokeDash=dash, tooltip=tips)
    points = base.mark_point(filled=True, size=30).encode(x=x, y=y, color=color, detail="budget:N", tooltip=tips)
    return alt.layer(band.encode(detail="budget:N"), line, points, names_at_end).resolve_scale(fill="independent").properties(
        **WITH_END_LABELS)


@memo
def position_chart(frame: pd.DataFrame, names: Sequence[str], *, train_len: int, height: int = 320) -> alt.LayerChart:
    """Gap per position (mean over seeds), one line per scheme (coloured as ``gap_chart``), the training length marked."""
    _check(frame, "position chart")
    scale = _scheme_scale(frame, names)
    color = alt.Color("scheme:N", scale=scale, legend=None)  # named at the lines' ends (end_labels)
    last = float(frame["position"].max()) if len(frame) else 1.0
    x = alt.X("position:Q", title="position (0 = first token)", scale=alt.Scale(domain=[0, last * 1.35], nice=False))
    ys = alt.Scale()
    line = alt.Chart(frame, height=height).mark_line(strokeWidth=1.5).encode(
        x=x, y=alt.Y("gap:Q", title="loss − Bayes loss at the position (nats)", scale=ys),
        color=color,
        tooltip=[alt.Tooltip("scheme:N"), alt.Tooltip("position:Q"), alt.Tooltip("gap:Q", format=".4f"),
                 alt.Tooltip("lo:Q", title="min over seeds", format=".4f"), alt.Tooltip("hi:Q", title="max over seeds", format=".4f")],
    )
    names_at_end = end_labels(frame, scale, "position", x, "gap", ys, height=height, log_y=False)
    return alt.layer(line, _rule(train_len, f"L = {train_len}"), names_at_end).properties(**WITH_END_LABELS)


@memo
def extension_chart(frame: pd.DataFrame, methods: Sequence[str], *, height: int = 260) -> alt.LayerChart:
    """RoPE + each test-time extension: mean gap (dot) and min-max over seeds (bar), at 4L and 8L."""
    _check(frame, "extension chart")
    lengths = [str(v) for v in sorted(frame["length"].unique())]
    data = frame.assign(at=frame["length"].astype(str))
    y = alt.Y("method:N", title=None, sort=list(methods), axis=alt.Axis(labelLimit=220))
    color = alt.Color("at:N", title="evaluation length", scale=alt.Scale(domain=lengths, range=[OKABE_ITO[0], OKABE_ITO[3]]))
    off = alt.YOffset("at:N", scale=alt.Scale(domain=lengths))
    tips = [alt.Tooltip("method:N"), alt.Tooltip("length:Q", format=","), alt.Tooltip("gap:Q", title="mean gap", format=".4f"),
            alt.Tooltip("lo:Q", title="min over seeds", format=".4f"), alt.Tooltip("hi:Q", title="max over seeds", format=".4f")]
    base = alt.Chart(data, height=height)
    bar = base.mark_rule(strokeWidth=3, opacity=0.45).encode(
        x=alt.X("lo:Q", title="loss − floor (nats)", scale=alt.Scale(zero=True)), x2="hi:Q", y=y, yOffset=off, color=color)
    dot = base.mark_point(filled=True, size=80).encode(x="gap:Q", y=y, yOffset=off, color=color, tooltip=tips)
    return alt.layer(bar, dot).properties(width="container")


def attention_map(frame: pd.DataFrame, *, title: str | alt.Title, height: int = 300, by: Sequence[str] = (),
                  where: str | None = None) -> alt.TopLevelMixin:
    """One head's attention (query x key), averaged over sequences.  With ``by`` (e.g. layer, head) the
    frame holds several heads and the Vega expression ``where`` picks the one drawn (in the browser)."""
    groups = int(frame.groupby(list(by)).ngroups) if by else 1
    _check(frame.iloc[: len(frame) // groups], "attention map")  # the marks of one head
    if len(frame) // groups > RASTER_CELLS:  # one image per head (downsampled positions are evenly spaced)
        return frame_heatmap(frame, x="key", y="query", value="weight", domain=(0.0, 1.0), by=by, where=where,
                             palette="sequential", x_title="key position", y_title="query position", value_title="attention",
                             title=title, width="container", height=height,
                             legend=alt.Legend(type="gradient", gradientLength=160, gradientOpacity=1))
    hm = heatmap(frame, x="key", y="query", value="weight", x_title="key position", y_title="query position",
                 title=title, domain=(0.0, 1.0), scheme=SEQUENTIAL, legend_title="attention", height=height)
    # thin axes: at most ~8 labels on each ordinal axis
    keys = sorted(frame["key"].unique().tolist())
    step = max(1, len(keys) // 8)
    hm = hm.encode(x=alt.X("key:O", title="key position", axis=alt.Axis(values=keys[::step], labelAngle=0)),
                   y=alt.Y("query:O", title="query position", axis=alt.Axis(values=keys[::step])))
    return hm.transform_filter(where) if where is not None else hm


def mass_chart(frame: pd.DataFrame, *, train_len: int, order: int, height: int = 300, where: str | None = None,
               highlight: str | None = None, title: str | alt.Title = "") -> alt.LayerChart:
    """Attention mass on the k input positions the next token depends on, per head, against position.
    ``where`` (a Vega expression) keeps some rows (one layer); the heads for which ``highlight`` holds
    are drawn thick, the others thin."""
    _check(frame, "mass chart")
    heads = list(dict.fromkeys(frame["head"]))
    width = alt.condition(highlight, alt.value(3.0), alt.value(1.2)) if highlight else alt.value(1.5)
    opacity = alt.condition(highlight, alt.value(1.0), alt.value(0.55)) if highlight else alt.value(1.0)
    line = alt.Chart(frame).mark_line().encode(
        x=alt.X("position:Q", title="query position"),
        y=alt.Y("mass:Q", title=f"mass on the last {order} inputs", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("head:N", title="head", scale=alt.Scale(domain=heads, range=OKABE_ITO[: len(heads)])),
        detail="head:N", strokeWidth=width, opacity=opacity,
        tooltip=[alt.Tooltip("head:N"), alt.Tooltip("position:Q"), alt.Tooltip("mass:Q", format=".3f")],
    )
    if where is not None:
        line = line.transform_filter(where)
    return alt.layer(line, _rule(train_len, f"L = {train_len}"), title=title or alt.Undefined).properties(width="container", height=height)


@memo
def head_attention_maps(frame: pd.DataFrame, *, name: str, label: str, layer: alt.Parameter, head: alt.Parameter,
                        height: int = 300) -> alt.TopLevelMixin:
    """``attention_map`` of a frame holding every layer and head (``views.lab.attention_stack``), the one
    drawn picked in the browser by the ``layer`` and ``head`` parameters (``charts.base.url_param``)."""
    title = alt.Title(alt.expr(f"{json.dumps(name + ', layer ')} + {layer.name} + ', head ' + {head.name} + {json.dumps(', ' + label)}"))
    return attention_map(frame, title=title, height=height, by=("layer", "head"),
                         where=pick(("layer", layer), ("head", head))).add_params(layer, head)


@memo
def head_mass_chart(frame: pd.DataFrame, summary, *, layer: alt.Parameter, head: alt.Parameter, train_len: int, order: int,
                    height: int = 300) -> alt.LayerChart:
    """``mass_chart`` of every head of the layer the ``layer`` parameter picks, the ``head`` parameter's
    head thick, its mean mass before and after L (``summary[layer - 1][head - 1]``) in the title."""
    text = [[f"{b:.2f} before L, " + ("no position after L" if np.isnan(a) else f"{a:.2f} after") for b, a in rows]
            for rows in summary]
    title = alt.Title(alt.expr(f"'head ' + {head.name} + ' of layer ' + {layer.name} + ': ' + {pick_text(text, layer, head)}"))
    return mass_chart(frame, train_len=train_len, order=order, height=height, where=pick(("layer", layer)),
                      highlight=f"datum.head == {head.name}", title=title).add_params(layer, head)


# RoPE's variants dashed, so that the lines that nearly coincide past L (RoPE, xPos, p-RoPE) stay apart without colour
VARIANT_DASH = {"xpos": [7, 3], "p_rope": [2, 2], "rope_randomized": [8, 2, 2, 2]}
UNIFORM_COLOR = "#888888"  # the uniform guess's line: mid grey, readable on the light and the dark theme


@memo
def band_chart(view: dict, *, height: int = 340) -> alt.LayerChart:
    """Gap per band of positions (``views.lab.bands_view``): one line per scheme in its registry colour (RoPE's variants
    also dashed, ``VARIANT_DASH``), the bootstrap interval over seeds as a bar at each band, each line labelled at its
    end (no legend; a leader in its colour ties the label to it), the uniform guess's gap as a grey dashed line
    labelled "uniform guess", and a custom run's lines drawn thick and translucent over the shipped ones."""
    frame, labels, uniform = view["frame"], view["labels"], view["uniform"]
    _check(frame, "band chart")
    n = len(view["band_labels"])
    names = list(dict.fromkeys([*view["names"], *frame["scheme"].astype(str)]))
    scale = _scheme_scale(frame, names)
    keys = list(dict.fromkeys(frame["key"].astype(str)))
    dash = alt.StrokeDash("key:N", scale=alt.Scale(domain=keys, range=[VARIANT_DASH.get(k, [1, 0]) for k in keys]), legend=None)
    axis_labels = json.dumps(view["band_labels"])
    x = alt.X("band:Q", title="positions (band; trained on the first)", scale=alt.Scale(domain=[-0.15, n - 1 + 1.6], nice=False),
              axis=alt.Axis(values=list(range(n)), labelExpr=f"{axis_labels}[datum.value]", grid=False))
    ys = alt.Scale(type="log", domain=list(view["domain"]), nice=False)
    y = alt.Y("gap:Q", title="loss − floor (nats, log scale)", scale=ys)
    color = alt.Color("scheme:N", scale=scale, legend=None)
    tips = [alt.Tooltip("label:N", title="scheme"), alt.Tooltip("band_label:N", title="positions"),
            alt.Tooltip("gap:Q", title="mean gap", format=".4f"), alt.Tooltip("lo:Q", title="95 % interval from", format=".4f"),
            alt.Tooltip("hi:Q", title="to", format=".4f"), alt.Tooltip("seeds:Q"),
            alt.Tooltip("unseen:Q", title="inputs unseen in training, up to the band's end", format=".0%")]
    base = alt.Chart(frame)
    shipped = alt.datum.run == "shipped"
    width = alt.condition(shipped, alt.value(2.0), alt.value(4.5))
    opacity = alt.condition(shipped, alt.value(1.0), alt.value(0.55))
    bars = base.mark_rule(strokeWidth=2, opacity=0.5).encode(x=x, y=alt.Y("lo:Q", scale=ys), y2="hi:Q", color=color)
    lines = base.mark_line().encode(x=x, y=y, color=color, strokeDash=dash, detail="label:N", strokeWidth=width, opacity=opacity)
    points = base.mark_point(filled=True, size=36).encode(x=x, y=y, color=color, tooltip=tips)
    # each label in the neutral grey (readable on both themes), tied to its line's end by a leader in the line's colour
    ends = alt.Chart(labels).transform_calculate(at=alt.datum.band + 0.14)
    leaders = ends.mark_rule(strokeWidth=1.5).encode(x="band:Q", x2="at:Q", y=alt.Y("gap:Q", scale=ys), y2="y:Q", color=color)
    text = ends.mark_text(align="left", baseline="middle", dx=3, fontSize=11, lineBreak="\n", color=NEUTRAL_TEXT).encode(
        x="at:Q", y=alt.Y("y:Q", scale=ys), text="text:N")  # "text": the label, a long one on two lines
    u = alt.Chart(uniform)
    ubase = u.mark_line(strokeDash=[5, 4], color=UNIFORM_COLOR, strokeWidth=1.5).encode(
        x=x, y=y, tooltip=[alt.Tooltip("band_label:N", title="positions"), alt.Tooltip("gap:Q", title="uniform guess", format=".4f")])
    utext = u.transform_filter(alt.datum.band == 0).mark_text(align="left", dx=4, dy=-7, fontSize=11, color=NEUTRAL_TEXT).encode(
        x=x, y=y, text=alt.value("uniform guess"))
    return alt.layer(ubase, utext, bars, lines, points, leaders, text, height=height).properties(**WITH_END_LABELS)


@memo
def order_chart(view: dict, *, height: int = 300) -> alt.LayerChart:
    """The Markov order sweep (``views.lab.order_view``): each scheme's beyond-L fraction of the uniform guess's gap
    against the order k, one line per scheme in its registry colour labelled at its end (as ``band_chart``: a leader in
    its colour, the label in the neutral grey), a point faded where the model did not learn the task at L; the uniform
    guess (100 %) as a grey dashed line and the verdict's "holds" line (10 %) dotted, each labelled."""
    from posenc.lab.results import HOLDS

    frame, labels, orders = view["frame"], view["labels"], view["orders"]
    _check(frame, "order chart")
    scale = _scheme_scale(frame, view["names"])
    color = alt.Color("scheme:N", scale=scale, legend=None)
    x = alt.X("order:Q", title="order k of the Markov source", scale=alt.Scale(domain=[orders[0] - 0.15, orders[-1] + 1.1], nice=False),
              axis=alt.Axis(values=orders, format="d", grid=False))
    ys = alt.Scale(type="log", domain=list(view["domain"]), nice=False)
    y = alt.Y("fraction:Q", title="gap past L ÷ uniform guess's (log scale)", scale=ys, axis=alt.Axis(format="%"))
    tips = [alt.Tooltip("scheme:N"), alt.Tooltip("order:Q", title="order k"),
            alt.Tooltip("fraction:Q", title="of a uniform guess's gap", format=".1%"), alt.Tooltip("verdict:N"),
            alt.Tooltip("learned:N", title="learned the task at L"), alt.Tooltip("floor:Q", format=".4f")]
    base = alt.Chart(frame)
    lines = base.mark_line(strokeWidth=2).encode(x=x, y=y, color=color, detail="scheme:N")
    points = base.mark_point(filled=True, size=50).encode(
        x=x, y=y, color=color, opacity=alt.condition(alt.datum.learned, alt.value(1.0), alt.value(0.3)), tooltip=tips)
    ends = alt.Chart(labels).transform_calculate(at=alt.datum.order + 0.12)
    leaders = ends.mark_rule(strokeWidth=1.5).encode(x="order:Q", x2="at:Q", y=alt.Y("fraction:Q", scale=ys), y2="y:Q", color=color)
    text = ends.mark_text(align="left", dx=3, fontSize=11, color=NEUTRAL_TEXT).encode(x="at:Q", y=alt.Y("y:Q", scale=ys), text="scheme:N")
    marks = pd.DataFrame({"fraction": [1.0, HOLDS], "label": ["uniform guess", f"holds (≤ {HOLDS:.0%})"], "dash": ["u", "h"]})
    m = alt.Chart(marks)
    rules = m.mark_rule(color=UNIFORM_COLOR, strokeWidth=1.5).encode(
        y=alt.Y("fraction:Q", scale=ys), strokeDash=alt.StrokeDash("dash:N", scale=alt.Scale(domain=["u", "h"], range=[[5, 4], [1, 3]]),
                                                                    legend=None), tooltip=[alt.Tooltip("label:N")])
    rule_text = m.mark_text(align="left", baseline="bottom", dx=4, dy=-2, fontSize=11, color=NEUTRAL_TEXT).encode(
        x=alt.value(0), y=alt.Y("fraction:Q", scale=ys), text="label:N")
    return alt.layer(rules, rule_text, lines, points, leaders, text, height=height).properties(**WITH_END_LABELS)
