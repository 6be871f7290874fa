"""Data for the RoPE page: the rotation, the score against distance, the two pairing layouts.

axes: d head_dim, h = d / 2 rotation pairs, m distances (key position - query position).
Every function takes scalars (cache keys) and returns tidy DataFrames plus the numbers the page
prints; each number is computed by posenc's RoPE functions, nothing is typed in.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_choice, check_int
from posenc.schemes.kinds import probe_vector
from posenc.schemes.rotary import LAYOUTS, apply_rope, pair_permutation, rope_decay_bound, rope_offset_scores
from posenc.schemes.scaling import (
    check_head_dim,
    default_inv_freq,
)
from posenc.views.similarity import scheme_similarity, similarity_panel

PROBES = ("random", "ones")
MAX_POSITION = 10**9
# the distances of the RoFormer decay-bound table in RoFormer, arXiv:2104.09864 §3.4.3, the bound computed
BOUND_TABLE_DISTANCES = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
XPOS_PAIR = ("rope", "xpos")  # the registry keys xpos_view compares
MAX_CURVE_POINTS = 16_384  # per series on the decay chart (two series: <= 32,768 marks)


# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class RotationView(TypedDict):
    """What ``rotation_view`` returns."""

    arrows: pd.DataFrame
    orbits: pd.DataFrame
    score: float
    score_shifted: float
    difference: float
    shift_invariant: bool
    pair_score: float
    pair_score_shifted: float
    angle: float
    angle_shifted: float
    theta: float
    wavelength: float
    channels: tuple
    radius: float


class DecayView(TypedDict):
    """What ``decay_view`` returns."""

    frame: pd.DataFrame
    asked_frame: pd.DataFrame
    table: pd.DataFrame
    bound0: float
    score0: float
    step: int
    n_points: int
    max_distance: int
    rises: list
    first_rise: int


class XposView(TypedDict):
    """What ``xpos_view`` returns."""

    offsets: pd.DataFrame
    names: list
    translation_invariance: float


class LayoutView(TypedDict):
    """What ``layout_view`` returns."""

    rotate_maxdiff: float
    score_maxdiff: float
    unpermuted_maxdiff: float
    frame: pd.DataFrame
    pairs: pd.DataFrame
    position: int




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

def rotation_view(head_dim: int, base: float, layout: str, probe: str, seed: int, pair: int, m: int, n: int, shift: int) -> RotationView:
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


ROUNDING_DECADES = 8  # shifts 1 .. 10^7
ROUNDING_SAMPLES = 16  # shifts s, s + 1, .. s + 15 in each decade
ROUNDING_GROWTH = 100.0  # "grows": the RMS change at 10^7 is at least this many times the one at shift 1


def shift_rounding_view(head_dim: int, base: float, layout: str, probe: str, seed: int, m: int, n: int) -> dict:
    """How far float64 rounding moves the score when both tokens are shifted, as the shift grows.

    For each decade s = 10^j (j = 0 .. 7) the score at (m + s', n + s') for the 16 shifts s' = s .. s + 15 is compared
    with the one at (m, n).  The rotation is exact in real numbers, so every change is rounding: the angle (m + s')·θ
    is rounded to a relative 2^-53 of itself, an absolute error that grows with the position.
    Returns {"frame": DataFrame(shift, rms, largest): the RMS and largest |change| per decade; "first", "last": the RMS
    at shift 1 and at 10^7; "ratio": last / first (first floored at 2^-53·|score| so a run of exact zeros still
    compares); "grows": ratio >= ROUNDING_GROWTH; "score": the score at (m, n)}.
    """
    d = check_head_dim(head_dim, lo=4)
    layout = check_choice("layout", layout, LAYOUTS)
    m, n = (check_int(nm, v, lo=0, hi=MAX_POSITION) for nm, v in (("m", m), ("n", n)))
    inv = default_inv_freq(d, base)  # (h,)
    q, k = _probes(d, probe, seed)
    shifts = (10 ** np.arange(ROUNDING_DECADES))[:, None] + np.arange(ROUNDING_SAMPLES)  # (8, 16)
    Q = apply_rope(np.broadcast_to(q, (shifts.size + 1, d)), np.concatenate([[m], m + shifts.ravel()]), inv, layout=layout)
    K = apply_rope(np.broadcast_to(k, (shifts.size + 1, d)), np.concatenate([[n], n + shifts.ravel()]), inv, layout=layout)
    scores = np.einsum("pd,pd->p", Q, K)  # (129,): at (m, n), then every shift
    change = np.abs(scores[1:] - scores[0]).reshape(shifts.shape)  # (8, 16)
    rms = np.sqrt((change**2).mean(axis=1))  # (8,)
    floor = 2.0**-53 * max(abs(float(scores[0])), 1e-300)
    ratio = float(rms[-1] / max(rms[0], floor))
    frame = pd.DataFrame({"shift": shifts[:, 0], "rms": rms, "largest": change.max(axis=1)})
    return {"frame": frame, "first": float(rms[0]), "last": float(rms[-1]), "ratio": ratio,
            "grows": bool(ratio >= ROUNDING_GROWTH), "score": float(scores[0])}


def decay_view(head_dim: int, base: float, probe: str, seed: int, max_distance: int) -> DecayView:
    """Score of a probe with itself against distance, next to RoFormer's relative decay bound.

    Both are divided by their value at distance 0 (the score by |q|^2, the bound by mean(1..d/2))
    so they share one axis.  Returns {"frame": DataFrame(distance, relative, value, series),
    "table": DataFrame(distance, bound, bound_rel, score_rel) at BOUND_TABLE_DISTANCES,
    "bound0", "score0", "step" (distance stride, 1 = every distance), "n_points", "max_distance",
    "rises": [(D1, bound1 / bound0, D2, bound2 / bound0), ...] table neighbours where the bound grows, "first_rise": first
    sampled distance where the bound grows (None if it never does)}; "asked_frame" is "frame" without its raw values
    (the bound's at distance 0 is an exercise's answer).
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
    rel = tb / bound0  # relative, as the chart draws it: a raw bound over its relative one is bound(0), an exercise's answer
    rises = [(int(tdist[j]), float(rel[j]), int(tdist[j + 1]), float(rel[j + 1])) for j in range(tdist.size - 1) if tb[j + 1] > tb[j]]
    up = np.flatnonzero(np.diff(bound) > 0)
    return {
        "frame": frame, "asked_frame": frame.drop(columns="value"), "table": table, "bound0": bound0, "score0": score0, "step": step,
        "n_points": int(dist.size), "max_distance": L, "rises": rises,
        "first_rise": int(dist[up[0] + 1]) if up.size else None,
    }


def layout_view(head_dim: int, base: float, probe: str, seed: int, position: int, n_offsets: int = 256) -> LayoutView:
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


def xpos_view(head_dim: int, n: int = 1024) -> XposView:
    """RoPE and xPos (registry defaults, base 10000) against the offset j - i, positions 0 .. n-1, all-ones probe.

    The two schemes' ``scheme_similarity`` offset profiles, laid out by ``similarity_panel``, which names each series by
    its scheme's plain name ("RoPE", "xPos") rather than its settings, so the legend does not change with d (a page
    states d in its caption).  Returns {"offsets": DataFrame(offset, score, scheme, settings, unit, method), "names":
    [RoPE, xPos], "translation_invariance": xPos's figure (its score depends on j - i only)}.
    """
    results = [scheme_similarity(key, n, head_dim, "dot", 0) for key in XPOS_PAIR]
    panel = similarity_panel(results)
    return {"offsets": panel["offsets"], "names": panel["names"], "translation_invariance": results[1]["translation_invariance"]}


# ----------------------------------------------------------------------------- the bridge: Hello World, rotated


HELLO_D = 4  # the d_model of "What are Positional Embeddings?" ("Hello World" to the Rescue)
HELLO_WORDS = (("Hello", (0.1, 0.2, 0.3, 0.4)), ("World", (0.5, 0.6, 0.7, 0.8)))  # the article's word embeddings


def hello_rope(shift: int = 100, base: float = 10000.0) -> dict:
    """The article's Hello World at d = 4, with RoPE instead of the added PE: "Hello" at 0 is the key, "World" at 1 the
    query (q = k = the word embedding, identity projections for clarity), each rotated pair by pair (interleaved pairs
    (0, 1), (2, 3), as in the article's PE).  Then both moved by ``shift``: the rotated score is the same, the score of
    the embeddings with PE added is not.

    Returns {"frame": one row per (word, position): vector, angles, rotated, PE-added, "scores": (pair, rotated score,
    added score), "same": |rotated score at shift − at 0|, "moved": |added score at shift − at 0|, "check": posenc's
    rotation against views.reference.rope_reference, "theta": the two angles per position}."""
    from posenc.schemes.sinusoidal import sinusoidal
    from posenc.views.reference import rope_reference

    s = check_int("shift", shift, lo=1, hi=10_000_000)
    inv = default_inv_freq(HELLO_D, base=base)  # (2,): 1 and 1 / base^(1/2)
    X = np.array([v for _, v in HELLO_WORDS], dtype=np.float64)  # (2, 4): Hello, World
    rows, scores = [], []
    for start in (0, s):
        pos = np.array([start, start + 1])  # Hello, World
        R = apply_rope(X, pos, inv, layout="interleaved")  # (2, 4) rotated
        A = X + sinusoidal(pos, HELLO_D, base=base)  # (2, 4) the article's way: add PE
        scores.append({"pair": f"Hello at {start:,}, World at {start + 1:,}", "rotated": float(R[1] @ R[0]),
                       "added": float(A[1] @ A[0])})
        for (word, _), p, x, r, a in zip(HELLO_WORDS, pos, X, R, A):
            rows.append({"word": word, "position": int(p), "embedding": _vec(x),
                         "angles (pair 0, pair 1)": f"{p * inv[0]:,.4g} rad, {p * inv[1]:,.4g} rad", "rotated": _vec(r),
                         "with PE added": _vec(a)})
    ref = rope_reference(X, [s, s + 1], base, "interleaved")
    got = apply_rope(X, np.array([s, s + 1]), inv, layout="interleaved")
    check = {"what": "posenc.apply_rope against the numpy reference on Hello and World", "settings": f"positions {s:,} and {s + 1:,}, d = 4",
             "max_diff": float(np.max(np.abs(got - ref)))}
    check["ok"] = check["max_diff"] <= 1e-12
    return {"frame": pd.DataFrame(rows), "scores": pd.DataFrame(scores), "same": abs(scores[1]["rotated"] - scores[0]["rotated"]),
            "moved": abs(scores[1]["added"] - scores[0]["added"]), "check": check, "shift": s}


def _vec(v) -> str:
    return "[" + ", ".join(f"{x:.3f}" for x in v) + "]"
