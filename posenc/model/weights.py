"""A llama-architecture GGUF file read into numpy: metadata, vocabulary and weights kept compact.

axes: r rows (output features), c columns (input features), b blocks of 32 columns, t = 32 within a block.

The file is read with ggml-org's ``gguf`` package (its reader maps the file; nothing is copied until asked).
Weights stay in the file's own quantization where it is one of the simple block formats, dequantized one matrix at a
time in each forward (``Matrix.dense``), with exactly the arithmetic of ``gguf.quants.dequantize`` -- so the float32
values are those transformers' GGUF loader computes, at a quarter of their memory:

    Q4_0:  w = d * (q - 8)         q in 0..15, d float16 per block of 32
    Q4_1:  w = d * q + m           q in 0..15, d, m float16 per block
    Q8_0:  w = d * q               q in -128..127, d float16 per block

Every other type (the K-quants of a user's file) is dequantized by ``gguf`` once and kept as float16 (rounded: said in
``Weights.notes``).  F32 tensors (the norms) stay float32.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BLOCK = 32
_Q4_0, _Q4_1, _Q8_0, _F32, _F16 = "Q4_0", "Q4_1", "Q8_0", "F32", "F16"
MAX_FILE_BYTES = 8 * 2**30  # a GGUF larger than this is refused (the library computes in float32 on a CPU)


@dataclass(frozen=True)
class Matrix:
    """One weight matrix (r, c): either block-quantized (``q`` (r, b, 32), ``scale`` and ``offset`` (r, b, 1)
    float32) or dense (``q`` (r, c) float16/float32, no scale)."""

    q: np.ndarray
    scale: np.ndarray | None = None
    offset: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (self.q.shape[0], self.q.shape[1] * self.q.shape[2]) if self.q.ndim == 3 else self.q.shape

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.q, self.scale, self.offset) if a is not None)

    def dense(self, rows: slice | None = None) -> np.ndarray:
        """The float32 matrix (r, c) -- or its ``rows`` -- exactly as gguf.quants.dequantize computes it."""
        sel = slice(None) if rows is None else rows
        if self.scale is None:
            return np.asarray(self.q[sel], dtype=np.float32)
        q = self.q[sel]  # (r, b, 32)
        out = np.multiply(self.scale[sel], q, dtype=np.float32)  # d * q  (r, b, 32), as gguf: d * qs
        if self.offset is not None:
            out += self.offset[sel]  # + m
        return out.reshape(out.shape[0], -1)

    def take(self, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` as float32 (n, c): an embedding lookup without dequantizing the table."""
        if self.scale is None:
            return np.asarray(self.q[ids], dtype=np.float32)
        out = np.multiply(self.scale[ids], self.q[ids], dtype=np.float32)
        if self.offset is not None:
            out += self.offset[ids]
        return out.reshape(len(ids), -1)


def stack(parts: list[Matrix]) -> Matrix:
    """Matrices with the same columns as one (their rows one after another): one dequantization, one matmul."""
    kinds = {(p.q.ndim, p.q.dtype, p.scale is None, p.offset is None) for p in parts}
    if len(kinds) == 1:
        cat = lambda name: None if getattr(parts[0], name) is None else np.concatenate([getattr(p, name) for p in parts])
        return Matrix(cat("q"), cat("scale"), cat("offset"))
    return Matrix(np.concatenate([p.dense() for p in parts]).astype(np.float16))  # mixed types: rounded to float16


def _blocks(raw: np.ndarray, rows: int, block_bytes: int) -> np.ndarray:
    return np.ascontiguousarray(raw).reshape(rows, -1, block_bytes)  # (r, b, bytes)


def _f16(blocks: np.ndarray, start: int) -> np.ndarray:
    return np.ascontiguousarray(blocks[:, :, start:start + 2]).view(np.float16).astype(np.float32)  # (r, b, 1)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """(r, b, 16) bytes -> (r, b, 32) values 0..15: the low nibbles are values 0..15 of a block, the high 16..31."""
    return np.concatenate([qs & np.uint8(0x0F), qs >> np.uint8(4)], axis=2)


