"""The extrapolation lab page: shipped results at once, numbers equal to the library's, controls, a live run."""

from __future__ import annotations

from apphelpers import assert_clean, chart_frame, charts, metrics, open_page, text_of

from posenc.lab.results import learned_check, load_shipped, spread
from posenc.views.lab import attention_view

PAGE = "pages/lab.py"
SHIPPED = load_shipped()


def test_opens_with_the_shipped_results():
    at = open_page(PAGE)
    assert_clean(at)
    res = SHIPPED["results"]
    m = metrics(at)
    assert m["floor (exact)"] == f"{res['floor']:.4f} nats"
    assert m["uniform guess"] == f"{res['uniform']:.4f} nats"
    checks = learned_check(res)
    assert m["models that learned the task"] == f"{sum(c['learned'] for c in checks)} of {len(checks)}"
    assert m["results"] == "shipped"
    assert len(charts(at)) == 6  # gap, per position, extensions, two attention maps, mass
    gap = chart_frame(at, 0)
    alibi = gap[(gap["scheme"] == "ALiBi") & (gap["length"] == 256)].iloc[0]
    want = spread([r["mean"]["256"]["gap"] for r in res["runs"]["alibi"].values()])
    assert abs(alibi["gap"] - want["mean"]) < 1e-12 and abs(alibi["hi"] - want["max"]) < 1e-12
    assert "no row for position 32" in text_of(at)
    table = at.dataframe[0].value
    assert table.iloc[2]["4L = 128"] == "no row past L"


def test_attention_controls_change_the_maps():
    at = open_page(PAGE)
    before = chart_frame(at, 4)
    av = attention_view(SHIPPED, "rope", 1, 0, 4)
    assert abs(before["weight"].sum() - av["maps"]["4L = 128"]["weight"].sum()) < 1e-3  # float32 frame
    at.slider(key="head").set_value(3).run()
    assert_clean(at)
    assert not chart_frame(at, 4)["weight"].equals(before["weight"])
    at.selectbox(key="scheme").set_value("learned").run()
    assert_clean(at)
    assert len(charts(at)) == 5 and "the maps and the mass stop at L" in text_of(at)


def test_untrained_configuration_says_so_then_trains_live():
    at = open_page(PAGE, {"schemes": ["NoPE", "T5 buckets"], "seeds": "1", "steps": "250", "L": "8"})
    assert_clean(at)
    assert "has not been trained on this server yet" in text_of(at)
    assert metrics(at)["results"] == "shipped"
    at.button(key="lab_train").click().run(timeout=300)
    assert_clean(at)
    assert metrics(at)["results"] == "custom"
    gap = chart_frame(at, 0)
    assert set(gap["scheme"]) == {"NoPE", "T5 buckets"} and set(gap["length"]) == {8, 16, 32, 64}
    at.slider(key="layer").set_value(2).run()  # a rerun keeps the custom run (stored, not retrained)
    assert metrics(at)["results"] == "custom"
