"""posenc against tests/data/hf_oracle.json: values produced by running Hugging Face
transformers 5.24 / torch 2.13 (generator: tools/hf_oracle.py; read its ``notes``).

Conventions (from the oracle's notes and running HF):
- HF computes in float32: inv_freq / slopes / tables are compared at rtol ~1e-6; apply_rope
  outputs at an absolute tolerance that grows with the position (float32 angles p * theta:
  ~1e-7 * p, up to ~4e-4 at p = 4095; the notes recommend atol ~5e-4 there).
- dynamic: HF's trained length is config.max_position_embeddings; our API takes it as
  scaling["original_max_position_embeddings"] and the current length as seq_len.
- yarn / longrope with no "factor": HF falls back to max_position_embeddings /
  original_max_position_embeddings; our API has no max_position_embeddings, so the mapping
  passes that ratio as "factor" (our API rejects factor=None outright -- tested below).
- T5 bidirectional with num_buckets = 2 raises ZeroDivisionError in HF; posenc raises ValueError.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import posenc
import posenc.schemes.relative as posenc_relative

ORACLE_PATH = pathlib.Path(__file__).parent / "data" / "hf_oracle.json"
ORACLE = json.loads(ORACLE_PATH.read_text("utf-8"))
ROPE_INIT = ORACLE["rope_init"]
APPLY = ORACLE["apply_rope"]


def test_oracle_provenance():
    assert ORACLE["transformers_version"] == "5.24.0"
    assert ORACLE["torch_version"].startswith("2.13.0")
    assert ORACLE["generator"] == "tools/hf_oracle.py"
    # every one of the 96 cases is run below: none is skipped.  (The oracle has no case our API
    # deliberately rejects, such as beta_fast = 0; the one "factor": None case is mapped to HF's
    # fallback factor, and None itself is tested to be rejected.)
    assert len(ROPE_INIT) == 96
    assert {c["rope_type"] for c in ROPE_INIT} == {"default", "linear", "dynamic", "yarn", "llama3", "longrope"}


def to_posenc(case: dict, seq_len=None) -> tuple[int, float, dict | None, int | None]:
    """Map one HF case (rope_parameters + LlamaConfig fields) onto rope_frequencies arguments."""
    params = dict(case["rope_parameters"])
    rope_type = params.pop("rope_type")
    base = params.pop("rope_theta")
    max_pos = case["max_position_embeddings"]
    if rope_type == "default":
        return case["head_dim"], base, None, seq_len
    scaling = {"rope_type": rope_type, **params}
    if rope_type == "dynamic":
        # HF's trained length is max_position_embeddings; an original_max_position_embeddings
        # key in rope_parameters is ignored by HF (case *_orig_key_ignored), so it is replaced
        scaling["original_max_position_embeddings"] = max_pos
    if rope_type in ("yarn", "longrope") and scaling.get("factor") is None:
        scaling["factor"] = max_pos / scaling["original_max_position_embeddings"]  # HF's fallback
    return case["head_dim"], base, scaling, seq_len


@pytest.mark.parametrize("case", ROPE_INIT, ids=[c["name"] for c in ROPE_INIT])
def test_rope_init_matches_hf(case):
    d, base, scaling, seq_len = to_posenc(case, case["seq_len"])
    inv, af = posenc.rope_frequencies(d, base=base, scaling=scaling, seq_len=seq_len)
    ref = np.asarray(case["inv_freq"])
    assert inv.shape == ref.shape == (d // 2,)
    np.testing.assert_allclose(inv, ref, rtol=1e-6, atol=0)
    assert af == pytest.approx(case["attention_factor"], rel=1e-9)
    if "inv_freq_seq_len_as_tensor" in case:  # the forward-pass path (seq_len as a float32 tensor)
        np.testing.assert_allclose(inv, case["inv_freq_seq_len_as_tensor"], rtol=1e-6, atol=0)


def test_rope_init_through_the_registry():
    """The rotary schemes' parameters map onto the same HF computations."""
    by_name = {c["name"]: c for c in ROPE_INIT}
    picks = {
        "rope": ("default_d128_b10000", {}),
        "rope_linear": ("linear_d128_s4", {"factor": 4.0}),
        "rope_dynamic": ("dynamic_d128_s4_L8192", {"factor": 4.0, "original_max_position_embeddings": 2048}),
        "rope_yarn": ("yarn_d128_s8_o4096", {"factor": 8.0, "original_max_position_embeddings": 4096}),
        "rope_llama3": ("llama3_1_d128", {}),
    }
    for key, (name, params) in picks.items():
        case = by_name[name]
        inv, af = posenc.rope_for(key, case["head_dim"], seq_len=case["seq_len"], base=case["base"], **params)
        np.testing.assert_allclose(inv, case["inv_freq"], rtol=1e-6, atol=0)
        assert af == pytest.approx(case["attention_factor"], rel=1e-9)


