"""The analyses: exact closest pairs, collisions, growth, length dependence, frequency spectrum,
and the permutation-equivariance demo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import pdist

import posenc
from posenc.analysis import geometry

SENT_A = "The dog bit the man."  # the article "Positional Embeddings: Why Attention Needs Order": the two sentences with the same bag of tokens
SENT_B = "The man bit the dog."


# ----------------------------------------------------------------------------- closest pairs

@st.composite
def point_sets(draw):
    """(n, k) float arrays, n in 2..300, with duplicated rows and grid-valued coordinates mixed in."""
    n = draw(st.integers(2, 300))
    k = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        X = rng.integers(-3, 4, size=(n, k)).astype(np.float64)  # many exact ties and duplicates
    else:
        X = rng.normal(0.0, draw(st.sampled_from([1e-6, 1.0, 1e4])), size=(n, k))
    n_dup = draw(st.integers(0, n // 2))
    if n_dup:
        src = rng.integers(0, n, n_dup)
        dst = rng.integers(0, n, n_dup)
        X[dst] = X[src]
    return X


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(point_sets())
def test_closest_pair_is_exact(X):
    best = posenc.closest_pair(X)
    D = pdist(X)
    assert best["distance"] == pytest.approx(D.min(), rel=1e-12, abs=0.0)
    i, j = best["i"], best["j"]
    assert 0 <= i < j < X.shape[0]
    assert np.linalg.norm(X[i] - X[j]) == pytest.approx(D.min(), rel=1e-12, abs=0.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(point_sets(), st.floats(0.0, 6.0))
def test_count_close_pairs_matches_brute_force(X, eps):
    assert posenc.count_close_pairs(X, eps) == int(np.sum(pdist(X) <= eps))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(point_sets(), st.floats(0.0, 6.0))
def test_tree_and_gram_paths_agree_with_brute_force(X, eps):
    """Both ways of finding pairs: the Gram identity (up to DENSE_ROWS rows, tried above) and the KD-tree
    (forced here), and the Gram path's fallback when too many pairs sit near the answer."""
    D = pdist(X)
    gram = posenc.closest_pair(X)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(geometry, "DENSE_ROWS", 0)  # every size takes the KD-tree
        tree = posenc.closest_pair(X)
        assert posenc.count_close_pairs(X, eps) == int(np.sum(D <= eps))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(geometry, "DENSE_CANDIDATES", 0)  # any pair near the answer is too many: the tree decides
        assert posenc.count_close_pairs(X, eps) == int(np.sum(D <= eps))
        assert posenc.closest_pair(X)["distance"] == pytest.approx(D.min(), rel=1e-12, abs=0.0)
    assert tree["distance"] == pytest.approx(D.min(), rel=1e-12, abs=0.0)
    assert gram["distance"] == pytest.approx(tree["distance"], rel=1e-12, abs=0.0)


def test_gram_path_is_exact_where_its_identity_cancels():
    """Rows far from the origin and close together (|x|^2 ~ 1e12, distances ~ 1e-3): the identity alone
    would lose every digit; centring and the exact re-measurement of the candidates keep the answer."""
    rng = np.random.default_rng(7)
    X = 1e6 + rng.normal(0.0, 1e-3, size=(600, 16))
    D = pdist(X)
    best = posenc.closest_pair(X)
    assert best["distance"] == pytest.approx(D.min(), rel=1e-12, abs=0.0)
    assert np.linalg.norm(X[best["i"]] - X[best["j"]]) == best["distance"]
    eps = float(np.median(D))
    assert posenc.count_close_pairs(X, eps) == int(np.sum(D <= eps))


def test_gram_path_breaks_ties_by_the_smallest_index():
    X = np.array([[0.0, 0.0], [5.0, 5.0], [1.0, 0.0], [9.0, 9.0], [6.0, 5.0], [0.0, 1.0]])
    assert posenc.closest_pair(X) == {"distance": 1.0, "i": 0, "j": 2}


