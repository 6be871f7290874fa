"""Byte and size limits shared by the upload readers."""

from __future__ import annotations

# Largest table we accept: 2**25 elements = 256 MiB as float64 (e.g. 8192 x 4096).
MAX_TABLE_ELEMENTS = 32 * 1024 * 1024


def mb(nbytes: int) -> str:
    return f"{nbytes / 2**20:.1f} MB"


def as_bytes(data, what: str) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise ValueError(f"{what}: expected the file contents as bytes, got {type(data).__name__}")
