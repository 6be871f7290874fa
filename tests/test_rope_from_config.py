"""posenc.rope_from_config against transformers, on real config.json files.

Reference values: ``tests/data/hf_model_configs.json``, written by ``tools/hf_model_configs.py``,
which builds each model's own transformers config class and rotary-embedding module from the
config in ``posenc/io/examples.py`` and runs its forward (transformers 5.24.0, torch 2.13.0+cpu);
ChatGLM3 (remote code, no transformers class) from THUDM's modeling_chatglm.py formula evaluated
in torch.  The configs are written out from the models' published config.json files (the Hub
cannot be reached here); Phi-3.5-MoE's 64-entry factor lists are not reproduced exactly (see
``posenc/io/examples.py``).  Every float in the JSON is an exact float32 value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import posenc
from posenc.io.examples import REAL_CONFIGS

HF = json.loads((Path(__file__).parent / "data" / "hf_model_configs.json").read_text())
BY_NAME = {m["name"]: m for m in HF["models"]}
REQUIRED = ("Llama 3.1 8B", "Llama 4 Scout", "Qwen2.5 7B + YaRN", "DeepSeek-V3", "Phi-3-mini-128k", "Phi-3.5-MoE",
            "Gemma 3 4B", "GPT-NeoX-20B", "GPT-J-6B", "ChatGLM3-6B-32k")


def test_reference_file_is_from_transformers_5():
    assert HF["transformers_version"] == "5.24.0" and HF["torch_version"].startswith("2.13.0")
    assert set(REQUIRED) <= set(BY_NAME) and set(BY_NAME) == set(REAL_CONFIGS)


def _close(a, b, rtol=1e-6):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol, atol=0)


@pytest.mark.parametrize("name", [n for n in REAL_CONFIGS if n != "Gemma 3 4B"])
def test_inv_freq_attention_factor_and_logit_scale_at_the_served_length(name):
    ref = BY_NAME[name]
    run = ref["runs"][0]
    r = posenc.rope_from_config(REAL_CONFIGS[name])
    assert r.seq_len == run["seq_len"] == r.served_length
    expected = run.get("init_fn_inv_freq", run["inv_freq_buffer"])  # LongRoPE: the long set (see the Phi-3.5-MoE test)
    assert r.inv_freq.shape == (len(expected),) and r.rotary_dim == 2 * len(expected)
    _close(r.inv_freq, expected)
    assert math.isclose(r.attention_factor, run["cos_factor"], rel_tol=1e-6)
    assert math.isclose(r.logit_scale, run["cos_factor"] ** 2 * ref["logit_extra"], rel_tol=1e-6)


def test_text_accepted_as_well_as_dicts():
    text = json.dumps(REAL_CONFIGS["Llama 3.1 8B"])
    a, b = posenc.rope_from_config(text), posenc.rope_from_config(REAL_CONFIGS["Llama 3.1 8B"])
    np.testing.assert_array_equal(a.inv_freq, b.inv_freq)


def test_deepseek_mla_rotates_qk_rope_head_dim_and_scales_the_softmax():
    r = posenc.rope_from_config(REAL_CONFIGS["DeepSeek-V3"])
    assert (r.rotary_dim, r.head_dim) == (64, 192)  # not hidden / heads = 56
    # DeepseekV3Attention.scaling = 192^-0.5 * mscale(40, 1)^2; attention_factor = mscale(40,1)/mscale(40,1) = 1
    m = 0.1 * math.log(40) + 1
    assert r.attention_factor == 1.0 and math.isclose(r.logit_scale, m * m, rel_tol=1e-12)
    assert math.isclose(BY_NAME["DeepSeek-V3"]["logit_extra"], m * m, rel_tol=1e-6)
    v2 = posenc.rope_from_config(REAL_CONFIGS["DeepSeek-V2"])
    assert math.isclose(v2.logit_scale, (0.1 * 0.707 * math.log(40) + 1) ** 2, rel_tol=1e-12)
    assert any("mscale" in n for n in r.notes) and any("qk_rope_head_dim" in n for n in r.notes)


def test_llama4_low_equal_high_is_computed():
    r = posenc.rope_from_config(REAL_CONFIGS["Llama 4 Scout"])
    theta = posenc.default_inv_freq(128, 500000.0)
    kept = 2 * np.pi / theta < 8192  # low = high = 1: no smoothed band
    np.testing.assert_array_equal(r.inv_freq[kept], theta[kept])
    np.testing.assert_allclose(r.inv_freq[~kept], theta[~kept] / 16, rtol=1e-15)
    assert any("NoPE" in n for n in r.notes) and r.layout == "interleaved"


def test_phi3_longrope_switches_at_the_trained_length():
    ref = BY_NAME["Phi-3-mini-128k"]
    short = posenc.rope_from_config(REAL_CONFIGS["Phi-3-mini-128k"], seq_len=4096)
    long = posenc.rope_from_config(REAL_CONFIGS["Phi-3-mini-128k"], seq_len=4097)
    _close(short.inv_freq, ref["runs"][1]["inv_freq_buffer"])
    _close(long.inv_freq, ref["runs"][0]["inv_freq_buffer"])
    # attention factor sqrt(1 + ln(131072 / 4096) / ln 4096) = 1.19024 either way (GGUF: rope.scaling.attn_factor 1.190238)
    assert math.isclose(short.attention_factor, math.sqrt(1 + math.log(32) / math.log(4096)), rel_tol=1e-12)


def test_phi35_moe_uses_its_mscale_not_the_longrope_default():
    ref = BY_NAME["Phi-3.5-MoE"]
    r = posenc.rope_from_config(REAL_CONFIGS["Phi-3.5-MoE"])
    assert math.isclose(r.attention_factor, 1.243163121016122, rel_tol=1e-15)  # not 1.190
    assert math.isclose(ref["runs"][0]["cos_factor"], 1.243163121016122, rel_tol=1e-7)
    # transformers 5.24's PhimoeRotaryEmbedding.forward keeps the SHORT factors past 4096 (it recomputes
    # inv_freq without seq_len); its longrope init function and inv_freq buffer hold the long set, which
    # the model's own code uses and posenc draws.  The recorded cos at position 131071 shows which one ran.
    cos = np.asarray(ref["runs"][0]["cos_at_last"])
    short = np.asarray(ref["runs"][1]["inv_freq_buffer"], dtype=np.float32)
    used = np.cos((np.float32(131071) * short).astype(np.float32)) * ref["runs"][0]["cos_factor"]
    assert np.max(np.abs(used - cos)) < 1e-5
    _close(r.inv_freq, ref["runs"][0]["init_fn_inv_freq"])
    assert any("short factors" in n for n in r.notes)


def test_gemma3_global_and_local_layers():
    ref = BY_NAME["Gemma 3 4B"]["runs"]
    r = posenc.rope_from_config(REAL_CONFIGS["Gemma 3 4B"])
    _close(r.inv_freq, ref["full_attention"][0]["inv_freq_buffer"])
    local = r.layers["sliding_attention"]
    _close(local["inv_freq"], ref["sliding_attention"][0]["inv_freq_buffer"])
    assert (local["base"], local["window"], r.base) == (10000.0, 1024, 1e6)
    assert any("sliding-window layers" in n for n in r.notes)


def test_gemma3_v5_nested_rope_parameters():
    cfg = dict(REAL_CONFIGS["Gemma 3 4B"]["text_config"])
    for k in ("rope_theta", "rope_local_base_freq", "rope_scaling"):
        cfg.pop(k)
    cfg["rope_parameters"] = BY_NAME["Gemma 3 4B"]["rope_parameters"]  # as transformers 5 writes it
    r = posenc.rope_from_config(cfg)
    _close(r.inv_freq, BY_NAME["Gemma 3 4B"]["runs"]["full_attention"][0]["inv_freq_buffer"])
    _close(r.layers["sliding_attention"]["inv_freq"], BY_NAME["Gemma 3 4B"]["runs"]["sliding_attention"][0]["inv_freq_buffer"])


@pytest.mark.parametrize("name, rotary, head", [("GPT-NeoX-20B", 24, 96), ("GPT-J-6B", 64, 256), ("ChatGLM3-6B-32k", 64, 128)])
def test_partial_rotary_conventions(name, rotary, head):
    r = posenc.rope_from_config(REAL_CONFIGS[name])
    assert (r.rotary_dim, r.head_dim) == (rotary, head)


def test_chatglm_rope_ratio_is_in_the_base():
    r = posenc.rope_from_config(REAL_CONFIGS["ChatGLM3-6B-32k"])
    assert r.base == 500000.0 and any("rope_ratio" in n for n in r.notes)


def test_qwen2_vl_mrope_is_plain_rope_for_text_with_a_note():
    r = posenc.rope_from_config(REAL_CONFIGS["Qwen2-VL 7B (M-RoPE)"])
    assert r.rope_type == "default" and any("M-RoPE" in n for n in r.notes)


@pytest.mark.parametrize("i", range(3))
def test_proportional_rope_type_against_transformers(i):
    ref = HF["proportional"][i]
    inv, af = posenc.rope_frequencies(ref["head_dim"], base=ref["rope_parameters"]["rope_theta"], scaling=ref["rope_parameters"])
    _close(inv, ref["inv_freq"])
    assert af == ref["attention_factor"] == 1.0


def test_every_transformers_5_rope_type_is_computed():
    # transformers 5.24 ROPE_INIT_FUNCTIONS keys (plus "default" from each model's compute_default_rope_parameters)
    hf = {"default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"}
    assert hf <= set(posenc.schemes.scaling.ROPE_INIT_FUNCTIONS)


def test_max_position_embeddings_makes_a_pasted_block_match_the_model():
    block = dict(REAL_CONFIGS["Phi-3-mini-128k"]["rope_scaling"], rope_type="longrope", original_max_position_embeddings=4096)
    _, af_plain = posenc.rope_frequencies(96, scaling=block, seq_len=131072)
    _, af = posenc.rope_frequencies(96, scaling=block, seq_len=131072, max_position_embeddings=131072)
    assert af_plain == 1.0 and math.isclose(af, 1.1902380714238083, rel_tol=1e-12)
    yarn = {"rope_type": "yarn", "original_max_position_embeddings": 2048}  # no factor: max_pos / orig, as HF
    inv, af = posenc.rope_frequencies(64, scaling=yarn, max_position_embeddings=8192)
    ref = next(c for c in json.loads((Path(__file__).parent / "data" / "hf_oracle.json").read_text())["rope_init"]
               if c["name"] == "yarn_d64_factorNone_o2048_maxpos8192")
    _close(inv, ref["inv_freq"])
    assert math.isclose(af, ref["attention_factor"], rel_tol=1e-6)


def _read(block: dict, **extra):
    cfg = {"hidden_size": 1024, "num_attention_heads": 8, "max_position_embeddings": 4096, "rope_theta": 10000.0,
           "rope_scaling": block, **extra}
    return posenc.rope_from_config(json.dumps(cfg))


@pytest.mark.parametrize("rope_type", list(posenc.schemes.scaling.ROPE_TRAITS))
def test_every_declared_rope_type_trait_holds(rope_type):
    """scaling.ROPE_TRAITS, each trait measured: ``scaled`` -- the type's RoPE scheme uses the default frequencies
    exactly iff it is not scaled; ``needs_factor`` -- a block without "factor" is refused for that reason iff it
    needs one; ``config_note`` -- said iff declared; ``zero_pairs`` -- with partial_rotary_factor 0.5 every channel
    stays in the rotary dimension (the rest of the pairs get theta = 0) iff declared, else half of them rotate."""
    from posenc.schemes.scaling import ROPE_TRAITS, default_inv_freq

    traits = ROPE_TRAITS[rope_type]
    key = "rope" if not traits.scaled else f"rope_{rope_type}"
    if key in posenc.SCHEMES:  # the registry's scheme at its defaults, past its trained length
        spec = posenc.SCHEMES[key]
        params = {p.name: p.default for p in spec.params}
        inv, _ = spec.behaviour.frequencies(96, seq_len=8 * 8192, **params)  # 96: Phi-3's published LongRoPE factors
        assert np.array_equal(inv, default_inv_freq(96, params["base"])) == (not traits.scaled)
    else:  # a type the registry does not list (proportional): only through a config block
        assert rope_type == "proportional" and traits.scaled

    try:
        _read({"rope_type": rope_type})
        refused_for_factor = False
    except ValueError as exc:
        refused_for_factor = "needs a 'factor'" in str(exc)
    assert refused_for_factor == traits.needs_factor

    if rope_type in ("default", "linear", "ntk", "dynamic", "proportional"):  # readable from a factor alone
        block = {"rope_type": rope_type, "factor": 4.0}
        notes = _read(block).notes
        assert (traits.config_note in notes) if traits.config_note else not any("is not a transformers v5 key" in n for n in notes)
        partial = _read({**block, "partial_rotary_factor": 0.5})
        assert partial.rotary_dim == (128 if traits.zero_pairs else 64)


# ----------------------------------------------------------------------------- real configs of tests/data/real_configs.json

REAL = {k: v for k, v in json.loads((Path(__file__).parent / "data" / "real_configs.json").read_text()).items() if not k.startswith("_")}
HF_REAL = HF["real_configs"]
REQUIRED_REAL = ("Aya 23 8B", "Command R7B", "SmolLM3 3B", "Falcon-RW-1B", "Ministral 3 8B", "Gemma 2 27B", "Granite 3.0 2B",
                 "GPT-OSS 20B")


def test_every_real_config_names_its_source_and_was_run_through_transformers():
    assert set(REQUIRED_REAL) <= set(REAL)
    for name, entry in REAL.items():
        assert " : " in entry["source"] and ("config.json" in entry["source"] or "params.json" in entry["source"])
        if "dim" not in entry["config"]:  # Meta's params.json has no transformers class
            assert HF_REAL[name]["source"] and HF_REAL[name]["model_type"]


def _hf_run(ref: dict) -> dict:
    runs = ref["runs"]
    return runs["full_attention"][0] if isinstance(runs, dict) else runs[0]


@pytest.mark.parametrize("name", [n for n in REAL if n != "Falcon-RW-1B" and "dim" not in REAL[n]["config"]])
def test_real_config_against_transformers(name):
    ref, r = HF_REAL[name], posenc.rope_from_config(REAL[name]["config"])
    run = _hf_run(ref)
    _close(r.inv_freq, run["inv_freq_buffer"])
    assert math.isclose(r.attention_factor, run["cos_factor"], rel_tol=1e-6)
    assert math.isclose(r.logit_scale, run["cos_factor"] ** 2 * ref["logit_extra"], rel_tol=1e-6)  # incl. the softmax scale
    if "layers" in ref:  # each layer as the model's own attention module holds it: rotates or not, its window
        rope = [layer["rope"] for layer in ref["layers"]]
        windows = [layer["sliding_window"] for layer in ref["layers"]]
        kinds = {(k["rope"], k["window"] if k["attention"] == "sliding" else None): k["count"] for k in r.layers.values()}
        assert kinds == {key: sum(1 for x in zip(rope, windows) if x == key) for key in set(zip(rope, windows))}


def test_the_three_wrong_answers_of_issue_39():
    aya = posenc.rope_from_config(REAL["Aya 23 8B"]["config"])
    assert aya.layout == "interleaved" == HF["layouts"]["cohere"] == HF["layouts"]["cohere2"]
    smol = posenc.rope_from_config(REAL["SmolLM3 3B"]["config"])
    assert smol.layers["full_attention"]["count"] == 27 and smol.layers["full_attention_no_rope"]["count"] == 9
    assert smol.layers["full_attention_no_rope"]["inv_freq"] is None
    from posenc.io.configlayers import NotRoPE

    with pytest.raises(NotRoPE, match="uses ALiBi .*pages/relative_bias.py") as info:
        posenc.rope_from_config(REAL["Falcon-RW-1B"]["config"])
    assert (info.value.scheme, info.value.page, info.value.heads) == ("alibi", "pages/relative_bias.py", 32)
    assert HF_REAL["Falcon-RW-1B"]["alibi"] and not HF_REAL["Falcon-RW-1B"]["rotary"]


def test_every_family_layout_is_its_rotate_codes():
    from posenc.io.configlayers import FAMILY_LAYOUT

    assert HF["layouts"] and all(FAMILY_LAYOUT[mt][0] == got for mt, got in HF["layouts"].items())


def test_query_scaling_and_softmax_scales():
    mini = posenc.rope_from_config(REAL["Ministral 3 8B"]["config"])
    q = HF_REAL["Ministral 3 8B"]["query_scale"]  # transformers' get_llama_4_attn_scale at these positions
    np.testing.assert_allclose([mini.query_factor(p) for p in q["positions"]], q["factor"], rtol=1e-6)
    at = mini.logit_scale_at(262143)
    assert math.isclose(at["query(p)"], 1 + 0.1 * math.log(16), rel_tol=1e-12) and math.isclose(at["total"], at["query(p)"])
    scout = posenc.rope_from_config(REAL_CONFIGS["Llama 4 Scout"])
    nope = scout.layers["full_attention_no_rope"]
    assert nope["count"] == 12 and nope["query_scale"]["kind"] == "attn_temperature_tuning"
    # Llama4TextAttention: log1p(floor((p + 1) / floor_scale)) * attn_scale + 1, in the NoPE layers only
    assert math.isclose(scout.logit_scale_at(8191, "full_attention_no_rope")["query(p)"], 1 + 0.1 * math.log(2), rel_tol=1e-12)
    assert scout.logit_scale_at(8191)["query(p)"] == 1.0
    for name, ratio in (("Gemma 2 27B", math.sqrt(128 / 144)), ("Gemma 3 27B", math.sqrt(128 / 168)), ("Granite 3.0 2B", 0.125)):
        r = posenc.rope_from_config(REAL[name]["config"])
        assert math.isclose(r.logit_scale_at(0)["softmax"], ratio, rel_tol=1e-12)
        assert math.isclose(HF_REAL[name]["logit_extra"], ratio, rel_tol=1e-6)


def test_gemma3_type_spelling_is_read_as_written_and_said():
    cfg = json.loads(json.dumps(REAL["Gemma 3 27B"]["config"]))
    cfg["text_config"]["rope_scaling"] = {"type": "linear", "factor": 8.0}
    r = posenc.rope_from_config(cfg)
    ref = HF_REAL["Gemma 3 27B, type spelling"]
    assert ref["rope_parameters"]["full_attention"]["rope_type"] == "default"  # transformers 5.24 runs it unscaled
    unscaled = ref["runs"]["full_attention"][0]["inv_freq_buffer"]
    _close(r.inv_freq * 8, unscaled)  # posenc applies the x8 the block names
    assert any("spells its type as 'type'" in n and "unscaled" in n for n in r.notes)


@pytest.mark.parametrize("text, match", [
    ('{"tokenizer_class": "LlamaTokenizer", "model_max_length": 131072, "bos_token": "<s>"}', "tokenizer_config.json"),
    ('{"_from_model_config": true, "bos_token_id": 1, "do_sample": true, "temperature": 0.6}', "generation_config.json"),
    ('{"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors"}}',
     "model.safetensors.index.json"),
])
def test_the_wrong_file_is_named(text, match):
    with pytest.raises(ValueError, match=match) as info:
        posenc.rope_from_config(text)
    assert "config.json" in str(info.value)


def test_metas_params_json_is_read():
    r = posenc.rope_from_config(REAL["Llama 3.1 8B params.json"]["config"])
    hf = posenc.rope_from_config(REAL_CONFIGS["Llama 3.1 8B"])
    np.testing.assert_array_equal(r.inv_freq, posenc.rope_from_config(REAL_CONFIGS["Llama 3.1 8B"], seq_len=65536).inv_freq)
    assert (r.head_dim, r.base, r.rope_type, r.layout, hf.layout) == (128, 500000.0, "llama3", "interleaved", "half_split")
    assert r.served_length == 65536 and any("params.json" in n for n in r.notes)


def test_the_examples_match_their_real_configs():
    for name in ("Ministral 3 8B", "SmolLM3 3B", "Gemma 2 27B", "GPT-OSS 20B"):
        ex, real = REAL_CONFIGS[name], REAL[name]["config"]
        ex_body, real_body = ex.get("text_config", ex), real.get("text_config", real)
        assert all(real_body[k] == v for k, v in ex_body.items()), name
