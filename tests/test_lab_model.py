"""The lab's engine: hand-written gradients against central finite differences, and the adapter."""

from __future__ import annotations

import numpy as np
import pytest

import posenc
from posenc.lab import model as M
from posenc.lab.positions import BUCKET_PARAM, LAB_SCHEMES, TABLE_PARAM, positions

TINY = M.ModelConfig(vocab=3, d_model=8, n_heads=2, n_layers=2, d_mlp=6)
N = 6


def _perturbed_params(scheme: str) -> dict:
    p = M.init_params(TINY, scheme, N, 0)
    rng = np.random.default_rng(1)
    for name in p:  # move gains and tables off their init so every term has a gradient
        if name.startswith("g") or name in (BUCKET_PARAM, TABLE_PARAM):
            p[name] = p[name] + rng.normal(0, 0.3, size=p[name].shape)
    return p


@pytest.mark.parametrize("scheme", LAB_SCHEMES)
def test_gradients_match_central_differences(scheme):
    rng = np.random.default_rng(2)
    inputs = rng.integers(0, TINY.vocab + 1, size=(2, N))
    targets = rng.integers(0, TINY.vocab, size=(2, N))
    pos = positions(scheme, N, d_model=TINY.d_model, n_heads=TINY.n_heads, train_len=N)
    p = _perturbed_params(scheme)
    _, grads = M.loss_and_grad(p, inputs, targets, pos, TINY)
    assert set(grads) == set(p)
    h = 1e-5
    for name, value in p.items():
        num = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            old = value[idx]
            value[idx] = old + h
            up, _ = M.loss_and_grad(p, inputs, targets, pos, TINY)
            value[idx] = old - h
            down, _ = M.loss_and_grad(p, inputs, targets, pos, TINY)
            value[idx] = old
            num[idx] = (up - down) / (2 * h)
        rel = np.abs(num - grads[name]).max() / np.abs(num).max()
        assert rel < 1e-6, (scheme, name, rel)


def test_blocked_attention_and_split_gemms_are_bit_identical(monkeypatch):
    cfg = M.ModelConfig()
    p = M.init_params(cfg, "rope", 32, 0)
    x = np.random.default_rng(0).integers(0, 9, size=(3, 128))
    pos = positions("rope", 128, d_model=32, n_heads=4, train_len=32)
    small, _ = M.forward(p, x, pos, cfg)
    monkeypatch.setattr(M, "GEMM_LIMIT", 1 << 40)  # one GEMM per call, no query blocks
    whole, _ = M.forward(p, x, pos, cfg)
    assert np.array_equal(small, whole)


def test_causal_model_ignores_the_future():
    cfg = M.ModelConfig()
    for scheme in LAB_SCHEMES:
        p = M.init_params(cfg, scheme, 32, 0)
        pos = positions(scheme, 16, d_model=32, n_heads=4, train_len=32)
        x = np.random.default_rng(0).integers(0, 9, size=(2, 16))
        y = x.copy()
        y[:, 10:] = (y[:, 10:] + 1) % 9
        a, _ = M.forward(p, x, pos, cfg)
        b, _ = M.forward(p, y, pos, cfg)
        np.testing.assert_array_equal(a[:, :10], b[:, :10])


def test_rotary_maps_are_apply_rope_and_xpos_scores_depend_on_the_offset_only():
    rng = np.random.default_rng(0)
    pos = positions("rope", 12, d_model=32, n_heads=4, train_len=12)
    v = rng.normal(size=(12, 8))
    inv, _ = posenc.rope_frequencies(8)
    np.testing.assert_allclose(np.einsum("pij,pj->pi", pos.mq, v), posenc.apply_rope(v, np.arange(12), inv), atol=1e-14)
    # xPos (Sun et al., arXiv:2212.10554): zeta = [0.285714, 0.464286, 0.642857, 0.821429] at d = 8, B = 512
    np.testing.assert_allclose(posenc.xpos_scale([512], 8)[0], [0.285714, 0.464286, 0.642857, 0.821429], atol=5e-7)
    xp = positions("xpos", 40, d_model=32, n_heads=4, train_len=40)
    q, k = rng.normal(size=8), rng.normal(size=8)
    score = lambda i, j: (xp.mq[i] @ q) @ (xp.mk[j] @ k)
    assert score(30, 27) == pytest.approx(score(5, 2), rel=1e-12)
    assert score(30, 27) != pytest.approx(score(30, 26), rel=1e-6)


def test_bias_schemes_come_from_posenc():
    t5 = positions("t5", 20, d_model=32, n_heads=4, train_len=20)
    i = np.arange(20)
    np.testing.assert_array_equal(t5.buckets, posenc.t5_bucket(i[None, :] - i[:, None], bidirectional=False))
    alibi = positions("alibi", 20, d_model=32, n_heads=4, train_len=20)
    np.testing.assert_array_equal(alibi.bias, posenc.alibi_bias(20, 4))
    nope = positions("nope", 20, d_model=32, n_heads=4, train_len=20)
    np.testing.assert_array_equal(nope.bias[0], posenc.causal_mask(20))
    raw = positions("raw_index", 5, d_model=4, n_heads=2, train_len=5)
    np.testing.assert_array_equal(raw.add, np.arange(5)[:, None] * np.ones((1, 4)))  # e'_t = e_t + t 1, unscaled


def test_learned_table_has_no_row_past_l_and_extensions_are_rope_only():
    with pytest.raises(ValueError, match="no row for position 32"):
        positions("learned", 33, d_model=32, n_heads=4, train_len=32)
    with pytest.raises(ValueError, match="RoPE model only"):
        positions("alibi", 64, d_model=32, n_heads=4, train_len=32, extension="yarn")
    yarn = positions("rope", 128, d_model=32, n_heads=4, train_len=32, extension="yarn")
    inv, af = posenc.rope_frequencies(8, scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32})
    v = np.random.default_rng(0).normal(size=(128, 8))
    np.testing.assert_allclose(np.einsum("pij,pj->pi", yarn.mq, v),
                               posenc.apply_rope(v, np.arange(128), inv, attention_factor=af), atol=1e-13)


def test_the_extended_model_comes_from_the_registry():
    from posenc.lab.positions import EXTENSIBLE
    from posenc.lab.results import extended_scheme, load_shipped

    assert EXTENSIBLE == ("rope",)  # plain Hugging Face RoPE; xPos is rotary but no rope_type
    assert extended_scheme(load_shipped()["results"]) == "rope"
    assert extended_scheme({"runs": {"nope": {"0": {"extensions": {}}}}}) is None


def test_every_registry_scheme_has_a_lab_engine():
    """The lab picks an engine by the scheme's behaviour class (posenc.lab.positions._ENGINES): every kind has one, so a
    new registry scheme of any kind can be trained; a table answers only for a scheme with a last row."""
    from posenc.lab.positions import _ENGINES, _engine
    from posenc.schemes.kinds import KINDS

    assert set(KINDS.values()) == set(_ENGINES)
    for key, scheme in posenc.SCHEMES.items():
        engine = _engine(scheme)
        assert engine.table == (scheme.max_len is not None), key
