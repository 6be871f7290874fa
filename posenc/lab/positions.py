"""The one adapter between the lab's engine and posenc's positional schemes.

Every use of a positional scheme in posenc.lab goes through ``positions(...)``, which asks the registry's scheme
(``posenc.registry``) and returns a ``Positions`` record of plain arrays; the engine (model.py) never imports a scheme.

**Which schemes.** ``LAB`` is derived from ``posenc.registry.SCHEMES``: every registry scheme the engine can train is
a lab scheme, under its registry key, in the registry's order.  ``untrainable()`` says why each other one is not (a
bundled table of its own width; a context extension, which is a test-time method the lab applies to its trained RoPE
model instead).  The lab's model is a decoder, so a scheme's encoder/decoder switch is set to its causal form
(``CAUSAL_FORM``, by parameter name: T5's buckets are the decoder's).  ``LAB_SETTINGS`` is the one table of what
else the lab does to a registry entry (a lab name, a display name, trained as an option of another scheme, not in
the default run), each with its reason.

**What the engine needs**, by what the scheme is:

- additive:  a fixed (n, d_model) encoding added to the token embedding (``scheme.encode``: the raw index
             e'_t = e_t + t 1, unscaled; the sinusoid);
- table:     a lookup table (``scheme.max_len`` is set): the lab trains its own (rows, d_model) table, rows = L (or
             N with randomized positions), undefined past its last row;
- rotary:    per-position linear maps Mq[p], Mk[p] (n, hd, hd) applied to each head's query and key, q'_p = Mq[p] q_p,
             obtained by applying ``scheme.qk`` to the identity (RoPE: Mq = Mk = R_p; xPos: the rotation times
             zeta^(+-p/B)), so the engine needs no layout;
- bias:      ``scheme.bias`` of every (i, j) as an additive (H, n, n) logit bias (ALiBi; NoPE);
- trained bias: a bias that declares ``trainable`` (``posenc.schemes.kinds.TrainableBias``: T5, Kerple, FIRE).  Its
             weights are model parameters under the scheme's own names (T5: "buckets"), drawn by ``trainable.init``;
             the engine adds ``trainable.forward(w, p, p)`` to the logits, gives ``trainable.backward`` dLoss/dbias
             summed over layers and batch, and applies ``trainable.project`` after every optimiser step.

**Randomized positions** (Ruoss et al. 2023, arXiv:2305.16843) are a training option of any scheme that reads
positions: with a range N, every forward pass -- in training and in evaluation, as the reference code
``noisy_fixed_positional_encodings`` does -- places the n tokens at a sorted random n-subset of [0, N) (one sample
per batch: ``posenc.schemes.rotary.randomized_positions``), and every array above is computed at those positions.
NoPE reads no positions and refuses it.  The registry's "rope_randomized" is trained as RoPE with N = ``RANDOM_RANGE``.

Every record carries ``bias`` with the causal mask (-inf above the diagonal), so the engine always adds it.

**Variants set from L.**  A ``LAB_SETTINGS`` entry may add lab schemes of the same registry entry ("variants") whose
parameters depend on the training length (``PER_LENGTH``; ``scheme_params(scheme, L)`` gives every parameter the lab
sets): "t5_scaled" is T5 with its buckets set from L as T5 sets them from its 512 (``t5_at_length``), beside "t5" at
Hugging Face's default (32, 128).

**Out-of-distribution positions.**  ``unseen_share(scheme, n, ...)`` is the share of a scheme's positional inputs at
length n that training at L never produced (positions, offsets, bucket ids or rotation angles, by engine kind and what
the scheme declares): Ruoss et al. 2023 locate the failure to extrapolate there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from posenc._validate import check_choice, check_int
from posenc.registry import SCHEMES, get_scheme
from posenc.schemes.kinds import Additive, Bias, Rotary, TrainableBias
from posenc.schemes.rotary import randomized_positions

TABLE_PARAM = "pos"  # the lab's own lookup table, (rows, d_model): a learned row per position, added to the embedding
EXTENSION_PAGE = "pages/context_extension.py"  # the page every registry context extension names (as charts.base reads it)
RANDOM_RANGE = 2048  # N of "RoPE + randomized": the reference code's example (noise_max_length 2048, trained at length 40)
MAX_RANGE = 1 << 16
CAUSAL_FORM = {"bidirectional": False, "causal": True}  # parameter -> its value in a decoder (the lab's model is causal)

# What the lab does to a registry entry beyond CAUSAL_FORM, keyed by registry key, each with its reason:
#   name      its lab name (results files, links) where it differs from the key;
#   shown     its name in the lab's tables where the registry's names another form (an untrained table or MLP);
#   train_as  it stands for a training option of another scheme: (that scheme, the range N of its randomized positions);
#   default   False: a custom run may train it, ``python -m posenc.lab`` does not;
#   variants  further lab schemes of the same entry: {lab name: {"shown", "per_length"}}, "per_length" naming a
#             function of this module (``PER_LENGTH``) that gives parameters from the training length L.
LAB_SETTINGS: dict[str, dict] = {
    "learned_random": {"name": "learned", "shown": "Learned table"},  # the lab trains the table from this entry's init
    "t5": {"shown": "T5 buckets", "variants": {"t5_scaled": {"shown": "T5 buckets scaled to L", "per_length": "t5_at_length"}}},
    # the registry's name is the encoder's; "t5" keeps Hugging Face's default (32 buckets, max_distance 128), which at
    # L = 32 never trains buckets 22-31; "t5_scaled" sets them from L as T5 does from its own training length
    # (``t5_at_length``): every bucket trained
    "fire": {"shown": "FIRE"},  # the registry's entry is the untrained MLP; the lab trains it from the same init
    "nope": {"shown": "NoPE"},
    "rope_randomized": {"train_as": ("rope", RANDOM_RANGE), "shown": "RoPE + randomized"},  # a training option (Ruoss et al.)
    # the naive schemes of the story's first pages: the raw index stands for them in the default run (their pages show
    # why each fails); each would add three models (~1 min) and a line to every chart
    "index_over_length": {"default": False},
    "single_sine": {"default": False},
    "sincos_pair": {"default": False},
}
# RoPE context extensions applied at test time, without retraining, to the models of EXTENSIBLE: lab name -> registry scheme
EXTENSIONS = {"pi": "rope_linear", "ntk": "rope_ntk", "dynamic": "rope_dynamic", "yarn": "rope_yarn", "llama3": "rope_llama3"}
EXTENSION_NAMES = {name: get_scheme(key).short_name for name, key in EXTENSIONS.items()}  # "PI (linear)", ...
ROPE_BASE = 10000.0  # the RoPE model's base; the extensions keep it (Llama 3's registry default is 5e5)


@dataclass(frozen=True)
class LabScheme:
    """One scheme the lab trains."""

    name: str  # the lab's name (results files, links)
    key: str  # the registry entry it stands for (its colour, its row in the Compare table)
    model: str  # the registry entry the engine runs (``key``, or the scheme it is trained as an option of)
    params: dict = field(default_factory=dict)  # what the lab sets there (CAUSAL_FORM)
    shown: str = ""  # its name in the lab's tables
    randomize: int = 0  # N > 0: its positions are a sorted random sample of [0, N) in every forward pass
    default: bool = True  # trained by ``python -m posenc.lab``
    per_length: str = ""  # a key of PER_LENGTH: parameters set from the training length (scheme_params)


def _rotary_maps(scheme, at: np.ndarray, head_dim: int, params: dict, span: int) -> tuple[np.ndarray, np.ndarray]:
    """The scheme's q and k transforms at each position as matrices: (n, hd, hd) each, M[p] @ x == qk(x at p)."""
    n = at.size
    eye = np.broadcast_to(np.eye(head_dim)[:, None, :], (head_dim, n, head_dim))  # (hd as j, n, hd): e_j at every p
    q, k = scheme.qk(eye, eye, at, seq_len=span, **params)  # (hd, n, hd) each
    return tuple(np.ascontiguousarray(m.transpose(1, 2, 0)) for m in (q, k))  # (n, hd, hd): column j = transform of e_j


