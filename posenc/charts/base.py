"""Shared chart building blocks: tidy frames from matrices, downsampling, styled Altair charts.

No Streamlit here: every builder takes a DataFrame and returns an Altair chart, so it is tested
as a plain function (``chart.to_dict()`` under ``alt.data_transformers.disable_max_rows()``).

Colour choices are colour-blind safe: diverging red-blue (-1 red .. +1 blue, as the articles draw the heatmap),
sequential viridis, and the Okabe-Ito categorical palette.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.memo import memo
from posenc.charts.template import derived
from posenc.registry import SCHEMES, get_scheme

# Okabe & Ito (2008), "Color Universal Design": distinguishable under every common CVD.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
DIVERGING = "redblue"  # Vega scheme: low = red, high = blue
SEQUENTIAL = "viridis"
# Text drawn straight on the chart background must read in the light and the dark theme (the
# export is light): this grey has contrast 4.5:1 on white and 4.2:1 on Streamlit's dark background.
NEUTRAL_TEXT = "#767676"
# the reference drawn beside its variants (unscaled RoPE beside its extensions): reads on white and on the dark theme,
# where black vanishes
BASELINE_GREY = "#999999"
# one fixed colour per RoPE method, by registry key (Okabe-Ito; the yellow is skipped, it vanishes on white; the unscaled
# reference is grey, not black, which vanishes on the dark theme), and by the name its legends show (its short name)
# One colour per scheme, the registry's (Scheme.color): every chart that draws schemes side by side reads this table.
SCHEME_COLORS = {key: scheme.color for key, scheme in SCHEMES.items()}
# the RoPE methods drawn side by side on Context extension: its entries, and plain RoPE (the rope_type with no scaling)
METHOD_KEY_COLORS = {key: SCHEME_COLORS[key] for key, s in SCHEMES.items() if s.page == "pages/context_extension.py"
                     or (s.behaviour.scaling_block is not None and s.scaling_block() is None)}
NAME_COLORS = {get_scheme(key).short_name: color for key, color in METHOD_KEY_COLORS.items()}
MODEL_PREFIX = "model:"  # a loaded model's series beside the classic methods is named "model: <its name>"
MODEL_COLOR = "#56B4E9"  # and drawn in sky blue (Okabe-Ito), dashed


def model_series(name: str) -> str:
    """The series name of a loaded model's curve (``MODEL_PREFIX`` and its name)."""
    return f"{MODEL_PREFIX} {name}"


def is_model_series(name) -> bool:
    """Whether a series name is a loaded model's (``model_series``) rather than a method's."""
    return str(name).startswith(MODEL_PREFIX)


# The width follows the page column; the height is the plot's own, with axes and a legend under it added
# around it (Streamlit's default "fit" would squeeze them into the height instead).
FIT_X = alt.AutoSizeParams(type="fit-x", contains="padding")
MAX_MARKS = 65_536  # hard ceiling per chart (the Streamlit notes measured 3 s to draw this many)
HEATMAP_CELLS = 16_384  # what a heatmap aims for by default (~200 kB of Arrow)
FONT = {"label": 13, "title": 14, "header": 16}


def stride_for(n: int, max_side: int) -> int:
    """Smallest step that keeps ceil(n / step) <= max_side."""
    if n <= 0 or max_side <= 0:
        raise ValueError(f"n and max_side must be positive, got {n} and {max_side}")
    return max(1, math.ceil(n / max_side))


def downsample(M: np.ndarray, max_cells: int = HEATMAP_CELLS, *, rows: np.ndarray | None = None, cols: np.ndarray | None = None):
    """Stride a 2-D array so it has at most ``max_cells`` cells.

    Returns (row_labels (r,), col_labels (c,), sub (r, c), (row_step, col_step)).  Strided cells
    are exact values at the kept positions (no averaging), so numbers stay checkable.
    """
    M = np.asarray(M)
    if M.ndim != 2:
        raise ValueError(f"M must be 2-D, got shape {M.shape}")
    n_r, n_c = M.shape
    rows = np.arange(n_r) if rows is None else np.asarray(rows)
    cols = np.arange(n_c) if cols is None else np.asarray(cols)
    step_r = step_c = 1
    while math.ceil(n_r / step_r) * math.ceil(n_c / step_c) > max_cells:
        # shrink the longer side first so the picture keeps its aspect
        if math.ceil(n_r / step_r) >= math.ceil(n_c / step_c):
            step_r += 1
        else:
            step_c += 1
    return rows[::step_r], cols[::step_c], M[::step_r, ::step_c], (step_r, step_c)


