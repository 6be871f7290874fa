"""Data for the RoPE page (9) and the context-extension page (10).

axes: d head_dim, h = d / 2 rotation pairs, m distances (key position - query position).
Every function takes scalars (cache keys) and returns tidy DataFrames plus the numbers the page
prints; each number is computed by posenc.rope / posenc.schemes, nothing is typed in.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_float, check_int
from posenc.modelconfig import ModelRope, parse_model_config
from posenc.rope import (
    LAYOUTS,
    MAX_CONTEXT,
    apply_rope,
    check_head_dim,
    default_inv_freq,
    llama3_bands,
    pair_permutation,
    rope_decay_bound,
    rope_offset_scores,
    yarn_correction_dim,
    yarn_get_mscale,
    yarn_ramp,
)
from posenc.schemes import probe_vector, rope_for, rope_scaling

PROBES = ("random", "ones")
MAX_POSITION = 10**9
# the distances of the RoFormer decay-bound table in the reference (schemes.md section 5.4)
BOUND_TABLE_DISTANCES = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
MAX_CURVE_POINTS = 16_384  # per series on the decay chart (two series: <= 32,768 marks)
DENSE, SPARSE = 1024, 3072  # extension score curve: every distance to DENSE, then SPARSE log-spaced
METHODS = (
    ("rope", "RoPE (no scaling)"),
    ("rope_linear", "PI (linear)"),
    ("rope_ntk", "NTK-aware"),
    ("rope_dynamic", "dynamic NTK"),
    ("rope_yarn", "YaRN"),
    ("rope_llama3", "Llama 3"),
)
BAND_LABELS = ("kept (θ)", "smoothed", "divided by s")


def _cat(values, order) -> pd.Categorical:
    return pd.Categorical(values, categories=list(order))


def _probes(d: int, probe: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Query and key probes, (d,) each: "ones" gives q = k = 1; "random" seeds seed and seed + 1."""
    check_choice("probe", probe, PROBES)
    s = check_int("seed", seed, lo=0, hi=10**6)
    return probe_vector(d, probe, seed=s), probe_vector(d, probe, seed=s + 1)


