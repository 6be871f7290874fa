"""Analyses of the position signature: growth, length dependence, collisions, the shift operator,
and the frequency spectrum.

axes: n positions, k signature width, d encoding width, h frequency pairs.
"""

from __future__ import annotations

import math

import numpy as np

from posenc._lazy import load
from posenc._validate import check_float, check_int, check_memory, check_positions
from posenc.registry import get_scheme

# Typical token embedding scale: GPT-2 and BERT initialise every entry as normal(0, 0.02),
# so a token row has norm about 0.02 * sqrt(d) and max |value| about 0.02 * sqrt(2 ln d).
TOKEN_INIT_STD = 0.02
MAX_COLLISION_POINTS = 2_000_000


def token_embedding_norm(d_model: int) -> float:
    """Expected norm of a freshly initialised token embedding row: 0.02 * sqrt(d_model)."""
    d = check_int("d_model", d_model, lo=1)
    return TOKEN_INIT_STD * math.sqrt(d)


def growth(key: str, positions, d: int, **params) -> dict:
    """Norm and max |value| of the signature at each position.

    Returns {"positions": (n,), "norm": (n,), "max_abs": (n,), "defined": (n,) bool,
    "token_norm": float}.  Positions a learned table has no row for (or past randomized positions' range) are not defined: their
    norm and max_abs are NaN and ``defined`` is False (the table ends; nothing is invented).
    """
    scheme = get_scheme(key)
    pos = check_positions(positions, lo=0)
    limit = scheme.defined_below(**scheme.accepted(params))
    defined = np.ones(pos.size, dtype=bool) if limit is None else pos < limit
    norm = np.full(pos.size, np.nan)
    max_abs = np.full(pos.size, np.nan)
    if defined.any():
        sig = scheme.signature(pos[defined], d, **params)  # (n_def, k)
        finite = np.where(np.isfinite(sig), sig, 0.0)
        norm[defined] = np.linalg.norm(finite, axis=1)
        max_abs[defined] = np.abs(finite).max(axis=1)
    return {"positions": pos, "norm": norm, "max_abs": max_abs, "defined": defined, "token_norm": token_embedding_norm(d)}


def length_dependence(key: str, position: int, lengths, d: int, **params) -> dict:
    """The signature of one position inside sequences of several lengths.

    Returns {"lengths": (L,), "signatures": (L, k), "max_change": float}: max_change is the
    largest |difference| of any component between any two lengths (0 = length-invariant).
    Lengths at or below ``position`` are rejected (the position would not exist).
    """
    p = check_int("position", position, lo=0)
    Ls = check_positions(lengths, name="lengths", integer=True, lo=p + 1, hi=10**8).astype(np.int64)
    if Ls.size == 0:
        raise ValueError("lengths must contain at least one length")
    scheme = get_scheme(key)
    rows = [scheme.signature([p], d, seq_len=int(L), **params)[0] for L in Ls]
    sig = np.vstack(rows)  # (L, k)
    change = float(np.max(sig.max(axis=0) - sig.min(axis=0))) if sig.size else 0.0
    return {"lengths": Ls, "signatures": sig, "max_change": change}


def closest_pair(points) -> dict:
    """Exact closest pair of distinct rows of ``points`` (n, k).

    Returns {"distance": float, "i": int, "j": int} with i < j; exact duplicates give distance 0.
    One column: sort and compare neighbours, O(n log n).  Up to ``DENSE_ROWS`` rows (but not in 2-4
    columns past 1,024 rows, where a tree is faster): every pair's squared distance from the Gram
    identity |x|^2 + |y|^2 - 2 x.y in blocks of rows (one BLAS product each), then the exact distance
    of every pair within that identity's rounding bound of the smallest (of pairs at the same distance,
    the smallest i, then j).  At 4,096 rows that is 1.2x as fast as a KD-tree in 16 columns and 5-17x
    in 64-768 (``python -m bench --only collisions``), and it loads no scipy.  More rows: scipy's
    KD-tree (each point's nearest other point), searched only within the distance of consecutive
    rows, which is an upper bound of the answer.  Never forms an (n, n) matrix.
    """
    X = _points(points)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"points must have at least 2 rows for a closest pair, got {n}")
    if X.shape[1] == 1:
        order = np.argsort(X[:, 0], kind="stable")
        gaps = np.diff(X[order, 0])
        best = int(np.argmin(gaps))
        i, j = sorted((int(order[best]), int(order[best + 1])))
        return {"distance": float(gaps[best]), "i": i, "j": j}
    steps = np.linalg.norm(X[1:] - X[:-1], axis=1)  # (n - 1,) consecutive rows: real pairs
    if steps.min() == 0.0:
        first = int(np.argmin(steps))
        return {"distance": 0.0, "i": first, "j": first + 1}
    found = _dense_closest(X) if _dense(X) else None
    return found if found is not None else tree_closest(X, bound=float(steps.min()))


