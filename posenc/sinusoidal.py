"""Sinusoidal absolute positional encoding (Vaswani et al. 2017, arXiv:1706.03762 §3.5).

axes: n positions, d model dim (d_model), h = d // 2 frequency pairs.

    PE(p, 2i)   = sin(p * w_i)        w_i = base ** (-2i / d)
    PE(p, 2i+1) = cos(p * w_i)

Layouts (the two that circulate; both are a fixed permutation of the same columns):
- "interleaved" (the paper, DistilBERT/XLM): even columns sin, odd columns cos.
- "concatenated": [sin(w_0..w_{h-1}) | cos(w_0..w_{h-1})].  NOTE: we keep the paper's
  frequencies w_i = base^(-2i/d); tensor2tensor/fairseq/Whisper use base^(-i/(h-1)) instead,
  which is a different encoding, not just a different layout.
For odd d the last column is a lone sin(p * w_h) (h = d // 2) in both layouts, as the closed
form PE[p, j] = sin/cos(p / base^(2*(j//2)/d)) gives for the interleaved layout.
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_choice, check_float, check_int, check_memory, check_positions

LAYOUTS = ("interleaved", "concatenated")
MAX_D_MODEL = 8192


def sinusoid_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequency of each sin/cos column group, shape (ceil(d_model / 2),).

    w_i = base ** (-2i / d_model) for i = 0 .. ceil(d/2) - 1; for odd d the last entry belongs
    to the lone sine column.
    """
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    base = check_float("base", base, lo=1.0, hi=1e12, lo_open=True)
    i = np.arange((d + 1) // 2, dtype=np.float64)  # (ceil(d/2),)
    return np.power(base, -2.0 * i / d)


def sinusoid_wavelengths(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Wavelength 2*pi / w_i in positions of each frequency, shape (ceil(d_model / 2),).

    Runs geometrically from 2*pi (i = 0) up to 2*pi * base**((d-2)/d) for even d; the paper's
    "10000 * 2 pi" is only the limit (60611.48 at d = 512, not 62831.85).
    """
    return 2.0 * np.pi / sinusoid_frequencies(d_model, base=base)


BLOCK = 256  # rows per block of the angle-addition fast path


def _evenly_spaced(pos: np.ndarray) -> float | None:
    """The common step if ``pos`` is p0 + step * arange(n) exactly (n >= 2), else None."""
    if pos.size < 2:
        return None
    step = pos[1] - pos[0]
    return float(step) if np.array_equal(pos, pos[0] + step * np.arange(pos.size)) else None


def _sin_cos_blocks(p0: float, step: float, n_blocks: int, w: np.ndarray, sin_out: np.ndarray, cos_out: np.ndarray) -> None:
    """Fill sin/cos of (p0 + step * (k*BLOCK + j)) * w for k < n_blocks, j < BLOCK.

    NOTE: angle addition instead of n * h transcendental calls:
        sin(a + b) = sin a cos b + cos a sin b,   cos(a + b) = cos a cos b - sin a sin b
    with a = (p0 + step j) w (BLOCK rows) and b = step k BLOCK w (n_blocks rows).  Only
    (BLOCK + n_blocks) * h sines and cosines are evaluated; every output is one exact-sum of two
    products of correctly rounded values, so the error stays at a few ulp (no recurrence, no
    accumulation).  ``sin_out``/``cos_out`` are (n_blocks, BLOCK, h) views of the result.
    """
    j = p0 + step * np.arange(BLOCK, dtype=np.float64)  # (B,)
    k = (step * BLOCK) * np.arange(n_blocks, dtype=np.float64)  # (K,)
    a = np.multiply.outer(j, w)  # (B, h)
    b = np.multiply.outer(k, w)  # (K, h)
    sa, ca = np.sin(a)[None], np.cos(a)[None]  # (1, B, h)
    sb, cb = np.sin(b)[:, None], np.cos(b)[:, None]  # (K, 1, h)
    tmp = np.empty(sin_out.shape)  # (K, B, h)
    np.multiply(sa, cb, out=sin_out)
    np.multiply(ca, sb, out=tmp)
    np.add(sin_out, tmp, out=sin_out)
    np.multiply(ca, cb, out=cos_out)
    np.multiply(sa, sb, out=tmp)
    np.subtract(cos_out, tmp, out=cos_out)
    # the two-product sums can land one ulp outside [-1, 1] (e.g. cos at position 0 gave
    # 1.0000000000000002); the encoding is documented to lie in [-1, 1]
    np.clip(sin_out, -1.0, 1.0, out=sin_out)
    np.clip(cos_out, -1.0, 1.0, out=cos_out)


def sinusoidal(positions, d_model: int, *, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """Sinusoidal encoding of ``positions``: ndarray of shape (n, d_model), float64 in [-1, 1].

    ``positions`` may be any finite reals (fractional and negative positions are defined).
    ``layout`` is "interleaved" (the paper) or "concatenated" ([sin | cos]).
    Evenly spaced positions (the usual arange) take an angle-addition fast path that evaluates
    O(sqrt(n)) rows of sin/cos instead of n; other positions are evaluated directly.  Both agree
    to a few ulp of the angle (tested).
    """
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    layout = check_choice("layout", layout, LAYOUTS)
    pos = check_positions(positions)  # (n,)
    n = pos.size
    check_memory("sinusoidal encoding", (n, d))
    w = sinusoid_frequencies(d, base=base)  # (ceil(d/2),)
    h = d // 2
    out = np.empty((n, d), dtype=np.float64)  # (n, d)
    if layout == "interleaved":
        pairs = out[:, : 2 * h].reshape(n, h, 2)  # (n, h, 2) view: [..., 0] sin, [..., 1] cos
        sin_view, cos_view = pairs[:, :, 0], pairs[:, :, 1]  # (n, h) each
    else:
        sin_view, cos_view = out[:, :h], out[:, h : 2 * h]
    step = _evenly_spaced(pos)
    done = 0
    if step is not None and h and n >= 4 * BLOCK:
        n_blocks = n // BLOCK
        done = n_blocks * BLOCK
        _sin_cos_blocks(pos[0], step, n_blocks, w[:h],
                        sin_view[:done].reshape(n_blocks, BLOCK, h), cos_view[:done].reshape(n_blocks, BLOCK, h))
    if done < n and h:
        angles = np.multiply.outer(pos[done:], w[:h])  # (n - done, h)
        np.sin(angles, out=sin_view[done:])
        np.cos(angles, out=cos_view[done:])
    if d % 2:
        out[:, -1] = np.sin(pos * w[h])  # lone sine, no cos partner
    return out


def sinusoidal_direct(positions, d_model: int, *, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """The same encoding by direct evaluation of every sin and cos: (n, d_model).

    The reference the fast path of ``sinusoidal`` is tested and benchmarked against.
    """
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    layout = check_choice("layout", layout, LAYOUTS)
    pos = check_positions(positions)
    check_memory("sinusoidal encoding", (pos.size, d))
    w = sinusoid_frequencies(d, base=base)
    h = d // 2
    ang = np.multiply.outer(pos, w[:h])  # (n, h)
    s, c = np.sin(ang), np.cos(ang)
    if layout == "interleaved":
        body = np.stack([s, c], axis=2).reshape(pos.size, 2 * h)
    else:
        body = np.concatenate([s, c], axis=1)
    if d % 2:
        body = np.concatenate([body, np.sin(pos * w[h])[:, None]], axis=1)
    return body


def sinusoid_dot_profile(offsets, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """PE(p) . PE(p + k) for each offset k, shape (len(offsets),); even d_model only.

    For even d the dot product does not depend on p: sum_i cos(k * w_i).  (For odd d the lone
    sine column breaks this, so callers use the dense product instead.)
    """
    d = check_int("d_model", d_model, lo=2, hi=MAX_D_MODEL)
    if d % 2:
        raise ValueError(f"d_model must be even for the offset profile, got {d}")
    k = check_positions(offsets, name="offsets")  # (m,)
    w = sinusoid_frequencies(d, base=base)  # (h,)
    check_memory("offset profile", (k.size, w.size))
    return np.cos(np.multiply.outer(k, w)).sum(axis=1)  # (m,)
