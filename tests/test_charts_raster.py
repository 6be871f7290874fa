"""The image heatmap: colours from the same stops as its legend, a valid PNG, exact hover values."""

from __future__ import annotations

import io

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from PIL import Image

from posenc.charts import raster
from posenc.io import export
from posenc.ui.compat import positional_names
from tests.scenegraph import marks


def test_colorize_maps_the_domain_onto_the_stops_and_masks_non_finite():
    M = np.array([[-1.0, 0.0, 1.0], [-5.0, 5.0, -np.inf]])
    rgb = raster.colorize(M, (-1.0, 1.0))
    stops = raster._rgb(raster.REDBLUE)
    assert rgb.dtype == np.uint8 and rgb.shape == (2, 3, 3)
    assert rgb[0, 0].tolist() == stops[0].tolist() and rgb[0, 2].tolist() == stops[-1].tolist()
    assert rgb[0, 1].tolist() == stops[5].tolist()  # the middle of the domain is the middle stop (#f7f7f7)
    assert rgb[1, 0].tolist() == stops[0].tolist() and rgb[1, 1].tolist() == stops[-1].tolist()  # clipped
    assert tuple(rgb[1, 2]) == raster.MASKED_RGB
    half = raster.colorize(np.array([[0.05]]), (0.0, 1.0))[0, 0]  # halfway between stops 0 and 1
    np.testing.assert_allclose(half, np.rint((stops[0] + stops[1]) / 2), atol=1)


@pytest.mark.parametrize("bad", [(1.0, 1.0), (0.0, np.nan), (2.0, 1.0)])
def test_colorize_refuses_a_bad_domain(bad):
    with pytest.raises(ValueError, match="domain"):
        raster.colorize(np.zeros((2, 2)), bad)


def test_png_round_trip():
    rgb = np.random.default_rng(0).integers(0, 256, size=(7, 5, 3), dtype=np.uint8)
    img = Image.open(io.BytesIO(raster.png_bytes(rgb)))
    assert img.size == (5, 7) and img.mode == "RGB"
    np.testing.assert_array_equal(np.asarray(img), rgb)


def test_image_heatmap_is_one_image_with_a_legend_and_exact_hover_values():
    M = np.arange(64 * 48, dtype=np.float64).reshape(64, 48)
    ch = raster.image_heatmap(M, rows=np.arange(0, 128, 2), domain=(0.0, float(M.max())), palette="sequential",
                              x_title="key j", y_title="query i", value_title="score")
    spec = export.chart_spec(ch)
    image, hover, pins = spec["layer"]  # the legend rides on a layer of its own, drawn last (zero-size marks)
    assert image["mark"]["type"] == "image"
    assert spec["datasets"][image["data"]["name"]][0]["url"].startswith("data:image/png;base64,")
    grid = hover_data = spec["datasets"][hover["data"]["name"]]
    assert len(grid) <= raster.HOVER_CELLS
    for cell in hover_data:  # every hover value is the exact matrix value at its row and column
        assert cell["score"] == pytest.approx(M[int(cell["i"]) // 2, int(cell["j"])])
    assert pins["encoding"]["color"]["scale"]["range"] == list(raster.VIRIDIS) and "color" not in hover["encoding"]
    assert raster.legend_range(spec) == (0.0, float(M.max()))
    assert "PNG" in export.chart_png(ch)[:8].decode("latin-1")
    assert isinstance(ch, alt.LayerChart)


def _decode(spec: dict, layer: dict) -> np.ndarray:
    import base64
    url = spec["datasets"][layer["data"]["name"]][0]["url"]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))


