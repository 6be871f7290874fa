"""``rope_from_config``: a real model's RoPE, computed from its config.json as the model computes it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from posenc._validate import check_int
from posenc.io.configjson import bounded
from posenc.io.modelconfig import ModelRope, parse_model_config
from posenc.schemes.scaling import MAX_CONTEXT, rope_frequencies


@dataclass(frozen=True)
class RopeFromConfig:
    """What ``rope_from_config`` returns.

    inv_freq: (rotary_dim // 2,) angular frequency of each rotated pair at ``seq_len``.
    attention_factor: the factor cos and sin are multiplied by.  logit_scale: what the scaling
    multiplies every attention logit by on top of the model's 1/sqrt(head_dim): attention_factor^2,
    times DeepSeek's softmax mscale^2.  trained_length / served_length: the context the model was
    trained on (None if the config does not say) and max_position_embeddings.  layers: each kind of
    layer as the model runs it, {kind: {"count", "rope", "attention" (full / sliding / chunked), "window",
    "inv_freq" (None where the layer has no RoPE), "attention_factor", "base", "rope_type", "query_scale"}}:
    "full_attention", "sliding_attention" (Gemma 3: its local base), "chunked_attention" (Llama 4), and
    "<type>_no_rope" (SmolLM3, Llama 4, Cohere 2's global layers).  logit_scale includes the softmax scale a
    config sets (query_pre_attn_scalar, attention_multiplier) over 1/sqrt(head_dim).  notes: what the numbers
    do not model exactly, and why.
    """

    name: str
    model_type: str | None
    inv_freq: np.ndarray
    attention_factor: float
    logit_scale: float
    rotary_dim: int
    head_dim: int
    base: float
    rope_type: str
    layout: str
    trained_length: int | None
    served_length: int | None
    seq_len: int | None
    scaling: dict | None
    notes: tuple[str, ...]
    layers: dict = field(default_factory=dict)
    model: ModelRope | None = None

    def query_factor(self, p: int) -> float:
        """The factor on a query at position p: Llama 4's temperature tuning (its NoPE layers), Ministral 3's
        llama_4_scaling_beta (every layer); 1 for a model without position-dependent query scaling."""
        return self.model.query_factor(check_int("position", p, lo=0, hi=MAX_CONTEXT)) if self.model else 1.0

    def logit_scale_at(self, p: int, layer: str | None = None) -> dict:
        """What multiplies the logits of a query at position p in ``layer`` (a key of ``layers``; default: the first
        RoPE kind) beyond 1/sqrt(head_dim), with its pieces: {"attention_factor^2", "softmax", "mscale^2",
        "query(p)", "total"}."""
        p = check_int("position", p, lo=0, hi=MAX_CONTEXT)
        if layer is None:
            layer = next((k for k, v in self.layers.items() if v["rope"]), next(iter(self.layers), None))
        kind = self.layers.get(layer)
        if kind is None:
            raise ValueError(bounded(f"layer {layer!r} is not one of this model's kinds of layer: {', '.join(self.layers)}"))
        m = self.model
        pieces = {"attention_factor^2": float(kind["attention_factor"]) ** 2, "softmax": m.softmax_ratio if m else 1.0,
                  "mscale^2": m.logit_extra if m else 1.0,
                  "query(p)": m.query_factor(p) if m and kind["query_scale"] else 1.0}
        total = 1.0
        for v in pieces.values():
            total *= v
        return {**pieces, "total": total, "layer": layer, "position": p}


def _layers(m: ModelRope, inv: np.ndarray, af: float, L: int | None) -> dict:
    """{kind: {"count", "rope", "attention", "window", "inv_freq" (None without RoPE), "attention_factor", "base",
    "rope_type", "query_scale"}} for each kind of layer in m.layers (one full-attention kind when the config says nothing)."""
    plan = m.layers or ({"name": "full_attention", "attention": "full", "rope": True, "window": None, "count": None,
                         "local": False, "query_scale": None},)
    out = {}
    for k in plan:
        entry = {"count": k["count"], "rope": k["rope"], "attention": k["attention"], "window": k["window"],
                 "query_scale": k["query_scale"], "inv_freq": None, "attention_factor": 1.0, "base": None, "rope_type": None}
        if k["rope"] and k["local"] and m.local is not None:
            inv_l, af_l = rope_frequencies(m.local["rotary_dim"], base=m.local["base"], scaling=m.local["scaling"], seq_len=L)
            entry.update(inv_freq=inv_l, attention_factor=float(af_l), base=m.local["base"],
                         rope_type="linear" if m.local["scaling"] else "default", window=m.local["window"] or k["window"])
        elif k["rope"]:
            entry.update(inv_freq=inv, attention_factor=af, base=m.base, rope_type=m.rope_type)
        out[k["name"]] = entry
    return out


def rope_from_config(config, *, seq_len: int | None = None) -> RopeFromConfig:
    """A model's RoPE from its ``config.json`` (text, its lines, or a dict), at the current length ``seq_len``.

    ``seq_len`` defaults to the served length (max_position_embeddings): LongRoPE then uses its
    long factors and dynamic NTK its scale there, as the model does on a full-length input.
    Reads the top level or ``text_config``; ``rope_scaling`` (v4) or ``rope_parameters`` (v5, flat
    or per layer type); and the families' own conventions (see ``posenc.io.modelconfig``).
    Raises ValueError, naming the field and the allowed range, for anything it cannot read.
    """
    m = parse_model_config(config)
    try:
        L = m.served_length or m.trained_length
        if seq_len is not None:
            L = check_int("seq_len", seq_len, lo=1, hi=MAX_CONTEXT)
        inv, af = m.frequencies(seq_len=L)
        layers = _layers(m, inv, float(af), L)
    except ValueError as exc:
        raise ValueError(bounded(str(exc))) from None
    return RopeFromConfig(
        name=m.name, model_type=m.model_type, inv_freq=inv, attention_factor=float(af),
        logit_scale=float(af) ** 2 * m.logit_extra * m.softmax_ratio,
        rotary_dim=m.rotary_dim, head_dim=m.head_dim, base=m.base, rope_type=m.rope_type, layout=m.layout,
        trained_length=m.trained_length, served_length=m.served_length, seq_len=L, scaling=m.scaling, notes=m.notes,
        layers=layers, model=m,
    )


def rope_from_gguf(source, *, seq_len: int | None = None) -> RopeFromConfig:
    """A model's RoPE from a GGUF file's header: a path (at most its first 64 MB are read) or its first bytes.

    The same description as ``rope_from_config``, read from llama.cpp's metadata keys
    (``posenc.io.gguf.gguf_config``); ``layout`` is the file's own pairing ("interleaved" for the
    llama-style architectures, whose q/k rows llama.cpp's converter permuted).  Never reads a tensor.
    """
    from posenc.io.gguf import gguf_config

    try:
        cfg = gguf_config(source)
    except ValueError as exc:
        raise ValueError(bounded(str(exc))) from None
    return rope_from_config(cfg, seq_len=seq_len)
