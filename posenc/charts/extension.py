"""Charts of the engineer's measurements (context extension) and of RoPE precision.  DataFrame in, Altair out.

Every legend sits below its plot, one entry per line, never cut (``labelLimit=0``).  The method charts
colour by ``name`` (the method alone), so their specs do not change with the settings -- the browser then
swaps the data of a chart it built -- and a tooltip names the settings each curve was measured at
(``method``: "name · settings"); the page states them under the chart and in its export's title.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from posenc.charts.base import BASELINE_GREY, MAX_MARKS, NEUTRAL_TEXT, OKABE_ITO
from posenc.charts.memo import memo

NAME_COLORS = {"RoPE": BASELINE_GREY,  # unscaled reference: grey reads in both themes (black vanishes on dark)
               "PI": "#0072B2", "NTK-aware": "#E69F00", "dynamic NTK": "#009E73", "YaRN": "#D55E00",
               "Llama 3": "#CC79A7", "LongRoPE (Phi-3 factors)": "#8C564B"}
MODEL_COLOR = "#56B4E9"
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


def method_scale(names: Sequence[str]) -> alt.Scale:
    colors = [MODEL_COLOR if str(nm).startswith("model:") else NAME_COLORS.get(str(nm), "#777777") for nm in names]
    return alt.Scale(domain=list(names), range=colors)


def method_color(names: Sequence[str]) -> alt.Color:
    """Colour by the method's name (field ``name``): "PI", "YaRN", "model: <its name>"."""
    return alt.Color("name:N", scale=method_scale(names), legend=legend("method"))


def _dash(names: Sequence[str]) -> alt.StrokeDash:
    return alt.StrokeDash("name:N", scale=alt.Scale(domain=list(names), range=[[6, 3] if str(nm).startswith("model:") else [1, 0]
                                                                                for nm in names]), legend=None)


METHOD_TIP = alt.Tooltip("method:N", title="method · settings")


def _rule(at: float, text: str, axis: str = "x") -> alt.LayerChart:
    df = pd.DataFrame({"at": [float(at)], "label": [text]})
    enc = alt.X("at:Q") if axis == "x" else alt.Y("at:Q")
    rule = alt.Chart(df).mark_rule(strokeDash=[5, 4], color=NEUTRAL_TEXT).encode(**{axis: enc})
    lab = alt.Chart(df).mark_text(align="left", dx=4, dy=4, baseline="top", fontSize=12, color=NEUTRAL_TEXT).encode(
        **{axis: enc}, **({"y": alt.value(0)} if axis == "x" else {"x": alt.value(4)}), text="label:N")
    return alt.layer(rule, lab)


@memo
def ratio_chart(frame: pd.DataFrame, names: Sequence[str], *, trained: int, height: int = 340) -> alt.LayerChart:
    """θ′/θ of every pair against its wavelength 2π/θ (log-log), the trained length marked."""
    _check(frame, "ratio chart")
    pts = alt.Chart(frame, height=tall(height, len(names)), width=WIDTH).mark_line(point=alt.OverlayMarkDef(size=16), strokeWidth=1.6).encode(
        x=alt.X("wavelength:Q", title="wavelength 2π/θ of the pair (positions, log)", scale=alt.Scale(type="log")),
        y=alt.Y("ratio:Q", title="θ′ / θ (log; 1 = kept)", scale=alt.Scale(type="log")),
        color=method_color(names), strokeDash=_dash(names), detail="name:N",
        tooltip=[METHOD_TIP, alt.Tooltip("pair:Q"), alt.Tooltip("band:N"),
                 alt.Tooltip("wavelength:Q", format=",.6g"), alt.Tooltip("ratio:Q", title="θ′/θ", format=".6g")],
    )
    return slide(alt.layer(pts, _rule(trained, f"L = {trained:,}")), height)


@memo
def fidelity_chart(frame: pd.DataFrame, names: Sequence[str], *, height: int = 300) -> alt.Chart:
    """max |Δscore| / (|q||k|) against distance, 0 .. window."""
    _check(frame, "fidelity chart")
    return slide(alt.Chart(frame, height=tall(height, len(names)), width=WIDTH).mark_line(strokeWidth=1.6).encode(
        x=alt.X("distance:Q", title="distance D (positions)"),
        y=alt.Y("max:Q", title="max |Δscore| / (|q||k|) vs plain RoPE"),
        color=method_color(names), strokeDash=_dash(names),
        tooltip=[METHOD_TIP, alt.Tooltip("distance:Q"), alt.Tooltip("max:Q", format=".4g"), alt.Tooltip("mean:Q", format=".4g")],
    ), height)


@memo
def percentile_chart(frame: pd.DataFrame, names: Sequence[str], *, x: str, x_title: str, y_title: str, baseline: str | None = None,
                     height: int = 320) -> alt.LayerChart:
    """Median (line) and 5th-95th percentile (band) of every method against a log x axis."""
    _check(frame, "percentile chart")
    base = alt.Chart(frame, height=tall(height, len(names)), width=WIDTH)
    xs = alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log"))
    bare = method_color(names)
    bare.legend = None  # the legend comes from the lines (the pale band would make pale symbols)
    band = base.mark_area(opacity=0.12).encode(x=xs, y=alt.Y("p5:Q", title=y_title), y2="p95:Q", color=bare)
    line = base.mark_line(strokeWidth=1.6).encode(
        x=xs, y="p50:Q", color=method_color(names), strokeDash=_dash(names),
        tooltip=[METHOD_TIP, alt.Tooltip(f"{x}:Q", format=","), alt.Tooltip("p5:Q", format=".4g"),
                 alt.Tooltip("p50:Q", title="median", format=".4g"), alt.Tooltip("p95:Q", format=".4g")])
    layers = [band, line]
    if baseline:
        ref = frame.drop_duplicates(x)
        layers.append(alt.Chart(ref).mark_line(color="#888888", strokeDash=[2, 3]).encode(x=xs, y=f"{baseline}:Q",
                      tooltip=[alt.Tooltip(f"{baseline}:Q", title="ln n (uniform)", format=".4g")]))
    # independent legends on the shared scale: the band's "no legend" must not drop the lines' legend
    return slide(alt.layer(*layers).resolve_legend(color="independent"), height)


@memo
def precision_chart(frame: pd.DataFrame, *, x: str, x_title: str, y_title: str, tol: float | None = None, height: int = 320) -> alt.LayerChart:
    """Error (log) against position (log) for each precision mode."""
    _check(frame, "precision chart")
    modes = list(dict.fromkeys(frame["mode"]))
    line = alt.Chart(frame, height=tall(height, len(modes)), width=WIDTH).mark_line(strokeWidth=1.6, clip=True).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log")),
        y=alt.Y("error:Q", title=y_title, scale=alt.Scale(type="log")),
        color=alt.Color("mode:N", scale=alt.Scale(domain=modes, range=[MODE_COLORS.get(m, "#777777") for m in modes]), legend=legend("computed in")),
        tooltip=[alt.Tooltip("mode:N"), alt.Tooltip(f"{x}:Q", format=","), alt.Tooltip("error:Q", format=".3g")],
    )
    return slide(alt.layer(line, _rule(tol, f"{tol:g}", axis="y")) if tol else line, height)
