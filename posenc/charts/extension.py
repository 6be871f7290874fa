"""Charts of the engineer's measurements (context extension) and of RoPE precision.  DataFrame in, Altair out.

Every legend sits below its plot, one entry per line, never cut (``labelLimit=0``).  The method charts
colour by ``name`` (the method alone), so their specs do not change with the settings -- the browser then
swaps the data of a chart it built -- and a tooltip names the settings each curve was measured at
(``method``: "name · settings"); the page states them under the chart and in its export's title.  A loaded
model's curve (named by ``posenc.charts.base.model_series``) is a layer of its own, dashed in ``MODEL_COLOR`` and labelled with its name at its
right end instead of a legend entry: with or without a model the spec is the same (the model's layers filter the same
data), so loading one only swaps data.  (A legend whose entries come from the data is no fix: Vega lays out an empty
legend at infinite size.)
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from posenc.charts.base import (
    MAX_MARKS,
    MODEL_COLOR,
    MODEL_PREFIX,
    NAME_COLORS,
    NEUTRAL_TEXT,
    OKABE_ITO,
    end_heights,
    is_model_series,
    named_ends,
)
from posenc.charts.memo import memo
from posenc.charts.template import templated

WIDTH = 720  # exports render at this width; on the page the chart stretches to its column
MODE_COLORS = {"float32": OKABE_ITO[0], "float32 → bfloat16": OKABE_ITO[2], "float16": OKABE_ITO[1], "bfloat16": OKABE_ITO[3]}


def _check(df: pd.DataFrame, what: str) -> None:
    if len(df) > MAX_MARKS:
        raise ValueError(f"{what} has {len(df):,} rows, above the {MAX_MARKS:,}-mark ceiling; downsample first")


def legend(title: str = "") -> alt.Legend:
    """Below the plot, one entry per row, labels never truncated (a method's name, a model's, a precision mode)."""
    return alt.Legend(title=title or None, orient="bottom", direction="vertical", columns=1, labelLimit=0, symbolLimit=0,
                      rowPadding=6)


def tall(height: int, entries: int) -> int:
    """Chart height that leaves ``height`` px to the plot: Streamlit fits plot and legend (below it) into the height.
    A builder using it tags its chart with ``slide(height)`` so the export puts the legend beside the plot."""
    return int(height + 34 * entries + 40)


def slide(chart, height: int):
    """Tag a chart whose height includes room for its legend: the slide export (posenc.io.export.slide_spec)
    moves the legend beside the plot and gives the plot back its own ``height``."""
    return chart.properties(usermeta={"plot_height": int(height)})


IS_MODEL = f"indexof(datum.name, '{MODEL_PREFIX}') === 0"


def methods_only(names: Sequence[str]) -> list[str]:
    """The methods' names, a loaded model's left out (its curve is drawn by its own layer, from its rows).  The templated
    builders below get only these: the model's name is data, so a new model swaps rows into the same template instead
    of building all four charts again."""
    return [str(nm) for nm in names if not is_model_series(nm)]


def method_scale(names: Sequence[str]) -> alt.Scale:
    methods = methods_only(names)
    return alt.Scale(domain=methods, range=[NAME_COLORS.get(nm, "#777777") for nm in methods])


def method_color(names: Sequence[str]) -> alt.Color:
    """Colour by the method's name (field ``name``): "PI (linear)", "YaRN", ... (the model's curve has its own layer)."""
    return alt.Color("name:N", scale=method_scale(names), legend=legend("method"))


def _layers(chart: alt.Chart) -> tuple[alt.Chart, alt.Chart]:
    """``chart`` as (the methods' rows, the loaded model's rows): one dataset, two filters."""
    return chart.transform_filter(f"!({IS_MODEL})"), chart.transform_filter(IS_MODEL)


def _model(model: alt.Chart, x: str, line: dict | None = None) -> alt.LayerChart:
    """The model's curve (``model``: its rows, with x and y encoded), dashed in MODEL_COLOR, and its name written (in
    the grey that reads in both themes) above its last point (the largest ``x``), right-aligned so that it stays inside the plot."""
    curve = model.mark_line(strokeWidth=1.6, color=MODEL_COLOR, strokeDash=[6, 3], **(line or {}))
    label = model.transform_window(last="row_number()", sort=[alt.SortField(x, order="descending")]).transform_filter(
        "datum.last === 1").mark_text(align="right", baseline="bottom", dx=-2, dy=-6, fontSize=12, fontWeight="bold",
                                      color=NEUTRAL_TEXT).encode(text="name:N")  # sky-blue text would not read on white
    return alt.layer(curve, label)


METHOD_TIP = alt.Tooltip("method:N", title="method · settings")


def line_ends(frame: pd.DataFrame, x: str, y: str, *, plot_px: int, log_y: bool) -> pd.DataFrame:
    """Each method's last point (its largest ``x``; a loaded model is labelled by its own layer), with ``label_y``: a
    height for its name no two closer than END_PX px on a plot ``plot_px`` tall (``charts.base.end_heights``), so lines that end
    together get a stack of names beside their common end instead of a legend to match colours against."""
    rows = frame[~frame["name"].astype(str).map(is_model_series) & frame[y].notna() & frame[x].notna()]
    if log_y:
        rows = rows[rows[y] > 0]
    if rows.empty:
        return pd.DataFrame({"name": pd.Series(dtype=str), x: pd.Series(dtype=float), y: pd.Series(dtype=float),
                             "label_y": pd.Series(dtype=float)})
    last = rows.loc[rows.groupby("name", observed=True, sort=False)[x].idxmax(), ["name", x, y]].reset_index(drop=True)
    last["name"] = last["name"].astype(str)
    last["label_y"] = end_heights(last, rows, y, ("p5", "p95"), plot_px=plot_px, log_y=log_y)  # a band widens the axis too
    return last


def unlabelled(names: Sequence[str]) -> alt.Color:
    """``method_color`` without a legend: the lines are named at their ends (``end_labels``)."""
    color = method_color(names)
    color.legend = None
    return color


def end_labels(ends: pd.DataFrame, names: Sequence[str], x: alt.X, y: alt.Y, value: str) -> alt.LayerChart:
    """The methods' names beside their lines' right ends (``line_ends``; ``charts.base.named_ends``); ``y`` is the lines'
    own y encoding (its title and scale, shared)."""
    return named_ends(ends, x, value, y, unlabelled(names), "name")


def _mark(at: float, text: str) -> pd.DataFrame:
    """The one row a ``_rule`` draws: where, and its label."""
    return pd.DataFrame({"at": [float(at)], "label": [text]})


def _rule(df: pd.DataFrame, axis: str = "x") -> alt.LayerChart:
    """A dashed line at ``_mark``'s row, labelled (rows: a templated chart swaps a new value in)."""
    enc = alt.X("at:Q") if axis == "x" else alt.Y("at:Q")
    rule = alt.Chart(df).mark_rule(strokeDash=[5, 4], color=NEUTRAL_TEXT).encode(**{axis: enc})
    lab = alt.Chart(df).mark_text(align="left", dx=4, dy=4, baseline="top", fontSize=12, color=NEUTRAL_TEXT).encode(
        **{axis: enc}, **({"y": alt.value(0)} if axis == "x" else {"x": alt.value(4)}), text="label:N")
    return alt.layer(rule, lab)


