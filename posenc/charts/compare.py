"""Charts for the compare pages (11 similarity matrices, 12 comparison table).  DataFrame in,
Altair chart out; no Streamlit."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from posenc.charts.base import DIVERGING, MAX_MARKS, OKABE_ITO, SEQUENTIAL, columns_that_fit, lines, room_right
from posenc.charts.memo import memo
from posenc.charts.raster import HOVER_CELLS, MASKED, RASTER_CELLS, frame_heatmap, palette_of

PANELS_HOVER_CELLS = 1024  # hover cells the Similarity panels share: 256 each for four, 16 x 16 a panel
YES, NO = OKABE_ITO[0], OKABE_ITO[3]  # blue / vermillion, with a tick or cross drawn on top


def _check_marks(df: pd.DataFrame, what: str) -> None:
    if len(df) > MAX_MARKS:
        raise ValueError(f"{what} has {len(df):,} marks, above the {MAX_MARKS:,}-mark ceiling; downsample first")


def score_matrix(df: pd.DataFrame, panel: dict, *, size: int = 250, legend: bool = True,
                 hover_cells: int = HOVER_CELLS) -> alt.LayerChart:
    """One position-score matrix: rect cells (query i down, key j across) coloured on the
    panel's domain; masked (-inf) cells in grey.  ``df``: (i, j, score) of one scheme (NaN = masked);
    ``panel``: {"scheme", "unit", "domain", "palette" ("diverging"|"sequential"), "step", "n"}."""
    _check_marks(df, "score matrix")
    si, sj = panel["step"]
    n = panel["n"]
    sub = panel["unit"]  # the stride is said in the caption: a new n then swaps the panel's data
    if len(df) > RASTER_CELLS:  # one image, not one rect per cell
        return frame_heatmap(df, x="j", y="i", value="score", x_step=sj, y_step=si, domain=tuple(panel["domain"]),
                             palette=palette_of(panel["palette"]), x_title="key position j", y_title="query position i",
                             value_title=panel["unit"], title=alt.Title(panel["scheme"], subtitle=sub), width=size, height=size,
                             legend=legend, hover_cells=hover_cells)
    base = (
        alt.Chart(df[["i", "j", "score"]], title=alt.Title(panel["scheme"], subtitle=sub), width=size, height=size)
        .transform_calculate(i_end=f"datum.i + {si}", j_end=f"datum.j + {sj}", masked="!isValid(datum.score)",
                             edge="datum.score")
        .encode(
            x=alt.X("j:Q", title="key position j", scale=alt.Scale(domain=[0, n], nice=False)),
            x2="j_end:Q",
            y=alt.Y("i:Q", title="query position i", scale=alt.Scale(domain=[0, n], nice=False, reverse=True)),
            y2="i_end:Q",
        )
    )
    scheme = DIVERGING if panel["palette"] == "diverging" else SEQUENTIAL
    color = alt.Color(
        "score:Q", title=panel["unit"],
        scale=alt.Scale(scheme=scheme, domain=list(panel["domain"]), clamp=True),
        legend=alt.Legend(type="gradient", orient="bottom", gradientLength=size - 40, titleLimit=size) if legend else None,
    )
    # a hairline stroke in the cell's own colour hides the anti-aliasing seams between cells (on a
    # copy of the field, so the colour keeps its own gradient legend instead of a merged symbol one)
    stroke = alt.Stroke("edge:Q", scale=alt.Scale(scheme=scheme, domain=list(panel["domain"]), clamp=True), legend=None)
    tips = [alt.Tooltip("i:Q", title="query i"), alt.Tooltip("j:Q", title="key j")]
    valid = base.transform_filter("!datum.masked").mark_rect(strokeWidth=0.6).encode(
        color=color, stroke=stroke, tooltip=tips + [alt.Tooltip("score:Q", title=panel["unit"], format=".4f")])
    masked = base.transform_filter("datum.masked").mark_rect(color=MASKED, stroke=MASKED, strokeWidth=0.6).encode(
        tooltip=tips + [alt.Tooltip("masked:N", title="masked (−inf, the causal mask)")])
    return alt.layer(valid, masked)


def score_panels(frame: pd.DataFrame, panels: Sequence[dict], *, size: int = 290) -> list[alt.LayerChart]:
    """The panels of ``score_matrices`` as separate charts (each remembered by ``memo``), for a page that draws them
    side by side: a control that changes one scheme's matrix then repaints that panel alone.  A legend sits under
    the last panel of each unit (same-unit panels share one domain, so one legend serves them); each panel's
    ``size`` is its matrix, whatever its title and legend take (as in ``score_matrices``)."""
    return [_padded(p) for p in _panels(frame, panels, size)]


def _panels(frame: pd.DataFrame, panels: Sequence[dict], size: int) -> list[alt.LayerChart]:
    _check_marks(frame, "score matrices")
    last = {p["unit"]: i for i, p in enumerate(panels)}
    # the panels share one hover budget (PANELS_HOVER_CELLS in all): each is a small multiple, and every hover cell
    # is a mark the browser redraws on every step (4 x 1,024 took ~0.1 s more a step than 4 x 256)
    return [
        _score_panel(frame[frame["scheme"] == p["scheme"]].reset_index(drop=True), p, size=size,
                     legend=(last[p["unit"]] == i), hover_cells=PANELS_HOVER_CELLS // len(panels))
        for i, p in enumerate(panels)
    ]


_score_panel = memo(score_matrix)


@memo
def _padded(chart: alt.LayerChart) -> alt.LayerChart:
    return chart.properties(autosize=alt.AutoSizeParams(type="pad"))  # width and height are the plot's own


@memo
def score_matrices(frame: pd.DataFrame, panels: Sequence[dict], *, size: int = 290, columns: int = 2) -> alt.ConcatChart:
    """The matrices side by side in one chart, ``columns`` per row (the panels of ``score_panels`` concatenated:
    the PNG and SVG export of the page's panels)."""
    return alt.concat(*_panels(frame, panels, size), columns=columns, spacing=24).resolve_scale(
        color="independent", stroke="independent")


OFFSET_TITLE = "offset j − i (key − query)"


@memo
def offset_profiles(frame: pd.DataFrame, names: Sequence[str], *, width: int | str = "container") -> alt.VConcatChart:
    """Score against offset j - i, one panel per unit (independent y), one line per scheme.
    ``frame``: (scheme, unit, method, offset, score).  Within a panel the line that swings widest is drawn first and
    the narrowest last (Vega-Lite draws a line's series in the order of their rows), so a wide line cannot cover a
    narrow one: xPos's swings past offset +500 hid RoPE's line, drawn under it."""
    _check_marks(frame, "offset chart")
    panels, units = [], list(dict.fromkeys(frame["unit"]))
    for unit in units:
        part = _widest_first(frame.loc[frame["unit"] == unit, ["scheme", "offset", "score"]])  # what the lines draw: no more
        ch = lines(part, x="offset", y="score", color="scheme", color_title="scheme", x_title=OFFSET_TITLE,
                   y_title=unit, domain=list(names), height=170, width=width)
        # the legend above, one name a line: on the right it took half a phone's width and still cut the names; the x
        # axis ends at the offsets drawn (a nice axis ran on to ±1,200 for ±1,023)
        ch = ch.encode(color=alt.Color("scheme:N", title="scheme", scale=alt.Scale(range=OKABE_ITO, domain=list(names)),
                                       legend=alt.Legend(orient="top", columns=1, labelLimit=300)),
                       x=alt.X("offset:Q", title=OFFSET_TITLE, scale=alt.Scale(zero=False, nice=False),
                               axis=alt.Axis(labelFlush=True, tickCount={"expr": "max(3, floor(width / 60))"})))  # even on a phone
        # a panel's title names its unit when there are several; alone, the y axis names it, and a title put the shared
        # legend above it, apart from its plot (Relative biases' Kerple chart)
        panels.append(ch.properties(title=unit) if len(units) > 1 else ch)
    # a tick near the axis's end (1,000 of 1,023) has its label half past it: room for it on a phone
    return alt.vconcat(*panels, spacing=16, padding=room_right(20)).resolve_scale(color="shared")


def _widest_first(part: pd.DataFrame) -> pd.DataFrame:
    """``part``'s rows, series by series, by each series' range of finite scores, widest first (ties keep their order)."""
    finite = part["score"].where(part["score"].abs() < float("inf"))
    span = finite.groupby(part["scheme"], sort=False).agg(lambda s: s.max() - s.min()).fillna(0.0)
    rank = part["scheme"].map({name: i for i, name in enumerate(span.sort_values(ascending=False, kind="stable").index)})
    return part.iloc[rank.to_numpy().argsort(kind="stable")]


@memo
def wishlist_table(marks: pd.DataFrame) -> alt.LayerChart:
    """A heat table: one row per scheme, one column per yes/no measurement, blue tick = yes,
    vermillion cross = no, grey dash = not measured.  ``marks``: (scheme, property, group, ok, detail)."""
    _check_marks(marks, "wishlist table")
    ok = marks["ok"].astype(object)
    df = marks.assign(mark=ok.map({True: "✓ yes", False: "✗ no"}).fillna("– not measured"),
                      glyph=ok.map({True: "✓", False: "✗"}).fillna("–"))
    order = list(dict.fromkeys(df["property"]))
    rows = list(dict.fromkeys(df["scheme"]))
    narrow = f"width / {len(order)} < 100"  # a column narrower than a header
    base = alt.Chart(df, height=alt.Step(24), width=alt.Step(124)).encode(  # 124 px: "length-invariant" whole
        # the page column sets the width: where a column is narrower than its header (a phone), headers turn upright
        x=alt.X("property:N", sort=order, title=None, axis=alt.Axis(
            orient="top", labelLimit=120, labelAngle={"expr": f"{narrow} ? -90 : 0"},
            labelAlign={"expr": f"{narrow} ? 'left' : 'center'"}, labelBaseline={"expr": f"{narrow} ? 'middle' : 'bottom'"})),
        y=alt.Y("scheme:N", sort=rows, title=None, axis=alt.Axis(labelLimit=260)),
        tooltip=[alt.Tooltip("scheme:N"), alt.Tooltip("property:N"), alt.Tooltip("mark:N", title="measured"),
                 alt.Tooltip("detail:N", title="measurement")],
    )
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("mark:N", title="", scale=alt.Scale(domain=["✓ yes", "✗ no", "– not measured"], range=[YES, NO, MASKED]),
                        legend=alt.Legend(orient="bottom", columns=columns_that_fit(120))))
    text = base.mark_text(color="white", fontSize=15, fontWeight="bold").encode(text="glyph:N")
    return alt.layer(cells, text)


