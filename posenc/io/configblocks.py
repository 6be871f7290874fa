"""The rope block of a config.json, read per rope_type as transformers reads it (``posenc.io.modelconfig``).

``scaling_block`` returns (the dict ``rope_frequencies`` takes, the factor, the trained length);
``local_layers`` describes Gemma 3's sliding-window layers.  Notes go to the caller's list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from posenc._validate import check_float, check_int
from posenc.schemes.scaling import MAX_CONTEXT, ROPE_TRAITS, shown

_COMMON_KEYS = {"rope_type", "type", "rope_theta", "factor", "original_max_position_embeddings", "partial_rotary_factor"}
_READ_ELSEWHERE = {"llama_4_scaling_beta"}  # Ministral 3's query scaling: posenc.io.configlayers.query_scale
_EXTRA_KEYS = {
    "yarn": {"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"},
    "llama3": {"low_freq_factor", "high_freq_factor"},
    "longrope": {"short_factor", "long_factor", "attention_factor", "short_mscale", "long_mscale"},
    "default": {"mrope_section", "mrope_interleaved"},
}


def _number(name: str, value, *, integer: bool = False, lo=None, hi=None, lo_open: bool = False):
    """A config number, checked; the error names the config field."""
    if integer:
        return check_int(name, value, lo=lo, hi=hi)
    return check_float(name, value, lo=lo, hi=hi, lo_open=lo_open)


def is_gemma3(cfg: Mapping) -> bool:
    return str(cfg.get("model_type", "")).startswith("gemma3") or cfg.get("rope_local_base_freq") is not None


def _orig(cfg: Mapping, block: Mapping, max_pos: int | None, rope_type: str, notes: list[str]) -> int:
    name = "original_max_position_embeddings"
    if cfg.get(name) is not None:  # HF standardize_rope_params gives the top level priority (Phi-3)
        value = _number(name, cfg[name], integer=True, lo=1, hi=MAX_CONTEXT)
        if block.get(name) is not None and block[name] != value:
            notes.append(f"{name} differs at the top level ({value:,}) and in the block ({shown(block[name], 20)}); "
                         "transformers uses the top level, and so does this page")
        return value
    if block.get(name) is not None:
        return _number(name, block[name], integer=True, lo=1, hi=MAX_CONTEXT)
    if max_pos is not None:
        notes.append(f"{name} is missing; using max_position_embeddings ({max_pos:,}) as transformers v5 does")
        return max_pos
    raise ValueError(f"rope_type {rope_type!r} needs original_max_position_embeddings (the trained length) or max_position_embeddings")


def _by_factor(cfg, block, rope_type, max_pos, factor, notes) -> tuple[dict, int | None]:
    """linear, ntk: the factor alone scales; the trained length is the block's, or max_position_embeddings / factor."""
    out: dict[str, Any] = {"factor": factor}
    if block.get("original_max_position_embeddings") is not None or cfg.get("original_max_position_embeddings") is not None:
        trained = _orig(cfg, block, max_pos, rope_type, notes)
    elif max_pos is not None:
        trained = max(1, int(round(max_pos / factor)))
        notes.append(f"trained length estimated as max_position_embeddings / factor = {max_pos:,} / {factor:g} = {trained:,}")
    else:
        trained = None
    if trained is not None:
        out["original_max_position_embeddings"] = trained  # not read by the core for these two types
    return out, trained


def _dynamic(cfg, block, rope_type, max_pos, factor, notes) -> tuple[dict, int]:
    """dynamic: transformers takes max_position_embeddings as the trained length."""
    if max_pos is None:
        raise ValueError("rope_type 'dynamic' needs max_position_embeddings: transformers uses it as the trained length")
    given = block.get("original_max_position_embeddings")
    if given is not None and given != max_pos:
        notes.append(f"transformers ignores original_max_position_embeddings ({shown(given, 20)}) for 'dynamic' and uses "
                     f"max_position_embeddings ({max_pos:,}) as the trained length; so does this page")
    return {"factor": factor, "original_max_position_embeddings": max_pos}, max_pos


def _proportional(cfg, block, rope_type, max_pos, factor, notes) -> tuple[dict, int | None]:
    """proportional (Gemma 4): a share of the pairs rotates; no trained length of its own."""
    p = block.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 1.0))
    return {"partial_rotary_factor": _number("partial_rotary_factor", p, lo=0.0, hi=1.0), "factor": factor or 1.0}, max_pos


def _from_trained(cfg, block, rope_type, max_pos, factor, notes) -> tuple[dict, int]:
    """yarn, llama3, longrope: a trained length (original_max_position_embeddings), a factor (or served / trained)
    and the type's own keys."""
    orig = _orig(cfg, block, max_pos, rope_type, notes)
    if factor is None:
        if max_pos is None:
            raise ValueError(f"rope_type {rope_type!r} needs a 'factor' (or max_position_embeddings to derive it)")
        factor = _number("max_position_embeddings / original_max_position_embeddings", max_pos / orig, lo=1.0, hi=1e6)
        notes.append(f"factor is missing; using max_position_embeddings / original = {max_pos:,} / {orig:,} = {factor:g} as transformers does")
    out: dict[str, Any] = {"factor": factor, "original_max_position_embeddings": orig}
    for k in sorted(_EXTRA_KEYS.get(rope_type, ())):
        if block.get(k) is None:
            continue
        if k in ("beta_fast", "beta_slow") and block[k] == 0:
            notes.append(f"{k} = 0 is read as the default, as transformers does (`or`)")
            continue
        out[k] = block[k]
    return out, orig


