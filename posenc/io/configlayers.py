"""What a config.json says beyond the RoPE block: which file it is, whether the model uses RoPE at all, which
layers rotate and how far each sees, how the model pairs channels, and what multiplies its logits.

Read as each family's own code runs it (transformers 5.x ``models/<family>/modeling_<family>.py``):

- not RoPE:   Falcon with ``alibi: true`` (``FalconAttention`` adds ``build_alibi_tensor`` and never calls the
              rotary code), BLOOM, MPT with ``attn_config.alibi``: ALiBi; GPT-2, OPT, BERT: learned absolute
              positions; T5: relative buckets.  Each is refused, naming the page that explains its scheme.
- layers:     ``layer_types`` ("full_attention" / "sliding_attention" / "chunked_attention"), else the family's
              default pattern (Gemma 2, GPT-OSS: every other layer slides; Gemma 3: 5 of 6; Cohere 2: 3 of 4);
              ``no_rope_layers`` (SmolLM3, Llama 4: 1 = RoPE); Cohere 2 rotates only its sliding-window layers
              (``Cohere2Attention``: ``if self.sliding_window is not None`` around ``apply_rotary_pos_emb``);
              Llama 4 runs chunked attention (``attention_chunk_size``) in its RoPE layers.
- softmax:    ``query_pre_attn_scalar`` (Gemma 2 / 3: scale = q^-1/2), ``attention_multiplier`` (Granite: scale =
              the multiplier), against the usual 1/sqrt(head_dim); ``attn_logit_softcapping`` (Gemma 2).
- queries:    Llama 4's ``attn_temperature_tuning`` (NoPE layers: 1 + attn_scale ln(floor((p + 1) / floor_scale) + 1))
              and Ministral 3's ``llama_4_scaling_beta`` (every layer: 1 + beta ln(1 + floor(p / L0)), L0 the
              block's original_max_position_embeddings), each a factor on the query at position p.
- the file:   tokenizer_config.json, generation_config.json and model.safetensors.index.json are named and
              refused; Meta's original params.json (dim, n_heads, rope_theta, use_scaled_rope) is read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from posenc.schemes.scaling import MAX_CONTEXT, shown

# How each family pairs the rotated channels, from its own rotate code in transformers 5.x (checked by running it:
# tools/hf_model_configs.py, tests/data/hf_model_configs.json "layouts").  "half_split": rotate_half pairs i with
# i + d/2 (torch.cat((-x2, x1))); "interleaved": pairs (2i, 2i + 1).
_HALF = "rotate_half: cat(-x[d/2:], x[:d/2]), pairs (i, i + d/2)"
FAMILY_LAYOUT = {
    **{mt: ("half_split", _HALF) for mt in (
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3", "phimoe", "gemma", "gemma2",
        "gemma3_text", "gpt_neox", "granite", "granitemoe", "smollm3", "olmo", "olmo2", "stablelm", "starcoder2", "minicpm",
        "ministral3", "ministral", "falcon", "qwen2_vl", "phi", "persimmon", "exaone4", "helium")},
    "gpt_oss": ("half_split", "_apply_rotary_emb: torch.chunk(x, 2) halves, pairs (i, i + d/2)"),
    "cohere": ("interleaved", "rotate_half: stack(-x[1::2], x[::2]) with repeat_interleave'd cos/sin, pairs (2i, 2i + 1)"),
    "cohere2": ("interleaved", "rotate_half: stack(-x[1::2], x[::2]) with repeat_interleave'd cos/sin, pairs (2i, 2i + 1)"),
    "gptj": ("interleaved", "rotate_every_two: pairs (2i, 2i + 1)"),
    "glm": ("interleaved", "rotate_half: stack(-x[1::2], x[0::2]), pairs (2i, 2i + 1)"),
    "glm4": ("interleaved", "rotate_half: stack(-x[1::2], x[0::2]), pairs (2i, 2i + 1)"),
    "chatglm": ("interleaved", "THUDM apply_rotary_pos_emb: x reshaped to (..., d/2, 2), pairs (2i, 2i + 1)"),
    "deepseek_v2": ("interleaved", "apply_rotary_emb: view_as_complex pairs (2i, 2i + 1)"),
    "deepseek_v3": ("interleaved", "apply_rotary_pos_emb_interleave (rope_interleave): pairs (2i, 2i + 1)"),
    "llama4_text": ("interleaved", "apply_rotary_emb: view_as_complex pairs (2i, 2i + 1)"),
    "llama4": ("interleaved", "apply_rotary_emb: view_as_complex pairs (2i, 2i + 1)"),
    "meta_params": ("interleaved", "Meta's llama-models apply_rotary_emb: view_as_complex pairs (2i, 2i + 1)"),
}
# The share of layers that slide when a config gives neither layer_types nor a pattern: transformers' default layer_types
_DEFAULT_PATTERN = {"gemma2": 2, "gpt_oss": 2, "gemma3_text": 6, "gemma3": 6, "cohere2": 4}
PAGES = {"alibi": "pages/relative_bias.py", "t5": "pages/relative_bias.py", "learned": "pages/learned.py"}
_LEARNED = {"gpt2": "GPT-2", "opt": "OPT", "bert": "BERT", "roberta": "RoBERTa", "distilbert": "DistilBERT", "gpt_neo": "GPT-Neo",
            "xlm-roberta": "XLM-RoBERTa", "bart": "BART", "gpt_bigcode": "StarCoder (GPT-BigCode)"}


_ALIBI_SPELLING = "alibi"  # a config's position_embedding_type value (not a scheme key)
_T5_FAMILY = frozenset({"t5", "mt5", "umt5", "longt5"})  # model_types (not scheme keys) of T5's relative buckets


class NotRoPE(ValueError):
    """The config describes a model whose positions are not RoPE: ``scheme`` says which, ``page`` where it is explained."""

    def __init__(self, message: str, scheme: str, heads: int | None = None):
        super().__init__(message)
        self.scheme, self.page, self.heads = scheme, PAGES[scheme], heads


def _int(value, lo: int = 1, hi: int = MAX_CONTEXT) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi else None


def _float(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


# ----------------------------------------------------------------------------- which file, which scheme

_TOKENIZER = ("tokenizer_class", "added_tokens_decoder", "chat_template", "model_max_length", "bos_token", "eos_token")
_GENERATION = ("do_sample", "temperature", "top_p", "top_k", "max_new_tokens", "max_length", "repetition_penalty",
               "_from_model_config")
_MODEL_KEYS = ("hidden_size", "head_dim", "n_embd", "d_model", "num_attention_heads", "n_head", "text_config", "dim",
               "kv_channels", "rope_theta", "rope_scaling", "rope_parameters", "qk_rope_head_dim")


def check_file(obj: Mapping) -> None:
    """ValueError naming the file when ``obj`` is a tokenizer / generation config or a weight index, not config.json."""
    if any(obj.get(k) is not None for k in _MODEL_KEYS):
        return
    need = "the model's config.json (hidden_size, num_attention_heads, rope_theta, ...), beside it in the repository"
    if "weight_map" in obj:
        raise ValueError(f"this is a model.safetensors.index.json (it maps tensor names to weight files: weight_map); paste {need}")
    tok = [k for k in _TOKENIZER if k in obj]
    if tok:
        raise ValueError(f"this is a tokenizer_config.json (it sets {', '.join(tok[:3])}); paste {need}")
    gen = [k for k in _GENERATION if k in obj]
    if gen:
        raise ValueError(f"this is a generation_config.json (it sets {', '.join(gen[:3])}); paste {need}")


def meta_params(obj: Mapping, notes: list[str]) -> Mapping:
    """Meta's original params.json (llama-models ModelArgs) in config.json form; other configs unchanged."""
    if not ("dim" in obj and "n_heads" in obj and "hidden_size" not in obj):
        return obj
    cfg = {"model_type": "meta_params", "hidden_size": obj["dim"], "num_attention_heads": obj["n_heads"],
           "rope_theta": obj.get("rope_theta", 10000.0), "_name_or_path": "params.json (Meta's original release)"}
    for src, dst in (("n_kv_heads", "num_key_value_heads"), ("n_layers", "num_hidden_layers"), ("head_dim", "head_dim"),
                     ("max_seq_len", "max_position_embeddings")):
        if obj.get(src) is not None:
            cfg[dst] = obj[src]
    notes.append("read as Meta's original params.json: head_dim = dim / n_heads, base = rope_theta; Meta's code rotates "
                 "complex (interleaved) pairs; params.json does not say the served length")
    if isinstance(obj.get("rope_scaling"), Mapping):
        cfg["rope_scaling"] = dict(obj["rope_scaling"])
    elif obj.get("use_scaled_rope"):
        factor = obj.get("rope_scaling_factor") or 8.0
        high = obj.get("rope_high_freq_factor") or 4.0
        cfg["rope_scaling"] = {"rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0, "high_freq_factor": high,
                               "original_max_position_embeddings": 8192}
        notes.append(f"use_scaled_rope: Meta's apply_scaling with scale_factor {shown(factor, 20)}, low_freq_factor 1, "
                     f"high_freq_factor {shown(high, 20)} and old_context_len 8192 (llama-models' defaults), which is "
                     "transformers' rope_type 'llama3'")
    return cfg


