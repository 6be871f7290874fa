"""Evaluation past the training length, and where attention goes.

axes: S evaluation sequences, n positions (the length evaluated), V vocabulary, H heads.

Loss at position t is the model's cross-entropy against the source's exact next-token
distribution given the actual context, sum_y P(y | x_<t) (-log q(y | x_<t)), averaged over the
S evaluation sequences (exact over the next token, Monte Carlo only over contexts).  On the same
contexts the Bayes-optimal predictor scores sum_y P log(1/P), so

    gap_t = loss_t - bayes_t = KL(P(. | x_<t) || q(. | x_<t)) >= 0

is exactly what the model failed to learn (or to carry past L).  ``bayes_t`` averages to the
source's conditional entropy (task.MarkovSource.floor); both are reported.

With randomized positions every forward pass (CHUNK sequences) reads a new sorted sample of n positions from
[0, N), as in training (and as the reference code evaluates), from default_rng([EVAL_SEED, 4, n]).
"""

from __future__ import annotations

import numpy as np

from posenc._validate import check_int
from posenc.lab.model import ModelConfig, _bias, forward, log_probs
from posenc.lab.positions import PER_POSITION, positions, sampler
from posenc.lab.task import MarkovSource
from posenc.lab.train import with_bos

EVAL_SEED = 10_000  # evaluation sequences: default_rng([EVAL_SEED, 3]); never used for training
CHUNK = 16  # sequences per forward pass (bounds the (CHUNK, H, n, n) attention memory)
# sequences per forward pass of ``attention_layers``, which keeps every layer's (B, H, n, n) probabilities: at 8L = 256
# a pass of 16 held arrays of 34 MB, fresh memory in each new script thread (0.6 s of page faults a call in a live
# server); passes of 4 reuse 8 MB ones.  Randomized positions still draw one sample per CHUNK, as position_losses does.
ATTENTION_BATCH = 4
PASS_FLOATS = 1 << 22  # per_position_log_probs: float64s of one layer's attention per last-query pass (32 MiB)


def eval_sequences(source: MarkovSource, n_seqs: int, length: int) -> np.ndarray:
    """The fixed evaluation sequences, (S, length) int64; every model sees the same ones."""
    return source.sample(np.random.default_rng([EVAL_SEED, 3]), n_seqs, length)


