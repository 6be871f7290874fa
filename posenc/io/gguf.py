"""A GGUF file's header as a config source: its metadata read by hand, bounded, never its tensors.

GGUF (ggml-org's file format; spec ``ggml/docs/gguf.md`` in the ggml repository, writer ``gguf-py``):

    magic "GGUF" | version u32 (2 or 3; 1 used u32 counts) | tensor_count u64 | kv_count u64
    kv_count x (key: string, value_type u32, value)      string = u64 length + UTF-8 bytes
    tensor_count x (name: string, n_dims u32, dims u64 x n_dims, ggml type u32, offset u64)
    padding, then the tensor data (never read here)

Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool, 8 string, 9 array (item type u32,
count u64, items), 10 u64, 11 i64, 12 f64.  Little-endian unless the writer chose big-endian (the version
then reads byte-swapped, which is how it is detected).

Why a parser of our own and not the ``gguf`` package's ``GGUFReader``: the reader memory-maps a whole
file and builds every tensor's view, so it needs the complete file, while a browser upload (and a
``head -c`` of a 100 GB model) holds only the first few MB.  Here every length is checked against the
bytes present before anything is read, arrays we do not need (the tokenizer's 100k-entry lists) are
stepped over without being built, and a header cut short is read up to the cut: llama.cpp's converter
writes the architecture's keys before the tokenizer's, so the RoPE keys come first.  The tests check
this reader against files written by ``gguf.GGUFWriter``.

``gguf_config(source)`` turns the header into the config dict ``rope_from_config`` reads (with a
``"gguf"`` block carrying the architecture, the file's pairing layout and what the header could not say);
``rope_from_gguf`` (``posenc.io.ropeconfig``) is ``rope_from_config`` of it.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field

from posenc.io.configjson import bounded, decode_config_bytes

MAGIC = b"GGUF"
MAX_READ_BYTES = 64 * 10**6  # read from a path: at most this many bytes (a GGUF header is a few MB)
MAX_KEYS = 100_000
MAX_KEY_BYTES = 65_535
MAX_STRING_KEPT = 4096  # longer strings (chat templates) are kept cut to this many characters
MAX_ARRAY_KEPT = 4096  # longer arrays (vocabularies) are stepped over, not built
MAX_TENSORS_LISTED = 100_000
MAX_DIMS = 8

_SCALARS = {0: ("B", 1), 1: ("b", 1), 2: ("H", 2), 3: ("h", 2), 4: ("I", 4), 5: ("i", 4), 6: ("f", 4), 7: ("?", 1),
            10: ("Q", 8), 11: ("q", 8), 12: ("d", 8)}
_STRING, _ARRAY = 8, 9

# llama.cpp's llama_model_rope_type (src/llama-model.cpp): LLAMA_ROPE_TYPE_NORM rotates pairs of consecutive
# head values (2i, 2i + 1); its converter permutes q/k of the Hugging Face half-split families among these
# (llama, granite, smollm3, mistral3, ...) so that the file's pairs are interleaved.  LLAMA_ROPE_TYPE_NONE:
# no RoPE.  Every other architecture is NEOX (i, i + d/2) or M-RoPE (sections of NEOX pairs).
NORM_ARCHS = frozenset({
    "llama", "llada", "llama4", "deci", "baichuan", "starcoder", "internlm2", "minicpm", "xverse", "command-r", "cohere2",
    "olmo", "arctic", "deepseek", "deepseek2", "plm", "chatglm", "glm4", "granite", "granitemoe", "granitehybrid",
    "chameleon", "bailingmoe", "neo-bert", "smollm3", "arcee", "ernie4_5", "ernie4_5-moe", "mistral3",
})
NONE_ARCHS = {"gpt2": "learned absolute positions", "gptj": "no RoPE in llama.cpp's table", "mpt": "ALiBi", "refact": "ALiBi",
              "bloom": "ALiBi", "jais": "ALiBi", "t5": "T5 relative buckets", "t5encoder": "T5 relative buckets",
              "jina-bert-v2": "ALiBi", "mamba": "no attention", "mamba2": "no attention", "rwkv6": "no attention",
              "rwkv7": "no attention"}
# GGUF architecture -> the Hugging Face model_type whose conventions posenc.io.modelconfig applies
MODEL_TYPES = {"llama4": "llama4_text", "command-r": "cohere", "gemma3": "gemma3_text", "gpt-oss": "gpt_oss",
               "mistral3": "ministral3", "deepseek2": "deepseek_v2", "qwen2vl": "qwen2_vl", "granitemoe": "granitemoe"}


@dataclass(frozen=True)
class GGUFHeader:
    """The metadata of a GGUF file as far as the bytes went.

    ``kv``: key -> value (numbers, bools, strings cut to MAX_STRING_KEPT, lists of at most MAX_ARRAY_KEPT
    items; a longer array is ``("array", item type, count)``).  ``complete``: every key was read.
    ``tensors``: the tensor names listed after the metadata, or None where the bytes ended before the list.
    """

    version: int
    tensor_count: int
    kv_count: int
    kv: dict
    complete: bool
    tensors: tuple | None
    nbytes: int
    big_endian: bool = False
    notes: tuple = field(default_factory=tuple)


class _Cut(Exception):
    """The bytes ended inside an item."""


class _Reader:
    def __init__(self, data: bytes, endian: str, wide: bool):
        self.data, self.pos, self.e, self.wide = data, 0, endian, wide

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise _Cut
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def num(self, fmt: str):
        size = struct.calcsize(fmt)
        return struct.unpack(self.e + fmt, self.take(size))[0]

    def count(self) -> int:
        return self.num("Q" if self.wide else "I")

    def string(self, keep: int | None = MAX_STRING_KEPT, what: str = "a string") -> str:
        n = self.count()
        if n > len(self.data) - self.pos:
            raise _Cut
        raw = self.take(n)
        if keep is None:
            return ""
        return raw[:keep].decode("utf-8", "replace")

    def value(self, vtype: int, key: str):
        if vtype in _SCALARS:
            return self.num(_SCALARS[vtype][0])
        if vtype == _STRING:
            return self.string()
        if vtype != _ARRAY:
            raise ValueError(f"the GGUF key {key[:80]!r} has value type {vtype}, which is not a GGUF type (0 to 12)")
        itype, n = self.num("I"), self.count()
        if itype in _SCALARS:
            size = _SCALARS[itype][1]
            if n * size > len(self.data) - self.pos:
                raise _Cut
            if n > MAX_ARRAY_KEPT:
                self.pos += n * size
                return ("array", itype, n)
            return list(struct.unpack(f"{self.e}{n}{_SCALARS[itype][0]}", self.take(n * size)))
        if itype == _STRING:
            keep = n <= MAX_ARRAY_KEPT
            items = [self.string(None if not keep else MAX_STRING_KEPT) for _ in range(n)]
            return items if keep else ("array", itype, n)
        raise ValueError(f"the GGUF key {key[:80]!r} is an array of type {itype}; posenc reads arrays of numbers and strings")


# What an upload box says: a GGUF model is larger than the upload limit, and only its header is read
GGUF_HELP = ("A GGUF model file is larger than the 50 MB upload limit, and only its header (the first few MB) is read: "
             "upload its start, made with `head -c 8000000 model.gguf > model-header.gguf`.")
FIRST_READ_BYTES = 4 * 10**6  # a path is read in growing pieces: 4 MB, then 4x more while the header goes on


def _read_path(path: str, nbytes: int) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(nbytes)
    except OSError as exc:
        raise ValueError(bounded(f"cannot read the GGUF file {path!r}: {exc.strerror or exc}")) from None


def read_gguf_header(source) -> GGUFHeader:
    """The metadata of a GGUF file (a path, or its first bytes); ValueError when it is not one.

    A path is read from its start, at most MAX_READ_BYTES, and only as far as the header goes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _parse(bytes(source), "the uploaded bytes")
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(f"a GGUF source is a path or the file's bytes, got {type(source).__name__}")
    path = os.fspath(source)
    n = FIRST_READ_BYTES
    while True:
        data = _read_path(path, n)
        h = _parse(data, os.path.basename(path)[:80])
        if (h.complete and h.tensors is not None) or len(data) < n or n >= MAX_READ_BYTES:
            return h
        n = min(4 * n, MAX_READ_BYTES)