def check_rope(cfg: Mapping, obj: Mapping) -> None:
    """NotRoPE for a model that does not rotate at all."""
    mt = str(cfg.get("model_type") or obj.get("model_type") or "")
    heads = _int(cfg.get("num_attention_heads") or cfg.get("n_head") or cfg.get("n_heads"), 1, 10**4)
    attn = cfg.get("attn_config") if isinstance(cfg.get("attn_config"), Mapping) else {}
    alibi = (mt == "bloom" or (mt in ("falcon", "RefinedWebModel", "RefinedWeb") and cfg.get("alibi") is True)
             or (mt == "mpt" and attn.get("alibi") is True) or cfg.get("position_embedding_type") == _ALIBI_SPELLING)
    name = shown(obj.get("_name_or_path") or mt or "this model", 50)
    if alibi:
        where = "alibi: true" if cfg.get("alibi") is True else ("attn_config.alibi" if attn.get("alibi") else f"model_type {mt!r}")
        raise NotRoPE(f"{name} uses ALiBi ({where}), not RoPE: each of its {heads or 'H'} heads adds -m (i - j) to the logits "
                      f"and the rotary code never runs; its slopes and biases are on the T5 and ALiBi page ({PAGES['alibi']})",
                      "alibi", heads)
    if mt == "mpt":
        raise NotRoPE(f"{name} adds learned absolute positions, not RoPE; see the Learned tables page ({PAGES['learned']})",
                      "learned", heads)
    if mt in _LEARNED or cfg.get("position_embedding_type") == "absolute":
        raise NotRoPE(f"{name} ({_LEARNED.get(mt, mt)}) adds learned absolute position embeddings, not RoPE; see the Learned "
                      f"tables page ({PAGES['learned']})", "learned", heads)
    if mt in _T5_FAMILY:
        raise NotRoPE(f"{name} (T5) adds bucketed relative-position biases, not RoPE; see the T5 and ALiBi page ({PAGES['t5']})",
                      "t5", heads)


