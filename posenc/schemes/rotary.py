"""Rotary position embedding (RoFormer, Su et al., arXiv:2104.09864): the rotation, and the RoPE schemes.

axes: n positions, d head_dim, h = d // 2 rotation pairs, m offsets.

    f(x, p) = R(p * theta) x      (a 2x2 rotation of each channel pair; theta from posenc.schemes.scaling)
    <f(q, m), f(k, n)> = q^T R((n - m) theta) k     -> depends on n - m only

Pairing layouts (the same map up to a fixed channel permutation):
- "half_split": channel i pairs with i + d/2 (GPT-NeoX; Llama/Mistral/Qwen in HF, rotate_half).
- "interleaved": channel 2i pairs with 2i + 1 (RoFormer, GPT-J, Meta's Llama code).
Interleaved channel 2i corresponds to half-split channel i, and 2i + 1 to i + d/2.

Every RoPE scheme in the registry (plain and each context extension) is ``rope_scheme(rope_type)``:
the same rotation, applied to q and to k, at the frequencies its rope_type gives.
"""

from __future__ import annotations

import numpy as np

from posenc._trig import sincos_outer
from posenc._validate import check_choice, check_float, check_int, check_memory, check_positions
from posenc.schemes.kinds import Rotary, always, never
from posenc.schemes.scaling import ROPE_INIT_FUNCTIONS, ROPE_TRAITS, check_head_dim, default_inv_freq, rope_frequencies

LAYOUTS = ("half_split", "interleaved")

def pair_views(d: int, layout: str) -> tuple[slice, slice]:
    """Index of the first and second member of every pair for a layout."""
    h = d // 2
    if layout == "half_split":
        return slice(0, h), slice(h, d)
    return slice(0, d, 2), slice(1, d, 2)


def apply_rope(
    x,
    positions,
    inv_freq,
    *,
    layout: str = "half_split",
    attention_factor: float = 1.0,
) -> np.ndarray:
    """Rotate queries or keys: x of shape (..., n, head_dim) -> same shape, float64.

    Pair (a, b) at position p becomes (a cos - b sin, b cos + a sin) * attention_factor with
    angle p * theta_k; ``layout`` chooses which channels form a pair (see the module docstring).
    """
    layout = check_choice("layout", layout, LAYOUTS)
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf" or arr.ndim < 2:
        raise ValueError(f"x must be a real array of shape (..., n, head_dim), got shape {arr.shape} dtype {arr.dtype}")
    n, d = arr.shape[-2], arr.shape[-1]
    check_head_dim(d)
    check_memory("rotated array", arr.shape)  # before the float64 copy, not after it
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("x must contain only finite numbers")
    pos = check_positions(positions)  # (n,)
    if pos.size != n:
        raise ValueError(f"positions must have length n = {n} (x.shape[-2]), got {pos.size}")
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)  # (h,)
    if inv.size != d // 2:
        raise ValueError(f"inv_freq must have head_dim // 2 = {d // 2} entries, got {inv.size}")
    af = check_float("attention_factor", attention_factor, lo=0.0, hi=100.0, lo_open=True)
    ang = np.multiply.outer(pos, inv)  # (n, h)
    cos, sin = np.cos(ang) * af, np.sin(ang) * af  # (n, h)
    first, second = pair_views(d, layout)
    a, b = arr[..., first], arr[..., second]  # (..., n, h)
    out = np.empty_like(arr)
    out[..., first] = a * cos - b * sin
    out[..., second] = b * cos + a * sin
    return out


def pair_permutation(head_dim: int) -> np.ndarray:
    """Channel permutation P with interleaved(x) == half_split(x[P])[argsort(P)]; shape (d,).

    P maps half-split channel order onto interleaved order: P = [0, 2, 4, ..., 1, 3, 5, ...].
    """
    d = check_head_dim(head_dim)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def rope_offset_scores(
    offsets,
    inv_freq,
    q,
    k,
    *,
    layout: str = "half_split",
    attention_factor: float = 1.0,
) -> np.ndarray:
    """q . k score of a query at position i and a key at i + offset, shape (m,).

    score(D) = af^2 * sum_k [(qa ka + qb kb) cos(D theta_k) + (qb ka - qa kb) sin(D theta_k)],
    which is <R_i q, R_(i+D) k>, independent of i.  O(m * h), no (n, n, d) product.
    """
    layout = check_choice("layout", layout, LAYOUTS)
    off = check_positions(offsets, name="offsets")  # (m,)
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)  # (h,)
    try:
        q = np.asarray(q, dtype=np.float64)
        k = np.asarray(k, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"q and k must be real vectors of length {2 * inv.size}") from exc
    d = 2 * inv.size
    if q.shape != (d,) or k.shape != (d,):
        raise ValueError(f"q and k must have shape ({d},) to match inv_freq, got {q.shape} and {k.shape}")
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise ValueError("q and k must contain only finite numbers")
    af = check_float("attention_factor", attention_factor, lo=0.0, hi=100.0, lo_open=True)
    check_memory("offset score table", (off.size, inv.size))
    first, second = pair_views(d, layout)
    qa, qb, ka, kb = q[first], q[second], k[first], k[second]  # (h,)
    sin, cos = sincos_outer(off, inv)  # (m, h) each; angle addition on evenly spaced offsets
    return af**2 * (cos @ (qa * ka + qb * kb) + sin @ (qb * ka - qa * kb))


