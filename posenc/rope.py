"""Rotary position embedding (RoFormer, Su et al., arXiv:2104.09864) and its context extensions.

axes: n positions, d head_dim, h = d // 2 rotation pairs, m offsets.

    theta_k = base ** (-2k / d),  k = 0 .. d/2 - 1
    f(x, p) = R(p * theta) x      (a 2x2 rotation of each channel pair)
    <f(q, m), f(k, n)> = q^T R((n - m) theta) k     -> depends on n - m only

Frequencies follow Hugging Face transformers' ``modeling_rope_utils.py`` (v5): every variant
returns ``(inv_freq, attention_factor)`` and the model multiplies cos and sin by the factor.
We compute in float64; HF computes inv_freq in float32 (relative differences ~1e-7).

Pairing layouts (the same map up to a fixed channel permutation):
- "half_split": channel i pairs with i + d/2 (GPT-NeoX; Llama/Mistral/Qwen in HF, rotate_half).
- "interleaved": channel 2i pairs with 2i + 1 (RoFormer, GPT-J, Meta's Llama code).
Interleaved channel 2i corresponds to half-split channel i, and 2i + 1 to i + d/2.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from posenc._trig import sincos_outer
from posenc._validate import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_memory,
    check_positions,
)

LAYOUTS = ("half_split", "interleaved")
ROPE_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope")
MAX_HEAD_DIM = 4096
MAX_CONTEXT = 10**8


def check_head_dim(head_dim, *, lo: int = 2) -> int:
    """head_dim must be an even integer (RoPE rotates channel pairs)."""
    d = check_int("head_dim", head_dim, lo=lo, hi=MAX_HEAD_DIM)
    if d % 2:
        raise ValueError(f"head_dim must be an even integer in [{lo}, {MAX_HEAD_DIM}], got {d}")
    return d


def _scaled_base_inv_freq(d: int, new_base: float, what: str) -> np.ndarray:
    """inv_freq for a base *derived* by NTK-style scaling; it may exceed the user-facing range
    of ``base`` (e.g. dynamic NTK at d = 4 squares the growth), so only finiteness is checked."""
    if not np.isfinite(new_base) or new_base <= 1.0:
        raise ValueError(f"{what} gives a scaled base of {new_base:g}; reduce the factor or the length")
    return 1.0 / np.power(new_base, np.arange(0, d, 2, dtype=np.float64) / d)


def default_inv_freq(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """theta_k = base ** (-2k / head_dim), shape (head_dim // 2,)."""
    d = check_head_dim(head_dim)
    b = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    return 1.0 / np.power(b, np.arange(0, d, 2, dtype=np.float64) / d)  # (h,)


# ----------------------------------------------------------------------------- scaling dict

def _get(scaling: Mapping[str, Any], key: str, default=None):
    value = scaling.get(key, default)
    return default if value is None else value


def _factor(scaling: Mapping[str, Any], rope_type: str, *, required: bool = True) -> float:
    if "factor" not in scaling or scaling["factor"] is None:
        if required:
            raise ValueError(f"scaling['factor'] is required for rope_type {rope_type!r} (a number >= 1)")
        return 1.0
    return check_float("scaling['factor']", scaling["factor"], lo=1.0, hi=1e6)


def _orig_len(scaling: Mapping[str, Any], rope_type: str) -> int:
    if scaling.get("original_max_position_embeddings") is None:
        raise ValueError(
            f"scaling['original_max_position_embeddings'] (the trained context length) is required "
            f"for rope_type {rope_type!r}"
        )
    return check_int(
        "scaling['original_max_position_embeddings']",
        scaling["original_max_position_embeddings"],
        lo=1,
        hi=MAX_CONTEXT,
    )


def rope_type_of(scaling: Mapping[str, Any] | None) -> str:
    """The rope_type of a HF-style scaling block ("default" for None); accepts the v4 "type" key."""
    if scaling is None:
        return "default"
    if not isinstance(scaling, Mapping):
        raise ValueError(f"scaling must be None or a dict like a config.json rope_scaling block, got {scaling!r}")
    rt = scaling.get("rope_type", scaling.get("type", "default"))
    return check_choice("scaling['rope_type']", rt, ROPE_TYPES)


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's attention temperature: 0.1 * mscale * ln(scale) + 1 (1 when scale <= 1)."""
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_correction_dim(num_rotations: float, head_dim: int, base: float, max_pos: int) -> float:
    """The (fractional) pair index whose wavelength fits ``num_rotations`` turns into max_pos.

    d * ln(L / (2 pi r)) / (2 ln base).
    """
    return head_dim * math.log(max_pos / (num_rotations * 2 * math.pi)) / (2 * math.log(base))


def yarn_ramp(head_dim: int, base: float, scaling: Mapping[str, Any]) -> dict:
    """YaRN's per-pair blend between interpolation and extrapolation.

    Returns {"low": int|float, "high": int|float, "ramp": ndarray (h,)} where ramp 0 keeps
    theta (fast pairs, below ``low``) and ramp 1 divides it by the factor (slow pairs, above
    ``high``).  Matches HF's find_correction_range and linear_ramp_factor.
    """
    d = check_head_dim(head_dim)
    b = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    orig = _orig_len(scaling, "yarn")
    beta_fast = check_float("scaling['beta_fast']", _get(scaling, "beta_fast", 32.0), lo=0.0, hi=1e6, lo_open=True)
    beta_slow = check_float("scaling['beta_slow']", _get(scaling, "beta_slow", 1.0), lo=0.0, hi=1e6, lo_open=True)
    truncate = check_bool("scaling['truncate']", _get(scaling, "truncate", True))
    low = yarn_correction_dim(beta_fast, d, b, orig)
    high = yarn_correction_dim(beta_slow, d, b, orig)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    hi_eff = high + 0.001 if low == high else high  # HF: avoid a division by zero
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - low) / (hi_eff - low), 0.0, 1.0)  # (h,)
    return {"low": low, "high": high, "ramp": ramp}


def rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
) -> tuple[np.ndarray, float]:
    """RoPE inverse frequencies and attention factor: (inv_freq (head_dim // 2,), float).

    ``scaling`` is None or a Hugging Face ``rope_scaling`` / ``rope_parameters`` block:
    {"rope_type": "linear" | "ntk" | "dynamic" | "yarn" | "llama3" | "longrope", "factor": ...,
    "original_max_position_embeddings": ..., ...}.  ``seq_len`` is the current length, used by
    "dynamic" (and "longrope" to pick its factor list); it defaults to the trained length.
    """
    d = check_head_dim(head_dim)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    rope_type = rope_type_of(scaling)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, lo=1, hi=MAX_CONTEXT)
    inv = default_inv_freq(d, base)  # (h,)
    if rope_type == "default":
        return inv, 1.0
    assert scaling is not None
    if rope_type == "linear":
        # Position interpolation (Chen et al. 2023): f(x, m * L / L') == theta / factor.
        return inv / _factor(scaling, rope_type), 1.0
    if rope_type == "ntk":
        # NTK-aware (bloc97): base' = base * s ** (d / (d - 2)); the lowest frequency is / s.
        s = _factor(scaling, rope_type)
        d = check_head_dim(d, lo=4)
        return _scaled_base_inv_freq(d, base * s ** (d / (d - 2)), "NTK-aware scaling"), 1.0
    if rope_type == "dynamic":
        # Dynamic NTK (emozilla): the NTK base grows with the current length beyond the trained one.
        s = _factor(scaling, rope_type)
        orig = _orig_len(scaling, rope_type)
        d = check_head_dim(d, lo=4)
        L = max(seq_len if seq_len is not None else orig, orig)
        new_base = base * ((s * L / orig) - (s - 1)) ** (d / (d - 2))
        return _scaled_base_inv_freq(d, new_base, f"dynamic NTK at seq_len {L}"), 1.0
    if rope_type == "yarn":
        return _yarn(d, base, scaling)
    if rope_type == "llama3":
        return _llama3(inv, scaling), 1.0
    return _longrope(d, base, scaling, seq_len)