class _Engine:
    """How the lab's engine uses one kind of registry scheme: the scheme's own trainable weights, and the arrays it
    adds to ``Positions`` at positions ``at`` (the causal mask is always there)."""

    name = "none"
    table = False  # a lookup table: no row past its last (stands for every lookup table of the registry)

    def own(self, s, params: dict, rng: np.random.Generator, *, d_model: int, n_heads: int, rows: int) -> dict:
        return {}

    def arrays(self, s, params: dict, at: np.ndarray, mask: np.ndarray, *, d: int, hd: int, H: int, rows: int,
               span: int) -> dict:
        """``span``: the length the positions come from (the scheme's ``seq_len``): n, or the range N of randomized ones."""
        raise NotImplementedError

    def unseen(self, s, params: dict, n: int, *, trained: int, hd: int) -> tuple[float, str]:
        """(share, unit): the share of the scheme's positional inputs at positions 0 .. n-1 that training on positions
        0 .. trained-1 (L, or the range N of randomized ones) never produced, and what is counted (``unseen_share``).
        Default, for an input that is the position itself: positions >= trained."""
        return max(n - trained, 0) / n, "positions"


class _Additive(_Engine):
    name = "additive"

    def arrays(self, s, params, at, mask, *, d, hd, H, rows, span):
        return {"add": s.encode(at, d, seq_len=span, **params)}


