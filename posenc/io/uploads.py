"""Safe loading of user-uploaded learned position tables (.npy and .safetensors).

axes: n positions (rows, ``max_len``), d model dim (columns, ``d_model``).

A learned absolute table ``P`` has shape (max_len, d_model); the model adds row ``P[p]`` to
the token embedding at position ``p``.  Checkpoints store it under names such as
``wpe.weight`` (GPT-2) or ``embeddings.position_embeddings.weight`` (BERT).

Threat model: the bytes come from a workshop participant's upload on a shared server.  So:

- nothing is ever unpickled (``allow_pickle=False``; object dtypes are refused while parsing
  the .npy header, before ``np.load`` runs);
- every declared size (npy header shape, safetensors header length, shape, data_offsets) is
  checked against the caps and against the real byte count *before* anything is allocated;
- every failure is a ``ValueError`` whose message says what was wrong and what was expected;
  no ``struct``/``json``/numpy exception escapes.

Why a hand-written safetensors parser rather than ``safetensors.numpy.load``: the format is
tiny (u64 little-endian header length N, N bytes of JSON, raw little-endian C-order data with
``data_offsets`` relative to byte 8 + N; spec: the safetensors crate docs and
huggingface.co/docs/safetensors/metadata_parsing), parsing it ourselves lets every error name
the offending tensor and field, it decodes BF16 (which has no numpy dtype, so the
``safetensors.numpy`` loader cannot return it), and it avoids a native dependency in the
upload path.  The tests check our reader against files written by ``safetensors.numpy``.
"""

from __future__ import annotations

import io
import math

import numpy as np
from numpy.lib import format as npy_format

from posenc.io._limits import MAX_TABLE_ELEMENTS
from posenc.io._limits import as_bytes as _as_bytes
from posenc.io._limits import mb as _mb
from posenc.io.safetensors import (
    FLOAT_DTYPES,
    SUGGESTED_TENSOR_NAMES,
    read_safetensors,
    read_safetensors_entry,
    safetensors_tensor_names,
)

__all__ = ["MAX_UPLOAD_BYTES", "MAX_TABLE_ELEMENTS", "SUGGESTED_TENSOR_NAMES", "read_npy", "read_safetensors",
           "safetensors_tensor_names", "validate_position_table", "load_position_table"]

# Upload limit.  Keep in sync with `server.maxUploadSize = 50` (MB) in .streamlit/config.toml.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024


# --------------------------------------------------------------------------------------- .npy


def read_npy(data: bytes) -> np.ndarray:
    """Decode a .npy file without unpickling, checking the header before allocating.

    Returns the array as stored (any shape, numeric dtype).  Raises ValueError for pickled /
    object arrays, structured dtypes, truncated files and declared shapes over
    ``MAX_TABLE_ELEMENTS``.
    """
    data = _as_bytes(data, ".npy file")
    fp = io.BytesIO(data)
    try:
        version = npy_format.read_magic(fp)
    except Exception:
        raise ValueError(
            "this is not a .npy file: it does not start with the numpy magic bytes "
            "b'\\x93NUMPY' (save the table with numpy.save(path, table))"
        ) from None
    if version not in ((1, 0), (2, 0)):
        raise ValueError(
            f".npy format version {version[0]}.{version[1]} is not supported; "
            "numpy.save writes versions 1.0 and 2.0 for plain numeric arrays"
        )
    try:
        if version == (1, 0):
            shape, fortran_order, dtype = npy_format.read_array_header_1_0(fp)
        else:
            shape, fortran_order, dtype = npy_format.read_array_header_2_0(fp)
    except Exception:
        raise ValueError(
            "the .npy header is damaged or not a header numpy.save writes "
            "(expected a dict with 'descr', 'fortran_order' and 'shape')"
        ) from None
    if dtype.hasobject:
        raise ValueError(
            "this .npy file holds Python objects (dtype=object, stored with pickle); pickled "
            "data is never loaded here because unpickling can run arbitrary code. "
            "Save a plain float array: numpy.save(path, table.astype('float32'))"
        )
    if dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(
            f"this .npy file holds a structured dtype ({dtype}); expected a plain float array"
        )
    if any(int(s) < 0 for s in shape):
        raise ValueError(f"the .npy header declares a negative dimension in shape {tuple(shape)}")
    n_elements = math.prod(int(s) for s in shape)
    if n_elements > MAX_TABLE_ELEMENTS:
        raise ValueError(
            f"the .npy header declares shape {tuple(shape)} = {n_elements:,} elements, more than "
            f"the limit of {MAX_TABLE_ELEMENTS:,} elements for a position table"
        )
    need = n_elements * dtype.itemsize
    have = len(data) - fp.tell()
    if have < need:
        raise ValueError(
            f"the .npy file is truncated: its header declares shape {tuple(shape)} of {dtype} "
            f"({need:,} bytes of data) but only {have:,} bytes follow the header"
        )
    if have > need:
        raise ValueError(
            f"the .npy file has {have - need:,} unexpected bytes after the array data "
            f"(header declares shape {tuple(shape)} of {dtype}); it is damaged or not "
            "written by numpy.save"
        )
    try:
        return np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:  # should be unreachable after the checks above
        raise ValueError(f"numpy could not decode this .npy file ({exc})") from None


