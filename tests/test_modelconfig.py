"""posenc.modelconfig: a model's config.json -> its RoPE settings, checked against HF's rules.

Literal values come from Hugging Face's code (run) and the papers named per test and from the
committed HF oracle (tests/data/hf_oracle.json, produced by running transformers 5.24).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc.io.modelconfig import (
    EXAMPLE_CONFIGS,
    MAX_CONFIG_BYTES,
    ModelRope,
    decode_config_bytes,
    parse_model_config,
)
from posenc.registry import rope_for
from posenc.schemes.scaling import default_inv_freq, llama3_bands, rope_frequencies

ORACLE = json.loads((Path(__file__).parent / "data" / "hf_oracle.json").read_text())


def oracle_case(name: str) -> dict:
    return next(c for c in ORACLE["rope_init"] if c["name"] == name)


# meta-llama/Llama-3.1-8B config.json, verbatim
LLAMA31_8B = """{
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 131072, "mlp_bias": false, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0", "use_cache": true, "vocab_size": 128256
}"""

# Qwen/Qwen2.5-7B-Instruct config.json with the model card's 128k YaRN block (v4 "type" key)
QWEN25_YARN = """{
  "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "max_position_embeddings": 32768,
  "model_type": "qwen2", "num_attention_heads": 28, "num_key_value_heads": 4,
  "rope_theta": 1000000.0, "sliding_window": 131072, "use_sliding_window": false,
  "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}
}"""

# mistralai/Mistral-7B-Instruct-v0.3 config.json (plain RoPE)
MISTRAL_V03 = """{
  "architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 1000000.0,
  "sliding_window": null, "vocab_size": 32768
}"""


# ----------------------------------------------------------------------------- real configs

def test_llama31_8b():
    m = parse_model_config(LLAMA31_8B)
    assert (m.head_dim, m.rotary_dim, m.base) == (128, 128, 500000.0)  # 4096 / 32
    assert m.rope_type == "llama3" and m.source.startswith("rope_scaling")
    assert m.scaling == {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192}
    assert (m.trained_length, m.max_position_embeddings, m.factor, m.target_length) == (8192, 131072, 8.0, 65536)
    assert m.name == "LlamaForCausalLM" and m.model_type == "llama"
    inv, af = m.frequencies()
    ref, _ = rope_for("rope_llama3", 128, base=500000.0, factor=8.0, original_max_position_embeddings=8192)
    np.testing.assert_array_equal(inv, ref)
    assert af == 1.0
    # Meta llama-models apply_scaling == HF _compute_llama3_parameters, run: 29 kept, 6 smoothed, 29 divided at d=128, base 5e5
    assert np.bincount(llama3_bands(128, 500000.0, m.scaling)).tolist() == [29, 6, 29]
    assert any("4096 / 32 = 128" in n for n in m.notes)
    assert any("131,072" in n and "65,536" in n for n in m.notes)


def test_qwen25_yarn_v4_type_key():
    m = parse_model_config(QWEN25_YARN)
    assert (m.head_dim, m.base, m.rope_type, m.factor, m.trained_length) == (128, 1e6, "yarn", 4.0, 32768)
    assert m.target_length == 131072
    _, af = m.frequencies()
    assert af == pytest.approx(1.1386294361, abs=1e-10)  # HF transformers modeling_rope_utils, _compute_yarn_parameters, run: 0.1 ln 4 + 1
    assert af == pytest.approx(0.1 * math.log(4) + 1, rel=1e-15)


def test_mistral_plain_rope():
    m = parse_model_config(MISTRAL_V03)
    assert m.scaling is None and m.rope_type == "default" and m.factor == 1.0
    assert (m.head_dim, m.base, m.trained_length) == (128, 1e6, 32768)
    inv, af = m.frequencies()
    np.testing.assert_array_equal(inv, default_inv_freq(128, 1e6))
    assert af == 1.0


def test_v4_type_key_linear():
    m = parse_model_config('{"head_dim": 16, "rope_theta": 10000.0, "max_position_embeddings": 8192,'
                           ' "rope_scaling": {"type": "linear", "factor": 4.0}}')
    inv, af = m.frequencies()
    # HF transformers modeling_rope_utils, linear: factor 4 -> [0.25, 0.0790569, ..., 7.90569e-05]
    assert inv[0] == pytest.approx(0.25) and inv[1] == pytest.approx(0.0790569, rel=1e-6)
    assert inv[-1] == pytest.approx(7.90569e-05, rel=1e-5)
    assert m.trained_length == 2048 and any("estimated" in n for n in m.notes)  # 8192 / 4


def test_v5_rope_parameters_with_rope_theta_inside():
    m = parse_model_config(json.dumps({
        "head_dim": 16, "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 2048},
    }))
    assert m.source.startswith("rope_parameters") and m.base == 10000.0 and m.trained_length == 2048
    inv, af = m.frequencies()
    # HF transformers modeling_rope_utils, _compute_yarn_parameters, run (HF v5, d=16, s=4, orig=2048)
    np.testing.assert_allclose(inv, [1, 0.31622776, 0.1, 0.025693506, 0.00625, 0.0013834966, 2.5e-4, 7.90569e-5], rtol=1e-6)
    assert af == pytest.approx(1.1386294361, abs=1e-10)
    case = oracle_case("yarn_d16_s4_o2048")  # the same config run through HF
    np.testing.assert_allclose(inv, case["inv_freq"], rtol=1e-6)
    assert af == pytest.approx(case["attention_factor"], rel=1e-7)


def test_dynamic_trained_length_is_max_position_embeddings_like_hf():
    text = json.dumps({"head_dim": 16, "rope_theta": 10000.0, "max_position_embeddings": 2048,
                       "rope_scaling": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 1024}})
    m = parse_model_config(text)
    assert m.trained_length == 2048 and m.scaling["original_max_position_embeddings"] == 2048
    assert any("ignores original_max_position_embeddings" in n for n in m.notes)
    case = oracle_case("dynamic_d16_s2_L4096_orig_key_ignored")  # HF: the 1024 is ignored
    inv, _ = m.frequencies(seq_len=case["seq_len"])
    np.testing.assert_allclose(inv, case["inv_freq"], rtol=1e-6)
    # HF transformers modeling_rope_utils, dynamic, run: factor 2, max_pos 2048, seq_len 4096 -> base' = 1e4 * 3^(8/7), inv[1] = 0.27029613
    assert inv[1] == pytest.approx(0.27029613, rel=1e-6)
    # up to the trained length it is plain RoPE
    np.testing.assert_array_equal(m.frequencies(seq_len=2048)[0], default_inv_freq(16, 1e4))


def test_dynamic_needs_max_position_embeddings():
    with pytest.raises(ValueError, match="max_position_embeddings"):
        parse_model_config('{"head_dim": 16, "rope_scaling": {"type": "dynamic", "factor": 2.0}}')


def test_partial_rotary_factor_is_noted_and_exact():
    m = parse_model_config('{"head_dim": 16, "rope_theta": 10000, "partial_rotary_factor": 0.25}')
    assert (m.head_dim, m.rotary_dim) == (16, 4)
    np.testing.assert_allclose(m.frequencies()[0], [1, 0.01])  # HF transformers GPT-NeoX partial rotary, run: NeoX 0.25, d=16 -> [1, 0.01]
    assert any("partial rotary" in n for n in m.notes)
    neox = parse_model_config('{"hidden_size": 64, "num_attention_heads": 4, "rotary_pct": 0.25, "rotary_emb_base": 10000}')
    assert neox.rotary_dim == 4 and neox.base == 10000.0
    v5 = parse_model_config('{"head_dim": 16, "rope_parameters": {"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.5}}')
    assert v5.rotary_dim == 8
    with pytest.raises(ValueError, match="even rotary dimension"):
        parse_model_config('{"head_dim": 10, "rope_theta": 10000, "partial_rotary_factor": 0.3}')  # int(3.0...) = 3


def test_longrope_phi3_style():
    text = json.dumps({"hidden_size": 16, "num_attention_heads": 2, "rope_theta": 10000.0,
                       "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                       "rope_scaling": {"type": "su", "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 4, 8]}})
    m = parse_model_config(text)
    assert m.rope_type == "longrope" and m.factor == 32.0 and m.trained_length == 4096
    # HF transformers modeling_rope_utils, longrope, run: long -> [1, 0.05, 0.0025, 1.25e-4], attention 1.19023807 (d=8, orig 4096, max 131072)
    inv, af = m.frequencies(seq_len=131072)
    np.testing.assert_allclose(inv, [1, 0.05, 0.0025, 1.25e-4], rtol=1e-12)
    assert af == pytest.approx(1.19023807, abs=1e-8)
    np.testing.assert_array_equal(m.frequencies()[0], default_inv_freq(8, 1e4))  # short factors all 1
    assert any("'su'" in n for n in m.notes)


def test_ntk_and_filled_fields():
    m = parse_model_config('{"head_dim": 16, "rope_theta": 10000, "rope_scaling": {"type": "ntk", "factor": 4}}')
    inv, _ = m.frequencies()
    th = default_inv_freq(16, 1e4)
    assert inv[0] == th[0] and inv[-1] == pytest.approx(th[-1] / 4, rel=1e-12)  # NTK-aware (bloc97): base * s^(d/(d-2))
    assert any("not a transformers v5 key" in n for n in m.notes)
    # yarn without factor: v5 uses max_position_embeddings / original
    y = parse_model_config('{"head_dim": 16, "max_position_embeddings": 8192, '
                           '"rope_scaling": {"rope_type": "yarn", "original_max_position_embeddings": 2048}}')
    assert y.factor == 4.0 and any("factor is missing" in n for n in y.notes)
    assert any("rope_theta is not given" in n for n in y.notes) and y.base == 10000.0
    # yarn without original: v5 standardize_rope_params fills it from max_position_embeddings
    z = parse_model_config('{"head_dim": 16, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 2}}')
    assert z.trained_length == 4096 and z.scaling["original_max_position_embeddings"] == 4096
    # beta_fast 0 reads as the default (HF uses `or`)
    b = parse_model_config('{"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": 0}}')
    assert "beta_fast" not in b.scaling and any("beta_fast = 0" in n for n in b.notes)


def test_nesting_lines_and_layer_types():
    nested = parse_model_config(json.dumps({"model_type": "mllama", "text_config": json.loads(LLAMA31_8B)}))
    assert nested.rope_type == "llama3" and any("text_config" in n for n in nested.notes)
    lines = parse_model_config('"rope_theta": 500000.0,\n"head_dim": 128,\n"max_position_embeddings": 8192,\n')
    assert lines.base == 500000.0 and lines.head_dim == 128 and any("braces" in n for n in lines.notes)
    gemma = parse_model_config(json.dumps({"head_dim": 256, "rope_parameters": {
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}))
    assert (gemma.rope_type, gemma.base, gemma.factor) == ("linear", 1e6, 8.0)
    with pytest.raises(ValueError, match="one block per layer type"):
        parse_model_config('{"head_dim": 16, "rope_parameters": {"a": {"rope_type": "default"}}}')


def test_examples_parse():
    got = {k: parse_model_config(v) for k, v in EXAMPLE_CONFIGS.items()}
    assert got["Llama 3.1 8B"].scaling == parse_model_config(LLAMA31_8B).scaling
    assert got["Qwen2.5 7B + YaRN"].scaling == parse_model_config(QWEN25_YARN).scaling
    assert got["Mistral 7B v0.3"].scaling is None and got["Mistral 7B v0.3"].base == 1e6


def test_frozen():
    m = parse_model_config(MISTRAL_V03)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.base = 1.0  # type: ignore[misc]
    assert isinstance(m, ModelRope)


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("not json at all", "not valid JSON"),
        ('{"head_dim": 128,, }', "not valid JSON"),
        ("[1, 2, 3]", "JSON object"),
        ("42", "JSON object"),
        ('"a string"', "JSON object"),
        ("{}", "neither head_dim"),
        ('{"rope_theta": 10000}', "neither head_dim"),
        ('{"head_dim": 128, "rope_theta": "abc"}', "rope_theta"),
        ('{"head_dim": 128, "rope_theta": -5}', "rope_theta"),
        ('{"head_dim": 128, "rope_theta": NaN}', "rope_theta"),
        ('{"head_dim": 128, "rope_theta": 1e999}', "rope_theta"),
        ('{"head_dim": true}', "head_dim"),
        ('{"head_dim": 127}', "out of range"),
        ('{"head_dim": 1000000}', "head_dim"),
        ('{"hidden_size": 4096, "num_attention_heads": 0}', "num_attention_heads"),
        ('{"hidden_size": 4096, "num_attention_heads": 3}', "not divisible"),
        ('{"head_dim": 16, "rope_scaling": "yes"}', "rope_scaling must be"),
        ('{"head_dim": 16, "rope_parameters": [1]}', "rope_parameters must be"),
        ('{"head_dim": 16, "rope_scaling": {"factor": 2}}', "no 'rope_type'"),
        ('{"head_dim": 16, "rope_scaling": {"type": "banana", "factor": 2}}', "unknown rope_type"),
        ('{"head_dim": 16, "rope_scaling": {"rope_type": "axial", "factor": 2}}', "unknown rope_type"),
        ('{"head_dim": 16, "rope_scaling": {"rope_type": 7}}', "rope_type must be a string"),
        ('{"head_dim": 16, "rope_scaling": {"type": "linear"}}', "needs a 'factor'"),
        ('{"head_dim": 16, "rope_scaling": {"type": "linear", "factor": 0.5}}', "factor"),
        ('{"head_dim": 16, "rope_scaling": {"type": "yarn", "factor": 4}}', "original_max_position_embeddings"),
        ('{"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "llama3", "factor": 8}}', "low_freq_factor"),
        ('{"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "llama3", "factor": 8, '
         '"low_freq_factor": 4, "high_freq_factor": 1}}', "out of range"),
        ('{"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": "x"}}', "out of range"),
        ('{"head_dim": 16, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4, "truncate": "no"}}', "out of range"),
        ('{"head_dim": 8, "max_position_embeddings": 8192, "rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 4096, '
         '"short_factor": [1, 1], "long_factor": [1, 2, 4, 8]}}', "short_factor"),
        ('{"head_dim": 16, "max_position_embeddings": -1}', "max_position_embeddings"),
        ('{"head_dim": 16, "max_position_embeddings": 1e12}', "max_position_embeddings"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply|not valid JSON|JSON object"),
    ],
)
def test_bad_configs_give_clear_errors(text, match):
    with pytest.raises(ValueError, match=match):
        parse_model_config(text)


def test_size_caps_and_bytes():
    big = '{"head_dim": 16, "pad": "' + "x" * MAX_CONFIG_BYTES + '"}'
    with pytest.raises(ValueError, match="over 1 MiB"):
        parse_model_config(big)
    with pytest.raises(ValueError, match="limit here is 1 MiB"):
        decode_config_bytes(big.encode())
    with pytest.raises(ValueError, match="not UTF-8"):
        decode_config_bytes(b'{"head_dim": 16, "x": "\xff\xfe"}')
    with pytest.raises(ValueError, match="bytes"):
        decode_config_bytes("text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must be config.json text"):
        parse_model_config(b"{}")  # type: ignore[arg-type]
    assert decode_config_bytes("\ufeff{}".encode("utf-8")) == "{}"  # BOM dropped
    assert parse_model_config(decode_config_bytes(MISTRAL_V03.encode())).base == 1e6


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_model_or_a_value_error(text):
    try:
        m = parse_model_config(text)
    except ValueError:
        return
    assert m.rotary_dim % 2 == 0 and m.base > 1


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**7) | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=12,
)
_KEYS = st.sampled_from(["head_dim", "hidden_size", "num_attention_heads", "rope_theta", "max_position_embeddings",
                         "rope_scaling", "rope_parameters", "partial_rotary_factor", "original_max_position_embeddings"])
_BLOCK = st.dictionaries(st.sampled_from(["rope_type", "type", "factor", "original_max_position_embeddings", "rope_theta",
                                          "low_freq_factor", "high_freq_factor", "beta_fast", "short_factor", "mscale"]),
                         st.sampled_from(["linear", "dynamic", "yarn", "llama3", "longrope", "default", "x"]) | _JSON, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, _JSON | _BLOCK, max_size=7))
def test_config_shaped_garbage_never_escapes_as_another_error(cfg):
    text = json.dumps(cfg, allow_nan=True)
    try:
        m = parse_model_config(text)
    except ValueError:
        return
    inv, af = m.frequencies(seq_len=m.target_length)
    assert inv.shape == (m.rotary_dim // 2,) and np.all(np.isfinite(inv)) and af > 0
    np.testing.assert_array_equal(inv, rope_frequencies(m.rotary_dim, base=m.base, scaling=m.scaling, seq_len=m.target_length)[0])