def is_gguf(data) -> bool:
    return isinstance(data, (bytes, bytearray, memoryview)) and bytes(data[:4]) == MAGIC


def _parse(data: bytes, name: str) -> GGUFHeader:
    if data[:4] != MAGIC:
        shown = data[:4]
        raise ValueError(f"{name} is not a GGUF file: it starts with {shown!r}, not b'GGUF' (a GGUF file from llama.cpp "
                         "or the Hugging Face hub starts with those four bytes)")
    if len(data) < 24:
        raise ValueError(f"{name} holds {len(data)} bytes: a GGUF header needs at least 24 (magic, version, counts)")
    endian = "<"
    version = struct.unpack_from("<I", data, 4)[0]
    if version > 0xFFFF and struct.unpack_from(">I", data, 4)[0] in (1, 2, 3):
        endian, version = ">", struct.unpack_from(">I", data, 4)[0]
    if version not in (1, 2, 3):
        raise ValueError(f"{name} declares GGUF version {version}; posenc reads versions 1 to 3")
    r = _Reader(data, endian, wide=version >= 2)
    r.pos = 8
    tensor_count, kv_count = r.count(), r.count()
    if kv_count > MAX_KEYS or tensor_count > 10**7:
        raise ValueError(f"{name} declares {kv_count:,} metadata keys and {tensor_count:,} tensors; a GGUF header holds at "
                         f"most a few hundred keys (limit {MAX_KEYS:,})")
    kv: dict = {}
    complete = True
    try:
        for _ in range(kv_count):
            start = r.pos
            n = r.count()
            if n > MAX_KEY_BYTES:
                raise ValueError(f"{name}: a metadata key {n:,} bytes long at byte {start:,}; GGUF keys are short names")
            key = r.take(n).decode("utf-8", "replace")
            kv[key] = r.value(r.num("I"), key)
    except _Cut:
        complete = False
    tensors = None
    if complete:
        names = []
        try:
            for _ in range(tensor_count):
                tname = r.string(256)
                n_dims = r.num("I")
                if n_dims > MAX_DIMS:
                    raise ValueError(f"{name}: tensor {tname[:60]!r} declares {n_dims} dimensions; GGUF allows at most 4")
                r.take(8 * n_dims + 4 + 8)  # dims, ggml type, data offset: not needed
                if len(names) < MAX_TENSORS_LISTED:
                    names.append(tname)
            tensors = tuple(names)
        except _Cut:
            tensors = None
    notes = []
    if not complete:
        notes.append(f"the header was cut after {len(kv)} of {kv_count} metadata keys ({len(data) / 1e6:.1f} MB read); "
                     "llama.cpp writes the architecture's keys before the tokenizer's, so the RoPE keys come first")
    return GGUFHeader(version=version, tensor_count=tensor_count, kv_count=kv_count, kv=kv, complete=complete,
                      tensors=tensors, nbytes=len(data), big_endian=endian == ">", notes=tuple(notes))


