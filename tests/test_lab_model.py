"""The lab's engine: hand-written gradients against central finite differences (every lab scheme, and the randomized-
positions option), and the adapter to the registry's schemes."""

from __future__ import annotations

import numpy as np
import pytest

import posenc
from posenc.lab import model as M
from posenc.lab.positions import KIND, LAB, LAB_SCHEMES, TABLE_PARAM, positions, reads_positions, sampler, scheme_params

TINY = M.ModelConfig(vocab=3, d_model=8, n_heads=2, n_layers=2, d_mlp=6)
N = 6
RANGE = 20  # the randomized-positions range of the option's gradient test
SMALL = 16  # a shared tensor of at most this many entries is checked entry by entry
DIRECTIONS = 4  # random directions per larger shared tensor: 80 losses instead of 1,616 (the whole file took 57 s, 2026-12-07)
RANDOMIZABLE = [s for s in LAB_SCHEMES if reads_positions(s) and not LAB[s].randomize]


def _perturbed_params(scheme: str, randomize=None) -> dict:
    p = M.init_params(TINY, scheme, N, 0, randomize=randomize)
    shared = set(M.param_names(TINY))
    rng = np.random.default_rng(1)
    for name in p:  # move gains, the table and a trained bias's weights off their init so every term has a gradient
        if name.startswith("g") and name in shared or name == TABLE_PARAM:
            p[name] = p[name] + rng.normal(0, 0.3, size=p[name].shape)
        elif name not in shared:  # by a factor, so a positive scalar (Kerple's, FIRE's c) stays clear of its clamp
            p[name] = np.array(p[name] * np.exp(rng.normal(0, 0.3, size=np.shape(p[name]))))
    return p


def _check_gradients(scheme, randomize=None):
    rng = np.random.default_rng(2)
    inputs = rng.integers(0, TINY.vocab + 1, size=(2, N))
    targets = rng.integers(0, TINY.vocab, size=(2, N))
    draw = sampler(scheme, randomize, np.random.default_rng(3))
    pos = positions(scheme, N, d_model=TINY.d_model, n_heads=TINY.n_heads, train_len=N, randomize=randomize,
                    at=None if draw is None else draw(N))
    p = _perturbed_params(scheme, randomize)
    _, grads = M.loss_and_grad(p, inputs, targets, pos, TINY)
    assert set(grads) == set(p)
    h = 1e-5
    shared = set(M.param_names(TINY))
    for name, value in p.items():
        # a scheme's own weights and every small tensor entry by entry (the unit directions); a shared weight matrix along
        # DIRECTIONS random directions v, whose derivative grad . v any error in the gradient changes (unless orthogonal to v)
        exhaustive = name not in shared or value.size <= SMALL
        V = np.eye(value.size).reshape(value.size, *value.shape) if exhaustive else rng.normal(size=(DIRECTIONS, *value.shape))
        num = np.array([_along(p, name, v, h, inputs, targets, pos) for v in V])
        want = V.reshape(len(V), -1) @ np.ravel(grads[name])
        # relative to the gradient, or to 1e-4 where it vanishes (FIRE's b2 shifts every logit of a head alike: 0)
        rel = np.abs(num - want).max() / max(np.abs(num).max(), 1e-4)
        assert rel < 1e-6, (scheme, name, rel)


def _along(p: dict, name: str, v, h: float, inputs, targets, pos) -> float:
    """The central difference of the loss along ``v`` (of ``p[name]``'s shape), which is then restored exactly."""
    value = p[name]
    old = value.copy()
    value += h * v
    up, _ = M.loss_and_grad(p, inputs, targets, pos, TINY)
    value[...] = old - h * v
    down, _ = M.loss_and_grad(p, inputs, targets, pos, TINY)
    value[...] = old
    return (up - down) / (2 * h)


@pytest.mark.parametrize("scheme", LAB_SCHEMES)
def test_gradients_match_central_differences(scheme):
    """Every lab scheme (derived from the registry: every trained bias's own weights through the whole model too)."""
    _check_gradients(scheme)


@pytest.mark.parametrize("scheme", RANDOMIZABLE)
def test_gradients_match_central_differences_at_randomized_positions(scheme):
    _check_gradients(scheme, randomize=RANGE)


