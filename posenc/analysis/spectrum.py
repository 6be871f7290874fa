"""Frequency content of a position table along the position axis.

axes: n positions (rows), d channels (columns), f frequencies (n // 2 of them, 0 excluded).

For a table P of shape (n, d), each channel c is a signal over positions, x_c[p] = P[p, c].
We remove each channel's mean (the constant part carries no position), take the real FFT over
positions (``scipy.fft.rfft``, frequencies k / n cycles per position for k = 1 .. n // 2) and
average the power |X_c[k]|^2 over channels.  Normalised to sum to 1, ``share[k]`` is the
fraction of the table's variation along positions that oscillates at frequency k / n:
a smooth table puts its share at low frequencies, white noise spreads it evenly.
"""

from __future__ import annotations

import numpy as np

from posenc._lazy import load
from posenc._validate import check_float
from posenc.analysis.tables import check_table

CHUNK_ELEMENTS = 1 << 22  # table values transformed at once (bounds the complex spectrum of a big upload)


def position_spectrum(table) -> dict:
    """Mean power spectrum over channels along the position axis of ``table`` (n, d).

    Returns {"frequency": (f,) cycles per position k / n for k = 1 .. n // 2,
    "power": (f,) mean over channels of |rfft(x_c - mean(x_c))[k]|^2,
    "share": (f,) power / power.sum() (zeros if the table is constant along positions),
    "n": int}.  By Parseval, sum_k w_k power[k] = n^2 * mean_c var(x_c) (population variance),
    with w_k = 2 except w = 1 for the Nyquist bin of an even n.
    """
    fft = load("scipy.fft")  # imported when first needed
    T = check_table(table)
    n, d = T.shape
    power = np.zeros(n // 2)  # (f,)
    chunk = max(1, CHUNK_ELEMENTS // n)  # channels per block
    for c0 in range(0, d, chunk):  # channel blocks keep the complex spectrum small for big uploads
        block = T[:, c0 : c0 + chunk]  # (n, c)
        X = fft.rfft(block - block.mean(axis=0), axis=0)  # (n // 2 + 1, c)
        power += np.sum(np.abs(X[1:]) ** 2, axis=1)  # k = 0 is the removed mean
    power /= d  # mean over channels
    freq = fft.rfftfreq(n)[1:]  # (f,) cycles per position
    total = float(power.sum())
    share = power / total if total > 0 else np.zeros_like(power)
    return {"frequency": freq, "power": power, "share": share, "n": n}


def median_frequency(freq, share) -> float:
    """The lowest frequency below or at which at least half of ``share`` lies (nan if share is 0)."""
    f = np.asarray(freq, dtype=np.float64)
    s = np.asarray(share, dtype=np.float64)
    if f.shape != s.shape or f.ndim != 1 or f.size == 0:
        raise ValueError(f"freq and share must be 1-D arrays of one shape, got {f.shape} and {s.shape}")
    total = s.sum()
    if total <= 0:
        return float("nan")
    k = int(np.searchsorted(np.cumsum(s) / total, 0.5 - 1e-12))
    return float(f[min(k, f.size - 1)])


def low_frequency_share(freq, share, *, max_frequency: float) -> float:
    """Fraction of ``share`` at frequencies <= ``max_frequency`` (cycles per position)."""
    fmax = check_float("max_frequency", max_frequency, lo=0.0, hi=0.5)
    f = np.asarray(freq, dtype=np.float64)
    s = np.asarray(share, dtype=np.float64)
    if f.shape != s.shape or f.ndim != 1:
        raise ValueError(f"freq and share must be 1-D arrays of one shape, got {f.shape} and {s.shape}")
    total = s.sum()
    return float(s[f <= fmax].sum() / total) if total > 0 else 0.0
