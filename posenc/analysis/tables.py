"""Analyses of an arbitrary learned position table (max_len, d): the bundled one or an upload.

axes: n positions (rows), d model dim (columns).

A learned absolute table is only defined at its rows: the analyses here never invent values
past the last row, and they report "undefined" where a measurement would need one.
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_choice, check_int, check_memory
from posenc.analysis.geometry import closest_pair
from posenc.analysis.scores import cosine_from_gram, translation_invariance
from posenc.registry import upload_key
from posenc.schemes.learned import learned_lookup

METRICS = ("dot", "cosine")


def check_table(table) -> np.ndarray:
    """``table`` as a float64 (max_len >= 2, d_model >= 1) array of finite numbers, or ValueError."""
    try:
        T = np.asarray(table, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"table must be a 2-D array of numbers, got {type(table).__name__}") from exc
    if T.ndim != 2 or T.shape[0] < 2 or T.shape[1] < 1:
        raise ValueError(f"table must be a 2-D (max_len >= 2, d_model >= 1) array, got shape {T.shape}")
    if not np.all(np.isfinite(T)):
        raise ValueError("table must contain only finite numbers")
    return T


def table_signature(table, positions) -> np.ndarray:
    """Rows of ``table`` at ``positions``: (m, d).  Past the last row raises ValueError (max_len)."""
    return learned_lookup(check_table(table), positions)


def table_scores(table, n: int, *, metric: str = "cosine") -> np.ndarray:
    """Dot product or cosine similarity of rows 0 .. n-1: ndarray (n, n)."""
    T = check_table(table)
    n = check_int("n", n, lo=1, hi=T.shape[0])
    metric = check_choice("metric", metric, METRICS)
    check_memory("score matrix", (n, n))
    E = T[:n]  # (n, d)
    S = E @ E.T  # (n, n)
    return cosine_from_gram(S) if metric == "cosine" else S


UNIQUE_RATIO = 0.1  # unique: the closest pair is at least this fraction of the typical neighbour distance


def uniqueness(points: np.ndarray, closest: float) -> dict:
    """{"neighbour_distance": median |f(p+1) - f(p)| over the rows of ``points`` (n, k), "unique":
    the closest pair of distinct rows is at least UNIQUE_RATIO x that (and not 0)}: no two
    positions look more alike than a tenth of what tells neighbours apart."""
    P = np.asarray(points, dtype=np.float64)
    steps = np.linalg.norm(np.where(np.isfinite(P[1:] - P[:-1]), P[1:] - P[:-1], 0.0), axis=1)  # (n - 1,)
    neighbour = float(np.median(steps)) if steps.size else 0.0
    return {"neighbour_distance": neighbour, "unique": bool(closest > 0 and closest >= UNIQUE_RATIO * neighbour)}


def measure_table(table, *, name: str, n: int = 512, train_len: int = 512) -> dict:
    """The comparison-table row of a learned table, same keys as posenc.compare.measure_scheme.

    bounded: finite values, defined only at its rows; continuous: no (a lookup, integer positions
    only); unique: closest pair of rows 0 .. min(n, max_len) - 1, against the median neighbour
    distance (``uniqueness``); length_change: 0 (the row does
    not depend on the prompt length); relative: translation invariance of the dot-product matrix;
    extrapolates: defined at 4L only if the table has that many rows.
    """
    T = check_table(table)
    n = check_int("n", n, lo=4, hi=4096)
    L = check_int("train_len", train_len, lo=4, hi=4096)
    rows, d = T.shape
    m = min(n, rows)
    best = closest_pair(T[:m])
    S = T[:m] @ T[:m].T
    ti = translation_invariance(S)
    spread = float(S.max() - S.min())
    defined_4l = 4 * L <= rows
    max_abs = float(np.abs(T).max())
    return {
        "key": upload_key(name), "name": name, "kind": "additive", "d": int(d),
        "max_abs_at_1e6": max_abs if rows > 10**6 else float("nan"),
        "max_abs_near": float(np.abs(T[: min(rows, 1001)]).max()),
        "bounded": True,
        "max_slope": float("nan"), "slope_length_change": float("nan"), "continuous": False,
        "closest_distance": best["distance"], "closest_i": best["i"], "closest_j": best["j"],
        **uniqueness(T[:m], best["distance"]),
        "length_change": 0.0,
        "translation_invariance": ti, "score_spread": spread,
        "relative": bool(ti <= 1e-6 and spread > 1e-9),
        "defined_at_4L": bool(defined_4l),
        "learned_parameters": int(rows * d),
        "enters": "input embedding", "models": "uploaded table", "paper": f"your upload ({rows} x {d})", "year": None,
        "n_measured": m,
    }
