"""The naive attempts from the story, each as an additive encoding of shape (n, d_model).

axes: n positions, d model dim.

Each attempt adds the same scalar (or sin/cos pair) to every channel of the token embedding,
exactly as the seed article writes it (e'_t = e_t + f(t)), so that every scheme in posenc has
one return shape per kind and the analyses need no special cases.

- raw_index:          f(t) = t                    unbounded
- index_over_length:  f(t) = (t + 1) / L          depends on the prompt length L
- single_sine:        f(t) = sin(w t)             periodic: sin(t) = sin(t + 2 pi k)
- sincos_pair:        [sin(w t), cos(w t)]        unique within one turn, repeats across turns

NOTE: index_over_length counts tokens from 1, as the seed does ("for length 2: 1/2, 2/2"),
so position 0 (the first token) gets 1/L; posenc positions stay 0-based everywhere.
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_float, check_int, check_memory, check_positions

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

    ``positions`` must lie in [0, length - 1] (0-based; the seed counts from 1).
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
