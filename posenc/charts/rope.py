"""Charts for the RoPE page (9) and the context-extension page (10).  DataFrame in, Altair out."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from posenc.charts.base import MAX_MARKS, MODEL_COLOR, NAME_COLORS, NEUTRAL_TEXT, OKABE_ITO, envelope, is_model_series
from posenc.charts.memo import memo

METHOD_COLORS = NAME_COLORS  # one fixed colour per method, by its name (charts.base); a model gets MODEL_COLOR
QK_COLORS = {"q": OKABE_ITO[0], "k": OKABE_ITO[3]}


def _check(df: pd.DataFrame, what: str) -> None:
    if len(df) > MAX_MARKS:
        raise ValueError(f"{what} has {len(df):,} rows, above the {MAX_MARKS:,}-mark ceiling; downsample first")


def _rules(values: dict[str, float], axis: str, fmt: str = ",", *, align: Sequence[str] = (), bottom: Sequence[bool] = ()) -> alt.LayerChart:
    """Dashed reference lines with a label each, e.g. {"trained length": 8192} on the x axis.

    x rules: the label sits at the top of the line (``bottom[i]`` puts it at the foot), to its
    right (``align[i] = "left"``, the default) or left (``"right"``); y rules: at the left edge.
    """
    n = len(values)
    df = pd.DataFrame({"label": list(values), "at": [float(v) for v in values.values()],
                       "align": list(align) or ["left"] * n, "bottom": list(bottom) or [False] * n})
    tip = [alt.Tooltip("label:N", title="line"), alt.Tooltip("at:Q", title="at", format=fmt)]
    rule = alt.Chart(df).mark_rule(strokeDash=[5, 4], color="#555555").encode(
        **{axis: alt.X("at:Q") if axis == "x" else alt.Y("at:Q")}, tooltip=tip)
    if axis == "y":
        text = alt.Chart(df).mark_text(align="left", dx=4, dy=-4, baseline="bottom", fontSize=12, color=NEUTRAL_TEXT).encode(
            y="at:Q", x=alt.value(4), text="label:N")
        return alt.layer(rule, text)
    layers = [rule]
    for low in (False, True):  # labels at the top (or foot) are stacked 15 px apart so close lines stay readable
        for row, (_, r) in enumerate(df[df["bottom"] == low].iterrows()):
            mark = alt.Chart(df.loc[[r.name]]).mark_text(
                align=r["align"], dx=4 if r["align"] == "left" else -4, baseline="bottom" if low else "top",
                dy=-(4 + 15 * row) if low else 4 + 15 * row, fontSize=12, color=NEUTRAL_TEXT)
            layers.append(mark.encode(x="at:Q", y=alt.value("height") if low else alt.value(0), text="label:N"))
    return alt.layer(*layers)


@memo
def rotation_chart(arrows: pd.DataFrame, orbits: pd.DataFrame, *, radius: float, size: int = 320) -> alt.LayerChart:
    """The chosen 2-D pair: q and k as arrows from the origin, unshifted (solid) and shifted (dashed).

    The square [-1.15 r, 1.15 r]² comes from the data -- two invisible corner points -- not from a literal
    domain, so the spec is the same for every radius: a new d, base or probe swaps the data of the
    chart the browser already built instead of making it build a new one."""
    r = 1.15 * max(radius, 1e-12)
    dom = alt.Scale(nice=False, zero=False)
    color = alt.Color("vector:N", title="vector", scale=alt.Scale(domain=list(QK_COLORS), range=list(QK_COLORS.values())),
                      legend=alt.Legend(orient="bottom"))  # legends below keep the plot square in a half-width column
    orbit = alt.Chart(orbits).mark_line(opacity=0.35, strokeWidth=1.5).encode(
        x=alt.X("x:Q", scale=dom, title="first channel of the pair"),
        y=alt.Y("y:Q", scale=dom, title="second channel of the pair"),
        color=color, detail="vector:N", order="step:Q",
    )
    data = arrows.assign(x0=0.0, y0=0.0)
    tips = [alt.Tooltip("vector:N"), alt.Tooltip("placement:N"), alt.Tooltip("position:Q", format=","),
            alt.Tooltip("x:Q", format=".4f"), alt.Tooltip("y:Q", format=".4f")]
    dash = alt.StrokeDash("placement:N", title="", scale=alt.Scale(domain=["at (m, n)", "shifted by s"], range=[[1, 0], [6, 4]]),
                          legend=alt.Legend(orient="bottom"))
    shaft = alt.Chart(data).mark_rule(strokeWidth=3).encode(
        x=alt.X("x0:Q", scale=dom), y=alt.Y("y0:Q", scale=dom), x2="x:Q", y2="y:Q", color=color, strokeDash=dash, tooltip=tips,
    )
    head = alt.Chart(data).mark_point(filled=True, size=110).encode(
        x=alt.X("x:Q", scale=dom), y=alt.Y("y:Q", scale=dom), color=color,
        shape=alt.Shape("placement:N", title="", scale=alt.Scale(domain=["at (m, n)", "shifted by s"], range=["circle", "triangle-up"]),
                        legend=alt.Legend(orient="bottom")),
        tooltip=tips,
    )
    corners = alt.Chart(pd.DataFrame({"x": [-r, r], "y": [-r, r]})).mark_point(opacity=0).encode(
        x=alt.X("x:Q", scale=dom), y=alt.Y("y:Q", scale=dom))
    # autosize "pad": width and height are the plot itself, so a circle stays a circle
    return alt.layer(orbit, shaft, head, corners).properties(width=size, height=size, autosize=alt.AutoSizeParams(type="pad"))


@memo
def decay_chart(frame: pd.DataFrame, *, height: int = 340) -> alt.Chart:
    """Probe score and RoFormer bound, each relative to its value at distance 0, against distance.

    The lines are drawn through their envelope (``base.envelope``: each series' smallest and largest value
    in every ~2-pixel column), 10,002 rows at the page's defaults -> at most ~1,600."""
    _check(frame, "decay chart")
    frame = envelope(frame, "distance", "relative", by="series")
    series = list(frame["series"].cat.categories) if hasattr(frame["series"], "cat") else sorted(frame["series"].unique())
    return alt.Chart(frame, height=height, width="container").mark_line(clip=True, strokeWidth=1.2).encode(
        x=alt.X("distance:Q", title="relative distance n − m (positions)"),
        y=alt.Y("relative:Q", title="value / value at distance 0"),
        color=alt.Color("series:N", title="", scale=alt.Scale(domain=series, range=[OKABE_ITO[0], OKABE_ITO[3]]),
                        legend=alt.Legend(orient="top", labelLimit=400, columns=1)),  # stacked: fits a phone
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("distance:Q", format=","),
                 alt.Tooltip("relative:Q", title="relative", format=".4f"), alt.Tooltip("value:Q", title="raw value", format=".4f")],
    )