def tree_closest(X: np.ndarray, *, bound: float) -> dict:
    """``closest_pair``'s KD-tree path for a checked (n, k) array with no two equal consecutive rows:
    each point's nearest other point, searched within ``bound`` (the distance of some real pair, so an
    upper bound of the answer).  ``python -m bench --only collisions`` times it against the Gram path."""
    tree = load("scipy.spatial").cKDTree(X)  # imported when first needed: a page that never asks pays nothing
    dist, idx = tree.query(X, k=2, distance_upper_bound=bound * (1 + 1e-9), workers=-1)  # (n, 2); inf beyond
    rows = np.arange(X.shape[0])
    other = np.where(idx[:, 1] != rows, idx[:, 1], idx[:, 0])
    best = int(np.argmin(dist[:, 1]))
    i, j = sorted((best, int(other[best])))
    return {"distance": float(dist[best, 1]), "i": i, "j": j}


def count_close_pairs(points, eps: float) -> int:
    """Number of unordered pairs of distinct rows within distance ``eps`` (inclusive).

    One column: sort and binary-search, O(n log n) whatever the count.  Up to ``DENSE_ROWS`` rows
    (as in ``closest_pair``): the Gram identity in blocks, with the exact distance of every pair
    within its rounding bound of ``eps``.  More: KD-tree count_neighbors (its cost grows with the
    number of pairs found).
    """
    X = _points(points)
    eps = check_float("eps", eps, lo=0.0, hi=1e12)
    if X.shape[1] == 1:
        v = np.sort(X[:, 0])
        ends = np.searchsorted(v, v + eps, side="right")  # first index beyond v[i] + eps
        return int(np.sum(ends - np.arange(v.size) - 1))
    if _dense(X):
        found = _dense_count(X, eps)
        if found is not None:
            return found
    tree = load("scipy.spatial").cKDTree(X)
    ordered = int(tree.count_neighbors(tree, eps))  # includes each point with itself
    return (ordered - X.shape[0]) // 2


# Pairs by the Gram identity (closest_pair, count_close_pairs): up to DENSE_ROWS rows, in blocks of
# DENSE_BLOCK rows (a block's squared distances take DENSE_BLOCK x n doubles: 8 MiB at 4,096 rows).
# At most DENSE_CANDIDATES pairs near the answer are measured exactly; more (many pairs at one
# distance, or values so large that the rounding bound covers many) falls back to the KD-tree.
DENSE_ROWS = 4096
DENSE_BLOCK = 256
DENSE_CANDIDATES = 1 << 20


def _dense(X: np.ndarray) -> bool:
    """Whether the Gram path is the faster one for ``X`` (measured: bench section 3b)."""
    n, k = X.shape
    return n <= DENSE_ROWS and (k > 4 or n <= 1024)


def _gram_blocks(X: np.ndarray):
    """(r0, G, slack) per block of rows r0 .. r0 + b: G[a, c] is the squared distance of rows r0 + a
    and r0 + c by the Gram identity for c > a, +inf elsewhere; |G - exact| <= slack for every pair."""
    n, k = X.shape
    C = X - X.mean(axis=0)  # centred: the same distances, smaller norms, a tighter bound
    sq = np.einsum("ij,ij->i", C, C)  # (n,)
    # |x|^2 + |y|^2 - 2 x.y: each term's rounding is at most gamma_k times |x|^2 + |y|^2 (and 2|x||y|),
    # gamma_k ~ k u; twice that bound, to hold for any summation order the BLAS uses
    slack = 8.0 * (k + 2) * np.finfo(np.float64).eps * float(sq.max())
    for r0 in range(0, n - 1, DENSE_BLOCK):
        r1 = min(n, r0 + DENSE_BLOCK)
        G = sq[r0:r1, None] + sq[None, r0:] - 2.0 * (C[r0:r1] @ C[r0:].T)  # (b, n - r0)
        G[np.tril_indices(r1 - r0, 0, n - r0)] = np.inf  # the pair itself and pairs seen from the other side
        yield r0, G, slack


