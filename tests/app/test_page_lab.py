"""The extrapolation lab page: shipped results at once, numbers equal to the library's, controls, a live run."""

from __future__ import annotations

from apphelpers import assert_clean, chart, chart_frame, chart_places, charts, metrics, tables, text_of
from apphelpers import open_page as _open

from posenc.lab.positions import NAMES
from posenc.lab.results import VERDICT_RULE, band_gaps, bootstrap_interval, learned_check, load_shipped, load_task, load_tasks, spread
from posenc.views.lab import attention_stack, attention_view, finding, top_sentence

PAGE = "pages/lab.py"


def open_page(path: str, query: dict | None = None):
    """The page with its prediction (rank the schemes at 4L) revealed, when it asks one: these tests read the results
    drawn whole, the "why" box open (tests/app/test_page_lab_prediction.py reads them before the reveal)."""
    return reveal(_open(path, query, opened=("lab_why",)))


def reveal(at):
    """Reveal the prediction again: a bound control that moved (the task, the Why section's scheme: a full rerun here,
    the section's own in the browser) turned it off."""
    if any(t.key == "ex_lab_rank_reveal" for t in at.toggle):
        at.toggle(key="ex_lab_rank_reveal").set_value(True).run()
    return at
SHIPPED = load_shipped()
MAPS = ("lab_attn_L", "lab_attn_4")  # the attention maps at L and at 4L (the default long length)
WHY = (*MAPS, "lab_mass")  # the charts of the "why" section: they follow its layer and head buttons
CHARTS = ("lab_bands", "lab_gap", "lab_positions", "lab_ext", *WHY)


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
    assert set(CHARTS) <= set(charts(at))  # gap, per position, extensions, two attention maps, mass
    gap = chart_frame(at, "lab_gap")
    alibi = gap[(gap["scheme"] == "ALiBi") & (gap["length"] == 256)].iloc[0]
    want = spread([r["mean"]["256"]["gap"] for r in res["runs"]["alibi"].values()])
    assert abs(alibi["gap"] - want["mean"]) < 1e-12 and abs(alibi["hi"] - want["max"]) < 1e-12
    assert "no row for position 32" in text_of(at)
    failed = sorted({c["scheme"] for c in checks if not c["learned"]})
    # every scheme that did not learn the task at some seed says so on the page
    assert all(f"{NAMES[s]} did not learn the task at L" in text_of(at) for s in failed)
    table = tables(at)["lab_overview"]
    assert table.iloc[2]["4L = 128"] == "no row past L"
    # the follow-up: the raw index (and RoPE + randomized) trained 4x longer, its table and its line in the gap chart
    longer = SHIPPED["longer"]
    more = tables(at)["lab_more"]
    want = spread([r["mean"]["128"]["gap"] for r in next(iter(longer["runs"].values())).values()])
    assert list(more["scheme"]) == [NAMES[s] for s in longer["runs"]]
    assert more.iloc[0]["4L = 128"] == f"{want['mean']:.3f} ({want['min']:.3f}–{want['max']:.3f})"
    assert "Trained 4× longer" in text_of(at) and "It is trained longer below." in text_of(at)
    assert set(gap["budget"]) == {"1,000 steps", "4,000 steps"}


def _params(spec: dict) -> dict:
    return {p["name"]: p["value"] for p in spec.get("params", [])}


def test_attention_maps_hold_every_layer_and_head_and_the_link_picks_one():
    at = open_page(PAGE)
    maps = [chart(at, key) for key in MAPS]
    stack = attention_stack(SHIPPED, "rope", 4)
    for ch, label in zip(maps, stack["maps"]):
        assert _params(ch["spec"]) == {"url_layer": 1, "url_head": 1}
        assert label in str(ch["spec"].get("title") or ch["spec"]["layer"][0]["title"])  # the title follows the buttons
    sent = chart_frame(at, "lab_attn_L")  # the map at L: rect cells of every layer and head, the chart's filter picks one
    assert set(zip(sent["layer"], sent["head"])) == {(lay, h) for lay in (1, 2) for h in (1, 2, 3, 4)}
    one = attention_view(SHIPPED, "rope", 1, 2, 4)["maps"]["L = 32"]
    picked = sent[(sent["layer"] == 2) & (sent["head"] == 3)]
    assert abs(picked["weight"].sum() - one["weight"].sum()) < 1e-3  # float32 frame
    at = open_page(PAGE, {"layer": "2", "head": "3"})
    assert_clean(at)
    assert all(_params(chart(at, key)["spec"]) == {"url_layer": 2, "url_head": 3} for key in WHY)
    reveal(at.selectbox(key="scheme").set_value("learned").run())
    assert_clean(at)
    drawn = charts(at)
    assert "the maps and the mass stop at L" in text_of(at)
    assert "lab_attn_4" not in drawn and {"lab_gap", "lab_positions", "lab_ext", "lab_attn_L", "lab_mass"} <= set(drawn)  # no map at 4L
    assert _params(drawn["lab_attn_L"]["spec"]) == {"url_layer": 2, "url_head": 3}


