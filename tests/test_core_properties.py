"""Property tests (hypothesis) for shapes and bounds, and input validation: every public
function answers bad input with ValueError -- never TypeError, KeyError, MemoryError or NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import posenc
from posenc.schemes import scaling as rope
from posenc.schemes.sinusoidal import sinusoidal_direct

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
finite_positions = st.lists(st.floats(-1e12, 1e12, allow_nan=False), min_size=1, max_size=40)


# ----------------------------------------------------------------------------- properties

@SETTINGS
@given(finite_positions, st.integers(1, 256), st.floats(1.0, 1e6, exclude_min=True), st.sampled_from(["interleaved", "concatenated"]))
def test_sinusoidal_bounded_for_any_finite_input(positions, d, base, layout):
    pe = posenc.sinusoidal(positions, d, base=base, layout=layout)
    assert pe.shape == (len(positions), d) and pe.dtype == np.float64
    assert np.all(np.isfinite(pe))
    assert np.all(np.abs(pe) <= 1.0)
    if d % 2 == 0:
        np.testing.assert_allclose(np.sum(pe**2, axis=1), d / 2, rtol=1e-12)


@SETTINGS
@given(
    st.integers(4 * 256, 6000),
    st.sampled_from([1.0, 0.5, 0.25, 2.0, 3.0, 0.125, 7.0]),
    st.integers(-10**6, 10**6),
    st.integers(1, 96),
    st.sampled_from([1.5, 10.0, 1e4, 5e5]),
    st.sampled_from(["interleaved", "concatenated"]),
)
def test_sinusoidal_fast_path_bounded_and_equal_to_direct(n, step, p0, d, base, layout):
    """Evenly spaced positions (n >= 1024) take the angle-addition fast path."""
    pos = p0 * step + step * np.arange(n)
    pe = posenc.sinusoidal(pos, d, base=base, layout=layout)
    assert np.all(np.abs(pe) <= 1.0)  # once 1.0000000000000002 (cos at position 0, d=59, base 10)
    ref = sinusoidal_direct(pos, d, base=base, layout=layout)
    tol = 8 * np.finfo(float).eps * max(1.0, float(np.max(np.abs(pos))))  # a few ulp of the angle
    np.testing.assert_allclose(pe, ref, rtol=0, atol=tol)


def test_sinusoidal_fast_path_regression_case():
    pos = -1982.0 + 0.5 * np.arange(8585)  # evenly spaced, includes position 0 at row 3964
    pe = posenc.sinusoidal(pos, 59, base=10.0)
    assert np.max(np.abs(pe)) == 1.0
    np.testing.assert_allclose(pe[3964], posenc.sinusoidal([0.0], 59, base=10.0)[0], atol=4e-16)


@st.composite
def rope_inputs(draw):
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    n = draw(st.integers(1, 8))
    d = 2 * draw(st.integers(1, 32))
    x = draw(hnp.arrays(np.float64, (*lead, n, d), elements=st.floats(-1e3, 1e3)))
    pos = draw(hnp.arrays(np.float64, (n,), elements=st.floats(-1e6, 1e6)))
    base = draw(st.floats(1.5, 1e6))
    return x, pos, d, base


@SETTINGS
@given(rope_inputs(), st.sampled_from(["half_split", "interleaved"]))
def test_apply_rope_preserves_shape_and_norm(inputs, layout):
    x, pos, d, base = inputs
    inv, af = posenc.rope_frequencies(d, base=base)
    assert af == 1.0
    out = posenc.apply_rope(x, pos, inv, layout=layout)
    assert out.shape == x.shape and out.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12, atol=1e-9)


@st.composite
def t5_config(draw):
    bidirectional = draw(st.booleans())
    nb = draw(st.integers(4 if bidirectional else 2, 256))
    max_exact = (nb // 2 if bidirectional else nb) // 2
    md = draw(st.integers(max_exact + 1, 10**4))
    return bidirectional, nb, md


@SETTINGS
@given(t5_config(), st.lists(st.integers(-10**5, 10**5), min_size=1, max_size=60))
def test_t5_bucket_range_and_sign_halves(cfg, rel):
    bidirectional, nb, md = cfg
    rel = np.asarray(rel)
    b = posenc.t5_bucket(rel, bidirectional=bidirectional, num_buckets=nb, max_distance=md)
    assert b.shape == rel.shape and b.dtype == np.int64
    assert np.all((0 <= b) & (b < nb))
    if bidirectional:
        half = nb // 2
        np.testing.assert_array_equal(b >= half, rel > 0)  # the sign decides the half
        mirror = posenc.t5_bucket(-rel, bidirectional=True, num_buckets=nb, max_distance=md)
        pos = rel > 0
        np.testing.assert_array_equal(b[pos] - half, mirror[pos])  # same distance, other half
    else:
        assert np.all(b[rel >= 0] == 0)  # future keys collapse to bucket 0
    # monotone in distance on the past side
    dist = np.sort(np.abs(rel))
    past = posenc.t5_bucket(-dist, bidirectional=bidirectional, num_buckets=nb, max_distance=md)
    assert np.all(np.diff(past) >= 0)


@SETTINGS
@given(st.integers(1, 1024))
def test_alibi_slopes_shape_and_order(H):
    m = posenc.alibi_slopes(H)
    assert m.shape == (H,) and m.dtype == np.float64
    assert np.all(m > 0) and np.all(m < 1.0)
    c = 1 << (H.bit_length() - 1)  # the power-of-two prefix
    assert np.all(np.diff(m[:c]) < 0)
    np.testing.assert_allclose(m[:c], 2.0 ** (-8.0 * np.arange(1, c + 1) / c), rtol=1e-14)
    assert len(set(m.tolist())) == H  # every head its own slope


# ----------------------------------------------------------------------------- bad input

def _pos_calls():
    """(name, f(positions)) for every public function that takes positions / offsets / distances."""
    inv = posenc.default_inv_freq(8)
    return [
        ("sinusoidal", lambda p: posenc.sinusoidal(p, 8)),
        ("raw_index", lambda p: posenc.raw_index(p, 4)),
        ("index_over_length", lambda p: posenc.index_over_length(p, 4, length=10)),
        ("single_sine", lambda p: posenc.single_sine(p, 4)),
        ("sincos_pair", lambda p: posenc.sincos_pair(p, 4)),
        ("learned_lookup", lambda p: posenc.learned_lookup(np.zeros((10, 2)), p)),
        ("t5_bucket", lambda p: posenc.t5_bucket(p)),
        ("apply_rope", lambda p: posenc.apply_rope(np.ones((len(p), 8)), p, inv)),
        ("rope_offset_scores", lambda p: posenc.rope_offset_scores(p, inv, np.ones(8), np.ones(8))),
        ("rope_decay_bound", lambda p: posenc.rope_decay_bound(p, 8)),
        ("encode", lambda p: posenc.encode("sinusoidal", p, 8)),
        ("signature/rotary", lambda p: posenc.signature("rope", p, 8)),
        ("signature/bias", lambda p: posenc.signature("alibi", p, 8)),
        ("offset_profile/sincos", lambda p: posenc.offset_profile("sincos_pair", p, d=4)),
        ("offset_profile/alibi", lambda p: posenc.offset_profile("alibi", p, d=4)),
        ("growth", lambda p: posenc.growth("sinusoidal", p, 8)),
    ]


POS_CALLS = _pos_calls()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(POS_CALLS), st.lists(st.integers(0, 5), min_size=1, max_size=6), st.data())
def test_nan_or_inf_positions_raise_value_error(call, good, data):
    _, f = call
    bad = data.draw(st.sampled_from([math.nan, math.inf, -math.inf, 1e300]))
    pos = list(map(float, good))
    pos.insert(data.draw(st.integers(0, len(pos))), bad)
    with pytest.raises(ValueError):
        f(pos)


@pytest.mark.parametrize(("name", "f"), POS_CALLS, ids=[c[0] for c in POS_CALLS])
def test_position_calls_accept_good_input(name, f):
    out = f([0.0, 1.0, 2.0])  # the same calls do work on good input (so the raises above are real)
    arr = np.asarray(out["norm"] if isinstance(out, dict) else out)
    assert arr.shape[0] == 3 and not np.any(np.isnan(arr))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1, 0, 1e30, 2**70, 1.5, "x", None, True, [1, 2]])
@pytest.mark.parametrize("name", ["sinusoidal", "raw_index", "encode", "random_table", "signature", "token_embedding_norm"])
def test_d_model_validated(name, bad):
    calls = {
        "sinusoidal": lambda d: posenc.sinusoidal([0, 1], d),
        "raw_index": lambda d: posenc.raw_index([0, 1], d),
        "encode": lambda d: posenc.encode("single_sine", [0, 1], d),
        "random_table": lambda d: posenc.random_table(4, d),
        "signature": lambda d: posenc.signature("sincos_pair", [0, 1], d),
        "token_embedding_norm": lambda d: posenc.token_embedding_norm(d),
    }
    if name == "token_embedding_norm" and bad in (1e30, 2**70):
        assert calls[name](bad) > 0  # no upper limit: a float, never an allocation
        return
    with pytest.raises(ValueError, match="d_model"):
        calls[name](bad)


@pytest.mark.parametrize("d", [0, -2, 1, 3, 7, 63, 2.5, math.nan, "8", None])
def test_head_dim_must_be_even_integer(d):
    for f in (lambda: posenc.rope_frequencies(d), lambda: posenc.default_inv_freq(d), lambda: posenc.rope_for("rope", d),
              lambda: posenc.rope_decay_bound([1], d), lambda: posenc.signature("rope_yarn", [0], d)):
        with pytest.raises(ValueError, match="head_dim"):
            f()
    if isinstance(d, int) and d > 0:
        with pytest.raises(ValueError, match="head_dim"):
            posenc.apply_rope(np.ones((2, d)), [0, 1], np.ones(max(d // 2, 1)))


@pytest.mark.parametrize("base", [1.0, 0.5, 0.0, -10.0, math.nan, math.inf, "1e4", None])
def test_base_must_exceed_one(base):
    for f in (lambda: posenc.sinusoidal([0], 8, base=base), lambda: posenc.rope_frequencies(8, base=base),
              lambda: posenc.rope_for("rope", 8, base=base), lambda: posenc.encode("sinusoidal", [0], 8, base=base),
              lambda: posenc.rope_decay_bound([0], 8, base=base), lambda: posenc.sinusoid_shift_matrix(1, 8, base=base)):
        with pytest.raises(ValueError, match="base"):
            f()


@pytest.mark.parametrize("rope_type", ["linear", "ntk", "dynamic", "yarn", "llama3"])
@pytest.mark.parametrize("factor", [0.999, 0.5, 0.0, -4.0, math.nan, math.inf, "4", True])
def test_factor_below_one_or_bad_is_rejected(rope_type, factor):
    sc = {"rope_type": rope_type, "factor": factor, "original_max_position_embeddings": 64}
    with pytest.raises(ValueError, match="factor"):
        posenc.rope_frequencies(8, scaling=sc)


@pytest.mark.parametrize("nb", [1, 0, -1, 2.5, math.nan, None, "32"])
def test_num_buckets_below_two_is_rejected(nb):
    with pytest.raises(ValueError, match="num_buckets"):
        posenc.t5_bucket([0, 1], num_buckets=nb)
    with pytest.raises(ValueError, match="num_buckets"):
        posenc.t5_bucket_matrix(3, num_buckets=nb)
    with pytest.raises(ValueError, match="num_buckets"):  # bidirectional needs 2 exact buckets per side
        posenc.t5_bucket([0], num_buckets=3)
    with pytest.raises(ValueError, match="max_distance"):
        posenc.t5_bucket([0], num_buckets=32, max_distance=8)  # not past the 8 exact buckets


def test_positions_past_a_learned_table_name_max_len():
    with pytest.raises(ValueError, match="max_len = 512"):
        posenc.encode("learned_minilm", [0, 512], 384)
    with pytest.raises(ValueError, match="max_len"):
        posenc.encode("learned_random", [600], 16)
    with pytest.raises(ValueError, match="max_len = 10"):
        posenc.learned_lookup(np.zeros((10, 3)), [10])
    with pytest.raises(ValueError, match="negative"):
        posenc.learned_lookup(np.zeros((10, 3)), [-1])
    with pytest.raises(ValueError, match="whole numbers"):
        posenc.learned_lookup(np.zeros((10, 3)), [1.5])
    with pytest.raises(ValueError, match="d_model must be 384"):
        posenc.encode("learned_minilm", [0], 64)


@pytest.mark.parametrize("rt", ["ntk_aware", "axial", "", None, 3, "DEFAULT"])
def test_unknown_rope_type_lists_the_valid_ones(rt):
    with pytest.raises(ValueError) as info:
        posenc.rope_frequencies(8, scaling={"rope_type": rt, "factor": 2.0})
    for valid in rope.ROPE_TYPES:
        assert repr(valid) in str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: posenc.sinusoidal(np.arange(10**6), 1024),
        lambda: posenc.alibi_bias(20000, 128),
        lambda: posenc.nope_bias(6000, 4),
        lambda: posenc.t5_bucket_matrix(10**5),
        lambda: posenc.bias("t5", 2048, 32),  # the (H, n, n) copy: once unchecked (1 GB)
        lambda: posenc.learned_lookup(posenc.minilm_table(), np.zeros(10**6)),  # once unchecked (3 GB)
        lambda: posenc.apply_rope(np.broadcast_to(np.ones(64), (10**7, 64)), np.arange(10**7), np.ones(32)),  # once copied first
        lambda: posenc.signature("rope", np.arange(10**7), 64),
        lambda: posenc.raw_index(np.arange(10**6), 8192),
        lambda: posenc.random_table(65536, 8192),
        lambda: posenc.position_scores("raw_index", 65536, d=2),
        lambda: posenc.offset_profile("t5", np.arange(10**7), n_heads=1024),
    ],
)
def test_memory_cap_is_a_value_error(call):
    with pytest.raises(ValueError, match=f"memory cap of {posenc.MEMORY_CAP_BYTES // 2**20} MB"):
        call()


def test_memory_cap_checked_before_allocating():
    import tracemalloc  # numpy reports its buffers to tracemalloc

    x = np.broadcast_to(np.ones(1024), (10**6, 1024))  # a view; a float64 copy would be 8 GB
    pos = np.arange(10**6, dtype=np.float64)
    inv = np.ones(512)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="memory cap"):
            posenc.apply_rope(x, pos, inv)  # once: x.astype(float64) first, then the check
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20


def test_memory_cap_constant():
    # the issue asked for 256 MB; the lead raised it to 512 MiB (commit cbb492e).  Every request
    # above is far beyond either value.
    assert posenc.MEMORY_CAP_BYTES in (256 * 2**20, 512 * 2**20)


YARN = {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 64}

BAD = [math.nan, math.inf, -math.inf, -1, 10**30, "x", None, [1, 2], object()]
SCALAR_CALLS = {
    "alibi_slopes": lambda v: posenc.alibi_slopes(v),
    "alibi_bias.n": lambda v: posenc.alibi_bias(v, 4),
    "alibi_bias.causal": lambda v: posenc.alibi_bias(4, 4, causal=v),
    "causal_mask": lambda v: posenc.causal_mask(v),
    "nope_bias": lambda v: posenc.nope_bias(v),
    "t5_bias.table": lambda v: posenc.t5_bias(4, v),
    "t5_bucket.bidirectional": lambda v: posenc.t5_bucket([0], bidirectional=v),
    "bias.n_heads": lambda v: posenc.bias("alibi", 4, v),
    "signature.n_heads(nope)": lambda v: posenc.signature("nope", [0], 8, n_heads=v),
    "rope_frequencies.seq_len": lambda v: posenc.rope_frequencies(8, seq_len=v),
    "rope_frequencies.scaling": lambda v: posenc.rope_frequencies(8, scaling=v if v is not None else "x"),
    "yarn.mscale": lambda v: posenc.rope_frequencies(8, scaling={**YARN, "mscale": v, "mscale_all_dim": 1.0}),
    "yarn.truncate": lambda v: posenc.rope_frequencies(8, scaling={**YARN, "truncate": v if v is not None else 1}),
    "longrope.short_factor": lambda v: posenc.rope_frequencies(8, scaling={
        "rope_type": "longrope", "original_max_position_embeddings": 64, "short_factor": v, "long_factor": [1] * 4}),
    "apply_rope.attention_factor": lambda v: posenc.apply_rope(np.ones((1, 4)), [0], [1, 1], attention_factor=v),
    "apply_rope.x": lambda v: posenc.apply_rope(v if isinstance(v, (str, list)) or v is None else np.full((1, 4), v), [0], [1, 1]),
    "rope_offset_scores.q": lambda v: posenc.rope_offset_scores(
        [0], [1, 1], v if isinstance(v, (str, list)) or v is None else np.full(4, v), np.ones(4)),
    "rope_for.seq_len": lambda v: posenc.rope_for("rope_dynamic", 8, seq_len=v),
    "probe_vector": lambda v: posenc.probe_vector(v),
    "position_scores.n": lambda v: posenc.position_scores("rope", v, d=8),
    "position_scores.d": lambda v: posenc.position_scores("sinusoidal", 4, d=v),  # once TypeError
    "offset_profile.d": lambda v: posenc.offset_profile("sinusoidal", [0], d=v),  # once TypeError
    "dense_scores.n": lambda v: posenc.dense_scores("rope", v, d=8),
    "translation_invariance": lambda v: posenc.translation_invariance(v),
    "growth.key": lambda v: posenc.growth(v, [0], 8),  # once AttributeError
    "length_dependence.position": lambda v: posenc.length_dependence("sinusoidal", v, [10], 4),
    "closest_pair": lambda v: posenc.closest_pair(v),
    "count_close_pairs.eps": lambda v: posenc.count_close_pairs([[0.0], [1.0]], v),
    "collisions.n": lambda v: posenc.collisions("sinusoidal", v, 4),
    "first_return.eps": lambda v: posenc.first_return("single_sine", 1, eps=v, limit=100),
    "shift_operator.k": lambda v: posenc.shift_operator("sinusoidal", v, 8),
    "shift_operator.n_fit": lambda v: posenc.shift_operator("sinusoidal", 1, 8, n_fit=v),
    "sinusoid_shift_matrix.k": lambda v: posenc.sinusoid_shift_matrix(v, 8),  # once NaN matrix / TypeError
    "frequency_spectrum.context": lambda v: posenc.frequency_spectrum("rope", 8, context=v),
    "permutation_equivariance.d_model": lambda v: posenc.permutation_equivariance("a b", "b a", d_model=v),
    "permutation_equivariance.scheme": lambda v: posenc.permutation_equivariance("a b", "b a", scheme=v if v is not None else 1),
    "tokenize": lambda v: posenc.tokenize(v),
    "measure_scheme.n": lambda v: posenc.measure_scheme("rope", n=v),
    "comparison_table.keys": lambda v: posenc.comparison_table(v if v is not None else 1),  # once TypeError
    "get_scheme": lambda v: posenc.get_scheme(v),
}


# combinations that are valid input, not bad input
VALID = {("closest_pair", "[1, 2]"), ("tokenize", "'x'"), ("shift_operator.k", "-1"), ("sinusoid_shift_matrix.k", "-1"),
         ("apply_rope.x", "-1"), ("rope_offset_scores.q", "-1"), ("rope_offset_scores.q", repr(10**30)),  # finite vectors
         ("rope_frequencies.seq_len", "None"), ("rope_for.seq_len", "None"), ("yarn.mscale", "None"),  # None = not given
         ("shift_operator.n_fit", "None")}
BAD_CASES = [(name, bad) for name in SCALAR_CALLS for bad in BAD if (name, repr(bad)) not in VALID]


def test_bad_argument_table_is_complete():
    assert len(BAD_CASES) == len(SCALAR_CALLS) * len(BAD) - len(VALID)


@pytest.mark.parametrize(("name", "bad"), BAD_CASES, ids=[f"{n}-{repr(b)[:12]}" for n, b in BAD_CASES])
def test_bad_arguments_raise_value_error_only(name, bad):
    try:
        SCALAR_CALLS[name](bad)
    except ValueError:
        return
    except Exception as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"{name}({bad!r}) raised {type(exc).__name__}: {exc}")
    pytest.fail(f"{name}({bad!r}) returned instead of raising ValueError")
