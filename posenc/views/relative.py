"""Data for the T5 / ALiBi page: bucket ranges, the bucket-id matrix, ALiBi slopes and bias.

axes: n positions, i query (row), j key (column), rel = j - i (T5's sign), distance = i - j
(ALiBi's sign), H heads.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np
import pandas as pd

from posenc._validate import check_bool, check_int
from posenc.analysis.scores import position_scores
from posenc.charts.base import HEATMAP_CELLS, matrix_frame, stride_for
from posenc.registry import get_scheme
from posenc.schemes.relative import MAX_HEADS, alibi_slopes, t5_bucket, t5_bucket_matrix

# ----------------------------------------------------------------------------- result types
# One TypedDict per view: the keys a page reads, with their types.

class T5View(TypedDict):
    """What ``t5_view`` returns."""

    ranges: pd.DataFrame
    segments: pd.DataFrame
    display_max: int
    max_exact: int
    half: int
    buckets_used: int
    unused: list
    last_start: int
    matrix: pd.DataFrame
    step: int
    n: int
    exercise_rel: int
    exercise_bucket: int


class AlibiSlopesView(TypedDict):
    """What ``alibi_slopes_view`` returns."""

    frame: pd.DataFrame
    power: int
    extra: int
    exercise_head: int
    exercise_slope: float
    exercise_neg_log2: float


class AlibiMatrixView(TypedDict):
    """What ``alibi_matrix_view`` returns."""

    frame: pd.DataFrame
    step: int
    n: int
    train_len: int
    slope: float
    bias_at_train: float
    bias_far: float
    masked_share: float
    head: int


class AlibiHeadsView(AlibiMatrixView):
    """What ``alibi_heads_view`` returns: ``alibi_matrix_view`` of the chosen head, and every head's numbers."""

    slopes: list
    heads: pd.DataFrame


T5_MAX_N = 2048
ALIBI_MAX_TRAIN = 1024
EXTRAPOLATION = 4  # the ALiBi matrix is drawn out to 4 x the training length


def _square(M: np.ndarray):
    """Stride a square (n, n) matrix by one step both ways to <= HEATMAP_CELLS cells (diagonal kept)."""
    n = M.shape[0]
    step = stride_for(n, int(np.sqrt(HEATMAP_CELLS)))
    idx = np.arange(0, n, step)
    return idx, idx, M[::step, ::step], step


# ----------------------------------------------------------------------------- T5

def _ranges(dist: np.ndarray, buckets: np.ndarray, sign: int, open_bucket: int) -> list[dict]:
    """One row per bucket id produced on one side: the |rel| range it covers."""
    rows = []
    for b in np.unique(buckets):
        d = dist[buckets == b]
        lo, hi = int(d.min()), int(d.max())
        is_open = b == open_bucket
        rows.append({"bucket": int(b), "side": "past / self (rel ≤ 0)" if sign < 0 else "future (rel > 0)",
                     "dist_lo": lo, "dist_hi": None if is_open else hi, "open": bool(is_open)})
    return rows


def t5_distance_choices(num_buckets: int | None = None, bidirectional: bool = True) -> list[int]:
    """max_distance values offered on the page: powers of two and round numbers spanning the
    registry's range for T5's max_distance (4 .. 100000), including T5's 128 and 20 (a small, non-default example).

    Given ``num_buckets`` (and ``bidirectional``), only the values the registry allows with them: max_distance
    must exceed the distances mapped one-to-one (``Scheme.param_range``, the ParamSpec's ``lo_from``).
    """
    scheme = get_scheme("t5")
    spec = {p.name: p for p in scheme.params}["max_distance"]
    lo, hi = int(spec.lo), int(spec.hi)
    if num_buckets is not None:
        nb = check_int("num_buckets", num_buckets, lo=2)
        a, b = scheme.param_range("max_distance", {"num_buckets": nb, "bidirectional": check_bool("bidirectional", bidirectional)})
        lo, hi = int(np.ceil(a)), int(np.floor(b))
    values = {int(spec.lo), int(spec.hi), 20, 100, 1000, 10_000} | {2**k for k in range(2, 17)}
    return sorted(v for v in values if lo <= v <= hi)