def test_frame_heatmap_puts_every_cell_of_a_tidy_frame_at_its_row_and_column():
    from posenc.charts.base import matrix_frame
    M = np.arange(40 * 30, dtype=np.float64).reshape(40, 30)
    M[3, 7] = np.nan  # a masked cell
    df = matrix_frame(M, np.arange(0, 160, 4), np.arange(0, 90, 3), row="i", col="j", value="score")
    df = df.drop(index=df.index[5])  # a cell the frame lacks: drawn as masked
    ch = raster.frame_heatmap(df.sample(frac=1.0, random_state=0), x="j", y="i", value="score", x_step=3, y_step=4,
                              domain=(0.0, float(np.nanmax(M))), palette="sequential", x_title="j", y_title="i", value_title="s",
                              width=300, height=400)
    spec = export.chart_spec(ch)
    image, hover, _ = spec["layer"]
    img = _decode(spec, image)
    up_r, up_c = img.shape[0] // 40, img.shape[1] // 30
    assert img.shape[0] == 40 * up_r and img.shape[1] == 30 * up_c
    expect = raster.colorize(np.where(np.isin(np.arange(M.size).reshape(M.shape), [5]), np.nan, M), (0.0, float(np.nanmax(M))),
                             raster.VIRIDIS)
    np.testing.assert_array_equal(img[::up_r, ::up_c], expect)  # shuffled rows land where they belong
    assert tuple(img[3 * up_r, 7 * up_c]) == raster.MASKED_RGB and tuple(img[0, 5 * up_c]) == raster.MASKED_RGB
    # the axes take their domains from the data (no literal that changes with the matrix's size): the image spans
    # exactly columns 0-90 and rows 0-160, and drawn it fills the 300 x 400 plot to the pixel
    row = spec["datasets"][image["data"]["name"]][0]
    assert (row["x"], row["x2"], row["y"], row["y2"]) == (0.0, 90.0, 0.0, 160.0)
    assert all("domain" not in layer["encoding"][ch]["scale"] for layer in (image, hover) for ch in ("x", "y"))
    drawn = marks(vlc.vegalite_to_scenegraph(spec), "image")
    assert [(m["x"], m["y"], m["width"], m["height"]) for m in drawn] == [(0, 0, 300, 400)]
    for cell in spec["datasets"][hover["data"]["name"]]:
        i, j = int(cell["i"]) // 4, int(cell["j"]) // 3
        assert cell["i_end"] > cell["i"] and (cell["score"] is None or cell["score"] == pytest.approx(M[i, j]))


@pytest.mark.parametrize("shape, steps", [((128, 128), (2, 2)), ((41, 31), (1, 3))])
def test_an_image_whose_size_the_hover_blocks_do_not_divide_still_fills_its_plot(shape, steps):
    """The hover grid's last block is cut at the matrix's edge: a block past it widened both axes beyond the image, an
    empty band along its right and bottom sides (the lab's attention map at 8L: 128 columns, 7 to a block, the axis to
    266 for an image ending at 256, 2026-12-07)."""
    from posenc.charts.base import matrix_frame
    M = np.random.default_rng(0).random(shape)
    rows, cols = np.arange(shape[0]) * steps[0], np.arange(shape[1]) * steps[1]
    ch = raster.frame_heatmap(matrix_frame(M, rows, cols, row="query", col="key", value="weight"), x="key", y="query",
                              value="weight", domain=(0.0, 1.0), palette="sequential", x_title="key", y_title="query",
                              value_title="w", width=300, height=200)
    spec = export.chart_spec(ch)
    image, hover, _ = spec["layer"]
    cells = pd.DataFrame(spec["datasets"][hover["data"]["name"]])
    assert cells["key_end"].max() == shape[1] * steps[1] and cells["query_end"].max() == shape[0] * steps[0]
    assert (cells["key_end"] > cells["key"]).all() and (cells["query_end"] > cells["query"]).all()
    drawn = marks(vlc.vegalite_to_scenegraph(spec), "image")
    assert [(m["x"], m["y"], m["width"], m["height"]) for m in drawn] == [(0, 0, 300, 200)]  # no empty band beside it


def test_palette_of_maps_vega_names_and_refuses_others():
    assert raster.palette_of("redblue") == "diverging" and raster.palette_of("viridis") == "sequential"
    with pytest.raises(ValueError, match="scheme"):
        raster.palette_of("jet")


def test_image_url_is_remembered_by_content_and_bounded():
    M = np.arange(12.0).reshape(3, 4)
    a = raster.image_url(M, (0.0, 11.0), raster.VIRIDIS, (2, 2))
    assert raster.image_url(M.copy(), (0.0, 11.0), raster.VIRIDIS, (2, 2)) is a  # same content: not encoded again
    assert raster.image_url(M, (0.0, 12.0), raster.VIRIDIS, (2, 2)) != a  # another domain: another picture
    for i in range(raster.MAX_URLS + 5):
        raster.image_url(M + i, (0.0, 50.0), raster.REDBLUE, (1, 1))
    assert len(raster._URLS) <= raster.MAX_URLS
    with pytest.raises(ValueError, match="domain"):
        raster.image_url(M + 1000, (1.0, 1.0), raster.VIRIDIS, (1, 1))


