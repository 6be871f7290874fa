"""Data for the context-extension page: one method's frequencies (``method_frequencies``, which
posenc.views.measure draws for every method), the numbers of YaRN's ramp and Llama 3's bands that the page
prints (``extension_detail``) and what a pasted model config sets (``model_view``).

axes: d head_dim, h = d / 2 rotation pairs, m distances (key position - query position).
Every function takes scalars (cache keys) and returns tidy DataFrames plus the numbers the page
prints; each number is computed by posenc's RoPE scaling functions, nothing is typed in.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_float, check_int
from posenc.io.modelconfig import ModelRope, parse_model_config
from posenc.registry import get_scheme, rope_for, rope_scaling
from posenc.schemes.scaling import (
    MAX_CONTEXT,
    check_head_dim,
    llama3_bands,
    yarn_correction_dim,
    yarn_get_mscale,
    yarn_ramp,
)


class ExtensionDetailView(TypedDict):
    """What ``extension_detail`` returns."""

    yarn_low: int
    yarn_high: int
    yarn_low_exact: float
    yarn_high_exact: float
    yarn_attention: float
    yarn_mscale: float
    band_counts: tuple
    band_limits: tuple


class ModelView(TypedDict):
    """What ``model_view`` returns."""

    model: ModelRope
    table: pd.DataFrame
    controls: dict
    fits: bool
    problems: list


def target_length(trained: int, factor: float) -> int:
    """round(trained x factor), the length the extension aims at; ValueError above MAX_CONTEXT."""
    t = check_int("trained length", trained, lo=16, hi=1_048_576)
    s = check_float("factor", factor, lo=1.0, hi=128.0)
    target = int(round(t * s))
    if target > MAX_CONTEXT:
        raise ValueError(
            f"target length = trained length x factor = {t:,} x {s:g} = {target:,} is above posenc's cap of "
            f"{MAX_CONTEXT:,} positions; lower the factor or the trained length"
        )
    return target


def method_frequencies(key: str, d: int, base: float, trained: int, factor: float, target: int) -> tuple[np.ndarray, float]:
    """(inv_freq, attention_factor) of one classic method (a registry key) at base, trained length, factor and the
    current length ``target``."""
    extra = get_scheme(key).accepted({"factor": factor, "original_max_position_embeddings": trained})  # plain RoPE: neither
    return rope_for(key, d, seq_len=target, base=base, **extra)


def extension_detail(head_dim: int, base: float, trained: int, factor: float) -> ExtensionDetailView:
    """YaRN's correction range and attention factor, and the sizes of Llama 3's three bands, at these settings.

    Returns {"yarn_low", "yarn_high" (HF integer correction range), "yarn_low_exact", "yarn_high_exact" (before
    floor/ceil), "yarn_attention" (HF's value), "yarn_mscale" (0.1 ln s + 1, the formula), "band_counts": (kept,
    smoothed, divided), "band_limits": (trained / high_freq_factor, trained / low_freq_factor) in positions}.  The
    ramp and the band of each pair are ``posenc.schemes.scaling.yarn_ramp`` and ``llama3_bands``.
    """
    d = check_head_dim(head_dim, lo=4)
    target_length(trained, factor)
    ys = rope_scaling("rope_yarn", base=base, factor=factor, original_max_position_embeddings=trained)
    ramp = yarn_ramp(d, base, ys)
    _, yarn_af = rope_for("rope_yarn", d, base=base, factor=factor, original_max_position_embeddings=trained)
    ls = rope_scaling("rope_llama3", base=base, factor=factor, original_max_position_embeddings=trained)
    band = llama3_bands(d, base, ls)  # (h,) 0 kept, 1 smoothed, 2 divided
    return {
        "yarn_low": ramp["low"], "yarn_high": ramp["high"],
        "yarn_low_exact": yarn_correction_dim(ys.get("beta_fast", 32.0), d, base, trained),
        "yarn_high_exact": yarn_correction_dim(ys.get("beta_slow", 1.0), d, base, trained),
        "yarn_attention": float(yarn_af), "yarn_mscale": yarn_get_mscale(float(factor)),
        "band_counts": tuple(int(np.sum(band == j)) for j in range(3)),
        "band_limits": (trained / ls["high_freq_factor"], trained / ls["low_freq_factor"]),
    }


def _layers_text(mr: ModelRope) -> str:
    """'27 × full attention, RoPE; 9 × full attention, no RoPE' (the kinds of layer, as the model runs them)."""
    if not mr.layers:
        return "not given"
    return "; ".join(f"{'?' if k['count'] is None else k['count']} × {k['attention']} attention"
                     + (f" (window {k['window']:,})" if k["window"] else "") + (", RoPE" if k["rope"] else ", no RoPE")
                     + (f", base {mr.local['base']:g}" if k["local"] and mr.local else "") for k in mr.layers)


def _scale_rows(mr: ModelRope, served_af: float) -> list[tuple[str, str]]:
    """The pieces of the logit scale where a model has more than the attention factor: its softmax scale over
    1/√d, DeepSeek's mscale², and the query scale at a position (Llama 4, Ministral 3)."""
    rows = []
    if mr.softmax_ratio != 1.0:
        rows.append(("softmax scale ÷ (1/√d)", f"{mr.softmax_ratio:.6g}"))
    if mr.logit_extra != 1.0:
        rows.append(("softmax mscale²", f"{mr.logit_extra:.6g}"))
    q = mr.query_scale
    if q:
        L = mr.served_length or q["period"]
        where = "every layer" if q["layers"] == "all" else "no-RoPE layers"
        rows.append((f"query scale ({where})", f"{q['formula']}: × {mr.query_factor(q['period']):.4f} at {q['period']:,}, "
                                               f"× {mr.query_factor(L - 1):.4f} at {L - 1:,}"))
        rows.append((f"logit scale at p = {L - 1:,}",
                     f"{served_af ** 2 * mr.logit_extra * mr.softmax_ratio * mr.query_factor(L - 1):.6g}"))
    return rows