def _entropy(P: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(P > 0, -P * np.log(P), 0.0).sum(axis=-1)


def _passes(scheme: str, n: int, cfg: ModelConfig, *, train_len: int, extension: str | None, randomize: int | None):
    """``next_pass()``: the Positions of the next forward pass of n tokens -- one record for every pass, or with
    randomized positions a new sample for each (from default_rng([EVAL_SEED, 4, n]), so every model gets the same)."""
    draw = sampler(scheme, randomize, np.random.default_rng([EVAL_SEED, 4, n]))

    def build(at=None):
        return positions(scheme, n, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=train_len, extension=extension,
                         at=at, randomize=randomize)

    if draw is None:
        fixed = build()
        return lambda: fixed
    return lambda: build(draw(n))


def position_losses(params, scheme: str, source: MarkovSource, cfg: ModelConfig, seqs: np.ndarray, *,
                    train_len: int, extension: str | None = None, randomize: int | None = None) -> dict[str, np.ndarray]:
    """Per-position loss, Bayes loss and gap (KL), each (n,), for a length-n forward pass.

    ``seqs`` (S, n) are target sequences; the model reads BOS + seqs[:, :-1].  Raises ValueError
    where the scheme has no encoding at that length (the learned table past L, randomized positions past their
    range N).  ``randomize``: the range N, as in train.train (None: the scheme's own).
    """
    S, n = seqs.shape
    if extension in PER_POSITION:
        P = source.next_distributions(seqs)  # (S, n, V)
        lq = per_position_log_probs(params, scheme, with_bos(seqs, source.vocab), cfg, train_len=train_len,
                                    extension=extension)
        loss = -(P * lq).sum(axis=-1).mean(axis=0)
        bayes = _entropy(P).mean(axis=0)
        return {"loss": loss, "bayes": bayes, "gap": loss - bayes}
    next_pass = _passes(scheme, n, cfg, train_len=train_len, extension=extension, randomize=randomize)
    loss, P = np.zeros(n), None
    for i in range(0, S, CHUNK):
        pos = next_pass()
        P = source.next_distributions(seqs) if P is None else P  # (S, n, V)
        lq = log_probs(params, with_bos(seqs[i : i + CHUNK], source.vocab), pos, cfg)  # (s, n, V)
        loss += -(P[i : i + CHUNK] * lq).sum(axis=-1).sum(axis=0)
    loss /= S
    bayes = _entropy(P).mean(axis=0)  # (n,)
    return {"loss": loss, "bayes": bayes, "gap": loss - bayes}


def per_position_log_probs(params, scheme: str, inputs: np.ndarray, cfg: ModelConfig, *, train_len: int,
                           extension: str) -> np.ndarray:
    """log q (S, n, V) of an extension whose frequencies depend on the current length (dynamic NTK), as transformers
    computes it without a cache: the query at position t (it has read t + 1 tokens) comes from a forward pass of
    inputs[:, :t + 1] with the frequencies of seq_len t + 1 -- every layer, every key of that pass at the scale
    s = max(1, (t + 1) / L).  Up to L the scale is 1 for every query, so one causal pass of length min(n, L) serves
    them all; past L there is one pass per position, of which only the last query is read: its last layer runs
    that query alone (model.forward's ``last``), with as many sequences per pass as ``PASS_FLOATS`` allows.
    Position t reads inputs[:, :t + 1] only, so the rows of a longer sequence's result hold a shorter prefix's."""
    S, n = inputs.shape
    out = np.empty((S, n, cfg.vocab))
    head = min(n, train_len)
    pos = positions(scheme, head, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=train_len, extension=extension)
    for i in range(0, S, CHUNK):
        out[i : i + CHUNK, :head] = log_probs(params, inputs[i : i + CHUNK, :head], pos, cfg)
    for t in range(head, n):  # the pass of t + 1 tokens: its last query only (model.forward's ``last``)
        pos = positions(scheme, t + 1, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=train_len, extension=extension)
        rows = _rows_per_pass(t + 1, cfg.n_heads)
        for i in range(0, S, rows):
            out[i : i + rows, t] = log_probs(params, inputs[i : i + rows, : t + 1], pos, cfg, last=True)[:, 0]
    return out


def _rows_per_pass(n: int, H: int) -> int:
    """Sequences per last-query pass: as many as keep one layer's (rows, H, n, n) attention within PASS_FLOATS."""
    return max(1, PASS_FLOATS // (H * n * n))


def attention(params, scheme: str, source: MarkovSource, cfg: ModelConfig, seqs: np.ndarray, *,
              train_len: int, layer: int, extension: str | None = None, randomize: int | None = None) -> np.ndarray:
    """Attention probabilities of ``layer`` averaged over the sequences: (H, n, n), rows = queries."""
    check_int("layer", layer, lo=0, hi=cfg.n_layers - 1)
    return attention_layers(params, scheme, source, cfg, seqs, train_len=train_len, extension=extension,
                            randomize=randomize)[layer]


def attention_layers(params, scheme: str, source: MarkovSource, cfg: ModelConfig, seqs: np.ndarray, *,
                     train_len: int, extension: str | None = None, randomize: int | None = None) -> np.ndarray:
    """Attention probabilities of every layer averaged over the sequences, from forward passes of ATTENTION_BATCH
    sequences (randomized positions: a sample per CHUNK, as ``position_losses``): (n_layers, H, n, n), rows = queries."""
    S, n = seqs.shape
    if extension in PER_POSITION:
        raise ValueError(f"{extension!r} reads each query at its own length (one forward pass per position): "
                         "there is no single attention map of the whole sequence")
    next_pass = _passes(scheme, n, cfg, train_len=train_len, extension=extension, randomize=randomize)
    total = np.zeros((cfg.n_layers, cfg.n_heads, n, n))
    for i in range(0, S, CHUNK):
        pos = next_pass()
        bias = _bias(params, pos)  # (H, n, n), once for the CHUNK's passes
        for j in range(i, min(i + CHUNK, S), ATTENTION_BATCH):
            batch = seqs[j : min(j + ATTENTION_BATCH, i + CHUNK)]
            _, cache = forward(params, with_bos(batch, source.vocab), pos, cfg, keep_attention=True, bias=bias)
            for layer in range(cfg.n_layers):
                total[layer] += cache["attn"][layer].sum(axis=0)
    return total / S


def mass_on_context(attn: np.ndarray, order: int) -> np.ndarray:
    """Attention mass each query puts on the k input positions that hold the tokens the next
    token depends on, (H, n).

    The query at position t predicts x_t; the source reads x_{t-k} .. x_{t-1}, which sit at
    input positions t-k+1 .. t (position p holds x_{p-1}; position 0 is BOS).  So the mass is
    the sum over keys j with 0 <= t - j <= k - 1 (the query's own position included).
    """
    n = attn.shape[-1]
    k = check_int("order", order, lo=1)
    i = np.arange(n)
    offset = i[:, None] - i[None, :]  # (n, n) t - j
    near = (offset >= 0) & (offset < k)
    return (attn * near[None]).sum(axis=-1)
