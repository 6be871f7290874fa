"""The claims ledger's chart: one mark per claim of the articles, in the column of its verdict.  DataFrame in,
Altair chart out; no Streamlit."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posenc.charts.base import OKABE_ITO

VERDICTS = ("confirmed", "nuanced", "contradicted")
COLORS = (OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[3])  # blue, orange, vermillion: readable on both themes
GLYPHS = {"confirmed": "✓", "nuanced": "~", "contradicted": "✗"}


def verdict_grid(frame: pd.DataFrame) -> alt.LayerChart:
    """One row per claim (its short label), a filled cell under its verdict with a glyph on top.
    ``frame``: the ledger (label, claim, source, measured, verdict, setting).  The columns are headed by their glyph
    and the title names them from the chart's left edge: the claims' labels take most of a phone's width, and neither
    three words nor a legend (which starts where the cells do) would fit over what is left (the chart stretches to its
    container)."""
    df = frame[["label", "claim", "source", "measured", "verdict", "setting"]].assign(
        glyph=frame["verdict"].map(GLYPHS))
    key = " · ".join(f"{GLYPHS[v]} {v}" for v in VERDICTS)
    base = alt.Chart(df, height=alt.Step(22), width=alt.Step(110)).encode(
        x=alt.X("verdict:N", sort=list(VERDICTS), scale=alt.Scale(domain=list(VERDICTS)), title=None,
                axis=alt.Axis(orient="top", labelAngle=0, labelFontSize=14, labelFontWeight="bold", labelExpr=" : ".join(
                    f"datum.value == '{v}' ? '{GLYPHS[v]}'" for v in VERDICTS[:-1]) + f" : '{GLYPHS[VERDICTS[-1]]}'")),
        y=alt.Y("label:N", sort=list(df["label"]), title=None, axis=alt.Axis(labelLimit=320)),
        tooltip=[alt.Tooltip("claim:N", title="the article says"), alt.Tooltip("source:N", title="source"),
                 alt.Tooltip("measured:N", title="measured"), alt.Tooltip("setting:N")],
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("verdict:N", scale=alt.Scale(domain=list(VERDICTS), range=list(COLORS)), legend=None))
    text = base.mark_text(color="white", fontSize=14, fontWeight="bold").encode(text="glyph:N")
    return alt.layer(cells, text).properties(title=alt.TitleParams(
        ["verdict in this setting", key], anchor="start", frame="bounds", fontSize=12, fontWeight="normal"))