class _Table(_Engine):
    name, table = "table", True

    def own(self, s, params, rng, *, d_model, n_heads, rows):
        return {TABLE_PARAM: rng.normal(0.0, 0.02, size=(rows, d_model))}  # N(0, 0.02^2), as GPT-2 / BERT

    def arrays(self, s, params, at, mask, *, d, hd, H, rows, span):
        if at[-1] >= rows:
            raise ValueError(f"the learned table has {rows} rows (positions 0 .. {rows - 1}); it has no row for position "
                             f"{int(at[at >= rows][0])}")
        return {"rows": at.astype(np.int64)}


class _Bias(_Engine):
    name = "bias"

    def unseen(self, s, params, n, *, trained, hd):
        if s.mask_only:  # NoPE: no positional input at all (what a longer sequence changes is the number of keys)
            return 0.0, "no positional input (the causal mask only)"
        return _far_pairs(n, trained) / _pairs(n), "causal (query, key) pairs: offset i - j >= trained"

    def arrays(self, s, params, at, mask, *, d, hd, H, rows, span):
        return {"bias": mask + s.bias(at, at, H, **params)}  # the mask too, whatever the bias does


class _TrainedBias(_Engine):
    name = "trained bias"

    def unseen(self, s, params, n, *, trained, hd):
        settings = s.validate_params(params)
        if s.behaviour.buckets is None:  # a learned function of the offset (Kerple, FIRE)
            return _far_pairs(n, trained) / _pairs(n), "causal (query, key) pairs: offset i - j >= trained"
        ids = s.behaviour.buckets(np.array([n - 1.0]), np.arange(float(n)), **settings)[0, ::-1]  # (n,) bucket of offset d
        seen = np.isin(ids, ids[: min(trained, n)])  # (n,) the offset's bucket is one an offset < trained has
        d = np.arange(n)
        return float(((n - d) * ~seen).sum()) / _pairs(n), "causal (query, key) pairs whose bucket id training never used"

    def own(self, s, params, rng, *, d_model, n_heads, rows):
        return s.behaviour.trainable.init(rng, n_heads, **s.validate_params(params))

    def arrays(self, s, params, at, mask, *, d, hd, H, rows, span):
        settings = s.validate_params(params)
        trainable: TrainableBias = s.behaviour.trainable
        return {"trainable": trainable, "settings": settings, "weights": tuple(trainable.shapes(H, **settings))}