def positional_scheme(config_text: str) -> dict | None:
    """{"scheme", "page", "message"} when the config describes a model without RoPE (ALiBi, learned, T5), else None."""
    from posenc.io.configlayers import NotRoPE

    try:
        parse_model_config(config_text)
    except NotRoPE as exc:
        return {"scheme": exc.scheme, "page": exc.page, "message": str(exc)}
    except ValueError:
        return None
    return None


def model_view(config_text: str, limits: tuple = ()) -> ModelView:
    """Parse a config and say what it sets.  ``limits`` = ((key, lo, hi, step), ...) of the page
    controls (step 0: any value; otherwise the value must be lo + a whole number of steps).

    Returns {"model": ModelRope, "table": DataFrame(field, value) for display, "controls":
    {"d": rotary_dim, "base": base, "train": trained length, "s": factor} (the values that put the
    page's classics at the model's settings), "fits": all controls within ``limits``, "problems":
    [why not]}.
    """
    mr: ModelRope = parse_model_config(config_text)
    inv, af = mr.frequencies()
    _, served_af = mr.frequencies(seq_len=mr.served_length)
    rows = [
        ("model", mr.name), ("read from", mr.source), ("rope_type", mr.rope_type),
        ("head_dim (rotated channels)", f"{mr.head_dim} ({mr.rotary_dim})"), ("base (rope_theta)", f"{mr.base:,.6g}"),
        ("factor s", f"{mr.factor:g}"),
        ("trained length", "not given" if mr.trained_length is None else f"{mr.trained_length:,}"),
        ("factor × trained length", "—" if mr.target_length is None else f"{mr.target_length:,}"),
        ("served length", "not given" if mr.max_position_embeddings is None else f"{mr.max_position_embeddings:,}"),
        ("attention factor", f"{served_af:.10g}"),
        ("logit scale", f"{served_af ** 2 * mr.logit_extra * mr.softmax_ratio:.10g}"),
        *_scale_rows(mr, served_af),
        ("pairing layout", mr.layout),
        ("layers", _layers_text(mr)),
        ("longest wavelength 2π/θ′ (positions)", f"{2 * math.pi / inv[-1]:,.6g}"),
    ]
    controls = {"d": mr.rotary_dim, "base": mr.base, "train": mr.trained_length, "s": mr.factor}
    problems = []
    for key, lo, hi, step in limits:
        v = controls.get(key)
        if v is None or not lo <= v <= hi:
            problems.append(f"{key} = {v if v is not None else 'not given'} is outside the control's range {lo:g} to {hi:g}")
        elif step and (v - lo) % step:
            problems.append(f"{key} = {v:g} is not on the control's grid ({lo:g} + a multiple of {step:g})")
    return {"model": mr, "table": pd.DataFrame(rows, columns=["field", "value"]), "controls": controls,
            "fits": not problems, "problems": problems}
