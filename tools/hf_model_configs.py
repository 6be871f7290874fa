"""Reference values for ``posenc.rope_from_config``: each real config of ``posenc/io/examples.py``
run through its model's own transformers classes (config class, rotary embedding, softmax scale).

Run by hand, never by CI (no torch or transformers there); writes ``tests/data/hf_model_configs.json``::

    python3 -m venv /tmp/hfvenv && /tmp/hfvenv/bin/pip install "transformers==5.24.0" "torch==2.13.0" numpy
    /tmp/hfvenv/bin/python tools/hf_model_configs.py

For every model: the config class built from the config dict (``text_config`` for multimodal
ones), its ``<Model>RotaryEmbedding``, ``forward`` at the served length (and at the trained
length for LongRoPE), and the cos table at position 0 -- which equals the factor cos and sin are
multiplied by.  ``logit_scale`` is attn.scaling * sqrt(qk head dim) * attention_scaling^2: what the
model multiplies q.k by beyond 1/sqrt(d).  ChatGLM3 has no transformers class (remote code), so its
RotaryEmbedding formula from THUDM's modeling_chatglm.py is evaluated in torch here.  GPT-J has no
rotary module: ``create_sinusoidal_positions`` is its inv_freq.
"""

from __future__ import annotations

import copy
import json
import math
import os
import platform
import sys

import numpy as np
import torch
import transformers
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from posenc.io.examples import REAL_CONFIGS  # noqa: E402  (plain dicts; posenc needs only numpy here)

OUT = os.path.normpath(os.path.join(HERE, "..", "tests", "data", "hf_model_configs.json"))


def f32(t) -> list[float]:
    a = t.detach().cpu().numpy()
    assert a.dtype == np.float32, a.dtype
    return [float(v) for v in a.reshape(-1)]


def run_rotary(emb, seq_len: int, layer_type=None) -> dict:
    """forward at positions [0, seq_len - 1] (HF: seq_len = max(position_ids) + 1).

    cos at position 0 is exactly the factor cos and sin are multiplied by (cos 0 = 1); Llama 4
    returns complex freqs_cis (cos + i sin) instead of (cos, sin)."""
    x = torch.zeros(1, 1, 1, dtype=torch.float32)
    kw = {"layer_type": layer_type} if layer_type else {}
    res = emb(x, torch.tensor([[0, seq_len - 1]]), **kw)
    cos = res.real if isinstance(res, torch.Tensor) and res.is_complex() else res[0]
    prefix = f"{layer_type}_" if layer_type else ""
    inv = getattr(emb, f"{prefix}inv_freq")
    return {"seq_len": seq_len, "inv_freq_buffer": f32(inv), "cos_factor": float(cos[0, 0, 0]),
            "cos_at_last": f32(cos[0, 1, : inv.numel()].contiguous()), "complex": bool(isinstance(res, torch.Tensor))}


def attention_scale(model_type: str, cfg, head_dim_qk: int) -> float:
    """attn.scaling * sqrt(qk head dim): 1 unless the model rescales its softmax (DeepSeek's mscale^2)."""
    if model_type in ("deepseek_v3", "deepseek_v2"):
        mod = transformers.models.deepseek_v3.modeling_deepseek_v3 if model_type == "deepseek_v3" \
            else transformers.models.deepseek_v2.modeling_deepseek_v2
        return float(mod.yarn_apply_mscale(cfg.rope_parameters, head_dim_qk ** -0.5) * math.sqrt(head_dim_qk))
    if model_type == "gemma3_text":
        return float(cfg.query_pre_attn_scalar ** -0.5 * math.sqrt(cfg.head_dim))
    return 1.0