@memo
def ratio_chart(frame: pd.DataFrame, names: Sequence[str], *, trained: int, height: int = 340) -> alt.LayerChart:
    """θ′/θ of every pair against its wavelength 2π/θ (log-log), the trained length marked, each method named at its end."""
    _check(frame, "ratio chart")
    ends = line_ends(frame, "wavelength", "ratio", plot_px=height, log_y=True)
    trained_at = _mark(trained, f"L = {trained:,}")  # rows, so a new L swaps them into the template too
    return _ratio_chart(frame, ends, trained_at, tuple(methods_only(names)), height=height)


@templated("frame", "ends", "trained_at")  # built once per setting; a new value swaps its rows in (posenc.charts.template)
def _ratio_chart(frame: pd.DataFrame, ends: pd.DataFrame, trained_at: pd.DataFrame, names: tuple, *, height: int) -> alt.LayerChart:
    xs = alt.X("wavelength:Q", title="wavelength 2π/θ of the pair (positions, log)", scale=alt.Scale(type="log"))
    ys = alt.Y("ratio:Q", title="θ′ / θ (log; 1 = kept)", scale=alt.Scale(type="log"))
    base = alt.Chart(frame, height=height, width=WIDTH).encode(
        x=xs, y=ys, detail="name:N",
        tooltip=[METHOD_TIP, alt.Tooltip("pair:Q"), alt.Tooltip("band:N"),
                 alt.Tooltip("wavelength:Q", format=",.6g"), alt.Tooltip("ratio:Q", title="θ′/θ", format=".6g")],
    )
    methods, model = _layers(base)
    pts = methods.mark_line(point=alt.OverlayMarkDef(size=16), strokeWidth=1.6).encode(color=unlabelled(names))
    own = _model(model, "wavelength", {"point": alt.OverlayMarkDef(size=16, color=MODEL_COLOR)})
    return alt.layer(pts, own, _rule(trained_at), end_labels(ends, names, xs, ys, "ratio"))


@memo
def fidelity_chart(frame: pd.DataFrame, names: Sequence[str], *, height: int = 300) -> alt.LayerChart:
    """max |Δscore| / (|q||k|) against distance, 0 .. window, each method named at its end."""
    _check(frame, "fidelity chart")
    return _fidelity_chart(frame, line_ends(frame, "distance", "max", plot_px=height, log_y=False), tuple(methods_only(names)),
                           height=height)