def test_a_bad_layer_or_head_in_the_link_gets_a_note():
    at = open_page(PAGE, {"layer": "9", "head": "x"})
    assert_clean(at)
    notes = " ".join(w.value for w in at.warning)
    assert "(`layer`) to `9`, which is not allowed here (one of 1, 2)" in notes and "(`head`) to `x`" in notes
    assert all(_params(chart(at, key)["spec"]) == {"url_layer": 1, "url_head": 1} for key in WHY)


def test_the_untrained_notice_does_not_move_the_charts():
    # the notice fills a slot that is always there: appearing above the charts, it used to move all six to new
    # places in the page, and the browser built every one again (a training-length step 0.73 -> 0.21 s)
    shipped = open_page(PAGE)
    untrained = open_page(PAGE, {"L": "8"})
    assert "has not been trained on this server yet" in text_of(untrained)
    assert "has not been trained" not in text_of(shipped)
    assert chart_places(untrained) == chart_places(shipped) and set(CHARTS) <= set(chart_places(shipped))
    # the learned table's note ("the maps and the mass stop at L") fills its slot too: the mass chart stays put
    mass = chart_places(shipped)["lab_mass"]
    shipped.selectbox(key="scheme").select("learned").run()
    assert "stop at L" in text_of(shipped) and chart_places(shipped)["lab_mass"] == mass


def test_untrained_configuration_says_so_then_trains_live():
    at = open_page(PAGE, {"schemes": ["NoPE", "T5 buckets"], "seeds": "1", "steps": "250", "L": "8"})
    assert_clean(at)
    assert "has not been trained on this server yet" in text_of(at)
    assert metrics(at)["results"] == "shipped"
    at.button(key="lab_train").click().run(timeout=300)
    assert_clean(at)
    assert metrics(at)["results"] == "custom"
    gap = chart_frame(at, "lab_gap")
    assert set(gap["scheme"]) == {"NoPE", "T5 buckets"} and set(gap["length"]) == {8, 16, 32, 64}
    # the bands: the custom run drawn over the shipped ones, never replacing them
    bands = chart_frame(at, "lab_bands")
    assert set(bands[bands["run"] == "custom"]["scheme"]) == {"NoPE", "T5 buckets"}
    assert set(bands[bands["run"] == "shipped"]["scheme"]) == {NAMES[s] for s in SHIPPED["results"]["runs"]}
    at.select_slider(key="mult").set_value(8).run()  # a rerun keeps the custom run (stored, not retrained)
    assert metrics(at)["results"] == "custom"


def test_one_top_sentence_the_finding_at_the_shipped_results_with_the_bands_and_the_rule():
    at = open_page(PAGE)
    assert_clean(at)
    tops = [i.value for i in at.info]
    want = top_sentence([finding(load_task(t)) for t in load_tasks()])
    assert tops[0] == want and "**Finding.**" not in text_of(at)  # one top sentence: the spine's headline slot holds it
    # the sentence names exactly the schemes whose beyond-L fraction is within 10 % of the uniform guess's gap
    f = finding(SHIPPED)
    held = want.split("only ")[1].split(" stay within")[0] if "only " in want else ""
    assert set(held.replace(" and ", ", ").split(", ")) == {NAMES[s] for s in f["within"]}
    assert all(NAMES[s] in want for s in f["worse"])
    assert "2-layer models of d = 32" in text_of(at) and "L = 32" in text_of(at)
    bands = chart_frame(at, "lab_bands")
    alibi = bands[(bands["scheme"] == "ALiBi") & (bands["band"] == 3)].iloc[0]
    per = band_gaps(SHIPPED["results"], "alibi")[(128, 256)]
    assert abs(alibi["gap"] - sum(per) / len(per)) < 1e-12
    assert (alibi["lo"], alibi["hi"]) == bootstrap_interval(per)
    assert VERDICT_RULE.replace("**", "") in text_of(at)
    ext = tables(at)["lab_extensions"]
    assert "Chen et al., Position Interpolation (arXiv:2306.15595)" in set(ext["paper"])