@memo
def layout_chart(frame: pd.DataFrame, *, height: int = 300) -> alt.Chart:
    """Score against offset for the two pairings; the permuted one is dashed on top of half-split."""
    _check(frame, "layout chart")
    series = list(frame["series"].cat.categories)
    return alt.Chart(frame, height=height, width="container").mark_line(strokeWidth=2).encode(
        x=alt.X("offset:Q", title="offset n − m (positions)"),
        y=alt.Y("score:Q", title="score ⟨R_m q, R_n k⟩"),
        color=alt.Color("series:N", title="", scale=alt.Scale(domain=series, range=[OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[4]]),
                        legend=alt.Legend(orient="top", labelLimit=400)),
        strokeDash=alt.StrokeDash("series:N", title="", scale=alt.Scale(domain=series, range=[[1, 0], [6, 4], [1, 0]]), legend=None),
        order=alt.Order("series:N"),
        tooltip=[alt.Tooltip("series:N"), alt.Tooltip("offset:Q"), alt.Tooltip("score:Q", format=".6f")],
    )


def _method_color(methods: Sequence[str]) -> alt.Color:
    colors = [METHOD_COLORS.get(str(m), MODEL_COLOR) for m in methods]
    return alt.Color("method:N", title="method", scale=alt.Scale(domain=list(methods), range=colors),
                     legend=alt.Legend(labelLimit=320))


def _method_dash(methods: Sequence[str]) -> alt.StrokeDash:
    """Solid classics; a pasted model (``model_series``) dashed, so a classic it coincides with stays visible."""
    dashes = [[6, 3] if is_model_series(m) else [1, 0] for m in methods]
    return alt.StrokeDash("method:N", scale=alt.Scale(domain=list(methods), range=dashes), legend=None)


