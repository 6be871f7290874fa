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

from posenc.io._limits import (
    MAX_NPY_HEADER_BYTES,
    MAX_TABLE_COLUMNS,
    MAX_TABLE_ELEMENTS,
    MAX_TABLE_ROWS,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_MB,
    check_table_shape,
    table_limits,
)
from posenc.io._limits import as_bytes as _as_bytes
from posenc.io._limits import mb as _mb
from posenc.io.safetensors import (
    FLOAT_DTYPES,
    SUGGESTED_TENSOR_NAMES,
    read_safetensors,
    read_safetensors_entry,
    safetensors_tensor_names,
)

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_MB", "MAX_TABLE_ELEMENTS", "MAX_TABLE_ROWS", "MAX_TABLE_COLUMNS",
           "SUGGESTED_TENSOR_NAMES", "read_npy", "read_safetensors", "safetensors_tensor_names", "check_table_shape",
           "table_limits", "position_table", "validate_position_table", "read_position_table", "load_position_table"]


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
    # the header length field: u16 (version 1.0) or u32 (2.0), little-endian, after the 8 magic bytes
    width = 2 if version == (1, 0) else 4
    n_header = int.from_bytes(data[8 : 8 + width], "little") if len(data) >= 8 + width else 0
    if n_header > MAX_NPY_HEADER_BYTES:
        raise ValueError(
            f"the .npy header is {n_header:,} bytes long; numpy.save writes a header of a few hundred bytes "
            f"and numpy.load refuses one over {MAX_NPY_HEADER_BYTES:,} (this file is padded or not written by numpy.save)"
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

_KIND_NAMES = {
    "b": "booleans", "i": "integers", "u": "integers", "c": "complex numbers",
    "O": "Python objects", "U": "text", "S": "bytes", "M": "dates", "m": "time spans",
}


def position_table(arr, *, name: str) -> np.ndarray:
    """The one check of an uploaded table: ``arr`` as a C-ordered (max_len, d_model) float array, or ValueError.

    Requirements (``check_table_shape``): 2-D, 2 to MAX_TABLE_ROWS rows, 1 to MAX_TABLE_COLUMNS columns,
    at most MAX_TABLE_ELEMENTS values; floating point (integer, bool, complex and object arrays are
    refused); every value finite.  float16, float32 and float64 keep their dtype (a float16 table stays
    a quarter of its float64 size); wider floats (longdouble) become float64, where beyond its range
    they count as inf.
    """
    if not isinstance(arr, np.ndarray):
        try:
            arr = np.asarray(arr)
        except Exception:
            raise ValueError(f"{name}: could not be read as an array of numbers") from None
    if arr.ndim != 2:
        check_table_shape(arr.shape, name)  # raises: not 2-D
    kind = arr.dtype.kind
    if kind != "f":
        raise ValueError(
            f"{name}: holds {_KIND_NAMES.get(kind, 'non-numeric values')} (dtype {arr.dtype}); a position table must hold real "
            "floating-point numbers (float16, float32 or float64)"
        )
    check_table_shape(arr.shape, name)
    keep = arr.dtype.newbyteorder("=") if arr.dtype.itemsize <= 8 else np.dtype(np.float64)
    with np.errstate(over="ignore"):  # longdouble beyond float64 becomes inf, reported below
        out = np.ascontiguousarray(arr, dtype=keep)  # (max_len, d_model)
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


def validate_position_table(arr, *, name: str) -> np.ndarray:
    """``position_table`` widened to our own writable float64 copy of shape (max_len, d_model)."""
    return np.array(position_table(arr, name=name), dtype=np.float64, order="C")


# ----------------------------------------------------------------------------- entry point

_REFUSED_EXTENSIONS = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle")


def read_position_table(data: bytes, filename: str, tensor: str | None = None) -> tuple[np.ndarray, dict]:
    """Read an uploaded .npy or .safetensors position table, keeping its float dtype (``position_table``).

    Returns ``(table, info)``: ``table`` of shape (max_len, d_model), float16, float32 (also for
    bfloat16, exactly) or float64; ``info`` with keys format ('npy' | 'safetensors'), filename, tensor
    (None for .npy), dtype (original, e.g. 'float32' or 'bfloat16'), shape (original), max_len,
    d_model, bytes.  ``tensor`` selects a tensor in a .safetensors file (ignored for .npy).
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
    table = position_table(raw, name=where)
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


def load_position_table(
    data: bytes, filename: str, tensor: str | None = None
) -> tuple[np.ndarray, dict]:
    """Load an uploaded .npy or .safetensors position table as float64.

    ``read_position_table``, with ``table`` widened to float64 of shape (max_len, d_model).
    """
    table, info = read_position_table(data, filename, tensor)
    return np.array(table, dtype=np.float64, order="C"), info
