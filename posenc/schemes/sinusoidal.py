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

import math

import numpy as np

from posenc._trig import sincos_outer
from posenc._validate import MAX_ABS_POSITION, check_choice, check_float, check_int, check_memory, check_positions
from posenc.schemes.kinds import Additive, even_width

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
    if h:
        sincos_outer(pos, w[:h], sin_view, cos_view)  # angle addition on evenly spaced positions
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
    return sincos_outer(k, w)[1].sum(axis=1)  # (m,)


def sinusoid_shift_matrix(k: float, d: int, *, base: float = 10000.0) -> np.ndarray:
    """The closed form of M_k with PE(p + k) = M_k PE(p) for the interleaved sinusoid (even d): (d, d).

    Block i acting on (sin, cos) is [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]].
    """
    d = check_int("d", d, lo=2, hi=1024)
    if d % 2:
        raise ValueError(f"d must be even for the closed-form shift matrix, got {d}")
    k = check_float("k", k, lo=-MAX_ABS_POSITION, hi=MAX_ABS_POSITION)
    w = sinusoid_frequencies(d, base=base)  # (h,)
    M = np.zeros((d, d))
    for i, wi in enumerate(w):
        c, s = math.cos(k * wi), math.sin(k * wi)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, s], [-s, c]]
    return M


def sinusoid_pair_columns(d_model: int, *, layout: str = "interleaved") -> np.ndarray:
    """The (sin, cos) column indices of each complete pair, shape (d // 2, 2)."""
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    layout = check_choice("layout", layout, LAYOUTS)
    h = np.arange(d // 2)
    if layout == "interleaved":
        return np.stack([2 * h, 2 * h + 1], axis=1)
    return np.stack([h, d // 2 + h], axis=1)


# ----------------------------------------------------------------------------- behaviour
# One signature per kind (posenc.schemes.kinds): encode(positions, d, *, seq_len, **params).

def _encode(positions, d, *, seq_len, base, layout):
    return sinusoidal(positions, d, base=base, layout=layout)


def _dot_profile(offsets, d, *, base, layout):
    return sinusoid_dot_profile(offsets, d, base=base)  # the layout permutes columns: no effect on dots


def _frequencies(d, *, base, layout):
    return sinusoid_frequencies(d, base=base)[: max(d // 2, 1)]


def _pair_columns(d, *, base, layout):
    return sinusoid_pair_columns(d, layout=layout)


SINUSOIDAL = Additive(
    encode=_encode, dot_profile=_dot_profile, frequencies=_frequencies, pair_columns=_pair_columns,
    offset_only=even_width, isometric=even_width,  # PE(p + k) = M_k PE(p), a rotation, when every column has a partner
)