def layout_of(cfg: Mapping, obj: Mapping, notes: list[str]) -> str:
    """The pairing layout of the model's family (FAMILY_LAYOUT), with a note saying which code it comes from."""
    mt = str(cfg.get("model_type") or obj.get("model_type") or "")
    if mt.startswith("llama4"):
        mt = "llama4_text"
    if mt == "deepseek_v3" and cfg.get("rope_interleave") is False:
        notes.append("DeepSeek-V3 with rope_interleave false: rotate_half, pairs (i, i + d/2)")
        return "half_split"
    if mt == "cohere2" and cfg.get("position_embedding_type") not in (None, "rope_gptj"):
        notes.append(f"position_embedding_type {shown(cfg['position_embedding_type'], 30)} is not read; Cohere 2 rotates "
                     "interleaved pairs")
    layout, how = FAMILY_LAYOUT.get(mt, ("half_split", ""))
    if layout == "interleaved":
        notes.append(f"{shown(mt, 30)} rotates interleaved pairs ({how}): the same frequencies and scores as half-split, "
                     "channels permuted")
    elif mt and mt not in FAMILY_LAYOUT:
        notes.append(f"model_type {shown(mt, 30)} is not in posenc's table of each family's rotate code; half-split "
                     "(transformers' rotate_half) is assumed: the layout changes no score, only which channels pair")
    return layout


