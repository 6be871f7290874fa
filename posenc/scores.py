"""Position-score matrices: how much position i "matches" position j under each scheme.

axes: n positions, i query/row, j key/column, m offsets j - i, d width.

- additive schemes: the dot product or cosine similarity of PE(i) and PE(j);
- rotary schemes:   <R_i q, R_j k> for a fixed probe (default: all ones) -- the q.k score;
- bias schemes:     the bias itself (one head; T5: its bucket id).

Where the score depends only on j - i by construction (sinusoidal and sin+cos with even d,
every RoPE variant, every bias), the matrix is built from its O(n) offset profile as a
read-only Toeplitz *view* -- no (n, n, d) product and O(n) memory.  The rest use one dense
(n, d) @ (d, n) product under the memory cap.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from posenc import rope
from posenc._validate import check_choice, check_int, check_memory, check_positions
from posenc.registry import get_scheme
from posenc.schemes import bias_offsets, encode, probe_vector, rope_for
from posenc.sinusoidal import sinusoid_dot_profile

METRICS = ("dot", "cosine")
MAX_N = 1 << 16


def toeplitz_from_profile(profile: np.ndarray) -> np.ndarray:
    """(n, n) read-only view S with S[i, j] = profile[j - i + n - 1]; profile has shape (2n - 1,)."""
    p = np.asarray(profile, dtype=np.float64)
    if p.ndim != 1 or p.size % 2 == 0:
        raise ValueError(f"profile must be 1-D with odd length 2n - 1, got shape {p.shape}")
    n = (p.size + 1) // 2
    windows = sliding_window_view(p, n)  # (n, n): windows[a, b] = p[a + b]
    return windows[::-1]  # row i = windows[n - 1 - i]: p[n - 1 - i + j]


def is_offset_only(key: str, d: int, params: dict | None = None) -> bool:
    """True when the scheme's score depends only on j - i by construction (see module doc)."""
    scheme = get_scheme(key)
    d = check_int("d", d, lo=1)  # validated here: ``d % 2`` below must not be a TypeError
    if scheme.kind in ("rotary", "bias"):
        return True
    return key in ("sinusoidal", "sincos_pair") and d % 2 == 0


def offset_profile(
    key: str,
    offsets,
    *,
    d: int = 64,
    metric: str = "dot",
    probe: str = "ones",
    n_heads: int = 8,
    head: int = 0,
    seq_len: int | None = None,
    **params,
) -> np.ndarray:
    """Score as a function of the offset j - i, shape (m,), for offset-only schemes.

    Raises ValueError for schemes whose score depends on absolute positions (use
    position_scores).  ``seq_len`` feeds dynamic NTK (defaults to max |offset| + 1).
    """
    metric = check_choice("metric", metric, METRICS)
    off = check_positions(offsets, name="offsets")  # (m,) finite
    if not is_offset_only(key, d, params):
        raise ValueError(f"the score of scheme {key!r} at d = {d} depends on absolute positions, not only on j - i")
    scheme = get_scheme(key)
    p = scheme.validate_params(params)
    if scheme.kind == "bias":
        H = check_int("n_heads", n_heads, lo=1)
        h = check_int("head", head, lo=0, hi=H - 1)
        return bias_offsets(key, off, H, **params)[min(h, H - 1)]
    if scheme.kind == "rotary":
        L = seq_len if seq_len is not None else int(np.max(np.abs(off))) + 1
        inv, af = rope_for(key, d, seq_len=L, **params)
        q = probe_vector(d, probe)
        s = rope.rope_offset_scores(off, inv, q, q, layout=p["layout"], attention_factor=af)
        return s / (af**2 * (q @ q)) if metric == "cosine" else s
    if key == "sinusoidal":
        s = sinusoid_dot_profile(off, d, base=p["base"])
    else:  # sincos_pair, even d: (d / 2) pairs of the same point -> (d/2) cos(offset * w)
        s = (d / 2) * np.cos(off * p["omega"])
    return s / (d / 2) if metric == "cosine" else s  # every row has norm sqrt(d / 2)


