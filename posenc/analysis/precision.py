"""RoPE in low precision against float64, out to 10^6 positions.

axes: n positions, h pairs, S samples.

Each mode says where rounding happens (ml_dtypes provides bfloat16):

- "float32": position, theta, the angle p * theta and cos/sin in float32 -- transformers' path
  (``LlamaRotaryEmbedding.forward`` computes freqs and cos/sin in float32 with autocast off);
- "float32 → bfloat16": as float32, then cos/sin rounded to bfloat16 (what a bf16 model multiplies by);
- "float16" / "bfloat16": position, theta, angle and cos/sin each rounded to that type.

A float16 or bfloat16 product is the correctly rounded product of the two rounded inputs (both
have at most 11 significant bits, so their float32 product is exact before rounding); cos and sin
are evaluated in float32 on the rounded angle and then rounded, as torch does for half types.
"""

from __future__ import annotations

import functools
import time

import ml_dtypes
import numpy as np

from posenc._validate import check_choice, check_float, check_int, check_positions

MODES = ("float32", "float32 → bfloat16", "float16", "bfloat16")
_TYPES = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
MAX_POSITION = 10**6
TIME_BUDGET_S = 8.0


def _r(x, t) -> np.ndarray:
    """x rounded to type t, returned as float64."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float64).astype(t).astype(np.float64)


def rope_cos_sin(positions, inv_freq, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) of outer(positions, inv_freq) computed as ``mode`` does, returned as float64: (n, h) each.

    Positions a type cannot hold (float16 above 65,504) give inf angles and NaN cos/sin."""
    check_choice("mode", mode, MODES)
    pos = check_positions(positions, max_abs=1e9)
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)
    t = _TYPES["float32" if mode.startswith("float32") else mode]
    with np.errstate(invalid="ignore"):  # inf (a position the type cannot hold) times an underflowed 0 is NaN
        ang = _r(np.multiply.outer(_r(pos, t), _r(inv, t)), t)  # (n, h) the rounded angle
        a32 = ang.astype(np.float32)
        c, s = np.cos(a32).astype(np.float64), np.sin(a32).astype(np.float64)
    out = ml_dtypes.bfloat16 if mode == "float32 → bfloat16" else t
    return _r(c, out), _r(s, out)


def _exact(positions, inv) -> tuple[np.ndarray, np.ndarray]:
    ang = np.multiply.outer(np.asarray(positions, dtype=np.float64), inv)
    return np.cos(ang), np.sin(ang)


def _err(positions, inv, mode, exact: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """max over pairs of |cos - cos64| and |sin - sin64| at each position, (n,); NaN counts as 2.  ``exact``: the
    float64 (cos, sin) at these positions and pairs, where the caller has them already."""
    c, s = rope_cos_sin(positions, inv, mode)
    c0, s0 = _exact(positions, inv) if exact is None else exact
    e = np.maximum(np.abs(c - c0), np.abs(s - s0))
    return np.max(np.where(np.isfinite(e), e, 2.0), axis=1)


def cos_error_profile(inv_freq, mode: str, *, max_position: int = MAX_POSITION, n_points: int = 120, block: int = 64) -> dict:
    """Worst cos/sin error against position: at each of ``n_points`` log-spaced positions p, the max over
    every pair and over positions p .. p + block - 1.  Returns {"position" (m,), "error" (m,)}."""
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)
    P = check_int("max_position", max_position, lo=2, hi=MAX_POSITION)
    starts = np.unique(np.round(np.geomspace(1, P, check_int("n_points", n_points, lo=2, hi=1024)))).astype(np.int64)
    pos = (starts[:, None] + np.arange(check_int("block", block, lo=1, hi=1024))).ravel()
    check_choice("mode", mode, MODES)
    err = _err(pos, inv, mode, _profile_exact(inv.tobytes(), pos.tobytes())).reshape(starts.size, -1).max(axis=1)
    return {"position": starts, "error": err}