class _Rotary(_Engine):
    name = "rotary"

    def unseen(self, s, params, n, *, trained, hd):
        theta = np.asarray(s.frequencies(hd, seq_len=trained, **params)[0], dtype=np.float64)  # (hd/2,) rad per position
        # a frequency pair's trained angles (i - j) theta cover [0, (trained - 1) theta]; one that never rotates
        # (theta = 0: p-RoPE's dropped pairs) or whose range is a full turn has seen every angle
        partial = (theta > 0) & ((trained - 1) * theta < 2 * np.pi)  # (hd/2,)
        share = _far_pairs(n, trained) / _pairs(n) * float(partial.mean())
        return share, "(query, key, frequency pair) triples: angle (i - j) theta outside [0, (trained - 1) theta]"

    def arrays(self, s, params, at, mask, *, d, hd, H, rows, span):
        mq, mk = _rotary_maps(s, at, hd, params, span)
        return {"mq": mq, "mk": mk}


def _pairs(n: int) -> int:
    """Causal (query, key) pairs of a length-n sequence, 0 <= j <= i < n: n (n + 1) / 2."""
    return n * (n + 1) // 2


def _far_pairs(n: int, m: int) -> int:
    """Causal pairs whose offset i - j >= m: sum over d = m .. n-1 of (n - d) = (n - m)(n - m + 1) / 2."""
    return max(n - m, 0) * max(n - m + 1, 0) // 2


_ENGINES = {  # a scheme's behaviour class -> its lab engine, from what the scheme declares (a last row, trainable weights)
    Additive: lambda s: _Table() if s.max_len is not None else _Additive(),
    Bias: lambda s: _TrainedBias() if s.behaviour.trainable is not None else _Bias(),
    Rotary: lambda s: _Rotary(),
}


def _engine(scheme) -> _Engine:
    """The engine of a registry scheme: one entry of ``_ENGINES`` per kind of behaviour (every kind has one: a
    contract test)."""
    return _ENGINES[type(scheme.behaviour)](scheme)


def _lab_params(scheme) -> dict:
    return {p.name: CAUSAL_FORM[p.name] for p in scheme.params if p.name in CAUSAL_FORM}


def _why_not(key: str, scheme) -> str | None:
    """Why the lab cannot train registry scheme ``key`` (None: it can), from what the scheme declares."""
    width = scheme.behaviour.width
    if width is not None:
        return (f"a trained model's table with its own width ({width}) and {scheme.max_len} rows: the lab's model trains "
                "a table of its own width and length from the untrained entry's initialisation (the Learned table)")
    if scheme.page == EXTENSION_PAGE:
        if key in EXTENSIONS.values():
            return ("a test-time method, not a trained scheme: the lab applies it to its trained RoPE model past L, "
                    "with factor = length / L, dynamic NTK at each query's own length (the extension chart)")
        return f"a test-time method for a trained RoPE model, not a trained scheme, and not one the lab applies ({scheme.fine_tuning})"
    try:  # anything else the engine cannot build says so itself
        engine = _engine(scheme)
        at, params = np.arange(4.0), _lab_params(scheme)
        engine.own(scheme, params, np.random.default_rng(0), d_model=8, n_heads=2, rows=4)
        engine.arrays(scheme, params, at, np.zeros((2, 4, 4)), d=8, hd=4, H=2, rows=4, span=4)
    except (ValueError, TypeError, KeyError) as exc:
        return str(exc)
    return None


# T5 (Raffel et al. 2020, arXiv:1910.10683, sec. 2.1 and 3.1.2): 32 buckets, max_distance 128, trained at length 512
T5_TRAIN_LEN, T5_NUM_BUCKETS, T5_MAX_DISTANCE = 512, 32, 128


