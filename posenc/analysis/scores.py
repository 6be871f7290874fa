"""Position-score matrices: how much position i "matches" position j under each scheme.

axes: n positions, i query/row, j key/column, m offsets j - i, d width.

- additive schemes: the dot product or cosine similarity of PE(i) and PE(j);
- rotary schemes:   <R_i q, R_j k> for a fixed probe (default: all ones) -- the q.k score;
- bias schemes:     the bias itself (one head; T5: its bucket id).

Where a scheme declares its score offset-only (``scheme.offset_only(d)``: the sinusoid and the
sin+cos pair at even d, every rotary scheme, every bias), the matrix is built from its O(n)
closed-form offset profile as a read-only Toeplitz *view* -- no (n, n, d) product and O(n)
memory.  The rest use the dense matrix from the scheme's defining function, under the memory cap.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from posenc._validate import check_choice, check_int, check_memory
from posenc.registry import get_scheme

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
    """Score as a function of the offset j - i, shape (m,), for schemes that declare it offset-only.

    Raises ValueError for schemes whose score depends on absolute positions (use position_scores).
    ``seq_len`` feeds dynamic NTK (defaults to max |offset| + 1).  ``metric="cosine"`` (additive
    schemes) divides by |PE(p)|^2, the profile at offset 0, which is the same at every p.
    """
    metric = check_choice("metric", metric, METRICS)
    scheme = get_scheme(key)
    s = scheme.offset_profile(offsets, d, seq_len=seq_len, n_heads=n_heads, head=head, probe=probe, **params)
    if metric == "dot":
        return s
    _cosine_is_additive(scheme)
    return s / scheme.offset_profile([0.0], d, seq_len=seq_len, probe=probe, **params)[0]


def _cosine_is_additive(scheme) -> None:
    if scheme.score_metric("cosine") != "cosine":  # only added vectors are compared by a metric of their own
        raise ValueError(f"metric 'cosine' compares encoding vectors; scheme {scheme.key!r} is {scheme.kind} (use 'dot')")


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

    Schemes that declare their score offset-only return a read-only Toeplitz view built from
    2n - 1 closed-form profile values; others the dense matrix from their defining function.
    Causal biases carry -inf above the diagonal.
    """
    n = check_int("n", n, lo=1, hi=MAX_N)
    metric = check_choice("metric", metric, METRICS)
    scheme = get_scheme(key)
    if metric == "cosine":
        _cosine_is_additive(scheme)
    if scheme.offset_only(d, n, **params):
        offsets = np.arange(-(n - 1), n, dtype=np.float64)  # (2n - 1,)
        prof = offset_profile(key, offsets, d=d, metric=metric, probe=probe, n_heads=n_heads, head=head, seq_len=n, **params)
        return toeplitz_from_profile(prof)
    check_memory("score matrix", (n, n))
    S = scheme.dense_scores(n, d, n_heads=n_heads, head=head, probe=probe, **params)  # (n, n)
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


def dense_scores(key: str, n: int, *, d: int = 64, probe: str = "ones", n_heads: int = 8, head: int = 0,
                 **params) -> np.ndarray:
    """The same score matrix by brute force from the scheme's defining function: (n, n).

    additive: every PE(p), then (n, d) @ (d, n); rotary: q'(i) . k'(j) from its q/k transform;
    bias: the bias of every (i, j).  The reference the offset-profile method is checked and
    benchmarked against.
    """
    n = check_int("n", n, lo=1, hi=MAX_N)
    check_memory("score matrix", (n, n))
    return get_scheme(key).dense_scores(n, d, n_heads=n_heads, head=head, probe=probe, **params)


def finite_range(S: np.ndarray) -> tuple[float, float]:
    """(min, max) over the finite entries of a score matrix S (-inf where masked); (nan, nan) when none is.  Two plain
    reductions when every entry is finite (the usual case), else two masked ones: S (a strided view, maybe) is never
    copied."""
    lo, hi = float(np.min(S, initial=np.inf)), float(np.max(S, initial=-np.inf))
    if np.isfinite(lo) and np.isfinite(hi):
        return lo, hi
    ok = np.isfinite(S)
    if not ok.any():
        return float("nan"), float("nan")
    return float(np.min(S, where=ok, initial=np.inf)), float(np.max(S, where=ok, initial=-np.inf))


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
    if n == 0:
        return 0.0
    # Every diagonal (offset j - i) at once: each block of rows, its columns reversed and each row shifted right by
    # its own index (a reshape of the zero-padded block), puts every diagonal in one column, so the counts and sums
    # of the finite entries are column sums; then a second pass for the sum of squared deviations from each
    # diagonal's own mean (two passes, as the per-diagonal loop this replaced did).  Column c of the block starting
    # at row i0 is diagonal n - 1 - (j - i) = c + i0.  A block holds at most _BLOCK entries.
    size, rows = 2 * n - 1, max(1, min(n, _BLOCK // (2 * n)))
    counts, sums = np.zeros(size), np.zeros(size)
    for i0 in range(0, n, rows):
        vals, finite = _skewed(S, i0, rows)
        counts[i0:i0 + vals.shape[1]] += finite.sum(axis=0)
        sums[i0:i0 + vals.shape[1]] += vals.sum(axis=0)
    if not counts.any():
        return 0.0
    present = counts > 0
    diag_mean = np.divide(sums, counts, out=np.zeros(size), where=present)
    within = 0.0
    for i0 in range(0, n, rows):
        vals, finite = _skewed(S, i0, rows)
        dev = vals - diag_mean[i0:i0 + vals.shape[1]]
        within += float(np.sum(np.square(dev, out=dev), where=finite))
    m, c = diag_mean[present], counts[present]
    grand = float(np.sum(m * c) / c.sum())
    spread = within + float(np.sum(c * (m - grand) ** 2))  # total sum of squares (ANOVA split)
    if spread <= 1e-24 * max(1.0, float(np.sum(c * m**2))):
        return 0.0
    return float(np.sqrt(within / spread))


_BLOCK = 1 << 17  # entries per block of rows in translation_invariance's passes (1 MiB of float64: fastest here, n = 512-2,048)


def _skewed(S: np.ndarray, i0: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows i0 .. i0 + rows of S with columns reversed and row r shifted right by r, (r, n + r - 1): column c holds
    diagonal c + i0 (counted as n - 1 - (j - i)).  Non-finite entries and the padding are 0, and False in the mask."""
    block = S[i0:i0 + rows, ::-1]
    r, n = block.shape
    finite = np.zeros((r, n + r), dtype=bool)
    finite[:, :n] = np.isfinite(block)
    vals = np.zeros((r, n + r))
    np.copyto(vals[:, :n], block, where=finite[:, :n])
    width = n + r - 1
    return vals.reshape(-1)[: r * width].reshape(r, width), finite.reshape(-1)[: r * width].reshape(r, width)