def test_image_stack_sends_every_matrix_and_filters_to_the_picked_one():
    rng = np.random.default_rng(1)
    mats = {(lay, h): rng.random((80, 80)) for lay in (1, 2) for h in (1, 2, 3)}
    ch = raster.image_stack(mats, fields=("layer", "head"), where="datum.layer == url_layer && datum.head == 2",
                            domain=(0.0, 1.0), palette="sequential", x_title="key", y_title="query", value_title="w")
    with alt.data_transformers.disable_max_rows():
        spec = ch.to_dict()
    image, hover, _ = spec["layer"]
    images = spec["datasets"][image["data"]["name"]]
    assert [(r["layer"], r["head"]) for r in images] == list(mats)  # one PNG per matrix, all sent
    assert len({r["url"] for r in images}) == len(mats)
    assert image["transform"] == hover["transform"] == [{"filter": "datum.layer == url_layer && datum.head == 2"}]
    grid = spec["datasets"][hover["data"]["name"]]
    cell = next(g for g in grid if (g["layer"], g["head"], g["i"], g["j"]) == (2, 3, 0, 0))
    assert abs(cell["score"] - mats[(2, 3)][0, 0]) < 1e-6
    with pytest.raises(ValueError, match="one shape"):
        raster.image_stack({(1,): np.zeros((2, 2)), (2,): np.zeros((3, 3))}, fields=("layer",), domain=(0, 1),
                           x_title="x", y_title="y", value_title="v")
    with pytest.raises(ValueError, match="one value per field"):
        raster.image_stack({(1, 2): np.zeros((2, 2))}, fields=("layer",), domain=(0, 1), x_title="x", y_title="y", value_title="v")


def test_url_param_and_pick_expressions():
    from posenc.charts.base import pick, pick_text, url_param

    p = url_param("head", "head", range(1, 5), 3)
    d = p.param.to_dict()
    assert d["name"] == "url_head" and d["value"] == 3 and d["bind"]["options"] == [1, 2, 3, 4]
    with pytest.raises(ValueError, match="value must be one of"):
        url_param("head", "head", [1, 2], 5)
    q = url_param("layer", "layer", [1, 2], 1)
    assert pick(("layer", q), ("head", p)) == "datum['layer'] == url_layer && datum['head'] == url_head"
    assert pick_text([["a", "b"], ["c", "d"]], q, p) == '[["a", "b"], ["c", "d"]][url_layer - 1][url_head - 1]'
    # more than MAX_RADIO options: a slider over a run of integers, a select otherwise
    assert url_param("head", "head", range(1, 13), 5).param.to_dict()["bind"] == {"input": "range", "min": 1, "max": 12, "step": 1,
                                                                                  "name": "head "}
    assert url_param("d", "d", [2, 4, 8, 16, 32, 64, 128, 256, 512], 8).param.to_dict()["bind"]["input"] == "select"


def test_a_factor_rescales_hover_values_and_legend_in_the_browser():
    """image_stack(factor=...): the picture of c·M is the picture of M on a legend scaled by c, so only the hover
    values and the legend's ends carry the factor (a Vega expression); the image and the data sent stay M's."""
    M = -np.abs(np.subtract.outer(np.arange(8.0), np.arange(8.0)))
    d = raster.image_stack({(): M}, domain=(-7, 0), palette="sequential", x_title="j", y_title="i", value_title="bias",
                           value="distance", factor="slope").to_dict()
    plain = raster.image_stack({(): M}, domain=(-7, 0), palette="sequential", x_title="j", y_title="i", value_title="bias",
                               value="distance").to_dict()
    image, hover, pins = d["layer"]
    assert image["data"] == plain["layer"][0]["data"] and d["datasets"][image["data"]["name"]] == plain["datasets"][image["data"]["name"]]
    assert hover["transform"][0] == {"calculate": "datum['distance'] * (slope)", "as": "distance_scaled"}
    assert hover["encoding"]["tooltip"][-1]["field"] == "distance_scaled"
    assert pins["transform"][0] == {"calculate": f"datum[{raster.LEVEL!r}] * (slope)", "as": f"{raster.LEVEL}_scaled"}
    assert pins["encoding"]["color"]["field"] == f"{raster.LEVEL}_scaled" and raster.legend_range(d) == raster.legend_range(plain) == (-7, 0)
    assert len(d["datasets"][hover["data"]["name"]]) == 64  # 8 x 8 cells, fewer than the hover grid: every cell hovers
    small = raster.image_stack({(): M}, domain=(-7, 0), x_title="j", y_title="i", value_title="v", hover_cells=16).to_dict()
    assert len(small["datasets"][small["layer"][1]["data"]["name"]]) == 16  # a 4 x 4 grid of 2 x 2 blocks


