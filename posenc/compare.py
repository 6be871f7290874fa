"""The comparison table, measured: every column is computed from the schemes, none typed in.

For one scheme at sequence length n (encoding width d, H heads) and a training length L:

- bounded      max |value| of the signature at positions up to 10^6, and whether it stops
               growing: max over [10^5, 10^6] <= 1.5 x max over [0, 1000];
- continuous   defined between integer positions with a finite local slope: the signature at
               p + 1e-3 exists and |f(p + δ) - f(p)| / δ agrees for δ = 1e-3 and 1e-6;
- unique       the closest pair of distinct positions among 0 .. n-1 (0 = a collision);
- length_change the largest change of position 1's signature when the sequence length
               varies over {2, n/2, n, 2L, 4L} (0 = length-invariant);
- relative     translation_invariance of the dense score matrix (0 = depends on j - i only)
               and whether that score varies at all (a constant score carries no position);
- extrapolates defined at 4L, and the fraction of scores of pairs reaching past L that fall
               outside the range of scores seen within L (for RoPE extensions, "seen" means
               the un-extended RoPE trained at L);
- learned parameters, where position enters, models, paper: from the registry and shapes.

The wishlist marks (bounded, continuous, relative) are derived from these numbers.
"""

from __future__ import annotations

import numpy as np

from posenc import learned
from posenc import rope as _rope
from posenc._validate import check_int
from posenc.geometry import collisions, growth, length_dependence
from posenc.registry import SCHEMES, get_scheme
from posenc.schemes import bias_matrix, bias_offsets, probe_vector, rope_for, signature
from posenc.scores import translation_invariance
from posenc.tables import measure_table

FAR = np.unique(np.round(np.geomspace(1e5, 1e6, 64)))
NEAR = np.arange(0, 1001, dtype=np.float64)
BOUND_RATIO = 1.5
GRID = 1024  # positions sampled for the absolute schemes' extrapolation test
RELATIVE_TOL = 1e-6


def comparison_params(key: str, train_len: int, factor: float = 4.0) -> dict:
    """Parameters that put every RoPE extension on the same footing: trained at L, factor 4."""
    names = {p.name for p in get_scheme(key).params}
    out = {}
    if "original_max_position_embeddings" in names:
        out["original_max_position_embeddings"] = train_len
    if "factor" in names:
        out["factor"] = factor
    return out


def _dense_matrix(key: str, n: int, d: int, n_heads: int, params: dict) -> np.ndarray:
    """Score matrix built densely from vectors or from every (i, j) (never from a profile): (n, n)."""
    scheme = get_scheme(key)
    if scheme.kind == "bias":
        return bias_matrix(key, n, n_heads, 0, **params)
    sig = signature(key, np.arange(n), d, seq_len=n, n_heads=n_heads, **params)  # (n, d)
    return sig @ sig.T


