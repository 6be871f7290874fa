"""The forward pass of a llama-architecture decoder in numpy, float32, with a replaceable position path.

axes: n tokens, D model width, H query heads, G = H / Hkv query heads per key-value head, d head_dim, F MLP width,
V vocabulary.

    x_0 = E[ids]                                                        (n, D)
    per layer:  a = RMSNorm(x) ;  q, k, v = a Wq^T, a Wk^T, a Wv^T        (one matmul: the three stacked)
                q', k' = rotate(q, k)                                     (positions.Rotation: the only place position enters)
                P_h = softmax(q'_h k'_{h // G}^T / sqrt(d) + causal mask)  (H, n, n)
                x = x + concat_h(P_h v_{h // G}) Wo^T
                b = RMSNorm(x) ;  x = x + (silu(b Wg^T) * (b Wu^T)) Wd^T   (gate and up: one matmul)
    logits = RMSNorm(x) E_out^T                                           (n, V), in vocabulary blocks

RMSNorm(x) = w * x / sqrt(mean(x^2) + eps), as transformers' LlamaRMSNorm.  Grouped-query attention multiplies each
key-value head against its G query heads at once ((Hkv, G n, d) @ (Hkv, d, n)) instead of repeating k and v.
Weights are dequantized one matrix at a time (``weights.Matrix.dense``) and dropped after use.

Hooks: ``hook(layer, name, array)`` is called for the layers asked with "q", "k" (before rotation, (H, n, d) and
(Hkv, n, d)), "q_rot", "k_rot" (after) and "attention" (H, n, n) -- views into the forward's own arrays: copy what
you keep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from posenc.model.positions import Rotation
from posenc.model.weights import Weights

HOOK_NAMES = ("q", "k", "q_rot", "k_rot", "attention")
VOCAB_BLOCK = 8192  # output rows dequantized at once (19 MB of float32 at D = 576)
BLOCK_FROM = 256  # from this many tokens on, attention runs in causal query blocks


@dataclass(frozen=True)
class Shape:
    """The architecture numbers a forward needs (from the file's metadata)."""

    n_layers: int
    width: int  # D
    n_heads: int  # H
    n_kv_heads: int  # Hkv
    head_dim: int  # d
    vocab: int  # V
    eps: float


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """w * x / sqrt(mean(x^2) + eps) over the last axis, float32."""
    var = np.mean(np.square(x), axis=-1, keepdims=True, dtype=np.float32)  # (n, 1)
    return w * (x / np.sqrt(var + np.float32(eps)))


def causal_blocks(n: int) -> list[tuple[int, int]]:
    """Query blocks [start, stop) of a forward over n tokens: block b needs only the keys before ``stop``, so splitting
    the queries skips most of the masked upper triangle (4 blocks: 62.5 % of the n x n work) at the cost of a Python loop."""
    parts = 1 if n < BLOCK_FROM else 4
    edges = np.linspace(0, n, parts + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, shape: Shape, keep: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Causal grouped-query attention: (output (n, H d), probabilities (H, n, n) if ``keep`` else None) from q (H, n, d)
    and k, v (Hkv, n, d).  Query head h reads key-value head h // G, as transformers' repeat_kv, without the copy."""
    H, n, d = q.shape
    kv, G = shape.n_kv_heads, H // shape.n_kv_heads
    qs = (q * np.float32(1.0 / np.sqrt(d))).reshape(kv, G, n, d)  # (Hkv, G, n, d), the 1/sqrt(d) folded into q
    out = np.empty((kv, G, n, d), dtype=np.float32)
    probs = np.zeros((H, n, n), dtype=np.float32) if keep else None
    for start, stop in causal_blocks(n):
        m = stop - start
        s = np.matmul(qs[:, :, start:stop].reshape(kv, G * m, d), k[:, :stop].transpose(0, 2, 1))  # (Hkv, G m, stop)
        s = s.reshape(kv, G, m, stop)
        s += _mask(start, stop)  # 0 on and below the diagonal, -inf above: a key after its query
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        out[:, :, start:stop] = np.matmul(s.reshape(kv, G * m, stop), v[:, :stop]).reshape(kv, G, m, d)
        if keep:
            probs[:, start:stop, :stop] = s.reshape(H, m, stop)
    return out.reshape(H, n, d).transpose(1, 0, 2).reshape(n, H * d), probs


def _mask(start: int, stop: int) -> np.ndarray:
    """(stop - start, stop) float32: -inf where key j > query i (rows are queries start .. stop - 1)."""
    i = np.arange(start, stop)[:, None]
    return np.where(np.arange(stop)[None, :] > i, np.float32(-np.inf), np.float32(0.0))


def swiglu(gu: np.ndarray) -> np.ndarray:
    """silu(gate) * up from the stacked (n, 2F) product, in place where it can: silu(g) = g / (1 + exp(-g))."""
    F = gu.shape[1] // 2
    g, u = gu[:, :F], gu[:, F:]
    t = np.negative(g)
    with np.errstate(over="ignore"):  # exp(-g) = inf for g < -88: g / inf = -0, the right limit
        np.exp(t, out=t)
    t += np.float32(1.0)
    np.divide(g, t, out=t)
    t *= u
    return t


def forward(weights: Weights, shape: Shape, ids: np.ndarray, rotations: Sequence[Rotation], *,
            hook: Callable[[int, str, np.ndarray], None] | None = None, layers: frozenset[int] = frozenset(),
            rows: np.ndarray | None = None) -> np.ndarray:
    """Logits (B, n_rows, V) float32 of token ``ids`` (n,) under each of B position paths ``rotations`` at once.

    The B variants share every matmul ((B n, D) rows against one dequantized matrix); attention runs per variant.
    ``rows``: the positions whose logits are computed (None: all n).  ``hook`` sees the arrays of variant 0."""
    n, B = ids.size, len(rotations)
    H, kv, d = shape.n_heads, shape.n_kv_heads, shape.head_dim
    x = np.tile(weights.embedding.take(ids), (B, 1))  # (B n, D)
    for i, layer in enumerate(weights.layers):
        a = rms_norm(x, layer["attn_norm"], shape.eps)
        qkv = a @ layer["qkv"].dense().T  # (B n, (H + 2 Hkv) d)
        mixed = np.empty((B * n, H * d), dtype=np.float32)
        for b, rotate in enumerate(rotations):
            part = qkv[b * n:(b + 1) * n]
            q = part[:, : H * d].reshape(n, H, d).transpose(1, 0, 2)  # (H, n, d)
            k = part[:, H * d:(H + kv) * d].reshape(n, kv, d).transpose(1, 0, 2)  # (Hkv, n, d)
            v = np.ascontiguousarray(part[:, (H + kv) * d:].reshape(n, kv, d).transpose(1, 0, 2))  # (Hkv, n, d)
            q2, k2 = rotate(q, k)
            q2, k2 = np.ascontiguousarray(q2), np.ascontiguousarray(k2)
            watch = hook is not None and b == 0 and i in layers
            mixed[b * n:(b + 1) * n], probs = attention(q2, k2, v, shape, keep=watch)
            if watch:
                for name, arr in (("q", q), ("k", k), ("q_rot", q2), ("k_rot", k2), ("attention", probs)):
                    hook(i, name, arr)
        x += mixed @ layer["o"].dense().T
        g = rms_norm(x, layer["ffn_norm"], shape.eps)
        gu = g @ layer["gate_up"].dense().T  # (B n, 2F)
        x += swiglu(gu) @ layer["down"].dense().T
    x = rms_norm(x, weights.norm, shape.eps).reshape(B, n, -1)
    if rows is not None:
        x = x[:, rows]
    x = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))  # (B n_rows, D)
    logits = np.empty((x.shape[0], shape.vocab), dtype=np.float32)  # (B n_rows, V)
    for start in range(0, shape.vocab, VOCAB_BLOCK):
        cols = slice(start, min(start + VOCAB_BLOCK, shape.vocab))
        np.matmul(x, weights.output.dense(cols).T, out=logits[:, cols])
    return logits.reshape(B, -1, shape.vocab)