def matrix(tensor) -> Matrix:
    """A gguf ReaderTensor as a Matrix (r, c) = (out features, in features), GGUF's dimension order reversed."""
    kind = tensor.tensor_type.name
    cols, rows = (int(tensor.shape[0]), int(np.prod(tensor.shape[1:])))  # GGUF lists ne0 (columns) first
    raw = tensor.data
    if kind == _F32:
        return Matrix(np.array(raw, dtype=np.float32).reshape(rows, cols))
    if kind == _F16:
        return Matrix(np.array(raw, dtype=np.float16).reshape(rows, cols))
    if kind == _Q4_1:
        b = _blocks(raw, rows, 20)  # d f16 | m f16 | 16 bytes of nibbles
        return Matrix(_nibbles(b[:, :, 4:]), _f16(b, 0), _f16(b, 2))
    if kind == _Q4_0:
        b = _blocks(raw, rows, 18)  # d f16 | 16 bytes of nibbles
        return Matrix((_nibbles(b[:, :, 2:]).astype(np.int8) - np.int8(8)), _f16(b, 0))
    if kind == _Q8_0:
        b = _blocks(raw, rows, 34)  # d f16 | 32 int8
        return Matrix(np.ascontiguousarray(b[:, :, 2:]).view(np.int8), _f16(b, 0))
    from gguf.quants import dequantize  # any other type: gguf's own dequantization, kept as float16

    return Matrix(dequantize(raw, tensor.tensor_type).reshape(rows, cols).astype(np.float16))


@dataclass
class Weights:
    """The tensors of a llama-architecture file, by role; ``layers[i]`` holds "qkv", "o", "gate_up", "down" (Matrix)
    and "attn_norm", "ffn_norm" (float32 vectors)."""

    embedding: Matrix
    output: Matrix  # the embedding itself when the file ties them
    norm: np.ndarray
    layers: list[dict]
    notes: list[str] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        own = [self.embedding] + ([] if self.output is self.embedding else [self.output])
        return sum(m.nbytes for m in own) + self.norm.nbytes + sum(
            v.nbytes for layer in self.layers for v in layer.values())


def _field(reader, key: str, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


def read_metadata(reader) -> dict:
    """Every scalar and short-list field of the file (the vocabulary and merges are read by ``read_vocab``)."""
    out = {}
    for key, f in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key.rsplit(".", 1)[1] in ("tokens", "merges", "token_type", "scores"):
            continue
        out[key] = f.contents()
    return out


def read_vocab(reader) -> dict:
    """The tokenizer as the file stores it: tokens, merges, token types, model and pre-tokenizer names."""
    return {"tokens": list(_field(reader, "tokenizer.ggml.tokens", [])), "merges": list(_field(reader, "tokenizer.ggml.merges", [])),
            "token_type": list(_field(reader, "tokenizer.ggml.token_type", [])),
            "model": _field(reader, "tokenizer.ggml.model"), "pre": _field(reader, "tokenizer.ggml.pre")}


def read_weights(reader, n_layers: int) -> Weights:
    by_name = {t.name: t for t in reader.tensors}

    def get(name: str) -> Matrix:
        if name not in by_name:
            raise ValueError(f"the GGUF file has no tensor {name!r}; is it a complete llama-architecture model?")
        return matrix(by_name[name])

    notes = sorted({f"{t.name.split('.')[-2]} {t.tensor_type.name}: kept as float16 after gguf's dequantization"
                    for t in reader.tensors if t.tensor_type.name not in (_F32, _F16, _Q4_0, _Q4_1, _Q8_0)})
    embedding = get("token_embd.weight")
    output = get("output.weight") if "output.weight" in by_name else embedding  # tied embeddings
    layers = []
    for i in range(n_layers):
        p = f"blk.{i}."
        layers.append({
            "qkv": stack([get(p + "attn_q.weight"), get(p + "attn_k.weight"), get(p + "attn_v.weight")]),  # (q + 2 kv, c)
            "o": get(p + "attn_output.weight"),
            "gate_up": stack([get(p + "ffn_gate.weight"), get(p + "ffn_up.weight")]),  # (2 f, c)
            "down": get(p + "ffn_down.weight"),
            "attn_norm": get(p + "attn_norm.weight").dense().reshape(-1),
            "ffn_norm": get(p + "ffn_norm.weight").dense().reshape(-1),
        })
    return Weights(embedding, output, get("output_norm.weight").dense().reshape(-1), layers, notes)


def open_reader(path: str | Path):
    """gguf's reader on ``path`` (read-only memory map), after checking the file is there and not too large."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be a GGUF file, got {str(path)[:200]!r} (no such file)")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"path must be a GGUF file of at most {MAX_FILE_BYTES // 2**30} GiB, got {p.stat().st_size / 2**30:.1f} GiB")
    from gguf import GGUFReader

    try:
        return GGUFReader(p, "r")
    except (ValueError, OSError, IndexError, KeyError) as exc:
        raise ValueError(f"path must be a readable GGUF file, got {p.name!r}: {exc}") from exc
