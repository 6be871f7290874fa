"""The one adapter between the lab's engine and posenc's positional schemes.

Every use of a positional scheme in posenc.lab goes through ``positions(...)``, which returns a
``Positions`` record of plain arrays; the engine (model.py) never imports a scheme.  Kinds:

- additive:  a fixed (n, d_model) encoding added to the token embedding
             (raw index e'_t = e_t + t 1, unscaled; the sinusoid);
- table:     a trainable (L, d_model) table added to the token embedding, rows 0 .. L-1 only
             (the learned absolute table; undefined past its last row);
- rotary:    per-position linear maps Mq[p], Mk[p] (n, hd, hd) applied to each head's query and
             key, q'_p = Mq[p] q_p (RoPE: Mq = Mk = R_p; xPos: the rotation times zeta^(+-p/B));
- bias:      an additive (H, n, n) logit bias (ALiBi; NoPE = zeros), the causal mask included;
- buckets:   integer ids (n, n) into a trainable (num_buckets, H) table (T5, decoder form).

Every record carries ``bias`` with the causal mask (-inf above the diagonal), so the engine
always adds it.  Rotary maps are obtained by applying the scheme's transform to the identity:
Mq[p][:, j] = transform(e_j at position p), so the engine needs no knowledge of layouts.

# NOTE: the lead will rewire this module to the per-family Scheme objects; the engine depends
# only on ``Positions``, ``positions``, ``trainable_shapes``, ``LAB_SCHEMES`` and ``EXTENSIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import posenc
from posenc._validate import check_choice, check_int

# the schemes the lab trains, in display order
LAB_SCHEMES = ("raw_index", "sinusoidal", "learned", "t5", "alibi", "nope", "rope", "xpos")
NAMES = {
    "raw_index": "Raw index", "sinusoidal": "Sinusoidal", "learned": "Learned table", "t5": "T5 buckets",
    "alibi": "ALiBi", "nope": "NoPE", "rope": "RoPE", "xpos": "xPos",
}
KIND = {
    "raw_index": "additive", "sinusoidal": "additive", "learned": "table", "t5": "buckets",
    "alibi": "bias", "nope": "bias", "rope": "rotary", "xpos": "rotary",
}
# the posenc registry key each lab scheme stands for (None: xPos, implemented below for now)
REGISTRY_KEY = {
    "raw_index": "raw_index", "sinusoidal": "sinusoidal", "learned": "learned_random", "t5": "t5",
    "alibi": "alibi", "nope": "nope", "rope": "rope", "xpos": None,
}
# RoPE context extensions applied at test time, without retraining: lab name -> HF rope_type
EXTENSIONS = {"pi": "linear", "ntk": "ntk", "dynamic": "dynamic", "yarn": "yarn", "llama3": "llama3"}
EXTENSION_NAMES = {"pi": "PI (linear)", "ntk": "NTK-aware", "dynamic": "dynamic NTK", "yarn": "YaRN", "llama3": "Llama 3"}

ROPE_BASE = 10000.0
ROPE_LAYOUT = "half_split"  # HF Llama / GPT-NeoX pairing (i, i + hd/2)
T5_BUCKETS, T5_MAX_DISTANCE = 32, 128  # T5 defaults; decoder (causal) form
XPOS_GAMMA, XPOS_SCALE_BASE = 0.4, 512.0  # torchscale XPOS defaults


@dataclass(frozen=True)
class Positions:
    """Plain arrays for one scheme at one sequence length n (see the module docstring)."""

    scheme: str
    kind: str
    n: int
    bias: np.ndarray  # (H, n, n) additive logit bias, causal mask included
    add: np.ndarray | None = None  # (n, d_model) fixed additive encoding
    table_rows: int | None = None  # rows of the trainable (L, d_model) table (n <= L)
    mq: np.ndarray | None = None  # (n, hd, hd) query map per position
    mk: np.ndarray | None = None  # (n, hd, hd) key map per position
    buckets: np.ndarray | None = None  # (n, n) int64 ids into the (num_buckets, H) table
    num_buckets: int = 0


def trainable_shapes(scheme: str, *, d_model: int, n_heads: int, train_len: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the scheme's own trainable parameters: {"pos": (L, d)} or {"t5": (B, H)} or {}."""
    check_choice("scheme", scheme, LAB_SCHEMES)
    if KIND[scheme] == "table":
        return {"pos": (train_len, d_model)}
    if KIND[scheme] == "buckets":
        return {"t5": (T5_BUCKETS, n_heads)}
    return {}


def _rotary_maps(n: int, head_dim: int, inv_freq: np.ndarray, layout: str, attention_factor: float) -> np.ndarray:
    """The rotation at each position as a matrix: (n, hd, hd), M[p] @ x == apply_rope(x at p)."""
    eye = np.broadcast_to(np.eye(head_dim)[:, None, :], (head_dim, n, head_dim))  # (hd as j, n, hd): e_j at every p
    out = posenc.apply_rope(eye, np.arange(n), inv_freq, layout=layout, attention_factor=attention_factor)
    return np.ascontiguousarray(out.transpose(1, 2, 0))  # (n, hd, hd): column j = transform of e_j


