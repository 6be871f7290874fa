"""Relative position biases added to the attention logits: T5 buckets, ALiBi, Kerple, NoPE's mask.

axes: H heads, n positions, i query, j key, m offsets.

Sign conventions (they differ between papers; we keep each reference's own):
- T5 takes relative_position = j - i (key minus query), as Hugging Face's T5Attention does.
- ALiBi uses the distance i - j >= 0 under a causal mask (Press et al., arXiv:2108.12409).
- Kerple uses |m - n| (Chi et al., arXiv:2205.09921), symmetric and unmasked, as its reference code's kernel.
Bias tensors have shape (H, n, n); Hugging Face adds a leading batch axis of 1.
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_bool, check_int, check_memory, check_positions
from posenc.schemes.kinds import Bias, TrainableBias, always, never

MAX_HEADS = 1024
MAX_BUCKETS = 4096
MAX_DISTANCE = 10**7
MAX_N = 10**6


# ----------------------------------------------------------------------------- T5

def t5_max_exact(num_buckets: int, bidirectional: bool = True) -> int:
    """How many distances T5 maps one-to-one: (num_buckets / 2 if bidirectional) / 2.

    max_distance must exceed it (the log-spaced buckets start there)."""
    nb = check_int("num_buckets", num_buckets, lo=2, hi=MAX_BUCKETS)
    return (nb // 2 if check_bool("bidirectional", bidirectional) else nb) // 2


LOOKUP_SHARE = 4  # t5_bucket computes each offset once when the input has over 4x as many entries as their range


def t5_bucket(relative_position, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """T5's bucket of each relative position j - i; int64 array shaped like the input.

    HF T5Attention._relative_position_bucket (from mesh_tensorflow):
    bidirectional: half the buckets for each sign; |rel| < max_exact maps one-to-one, larger
    distances share log-spaced buckets up to max_distance, then the last bucket.
    causal: future keys (rel > 0) collapse to bucket 0.
    """
    bidirectional = check_bool("bidirectional", bidirectional)
    nb = check_int("num_buckets", num_buckets, lo=2, hi=MAX_BUCKETS)
    md = check_int("max_distance", max_distance, lo=1, hi=MAX_DISTANCE)
    rel_in = np.asarray(relative_position)
    rel = check_positions(rel_in.reshape(-1), name="relative_position", integer=True).astype(np.int64)
    lo, hi = (int(rel.min()), int(rel.max())) if rel.size else (0, 0)
    if hi - lo < rel.size // LOOKUP_SHARE:  # a score matrix: few distinct offsets, many times each; each computed once
        table = t5_bucket(np.arange(lo, hi + 1), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
        return table[rel - lo].reshape(rel_in.shape)
    ret = np.zeros_like(rel)
    if bidirectional:
        nb //= 2
        ret += (rel > 0).astype(np.int64) * nb
        dist = np.abs(rel)
    else:
        dist = -np.minimum(rel, 0)
    max_exact = nb // 2
    if max_exact < 1:
        raise ValueError(f"num_buckets must be >= {4 if bidirectional else 2} here, got {num_buckets}")
    if md <= max_exact:
        raise ValueError(
            f"max_distance must be an integer in [{max_exact + 1}, {MAX_DISTANCE}] for num_buckets = "
            f"{num_buckets} (it must exceed the {max_exact} exact buckets), got {md}"
        )
    is_small = dist < max_exact
    # log(n / max_exact) / log(max_distance / max_exact) * (num_buckets - max_exact), truncated
    # (== floor, the value is >= 0 where used); max(n, 1) guards log(0) in the unused branch.
    ratio = np.log(np.maximum(dist, 1) / max_exact) / np.log(md / max_exact)
    large = max_exact + np.floor(ratio * (nb - max_exact)).astype(np.int64)
    large = np.minimum(large, nb - 1)
    out = ret + np.where(is_small, dist, large)
    return out.reshape(rel_in.shape).astype(np.int64)


def t5_bucket_matrix(n: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Bucket id of every (query i, key j) pair, shape (n, n) int64: bucket(j - i)."""
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("bucket matrix", (n, n))
    offsets = np.arange(-(n - 1), n)  # (2n - 1,) offsets j - i
    buckets = t5_bucket(offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    i = np.arange(n)
    return buckets[(i[None, :] - i[:, None]) + (n - 1)]  # (n, n)


def t5_random_table(num_buckets: int = 32, n_heads: int = 8, *, seed: int = 0) -> np.ndarray:
    """An untrained T5 bias table W, shape (num_buckets, H): normal, std 1 (seeded).

    posenc ships no trained T5 weights, so demos that need numbers use this seeded stand-in and
    say so; bias[h, i, j] = W[bucket(j - i), h].
    """
    nb = check_int("num_buckets", num_buckets, lo=2, hi=MAX_BUCKETS)
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
    return np.random.default_rng(seed).normal(0.0, 1.0, size=(nb, H))


def t5_bias(n: int, table, *, bidirectional: bool = True, max_distance: int = 128) -> np.ndarray:
    """T5 bias tensor, shape (H, n, n): bias[h, i, j] = table[bucket(j - i), h].

    ``table`` has shape (num_buckets, H), like HF's relative_attention_bias.weight.
    """
    try:
        W = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError) as exc:  # e.g. a dict or an object: not a TypeError to the caller
        raise ValueError(f"table must be a finite (num_buckets, n_heads) array, got {type(table).__name__}") from exc
    if W.ndim != 2 or not np.all(np.isfinite(W)):
        raise ValueError(f"table must be a finite (num_buckets, n_heads) array, got shape {W.shape}")
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("T5 bias", (W.shape[1], n, n))
    buckets = t5_bucket_matrix(n, bidirectional=bidirectional, num_buckets=W.shape[0], max_distance=max_distance)
    return np.moveaxis(W[buckets], -1, 0)  # (H, n, n)


