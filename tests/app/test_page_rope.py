"""Page 9 (RoPE): its numbers against posenc and the papers, its charts, controls, links, budgets."""

import numpy as np
import pytest
from apphelpers import (
    assert_clean,
    chart_frame,
    charts,
    metrics,
    open_page,
    payload_bytes,
    reveal,
    table,
    tables,
    text_of,
)

from posenc.schemes.kinds import probe_vector
from posenc.schemes.rotary import apply_rope, rope_offset_scores
from posenc.schemes.scaling import default_inv_freq

PAGE = "pages/rope.py"
CHARTS = ("rope_rotation", "rope_decay", "rope_layouts", "rope_xpos")  # the keys of the page's charts


def score(d, base, m, n, seed=0, layout="half_split"):
    """<R_m q, R_n k> computed here directly from posenc (q: seed, k: seed + 1)."""
    inv = default_inv_freq(d, base)
    q, k = probe_vector(d, "random", seed=seed), probe_vector(d, "random", seed=seed + 1)
    return float(apply_rope(q[None], [m], inv, layout=layout)[0] @ apply_rope(k[None], [n], inv, layout=layout)[0])


def test_defaults():
    at = open_page(PAGE, opened=("rope_xpos_box",))
    assert_clean(at)
    assert metrics(at)["bound at distance 0"] == "?"  # the exercise asks for it
    assert set(chart_frame(at, "rope_rotation")["placement"].dropna()) == {"at (m, n)", "shifted by s"}
    assert "rope_rounding" not in charts(at)  # the rounding exercise asks how the change grows: its chart waits
    m = metrics(reveal(reveal(at, "rope_bound0"), "rope_rounding"))
    grown = chart_frame(at, "rope_rounding")
    assert list(grown["shift"]) == [10**j for j in range(8)] and grown["rms"].iloc[-1] > 100 * grown["rms"].iloc[0]
    want = score(128, 10000.0, 5, 2)
    assert m["score at (m, n)"] == f"{want:.12g}"
    assert m["score at (m + s, n + s)"] == f"{score(128, 10000.0, 105, 102):.12g}" == f"{want:.12g}"
    assert float(m["|difference|"]) <= 1e-12
    # RoFormer, arXiv:2104.09864 §3.4.3, the bound computed: the RoFormer bound at distance 0 is mean(1..64) = 32.5 for d = 128
    assert m["bound at distance 0"] == "32.5"
    assert float(m["max |interleaved(q) − half-split(q[P])[P⁻¹]|"]) <= 1e-12
    assert float(m["max |score difference|, channels permuted"]) <= 1e-12
    assert float(m["…same channels, not permuted"]) > 1
    assert set(CHARTS) <= set(charts(at))
    rot, dec, lay, xp = (chart_frame(at, key) for key in CHARTS)
    assert {"vector", "placement", "position", "x", "y"} <= set(rot.columns) and len(rot) >= 4
    assert {"distance", "relative", "value", "series"} <= set(dec.columns)
    assert dec["distance"].max() == 5000 and dec["series"].nunique() == 2
    assert {"offset", "score", "series"} <= set(lay.columns) and lay["series"].nunique() == 3
    # xPos beside RoPE: the registry's xPos through the same offset profile, against its definition
    # the legend names the schemes only (so a new d swaps the data); the caption states d and the base
    assert set(xp["scheme"]) == {"RoPE", "xPos"} and "both at base 10000 and d = 128" in text_of(at)
    got = xp[xp["scheme"] == "xPos"].set_index("offset")["score"]
    zeta = (np.arange(0, 128, 2) / 128 + 0.4) / 1.4
    theta = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    for D in (-1000, -6, 0, 8):  # (one offset in 2 is drawn)  # all-ones q, k: each pair gives 2 cos(D theta_i), times zeta_i^(-D/512)
        assert got[D] == pytest.approx(float(np.sum(2 * np.cos(D * theta) * zeta ** (-D / 512))), rel=1e-6)
    # the decay table pins the values (RoFormer, arXiv:2104.09864 §3.4.3, the bound computed, d = 128)
    decay = table(at, "rope_decay").set_index("distance")  # revealed above (before, no bound: tests/app/test_quizzes.py)
    for dist, want_b in {1: 31.538, 100: 10.227, 1000: 4.471, 2000: 5.047, 5000: 7.596}.items():
        assert abs(decay.loc[dist, "bound"] - want_b) < 5e-4
    assert "rises in the table" in text_of(at) and "0.1376 at 1,000 → 0.1553 at 2,000" in text_of(at)  # 4.471 / 32.5


def test_controls_change_the_numbers():
    at = open_page(PAGE)
    at.number_input(key="m").set_value(1000).run()
    assert_clean(at)
    assert metrics(at)["score at (m, n)"] == f"{score(128, 10000.0, 1000, 2):.12g}"
    at.select_slider(key="d").set_value(64).run()
    assert_clean(at)
    assert metrics(reveal(at, "rope_bound0"))["bound at distance 0"] == "16.5"  # mean(1..32)
    at.segmented_control(key="probe").set_value("ones").run()
    m = metrics(at)
    assert m["probe score at 0, |q|²"] == "64"  # |ones|^2 = d
    assert float(m["…same channels, not permuted"]) <= 1e-12  # ones is symmetric under the permutation