@pytest.mark.parametrize("palette", ["diverging", "sequential"])
def test_the_legend_takes_its_range_from_the_data_and_spreads_the_stops_over_it(palette):
    """Two ranges give one spec (only the data differ), and the legend Vega draws spreads the image's colour stops
    evenly over the range: the piecewise scale the picture is coloured on (``colorize``), to the rounding."""
    M = np.linspace(-3.0, 5.0, 64 * 64).reshape(64, 64)
    specs = [raster.image_heatmap(M, domain=dom, palette=palette, x_title="j", y_title="i", value_title="v").to_dict()
             for dom in ((-3.0, 5.0), (-64.0, 64.0))]
    bare_specs = [{k: v for k, v in positional_names(s).items() if k != "datasets"} for s in specs]
    assert bare_specs[0] == bare_specs[1]  # the spec text the browser compares, its datasets named by order
    assert [raster.legend_range(s) for s in specs] == [(-3.0, 5.0), (-64.0, 64.0)]
    for s, (lo, hi) in zip(specs, [(-3.0, 5.0), (-64.0, 64.0)]):
        gradient = [g for g in _fills(vlc.vegalite_to_scenegraph(s)) if isinstance(g, dict) and g.get("gradient")]
        assert len(gradient) == 1 and len(gradient[0]["stops"]) > 11
        for stop in gradient[0]["stops"]:  # the legend's colour at each offset is the image's colour of that value
            drawn = np.array([int(c) for c in stop["color"][4:-1].split(",")])
            value = lo + stop["offset"] * (hi - lo)
            assert np.abs(drawn - raster.colorize(np.array([[value]]), (lo, hi), raster.PALETTES[palette])[0, 0]).max() <= 1
    bare = raster.image_heatmap(M, domain=(-3.0, 5.0), legend=False, x_title="j", y_title="i", value_title="v").to_dict()
    assert len(bare["layer"]) == 2  # no legend, no pins
    with pytest.raises(ValueError, match="domain"):
        raster.legend_pins((1.0, 1.0), raster.REDBLUE, "v", alt.Legend())


def _fills(node) -> list:
    """Every ``fill`` of a Vega scenegraph."""
    if isinstance(node, dict):
        return ([node["fill"]] if "fill" in node else []) + [f for k, v in node.items() if k != "fill" for f in _fills(v)]
    return [f for v in node for f in _fills(v)] if isinstance(node, list) else []


def test_a_chart_holding_an_image_is_drawn_on_a_canvas_and_others_keep_the_default():
    import altair as alt
    import pandas as pd

    from posenc.charts.base import heatmap
    from posenc.charts.raster import RENDERER, holds_heatmap, holds_image, image_heatmap, with_renderer

    img = image_heatmap(np.arange(4096.0).reshape(64, 64), domain=(0.0, 4095.0), x_title="j", y_title="i",
                        value_title="v").to_dict()
    line = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [1, 2]})).mark_line().encode(x="x:Q", y="y:Q").to_dict()
    nested = {"concat": [line, {"layer": [line, img]}], "usermeta": {"plot_height": 300}}
    assert holds_image(img) and holds_image(nested) and not holds_image(line)
    cells = heatmap(pd.DataFrame({"i": [0, 0, 1, 1], "j": [0, 1, 0, 1], "v": [0.1, 0.2, 0.3, 0.4]}), x="j", y="i", value="v",
                    x_title="j", y_title="i").to_dict()
    bars = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [1, 2]})).mark_rect().encode(x="x:O", y="y:Q", color="x:N").to_dict()
    assert holds_heatmap(img) and holds_heatmap(cells) and holds_heatmap({"layer": [line, cells]})
    assert not holds_image(cells) and not holds_heatmap(bars) and not holds_heatmap(line)
    assert with_renderer(cells)["usermeta"]["embedOptions"]["renderer"] == RENDERER
    assert with_renderer(img)["usermeta"]["embedOptions"]["renderer"] == RENDERER == "hybrid"
    assert with_renderer(nested)["usermeta"] == {"plot_height": 300, "embedOptions": {"renderer": "hybrid"}}
    assert with_renderer(line) is line and "usermeta" not in line
    assert "usermeta" not in img  # the spec given is not changed in place (it may be a remembered one)


def test_similarity_panels_share_one_charts_hover_grid():
    """posenc.charts.compare.score_matrices: n panels hover PANELS_HOVER_CELLS // n cells each (small multiples)."""
    import pandas as pd

    from posenc.charts.compare import PANELS_HOVER_CELLS, score_matrices

    n = 128
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    panels, frames = [], []
    for k in range(4):
        frames.append(pd.DataFrame({"scheme": f"s{k}", "i": i.ravel(), "j": j.ravel(), "score": np.cos(0.1 * (j - i)).ravel()}))
        panels.append({"scheme": f"s{k}", "unit": "cosine", "domain": (-1.0, 1.0), "palette": "diverging", "step": (1, 1), "n": n})
    spec = score_matrices(pd.concat(frames, ignore_index=True), panels).to_dict()
    grids = [len(spec["datasets"][layer["layer"][1]["data"]["name"]]) for layer in spec["concat"]]
    assert grids == [PANELS_HOVER_CELLS // 4] * 4
