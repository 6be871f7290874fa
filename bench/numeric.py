"""Sections 1-3: encoding speed, score matrices, collisions."""

from __future__ import annotations

import time

import numpy as np
from scipy.spatial.distance import cdist

import posenc
from bench.timing import median_time
from posenc.schemes.sinusoidal import sinusoidal_direct


def seed_reference(seq_len: int, d_model: int) -> np.ndarray:
    """The numpy function printed in the article "Positional Encoding in Transformers", verbatim (full-grid angles, strided sin/cos)."""
    position = np.arange(seq_len)[:, None]  # (seq_len, 1)
    dim = np.arange(d_model)[None, :]  # (1, d_model)
    angle_rates = 1 / np.power(10000, (2 * (dim // 2)) / d_model)
    angles = position * angle_rates
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angles[:, 0::2])
    pe[:, 1::2] = np.cos(angles[:, 1::2])
    return pe


def encoding() -> list[dict]:
    rows = []
    for n, d in ((8192, 512), (1_000_000, 64)):
        pos = np.arange(n)
        x = np.arange(n * d // 2, dtype=np.float64).reshape(n, d // 2) * 1e-3  # same element count
        t_posenc = median_time(lambda: posenc.sinusoidal(pos, d))
        t_direct = median_time(lambda: sinusoidal_direct(pos, d))
        t_seed = median_time(lambda: seed_reference(n, d))
        t_bare = median_time(lambda: (np.sin(x), np.cos(x)))
        diff = float(np.max(np.abs(posenc.sinusoidal(pos, d) - seed_reference(n, d))))
        rows.append({
            "n": n, "d": d, "posenc_s": t_posenc, "posenc_direct_s": t_direct, "seed_reference_s": t_seed,
            "bare_sin_cos_s": t_bare, "speedup_vs_seed": t_seed / t_posenc, "ratio_to_bare": t_posenc / t_bare,
            "max_abs_diff_vs_seed": diff,
            "goal_met": bool(t_seed / t_posenc >= 1.5 and t_posenc / t_bare <= 1.3 and diff <= 1e-9),
        })
    return rows


def score_matrices(n: int = 4096, d: int = 128) -> list[dict]:
    rows = []
    for key in ("sinusoidal", "rope", "rope_yarn"):
        t_profile = median_time(lambda: posenc.position_scores(key, n, d=d))
        t_profile_copy = median_time(lambda: np.array(posenc.position_scores(key, n, d=d)))
        t_dense = median_time(lambda: posenc.dense_scores(key, n, d=d), repeats=3)
        S = posenc.position_scores(key, n, d=d)
        D = posenc.dense_scores(key, n, d=d)
        diff = float(np.max(np.abs(np.asarray(S) - D)))
        rows.append({
            "scheme": key, "n": n, "d": d, "profile_view_s": t_profile, "profile_materialised_s": t_profile_copy,
            "dense_s": t_dense, "speedup_view": t_dense / t_profile, "speedup_materialised": t_dense / t_profile_copy,
            "max_abs_diff": diff, "goal_met": bool(t_dense / t_profile >= 10 and diff <= 1e-9),
        })
    return rows


def _brute_closest(X: np.ndarray, chunk: int = 2000) -> float:
    best = np.inf
    for s in range(0, X.shape[0], chunk):
        D = cdist(X[s : s + chunk], X)  # (chunk, n)
        idx = np.arange(s, min(s + chunk, X.shape[0]))
        D[idx - s, idx] = np.inf
        best = min(best, float(D.min()))
    return best


def collisions() -> list[dict]:
    """posenc.collisions (offset structure where the scheme is shift-isometric) and the plain
    KD-tree closest pair, against brute force (cdist in chunks) at n = 20,000."""
    rows = []
    for key, d in (("sincos_pair", 2), ("sinusoidal", 16)):
        t0 = time.perf_counter()
        res = posenc.collisions(key, 1_000_000, d)
        t_big = time.perf_counter() - t0
        X = posenc.signature(key, np.arange(20_000), d)
        t_coll = median_time(lambda: posenc.collisions(key, 20_000, d), repeats=3)
        t_tree = median_time(lambda: posenc.closest_pair(X), repeats=3)
        t0 = time.perf_counter()
        brute = _brute_closest(X)
        t_brute = time.perf_counter() - t0
        row = {
            "scheme": key, "d": d, "n": 1_000_000, "method": res["method"], "closest_distance": res["distance"],
            "pair": [res["i"], res["j"]], "seconds_1e6": t_big, "collisions_20k_s": t_coll, "kdtree_20k_s": t_tree,
            "brute_20k_s": t_brute, "speedup_vs_brute": t_brute / t_coll, "kdtree_speedup_vs_brute": t_brute / t_tree,
            "agrees_with_brute": bool(abs(brute - posenc.collisions(key, 20_000, d)["distance"]) <= 1e-12
                                      and abs(brute - posenc.closest_pair(X)["distance"]) <= 1e-12),
        }
        if d == 2:  # the KD-tree itself over all 10^6 points (fast in two dimensions)
            big = posenc.signature(key, np.arange(1_000_000), d)
            t0 = time.perf_counter()
            kd = posenc.closest_pair(big)
            row["kdtree_1e6_s"] = time.perf_counter() - t0
            row["kdtree_1e6_agrees"] = bool(abs(kd["distance"] - res["distance"]) <= 1e-12)
        rows.append(row)
    return rows


def small_pairs() -> list[dict]:
    """closest_pair up to ``DENSE_ROWS`` rows: the Gram identity in blocks (the default there) against the
    KD-tree (forced), on the shipped learned table (MiniLM, 512 x 384) and on normal(0, 1) points of
    4,096 rows at 2 to 768 columns (a KD-tree's hard case: no structure), with brute force as the truth."""
    from posenc.analysis import geometry

    rng = np.random.default_rng(0)
    cases = [("learned_minilm table", posenc.signature("learned_minilm", np.arange(512), 384))]
    cases += [(f"normal(0, 1), {k} columns", rng.normal(size=(4096, k))) for k in (2, 16, 64, 384, 768)]
    rows = []
    for name, X in cases:
        bound = float(np.linalg.norm(X[1:] - X[:-1], axis=1).min())  # consecutive rows, the bound closest_pair passes
        t_gram = median_time(lambda X=X: posenc.closest_pair(X), repeats=3)
        gram = posenc.closest_pair(X)["distance"]
        t_tree = median_time(lambda X=X, b=bound: geometry.tree_closest(X, bound=b), repeats=3)
        tree = geometry.tree_closest(X, bound=bound)["distance"]
        brute = _brute_closest(X)
        rows.append({"points": name, "n": X.shape[0], "k": X.shape[1], "path": "gram" if geometry._dense(X) else "kd-tree",
                     "default_s": t_gram, "kdtree_s": t_tree, "speedup": t_tree / t_gram,
                     "agrees_with_brute": bool(abs(gram - brute) <= 1e-12 * max(brute, 1.0) and abs(tree - brute) <= 1e-12 * max(brute, 1.0))})
    return rows
