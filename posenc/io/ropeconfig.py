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
    trained on (None if the config does not say) and max_position_embeddings.  layers: each layer
    type's own RoPE, {type: {"inv_freq", "attention_factor", "base", "rope_type", "window"}}
    ("full_attention" always; Gemma 3 adds "sliding_attention").  notes: what the numbers do not
    model exactly, and why.
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
        layers = {"full_attention": {"inv_freq": inv, "attention_factor": float(af), "base": m.base, "rope_type": m.rope_type,
                                     "window": None}}
        if m.local is not None:
            inv_l, af_l = rope_frequencies(m.local["rotary_dim"], base=m.local["base"], scaling=m.local["scaling"], seq_len=L)
            layers["sliding_attention"] = {"inv_freq": inv_l, "attention_factor": float(af_l), "base": m.local["base"],
                                           "rope_type": "linear" if m.local["scaling"] else "default", "window": m.local["window"]}
    except ValueError as exc:
        raise ValueError(bounded(str(exc))) from None
    return RopeFromConfig(
        name=m.name, model_type=m.model_type, inv_freq=inv, attention_factor=float(af), logit_scale=float(af) ** 2 * m.logit_extra,
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