# ----------------------------------------------------------------------------- header -> config.json form

def _num(kv: dict, key: str):
    v = kv.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v


def _per_layer(kv: dict, key: str):
    """A value that may be one number or one number per layer (llama.cpp writes arrays for mixed models)."""
    v = kv.get(key)
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return max(v)
    return _num(kv, key)


def gguf_config(source) -> dict:
    """The config dict ``rope_from_config`` reads, from a GGUF header (a path or its first bytes).

    Keys read: ``general.architecture`` and ``general.name``; ``{arch}.context_length``, ``.embedding_length``,
    ``.block_count``, ``.attention.head_count`` / ``head_count_kv`` / ``key_length``, ``.attention.sliding_window``
    (and ``_pattern``), ``.attention.scale``, ``.attn_logit_softcapping``, ``.rope.freq_base`` (``_swa``),
    ``.rope.dimension_count``, ``.rope.scaling.type`` / ``factor`` / ``original_context_length`` / ``attn_factor``
    and YaRN's ``yarn_beta_fast`` / ``yarn_beta_slow`` / ``yarn_attn_factor``.  ValueError for what a header
    cannot describe (no RoPE; LongRoPE and Llama 3-style factors, which llama.cpp stores as tensors).
    """
    h = read_gguf_header(source)
    kv = h.kv
    arch = kv.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        cut = " (the upload ended before it: upload more of the file)" if not h.complete else ""
        raise ValueError(f"the GGUF header has no general.architecture key{cut}; posenc needs it to find the model's keys")
    arch = arch[:60]
    name = kv.get("general.name") if isinstance(kv.get("general.name"), str) else None
    if arch in NONE_ARCHS:
        raise ValueError(f"the GGUF file is a {arch!r} model, which llama.cpp runs without RoPE ({NONE_ARCHS[arch]}); "
                         "see the T5 and ALiBi page (pages/relative_bias.py) or the Learned tables page")
    p = f"{arch}."
    notes = [f"read from a GGUF header (version {h.version}, architecture {arch!r}, {len(kv)} of {h.kv_count} keys)"]
    notes.extend(h.notes)
    cfg: dict = {"_name_or_path": (name or arch)[:80], "model_type": MODEL_TYPES.get(arch, arch.replace("-", "_"))}
    heads = _per_layer(kv, p + "attention.head_count")
    fields = {"hidden_size": _num(kv, p + "embedding_length"), "num_attention_heads": heads,
              "num_key_value_heads": _per_layer(kv, p + "attention.head_count_kv"), "head_dim": _num(kv, p + "attention.key_length"),
              "max_position_embeddings": _num(kv, p + "context_length"), "num_hidden_layers": _num(kv, p + "block_count"),
              "rope_theta": _num(kv, p + "rope.freq_base"), "sliding_window": _num(kv, p + "attention.sliding_window"),
              "attn_logit_softcapping": _num(kv, p + "attn_logit_softcapping")}
    cfg.update({k: v for k, v in fields.items() if v is not None})
    if cfg.get("head_dim") is None and cfg.get("hidden_size") and heads:
        cfg["head_dim"] = int(cfg["hidden_size"]) // int(heads) if int(heads) > 0 else None
    if cfg.get("rope_theta") is None:
        notes.append(f"{p}rope.freq_base is missing: llama.cpp then uses 10000, and so does posenc")
        cfg["rope_theta"] = 10000.0
    pattern = kv.get(p + "attention.sliding_window_pattern")
    if isinstance(pattern, list) and pattern:  # one bool per layer: True = sliding window
        cfg["layer_types"] = ["sliding_attention" if x else "full_attention" for x in pattern]
    elif _num(kv, p + "attention.sliding_window_pattern") is not None:
        cfg["sliding_window_pattern"] = int(kv[p + "attention.sliding_window_pattern"])
    if _num(kv, p + "rope.freq_base_swa") is not None:
        cfg["rope_local_base_freq"] = kv[p + "rope.freq_base_swa"]
    scale = _num(kv, p + "attention.scale")
    if scale is not None:  # llama.cpp's kq_scale: Granite's attention_multiplier
        cfg["attention_multiplier"] = scale
    beta = _num(kv, p + "attention.temperature_scale")
    dims = _num(kv, p + "rope.dimension_count")
    if dims is not None and cfg.get("head_dim") and int(dims) != int(cfg["head_dim"]):
        cfg["partial_rotary_factor"] = int(dims) / int(cfg["head_dim"])
    block = _scaling(kv, p, notes, h)
    if block:
        if beta is not None:
            block["llama_4_scaling_beta"] = beta
        cfg["rope_scaling"] = block
    elif beta is not None:
        notes.append(f"{p}attention.temperature_scale = {beta:g} is set without a rope scaling block; not read")
    layout = "interleaved" if arch in NORM_ARCHS else "half_split"
    cfg["gguf"] = {"architecture": arch, "layout": layout, "notes": notes, "version": h.version}
    return cfg