def test_every_trained_bias_of_the_registry_is_a_lab_scheme_with_its_own_weights():
    trained = {k for k, s in posenc.SCHEMES.items() if getattr(s.behaviour, "trainable", None) is not None}
    assert trained >= {"t5", "kerple", "fire"}
    names = {key: [name for name, s in LAB.items() if s.key == key] for key in trained}  # T5 is two lab schemes
    assert all(names.values()), names
    for key, lab_names in names.items():
        for name in lab_names:
            assert KIND[name] == "trained bias"
            p = M.init_params(TINY, name, N, 0)
            own = set(p) - set(M.param_names(TINY))
            params = posenc.SCHEMES[key].validate_params(scheme_params(name, N))  # what the lab sets at this L
            assert {k: p[k].shape for k in own} == posenc.SCHEMES[key].behaviour.trainable.shapes(TINY.n_heads, **params)


def test_blocked_attention_and_split_gemms_are_bit_identical(monkeypatch):
    cfg = M.ModelConfig()
    p = M.init_params(cfg, "rope", 32, 0)
    x = np.random.default_rng(0).integers(0, 9, size=(3, 128))
    pos = positions("rope", 128, d_model=32, n_heads=4, train_len=32)
    small, _ = M.forward(p, x, pos, cfg)
    monkeypatch.setattr(M, "GEMM_LIMIT", 1 << 40)  # one GEMM per call
    split, _ = M.forward(p, x, pos, cfg)
    assert np.array_equal(small, split)  # a GEMM split over rows: every output the same dot product
    monkeypatch.setattr(M, "CAUSAL_ROWS", 1 << 20)  # and no query blocks: every score, the masked ones too
    whole, _ = M.forward(p, x, pos, cfg)
    assert np.abs(small - whole).max() < 1e-12  # the causal blocks skip exact zeros: rounding only


def test_the_last_query_pass_is_the_last_row_of_the_whole_pass():
    cfg = M.ModelConfig()
    x = np.random.default_rng(1).integers(0, 9, size=(5, 70))
    for scheme in ("rope", "t5", "learned"):
        p = M.init_params(cfg, scheme, 70, 0)
        pos = positions(scheme, 70, d_model=32, n_heads=4, train_len=70)
        whole, _ = M.forward(p, x, pos, cfg)
        last, cache = M.forward(p, x, pos, cfg, last=True)
        assert last.shape == (5, 1, cfg.vocab) and cache is None
        assert np.abs(last[:, 0] - whole[:, -1]).max() < 1e-12


def test_causal_model_ignores_the_future():
    cfg = M.ModelConfig()
    for scheme in LAB_SCHEMES:
        p = M.init_params(cfg, scheme, 32, 0)
        draw = sampler(scheme, None, np.random.default_rng(0))
        pos = positions(scheme, 16, d_model=32, n_heads=4, train_len=32, at=None if draw is None else draw(16))
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
    ids = np.arange(32.0)[:, None] * np.ones((1, 4))  # a table whose every entry is its bucket id
    np.testing.assert_array_equal(t5.trainable.forward({"buckets": ids}, t5.at, t5.at, **t5.settings)[2],
                                  posenc.t5_bucket(i[None, :] - i[:, None], bidirectional=False))  # the decoder's buckets
    alibi = positions("alibi", 20, d_model=32, n_heads=4, train_len=20)
    np.testing.assert_array_equal(alibi.bias, posenc.alibi_bias(20, 4))
    nope = positions("nope", 20, d_model=32, n_heads=4, train_len=20)
    np.testing.assert_array_equal(nope.bias[0], posenc.causal_mask(20))
    raw = positions("raw_index", 5, d_model=4, n_heads=2, train_len=5)
    np.testing.assert_array_equal(raw.add, np.arange(5)[:, None] * np.ones((1, 4)))  # e'_t = e_t + t 1, unscaled


def test_trained_biases_start_as_the_registry_scheme_and_project_after_a_step():
    pos = np.arange(12.0)
    kerple = positions("kerple", 12, d_model=32, n_heads=4, train_len=12)
    w = {"r1": np.full(4, 1.5), "r2": np.full(4, 0.25)}
    np.testing.assert_allclose(kerple.trainable.forward(w, pos, pos, **kerple.settings),
                               posenc.get_scheme("kerple").bias(pos, pos, 4, r1=1.5, r2=0.25), rtol=1e-14)
    # FIRE's lab weights drawn from default_rng(s) are the registry's untrained FIRE at seed s (the authors' init)
    fire = positions("fire", 12, d_model=32, n_heads=4, train_len=12)
    w = fire.trainable.init(np.random.default_rng(7), 4, **fire.settings)
    assert float(w["c"]) == 0.1 and float(w["L_multiplier"]) == 1.0
    np.testing.assert_allclose(fire.trainable.forward(w, pos, pos, **fire.settings),
                               posenc.get_scheme("fire").bias(pos, pos, 4, seed=7), rtol=1e-12)
    p = M.init_params(TINY, "kerple", N, 0)
    p["r1"][:] = [-1.0, 0.5]
    M.project(p, positions("kerple", N, d_model=TINY.d_model, n_heads=TINY.n_heads, train_len=N))
    np.testing.assert_array_equal(p["r1"], [0.01, 0.5])  # clamped at 0.01, as the reference code clamps


