"""Byte and size limits of what the dashboard reads (uploads) and writes (exports), in one place.

Upload size.  Streamlit's file uploader counts a megabyte as 10^6 bytes (its frontend refuses a file
above ``server.maxUploadSize`` x 1,000,000 bytes), so the loader's cap is the same 50,000,000 bytes and
every message states it in the same unit (``mb``: 1 MB = 10^6 bytes).  ``.streamlit/config.toml`` sets
``server.maxUploadSize = 50`` (= ``MAX_UPLOAD_MB``; a test reads the file and checks).

A valid position table (``check_table_shape``) is the one definition the loader checks once, at upload,
and the analyses of every page can take: 8 (the Similarity page compares at least 8 positions) to
``MAX_TABLE_ROWS`` rows, 1 to ``MAX_TABLE_COLUMNS`` columns (the Learned page draws the sinusoid of the
table's width, which posenc computes up to d = 8192), and at most ``MAX_TABLE_ELEMENTS`` values (16,777,216 = 2^24: 128 MiB as
float64 while a page analyses it; e.g. 4096 x 4096, or OPT-30B's 2050 x 7168).

Exports.  A single .npy export is at most ``EXPORT_MAX_BYTES`` (32 MiB, held in the server's memory
until the browser has fetched it): a larger array is exported as float32, and when that is still too
large, every k-th entry along each axis (``fit_export``).
"""

from __future__ import annotations

import math

import numpy as np

MAX_UPLOAD_MB = 50
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1000 * 1000
MAX_TABLE_ROWS = 1 << 20
MAX_TABLE_COLUMNS = 8192
MAX_TABLE_ELEMENTS = 1 << 24
MIN_TABLE_ROWS = 8  # the Similarity page compares at least 8 positions
MIN_TABLE_COLUMNS = 1
# numpy.save pads its header to a multiple of 64 bytes and numpy.load refuses one over 10,000 bytes
MAX_NPY_HEADER_BYTES = 10_000
EXPORT_MAX_BYTES = 32 * 2**20


def mb(nbytes: int) -> str:
    """Bytes in MB as the uploader counts them (1 MB = 10^6 bytes)."""
    return f"{nbytes / 1e6:.1f} MB"


def as_bytes(data, what: str) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise ValueError(f"{what}: expected the file contents as bytes, got {type(data).__name__}")


def table_limits() -> str:
    """The valid table shapes in words (for the upload box and the error messages)."""
    return (f"{MIN_TABLE_ROWS} to {MAX_TABLE_ROWS:,} rows (positions), {MIN_TABLE_COLUMNS} to {MAX_TABLE_COLUMNS:,} "
            f"columns, at most {MAX_TABLE_ELEMENTS:,} values")


def check_table_shape(shape, name: str) -> tuple[int, int]:
    """(rows, columns) of a valid position table's ``shape``, or ValueError saying which limit it breaks."""
    shape = tuple(int(s) for s in shape)
    if len(shape) != 2:
        raise ValueError(f"{name}: expected a 2-D table of shape (max_len, d_model), one row per position, "
                         f"but got a {len(shape)}-D array of shape {shape}")
    rows, cols = shape
    if not MIN_TABLE_ROWS <= rows <= MAX_TABLE_ROWS:
        raise ValueError(f"{name}: has {rows:,} row(s); a position table here has {MIN_TABLE_ROWS} to {MAX_TABLE_ROWS:,} "
                         "rows (one per position)")
    if not MIN_TABLE_COLUMNS <= cols <= MAX_TABLE_COLUMNS:
        raise ValueError(f"{name}: has {cols:,} column(s); a position table here has {MIN_TABLE_COLUMNS} to "
                         f"{MAX_TABLE_COLUMNS:,} columns (d_model)")
    if rows * cols > MAX_TABLE_ELEMENTS:
        raise ValueError(f"{name}: shape {shape} has {rows * cols:,} elements, more than the limit of "
                         f"{MAX_TABLE_ELEMENTS:,} for a position table")
    return rows, cols


def export_plan(shape, dtype) -> tuple[np.dtype, int, str]:
    """How an array of ``shape`` and ``dtype`` is exported: (dtype, stride k, what was changed or "").

    As it is when it fits in EXPORT_MAX_BYTES; else in single precision (float32 / complex64); else
    single precision with every k-th entry along each axis longer than 1, k the smallest that fits.
    """
    shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes <= EXPORT_MAX_BYTES:
        return dtype, 1, ""
    cap, full = f"{EXPORT_MAX_BYTES // 2**20} MiB", f"{nbytes / 2**20:.0f} MiB"
    small = {"f": np.dtype(np.float32), "c": np.dtype(np.complex64)}.get(dtype.kind, dtype)
    small = small if small.itemsize < dtype.itemsize else dtype
    if small != dtype and math.prod(shape) * small.itemsize <= EXPORT_MAX_BYTES:
        return small, 1, f"as {small} (the {dtype} array is {full}, over the {cap} cap)"
    k = 2
    while math.prod(-(-s // k) if s > 1 else s for s in shape) * small.itemsize > EXPORT_MAX_BYTES:
        k += 1
    return small, k, f"every {_ordinal(k)} entry along each axis, as {small} (the full {dtype} array {shape} is {full}, over the {cap} cap)"


def fit_export(arr) -> tuple[np.ndarray, str]:
    """``arr`` as it is exported (at most EXPORT_MAX_BYTES of data, ``export_plan``), and what was changed."""
    a = np.asarray(arr)
    dtype, k, note = export_plan(a.shape, a.dtype)
    if k > 1:
        a = a[tuple(slice(None, None, k) if s > 1 else slice(None) for s in a.shape)]
    return (a.astype(dtype) if a.dtype != dtype else a), note


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"
