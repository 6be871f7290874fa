"""Big matrices as one image: a colour-mapped PNG inside a Vega-Lite chart, instead of one mark per cell.

A heatmap of n x m cells as rect marks costs the browser one mark per cell (65,536 marks took ~3 s to
draw here); as an image it is one mark whatever n and m are.  ``image_heatmap`` colours the matrix
in numpy with the same colour stops the chart's legend uses (so the picture and its legend agree
exactly), encodes it as a PNG (``png_bytes``, zlib + struct, no imaging library), and places it as a
Vega-Lite ``image`` mark on quantitative axes, with a coarse grid of transparent cells on top that
carries the exact values for hover.  The chart stays one Vega-Lite spec, so the PNG/SVG exports
and the CSV of the hover grid work as for any other chart.

axes: r rows (y, e.g. query position), c columns (x, e.g. key position).
"""

from __future__ import annotations

import base64
import hashlib
import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from posenc.charts.base import narrow_ints
from posenc.charts.template import templated

# ColorBrewer RdBu (11 classes), red (low) -> blue (high): Vega's "redblue" scheme, colour-blind safe.
REDBLUE = ("#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7",
           "#d1e5f0", "#92c5de", "#4393c3", "#2166ac", "#053061")
# viridis (matplotlib, van der Walt & Smith 2015), 11 evenly spaced stops.
VIRIDIS = ("#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
           "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725")
PALETTES = {"diverging": REDBLUE, "sequential": VIRIDIS}
VEGA_SCHEMES = {"redblue": "diverging", "viridis": "sequential"}  # the Vega scheme names the rect heatmaps use
MASKED = "#bdbdbd"  # -inf / NaN cells (the causal mask): a grey on no colour scale
MASKED_RGB = (189, 189, 189)  # MASKED as RGB
MAX_IMAGE_CELLS = 1 << 22  # pixels encoded at once (4 Mpx, a 2048 x 2048 matrix)
# Transparent hover cells over the image (a 20 x 20 grid of exact values; every value is in the CSV and .npy exports).
# Each is a mark the browser encodes and draws at every paint: 1,024 -> 256 took the Learned tables' first paint
# (two image heatmaps) 1.62 -> 1.42 s and 2.54 -> 2.30 s of CPU (alternating A/B, median of 8; docs/performance.md, section 8).
HOVER_CELLS = 400
LEVEL = "legend_level"  # the field of an image heatmap's legend pins (``legend_pins``)
RASTER_CELLS = 4096  # a heatmap with more cells than this is drawn as one image, not one rect per cell
CONTAINER_WIDTH = 640  # the width assumed for the legend when a chart fills its column ("container")
# A chart holding a heatmap is drawn by Vega's hybrid renderer: its marks on a canvas, its text (titles, axes,
# legends) as SVG.  An image heatmap's hover grid is HOVER_CELLS marks and a rect heatmap up to RASTER_CELLS
# cells, which the SVG renderer (Streamlit's choice below 2,000 rows) makes DOM nodes of, 1,100+ per chart,
# rebuilt on every step.  Measured 2026-12-02 (AMD EPYC, T5 and ALiBi, browser time after the server's run,
# median of 4 per control): 0.19-0.26 s as SVG, 0.13-0.21 s on a canvas, 0.15-0.19 s hybrid; hybrid keeps the
# text readable in the page (and by its tests).
RENDERER = "hybrid"


def _rgb(stops: Sequence[str]) -> np.ndarray:
    return np.array([[int(h[i : i + 2], 16) for i in (1, 3, 5)] for h in stops], dtype=np.float64)  # (k, 3)


def palette_of(scheme: str) -> str:
    """The palette key of a Vega scheme name ("redblue" -> "diverging", "viridis" -> "sequential")."""
    if scheme in PALETTES:
        return scheme
    if scheme not in VEGA_SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(VEGA_SCHEMES)}, got {scheme!r}")
    return VEGA_SCHEMES[scheme]