# ------------------------------------------------------------------------------- validation


def validate_position_table(arr, *, name: str) -> np.ndarray:
    """Check a learned position table; return it as float64 of shape (max_len, d_model).

    Requirements: 2-D, floating point (integer, bool, complex and object arrays are refused),
    at least 2 rows and 1 column, at most ``MAX_TABLE_ELEMENTS`` elements, all values finite.
    """
    if not isinstance(arr, np.ndarray):
        try:
            arr = np.asarray(arr)
        except Exception:
            raise ValueError(f"{name}: could not be read as an array of numbers") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-D table of shape (max_len, d_model), one row per position, "
            f"but got a {arr.ndim}-D array of shape {arr.shape}"
        )
    kind = arr.dtype.kind
    if kind != "f":
        what = {
            "b": "booleans", "i": "integers", "u": "integers", "c": "complex numbers",
            "O": "Python objects", "U": "text", "S": "bytes", "M": "dates", "m": "time spans",
        }.get(kind, "non-numeric values")
        raise ValueError(
            f"{name}: holds {what} (dtype {arr.dtype}); a position table must hold real "
            "floating-point numbers (float16, float32 or float64)"
        )
    max_len, d_model = arr.shape
    if max_len < 2:
        raise ValueError(
            f"{name}: has {max_len} row(s); a position table needs at least 2 positions"
        )
    if d_model < 1:
        raise ValueError(f"{name}: has 0 columns; a position table needs at least 1 dimension")
    if arr.size > MAX_TABLE_ELEMENTS:
        raise ValueError(
            f"{name}: shape {arr.shape} has {arr.size:,} elements, more than the limit of "
            f"{MAX_TABLE_ELEMENTS:,}"
        )
    with np.errstate(over="ignore"):  # longdouble beyond float64 becomes inf, reported below
        out = np.array(arr, dtype=np.float64, order="C")  # (max_len, d_model), our own copy
    finite = np.isfinite(out)  # (max_len, d_model)
    if not finite.all():
        n_nan = int(np.isnan(out).sum())
        n_inf = int(np.isinf(out).sum())
        row, col = (int(v) for v in np.argwhere(~finite)[0])
        raise ValueError(
            f"{name}: contains {n_nan + n_inf} non-finite value(s) ({n_nan} NaN, {n_inf} inf); "
            f"the first is at row {row}, column {col}. A position table must contain only "
            "finite numbers"
        )
    return out


# ----------------------------------------------------------------------------- entry point

_REFUSED_EXTENSIONS = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle")


def load_position_table(
    data: bytes, filename: str, tensor: str | None = None
) -> tuple[np.ndarray, dict]:
    """Load an uploaded .npy or .safetensors position table.

    Returns ``(table, info)``: ``table`` float64 of shape (max_len, d_model); ``info`` with
    keys format ('npy' | 'safetensors'), filename, tensor (None for .npy), dtype (original,
    e.g. 'float32' or 'bfloat16'), shape (original), max_len, d_model, bytes.
    ``tensor`` selects a tensor in a .safetensors file (ignored for .npy).
    """
    if not isinstance(filename, str) or not filename:
        raise ValueError(f"filename must be a non-empty string, got {filename!r}")
    data = _as_bytes(data, repr(filename))
    if len(data) == 0:
        raise ValueError(
            f"{filename!r} is empty (0 bytes); upload a .npy or .safetensors file holding a "
            "2-D position table"
        )
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            f"{filename!r} is {_mb(len(data))} ({len(data):,} bytes); the upload limit is "
            f"{_mb(MAX_UPLOAD_BYTES)} ({MAX_UPLOAD_BYTES:,} bytes)"
        )
    ext = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    where = f"{filename!r}"
    try:
        if ext == ".npy":
            raw, tname = read_npy(data), None
            dtype_name = str(raw.dtype)
        elif ext == ".safetensors":
            raw, tname, code = read_safetensors_entry(data, tensor)
            dtype_name = FLOAT_DTYPES[code][1]
            where = f"{filename!r} tensor {tname!r}"
        else:
            extra = (
                " PyTorch/pickle checkpoints are refused because loading them can run "
                "arbitrary code; export the table with numpy.save or safetensors."
                if ext in _REFUSED_EXTENSIONS else ""
            )
            raise ValueError(
                f"{filename!r}: unsupported file type {ext or '(no extension)'!r}; upload a "
                f".npy (numpy.save) or .safetensors file.{extra}"
            )
    except ValueError as exc:
        msg = str(exc)
        prefixed = msg if msg.startswith(repr(filename)) else f"{filename!r}: {msg}"
        raise ValueError(prefixed) from None
    table = validate_position_table(raw, name=where)
    info = {
        "format": ext[1:],
        "filename": filename,
        "tensor": tname,
        "dtype": dtype_name,
        "shape": tuple(int(s) for s in raw.shape),
        "max_len": int(table.shape[0]),
        "d_model": int(table.shape[1]),
        "bytes": len(data),
    }
    return table, info