def case(name: str, cfg_dict: dict) -> dict:
    raw = copy.deepcopy(cfg_dict)
    body = raw.get("text_config", raw)
    mt = body.get("model_type") or raw.get("model_type")
    out = {"name": name, "model_type": mt}
    M = transformers.models
    if mt == "chatglm":  # THUDM modeling_chatglm.py: RotaryEmbedding(rotary_dim // 2, rope_ratio)
        rotary_dim = body["kv_channels"] // 2
        base = 10000 * body.get("rope_ratio", 1)
        theta = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
        out.update(source="THUDM/chatglm3-6b-32k modeling_chatglm.py RotaryEmbedding.forward_impl, evaluated in torch",
                   rotary_dim=rotary_dim, runs=[{"seq_len": body["seq_length"], "inv_freq_buffer": f32(theta), "cos_factor": 1.0}],
                   logit_extra=1.0)
        return out
    if mt == "gptj":
        cfg = M.gptj.GPTJConfig(**body)
        dim = cfg.rotary_dim
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))
        out.update(source="GPTJ create_sinusoidal_positions", rotary_dim=dim,
                   runs=[{"seq_len": cfg.n_positions, "inv_freq_buffer": f32(inv.float()), "cos_factor": 1.0}], logit_extra=1.0)
        return out
    classes = {
        "llama": (M.llama.LlamaConfig, M.llama.modeling_llama.LlamaRotaryEmbedding),
        "llama4_text": (M.llama4.Llama4TextConfig, M.llama4.modeling_llama4.Llama4TextRotaryEmbedding),
        "qwen2": (M.qwen2.Qwen2Config, M.qwen2.modeling_qwen2.Qwen2RotaryEmbedding),
        "deepseek_v3": (M.deepseek_v3.DeepseekV3Config, M.deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding),
        "deepseek_v2": (M.deepseek_v2.DeepseekV2Config, M.deepseek_v2.modeling_deepseek_v2.DeepseekV2RotaryEmbedding),
        "phi3": (M.phi3.Phi3Config, M.phi3.modeling_phi3.Phi3RotaryEmbedding),
        "phimoe": (M.phimoe.PhimoeConfig, M.phimoe.modeling_phimoe.PhimoeRotaryEmbedding),
        "gemma3_text": (M.gemma3.Gemma3TextConfig, M.gemma3.modeling_gemma3.Gemma3RotaryEmbedding),
        "gpt_neox": (M.gpt_neox.GPTNeoXConfig, M.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding),
        "qwen2_vl": (M.qwen2_vl.Qwen2VLTextConfig, M.qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding),
        "mistral": (M.mistral.MistralConfig, M.mistral.modeling_mistral.MistralRotaryEmbedding),
    }
    cfg_cls, emb_cls = classes[mt]
    fields = {k: v for k, v in body.items() if k not in ("_name_or_path", "architectures", "model_type")}
    cfg = cfg_cls(**fields)
    emb = emb_cls(cfg)
    served = cfg.max_position_embeddings
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    qk = getattr(cfg, "qk_head_dim", None) or head_dim
    out.update(source=f"{cfg_cls.__name__} + {emb_cls.__name__}.forward", rope_parameters=copy.deepcopy(cfg.rope_parameters),
               head_dim_config=head_dim, qk_head_dim=qk, logit_extra=attention_scale(mt, cfg, qk))
    if mt == "gemma3_text":
        out["runs"] = {lt: [dict(run_rotary(emb, served, lt), attention_scaling=float(getattr(emb, f"{lt}_attention_scaling")))]
                       for lt in emb.layer_types}
        return out
    runs = [run_rotary(emb, served)]
    rp = cfg.rope_parameters
    if rp.get("rope_type") == "longrope":
        orig = rp["original_max_position_embeddings"]
        short = emb_cls(cfg)  # fresh module: LongRoPE keeps the set it switched to
        runs.append(run_rotary(short, orig))
        for r, L in zip(runs, (served, orig)):
            r["init_fn_inv_freq"] = f32(ROPE_INIT_FUNCTIONS["longrope"](cfg, None, seq_len=L)[0])
            r["init_fn_attention_factor"] = float(ROPE_INIT_FUNCTIONS["longrope"](cfg, None, seq_len=L)[1])
    for r in runs:
        r["attention_scaling"] = float(emb.attention_scaling)
    out["runs"] = runs
    return out


def main(path: str = OUT) -> None:
    cases = [case(name, cfg) for name, cfg in REAL_CONFIGS.items()]
    # transformers 5.x's newest rope_type, on a LlamaConfig as tools/hf_oracle.py builds them
    extra = []
    for p, factor in ((0.25, 1.0), (0.5, 2.0), (1.0, 1.0)):
        rp = {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": p, "factor": factor}
        cfg = transformers.LlamaConfig(hidden_size=512, num_attention_heads=2, head_dim=256, max_position_embeddings=8192,
                                       rope_parameters=copy.deepcopy(rp), num_hidden_layers=1, intermediate_size=8, vocab_size=8)
        inv, af = ROPE_INIT_FUNCTIONS["proportional"](cfg, None)
        extra.append({"head_dim": 256, "rope_parameters": rp, "inv_freq": f32(inv), "attention_factor": float(af)})
    data = {"generator": "tools/hf_model_configs.py", "transformers_version": transformers.__version__,
            "torch_version": torch.__version__, "python_version": platform.python_version(), "models": cases,
            "proportional": extra}
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print(f"wrote {path}: {os.path.getsize(path) / 1024:.1f} KiB")


if __name__ == "__main__":
    main(*sys.argv[1:])
