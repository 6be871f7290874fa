"""Evaluate any registered scheme through one function per kind.

axes: n positions, d encoding width (d_model or head_dim), H heads.

- ``encode``      additive schemes  -> (n, d_model)
- ``rope_for``    rotary schemes    -> (inv_freq (d/2,), attention_factor)
- ``bias``        bias schemes      -> (H, n, n)
- ``signature``   every scheme      -> (n, k): what position p "looks like" to the model:
  the added vector (additive), the rotated probe query R_p q (rotary), or the bias vector
  across heads at offset p (bias; T5's value is its bucket id, which names the learned
  parameter used).  Uniqueness, growth and length dependence are measured on it.

``seq_len`` is the length of the sequence being encoded.  Only two schemes read it: index /
length divides by it, and dynamic NTK rescales its base with it (as HF does at run time with
max(position_ids) + 1).  Everything else ignores it.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from posenc import learned, naive, relative, rope
from posenc._validate import check_choice, check_int, check_memory, check_positions
from posenc.registry import ROPE_TYPE_OF_SCHEME, get_scheme
from posenc.sinusoidal import sinusoidal

PROBES = ("ones", "random")


def _seq_len(positions: np.ndarray, seq_len) -> int:
    if seq_len is not None:
        return check_int("seq_len", seq_len, lo=1, hi=10**8)
    # max(..., 1): positions may all be negative (RoPE and the sinusoid accept them); the
    # implied length must still be a valid seq_len rather than an error about an argument
    # the caller never passed.
    return max(int(np.max(positions)) + 1, 1) if positions.size else 1


def encode(key: str, positions, d_model: int, *, seq_len: int | None = None, **params) -> np.ndarray:
    """Additive scheme ``key`` at ``positions``: ndarray (n, d_model), float64."""
    scheme = get_scheme(key)
    if scheme.kind != "additive":
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not additive; use signature() or position_scores()")
    p = scheme.validate_params(params)
    pos = check_positions(positions)
    if key == "raw_index":
        return naive.raw_index(pos, d_model)
    if key == "index_over_length":
        return naive.index_over_length(pos, d_model, length=_seq_len(pos, seq_len))
    if key == "single_sine":
        return naive.single_sine(pos, d_model, omega=p["omega"])
    if key == "sincos_pair":
        return naive.sincos_pair(pos, d_model, omega=p["omega"])
    if key == "sinusoidal":
        return sinusoidal(pos, d_model, base=p["base"], layout=p["layout"])
    if key == "learned_minilm":
        if check_int("d_model", d_model, lo=1) != learned.MINILM_D_MODEL:
            raise ValueError(f"d_model must be {learned.MINILM_D_MODEL} for the MiniLM table, got {d_model}")
        return learned.learned_lookup(learned.minilm_table(), pos)
    if key == "learned_random":
        table = learned.random_table(learned.MINILM_MAX_LEN, d_model, seed=p["seed"])
        return learned.learned_lookup(table, pos)
    raise AssertionError(f"no encoder for {key!r}")  # keep in sync with SCHEMES


def rope_scaling(key: str, **params) -> dict | None:
    """The Hugging Face rope_scaling block that rotary scheme ``key`` stands for (None = default)."""
    scheme = get_scheme(key)
    if scheme.kind != "rotary":
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not rotary")
    p = scheme.validate_params(params)
    rope_type = ROPE_TYPE_OF_SCHEME[key]
    if rope_type == "default":
        return None
    extra = {k: v for k, v in p.items() if k not in ("base", "layout")}
    return {"rope_type": rope_type, **extra}


def rope_for(key: str, head_dim: int, *, seq_len: int | None = None, **params) -> tuple[np.ndarray, float]:
    """(inv_freq (head_dim // 2,), attention_factor) of rotary scheme ``key``."""
    scheme = get_scheme(key)
    if scheme.kind != "rotary":  # before reading p["base"]: a non-rotary key has none (KeyError)
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not rotary")
    p = scheme.validate_params(params)
    return rope.rope_frequencies(head_dim, base=p["base"], scaling=rope_scaling(key, **params), seq_len=seq_len)


def probe_vector(d: int, probe: str = "ones", *, seed: int = 0) -> np.ndarray:
    """The fixed query/key used to turn a rotation into a score, shape (d,).

    "ones": every channel 1, so each pair contributes 2 cos(offset * theta_k) and the score at
    offset 0 is d (the classic RoPE decay curve).  "random": a seeded standard-normal vector.
    """
    d = check_int("d", d, lo=1)
    check_choice("probe", probe, PROBES)
    if probe == "ones":
        return np.ones(d)
    return np.random.default_rng(seed).standard_normal(d)


def bias(key: str, n: int, n_heads: int = 8, **params) -> np.ndarray:
    """Bias scheme ``key`` for a length-n sequence: (H, n, n).

    T5 returns its bucket ids (as float) in every head: posenc ships no trained T5 table, and
    the bucket id is the exact, scheme-defined part (which learned scalar each pair uses).
    """
    scheme = get_scheme(key)
    if scheme.kind != "bias":
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not bias")
    p = scheme.validate_params(params)
    H = check_int("n_heads", n_heads, lo=1, hi=relative.MAX_HEADS)
    if key == "alibi":
        return relative.alibi_bias(n, H, causal=p["causal"])
    if key == "nope":
        return relative.nope_bias(n, H, causal=True)
    n = check_int("n", n, lo=1, hi=relative.MAX_N)
    check_memory("T5 bucket bias", (H, n, n))  # the (H, n, n) copy below, not just the (n, n) ids
    buckets = relative.t5_bucket_matrix(
        n, bidirectional=p["bidirectional"], num_buckets=p["num_buckets"], max_distance=p["max_distance"]
    ).astype(np.float64)
    return np.broadcast_to(buckets, (H, n, n)).copy()


def bias_matrix(key: str, n: int, n_heads: int = 8, head: int = 0, **params) -> np.ndarray:
    """One head of bias scheme ``key``, built densely from every (i, j): shape (n, n).

    The same numbers as ``bias(...)[head]`` without building the other heads (n^2 memory, not
    H n^2); used where a dense, independently built matrix is wanted (translation invariance).
    """
    scheme = get_scheme(key)
    if scheme.kind != "bias":
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not bias")
    p = scheme.validate_params(params)
    H = check_int("n_heads", n_heads, lo=1, hi=relative.MAX_HEADS)
    h = check_int("head", head, lo=0, hi=H - 1)
    n = check_int("n", n, lo=1, hi=relative.MAX_N)
    check_memory("bias matrix", (n, n))
    if key == "nope":
        return relative.causal_mask(n)
    if key == "t5":
        return relative.t5_bucket_matrix(
            n, bidirectional=p["bidirectional"], num_buckets=p["num_buckets"], max_distance=p["max_distance"]
        ).astype(np.float64)
    i = np.arange(n)
    dist = (i[:, None] - i[None, :]).astype(np.float64)  # (n, n) i - j
    out = -relative.alibi_slopes(H)[h] * np.abs(dist)
    if p["causal"]:
        out[dist < 0] = -np.inf
    return out


def bias_offsets(key: str, offsets, n_heads: int = 8, **params) -> np.ndarray:
    """Bias of bias scheme ``key`` for key - query offsets j - i: shape (H, m).

    Masked (future) offsets of causal forms are -inf.
    """
    scheme = get_scheme(key)
    if scheme.kind != "bias":
        raise ValueError(f"scheme {key!r} is {scheme.kind}, not bias")
    p = scheme.validate_params(params)
    H = check_int("n_heads", n_heads, lo=1, hi=relative.MAX_HEADS)
    off = check_positions(offsets, name="offsets", integer=(key == "t5"))  # (m,) j - i; T5 is integer-only
    check_memory("bias offsets", (H, off.size))
    if key == "alibi":
        out = relative.alibi_offset_bias(off, H)
        if p["causal"]:
            out[:, off > 0] = -np.inf
        return out
    if key == "nope":
        return np.broadcast_to(np.where(off > 0, -np.inf, 0.0), (H, off.size)).copy()
    b = relative.t5_bucket(off, bidirectional=p["bidirectional"], num_buckets=p["num_buckets"], max_distance=p["max_distance"])
    return np.broadcast_to(b.astype(np.float64), (H, off.size)).copy()


def signature(
    key: str,
    positions,
    d: int,
    *,
    seq_len: int | None = None,
    n_heads: int = 8,
    probe: str = "ones",
    **params,
) -> np.ndarray:
    """What each position looks like to the model, shape (n, k) float64 (see module docstring).

    additive: the encoding (k = d).  rotary: R_p q for the probe q (k = d; attention factor
    applied).  bias: the bias at distance p (query p after key 0) in each head (k = H; T5 k = 1,
    its bucket id; NoPE k = 1, all zeros).
    """
    scheme = get_scheme(key)
    scheme.validate_params(params)  # every kind, so NoPE too rejects unknown parameters
    pos = check_positions(positions)
    if scheme.kind == "bias":
        check_int("n_heads", n_heads, lo=1, hi=relative.MAX_HEADS)
    if scheme.kind == "additive":
        return encode(key, pos, d, seq_len=seq_len, **params)
    if scheme.kind == "rotary":
        p = scheme.validate_params(params)
        inv, af = rope_for(key, d, seq_len=_seq_len(pos, seq_len), **params)
        q = np.broadcast_to(probe_vector(d, probe), (pos.size, d))  # (n, d)
        return rope.apply_rope(q, pos, inv, layout=p["layout"], attention_factor=af)
    offsets = -pos  # key at 0, query at p: j - i = -p
    if key == "t5":
        return bias_offsets(key, offsets, 1, **params).T  # (n, 1) bucket id
    if key == "nope":
        return np.zeros((pos.size, 1))
    return bias_offsets(key, offsets, n_heads, **params).T  # (n, H)


def defaults(key: str) -> dict[str, Any]:
    """The registry defaults of scheme ``key``."""
    return get_scheme(key).defaults()


def merged(key: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults of ``key`` overridden by ``params`` and validated."""
    return get_scheme(key).validate_params(params)