# A full-width line chart's plot is ~850 px at a 1,400 px window: 400 columns of ~2 px each, 2 rows a column.  Every
# row is a point the browser encodes and draws (1,000 -> 250 columns: RoPE's first paint 1.97 -> 1.86 s, 3.23 -> 2.87 s
# of CPU; alternating A/B, median of 8; docs/performance.md, section 8).
LINE_COLUMNS = 400


def envelope(frame: pd.DataFrame, x: str, y: str, *, by: str | None = None, columns: int = LINE_COLUMNS) -> pd.DataFrame:
    """The rows of ``frame`` that draw each series' line (``y`` against ``x``) as it looks ``columns`` wide.

    ``x`` is cut into ``columns`` equal intervals; in each, a series keeps the row with the smallest and
    the row with the largest ``y`` (in their order along ``x``), and its first and last rows are kept: the
    line passes through the same extremes in every column, so a curve that oscillates faster than a
    column (RoPE's score against distance) keeps its band instead of aliasing as striding would.  Every
    kept row is a row of ``frame`` (exact values at real x, for hover); a series with at most
    2 * ``columns`` rows is kept whole.  Rows come back in the frame's order; exports keep the full frame.
    """
    if columns < 1:
        raise ValueError(f"columns must be >= 1, got {columns}")
    if frame.empty:
        return frame
    xs = frame[x].to_numpy(dtype=np.float64)
    ys = frame[y].to_numpy(dtype=np.float64)
    groups = [np.arange(len(frame))] if by is None else [np.asarray(ix) for ix in frame.groupby(by, observed=True, sort=False).indices.values()]
    lo, hi = float(np.nanmin(xs)), float(np.nanmax(xs))
    width = (hi - lo) / columns or 1.0
    keep = []
    for ix in groups:
        if ix.size <= 2 * columns:
            keep.append(ix)
            continue
        col = np.minimum(((xs[ix] - lo) / width).astype(np.int64), columns - 1)
        order = np.lexsort((ys[ix], col))  # by column, then by y: a column's first and last are its min and max
        c = col[order]
        starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        ends = np.r_[starts[1:], c.size] - 1
        keep.append(ix[np.r_[order[starts], order[ends], 0, ix.size - 1]])
    rows = np.unique(np.concatenate(keep))
    return frame.iloc[rows] if rows.size < len(frame) else frame


def matrix_frame(M: np.ndarray, rows: Sequence, cols: Sequence, *, row: str = "row", col: str = "col", value: str = "value") -> pd.DataFrame:
    """A tidy (row, col, value) frame of a 2-D array, compact dtypes (int32 / float32).

    Non-finite entries (e.g. -inf masks) become NaN so Arrow and Vega can carry them.
    """
    M = np.asarray(M, dtype=np.float64)
    r = np.asarray(rows)
    c = np.asarray(cols)
    if M.shape != (r.size, c.size):
        raise ValueError(f"M has shape {M.shape}, labels give ({r.size}, {c.size})")
    vals = np.where(np.isfinite(M), M, np.nan).astype(np.float32).ravel()
    rr = np.repeat(r, c.size)
    cc = np.tile(c, r.size)
    as_int = lambda a: a.astype(np.int32) if np.issubdtype(a.dtype, np.integer) else a
    return pd.DataFrame({row: as_int(rr), col: as_int(cc), value: vals})


def narrow_ints(df: pd.DataFrame, *, skip: Sequence[str] = ()) -> pd.DataFrame:
    """``df`` with its whole-number columns (integers, or floats that are all whole: positions, layer,
    head) in the narrowest integer type, so the chart's data sends fewer bytes; ``skip`` names value
    columns left as they are.  Changes ``df`` in place and returns it."""
    for name in df.columns:
        if name in skip:
            continue
        col = df[name].to_numpy()
        if col.dtype.kind == "f" and np.isfinite(col).all() and (col == np.rint(col)).all():
            df[name] = col.astype(np.int64)
        if df[name].dtype.kind in "iu":
            df[name] = pd.to_numeric(df[name], downcast="integer")
    return df


PARAM_PREFIX = "url_"  # a chart parameter url_<key> is the page's link parameter <key> (see posenc.ui.assets.CLIENT_PARAMS)


def room_right(px: int) -> dict:
    """A chart's padding with ``px`` on the right (Vega's 5 elsewhere): room for text that runs past the plot at its right
    edge -- a label at a line's end, a tilted axis label -- which a narrow chart (a phone, 390 px) otherwise cuts."""
    return {"left": 5, "top": 5, "bottom": 5, "right": int(px)}