# ----------------------------------------------------------------------------- layers

def _pattern(cfg: Mapping, mt: str, n: int | None) -> list[str] | None:
    """One attention type per layer, or None where the config does not say and the family has no default."""
    lt = cfg.get("layer_types")
    if isinstance(lt, list) and lt and all(isinstance(x, str) for x in lt):
        return [x[:40] for x in lt]
    if n is None:
        return None
    p = _int(cfg.get("sliding_window_pattern") or cfg.get("_sliding_window_pattern"), 1, 1000) or _DEFAULT_PATTERN.get(mt)
    if p and cfg.get("sliding_window") is not None:
        return ["sliding_attention" if (i + 1) % p else "full_attention" for i in range(n)]
    return None


def layer_plan(cfg: Mapping, obj: Mapping, served: int | None, local: dict | None, notes: list[str]) -> tuple:
    """The kinds of layer the model has: ({"name", "attention", "rope", "window", "count", "local", "query_scale"}, ...)."""
    mt = str(cfg.get("model_type") or obj.get("model_type") or "")
    n = _int(cfg.get("num_hidden_layers") or cfg.get("n_layer") or cfg.get("num_layers"), 1, 10**5)
    window = _int(cfg.get("sliding_window"), 1, MAX_CONTEXT)
    if cfg.get("use_sliding_window") is False:
        window = None
    types = _pattern(cfg, mt, n)
    n = n or (len(types) if types else None)
    rope = [True] * n if n else None
    nr = cfg.get("no_rope_layers")
    if isinstance(nr, list) and nr and n and len(nr) == n:
        rope = [bool(x) for x in nr]
    elif mt.startswith("llama4") and n:  # Llama4TextConfig's default: every 4th layer is NoPE
        step = _int(cfg.get("no_rope_layer_interval"), 1, 1000) or 4
        rope = [(i + 1) % step != 0 for i in range(n)]
    elif mt == "smollm3" and n:
        step = _int(cfg.get("no_rope_layer_interval"), 1, 1000) or 4
        rope = [(i + 1) % step != 0 for i in range(n)]
    if mt.startswith("llama4") and n and types is None:
        chunk = _int(cfg.get("attention_chunk_size"), 1, MAX_CONTEXT)
        types = ["chunked_attention" if r and chunk else "full_attention" for r in rope]
        window = chunk
    if types is None:
        types = ["sliding_attention" if window else "full_attention"] * (n or 1)
    if mt == "cohere2":  # Cohere2Attention rotates only in its sliding-window layers
        rope = [t == "sliding_attention" for t in types]
    if rope is None or len(rope) != len(types):
        rope = [True] * len(types)
    q = query_scale(cfg, mt)
    kinds: dict[str, dict] = {}
    for t, r in zip(types, rope):
        attention = t.replace("_attention", "") if t in ("full_attention", "sliding_attention", "chunked_attention") else t
        name = t if r else f"{t}_no_rope"
        k = kinds.setdefault(name, {"name": name, "attention": attention, "rope": r, "count": 0, "local": False,
                                    "window": window if attention in ("sliding", "chunked") else None, "query_scale": None})
        k["count"] += 1
        k["local"] = bool(r and attention == "sliding" and local is not None)
        if q and (q["layers"] == "all" or (q["layers"] == "no_rope" and not r)):
            k["query_scale"] = q
    # the kinds the rope block describes first, then a local base's (Gemma 3), then those without RoPE
    kinds = dict(sorted(kinds.items(), key=lambda kv: (not kv[1]["rope"], kv[1]["local"], kv[1]["attention"] != "full")))
    counted = n is not None or cfg.get("layer_types") is not None
    for k in kinds.values():
        if not counted:
            k["count"] = None
        if k["window"] and served and k["window"] >= served:
            notes.append(f"{k['name']}: the window ({k['window']:,}) is at least the served length ({served:,}), so it never cuts")
    unknown = sorted({t for t in types if t not in ("full_attention", "sliding_attention", "chunked_attention")})
    if unknown:
        notes.append(f"layer type(s) {shown(', '.join(unknown), 60)} are listed as they are; posenc models attention layers only")
    if len(kinds) > 1 or not next(iter(kinds.values()))["rope"]:
        said = "; ".join(f"{k['count'] if k['count'] is not None else '?'} x {k['name'].replace('_', ' ')}"
                         + (f" (window {k['window']:,})" if k["window"] else "") for k in kinds.values())
        first = next(iter(kinds.values()))
        shown_kind = first["name"].replace("_", " ") if first["rope"] else "none: no layer rotates"
        notes.append(f"layers as the model runs them: {said}; the curves show the RoPE of the {shown_kind} layers")
    return tuple(kinds.values())


