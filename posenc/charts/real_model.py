"""Charts of the "Inside a real model" pages.  DataFrame in, Altair chart out."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posenc.charts.base import FIT_X, NEUTRAL_TEXT, OKABE_ITO, SCHEME_COLORS, columns_that_fit, heatmap, lines, log_ticks
from posenc.charts.memo import memo

KIND_COLORS = {"previous token": "#D55E00", "first token (sink)": "#0072B2", "local window": "#E69F00", "broad": "#999999"}
PRECISION_COLORS = {"float64": "#999999", "float32": "#0072B2", "bfloat16": "#D55E00", "float16": "#CC79A7"}


PROBABILITY_TICKS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


@memo
def next_token_bars(frame: pd.DataFrame, *, positions: str, title: str) -> alt.Chart:
    """Probability of the likeliest next tokens after sentence A and after B (bars side by side), for one position path."""
    part = frame[frame["positions"] == positions]
    return alt.Chart(part, title=title, height=alt.Step(14), width="container").mark_bar().encode(
        y=alt.Y("token:N", title="next token", sort=alt.EncodingSortField("p", op="max", order="descending")),
        yOffset=alt.YOffset("sentence:N"),
        # fixed ticks: left to Vega, a 1,600 px slide drew 0.05 steps, "0.00" pushed into "0.05" (hidden) and "1.00" hidden
        x=alt.X("p:Q", title="probability", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(values=PROBABILITY_TICKS, format=".1f", labelFlush=True)),
        color=alt.Color("sentence:N", title="after sentence", scale=alt.Scale(range=OKABE_ITO[:2]), legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("sentence:N"), alt.Tooltip("token:N"), alt.Tooltip("p:Q", format=".4f")],
    ).properties(autosize=FIT_X)


@memo
def running_loss(frame: pd.DataFrame, *, series: tuple[str, ...] = ("RoPE", "NoPE")) -> alt.Chart:
    """Mean next-token loss up to each token, with and without positions (``series``: the lines drawn)."""
    frame = frame[frame["positions"].isin(series)]
    return lines(frame, x="token", y="running mean loss", color="positions", color_title="positions", x_title="token of the passage",
                 y_title="mean loss so far (nats)", height=300, tooltip_format=".3f").properties(autosize=FIT_X)


@memo
def head_kinds(frame: pd.DataFrame) -> alt.Chart:
    """Every head of every layer, coloured by its measured kind."""
    return alt.Chart(frame, height=alt.Step(11), width="container").mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("head:O", title="head", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("layer:O", title="layer"),
        color=alt.Color("kind:N", title="kind", scale=alt.Scale(domain=list(KIND_COLORS), range=list(KIND_COLORS.values())),
                        legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip("layer:O"), alt.Tooltip("head:O"), alt.Tooltip("kind:N"),
                 alt.Tooltip("previous:Q", title="share on the previous token", format=".2f"),
                 alt.Tooltip("sink:Q", title="share on the first token", format=".2f"),
                 alt.Tooltip("local:Q", title="share on the last 4 tokens", format=".2f"),
                 alt.Tooltip("distance:Q", title="mean distance attended", format=".1f")],
    ).properties(autosize=FIT_X)


@memo
def attention_map(frame: pd.DataFrame, *, title: str) -> alt.Chart:
    """One head's attention probabilities over the tokens (query rows, key columns; the masked triangle left blank)."""
    tips = [alt.Tooltip("query token:N"), alt.Tooltip("key token:N"), alt.Tooltip("p:Q", title="attention", format=".3f")]
    return heatmap(frame, x="key", y="query", value="p", x_title="key token", y_title="query token", title=title,
                   domain=(0.0, 1.0), scheme="viridis", legend_title="attention", height=360, tooltip=tips).properties(autosize=FIT_X)


