"""A tiny causal transformer in numpy, float64, with hand-written gradients.

axes: B sequences, n positions, d model width, H heads, e = d / H head width, F MLP width,
V vocabulary (targets), V + 1 input tokens (the last one is BOS).

Pre-norm (RMSNorm with a learned gain, eps 1e-6), no biases anywhere, untied output matrix:

    x   = E[tokens] + A            A: fixed encoding (n, d), the learned table's rows P[rows], or 0
    per layer:
      h = rms(x) * g1;  [q | k | v] = h Wqkv      -> (B, H, n, e) each
      q'_p = Mq[p] q_p,  k'_p = Mk[p] k_p           rotary schemes only
      s = q' k'^T / sqrt(e) + bias + b_w(p, p)       bias holds the causal mask (-inf above diagonal); b_w: a trained
                                                     bias's forward (positions.py: T5's buckets, Kerple, FIRE)
      x = x + softmax(s) v Wo
      x = x + relu(rms(x) * g2 W1) W2
    logits = rms(x) * gf Wu

``loss_and_grad`` returns the mean next-token cross-entropy and the gradient of every
parameter (a trained bias: its own ``backward`` given dLoss/dbias summed over layers and batch);
``tests/test_lab_model.py`` checks it against central finite differences for every lab scheme.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from posenc._validate import check_int
from posenc.lab.positions import TABLE_PARAM, Positions, own_weights

EPS = 1e-6


@dataclass(frozen=True)
class ModelConfig:
    vocab: int = 8  # target vocabulary V; inputs add one BOS token (id V)
    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    d_mlp: int = 64

    def __post_init__(self):
        check_int("vocab", self.vocab, lo=2)
        check_int("d_model", self.d_model, lo=2)
        check_int("n_heads", self.n_heads, lo=1)
        check_int("n_layers", self.n_layers, lo=1, hi=8)
        check_int("d_mlp", self.d_mlp, lo=1)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(f"d_model / n_heads must be an even integer, got {self.d_model} / {self.n_heads}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def param_names(cfg: ModelConfig) -> list[str]:
    """The shared parameters in their fixed initialisation order."""
    names = ["tok"]
    for layer in range(cfg.n_layers):
        names += [f"{p}{layer}" for p in ("g1_", "wqkv", "wo", "g2_", "w1", "w2")]
    return names + ["gf", "wu"]


def init_params(cfg: ModelConfig, scheme: str, train_len: int, seed: int, *, randomize: int | None = None) -> dict[str, np.ndarray]:
    """Initial parameters, float64: the shared ones from default_rng([seed, 0]) in a fixed order
    (so every scheme starts from the same weights for one seed), the scheme's own from
    default_rng([seed, 1]) (``positions.own_weights``; ``randomize``: the range of randomized positions,
    which sets the learned table's rows).

    Token embedding N(0, 1) (the sinusoid's unit scale); linear maps N(0, 1/fan_in), the two
    that write into the residual stream (Wo, W2) further divided by sqrt(2 n_layers); gains 1;
    the learned table and T5's bucket table N(0, 0.02^2); Kerple and FIRE as their authors' code.
    """
    rng = np.random.default_rng([seed, 0])
    d, F, V, res = cfg.d_model, cfg.d_mlp, cfg.vocab, 1.0 / np.sqrt(2 * cfg.n_layers)
    shapes = {"tok": ((V + 1, d), 1.0), "gf": ((d,), None), "wu": ((d, V), 1 / np.sqrt(d))}
    for layer in range(cfg.n_layers):
        shapes.update({
            f"g1_{layer}": ((d,), None), f"g2_{layer}": ((d,), None),
            f"wqkv{layer}": ((d, 3 * d), 1 / np.sqrt(d)), f"wo{layer}": ((d, d), res / np.sqrt(d)),
            f"w1{layer}": ((d, F), 1 / np.sqrt(d)), f"w2{layer}": ((F, d), res / np.sqrt(F)),
        })
    params = {}
    for name in param_names(cfg):
        shape, std = shapes[name]
        params[name] = np.ones(shape) if std is None else rng.normal(0.0, std, size=shape)
    own = own_weights(scheme, np.random.default_rng([seed, 1]), d_model=d, n_heads=cfg.n_heads, train_len=train_len,
                      randomize=randomize)
    if clash := set(own) & set(params):
        raise ValueError(f"the scheme's own weights {sorted(clash)} would replace the model's parameters of that name")
    params.update({k: np.asarray(v, dtype=np.float64) for k, v in own.items()})
    return params


# ----------------------------------------------------------------------------- pieces

def _rms(x: np.ndarray, g: np.ndarray):
    r = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)  # (..., 1)
    xn = x / r
    return xn * g, (xn, r)


def _rms_back(dy: np.ndarray, g: np.ndarray, cache):
    """(dx, the gain's per-row terms dy * xn: summed over every row by ``_reduce``)."""
    xn, r = cache
    dg = dy * xn
    dxn = dy * g
    dx = (dxn - xn * np.mean(dxn * xn, axis=-1, keepdims=True)) / r
    return dx, dg


def _gram_terms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a_b^T b_b for a (B, n, p), b (B, n, q), (B, p, q): summed over b by ``_reduce``, the weight gradient.

    # NOTE: one small GEMM per sequence, then a sum, instead of one (B n)-long GEMM: OpenBLAS
    # multithreads GEMMs above ~2.6e5 multiply-adds, and on a busy 2-core machine those threads
    # spin against each other (measured 2.5x slower); below the threshold it runs one thread.
    """
    return a.transpose(0, 2, 1) @ b


def _heads(x: np.ndarray, H: int) -> np.ndarray:
    B, n, d = x.shape
    return x.reshape(B, n, H, d // H).transpose(0, 2, 1, 3)  # (B, H, n, e)


def _merge(x: np.ndarray) -> np.ndarray:
    B, H, n, e = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, n, H * e)  # (B, n, d)


GEMM_LIMIT = 1 << 18  # multiply-adds per BLAS call; OpenBLAS runs one thread at or below this


def _rows(n: int, per_row: int) -> int:
    """Largest divisor r of n with r * per_row <= GEMM_LIMIT (at least 1)."""
    r = max(1, min(n, GEMM_LIMIT // max(per_row, 1)))
    while n % r:
        r -= 1
    return r


def _mm(x: np.ndarray, W: np.ndarray) -> np.ndarray:
    """x (B, n, p) @ W (p, q) as GEMMs of at most GEMM_LIMIT multiply-adds each.

    # NOTE: OpenBLAS multithreads larger GEMMs; on a busy 2-core machine its spinning threads made
    # evaluation up to 100x slower (measured), so every call stays small enough to run on one thread.
    # The split is over rows only, so every output element is the same dot product either way.
    """
    B, n, p = x.shape
    r = _rows(B * n, p * W.shape[1])
    return (x.reshape(-1, r, p) @ W).reshape(B, n, W.shape[1])


CAUSAL_ROWS = 32  # query rows per block of a causal attention longer than this (evaluation past L)


def _attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray):
    """Softmax attention for (B, H, n, e) inputs; ``bias`` holds the causal mask (-inf above the diagonal).

    Returns (a (B, H, n, n) probabilities, a @ v (B, H, n, e)).  Up to CAUSAL_ROWS positions (training) in one
    block; longer sequences in query blocks of at most CAUSAL_ROWS rows (fewer if a GEMM would pass GEMM_LIMIT), each
    against the keys it can see (0 .. its last query): the masked scores, exactly 0 after the softmax, are never
    computed, which halves the exp() and GEMM work of a long pass.
    """
    B, H, n, e = q.shape
    if n <= CAUSAL_ROWS and _rows(n, n * e) == n:
        s = q @ k.transpose(0, 1, 3, 2)  # (B, H, n, n)
        s += bias
        a = _softmax(s)
        return a, a @ v
    r = min(CAUSAL_ROWS, _rows(n, n * e))
    a = np.zeros((B, H, n, n))
    ah = np.empty((B, H, n, e))
    kt = k.transpose(0, 1, 3, 2)
    for i in range(0, n, r):
        j = min(n, i + r)  # queries i .. j-1 see keys 0 .. j-1
        s = q[:, :, i:j] @ kt[..., :j]  # (B, H, j - i, j)
        s += bias[:, i:j, :j]
        blk = a[:, :, i:j, :j]
        blk[...] = _softmax(s, offset=i)
        ah[:, :, i:j] = blk @ v[:, :, :j]
    return a, ah


def _softmax(s: np.ndarray, offset: int = 0) -> np.ndarray:
    """Row softmax of (..., n, n) scores in place; the causal mask's -inf entries become 0.

    # NOTE: stabilised by the diagonal (self) score, which the causal mask never hides, instead of
    # the row max (a reduction over a 32-wide last axis costs three elementwise passes here).  The two
    # agree unless an off-diagonal score exceeds the diagonal by more than ~709 (exp overflows float64):
    # then the model has diverged, and this raises FloatingPointError rather than return a wrong softmax.
    """
    rows, n = s.shape[-2], s.shape[-1]
    idx = np.arange(rows)
    s -= s[..., idx, idx + offset][..., None]  # row r of this block is query offset + r
    a = np.exp(s, out=s)
    total = a @ np.ones((n, 1))  # (..., n, 1) row sums as a matmul (faster than a last-axis reduce)
    if not np.all(np.isfinite(total)):  # pragma: no cover - needs |score differences| > 700
        raise FloatingPointError("attention scores overflowed exp(); the model has diverged")
    a *= 1.0 / total
    return a


def _rotate(M: np.ndarray, x: np.ndarray, *, transpose: bool = False) -> np.ndarray:
    """x'_p = M[p] x_p (or M[p]^T x_p) for x (B, H, n, e), as one batched matmul over positions."""
    B, H, n, e = x.shape
    z = x.transpose(2, 0, 1, 3).reshape(n, B * H, e)  # (n, B H, e)
    out = z @ (M if transpose else M.transpose(0, 2, 1))  # rows: x^T M^T = (M x)^T
    return out.reshape(n, B, H, e).transpose(1, 2, 0, 3)


def _own(params, pos: Positions) -> dict[str, np.ndarray]:
    """The trained bias's weights among the model's parameters."""
    return {k: params[k] for k in pos.weights}


def _bias(params, pos: Positions) -> np.ndarray:
    """(H, n, n) logit bias: the scheme's fixed bias (and the causal mask) plus a trained bias's forward."""
    if pos.trainable is None:
        return pos.bias
    return pos.bias + pos.trainable.forward(_own(params, pos), pos.at, pos.at, **pos.settings)


def project(params, pos: Positions) -> None:
    """A trained bias's ``project`` after an optimiser step, in place (Kerple clamps its scalars at 0.01); else nothing."""
    if pos.trainable is None or pos.trainable.project is None:
        return
    for k, v in pos.trainable.project(_own(params, pos), **pos.settings).items():
        params[k][...] = v


# ----------------------------------------------------------------------------- forward / backward

def forward(params, tokens: np.ndarray, pos: Positions, cfg: ModelConfig, *, keep_attention: bool = False,
            bias: np.ndarray | None = None, last: bool = False):
    """Logits (B, n, V) and the cache for ``backward``; ``tokens`` (B, n) int inputs (BOS first).

    With ``keep_attention`` the cache also holds every layer's attention probabilities
    (cache["attn"][layer]: (B, H, n, n)); they are always kept for the backward pass.  ``bias``: the (H, n, n) logit
    bias when the caller already has it (``_bias``: one for every part of a split batch).  ``last``: the logits of
    the last position only, (B, 1, V), and no cache (None): the last layer reads every key but only the last query,
    and its MLP and the output run on that row alone (evaluate.per_position_log_probs).
    """
    n = tokens.shape[1]
    if n != pos.n:
        raise ValueError(f"tokens have length {n}, positions were built for n = {pos.n}")
    H, e, d = cfg.n_heads, cfg.head_dim, cfg.d_model
    x = params["tok"][tokens]  # (B, n, d)
    if pos.add is not None:
        x = x + pos.add[None]
    if pos.rows is not None:
        x = x + params[TABLE_PARAM][pos.rows][None]
    bias = _bias(params, pos) if bias is None else bias  # (H, n, n)
    scale = 1.0 / np.sqrt(e)
    layers = []
    for layer in range(cfg.n_layers):
        c = {"x": x}
        h, c["n1"] = _rms(x, params[f"g1_{layer}"])
        c["h"] = h
        qkv = _mm(h, params[f"wqkv{layer}"])  # (B, n, 3d): [q | k | v]
        q, k, v = (_heads(qkv[..., i * d : (i + 1) * d], H) for i in range(3))  # (B, H, n, e) each
        final = last and layer == cfg.n_layers - 1  # the last query alone
        if final:
            q = q[:, :, n - 1 :]  # (B, H, 1, e)
        if pos.mq is not None:
            q, k = _rotate(pos.mq[n - 1 :] if final else pos.mq, q), _rotate(pos.mk, k)  # q'_p = Mq[p] q_p, k'_p = Mk[p] k_p
        if final:  # (B, H, 1, n) scores
            s = (q * scale) @ k.transpose(0, 1, 3, 2)
            s += bias[:, n - 1 :]
            x = x[:, n - 1 :]
            a = _softmax(s, offset=n - 1)
            ah = a @ v
        else:
            a, ah = _attend(q * scale, k, v, bias)  # (B, H, n, n), (B, H, n, e)
        o = _merge(ah)  # (B, n, d)
        c.update(q=q, k=k, v=v, a=a, o=o, ah=ah)
        x = x + _mm(o, params[f"wo{layer}"])
        c["x2"] = x
        h2, c["n2"] = _rms(x, params[f"g2_{layer}"])
        u = _mm(h2, params[f"w1{layer}"])  # (B, n, F)
        r = np.maximum(u, 0.0)
        c.update(h2=h2, u=u, r=r)
        x = x + _mm(r, params[f"w2{layer}"])
        layers.append(c)
    hf, nf = _rms(x, params["gf"])
    logits = _mm(hf, params["wu"])  # (B, n, V)
    if last:
        return logits, None
    cache = {"tokens": tokens, "pos": pos, "layers": layers, "hf": hf, "nf": nf, "cfg": cfg}
    if keep_attention:
        cache["attn"] = [c["a"] for c in layers]
    return logits, cache


def backward(params, cache, dlogits: np.ndarray) -> dict[str, np.ndarray]:
    """Gradients of every parameter given dL/dlogits (B, n, V)."""
    return _reduce(params, cache["pos"], cache["cfg"], _per_sequence(params, cache, dlogits, eager=True), reduced=True)


def _batch_sum(name: str, terms: np.ndarray) -> np.ndarray:
    """One gradient's per-sequence terms (B, ...) summed over the batch (a gain's: over every row of every sequence)."""
    if name == "gf" or name.startswith(("g1_", "g2_")):
        return terms.reshape(-1, terms.shape[-1]).sum(axis=0)
    return terms.sum(axis=0)


def _per_sequence(params, cache, dlogits: np.ndarray, *, eager: bool = False) -> dict:
    """The backward pass up to the sums over the batch: every gradient's per-sequence terms, (B, ...) each; with
    ``eager`` each is summed over the batch as soon as it is made (``_batch_sum``, the same reduction ``_reduce``
    applies), so a whole batch in one thread holds no (B, p, q) terms (measured ~25 % slower when it did).

    # NOTE: a split batch (threads) leaves every sum over the batch to ``_reduce``, so its parts joined along axis 0
    # reduce in exactly the order of the whole batch: the gradients are bit-identical either way.
    """
    cfg: ModelConfig = cache["cfg"]
    pos: Positions = cache["pos"]
    H = cfg.n_heads
    scale = 1.0 / np.sqrt(cfg.head_dim)
    t = _Terms(eager)  # name -> (B, ...) per-sequence terms (or their batch sums); "ds": every layer's score gradient,
    # last layer first
    t["wu"] = _gram_terms(cache["hf"], dlogits)
    dx, t["gf"] = _rms_back(dlogits @ params["wu"].T, params["gf"], cache["nf"])
    t["ds"] = []
    for layer in reversed(range(cfg.n_layers)):
        c = cache["layers"][layer]
        # MLP: x = x2 + relu(h2 W1) W2
        t[f"w2{layer}"] = _gram_terms(c["r"], dx)
        du = (dx @ params[f"w2{layer}"].T) * (c["u"] > 0)
        t[f"w1{layer}"] = _gram_terms(c["h2"], du)
        dh2 = du @ params[f"w1{layer}"].T
        dx2, t[f"g2_{layer}"] = _rms_back(dh2, params[f"g2_{layer}"], c["n2"])
        dx = dx + dx2
        # attention: x2 = x + o Wo
        t[f"wo{layer}"] = _gram_terms(c["o"], dx)
        do = _heads(dx @ params[f"wo{layer}"].T, H)  # (B, H, n, e)
        a, q, k, v = c["a"], c["q"], c["k"], c["v"]
        da = do @ v.transpose(0, 1, 3, 2)  # (B, H, n, n)
        dv = a.transpose(0, 1, 3, 2) @ do
        # softmax backward, ds = a (da - sum_j a da); sum_j a_ij da_ij = do_i . o_i (FlashAttention's D)
        rowdot = np.sum(do * c["ah"], axis=-1, keepdims=True)  # (B, H, n, 1)
        da -= rowdot
        da *= a  # ds, 0 where masked
        ds = da
        if pos.trainable is not None:
            t["ds"].append(ds.sum(axis=0) if eager else ds)
        dq = (ds @ k) * scale
        dk = ds.transpose(0, 1, 3, 2) @ (q * scale)
        if pos.mq is not None:
            dq, dk = _rotate(pos.mq, dq, transpose=True), _rotate(pos.mk, dk, transpose=True)  # Mq[p]^T g
        dqkv = np.concatenate([_merge(u) for u in (dq, dk, dv)], axis=-1)  # (B, n, 3d)
        t[f"wqkv{layer}"] = _gram_terms(c["h"], dqkv)
        dh = dqkv @ params[f"wqkv{layer}"].T
        dx1, t[f"g1_{layer}"] = _rms_back(dh, params[f"g1_{layer}"], c["n1"])
        dx = dx + dx1
    onehot = (cache["tokens"][:, None, :] == np.arange(cfg.vocab + 1)[None, :, None]).astype(np.float64)  # (B, V+1, n)
    t["tok"] = onehot @ dx
    t["dx"] = dx
    return t


def _join(parts: list[dict]) -> dict:
    """Per-sequence terms of consecutive parts of a batch, joined along the batch axis."""
    if len(parts) == 1:
        return parts[0]
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "ds"}
    out["ds"] = [np.concatenate(d) for d in zip(*(p["ds"] for p in parts))]
    return out


class _Terms(dict):
    """The per-sequence terms of ``_per_sequence``; eager: each stored already summed over the batch (``_batch_sum``)."""

    def __init__(self, eager: bool):
        super().__init__()
        self.eager = eager

    def __setitem__(self, name, terms):
        super().__setitem__(name, _batch_sum(name, terms) if self.eager and name != "ds" else terms)


def _reduce(params, pos: Positions, cfg: ModelConfig, t: dict, *, reduced: bool = False) -> dict[str, np.ndarray]:
    """The gradients: the per-sequence terms summed over the batch (``reduced``: already summed) and a trained bias's
    backward."""
    total = (lambda name, x: x) if reduced else _batch_sum
    g = {name: total(name, t[name]) for name in param_names(cfg)}
    if pos.rows is not None:
        g[TABLE_PARAM] = np.zeros_like(params[TABLE_PARAM])
        g[TABLE_PARAM][pos.rows] = total("dx", t["dx"])  # distinct rows: one token each
    if pos.trainable is not None:  # dLoss/dbias summed over layers and batch -> the trained bias's own weights
        dbias = np.zeros((cfg.n_heads, pos.n, pos.n))
        for ds in t["ds"]:
            dbias += total("ds", ds)
        own = pos.trainable.backward(_own(params, pos), pos.at, pos.at, dbias, **pos.settings)
        g.update({k: np.asarray(own[k], dtype=np.float64).reshape(params[k].shape) for k in pos.weights})
    return g


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy (nats) over every position and dL/dlogits, (B, n, V)."""
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (B, n, V)
    B, n = targets.shape
    picked = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # (B, n)
    loss = -picked.mean()
    dlogits = np.exp(logp)
    np.put_along_axis(dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], axis=-1) - 1.0, axis=-1)
    return float(loss), dlogits / (B * n)


THREADS = 2  # at most this many threads per training step (train.train's default)


def parts(B: int) -> list[slice]:
    """The fixed split of a batch of B sequences into two parts of B // 2 and B - B // 2 (one part when B < 2):
    the same whatever the number of threads, so the numbers never depend on it."""
    return [slice(0, B)] if B < 2 else [slice(0, B // 2), slice(B // 2, B)]


_POOL: list[ThreadPoolExecutor] = []  # one worker thread, made on first use by a step with threads = 2


def _pool() -> ThreadPoolExecutor:
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="posenc-lab"))
    return _POOL[0]


def loss_and_grad(params, inputs: np.ndarray, targets: np.ndarray, pos: Positions, cfg: ModelConfig, *, threads: int = 1):
    """(mean cross-entropy, {name: gradient}) for one batch.

    ``threads`` = 2 runs the forward and backward passes of the batch's two halves (``parts``) in two threads
    (numpy releases the GIL in its loops and BLAS calls); the per-sequence terms are joined in batch order and summed
    over the batch in one thread, as with ``threads`` = 1, so the loss and every gradient are bit-identical either way.
    """
    check_int("threads", threads, lo=1, hi=THREADS)
    split = parts(inputs.shape[0])
    if threads == 1 or len(split) == 1:
        logits, cache = forward(params, inputs, pos, cfg)
        loss, dlogits = cross_entropy(logits, targets)
        return loss, backward(params, cache, dlogits)
    bias = _bias(params, pos)
    worker = _pool()

    def both(fn):  # fn(0) in this thread while fn(1) runs in the worker; results in batch order
        later = worker.submit(fn, 1)
        return [fn(0), later.result()]

    halves = both(lambda i: forward(params, inputs[split[i]], pos, cfg, bias=bias))
    loss, dlogits = cross_entropy(np.concatenate([h[0] for h in halves]), targets)
    terms = both(lambda i: _per_sequence(params, halves[i][1], dlogits[split[i]]))
    return loss, _reduce(params, pos, cfg, _join(terms))


def log_probs(params, inputs: np.ndarray, pos: Positions, cfg: ModelConfig, *, last: bool = False) -> np.ndarray:
    """log q(y | context) at every position, (B, n, V); ``last``: at the last position only, (B, 1, V)."""
    logits, _ = forward(params, inputs, pos, cfg, last=last)
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