def columns_that_fit(item_px: int) -> dict:
    """A legend's ``columns`` as a Vega expression: as many entries side by side as the plot's width holds at
    ``item_px`` each (at least one), so a legend under a chart wraps on a phone instead of running off it."""
    return {"expr": f"max(1, floor(width / {int(item_px)}))"}


MAX_RADIO = 8  # an in-chart control with more options than this is a slider (a run of integers) or a select


def url_param(key: str, label: str, options: Sequence[int], value: int) -> alt.Parameter:
    """A chart parameter picked under the chart -- radio buttons for up to ``MAX_RADIO`` options, else a slider
    (options 1, 2, ..., n with no gap) or a select: choosing among data the chart already holds (a layer, a
    head) repaints in the browser, with no server round trip.  Named ``url_<key>``: the page keeps it in the
    address bar under ``key`` (so a link reopens the view) and tells the server once the hand stops.  Filter
    on it with ``pick(field, param)``."""
    options = [int(o) for o in options]
    if int(value) not in options:
        raise ValueError(f"value must be one of {options}, got {value!r}")
    name = f"{label} "
    if len(options) <= MAX_RADIO:
        bind = alt.binding_radio(options=options, name=name)
    elif options == list(range(options[0], options[0] + len(options))):
        bind = alt.binding_range(min=options[0], max=options[-1], step=1, name=name)
    else:
        bind = alt.binding_select(options=options, name=name)
    return alt.param(name=PARAM_PREFIX + key, value=int(value), bind=bind)


def pick(*pairs: tuple[str, alt.Parameter]) -> str:
    """A Vega filter expression: each (field, parameter) pair equal (``url_param``'s parameters)."""
    return " && ".join(f"datum[{field!r}] == {p.name}" for field, p in pairs)


def pick_text(values, *params: alt.Parameter) -> str:
    """A Vega expression for the string ``values[p1 - 1][p2 - 1]...`` (nested lists, indexed from 1 by the
    parameters' values): a title or caption that follows the parameters in the browser."""
    index = "".join(f"[{p.name} - 1]" for p in params)
    return f"{json.dumps(values)}{index}"