@functools.lru_cache(maxsize=1)
def _profile_exact(inv: bytes, positions: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The float64 (cos, sin) of a profile's positions and pairs (given as their bytes): the same for every mode, so
    the four profiles of one head compute them once.  One entry, kept by the process: 8 MB at 64 pairs, 31 MB at the
    256 pairs of d = 512."""
    out = _exact(np.frombuffer(positions, dtype=np.int64), np.frombuffer(inv, dtype=np.float64))
    for a in out:
        a.flags.writeable = False
    return out


def first_identical_position(inv_freq, mode: str, *, limit: int = MAX_POSITION) -> int | None:
    """The first position p <= limit whose rotation (cos and sin of every pair) equals that of p + 1
    in ``mode`` -- from there two neighbouring tokens get the same position.  None if there is none."""
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)
    P = check_int("limit", limit, lo=1, hi=MAX_POSITION)
    check_choice("mode", mode, MODES)
    fast = float(inv[int(np.argmax(inv))])  # the fastest pair differs first; only its equal neighbours need the full check
    for p in _same_neighbours(fast, mode, P):
        ca, sa = rope_cos_sin([p, p + 1], inv, mode)
        if np.array_equal(ca[0], ca[1]) and np.array_equal(sa[0], sa[1]) or not np.all(np.isfinite(ca)):
            return int(p)
    return None


@functools.lru_cache(maxsize=64)
def _same_neighbours(theta: float, mode: str, limit: int) -> np.ndarray:
    """The first 4,096 positions p <= limit where one pair of frequency ``theta`` turns p and p + 1 by the same
    rounded cos and sin in ``mode`` (or cannot hold p + 1): a scan of every position, remembered by the pair's
    frequency, which plain RoPE's fastest pair keeps (1) whatever the head size and base."""
    pos = np.arange(limit + 2, dtype=np.float64)
    c, s = rope_cos_sin(pos, np.array([theta]), mode)
    same = (c[1:, 0] == c[:-1, 0]) & (s[1:, 0] == s[:-1, 0]) | ~np.isfinite(c[1:, 0])
    out = np.flatnonzero(same[: limit + 1])[:4096]
    out.flags.writeable = False  # shared by every caller
    return out


def first_error_above(inv_freq, mode: str, *, tol: float = 1e-3, limit: int = MAX_POSITION, chunk: int = 16384) -> int | None:
    """The first position p <= limit where some pair's cos or sin is off float64 by more than ``tol``
    (every position, every pair, scanned in order, in blocks doubling from 256 to ``chunk`` positions; None if it
    never is).  Stops with a ValueError after TIME_BUDGET_S seconds."""
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)
    tol = check_float("tol", tol, lo=0.0, hi=2.0, lo_open=True)
    P = check_int("limit", limit, lo=1, hi=MAX_POSITION)
    chunk = check_int("chunk", chunk, lo=1, hi=MAX_POSITION + 1)
    stop = time.monotonic() + TIME_BUDGET_S
    start, size = 0, min(256, chunk)  # small first: in half precision the error is above tol within a few positions
    while start <= P:
        if time.monotonic() > stop:
            raise ValueError(f"the precision scan stopped after {TIME_BUDGET_S:g} s at position {start:,}")
        end = min(P + 1, start + size)
        pairs = _pairs_that_may_exceed(inv, mode, tol, end)
        if pairs.any():  # else no pair can be off by more than tol before ``end``: nothing to compute
            pos = np.arange(start, end, dtype=np.float64)
            hit = np.flatnonzero(_err(pos, inv[pairs], mode) > tol)
            if hit.size:
                return int(pos[hit[0]])
        start, size = start + size, min(2 * size, chunk)
    return None


_U32 = 2.0**-24  # float32's unit roundoff
_COS32_SLACK = 2.0**-20  # numpy's float32 cos and sin: within 16 float32 ulps of 1 of the exact value at their argument


def _pairs_that_may_exceed(inv: np.ndarray, mode: str, tol: float, end: int) -> np.ndarray:
    """Which pairs can be off float64 by more than ``tol`` at some position below ``end``: (h,) bool.

    In "float32" a position below 2^24 is exact, fl(θ) = θ(1 + δ₁) and the angle fl(p·fl(θ)) = pθ(1 + δ₁)(1 + δ₂),
    |δ| ≤ 2⁻²⁴, so it is off pθ by at most pθ(2u + u²); |cos a − cos b| ≤ |a − b| (sin too), and cos/sin of the float32
    angle add at most _COS32_SLACK.  A pair with end·θ(2u + u²) + slack ≤ tol cannot exceed tol before ``end``: the
    scan skips it (at RoPE's defaults the float32 scan reaches p ≈ 20,000, where all but the fastest few pairs are
    provably within 10⁻³).  The other modes, and a tol within the slack, keep every pair."""
    if mode != "float32" or tol <= 2 * _COS32_SLACK or end > 2**24:
        return np.ones(inv.shape, dtype=bool)
    return end * np.abs(inv) * (2 * _U32 + _U32 * _U32) + _COS32_SLACK > tol  # a negative θ turns the other way


def score_error(inv_freq, mode: str, distances, *, n_samples: int = 32, seed: int = 0) -> np.ndarray:
    """max over seeded random q, k of |s_mode(D) - s64(D)| / (|q| |k|), (m,).

    s(D) = <R_D q, k> with q rotated at position D and k at position 0 (so the score of distance D);
    in ``mode`` the products q cos, q sin and their differences are rounded to the type of cos/sin,
    and the dot product accumulates in float32 (as a half-precision matmul does)."""
    inv = check_positions(inv_freq, name="inv_freq", max_abs=1e6)
    D = check_positions(distances, name="distances", lo=0, hi=MAX_POSITION)
    h = inv.size
    rng = np.random.default_rng(check_int("seed", seed, lo=0, hi=2**32 - 1))
    q, k = rng.standard_normal((2, check_int("n_samples", n_samples, lo=1, hi=1024), 2 * h))
    t = _TYPES["float32" if mode == "float32" else ("bfloat16" if mode.endswith("bfloat16") else mode)]
    c, s = rope_cos_sin(D, inv, mode)  # (m, h)
    c0, s0 = _exact(D, inv)
    qa, qb, ka, kb = _r(q[:, :h], t), _r(q[:, h:], t), _r(k[:, :h], t), _r(k[:, h:], t)  # (S, h)

    def score(cc, ss, rounding):
        ra = rounding(rounding(qa[:, None] * cc) - rounding(qb[:, None] * ss))  # (S, m, h)
        rb = rounding(rounding(qb[:, None] * cc) + rounding(qa[:, None] * ss))
        return np.sum((ra * ka[:, None]).astype(np.float32), axis=-1, dtype=np.float32) + \
            np.sum((rb * kb[:, None]).astype(np.float32), axis=-1, dtype=np.float32)

    low = score(np.nan_to_num(c, nan=0.0), np.nan_to_num(s, nan=0.0), lambda x: _r(x, t)).astype(np.float64)
    ref = np.sum(q[:, None, :h] * k[:, None, :h] * c0 - q[:, None, h:] * k[:, None, :h] * s0
                 + q[:, None, h:] * k[:, None, h:] * c0 + q[:, None, :h] * k[:, None, h:] * s0, axis=-1)  # (S, m)
    norm = (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))[:, None]
    err = np.abs(low - ref) / norm
    bad = ~np.all(np.isfinite(c), axis=1)  # positions the type cannot hold
    return np.where(bad[None], np.inf, err).max(axis=0)