def rope_decay_bound(distances, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """RoFormer §3.4.3 relative upper bound at each distance, shape (m,).

    (1 / (d/2)) * sum_{j=1}^{d/2} |S_j|,  S_j = sum_{k<j} exp(i * distance * theta_k).
    Equals mean(1 .. d/2) at distance 0 (32.5 for d = 128); it decays with oscillation.
    """
    d = check_head_dim(head_dim)
    dist = check_positions(distances, name="distances")  # (m,)
    theta = default_inv_freq(d, base)  # (h,)
    check_memory("decay-bound table", (dist.size, theta.size), itemsize=16)
    phase = np.exp(1j * np.multiply.outer(dist, theta))  # (m, h) complex
    partial = np.cumsum(phase, axis=1)  # (m, h): S_1 .. S_h
    return np.abs(partial).mean(axis=1)



# ----------------------------------------------------------------------------- the RoPE schemes
# One signature per kind (posenc.schemes.kinds): qk(q, k, positions, *, seq_len, **params).

def rope_scheme(rope_type: str, fixed: dict | None = None, rename: dict | None = None) -> Rotary:
    """The behaviour of RoPE with one rope_type: params are base, layout and that type's scaling keys.

    ``fixed`` holds block keys that are not tunable parameters (LongRoPE's published factor set); ``rename`` maps a
    parameter's name in the scheme to its key in the Hugging Face block (p-RoPE's ``p`` is ``partial_rotary_factor``
    of rope_type "proportional", the same rotation).
    """
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"unknown rope_type {rope_type!r}; valid: {', '.join(ROPE_INIT_FUNCTIONS)}")
    fixed, rename = dict(fixed or {}), dict(rename or {})

    def scaling_block(*, base, layout, **scaling):
        block = {rename.get(k, k): v for k, v in scaling.items()}
        return {"rope_type": rope_type, **fixed, **block} if ROPE_TRAITS[rope_type].scaled else None

    def frequencies(d, *, seq_len=None, base, layout, **scaling):
        block = scaling_block(base=base, layout=layout, **scaling)
        return rope_frequencies(d, base=base, scaling=block, seq_len=seq_len)

    def qk(q, k, positions, *, seq_len=None, base, layout, **scaling):
        inv, af = frequencies(np.shape(q)[-1], seq_len=seq_len, base=base, layout=layout, **scaling)
        rotate = lambda x: None if x is None else apply_rope(x, positions, inv, layout=layout, attention_factor=af)
        return rotate(q), rotate(k)  # the same rotation on both: the score depends on n - m only

    def profile(offsets, q, k, *, seq_len=None, base, layout, **scaling):
        inv, af = frequencies(np.size(q), seq_len=seq_len, base=base, layout=layout, **scaling)
        return rope_offset_scores(offsets, inv, q, k, layout=layout, attention_factor=af)

    return Rotary(qk=qk, profile=profile, frequencies=frequencies, scaling_block=scaling_block,
                  isometric=always)  # R_p is a rotation: |R_(p+k) q - R_p q| = |R_k q - q|


# ----------------------------------------------------------------------------- randomized positions
# Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of Transformers" (arXiv:2305.16843).

def randomized_positions(n: int, max_len: int, rng: np.random.Generator) -> np.ndarray:
    """A sorted sample of n distinct positions from [0, max_len), float64 (n,).

    NOTE: as the authors' ``noisy_fixed_positional_encodings`` (google-deepmind/randomized_positional_encodings,
    models/positional_encodings.py): ``choice(arange(noise_max_length), shape=(n,), replace=False)``, then sorted.
    Their model draws a new sample at every forward pass, in training and in evaluation alike.
    """
    n = check_int("n", n, lo=1)
    max_len = check_int("max_len", max_len, lo=1, hi=10**7)
    if n > max_len:
        raise ValueError(f"randomized positions: a sequence of {n:,} needs max_len >= {n:,}, got max_len = {max_len:,}")
    return np.sort(rng.choice(max_len, size=n, replace=False)).astype(np.float64)


def randomized_map(positions, seq_len: int, max_len: int, seed: int) -> np.ndarray:
    """The positions a sequence of ``seq_len`` tokens gets: index p of one seeded sorted sample (randomized_positions);
    ``positions`` are token indices in [0, seq_len)."""
    pos = check_positions(positions, integer=True)
    if pos.size and (pos.min() < 0 or pos.max() >= seq_len):
        raise ValueError(f"positions must be token indices in [0, {seq_len - 1}] for seq_len = {seq_len}, "
                         f"got [{pos.min():g}, {pos.max():g}]")
    seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
    return randomized_positions(seq_len, max_len, np.random.default_rng(seed))[pos.astype(np.int64)]


def _randomized_qk(q, k, positions, *, seq_len=None, base, layout, max_len, seed):
    inv = default_inv_freq(np.shape(q)[-1], base)
    n = seq_len if seq_len is not None else int(np.max(positions, initial=0)) + 1
    sampled = randomized_map(positions, n, max_len, seed)
    rotate = lambda x: None if x is None else apply_rope(x, sampled, inv, layout=layout)
    return rotate(q), rotate(k)


def _randomized_profile(offsets, q, k, **params):
    raise ValueError("randomized positions: the score depends on the sampled positions, not only on j - i")


def _randomized_frequencies(d, *, seq_len=None, base, layout, max_len, seed):
    return default_inv_freq(check_head_dim(d), base), 1.0  # RoPE's own rotation, at other positions


# The rotation is RoPE's, but token p sits at the p-th of a sorted random sample: the gaps differ, so the score is
# not a function of j - i, and |R(s_(p+k)) q - R(s_p) q| changes with p (neither declaration holds).
ROPE_RANDOMIZED = Rotary(qk=_randomized_qk, profile=_randomized_profile, frequencies=_randomized_frequencies,
                         isometric=never, offset_only=never, position_limit=lambda *, base, layout, max_len, seed: max_len)