def colorize(M, domain: tuple[float, float], stops: Sequence[str] = REDBLUE) -> np.ndarray:
    """RGB image (r, c, 3) uint8 of matrix M (r, c): values clipped to ``domain``, mapped linearly onto
    the colour stops (interpolated in RGB, as Vega does for a scale with an explicit range); non-finite
    cells grey."""
    A = np.asarray(M, dtype=np.float64)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"M must be a non-empty 2-D array, got shape {A.shape}")
    if A.size > MAX_IMAGE_CELLS:
        raise ValueError(f"M has {A.size:,} cells; at most {MAX_IMAGE_CELLS:,} are drawn as one image (downsample first)")
    lo, hi = float(domain[0]), float(domain[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"domain must be two finite numbers lo < hi, got {domain!r}")
    rgb = _rgb(stops)  # (k, 3)
    ok = np.isfinite(A)
    t = np.clip((np.where(ok, A, lo) - lo) / (hi - lo), 0.0, 1.0) * (len(stops) - 1)  # (r, c) in [0, k-1]
    i = np.minimum(t.astype(np.int64), len(stops) - 2)
    frac = (t - i)[..., None]
    out = rgb[i] * (1 - frac) + rgb[i + 1] * frac  # (r, c, 3)
    out[~ok] = MASKED_RGB
    return np.rint(out).astype(np.uint8)


def png_bytes(rgb: np.ndarray) -> bytes:
    """A truecolour PNG (8-bit RGB, no interlace, every row with filter type 2 "Up") of an (r, c, 3) uint8
    image (PNG spec, ISO/IEC 15948)."""
    img = np.ascontiguousarray(rgb, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"rgb must have shape (rows, cols, 3), got {img.shape}")
    h, w, _ = img.shape
    rows = img.reshape(h, w * 3)
    up = rows.copy()
    up[1:] -= rows[:-1]  # filter type 2 ("Up"): each row minus the one above (mod 256), so repeated rows are zeros
    raw = np.concatenate([np.full((h, 1), 2, dtype=np.uint8), up], axis=1)  # the filter byte, then the filtered row

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # width, height, depth 8, colour type 2 (RGB)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b"")


def data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


_URLS: OrderedDict = OrderedDict()  # (digest of the matrix, domain, stops, blocks) -> data URL, most recent last
_URLS_LOCK = threading.Lock()
MAX_URLS = 32  # images remembered (a few hundred kB each): a page's rerun redraws the same matrices


def image_url(M, domain: tuple[float, float], stops: Sequence[str], blocks: tuple[int, int]) -> str:
    """The PNG data URL of M coloured on ``stops`` over ``domain``, each cell a ``blocks`` (rows, cols)
    block of pixels.  Remembered by the matrix's content, so a rerun that draws the same matrix does not
    colour and encode it again."""
    A = np.ascontiguousarray(M, dtype=np.float64)
    key = (hashlib.blake2b(A.tobytes(), digest_size=16).digest(), A.shape, tuple(map(float, domain)), tuple(stops), tuple(blocks))
    with _URLS_LOCK:
        if key in _URLS:
            _URLS.move_to_end(key)
            return _URLS[key]
    rgb = np.repeat(np.repeat(colorize(A, domain, stops), blocks[0], axis=0), blocks[1], axis=1)
    url = data_url(png_bytes(rgb))
    with _URLS_LOCK:
        _URLS[key] = url
        while len(_URLS) > MAX_URLS:
            _URLS.popitem(last=False)
    return url


def hover_grid(M, rows: np.ndarray, cols: np.ndarray, *, cells: int = HOVER_CELLS, row: str = "i", col: str = "j",
               value: str = "score", steps: tuple[float, float] | None = None) -> pd.DataFrame:
    """A coarse grid of exact values for hover: every ``step``-th row and column of M, each cell
    spanning its block, the last block of a row or column cut at the matrix's edge (a block past it would widen the
    chart's axis beyond the image: an empty band along two sides of it).  DataFrame(row, row_end, col, col_end, value)
    with NaN where masked."""
    A = np.asarray(M, dtype=np.float64)
    r, c = A.shape
    side = max(1, int(np.sqrt(cells)))
    sr, sc = max(1, -(-r // side)), max(1, -(-c // side))
    ri, ci = np.arange(0, r, sr), np.arange(0, c, sc)
    sub = A[np.ix_(ri, ci)]
    rr, cc = np.meshgrid(ri, ci, indexing="ij")
    if steps is not None:
        step_r, step_c = float(steps[0]), float(steps[1])
    else:
        step_r = float(rows[1] - rows[0]) if len(rows) > 1 else 1.0
        step_c = float(cols[1] - cols[0]) if len(cols) > 1 else 1.0
    rows, cols = np.asarray(rows), np.asarray(cols)
    return pd.DataFrame({
        row: rows[rr.ravel()], f"{row}_end": np.minimum(rows[rr.ravel()] + sr * step_r, rows[-1] + step_r),
        col: cols[cc.ravel()], f"{col}_end": np.minimum(cols[cc.ravel()] + sc * step_c, cols[-1] + step_c),
        value: np.where(np.isfinite(sub), sub, np.nan).ravel().astype(np.float32),
    })


def image_heatmap(M, **kw) -> alt.LayerChart:
    """M (r, c) as one colour-mapped image with axes, a gradient legend on the same colour stops,
    and a hover grid of exact values (``image_stack`` of one matrix; its keywords)."""
    return image_stack({(): M}, **kw)


def image_stack(
    stack: Mapping[tuple, np.ndarray],
    *,
    fields: Sequence[str] = (),
    where: str | None = None,
    rows: np.ndarray | None = None,
    cols: np.ndarray | None = None,
    domain: tuple[float, float],
    palette: str = "diverging",
    x_title: str,
    y_title: str,
    value_title: str,
    title: str | alt.Title = "",
    width: int = 360,
    height: int = 360,
    row: str = "i",
    col: str = "j",
    value: str = "score",
    reverse_y: bool = True,
    legend: bool | alt.Legend = True,
    row_step: float | None = None,
    col_step: float | None = None,
    value_format: str = ".4f",
    x_labels: Sequence | None = None,
    hover_extra: pd.DataFrame | None = None,
    extra_tooltips: Sequence[alt.Tooltip] = (),
    factor: str | None = None,
    hover_cells: int = HOVER_CELLS,
) -> alt.LayerChart:
    """Matrices of one shape as colour-mapped images with axes, a gradient legend on the same colour
    stops, and a hover grid of exact values.  ``stack`` maps a tuple of ``fields`` values (e.g. (layer,
    head)) to its matrix (r, c); every image and its hover grid are sent, and the Vega expression
    ``where`` (on those fields and the chart's parameters) picks the one drawn, so choosing another
    repaints in the browser.  ``rows``/``cols`` label the matrix rows and columns (evenly spaced, e.g.
    positions 0, 4, 8, ...; ``row_step``/``col_step`` give the spacing when there is one row or
    column); row 0 is drawn at the top when ``reverse_y``.  ``width`` may be "container" (the chart
    fills its column).  ``legend``: True (a gradient under the plot), False, or an ``alt.Legend``.
    ``x_labels[k]`` is printed at x = k (for columns kept unevenly and drawn side by side);
    ``hover_extra`` (row, col, fields...) adds ``extra_tooltips`` fields to the hover grid.  ``factor``, a
    Vega expression for a positive number (e.g. a chart parameter's slope), multiplies the hover values and
    the legend's scale in the browser: the picture of ``factor`` × M is the picture of M on the scaled
    legend, so a parameter that only rescales the matrix repaints without a new image.  ``hover_cells``:
    how many hover cells at most (a matrix with fewer cells hovers every cell)."""
    mats = {tuple(k): np.asarray(M, dtype=np.float64) for k, M in stack.items()}
    if not mats:
        raise ValueError("stack must hold at least one matrix")
    shapes = {A.shape for A in mats.values()}
    if len(shapes) != 1:
        raise ValueError(f"stack's matrices must share one shape, got {sorted(shapes)}")
    if any(len(k) != len(fields) for k in mats):
        raise ValueError(f"every stack key must hold one value per field {list(fields)}")
    A0 = next(iter(mats.values()))
    r, c = A0.shape if A0.ndim == 2 else (0, 0)
    rows = np.arange(r) if rows is None else np.asarray(rows)
    cols = np.arange(c) if cols is None else np.asarray(cols)
    stops = PALETTES[palette]
    px_w = CONTAINER_WIDTH if isinstance(width, str) else int(width)
    # one pixel per cell, drawn unsmoothed (smooth=False: nearest-neighbour scaling in the browser and in the
    # PNG/SVG exports), so every cell stays a crisp block at any size; a stack of 8 images sends 8 small PNGs
    blocks = (1, 1)
    step_r = float(row_step) if row_step is not None else float(rows[1] - rows[0]) if r > 1 else 1.0
    step_c = float(col_step) if col_step is not None else float(cols[1] - cols[0]) if c > 1 else 1.0
    x_dom = [float(cols[0]), float(cols[-1]) + step_c]
    y_dom = [float(rows[0]), float(rows[-1]) + step_r]
    # the scales' domains come from the data (the image spans exactly x_dom by y_dom; the hover cells lie inside
    # it), not from literals: a control that changes only the matrix's size leaves the spec as it was, so the
    # browser swaps the data of the chart it has (posenc.ui.compat, behaviour 5)
    images = pd.DataFrame([dict(zip(fields, k)) | {"x": x_dom[0], "x2": x_dom[1], "y": y_dom[0], "y2": y_dom[1],
                                                   "url": image_url(A, domain, stops, blocks)} for k, A in mats.items()])
    grid = pd.concat([hover_grid(A, rows, cols, cells=hover_cells, row=row, col=col, value=value, steps=(step_r, step_c))
                      .assign(**dict(zip(fields, k)))
                      for k, A in mats.items()], ignore_index=True)
    narrow_ints(grid, skip=(value,))
    if hover_extra is not None:
        grid = grid.merge(hover_extra, on=[*fields, row, col], how="left")
    if legend is True:
        legend = alt.Legend(type="gradient", orient="bottom", gradientLength=max(120, px_w - 40), gradientOpacity=1, titleLimit=px_w)
    pins = _pins_frame(domain) if legend else None
    return _image_layers(images, grid, pins, x_labels=None if x_labels is None else tuple(str(v) for v in x_labels),
                         title=title, width=width, height=height, x_title=x_title,
                         y_title=y_title, value_title=value_title, row=row, col=col, value=value, reverse_y=reverse_y,
                         legend=legend, value_format=value_format,
                         extra_tooltips=tuple(extra_tooltips), factor=factor, where=where, stops=tuple(stops))


@templated("images", "grid", "pins")  # built once per setting; a new matrix swaps its rows in (posenc.charts.template)
def _image_layers(images: pd.DataFrame, grid: pd.DataFrame, pins: pd.DataFrame | None, *, x_labels: tuple | None, title,
                  width, height, x_title: str, y_title: str, value_title: str, row: str, col: str, value: str,
                  reverse_y: bool, legend, value_format: str, extra_tooltips: tuple, factor: str | None, where: str | None,
                  stops: tuple) -> alt.LayerChart:
    axis = alt.Undefined
    if x_labels is not None:  # a JS array lookup: integer ticks only, each printing its kept column's label
        table = "[" + ",".join(f"'{lab}'" for lab in x_labels) + "]"
        axis = alt.Axis(tickMinStep=1, labelExpr=f"isValid({table}[datum.value]) ? {table}[datum.value] : ''")
    x = alt.X("x:Q", title=x_title, scale=alt.Scale(nice=False, zero=False), axis=axis)
    y = alt.Y("y:Q", title=y_title, scale=alt.Scale(nice=False, zero=False, reverse=reverse_y))
    image = alt.Chart(images, title=title or alt.Undefined, width=width, height=height).mark_image(aspect=False, aria=False, smooth=False).encode(
        x=x, x2="x2:Q", y=y, y2="y2:Q", url="url:N")
    shown = value
    hover = alt.Chart(grid)
    if factor is not None:  # the hover values, times the factor, computed in the browser
        shown = f"{value}_scaled"
        hover = hover.transform_calculate(**{shown: f"datum[{value!r}] * ({factor})"})
    hover = hover.mark_rect(opacity=0.001).encode(
        x=alt.X(f"{col}:Q", scale=alt.Scale(nice=False, zero=False)), x2=f"{col}_end:Q",
        y=alt.Y(f"{row}:Q", scale=alt.Scale(nice=False, zero=False, reverse=reverse_y)), y2=f"{row}_end:Q",
        tooltip=[alt.Tooltip(f"{row}:Q", title=y_title)] + ([] if x_labels is not None else [alt.Tooltip(f"{col}:Q", title=x_title)])
        + list(extra_tooltips) + [alt.Tooltip(f"{shown}:Q", title=value_title, format=value_format)])
    if where is not None:
        image, hover = image.transform_filter(where), hover.transform_filter(where)
    if not legend:
        return alt.layer(image, hover)
    return alt.layer(image, hover, _legend_pins(pins, list(stops), value_title, legend, factor=factor))


def legend_pins(domain: tuple[float, float], stops: Sequence[str], title: str, legend: alt.Legend, *,
                factor: str | None = None) -> alt.Chart:
    """The gradient legend of an image heatmap as a layer of its own: two invisible, zero-size marks at the
    domain's ends (``LEVEL``) coloured on ``stops``.  The scale takes its domain from this data, and Vega spreads
    the stops evenly over it (a piecewise domain, as many levels as stops: the image's colouring), so a control
    that changes only the range swaps the data and leaves the spec as it was (posenc.ui.compat, behaviour 5).
    ``factor`` (a Vega expression for a positive number) multiplies the ends in the browser."""
    return _legend_pins(_pins_frame(domain), stops, title, legend, factor=factor)


def _pins_frame(domain: tuple[float, float]) -> pd.DataFrame:
    """The two ends of a legend's domain, checked, as ``legend_pins`` draws them."""
    lo, hi = float(domain[0]), float(domain[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"domain must be two finite numbers lo < hi, got {domain!r}")
    return pd.DataFrame({LEVEL: [lo, hi]})


def _legend_pins(frame: pd.DataFrame, stops: Sequence[str], title: str, legend: alt.Legend, *,
                 factor: str | None = None) -> alt.Chart:
    pins = alt.Chart(frame)
    field = LEVEL
    if factor is not None:
        field = f"{LEVEL}_scaled"
        pins = pins.transform_calculate(**{field: f"datum[{LEVEL!r}] * ({factor})"})
    return pins.mark_point(opacity=0, size=0, aria=False).encode(
        color=alt.Color(f"{field}:Q", title=title, scale=alt.Scale(range=list(stops), interpolate="rgb", clamp=True),
                        legend=legend))


def legend_layer(spec: Mapping) -> Mapping:
    """The ``legend_pins`` layer of an image heatmap's spec (a dict); KeyError if it has no legend."""
    for v in spec.get("layer", []):
        if v.get("encoding", {}).get("color", {}).get("field", "").startswith(LEVEL):
            return v
    raise KeyError("this chart has no legend pins")


def legend_range(spec: Mapping, datasets: Mapping | None = None) -> tuple[float, float]:
    """The (lo, hi) an image heatmap's legend spans, read from its ``legend_pins`` data in ``spec`` (a dict;
    ``datasets``: the top-level spec's when ``spec`` is a panel of a concatenated chart, or the frames a page
    sent, by name)."""
    rows = pd.DataFrame((spec["datasets"] if datasets is None else datasets)[legend_layer(spec)["data"]["name"]])
    return float(rows[LEVEL].iloc[0]), float(rows[LEVEL].iloc[1])


def frame_heatmap(df: pd.DataFrame, *, x: str, y: str, value: str, x_step: float | None = None, y_step: float | None = None,
                  hover_fields: Sequence[alt.Tooltip] = (), by: Sequence[str] = (), where: str | None = None,
                  **kw) -> alt.LayerChart:
    """``image_stack`` of a tidy (x, y, value) frame of evenly spaced cells (a strided matrix, as
    ``charts.base.matrix_frame`` builds it); cells the frame lacks are drawn as masked.  ``by`` names
    columns that split the frame into several matrices on one grid (e.g. layer, head), one of which
    ``where`` picks in the browser.  A step not given is the spacing of the frame's values (1 with a
    single row or column).  ``kw`` go to ``image_stack`` (the hover grid keeps the frame's column
    names); ``hover_fields`` are tooltips on further columns of ``df``, carried to the hover grid."""
    by = list(by)
    if hover_fields:
        names = [t.to_dict()["field"] for t in hover_fields]
        kw = kw | {"hover_extra": df[[*by, y, x, *names]], "extra_tooltips": hover_fields}
    xs = np.unique(df[x].to_numpy())
    ys = np.unique(df[y].to_numpy())
    groups = df.groupby(by, sort=True) if by else [((), df)]
    stack = {}
    for k, part in groups:
        M = np.full((ys.size, xs.size), np.nan)
        M[np.searchsorted(ys, part[y].to_numpy()), np.searchsorted(xs, part[x].to_numpy())] = part[value].to_numpy(dtype=np.float64)
        stack[tuple(k) if by else ()] = M
    spacing = lambda v: float(v[1] - v[0]) if v.size > 1 else 1.0
    return image_stack(stack, fields=by, where=where, rows=ys, cols=xs, row=y, col=x, value=value,
                       row_step=spacing(ys) if y_step is None else y_step,
                       col_step=spacing(xs) if x_step is None else x_step, **kw)


def _mark_type(spec: Mapping) -> str | None:
    mark = spec.get("mark")
    return mark.get("type") if isinstance(mark, Mapping) else mark


def _draws(spec: Mapping, what: Callable[[Mapping], bool]) -> bool:
    """True when ``what`` holds for ``spec`` or for any view inside it (its layers and concatenations)."""
    return what(spec) or any(_draws(sub, what) for part in ("layer", "concat", "hconcat", "vconcat") for sub in spec.get(part, ()))


def _is_image(view: Mapping) -> bool:
    return _mark_type(view) == "image"


def _is_cells(view: Mapping) -> bool:
    """Rect cells on x and y coloured by a quantitative field (``charts.base.heatmap``, the lab's attention maps)."""
    enc = view.get("encoding") or {}
    return _mark_type(view) == "rect" and "x" in enc and "y" in enc and (enc.get("color") or {}).get("type") == "quantitative"


def holds_image(spec: Mapping) -> bool:
    """True when a Vega-Lite spec (a dict, as sent) draws an image mark anywhere: in a layer or a concatenation."""
    return _draws(spec, _is_image)


def holds_heatmap(spec: Mapping) -> bool:
    """True when a Vega-Lite spec draws a heatmap anywhere: an image (with its hover grid), or rect cells on x and
    y coloured by a quantitative field (``charts.base.heatmap``, the lab's attention maps, small score matrices)."""
    return _draws(spec, lambda view: _is_image(view) or _is_cells(view))


def with_renderer(spec: dict) -> dict:
    """``spec`` with Vega's renderer set to RENDERER when it draws a heatmap (else unchanged): the chart options
    Streamlit passes to vega-embed (``usermeta.embedOptions``).  Exports (vl-convert) do not read them."""
    if not holds_heatmap(spec):
        return spec
    usermeta = dict(spec.get("usermeta") or {})
    usermeta["embedOptions"] = {**usermeta.get("embedOptions", {}), "renderer": RENDERER}
    return {**spec, "usermeta": usermeta}