def test_yarn_factor_none_is_rejected():
    case = next(c for c in ROPE_INIT if c["name"] == "yarn_d64_factorNone_o2048_maxpos8192")
    assert case["rope_parameters"]["factor"] is None
    with pytest.raises(ValueError, match="factor"):
        posenc.rope_frequencies(64, scaling={"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 2048})


def test_dynamic_orig_key_ignored_case_equals_plain_case():
    by_name = {c["name"]: c for c in ROPE_INIT}
    a, b = by_name["dynamic_d16_s2_L4096_orig_key_ignored"], by_name["dynamic_d16_s2_L4096"]
    assert a["inv_freq"] == b["inv_freq"]  # HF: trained length = max_position_embeddings


# ----------------------------------------------------------------------------- apply_rope

def apply_case(case: dict) -> tuple[np.ndarray, np.ndarray, float]:
    x = np.asarray(APPLY[case["x"]])  # (heads, positions, head_dim)
    pos = np.asarray(case["positions"], dtype=np.float64)
    d = case["head_dim"]
    if "rope_parameters" in case:  # Llama: rotate_half layout, inv_freq from the config
        # forward() recomputes dynamic with seq_len = max(position_ids) + 1 (see the case's note)
        d, base, scaling, seq_len = to_posenc(case, int(pos.max()) + 1)
        inv, af = posenc.rope_frequencies(d, base=base, scaling=scaling, seq_len=seq_len)
        np.testing.assert_allclose(inv, case["inv_freq_used"], rtol=1e-6, atol=0)
        assert af == pytest.approx(case["attention_scaling"], rel=1e-9)
        layout = "half_split"
    else:  # GPT-J: rotate_every_two layout, plain inv_freq
        inv, af = posenc.rope_frequencies(d, base=case["base"])
        layout = "interleaved"
    out = posenc.apply_rope(x, pos, inv, layout=layout, attention_factor=af)
    return out, pos, af


@pytest.mark.parametrize("case", APPLY["cases"], ids=[c["name"] for c in APPLY["cases"]])
def test_apply_rope_matches_hf(case):
    out, pos, _ = apply_case(case)
    ref = np.asarray(case["out"])
    assert out.shape == ref.shape == np.asarray(APPLY[case["x"]]).shape
    assert pos.tolist() == APPLY["positions"] == [0, 1, 2, 3, 100, 1000, 4095]
    err = np.max(np.abs(out - ref), axis=(0, 2))  # (positions,)
    tol = 1e-6 + 1.2e-7 * pos  # float32 angle error grows like p * 1e-7 (notes: ~3.4e-4 at 4095)
    assert np.all(err <= tol), (err, tol)
    assert err.max() <= 5e-4


def test_apply_rope_cases_cover_both_layouts_and_scalings():
    names = [c["name"] for c in APPLY["cases"]]
    assert any(n.startswith("gptj") for n in names) and any(n.startswith("llama_default") for n in names)
    assert {"llama_yarn_d64_s4_o2048", "llama_dynamic_d64_s2_maxpos2048"} <= set(names)


# ----------------------------------------------------------------------------- T5, ALiBi, sinusoid

T5_CASES = ORACLE["t5_bucket"]


@pytest.mark.parametrize("case", T5_CASES, ids=[f"bi{c['bidirectional']}-nb{c['num_buckets']}-md{c['max_distance']}" for c in T5_CASES])
def test_t5_bucket_grid(case):
    kw = {"bidirectional": case["bidirectional"], "num_buckets": case["num_buckets"], "max_distance": case["max_distance"]}
    rel = np.asarray(case["relative_position"])
    assert rel.size == 607 and rel.min() == -20000 and rel.max() == 20000  # -300..300 plus far points
    if case["bucket"] is None:
        # HF: "ZeroDivisionError: division by zero" (bidirectional, num_buckets = 2); posenc refuses
        assert "ZeroDivisionError" in case["error"]
        with pytest.raises(ValueError, match="num_buckets"):
            posenc.t5_bucket(rel, **kw)
        return
    got = posenc.t5_bucket(rel, **kw)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, case["bucket"])


@pytest.mark.parametrize("case", [c for c in T5_CASES if c["bucket"] is not None],
                         ids=[f"bi{c['bidirectional']}-nb{c['num_buckets']}-md{c['max_distance']}" for c in T5_CASES if c["bucket"] is not None])
def test_t5_bucket_of_a_score_matrix_is_the_oracles(case):
    """A matrix of offsets (many entries over few distinct values: t5_bucket computes each value once and looks it up)
    gets HF's buckets entry by entry, as the oracle's grid does."""
    kw = {"bidirectional": case["bidirectional"], "num_buckets": case["num_buckets"], "max_distance": case["max_distance"]}
    rel, want = np.asarray(case["relative_position"]), np.asarray(case["bucket"])
    near = np.abs(rel) <= 300  # -300 .. 300, each once
    i = np.arange(301)
    offsets = i[None, :] - i[:, None]  # (301, 301): every j - i in -300 .. 300, up to 301 times
    assert np.ptp(offsets) < offsets.size // posenc_relative.LOOKUP_SHARE  # the looked-up path
    got = posenc.t5_bucket(offsets, **kw)
    assert got.shape == offsets.shape and got.dtype == np.int64
    hf = dict(zip(rel[near].tolist(), want[near].tolist()))
    np.testing.assert_array_equal(got, np.vectorize(hf.get)(offsets))


def test_t5_grid_has_the_zero_division_case():
    bad = [c for c in T5_CASES if c["bucket"] is None]
    assert len(bad) == 1 and bad[0]["num_buckets"] == 2 and bad[0]["bidirectional"] is True
    assert len(T5_CASES) == 12


def test_alibi_slopes_all_head_counts():
    heads = [c["n_heads"] for c in ORACLE["alibi"]]
    assert heads == list(range(1, 41)) + [48, 64, 96, 112, 128]
    for case in ORACLE["alibi"]:
        got = posenc.alibi_slopes(case["n_heads"])
        assert got.shape == (case["n_heads"],)
        np.testing.assert_allclose(got, case["slopes"], rtol=1e-6, atol=0)  # BLOOM float32


@pytest.mark.parametrize("case", ORACLE["sinusoidal"], ids=[f"n{c['n_pos']}-d{c['dim']}" for c in ORACLE["sinusoidal"]])
def test_distilbert_sinusoid(case):
    ref = np.asarray(case["table"])  # DistilBERT _create_sinusoidal_embeddings, float32
    got = posenc.sinusoidal(np.arange(case["n_pos"]), case["dim"])
    assert got.shape == ref.shape == (case["n_pos"], case["dim"])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-7)
    np.testing.assert_allclose(posenc.encode("sinusoidal", np.arange(case["n_pos"]), case["dim"]), ref, rtol=0, atol=1e-7)
