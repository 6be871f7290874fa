"""Data for the context-extension page: PI, NTK-aware, dynamic NTK, YaRN and Llama 3 on one axis.

axes: d head_dim, h = d / 2 rotation pairs, m distances (key position - query position).
Every function takes scalars (cache keys) and returns tidy DataFrames plus the numbers the page
prints; each number is computed by posenc's RoPE scaling functions, nothing is typed in.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_float, check_int
from posenc.charts.base import model_series
from posenc.io.modelconfig import ModelRope, parse_model_config
from posenc.registry import get_scheme, rope_for, rope_scaling
from posenc.schemes.kinds import probe_vector
from posenc.schemes.rotary import rope_offset_scores
from posenc.schemes.scaling import (
    MAX_CONTEXT,
    check_head_dim,
    default_inv_freq,
    llama3_bands,
    yarn_correction_dim,
    yarn_get_mscale,
    yarn_ramp,
)
from posenc.views.rope import PROBES, _cat

DENSE, SPARSE = 1024, 3072  # extension score curve: every distance to DENSE, then SPARSE log-spaced
# the methods the RoPE page compares (LongRoPE's searched factors exist for Phi-3's head size only), each named by its
# scheme's short name
METHOD_KEYS = ("rope", "rope_linear", "rope_ntk", "rope_dynamic", "rope_yarn", "rope_llama3")
METHODS = tuple((key, get_scheme(key).short_name) for key in METHOD_KEYS)
BAND_LABELS = ("kept (θ)", "smoothed", "divided by s")


class ExtensionFrequenciesView(TypedDict):
    """What ``extension_frequencies`` returns."""

    frame: pd.DataFrame
    summary: pd.DataFrame
    methods: list
    target: int
    trained: int
    unseen: dict
    skipped: dict


class ExtensionDetailView(TypedDict):
    """What ``extension_detail`` returns."""

    ramp: pd.DataFrame
    yarn_low: int
    yarn_high: int
    yarn_low_exact: float
    yarn_high_exact: float
    yarn_attention: float
    yarn_mscale: float
    bands: pd.DataFrame
    band_counts: tuple
    band_limits: tuple


class ExtensionScoresView(TypedDict):
    """What ``extension_scores`` returns."""

    frame: pd.DataFrame
    score0: dict
    methods: list
    n_points: int
    target: int
    trained: int
    skipped: dict


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
    names = {p.name for p in get_scheme(key).params}  # plain RoPE takes neither factor nor trained length
    extra = {"factor": factor, "original_max_position_embeddings": trained}
    return rope_for(key, d, seq_len=target, base=base, **{k: v for k, v in extra.items() if k in names})


def _classics(d: int, base: float, trained: int, factor: float, target: int) -> tuple[list, dict]:
    """[(label, inv_freq, attention_factor)] of the methods computable here, {label: why not} for the rest.

    NTK-aware and dynamic NTK raise the base to b * s^(d/(d-2)) (dynamic: a larger power); with a
    huge base, a large s or a tiny d that passes posenc's base cap (1e12), and that method alone is
    left out with the core's message instead of failing the whole figure.
    """
    done, skipped = [], {}
    for key, label in METHODS:
        try:
            done.append((label, *method_frequencies(key, d, base, trained, factor, target)))
        except ValueError as exc:
            skipped[label] = f"{label} is left out at these settings: {exc}"
    return done, skipped


def _unseen(theta: np.ndarray, inv: np.ndarray, trained: int | None, target: int) -> float:
    """Pairs rotated at the target beyond any angle they reached in training (which was < one turn)."""
    if trained is None:
        return float("nan")
    seen = trained * theta  # (h,) largest angle in training
    return float(np.sum((seen < 2 * np.pi) & (target * inv > seen * (1 + 1e-9))))


def extension_frequencies(head_dim: int, base: float, trained: int, factor: float, config_text: str = "") -> ExtensionFrequenciesView:
    """Per-pair frequencies of every method (and a parsed model), at the current length = target.

    Returns {"frame": DataFrame(pair, method, theta, scale = theta'/theta, wavelength = 2 pi/theta'),
    "summary": DataFrame(method, attention_factor, slowest_scale, longest_wavelength, unseen),
    "methods": labels in drawing order, "target", "trained", "unseen": {method: count}, "skipped":
    {method: message} for methods not computable at these settings}.  ``unseen`` counts pairs whose angle
    at the target, target * theta', exceeds the largest angle they reached in training,
    trained * theta, while that training angle stayed under one turn (2 pi).  A model from
    ``config_text`` is drawn with its own head_dim (rotary_dim), base and trained length.
    """
    d = check_head_dim(head_dim, lo=4)
    target = target_length(trained, factor)
    theta = default_inv_freq(d, base)  # (h,)
    frames, summary, labels = [], [], []
    classics, skipped = _classics(d, base, trained, factor, target)
    entries = [(label, inv, af, theta, trained) for label, inv, af in classics]
    if config_text:
        mr = parse_model_config(config_text)
        inv_m, af_m = mr.frequencies(seq_len=target)
        entries.append((model_series(mr.name), inv_m, af_m, default_inv_freq(mr.rotary_dim, mr.base), mr.trained_length))
    for label, inv, af, th, tr in entries:
        labels.append(label)
        frames.append(pd.DataFrame({"pair": np.arange(inv.size), "method": label, "theta": inv,
                                    "scale": inv / th, "wavelength": 2 * np.pi / inv}))
        summary.append({"method": label, "attention_factor": af, "slowest_scale": float(inv[-1] / th[-1]),
                        "longest_wavelength": float(2 * np.pi / inv[-1]), "unseen": _unseen(th, inv, tr, target)})
    frame = pd.concat(frames, ignore_index=True)
    frame["method"] = _cat(frame["method"], labels)
    return {"frame": frame, "summary": pd.DataFrame(summary), "methods": labels, "target": target, "trained": int(trained),
            "unseen": {row["method"]: row["unseen"] for row in summary}, "skipped": skipped}


def extension_detail(head_dim: int, base: float, trained: int, factor: float) -> ExtensionDetailView:
    """YaRN's ramp and attention factor, and Llama 3's three bands, at these settings.

    Returns {"ramp": DataFrame(pair, ramp, wavelength), "yarn_low", "yarn_high" (HF integer
    correction range), "yarn_low_exact", "yarn_high_exact" (before floor/ceil), "yarn_attention"
    (HF's value), "yarn_mscale" (0.1 ln s + 1, the formula), "bands": DataFrame(pair, band, ratio =
    theta/theta', wavelength), "band_counts": (kept, smoothed, divided), "band_limits":
    (trained / high_freq_factor, trained / low_freq_factor) in positions}.
    """
    d = check_head_dim(head_dim, lo=4)
    target_length(trained, factor)
    theta = default_inv_freq(d, base)
    wl = 2 * np.pi / theta  # (h,)
    ys = rope_scaling("rope_yarn", base=base, factor=factor, original_max_position_embeddings=trained)
    ramp = yarn_ramp(d, base, ys)
    _, yarn_af = rope_for("rope_yarn", d, base=base, factor=factor, original_max_position_embeddings=trained)
    ls = rope_scaling("rope_llama3", base=base, factor=factor, original_max_position_embeddings=trained)
    band = llama3_bands(d, base, ls)  # (h,) 0 kept, 1 smoothed, 2 divided
    inv_l, _ = rope_for("rope_llama3", d, base=base, factor=factor, original_max_position_embeddings=trained)
    pairs = np.arange(d // 2)
    return {
        "ramp": pd.DataFrame({"pair": pairs, "ramp": ramp["ramp"], "wavelength": wl}),
        "yarn_low": ramp["low"], "yarn_high": ramp["high"],
        "yarn_low_exact": yarn_correction_dim(ys.get("beta_fast", 32.0), d, base, trained),
        "yarn_high_exact": yarn_correction_dim(ys.get("beta_slow", 1.0), d, base, trained),
        "yarn_attention": float(yarn_af), "yarn_mscale": yarn_get_mscale(float(factor)),
        "bands": pd.DataFrame({"pair": pairs, "band": _cat([BAND_LABELS[b] for b in band], BAND_LABELS),
                               "ratio": theta / inv_l, "wavelength": wl}),
        "band_counts": tuple(int(np.sum(band == j)) for j in range(3)),
        "band_limits": (trained / ls["high_freq_factor"], trained / ls["low_freq_factor"]),
    }


def curve_distances(trained: int, target: int) -> np.ndarray:
    """Distances 1 .. target: every one up to DENSE, then SPARSE log-spaced, plus trained; (m,) int."""
    dense = np.arange(1, min(target, DENSE) + 1)
    sparse = np.round(np.geomspace(DENSE, target, SPARSE)) if target > DENSE else np.empty(0)
    return np.unique(np.concatenate([dense, sparse, [trained, target]])).astype(np.int64)


def extension_scores(head_dim: int, base: float, trained: int, factor: float, probe: str = "ones", config_text: str = "") -> ExtensionScoresView:
    """q . k of a probe with itself against distance, 1 .. target, for every method (and the model).

    Score = af^2 <R_i q, R_(i+D) q> (rope_offset_scores with each method's frequencies at the
    current length = target, attention factor included).  Returns {"frame": DataFrame(distance,
    method, score), "score0": {method: score at distance 0}, "methods", "n_points", "target",
    "trained", "skipped": {method: message}}.  The model uses its own rotary_dim probe (partial-rotary pass-through channels
    left out).
    """
    d = check_head_dim(head_dim, lo=4)
    target = target_length(trained, factor)
    check_choice("probe", probe, PROBES)
    dist = curve_distances(trained, target)  # (m,)
    classics, skipped = _classics(d, base, trained, factor, target)
    entries = [(label, d, inv, af) for label, inv, af in classics]
    if config_text:
        mr = parse_model_config(config_text)
        entries.append((model_series(mr.name), mr.rotary_dim, *mr.frequencies(seq_len=target)))
    frames, score0, labels = [], {}, []
    for label, dd, inv, af in entries:
        q = probe_vector(dd, probe)
        s = rope_offset_scores(dist, inv, q, q, attention_factor=af)  # (m,)
        labels.append(label)
        score0[label] = float(af**2 * (q @ q))
        frames.append(pd.DataFrame({"distance": dist.astype(np.int32), "method": label, "score": s.astype(np.float32)}))
    frame = pd.concat(frames, ignore_index=True)
    frame["method"] = _cat(frame["method"], labels)
    return {"frame": frame, "score0": score0, "methods": labels, "n_points": int(dist.size), "target": target,
            "trained": int(trained), "skipped": skipped}


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
        ("logit scale", f"{served_af ** 2 * mr.logit_extra:.10g}"),
        ("pairing layout", mr.layout),
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
