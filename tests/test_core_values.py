"""Literal reference values, each with its source.

Sources: the papers (arXiv ids) and the reference code named per test -- Hugging Face
transformers (values obtained by running it), Meta's llama-models, the ALiBi authors' get_slopes --
and the three articles the dashboard's story follows: "Positional Embeddings: Why Attention Needs
Order" (the naive attempts), "Positional Encoding in Transformers" (the comparison table) and
"What are Positional Embeddings?" ("Hello World" at d = 4).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc
from posenc.schemes import scaling as rope
from posenc.schemes.scaling import llama3_bands, yarn_correction_dim, yarn_ramp

# ----------------------------------------------------------------------------- sinusoid


def test_seed_hello_world_vectors_d4():
    # the article "What are Positional Embeddings?", "Hello World to the Rescue": d = 4, "Hello" at position 0, "World" at position 1
    pe = posenc.sinusoidal([0, 1], 4)
    assert np.round(pe, 3).tolist() == [[0.0, 1.0, 0.0, 1.0], [0.841, 0.540, 0.010, 1.000]]
    # the article "What are Positional Embeddings?", "Combining Word and Position Information": the hypothetical word embeddings
    words = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]])
    combined = np.round(words + pe, 3)
    np.testing.assert_array_equal(combined, [[0.1, 1.2, 0.3, 1.4], [1.341, 1.140, 0.710, 1.800]])


def test_schemes_md_sinusoid_d4():
    # Vaswani et al. 2017 §3.5; HF DistilBERT _create_sinusoidal_embeddings, run
    pe = posenc.sinusoidal([0, 1, 2], 4)
    np.testing.assert_array_equal(pe[0], [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(pe[1], [0.84147098, 0.54030231, 0.00999983, 0.99995000], atol=6e-9)
    np.testing.assert_allclose(pe[2], [0.90929743, -0.41614684, 0.01999867, 0.99980001], atol=6e-9)


def test_schemes_md_sinusoid_d512():
    # Vaswani et al. 2017 §3.5 at d = 512, pos = 1 (HF DistilBERT, run)
    pe = posenc.sinusoidal([1], 512)[0]
    np.testing.assert_allclose(pe[:6], [0.84147098, 0.54030231, 0.82185619, 0.56969501, 0.80196180, 0.59737533], atol=6e-9)
    np.testing.assert_allclose(pe[-2], 1.03663e-4, rtol=5e-6)
    np.testing.assert_allclose(pe[-1], 0.99999999, atol=6e-9)
    # "||PE(p)|| = 16 for all p"
    norms = np.linalg.norm(posenc.sinusoidal([0, 1, 7, 123.5, 1e5, -42], 512), axis=1)
    np.testing.assert_allclose(norms, 16.0, rtol=1e-13)


def test_schemes_md_sinusoid_odd_d_lone_sine():
    # Vaswani et al. 2017, arXiv:1706.03762 §3.5 "Odd d": d = 5, pos = 1, last column 6.30957e-4 (= sin(1 / 10000^(4/5)))
    pe = posenc.sinusoidal([1], 5)[0]
    np.testing.assert_allclose(pe[-1], 6.30957e-4, rtol=1e-5)
    assert pe[-1] == pytest.approx(math.sin(10000 ** (-4 / 5)), rel=1e-15)
    for layout in ("interleaved", "concatenated"):
        assert posenc.sinusoidal([0, 1, 2], 5, layout=layout).shape == (3, 5)


def test_schemes_md_wavelengths():
    # Vaswani et al. 2017, arXiv:1706.03762 §3.5 / §8.3: from 2 pi up to 2 pi 10000^((d-2)/d) = 60611.48 at d = 512 (limit 62831.85)
    wl = posenc.sinusoid_wavelengths(512)
    assert wl.shape == (256,)
    assert wl[0] == pytest.approx(2 * math.pi, rel=1e-15)
    assert wl[-1] == pytest.approx(60611.48, abs=0.01)
    assert wl.max() < 62831.85
    assert np.all(np.diff(wl) > 0)


def test_schemes_md_dot_product_profile_d8_k5():
    # Vaswani et al. 2017, arXiv:1706.03762 §3.5: the shift property: PE(p) . PE(p + k) = sum_i cos(k w_i); for d = 8, k = 5 this is 3.15998251
    for p in (0.0, 1.0, 17.0, 250.5, 1e4):
        a, b = posenc.sinusoidal([p, p + 5], 8)
        assert a @ b == pytest.approx(3.15998251, abs=6e-9)


# ----------------------------------------------------------------------------- ALiBi

def test_alibi_slopes_8_and_12_heads():
    # Press et al., arXiv:2108.12409 get_slopes: n = 8 gives m = 2^-1 .. 2^-8; n = 12 appends 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    np.testing.assert_array_equal(posenc.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    s12 = posenc.alibi_slopes(12)
    np.testing.assert_array_equal(s12[:8], 2.0 ** -np.arange(1, 9))
    np.testing.assert_allclose(s12[8:], [0.70711, 0.35355, 0.17678, 0.08839], atol=5e-6)
    np.testing.assert_allclose(s12[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-15)


# ALiBi get_slopes (arXiv:2108.12409), table of -log2(m) per head count (recomputed there from get_slopes)
ALIBI_NEG_LOG2 = {
    1: [8],
    2: [4, 8],
    3: [4, 8, 2],
    4: [2, 4, 6, 8],
    5: [2, 4, 6, 8, 1],
    6: [2, 4, 6, 8, 1, 3],
    7: [2, 4, 6, 8, 1, 3, 5],
    8: list(range(1, 9)),
    12: list(range(1, 9)) + [0.5, 1.5, 2.5, 3.5],
    16: [0.5 * k for k in range(1, 17)],
    20: [0.5 * k for k in range(1, 17)] + [0.25, 0.75, 1.25, 1.75],
    24: [0.5 * k for k in range(1, 17)] + [0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75],
}


@pytest.mark.parametrize("H", sorted(ALIBI_NEG_LOG2))
def test_alibi_neg_log2_table(H):
    np.testing.assert_allclose(-np.log2(posenc.alibi_slopes(H)), ALIBI_NEG_LOG2[H], rtol=0, atol=1e-12)


def test_alibi_causal_row_example():
    # ALiBi get_slopes (arXiv:2108.12409): m = 1/16, L = 4: row 3 = [-0.1875, -0.125, -0.0625, 0].  At H = 4 the slopes
    # are 2^-2, 2^-4, 2^-6, 2^-8, so m = 1/16 is head 1.
    slopes = posenc.alibi_slopes(4)
    np.testing.assert_array_equal(slopes, [0.25, 0.0625, 0.015625, 0.00390625])
    head = int(np.flatnonzero(slopes == 1 / 16)[0])
    assert head == 1
    B = posenc.alibi_bias(4, 4)
    np.testing.assert_array_equal(B[head, 3], [-0.1875, -0.125, -0.0625, 0.0])
    np.testing.assert_array_equal(posenc.bias("alibi", 4, 4)[head, 3], [-0.1875, -0.125, -0.0625, 0.0])
    assert np.all(np.isneginf(B[head, 0, 1:]))


# ----------------------------------------------------------------------------- T5

# HF T5 bucket function, run, "Exact outputs (default 32/128, from running HF)"
T5_REL = [-1000, -200, -129, -128, -127, -100, -64, -50, -32, -31, -20, -16, -15, -12, -11, -10, -9, -8, -7, -5, -2, -1,
          0, 1, 2, 5, 7, 8, 9, 11, 12, 15, 16, 20, 31, 32, 50, 64, 100, 127, 128, 1000]
T5_BIDIRECTIONAL = [15, 15, 15, 15, 15, 15, 14, 13, 12, 11, 10, 10, 9, 9, 8, 8, 8, 8, 7, 5, 2, 1,
                    0, 17, 18, 21, 23, 24, 24, 24, 25, 25, 26, 26, 27, 28, 29, 30, 31, 31, 31, 31]
T5_CAUSAL = [31, 31, 31, 31, 31, 30, 26, 24, 21, 21, 17, 16, 15, 12, 11, 10, 9, 8, 7, 5, 2, 1,
             0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]


def test_t5_bucket_table_both_rows():
    assert len(T5_REL) == len(T5_BIDIRECTIONAL) == len(T5_CAUSAL) == 42
    b = posenc.t5_bucket(T5_REL)
    assert b.dtype == np.int64
    assert b.tolist() == T5_BIDIRECTIONAL
    assert posenc.t5_bucket(T5_REL, bidirectional=False).tolist() == T5_CAUSAL
    # HF T5Attention._relative_position_bucket, run: spot checks
    assert posenc.t5_bucket([-1, 1, -128, 128]).tolist() == [1, 17, 15, 31]
    assert posenc.t5_bucket([-16, -113], bidirectional=False).tolist() == [16, 31]


def test_t5_bucket_boundaries():
    # HF T5 bucket function, run "Bucket boundaries (bidirectional)": |rel| ranges per bucket (negative side)
    ranges = {8: (8, 11), 9: (12, 15), 10: (16, 22), 11: (23, 31), 12: (32, 45), 13: (46, 63), 14: (64, 90), 15: (91, 5000)}
    for bucket, (lo, hi) in ranges.items():
        rel = -np.arange(lo, hi + 1)
        assert set(posenc.t5_bucket(rel).tolist()) == {bucket}
        assert set(posenc.t5_bucket(-rel).tolist()) == {16 + bucket}
    assert posenc.t5_bucket(-np.arange(8)).tolist() == list(range(8))
    assert 16 not in posenc.t5_bucket(np.arange(-300, 301)).tolist()  # "bucket 16 is never produced"


def test_t5_five_by_five_matrices():
    # HF T5 bucket function, run "5x5 matrices" (rows are queries i, columns keys j)
    bi = [[0, 17, 18, 19, 20], [1, 0, 17, 18, 19], [2, 1, 0, 17, 18], [3, 2, 1, 0, 17], [4, 3, 2, 1, 0]]
    assert posenc.t5_bucket_matrix(5).tolist() == bi
    causal = posenc.t5_bucket_matrix(5, bidirectional=False)
    i, j = np.indices((5, 5))
    np.testing.assert_array_equal(causal, np.where(j <= i, i - j, 0))  # lower triangle i - j, upper 0
    np.testing.assert_array_equal(posenc.bias("t5", 5, 3)[2], np.asarray(bi, dtype=float))


def test_t5_nondefault_example():
    # HF T5 bucket function, run: num_buckets = 8, max_distance = 20, bidirectional, rel = -30..30 step 3
    got = posenc.t5_bucket(np.arange(-30, 31, 3), num_buckets=8, max_distance=20)
    assert got.tolist() == [3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 0, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7]


# ----------------------------------------------------------------------------- RoPE

def test_rope_test_vector_both_layouts():
    # HF transformers apply_rotary_pos_emb and GPT-J rotate_every_two, run: d = 8, base 1e4, x = [1..8], position 3 (from running HF / GPT-J)
    inv, af = posenc.rope_frequencies(8)
    np.testing.assert_allclose(inv, [1, 0.1, 0.01, 0.001], rtol=1e-15)
    assert af == 1.0
    x = np.arange(1.0, 9.0)[None, :]  # (n=1, d=8); HF ran in float32, hence atol 1e-6 below
    neox = posenc.apply_rope(x, [3], inv, layout="half_split")[0]
    gptj = posenc.apply_rope(x, [3], inv, layout="interleaved")[0]
    np.testing.assert_allclose(neox, [-1.69559252, 0.13755167, 2.78868151, 3.97598219, -4.80884266, 6.32305956, 7.08683681, 8.01196384], atol=1e-6)
    np.testing.assert_allclose(gptj, [-1.27223253, -1.83886504, 1.68392861, 4.70790672, 4.81777716, 6.14727783, 6.97596836, 8.02096462], atol=1e-6)
    # "Check by hand": x0' = 1 cos3 - 5 sin3 (NeoX), 1 cos3 - 2 sin3 (GPT-J)
    assert neox[0] == pytest.approx(math.cos(3) - 5 * math.sin(3), abs=1e-15)
    assert gptj[0] == pytest.approx(math.cos(3) - 2 * math.sin(3), abs=1e-15)


def test_rope_decay_bound_table_d128():
    # RoFormer, arXiv:2104.09864 §3.4.3, the bound computed, values for d = 128 (bound = mean(1..64) = 32.5 at distance 0)
    dist = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
    bound = [32.5, 31.538, 28.956, 20.845, 17.954, 15.242, 12.629, 10.227, 7.245, 6.190, 4.471, 5.047, 7.596]
    got = posenc.rope_decay_bound(dist, 128)
    assert got[0] == 32.5
    np.testing.assert_allclose(got, bound, atol=5.1e-4)
    assert got[-1] > got[-2] > got[-3]  # "not monotone at long range"


def test_schemes_md_extra_rope_numbers():
    # default RoPE frequencies, HF LlamaRotaryEmbedding (run)
    th = posenc.default_inv_freq(128)
    assert th[1] == pytest.approx(0.86596432, abs=6e-9)
    assert th[63] == pytest.approx(1.15478e-4, rel=5e-6)
    assert 2 * math.pi / th[63] == pytest.approx(54410.1, abs=0.06)
    th5 = posenc.default_inv_freq(128, 5e5)
    assert th5[63] == pytest.approx(2.45514e-6, rel=5e-6)
    assert 2 * math.pi / th5[63] == pytest.approx(2.5592e6, rel=5e-5)


def test_linear_and_dynamic_values_d16():
    # HF modeling_rope_utils, run (d = 16, base 1e4): default inv_freq, linear factor 4, dynamic
    default = [1, 0.31622777, 0.1, 0.031622777, 0.01, 0.0031622777, 0.001, 0.00031622777]
    np.testing.assert_allclose(posenc.rope_frequencies(16)[0], default, rtol=2e-8)
    lin, af = posenc.rope_frequencies(16, scaling={"rope_type": "linear", "factor": 4})
    assert af == 1.0 and lin[0] == 0.25
    np.testing.assert_allclose(lin[[1, -1]], [0.0790569, 7.90569e-05], rtol=6e-7)
    dyn = {"rope_type": "dynamic", "factor": 2, "original_max_position_embeddings": 2048}
    np.testing.assert_allclose(posenc.rope_frequencies(16, scaling=dyn, seq_len=2048)[0], default, rtol=2e-8)
    got = posenc.rope_frequencies(16, scaling=dyn, seq_len=4096)[0]
    np.testing.assert_allclose(got, [1, 0.27029613, 0.073060, 0.019747833, 0.0053377627, 0.0014427766, 3.8997692e-4, 1.0540926e-4], rtol=2e-7)
    assert got[1] ** -8 == pytest.approx(35097.92, abs=0.01)  # base' = 1e4 3^(8/7)
    assert posenc.rope_frequencies(16, scaling=dyn, seq_len=8192)[0][1] ** -8 == pytest.approx(92432.85, abs=0.01)


def test_ntk_aware_by_formula_and_values():
    # NTK-aware (bloc97): base * s^(d/(d-2)) (bloc97; no HF v5 key): base' = base s^(d/(d-2)); d=128,s=4 -> 40889.94;
    # d=16,s=4 -> 48760.55; highest frequency unchanged, lowest divided by exactly s
    for d, expected in ((128, 40889.94), (16, 48760.55)):
        inv, af = posenc.rope_frequencies(d, scaling={"rope_type": "ntk", "factor": 4.0})
        assert af == 1.0
        base_prime = inv[1] ** (-d / 2)
        assert base_prime == pytest.approx(expected, abs=0.01)
        assert base_prime == pytest.approx(1e4 * 4 ** (d / (d - 2)), rel=1e-12)
        default = posenc.default_inv_freq(d)
        assert inv[0] == default[0] == 1.0
        assert inv[-1] == pytest.approx(default[-1] / 4, rel=1e-12)
        assert np.all(inv[1:] < default[1:])
        inv_s, _ = posenc.rope_for("rope_ntk", d, factor=4.0)
        np.testing.assert_array_equal(inv_s, inv)


def test_yarn_values_d16_and_attention_factor():
    # HF transformers modeling_rope_utils, _compute_yarn_parameters, run: d = 16, s = 4, orig = 2048
    sc = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}
    assert yarn_correction_dim(32, 16, 1e4, 2048) == pytest.approx(2.0160, abs=5e-5)
    assert yarn_correction_dim(1, 16, 1e4, 2048) == pytest.approx(5.0263, abs=5e-5)
    ramp = yarn_ramp(16, 1e4, sc)
    assert (ramp["low"], ramp["high"]) == (2, 6)
    inv, af = posenc.rope_frequencies(16, scaling=sc)
    np.testing.assert_allclose(inv, [1, 0.31622776, 0.1, 0.025693506, 0.00625, 0.0013834966, 2.5e-4, 7.90569e-5], rtol=1e-6)
    assert af == pytest.approx(1.1386294361, abs=1e-10)
    inv_nt, _ = posenc.rope_frequencies(16, scaling={**sc, "truncate": False})
    np.testing.assert_allclose(inv_nt, [1, 0.316228, 0.1, 0.023870196, 0.0050569717, 8.1129046e-4, 2.5e-4, 7.90569e-5], rtol=1e-6)
    big = yarn_ramp(128, 1e4, {"original_max_position_embeddings": 4096})
    assert (big["low"], big["high"]) == (20, 46)  # d = 128, s = 4, orig = 4096


@pytest.mark.parametrize("s", [1.0, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 128.0])
def test_yarn_attention_factor_formula(s):
    # HF transformers modeling_rope_utils, _compute_yarn_parameters, run: attention_factor = 0.1 ln(s) + 1 (1 when s <= 1)
    expected = 0.1 * math.log(s) + 1.0
    _, af = posenc.rope_for("rope_yarn", 64, factor=s)
    assert af == pytest.approx(expected, rel=1e-15)
    _, af2 = posenc.rope_frequencies(64, scaling={"rope_type": "yarn", "factor": s, "original_max_position_embeddings": 4096})
    assert af2 == pytest.approx(expected, rel=1e-15)


def test_longrope_values():
    # HF transformers modeling_rope_utils, longrope, run: d = 8, orig = 4096, max_pos = 131072 (factor 32): long [1,2,4,8]
    sc = {"rope_type": "longrope", "original_max_position_embeddings": 4096, "factor": 32.0,
          "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 4, 8]}
    short, af = posenc.rope_frequencies(8, scaling=sc, seq_len=4096)
    np.testing.assert_allclose(short, posenc.default_inv_freq(8), rtol=1e-15)
    long, af_long = posenc.rope_frequencies(8, scaling=sc, seq_len=4097)
    np.testing.assert_allclose(long, [1, 0.05, 0.0025, 1.25e-4], rtol=1e-14)
    assert af == af_long == pytest.approx(1.19023807, abs=6e-9)


def test_llama3_bands_d128_base5e5():
    # Meta llama-models apply_scaling == HF _compute_llama3_parameters, run: 29 pairs kept, 6 smoothed (indices 29-34) with theta/theta' = 1.2075,
    # 1.5534, 2.0263, 2.6945, 3.6843, 5.2573, and 29 divided by 8
    sc = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
    bands = llama3_bands(128, 5e5, sc)
    assert bands.shape == (64,)
    assert np.bincount(bands).tolist() == [29, 6, 29]
    assert np.flatnonzero(bands == 1).tolist() == [29, 30, 31, 32, 33, 34]
    assert np.all(bands[:29] == 0) and np.all(bands[35:] == 2)
    inv, af = posenc.rope_frequencies(128, base=5e5, scaling=sc)
    assert af == 1.0
    ratio = posenc.default_inv_freq(128, 5e5) / inv
    np.testing.assert_array_equal(ratio[bands == 0], 1.0)
    np.testing.assert_allclose(ratio[bands == 1], [1.2075, 1.5534, 2.0263, 2.6945, 3.6843, 5.2573], atol=5.1e-5)
    np.testing.assert_allclose(ratio[bands == 2], 8.0, rtol=1e-15)
    inv_s, _ = posenc.rope_for("rope_llama3", 128)  # the registry defaults are Llama 3.1's
    np.testing.assert_array_equal(inv_s, inv)


def test_rope_scaling_block_of_each_rotary_scheme():
    assert posenc.registry.rope_scaling("rope") is None
    lin = posenc.registry.rope_scaling("rope_linear")
    assert lin == {"rope_type": "linear", "factor": 4.0, "original_max_position_embeddings": 2048}
    assert set(rope.ROPE_TYPES) >= {v["rope_type"] for k in ("rope_linear", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_llama3")
                                     for v in [posenc.registry.rope_scaling(k)]}


# ----------------------------------------------------------------------------- FIRE, Kerple, p-RoPE, randomized positions

def test_fire_bias_by_hand_with_the_reference_formula():
    # Li et al. 2023 (arXiv:2310.04418), appendix code: b = mlp(log(|c (i - j)| + 1) / (log(|c max(i, L)| + 1) + 1e-6)),
    # mlp = Linear(1, w) -> ReLU -> Linear(w, H).  One hidden unit, one head, weights set by hand:
    from posenc.schemes.fire import fire_inputs, fire_mlp

    w = {"w1": np.array([2.0]), "b1": np.array([-0.1]), "w2": np.array([[3.0]]), "b2": np.array([0.5])}
    x = fire_inputs([10.0, 1000.0], [0.0], c=0.1, threshold=512.0)  # (2, 1): queries 10 and 1000, key 0
    below = math.log(2.0) / (math.log(52.2) + 1e-6)  # |0.1 * 10| + 1 = 2; |0.1 * max(10, 512)| + 1 = 52.2
    past = math.log(101.0) / (math.log(101.0) + 1e-6)  # past the threshold the normaliser is the query's own position
    np.testing.assert_allclose(x[:, 0], [below, past], rtol=1e-15)
    np.testing.assert_allclose(fire_mlp(x, **w)[0, :, 0], [3 * max(2 * below - 0.1, 0) + 0.5, 3 * max(2 * past - 0.1, 0) + 0.5],
                               rtol=1e-15)
    assert fire_mlp(x, **w)[0, 0, 0] == pytest.approx(1.2515285, abs=1e-7)  # 3 (2 ln 2 / ln 52.2 - 0.1) + 0.5


def test_fire_initialisation_is_the_authors():
    # FIRE(num_heads, mlp_width=32, init_c=0.1, init_L=512.): nn.Linear's default init U(-1/sqrt(fan_in), +) for weights and
    # biases; the registry's defaults are c 0.1, L 512, width 32
    from posenc.schemes.fire import fire_mlp_init

    s = posenc.SCHEMES["fire"].validate_params()
    assert (s["c"], s["threshold"], s["mlp_width"]) == (0.1, 512.0, 32)
    w = fire_mlp_init(8, 32, np.random.default_rng(0))
    assert {k: v.shape for k, v in w.items()} == {"w1": (32,), "b1": (32,), "w2": (32, 8), "b2": (8,)}
    assert np.abs(w["w1"]).max() <= 1 and np.abs(w["w2"]).max() <= 1 / math.sqrt(32)
    trained = posenc.SCHEMES["fire"].behaviour.trainable.init(np.random.default_rng(0), 8, **s)
    assert float(trained["c"]) == 0.1 and float(trained["L_multiplier"]) == 1.0


def test_kerple_log_kernel_values():
    # Chi et al. 2022 (arXiv:2205.09921), the logarithmic kernel -r1 log(1 + r2 |m - n|); chijames/KERPLE ParallelKerpleLog
    B = posenc.SCHEMES["kerple"].bias([0.0, 1.0, 4.0], [0.0], 2, r1=2.0, r2=0.5)  # (2, 3, 1)
    np.testing.assert_allclose(B[:, :, 0], [[0.0, -2 * math.log(1.5), -2 * math.log(3.0)]] * 2, rtol=1e-15)
    assert posenc.SCHEMES["kerple"].bias([1.0], [0.0], 1, r1=1.0, r2=1.0)[0, 0, 0] == pytest.approx(-0.6931471805599453, rel=1e-15)
    # the reference init: bias_p = rand(H) * 2, bias_a = rand(H) * 1, clamped at 0.01 before use
    w = posenc.SCHEMES["kerple"].behaviour.trainable.init(np.random.default_rng(0), 12, r1=1.0, r2=0.5)
    assert 0 <= w["r1"].min() and w["r1"].max() <= 2 and 0 <= w["r2"].min() and w["r2"].max() <= 1


@pytest.mark.parametrize(("p", "expected"), [(0.75, [1.0, 0.1, 0.01, 0.0]), (0.5, [1.0, 0.1, 0.0, 0.0]), (1.0, [1.0, 0.1, 0.01, 0.001])])
def test_p_rope_keeps_the_fastest_p_of_the_pairs(p, expected):
    # Barbero et al. 2024 (arXiv:2410.06205): p-RoPE rotates the highest frequencies and removes the lowest (1 - p) share;
    # HF _compute_proportional_rope_parameters: int(p * d // 2) pairs at base^(-2k/d), theta = 0 for the rest (d = 8)
    inv, af = posenc.rope_for("p_rope", 8, p=p)
    np.testing.assert_allclose(inv, expected, rtol=1e-15)
    assert af == 1.0
    assert posenc.registry.rope_scaling("p_rope", p=p) == {"rope_type": "proportional", "partial_rotary_factor": p}
    same = posenc.rope_frequencies(8, scaling={"rope_type": "proportional", "partial_rotary_factor": p})[0]
    np.testing.assert_array_equal(inv, same)  # the registry's 'proportional' rope_type is the same rotation


def test_randomized_positions_are_a_sorted_subset_and_rope_when_the_range_is_the_length():
    # Ruoss et al. 2023 (arXiv:2305.16843); google-deepmind/randomized_positional_encodings noisy_fixed_positional_encodings:
    # choice(arange(noise_max_length), (n,), replace=False), sorted
    from posenc.schemes.rotary import randomized_map, randomized_positions

    s = randomized_positions(16, 1000, np.random.default_rng(3))
    assert s.size == 16 and np.all(np.diff(s) > 0) and s.min() >= 0 and s.max() < 1000 and np.all(s == np.round(s))
    np.testing.assert_array_equal(randomized_map(np.arange(64), 64, 64, 5), np.arange(64))  # N = n: the only subset
    q = np.random.default_rng(0).standard_normal((64, 16))
    got = posenc.SCHEMES["rope_randomized"].qk(q, None, np.arange(64), max_len=64)[0]
    np.testing.assert_allclose(got, posenc.SCHEMES["rope"].qk(q, None, np.arange(64), layout="half_split")[0], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="max_len >= 100"):
        posenc.SCHEMES["rope_randomized"].qk(q[:1], None, [99], max_len=64)