def _yarn(d: int, base: float, scaling: Mapping[str, Any]) -> tuple[np.ndarray, float]:
    """YaRN (Peng et al. 2023, arXiv:2309.00071), as HF _compute_yarn_parameters."""
    s = _factor(scaling, "yarn")
    # 0 / None mean "not set" (HF tests truthiness); anything else must be a finite number >= 0
    mscale, mscale_all_dim = (
        check_float(f"scaling['{k}']", _get(scaling, k, 0.0), lo=0.0, hi=1e6) for k in ("mscale", "mscale_all_dim")
    )
    af = scaling.get("attention_factor")
    if af is None:
        if mscale and mscale_all_dim:
            af = yarn_get_mscale(s, float(mscale)) / yarn_get_mscale(s, float(mscale_all_dim))
        else:
            af = yarn_get_mscale(s)
    af = check_float("scaling['attention_factor']", af, lo=0.0, hi=100.0, lo_open=True)
    theta = default_inv_freq(d, base)  # (h,) extrapolation: keep theta
    ramp = yarn_ramp(d, base, scaling)["ramp"]  # (h,) 0 -> keep, 1 -> interpolate
    # NOTE: HF writes inv = interp * (1 - extrap_factor) + extrap * extrap_factor with
    # extrap_factor = 1 - ramp, which is the same blend.
    inv = (theta / s) * ramp + theta * (1.0 - ramp)
    return inv, af


def llama3_bands(head_dim: int, base: float, scaling: Mapping[str, Any]) -> np.ndarray:
    """Llama 3 band of each pair: 0 kept, 1 smoothed, 2 divided by factor; shape (h,) int."""
    inv = default_inv_freq(head_dim, base)
    low_wl, high_wl, _ = _llama3_limits(scaling)
    wavelen = 2 * math.pi / inv
    return np.where(wavelen < high_wl, 0, np.where(wavelen > low_wl, 2, 1))


def _llama3_limits(scaling: Mapping[str, Any]) -> tuple[float, float, tuple[float, float, float, int]]:
    s = _factor(scaling, "llama3")
    lo_f = check_float("scaling['low_freq_factor']", _get(scaling, "low_freq_factor", 1.0), lo=0.0, hi=1e6, lo_open=True)
    hi_f = check_float("scaling['high_freq_factor']", _get(scaling, "high_freq_factor", 4.0), lo=0.0, hi=1e6, lo_open=True)
    if hi_f <= lo_f:
        raise ValueError(
            f"scaling['high_freq_factor'] must be greater than low_freq_factor ({lo_f:g}), got {hi_f:g}"
        )
    orig = _orig_len(scaling, "llama3")
    return orig / lo_f, orig / hi_f, (s, lo_f, hi_f, orig)


def _llama3(inv: np.ndarray, scaling: Mapping[str, Any]) -> np.ndarray:
    """Llama 3.1 scaling (Meta apply_scaling == HF _compute_llama3_parameters)."""
    low_wl, high_wl, (s, lo_f, hi_f, orig) = _llama3_limits(scaling)
    wavelen = 2 * math.pi / inv  # (h,)
    scaled = np.where(wavelen > low_wl, inv / s, inv)  # long wavelengths: theta / factor
    smooth = (orig / wavelen - lo_f) / (hi_f - lo_f)
    smoothed = (1 - smooth) * scaled / s + smooth * scaled
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)  # both bounds inclusive
    return np.where(medium, smoothed, scaled)


def _longrope(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
    """LongRoPE (Ding et al. 2024; Phi-3 "su"): per-pair rescale lists, long when seq_len > orig."""
    orig = _orig_len(scaling, "longrope")
    factor = _factor(scaling, "longrope", required=False)
    lists = {}
    for key in ("short_factor", "long_factor"):
        raw = scaling.get(key)
        try:
            arr = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            arr = np.asarray([])
        if arr.shape != (d // 2,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(
                f"scaling['{key}'] must be a list of {d // 2} positive numbers for longrope "
                f"(head_dim {d}), got {raw!r}"
            )
        lists[key] = arr
    use_long = seq_len is not None and seq_len > orig
    ext = lists["long_factor" if use_long else "short_factor"]
    inv = 1.0 / (ext * np.power(base, np.arange(0, d, 2, dtype=np.float64) / d))
    af = scaling.get("attention_factor")
    if af is None:
        af = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(orig))
    return inv, check_float("scaling['attention_factor']", af, lo=0.0, hi=100.0, lo_open=True)


# ----------------------------------------------------------------------------- rotation

def _pair_views(d: int, layout: str) -> tuple[slice, slice]:
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
    first, second = _pair_views(d, layout)
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
    first, second = _pair_views(d, layout)
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