def _served_note(max_pos, orig: int, factor: float, notes) -> None:
    if max_pos is not None and max_pos != int(round(orig * factor)):
        notes.append(f"max_position_embeddings (the served length) is {max_pos:,}, while factor x trained length = "
                     f"{factor:g} x {orig:,} = {int(round(orig * factor)):,}; the page extends to the served length")


def _yarn(cfg, block, rope_type, max_pos, factor, notes):
    out, orig = _from_trained(cfg, block, rope_type, max_pos, factor, notes)
    if factor is not None and max_pos is not None and not any(math.isclose(max_pos / orig, v) for v in (1.0, factor)):
        notes.append(f"factor {factor:g} differs from max_position_embeddings / original = {max_pos / orig:g}; "
                     "transformers warns and uses the factor")
    return out, orig


def _llama3(cfg, block, rope_type, max_pos, factor, notes):
    out, orig = _from_trained(cfg, block, rope_type, max_pos, factor, notes)
    if not {"low_freq_factor", "high_freq_factor"} <= set(out):
        raise ValueError("rope_type 'llama3' needs low_freq_factor and high_freq_factor (Llama 3.1 uses 1 and 4)")
    _served_note(max_pos, orig, out["factor"], notes)
    return out, orig


def _longrope(cfg, block, rope_type, max_pos, factor, notes):
    out, orig = _from_trained(cfg, block, rope_type, max_pos, factor, notes)
    _served_note(max_pos, orig, out["factor"], notes)
    if "short_mscale" in out:
        notes.append(f"Phi-3.5-MoE style short_mscale / long_mscale ({shown(out['short_mscale'], 20)} / {shown(out.get('long_mscale'), 20)}) "
                     "multiply cos and sin instead of sqrt(1 + ln s / ln L); transformers 5.24's PhimoeRotaryEmbedding.forward "
                     "keeps the short factors past the trained length while the model's own code switches to the long ones, "
                     "which is what is drawn")
    return out, orig


# How each rope_type's block is read (one reader per type, as scaling.ROPE_INIT_FUNCTIONS computes one per type);
# whether it needs a "factor" is its trait (scaling.ROPE_TRAITS).
_READERS = {"linear": _by_factor, "ntk": _by_factor, "dynamic": _dynamic, "proportional": _proportional,
            "yarn": _yarn, "llama3": _llama3, "longrope": _longrope}


def scaling_block(cfg: Mapping, block: Mapping, rope_type: str, max_pos: int | None, notes: list[str]):
    """(scaling dict or None, factor, trained length or None)."""
    if rope_type not in _READERS:  # "default": no scaling
        return None, 1.0, max_pos
    ignored = sorted(set(block) - _COMMON_KEYS - _EXTRA_KEYS.get(rope_type, set()) - _READ_ELSEWHERE)
    if ignored:
        notes.append(f"ignored keys in the rope block: {shown(', '.join(map(str, ignored)), 120)}")
    factor = _number("factor", block["factor"], lo=1.0, hi=1e6) if block.get("factor") is not None else None
    if ROPE_TRAITS[rope_type].needs_factor and factor is None:
        raise ValueError(f"rope_type {rope_type!r} needs a 'factor' (a number >= 1)")
    out, trained = _READERS[rope_type](cfg, block, rope_type, max_pos, factor, notes)
    return {"rope_type": rope_type, **out}, out.get("factor", factor), trained


def local_layers(cfg: Mapping, local_block: dict | None, head_dim: int, notes: list[str], rope_type_of) -> dict | None:
    """Gemma 3's sliding-window layers: their own base (rope_local_base_freq), unscaled."""
    if local_block is None and not is_gemma3(cfg):
        return None
    block = local_block or {"rope_type": "default", "rope_theta": cfg.get("rope_local_base_freq", 10000.0)}
    base = _number("rope_local_base_freq", block.get("rope_theta", 10000.0), lo=1.0, hi=1e12, lo_open=True)
    rt = rope_type_of(block, notes)
    traits = ROPE_TRAITS[rt]
    if not traits.local_layers:
        notes.append(f"the sliding-window layers' rope_type {rt!r} is shown without its scaling")
    scaling = ({"rope_type": rt, "factor": _number("factor", block.get("factor", 1.0), lo=1.0, hi=1e6)}
               if traits.scaled and traits.local_layers else None)
    window = cfg.get("sliding_window")
    window = _number("sliding_window", window, integer=True, lo=1, hi=MAX_CONTEXT) if window is not None else None
    pattern = cfg.get("sliding_window_pattern", 6)
    share = f"{pattern - 1} of every {pattern} layers" if isinstance(pattern, int) and 1 < pattern < 1000 else "the sliding-window layers"
    notes.append(f"sliding-window layers ({share}) use base {base:g}{' with linear x' + str(scaling['factor']) if scaling else ', unscaled'}"
                 + (f" and see at most {window:,} tokens" if window else "") + "; the curves show the full-attention layers; "
                 "the local layers' frequencies are in rope_from_config(...).layers")
    return {"base": base, "scaling": scaling, "window": window, "layers": share, "rotary_dim": head_dim}
