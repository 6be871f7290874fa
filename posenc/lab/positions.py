"""The one adapter between the lab's engine and posenc's positional schemes.

Every use of a positional scheme in posenc.lab goes through ``positions(...)``, which asks the
registry's scheme (``posenc.registry``) and returns a ``Positions`` record of plain arrays; the
engine (model.py) never imports a scheme.  What the engine needs, by what the scheme is:

- additive:  a fixed (n, d_model) encoding added to the token embedding (``scheme.encode``:
             the raw index e'_t = e_t + t 1, unscaled; the sinusoid);
- table:     a lookup table (``scheme.max_len`` is set): the lab trains its own (L, d_model)
             table, rows 0 .. L-1 only (undefined past its last row);
- rotary:    per-position linear maps Mq[p], Mk[p] (n, hd, hd) applied to each head's query and
             key, q'_p = Mq[p] q_p, obtained by applying ``scheme.qk`` to the identity (RoPE:
             Mq = Mk = R_p; xPos: the rotation times zeta^(+-p/B)), so the engine needs no layout;
- bias:      ``scheme.bias`` of every (i, j) as an additive (H, n, n) logit bias (ALiBi; NoPE);
- buckets:   a learned scalar per bucket (``scheme.behaviour.buckets``: T5, decoder form): integer
             ids (n, n) into a trainable (num_buckets, H) table.

Every record carries ``bias`` with the causal mask (-inf above the diagonal), so the engine
always adds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.registry import get_scheme
from posenc.schemes.kinds import Additive, Bias, Rotary

# the schemes the lab trains, in display order: lab name -> (the registry entry it stands for, the parameters it
# overrides there, its name in the lab's tables).  The lab's models are not the registry's schemes as they stand: its
# learned table is trained (the registry's is random), its T5 is the decoder's (causal) buckets.
LAB = {
    "raw_index": ("raw_index", {}, "Raw index"),
    "sinusoidal": ("sinusoidal", {}, "Sinusoidal"),
    "learned": ("learned_random", {}, "Learned table"),
    "t5": ("t5", {"bidirectional": False}, "T5 buckets"),
    "alibi": ("alibi", {}, "ALiBi"),
    "nope": ("nope", {}, "NoPE"),
    "rope": ("rope", {}, "RoPE"),
    "xpos": ("xpos", {}, "xPos"),
}
LAB_SCHEMES = tuple(LAB)
REGISTRY_KEY = {name: key for name, (key, _, _) in LAB.items()}
PARAMS = {name: params for name, (_, params, _) in LAB.items()}
NAMES = {name: shown for name, (_, _, shown) in LAB.items()}
# the scheme's own trainable tables, named by what the engine does with them (model.py reads them by these names)
TABLE_PARAM = "pos"  # (L, d_model): a learned row per position, added to the token embedding
BUCKET_PARAM = "buckets"  # (num_buckets, H): a learned logit bias per bucket and head
# RoPE context extensions applied at test time, without retraining, to the models of EXTENSIBLE: lab name -> registry scheme
EXTENSIONS = {"pi": "rope_linear", "ntk": "rope_ntk", "dynamic": "rope_dynamic", "yarn": "rope_yarn", "llama3": "rope_llama3"}
EXTENSION_NAMES = {name: get_scheme(key).short_name for name, key in EXTENSIONS.items()}  # "PI (linear)", ...
ROPE_BASE = 10000.0  # the RoPE model's base; the extensions keep it (Llama 3's registry default is 5e5)


class _Engine:
    """How the lab's engine uses one kind of registry scheme: the scheme's own trainable parameters, and the
    arrays it adds to ``Positions`` at a length n (the causal mask is always there)."""

    name = "none"
    table = False  # a lookup table: no row past its last (stands for every lookup table of the registry)

    def trainable(self, s, params: dict, *, d_model: int, n_heads: int, train_len: int) -> dict[str, tuple[int, ...]]:
        return {}

    def arrays(self, s, params: dict, pos: np.ndarray, mask: np.ndarray, *, d: int, hd: int, H: int, L: int) -> dict:
        raise NotImplementedError


class _Additive(_Engine):
    name = "additive"

    def arrays(self, s, params, pos, mask, *, d, hd, H, L):
        return {"add": s.encode(pos, d, seq_len=pos.size, **params)}


class _Table(_Engine):
    name, table = "table", True

    def trainable(self, s, params, *, d_model, n_heads, train_len):
        return {TABLE_PARAM: (train_len, d_model)}

    def arrays(self, s, params, pos, mask, *, d, hd, H, L):
        if pos.size > L:
            raise ValueError(f"the learned table has {L} rows (positions 0 .. {L - 1}); it has no row for position {L}")
        return {"table_rows": L}


class _Buckets(_Engine):
    name = "buckets"

    def trainable(self, s, params, *, d_model, n_heads, train_len):
        return {BUCKET_PARAM: (s.behaviour.num_buckets(**s.validate_params(params)), n_heads)}

    def arrays(self, s, params, pos, mask, *, d, hd, H, L):
        p = s.validate_params(params)
        return {"buckets": s.behaviour.buckets(pos, pos, **p), "num_buckets": s.behaviour.num_buckets(**p)}


class _Bias(_Engine):
    name = "bias"

    def arrays(self, s, params, pos, mask, *, d, hd, H, L):
        return {"bias": mask + s.bias(pos, pos, H, **params)}  # the mask too, whatever the bias does


class _Rotary(_Engine):
    name = "rotary"

    def arrays(self, s, params, pos, mask, *, d, hd, H, L):
        mq, mk = _rotary_maps(s, pos.size, hd, params)
        return {"mq": mq, "mk": mk}


_ENGINES = {  # a scheme's behaviour class -> its lab engine, from what the scheme declares (a last row, bucket ids)
    Additive: lambda s: _Table() if s.max_len is not None else _Additive(),
    Bias: lambda s: _Buckets() if s.behaviour.buckets is not None else _Bias(),
    Rotary: lambda s: _Rotary(),
}


def _engine(scheme) -> _Engine:
    """The engine of a registry scheme: one entry of ``_ENGINES`` per kind of behaviour (every kind has one: a
    contract test)."""
    return _ENGINES[type(scheme.behaviour)](scheme)


ENGINE = {name: _engine(get_scheme(key)) for name, key in REGISTRY_KEY.items()}
KIND = {name: engine.name for name, engine in ENGINE.items()}  # additive, table, buckets, bias or rotary


def _takes_extensions(key: str, params: dict) -> bool:
    """A plain Hugging Face RoPE (a rope_type with no scaling): the context extensions are its other rope_types."""
    s = get_scheme(key)
    return s.behaviour.scaling_block is not None and s.scaling_block(**params) is None


# the lab schemes evaluated with each test-time extension too (from the registry: RoPE, not xPos)
EXTENSIBLE = tuple(name for name in LAB_SCHEMES if _takes_extensions(REGISTRY_KEY[name], PARAMS[name]))


@dataclass(frozen=True)
class Positions:
    """Plain arrays for one scheme at one sequence length n (see the module docstring)."""

    scheme: str
    kind: str
    n: int
    bias: np.ndarray  # (H, n, n) additive logit bias, causal mask included
    add: np.ndarray | None = None  # (n, d_model) fixed additive encoding
    table_rows: int | None = None  # rows of the trainable (L, d_model) table (n <= L)
    mq: np.ndarray | None = None  # (n, hd, hd) query map per position
    mk: np.ndarray | None = None  # (n, hd, hd) key map per position
    buckets: np.ndarray | None = None  # (n, n) int64 ids into the (num_buckets, H) table
    num_buckets: int = 0


def trainable_shapes(scheme: str, *, d_model: int, n_heads: int, train_len: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the scheme's own trainable parameters: {TABLE_PARAM: (L, d)}, {BUCKET_PARAM: (B, H)} or {}."""
    check_choice("scheme", scheme, LAB_SCHEMES)
    return ENGINE[scheme].trainable(get_scheme(REGISTRY_KEY[scheme]), dict(PARAMS[scheme]),
                                    d_model=d_model, n_heads=n_heads, train_len=train_len)