def xpos_scale(n: int, head_dim: int) -> np.ndarray:
    """xPos per-channel scale zeta_i^(p / B) at positions 0 .. n-1, shape (n, hd), interleaved pairs.

    zeta_i = (2i / hd + gamma) / (1 + gamma), i = 0 .. hd/2 - 1 (Sun et al., arXiv:2212.10554;
    torchscale XPOS: (arange(0, hd, 2) + 0.4 hd) / (1.4 hd), duplicated per pair).
    # NOTE: torchscale centres positions (min_pos = -n // 2); the score depends only on
    # zeta^((p_q - p_k) / B), identical under any shift, so we use 0 .. n-1 like every scheme here.
    """
    zeta = (np.arange(0, head_dim, 2) / head_dim + XPOS_GAMMA) / (1.0 + XPOS_GAMMA)  # (hd/2,)
    per_pair = zeta[None, :] ** (np.arange(n)[:, None] / XPOS_SCALE_BASE)  # (n, hd/2)
    return np.repeat(per_pair, 2, axis=1)  # (n, hd): channels 2i, 2i+1 share zeta_i


def rope_scaling(extension: str, factor: float, train_len: int) -> dict:
    """The Hugging Face rope_scaling block of a test-time extension to ``factor`` x the trained length."""
    check_choice("extension", extension, EXTENSIONS)
    return {"rope_type": EXTENSIONS[extension], "factor": float(factor), "original_max_position_embeddings": int(train_len)}


def positions(
    scheme: str,
    n: int,
    *,
    d_model: int,
    n_heads: int,
    train_len: int,
    extension: str | None = None,
) -> Positions:
    """The arrays the engine needs for ``scheme`` on a length-n sequence.

    ``extension`` (RoPE only) applies a context extension at test time with factor n / train_len
    (at least 1): "pi", "ntk", "dynamic" (at the current length n), "yarn" (with its attention
    factor on cos and sin of q and k, as HF does) or "llama3".
    The learned table raises ValueError past its last row: it has no row for position L.
    """
    check_choice("scheme", scheme, LAB_SCHEMES)
    n = check_int("n", n, lo=1, hi=1 << 16)
    d = check_int("d_model", d_model, lo=2)
    H = check_int("n_heads", n_heads, lo=1)
    L = check_int("train_len", train_len, lo=1)
    if d % H or (d // H) % 2:
        raise ValueError(f"d_model / n_heads must be an even integer, got {d} / {H}")
    hd = d // H
    kind = KIND[scheme]
    if extension is not None and scheme != "rope":
        raise ValueError(f"context extensions apply to the RoPE model only, got scheme {scheme!r}")
    pos = np.arange(n)
    mask = posenc.nope_bias(n, H, causal=True)  # (H, n, n): 0 on/below the diagonal, -inf above
    if scheme == "raw_index":
        return Positions(scheme, kind, n, mask, add=posenc.raw_index(pos, d))  # e'_t = e_t + t 1
    if scheme == "sinusoidal":
        return Positions(scheme, kind, n, mask, add=posenc.sinusoidal(pos, d))  # interleaved, base 10^4
    if scheme == "learned":
        if n > L:
            raise ValueError(f"the learned table has {L} rows (positions 0 .. {L - 1}); it has no row for position {L}")
        return Positions(scheme, kind, n, mask, table_rows=L)
    if scheme == "t5":
        rel = pos[None, :] - pos[:, None]  # (n, n) key - query, as HF's T5
        ids = posenc.t5_bucket(rel, bidirectional=False, num_buckets=T5_BUCKETS, max_distance=T5_MAX_DISTANCE)
        return Positions(scheme, kind, n, mask, buckets=ids, num_buckets=T5_BUCKETS)
    if scheme == "alibi":
        return Positions(scheme, kind, n, posenc.alibi_bias(n, H, causal=True))
    if scheme == "nope":
        return Positions(scheme, kind, n, mask)
    if scheme == "rope":
        scaling = None if extension is None else rope_scaling(extension, max(1.0, n / L), L)
        inv, af = posenc.rope_frequencies(hd, base=ROPE_BASE, scaling=scaling, seq_len=n)
        M = _rotary_maps(n, hd, inv, ROPE_LAYOUT, af)
        return Positions(scheme, kind, n, mask, mq=M, mk=M)
    # xPos: interleaved RoPE (torchscale rotate_every_two), queries scaled up by zeta^(p/B), keys down
    R = _rotary_maps(n, hd, posenc.default_inv_freq(hd, ROPE_BASE), "interleaved", 1.0)  # (n, hd, hd)
    s = xpos_scale(n, hd)  # (n, hd)
    return Positions(scheme, kind, n, mask, mq=s[:, :, None] * R, mk=R / s[:, :, None])