def measure_scheme(key: str, *, n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512, params: dict | None = None) -> dict:
    """Every measured column for scheme ``key`` (see the module docstring); a flat dict."""
    scheme = get_scheme(key)
    n = check_int("n", n, lo=4, hi=4096)
    L = check_int("train_len", train_len, lo=4, hi=4096)
    params = {**comparison_params(key, L), **(params or {})}
    params = scheme.validate_params(params)
    if scheme.learned and scheme.kind == "additive":
        return _learned_row(key, n=n, d=d, train_len=L, params=params)
    sig_kw = {"n_heads": n_heads} if scheme.kind == "bias" else {}
    row: dict = {"key": key, "name": scheme.name, "kind": scheme.kind, "d": d, "n_measured": n}

    # bounded: growth of max |value| out to 10^6
    g_near = growth(key, NEAR, d, **sig_kw, **params)
    g_far = growth(key, FAR, d, **sig_kw, **params)
    near_max = float(np.nanmax(g_near["max_abs"]))
    far_defined = bool(g_far["defined"].all())
    far_max = float(np.nanmax(g_far["max_abs"])) if g_far["defined"].any() else float("nan")
    row["max_abs_at_1e6"] = far_max if far_defined else float("nan")
    row["max_abs_near"] = near_max
    row["bounded"] = bool(
        (far_defined and far_max <= BOUND_RATIO * max(near_max, 1e-12)) or (not far_defined and np.isfinite(near_max))
    )

    # continuous: defined at fractional positions with a stable local slope
    probe_pos = np.array([1.0, 7.0, 100.0, min(n - 2, 300.0)])
    try:
        f0 = signature(key, probe_pos, d, seq_len=n, **sig_kw, **params)
        slopes = []
        for delta in (1e-3, 1e-6):
            f1 = signature(key, probe_pos + delta, d, seq_len=n, **sig_kw, **params)
            slopes.append(float(np.max(np.abs(f1 - f0))) / delta)
        row["max_slope"] = slopes[1]
        row["continuous"] = bool(np.isfinite(slopes[1]) and slopes[1] <= 2 * slopes[0] + 1e-9)
    except ValueError:
        row["max_slope"] = float("nan")
        row["continuous"] = False  # only defined at integer positions (a lookup or a bucket)

    # unique: closest pair of distinct positions at length n
    best = collisions(key, n, d, **sig_kw, **params)  # exact; O(n d) for shift-isometric schemes
    row.update(closest_distance=best["distance"], closest_i=best["i"], closest_j=best["j"])

    # length-invariant: position 1 under several sequence lengths
    lengths = sorted({2, max(2, n // 2), n, 2 * L, 4 * L})
    row["length_change"] = length_dependence(key, 1, lengths, d, **sig_kw, **params)["max_change"]

    # relative: translation invariance of the dense score matrix, and whether it varies
    S = _dense_matrix(key, n, d, n_heads, params)
    finite = S[np.isfinite(S)]
    row["translation_invariance"] = translation_invariance(S)
    row["score_spread"] = float(finite.max() - finite.min()) if finite.size else 0.0
    row["relative"] = bool(row["translation_invariance"] <= RELATIVE_TOL and row["score_spread"] > 1e-9)

    # extrapolates: defined at 4L, and how much of the past-L score range is new
    row.update(_extrapolation(key, L, d, n_heads, params))

    row["learned_parameters"] = _learned_parameters(key, d, n_heads, params)
    row.update(enters=scheme.enters, models=", ".join(scheme.models), paper=scheme.paper, year=scheme.year)
    return row


def _learned_row(key: str, *, n: int, d: int, train_len: int, params: dict) -> dict:
    """A learned table's row: posenc.tables.measure_table on its rows, registry metadata on top.

    The table has max_len rows whatever n is, so uniqueness and relativity are measured on
    min(n, max_len) rows (``n_measured``)."""
    scheme = get_scheme(key)
    if key == "learned_minilm":
        table = learned.minilm_table()
    else:
        table = learned.random_table(learned.MINILM_MAX_LEN, d, seed=params["seed"])
    row = measure_table(table, name=scheme.name, n=n, train_len=train_len)
    row.update(key=key, name=scheme.name, enters=scheme.enters, models=", ".join(scheme.models), paper=scheme.paper, year=scheme.year)
    row["n_measured"] = min(n, table.shape[0])
    return row


def _offset_scores(key: str, offsets: np.ndarray, d: int, n_heads: int, params: dict, seq_len: int) -> np.ndarray:
    """Score against offset j - i for the extrapolation test; (m,)."""
    scheme = get_scheme(key)
    if scheme.kind == "bias":
        return bias_offsets(key, -offsets, n_heads, **params)[0]  # query after key: j - i = -offset
    if scheme.kind == "rotary":
        inv, af = rope_for(key, d, seq_len=seq_len, **params)
        q = probe_vector(d)
        return _rope.rope_offset_scores(offsets, inv, q, q, layout=params["layout"], attention_factor=af)
    sig = signature(key, np.concatenate([[0.0], offsets]), d, seq_len=seq_len, **params)  # (m+1, d)
    return sig[1:] @ sig[0]


def _extrapolation(key: str, L: int, d: int, n_heads: int, params: dict) -> dict:
    scheme = get_scheme(key)
    seen_off = np.arange(0, L, dtype=np.float64)
    new_off = np.arange(L, 4 * L, dtype=np.float64)
    if scheme.kind == "rotary":
        base_params = {"base": params["base"], "layout": params["layout"]}
        seen = _offset_scores("rope", seen_off, d, n_heads, base_params, L)
        new = _offset_scores(key, new_off, d, n_heads, params, 4 * L)
    elif key in ("raw_index", "single_sine"):
        # absolute: the score of a pair depends on both positions; compare pairs within L with
        # pairs reaching past L, on a grid of at most GRID positions in [0, 4L)
        step = max(1, -(-4 * L // GRID))
        pos = np.arange(0, 4 * L, step, dtype=np.float64)  # (m,)
        sig = signature(key, pos, d, seq_len=4 * L, **params)  # (m, d)
        Sm = sig @ sig.T  # (m, m)
        inside = pos < L
        seen = Sm[np.ix_(inside, inside)].ravel()
        new = Sm[~inside, :].ravel()
    else:
        seen = _offset_scores(key, seen_off, d, n_heads, params, L)
        new = _offset_scores(key, new_off, d, n_heads, params, 4 * L)
    lo, hi = np.min(seen), np.max(seen)
    tol = 1e-9 * max(1.0, abs(lo), abs(hi))
    outside = (new < lo - tol) | (new > hi + tol)
    return {"defined_at_4L": True, "beyond_out_of_range": float(np.mean(outside))}


def _learned_parameters(key: str, d: int, n_heads: int, params: dict) -> int:
    if key == "learned_minilm":
        return learned.MINILM_MAX_LEN * learned.MINILM_D_MODEL
    if key == "learned_random":
        return learned.MINILM_MAX_LEN * d
    if key == "t5":
        return params["num_buckets"] * n_heads
    return 0


def comparison_table(keys=None, *, n: int = 512, d: int = 64, n_heads: int = 8, train_len: int = 512) -> list[dict]:
    """``measure_scheme`` for every scheme in ``keys`` (default: the whole registry), in order."""
    if isinstance(keys, str):
        keys = [keys]
    try:
        keys = list(SCHEMES) if keys is None else [get_scheme(k).key for k in keys]
    except TypeError as exc:  # not iterable
        raise ValueError(f"keys must be None or a list of scheme keys, got {keys!r}") from exc
    return [measure_scheme(k, n=n, d=d, n_heads=n_heads, train_len=train_len) for k in keys]
