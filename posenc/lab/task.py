"""Tasks with a known floor: a seeded k-th order Markov source, and noisy induction.

axes: V vocabulary, k order, C = V**k contexts, B sequences, n positions.

**Markov** (``MarkovSource``, "markov").  Every next token depends on exactly the k tokens before it, through a
transition table T[c, y] = P(x_t = y | x_{t-k} .. x_{t-1} = c), one Dirichlet(alpha) row per context c (context
index c = sum_i x_{t-k+i} V^(k-1-i), the oldest token most significant).  Sequences start from
the stationary distribution pi of the context chain, so the process is stationary and the
Bayes-optimal next-token cross-entropy is known exactly:

    floor = H(X_t | X_{t-k} .. X_{t-1}) = sum_c pi(c) H(T[c, :])      for t >= k,
    floor_t = H(X_t | X_0 .. X_{t-1}) = H(pi_{t+1}) - H(pi_t)          for t < k,

where pi_m is the marginal of the first m tokens under pi.  No model can beat the floor on
average; the gap (loss - floor) is what a model failed to learn, or failed to carry past its
training length.  Its Bayes predictor needs only the last k tokens: it rewards recency only.

**Noisy induction** (``InductionSource``, "induction").  Chosen a priori so that the Bayes predictor needs a token
at an unbounded distance: the induction pattern [A][B] ... [A] -> [B] that Olsson et al. 2022 ("In-context learning
and induction heads", arXiv:2209.11895) find two-layer attention models learn (a previous-token head and an induction
head), with noise so the floor is not 0.  x_0 is uniform; for t >= 1, let j be the most recent earlier position
j < t - 1 with x_j = x_{t-1} (the previous occurrence of the current token); if there is one, x_t = x_{j+1} with
probability rho and is uniform over V otherwise (so P(x_{j+1}) = rho + (1 - rho)/V); with no earlier occurrence x_t
is uniform.  The copy distance t - 1 - j is unbounded: it is the gap since the current token last occurred, about
V positions for a random token (``copy_distances`` measures it), so V sets how much of the task lies past L.
P(. | prefix) is exactly that mixture (``next_distributions``), and the expected floor at every position is exact
(``floor``): its entropy is log V off a copy context and

    h_copy = -(rho + (1-rho)/V) log(rho + (1-rho)/V) - (V-1) (1-rho)/V log((1-rho)/V)

on one, so floor_t = log V - P(A_t) (log V - h_copy), A_t = "x_{t-1} occurred before".  P(A_t) follows an exact
two-variable chain on (A_t, s = number of distinct tokens in x_0 .. x_{t-1}): a copy (probability rho, only when A_t)
repeats x_{j+1}, which is already in x_0 .. x_{t-1}, so A_{t+1} holds and s stays; a uniform draw is a seen token
(A_{t+1}, s stays) with probability s/V, else a new one (not A_{t+1}, s + 1).  Start: A_1 false, s = 1.  As t grows
every token is seen and P(A_t) -> 1, so ``entropy`` (the floor the lab reports) is the limit h_copy; ``floor(n)``
gives every position's, ``prefix_floor`` is empty (the floor approaches its limit at every position, geometrically).
Defaults (``TASK_DEFAULTS``), set before any training: V = 16, rho = 0.8.  At V = 16 a token recurs after ~16
positions, so within L = 32 most positions are copy contexts (P(A_31) = 0.877), while some copies reach back further
than L; rho = 0.8 makes a copy context worth log 16 - h_copy = 1.782 nats, a strong signal.  A copy repeats a
segment at the same lag, so sequences fall into short repeated loops and most copy distances are short.  Measured on
2000 sequences from default_rng(0) (a property of the task, no model; ``tests/test_lab_induction.py``), over all
positions < n at n = L, 2L, 4L, 8L (L = 32): copy contexts 67.0 / 79.3 / 87.9 / 93.5 %, copy distance >= L at
0 / 1.99 / 5.29 / 8.18 % of positions, median copy distance 4 / 4 / 5 / 5 and 99th percentile 23 / 41 / 71 / 108.
So a model that attends no further than L back loses at least those positions' copies past L.  Checked in
distribution only, once, at the lab's defaults (seed 0, 1000 steps, ``train`` then ``position_losses`` on
``eval_sequences(source, 64, L)``; no loss past L looked at, nothing tuned): gap at L 0.0053 nats for RoPE (0.4 % of
uniform - Bayes at L, 1.210 nats), 0.088 for ALiBi (7.2 %), 0.402 for NoPE (33 %: not learned in 1000 steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from posenc._validate import check_choice, check_float, check_int

MAX_CONTEXTS = 4096  # V**k: the stationary vector and the table stay small (4096 x 16 floats)
MAX_VOCAB = 64
MAX_ORDER = 6
_STATIONARY_TOL = 1e-15
_STATIONARY_MAX_ITERS = 200_000


def _entropy_rows(P: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of P, shape P.shape[:-1]; 0 log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(P > 0, -P * np.log(P), 0.0)
    return terms.sum(axis=-1)


def stationary(table: np.ndarray, vocab: int, order: int) -> np.ndarray:
    """Stationary distribution of the context chain, shape (V**k,).

    The chain moves context (x_1 .. x_k) to (x_2 .. x_k, y) with probability T[c, y].  We iterate
    the lazy chain (I + P) / 2, which has the same stationary vectors and is aperiodic, from the
    uniform vector until the L1 change is below 1e-15 (a deterministic or periodic table still
    converges to one of its stationary vectors).  Raises ValueError if it does not converge.
    """
    V, k = vocab, order
    T = table.reshape((V,) * k + (V,))  # (V, ..., V | V): context axes then the next token
    pi = np.full((V,) * k, 1.0 / V**k)
    for _ in range(_STATIONARY_MAX_ITERS):
        # step: new[x_2..x_k, y] = sum_{x_1} pi[x_1..x_k] T[x_1..x_k, y]
        moved = np.einsum("a...,a...y->...y", pi, T)
        new = 0.5 * (pi + moved)
        new /= new.sum()
        if np.abs(new - pi).sum() < _STATIONARY_TOL:
            return new.reshape(-1)
        pi = new
    raise ValueError(f"the stationary distribution did not converge within {_STATIONARY_MAX_ITERS} steps")


@dataclass(frozen=True)
class MarkovSource:
    """A k-th order Markov source over ``vocab`` tokens with its exact entropies.

    Build one with ``MarkovSource.random(vocab, order, seed=..., concentration=...)`` or from an
    explicit table with ``MarkovSource.from_table(table, vocab, order)``.
    """

    vocab: int
    order: int
    table: np.ndarray  # (C, V) rows sum to 1
    pi: np.ndarray  # (C,) stationary distribution of contexts
    entropy: float  # exact conditional entropy H(X_t | previous k), nats
    prefix_floor: tuple[float, ...] = field(default=())  # H(X_t | X_<t) for t = 0 .. k-1

    # ------------------------------------------------------------------ construction
    @staticmethod
    def random(vocab: int, order: int, *, seed: int = 0, concentration: float = 0.5) -> MarkovSource:
        """Rows T[c, :] ~ Dirichlet(concentration * 1_V), drawn with numpy.random.default_rng(seed)."""
        V, k = _check_vk(vocab, order)
        seed = check_int("seed", seed, lo=0, hi=2**32 - 1)
        a = check_float("concentration", concentration, lo=1e-3, hi=1e3)
        table = np.random.default_rng(seed).dirichlet(np.full(V, a), size=V**k)  # (C, V)
        return MarkovSource.from_table(table, V, k)

    @staticmethod
    def from_table(table, vocab: int, order: int) -> MarkovSource:
        V, k = _check_vk(vocab, order)
        T = np.asarray(table, dtype=np.float64)
        if T.shape != (V**k, V) or not np.all(np.isfinite(T)) or np.any(T < 0):
            raise ValueError(f"table must be a finite non-negative ({V**k}, {V}) array, got shape {T.shape}")
        if not np.allclose(T.sum(axis=1), 1.0, rtol=0, atol=1e-12):
            raise ValueError("every row of table must sum to 1")
        T = T / T.sum(axis=1, keepdims=True)
        pi = stationary(T, V, k)
        H = float(pi @ _entropy_rows(T))
        # prefix floors: H(pi_{t+1}) - H(pi_t), pi_m = marginal of the first m tokens
        joint = pi.reshape((V,) * k)
        ent = [0.0]
        for m in range(1, k + 1):
            marg = joint.sum(axis=tuple(range(m, k))) if m < k else joint
            ent.append(float(_entropy_rows(marg.reshape(1, -1))[0]))
        prefix = tuple(ent[t + 1] - ent[t] for t in range(k))
        T.setflags(write=False)
        pi.setflags(write=False)
        return MarkovSource(V, k, T, pi, H, prefix)

    # ------------------------------------------------------------------ exact quantities
    @property
    def uniform(self) -> float:
        """Cross-entropy of a uniform guess, log V (nats)."""
        return math.log(self.vocab)

    def floor(self, n: int) -> np.ndarray:
        """Bayes-optimal expected loss at each of the first n positions, shape (n,)."""
        n = check_int("n", n, lo=1)
        out = np.full(n, self.entropy)
        m = min(n, self.order)
        out[:m] = self.prefix_floor[:m]
        return out

    # ------------------------------------------------------------------ sampling
    def sample(self, rng: np.random.Generator, n_seqs: int, length: int) -> np.ndarray:
        """``n_seqs`` stationary sequences of ``length`` tokens, int64 (n_seqs, length)."""
        B = check_int("n_seqs", n_seqs, lo=1)
        n = check_int("length", length, lo=1)
        V, k = self.vocab, self.order
        out = np.empty((B, max(n, k)), dtype=np.int64)
        # the first k tokens jointly from pi (inverse CDF on one uniform each)
        cdf_pi = np.cumsum(self.pi)
        c = np.minimum(np.searchsorted(cdf_pi, rng.random(B), side="right"), V**k - 1)  # (B,) context ids
        for i in range(k):
            out[:, i] = (c // V ** (k - 1 - i)) % V
        cdf = np.cumsum(self.table, axis=1)  # (C, V)
        for t in range(k, n):
            u = rng.random(B)
            y = np.minimum((u[:, None] >= cdf[c]).sum(axis=1), V - 1)  # (B,)
            out[:, t] = y
            c = (c * V + y) % V**k
        return out[:, :n]

    def next_distributions(self, seqs: np.ndarray) -> np.ndarray:
        """P(x_t = . | x_0 .. x_{t-1}) at every position of ``seqs`` (B, n): shape (B, n, V).

        For t >= k this is the table row of the k previous tokens; for t < k it is the
        conditional of the stationary marginals (the source's own prefix distribution).
        """
        x = np.asarray(seqs, dtype=np.int64)
        B, n = x.shape
        V, k = self.vocab, self.order
        out = np.empty((B, n, V))
        joint = self.pi.reshape((V,) * k)
        for t in range(min(n, k)):
            marg = joint.sum(axis=tuple(range(t + 1, k))) if t + 1 < k else joint  # (V,)*(t+1)
            rows = marg[tuple(x[:, i] for i in range(t))] if t else np.broadcast_to(marg, (B, V))  # (B, V) P(x_<t, y)
            out[:, t] = rows / rows.sum(axis=1, keepdims=True)
        if n > k:
            # context id of x_{t-k} .. x_{t-1} for every t >= k
            ctx = np.zeros((B, n - k), dtype=np.int64)
            for i in range(k):
                ctx = ctx * V + x[:, i : n - k + i]
            out[:, k:] = self.table[ctx]
        return out


def _check_vk(vocab, order) -> tuple[int, int]:
    V = check_int("vocab", vocab, lo=2, hi=MAX_VOCAB)
    k = check_int("order", order, lo=1, hi=MAX_ORDER)
    if V**k > MAX_CONTEXTS:
        raise ValueError(f"vocab ** order must be at most {MAX_CONTEXTS} contexts, got {V}^{k} = {V**k}")
    return V, k


def copy_entropy(vocab: int, rho: float) -> float:
    """Entropy (nats) of rho * delta + (1 - rho) * uniform over ``vocab`` tokens: the floor of a copy context."""
    V = check_int("vocab", vocab, lo=2, hi=MAX_VOCAB)
    r = check_float("rho", rho, lo=0.0, hi=1.0)
    hit, miss = r + (1 - r) / V, (1 - r) / V
    return float(-hit * math.log(hit) - ((V - 1) * miss * math.log(miss) if miss > 0 else 0.0))


@dataclass(frozen=True)
class InductionSource:
    """Noisy induction over ``vocab`` tokens with copy probability ``rho`` (module docstring).

    Duck-typed like ``MarkovSource`` for the lab's engine: ``vocab``, ``entropy``, ``uniform``, ``prefix_floor``,
    ``sample`` and ``next_distributions``; also ``floor(n)`` and ``copy_distances``.
    """

    vocab: int
    rho: float
    entropy: float = field(init=False)  # the floor's limit: h_copy (every position past the first few is a copy context)
    prefix_floor: tuple[float, ...] = field(init=False, default=())  # none: use floor(n), exact at every position

    def __post_init__(self):
        object.__setattr__(self, "vocab", check_int("vocab", self.vocab, lo=2, hi=MAX_VOCAB))
        object.__setattr__(self, "rho", check_float("rho", self.rho, lo=0.0, hi=1.0))
        object.__setattr__(self, "entropy", copy_entropy(self.vocab, self.rho))

    @property
    def uniform(self) -> float:
        """Cross-entropy of a uniform guess, log V (nats)."""
        return math.log(self.vocab)

    # ------------------------------------------------------------------ exact quantities
    def copy_probability(self, n: int) -> np.ndarray:
        """P(A_t) for t = 0 .. n-1, shape (n,): the chance that position t is a copy context (x_{t-1} occurred
        before), by the exact chain on (A_t, s) of the module docstring; 0 at t = 0 and t = 1."""
        n = check_int("n", n, lo=1, hi=1 << 20)
        V, r = self.vocab, self.rho
        p = np.zeros((2, V + 2))  # p[a, s] = P(A_t = a, s distinct tokens so far), s = 1 .. V
        p[0, 1] = 1.0  # t = 1: x_0 has no earlier occurrence, one distinct token
        s = np.arange(V + 2)
        out = np.zeros(n)
        for t in range(1, n):
            out[t] = p[1].sum()
            stay = p[1] * r  # a copy: A_{t+1}, s unchanged
            draw = p[0] + p[1] * (1 - r)  # a uniform draw
            new = np.zeros_like(p)
            new[1] = stay + draw * s / V  # a seen token
            new[0, 1:] = (draw * (V - s) / V)[:-1]  # a new token: s + 1
            p = new
        return out

    def floor(self, n: int) -> np.ndarray:
        """Bayes-optimal expected loss at each of the first n positions, shape (n,):
        log V - P(A_t) (log V - h_copy)."""
        return self.uniform - self.copy_probability(n) * (self.uniform - self.entropy)

    # ------------------------------------------------------------------ sampling
    def _previous(self, x: np.ndarray, t: int, last: np.ndarray) -> np.ndarray:
        """j (B,) of position t (-1: none), and records x_{t-1} at t - 1 in ``last`` (B, V)."""
        rows = np.arange(x.shape[0])
        c = x[:, t - 1]
        j = last[rows, c].copy()
        last[rows, c] = t - 1
        return j

    def sample(self, rng: np.random.Generator, n_seqs: int, length: int) -> np.ndarray:
        """``n_seqs`` sequences of ``length`` tokens, int64 (n_seqs, length).

        Draw order (fixed, so a seed gives the same sequences): x_0 uniform for every sequence, then per position
        t >= 1 one uniform u per sequence (copy when u < rho and x_{t-1} occurred before) and one uniform token."""
        B = check_int("n_seqs", n_seqs, lo=1)
        n = check_int("length", length, lo=1)
        V = self.vocab
        x = np.empty((B, n), dtype=np.int64)
        x[:, 0] = rng.integers(V, size=B)
        last = np.full((B, V), -1, dtype=np.int64)  # last position of each token among x_0 .. x_{t-2}
        rows = np.arange(B)
        for t in range(1, n):
            j = self._previous(x, t, last)  # (B,)
            u, y = rng.random(B), rng.integers(V, size=B)
            copy = (j >= 0) & (u < self.rho)
            x[:, t] = np.where(copy, x[rows, np.maximum(j, 0) + 1], y)
        return x

    def next_distributions(self, seqs: np.ndarray) -> np.ndarray:
        """P(x_t = . | x_0 .. x_{t-1}) at every position of ``seqs`` (B, n): shape (B, n, V).

        Uniform where x_{t-1} has no earlier occurrence (and at t = 0); rho on x_{j+1} plus (1 - rho)/V everywhere
        where j is its most recent earlier occurrence."""
        x = np.asarray(seqs, dtype=np.int64)
        B, n = x.shape
        V = self.vocab
        out = np.full((B, n, V), 1.0 / V)
        last = np.full((B, V), -1, dtype=np.int64)
        rows = np.arange(B)
        for t in range(1, n):
            j = self._previous(x, t, last)
            hit = j >= 0
            out[hit, t] = (1 - self.rho) / V
            out[rows[hit], t, x[rows[hit], j[hit] + 1]] += self.rho
        return out

    def copy_distances(self, seqs: np.ndarray) -> np.ndarray:
        """t - 1 - j at every position of ``seqs`` (B, n): how far back the copied token sits, int64 (B, n);
        -1 where position t is not a copy context (x_{t-1} did not occur before, or t = 0)."""
        x = np.asarray(seqs, dtype=np.int64)
        B, n = x.shape
        out = np.full((B, n), -1, dtype=np.int64)
        last = np.full((B, self.vocab), -1, dtype=np.int64)
        for t in range(1, n):
            j = self._previous(x, t, last)
            out[:, t] = np.where(j >= 0, t - 1 - j, -1)
        return out


# ---------------------------------------------------------------------- the lab's tasks, one registry
# keep in sync: TASKS, TASK_DEFAULTS, TASK_NAMES, TASK_PARAMS (a test checks they share their keys)
TASKS = {"markov": MarkovSource, "induction": InductionSource}
TASK_NAMES = {"markov": "Markov (order k)", "induction": "Noisy induction"}
# each task's default settings; chosen before any training (module docstring), never tuned on a loss past L
TASK_DEFAULTS = {
    "markov": {"vocab": 8, "order": 2, "concentration": 0.5},
    "induction": {"vocab": 16, "rho": 0.8},
}
# the task's own parameters beyond vocab, order, seed and concentration, with their allowed range
TASK_PARAMS = {"markov": {}, "induction": {"rho": (0.0, 1.0)}}
_TABLE_TASKS = ("markov",)  # built from a seeded random table: MarkovSource.random


def source_for(task: str, *, vocab: int, order: int = 2, seed: int = 0, concentration: float = 0.5,
               **task_params) -> MarkovSource | InductionSource:
    """The source of ``task`` ("markov" or "induction").

    Markov reads ``vocab``, ``order``, ``seed`` and ``concentration`` (``MarkovSource.random``) and no task parameter;
    induction reads ``vocab`` and ``rho`` (default ``TASK_DEFAULTS``) and no table, so ``order``, ``seed`` and
    ``concentration`` do not change it (they are still checked: one LabConfig serves both).  An unknown task or
    parameter raises ValueError naming the allowed ones."""
    check_choice("task", task, TASKS)
    allowed = TASK_PARAMS[task]
    unknown = sorted(set(task_params) - set(allowed))
    if unknown:
        raise ValueError(f"task {task!r} takes the parameters {sorted(allowed) or 'none'} beyond vocab, order, seed and "
                         f"concentration, got {unknown}")
    if task in _TABLE_TASKS:
        return MarkovSource.random(vocab, order, seed=seed, concentration=concentration)
    check_int("order", order, lo=1, hi=MAX_ORDER)  # checked, not used: no table, so no bound on vocab ** order
    check_int("seed", seed, lo=0, hi=2**32 - 1)
    check_float("concentration", concentration, lo=1e-3, hi=1e3)
    params = {**{k: v for k, v in TASK_DEFAULTS[task].items() if k in allowed}, **task_params}
    for name, (lo, hi) in allowed.items():
        params[name] = check_float(name, params[name], lo=lo, hi=hi)
    return TASKS[task](vocab, **params)
