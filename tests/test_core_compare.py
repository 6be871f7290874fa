"""posenc.comparison_table(): the measured comparison, one row per registered scheme."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc.analysis.compare import comparison_params

DOCUMENTED_KEYS = {
    "key", "name", "kind", "d",
    "max_abs_at_1e6", "max_abs_near", "bounded",
    "max_slope", "slope_length_change", "continuous",
    "closest_distance", "closest_i", "closest_j", "neighbour_distance", "unique",
    "length_change",
    "translation_invariance", "score_spread", "relative",
    "defined_at_4L",
    "learned_parameters", "enters", "models", "paper", "year", "n_measured",
}
ROTARY = [k for k, s in posenc.SCHEMES.items() if s.kind == "rotary" and s.offset_only(64)]  # randomized positions: not relative


@pytest.fixture(scope="module")
def table():
    return posenc.comparison_table()  # n = 512, d = 64, H = 8, train_len = 512


@pytest.fixture(scope="module")
def rows(table):
    return {r["key"]: r for r in table}


def test_every_row_has_the_documented_keys(table):
    assert [r["key"] for r in table] == list(posenc.SCHEMES)
    for r in table:
        assert set(r) == DOCUMENTED_KEYS, r["key"]
        scheme = posenc.get_scheme(r["key"])
        assert (r["name"], r["kind"], r["enters"], r["paper"], r["year"]) == (scheme.name, scheme.kind, scheme.enters, scheme.paper, scheme.year)
        assert r["models"] == ", ".join(scheme.models)
        assert r["d"] == (384 if r["key"] == "learned_minilm" else 64)
        for flag in ("bounded", "continuous", "relative", "unique", "defined_at_4L"):
            assert isinstance(r[flag], bool)
        assert 0 <= r["closest_i"] < r["closest_j"] < 512
        assert r["closest_distance"] >= 0 and r["length_change"] >= 0


def test_wishlist_marks(rows):
    assert rows["raw_index"]["bounded"] is False
    assert rows["raw_index"]["max_abs_at_1e6"] == 1e6
    s = rows["sinusoidal"]
    assert s["bounded"] and s["continuous"] and s["relative"]
    assert s["max_abs_at_1e6"] <= 1.0 and s["translation_invariance"] < 1e-12
    for key in ("learned_minilm", "learned_random"):
        r = rows[key]
        assert r["defined_at_4L"] is False  # no row past 511
        assert r["continuous"] is False  # a lookup: integer positions only
        assert math.isnan(r["max_abs_at_1e6"])
        assert r["relative"] is False
    a = rows["alibi"]
    assert a["bounded"] is False and a["relative"] is True  # the bias grows linearly with distance
    assert a["max_abs_at_1e6"] == pytest.approx(0.5e6)  # head 0 slope 1/2 at distance 1e6
    n = rows["nope"]
    assert n["relative"] is False and n["score_spread"] == 0.0  # a constant score carries no position
    assert rows["t5"]["relative"] is True and rows["t5"]["bounded"] is True
    assert rows["index_over_length"]["length_change"] > 0.9
    for key in ROTARY:
        assert rows[key]["relative"] and rows[key]["bounded"] and rows[key]["continuous"] and rows[key]["unique"], key
    assert s["unique"] and s["closest_distance"] == pytest.approx(s["neighbour_distance"], rel=1e-12)  # neighbours are closest


def test_continuity_asks_for_one_function_of_the_position(rows):
    """The article, on index / length: "a discrete step dressed up as a float".  Its local slope is
    1/L, so it is not the same in a prompt of 16 tokens and of 512: continuous fails.  The single
    sine, the sinusoid and the rotary schemes have one slope whatever the prompt length."""
    il = rows["index_over_length"]
    assert il["continuous"] is False
    assert il["slope_length_change"] == pytest.approx(1 / 16 - 1 / 512, rel=1e-6)  # slope 1/L, d/dt (t + 1)/L
    assert il["max_slope"] == pytest.approx(1 / 512, rel=1e-6)  # smooth within one prompt
    for key in ("raw_index", "single_sine", "sincos_pair", "sinusoidal", "alibi", *ROTARY):
        assert rows[key]["continuous"] and rows[key]["slope_length_change"] == 0.0, key


def test_uniqueness_fails_where_positions_come_back(rows):
    """One sin+cos pair is unique within a turn but not across turns: among 512 positions at
    omega = 1, offset k = 333 is 53 turns less 0.0088 rad (333 - 106 pi = -0.0088), so positions 0
    and 333 lie 2|sin(k/2)| = 0.0088 apart per (sin, cos) pair -- 0.0499 over the 32 pairs of d = 64 --
    under a tenth of the neighbour distance 2 sin(1/2) per pair."""
    sc = rows["sincos_pair"]
    pairs = 32  # d = 64: 32 identical (sin, cos) pairs
    assert sc["neighbour_distance"] == pytest.approx(math.sqrt(pairs) * 2 * math.sin(0.5), rel=1e-12)
    k = sc["closest_j"] - sc["closest_i"]
    assert k == 333 and abs(k - 106 * math.pi) < 0.01
    assert sc["closest_distance"] == pytest.approx(math.sqrt(pairs) * 2 * abs(math.sin(k / 2)), rel=1e-9)
    assert sc["closest_distance"] < 0.1 * sc["neighbour_distance"] and sc["unique"] is False
    assert rows["single_sine"]["unique"] is False and rows["nope"]["unique"] is False and rows["t5"]["unique"] is False
    for key in ("raw_index", "index_over_length", "sinusoidal", "alibi", "learned_minilm", "learned_random"):
        assert rows[key]["unique"], key


def test_only_dynamic_ntk_and_longrope_change_with_length(rows):
    for key in ROTARY:
        if key in ("rope_dynamic", "rope_longrope"):  # LongRoPE switches to its long factors past the trained length
            assert rows[key]["length_change"] > 1e-3
        else:
            assert rows[key]["length_change"] == 0.0, key


def test_defined_at_4L_is_false_only_for_a_table_shorter_than_4L(rows):
    assert {k for k, r in rows.items() if not r["defined_at_4L"]} == {"learned_minilm", "learned_random"}


def test_learned_parameter_counts(rows):
    assert rows["learned_minilm"]["learned_parameters"] == 512 * 384
    assert rows["learned_random"]["learned_parameters"] == 512 * 64
    assert rows["t5"]["learned_parameters"] == 32 * 8
    for key in ("raw_index", "sinusoidal", "alibi", "nope", *ROTARY):
        assert rows[key]["learned_parameters"] == 0


@pytest.mark.parametrize("key", ["sinusoidal", "sincos_pair", "raw_index", "rope_yarn", "rope_dynamic", "alibi", "t5", "learned_random"])
def test_measured_columns_match_direct_calls(rows, key):
    r = rows[key]
    params = comparison_params(key, 512)
    kw = {"n_heads": 8} if posenc.get_scheme(key).kind == "bias" else {}
    sig = posenc.signature(key, np.arange(512), 64, seq_len=512, **kw, **params)
    best = posenc.closest_pair(sig)
    # the table may use the offset method (shift-isometric schemes): same distance, possibly
    # another pair at the same offset; the pair it names must realise that distance
    assert r["closest_distance"] == pytest.approx(best["distance"], rel=1e-12, abs=1e-15)
    i, j = r["closest_i"], r["closest_j"]
    assert np.linalg.norm(sig[i] - sig[j]) == pytest.approx(r["closest_distance"], rel=1e-12, abs=1e-15)
    g = posenc.growth(key, [10**6], 64, **kw, **params)
    if g["defined"][0]:  # the column is the max over positions 1e5 .. 1e6, so at least the value at 1e6
        assert r["max_abs_at_1e6"] >= float(g["max_abs"][0]) > 0
    if posenc.get_scheme(key).kind != "bias":
        S = sig @ sig.T
        assert r["translation_invariance"] == pytest.approx(posenc.translation_invariance(S), abs=1e-12)
    lengths = sorted({2, 256, 512, 1024, 2048})
    if not key.startswith("learned"):
        ld = posenc.length_dependence(key, 1, lengths, 64, **kw, **params)
        assert r["length_change"] == ld["max_change"]


def test_subset_and_bad_keys():
    sub = posenc.comparison_table(["rope", "alibi"], n=64, d=16, train_len=64)
    assert [r["key"] for r in sub] == ["rope", "alibi"]
    assert posenc.comparison_table("rope", n=64, d=16, train_len=64)[0]["key"] == "rope"
    with pytest.raises(ValueError, match="valid keys"):
        posenc.comparison_table(["rope", "nope!"])
    with pytest.raises(ValueError, match="keys"):
        posenc.comparison_table(5)  # once a TypeError
    with pytest.raises(ValueError, match="n must"):
        posenc.measure_scheme("rope", n=2)


def test_measurements_are_shared_between_views_and_copied_out():
    from posenc.analysis import compare as cmp
    from posenc.views.compare import comparison
    from posenc.views.home import SETTINGS, wishlist_view

    cmp._measured.cache_clear()
    wishlist_view()
    misses = cmp._measured.cache_info().misses
    comparison(**SETTINGS)  # the comparison table at the landing page's settings reuses every wishlist row
    info = cmp._measured.cache_info()
    assert info.hits >= misses > 0
    row = cmp.measure_scheme("sinusoidal")
    row["translation_invariance"] = 99.0  # a caller's edit stays in its copy
    assert cmp.measure_scheme("sinusoidal")["translation_invariance"] < 1e-12
    custom = cmp.measure_scheme("rope", params={"base": 500.0})  # explicit params: measured, not remembered
    assert custom != cmp.measure_scheme("rope") and cmp._measured.cache_info().currsize == info.currsize


def test_a_new_training_length_remeasures_the_score_matrix_only_where_the_parameters_name_it(monkeypatch):
    """Uniqueness and the dense score matrix depend on n, d, the heads and the parameters: a new L re-measures them
    only for the schemes whose comparison parameters carry L (the RoPE extensions), and every row is the one a
    measurement that remembers nothing makes."""
    from posenc.analysis import compare as cmp

    cmp._measured.cache_clear()
    cmp._at_length.cache_clear()
    cmp.comparison_table(n=64, train_len=64)
    first = cmp._at_length.cache_info().misses
    rows = cmp.comparison_table(n=64, train_len=128)
    named = [k for k in posenc.SCHEMES if comparison_params(k, 64) != comparison_params(k, 128)]
    assert len(named) == 6 and cmp._at_length.cache_info().misses == first + len(named)
    cmp._measured.cache_clear()
    monkeypatch.setattr(cmp, "_at_length", cmp._at_length.__wrapped__)  # measured whole, nothing remembered
    fresh = cmp.comparison_table(n=64, train_len=128)
    for k, a, b in zip(posenc.SCHEMES, rows, fresh):
        assert list(a) == list(b), k
        assert all(a[c] == b[c] or (isinstance(a[c], float) and math.isnan(a[c]) and math.isnan(b[c])) for c in a), k
    cmp._measured.cache_clear()


def test_a_new_length_n_remeasures_no_bound_and_a_new_l_only_where_the_parameters_name_it(monkeypatch):
    """The bounded columns (growth out to 10^6) do not depend on n: a new n re-measures none of them, a new L only the
    schemes whose comparison parameters carry L, and every row is the one a measurement that remembers nothing makes."""
    from posenc.analysis import compare as cmp

    cmp._measured.cache_clear()
    cmp._bounds.cache_clear()
    cmp.comparison_table(n=64, train_len=64)
    first = cmp._bounds.cache_info().misses
    cmp.comparison_table(n=128, train_len=64)
    assert cmp._bounds.cache_info().misses == first
    rows = cmp.comparison_table(n=128, train_len=128)
    named = [k for k in posenc.SCHEMES if comparison_params(k, 64) != comparison_params(k, 128)]
    assert cmp._bounds.cache_info().misses == first + len(named)
    cmp._measured.cache_clear()
    monkeypatch.setattr(cmp, "_bounds", cmp._bounds.__wrapped__)
    fresh = cmp.comparison_table(n=128, train_len=128)
    for k, a, b in zip(posenc.SCHEMES, rows, fresh):
        assert list(a) == list(b), k
        assert all(a[c] == b[c] or (isinstance(a[c], float) and math.isnan(a[c]) and math.isnan(b[c])) for c in a), k
    cmp._measured.cache_clear()


def test_the_score_spread_is_over_the_finite_entries():
    from posenc.analysis.compare import _finite_spread

    assert _finite_spread(np.arange(4.0).reshape(2, 2)) == 3.0  # every entry finite: max - min
    assert _finite_spread(np.array([[1.0, -np.inf], [3.0, 2.0]])) == 2.0  # a masked entry left out
    assert _finite_spread(np.array([[np.nan, 1.0], [5.0, 2.0]])) == 4.0
    assert _finite_spread(np.full((2, 2), -np.inf)) == 0.0  # nothing finite


def test_the_finite_range_of_a_score_matrix():
    from posenc.analysis.scores import finite_range

    assert finite_range(np.arange(4.0).reshape(2, 2)) == (0.0, 3.0)
    assert finite_range(np.array([[1.0, -np.inf], [3.0, 2.0]])) == (1.0, 3.0)  # the causal mask left out
    assert finite_range(np.array([[np.nan, 1.0], [5.0, 2.0]])[:, ::-1]) == (1.0, 5.0)  # a strided view
    assert all(np.isnan(finite_range(np.full((2, 2), -np.inf))))