def t5_at_length(scheme, train_len: int) -> dict:
    """T5's bucket settings for a decoder trained at length L, related to L as T5 relates them to its own 512.

    T5 trains at 512 tokens with 32 buckets and max_distance 128: max_distance = L / 4, so the last (catch-all)
    bucket covers the farthest 3/4 of the trained offsets, and every bucket is reached by some trained offset.
    Scaling all of T5's lengths by L / 512 would leave 1 exact and 1 catch-all bucket at L = 32 (offsets 1 and 2 in
    one bucket: the Markov task's order 2 could not be seen), so the lab keeps the two properties instead:
    max_distance = max(L // 4, the registry's least, 4) and
    num_buckets = T5's 32, or fewer: the most for which every bucket of the causal form is reached by an offset
    0 .. L - 1.  L = 512 gives T5's (32, 128); L = 32 gives (8, 8): exact offsets 0 .. 3, then log buckets from 4, 5,
    6 and 7 up (9 buckets would leave one unreached).  ``scheme``: the registry's T5 (its bucket function, its parameter range)."""
    L = check_int("train_len", train_len, lo=4, hi=MAX_RANGE)
    base = _lab_params(scheme)
    spec = {p.name: p for p in scheme.params}
    md = max(L // (T5_TRAIN_LEN // T5_MAX_DISTANCE), spec["max_distance"].lo)
    last, keys = np.array([L - 1.0]), np.arange(float(L))  # one query, every key before it: offsets L-1 .. 0
    for nb in range(min(T5_NUM_BUCKETS, 2 * md - 1), spec["num_buckets"].lo - 1, -1):  # causal: max_exact = nb//2 < md
        p = {**base, "num_buckets": nb, "max_distance": md}
        if np.unique(scheme.behaviour.buckets(last, keys, **p)).size == scheme.behaviour.num_buckets(**p):
            return {"num_buckets": nb, "max_distance": md}
    raise ValueError(f"no T5 bucket count reaches every bucket at train_len {L}")  # not at any L in [4, MAX_RANGE]


PER_LENGTH = {"t5_at_length": t5_at_length}  # LAB_SETTINGS' "per_length" names: (registry scheme, L) -> parameters


def _derive() -> tuple[dict[str, LabScheme], dict[str, str]]:
    lab, refused = {}, {}
    for key, scheme in SCHEMES.items():
        setting = LAB_SETTINGS.get(key, {})
        model, randomize = setting.get("train_as", (key, 0))
        reason = _why_not(key, scheme) if model == key else None
        if reason is not None:
            refused[key] = reason
            continue
        name = setting.get("name", key)
        params = _lab_params(get_scheme(model))
        lab[name] = LabScheme(name, key, model, params, setting.get("shown", scheme.short_name), randomize,
                              setting.get("default", True))
        for variant, v in setting.get("variants", {}).items():
            if variant in SCHEMES or variant in lab:
                raise ValueError(f"lab variant {variant!r} of {key!r} clashes with a registry or lab name")
            lab[variant] = LabScheme(variant, key, model, dict(params), v["shown"], randomize, v.get("default", True),
                                     v["per_length"])
    return lab, refused


LAB, _REFUSED = _derive()
LAB_SCHEMES = tuple(LAB)  # every scheme the lab can train, in the registry's order
DEFAULT_SCHEMES = tuple(name for name, s in LAB.items() if s.default)  # what ``python -m posenc.lab`` trains
REGISTRY_KEY = {name: s.key for name, s in LAB.items()}
PARAMS = {name: s.params for name, s in LAB.items()}
NAMES = {name: s.shown for name, s in LAB.items()}
ENGINE = {name: _engine(get_scheme(s.model)) for name, s in LAB.items()}
KIND = {name: engine.name for name, engine in ENGINE.items()}  # additive, table, rotary, bias or trained bias


def scheme_params(scheme: str, train_len: int) -> dict:
    """Every parameter the lab sets in the scheme's registry entry at training length L: ``PARAMS`` (the causal form)
    plus those set from L (``LabScheme.per_length``: T5 scaled, ``t5_at_length``)."""
    s = LAB[check_choice("scheme", scheme, LAB_SCHEMES)]
    L = check_int("train_len", train_len, lo=1, hi=MAX_RANGE)
    return {**s.params, **(PER_LENGTH[s.per_length](get_scheme(s.model), L) if s.per_length else {})}


def untrainable() -> dict[str, str]:
    """{registry key: why the lab does not train it} for every registry scheme that is not a lab scheme."""
    return dict(_REFUSED)


def _takes_extensions(key: str, params: dict) -> bool:
    """A plain Hugging Face RoPE (a rope_type with no scaling): the context extensions are its other rope_types."""
    s = get_scheme(key)
    return s.behaviour.scaling_block is not None and s.scaling_block(**params) is None


# the lab schemes evaluated with each test-time extension too (from the registry: RoPE, not xPos or p-RoPE; at positions
# 0 .. n-1 only, so not a randomized one)
EXTENSIBLE = tuple(name for name, s in LAB.items() if _takes_extensions(s.model, s.params) and not s.randomize)


def reads_positions(scheme: str) -> bool:
    """The scheme's model reads positions (every scheme but NoPE, whose only order signal is the causal mask)."""
    return not get_scheme(LAB[check_choice("scheme", scheme, LAB_SCHEMES)].model).mask_only


def random_range(scheme: str, randomize: int | None = None) -> int:
    """N of the scheme's randomized positions: ``randomize`` (0: positions 0 .. n-1), or the scheme's own (None).

    Raises ValueError for a scheme that reads no positions (NoPE) with N > 0."""
    check_choice("scheme", scheme, LAB_SCHEMES)
    N = LAB[scheme].randomize if randomize is None else check_int("randomize", randomize, lo=0, hi=MAX_RANGE)
    if N and not reads_positions(scheme):
        raise ValueError(f"{NAMES[scheme]} reads no positions (its only order signal is the causal mask): randomized "
                         "positions would change nothing; train it without them")
    return N


def sampler(scheme: str, randomize: int | None, rng: np.random.Generator) -> Callable[[int], np.ndarray] | None:
    """``draw(n)``: the positions of the next forward pass of n tokens, a sorted random n-subset of [0, N) from ``rng``
    (None when the scheme's positions are 0 .. n-1)."""
    N = random_range(scheme, randomize)
    if not N:
        return None

    def draw(n: int) -> np.ndarray:
        if n > N:
            raise ValueError(f"randomized positions come from [0, {N:,}): a sequence of {n:,} tokens does not fit")
        return randomized_positions(n, N, rng)

    return draw


@dataclass(frozen=True)
class Positions:
    """Plain arrays for one scheme at one sequence length n (see the module docstring)."""

    scheme: str
    kind: str
    n: int
    bias: np.ndarray  # (H, n, n) additive logit bias, causal mask included
    at: np.ndarray  # (n,) the positions the scheme was read at: 0 .. n-1, or a sorted random sample of [0, N)
    add: np.ndarray | None = None  # (n, d_model) fixed additive encoding
    rows: np.ndarray | None = None  # (n,) int rows of the trainable table read at the n tokens
    mq: np.ndarray | None = None  # (n, hd, hd) query map per position
    mk: np.ndarray | None = None  # (n, hd, hd) key map per position
    trainable: TrainableBias | None = None  # a trained bias: its forward, backward and project
    settings: dict | None = None  # the scheme's parameters those take
    weights: tuple[str, ...] = ()  # the names of its weights among the model's parameters


def own_weights(scheme: str, rng: np.random.Generator, *, d_model: int, n_heads: int, train_len: int,
                randomize: int | None = None) -> dict[str, np.ndarray]:
    """The scheme's own trainable weights, initialised from ``rng``: {TABLE_PARAM: (L or N, d)} N(0, 0.02^2), a trained
    bias's weights as the scheme draws them (T5 N(0, 0.02^2) per bucket and head; Kerple and FIRE as their authors'
    code), or {}."""
    check_choice("scheme", scheme, LAB_SCHEMES)
    params = scheme_params(scheme, train_len)
    rows = random_range(scheme, randomize) or train_len
    return ENGINE[scheme].own(get_scheme(LAB[scheme].model), params, rng, d_model=d_model, n_heads=n_heads, rows=rows)


def trainable_shapes(scheme: str, *, d_model: int, n_heads: int, train_len: int, randomize: int | None = None) -> dict:
    """Shapes of the scheme's own trainable weights ({} for a fixed scheme)."""
    w = own_weights(scheme, np.random.default_rng(0), d_model=d_model, n_heads=n_heads, train_len=train_len, randomize=randomize)
    return {k: v.shape for k, v in w.items()}


# Dynamic NTK's HF factor in the lab: 1, so its scale at the current length l' is s = max(1, l' / L), as Peng et al. 2023
# (arXiv:2309.00071, sec. 3.3) define it.  HF's formula is factor * l' / L - (factor - 1): it already grows with l', so
# factor = n / L (the lab's first runs) made the scale s^2 - s + 1 at n = s L (13 at 4L, 57 at 8L): static NTK there.
DYNAMIC_FACTOR = 1.0
# Extensions whose frequencies depend on the current length: every query position t reads its own, from a forward pass
# of the t + 1 tokens it has seen (evaluate.position_losses), as transformers computes them without a cache.
PER_POSITION = ("dynamic",)


def rope_extension(extension: str, factor: float, train_len: int) -> tuple[str, dict]:
    """(registry key, parameters) of a test-time extension of the RoPE model to ``factor`` x its trained length.

    "dynamic" ignores ``factor``: its scale comes from the current length (the ``seq_len`` of the pass) with HF factor
    ``DYNAMIC_FACTOR`` = 1, i.e. s = max(1, seq_len / L)."""
    check_choice("extension", extension, EXTENSIONS)
    f = DYNAMIC_FACTOR if extension in PER_POSITION else float(factor)
    return EXTENSIONS[extension], {"base": ROPE_BASE, "layout": "half_split", "factor": f,
                                   "original_max_position_embeddings": int(train_len)}


def _check_at(at, n: int, N: int) -> np.ndarray:
    a = np.asarray(at, dtype=np.float64)
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(np.diff(a) <= 0) or (n and a[0] < 0):
        raise ValueError(f"positions must be {n} increasing numbers from 0 up, got shape {a.shape}")
    if N and n and a[-1] >= N:
        raise ValueError(f"randomized positions come from [0, {N:,}), got {a[-1]:g}")
    return a


def positions(
    scheme: str,
    n: int,
    *,
    d_model: int,
    n_heads: int,
    train_len: int,
    extension: str | None = None,
    at=None,
    randomize: int | None = None,
) -> Positions:
    """The arrays the engine needs for ``scheme`` on a length-n sequence whose tokens sit at positions ``at``
    (default 0 .. n-1; a randomized run passes each forward pass's sample, ``sampler``).

    ``randomize``: the range N of randomized positions (None: the scheme's own, ``LAB``; 0: none); the learned table
    then has N rows.  ``extension`` (RoPE only, positions 0 .. n-1) applies a context extension at test time with
    factor n / train_len (at least 1): "pi", "ntk", "dynamic" (scale max(1, n / train_len): the frequencies of the
    pass's last query; evaluate.position_losses runs one pass per query length, ``PER_POSITION``), "yarn" (with its
    attention factor on cos and sin of q and k, as HF does) or "llama3".
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
    N = random_range(scheme, randomize)
    at = np.arange(n, dtype=np.float64) if at is None else _check_at(at, n, N)
    engine = ENGINE[scheme]
    key, params = LAB[scheme].model, scheme_params(scheme, L)
    if extension is not None:
        if scheme not in EXTENSIBLE or N:
            raise ValueError(f"context extensions apply to the {' and '.join(NAMES[s] for s in EXTENSIBLE)} model only, "
                             f"at positions 0 .. n-1; got scheme {scheme!r}" + (f" with randomized positions (N = {N})" if N else ""))
        key, params = rope_extension(extension, max(1.0, n / L), L)
    mask = get_scheme("nope").bias(at, at, H)  # (H, n, n): 0 on/below the diagonal, -inf above
    arrays = engine.arrays(get_scheme(key), params, at, mask, d=d, hd=hd, H=H, rows=N or L, span=N or n)
    return Positions(scheme, engine.name, n, **{"bias": mask, "at": at, **arrays})


def unseen(scheme: str, n: int, *, train_len: int, d_model: int, n_heads: int, randomize: int | None = None) -> dict:
    """{"share", "unit"}: the out-of-distribution part of the scheme's positional inputs at length n (``unseen_share``)."""
    check_choice("scheme", scheme, LAB_SCHEMES)
    n = check_int("n", n, lo=1, hi=1 << 16)
    L = check_int("train_len", train_len, lo=1, hi=MAX_RANGE)
    d, H = check_int("d_model", d_model, lo=2), check_int("n_heads", n_heads, lo=1)
    if d % H or (d // H) % 2:
        raise ValueError(f"d_model / n_heads must be an even integer, got {d} / {H}")
    trained = random_range(scheme, randomize) or L
    share, unit = ENGINE[scheme].unseen(get_scheme(LAB[scheme].model), scheme_params(scheme, L), n, trained=trained,
                                        hd=d // H)
    return {"share": float(share), "unit": unit}


def unseen_share(scheme: str, n: int, *, train_len: int, d_model: int, n_heads: int, randomize: int | None = None) -> float:
    """The share of the scheme's positional inputs at positions 0 .. n-1 that training at length L never produced
    (Ruoss et al. 2023, arXiv:2305.16843, locate length-generalisation failure in such out-of-distribution positions).

    Training covers positions 0 .. T-1 with T = L, or T = N for randomized positions from [0, N) (every position and
    offset below N occurs in some training sample).  What counts as one input follows from the engine kind and what the
    scheme declares, never from its key:

    - a position-indexed input (additive encoding, learned table): the n positions; unseen: p >= T.  Share (n - T)/n.
    - a fixed bias (ALiBi) or a learned function of the offset (Kerple, FIRE): the n (n + 1) / 2 causal (i, j) pairs;
      unseen: offset i - j >= T.  Share (n - T)(n - T + 1) / (n (n + 1)).  For ALiBi the bias there is the same formula,
      only larger than any trained one; FIRE divides by psi(max(i, L)), so its MLP input stays in [0, 1], yet the
      (offset, query) combinations past L are still new: both counted as unseen, the offset being the input.
    - a learned bias per bucket (T5, as it declares ``buckets``): causal pairs whose bucket id no offset < T has.
    - a rotation (RoPE, xPos, p-RoPE): (i, j, k) triples over causal pairs and the hd/2 frequency pairs theta_k
      (hd = d_model / n_heads); unseen: angle (i - j) theta_k > (T - 1) theta_k, unless theta_k = 0 (never rotates) or
      (T - 1) theta_k >= 2 pi (training covered a full turn).  Share = far-pair share x share of partial frequencies.
      (xPos's decay zeta^((i-j)/B) also reads the offset, so the same pairs are new there.)
    - NoPE: no positional input, 0 (what changes is the number of keys each query spreads attention over).

    ``randomize``: N (None: the scheme's own, ``LAB``; 0: none).  Returns a float in [0, 1]; ``unseen`` adds the unit.
    """
    return unseen(scheme, n, train_len=train_len, d_model=d_model, n_heads=n_heads, randomize=randomize)["share"]
