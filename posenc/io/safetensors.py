"""A hand-written reader of .safetensors files: never executes anything, checks every offset.

Format (the safetensors crate docs; huggingface.co/docs/safetensors/metadata_parsing): a u64
little-endian header length N, N bytes of JSON ({name: {"dtype", "shape", "data_offsets"}}, plus an
optional "__metadata__"), then raw little-endian C-order data, with ``data_offsets`` relative to
byte 8 + N.  BF16 has no numpy dtype: it is read as uint16 and widened by a bit shift.

As the Rust crate's ``validate``, the tensors must tile the data section exactly: sorted by offset, each
starts where the previous one ends, and the last ends at the end of the file -- no overlap (two names
for the same bytes) and no hole or trailing bytes (room for a second file hidden inside this one).
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

from posenc.io._limits import MAX_TABLE_ELEMENTS
from posenc.io._limits import as_bytes as _as_bytes

# A safetensors JSON header longer than this is not a real header of a file under the 50 MB upload cap
# (about 100 bytes per tensor: 10 MB would list 100,000 tensors; the Rust crate allows 100 MB).
MAX_SAFETENSORS_HEADER_BYTES = 10 * 1000 * 1000

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
FLOAT_DTYPES = {
    "F64": ("<f8", "float64"),
    "F32": ("<f4", "float32"),
    "F16": ("<f2", "float16"),
    "BF16": ("<u2", "bfloat16"),  # decoded by bit shift, see _decode_bf16
}
INT_DTYPES = ("I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL")


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
    _check_tiling(entries, data_len)
    return entries, data_start


def _check_tiling(entries: dict[str, dict], data_len: int) -> None:
    """The data_offsets of all tensors cover [0, data_len) exactly once, in order (no overlap, no gap)."""
    spans = sorted((e["data_offsets"][0], e["data_offsets"][1], name) for name, e in entries.items())
    end, last = 0, None
    for start, stop, name in spans:
        if start < end:
            raise ValueError(
                f"tensor {name!r}: data_offsets [{start}, {stop}] overlap those of tensor {last!r}, which end at {end}; "
                "in a .safetensors file every byte of data belongs to one tensor"
            )
        if start > end:
            raise ValueError(
                f"tensor {name!r}: data_offsets [{start}, {stop}] leave bytes {end} to {start} of the data section "
                "unused; in a .safetensors file the tensors follow each other without gaps"
            )
        end, last = stop, name
    if end != data_len:
        raise ValueError(
            f"the data section is {data_len:,} bytes long but its tensors end at byte {end:,}; the file has "
            f"{data_len - end:,} unexpected bytes after the last tensor"
        )


def _strip_prefixes(name: str) -> str:
    stripped = True
    while stripped:
        stripped = False
        for prefix in NAME_PREFIXES:
            if name.startswith(prefix):
                name, stripped = name[len(prefix) :], True
    return name


def _is_table(entry: dict) -> bool:
    return entry["dtype"] in FLOAT_DTYPES and len(entry["shape"]) == 2


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


def read_safetensors_entry(data: bytes, name: str | None) -> tuple[np.ndarray, str, str]:
    """Return (array, resolved tensor name, safetensors dtype code)."""
    data = _as_bytes(data, ".safetensors file")
    entries, data_start = _parse_safetensors_header(data)
    if not entries:
        raise ValueError("this .safetensors file contains no tensors")
    resolved = _resolve_name(entries, name)
    entry = entries[resolved]
    code, shape, (start, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
    if code in INT_DTYPES:
        raise ValueError(
            f"tensor {resolved!r} has integer dtype {code}; a position table must hold "
            "floating-point numbers (F32, F16, BF16 or F64)"
        )
    if code not in FLOAT_DTYPES:
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
    raw_dtype = np.dtype(FLOAT_DTYPES[code][0])
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
    return read_safetensors_entry(data, name)[0]