@memo
def kind_energy(frame: pd.DataFrame) -> alt.Chart:
    """Each kind of head's share of |q|·|k| per rotation pair (pair 0 turns fastest)."""
    return alt.Chart(frame, height=300, width="container").mark_line(point=True).encode(
        # the title on two lines: one ran past a phone; the axis ends at the last pair, not at a rounder 34
        x=alt.X("pair:Q", title=["rotation pair", "(0 = fastest, wavelength 2π; 31 = slowest)"], scale=alt.Scale(nice=False)),
        y=alt.Y("energy share:Q", title="share of |q|·|k|"),
        color=alt.Color("kind:N", title="kind", scale=alt.Scale(domain=list(KIND_COLORS), range=list(KIND_COLORS.values())),
                        legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=[alt.Tooltip("kind:N"), alt.Tooltip("heads:Q"), alt.Tooltip("pair:Q"),
                 alt.Tooltip("wavelength:Q", format=",.0f", title="wavelength (tokens)"), alt.Tooltip("energy share:Q", format=".4f")],
    ).properties(autosize=FIT_X)


@memo
def layer_energy(frame: pd.DataFrame) -> alt.Chart:
    """Mean share of |q|·|k| per rotation pair and layer (Barbero et al.'s picture)."""
    return alt.Chart(frame, height=alt.Step(10), width="container").mark_rect().encode(
        x=alt.X("pair:O", title="rotation pair (0 = fastest)", axis=alt.Axis(labelAngle=0, values=list(range(0, 32, 4)))),
        y=alt.Y("layer:O", title="layer"),
        color=alt.Color("energy share:Q", title="share of |q|·|k|", scale=alt.Scale(scheme="viridis"),
                        legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("layer:O"), alt.Tooltip("pair:O"), alt.Tooltip("energy share:Q", format=".4f")],
    ).properties(autosize=FIT_X)


@memo
def prope_curve(frame: pd.DataFrame) -> alt.Chart:
    return lines(frame, x="dropped %", y="perplexity", x_title="slowest pairs that stop rotating (%)", y_title="perplexity",
                 points=True, log_y=True, height=280, tooltip_format=".3f").properties(autosize=FIT_X)


@memo
def shift_chart(frame: pd.DataFrame, *, value: str, y_title: str, precisions: tuple[str, ...] = tuple(PRECISION_COLORS)) -> alt.LayerChart:
    """A measure of the logits' change against the shift Delta, one line per precision of the rotation table (those of
    ``precisions``); a value of 0 or NaN (float16 past 65,504) has no point."""
    part = frame[(frame[value] > 0) & frame["precision"].isin(precisions)].assign(shown=lambda f: f[value].clip(lower=1e-9))
    base = alt.Chart(part, height=320, width="container").mark_line(point=True).encode(
        x=alt.X("shift:Q", title="shift Δ of every position (symlog)", scale=alt.Scale(type="symlog", constant=10),
                axis=alt.Axis(values=[0, 10, 100, 1_000, 10_000, 100_000, 1_000_000],
                              labelExpr="datum.value >= 1e6 ? '1M' : datum.value >= 1e3 ? datum.value / 1e3 + 'k' : datum.value")),
        y=alt.Y("shown:Q", title=y_title, scale=alt.Scale(type="log"), axis=alt.Axis(format="~e")),  # not 0.00002 beside 2e-7
        color=alt.Color("precision:N", title="rotation table in", scale=alt.Scale(domain=list(PRECISION_COLORS),
                        range=list(PRECISION_COLORS.values())), legend=alt.Legend(orient="bottom", columns=columns_that_fit(90))),
        tooltip=[alt.Tooltip("precision:N"), alt.Tooltip("shift:Q", format=","), alt.Tooltip(f"{value}:Q", format=".3g")])
    return base.properties(autosize=FIT_X)


@memo
def extension_bars(frame: pd.DataFrame, *, base: float, factors: tuple[int, ...] = (2, 4, 8)) -> alt.LayerChart:
    """Perplexity with each extension at each factor of ``factors``: a dot on a stem that starts at plain RoPE's
    perplexity (the dashed line), so that on the log axis a stem's length is the ratio to plain RoPE.  (Bars on a log
    axis had to start at an arbitrary floor, and their lengths meant nothing.)"""
    frame = frame[frame["factor"].isin(factors)].assign(plain=float(base))
    colors = {m: SCHEME_COLORS[k] for m, k in frame[["method", "key"]].drop_duplicates().itertuples(index=False)}
    shown = [float(base), *frame["perplexity"].dropna().astype(float)]
    lo, hi = min(shown) / 1.08, max(shown) * 1.08
    y = alt.Y("perplexity:Q", title="perplexity (log)", scale=alt.Scale(type="log", domain=[lo, hi], nice=False),
              axis=alt.Axis(values=log_ticks(lo, hi) or [round(base, 1)], format="~g"))
    tips = [alt.Tooltip("method:N"), alt.Tooltip("factor:O"), alt.Tooltip("perplexity:Q", format=".3f"),
            alt.Tooltip("change %:Q", format="+.1f", title="change from plain RoPE (%)")]
    base_chart = alt.Chart(frame, height=300, width="container").encode(
        x=alt.X("factor:O", title="factor s", axis=alt.Axis(labelAngle=0)), xOffset=alt.XOffset("method:N"),
        color=alt.Color("method:N", title="method", scale=alt.Scale(domain=list(colors), range=list(colors.values())),
                        legend=alt.Legend(orient="bottom", columns=2)), tooltip=tips)
    stems = base_chart.mark_rule(strokeWidth=3).encode(y=y, y2="plain:Q")
    dots = base_chart.mark_point(filled=True, size=90, opacity=1).encode(y=y)
    rule = alt.Chart(pd.DataFrame({"perplexity": [base], "what": ["plain RoPE"]})).mark_rule(strokeDash=[4, 4], color=NEUTRAL_TEXT).encode(
        y="perplexity:Q", tooltip=[alt.Tooltip("what:N"), alt.Tooltip("perplexity:Q", format=".3f")])
    return alt.layer(rule, stems, dots).properties(autosize=FIT_X)