def position_scores(
    key: str,
    n: int,
    *,
    d: int = 64,
    metric: str = "dot",
    probe: str = "ones",
    n_heads: int = 8,
    head: int = 0,
    **params,
) -> np.ndarray:
    """The (n, n) position-score matrix of scheme ``key`` for positions 0 .. n - 1.

    Offset-only schemes return a read-only Toeplitz view built from 2n - 1 profile values;
    others a dense float64 array.  Causal biases carry -inf above the diagonal.
    """
    n = check_int("n", n, lo=1, hi=MAX_N)
    metric = check_choice("metric", metric, METRICS)
    if is_offset_only(key, d, params):
        offsets = np.arange(-(n - 1), n, dtype=np.float64)  # (2n - 1,)
        prof = offset_profile(key, offsets, d=d, metric=metric, probe=probe, n_heads=n_heads, head=head, seq_len=n, **params)
        return toeplitz_from_profile(prof)
    check_memory("score matrix", (n, n))
    E = encode(key, np.arange(n), d, seq_len=n, **params)  # (n, d)
    S = E @ E.T  # (n, n)
    return cosine_from_gram(S) if metric == "cosine" else S


def cosine_from_gram(S: np.ndarray) -> np.ndarray:
    """Cosine similarity from a Gram matrix S = E E^T, in place: S_ij / (|E_i| |E_j|); (n, n).

    The norms are sqrt(diag S).  A zero vector has no direction: its row and column become 0,
    not NaN.  Divides in place, so no (n, n) temporaries are made.
    """
    norms = np.sqrt(np.clip(np.diag(S), 0.0, None))  # (n,)
    safe = np.where(norms > 0, norms, 1.0)
    S /= safe[:, None]
    S /= safe[None, :]
    S[norms == 0, :] = 0.0
    S[:, norms == 0] = 0.0
    return S


def dense_scores(key: str, n: int, *, d: int = 64, probe: str = "ones", **params) -> np.ndarray:
    """The same dot-product matrix by brute force: build every vector, then (n, d) @ (d, n).

    The reference the offset-profile method is checked and benchmarked against; (n, n).
    """
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("score matrix", (n, n))
    scheme = get_scheme(key)
    if scheme.kind == "bias":
        raise ValueError("bias schemes have no vectors; their score is the bias itself")
    if scheme.kind == "additive":
        E = encode(key, np.arange(n), d, seq_len=n, **params)
        return E @ E.T
    p = scheme.validate_params(params)
    inv, af = rope_for(key, d, seq_len=n, **params)
    q = np.broadcast_to(probe_vector(d, probe), (n, d))
    R = rope.apply_rope(q, np.arange(n), inv, layout=p["layout"], attention_factor=af)  # (n, d)
    return R @ R.T


def translation_invariance(S) -> float:
    """How far a score matrix is from depending on j - i alone; 0 means exactly relative.

    ||S - T(S)||_F / ||S - mean(S)||_F over finite entries, where T(S) replaces each entry by
    the mean of its diagonal (its offset).  A constant matrix scores 0.  Works on views.
    """
    try:
        S = np.asarray(S, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"S must be a square (n, n) matrix of numbers, got {type(S).__name__}") from exc
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"S must be a square (n, n) matrix, got shape {S.shape}")
    n = S.shape[0]
    within = 0.0
    means, counts = [], []
    for k in range(-(n - 1), n):
        diag = np.diagonal(S, k)
        diag = diag[np.isfinite(diag)]
        if diag.size == 0:
            continue
        mean = diag.mean()
        within += float(np.sum((diag - mean) ** 2))
        means.append(mean)
        counts.append(diag.size)
    if not counts:
        return 0.0
    m, c = np.asarray(means), np.asarray(counts, dtype=np.float64)
    grand = float(np.sum(m * c) / c.sum())
    spread = within + float(np.sum(c * (m - grand) ** 2))  # total sum of squares (ANOVA split)
    if spread <= 1e-24 * max(1.0, float(np.sum(c * m**2))):
        return 0.0
    return float(np.sqrt(within / spread))