@memo
def style(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Large readable fonts for presenters (top-level configuration), set in one copy of the chart (four
    ``configure_*`` calls copied it four times: 13 ms of a layered chart's ~55 ms build).  A chart built from a
    template (``posenc.charts.template``) is styled through its template: once per setting, not once per new value."""
    styled = derived(chart, _style, "style")
    return styled if styled is not None else _style(chart)


def _style(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    config = dict(
        # labelSeparation: greedy overlap removal also drops labels closer than 4 px (no "97100")
        axis=alt.AxisConfig(labelFontSize=FONT["label"], titleFontSize=FONT["title"], labelOverlap="greedy", labelSeparation=4),
        legend=alt.LegendConfig(labelFontSize=FONT["label"], titleFontSize=FONT["label"], labelLimit=0, titleLimit=0),  # never cut
        title=alt.TitleConfig(fontSize=FONT["header"], anchor="start", subtitleColor=NEUTRAL_TEXT),  # a subtitle reads in both themes
        header=alt.HeaderConfig(labelFontSize=FONT["title"], titleFontSize=FONT["title"]),
        # No ARIA description per point of a line or an area: the mark is one SVG path, which Vega labels with its first
        # point's ("x: 1; y: 4"), while the browser formats one for every point on every draw (a step of Context
        # extension's head_dim 0.47 -> 0.40 s, RoPE's 0.71 -> 0.63 s: docs/performance.md).  Points, bars, rects and
        # text keep theirs, and axes and legends their labels.
        line=alt.LineConfig(aria=False), area=alt.AreaConfig(aria=False),
    )
    if chart.config is not alt.Undefined:  # a builder's own configuration: add to it, as configure_* would
        return chart.configure_axis(**config["axis"].to_dict()).configure_legend(**config["legend"].to_dict()) \
            .configure_title(**config["title"].to_dict()).configure_header(**config["header"].to_dict()) \
            .configure_line(**config["line"].to_dict()).configure_area(**config["area"].to_dict())  # none sets its own
    return chart.configure(**config)


def heatmap(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    value: str,
    x_title: str,
    y_title: str,
    title: str = "",
    domain: tuple[float, float] | None = None,
    scheme: str = DIVERGING,
    legend_title: str | None = None,
    height: int = 320,
    width: int | str = "container",
    tooltip: Sequence[alt.Tooltip] | None = None,
    reverse: bool = False,
) -> alt.Chart:
    """A rect heatmap with ordinal axes; ``domain`` fixes the colour scale (e.g. (-1, 1))."""
    if len(df) > MAX_MARKS:
        raise ValueError(f"heatmap has {len(df):,} cells, above the {MAX_MARKS:,}-mark ceiling; downsample first")
    scale = alt.Scale(scheme=scheme, domain=list(domain) if domain else alt.Undefined, reverse=reverse)
    tips = list(tooltip) if tooltip else [
        alt.Tooltip(f"{y}:O", title=y_title), alt.Tooltip(f"{x}:O", title=x_title),
        alt.Tooltip(f"{value}:Q", title=legend_title or value, format=".4f"),
    ]
    return (
        alt.Chart(df, title=title or alt.Undefined, height=height, width=width)
        .mark_rect()
        .encode(
            x=alt.X(f"{x}:O", title=x_title, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{y}:O", title=y_title),
            color=alt.Color(f"{value}:Q", scale=scale, title=legend_title or value),
            tooltip=tips,
        )
    )


def lines(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    x_title: str,
    y_title: str,
    color: str | None = None,
    color_title: str | None = None,
    title: str = "",
    log_x: bool = False,
    log_y: bool = False,
    points: bool = False,
    height: int = 300,
    width: int | str = "container",
    domain: Sequence[str] | None = None,
    y_domain: tuple[float, float] | None = None,
    tooltip_format: str = ".4f",
) -> alt.Chart:
    """Line chart(s), one per ``color`` category (Okabe-Ito), with tooltips."""
    if len(df) > MAX_MARKS:
        raise ValueError(f"line chart has {len(df):,} points, above the {MAX_MARKS:,}-mark ceiling; downsample first")
    xs = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    ys = alt.Scale(type="log") if log_y else alt.Scale(zero=False, domain=list(y_domain) if y_domain else alt.Undefined)
    enc = {
        "x": alt.X(f"{x}:Q", title=x_title, scale=xs),
        "y": alt.Y(f"{y}:Q", title=y_title, scale=ys),
        "tooltip": [alt.Tooltip(f"{x}:Q", title=x_title, format=",.6g"), alt.Tooltip(f"{y}:Q", title=y_title, format=tooltip_format)],
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=color_title or color,
                                 scale=alt.Scale(range=OKABE_ITO, domain=list(domain) if domain else alt.Undefined))
        enc["tooltip"] = [alt.Tooltip(f"{color}:N", title=color_title or color)] + enc["tooltip"]
    mark = alt.Chart(df, title=title or alt.Undefined, height=height, width=width).mark_line(point=points, clip=True)
    return mark.encode(**enc)


LOG_STEPS = (1, 1.5, 2, 3, 5, 7)  # where a short log axis is labelled within each decade


def log_ticks(lo: float, hi: float, steps: Sequence[float] = LOG_STEPS) -> list[float]:
    """Values in [lo, hi] (0 < lo <= hi) at ``steps`` times each power of ten, for a log axis spanning about a decade:
    Vega's own ticks left the top half of a 50-200 axis bare (50, 60, …, 100 and nothing above)."""
    if not 0 < lo <= hi:
        raise ValueError(f"lo and hi must satisfy 0 < lo <= hi, got {lo!r} and {hi!r}")
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    return [v for v in sorted(m * 10.0**k for k in decades for m in steps) if lo <= v <= hi]


LABEL_GAP = 0.075  # decades between two end labels on a log axis, by default


def spread_labels(values, gap: float = LABEL_GAP, *, log: bool = True, lines=None) -> np.ndarray:
    """Heights for end labels at ``values`` no two closer than ``gap`` (decades on a log axis, ``log``; else the axis's
    own units), each as near its value as the others allow: sorted, pushed up from below, then the whole run of pushed
    labels centred on its values.  ``lines``: each label's number of text lines (default 1), centred on its height, so
    two neighbours keep ``gap`` times the mean of their line counts apart."""
    v = np.asarray(values, dtype=np.float64)
    if v.size and (not np.all(np.isfinite(v)) or (log and np.any(v <= 0))):
        raise ValueError("values must be finite" + (" and > 0 (a log axis)" if log else ""))
    if not gap > 0:
        raise ValueError(f"gap must be > 0 decades, got {gap!r}")
    order = np.argsort(v, kind="stable")
    logv = np.log10(v[order]) if log else v[order]
    h = np.ones(v.size) if lines is None else np.asarray(lines, dtype=np.float64)[order]
    need = gap * (h[:-1] + h[1:]) / 2  # (n - 1,) the distance between neighbours i - 1 and i
    y = logv.copy()
    for i in range(1, y.size):
        y[i] = max(y[i], y[i - 1] + need[i - 1])
    # centre each cluster (labels pushed against each other) on the mean of its values, keeping clusters apart
    start = 0
    for i in range(1, y.size + 1):
        if i == y.size or y[i] - y[i - 1] > need[i - 1] + 1e-12:
            shift = float(np.mean(logv[start:i] - y[start:i]))
            low = y[start - 1] + need[start - 1] if start else -np.inf
            y[start:i] += max(shift, low - y[start])
            start = i
    out = np.empty_like(y)
    out[order] = 10.0**y if log else y
    return out


END_LABEL_CHARS = 18  # an end label longer than this is wrapped onto two lines


def wrap_label(text: str, width: int = END_LABEL_CHARS) -> str:
    """``text`` on two lines, split at the space nearest its middle, when longer than ``width`` characters (no space: as is)."""
    if len(text) <= width or " " not in text:
        return text
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return text[:cut] + "\n" + text[cut + 1:]


def axis_span(lo: float, hi: float, *, log: bool) -> float:
    """The span of the axis Vega-Lite draws for data in [lo, hi], in the units ``spread_labels`` spaces labels in: a log
    axis is rounded out to whole decades ("nice"), so 0.005 .. 1.2 draws 0.001 .. 10, four decades; a linear one starts
    at 0 and rounds out to its ticks, and other layers (a band, a baseline) may widen it: 1.25 times the data's span."""
    if log:
        return float(max(np.ceil(np.log10(hi)) - np.floor(np.log10(lo)), 1.0))
    return 1.25 * ((max(hi, 0.0) - min(lo, 0.0)) or 1.0)


END_PX = 14  # px between two end labels' baselines (font 11)


def end_heights(last: pd.DataFrame, rows: pd.DataFrame, y: str, band: Sequence[str] = (), *, plot_px: int, log_y: bool,
                lines=None) -> np.ndarray:
    """Heights for the names of the lines ending at ``last`` (one row a line, its end's value in ``y``), no two closer
    than END_PX px on a plot ``plot_px`` tall: spaced in the units of the axis Vega-Lite draws for every value of
    ``rows`` (``y`` and the ``band`` columns, which widen it; ``axis_span``), so names meant END_PX apart never touch.
    ``lines`` as in ``spread_labels``.  NaN for each line when no value can be drawn."""
    vals = rows[[c for c in (y, *band) if c in rows]].to_numpy(dtype=float).ravel()
    vals = vals[np.isfinite(vals) & ((vals > 0) if log_y else True)]
    if not len(last) or not vals.size:
        return np.full(len(last), np.nan)
    span = axis_span(float(vals.min()), float(vals.max()), log=log_y)
    return spread_labels(last[y].to_numpy(dtype=float), gap=span * END_PX / plot_px, log=log_y, lines=lines)


def named_ends(ends: pd.DataFrame, x: alt.X, value: str, y: alt.Y, color: alt.Color, text: str) -> alt.LayerChart:
    """Names beside the right ends of lines, readable in both themes: each name in the neutral grey, tied to its line by
    a short vertical leader from the line's end (``value``) to the name's height (``label_y``) and a square in the line's
    colour (a name in the line's own colour failed the contrast rule for grey, sky blue or yellow lines).  ``y`` is the
    lines' y encoding (its title and scale are shared); ``color`` the lines' colour encoding, without its legend."""
    shared = {k: y._kwds[k] for k in ("title", "scale") if k in y._kwds and y._kwds[k] is not alt.Undefined}
    ys = alt.Y("label_y:Q", **shared)
    base = alt.Chart(ends)
    leader = base.mark_rule(strokeWidth=1, xOffset=5).encode(x=x, y=alt.Y(f"{value}:Q", **shared), y2="label_y:Q", color=color)
    square = base.mark_point(shape="square", filled=True, size=36, opacity=1, xOffset=5).encode(x=x, y=ys, color=color)
    name = base.mark_text(align="left", baseline="middle", dx=11, fontSize=11, fontWeight="bold", lineBreak="\n",
                          color=NEUTRAL_TEXT).encode(x=x, y=ys, text=f"{text}:N")
    return alt.layer(leader, square, name)