def _dense_closest(X: np.ndarray) -> dict | None:
    best, kept, found = np.inf, 0, []
    for r0, G, slack in _gram_blocks(X):
        best = min(best, float(G.min()))
        a, c = np.nonzero(G <= best + 2.0 * slack)  # every pair that can still be the closest (see below)
        found.append((a + r0, c + r0))
        kept += a.size
        if kept > DENSE_CANDIDATES:
            return None
    # the closest pair has G <= d*^2 + slack <= d_b^2 + slack <= G_b + 2 slack for any pair b: it is kept
    i = np.concatenate([f[0] for f in found])
    j = np.concatenate([f[1] for f in found])
    dist = np.linalg.norm(X[i] - X[j], axis=1)
    b = int(np.lexsort((j, i, dist))[0])  # the smallest distance, then i, then j
    return {"distance": float(dist[b]), "i": int(i[b]), "j": int(j[b])}


def _dense_count(X: np.ndarray, eps: float) -> int | None:
    target, count, border = eps * eps, 0, 0
    for r0, G, slack in _gram_blocks(X):
        count += int(np.count_nonzero(G < target - slack))  # surely within eps
        a, c = np.nonzero(np.abs(G - target) <= slack)  # too close to eps to tell: measured exactly
        border += a.size
        if border > DENSE_CANDIDATES:
            return None
        count += int(np.count_nonzero(np.linalg.norm(X[a + r0] - X[c + r0], axis=1) <= eps))
    return count


def _points(points) -> np.ndarray:
    try:
        X = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"points must be a finite (n, k) array of numbers, got {type(points).__name__}") from exc
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise ValueError(f"points must be a finite (n, k) array, got shape {X.shape}")
    if X.shape[0] > MAX_COLLISION_POINTS:
        raise ValueError(f"points must have at most {MAX_COLLISION_POINTS:,} rows, got {X.shape[0]:,}")
    return X


def collisions(key: str, n: int, d: int, *, eps: float = 1e-2, **params) -> dict:
    """Closest pair and near-collisions among positions 0 .. n-1 of scheme ``key``.

    Returns {"n", "distance", "i", "j", "pairs_within_eps", "eps", "method"}.  For schemes that
    declare themselves isometric (``scheme.isometric(d)``: rotations and translations of positions)
    the distance of positions p < q is that of offsets 0 and q - p, so both answers are exact in
    O(n d) ("offsets"); otherwise the KD-tree ("kd-tree", or "sort" for one column) over every position.
    """
    n = check_int("n", n, lo=2, hi=MAX_COLLISION_POINTS)
    eps = check_float("eps", eps, lo=0.0, hi=1e12)
    scheme = get_scheme(key)
    sig = scheme.signature(np.arange(n), d, seq_len=n, **params)  # (n, k)
    if scheme.isometric(d, n, **scheme.accepted(params)):  # params may carry n_heads and the probe too
        dist = np.linalg.norm(sig[1:] - sig[0], axis=1)  # (n - 1,) distance of offset k = 1 .. n-1
        k = int(np.argmin(dist)) + 1
        within = np.flatnonzero(dist <= eps) + 1  # offsets within eps; offset k occurs n - k times
        return {"n": n, "distance": float(dist[k - 1]), "i": 0, "j": k,
                "pairs_within_eps": int(np.sum(n - within)), "eps": eps, "method": "offsets"}
    best = closest_pair(sig)
    method = "sort" if sig.shape[1] == 1 else "kd-tree"
    return {"n": n, **best, "pairs_within_eps": count_close_pairs(sig, eps), "eps": eps, "method": method}


def first_return(key: str, d: int, *, eps: float, start: int = 0, limit: int = 100_000, **params) -> dict:
    """The first position p > start whose signature lies within ``eps`` of position ``start``'s.

    Returns {"position": int or None, "distance": float} (None if none up to ``limit``).
    """
    start = check_int("start", start, lo=0)
    limit = check_int("limit", limit, lo=start + 1, hi=10**7)
    eps = check_float("eps", eps, lo=0.0, hi=1e12)
    pos = np.arange(start, limit + 1)
    sig = get_scheme(key).signature(pos, d, seq_len=limit + 1, **params)  # (n, k)
    dist = np.linalg.norm(sig[1:] - sig[0], axis=1)
    hits = np.flatnonzero(dist <= eps)
    if hits.size == 0:
        return {"position": None, "distance": float(dist.min())}
    return {"position": int(pos[1 + hits[0]]), "distance": float(dist[hits[0]])}


