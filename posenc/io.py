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
import json
import math
import struct

import numpy as np
from numpy.lib import format as npy_format

# Upload limit.  Keep in sync with `server.maxUploadSize = 50` (MB) in .streamlit/config.toml.
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
# Largest table we accept: 2**25 elements = 256 MiB as float64 (e.g. 8192 x 4096).
MAX_TABLE_ELEMENTS = 32 * 1024 * 1024
# A safetensors JSON header longer than this is not a real header (the Rust crate uses 100 MB).
MAX_SAFETENSORS_HEADER_BYTES = 100 * 1000 * 1000

# Prefixes that wrap the same tensor in different model classes (GPT2LMHeadModel adds
# "transformer.", BertForPreTraining adds "bert.", ...).  A name is matched with or without them.
NAME_PREFIXES = ("transformer.", "bert.", "roberta.", "distilbert.", "model.")
# Suffixes that identify a learned absolute position table when no tensor name is given.
POSITION_TABLE_SUFFIXES = ("wpe.weight", "position_embeddings.weight")
SUGGESTED_TENSOR_NAMES = (
    "wpe.weight",  # GPT-2 hub file
    "transformer.wpe.weight",  # GPT-2 re-saved from GPT2LMHeadModel
    "embeddings.position_embeddings.weight",  # BertModel state_dict
    "bert.embeddings.position_embeddings.weight",  # BERT hub / BertForPreTraining
    "roberta.embeddings.position_embeddings.weight",  # RoBERTa (514 rows, offset 2)
    "distilbert.embeddings.position_embeddings.weight",  # DistilBERT
)

# safetensors dtype code -> (numpy dtype to read the raw bytes with, friendly name)
_ST_FLOAT_DTYPES = {
    "F64": ("<f8", "float64"),
    "F32": ("<f4", "float32"),
    "F16": ("<f2", "float16"),
    "BF16": ("<u2", "bfloat16"),  # decoded by bit shift, see _decode_bf16
}
_ST_INT_DTYPES = ("I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL")


def _mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MB"


def _as_bytes(data, what: str) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise ValueError(f"{what}: expected the file contents as bytes, got {type(data).__name__}")


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


# -------------------------------------------------------------------------------- safetensors


def _parse_safetensors_header(data: bytes) -> tuple[dict[str, dict], int]:
    """Return ({name: entry}, data_start).  Entries are structurally valid and in range."""
    if len(data) < 8:
        raise ValueError(
            f"the file is too short to be a .safetensors file: it has {len(data)} bytes, but "
            "a .safetensors file starts with an 8-byte header length"
        )
    (n_header,) = struct.unpack("<Q", data[:8])
    if n_header > MAX_SAFETENSORS_HEADER_BYTES:
        raise ValueError(
            f"the header length field says the JSON header is {n_header:,} bytes, which is not "
            f"plausible (limit {MAX_SAFETENSORS_HEADER_BYTES:,}); this is probably not a "
            ".safetensors file"
        )
    if n_header > len(data) - 8:
        raise ValueError(
            f"the header length field says the JSON header is {n_header:,} bytes, but only "
            f"{len(data) - 8:,} bytes follow the 8-byte length field; the file is truncated "
            "or not a .safetensors file"
        )
    try:
        header = json.loads(data[8 : 8 + n_header].decode("utf-8"))
    except Exception as exc:
        detail = f" ({exc.msg} at byte {exc.pos})" if isinstance(exc, json.JSONDecodeError) else ""
        raise ValueError(
            f"the .safetensors header is not valid JSON{detail}; the file is damaged or not "
            "a .safetensors file"
        ) from None
    if not isinstance(header, dict):
        raise ValueError(
            "the .safetensors header must be a JSON object mapping tensor names to "
            f"{{dtype, shape, data_offsets}}, but it is a {type(header).__name__}"
        )
    data_start = 8 + n_header
    data_len = len(data) - data_start
    entries: dict[str, dict] = {}
    for name, entry in header.items():
        if name == "__metadata__":  # optional {str: str} map, not a tensor
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"header entry for tensor {name!r} is not a JSON object")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in entry:
                raise ValueError(
                    f"tensor {name!r} is missing {key!r} in the header "
                    "(each entry needs dtype, shape and data_offsets)"
                )
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if not isinstance(dtype, str):
            raise ValueError(
                f"tensor {name!r}: dtype must be a string such as 'F32', got {dtype!r}"
            )
        if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
        ):
            raise ValueError(
                f"tensor {name!r}: shape must be a list of non-negative integers, got {shape!r}"
            )
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
        ):
            raise ValueError(
                f"tensor {name!r}: data_offsets must be a list of two integers [start, end], "
                f"got {offsets!r}"
            )
        start, end = offsets
        if start < 0 or end < 0:
            raise ValueError(f"tensor {name!r}: data_offsets {offsets} contain a negative offset")
        if end < start:
            raise ValueError(
                f"tensor {name!r}: data_offsets {offsets} end before they start (end < start)"
            )
        if end > data_len:
            raise ValueError(
                f"tensor {name!r}: data_offsets {offsets} are out of range: the data section "
                f"after the header is only {data_len:,} bytes long (file truncated?)"
            )
        entries[name] = {"dtype": dtype, "shape": [int(s) for s in shape], "data_offsets": offsets}
    return entries, data_start


