"""RoPE frequencies: the default and every context-extension scaling, one function per rope_type.

axes: d head_dim, h = d // 2 rotation pairs.

    theta_k = base ** (-2k / d),  k = 0 .. d/2 - 1

As Hugging Face transformers' ``modeling_rope_utils.py`` (v5) does, every variant is one function
with one signature returning ``(inv_freq, attention_factor)`` -- the model multiplies cos and sin by
the factor -- and one dict, ``ROPE_INIT_FUNCTIONS``, maps a ``rope_type`` to it; ``rope_frequencies``
is the only caller.  We compute in float64; HF computes inv_freq in float32 (relative differences
~1e-7).  ``max_position_embeddings`` is the config field of that name (the served length): HF reads it
as the trained length of "dynamic", as the default trained length of yarn / llama3 / longrope blocks
without ``original_max_position_embeddings``, and to derive a missing yarn / longrope ``factor``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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


def shown(value, limit: int = 60) -> str:
    """repr(value) cut to ``limit`` characters, so an error message stays short whatever it quotes."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 25]}... ({len(text):,} characters)"


def _factor(scaling: Mapping[str, Any], rope_type: str, *, required: bool = True) -> float:
    if "factor" not in scaling or scaling["factor"] is None:
        if required:
            raise ValueError(f"scaling['factor'] is required for rope_type {rope_type!r} (a number >= 1)")
        return 1.0
    return check_float("scaling['factor']", scaling["factor"], lo=1.0, hi=1e6)


def _orig_len(scaling: Mapping[str, Any], rope_type: str, max_pos: int | None = None) -> int:
    if scaling.get("original_max_position_embeddings") is None:
        if max_pos is not None:  # HF standardize_rope_params: setdefault(original, max_position_embeddings)
            return max_pos
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


def _derived_factor(scaling: Mapping[str, Any], rope_type: str, orig: int, max_pos: int | None) -> float:
    """``factor``, or max_position_embeddings / original when the block leaves it out (HF: DeepSeek, Phi-3)."""
    if scaling.get("factor") is None and max_pos is not None:
        return check_float("max_position_embeddings / original_max_position_embeddings", max_pos / orig, lo=0.0, hi=1e6, lo_open=True)
    return _factor(scaling, rope_type)


