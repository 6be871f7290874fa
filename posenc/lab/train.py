"""Training: Adam on fresh batches from the Markov source, with a progress callback and a cancel hook.

axes: B batch, L training length.

All randomness comes from numpy.random.default_rng: the model's initial weights from
[seed, 0] and [seed, 1] (model.init_params), the training batches from [seed, 2], and with randomized
positions each batch's sample of positions from [seed, 3] (one sample per batch, drawn in step order).  The same
seed gives bit-identical numbers on one machine (float64; nothing multithreaded reorders a sum
except BLAS, whose order is fixed for fixed shapes on one machine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from posenc._validate import check_int
from posenc.lab.model import THREADS, ModelConfig, init_params, loss_and_grad, project
from posenc.lab.positions import positions, sampler
from posenc.lab.task import MarkovSource


class Cancelled(Exception):
    """Raised by ``train`` when its ``should_stop`` hook returns True (nothing is returned)."""


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 1000
    batch: int = 32
    lr: float = 1e-2
    warmup: int = 100  # linear warm-up steps, then cosine decay to lr * final_lr_ratio
    final_lr_ratio: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.98
    adam_eps: float = 1e-9
    clip: float = 1.0  # global gradient-norm clip

    def __post_init__(self):
        check_int("steps", self.steps, lo=1, hi=100_000)
        check_int("batch", self.batch, lo=1, hi=4096)
        check_int("warmup", self.warmup, lo=0, hi=100_000)

    def lr_at(self, step: int) -> float:
        """Learning rate at ``step`` (0-based): linear warm-up, then cosine to final_lr_ratio * lr."""
        if step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        t = (step - self.warmup) / max(1, self.steps - self.warmup)
        floor = self.final_lr_ratio
        return self.lr * (floor + (1 - floor) * 0.5 * (1 + np.cos(np.pi * t)))


def batches(source: MarkovSource, train: TrainConfig, train_len: int, seed: int, stream: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Every training batch at once, from default_rng([seed, stream]): inputs (steps, B, L) with BOS first, targets (steps, B, L)."""
    rng = np.random.default_rng([seed, stream])
    seqs = source.sample(rng, train.steps * train.batch, train_len).reshape(train.steps, train.batch, train_len)
    bos = np.full((train.steps, train.batch, 1), source.vocab, dtype=np.int64)
    return np.concatenate([bos, seqs[:, :, :-1]], axis=2), seqs


def with_bos(seqs: np.ndarray, vocab: int) -> np.ndarray:
    """Model inputs for target sequences (B, n): BOS then the first n - 1 tokens."""
    bos = np.full((seqs.shape[0], 1), vocab, dtype=np.int64)
    return np.concatenate([bos, seqs[:, :-1]], axis=1)


def train(
    scheme: str,
    source: MarkovSource,
    cfg: ModelConfig,
    tc: TrainConfig,
    *,
    train_len: int,
    seed: int,
    progress: Callable[[int, int, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    every: int = 25,
    initial: dict[str, np.ndarray] | None = None,
    randomize: int | None = None,
    extension: str | None = None,
    base_len: int | None = None,
    stream: int = 2,
    threads: int = THREADS,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Train one model; returns (parameters, training loss per step (steps,)).

    ``progress(step, steps, loss)`` is called every ``every`` steps and after the last one;
    ``should_stop()`` is asked at the same moments and raises ``Cancelled`` when it says True,
    so a stopped run never returns (or gets cached as) a partial model.  ``initial`` replaces the
    seeded initial parameters (the benchmark perturbs them to measure reproducibility).  ``randomize``: the range N
    of randomized positions (None: the scheme's own, positions.LAB; 0: positions 0 .. L-1): every batch then reads
    a new sorted sample of L positions from [0, N).  A trained bias's ``project`` follows every step.
    ``extension`` (RoPE only; a name in positions.EXTENSIONS, e.g. "pi") trains with that context extension's
    rotation, at factor train_len / ``base_len`` (None: train_len, factor 1): fine-tuning a RoPE model trained at L
    at 4L with PI is ``train_len=4 * L, base_len=L, extension="pi", initial=params``.  ``stream``: the training
    batches come from default_rng([seed, stream]) (2 by default; a fine-tune passes another to get new batches).
    ``threads`` (1 or 2): threads per step (model.loss_and_grad); the numbers are bit-identical for either, so a sweep
    of one process per core passes 1.
    """
    if cfg.vocab != source.vocab:
        raise ValueError(f"model vocab {cfg.vocab} differs from the source's {source.vocab}")
    L = check_int("train_len", train_len, lo=2, hi=4096)
    base = L if base_len is None else check_int("base_len", base_len, lo=1, hi=4096)
    check_int("stream", stream, lo=0, hi=1 << 30)
    check_int("threads", threads, lo=1, hi=THREADS)
    init = init_params(cfg, scheme, L, seed, randomize=randomize) if initial is None else initial
    names = list(init)
    flat = np.concatenate([init[k].ravel() for k in names])  # every parameter in one vector
    params, offset = {}, 0
    for k in names:  # views into ``flat``: one Adam update moves them all
        params[k] = flat[offset : offset + init[k].size].reshape(init[k].shape)
        offset += init[k].size
    pos = positions(scheme, L, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=base, extension=extension,
                    randomize=randomize)
    draw = sampler(scheme, randomize, np.random.default_rng([seed, 3]))  # None: positions 0 .. L-1 throughout
    inputs, targets = batches(source, tc, L, seed, stream)
    m = np.zeros_like(flat)
    v = np.zeros_like(flat)
    losses = np.empty(tc.steps)
    b1, b2 = tc.beta1, tc.beta2
    for step in range(tc.steps):
        if draw is not None:
            pos = positions(scheme, L, d_model=cfg.d_model, n_heads=cfg.n_heads, train_len=base, extension=extension,
                            at=draw(L), randomize=randomize)
        loss, grads = loss_and_grad(params, inputs[step], targets[step], pos, cfg, threads=threads)
        losses[step] = loss
        g = np.concatenate([grads[k].ravel() for k in names])
        g *= min(1.0, tc.clip / (np.sqrt(np.sum(g * g)) + 1e-12))  # global-norm clip (np.sum: a BLAS dot would multithread)
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * (g * g)
        c1, c2 = 1 - b1 ** (step + 1), 1 - b2 ** (step + 1)
        flat -= tc.lr_at(step) * (m / c1) / (np.sqrt(v / c2) + tc.adam_eps)
        project(params, pos)
        if (step + 1) % every == 0 or step + 1 == tc.steps:
            if progress is not None:
                progress(step + 1, tc.steps, loss)
            if should_stop is not None and should_stop():
                raise Cancelled(f"stopped at step {step + 1} of {tc.steps}")
    params = {k: p.copy() for k, p in params.items()}
    return params, losses