def _strip_prefixes(name: str) -> str:
    stripped = True
    while stripped:
        stripped = False
        for prefix in NAME_PREFIXES:
            if name.startswith(prefix):
                name, stripped = name[len(prefix) :], True
    return name


def _is_table(entry: dict) -> bool:
    return entry["dtype"] in _ST_FLOAT_DTYPES and len(entry["shape"]) == 2


def safetensors_tensor_names(data: bytes, *, tables_only: bool = False) -> list[str]:
    """Sorted tensor names in a .safetensors file (``__metadata__`` excluded).

    ``tables_only=True`` keeps only 2-D floating-point tensors (position-table candidates).
    """
    entries, _ = _parse_safetensors_header(_as_bytes(data, ".safetensors file"))
    return sorted(n for n, e in entries.items() if not tables_only or _is_table(e))


def _available(entries: dict) -> str:
    tables = sorted(n for n, e in entries.items() if _is_table(e))
    if not tables:
        return "the file holds no 2-D floating-point tensors"
    shown = ", ".join(f"{n!r} {tuple(entries[n]['shape'])}" for n in tables[:20])
    more = f" and {len(tables) - 20} more" if len(tables) > 20 else ""
    return f"available 2-D float tensors: {shown}{more}"


def _resolve_name(entries: dict, name: str | None) -> str:
    if name is None:
        found = [n for n in entries if n.endswith(POSITION_TABLE_SUFFIXES)]
        if len(found) == 1:
            return found[0]
        if not found and len(entries) == 1:  # a file holding just one tensor: use it
            return next(iter(entries))
        why = "several tensors look like" if found else "no tensor looks like"
        raise ValueError(
            f"{why} a position table (names ending in 'wpe.weight' or "
            f"'position_embeddings.weight'); choose the tensor by name. {_available(entries)}"
        )
    if not isinstance(name, str):
        raise ValueError(f"tensor name must be a string, got {name!r}")
    if name in entries:
        return name
    matches = [n for n in entries if _strip_prefixes(n) == _strip_prefixes(name)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ValueError(
            f"tensor name {name!r} is ambiguous: it matches {sorted(matches)}; give the full name"
        )
    raise ValueError(f"no tensor named {name!r} in this .safetensors file; {_available(entries)}")


def _decode_bf16(u16: np.ndarray) -> np.ndarray:
    # bfloat16 is the top half of an IEEE float32: shift the 16 bits up and reinterpret.
    return (u16.astype(np.uint32) << 16).view(np.float32)


def _read_safetensors(data: bytes, name: str | None) -> tuple[np.ndarray, str, str]:
    """Return (array, resolved tensor name, safetensors dtype code)."""
    data = _as_bytes(data, ".safetensors file")
    entries, data_start = _parse_safetensors_header(data)
    if not entries:
        raise ValueError("this .safetensors file contains no tensors")
    resolved = _resolve_name(entries, name)
    entry = entries[resolved]
    code, shape, (start, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
    if code in _ST_INT_DTYPES:
        raise ValueError(
            f"tensor {resolved!r} has integer dtype {code}; a position table must hold "
            "floating-point numbers (F32, F16, BF16 or F64)"
        )
    if code not in _ST_FLOAT_DTYPES:
        raise ValueError(
            f"tensor {resolved!r} has dtype {code!r}, which this loader does not read; "
            "supported: F64, F32, F16, BF16"
        )
    n_elements = math.prod(shape)
    if n_elements > MAX_TABLE_ELEMENTS:
        raise ValueError(
            f"tensor {resolved!r} has shape {tuple(shape)} = {n_elements:,} elements, more "
            f"than the limit of {MAX_TABLE_ELEMENTS:,} elements for a position table"
        )
    raw_dtype = np.dtype(_ST_FLOAT_DTYPES[code][0])
    need = n_elements * raw_dtype.itemsize
    if end - start != need:
        raise ValueError(
            f"tensor {resolved!r}: shape {shape} of dtype {code} needs {need:,} bytes, but its "
            f"data_offsets [{start}, {end}] span {end - start:,} bytes"
        )
    flat = np.frombuffer(data, dtype=raw_dtype, count=n_elements, offset=data_start + start)
    arr = _decode_bf16(flat) if code == "BF16" else flat.astype(raw_dtype.newbyteorder("="))
    return arr.reshape(shape), resolved, code  # (*shape,), a fresh writable copy


def read_safetensors(data: bytes, name: str | None = None) -> np.ndarray:
    """Read one floating-point tensor from .safetensors bytes.

    ``name`` may be given with or without a ``NAME_PREFIXES`` prefix.  ``None`` picks the
    unique tensor whose name ends in 'wpe.weight' or 'position_embeddings.weight' (or the only
    tensor in the file).  Returns an ndarray of the stored shape in the stored float dtype
    (BF16 is returned as float32, exactly).  Integer tensors raise ValueError.
    """
    return _read_safetensors(data, name)[0]


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
            raw, tname, code = _read_safetensors(data, tensor)
            dtype_name = _ST_FLOAT_DTYPES[code][1]
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