def query_scale(cfg: Mapping, mt: str) -> dict | None:
    """Position-dependent query scaling: {"kind", "layers" ("all" / "no_rope"), "beta", "period", "offset", "formula"}."""
    rp = cfg.get("rope_parameters") if isinstance(cfg.get("rope_parameters"), Mapping) else cfg.get("rope_scaling")
    rp = rp if isinstance(rp, Mapping) else {}
    beta = _float(rp.get("llama_4_scaling_beta", cfg.get("llama_4_scaling_beta")))
    if beta is not None:
        period = _int(rp.get("original_max_position_embeddings") or cfg.get("original_max_position_embeddings"), 1, MAX_CONTEXT)
        if period is None:
            return None
        return {"kind": "llama_4_scaling_beta", "layers": "all", "beta": beta, "period": period, "offset": 0,
                "formula": f"1 + {beta:g} ln(1 + floor(p / {period:,}))"}
    if mt.startswith("llama4") and cfg.get("attn_temperature_tuning", True):
        a = _float(cfg.get("attn_scale", 0.1))
        f = _int(cfg.get("floor_scale", 8192), 1, MAX_CONTEXT)
        if a is None or f is None:
            return None
        return {"kind": "attn_temperature_tuning", "layers": "no_rope", "beta": a, "period": f, "offset": 1,
                "formula": f"1 + {a:g} ln(floor((p + 1) / {f:,}) + 1)"}
    return None


def query_factor(q: dict | None, p: int) -> float:
    """The factor on the query at position p (1 without query scaling)."""
    if not q:
        return 1.0
    return 1.0 + q["beta"] * math.log1p(math.floor((p + q["offset"]) / q["period"]))


def softmax_scale(cfg: Mapping, head_dim: int, notes: list[str]) -> float:
    """The model's softmax scale over the usual 1/sqrt(head_dim) (1 when it is the usual one)."""
    qpas, mult = _float(cfg.get("query_pre_attn_scalar")), _float(cfg.get("attention_multiplier"))
    if _float(cfg.get("logit_scale")) is not None and str(cfg.get("model_type", "")).startswith("cohere"):
        notes.append(f"logit_scale ({cfg['logit_scale']:g}) multiplies Cohere's output (vocabulary) logits, not attention")
    cap = _float(cfg.get("attn_logit_softcapping"))
    if cap:
        notes.append(f"attention logits are soft-capped: {cap:g} tanh(logit / {cap:g}) (attn_logit_softcapping), which "
                     f"the curves leave out; it bends logits near +-{cap:g} only")
    if qpas and qpas > 0:
        r = math.sqrt(head_dim / qpas)
        if not math.isclose(r, 1.0):
            notes.append(f"softmax scale query_pre_attn_scalar^-1/2 = {qpas:g}^-1/2 instead of {head_dim}^-1/2: every logit "
                         f"x {r:.4f}")
        return r
    if mult and mult > 0:
        r = mult * math.sqrt(head_dim)
        notes.append(f"softmax scale attention_multiplier = {mult:g} instead of 1/sqrt({head_dim}) = {1 / math.sqrt(head_dim):.6g}: "
                     f"every logit x {r:.4f}")
        return r
    return 1.0