# ----------------------------------------------------------------------------- ALiBi

def _slopes_power_of_2(n: int) -> np.ndarray:
    # m_k = 2 ** (-8 (k + 1) / n), i.e. start = ratio = 2 ** (-8 / n)
    return np.exp2(-8.0 * np.arange(1, n + 1) / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi head slopes, shape (H,): the paper's geometric sequence 2^(-8/H), 2^(-16/H), ...

    For H not a power of two, take the 2^floor(log2 H) sequence and append the odd-position
    slopes of the 2^(floor(log2 H) + 1) sequence (ofirpress/attention_with_linear_biases,
    get_slopes; HF BLOOM and MPT agree).
    """
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    if H & (H - 1) == 0:
        return _slopes_power_of_2(H)
    c = 1 << (H.bit_length() - 1)  # largest power of two below H
    return np.concatenate([_slopes_power_of_2(c), alibi_slopes(2 * c)[0::2][: H - c]])


def alibi_offset_bias(distances, n_heads: int) -> np.ndarray:
    """-m_h * |distance| for each head and distance, shape (H, m)."""
    dist = check_positions(distances, name="distances")
    slopes = alibi_slopes(n_heads)  # (H,)
    check_memory("ALiBi offsets", (slopes.size, dist.size))
    return -np.multiply.outer(slopes, np.abs(dist))  # (H, m)


def alibi_bias(n: int, n_heads: int, *, causal: bool = True) -> np.ndarray:
    """ALiBi bias, shape (H, n, n).

    causal: -m_h * (i - j) on and below the diagonal and -inf above it (the paper's form).
    symmetric (causal=False): -m_h * |i - j| with no mask (issue #5; data2vec 2.0).
    """
    n = check_int("n", n, lo=1, hi=MAX_N)
    causal = check_bool("causal", causal)
    slopes = alibi_slopes(n_heads)  # (H,)
    check_memory("ALiBi bias", (slopes.size, n, n))
    i = np.arange(n)
    dist = (i[:, None] - i[None, :]).astype(np.float64)  # (n, n) i - j
    bias = -slopes[:, None, None] * np.abs(dist)[None]  # (H, n, n)
    if causal:
        bias[:, dist < 0] = -np.inf
    return bias


# ----------------------------------------------------------------------------- Kerple

KERPLE_EPS = 1e-2  # the reference code clamps both scalars at this value before every use


def kerple_log_bias(distances, r1, r2) -> np.ndarray:
    """Kerple's logarithmic kernel -r1 log(1 + r2 |m - n|) for each head's (r1, r2): (H, *distances.shape).

    Chi et al. 2022 (arXiv:2205.09921), eq. "log": r1, r2 > 0 per head; chijames/KERPLE ``ParallelKerpleLog``
    computes ``-bias_p * log(1 + bias_a * |m - n|)``.
    """
    dist = np.abs(np.asarray(distances, dtype=np.float64))
    r1 = np.atleast_1d(np.asarray(r1, dtype=np.float64))
    r2 = np.atleast_1d(np.asarray(r2, dtype=np.float64))
    if r1.shape != r2.shape or r1.ndim != 1 or np.any(r1 <= 0) or np.any(r2 <= 0):
        raise ValueError(f"r1 and r2 must be positive, one per head, of one shape; got {r1.shape} and {r2.shape}")
    check_memory("Kerple bias", (r1.size, *dist.shape))
    shape = (-1, *([1] * dist.ndim))
    return -r1.reshape(shape) * np.log1p(r2.reshape(shape) * dist[None])


# ----------------------------------------------------------------------------- NoPE

def causal_mask(n: int) -> np.ndarray:
    """0 on and below the diagonal, -inf above it; shape (n, n).  NoPE's only order signal."""
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("causal mask", (n, n))
    i = np.arange(n)
    return np.where(i[None, :] > i[:, None], -np.inf, 0.0)


def nope_bias(n: int, n_heads: int = 1, *, causal: bool = True) -> np.ndarray:
    """NoPE (no positional encoding): zero bias, plus the causal mask when causal; (H, n, n)."""
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    causal = check_bool("causal", causal)
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("NoPE bias", (H, n, n))
    base = causal_mask(n) if causal else np.zeros((n, n))
    return np.broadcast_to(base, (H, n, n)).copy()


# ----------------------------------------------------------------------------- behaviours
# One signature per kind (posenc.schemes.kinds): bias(qpos, kpos, n_heads, **params) -> (H, n_q, n_k),
# and the same as a function of the offset j - i: offset_bias(offsets, n_heads, **params) -> (H, m).

def _offsets(qpos, kpos, *, integer: bool = False) -> np.ndarray:
    """j - i for every (query i, key j): (n_q, n_k)."""
    qp = check_positions(qpos, name="query positions", integer=integer)
    kp = check_positions(kpos, name="key positions", integer=integer)
    check_memory("bias", (qp.size, kp.size))
    return kp[None, :] - qp[:, None]


def _heads(values: np.ndarray, n_heads: int) -> np.ndarray:
    """The same (..., ) values in every head: (H, ...)."""
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    check_memory("bias", (H, *values.shape))
    return np.broadcast_to(values, (H, *values.shape)).copy()


def _t5_bias(qpos, kpos, n_heads, **params):
    ids = _t5_buckets(qpos, kpos, **params)  # (n_q, n_k)
    return _heads(ids.astype(np.float64), n_heads)  # the bucket id names the learned scalar each pair uses


def _t5_head_bias(qpos, kpos, n_heads, head, **params):
    check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)  # every head reads the same bucket id: one head, not H copies
    return _t5_buckets(qpos, kpos, **params).astype(np.float64)


def _t5_offset_bias(offsets, n_heads, *, bidirectional, num_buckets, max_distance):
    off = check_positions(offsets, name="offsets", integer=True)  # (m,) j - i
    ids = t5_bucket(off, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    return _heads(ids.astype(np.float64), n_heads)


def _t5_buckets(qpos, kpos, *, bidirectional, num_buckets, max_distance):
    rel = _offsets(qpos, kpos, integer=True)
    return t5_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)


def _t5_attention_bias(qpos, kpos, n_heads, *, bidirectional, num_buckets, max_distance):
    """An untrained T5 layer's bias: a seeded stand-in table W (num_buckets, H) read at each bucket."""
    ids = _t5_buckets(qpos, kpos, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    W = t5_random_table(num_buckets, n_heads, seed=0)  # (num_buckets, H)
    return np.moveaxis(W[ids], -1, 0)  # (H, n_q, n_k)


def _t5_num_buckets(*, bidirectional, num_buckets, max_distance):
    return num_buckets


def _t5_parameters(d, n_heads, *, bidirectional, num_buckets, max_distance):
    return num_buckets * n_heads


def _alibi(off: np.ndarray, n_heads: int, causal: bool, heads: slice = slice(None)) -> np.ndarray:
    """-m_h |j - i| for offsets of any shape, for the ``heads`` of ``n_heads`` (default all); -inf at future keys
    (j > i) when causal: (h, *off.shape)."""
    slopes = alibi_slopes(n_heads)[heads]  # (h,)
    check_memory("ALiBi bias", (slopes.size, *off.shape))
    out = -slopes.reshape(-1, *([1] * off.ndim)) * np.abs(off)[None]
    if causal:
        out[:, off > 0] = -np.inf
    return out


def _alibi_bias(qpos, kpos, n_heads, *, causal):
    return _alibi(_offsets(qpos, kpos), n_heads, causal)


def _alibi_head_bias(qpos, kpos, n_heads, head, *, causal):
    return _alibi(_offsets(qpos, kpos), n_heads, causal, slice(head, head + 1))[0]  # head h's slope alone


def _alibi_offset_bias(offsets, n_heads, *, causal):
    return _alibi(check_positions(offsets, name="offsets"), n_heads, causal)


def _future_masked(off: np.ndarray) -> np.ndarray:
    return np.where(off > 0, -np.inf, 0.0)  # the causal mask, nothing else


def _nope(off: np.ndarray, n_heads: int) -> np.ndarray:
    return _heads(_future_masked(off), n_heads)


def _nope_bias(qpos, kpos, n_heads):
    return _nope(_offsets(qpos, kpos), n_heads)


def _nope_head_bias(qpos, kpos, n_heads, head):
    check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    return _future_masked(_offsets(qpos, kpos))  # every head: the causal mask


def _nope_offset_bias(offsets, n_heads):
    return _nope(check_positions(offsets, name="offsets"), n_heads)


def _kerple(off: np.ndarray, n_heads: int, r1: float, r2: float) -> np.ndarray:
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    return kerple_log_bias(off, np.full(H, r1), np.full(H, r2))  # one (r1, r2) for every head


def _kerple_bias(qpos, kpos, n_heads, *, r1, r2):
    return _kerple(_offsets(qpos, kpos), n_heads, r1, r2)


def _kerple_head_bias(qpos, kpos, n_heads, head, *, r1, r2):
    return _kerple(_offsets(qpos, kpos), 1, r1, r2)[0]


def _kerple_offset_bias(offsets, n_heads, *, r1, r2):
    return _kerple(check_positions(offsets, name="offsets"), n_heads, r1, r2)


def _kerple_parameters(d, n_heads, *, r1, r2):
    return 2 * n_heads  # trained: (r1, r2) per head


def _kerple_init(rng, n_heads, *, r1, r2):
    """The reference initialisation (chijames/KERPLE): r1 = bias_p ~ U(0, 2), r2 = bias_a ~ U(0, 1), per head."""
    return {"r1": rng.uniform(0.0, 1.0, n_heads) * 2.0, "r2": rng.uniform(0.0, 1.0, n_heads)}


def _kerple_forward(w, qpos, kpos, *, r1, r2):
    off = np.asarray(kpos, dtype=np.float64)[None, :] - np.asarray(qpos, dtype=np.float64)[:, None]
    return kerple_log_bias(off, np.maximum(w["r1"], KERPLE_EPS), np.maximum(w["r2"], KERPLE_EPS))


def _kerple_backward(w, qpos, kpos, grad, *, r1, r2):
    dist = np.abs(np.asarray(kpos, dtype=np.float64)[None, :] - np.asarray(qpos, dtype=np.float64)[:, None])
    G = np.where(np.isfinite(grad), grad, 0.0)  # (H, n_q, n_k)
    a, p = np.maximum(w["r2"], KERPLE_EPS), np.maximum(w["r1"], KERPLE_EPS)
    log = np.log1p(a[:, None, None] * dist[None])
    return {"r1": -(G * log).sum(axis=(1, 2)),
            "r2": -(G * p[:, None, None] * dist[None] / (1.0 + a[:, None, None] * dist[None])).sum(axis=(1, 2))}


def _kerple_project(w, *, r1, r2):
    """Clamp both scalars at 0.01 after a step, as the reference code clamps ``.data`` in every forward."""
    return {"r1": np.maximum(w["r1"], KERPLE_EPS), "r2": np.maximum(w["r2"], KERPLE_EPS)}


def t5_isometric(d: int, n: int | None = None, *, bidirectional, num_buckets, max_distance) -> bool:
    """Within the exact range (every distance 0 .. n-1 has a bucket of its own, n <= max_exact) the bucket id is the
    distance itself, a translation; past it neighbouring buckets cover ranges of different sizes."""
    return n is not None and n <= t5_max_exact(num_buckets, bidirectional)


def _t5_init(rng, n_heads, *, bidirectional, num_buckets, max_distance):
    """A learned scalar per bucket and head, N(0, 0.02^2) (the lab's choice; HF T5 initialises it with the model's
    factor): {"buckets": (num_buckets, H)}."""
    return {"buckets": rng.normal(0.0, 0.02, size=(num_buckets, n_heads))}


def _t5_forward(w, qpos, kpos, **params):
    return np.moveaxis(w["buckets"][_t5_buckets(qpos, kpos, **params)], -1, 0)  # (H, n_q, n_k)


def _t5_backward(w, qpos, kpos, grad, **params):
    ids = _t5_buckets(qpos, kpos, **params).reshape(-1)
    G = np.where(np.isfinite(grad), grad, 0.0)
    nb = w["buckets"].shape[0]
    return {"buckets": np.stack([np.bincount(ids, weights=G[h].reshape(-1), minlength=nb) for h in range(G.shape[0])],
                                axis=1)}  # (num_buckets, H)


# T5's bucket id is an isometry of positions only within its exact range (t5_isometric); ALiBi's bias at distance
# p, -m_h p, and NoPE's 0 are translations along positions 0, 1, ...
T5 = Bias(bias=_t5_bias, offset_bias=_t5_offset_bias, head_bias=_t5_head_bias, attention_bias=_t5_attention_bias, buckets=_t5_buckets,
          num_buckets=_t5_num_buckets, parameters=_t5_parameters, offset_only=always, isometric=t5_isometric,
          score_unit="T5 bucket id", trainable=TrainableBias(init=_t5_init, forward=_t5_forward, backward=_t5_backward))
ALIBI = Bias(bias=_alibi_bias, offset_bias=_alibi_offset_bias, head_bias=_alibi_head_bias, offset_only=always, isometric=always)
NOPE = Bias(bias=_nope_bias, offset_bias=_nope_offset_bias, head_bias=_nope_head_bias, offset_only=always, isometric=always, mask_only=True)
# Kerple's kernel is concave in the distance, so |b(p + k) - b(p)| shrinks with p: not an isometry.  Its bias is at
# most 0 (sequential scale).  The registry's Kerple gives every head one (r1, r2); trained, each head has its own.
KERPLE = Bias(bias=_kerple_bias, offset_bias=_kerple_offset_bias, head_bias=_kerple_head_bias,
              parameters=_kerple_parameters, offset_only=always, isometric=never,
              trainable=TrainableBias(init=_kerple_init, forward=_kerple_forward, backward=_kerple_backward,
                                      project=_kerple_project))