@templated("frame", "ends")
def _fidelity_chart(frame: pd.DataFrame, ends: pd.DataFrame, names: tuple, *, height: int) -> alt.LayerChart:
    xs = alt.X("distance:Q", title="distance D (positions)", scale=alt.Scale(nice=False))  # ends at w, not past it
    ys = alt.Y("max:Q", title=["largest score change", "vs plain RoPE, / (|q||k|)"])  # one line ran past a 300 px plot
    base = alt.Chart(frame, height=height, width=WIDTH).encode(
        x=xs, y=ys,
        tooltip=[METHOD_TIP, alt.Tooltip("distance:Q"), alt.Tooltip("max:Q", format=".4g"), alt.Tooltip("mean:Q", format=".4g")],
    )
    methods, model = _layers(base)
    return alt.layer(methods.mark_line(strokeWidth=1.6).encode(color=unlabelled(names)), _model(model, "distance"),
                     end_labels(ends, names, xs, ys, "max"))


@memo
def percentile_chart(frame: pd.DataFrame, names: Sequence[str], *, x: str, x_title: str, y_title: str, baseline: str | None = None,
                     height: int = 320) -> alt.LayerChart:
    """Median (line) and 5th-95th percentile (band) of every method against a log x axis, each median named at its end."""
    _check(frame, "percentile chart")
    ends = line_ends(frame, x, "p50", plot_px=height, log_y=False)
    return _percentile_chart(frame, frame.drop_duplicates(x) if baseline else None, ends, tuple(methods_only(names)), x=x, x_title=x_title,
                             y_title=y_title, baseline=baseline, height=height)


@templated("frame", "ref", "ends")
def _percentile_chart(frame: pd.DataFrame, ref: pd.DataFrame | None, ends: pd.DataFrame, names: tuple, *, x: str, x_title: str,
                      y_title: str, baseline: str | None, height: int) -> alt.LayerChart:
    base = alt.Chart(frame, height=height, width=WIDTH)
    xs = alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log", nice=False))  # the data's range, not the decades around it
    ys = alt.Y("p50:Q", title=y_title)
    band = base.mark_area(opacity=0.12).encode(x=xs, y=alt.Y("p5:Q", title=y_title), y2="p95:Q")
    line = base.encode(
        x=xs, y=ys,
        tooltip=[METHOD_TIP, alt.Tooltip(f"{x}:Q", format=","), alt.Tooltip("p5:Q", format=".4g"),
                 alt.Tooltip("p50:Q", title="median", format=".4g"), alt.Tooltip("p95:Q", format=".4g")])
    (band_m, band_own), (line_m, line_own) = _layers(band), _layers(line)
    layers = [band_m.encode(color=unlabelled(names)), band_own.mark_area(opacity=0.12, color=MODEL_COLOR),
              line_m.mark_line(strokeWidth=1.6).encode(color=unlabelled(names)), _model(line_own, x),
              end_labels(ends, names, xs, ys, "p50")]
    if baseline:
        layers.append(alt.Chart(ref).mark_line(color="#888888", strokeDash=[2, 3]).encode(x=xs, y=f"{baseline}:Q",
                      tooltip=[alt.Tooltip(f"{baseline}:Q", title="ln n (uniform)", format=".4g")]))
    return alt.layer(*layers)


@memo
def precision_chart(frame: pd.DataFrame, *, x: str, x_title: str, y_title: str, tol: float | None = None, height: int = 320) -> alt.LayerChart:
    """Error (log) against position (log) for each precision mode."""
    _check(frame, "precision chart")
    return _precision_chart(frame, tuple(dict.fromkeys(frame["mode"])), x=x, x_title=x_title, y_title=y_title, tol=tol,
                            height=height)


@templated("frame")
def _precision_chart(frame: pd.DataFrame, modes: tuple, *, x: str, x_title: str, y_title: str, tol: float | None,
                     height: int) -> alt.LayerChart:
    modes = list(modes)
    line = alt.Chart(frame, height=tall(height, len(modes)), width=WIDTH).mark_line(strokeWidth=1.6, clip=True).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log")),
        y=alt.Y("error:Q", title=y_title, scale=alt.Scale(type="log"), axis=alt.Axis(format="~e")),  # 1e-6, 1e-7: one notation
        color=alt.Color("mode:N", scale=alt.Scale(domain=modes, range=[MODE_COLORS.get(m, "#777777") for m in modes]), legend=legend("computed in")),
        tooltip=[alt.Tooltip("mode:N"), alt.Tooltip(f"{x}:Q", format=","), alt.Tooltip("error:Q", format=".3g")],
    )
    return slide(alt.layer(line, _rule(_mark(tol, f"{tol:g}"), axis="y")) if tol else line, height)