def _scaling(kv: dict, p: str, notes: list, h: GGUFHeader) -> dict | None:
    """The rope_scaling block the header describes, as llama.cpp's convert_hf_to_gguf.py wrote it."""
    kind = kv.get(p + "rope.scaling.type")
    factor = _num(kv, p + "rope.scaling.factor")
    orig = _num(kv, p + "rope.scaling.original_context_length")
    tensors = set(h.tensors or ())
    if "rope_freqs.weight" in tensors:
        raise ValueError("the GGUF file carries a rope_freqs tensor: Llama 3-style per-pair frequency factors stored as tensor "
                         "data, which posenc does not read from a header; paste the model's config.json instead")
    if kind == "longrope" or {"rope_factors_long.weight", "rope_factors_short.weight"} & tensors:
        raise ValueError("the GGUF file uses LongRoPE, whose per-pair factors llama.cpp stores as tensors "
                         "(rope_factors_long / rope_factors_short), not header keys; paste the model's config.json instead")
    if h.tensors is None and kind in (None, "none"):
        notes.append("the upload ended before the tensor list, so posenc cannot see whether a rope_freqs tensor "
                     "(Llama 3-style factors) is there; without one the file runs plain RoPE")
    if kind in (None, "none"):
        if factor not in (None, 1.0):
            notes.append(f"{p}rope.scaling.factor = {factor:g} without a scaling type; llama.cpp ignores it, and so does posenc")
        return None
    if kind == "linear":
        block = {"rope_type": "linear", "factor": factor}
        if orig is not None:
            block["original_max_position_embeddings"] = int(orig)
        return block
    if kind == "yarn":
        block = {"rope_type": "yarn", "factor": factor}
        if orig is not None:
            block["original_max_position_embeddings"] = int(orig)
        for key, hf in (("yarn_beta_fast", "beta_fast"), ("yarn_beta_slow", "beta_slow"), ("yarn_attn_factor", "attention_factor")):
            if _num(kv, p + "rope.scaling." + key) is not None:
                block[hf] = kv[p + "rope.scaling." + key]
        af = _num(kv, p + "rope.scaling.attn_factor")
        if af is not None and "attention_factor" not in block:
            notes.append(f"{p}rope.scaling.attn_factor = {af:g}: llama.cpp multiplies YaRN's 0.1 ln s + 1 by it; "
                         "transformers reads no such key, and posenc draws YaRN's own factor")
        if _num(kv, p + "rope.scaling.yarn_log_multiplier") is not None:
            notes.append(f"{p}rope.scaling.yarn_log_multiplier (DeepSeek's mscale_all_dim x 0.1) is set; "
                         "the softmax mscale it implies is not read from a header")
        return block
    raise ValueError(f"the GGUF header's {p}rope.scaling.type is {str(kind)[:40]!r}; llama.cpp knows none, linear, yarn and longrope")


def config_text(data) -> tuple[str, str]:
    """(config.json text, what was uploaded) for an uploaded file: a GGUF file or its first bytes (by its magic, whatever its
    name), else a config.json (UTF-8, at most 1 MiB).  The text is what the pages pass on, so a GGUF header gives the page
    its config.json gives (plus the file's own pairing and notes, in its "gguf" block)."""
    if is_gguf(data):
        return json.dumps(gguf_config(bytes(data))), "GGUF header"
    return decode_config_bytes(data), "config.json"