def test_two_shipped_tasks_get_a_selector_and_one_sentence(tmp_path, monkeypatch):
    """A second task's file beside the first (made here: the Markov file relabelled "induction", its gaps halved): the
    page offers both, its one top sentence has a clause per task, and the chosen task's bands are drawn."""
    import json

    import posenc.lab.results as results
    from posenc.ui import cache

    res = json.loads(json.dumps(SHIPPED["results"]))
    res["config"]["task"] = "induction"
    for runs in res["runs"].values():
        for r in runs.values():
            r["gap_by_position"] = [g / 2 for g in r["gap_by_position"]]
    (tmp_path / "lab_induction.json").write_text(json.dumps(res))
    (tmp_path / "lab_results.json").write_text(results.RESULTS_FILE.read_text())
    monkeypatch.setattr(results, "DATA", tmp_path)
    results.load_tasks.cache_clear()
    cache._call.clear()
    try:
        at = open_page(PAGE)
        assert_clean(at)
        assert list(load_tasks()) == ["markov", "induction"]
        want = top_sentence([finding(load_task(t)) for t in ("markov", "induction")])
        assert at.info[0].value == want and "on the Markov task past L" in want and "; on the induction task past L" in want
        reveal(at.segmented_control(key="task").set_value("induction").run())
        assert_clean(at)
        bands = chart_frame(at, "lab_bands")
        rope = bands[(bands["scheme"] == "RoPE") & (bands["band"] == 3)].iloc[0]
        per = band_gaps(res, "rope")[(128, 256)]
        assert abs(rope["gap"] - sum(per) / len(per)) < 1e-12
        assert "No weights ship for the induction task" in text_of(at)
    finally:  # every cache that saw the made-up task (the page's views are cached on the task's name)
        import streamlit as st

        results.load_tasks.cache_clear()
        st.cache_data.clear()


def _with_orders(tmp_path, monkeypatch, data: dict | None):
    """Point the lab's data at a copy holding the shipped results, and the order sweep ``data`` (None: no sweep file)."""
    import json

    import posenc.lab.results as results
    from posenc.ui import cache

    (tmp_path / "lab_results.json").write_text(results.RESULTS_FILE.read_text())
    if data is not None:
        (tmp_path / "lab_orders.json").write_text(json.dumps(data))
    monkeypatch.setattr(results, "DATA", tmp_path)
    results.load_tasks.cache_clear()
    cache._call.clear()


def test_the_order_sweep_shows_with_its_file_and_hides_without(tmp_path, monkeypatch):
    """The sweep from a hand-made lab_orders.json (each order a copy of the shipped Markov results, ALiBi's and NoPE's gap
    past L scaled per order): the section, its chart's rows and its sentence; without the file, no section."""
    import copy

    import streamlit as st

    import posenc.lab.results as results
    from posenc.views.lab import ORDERS_TITLE, order_sweep, order_view

    orders = {}
    for k in (1, 2, 3, 4):
        res = copy.deepcopy(SHIPPED["results"])
        for s, f in (("alibi", 1.0), ("nope", 0.5 ** k)):
            for r in res["runs"][s].values():
                r["gap_by_position"] = [g * f for g in r["gap_by_position"]]
        orders[str(k)] = res
    data = {"format": 3, "task": "markov", "orders": orders}
    try:
        (tmp_path / "with").mkdir()
        _with_orders(tmp_path / "with", monkeypatch, data)
        at = open_page(PAGE)
        assert_clean(at)
        assert ORDERS_TITLE in [e.label for e in at.expander]
        sent, want = chart_frame(at, "lab_orders"), order_sweep(data)
        sweep = sent[sent["learned"].notna()]  # the points' rows (the chart also sends its end labels and two lines)
        assert len(sweep) == len(order_view(want)["frame"]) and set(sweep["order"]) == {1, 2, 3, 4}
        nope = sweep[sweep["scheme"] == "NoPE"].sort_values("order")["fraction"].to_numpy()
        assert (nope[1:] < nope[:-1]).all()  # made so: NoPE's gap halves with each order
        assert order_view(want)["sentence"] in text_of(at) and "One seed per order" in text_of(at)
        (tmp_path / "without").mkdir()
        _with_orders(tmp_path / "without", monkeypatch, None)
        at = open_page(PAGE)
        assert_clean(at)
        assert ORDERS_TITLE not in [e.label for e in at.expander] and "lab_orders" not in charts(at)
        assert "lab_bands" in charts(at)
    finally:
        results.load_tasks.cache_clear()
        st.cache_data.clear()


def test_the_why_box_is_drawn_only_when_opened_and_a_link_to_it_opens_it():
    """Closed, the attention maps cost no first paint and no change of task (issue 42: the lab's first paint and task
    step); a link that sets one of its controls opens it, and opening it draws what it holds."""
    at = reveal(_open(PAGE))
    assert_clean(at)
    assert not set(WHY) & set(charts(at)) and not any(s.key == "scheme" for s in at.selectbox)
    assert {"lab_bands", "lab_gap", "lab_positions"} <= set(charts(at))
    at.session_state["lab_why"] = True  # the box's key: opening it reruns its section (the page, here)
    at.run()
    assert_clean(at)
    assert set(WHY) <= set(charts(at)) and at.select_slider(key="mult").value == 4
    linked = _open(PAGE, {"mult": "8L"})
    assert_clean(linked)
    assert {"lab_attn_L", "lab_attn_8", "lab_mass"} <= set(charts(linked)) and "Ignored link" not in text_of(linked)