def _pair_channels(d: int, pair: int, layout: str) -> tuple[int, int]:
    """The two channels pair ``pair`` rotates: (i, i + d/2) half-split, (2i, 2i + 1) interleaved."""
    return (pair, pair + d // 2) if layout == "half_split" else (2 * pair, 2 * pair + 1)


# ============================================================================ page 9: RoPE

def rotation_view(head_dim: int, base: float, layout: str, probe: str, seed: int, pair: int, m: int, n: int, shift: int) -> dict:
    """A query at m and a key at n, then both shifted by s: the score does not change.

    Returns {"arrows": DataFrame(vector, placement, position, x, y) -- the chosen pair of R_m q,
    R_n k, R_(m+s) q, R_(n+s) k; "orbits": DataFrame(vector, step, x, y) -- one full turn of each
    pair; "score", "score_shifted", "difference" (|shifted - score|) of the full d-dim dot products,
    "shift_invariant" (difference within 1e-9 relative, i.e. float64 rounding);
    "pair_score", "pair_score_shifted", "angle", "angle_shifted" (k relative to q in this pair, rad);
    "theta", "wavelength" of the pair; "channels"; "radius" (largest arrow length)}.
    """
    d = check_head_dim(head_dim, lo=4)
    layout = check_choice("layout", layout, LAYOUTS)
    i = check_int("pair", pair, lo=0, hi=d // 2 - 1)
    m, n, s = (check_int(nm, v, lo=0, hi=MAX_POSITION) for nm, v in (("m", m), ("n", n), ("shift", shift)))
    inv = default_inv_freq(d, base)  # (h,)
    q, k = _probes(d, probe, seed)
    Q = apply_rope(np.broadcast_to(q, (2, d)), [m, m + s], inv, layout=layout)  # (2, d): at m, at m + s
    K = apply_rope(np.broadcast_to(k, (2, d)), [n, n + s], inv, layout=layout)  # (2, d): at n, at n + s
    a, b = _pair_channels(d, i, layout)
    placements = ("at (m, n)", "shifted by s")
    arrows = pd.DataFrame({
        "vector": ["q", "q", "k", "k"],
        "placement": list(placements) * 2,
        "position": [m, m + s, n, n + s],
        "x": [Q[0, a], Q[1, a], K[0, a], K[1, a]],
        "y": [Q[0, b], Q[1, b], K[0, b], K[1, b]],
    })
    wavelength = 2 * math.pi / inv[i]
    turn = np.linspace(0.0, wavelength, 97)  # (97,) positions spanning one turn of pair i
    orbits = pd.concat([
        pd.DataFrame({"vector": v, "step": np.arange(turn.size),
                      "x": R[:, a], "y": R[:, b]})
        for v, R in (("q", apply_rope(np.broadcast_to(q, (turn.size, d)), turn, inv, layout=layout)),
                     ("k", apply_rope(np.broadcast_to(k, (turn.size, d)), turn, inv, layout=layout)))
    ], ignore_index=True)
    zq, zk = Q[:, a] + 1j * Q[:, b], K[:, a] + 1j * K[:, b]  # (2,) the pair as complex numbers
    pair_scores = (zk * np.conj(zq)).real  # (2,)
    angles = np.angle(zk * np.conj(zq))  # (2,) angle from q to k
    score, shifted = float(Q[0] @ K[0]), float(Q[1] @ K[1])
    diff = abs(shifted - score)
    return {
        "arrows": arrows, "orbits": orbits,
        "score": score, "score_shifted": shifted, "difference": diff,
        "shift_invariant": bool(diff <= 1e-9 * max(1.0, abs(score))),
        "pair_score": float(pair_scores[0]), "pair_score_shifted": float(pair_scores[1]),
        "angle": float(angles[0]), "angle_shifted": float(angles[1]),
        "theta": float(inv[i]), "wavelength": float(wavelength), "channels": (a, b),
        "radius": float(max(np.abs(zq).max(), np.abs(zk).max())),
    }


def decay_view(head_dim: int, base: float, probe: str, seed: int, max_distance: int) -> dict:
    """Score of a probe with itself against distance, next to RoFormer's relative decay bound.

    Both are divided by their value at distance 0 (the score by |q|^2, the bound by mean(1..d/2))
    so they share one axis.  Returns {"frame": DataFrame(distance, relative, value, series),
    "table": DataFrame(distance, bound, bound_rel, score_rel) at BOUND_TABLE_DISTANCES,
    "bound0", "score0", "step" (distance stride, 1 = every distance), "n_points", "max_distance",
    "rises": [(D1, bound1, D2, bound2), ...] table neighbours where the bound grows, "first_rise": first sampled
    distance where the bound grows (None if it never does)}.
    """
    d = check_head_dim(head_dim, lo=4)
    L = check_int("max_distance", max_distance, lo=1, hi=10**6)
    step = max(1, math.ceil((L + 1) / MAX_CURVE_POINTS))
    dist = np.arange(0, L + 1, step)  # (m,)
    if dist[-1] != L:
        dist = np.append(dist, L)
    inv = default_inv_freq(d, base)
    q = probe_vector(d, check_choice("probe", probe, PROBES), seed=check_int("seed", seed, lo=0, hi=10**6))
    score = rope_offset_scores(dist, inv, q, q)  # (m,) <R_i q, R_(i+D) q>
    bound = rope_decay_bound(dist, d, base=base)  # (m,)
    score0, bound0 = float(score[0]), float(bound[0])
    series = ("probe score q·R_D q / |q|²", "RoFormer bound / bound(0)")
    frame = pd.DataFrame({
        "distance": np.concatenate([dist, dist]).astype(np.int32),
        "relative": np.concatenate([score / score0, bound / bound0]).astype(np.float32),
        "value": np.concatenate([score, bound]).astype(np.float32),
        "series": _cat([series[0]] * dist.size + [series[1]] * dist.size, series),
    })
    tdist = np.asarray(BOUND_TABLE_DISTANCES)
    tb = rope_decay_bound(tdist, d, base=base)
    ts = rope_offset_scores(tdist, inv, q, q)
    table = pd.DataFrame({"distance": tdist, "bound": tb, "bound_rel": tb / bound0, "score_rel": ts / score0})
    rises = [(int(tdist[j]), float(tb[j]), int(tdist[j + 1]), float(tb[j + 1])) for j in range(tdist.size - 1) if tb[j + 1] > tb[j]]
    up = np.flatnonzero(np.diff(bound) > 0)
    return {
        "frame": frame, "table": table, "bound0": bound0, "score0": score0, "step": step,
        "n_points": int(dist.size), "max_distance": L, "rises": rises,
        "first_rise": int(dist[up[0] + 1]) if up.size else None,
    }


def layout_view(head_dim: int, base: float, probe: str, seed: int, position: int, n_offsets: int = 256) -> dict:
    """Half-split vs interleaved pairing: one fixed channel permutation apart.

    P = pair_permutation(d) and Pinv = argsort(P): interleaved(x) == half_split(x[P])[Pinv].
    Returns {"rotate_maxdiff": max |interleaved(q) - half_split(q[P])[Pinv]| at ``position``,
    "score_maxdiff": max over offsets of |half-split score(q, k) - interleaved score(q[Pinv], k[Pinv])|,
    "unpermuted_maxdiff": the same without permuting (not zero unless q, k are symmetric),
    "frame": DataFrame(offset, score, series), "pairs": DataFrame(pair, theta, wavelength,
    half_split, interleaved) -- which channels each pair rotates in each layout}.
    """
    d = check_head_dim(head_dim, lo=4)
    p = check_int("position", position, lo=0, hi=MAX_POSITION)
    n_off = check_int("n_offsets", n_offsets, lo=2, hi=MAX_CURVE_POINTS)
    inv = default_inv_freq(d, base)
    q, k = _probes(d, probe, seed)
    P = pair_permutation(d)
    Pinv = np.argsort(P)
    inter = apply_rope(q[None, :], [p], inv, layout="interleaved")[0]  # (d,)
    via_half = apply_rope(q[P][None, :], [p], inv, layout="half_split")[0][Pinv]  # (d,)
    off = np.arange(n_off)
    s_half = rope_offset_scores(off, inv, q, k, layout="half_split")
    s_perm = rope_offset_scores(off, inv, q[Pinv], k[Pinv], layout="interleaved")
    s_same = rope_offset_scores(off, inv, q, k, layout="interleaved")
    series = ("half-split, (q, k)", "interleaved, channels permuted", "interleaved, same channels")
    frame = pd.DataFrame({
        "offset": np.tile(off, 3).astype(np.int32),
        "score": np.concatenate([s_half, s_perm, s_same]).astype(np.float32),
        "series": _cat(np.repeat(series, n_off), series),
    })
    h = d // 2
    ks = np.arange(h)
    pairs = pd.DataFrame({
        "pair": ks, "theta": inv, "wavelength": 2 * np.pi / inv,
        "half_split": [f"{j}, {j + h}" for j in ks], "interleaved": [f"{2 * j}, {2 * j + 1}" for j in ks],
    })
    return {
        "rotate_maxdiff": float(np.max(np.abs(inter - via_half))),
        "score_maxdiff": float(np.max(np.abs(s_half - s_perm))),
        "unpermuted_maxdiff": float(np.max(np.abs(s_half - s_same))),
        "frame": frame, "pairs": pairs, "position": p,
    }


# ============================================================================ page 10: extension

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


def _method(key: str, d: int, base: float, trained: int, factor: float, target: int) -> tuple[np.ndarray, float]:
    """(inv_freq, attention_factor) of one classic method at the current length ``target``."""
    if key == "rope":
        return rope_for(key, d, seq_len=target, base=base)
    return rope_for(key, d, seq_len=target, base=base, factor=factor, original_max_position_embeddings=trained)


def _classics(d: int, base: float, trained: int, factor: float, target: int) -> tuple[list, dict]:
    """[(label, inv_freq, attention_factor)] of the methods computable here, {label: why not} for the rest.

    NTK-aware and dynamic NTK raise the base to b * s^(d/(d-2)) (dynamic: a larger power); with a
    huge base, a large s or a tiny d that passes posenc's base cap (1e12), and that method alone is
    left out with the core's message instead of failing the whole figure.
    """
    done, skipped = [], {}
    for key, label in METHODS:
        try:
            done.append((label, *_method(key, d, base, trained, factor, target)))
        except ValueError as exc:
            skipped[label] = f"{label} is left out at these settings: {exc}"
    return done, skipped


def _unseen(theta: np.ndarray, inv: np.ndarray, trained: int | None, target: int) -> float:
    """Pairs rotated at the target beyond any angle they reached in training (which was < one turn)."""
    if trained is None:
        return float("nan")
    seen = trained * theta  # (h,) largest angle in training
    return float(np.sum((seen < 2 * np.pi) & (target * inv > seen * (1 + 1e-9))))


def extension_frequencies(head_dim: int, base: float, trained: int, factor: float, config_text: str = "") -> dict:
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
        entries.append((f"model: {mr.name}", inv_m, af_m, default_inv_freq(mr.rotary_dim, mr.base), mr.trained_length))
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


def extension_detail(head_dim: int, base: float, trained: int, factor: float) -> dict:
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


def extension_scores(head_dim: int, base: float, trained: int, factor: float, probe: str = "ones", config_text: str = "") -> dict:
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
        entries.append((f"model: {mr.name}", mr.rotary_dim, *mr.frequencies(seq_len=target)))
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


def model_view(config_text: str, limits: tuple = ()) -> dict:
    """Parse a config and say what it sets.  ``limits`` = ((key, lo, hi, step), ...) of the page
    controls (step 0: any value; otherwise the value must be lo + a whole number of steps).

    Returns {"model": ModelRope, "table": DataFrame(field, value) for display, "controls":
    {"d": rotary_dim, "base": base, "train": trained length, "s": factor} (the values that put the
    page's classics at the model's settings), "fits": all controls within ``limits``, "problems":
    [why not]}.
    """
    mr: ModelRope = parse_model_config(config_text)
    inv, af = mr.frequencies()
    rows = [
        ("model", mr.name), ("read from", mr.source), ("rope_type", mr.rope_type),
        ("head_dim (rotated channels)", f"{mr.head_dim} ({mr.rotary_dim})"), ("base (rope_theta)", f"{mr.base:,.6g}"),
        ("factor s", f"{mr.factor:g}"),
        ("trained length", "not given" if mr.trained_length is None else f"{mr.trained_length:,}"),
        ("factor × trained length", "—" if mr.target_length is None else f"{mr.target_length:,}"),
        ("max_position_embeddings", "not given" if mr.max_position_embeddings is None else f"{mr.max_position_embeddings:,}"),
        ("attention factor", f"{af:.10g}"),
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
