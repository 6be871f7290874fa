"""Reference implementations for "Show the code": what a page computes, in a few lines of plain
numpy written to be read rather than to be fast, and for each a check, run at the page's
settings, that posenc's own version (faster, and validating its arguments) gives the same
numbers.

axes: n positions, d model width (head_dim for RoPE), h = d // 2 frequency pairs, H heads.

The ``*_reference`` functions use numpy only, so a learner can copy one into a notebook.  Each
``check_*`` returns {"what": what was compared, "settings": at which settings, "max_diff": the
largest |difference|, "ok": max_diff within the stated tolerance}.
"""

from __future__ import annotations

import math

import numpy as np

from posenc._validate import check_choice, check_float, check_int
from posenc.analysis.attention import _weights, attend, token_embeddings, tokenize
from posenc.analysis.geometry import collisions
from posenc.registry import encode, signature
from posenc.schemes.kinds import probe_vector
from posenc.schemes.relative import alibi_slopes
from posenc.schemes.rotary import apply_rope, default_inv_freq
from posenc.schemes.sinusoidal import LAYOUTS, sinusoidal

TOL = 1e-9  # posenc's fast paths agree with these to ~1e-12; anything above 1e-9 is a bug
MAX_BRUTE_FORCE = 1024  # the O(n^2) references run on at most this many positions


# ----------------------------------------------------------------------------- the references
def attention_reference(X, Wq, Wk, Wv):
    """One head of self-attention, no positions: softmax(Q K^T / sqrt(d)) V."""
    Q, K, V = X @ Wq, X @ Wk, X @ Wv  # (n, d) each
    scores = Q @ K.T / np.sqrt(X.shape[1])  # (n, n): query i against key j
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = w / w.sum(axis=1, keepdims=True)  # each row sums to 1
    return w @ V  # (n, d): one output per token


def raw_index_reference(positions, d):
    """Attempt 1: add the position itself to every channel."""
    t = np.asarray(positions, dtype=float)[:, None]  # (n, 1)
    return t * np.ones((1, d))  # (n, d)


def index_length_reference(L, d=1):
    """Attempt 2: token t of an L-token prompt (t = 1 ... L) gets t / L in every channel."""
    t = np.arange(1, L + 1)[:, None]  # (L, 1)
    return t / L * np.ones((1, d))  # (L, d)


def single_sine_reference(n, omega, eps):
    """Attempt 3: one number per position, sin(omega t). Which pairs of positions collide?"""
    v = np.sin(omega * np.arange(n))  # (n,)
    gap = np.abs(v[:, None] - v[None, :])  # (n, n): |sin(omega i) - sin(omega j)|
    i, j = np.triu_indices(n, k=1)  # every pair i < j once
    best = np.argmin(gap[i, j])
    return v, int(np.sum(gap[i, j] <= eps)), float(gap[i, j][best])  # values, pairs within eps, closest


def sincos_reference(n, omega):
    """Attempt 4: a point on the unit circle per position; the closest two by brute force."""
    t = np.arange(n)
    pts = np.stack([np.sin(omega * t), np.cos(omega * t)], axis=1)  # (n, 2)
    dist = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)  # (n, n)
    dist[np.tril_indices(n)] = np.inf  # count each pair once, never a point with itself
    i, j = np.unravel_index(np.argmin(dist), dist.shape)
    return pts, int(i), int(j), float(dist[i, j])


