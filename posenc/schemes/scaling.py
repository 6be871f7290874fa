"""RoPE frequencies: the default and every context-extension scaling, one function per rope_type.

axes: d head_dim, h = d // 2 rotation pairs.

    theta_k = base ** (-2k / d),  k = 0 .. d/2 - 1

As Hugging Face transformers' ``modeling_rope_utils.py`` (v5) does, every variant is one function
with one signature returning ``(inv_freq, attention_factor)`` -- the model multiplies cos and sin by
the factor -- and one dict, ``ROPE_INIT_FUNCTIONS``, maps a ``rope_type`` to it; ``rope_frequencies``
is the only caller.  We compute in float64; HF computes inv_freq in float32 (relative differences
~1e-7).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from posenc._validate import check_bool, check_choice, check_float, check_int

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


# ----------------------------------------------------------------------------- reading a scaling block

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


def _yarn(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
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
    if hi_f < lo_f:
        raise ValueError(
            f"scaling['high_freq_factor'] must be at least low_freq_factor ({lo_f:g}), got {hi_f:g}"
        )
    orig = _orig_len(scaling, "llama3")
    return orig / lo_f, orig / hi_f, (s, lo_f, hi_f, orig)


def _llama3(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
    """Llama 3.1 scaling (Meta apply_scaling == HF _compute_llama3_parameters).

    NOTE: Llama 4 sets low_freq_factor == high_freq_factor (= 1): there is no smoothed band, pairs
    turning within orig / low are kept and slower ones divided by the factor, as HF computes it.
    A pair whose wavelength is exactly orig / low would be 0 / 0 in HF's blend; we keep it.
    """
    inv = default_inv_freq(d, base)  # (h,)
    low_wl, high_wl, (s, lo_f, hi_f, orig) = _llama3_limits(scaling)
    wavelen = 2 * math.pi / inv  # (h,)
    scaled = np.where(wavelen > low_wl, inv / s, inv)  # long wavelengths: theta / factor
    if hi_f == lo_f:
        return scaled, 1.0
    smooth = (orig / wavelen - lo_f) / (hi_f - lo_f)
    smoothed = (1 - smooth) * scaled / s + smooth * scaled
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)  # both bounds inclusive
    return np.where(medium, smoothed, scaled), 1.0


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


# ----------------------------------------------------------------------------- one function per rope_type
# Signature of every entry: (head_dim, base, scaling, seq_len) -> (inv_freq (h,), attention_factor).

def _default(d: int, base: float, scaling: Mapping[str, Any] | None, seq_len: int | None) -> tuple[np.ndarray, float]:
    return default_inv_freq(d, base), 1.0


def _linear(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
    """Position interpolation (Chen et al. 2023, arXiv:2306.15595): f(x, m * L / L') == theta / factor."""
    return default_inv_freq(d, base) / _factor(scaling, "linear"), 1.0


def _ntk(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
    """NTK-aware (bloc97, r/LocalLLaMA 2023): base' = base * s ** (d / (d - 2)); the lowest frequency is / s."""
    s = _factor(scaling, "ntk")
    d = check_head_dim(d, lo=4)
    return _scaled_base_inv_freq(d, base * s ** (d / (d - 2)), "NTK-aware scaling"), 1.0


def _dynamic(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None) -> tuple[np.ndarray, float]:
    """Dynamic NTK (emozilla, r/LocalLLaMA 2023): the NTK base grows with the current length past the trained one.

    base' = base * (s L / L0 - (s - 1)) ** (d / (d - 2)) with L = max(seq_len, L0), as HF's
    _compute_dynamic_ntk_parameters.
    """
    s = _factor(scaling, "dynamic")
    orig = _orig_len(scaling, "dynamic")
    d = check_head_dim(d, lo=4)
    L = max(seq_len if seq_len is not None else orig, orig)
    new_base = base * ((s * L / orig) - (s - 1)) ** (d / (d - 2))
    return _scaled_base_inv_freq(d, new_base, f"dynamic NTK at seq_len {L}"), 1.0


ROPE_INIT_FUNCTIONS: dict[str, Callable[..., tuple[np.ndarray, float]]] = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,  # a transformers v4 key (static NTK-aware); v5 dropped it
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
}
ROPE_TYPES = tuple(ROPE_INIT_FUNCTIONS)


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
    return ROPE_INIT_FUNCTIONS[rope_type](d, base, scaling, seq_len)