def _dot_panels(frame: pd.DataFrame, width: int | str) -> tuple[alt.Chart, alt.Chart]:
    _check_marks(frame, "dot plot")
    rows = list(frame["scheme"])
    df = frame[["scheme", "translation_invariance", "closest_distance", "closest_pair"]]

    def dots(field: str, title: list[str], extra: list) -> alt.Chart:
        return alt.Chart(df, width=width, height=alt.Step(22)).mark_circle(size=110, color=OKABE_ITO[0], opacity=1).encode(
            # padded, not rounded: the dots at 0 and at the top clear of the axis and the edge, and no negative tick
            x=alt.X(f"{field}:Q", title=title, scale=alt.Scale(zero=True, nice=False, padding=12)),
            y=alt.Y("scheme:N", sort=rows, title=None, axis=alt.Axis(labelLimit=260)),
            tooltip=[alt.Tooltip("scheme:N"), alt.Tooltip(f"{field}:Q", title=" ".join(title), format=".4g")] + extra,
        )

    # each axis title in two lines: one line is wider than a phone's panel
    return (dots("translation_invariance", ["deviation from translation", "invariance (0 = relative)"], []),
            dots("closest_distance", ["closest-pair distance", "(0 = collision)"],
                 [alt.Tooltip("closest_pair:N", title="closest pair i & j")]))


@memo
def measured_dot_panels(frame: pd.DataFrame) -> list[alt.Chart]:
    """The two panels of ``measured_dots`` as separate charts as wide as their column, each with its scheme names, for
    a page that draws them side by side and one under the other on a phone (where the concatenated chart, 320 px a
    panel, is wider than the screen)."""
    return list(_dot_panels(frame, "container"))


@memo
def measured_dots(frame: pd.DataFrame) -> alt.HConcatChart:
    """Two dot plots, one row per scheme: translation invariance (0 = relative) and the
    closest-pair distance (0 = two positions collide).  ``frame``: the display table."""
    left, right = _dot_panels(frame, 320)
    rows = list(frame["scheme"])
    return alt.hconcat(left, right.encode(y=alt.Y("scheme:N", sort=rows, title=None, axis=None)), spacing=36)
