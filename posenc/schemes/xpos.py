"""xPos: RoPE with a per-pair exponential scale (Sun et al. 2022, "A Length-Extrapolatable
Transformer", arXiv:2212.10554).

axes: n positions, d head_dim, h = d // 2 pairs, m offsets.

    q~_n = zeta^(n / B) * R_n q,     k~_m = zeta^(-m / B) * R_m k
    zeta_i = (2i / d + gamma) / (1 + gamma),   gamma = 0.4,  B = scale_base = 512

so q~_n . k~_m = sum_i zeta_i^((n - m) / B) [pair i of q^T R_(m - n) k]: the score still depends on
the offset alone, and each pair decays with distance (the fast pairs, small zeta, fastest).  Unlike
RoPE, the map is not an isometry of positions: |q~_n| shrinks as n grows.

NOTE: as torchscale's ``XPOS`` (microsoft/torchscale, torchscale/component/xpos_relative_position.py)
we rotate interleaved pairs by default (``rotate_every_two``) and scale queries up, keys down.
torchscale and lucidrains' rotary-embedding-torch centre the positions before scaling (so zeta^(-m/B)
cannot overflow in a long sequence); the scores do not change under centring, so we use the paper's
positions as given and refuse positions whose scale would overflow float64.
"""

from __future__ import annotations

import math

import numpy as np

from posenc._trig import sincos_outer
from posenc._validate import check_float, check_int, check_positions
from posenc.schemes.kinds import Rotary, never
from posenc.schemes.rotary import apply_rope, pair_views
from posenc.schemes.scaling import check_head_dim, default_inv_freq

MAX_LOG_SCALE = 700.0  # exp(700) ~ 1e304: the largest scale a float64 holds with room for a product


def xpos_zeta(head_dim: int, *, gamma: float = 0.4) -> np.ndarray:
    """The per-pair decay base zeta_i = (2i / d + gamma) / (1 + gamma), shape (d // 2,); all in (0, 1)."""
    d = check_head_dim(head_dim)
    g = check_float("gamma", gamma, lo=0.0, hi=100.0, lo_open=True)
    return (np.arange(0, d, 2, dtype=np.float64) / d + g) / (1.0 + g)  # (h,)


def xpos_scale(positions, head_dim: int, *, gamma: float = 0.4, scale_base: float = 512.0, sign: int = 1) -> np.ndarray:
    """zeta^(sign * p / B) for every position and pair, shape (n, d // 2); sign +1 for queries, -1 for keys."""
    pos = check_positions(positions)  # (n,)
    B = check_float("scale_base", scale_base, lo=1.0, hi=1e9)
    log_scale = sign * np.multiply.outer(pos / B, np.log(xpos_zeta(head_dim, gamma=gamma)))  # (n, h)
    if log_scale.size and np.max(log_scale) > MAX_LOG_SCALE:
        far = float(pos[np.argmax(np.max(log_scale, axis=1))])
        raise ValueError(
            f"positions: xPos scales {'queries' if sign > 0 else 'keys'} by zeta^({'+' if sign > 0 else '-'}p/{B:g}); "
            f"at position {far:g} that overflows float64 (|p| up to about "
            f"{MAX_LOG_SCALE * B / abs(math.log(xpos_zeta(head_dim, gamma=gamma)[0])):,.0f} here)"
        )
    return np.exp(log_scale)


def _scale_pairs(x: np.ndarray, scale: np.ndarray, layout: str) -> np.ndarray:
    """Multiply both channels of every pair by its scale: x (..., n, d), scale (n, h)."""
    first, second = pair_views(x.shape[-1], layout)
    out = x.copy()
    out[..., first] *= scale
    out[..., second] *= scale
    return out


def xpos_qk(q, k, positions, *, seq_len=None, base, layout, gamma, scale_base):
    """(q~, k~) at ``positions``: rotate as RoPE, then scale q by zeta^(p/B) and k by zeta^(-p/B)."""
    d = np.shape(q)[-1]
    inv = default_inv_freq(d, base)  # (h,)
    out = []
    for x, sign in ((q, 1), (k, -1)):
        if x is None:
            out.append(None)
            continue
        rotated = apply_rope(x, positions, inv, layout=layout)  # (..., n, d)
        out.append(_scale_pairs(rotated, xpos_scale(positions, d, gamma=gamma, scale_base=scale_base, sign=sign), layout))
    return out[0], out[1]


def xpos_profile(offsets, q, k, *, seq_len=None, base, layout, gamma, scale_base):
    """q~(i) . k~(i + D) in closed form, shape (m,): sum_i zeta_i^(-D/B) [(qa ka + qb kb) cos(D theta_i)
    + (qb ka - qa kb) sin(D theta_i)], independent of i."""
    off = check_positions(offsets, name="offsets")  # (m,) D = j - i
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    d = check_head_dim(q.size)
    B = check_float("scale_base", scale_base, lo=1.0, hi=1e9)
    inv = default_inv_freq(d, base)  # (h,)
    first, second = pair_views(d, layout)
    qa, qb, ka, kb = q[first], q[second], k[first], k[second]  # (h,)
    sin, cos = sincos_outer(off, inv)  # (m, h)
    decay = np.exp(np.multiply.outer(-off / B, np.log(xpos_zeta(d, gamma=gamma))))  # (m, h) zeta^(-D/B)
    return (decay * cos) @ (qa * ka + qb * kb) + (decay * sin) @ (qb * ka - qa * kb)


def _frequencies(d, *, seq_len=None, base, layout, gamma, scale_base):
    return default_inv_freq(check_int("head_dim", d, lo=2), base), 1.0


XPOS = Rotary(qk=xpos_qk, profile=xpos_profile, frequencies=_frequencies, isometric=never)