def t5_view(bidirectional: bool, num_buckets: int, max_distance: int, n: int) -> T5View:
    """T5's bucket function, its ranges and its (n, n) bucket-id matrix.

    Returns {"ranges": DataFrame(bucket, side, kind, dist_lo, dist_hi (NaN = no upper end),
    rel_lo, rel_hi, covers) one row per bucket id produced, "segments": the same rows with
    finite display ends for the bucket-function chart (x from rel_lo - 0.5 to rel_hi + 0.5,
    open ranges drawn to +-display_max), "display_max": 2 max_distance, "max_exact",
    "half": buckets per side (num_buckets // 2 bidirectional, num_buckets causal),
    "buckets_used": distinct ids produced, "unused": ids never produced,
    "last_start": the smallest |rel| of the last (open) past bucket,
    "matrix": DataFrame(i, j, bucket) of t5_bucket_matrix strided to <= HEATMAP_CELLS, "step",
    "n", "exercise_rel": -20, "exercise_bucket": bucket(-20)}.
    """
    bidirectional = check_bool("bidirectional", bidirectional)
    nb = check_int("num_buckets", num_buckets, lo=2)
    md = check_int("max_distance", max_distance, lo=1)
    n = check_int("n", n, lo=2, hi=T5_MAX_N)
    kw = {"bidirectional": bidirectional, "num_buckets": nb, "max_distance": md}
    half = nb // 2 if bidirectional else nb
    max_exact = half // 2
    dist = np.arange(md + 1)  # (md + 1,) every |rel| up to max_distance; beyond it is the last bucket
    past = t5_bucket(-dist, **kw)  # (md + 1,)
    rows = _ranges(dist, past, -1, int(past[-1]))
    if bidirectional:
        future = t5_bucket(dist[1:], **kw)  # (md,)
        rows += _ranges(dist[1:], future, +1, int(future[-1]))
    ranges = pd.DataFrame(rows)
    ranges["kind"] = np.where(ranges["open"], "last (everything further)",
                              np.where(ranges["dist_lo"] < max_exact, "exact", "log-spaced"))
    sign = np.where(ranges["side"].str.startswith("future"), 1, -1)
    far = ranges["dist_hi"].astype("float64").fillna(2 * md).to_numpy()
    near = ranges["dist_lo"].to_numpy(dtype=np.float64)
    ranges["rel_lo"] = np.where(sign < 0, -far, near) + 0.0  # + 0.0: no "-0"
    ranges["rel_hi"] = np.where(sign < 0, -near, far) + 0.0
    ranges["covers"] = [
        f"|rel| ≥ {lo}" if op else (f"|rel| = {lo}" if lo == hi else f"|rel| {lo}–{int(hi)}")
        for lo, hi, op in zip(ranges["dist_lo"], ranges["dist_hi"], ranges["open"])
    ]
    ranges = ranges.drop(columns="open").sort_values(["bucket"]).reset_index(drop=True)
    ranges["dist_hi"] = ranges["dist_hi"].astype("float64")
    segments = ranges.assign(x_lo=ranges["rel_lo"] - 0.5, x_hi=ranges["rel_hi"] + 0.5)

    M = t5_bucket_matrix(n, **kw)  # (n, n) bucket(j - i)
    r, c, sub, step = _square(M)
    produced = set(ranges["bucket"])
    return {
        "ranges": ranges, "segments": segments, "display_max": 2 * md, "max_exact": max_exact, "half": half,
        "buckets_used": len(produced), "unused": sorted(set(range(nb)) - produced),
        "last_start": int(dist[past == past[-1]].min()),
        "matrix": matrix_frame(sub, r, c, row="i", col="j", value="bucket"), "step": step, "n": n,
        "exercise_rel": -20, "exercise_bucket": int(t5_bucket(-20, **kw)),
    }


def t5_before_reveal(view: T5View) -> T5View:
    """``view`` as the page draws it before its exercise (the bucket of ``exercise_rel``) is revealed: the buckets of
    distances from ``hidden_from`` = min(|exercise_rel|, max_exact) on wait.  Their rows leave ``ranges`` (a row left
    blank would be counted: ids are consecutive), their bars keep their place in ``segments`` with no bucket (NaN, not
    drawn, so the axis does not change at the reveal), and the matrix cells with |j - i| >= hidden_from hold NaN.
    Adds {"hidden_from"}.  What is left to predict from: the formula, the exact buckets and the three counts."""
    start = min(abs(int(view["exercise_rel"])), int(view["max_exact"]))
    ranges = view["ranges"]
    keep = (ranges["dist_hi"].notna() & (ranges["dist_hi"] < start)).to_numpy()  # an open (last) bucket never shows
    segments = view["segments"].copy()
    segments["bucket"] = segments["bucket"].astype(np.float64).where(keep)
    segments["covers"] = segments["covers"].where(keep, "")
    matrix = view["matrix"].copy()
    near = np.abs(matrix["j"].to_numpy(dtype=np.float64) - matrix["i"].to_numpy(dtype=np.float64)) < start
    matrix["bucket"] = matrix["bucket"].astype(np.float64).where(near)
    return view | {"ranges": ranges[keep].reset_index(drop=True), "segments": segments, "matrix": matrix,
                   "hidden_from": start}


# ----------------------------------------------------------------------------- ALiBi

