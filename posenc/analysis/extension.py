"""What a context extension does to attention, measured: per-pair bands, short-range fidelity, long range.

axes: d head_dim, h = d / 2 pairs, S seeded random samples, D distances (key - query), n context lengths.

Every function takes frequencies (``inv_freq`` of the method and of plain RoPE) and the factor
the method multiplies every logit by (``logit_scale`` = attention_factor^2, times DeepSeek's
softmax mscale^2), so it measures a classic method and a pasted model the same way.

Score of a query q at position i and a key k at i + D, with pair (a, b) of each:

    s(D) = logit_scale * sum_k [(q_a k_a + q_b k_b) cos(D theta_k) + (q_b k_a - q_a k_b) sin(D theta_k)]
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np

from posenc._kept import Kept
from posenc._trig import MIN_ROWS, evenly_spaced, sincos_outer
from posenc._validate import check_float, check_int, check_positions
from posenc.schemes.rotary import pair_views

MAX_SAMPLES = 4096
ENTROPY_SAMPLES = 24  # queries whose attention entropy is measured
BLOCK_KEYS = 256  # keys sampled per block of context lengths
ENTROPY_MAX_LEN = 10**8  # the entropy is measured out to min(target, this)
TIME_BUDGET_S = 8.0  # an analysis that runs longer stops with a ValueError
CHUNK = 8192
LONG_RANGE_KEPT = 64  # long_range results kept per process (a few kB each): a method's curves are computed once
_KEPT = Kept(LONG_RANGE_KEPT)


def _freqs(inv_freq, name: str = "inv_freq") -> np.ndarray:
    inv = check_positions(inv_freq, name=name, max_abs=1e6)
    if inv.size < 1 or np.any(inv < 0):
        raise ValueError(f"{name} must be a non-empty list of frequencies >= 0, got {inv.size} entries")
    return inv


def pair_bands(theta, inv_freq, trained: int) -> dict:
    """Per pair: wavelength 2 pi / theta, theta'/theta, and its band against the trained length L.

    "turns within L": wavelength <= L (the pair completed a turn in training: a method should
    keep it); "slower than L": the pair never completed a turn in training (a method may
    interpolate it).  Returns {"wavelength", "ratio", "fast" (bool), "kept_max_change" = max
    |theta'/theta - 1| over fast pairs (nan if none), "slow_range" = (min, max) of theta'/theta over
    slow pairs}.  Pairs with theta = 0 (proportional RoPE's unrotated ones) are left out.
    """
    th, inv = _freqs(theta, "theta"), _freqs(inv_freq)
    if th.shape != inv.shape:
        raise ValueError(f"theta and inv_freq must have the same length, got {th.size} and {inv.size}")
    L = check_int("trained length", trained, lo=1)
    ok = th > 0
    wl = 2 * np.pi / th[ok]
    ratio = inv[ok] / th[ok]
    fast = wl <= L
    return {"wavelength": wl, "ratio": ratio, "fast": fast,
            "kept_max_change": float(np.max(np.abs(ratio[fast] - 1))) if fast.any() else float("nan"),
            "slow_range": (float(ratio[~fast].min()), float(ratio[~fast].max())) if (~fast).any() else (float("nan"),) * 2}


def random_qk(d: int, n_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(q, k), each (S, d) standard normal from ``np.random.default_rng(seed)`` (q first)."""
    rng = np.random.default_rng(check_int("seed", seed, lo=0, hi=2**32 - 1))
    S = check_int("n_samples", n_samples, lo=1, hi=MAX_SAMPLES)
    return rng.standard_normal((S, d)), rng.standard_normal((S, d))


def _coefficients(q, k, h: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    first, second = pair_views(2 * h, layout)
    qa, qb, ka, kb = q[:, first], q[:, second], k[:, first], k[:, second]  # (S, h)
    return qa * ka + qb * kb, qb * ka - qa * kb


def _cos_outer(pos: np.ndarray, w: np.ndarray) -> np.ndarray:
    """cos of outer(pos, w), bit for bit what ``sincos_outer`` returns as its second array, without the sines where it
    computes them directly (positions not evenly spaced, or few): half the transcendental calls of ``long_range``."""
    if w.size and pos.size >= MIN_ROWS and evenly_spaced(pos) is not None:
        return sincos_outer(pos, w)[1]
    return np.cos(np.multiply.outer(pos, w))


def offset_scores(inv_freq, q, k, distances, *, logit_scale: float = 1.0, layout: str = "half_split") -> np.ndarray:
    """s(D) of every sample at every distance: (S, m), logit_scale included."""
    inv = _freqs(inv_freq)
    dist = check_positions(distances, name="distances")
    A, B = _coefficients(np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64), inv.size, layout)
    sin, cos = sincos_outer(dist, inv)  # (m, h)
    return logit_scale * (A @ cos.T + B @ sin.T)


def short_range_fidelity(inv_ref, inv_freq, *, window: int, logit_ref: float = 1.0, logit_scale: float = 1.0,
                         n_samples: int = 256, seed: int = 0, layout: str = "half_split") -> dict:
    """|s_method(D) - s_ref(D)| / (|q| |k|) at D = 0 .. window, over seeded random q != k.

    Returns {"distance" (w+1,), "max" (w+1,) and "mean" (w+1,) over samples, "max_all", "mean_all"
    over samples and distances <= window, "n_samples", "seed"}.  Attention factors enter through
    ``logit_scale`` / ``logit_ref`` (YaRN's af^2 changes every score, even at D = 0).
    """
    ref, inv = _freqs(inv_ref, "inv_ref"), _freqs(inv_freq)
    if ref.shape != inv.shape:
        raise ValueError(f"inv_ref and inv_freq must have the same length, got {ref.size} and {inv.size}")
    w = check_int("window", window, lo=0, hi=65536)
    ls = check_float("logit_scale", logit_scale, lo=0.0, hi=1e4, lo_open=True)
    lr = check_float("logit_ref", logit_ref, lo=0.0, hi=1e4, lo_open=True)
    q, k = random_qk(2 * inv.size, n_samples, seed)
    dist = np.arange(w + 1, dtype=np.float64)
    norm = (np.linalg.norm(q, axis=1) * np.linalg.norm(k, axis=1))[:, None]  # (S, 1)
    diff = np.abs(offset_scores(inv, q, k, dist, logit_scale=ls, layout=layout)
                  - offset_scores(ref, q, k, dist, logit_scale=lr, layout=layout)) / norm  # (S, w+1)
    return {"distance": dist.astype(np.int64), "max": diff.max(axis=0), "mean": diff.mean(axis=0),
            "max_all": float(diff.max()), "mean_all": float(diff.mean()), "n_samples": int(q.shape[0]), "seed": int(seed)}


@functools.lru_cache(maxsize=8)
def _draws(d: int, T: int, S: int, m: int, seed: int, block: int, samples: int, max_len: int) -> tuple:
    """``long_range``'s random draws, which depend on the head size, the target, the sample counts and seed but not on
    the frequencies, the logit scale or rho: the methods of one comparison share them (drawn once, not once a method).
    In the order one generator draws them: q (S, d); the distances' noise (S, m'); each long block's key positions; the
    entropy's noise (keys, S2), one array (the same numbers as drawn chunk by chunk).  ``block``, ``samples`` and
    ``max_len`` are BLOCK_KEYS, ENTROPY_SAMPLES and ENTROPY_MAX_LEN, passed so that they are part of the cache's key.
    Read-only arrays: (q, dist, noise_d, lengths, pos, wts, ends, noise_e)."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((S, d))
    dist = np.concatenate([[0.0], np.unique(np.round(np.geomspace(1, T, m))).astype(np.float64)])
    noise_d = rng.standard_normal((S, dist.size))
    # entropy at context lengths n_1 < n_2 < ...: keys 0 .. n_1 - 1 all taken; each later block
    # [n_i, n_{i+1}) stratified-sampled with at most BLOCK_KEYS keys, each weighted by block size / keys,
    # so the partition function and the mean logit are unbiased sums (exact where a block is small)
    E = min(T, max_len)
    lengths = np.unique(np.round(np.geomspace(min(64, E), E, min(m, 64)))).astype(np.int64)
    pos, wts = [np.arange(lengths[0], dtype=np.float64)], [np.ones(int(lengths[0]))]
    for lo, hi in zip(lengths[:-1], lengths[1:]):
        size = int(hi - lo)
        if size <= block:
            pos.append(np.arange(lo, hi, dtype=np.float64))
            wts.append(np.ones(size))
        else:
            edges = lo + size * np.arange(block) / block
            pos.append(np.floor(edges + rng.random(block) * size / block))
            wts.append(np.full(block, size / block))
    ends = np.cumsum([p.size for p in pos])  # index after the last key of each length
    pos, wts = np.concatenate(pos), np.concatenate(wts)
    noise_e = rng.standard_normal((pos.size, min(samples, S)))
    out = (q, dist, noise_d, lengths, pos, wts, ends, noise_e)
    for a in out:
        a.flags.writeable = False
    return out


def long_range(inv_freq, *, target: int, logit_scale: float = 1.0, rho: float = 0.5, n_samples: int = 64, seed: int = 0,
               n_points: int = 160, quantiles=(5, 50, 95), deadline: float | None = None) -> dict:
    """Percentiles of the attention logit and of softmax entropy against distance, out to ``target``.

    Key model: q ~ N(0, I_d); the key at distance D is k_D = rho q + sqrt(1 - rho^2) e_D with e_D ~
    N(0, I_d) independent, so the logit is

        l(D) = logit_scale / sqrt(d) * (rho * sum_k |q_k|^2 cos(D theta_k) + sqrt(1 - rho^2) |q| z_D),

    z_D ~ N(0, 1) (a rotation of e_D is again standard normal).  The entropy at context length n is
    that of softmax(l(0), ..., l(n - 1)) for one query attending to n keys; ln n is uniform attention.
    Returns {"distance" (m,), "logit" {q: (m,)}, "length" (m2,), "entropy" {q: (m2,)}, "uniform" ln n,
    "entropy_len" (where the entropy stops: min(target, ENTROPY_MAX_LEN)), "n_samples", "n_entropy"}.

    The last LONG_RANGE_KEPT results are kept per process, keyed on every argument but ``deadline`` (the frequencies by
    their bytes): a page that adds a method (a pasted config) or moves a control of one method recomputes only the
    curves that changed.  Each call gets its own arrays.
    """
    inv = _freqs(inv_freq)
    T = check_int("target length", target, lo=2, hi=10**8)
    ls = check_float("logit_scale", logit_scale, lo=0.0, hi=1e4, lo_open=True)
    r = check_float("rho", rho, lo=0.0, hi=1.0)
    m = check_int("n_points", n_points, lo=2, hi=4096)
    S = check_int("n_samples", n_samples, lo=1, hi=MAX_SAMPLES)
    seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
    key = (inv.tobytes(), T, ls, r, m, S, seed, tuple(quantiles), BLOCK_KEYS, ENTROPY_SAMPLES, ENTROPY_MAX_LEN)
    kept = _KEPT.get(key)
    if kept is None:
        kept = _long_range(inv, T, ls, r, m, S, seed, tuple(quantiles), deadline)
        _KEPT.put(key, kept, most=LONG_RANGE_KEPT)
    return {k: ({p: a.copy() for p, a in v.items()} if isinstance(v, dict) else v.copy() if isinstance(v, np.ndarray) else v)
            for k, v in kept.items()}


def _long_range(inv: np.ndarray, T: int, ls: float, r: float, m: int, S: int, seed: int, qs: tuple,
                deadline: float | None) -> dict:
    d, h = 2 * inv.size, inv.size
    q, dist, noise_d, lengths, pos, wts, ends, noise_e = _draws(d, T, S, m, seed, BLOCK_KEYS, ENTROPY_SAMPLES, ENTROPY_MAX_LEN)
    w = (q[:, :h] ** 2 + q[:, h:] ** 2)  # (S, h) pair energies (layout-free: any pairing gives the same sums)
    qn = np.linalg.norm(q, axis=1)  # (S,)
    scale, noise = ls / math.sqrt(d), math.sqrt(max(0.0, 1 - r * r))
    cos = _cos_outer(dist, inv)  # (m, h)
    logit = scale * (r * (w @ cos.T) + noise * qn[:, None] * noise_d)  # (S, m)
    S2 = noise_e.shape[1]
    shift = scale * (r * qn[:S2] ** 2 + 8 * noise * qn[:S2])  # (S2,) an upper bound of the logits, w.h.p.
    Z, W = np.zeros((pos.size, S2)), np.zeros((pos.size, S2))
    stop = deadline if deadline is not None else time.monotonic() + TIME_BUDGET_S
    for start in range(0, pos.size, CHUNK):
        if time.monotonic() > stop:
            raise ValueError(f"the long-range analysis stopped after {TIME_BUDGET_S:g} s; lower the target length")
        sl = slice(start, start + CHUNK)
        c = _cos_outer(pos[sl], inv)  # (c, h)
        lg = scale * (r * (c @ w[:S2].T) + noise * qn[:S2] * noise_e[sl])  # (c, S2)
        e = np.exp(lg - shift) * wts[sl, None]
        Z[sl], W[sl] = e, lg * e
    cz, cw = np.cumsum(Z, axis=0)[ends - 1], np.cumsum(W, axis=0)[ends - 1]  # (n, S2)
    out = (np.log(cz) + shift - cw / cz).T  # (S2, n)
    return {"distance": dist.astype(np.int64), "logit": {p: np.percentile(logit, p, axis=0) for p in qs},
            "length": lengths, "entropy": {p: np.percentile(out, p, axis=0) for p in qs}, "uniform": np.log(lengths.astype(np.float64)),
            "entropy_len": int(min(T, ENTROPY_MAX_LEN)), "n_samples": int(q.shape[0]), "n_entropy": S2, "rho": r}
