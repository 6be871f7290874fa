"""Argument guards shared by every public posenc function.

Each guard returns the cleaned value or raises ``ValueError`` with a message that names the
argument, the value it got and the range it allows, e.g.::

    d_model must be an integer in [1, 8192], got 0

Written once here so that every scheme and analysis speaks the same language about bad input
(the scipy.signal.windows pattern).  Nothing here imports streamlit or prints.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

# Largest single array any posenc function will allocate.  Requests beyond it raise ValueError
# instead of a MemoryError or an OOM kill on a shared demo server.
MEMORY_CAP_BYTES = 512 * 1024 * 1024

# Positions beyond this magnitude lose integer precision in float64 angle arithmetic long before
# they mean anything for a language model; the cap keeps messages honest.
MAX_ABS_POSITION = 1e12


def _fmt_range(lo, hi, lo_open: bool = False, hi_open: bool = False) -> str:
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    lo_s = "-inf" if lo is None else f"{lo:g}" if isinstance(lo, float) else str(lo)
    hi_s = "inf" if hi is None else f"{hi:g}" if isinstance(hi, float) else str(hi)
    return f"{left}{lo_s}, {hi_s}{right}"


def _shown(value, limit: int = 60) -> str:
    """repr(value), cut to ``limit`` characters: a message never quotes a 400-digit number whole."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4300-digit str limit
        text = f"an integer of about {value.bit_length() * 0.30103:,.0f} digits"
    return text if len(text) <= limit else f"{text[: limit - 25]}... ({len(text):,} characters)"


def check_int(name: str, value, *, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as a Python int in [lo, hi] or raise ValueError naming ``name``."""
    rng = _fmt_range(lo, hi)
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{name} must be an integer in {rng}, got {_shown(value)}")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        out = int(value)
    else:
        raise ValueError(f"{name} must be an integer in {rng}, got {_shown(value)}")
    if (lo is not None and out < lo) or (hi is not None and out > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {_shown(out)}")
    return out


def check_float(
    name: str,
    value,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the given interval or raise ValueError."""
    rng = _fmt_range(lo, hi, lo_open, hi_open)
    if isinstance(value, bool) or value is None or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number in {rng}, got {_shown(value)}")
    try:
        out = float(value)
    except OverflowError:  # an integer beyond float range (10**400)
        out = math.inf
    if not math.isfinite(out):
        raise ValueError(f"{name} must be a finite number in {rng}, got {_shown(value)}")
    too_low = lo is not None and (out <= lo if lo_open else out < lo)
    too_high = hi is not None and (out >= hi if hi_open else out > hi)
    if too_low or too_high:
        raise ValueError(f"{name} must be a finite number in {rng}, got {out:g}")
    return out


def check_choice(name: str, value, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``; otherwise list the valid ones."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {valid}, got {_shown(value)}")
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is a bool (numpy bools included)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def check_positions(
    positions,
    *,
    name: str = "positions",
    integer: bool = False,
    lo: float | None = None,
    hi: float | None = None,
    max_abs: float = MAX_ABS_POSITION,
) -> np.ndarray:
    """Return ``positions`` as a 1-D float64 array (shape (n,)), all finite.

    A scalar becomes shape (1,).  ``integer=True`` also demands whole numbers.  ``lo``/``hi``
    bound the values (inclusive).  An empty array is allowed: it gives n = 0 downstream.
    """
    try:
        arr = np.asarray(positions)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} must be a 1-D array of numbers, got {positions!r}") from exc
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a 1-D array of real numbers, got dtype {arr.dtype}")
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or 1-D array, got shape {arr.shape}")
    arr = np.atleast_1d(arr).astype(np.float64)  # (n,)
    if arr.size and not np.all(np.isfinite(arr)):
        bad = arr[~np.isfinite(arr)][0]
        raise ValueError(f"{name} must all be finite numbers, got {bad:g}")
    if arr.size and np.max(np.abs(arr)) > max_abs:
        raise ValueError(
            f"{name} must lie in [-{max_abs:g}, {max_abs:g}], got {arr[np.argmax(np.abs(arr))]:g}"
        )
    if integer and arr.size and not np.all(arr == np.round(arr)):
        bad = arr[arr != np.round(arr)][0]
        raise ValueError(f"{name} must be whole numbers, got {bad:g}")
    if lo is not None and arr.size and arr.min() < lo:
        raise ValueError(f"{name} must be in {_fmt_range(lo, hi)}, got {arr.min():g}")
    if hi is not None and arr.size and arr.max() > hi:
        raise ValueError(f"{name} must be in {_fmt_range(lo, hi)}, got {arr.max():g}")
    return arr


def check_memory(what: str, shape: tuple[int, ...], itemsize: int = 8) -> None:
    """Raise ValueError if an array of ``shape`` would exceed ``MEMORY_CAP_BYTES``."""
    nbytes = int(np.prod([int(s) for s in shape], dtype=object)) * itemsize
    if nbytes > MEMORY_CAP_BYTES:
        raise ValueError(
            f"{what} of shape {tuple(int(s) for s in shape)} would need {nbytes / 2**20:,.0f} MB, "
            f"above posenc's memory cap of {MEMORY_CAP_BYTES // 2**20} MB; "
            "ask for fewer positions or a smaller dimension"
        )