def alibi_slopes_view(n_heads: int) -> AlibiSlopesView:
    """ALiBi slopes of every head, H = ``n_heads``.

    {"frame": DataFrame(head (1-based), slope m, neg_log2 (-log2 m), group), "power": c, the
    largest power of two <= H, "extra": H - c (heads taking the odd slopes of the 2c sequence),
    "exercise_head": the first appended head (c + 1) if H is not a power of two, else
    max(1, H // 2), "exercise_slope": its slope, "exercise_neg_log2": -log2 of it}.
    """
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    m = alibi_slopes(H)  # (H,)
    c = 1 << (H.bit_length() - 1)
    group = np.where(np.arange(H) < c, f"2^(-8k/{c}) for k = 1…{c}", f"odd slopes of the {2 * c}-head sequence")
    frame = pd.DataFrame({"head": np.arange(1, H + 1, dtype=np.int32), "slope": m, "neg_log2": -np.log2(m), "group": group})
    k = c + 1 if H != c else max(1, H // 2)
    return {"frame": frame, "power": c, "extra": H - c, "exercise_head": k, "exercise_slope": float(m[k - 1]),
            "exercise_neg_log2": float(-np.log2(m[k - 1]))}


def alibi_slopes_before_reveal(frame: pd.DataFrame, head: int) -> pd.DataFrame:
    """The slopes frame of ``alibi_slopes_view`` with head ``head``'s slope and -log2 m blanked (NaN: no bar, an empty
    cell), as the page draws it before the exercise that asks for that slope is revealed.  The frame is copied."""
    out = frame.copy()
    asked = (out["head"] == check_int("head", head, lo=1, hi=len(out))).to_numpy()
    for col in ("slope", "neg_log2"):
        out[col] = out[col].astype(np.float64).mask(asked)
    return out


def alibi_matrix_view(n_heads: int, head: int, train_len: int, causal: bool) -> AlibiMatrixView:
    """ALiBi bias of one head over n = 4 x ``train_len`` positions, strided to <= HEATMAP_CELLS.

    The matrix is posenc.position_scores("alibi", n, n_heads=H, head=head-1, causal=causal), an
    O(n) Toeplitz view of -m_h |i - j| (causal: -inf where j > i), equal to
    posenc.alibi_bias(n, H, causal=causal)[head - 1] without the (H, n, n) tensor.
    Returns {"frame": DataFrame(i, j, bias) with masked (-inf) cells as NaN, "step", "n",
    "train_len", "slope": m_h, "bias_at_train": -m_h * train_len (query train_len after its key),
    "bias_far": -m_h * (n - 1), "masked_share": fraction of the n x n cells masked,
    "head": 1-based head}.
    """
    H = check_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    h = check_int("head", head, lo=1, hi=H)
    L = check_int("train_len", train_len, lo=1, hi=ALIBI_MAX_TRAIN)
    causal = check_bool("causal", causal)
    n = EXTRAPOLATION * L
    B = position_scores("alibi", n, n_heads=H, head=h - 1, causal=causal)  # (n, n) view
    r, c, sub, step = _square(B)
    sub = sub + 0.0  # a copy of the kept cells; turns the diagonal's -0.0 into 0.0
    m = float(alibi_slopes(H)[h - 1])
    return {
        "frame": matrix_frame(sub, r, c, row="i", col="j", value="bias"), "step": step, "n": n, "train_len": L,
        "slope": m, "bias_at_train": -m * L, "bias_far": -m * (n - 1),
        "masked_share": (n - 1) / (2 * n) if causal else 0.0, "head": h,
    }


def alibi_heads_view(n_heads: int, head: int, train_len: int, causal: bool) -> AlibiHeadsView:
    """``alibi_matrix_view`` of ``head``, whose frame also holds ``distance`` = -|i - j| (NaN where masked), and
    every head's numbers, so a page can show any head in the browser: head h's bias is m_h x distance.

    Adds {"slopes": [m_1, ..., m_H], "heads": DataFrame(head (1-based), slope, bias_at_train = -m_h L,
    bias_far = -m_h (n - 1))} to the one-head view (whose "frame" keeps the chosen head's bias).
    """
    view = alibi_matrix_view(n_heads, head, train_len, causal)
    frame = view["frame"].copy()
    i, j = frame["i"].to_numpy(dtype=np.float64), frame["j"].to_numpy(dtype=np.float64)
    frame["distance"] = np.where(np.isfinite(frame["bias"].to_numpy(dtype=np.float64)), -np.abs(i - j), np.nan)
    m = alibi_slopes(n_heads)  # (H,)
    heads = pd.DataFrame({"head": np.arange(1, m.size + 1, dtype=np.int32), "slope": m,
                          "bias_at_train": -m * view["train_len"], "bias_far": -m * (view["n"] - 1)})
    return view | {"frame": frame, "slopes": [float(x) for x in m], "heads": heads}