def test_link_values_are_taken_and_bad_ones_noted():
    at = open_page(PAGE, {"d": "64", "m": "105", "n": "102", "shift": "900", "layout": "interleaved", "pair": "3"})
    assert_clean(at)
    assert not at.warning
    m = metrics(at)
    want = score(64, 10000.0, 105, 102, layout="interleaved")
    assert m["score at (m, n)"] == f"{want:.12g}"
    # equals the closed form q^T R_(n-m) k at offset -3
    inv = default_inv_freq(64)
    closed = rope_offset_scores([-3], inv, probe_vector(64, "random", seed=0), probe_vector(64, "random", seed=1), layout="interleaved")[0]
    assert abs(float(m["score at (m, n)"]) - closed) < 1e-9
    assert "channels 6 and 7" in text_of(at)
    bad = open_page(PAGE, {"d": "7", "pair": "999", "maxdist": "abc", "base": "-3", "probe": "gauss"})
    assert not bad.exception and not bad.error
    notes = " ".join(w.value for w in bad.warning)
    for key in ("`d`", "`pair`", "`maxdist`", "`base`", "`probe`"):
        assert key in notes, (key, notes)
    assert metrics(reveal(bad, "rope_bound0"))["bound at distance 0"] == "32.5"  # defaults used


def test_exercises_reveal_computed_answers():
    at = open_page(PAGE)
    at.toggle(key="ex_rope_bound0_reveal").set_value(True).run()
    at.toggle(key="ex_rope_rounding_reveal").set_value(True).run()
    text = text_of(at)
    assert "Answer: 32.5." in text
    assert "Answer: It grows: over 100× larger at s = 10⁷." in text
    same = open_page(PAGE, {"m": "7", "n": "7"})  # m = n: both angles round alike, the change does not grow
    same.toggle(key="ex_rope_rounding_reveal").set_value(True).run()
    assert "Answer: It stays within 100× of the change at s = 1." in text_of(same)


def test_payload_budgets():
    at = open_page(PAGE)
    assert payload_bytes(at) <= 1_000_000
    big = open_page(PAGE, {"d": "512", "maxdist": "50000", "pair": "255"})
    assert_clean(big)
    assert not big.warning
    assert payload_bytes(big) <= 2_000_000
    assert all(c["rows"] <= 65_536 for c in charts(big).values())
    assert chart_frame(big, "rope_decay")["distance"].max() == 50_000
    assert np.isclose(float(metrics(reveal(big, "rope_bound0"))["bound at distance 0"]), np.mean(np.arange(1, 257)))


def test_maxdist_link_takes_plain_integers():
    at = open_page("pages/rope.py", {"maxdist": "20000"})
    assert not at.exception and not at.warning
    assert at.select_slider(key="maxdist").value == 20000


def test_the_pair_table_is_drawn_only_when_opened():
    # closed, its ~320 Markdown cells cost every first paint and every head_dim step; opened, every pair is there
    at = open_page(PAGE, {"d": "64"})
    assert "rope_pairs" not in tables(at) and "rope_decay" in tables(at)
    at.session_state["rope_pairs"] = True  # the expander's key: opening it reruns the page
    at.run()
    assert_clean(at)
    pairs = table(at, "rope_pairs")
    assert len(pairs) == 32  # d / 2 pairs
    shown = " ".join(map(str, pairs.iloc[1].tolist()))
    assert "1, 33" in shown and "2, 3" in shown  # pair 1: channels (1, 1 + d/2) half-split, (2, 3) interleaved


def test_the_variants_are_computed_only_when_opened_and_a_link_to_one_opens_it():
    """Closed, xPos, p-RoPE and randomized positions (4 of the page's 7 charts) cost no first paint and no head_dim
    step (issue 42); each box opens alone, and a link that sets a control inside one opens that one."""
    at = open_page(PAGE, {"d": "64"})
    assert_clean(at)
    variants = {"rope_xpos", "rope_p_rope", "rope_randomized_0", "rope_randomized_1"}
    assert not variants & set(charts(at)) and "pairs that rotate" not in metrics(at)
    at.session_state["rope_p_box"] = True  # the box's key: opening it reruns its section (the page, here)
    at.run()
    assert_clean(at)
    assert "rope_p_rope" in charts(at) and not {"rope_xpos", "rope_randomized_0"} & set(charts(at))
    linked = open_page(PAGE, {"d": "64", "rand_seed": "3"})
    assert {"rope_randomized_0", "rope_randomized_1"} <= set(charts(linked)) and "rope_p_rope" not in charts(linked)
    assert "Ignored link" not in " ".join(c.value for c in linked.caption)


def test_hello_world_rotated_opens_the_page_and_the_score_survives_the_shift():
    from posenc.views.rope import hello_rope

    at = open_page(PAGE, {"hshift": "1000"})
    assert_clean(at)
    words, scores = table(at, "rope_hello_words"), table(at, "rope_hello_scores")
    assert list(words.iloc[:, 0]) == ["Hello", "World", "Hello", "World"]
    assert "[1.341, 1.140, 0.710, 1.800]" in words.to_string()  # the article's World + PE, to three decimals
    v = hello_rope(1000)
    assert v["same"] < 1e-12 < 1e-3 < v["moved"] and v["check"]["ok"]
    assert scores.iloc[0, 1] == scores.iloc[1, 1]  # as shown, to six decimals
    assert scores.iloc[0, 1] == pytest.approx(v["scores"]["rotated"].iloc[0], abs=5e-7)
    assert "Checked live" in " ".join(c.value for c in at.caption)