def _yarn(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """YaRN (Peng et al. 2023, arXiv:2309.00071), as HF _compute_yarn_parameters."""
    orig = _orig_len(scaling, "yarn", max_pos)
    s = _derived_factor(scaling, "yarn", orig, max_pos)
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
    ramp = yarn_ramp(d, base, {**scaling, "original_max_position_embeddings": orig})["ramp"]  # (h,) 0 -> keep, 1 -> interpolate
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


def _llama3_limits(scaling: Mapping[str, Any], max_pos: int | None = None) -> tuple[float, float, tuple[float, float, float, int]]:
    s = _factor(scaling, "llama3")
    lo_f = check_float("scaling['low_freq_factor']", _get(scaling, "low_freq_factor", 1.0), lo=0.0, hi=1e6, lo_open=True)
    hi_f = check_float("scaling['high_freq_factor']", _get(scaling, "high_freq_factor", 4.0), lo=0.0, hi=1e6, lo_open=True)
    if hi_f < lo_f:
        raise ValueError(
            f"scaling['high_freq_factor'] must be at least low_freq_factor ({lo_f:g}), got {hi_f:g}"
        )
    orig = _orig_len(scaling, "llama3", max_pos)
    return orig / lo_f, orig / hi_f, (s, lo_f, hi_f, orig)


def _llama3(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """Llama 3.1 scaling (Meta apply_scaling == HF _compute_llama3_parameters).

    NOTE: Llama 4 sets low_freq_factor == high_freq_factor (= 1): there is no smoothed band, pairs
    turning within orig / low are kept and slower ones divided by the factor, as HF computes it.
    A pair whose wavelength is exactly orig / low would be 0 / 0 in HF's blend; we keep it.
    """
    inv = default_inv_freq(d, base)  # (h,)
    low_wl, high_wl, (s, lo_f, hi_f, orig) = _llama3_limits(scaling, max_pos)
    wavelen = 2 * math.pi / inv  # (h,)
    scaled = np.where(wavelen > low_wl, inv / s, inv)  # long wavelengths: theta / factor
    if hi_f == lo_f:
        return scaled, 1.0
    smooth = (orig / wavelen - lo_f) / (hi_f - lo_f)
    smoothed = (1 - smooth) * scaled / s + smooth * scaled
    medium = ~(wavelen < high_wl) & ~(wavelen > low_wl)  # both bounds inclusive
    return np.where(medium, smoothed, scaled), 1.0


def _factor_list(scaling: Mapping[str, Any], key: str, h: int, d: int) -> np.ndarray:
    raw = scaling.get(key)
    n = len(raw) if isinstance(raw, (list, tuple)) else None
    try:
        arr = np.asarray(raw, dtype=np.float64) if n == h else np.asarray([])
    except (TypeError, ValueError, OverflowError):
        arr = np.asarray([])
    if arr.shape != (h,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        got = f"a list of {n:,} entries" if n is not None and n != h else shown(raw)
        raise ValueError(f"scaling['{key}'] must be a list of {h} positive numbers for longrope (head_dim {d}), got {got}")
    return arr


def _longrope(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """LongRoPE (Ding et al. 2024, arXiv:2402.13753; Phi-3 "su"): per-pair rescale lists, long when seq_len > orig.

    NOTE: as HF, ``factor`` defaults to max_position_embeddings / original and the attention factor
    to sqrt(1 + ln(factor) / ln(original)).  Phi-3.5-MoE's blocks carry ``short_mscale`` /
    ``long_mscale``: its model multiplies cos and sin by the one of the list in use (HF's
    PhimoeRotaryEmbedding), so they are the attention factor here.  ``factor_set`` (a posenc key)
    names a published pair of lists from ``LONGROPE_FACTOR_SETS``, resampled to d/2 pairs.
    """
    orig = _orig_len(scaling, "longrope", max_pos)
    if scaling.get("factor") is None and max_pos is not None:
        factor = check_float("max_position_embeddings / original_max_position_embeddings", max_pos / orig, lo=0.0, hi=1e6, lo_open=True)
    else:
        factor = _factor(scaling, "longrope", required=False)
    if scaling.get("factor_set") is not None:
        name = check_choice("scaling['factor_set']", scaling["factor_set"], LONGROPE_FACTOR_SETS)
        scaling = {**scaling, **longrope_factor_set(name, d // 2)}
    lists = {key: _factor_list(scaling, key, d // 2, d) for key in ("short_factor", "long_factor")}
    use_long = seq_len is not None and seq_len > orig
    ext = lists["long_factor" if use_long else "short_factor"]
    inv = 1.0 / (ext * np.power(base, np.arange(0, d, 2, dtype=np.float64) / d))
    af = scaling.get("attention_factor")
    mkey = "long_mscale" if use_long else "short_mscale"
    if af is None and scaling.get(mkey) is not None:
        af = check_float(f"scaling['{mkey}']", scaling[mkey], lo=0.0, hi=100.0, lo_open=True)
    if af is None:
        af = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(orig))
    return inv, check_float("scaling['attention_factor']", af, lo=0.0, hi=100.0, lo_open=True)


# microsoft/Phi-3-mini-128k-instruct config.json, rope_scaling (48 pairs: head_dim 96, base 10000,
# original_max_position_embeddings 4096, max_position_embeddings 131072), values unchanged.
PHI3_MINI_128K = {
    "long_factor": (
        1.0700000524520874, 1.1200000047683716, 1.149999976158142, 1.4199999570846558, 1.5699999332427979, 1.7999999523162842,
        2.129999876022339, 2.129999876022339, 3.009999990463257, 5.910000324249268, 6.950000286102295, 9.070000648498535,
        9.930000305175781, 10.710000038146973, 11.130000114440918, 14.609999656677246, 15.409998893737793, 19.809999465942383,
        37.279998779296875, 38.279998779296875, 38.599998474121094, 40.12000274658203, 46.20000457763672, 50.940006256103516,
        53.66000747680664, 54.9373893737793, 56.89738845825195, 57.28738784790039, 59.98738479614258, 60.86738586425781,
        60.887386322021484, 61.71739196777344, 62.91739273071289, 62.957393646240234, 63.41739273071289, 63.8173942565918,
        63.83739471435547, 63.897396087646484, 63.93739700317383, 64.06739807128906, 64.11434936523438, 64.12435150146484,
        64.15435028076172, 64.19435119628906, 64.24435424804688, 64.57435607910156, 64.69000244140625, 64.76000213623047,
    ),
    "short_factor": (
        1.1, 1.1, 1.1, 1.3000000000000003, 1.3500000000000003, 1.3500000000000003, 1.4000000000000004, 1.5500000000000005,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.0500000000000007,
        2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.1000000000000005,
        2.1000000000000005, 2.1500000000000004, 2.25, 2.25, 2.25, 2.25, 2.25, 2.3999999999999995, 2.4499999999999993,
        2.499999999999999, 2.6999999999999984, 2.6999999999999984, 2.7499999999999982, 2.799999999999998, 2.8999999999999977,
        3.049999999999997,
    ),
}
LONGROPE_FACTOR_SETS = {"phi3-mini-128k": PHI3_MINI_128K}


def longrope_factor_set(name: str, h: int) -> dict[str, list[float]]:
    """A published (short_factor, long_factor) pair resampled to ``h`` pairs: linear in the pair's
    relative index k / (h - 1), exact at the model's own h (48 for Phi-3-mini-128k).  Resampling this
    way is how Microsoft's LongRoPE evaluation scripts move the lists to another head size."""
    h = check_int("pairs", h, lo=1, hi=MAX_HEAD_DIM // 2)
    out = {}
    for key, values in LONGROPE_FACTOR_SETS[check_choice("factor_set", name, LONGROPE_FACTOR_SETS)].items():
        src = np.asarray(values, dtype=np.float64)
        if h == src.size:
            out[key] = src.tolist()
        else:
            grid = np.linspace(0.0, src.size - 1.0, h) if h > 1 else np.zeros(1)
            out[key] = np.interp(grid, np.arange(src.size), src).tolist()
    return out


# ----------------------------------------------------------------------------- one function per rope_type
# Signature of every entry: (head_dim, base, scaling, seq_len) -> (inv_freq (h,), attention_factor).

def _default(d: int, base: float, scaling: Mapping[str, Any] | None, seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    return default_inv_freq(d, base), 1.0


def _linear(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """Position interpolation (Chen et al. 2023, arXiv:2306.15595): f(x, m * L / L') == theta / factor."""
    return default_inv_freq(d, base) / _factor(scaling, "linear"), 1.0


def _ntk(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """NTK-aware (bloc97, r/LocalLLaMA 2023): base' = base * s ** (d / (d - 2)); the lowest frequency is / s."""
    s = _factor(scaling, "ntk")
    d = check_head_dim(d, lo=4)
    return _scaled_base_inv_freq(d, base * s ** (d / (d - 2)), "NTK-aware scaling"), 1.0


def dynamic_scale(factor: float, seq_len: int, trained: int) -> float:
    """Dynamic NTK's effective scale at the current length: s L / L0 - (s - 1) for L > L0, else 1.

    The NTK base is b * scale ** (d / (d - 2)), so the slowest pair is divided by exactly this scale.
    At L = s L0 it is s^2 - s + 1 (57 at s = 8), not s: HF's factor is a slope, not a target ratio.
    """
    L = max(int(seq_len), int(trained))
    return float(factor) * L / int(trained) - (float(factor) - 1.0)


def _dynamic(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """Dynamic NTK (emozilla, r/LocalLLaMA 2023): the NTK base grows with the current length past the trained one.

    base' = base * (s L / L0 - (s - 1)) ** (d / (d - 2)) with L = max(seq_len, L0), as HF's
    _compute_dynamic_ntk_parameters.  NOTE: HF's trained length L0 is max_position_embeddings (any
    original_max_position_embeddings in the block is ignored); when ``max_position_embeddings`` is
    given it is L0 here too, otherwise the block's original_max_position_embeddings.
    """
    s = _factor(scaling, "dynamic")
    orig = max_pos if max_pos is not None else _orig_len(scaling, "dynamic")
    d = check_head_dim(d, lo=4)
    L = max(seq_len if seq_len is not None else orig, orig)
    new_base = base * dynamic_scale(s, L, orig) ** (d / (d - 2))
    return _scaled_base_inv_freq(d, new_base, f"dynamic NTK at seq_len {L}"), 1.0


def _proportional(d: int, base: float, scaling: Mapping[str, Any], seq_len: int | None, max_pos: int | None = None) -> tuple[np.ndarray, float]:
    """Proportional RoPE (Gemma 4's global layers; HF _compute_proportional_rope_parameters).

    The first int(p * d // 2) pairs rotate with theta_k = base ** (-2k / d) -- the exponent keeps the
    full head size d, unlike partial rotary, which restarts it at the rotated width -- and the other
    pairs get theta = 0 (they do not rotate); every theta is divided by ``factor`` (default 1).
    ``p`` is the block's partial_rotary_factor (default 1, then it equals linear scaling).
    """
    p = check_float("scaling['partial_rotary_factor']", _get(scaling, "partial_rotary_factor", 1.0), lo=0.0, hi=1.0)
    factor = _factor(scaling, "proportional", required=False)
    rotated = int(p * d // 2)
    inv = np.zeros(d // 2)
    inv[:rotated] = 1.0 / np.power(base, np.arange(0, 2 * rotated, 2, dtype=np.float64) / d)
    return inv / factor, 1.0


ROPE_INIT_FUNCTIONS: dict[str, Callable[..., tuple[np.ndarray, float]]] = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,  # a transformers v4 key (static NTK-aware); v5 dropped it
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
    "proportional": _proportional,  # transformers 5.x (Gemma 4)
}
ROPE_TYPES = tuple(ROPE_INIT_FUNCTIONS)


@dataclass(frozen=True)
class RopeTraits:
    """What a rope_type is beyond its frequencies, declared once and read wherever it matters (the RoPE
    schemes, the config reader); ``tests/test_rope_from_config.py`` checks each declared trait numerically."""

    scaled: bool = True  # False: plain RoPE -- no scaling block, the default frequencies
    needs_factor: bool = False  # a config block must give "factor" (the others derive or default it)
    zero_pairs: bool = False  # partial_rotary_factor p: the pairs past p·d/2 get theta = 0 (not fewer channels)
    local_layers: bool = False  # Gemma 3's sliding-window layers are drawn with it (the others: unscaled there)
    config_note: str | None = None  # said when a model config names it


ROPE_TRAITS: dict[str, RopeTraits] = {
    "default": RopeTraits(scaled=False, local_layers=True),
    "linear": RopeTraits(needs_factor=True, local_layers=True),
    "ntk": RopeTraits(needs_factor=True, config_note="rope_type 'ntk' (static NTK-aware, base x s^(d/(d-2))) is not a "
                                                     "transformers v5 key; computed as posenc's NTK-aware"),
    "dynamic": RopeTraits(needs_factor=True),
    "yarn": RopeTraits(),
    "llama3": RopeTraits(needs_factor=True),
    "longrope": RopeTraits(),
    "proportional": RopeTraits(zero_pairs=True),
}
assert set(ROPE_TRAITS) == set(ROPE_INIT_FUNCTIONS), "every rope_type declares its traits"


def rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    seq_len: int | None = None,
    max_position_embeddings: int | None = None,
) -> tuple[np.ndarray, float]:
    """RoPE inverse frequencies and attention factor: (inv_freq (head_dim // 2,), float).

    ``scaling`` is None or a Hugging Face ``rope_scaling`` / ``rope_parameters`` block:
    {"rope_type": "linear" | "ntk" | "dynamic" | "yarn" | "llama3" | "longrope" | "proportional",
    "factor": ..., "original_max_position_embeddings": ..., ...}.  ``seq_len`` is the current length,
    used by "dynamic" (and "longrope" to pick its factor list); it defaults to the trained length.
    ``max_position_embeddings`` is the config's field of that name, read as transformers reads it
    (see the module docstring): pass it with a pasted LongRoPE or YaRN block to get the model's
    factor and attention factor.
    """
    d = check_head_dim(head_dim)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    rope_type = rope_type_of(scaling)
    if seq_len is not None:
        seq_len = check_int("seq_len", seq_len, lo=1, hi=MAX_CONTEXT)
    if max_position_embeddings is not None:
        max_position_embeddings = check_int("max_position_embeddings", max_position_embeddings, lo=1, hi=MAX_CONTEXT)
    return ROPE_INIT_FUNCTIONS[rope_type](d, base, scaling, seq_len, max_position_embeddings)
