"""The three kinds of positional scheme, and what a scheme of each kind must answer.

axes: n positions, m offsets j - i, d width (d_model or head_dim), h pairs, H heads, i/j query/key.

Every registered scheme holds one behaviour object of its kind -- the idea of Hugging Face's
``ROPE_INIT_FUNCTIONS`` (one signature per kind, one dict), applied to every scheme:

| kind       | position enters     | defining function                                           |
|------------|---------------------|-------------------------------------------------------------|
| additive   | the input embedding | ``encode(positions, d, *, seq_len, **p) -> (n, d)``          |
| rotary     | queries and keys    | ``qk(q, k, positions, *, seq_len, **p) -> (q', k')``         |
| bias       | the attention logits| ``bias(qpos, kpos, n_heads, **p) -> (H, n_q, n_k)``          |

Each behaviour also carries the *closed form* of its score against the offset j - i (additive:
``dot_profile``; rotary: ``profile``; bias: ``offset_bias``) and two declarations, as predicates
of the width d: ``offset_only`` (the score depends only on j - i, so the O(n) offset profile may
replace the dense product) and ``isometric`` (the distance between the signatures of p and p + k
depends only on k, so the exact O(n d) closest pair applies).  The analyses read these and never
test a key; ``tests/test_core_contract.py`` checks every declaration numerically against a dense
computation from the defining function, so a wrong declaration fails a test instead of silently
changing a number on a page.

Every method here takes parameters that ``Scheme.validate_params`` has already checked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.schemes.scaling import check_head_dim, default_inv_freq

Predicate = Callable[..., bool]  # (d, n=None, **params) -> bool: at width d, for positions 0 .. n-1 (None: any n)
PROBES = ("ones", "random")
DENSE_BLOCK_BYTES = 1 << 26  # a bias scheme's dense matrix is built in blocks of query rows of at most 64 MiB


def probe_vector(d: int, probe: str = "ones", *, seed: int = 0) -> np.ndarray:
    """A fixed query or key used to turn a rotation into a score, shape (d,).

    "ones": every channel 1, so each pair contributes 2 cos(offset * theta_k) and the score at
    offset 0 is d (the classic RoPE decay curve).  "random": a seeded standard-normal vector.
    """
    d = check_int("d", d, lo=1)
    check_choice("probe", probe, PROBES)
    if probe == "ones":
        return np.ones(d)
    return np.random.default_rng(seed).standard_normal(d)


def probe_pair(d: int, probe: str) -> tuple[np.ndarray, np.ndarray]:
    """(query probe, key probe) at head_dim d: all ones, or two different seeded normal vectors (seeds 0, 1)."""
    d = check_head_dim(d)
    return probe_vector(d, probe, seed=0), probe_vector(d, probe, seed=1)


def always(d: int, n: int | None = None, **params) -> bool:
    """Holds at every width, length and setting."""
    return True


def never(d: int, n: int | None = None, **params) -> bool:
    """Holds at no width."""
    return False


def even_width(d: int, n: int | None = None, **params) -> bool:
    """Holds when d is even (sin/cos columns come in complete pairs)."""
    return d % 2 == 0


def no_parameters(d: int, n_heads: int, **params) -> int:
    """A scheme with nothing to train."""
    return 0


def _callables(owner: object, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if not callable(getattr(owner, n))]


def additive_unit(metric: str, dot: str = "dot product PE(i)·PE(j)") -> str:
    """What the score of two added vectors (an additive scheme's, an uploaded table's rows) compared by ``metric`` means."""
    return "cosine similarity" if metric == "cosine" else dot


@dataclass(frozen=True)
class Additive:
    """A vector added to the token embedding: ``encode(positions, d, *, seq_len, **p) -> (n, d)``.

    ``dot_profile(offsets, d, **p) -> (m,)`` is PE(p) . PE(p + k) in closed form (required when
    ``offset_only`` can hold).  ``frequencies(d, **p) -> (h,)`` gives the angular frequency of each
    sin/cos column pair and ``pair_columns(d, **p) -> (h, 2)`` their column indices, for schemes made
    of sinusoids.  ``table(d, **p) -> (max_len, d)`` and ``max_len`` describe a lookup table, which is
    undefined at positions >= max_len; ``width`` fixes the encoding width (a bundled table).
    """

    encode: Callable[..., np.ndarray]
    offset_only: Predicate
    isometric: Predicate
    dot_profile: Callable[..., np.ndarray] | None = None
    frequencies: Callable[..., np.ndarray] | None = None
    pair_columns: Callable[..., np.ndarray] | None = None
    table: Callable[..., np.ndarray] | None = None
    max_len: int | None = None
    width: int | None = None
    parameters: Callable[..., int] = no_parameters
    score_unit: str = additive_unit("dot")

    # what a page shows about its scores: defaults of the kind, which a scheme may override (contract-tested)
    centered_scores: bool = True  # dot products and cosines: symmetric about 0
    scores_use_width: bool = True  # an added vector has d entries
    uses_heads: bool = False  # one position signal, shared by every head

    kind: ClassVar[str] = "additive"
    rotates: ClassVar[bool] = False  # queries and keys are not rotated by position
    mask_only: ClassVar[bool] = False  # an added vector is a position signal
    scaling_block: ClassVar[None] = None  # not a Hugging Face rope_type
    enters: ClassVar[str] = "input embedding"

    def unit(self, metric: str) -> str:
        """What a position score means when ``metric`` ("dot" or "cosine") compares the added vectors."""
        return additive_unit(metric, self.score_unit)

    def score_metric(self, metric: str) -> str:
        """Added vectors are compared by the ``metric`` asked for ("dot" or "cosine")."""
        return metric

    def pair_frequencies(self, d: int, seq_len: int | None, params: dict) -> np.ndarray | None:
        """The angular frequency of each sin/cos column pair (h,); None if not built of sinusoids."""
        return None if self.frequencies is None else self.frequencies(d, **params)

    def spectrum(self, d: int, seq_len: int | None, params: dict) -> tuple[np.ndarray, float, np.ndarray] | None:
        """(angular frequency per column pair, attention factor 1, scale 1 per pair); None if not built of sinusoids."""
        omega = self.pair_frequencies(d, seq_len, params)
        if omega is None:
            return None
        omega = np.asarray(omega, dtype=np.float64)
        return omega, 1.0, np.ones_like(omega)

    def layer_inputs(self, pos: np.ndarray, d: int, seq_len: int, params: dict) -> dict:
        """What an attention layer takes from this scheme at ``pos``: the added vectors, {"pe": (n, d)}."""
        return {"pe": self.encode(pos, d, seq_len=seq_len, **params)}

    def problems(self) -> list[str]:
        """What is missing or inconsistent (empty when the behaviour is complete)."""
        out = [f"{n} is not callable" for n in _callables(self, ("encode", "offset_only", "isometric", "parameters"))]
        if self.offset_only is not never and self.dot_profile is None:
            out.append("declares offset_only but has no dot_profile (the closed form the fast path uses)")
        if (self.table is None) != (self.max_len is None):
            out.append("a lookup table needs both table and max_len")
        return out

    # -- what every analysis asks --------------------------------------------------------
    def signature(self, positions, d, *, seq_len, params, n_heads, probe):  # (n, d): the added vector
        return self.encode(positions, d, seq_len=seq_len, **params)

    def dense_scores(self, n, d, *, params, n_heads, head, probe):  # (n, n) PE(i) . PE(j)
        E = self.encode(np.arange(n, dtype=np.float64), d, seq_len=n, **params)  # (n, d)
        return E @ E.T

    def offset_profile(self, offsets, d, *, seq_len, params, n_heads, head, probe):  # (m,)
        return self.dot_profile(offsets, d, **params)


@dataclass(frozen=True)
class Rotary:
    """A position-dependent linear map of queries and keys: ``qk(q, k, positions, *, seq_len, **p)``.

    q and k have shape (..., n, d); ``k`` may be None (then k' is None).  q and k may be transformed
    differently (xPos scales them by inverse factors).  ``profile(offsets, q, k, *, seq_len, **p)``
    is the closed form of q'(i) . k'(i + offset), shape (m,); ``frequencies(d, *, seq_len, **p)``
    returns (inv_freq (d/2,), attention_factor) as Hugging Face's rope init functions do.
    """

    qk: Callable[..., tuple]
    profile: Callable[..., np.ndarray]
    frequencies: Callable[..., tuple]
    isometric: Predicate
    offset_only: Predicate = always
    scaling_block: Callable[..., dict | None] | None = None  # (**params) -> the HF rope_scaling block it stands for
    parameters: Callable[..., int] = no_parameters
    score_unit: str = "q·k score"

    centered_scores: bool = True  # q'·k' of the all-ones probe: cosines summed, symmetric about 0
    scores_use_width: bool = True  # q and k have d entries
    uses_heads: bool = False  # one position signal, shared by every head
    position_limit: Callable[..., int] | None = None  # (**p) -> positions >= it are undefined (randomized: its range)

    kind: ClassVar[str] = "rotary"
    rotates: ClassVar[bool] = True  # queries and keys rotate by position at frequencies from a base
    mask_only: ClassVar[bool] = False  # a rotation is a position signal
    enters: ClassVar[str] = "queries and keys"

    def unit(self, metric: str) -> str:
        """What a position score means: q'·k' of the all-ones probe, whatever ``metric`` is asked for."""
        return f"{self.score_unit} (all-ones probe)"

    def score_metric(self, metric: str) -> str:
        """A rotary score is q'·k', whatever ``metric`` is asked for."""
        return "dot"

    def pair_frequencies(self, d: int, seq_len: int | None, params: dict) -> tuple:
        """(inv_freq (d/2,), attention_factor), as Hugging Face's rope init functions return them."""
        return self.frequencies(d, seq_len=seq_len, **params)

    def spectrum(self, d: int, seq_len: int | None, params: dict) -> tuple[np.ndarray, float, np.ndarray]:
        """(inv_freq per pair, attention factor, inv_freq / plain RoPE's at the same base: 1 where unscaled)."""
        omega, af = self.pair_frequencies(d, seq_len, params)
        return omega, af, omega / default_inv_freq(d, params["base"]) if "base" in params else np.ones_like(omega)

    def layer_inputs(self, pos: np.ndarray, d: int, seq_len: int, params: dict) -> dict:
        """What an attention layer takes from this scheme at ``pos``: its map of queries and keys, {"qk": (Q, K) -> (Q', K')}."""
        return {"qk": lambda Q, K: self.qk(Q, K, pos, seq_len=seq_len, **params)}
    table: ClassVar[None] = None
    max_len: ClassVar[None] = None
    width: ClassVar[None] = None

    def problems(self) -> list[str]:
        return [f"{n} is not callable" for n in
                _callables(self, ("qk", "profile", "frequencies", "isometric", "offset_only", "parameters"))]

    def signature(self, positions, d, *, seq_len, params, n_heads, probe):  # (n, d): the rotated probe query
        q = np.broadcast_to(probe_pair(d, probe)[0], (positions.size, d))
        return self.qk(q, None, positions, seq_len=seq_len, **params)[0]

    def dense_scores(self, n, d, *, params, n_heads, head, probe):  # (n, n) q'(i) . k'(j)
        q, k = probe_pair(d, probe)
        pos = np.arange(n, dtype=np.float64)
        Q, K = self.qk(np.broadcast_to(q, (n, d)), np.broadcast_to(k, (n, d)), pos, seq_len=n, **params)
        return Q @ K.T

    def offset_profile(self, offsets, d, *, seq_len, params, n_heads, head, probe):  # (m,)
        q, k = probe_pair(d, probe)
        return self.profile(offsets, q, k, seq_len=seq_len, **params)


@dataclass(frozen=True)
class TrainableBias:
    """What a training run learns in a bias scheme (the lab's generic trainable-bias slot).

    ``init(rng, n_heads, **p) -> {name: array}``: the initial weights, drawn from ``rng`` in a fixed order (the
    scheme's paper or reference code gives the initialisation); ``forward(w, qpos, kpos, **p) -> (H, n_q, n_k)``:
    the logit bias those weights give; ``backward(w, qpos, kpos, grad, **p) -> {name: array}``: the gradient of a
    loss with respect to every weight, given ``grad`` = dLoss/dbias (H, n_q, n_k) (a test checks it against finite
    differences for every scheme); ``project(w, **p) -> w``: applied after every optimiser step (Kerple clamps its
    two scalars at 0.01, as its reference code does), or None.
    """

    init: Callable[..., dict]
    forward: Callable[..., np.ndarray]
    backward: Callable[..., dict]
    project: Callable[..., dict] | None = None

    def shapes(self, n_heads: int, **params) -> dict[str, tuple[int, ...]]:
        """{name: shape} of the weights (what ``init`` draws)."""
        return {k: np.shape(v) for k, v in self.init(np.random.default_rng(0), n_heads, **params).items()}


@dataclass(frozen=True)
class Bias:
    """A term added to the attention logits: ``bias(qpos, kpos, n_heads, **p) -> (H, n_q, n_k)``.

    -inf marks masked (future) pairs of causal forms.  ``offset_bias(offsets, n_heads, **p) -> (H, m)``
    is the same as a function of j - i (required when offset_only can hold).  ``attention_bias``
    gives the values a demo attention layer adds when ``bias`` reports something else (T5 reports
    its bucket id; a model adds a learned scalar per bucket); ``buckets(qpos, kpos, **p)`` and
    ``num_buckets(**p)`` describe such a learned-per-bucket bias.
    """

    bias: Callable[..., np.ndarray]
    offset_only: Predicate
    isometric: Predicate
    offset_bias: Callable[..., np.ndarray] | None = None
    attention_bias: Callable[..., np.ndarray] | None = None
    buckets: Callable[..., np.ndarray] | None = None
    num_buckets: Callable[..., int] | None = None
    parameters: Callable[..., int] = no_parameters
    score_unit: str = "bias on the logit"
    mask_only: bool = False  # True: the bias is 0 on every pair the causal mask lets through (NoPE, the control)
    head_bias: Callable[..., np.ndarray] | None = None  # (qpos, kpos, n_heads, head, **p) -> (n_q, n_k): one head only
    trainable: TrainableBias | None = None  # what a training run learns (None: a fixed bias)

    centered_scores: bool = False  # a bias or a bucket id has no natural zero in the middle (FIRE's MLP: signed)
    scores_use_width: bool = False  # a bias is added to the logit whatever d
    uses_heads: bool = True  # a bias per head (n_heads rows of slopes, buckets or MLP outputs)

    kind: ClassVar[str] = "bias"
    rotates: ClassVar[bool] = False
    scaling_block: ClassVar[None] = None  # not a Hugging Face rope_type
    enters: ClassVar[str] = "attention logits"

    def unit(self, metric: str) -> str:
        """What a position score means: the declared unit (a bias on the logit, a T5 bucket id), whatever ``metric``."""
        return self.score_unit

    def score_metric(self, metric: str) -> str:
        """A bias score is the bias itself, whatever ``metric`` is asked for."""
        return "dot"

    def pair_frequencies(self, d: int, seq_len: int | None, params: dict) -> None:  # a bias has no frequencies
        return None

    def spectrum(self, d: int, seq_len: int | None, params: dict) -> None:  # a bias has no frequencies
        return None

    def layer_inputs(self, pos: np.ndarray, d: int, seq_len: int, params: dict) -> dict:
        """What an attention layer takes from this scheme at ``pos``: head 0 of its logit bias, {"bias": (n, n)} (T5: a
        seeded, untrained stand-in for its learned table)."""
        return {"bias": self.logits(pos, pos, 8, **params)[0]}
    table: ClassVar[None] = None
    max_len: ClassVar[None] = None
    width: ClassVar[None] = None

    def problems(self) -> list[str]:
        out = [f"{n} is not callable" for n in _callables(self, ("bias", "offset_only", "isometric", "parameters"))]
        if self.offset_only is not never and self.offset_bias is None:
            out.append("declares offset_only but has no offset_bias (the closed form the fast path uses)")
        if (self.buckets is None) != (self.num_buckets is None):
            out.append("a learned-per-bucket bias needs both buckets and num_buckets")
        return out

    def signature(self, positions, d, *, seq_len, params, n_heads, probe):  # (n, H): query at p, key at 0
        return self.bias(positions, np.zeros(1), n_heads, **params)[:, :, 0].T

    def one_head(self, qpos, kpos, n_heads, head, **params) -> np.ndarray:
        """Head ``head`` of the bias, (n_q, n_k): computed alone where the scheme can (``head_bias``)."""
        if self.head_bias is not None:
            return self.head_bias(qpos, kpos, n_heads, head, **params)
        return self.bias(qpos, kpos, n_heads, **params)[head]

    def dense_scores(self, n, d, *, params, n_heads, head, probe):  # (n, n) one head
        pos = np.arange(n, dtype=np.float64)
        out = np.empty((n, n))
        per_row = 8 * n * (1 if self.head_bias is not None else n_heads)
        rows = max(1, DENSE_BLOCK_BYTES // per_row)  # query rows per call
        for r in range(0, n, rows):
            out[r : r + rows] = self.one_head(pos[r : r + rows], pos, n_heads, head, **params)
        return out

    def offset_profile(self, offsets, d, *, seq_len, params, n_heads, head, probe):  # (m,) one head
        return self.offset_bias(offsets, n_heads, **params)[head]

    def logits(self, qpos, kpos, n_heads, **params) -> np.ndarray:
        """What an attention layer adds to its logits: (H, n_q, n_k)."""
        fn = self.attention_bias or self.bias
        return fn(qpos, kpos, n_heads, **params)


KINDS: dict[str, type] = {"additive": Additive, "rotary": Rotary, "bias": Bias}
