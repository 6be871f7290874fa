"""Charts for the story pages (1-6).  DataFrame in, Altair chart out."""

from __future__ import annotations

import altair as alt
import pandas as pd

from posenc.charts.base import lines


def growth_chart(frame: pd.DataFrame, *, context: int) -> alt.LayerChart:
    """Encoding norm against position on log-log axes, with the chosen context marked."""
    base = lines(frame, x="position", y="norm", color="series", color_title="", x_title="position t (log)",
                 y_title="vector norm (log)", log_x=True, log_y=True, height=360, tooltip_format=",.4g")
    rule = alt.Chart(pd.DataFrame({"position": [max(context - 1, 1)]})).mark_rule(strokeDash=[4, 4], color="gray").encode(
        x="position:Q", tooltip=[alt.Tooltip("position:Q", title="last position of the context", format=",")]
    )
    return alt.layer(base, rule)