def shift_operator(key: str, k: float, d: int, *, n_fit: int | None = None, **params) -> dict:
    """Least-squares fit of M_k with PE(p + k) = M_k PE(p) for an additive scheme.

    Where the positions are fitted: a lookup table on its rows 0 .. max_len-1-k (k an integer);
    a scheme made of sinusoids on ``n_fit`` seeded-random positions in [-T/2, T/2] with
    T = 2 pi / (smallest gap between two of its frequencies, or the smallest frequency): long
    enough to tell every pair of neighbouring frequencies apart, so the fit is well conditioned
    (cond ~ 3) at every d.  (An evenly spaced grid over the longest wavelength aliases the fast
    pairs and leaves neighbouring slow pairs unresolved: rank-deficient for d >= 128, where the
    fitted M was not a rotation.)  Anything else on positions 0 .. n_fit-1.
    Returns {"M": (d, d), "residual": max |PE(p+k) - M PE(p)|, "orthogonality": max |M M^T - I|,
    "off_block": max |M| outside the 2x2 blocks of the scheme's (sin, cos) column pairs (interleaved
    pairs unless the scheme says otherwise), "positions": (n_fit,)}.
    For the sinusoid with even d, M_k is block-diagonal rotations and residual < 1e-10 up to
    d = 512 (float64 rounding of angles ~T; about 2e-10 at d = 1024).
    """
    scheme = get_scheme(key)
    scheme.need("additive", "shift_operator fits a linear map between the added vectors")
    d = check_int("d", d, lo=1, hi=1024)
    n_fit = check_int("n_fit", n_fit if n_fit is not None else max(4 * d, 64), lo=2, hi=100_000)
    check_memory("shift fit", (n_fit, d))
    p = scheme.validate_params(params)
    behaviour = scheme.behaviour
    if scheme.max_len is not None:
        k = check_int("k", k, lo=0, hi=scheme.max_len - 2)
        pos = np.arange(scheme.max_len - k, dtype=np.float64)
    elif behaviour.frequencies is not None:
        k = check_float("k", k, lo=-1e6, hi=1e6)
        w = np.sort(behaviour.frequencies(d, **p))  # (h,)
        gaps = np.diff(w)
        gaps = gaps[gaps > 0]
        resolve = min(float(w[0]), float(gaps.min()) if gaps.size else math.inf)
        span = min(2 * math.pi / resolve, 1e9)
        pos = np.sort(np.random.default_rng(0).uniform(-span / 2, span / 2, n_fit))
    else:
        k = check_float("k", k, lo=-1e6, hi=1e6)
        pos = np.arange(n_fit, dtype=np.float64)
    seq = int(pos.max() + abs(k)) + 1
    X = scheme.encode(pos, d, seq_len=seq, **p)  # (n_fit, d)
    Y = scheme.encode(pos + k, d, seq_len=seq, **p)  # (n_fit, d)
    Mt, *_ = load("scipy.linalg").lstsq(X, Y)  # X @ M^T = Y; SciPy imported when first needed
    M = Mt.T
    residual = float(np.max(np.abs(X @ Mt - Y)))
    ortho = float(np.max(np.abs(M @ M.T - np.eye(d))))
    h = np.arange(d // 2)
    pairs = behaviour.pair_columns(d, **p) if behaviour.pair_columns else np.stack([2 * h, 2 * h + 1], axis=1)  # (h, 2)
    mask = np.ones((d, d), dtype=bool)
    for pair in pairs:
        mask[np.ix_(pair, pair)] = False
    if d % 2:
        mask[-1, -1] = False
    off_block = float(np.max(np.abs(M[mask]))) if mask.any() else 0.0
    return {"M": M, "residual": residual, "orthogonality": ortho, "off_block": off_block, "positions": pos}


def frequency_spectrum(key: str, d: int, *, context: int, seq_len: int | None = None, **params) -> dict:
    """Per-pair frequency, wavelength and scaling of a scheme made of sinusoids or rotations.

    Returns {"pair": (h,), "omega": (h,), "wavelength": (h,), "full_turn": (h,) bool
    (wavelength <= context), "scale": (h,) omega / the unscaled RoPE frequency at the same base
    (1 for additive schemes), "attention_factor": float}.
    """
    scheme = get_scheme(key)
    context = check_int("context", context, lo=1, hi=10**9)
    omega, af, scale = scheme.spectrum(d, seq_len=seq_len, **params)
    wl = 2 * np.pi / omega
    return {
        "pair": np.arange(omega.size),
        "omega": omega,
        "wavelength": wl,
        "full_turn": wl <= context,
        "scale": scale,
        "attention_factor": float(af),
    }