@memo
def scale_chart(frame: pd.DataFrame, methods: Sequence[str], *, height: int = 320) -> alt.Chart:
    """θ′/θ per pair for every method (log y: 1 = untouched, 1/s = fully interpolated)."""
    _check(frame, "scale chart")
    return alt.Chart(frame, height=height, width="container").mark_line(strokeWidth=2, point=alt.OverlayMarkDef(size=14)).encode(
        x=alt.X("pair:Q", title="pair index k (fast → slow)"),
        y=alt.Y("scale:Q", title="θ′ₖ / θₖ (log)", scale=alt.Scale(type="log")),
        color=_method_color(methods), strokeDash=_method_dash(methods),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("pair:Q"), alt.Tooltip("scale:Q", title="θ′/θ", format=".6g"),
                 alt.Tooltip("theta:Q", title="θ′ (rad/position)", format=".6g")],
    )


@memo
def wavelength_chart(frame: pd.DataFrame, methods: Sequence[str], *, trained: int, target: int, height: int = 320) -> alt.LayerChart:
    """Wavelength 2π/θ′ per pair (log y), with the trained and target lengths as horizontal lines."""
    _check(frame, "wavelength chart")
    lines = alt.Chart(frame, height=height, width="container").mark_line(strokeWidth=2).encode(
        x=alt.X("pair:Q", title="pair index k (fast → slow)"),
        y=alt.Y("wavelength:Q", title="wavelength 2π/θ′ₖ (positions, log)", scale=alt.Scale(type="log")),
        color=_method_color(methods), strokeDash=_method_dash(methods),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("pair:Q"), alt.Tooltip("wavelength:Q", format=",.6g")],
    )
    return alt.layer(lines, _rules({f"trained {trained:,}": trained, f"target {target:,}": target}, "y"))


@memo
def ramp_chart(ramp: pd.DataFrame, *, low: float, high: float, height: int = 260) -> alt.LayerChart:
    """YaRN's ramp γ per pair (0 keep θ, 1 use θ/s) with the correction range [low, high]."""
    _check(ramp, "ramp chart")
    line = alt.Chart(ramp, height=height, width="container").mark_line(
        color=OKABE_ITO[3], point=alt.OverlayMarkDef(color=OKABE_ITO[3], size=18)).encode(
        x=alt.X("pair:Q", title="pair index k"),
        y=alt.Y("ramp:Q", title="ramp γₖ (0 keep θ, 1 θ/s)", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("pair:Q"), alt.Tooltip("ramp:Q", format=".4f"), alt.Tooltip("wavelength:Q", title="wavelength 2π/θ", format=",.6g")],
    )
    return alt.layer(line, _rules({f"low {low:g}": low, f"high {high:g}": high}, "x", fmt=".4g",
                                  align=("right", "left"), bottom=(False, True)))


@memo
def bands_chart(bands: pd.DataFrame, *, height: int = 260) -> alt.Chart:
    """Llama 3: θ/θ′ per pair, coloured by band (kept, smoothed, divided by s)."""
    _check(bands, "bands chart")
    labels = list(bands["band"].cat.categories)
    return alt.Chart(bands, height=height, width="container").mark_bar().encode(
        x=alt.X("pair:O", title="pair index k", axis=alt.Axis(labelAngle=0, values=list(range(0, len(bands), 8)))),
        y=alt.Y("ratio:Q", title="θₖ / θ′ₖ"),
        color=alt.Color("band:N", title="Llama 3 band", scale=alt.Scale(domain=labels, range=[OKABE_ITO[2], OKABE_ITO[1], OKABE_ITO[4]]),
                        legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("pair:O"), alt.Tooltip("band:N"), alt.Tooltip("ratio:Q", title="θ/θ′", format=".4f"),
                 alt.Tooltip("wavelength:Q", title="wavelength 2π/θ", format=",.6g")],
    )


@memo
def score_chart(frame: pd.DataFrame, methods: Sequence[str], *, trained: int, target: int, height: int = 360) -> alt.LayerChart:
    """Score against distance (log x, 1 .. target) for every method, trained and target marked."""
    _check(frame, "score chart")
    lines = alt.Chart(frame, height=height, width="container").mark_line(strokeWidth=1.1, opacity=0.85).encode(
        x=alt.X("distance:Q", title="distance n − m (positions, log)", scale=alt.Scale(type="log", domain=[1, max(target, 2)], nice=False)),
        y=alt.Y("score:Q", title="score af²·⟨R_m q, R_n q⟩"),
        color=_method_color(methods), strokeDash=_method_dash(methods),
        tooltip=[alt.Tooltip("method:N"), alt.Tooltip("distance:Q", format=","), alt.Tooltip("score:Q", format=".4f")],
    )
    return alt.layer(lines, _rules({f"trained {trained:,}": trained, f"target {target:,}": target}, "x", align=("right", "right")))
