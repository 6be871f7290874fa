"""The extrapolation lab page and the registry: every scheme the lab trains appears, in its registry colour, the ones it
does not train say why, and randomized positions are a control of a custom run."""

from __future__ import annotations

from apphelpers import assert_clean, chart, chart_frame, charts, metrics, text_of
from apphelpers import open_page as _open

from posenc.charts.base import SCHEME_COLORS
from posenc.charts.lab import scheme_colors
from posenc.lab.positions import DEFAULT_SCHEMES, LAB, LAB_SCHEMES, NAMES, untrainable
from posenc.lab.results import load_shipped
from posenc.registry import get_scheme

PAGE = "pages/lab.py"


def open_page(path: str, query: dict | None = None):
    """The page with its prediction (rank the schemes at 4L) revealed, when it asks one: these tests read the results
    drawn whole, the "why" box open (tests/app/test_page_lab_prediction.py reads them before the reveal)."""
    at = _open(path, query, opened=("lab_why",))
    if any(t.key == "ex_lab_rank_reveal" for t in at.toggle):
        at.toggle(key="ex_lab_rank_reveal").set_value(True).run()
    return at


def _color_scale(spec: dict) -> dict:
    return next(layer["encoding"]["color"]["scale"] for layer in spec["layer"] if "color" in layer.get("encoding", {}))


def test_the_shipped_run_draws_every_default_scheme_in_its_registry_colour():
    at = open_page(PAGE)
    assert_clean(at)
    shipped = list(load_shipped()["results"]["runs"])
    assert set(shipped) <= set(DEFAULT_SCHEMES)  # the shipped run trains default schemes (all of them once regenerated)
    names = [NAMES[s] for s in shipped]
    assert set(chart_frame(at, "lab_gap")["scheme"].dropna()) == set(names)
    assert set(chart_frame(at, "lab_positions")["scheme"].dropna()) == set(names)  # (the L rule has no scheme)
    for key in ("lab_gap", "lab_positions", "lab_bands"):
        scale = _color_scale(chart(at, key)["spec"])
        assert scale["domain"] == names and scale["range"] == scheme_colors([LAB[s].key for s in shipped])
        assert scale["range"][names.index("RoPE")] == SCHEME_COLORS["rope"] != scale["range"][names.index("xPos")]
    # the custom run offers every lab scheme; the "why" section every scheme of the run drawn
    assert len(at.multiselect(key="schemes").options) == len(LAB_SCHEMES)
    assert set(at.selectbox(key="scheme").options) == set(names)


def test_the_schemes_the_lab_does_not_train_say_why():
    at = open_page(PAGE)
    assert_clean(at)
    expander = next(e for e in at.expander if "does not train" in e.label)
    text = " ".join(m.value for m in expander.markdown)
    for key, why in untrainable().items():
        assert f"**{get_scheme(key).name}**: {why}." in text


def test_the_new_schemes_show_their_attention():
    at = open_page(PAGE)
    for scheme in ("fire", "kerple", "rope_randomized"):
        at.selectbox(key="scheme").set_value(scheme).run()
        assert_clean(at)
        assert {"lab_attn_L", "lab_attn_4", "lab_mass"} <= set(charts(at)), scheme


def test_randomized_positions_leave_nope_out_and_train_live():
    at = open_page(PAGE, {"schemes": ["NoPE", "ALiBi"], "seeds": "1", "steps": "250", "L": "8", "randomize": "256"})
    assert_clean(at)
    assert "NoPE reads no positions" in text_of(at) and "left out of this run" in text_of(at)
    assert "has not been trained on this server yet" in text_of(at)
    at.button(key="lab_train").click().run(timeout=300)
    assert_clean(at)
    assert metrics(at)["results"] == "custom"
    gap = chart_frame(at, "lab_gap")
    assert set(gap["scheme"]) == {"ALiBi"} and set(gap["length"]) == {8, 16, 32, 64}
    assert "positions randomized from [0, 256)" in text_of(at)
