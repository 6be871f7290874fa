"""The four schemes added together (issue 36) on the pages their entries name: Kerple and FIRE on Relative biases,
p-RoPE and randomized positions on RoPE, found by their charts' keys, with numbers checked against the formulas."""

import math

import numpy as np
from apphelpers import assert_clean, chart, chart_frame, charts, metrics, open_page


def test_kerple_beside_alibi_is_the_log_kernel_and_alibi_line():
    at = open_page("pages/relative_bias.py", {"kerple_r1": "2.0", "kerple_r2": "0.25", "kerple_n": "64"})
    assert_clean(at)
    m = metrics(at)
    assert float(m["Kerple (log): bias at distance 63"]) == np.float64(float(f"{-2 * math.log(1 + 0.25 * 63):.4g}"))
    assert float(m["ALiBi: bias at distance 63"]) == -31.5  # head 1 of 8: slope 1/2
    prof = chart_frame(at, "kerple_profile")
    k = prof[(prof["scheme"] == "Kerple (log)")].set_index("offset")["score"]
    np.testing.assert_allclose(k.loc[[-10, 0, 10]], [-2 * math.log(3.5), 0.0, -2 * math.log(3.5)], rtol=1e-6)  # float32 sent
    # both lines cover both sides: ALiBi is drawn unmasked beside Kerple, -m|j - i| with m = 1/2, not cut at j > i
    a = prof[(prof["scheme"] == "ALiBi")].set_index("offset")["score"]
    assert a.notna().all() and set(a.index) == set(k.index) == set(range(-63, 64))
    np.testing.assert_allclose(a.loc[[-10, 0, 10]], [-5.0, 0.0, -5.0])


def test_fire_is_offset_only_up_to_its_threshold_on_the_page():
    at = open_page("pages/relative_bias.py", {"fire_L": "2048.0", "fire_n": "256"})
    assert_clean(at)
    assert metrics(at)["offset-only at n = 256 (declared)"] == "yes"
    assert float(metrics(at)["deviation from translation invariance"]) < 1e-9
    at = open_page("pages/relative_bias.py", {"fire_L": "16.0", "fire_n": "256"})
    assert metrics(at)["offset-only at n = 256 (declared)"].startswith("no")
    assert float(metrics(at)["deviation from translation invariance"]) > 0.01
    assert "fire_matrix_0" in charts(at)  # one panel of a grid: its key and its place in the grid


def test_p_rope_and_randomized_positions_on_the_rope_page():
    at = open_page("pages/rope.py", {"d": "64", "p_rope_p": "0.5", "rand_N": "128"})
    assert_clean(at)
    m = metrics(at)
    assert m["pairs that rotate"] == "16 of 32"
    assert chart(at, "rope_p_rope")["rows"] > 0 and {"rope_randomized_0", "rope_randomized_1"} <= set(charts(at))
    # at N = n = 128 every position is drawn: randomized positions are RoPE's, and as relative
    assert float(m["RoPE + randomized positions: deviation from translation invariance"]) < 1e-9
    at = open_page("pages/rope.py", {"d": "64", "rand_N": "8192"})
    assert float(metrics(at)["RoPE + randomized positions: deviation from translation invariance"]) > 0.1