def sinusoid_reference(n, d, base=10000.0):
    """Vaswani et al. 2017 (arXiv:1706.03762), section 3.5:
    PE[p, 2i] = sin(p / base^(2i/d)),  PE[p, 2i+1] = cos(p / base^(2i/d))."""
    pos = np.arange(n)[:, None]  # (n, 1)
    i = np.arange(d // 2)[None, :]  # (1, h): one frequency per pair of columns
    angle = pos / base ** (2 * i / d)  # (n, h)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(angle)  # even columns: sine
    pe[:, 1::2] = np.cos(angle)  # odd columns: cosine
    return pe


def alibi_slopes_reference(n_heads):
    """ALiBi (Press et al., arXiv:2108.12409): head k of n gets slope 2^(-8k/n).
    Not a power of two: the closest power of two, then every other slope of twice as many."""
    def geometric(n):
        start = 2 ** (-8 / n)
        return [start ** (k + 1) for k in range(n)]

    if math.log2(n_heads).is_integer():
        return np.array(geometric(n_heads))
    closest = 2 ** math.floor(math.log2(n_heads))
    return np.array(geometric(closest) + geometric(2 * closest)[0::2][: n_heads - closest])


def rope_reference(x, positions, base=10000.0, layout="half_split"):
    """RoPE (Su et al., arXiv:2104.09864): turn channel pair i at position p by p * theta_i."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)  # (h,): one angle per pair, theta_i = base^(-2i/d)
    angle = np.asarray(positions, dtype=float)[:, None] * theta  # (n, h)
    cos, sin = np.cos(angle), np.sin(angle)
    if layout == "interleaved":  # pairs (2i, 2i + 1): RoFormer, GPT-J, Meta's Llama
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x, dtype=float)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out
    a, b = x[..., : d // 2], x[..., d // 2:]  # pairs (i, i + d/2): GPT-NeoX, Hugging Face Llama
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


# ----------------------------------------------------------------------------- the checks
def _result(what: str, settings: str, diff: float, tol: float = TOL) -> dict:
    return {"what": what, "settings": settings, "max_diff": float(diff), "ok": bool(diff <= tol)}


def check_attention(sentence: str, d_model: int) -> dict:
    """posenc's exact (sorted-sum) attention against the reference, on the page's sentence A."""
    d = check_int("d_model", d_model, lo=2, hi=256)
    X = token_embeddings(tokenize(sentence), d)  # (n, d)
    ref = attention_reference(X, *_weights(d, 0))
    diff = float(np.max(np.abs(attend(X, seed=0)["out"] - ref)))
    return _result("posenc's attention outputs against the reference", f"sentence A, d = {d}", diff)


def check_raw_index(positions: tuple, d_model: int) -> dict:
    d = check_int("d_model", d_model, lo=1, hi=1024)
    pos = np.asarray(positions, dtype=float)
    diff = float(np.max(np.abs(encode("raw_index", pos, d) - raw_index_reference(pos, d))))
    return _result("posenc's raw-index encoding against the reference", f"the {pos.size} plotted positions, d = {d}", diff)


def check_index_length(lengths: tuple) -> dict:
    Ls = [check_int("length", L, lo=1, hi=64) for L in lengths]
    diff = max(float(np.max(np.abs(encode("index_over_length", np.arange(L), 1, seq_len=L) - index_length_reference(L))))
               for L in Ls)
    return _result("posenc's index / length values against the reference", "L = " + ", ".join(map(str, Ls)), diff)


def check_single_sine(omega: float, n: int, eps: float) -> dict:
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    n = check_int("n", n, lo=2, hi=1024)
    v, pairs, closest = single_sine_reference(n, w, eps)
    col = collisions("single_sine", n, 1, eps=eps, omega=w)
    diff = max(float(np.max(np.abs(signature("single_sine", np.arange(n), 1, omega=w)[:, 0] - v))),
               abs(col["distance"] - closest), float(abs(col["pairs_within_eps"] - pairs)))
    return _result("posenc's values, pair count and closest pair against the brute force",
                   f"ω = {w:g}, n = {n}, ε = {eps:g}", diff)


def check_sincos(omega: float, n: int) -> dict:
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    m = min(check_int("n", n, lo=2, hi=4096), MAX_BRUTE_FORCE)
    pts, _, _, closest = sincos_reference(m, w)
    col = collisions("sincos_pair", m, 2, omega=w)
    diff = max(float(np.max(np.abs(signature("sincos_pair", np.arange(m), 2, omega=w) - pts))), abs(col["distance"] - closest))
    where = f"ω = {w:g}, n = {m}" + (f" (the first {m} of {n} positions)" if m < n else "")
    return _result("posenc's points and exact closest pair against the brute force", where, diff)


def check_sinusoid(n: int, d_model: int, base: float, layout: str) -> dict:
    n = check_int("n", n, lo=1, hi=4096)
    d = check_int("d_model", d_model, lo=2, hi=1024)
    layout = check_choice("layout", layout, LAYOUTS)
    ref = sinusoid_reference(n, d, base)  # (n, d), interleaved
    if layout == "concatenated":  # the same columns, [sin | cos]
        ref = np.concatenate([ref[:, 0::2], ref[:, 1::2]], axis=1)
    diff = float(np.max(np.abs(sinusoidal(np.arange(n), d, base=base, layout=layout) - ref)))
    return _result("posenc.sinusoidal (angle addition on most rows) against the reference",
                   f"n = {n}, d = {d}, base {base:g}, {layout} layout", diff)


def check_alibi_slopes(n_heads: int) -> dict:
    H = check_int("n_heads", n_heads, lo=1, hi=256)
    diff = float(np.max(np.abs(alibi_slopes(H) - alibi_slopes_reference(H))))
    return _result("posenc.alibi_slopes against the reference", f"{H} heads", diff, tol=1e-15)


def check_rope(head_dim: int, base: float, layout: str, probe: str, seed: int, positions: tuple) -> dict:
    """posenc.apply_rope against the reference on the RoPE page's query probe at ``positions``."""
    d = check_int("head_dim", head_dim, lo=2, hi=4096)
    layout = check_choice("layout", layout, ("half_split", "interleaved"))
    x = probe_vector(d, probe, seed=check_int("seed", seed, lo=0, hi=10**6))[None, :].repeat(len(positions), axis=0)  # (n, d)
    got = apply_rope(x, np.asarray(positions), default_inv_freq(d, base=base), layout=layout)
    diff = float(np.max(np.abs(got - rope_reference(x, positions, base, layout))))
    return _result("posenc.apply_rope against the reference", f"positions {', '.join(map(str, positions))}, d = {d}, "
                   f"base {base:g}, {layout} pairs", diff)