def test_closest_pair_small_cases():
    assert posenc.closest_pair([[0.0], [3.0], [1.0]]) == {"distance": 1.0, "i": 0, "j": 2}
    dup = posenc.closest_pair(np.zeros((3, 2)))
    assert dup["distance"] == 0.0 and dup["i"] < dup["j"]
    assert posenc.count_close_pairs(np.zeros((4, 2)), 0.0) == 6
    with pytest.raises(ValueError, match="at least 2"):
        posenc.closest_pair([[1.0, 2.0]])


# ----------------------------------------------------------------------------- collisions

def test_single_sine_collisions_are_near_but_not_exact():
    n = 1000
    out = posenc.collisions("single_sine", n, 1)
    s = np.sin(np.arange(n))
    order = np.sort(s)
    assert out["n"] == n
    assert out["distance"] > 0.0  # no two integer positions share sin exactly ...
    assert out["distance"] == pytest.approx(np.min(np.diff(order)), rel=1e-12)  # ... but nearly
    assert out["distance"] < 1e-6
    assert abs(s[out["i"]] - s[out["j"]]) == pytest.approx(out["distance"], rel=1e-12)
    assert out["pairs_within_eps"] == int(np.sum(pdist(s[:, None]) <= out["eps"]))
    assert out["pairs_within_eps"] > 1000


def test_single_sine_first_return_is_position_22():
    # the article "Positional Embeddings: Why Attention Needs Order": sin(t) = sin(t + 2 pi k); the first integer within 0.01 of position 0
    # is 22 (22 = 7 * pi - 0.0089; sin(22) = -0.00885)
    out = posenc.first_return("single_sine", 1, eps=0.01)
    assert out["position"] == 22
    assert out["distance"] == pytest.approx(abs(math.sin(22)), rel=1e-12)
    assert math.sin(22) == pytest.approx(-0.00885, abs=5e-6)
    assert all(abs(math.sin(p)) > 0.01 for p in range(1, 22))
    assert posenc.first_return("single_sine", 1, eps=1e-9, limit=1000)["position"] is None


def test_sincos_pair_closest_pair_over_10k_positions():
    n = 10**4
    out = posenc.collisions("sincos_pair", n, 2)
    # points on the unit circle: |P(i) - P(j)| = 2 |sin((j - i) / 2)|, minimised over the gaps
    gaps = np.arange(1, n)
    chord = 2 * np.abs(np.sin(gaps / 2.0))
    assert out["distance"] == pytest.approx(chord.min(), rel=1e-6)
    assert out["j"] - out["i"] == gaps[np.argmin(chord)] == 710  # 355/113 ~ pi
    assert 0 < out["distance"] < 1e-4


def test_sinusoid_d16_has_no_collision():
    n = 10**4
    out = posenc.collisions("sinusoidal", n, 16)  # eps = 0.01
    w = posenc.sinusoid_frequencies(16)
    adjacent = math.sqrt(np.sum(2 - 2 * np.cos(w)))  # |PE(p+1) - PE(p)|, the same for every p
    assert out["distance"] > 1.0  # the margin: every pair of distinct positions is > 1 apart
    assert out["distance"] == pytest.approx(adjacent, rel=1e-9)
    assert out["j"] - out["i"] == 1
    assert out["pairs_within_eps"] == 0


# ----------------------------------------------------------------------------- growth and length

def test_growth_raw_index_vs_sinusoid():
    g = posenc.growth("raw_index", [0, 10, 10**6], 4)
    np.testing.assert_array_equal(g["max_abs"], [0.0, 10.0, 1e6])
    np.testing.assert_allclose(g["norm"], [0.0, 20.0, 2e6])
    assert g["defined"].all()
    assert g["token_norm"] == pytest.approx(0.02 * 2)
    s = posenc.growth("sinusoidal", np.concatenate([np.arange(100), [10**5, 10**6]]), 64)
    assert np.all(s["max_abs"] <= 1.0) and s["max_abs"][0] == 1.0
    np.testing.assert_allclose(s["norm"], math.sqrt(32), rtol=1e-13)


