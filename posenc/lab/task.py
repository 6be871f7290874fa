"""A task with a known floor: sequences from a seeded k-th order Markov source.

axes: V vocabulary, k order, C = V**k contexts, B sequences, n positions.

Every next token depends on exactly the k tokens before it, through a transition table
T[c, y] = P(x_t = y | x_{t-k} .. x_{t-1} = c), one Dirichlet(alpha) row per context c (context
index c = sum_i x_{t-k+i} V^(k-1-i), the oldest token most significant).  Sequences start from
the stationary distribution pi of the context chain, so the process is stationary and the
Bayes-optimal next-token cross-entropy is known exactly:

    floor = H(X_t | X_{t-k} .. X_{t-1}) = sum_c pi(c) H(T[c, :])      for t >= k,
    floor_t = H(X_t | X_0 .. X_{t-1}) = H(pi_{t+1}) - H(pi_t)          for t < k,

where pi_m is the marginal of the first m tokens under pi.  No model can beat the floor on
average; the gap (loss - floor) is what a model failed to learn, or failed to carry past its
training length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from posenc._validate import check_float, check_int

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
