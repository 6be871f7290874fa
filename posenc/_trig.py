"""sin and cos of an outer product of positions and frequencies, fast on evenly spaced positions.

axes: n positions, h frequencies.

Every encoding and score profile in posenc evaluates sin(p w) and cos(p w) on a grid of
positions p times frequencies w.  When the positions are evenly spaced (p0 + step * i, the usual
arange), angle addition replaces n * h transcendental calls by (BLOCK + n / BLOCK) * h of them
plus four multiplies and two adds per element:

    sin(a + b) = sin a cos b + cos a sin b,   cos(a + b) = cos a cos b - sin a sin b

with a = (p0 + step j) w for j < BLOCK and b = step k BLOCK w for k < n / BLOCK.  Each output is
one sum of two products of correctly rounded values, so the error stays at a few ulp of the
angle (no recurrence, nothing accumulates); results are clipped to [-1, 1].
"""

from __future__ import annotations

import numpy as np

BLOCK = 256  # rows per block
MIN_ROWS = 4 * BLOCK  # below this, direct evaluation is as fast


def evenly_spaced(pos: np.ndarray) -> float | None:
    """The common step if ``pos`` (n,) is p0 + step * arange(n) exactly (n >= 2), else None."""
    if pos.size < 2:
        return None
    step = pos[1] - pos[0]
    return float(step) if np.array_equal(pos, pos[0] + step * np.arange(pos.size)) else None


def sincos_outer(pos: np.ndarray, w: np.ndarray, sin_out: np.ndarray | None = None, cos_out: np.ndarray | None = None):
    """(sin, cos) of outer(pos, w), each (n, h); written into ``sin_out``/``cos_out`` if given
    (they may be strided views, e.g. the even and odd columns of an encoding)."""
    n, h = pos.size, w.size
    sin_out = np.empty((n, h)) if sin_out is None else sin_out
    cos_out = np.empty((n, h)) if cos_out is None else cos_out
    step = evenly_spaced(pos)
    done = 0
    if step is not None and h and n >= MIN_ROWS:
        k_blocks = n // BLOCK
        done = k_blocks * BLOCK
        _blocks(float(pos[0]), step, k_blocks, w, sin_out[:done].reshape(k_blocks, BLOCK, h), cos_out[:done].reshape(k_blocks, BLOCK, h))
    if done < n and h:
        angles = np.multiply.outer(pos[done:], w)  # (n - done, h)
        np.sin(angles, out=sin_out[done:])
        np.cos(angles, out=cos_out[done:])
    return sin_out, cos_out


def _blocks(p0: float, step: float, k_blocks: int, w: np.ndarray, s_out: np.ndarray, c_out: np.ndarray) -> None:
    j = p0 + step * np.arange(BLOCK, dtype=np.float64)  # (B,)
    k = (step * BLOCK) * np.arange(k_blocks, dtype=np.float64)  # (K,)
    a = np.multiply.outer(j, w)  # (B, h)
    b = np.multiply.outer(k, w)  # (K, h)
    sa, ca = np.sin(a)[None], np.cos(a)[None]  # (1, B, h)
    sb, cb = np.sin(b)[:, None], np.cos(b)[:, None]  # (K, 1, h)
    tmp = np.empty(s_out.shape)  # (K, B, h)
    np.multiply(sa, cb, out=s_out)
    np.multiply(ca, sb, out=tmp)
    np.add(s_out, tmp, out=s_out)
    np.multiply(ca, cb, out=c_out)
    np.multiply(sa, sb, out=tmp)
    np.subtract(c_out, tmp, out=c_out)
    np.clip(s_out, -1.0, 1.0, out=s_out)  # a sum of two rounded products can exceed 1 by an ulp
    np.clip(c_out, -1.0, 1.0, out=c_out)