def test_growth_learned_table_ends():
    g = posenc.growth("learned_minilm", [0, 511, 512, 10**6], 384)
    assert g["defined"].tolist() == [True, True, False, False]
    assert np.all(np.isfinite(g["norm"][:2])) and np.all(np.isnan(g["norm"][2:]))


def test_index_over_length_depends_on_length_sinusoid_does_not():
    # the article "Positional Embeddings: Why Attention Needs Order": "Hello world" (L = 2) gives the first token 1/2; "Cat sat on table" (L = 4) 1/4
    out = posenc.length_dependence("index_over_length", 0, [2, 4], 4)
    assert out["max_change"] == 0.25
    np.testing.assert_array_equal(out["signatures"], [[0.5] * 4, [0.25] * 4])
    assert out["lengths"].tolist() == [2, 4]
    assert posenc.length_dependence("sinusoidal", 0, [2, 4], 4)["max_change"] == 0.0
    assert posenc.length_dependence("rope", 3, [4, 100, 10**5], 8)["max_change"] == 0.0
    dyn = posenc.length_dependence("rope_dynamic", 3, [4, 100, 10**5], 8, original_max_position_embeddings=64)
    assert dyn["max_change"] > 1e-3  # dynamic NTK rescales with the current length
    with pytest.raises(ValueError, match="lengths"):
        posenc.length_dependence("index_over_length", 4, [2, 8], 4)


def test_frequency_spectrum():
    sp = posenc.frequency_spectrum("rope_linear", 16, context=100, factor=4.0)
    np.testing.assert_allclose(sp["scale"], 0.25)
    np.testing.assert_allclose(sp["wavelength"], 2 * np.pi / sp["omega"])
    assert sp["full_turn"].tolist() == (sp["wavelength"] <= 100).tolist()
    s2 = posenc.frequency_spectrum("sinusoidal", 8, context=10)
    np.testing.assert_allclose(s2["omega"], posenc.sinusoid_frequencies(8))
    assert s2["attention_factor"] == 1.0
    assert posenc.frequency_spectrum("rope_yarn", 16, context=10, factor=4.0)["attention_factor"] == pytest.approx(1.1386294361)


# ----------------------------------------------------------------------------- permutation equivariance

def test_attention_without_position_is_exactly_permutation_equivariant():
    out = posenc.permutation_equivariance(SENT_A, SENT_B)
    assert out["tokens_a"] == ["the", "dog", "bit", "the", "man", "."]
    assert out["tokens_b"] == ["the", "man", "bit", "the", "dog", "."]
    assert out["same_bag"] is True
    perm = out["permutation"]
    assert sorted(perm) == list(range(6))
    assert [out["tokens_a"][p] for p in perm] == out["tokens_b"]
    assert perm == [0, 4, 2, 3, 1, 5]
    assert out["max_diff_permuted"] == 0.0  # exact: math.fsum everywhere
    assert out["max_diff_pooled"] == 0.0
    assert out["max_diff_logits"] == 0.0
    assert out["out_a"].shape == out["out_b"].shape == (6, 16)
    assert not np.array_equal(out["out_a"], out["out_b"])  # the rows really moved


@pytest.mark.parametrize("key", list(posenc.SCHEMES))
def test_every_scheme_breaks_the_bag(key):
    out = posenc.permutation_equivariance(SENT_A, SENT_B, scheme=key)
    assert out["same_bag"] is True
    assert out["max_diff_pooled"] > 1e-6  # NoPE too: through its causal mask
    assert out["max_diff_permuted"] > 1e-6
    assert out["d_model"] == (384 if key == "learned_minilm" else 16)


def test_different_bags_have_no_permutation():
    out = posenc.permutation_equivariance("The dog bit the man.", "A cat sat.")
    assert out["same_bag"] is False
    assert out["permutation"] is None
    assert out["max_diff_permuted"] is None and out["max_diff_logits"] is None
    assert out["max_diff_pooled"] > 1e-6
