"""A tiny seeded single-head self-attention, to show that attention alone sees a bag of tokens.

axes: n tokens, d model width, i query, j key.

    Q = X Wq,  K = X Wk,  V = X Wv,  A = softmax(Q K^T / sqrt(d) + B),  out = A V

Every reduction over tokens (softmax sums, the weighted sum, mean pooling) and every dot product
sums its terms in sorted order, and projections are computed once per distinct token, so no
result depends on where a token sits.  That makes permutation equivariance *exact*: with no
positional signal, permuting the tokens permutes the outputs bit for bit, and the mean-pooled
vectors are identical (difference 0.0, not 1e-17).
"""

from __future__ import annotations

import math
import re
import zlib

import numpy as np

from posenc._validate import check_int
from posenc.registry import get_scheme

MAX_TOKENS = 64
TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    """Lower-cased words and punctuation marks: "The dog bit the man." -> the dog bit the man ."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    tokens = TOKEN_RE.findall(text.lower())
    if not tokens:
        raise ValueError("text must contain at least one word")
    if len(tokens) > MAX_TOKENS:
        raise ValueError(f"text must have at most {MAX_TOKENS} tokens, got {len(tokens)}")
    return tokens


def token_embeddings(tokens: list[str], d_model: int) -> np.ndarray:
    """A seeded embedding per distinct token (seed = crc32 of the token), shape (n, d_model).

    Entries are normal(0, 1); the same token always gets the same row, on every machine.
    """
    d = check_int("d_model", d_model, lo=1, hi=1024)
    rows = {t: np.random.default_rng(zlib.crc32(t.encode("utf-8"))).standard_normal(d) for t in set(tokens)}
    return np.vstack([rows[t] for t in tokens])  # (n, d)


def _weights(d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = 1.0 / math.sqrt(d)
    return tuple(rng.normal(0.0, scale, size=(d, d)) for _ in range(3))  # Wq, Wk, Wv (d, d)


def _rowwise(X: np.ndarray, fn) -> np.ndarray:
    """fn applied to the distinct rows of X, gathered back: equal rows give bit-equal results
    whatever their position (BLAS may round a row differently depending on where it sits)."""
    uniq, inverse = np.unique(X, axis=0, return_inverse=True)
    return fn(uniq)[inverse.reshape(-1)]


def _canonical_sum(x: np.ndarray, axis: int) -> np.ndarray:
    """Sum along ``axis`` in sorted order: the result depends on the multiset of values only,
    never on their order, so permuting the tokens cannot change a single bit."""
    return np.sort(x, axis=axis).sum(axis=axis)


def attend(X: np.ndarray, *, seed: int = 0, qk=None, bias=None) -> dict:
    """Single-head attention over X (n, d): {"logits": (n, n), "weights": (n, n), "out": (n, d)}.

    ``qk`` maps (Q, K) to the position-transformed (Q', K') (a rotary scheme at the tokens'
    positions); ``bias`` (n, n) is added to the logits (-inf masks).
    """
    n, d = X.shape
    Wq, Wk, Wv = _weights(d, seed)
    Q, K, V = (_rowwise(X, lambda U, W=W: U @ W) for W in (Wq, Wk, Wv))  # (n, d) each
    if qk is not None:
        Q, K = qk(Q, K)
    # q_i . k_j for every pair, one elementwise product and an order-independent sum over d
    logits = _canonical_sum(Q[:, None, :] * K[None, :, :], axis=2) / math.sqrt(d)  # (n, n)
    if bias is not None:
        logits = logits + bias
    e = np.exp(logits - logits.max(axis=1, keepdims=True))  # (n, n); masked -inf -> 0
    weights = e / _canonical_sum(e, axis=1)[:, None]
    out = _canonical_sum(weights[:, :, None] * V[None, :, :], axis=1)  # (n, d): sum over keys j
    return {"logits": logits, "weights": weights, "out": out}


def _mean_pool(out: np.ndarray) -> np.ndarray:
    return _canonical_sum(out, axis=0) / out.shape[0]


def match_permutation(tokens_a: list[str], tokens_b: list[str]) -> list[int] | None:
    """perm with tokens_b[i] == tokens_a[perm[i]] (repeated tokens matched in order), else None."""
    if sorted(tokens_a) != sorted(tokens_b):
        return None
    used: dict[str, list[int]] = {}
    for idx, t in enumerate(tokens_a):
        used.setdefault(t, []).append(idx)
    return [used[t].pop(0) for t in tokens_b]


def _position_inputs(scheme: str | None, n: int, d: int, params: dict) -> dict:
    """What a scheme adds to the tiny attention at positions 0 .. n-1: {"pe"}, {"qk"} or {"bias"} (Scheme.layer_inputs)."""
    if scheme is None:
        return {}
    return get_scheme(scheme).layer_inputs(np.arange(n, dtype=np.float64), d, seq_len=n, **params)


def model_width(scheme: str | None, d_model: int) -> int:
    """The width the demo runs at: a bundled table fixes its own (MiniLM: 384), else d_model."""
    return d_model if scheme is None else get_scheme(scheme).width(d_model)


def permutation_equivariance(
    sentence_a: str,
    sentence_b: str,
    *,
    scheme: str | None = None,
    d_model: int = 16,
    seed: int = 0,
    **params,
) -> dict:
    """Run the tiny attention on two sentences, without (scheme=None) or with a scheme.

    Returns {"tokens_a", "tokens_b", "same_bag": bool, "permutation": list|None,
    "logits_a" (n, n), "logits_b" (n, n), "out_a" (n, d), "out_b" (n, d),
    "max_diff_permuted": max |out_b - out_a[perm]| (None if not the same bag),
    "max_diff_logits": max |logits_b - logits_a[perm][:, perm]| over finite entries,
    "max_diff_pooled": max |mean(out_a) - mean(out_b)|, "d_model": int}.
    """
    ta, tb = tokenize(sentence_a), tokenize(sentence_b)
    d = model_width(scheme, check_int("d_model", d_model, lo=2, hi=256))
    seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
    runs = []
    for toks in (ta, tb):
        X = token_embeddings(toks, d)  # (n, d)
        extra = _position_inputs(scheme, len(toks), d, params)
        if "pe" in extra:
            X = X + extra.pop("pe")
        runs.append(attend(X, seed=seed, **extra))
    a, b = runs
    perm = match_permutation(ta, tb)
    diff_out = diff_logits = None
    if perm is not None:
        P = np.asarray(perm)
        diff_out = float(np.max(np.abs(b["out"] - a["out"][P])))
        la, lb = a["logits"][P][:, P], b["logits"]
        both = np.isfinite(la) & np.isfinite(lb)
        diff_logits = float(np.max(np.abs(lb[both] - la[both]))) if both.any() else 0.0
        if not np.array_equal(np.isfinite(la), np.isfinite(lb)):
            diff_logits = math.inf  # a mask moved: the logits are not a permutation
    pooled = float(np.max(np.abs(_mean_pool(a["out"]) - _mean_pool(b["out"]))))
    return {
        "tokens_a": ta, "tokens_b": tb, "same_bag": perm is not None, "permutation": perm,
        "logits_a": a["logits"], "logits_b": b["logits"], "out_a": a["out"], "out_b": b["out"],
        "max_diff_permuted": diff_out, "max_diff_logits": diff_logits, "max_diff_pooled": pooled,
        "d_model": d,
    }