def test_learned_table_has_no_row_past_l_and_extensions_are_rope_only():
    with pytest.raises(ValueError, match="no row for position 32"):
        positions("learned", 33, d_model=32, n_heads=4, train_len=32)
    with pytest.raises(ValueError, match="RoPE model only"):
        positions("alibi", 64, d_model=32, n_heads=4, train_len=32, extension="yarn")
    with pytest.raises(ValueError, match="randomized positions"):
        positions("rope", 64, d_model=32, n_heads=4, train_len=32, extension="yarn", randomize=512)
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


def test_every_registry_scheme_is_trained_or_says_why_not():
    from posenc.lab.positions import DEFAULT_SCHEMES, EXTENSIONS, untrainable

    refused, trained = untrainable(), {s.key for s in LAB.values()}
    assert set(refused) | trained == set(posenc.SCHEMES) and not set(refused) & trained
    assert all(len(why) > 20 for why in refused.values()), refused
    assert "own width (384)" in refused["learned_minilm"]  # the bundled MiniLM table
    assert all("test-time method" in refused[k] for k in EXTENSIONS.values())
    assert {"t5", "alibi", "kerple", "fire", "rope", "xpos", "p_rope", "rope_randomized", "nope"} <= trained
    # the first run's 8, T5 at its scaled buckets, FIRE, Kerple, p-RoPE and RoPE + randomized are trained by default, in the registry's order
    assert {"raw_index", "sinusoidal", "learned", "t5", "t5_scaled", "alibi", "nope", "rope", "xpos", "fire", "kerple",
            "p_rope", "rope_randomized"} == set(DEFAULT_SCHEMES)
    order = list(posenc.SCHEMES)
    assert [LAB[s].key for s in LAB_SCHEMES] == sorted((LAB[s].key for s in LAB_SCHEMES), key=order.index)
    assert LAB["t5"].params == {"bidirectional": False} and LAB["rope_randomized"].model == "rope"


def test_randomized_positions_are_a_sorted_sample_per_pass_and_every_array_is_read_there():
    draw = sampler("rope", 2048, np.random.default_rng(0))
    a, b = draw(32), draw(32)
    assert not np.array_equal(a, b) and all(np.all(np.diff(x) > 0) and 0 <= x[0] and x[-1] < 2048 for x in (a, b))
    assert sampler("rope", None, np.random.default_rng(0)) is None  # plain RoPE: positions 0 .. n-1
    assert sampler("rope_randomized", None, np.random.default_rng(0)) is not None  # its own range, 2048
    with pytest.raises(ValueError, match="does not fit"):
        sampler("rope", 16, np.random.default_rng(0))(32)
    with pytest.raises(ValueError, match="reads no positions"):
        positions("nope", 8, d_model=32, n_heads=4, train_len=8, randomize=64)
    rope = positions("rope", 32, d_model=32, n_heads=4, train_len=32, at=a, randomize=2048)
    v = np.random.default_rng(1).normal(size=(32, 8))
    inv, _ = posenc.rope_frequencies(8)
    np.testing.assert_allclose(np.einsum("pij,pj->pi", rope.mq, v), posenc.apply_rope(v, a, inv), atol=1e-12)
    alibi = positions("alibi", 32, d_model=32, n_heads=4, train_len=32, at=a, randomize=2048)
    np.testing.assert_array_equal(alibi.bias, posenc.get_scheme("alibi").bias(a, a, 4))
    table = positions("learned", 32, d_model=32, n_heads=4, train_len=32, at=a, randomize=2048)
    np.testing.assert_array_equal(table.rows, a.astype(int))
    assert M.init_params(M.ModelConfig(), "learned", 32, 0, randomize=2048)[TABLE_PARAM].shape == (2048, 32)
    with pytest.raises(ValueError, match="no row for position"):
        positions("learned", 4, d_model=32, n_heads=4, train_len=32, at=[0, 1, 2, 40])
