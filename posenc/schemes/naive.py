"""The naive attempts, each an additive encoding of shape (n, d_model).

axes: n positions, d model dim, m offsets.

These are the first ideas every introduction to positional encoding tries and discards before
the sinusoid of Vaswani et al. (arXiv:1706.03762).  Each adds the same scalar (or sin/cos pair)
to every channel of the token embedding, e'_t = e_t + f(t), so that every scheme in posenc has
one return shape per kind and the analyses need no special cases.

- raw_index:          f(t) = t                    unbounded
- index_over_length:  f(t) = (t + 1) / L          depends on the prompt length L
- single_sine:        f(t) = sin(w t)             periodic: sin(t) = sin(t + 2 pi k)
- sincos_pair:        [sin(w t), cos(w t)]        unique within one turn, repeats across turns

NOTE: index_over_length counts tokens from 1 ("for length 2: 1/2, 2/2"), so position 0 (the
first token) gets 1/L; posenc positions stay 0-based everywhere.
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_float, check_int, check_memory, check_positions
from posenc.schemes.kinds import Additive, always, even_width, never

MAX_D_MODEL = 8192
MAX_LENGTH = 10**7


def _broadcast(values: np.ndarray, d_model: int) -> np.ndarray:
    """Repeat a per-position scalar across d_model channels: (n,) -> (n, d_model)."""
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    check_memory("encoding", (values.size, d))
    return np.repeat(values[:, None], d, axis=1)  # (n, d)


def raw_index(positions, d_model: int) -> np.ndarray:
    """Attempt 1: add the index itself, PE(t) = t * ones(d_model); shape (n, d_model)."""
    pos = check_positions(positions)
    return _broadcast(pos, d_model)


def index_over_length(positions, d_model: int, *, length: int) -> np.ndarray:
    """Attempt 2: PE(t) = (t + 1) / L in every channel; shape (n, d_model).

    ``positions`` must lie in [0, length - 1] (0-based; the value counts tokens from 1).
    """
    L = check_int("length", length, lo=1, hi=MAX_LENGTH)
    pos = check_positions(positions, lo=0, hi=L - 1)
    return _broadcast((pos + 1.0) / L, d_model)


def single_sine(positions, d_model: int, *, omega: float = 1.0) -> np.ndarray:
    """Attempt 3: PE(t) = sin(omega * t) in every channel; shape (n, d_model)."""
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    pos = check_positions(positions)
    return _broadcast(np.sin(w * pos), d_model)


def sincos_pair(positions, d_model: int, *, omega: float = 1.0) -> np.ndarray:
    """Attempt 4: one frequency, [sin(w t), cos(w t)] repeated across channels; (n, d_model).

    Even columns hold sin, odd columns cos (the interleaved convention); every pair is the same
    point on the unit circle, so the geometry is that of the 2-D pair.
    """
    w = check_float("omega", omega, lo=0.0, hi=100.0, lo_open=True)
    d = check_int("d_model", d_model, lo=1, hi=MAX_D_MODEL)
    pos = check_positions(positions)
    check_memory("encoding", (pos.size, d))
    out = np.empty((pos.size, d), dtype=np.float64)  # (n, d)
    out[:, 0::2] = np.sin(w * pos)[:, None]
    out[:, 1::2] = np.cos(w * pos)[:, None]
    return out


def unit_circle_points(positions, *, omega: float = 1.0) -> np.ndarray:
    """The 2-D point (sin(w t), cos(w t)) of each position, shape (n, 2)."""
    return sincos_pair(positions, 2, omega=omega)


# ----------------------------------------------------------------------------- behaviours
# One signature per kind (posenc.schemes.kinds): encode(positions, d, *, seq_len, **params).

def _raw_index(positions, d, *, seq_len, **params):
    return raw_index(positions, d)


def _index_over_length(positions, d, *, seq_len, **params):
    return index_over_length(positions, d, length=seq_len)


def _single_sine(positions, d, *, seq_len, omega):
    return single_sine(positions, d, omega=omega)


def _sincos_pair(positions, d, *, seq_len, omega):
    return sincos_pair(positions, d, omega=omega)


def sincos_dot_profile(offsets, d_model: int, *, omega: float = 1.0) -> np.ndarray:
    """PE(p) . PE(p + k) of the sin+cos pair for even d_model: (d/2) cos(k omega), shape (m,)."""
    d = check_int("d_model", d_model, lo=2, hi=MAX_D_MODEL)
    if d % 2:
        raise ValueError(f"d_model must be even for the offset profile, got {d}")
    k = check_positions(offsets, name="offsets")  # (m,)
    return (d / 2) * np.cos(k * omega)


def _single_frequency(d, *, omega):
    return np.array([omega])


def _pair_frequencies(d, *, omega):
    return np.full(d // 2, float(omega))  # (h,) every pair turns at omega


RAW_INDEX = Additive(encode=_raw_index, offset_only=never, isometric=always)  # a translation by p
INDEX_OVER_LENGTH = Additive(encode=_index_over_length, offset_only=never, isometric=always)  # by p / L
SINGLE_SINE = Additive(encode=_single_sine, offset_only=never, isometric=never, frequencies=_single_frequency)
SINCOS_PAIR = Additive(encode=_sincos_pair, offset_only=even_width, isometric=even_width,
                       dot_profile=sincos_dot_profile,
                       frequencies=_pair_frequencies)
