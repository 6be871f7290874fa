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
    ``frame``: the ledger (label, claim, source, measured, verdict, setting)."""
    df = frame[["label", "claim", "source", "measured", "verdict", "setting"]].assign(
        glyph=frame["verdict"].map(GLYPHS))
    base = alt.Chart(df, height=alt.Step(22), width=alt.Step(110)).encode(
        x=alt.X("verdict:N", sort=list(VERDICTS), scale=alt.Scale(domain=list(VERDICTS)), title="verdict in this setting",
                axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("label:N", sort=list(df["label"]), title=None, axis=alt.Axis(labelLimit=320)),
        tooltip=[alt.Tooltip("claim:N", title="the article says"), alt.Tooltip("source:N", title="source"),
                 alt.Tooltip("measured:N", title="measured"), alt.Tooltip("setting:N")],
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("verdict:N", scale=alt.Scale(domain=list(VERDICTS), range=list(COLORS)), title="",
                        legend=alt.Legend(orient="bottom")))
    text = base.mark_text(color="white", fontSize=14, fontWeight="bold").encode(text="glyph:N")
    return alt.layer(cells, text)
