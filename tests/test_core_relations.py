"""Relations the schemes must satisfy: relative-position identities, scaling equivalences,
layout permutations, the sinusoid's shift operator, and score-matrix constructions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import posenc
from posenc.analysis.scores import toeplitz_from_profile
from posenc.schemes.rotary import pair_permutation

ROTARY = [k for k, s in posenc.SCHEMES.items() if s.kind == "rotary" and s.offset_only(64)]  # randomized positions: not relative
RNG = np.random.default_rng(20240607)


# ----------------------------------------------------------------------------- RoPE

@pytest.mark.parametrize("layout", ["half_split", "interleaved"])
@pytest.mark.parametrize("key", ROTARY)
def test_rope_score_depends_only_on_offset(key, layout):
    d = 64
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    inv, af = posenc.rope_for(key, d, layout=layout)
    scores = []
    for m, n in ((5, 2), (105, 102), (1005, 1002)):  # RoFormer, arXiv:2104.09864; HF LlamaRotaryEmbedding, run (checked against HF with d = 64)
        rq = posenc.apply_rope(q[None], [m], inv, layout=layout, attention_factor=af)[0]
        rk = posenc.apply_rope(k[None], [n], inv, layout=layout, attention_factor=af)[0]
        scores.append(rq @ rk)
    np.testing.assert_allclose(scores, scores[0], rtol=0, atol=1e-11)
    # and rope_offset_scores gives it in closed form: key at query + offset, offset = n - m = -3
    closed = posenc.rope_offset_scores([-3], inv, q, k, layout=layout, attention_factor=af)
    assert closed.shape == (1,)
    assert closed[0] == pytest.approx(scores[0], abs=1e-11)
    assert abs(scores[0]) > 1e-3  # a real number, not a vacuous 0 == 0


@pytest.mark.parametrize("layout", ["half_split", "interleaved"])
def test_rope_offset_scores_equal_dense_product(layout):
    d, n = 32, 40
    q, k = RNG.standard_normal(d), RNG.standard_normal(d)
    inv, af = posenc.rope_for("rope_yarn", d, layout=layout, factor=8.0)
    assert af > 1
    pos = np.arange(n)
    Q = posenc.apply_rope(np.broadcast_to(q, (n, d)), pos, inv, layout=layout, attention_factor=af)
    K = posenc.apply_rope(np.broadcast_to(k, (n, d)), pos, inv, layout=layout, attention_factor=af)
    dense = Q @ K.T  # (n, n): query i, key j
    offsets = np.arange(-(n - 1), n)
    prof = posenc.rope_offset_scores(offsets, inv, q, k, layout=layout, attention_factor=af)
    i, j = np.indices((n, n))
    np.testing.assert_allclose(dense, prof[j - i + n - 1], rtol=0, atol=1e-11)


def test_linear_scaling_is_default_at_positions_over_factor():
    d, factor = 32, 4.0
    x = RNG.standard_normal((3, 50, d))
    pos = np.arange(50) * 7.0
    lin, _ = posenc.rope_for("rope_linear", d, factor=factor)
    default, _ = posenc.rope_for("rope", d)
    np.testing.assert_allclose(lin, default / factor, rtol=1e-15)
    a = posenc.apply_rope(x, pos, lin)
    b = posenc.apply_rope(x, pos / factor, default)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert np.max(np.abs(a - posenc.apply_rope(x, pos, default))) > 0.1


def test_dynamic_ntk_is_default_up_to_trained_length():
    d, orig = 64, 2048
    default, _ = posenc.rope_for("rope", d)
    for L in (1, 100, 2047, 2048):
        inv, af = posenc.rope_for("rope_dynamic", d, seq_len=L, factor=4.0, original_max_position_embeddings=orig)
        np.testing.assert_array_equal(inv, default)
        assert af == 1.0
    prev = default
    for L in (2049, 4096, 8192, 32768):
        inv, _ = posenc.rope_for("rope_dynamic", d, seq_len=L, factor=4.0, original_max_position_embeddings=orig)
        assert inv[0] == 1.0  # the fastest pair never changes
        assert np.all(inv[1:] < prev[1:])  # the others slow down as the length grows
        prev = inv


def test_rope_layouts_are_one_map_up_to_pair_permutation():
    P = pair_permutation(8)
    assert P.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    for d in (2, 8, 64):
        P = pair_permutation(d)
        assert sorted(P.tolist()) == list(range(d))
        inv, af = posenc.rope_for("rope_yarn", d) if d >= 4 else posenc.rope_for("rope", d)
        x = RNG.standard_normal((2, 9, d))
        pos = RNG.uniform(-50, 5000, 9)
        inter = posenc.apply_rope(x, pos, inv, layout="interleaved", attention_factor=af)
        half = posenc.apply_rope(x[..., P], pos, inv, layout="half_split", attention_factor=af)
        np.testing.assert_array_equal(inter, half[..., np.argsort(P)])


@pytest.mark.parametrize("key", ROTARY)
def test_apply_rope_position_zero_is_identity_and_norm_preserved(key):
    d = 16
    inv, af = posenc.rope_for(key, d)
    x = RNG.standard_normal((4, d))
    out = posenc.apply_rope(x, [0, 1, 1000, -7.5], inv, attention_factor=af)
    np.testing.assert_allclose(out[0], af * x[0], rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), af * np.linalg.norm(x, axis=1), rtol=1e-13)


# ----------------------------------------------------------------------------- sinusoid

@pytest.mark.parametrize("d", [2, 4, 8, 64, 512, 1000])
def test_sinusoid_squared_norm_is_half_d(d):
    pos = np.concatenate([np.arange(20), RNG.uniform(-1e6, 1e6, 20)])
    pe = posenc.sinusoidal(pos, d)
    np.testing.assert_allclose(np.sum(pe**2, axis=1), d / 2, rtol=1e-13)


SHIFT_CASES = [(d, k) for d in (2, 8, 16, 64) for k in (1, 5, 7.5, -3)] + [(128, 5), (128, -0.5)]


@pytest.mark.parametrize(("d", "k"), SHIFT_CASES)
def test_fitted_shift_operator_is_the_block_rotation(d, k):
    fit = posenc.shift_operator("sinusoidal", k, d)
    assert fit["M"].shape == (d, d)
    assert fit["residual"] < 1e-10
    assert fit["orthogonality"] < 1e-9
    assert fit["off_block"] < 1e-9
    np.testing.assert_allclose(fit["M"], posenc.sinusoid_shift_matrix(k, d), rtol=0, atol=1e-8)


def test_fitted_shift_operator_large_d_and_concatenated_layout():
    fit = posenc.shift_operator("sinusoidal", 100, 256)  # once failed: orthogonality ~1e5 for d >= 128
    assert fit["residual"] < 1e-10 and fit["orthogonality"] < 1e-9 and fit["off_block"] < 1e-9
    assert np.all(np.diff(fit["positions"]) >= 0) and fit["positions"].shape == (4 * 256,)
    P = np.concatenate([np.arange(0, 16, 2), np.arange(1, 16, 2)])
    cat = posenc.shift_operator("sinusoidal", 3, 16, layout="concatenated")
    assert cat["orthogonality"] < 1e-9 and cat["off_block"] < 1e-9
    np.testing.assert_allclose(cat["M"], posenc.sinusoid_shift_matrix(3, 16)[np.ix_(P, P)], atol=1e-8)


def test_learned_table_has_no_shift_rotation():
    fit = posenc.shift_operator("learned_random", 1, 16)
    assert fit["off_block"] > 0.05 and fit["orthogonality"] > 0.05


def test_closed_form_shift_matrix_maps_pe_p_to_pe_p_plus_k():
    d, k = 16, 11.25
    M = posenc.sinusoid_shift_matrix(k, d)
    np.testing.assert_allclose(M @ M.T, np.eye(d), atol=1e-15)
    pos = RNG.uniform(-1000, 1000, 30)
    np.testing.assert_allclose(posenc.sinusoidal(pos, d) @ M.T, posenc.sinusoidal(pos + k, d), atol=1e-12)


@pytest.mark.parametrize("d", [2, 8, 64])
def test_sinusoid_dot_product_is_sum_of_cosines(d):
    w = posenc.sinusoid_frequencies(d)
    for k in (1.0, 5.0, 37.5):
        expected = np.sum(np.cos(k * w))
        for p in (0.0, 3.0, 999.0, -20.0):
            a, b = posenc.sinusoidal([p, p + k], d)
            assert a @ b == pytest.approx(expected, abs=1e-11)


@pytest.mark.parametrize("d", [1, 2, 7, 8, 64])
def test_sinusoid_layouts_are_a_column_permutation(d):
    pos = np.arange(30) * 3.3
    inter = posenc.sinusoidal(pos, d)
    cat = posenc.sinusoidal(pos, d, layout="concatenated")
    h = d // 2
    perm = np.concatenate([np.arange(0, 2 * h, 2), np.arange(1, 2 * h, 2), np.arange(2 * h, d)])
    np.testing.assert_array_equal(cat, inter[:, perm])
    np.testing.assert_allclose(cat @ cat.T, inter @ inter.T, atol=1e-12)  # the same dot products


# ----------------------------------------------------------------------------- score matrices

OFFSET_ONLY = [("sinusoidal", {}), ("sinusoidal", {"layout": "concatenated", "base": 500.0}), ("sincos_pair", {"omega": 0.3})]
OFFSET_ONLY += [(k, {}) for k in ROTARY]
OFFSET_ONLY += [("rope_dynamic", {"original_max_position_embeddings": 16}), ("rope_yarn", {"layout": "interleaved", "factor": 16.0})]


@pytest.mark.parametrize("probe", ["ones", "random"])
@pytest.mark.parametrize(("key", "params"), OFFSET_ONLY)
def test_position_scores_from_profile_equal_dense(key, params, probe):
    n, d = 48, 16
    S = posenc.position_scores(key, n, d=d, probe=probe, **params)
    assert S.shape == (n, n) and not S.flags.writeable  # a read-only Toeplitz view
    dense = posenc.dense_scores(key, n, d=d, probe=probe, **params)
    np.testing.assert_allclose(S, dense, rtol=0, atol=1e-9)
    assert np.ptp(dense) > 0.1
    assert posenc.translation_invariance(S) < 1e-12
    assert posenc.translation_invariance(dense) < 1e-9


def test_cosine_metric_is_the_normalised_dot():
    for key in ("sinusoidal", "sincos_pair"):  # offset-only: the Toeplitz path divides by |PE(p)|^2
        S = np.asarray(posenc.position_scores(key, 20, d=8))
        C = np.asarray(posenc.position_scores(key, 20, d=8, metric="cosine"))
        np.testing.assert_allclose(C, S / S[0, 0], atol=1e-13)
        np.testing.assert_allclose(np.diag(C), 1.0, atol=1e-13)
    S = np.asarray(posenc.position_scores("raw_index", 20, d=8, metric="cosine"))  # dense: from the Gram matrix
    np.testing.assert_allclose(S[1:, 1:], 1.0, atol=1e-13)  # every nonzero t * ones points the same way
    with pytest.raises(ValueError, match="cosine.*rope_yarn.*rotary"):  # a score, not two vectors' angle
        posenc.position_scores("rope_yarn", 20, d=8, metric="cosine")


@pytest.mark.parametrize(("key", "d"), [("raw_index", 16), ("learned_minilm", 384), ("learned_random", 16), ("single_sine", 16)])
def test_absolute_schemes_are_not_translation_invariant(key, d):
    S = posenc.position_scores(key, 64, d=d)
    assert S.flags.writeable  # dense, not a view
    np.testing.assert_allclose(S, posenc.dense_scores(key, 64, d=d), atol=1e-12)
    assert posenc.translation_invariance(S) > 0.1


def test_translation_invariance_constant_and_pure_toeplitz():
    assert posenc.translation_invariance(np.full((5, 5), 3.0)) == 0.0
    assert posenc.translation_invariance(np.outer(np.arange(6.0), np.arange(6.0))) > 0.5


def test_toeplitz_from_profile_is_read_only_and_correct():
    n = 7
    profile = RNG.standard_normal(2 * n - 1)
    S = toeplitz_from_profile(profile)
    assert S.shape == (n, n)
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(S, profile[j - i + n - 1])
    np.testing.assert_array_equal(S, scipy.linalg.toeplitz(profile[n - 1 :: -1], profile[n - 1 :]))
    assert not S.flags.writeable
    with pytest.raises(ValueError):
        S[0, 0] = 1.0
    np.testing.assert_array_equal(S, profile[j - i + n - 1])  # unchanged
    for bad in (np.zeros(4), np.zeros((3, 3))):
        with pytest.raises(ValueError, match="odd length"):
            toeplitz_from_profile(bad)


# ----------------------------------------------------------------------------- biases

def test_symmetric_alibi_is_minus_slope_times_distance():
    n, H = 9, 6
    B = posenc.alibi_bias(n, H, causal=False)
    m = posenc.alibi_slopes(H)
    i, j = np.indices((n, n))
    np.testing.assert_array_equal(B, -m[:, None, None] * np.abs(i - j)[None])
    np.testing.assert_array_equal(posenc.bias("alibi", n, H, causal=False), B)
    causal = posenc.alibi_bias(n, H)
    lower = j <= i
    np.testing.assert_array_equal(causal[:, lower], B[:, lower])
    assert np.all(np.isneginf(causal[:, ~lower]))


def test_nope_is_zero_below_and_minus_inf_above_the_diagonal():
    n = 6
    for B in (posenc.nope_bias(n, 3), posenc.bias("nope", n, 3)):
        assert B.shape == (3, n, n)
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        assert np.all(B[:, ~upper] == 0.0)
        assert np.all(np.isneginf(B[:, upper]))
    np.testing.assert_array_equal(posenc.causal_mask(n), posenc.nope_bias(n)[0])
    assert np.all(posenc.nope_bias(n, 2, causal=False) == 0.0)


def test_t5_bias_uses_the_bucket_of_j_minus_i():
    table = posenc.schemes.relative.t5_random_table(32, 4, seed=3)
    n = 20
    B = posenc.t5_bias(n, table)
    assert B.shape == (4, n, n)
    i, j = np.indices((n, n))
    for h in range(4):
        np.testing.assert_array_equal(B[h], table[posenc.t5_bucket(j - i), h])


def _translation_invariance_by_diagonal(S) -> float:
    """The definition, one diagonal at a time (the loop posenc used until 2026-12-02)."""
    S = np.asarray(S, dtype=np.float64)
    n, within, means, counts = S.shape[0], 0.0, [], []
    for k in range(-(n - 1), n):
        diag = np.diagonal(S, k)
        diag = diag[np.isfinite(diag)]
        if diag.size:
            mean = diag.mean()
            within += float(np.sum((diag - mean) ** 2))
            means.append(mean)
            counts.append(diag.size)
    if not counts:
        return 0.0
    m, c = np.asarray(means), np.asarray(counts, dtype=np.float64)
    grand = float(np.sum(m * c) / c.sum())
    spread = within + float(np.sum(c * (m - grand) ** 2))
    return 0.0 if spread <= 1e-24 * max(1.0, float(np.sum(c * m**2))) else float(np.sqrt(within / spread))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 64, 300])
@pytest.mark.parametrize("case", ["random", "toeplitz+noise", "holes", "all-nan", "masked causal"])
def test_translation_invariance_equals_the_per_diagonal_definition(n, case, monkeypatch):
    from posenc.analysis import scores

    rng = np.random.default_rng(n)
    S = rng.normal(size=(n, n))
    if case == "toeplitz+noise":
        S = np.subtract.outer(np.arange(n), np.arange(n)).astype(float) ** 2 + 1e-6 * S
    elif case == "holes":
        S[rng.random((n, n)) < 0.3] = np.nan
        S[rng.random((n, n)) < 0.05] = -np.inf
    elif case == "all-nan":
        S[:] = np.nan
    elif case == "masked causal":
        S = np.where(np.tri(n, dtype=bool), S, -np.inf)
    want = _translation_invariance_by_diagonal(S)
    assert posenc.translation_invariance(S) == pytest.approx(want, rel=1e-12, abs=1e-15)
    monkeypatch.setattr(scores, "_BLOCK", 7)  # many small blocks of rows: the same answer
    assert posenc.translation_invariance(S) == pytest.approx(want, rel=1e-12, abs=1e-15)
