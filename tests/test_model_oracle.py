"""posenc.model against Hugging Face transformers on the same GGUF (tests/data/model/oracle.*, written by
tools/model_oracle.py with transformers' GGUF loader): identical token ids, logits within 1e-3, attention within 1e-4;
the file's interleaved q/k rows against transformers' half-split ones and rope_from_config of the model's config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import posenc.model as pm
from posenc import rope_from_config
from posenc.schemes.rotary import pair_permutation

DATA = Path(__file__).resolve().parent / "data" / "model"
ORACLE = json.loads((DATA / "oracle.json").read_text("utf-8"))
ARRAYS = np.load(DATA / "oracle.npz")
pytestmark = pytest.mark.skipif(not pm.available(), reason=f"the bundled model is not installed: {pm.INSTALL}")


@pytest.fixture(scope="module")
def model():
    return pm.load()


def test_the_data_is_small_and_from_transformers():
    assert (DATA / "oracle.npz").stat().st_size + (DATA / "oracle.json").stat().st_size < 2 * 2**20
    assert ORACLE["versions"]["transformers"].startswith("5.")
    assert {p["name"] for p in ORACLE["prompts"]} >= {"english", "code", "digits", "unicode", "repeated"}


@pytest.mark.parametrize("case", ORACLE["prompts"] + ORACLE["tokenize_only"], ids=lambda c: c["name"])
def test_token_ids_are_transformers(model, case):
    assert model.encode(case["text"]).tolist() == case["ids"]


@pytest.mark.parametrize("i", range(len(ORACLE["prompts"])), ids=[p["name"] for p in ORACLE["prompts"]])
def test_logits_and_attention_match_transformers(model, i):
    case = ORACLE["prompts"][i]
    layers = ORACLE["attention_layers"]
    trace = model.trace(np.array(case["ids"]), keep=("attention",), layers=layers)
    ours = trace.logits[:, ORACLE["columns"]]
    assert np.max(np.abs(ours - ARRAYS[f"logits_{i}"])) < 1e-3
    assert int(np.argmax(trace.logits[-1])) == case["top1"]
    attention = np.stack([trace.records["attention"][layer] for layer in layers])  # (layers, H, n, n)
    assert np.max(np.abs(attention - ARRAYS[f"attention_{i}"])) < 1e-4


def test_the_file_rotates_interleaved_pairs_transformers_half_split(model):
    """llama.cpp's converter permuted q/k rows per head: transformers' row i is the file's row P[i]
    (posenc.schemes.rotary.pair_permutation: interleaved(x) == half_split(x[P])[argsort(P)])."""
    d = model.shape.head_dim
    qkv = model.weights.layers[0]["qkv"].dense()
    H = model.shape.n_heads
    P = pair_permutation(d)
    assert np.allclose(qkv[:d][P], ARRAYS["q_proj_head0"], atol=1e-6)
    assert np.allclose(qkv[H * d:H * d + d][P], ARRAYS["k_proj_head0"], atol=1e-6)
    assert not np.allclose(qkv[:d], ARRAYS["q_proj_head0"], atol=1e-3)  # unpermuted they differ
    assert model.rope.layout == "interleaved"


def test_the_rope_of_the_file_is_that_of_its_config(model):
    cfg = ORACLE["config"]
    config = {"hidden_size": cfg["hidden_size"], "num_attention_heads": cfg["num_attention_heads"], "head_dim": cfg["head_dim"],
              "max_position_embeddings": cfg["max_position_embeddings"], "rope_theta": ORACLE["rope_parameters"]["rope_theta"]}
    r = rope_from_config(config)
    assert np.allclose(r.inv_freq, model.rope.inv_freq, rtol=1e-12)
    assert np.allclose(model.rope.inv_freq, ARRAYS["inv_freq"], rtol=1e-6)  # transformers computes it in float32
    assert r.trained_length == model.rope.trained_length == 8192 and r.base == 100000.0


def test_the_dog_bit_the_man(model):
    logits = model.logits(model.encode("The dog bit the man. The man bit the"))[-1]
    p = np.exp(logits - logits.max())
    p /= p.sum()
    assert model.tokens([int(np.argmax(p))]) == [" dog"]
    assert 0.92 < p.max() < 0.94