def _rotary_maps(scheme, n: int, head_dim: int, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """The scheme's q and k transforms at each position as matrices: (n, hd, hd) each, M[p] @ x == qk(x at p)."""
    eye = np.broadcast_to(np.eye(head_dim)[:, None, :], (head_dim, n, head_dim))  # (hd as j, n, hd): e_j at every p
    q, k = scheme.qk(eye, eye, np.arange(n), seq_len=n, **params)  # (hd, n, hd) each
    return tuple(np.ascontiguousarray(m.transpose(1, 2, 0)) for m in (q, k))  # (n, hd, hd): column j = transform of e_j


def rope_extension(extension: str, factor: float, train_len: int) -> tuple[str, dict]:
    """(registry key, parameters) of a test-time extension of the RoPE model to ``factor`` x its trained length."""
    check_choice("extension", extension, EXTENSIONS)
    return EXTENSIONS[extension], {"base": ROPE_BASE, "layout": "half_split", "factor": float(factor),
                                   "original_max_position_embeddings": int(train_len)}


def positions(
    scheme: str,
    n: int,
    *,
    d_model: int,
    n_heads: int,
    train_len: int,
    extension: str | None = None,
) -> Positions:
    """The arrays the engine needs for ``scheme`` on a length-n sequence.

    ``extension`` (RoPE only) applies a context extension at test time with factor n / train_len
    (at least 1): "pi", "ntk", "dynamic" (at the current length n), "yarn" (with its attention
    factor on cos and sin of q and k, as HF does) or "llama3".
    The learned table raises ValueError past its last row: it has no row for position L.
    """
    check_choice("scheme", scheme, LAB_SCHEMES)
    n = check_int("n", n, lo=1, hi=1 << 16)
    d = check_int("d_model", d_model, lo=2)
    H = check_int("n_heads", n_heads, lo=1)
    L = check_int("train_len", train_len, lo=1)
    if d % H or (d // H) % 2:
        raise ValueError(f"d_model / n_heads must be an even integer, got {d} / {H}")
    hd = d // H
    engine = ENGINE[scheme]
    key, params = REGISTRY_KEY[scheme], dict(PARAMS[scheme])
    if extension is not None:
        if scheme not in EXTENSIBLE:
            raise ValueError(f"context extensions apply to the {' and '.join(NAMES[s] for s in EXTENSIBLE)} model only, "
                             f"got scheme {scheme!r}")
        key, params = rope_extension(extension, max(1.0, n / L), L)
    pos = np.arange(n, dtype=np.float64)
    mask = get_scheme("nope").bias(pos, pos, H)  # (H, n, n): 0 on/below the diagonal, -inf above
    arrays = engine.arrays(get_scheme(key), params, pos, mask, d=d, hd=hd, H=H, L=L)
    return Positions(scheme, engine.name, n, **{"bias": mask, **arrays})
