"""Measurements on a real model's outputs: next-token distributions, KL, perplexity, what each head attends to, and
which rotation pairs carry a head's energy.

axes: n tokens, V vocabulary, H heads, d head_dim, h = d // 2 rotation pairs.
"""

from __future__ import annotations

import numpy as np

from posenc.schemes.rotary import pair_views

LOCAL_WINDOW = 4  # "local": keys within this many tokens before the query (the query itself included)
KINDS = ("previous token", "first token (sink)", "local window", "broad")
KIND_THRESHOLD = 0.4  # a head is of a positional kind when that mean share of its attention is at least this


def log_softmax(logits) -> np.ndarray:
    """log p over the last axis, float64."""
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def kl(logits_p, logits_q) -> np.ndarray:
    """KL(p || q) in nats over the last axis: sum p (log p - log q).  NaN where q is not finite."""
    lp, lq = log_softmax(logits_p), log_softmax(logits_q)
    return np.sum(np.exp(lp) * (lp - lq), axis=-1)


def token_nll(logits, ids) -> np.ndarray:
    """-log p(ids[t + 1] | ids[:t + 1]) for t = 0 .. n - 2, (n - 1,) nats: each token predicted from those before it."""
    lp = log_softmax(np.asarray(logits)[:-1])  # (n - 1, V)
    ids = np.asarray(ids)
    return -lp[np.arange(ids.size - 1), ids[1:]]


def perplexity(logits, ids) -> float:
    """exp(mean next-token negative log-likelihood) of a text under the logits of its own forward."""
    return float(np.exp(np.mean(token_nll(logits, ids))))


def head_scores(attention) -> dict[str, np.ndarray]:
    """Per head of one layer, from its attention probabilities (H, n, n), queries 1 .. n-1 (query 0 can only see itself):
    the mean share on the previous token, on the first token, within LOCAL_WINDOW tokens back, and the mean distance
    attended (sum_j p_ij (i - j)), each (H,)."""
    P = np.asarray(attention, dtype=np.float64)[:, 1:, :]  # (H, n-1, n): queries 1 .. n-1
    n = P.shape[-1]
    i = np.arange(1, n)[:, None]  # query positions
    j = np.arange(n)[None, :]
    prev = P[:, np.arange(n - 1), np.arange(n - 1)].mean(axis=1)  # key i - 1
    sink = P[:, :, 0].mean(axis=1)
    local = (P * ((i - j >= 0) & (i - j < LOCAL_WINDOW))).sum(axis=2).mean(axis=1)
    distance = (P * (i - j)).sum(axis=2).mean(axis=1)
    return {"previous": prev, "sink": sink, "local": local, "distance": distance}


def classify(scores: dict[str, np.ndarray]) -> list[str]:
    """Each head's kind: the largest of its previous-token, first-token and local shares if at least KIND_THRESHOLD
    (previous token wins over local, which contains it, when it holds most of the local share), else "broad"."""
    out = []
    for prev, sink, local in zip(scores["previous"], scores["sink"], scores["local"]):
        if max(prev, sink, local) < KIND_THRESHOLD:
            out.append(KINDS[3])
        elif sink >= max(prev, local):
            out.append(KINDS[1])
        elif prev >= 0.5 * local:
            out.append(KINDS[0])
        else:
            out.append(KINDS[2])
    return out


def pair_energy(q, k, layout: str, n_kv: int) -> np.ndarray:
    """Per query head and rotation pair, the mean over positions of |q_pair| times the mean of |k_pair| of its key-value
    head (Barbero et al. 2024's per-frequency norms; a rotation keeps every pair's norm, so before or after it is the
    same), normalised to sum 1 over the pairs: (H, h)."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    H, _, d = q.shape
    first, second = pair_views(d, layout)
    norm = lambda x: np.hypot(x[..., first], x[..., second]).mean(axis=-2)  # (heads, h)
    e = norm(q) * np.repeat(norm(k), H // n_kv, axis=0)  # (H, h): query head h reads key-value head h // G
    return e / e.sum(axis=1, keepdims=True)
